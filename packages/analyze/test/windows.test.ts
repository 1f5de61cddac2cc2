/**
 * Every profile computed window by window equals the profile computed from the whole thread: the stack, the
 * interval clock, pending gaps, context ids and open intervals carry across window boundaries. Windows are read
 * into two buffers in turn (as the spill reader does), so a profile that kept a window's columns past the next
 * window would see them overwritten.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  Analysis, analyzeWindowEvents, buildCct, buildContextNumbering, readContextIds, computeCoverage, buildPprof, buildStackTree, computeHotMethods, computeLatency, contextIds, EventWindow, Kind, Origin, profilePaths, reportSummary,
  PartResult, sliceAnalysis, ThreadEvents, WindowedAnalysis, windowsOf, writeCct, writeCollapsed, writeContexts, writeCoverage, writeHotMethods, writeLatency, writePaths, writePprof, writeProfiles,
  writeReport, writeTimeline,
} from '../src';
import { analysis, Ev, method, randomThread, rng, thread } from './synthetic';
import { contextsPass } from '../src/contexts';
import { PassRunner, runPasses, WalkPass } from '../src/walk';
import { profilePasses } from '../src/profiles';

const MONITORENTER = 0xc2;
const MONITOREXIT = 0xc3;

/** randomThread made messy: lost entries and exits (implicit frames, unmatched exits), monitors, recovered runs after gaps, unknown methods. */
function messyThread(seed: number, methods: number, n: number): Ev[] {
  const r = rng(seed * 7919 + 1);
  const out: Ev[] = [];
  let afterGap = 0;
  for (const e of randomThread(seed, methods, n)) {
    const x = r();
    if ((e.kind === Kind.Entry || e.kind === Kind.Exit) && x < 0.08) continue;
    if (e.kind === Kind.Exit && x < 0.1) {
      out.push({ ...e, method: (e.method! + 1) % methods });
      continue;
    }
    if (e.kind === Kind.Gap) afterGap = r() < 0.5 ? 1 + Math.floor(r() * 4) : 0;
    else if (e.kind === Kind.Bytecode) {
      const ev: Ev = { ...e, opcode: x < 0.05 ? MONITORENTER : x < 0.1 ? MONITOREXIT : 0 };
      if (afterGap > 0) {
        afterGap--;
        ev.origin = Origin.Recovered;
      }
      if (x > 0.98) ev.method = -1;
      out.push(ev);
      continue;
    }
    out.push(e);
  }
  return out;
}

/** `a` seen window by window (`size` events each), read into two alternating buffers. */
function windowed(a: Analysis, size: number): WindowedAnalysis {
  const bufs = [0, 1].map(() => thread('', new Array<Ev>(size).fill({ kind: Kind.Bytecode })));
  return {
    source: a.source, methods: a.methods, tscPerNs: a.tscPerNs, startTsc: a.startTsc, problems: a.problems,
    threads: a.threads.map((t) => ({ name: t.name, tid: t.tid, javaTid: t.javaTid, length: t.length })),
    *windows(k: number): Iterable<EventWindow> {
      const t = a.threads[k];
      let turn = 0;
      for (let base = 0; base < t.length; base += size) {
        const n = Math.min(size, t.length - base);
        const b = bufs[turn];
        turn ^= 1;
        for (const col of ['kind', 'method', 'bci', 'opcode', 'tsc', 'endTsc', 'origin', 'tier'] as const) b[col].set(t[col].subarray(base, base + n));
        const w: EventWindow = { name: t.name, tid: t.tid, javaTid: t.javaTid, length: n, base } as EventWindow;
        for (const col of ['kind', 'method', 'bci', 'opcode', 'tsc', 'endTsc', 'origin', 'tier'] as const) (w as unknown as Record<string, unknown>)[col] = b[col].subarray(0, n);
        yield w;
      }
    },
  };
}

const M = 5;
// every method: a loop (bci 0-2, goto 0 at 3) then return at 7
const methods = Array.from({ length: M }, (_, m) => {
  const x = method(`p/C${m}`, `m${m}`, '()V', 8, [0, 10 + m, 4, 20 + m]);
  x.info!.code!.set([0, 0, 0, 0xa7, 0xff, 0xfd, 0, 0xb1]);
  return x;
});
/** Each frame's bytecodes walk the loop (0, 1, 2, 3, 0, ...), so Ball-Larus paths complete and gaps break them. */
function loopBcis(evs: Ev[]): Ev[] {
  const pos: number[] = [];
  for (const e of evs) {
    if (e.kind === Kind.Entry) pos.push(0);
    else if (e.kind === Kind.Exit) pos.pop();
    else if (e.kind === Kind.Bytecode && pos.length) e.bci = pos[pos.length - 1]++ % 4;
  }
  return evs;
}
function sample(seed: number, n: number, tscPerNs = 2): Analysis {
  const threads: ThreadEvents[] = [thread('main', loopBcis(messyThread(seed, M, n))), thread('worker', loopBcis(messyThread(seed + 100, M, Math.floor(n / 3))))];
  threads[1].tid = 8;
  return analysis(methods, threads, tscPerNs);
}

const mapsToObjects = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v) => (v instanceof Map ? [...v] : ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)));

describe('profiles window by window', () => {
  const cases: [string, (a: Analysis | WindowedAnalysis) => unknown][] = [
    ['hot methods', (a) => computeHotMethods(a)],
    ['pprof', (a) => Buffer.from(buildPprof(a).encode()).toString('base64')],
    ['latency', (a) => computeLatency(a)],
    ['calling-context tree', (a) => mapsToObjects(buildCct(a).threads.map((t) => t.tree))],
    ['context ids', (a) => a.threads.map((_, k) => Array.from(contextIds(a, windowsOf(a, k))))],
    ['Ball-Larus paths', (a) => {
      const paths = [...profilePaths(a)].map(([m, p]) => [m, p.counts, p.frames, p.broken, p.invalidTransitions] as const);
      // (the sample is made to have paths, complete and broken)
      expect(paths.reduce((n, p) => n + p[1].size, 0)).toBeGreaterThan(0);
      return mapsToObjects(paths);
    }],
    ['time slices', (a) => mapsToObjects(sliceAnalysis(a, { maxFrames: 400 }).threads.map((t) => ({ ...t, thread: t.thread.name })))],
    ['stack tree', (a) => mapsToObjects(buildStackTree(a))],
    ['report summary', (a) => reportSummary(a)],
    ['coverage', (a) => mapsToObjects(computeCoverage(a, { include: () => true }).classes.map((c) => c.methods.map((m) => [m.counts, m.hits, m.branches.map((b) => [b.counts, b.hits])])))],
  ];
  for (const [name, f] of cases)
    it(`${name}: the same for windows of 1, 2, 3, 7 and 64 events`, () => {
      for (const seed of [1, 2, 3]) {
        const a = sample(seed, 1500);
        const whole = f(a);
        for (const size of [1, 2, 3, 7, 64]) expect({ size, seed, got: f(windowed(a, size)) }).toEqual({ size, seed, got: whole });
      }
    });

  it('Ball-Larus paths of a thread whose last event is an unfilled gap: its open paths broken, whole or windowed (no window knows it is the last)', () => {
    const paths = (a: Analysis | WindowedAnalysis) => mapsToObjects([...profilePaths(a)].map(([m, p]) => [m, p.counts, p.frames, p.broken]));
    const broken = (a: Analysis | WindowedAnalysis) => [...profilePaths(a).values()].reduce((n, p) => n + p.broken, 0);
    for (const seed of [1, 2]) {
      // (a frame entered last and left open: its path is counted at the thread's end, unless a gap broke it)
      const evs = loopBcis([...messyThread(seed, M, 600), { kind: Kind.Entry, method: 1 }, ...[0, 1, 2].map(() => ({ kind: Kind.Bytecode, method: 1 }))]);
      const plain = analysis(methods, [thread('main', evs)]);
      const gapped = analysis(methods, [thread('main', [...evs, { kind: Kind.Gap, bci: 0, tsc: 1e9, endTsc: 1e9 + 512 }])]);
      expect(broken(gapped)).toBeGreaterThan(broken(plain));
      const whole = paths(gapped);
      for (const size of [1, 2, 5, 64]) expect({ size, got: paths(windowed(gapped, size)) }).toEqual({ size, got: whole });
    }
  });

  it('the event-index clock (no time) too', () => {
    const a = sample(4, 800, 0);
    for (const t of a.threads) t.tsc.fill(NaN);
    const whole = mapsToObjects(sliceAnalysis(a).threads.map((t) => ({ ...t, thread: t.thread.name })));
    for (const size of [1, 5, 64]) expect(mapsToObjects(sliceAnalysis(windowed(a, size)).threads.map((t) => ({ ...t, thread: t.thread.name })))).toEqual(whole);
  });

  it('writes the same files (timeline, contexts, report.html)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-windows-'));
    try {
      const a = sample(5, 2000);
      const files = (out: string, x: Analysis | WindowedAnalysis) => {
        writeTimeline(x, out);
        writeContexts(x, out);
        writeReport(x, out, {});
        const list = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? list(path.join(d, e.name)).map((f) => path.join(e.name, f)) : [e.name]));
        return Object.fromEntries(list(out).sort().map((f) => [f, crypto.createHash('sha256').update(fs.readFileSync(path.join(out, f), 'latin1').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '(when)')).digest('hex')]));
      };
      const whole = files(path.join(dir, 'whole'), a);
      expect(Object.keys(whole).length).toBeGreaterThan(3);
      expect(files(path.join(dir, 'w3'), windowed(a, 3))).toEqual(whole);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('contexts in one read', () => {
  it('.ctx files hold the ids contextIds gives event by event (implicit frames, unmatched exits, gaps), whole and in windows', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-ctx1-'));
    try {
      const a = sample(11, 3000);
      const numbering = buildContextNumbering(a);
      for (const [name, x] of [['whole', a], ['w1', windowed(a, 1)], ['w5', windowed(a, 5)]] as const) {
        writeContexts(x, path.join(dir, name));
        for (let k = 0; k < a.threads.length; k++) {
          const want = contextIds(a, a.threads[k], numbering);
          expect(want.some((id) => id >= 0)).toBe(true);
          const got = readContextIds(path.join(dir, name, `contexts/${a.threads[k].tid}.ctx`)).ids;
          expect(got).toEqual(want);
        }
        expect(fs.readdirSync(path.join(dir, name, 'contexts')).every((f) => f.endsWith('.ctx'))).toBe(true);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a read that fails', () => {
  it('leaves no scratch files of the contexts pass behind, whether the walk or a finish throws', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-abort-'));
    try {
      const a = sample(12, 500);
      const failing = (when: 'walk' | 'finish'): WalkPass<unknown> => ({
        thread: (k) => ({ visitor: { enter: () => {
          if (when === 'walk' && k === 1) throw new Error('walk failed');
        } } }),
        finish: () => {
          if (when === 'finish') throw new Error('finish failed');
        },
      });
      for (const when of ['walk', 'finish'] as const) {
        const out = path.join(dir, when);
        expect(() => runPasses(a, [failing(when), contextsPass(a, out)])).toThrow(`${when} failed`);
        expect(fs.readdirSync(path.join(out, 'contexts'))).toEqual([]);
      }
      // (and when nothing fails, only the .ctx files are left)
      runPasses(a, [contextsPass(a, path.join(dir, 'ok'))]);
      expect(fs.readdirSync(path.join(dir, 'ok', 'contexts')).sort()).toEqual(a.threads.map((t) => `${t.tid}.ctx`).sort());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('every part from one shared read (writeProfiles)', () => {
  it('writes the same files as each part written on its own, reading each thread once (and its first window twice more, for the clocks)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-profiles-'));
    try {
      const a = sample(6, 2000);
      const counted = (x: WindowedAnalysis) => {
        const reads = { full: 0, started: 0 };
        const windows = x.windows.bind(x);
        x.windows = function* (k: number) {
          reads.started++;
          let n = 0;
          for (const w of windows(k)) {
            n++;
            yield w;
          }
          if (n === Math.ceil(x.threads[k].length / 7)) reads.full++;
        };
        return reads;
      };
      const hashes = (out: string) => {
        const list = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? list(path.join(d, e.name)).map((f) => path.join(e.name, f)) : [e.name]));
        return Object.fromEntries(list(out).sort().map((f) => [f, crypto.createHash('sha256').update(fs.readFileSync(path.join(out, f), 'latin1').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '(when)')).digest('hex')]));
      };
      const alone = windowed(a, 7);
      const aloneReads = counted(alone);
      const out1 = path.join(dir, 'alone');
      const parts: Record<string, PartResult> = {};
      parts.coverage = writeCoverage(alone, out1);
      parts.hot = writeHotMethods(alone, out1);
      parts.pprof = writePprof(alone, out1);
      parts.cct = writeCct(alone, out1);
      parts.contexts = writeContexts(alone, out1);
      parts.paths = writePaths(alone, out1);
      parts.timeline = writeTimeline(alone, out1);
      parts.collapsed = writeCollapsed(alone, out1);
      parts.latency = writeLatency(alone, out1);
      const aloneReport = writeReport(alone, out1, parts);

      const shared = windowed(a, 7);
      const sharedReads = counted(shared);
      const out2 = path.join(dir, 'shared');
      const w = writeProfiles(shared, out2);
      expect(hashes(out2)).toEqual(hashes(out1));
      expect(Object.keys(hashes(out1)).length).toBeGreaterThan(10);
      expect(mapsToObjects(w.parts)).toEqual(mapsToObjects(parts));
      expect(w.report).toEqual(aloneReport);
      const threads = a.threads.length;
      expect(sharedReads.full).toBe(threads);
      expect(sharedReads.started).toBe(3 * threads);
      expect(aloneReads.full).toBeGreaterThanOrEqual(9 * sharedReads.full);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a streamed read (stream.ts): the method table and the threads\' lengths grow as windows arrive', () => {
  it('writes the same files as writeProfiles of the whole analysis, the passes driven by PassRunner', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-streamed-'));
    try {
      const a: Analysis = { ...sample(7, 2500), startTsc: 5 };
      const list = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? list(path.join(d, e.name)).map((f) => path.join(e.name, f)) : [e.name]));
      const hashes = (out: string) => Object.fromEntries(list(out).sort().map((f) => [f, crypto.createHash('sha256').update(fs.readFileSync(path.join(out, f), 'latin1').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '(when)')).digest('hex')]));
      const out1 = path.join(dir, 'whole');
      const whole = writeProfiles(windowed(a, 7), out1, { extent: 'C1.m1' });

      // as stream.ts has it: no method and no event known when the passes are made
      const infos = a.threads.map((t) => ({ name: t.name, tid: t.tid, javaTid: t.javaTid, length: 0 }));
      const s: WindowedAnalysis = {
        source: a.source, methods: [], tscPerNs: a.tscPerNs, startTsc: a.startTsc, problems: a.problems, threads: infos,
        windows: () => {
          throw new Error('a streamed analysis is read once, by its stream');
        },
      };
      const out2 = path.join(dir, 'streamed');
      const p = profilePasses(s, out2, { extent: 'C1.m1' });
      const run = new PassRunner(p.passes);
      let grew = 0;
      for (let k = 0; k < a.threads.length; k++) {
        expect(run.beginThread(k)).toBe(true);
        for (const w of windowed(a, 1).windows(k)) {
          // the methods the window names join the table first (ids in first-seen order: here the table's own)
          let need = s.methods.length;
          for (let i = 0; i < w.length; i++) need = Math.max(need, w.method[i] + 1);
          if (need > s.methods.length) grew++;
          while (s.methods.length < need) s.methods.push(a.methods[s.methods.length]);
          infos[k].length += w.length;
          run.window(w);
        }
        run.endThread();
      }
      const streamed = p.write(run.finish(), 0);
      expect(grew).toBeGreaterThan(1);
      expect(hashes(out2)).toEqual(hashes(out1));
      expect(Object.keys(hashes(out1)).length).toBeGreaterThan(10);
      // (the collapsed stacks' tree numbers frame names as it meets them: the same names, in another order)
      const named = (x: Record<string, PartResult>) => {
        const { tree, ...rest } = x.collapsed as PartResult & { tree: { names: string[]; name: Int32Array } };
        return mapsToObjects({ ...x, collapsed: rest, names: Array.from(tree.name, (i) => (i < 0 ? '' : tree.names[i])) });
      };
      expect(named(streamed.parts)).toEqual(named(whole.parts));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('window size', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });
  it('is JPORTAL_ANALYZE_WINDOW, at most half of what the kept-stream budget holds', () => {
    delete process.env.JPORTAL_ANALYZE_WINDOW;
    process.env.JPORTAL_MAX_STREAM_BYTES = String(28 * 100_000);
    expect(analyzeWindowEvents()).toBe(50_000);
    process.env.JPORTAL_ANALYZE_WINDOW = '7000';
    expect(analyzeWindowEvents()).toBe(7000);
    delete process.env.JPORTAL_MAX_STREAM_BYTES;
    delete process.env.JPORTAL_ANALYZE_WINDOW;
    expect(analyzeWindowEvents()).toBe(Math.min(1 << 24, Math.floor((os.totalmem() * 0.4) / 28 / 2)));
  });
});
