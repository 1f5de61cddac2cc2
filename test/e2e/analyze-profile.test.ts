/**
 * Hot methods, pprof and latency of loss-free emulated traces against ground truth of the same runs
 * (test/lib/analyze-fixture.ts). Hot methods: the main thread's top 10 by exclusive bytecodes overlap the oracle's
 * (measured raw, and with the activations the oracle cannot see masked as `jportal compare` does), calls per app
 * method equal. pprof: profile.pb.gz decodes with pprof-format, bytecodes sum to the bytecode events, every
 * location of the example's classes has a line; `go tool pprof` reads it where Go is installed. Latency: the
 * entry->exit count of each app method equals its calls that returned without a gap, counted here from the events.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  Analysis, AnalysisMethod, computeHotMethods, computeLatency, loadOracleAnalysis, loadTraceAnalysis, methodKeyOf, readPprof, ThreadEvents,
  TraceAnalysis, writeLatency, writePprof, writeHotMethods,
} from '@jportal/analyze';
import { EventSeq, maskUnseen } from '@jportal/oracle';
import { analyzeFixture, analyzeFixtureMissing, AnalyzeExample } from '../lib/analyze-fixture';
import { REPO, tmpDir } from '../lib/run';

// event kinds and tiers of docs/decoded-format.md (the package's const enums are not visible through its types here)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const TIER_UNKNOWN = 4;

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP analyze-profile: ${missing}`);

/** app methods: the example's own classes (not the JDK's, not hidden classes whose names differ between runs) */
const isApp = (m: AnalysisMethod) => !/^(java|jdk|sun)\//.test(m.className) && !m.className.includes('/0x') && !m.className.includes('$$Lambda');
const mainOf = (a: Analysis) => a.threads.findIndex((t) => t.name === 'main');

/** Top-k method keys by exclusive bytecodes of a thread of `hot`. */
function topKeys(a: Analysis, k: number, threadIndex: number): string[] {
  return computeHotMethods(a)
    .threads[threadIndex].methods.filter((m) => m.method >= 0)
    .slice(0, k)
    .map((m) => methodKeyOf(a.methods[m.method]));
}

/**
 * The main threads of both analyses in one method space as EventSeqs (bytecode, entry, exit), the decoded one
 * with the activations the oracle could not see masked (@jportal/oracle's maskUnseen), returned as an Analysis.
 */
function maskedTrace(tr: Analysis, or: Analysis): { masked: Analysis; hidden: number; dropped: number } {
  const space = new Map<string, number>();
  const methods: AnalysisMethod[] = [];
  const idOf = (m: AnalysisMethod) => {
    const key = methodKeyOf(m);
    let id = space.get(key);
    if (id === undefined) {
      space.set(key, (id = methods.length));
      methods.push(m);
    }
    return id;
  };
  const seq = (a: Analysis, t: ThreadEvents): EventSeq => {
    const keep: number[] = [];
    for (let i = 0; i < t.length; i++) if (t.kind[i] <= EXIT) keep.push(i);
    const s: EventSeq = { length: keep.length, kind: new Uint8Array(keep.length), method: new Int32Array(keep.length), bci: new Int32Array(keep.length), opcode: new Int16Array(keep.length) };
    keep.forEach((i, k) => {
      s.kind[k] = t.kind[i];
      s.method[k] = t.method[i] >= 0 ? idOf(a.methods[t.method[i]]) : -1;
      s.bci[k] = t.bci[i];
      s.opcode[k] = t.opcode[i];
    });
    return s;
  };
  const truth = seq(or, or.threads[mainOf(or)]);
  const decoded = seq(tr, tr.threads[mainOf(tr)]);
  const r = maskUnseen(truth, decoded, (m) => (methods[m]?.info?.code?.length ?? 0) > 0);
  const d = r.decoded;
  const t: ThreadEvents = {
    name: 'main', tid: -1, javaTid: -1, length: d.length, kind: d.kind, method: d.method, bci: d.bci, opcode: d.opcode,
    tsc: new Float64Array(d.length).fill(NaN), endTsc: new Float64Array(d.length).fill(NaN), origin: new Uint8Array(d.length), tier: new Uint8Array(d.length).fill(TIER_UNKNOWN),
  };
  const masked: Analysis = { source: { kind: 'trace', dir: 'masked' }, methods, threads: [t], tscPerNs: 0, problems: [] };
  return { masked, hidden: r.hiddenActivations, dropped: r.droppedEvents };
}

/** Per method row: calls of a thread that returned (an exit event of the frame an entry event opened) with no gap between. */
function returnedWithoutGap(t: ThreadEvents): Map<number, number> {
  const out = new Map<number, number>();
  const stack: { m: number; gaps: number }[] = [];
  let gaps = 0;
  for (let i = 0; i < t.length; i++) {
    const k = t.kind[i];
    if (k === GAP) gaps++;
    else if (k === ENTRY) stack.push({ m: t.method[i], gaps });
    else if (k === EXIT) {
      let d = stack.length - 1;
      while (d >= 0 && stack[d].m !== t.method[i]) d--;
      if (d < 0) continue;
      // frames above it ended without their own exit: they did not return
      if (stack[d].gaps === gaps) out.set(t.method[i], (out.get(t.method[i]) ?? 0) + 1);
      stack.length = d;
    } else if (k === BYTECODE && t.method[i] >= 0) {
      // a bytecode of a frame below the top ends the frames above it
      let d = stack.length - 1;
      while (d >= 0 && stack[d].m !== t.method[i]) d--;
      if (d >= 0) stack.length = d + 1;
    }
  }
  return out;
}

const EXAMPLES: AnalyzeExample[] = ['switches', 'exceptions'];

describe.each(EXAMPLES)('analyze profile: %s', (name) => {
  const run = missing ? it.skip : it;
  let tr: TraceAnalysis;
  let or: Analysis;
  let out: string;

  beforeAll(async () => {
    if (missing) return;
    const fx = analyzeFixture(name);
    tr = await loadTraceAnalysis(fx.trace, { fromVmStart: true });
    or = loadOracleAnalysis(fx.oracle, { recordedClasses: tr.model.classes });
    out = tmpDir(`analyze-profile-${name}`);
  }, 900_000);

  run('hot methods: top 10 of the main thread overlap the oracle, calls per app method equal', () => {
    const trMain = mainOf(tr);
    const orMain = mainOf(or);
    expect(trMain).toBeGreaterThanOrEqual(0);
    const rawT = topKeys(tr, 10, trMain);
    const rawO = topKeys(or, 10, orMain);
    const raw = rawT.filter((k) => rawO.includes(k)).length;
    const { masked, hidden, dropped } = maskedTrace(tr, or);
    const maskT = topKeys(masked, 10, 0);
    const shared = maskT.filter((k) => rawO.includes(k)).length;
    console.log(
      `${name}: top-10 overlap with the oracle: raw ${raw}/10, with hidden activations masked ${shared}/10 ` +
        `(${hidden} activations hidden from the oracle, ${dropped} decoded events masked)\n  oracle: ${rawO.join(' ')}\n  trace:  ${rawT.join(' ')}\n  masked: ${maskT.join(' ')}`,
    );
    // measured on these fixtures: switches 7-9/10, exceptions 5-6/10 (raw 5 and 2: the trace also sees the JDK's
    // method-handle spinning the oracle is blind to). The misses are JDK methods near equal counts at ranks 6-10
    // (exception constructors, String helpers) whose order C2's completion shifts from run to run and between
    // decoder versions (the compiled-chain fix of 2026-11-23 took exceptions from 6 to 5 while its count error fell
    // from 35% to 20% and its sequence accuracy rose); what holds every time: the oracle's top 4 are all in the
    // trace's top 10, and the two hottest lead both in order.
    expect(shared).toBeGreaterThanOrEqual(name === 'switches' ? 7 : 5);
    for (const k of rawO.slice(0, 4)) expect(maskT).toContain(k);
    expect(maskT.slice(0, 2)).toEqual(rawO.slice(0, 2));

    const hotT = computeHotMethods(tr).threads[trMain];
    const hotO = computeHotMethods(or).threads[orMain];
    const callsOf = (a: Analysis, h: typeof hotT) => new Map(h.methods.filter((m) => m.method >= 0 && isApp(a.methods[m.method])).map((m) => [methodKeyOf(a.methods[m.method]), m.calls]));
    const cT = callsOf(tr, hotT);
    const cO = callsOf(or, hotO);
    const diff = [...new Set([...cT.keys(), ...cO.keys()])].filter((k) => cT.get(k) !== cO.get(k)).map((k) => `${k}: trace ${cT.get(k)} oracle ${cO.get(k)}`);
    console.log(`${name}: calls of ${cO.size} app methods, ${diff.length} differ${diff.length ? `: ${diff.join('; ')}` : ''}`);
    expect(cO.size).toBeGreaterThan(0);
    expect(diff).toEqual([]);
    const r = writeHotMethods(tr, out);
    expect(fs.readFileSync(path.join(out, 'hot-methods.txt'), 'utf8')).toMatch(/^\s+1\s+\S+/m);
    expect(r.files).toContain('hot-methods.json');
  });

  run('pprof: decodes, bytecodes sum to the bytecode events, lines, labels', () => {
    const t0 = Date.now();
    writePprof(tr, out);
    const ms = Date.now() - t0;
    const file = path.join(out, 'profile.pb.gz');
    const p = readPprof(file);
    const str = (i: unknown) => p.stringTable.strings[Number(i)];
    expect(p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`)).toEqual(['bytecodes/count', 'calls/count', 'time/nanoseconds']);
    let events = 0;
    for (const t of tr.threads) for (let i = 0; i < t.length; i++) if (t.kind[i] === BYTECODE) events++;
    let bytecodes = 0;
    let timeNs = 0;
    for (const s of p.sample) {
      bytecodes += Number(s.value[0]);
      timeNs += Number(s.value[2]);
      const keys = s.label.map((l) => str(l.key));
      expect(keys).toEqual(expect.arrayContaining(['thread', 'tier']));
    }
    expect(bytecodes).toBe(events);
    expect(timeNs).toBeGreaterThan(0);
    const fn = new Map(p.function.map((f) => [Number(f.id), f]));
    const appClass = name === 'switches' ? /^Switches/ : /^Exceptions/;
    let appLocations = 0;
    for (const l of p.location) {
      const f = fn.get(Number(l.line[0].functionId))!;
      if (!appClass.test(str(f.systemName))) continue;
      appLocations++;
      expect(Number(l.line[0].line)).toBeGreaterThan(0);
      expect(str(f.filename)).toMatch(/\.java$/);
    }
    expect(appLocations).toBeGreaterThan(0);
    console.log(`${name}: profile.pb.gz ${fs.statSync(file).size} bytes, ${p.sample.length} samples, ${p.location.length} locations (${appLocations} of the example), ${events} bytecodes, written in ${ms} ms`);
    const go = spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).stdout.trim();
    if (!go) console.warn('go not installed: go tool pprof not checked');
    else {
      const r = spawnSync(path.join(REPO, 'packages', 'analyze', 'scripts', 'check-pprof.sh'), [file], { encoding: 'utf8', timeout: 240_000 });
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/Type: bytecodes/);
    }
  });

  run('latency: entry->exit counts equal the calls that returned without a gap; resolution stated', () => {
    const main = mainOf(tr);
    const lat = computeLatency(tr, { threads: [main] });
    expect(lat.hasTime).toBe(true);
    const want = returnedWithoutGap(tr.threads[main]);
    const app = lat.methods.filter((h) => h.method >= 0 && isApp(tr.methods[h.method]));
    expect(app.length).toBeGreaterThan(0);
    const lines: string[] = [];
    for (const h of app) {
      lines.push(`${h.label}: ${h.count} (want ${want.get(h.method) ?? 0}), ${h.zero} at 0 ns, p50 ${h.p50Ns.toFixed(0)} ns, max ${h.maxNs.toFixed(0)} ns`);
      expect(h.count).toBe(want.get(h.method) ?? 0);
      expect(h.minNs).toBeGreaterThanOrEqual(0);
      expect(h.maxNs).toBeGreaterThan(0);
    }
    const r = lat.resolution;
    console.log(`${name}: resolution ${r.tscPerNs.toFixed(4)} ticks/ns, smallest step ${r.minDeltaTicks} ticks, most frequent ${r.commonDeltaTicks} ticks (${r.commonDeltaNs.toFixed(1)} ns); ` +
      `loops ${lat.totals.loop.intervals} iterations, monitors ${lat.totals.monitor.intervals}\n  ${lines.join('\n  ')}`);
    expect(r.nonMonotonic).toBe(0);
    writeLatency(tr, out, { threads: [main] });
    const text = fs.readFileSync(path.join(out, 'latency.txt'), 'utf8');
    expect(text).toMatch(/Time resolution: TSC \d+\.\d+ ticks\/ns/);
    expect(text).toContain(`${r.minDeltaTicks} ticks`);
  });
});
