/**
 * Hot methods, pprof and latency on synthetic threads. Expected values come from a naive replay (an array as the
 * stack, sets for "on the stack", per-event loops) or are worked out by hand in the comments; none is copied from
 * the output.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Profile } from 'pprof-format';
import {
  bucketBounds, bucketIndex, buildPprof, computeHotMethods, computeLatency, Kind, Origin, percentile, readPprof, ThreadEvents, Tier,
  writeHotMethods, writeLatency, writePprof,
} from '../src';
import { analysis, Ev, method, plain, randomThread, rng, thread } from './synthetic';

/** Directories this file's tests write into, removed when they are done. */
const tempDirs: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The naive replay of a well-formed thread: counts per method from an explicit stack, every event on its own. */
function naiveHot(t: ThreadEvents, methods: number, tscPerNs: number) {
  const excl = new Array(methods).fill(0);
  const incl = new Array(methods).fill(0);
  const calls = new Array(methods).fill(0);
  const exclNs = new Array(methods).fill(0);
  const inclNs = new Array(methods).fill(0);
  const byTier = Array.from({ length: methods }, () => new Array(6).fill(0));
  let lost = 0;
  const stack: number[] = [];
  for (let i = 0; i < t.length; i++) {
    const m = t.method[i];
    if (t.kind[i] === Kind.Entry) {
      stack.push(m);
      calls[m]++;
    } else if (t.kind[i] === Kind.Exit) stack.pop();
    else if (t.kind[i] === Kind.Bytecode) {
      excl[m]++;
      byTier[m][t.origin[i] === Origin.Recovered ? 5 : t.tier[i]]++;
      for (const x of new Set(stack)) incl[x]++;
    }
    if (i + 1 < t.length) {
      const dt = (t.tsc[i + 1] - t.tsc[i]) / tscPerNs;
      if (t.kind[i] === Kind.Gap) lost += dt;
      else if (stack.length) {
        exclNs[stack[stack.length - 1]] += dt;
        for (const x of new Set(stack)) inclNs[x] += dt;
      }
    }
  }
  return { excl, incl, calls, exclNs, inclNs, byTier, lost };
}

// ---- hot methods ----

describe('computeHotMethods', () => {
  it('counts a small thread by hand', () => {
    // A calls B, B calls A (recursion), times in ticks at 2 ticks/ns
    const t = thread('main', [
      { kind: Kind.Entry, method: 0, tsc: 0 }, // A: [0, 10) -> A
      { kind: Kind.Bytecode, method: 0, tsc: 10 }, // [10, 20) -> A
      { kind: Kind.Entry, method: 1, tsc: 20 }, // B: [20, 30) -> B
      { kind: Kind.Bytecode, method: 1, tsc: 30 }, // [30, 40) -> B
      { kind: Kind.Entry, method: 0, tsc: 40 }, // A again: [40, 50) -> A
      { kind: Kind.Bytecode, method: 0, tsc: 50 }, // [50, 60) -> A
      { kind: Kind.Bytecode, method: 0, tsc: 60 }, // [60, 70) -> A
      { kind: Kind.Exit, method: 0, tsc: 70 }, // [70, 80) -> B
      { kind: Kind.Exit, method: 1, tsc: 80 }, // [80, 90) -> A
      { kind: Kind.Gap, bci: 0, tsc: 90, endTsc: 100 }, // [90, 100) lost
      { kind: Kind.Bytecode, method: 0, tsc: 100 }, // [100, 110) -> A
      { kind: Kind.Exit, method: 0, tsc: 110 },
    ]);
    const hot = computeHotMethods(analysis([plain('p/A', 'a'), plain('p/B', 'b')], [t]));
    const [A, B] = [0, 1].map((m) => hot.threads[0].methods.find((x) => x.method === m)!);
    expect(A).toMatchObject({ exclBytecodes: 4, inclBytecodes: 5, calls: 2, implicitCalls: 0 });
    expect(B).toMatchObject({ exclBytecodes: 1, inclBytecodes: 3, calls: 1 });
    // A exclusive: [0,10) [10,20) [40,50) [50,60) [60,70) [80,90) [100,110) = 70 ticks = 35 ns; inclusive: all but the gap = 100 ticks
    expect(A.exclNs).toBeCloseTo(35);
    expect(A.inclNs).toBeCloseTo(50);
    // B exclusive: [20,30) [30,40) [70,80) = 15 ns; inclusive [20, 80) = 30 ns
    expect(B.exclNs).toBeCloseTo(15);
    expect(B.inclNs).toBeCloseTo(30);
    expect(hot.threads[0].lostNs).toBeCloseTo(5);
    expect(hot.threads[0].bytecodes).toBe(5);
    expect(hot.total.methods[0].label).toBe('p.A.a()V');
  });

  it('agrees with a naive replay on random well-formed threads', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const M = 6;
      const t = thread('w', randomThread(seed, M, 3000));
      const a = analysis(Array.from({ length: M }, (_, k) => plain('p/C', `m${k}`)), [t], 2.5);
      const hot = computeHotMethods(a);
      const want = naiveHot(t, M, 2.5);
      for (let m = 0; m < M; m++) {
        const got = hot.threads[0].methods.find((x) => x.method === m);
        if (!got) {
          expect(want.calls[m]).toBe(0);
          continue;
        }
        expect([got.exclBytecodes, got.inclBytecodes, got.calls]).toEqual([want.excl[m], want.incl[m], want.calls[m]]);
        expect(got.bytecodesByTier).toEqual(want.byTier[m]);
        expect(got.exclNs).toBeCloseTo(want.exclNs[m], 6);
        expect(got.inclNs).toBeCloseTo(want.inclNs[m], 6);
      }
      expect(hot.threads[0].lostNs).toBeCloseTo(want.lost, 6);
      expect(hot.total.bytecodes).toBe(want.excl.reduce((x, y) => x + y, 0));
    }
  });

  it('counts implicit frames as calls and bytecodes with no frame apart', () => {
    const t = thread('main', [
      { kind: Kind.Bytecode, method: -1 }, // no frame at all
      { kind: Kind.Bytecode, method: 1 }, // B implicit
      { kind: Kind.Entry, method: 0 },
      { kind: Kind.Bytecode, method: 0 },
      { kind: Kind.Bytecode, method: 1 }, // pops A (implicitly)
      { kind: Kind.Bytecode, method: -1 }, // in B's frame
    ]);
    const hot = computeHotMethods(analysis([plain('p/A', 'a'), plain('p/B', 'b')], [t]));
    const th = hot.threads[0];
    expect(th.bytecodes).toBe(5);
    expect(th.bytecodesNoFrame).toBe(1);
    const B = th.methods.find((x) => x.method === 1)!;
    expect(B).toMatchObject({ exclBytecodes: 3, inclBytecodes: 4, calls: 1, implicitCalls: 1 });
    expect(hot.hasTime).toBe(false);
  });

  it('writes an aligned table and JSON', () => {
    const dir = tempDir('hot-');
    const t = thread('main', randomThread(9, 4, 500));
    const r = writeHotMethods(analysis(Array.from({ length: 4 }, (_, k) => plain('p/C', `m${k}`)), [t]), dir, { top: 3 });
    expect(r.files).toEqual(['hot-methods.txt', 'hot-methods.json']);
    const text = fs.readFileSync(path.join(dir, 'hot-methods.txt'), 'utf8');
    const rows = text.split('\n').filter((l) => /^\s*\d+\s+p\.C\./.test(l));
    expect(rows).toHaveLength(3);
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'hot-methods.json'), 'utf8'));
    expect(json.total.methods.map((m: { exclBytecodes: number }) => m.exclBytecodes)).toEqual(
      [...json.total.methods.map((m: { exclBytecodes: number }) => m.exclBytecodes)].sort((x: number, y: number) => y - x),
    );
  });
});

// ---- pprof ----

describe('pprof', () => {
  // A: bci 0-3 line 10, 4.. line 11; B: bci 0.. line 20
  const methods = [method('pkg/Main', 'run', '()V', 8, [0, 10, 4, 11]), method('pkg/Main', 'helper', '(I)I', 4, [0, 20])];
  const events: Ev[] = [
    { kind: Kind.Entry, method: 0, tsc: 0 }, // call [A:10]; [0,4) -> [A:10]
    { kind: Kind.Bytecode, method: 0, bci: 0, tsc: 4 }, // [A:10] 1 bytecode; [4,8) -> [A:10]
    { kind: Kind.Bytecode, method: 0, bci: 4, tsc: 8 }, // [A:11]; [8,12) -> [A:11]
    { kind: Kind.Entry, method: 1, tsc: 12, tier: Tier.Compiled }, // call [B:20 < A:11] compiled; [12,16) -> [B:20 < A:11]
    { kind: Kind.Bytecode, method: 1, bci: 2, tsc: 16, tier: Tier.Compiled }, // [B:20 < A:11] compiled; [16,20)
    { kind: Kind.Exit, method: 1, tsc: 20, tier: Tier.Compiled }, // [20,24) -> [A:11], tier compiled (the exit's)
    { kind: Kind.Bytecode, method: 0, bci: 5, tsc: 24 }, // [A:11]; [24,28)
    { kind: Kind.Exit, method: 0, tsc: 28 },
  ];

  it('has one sample per (thread, tier, stack of method:line) with summed values', () => {
    const a = analysis(methods, [thread('main', events)], 2);
    const { encode, summary } = buildPprof(a);
    const p = readBack(encode());
    expect(p.sampleTypes).toEqual(['bytecodes/count', 'calls/count', 'time/nanoseconds']);
    const got = new Map(p.samples.map((s) => [`${s.tier} ${s.stack.join(' < ')}`, s.value]));
    // time: [A:10] 0..8 = 8 ticks = 4 ns; [A:11] interpreted 8..12 + 24..28 = 4 ns; compiled [A:11] 20..24 = 2 ns; [B:20<A:11] 12..20 = 4 ns
    expect(Object.fromEntries(got)).toEqual({
      'interpreted Main.java:10 pkg.Main.run': [1, 1, 4],
      'interpreted Main.java:11 pkg.Main.run': [2, 0, 4],
      'compiled Main.java:20 pkg.Main.helper < Main.java:11 pkg.Main.run': [1, 1, 4],
      'compiled Main.java:11 pkg.Main.run': [0, 0, 2],
    });
    expect(summary.bytecodes).toBe(4);
    expect(p.functions).toContainEqual({ name: 'pkg.Main.run', systemName: 'pkg/Main.run()V', filename: 'pkg/Main.java', startLine: 10 });
    expect(p.threads).toEqual(['main']);
  });

  it('writes profile.pb.gz that reads back, bytecodes summing to the bytecode events', () => {
    const dir = tempDir('pprof-');
    const t = thread('w', randomThread(3, 2, 2000).map((e) => ({ ...e, bci: e.kind === Kind.Bytecode ? (e.bci ?? 0) % 4 : e.bci })));
    const a = analysis(methods, [t], 2);
    writePprof(a, dir);
    const prof = readPprof(path.join(dir, 'profile.pb.gz'));
    let bytecodes = 0;
    let calls = 0;
    for (const s of prof.sample) {
      bytecodes += Number(s.value[0]);
      calls += Number(s.value[1]);
    }
    let wantBytecodes = 0;
    let wantCalls = 0;
    for (let i = 0; i < t.length; i++) {
      if (t.kind[i] === Kind.Bytecode) wantBytecodes++;
      if (t.kind[i] === Kind.Entry) wantCalls++;
    }
    expect([bytecodes, calls]).toEqual([wantBytecodes, wantCalls]);
    for (const l of prof.location) expect(Number(l.line[0].line)).toBeGreaterThan(0);
  });
});

/** The decoded profile in plain terms: samples as "file:line function" stacks (leaf first) with tier and values. */
function readBack(bytes: Uint8Array) {
  const p = Profile.decode(bytes);
  const str = (i: unknown) => p.stringTable.strings[Number(i)];
  const fn = new Map(p.function.map((f) => [Number(f.id), f]));
  const loc = new Map(p.location.map((l) => [Number(l.id), l]));
  const frame = (id: unknown) => {
    const l = loc.get(Number(id))!.line[0];
    const f = fn.get(Number(l.functionId))!;
    return `${str(f.filename).split('/').pop()}:${Number(l.line)} ${str(f.name)}`;
  };
  const samples = p.sample.map((s) => ({
    stack: s.locationId.map(frame),
    value: s.value.map(Number),
    tier: str(s.label.find((l) => str(l.key) === 'tier')!.str),
    thread: str(s.label.find((l) => str(l.key) === 'thread')!.str),
  }));
  return {
    sampleTypes: p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
    samples,
    threads: [...new Set(samples.map((s) => s.thread))],
    functions: p.function.map((f) => ({ name: str(f.name), systemName: str(f.systemName), filename: str(f.filename), startLine: Number(f.startLine) })),
  };
}

// ---- latency ----

describe('latency', () => {
  it('puts every value inside its bucket, buckets ascending', () => {
    const r = rng(11);
    for (let k = 0; k < 2000; k++) {
      const v = r() < 0.1 ? r() : 2 ** (r() * 40);
      const b = bucketIndex(v, 4);
      const [lo, hi] = bucketBounds(b, 4);
      expect(v).toBeGreaterThanOrEqual(lo);
      expect(v).toBeLessThan(hi);
      expect(hi / lo <= 1.25 || lo === 0).toBe(true);
    }
    expect(bucketIndex(1, 4)).toBe(1);
    expect(bucketBounds(bucketIndex(3.9, 4), 4)).toEqual([3.5, 4]);
  });

  it('percentiles by nearest rank', () => {
    const v = Float64Array.from({ length: 100 }, (_, k) => k + 1);
    expect([percentile(v, 50), percentile(v, 90), percentile(v, 99), percentile(v, 100)]).toEqual([50, 90, 99, 100]);
    expect(percentile(Float64Array.of(7), 99)).toBe(7);
  });

  it('measures entry->exit, monitors and loop iterations, leaving out gaps and incomplete intervals', () => {
    // 2 ticks per ns. run: 0 nop, 1 nop (loop head), 2 monitorenter, 3 monitorexit, 4 goto 1
    const code = method('pkg/Main', 'run', '()V', 7, [0, 1]);
    code.info!.code!.set([0x00, 0x00, 0xc2, 0xc3, 0xa7, 0xff, 0xfd]);
    const helper = plain('pkg/Main', 'helper');
    const evs: Ev[] = [
      { kind: Kind.Entry, method: 0, tsc: 0 },
      { kind: Kind.Bytecode, method: 0, bci: 0, tsc: 0 },
      { kind: Kind.Bytecode, method: 0, bci: 1, tsc: 10 }, // first arrival at the loop head
      { kind: Kind.Bytecode, method: 0, bci: 2, opcode: 194, tsc: 12 }, // monitorenter
      { kind: Kind.Entry, method: 1, tsc: 20 }, // helper: 20 -> 60 = 20 ns
      { kind: Kind.Exit, method: 1, tsc: 60 },
      { kind: Kind.Bytecode, method: 0, bci: 3, opcode: 195, tsc: 62 }, // monitorexit: 62 - 12 = 25 ns
      { kind: Kind.Bytecode, method: 0, bci: 4, tsc: 64 },
      { kind: Kind.Bytecode, method: 0, bci: 1, tsc: 70 }, // iteration 1: 70 - 10 = 30 ns
      { kind: Kind.Bytecode, method: 0, bci: 2, tsc: 72 },
      { kind: Kind.Entry, method: 1, tsc: 80 }, // helper with a gap: left out
      { kind: Kind.Gap, bci: 0, tsc: 82, endTsc: 90 },
      { kind: Kind.Exit, method: 1, tsc: 90 },
      { kind: Kind.Bytecode, method: 0, bci: 4, tsc: 92 },
      { kind: Kind.Bytecode, method: 0, bci: 1, tsc: 100 }, // iteration 2 spans the gap: left out
      { kind: Kind.Bytecode, method: 0, bci: 4, tsc: 104 },
      { kind: Kind.Bytecode, method: 0, bci: 1, tsc: 110 }, // iteration 3: 10 ticks = 5 ns
      { kind: Kind.Entry, method: 1, tsc: 120 }, // helper never returns (run's bytecode pops it): incomplete
      { kind: Kind.Bytecode, method: 0, bci: 2, tsc: 130 },
      { kind: Kind.Exit, method: 0, tsc: 140 }, // run: 0 -> 140 with a gap inside: left out
    ];
    const a = analysis([code, helper], [thread('main', evs)], 2);
    const lat = computeLatency(a);
    const h = lat.methods.find((x) => x.method === 1)!;
    expect([h.count, h.excludedGap, h.excludedIncomplete, h.minNs, h.maxNs]).toEqual([1, 1, 1, 20, 20]);
    expect(lat.totals.method).toEqual({ histograms: 1, intervals: 1, excludedGap: 2, excludedIncomplete: 1 });
    expect(lat.monitors).toHaveLength(1);
    expect(lat.monitors[0]).toMatchObject({ bci: 2, count: 1, minNs: 25 });
    expect(lat.loops).toHaveLength(1);
    expect(lat.loops[0]).toMatchObject({ bci: 1, count: 2, excludedGap: 1, minNs: 5, maxNs: 30 });
    // the timestamps' steps: 0 (same), then multiples of 2 ticks; the smallest nonzero is 2 ticks = 1 ns
    expect(lat.resolution.minDeltaTicks).toBe(2);
    expect(lat.resolution.minDeltaNs).toBe(1);
  });

  it('knows a loop head from the bytecode before its first back edge', () => {
    // code: 0 nop, 1 nop, 2 goto -1 (0xa7 ff ff) -> back to 1: the head is static
    const m = method('pkg/Main', 'spin', '()V', 5, [0, 1]);
    m.info!.code!.set([0x00, 0x00, 0xa7, 0xff, 0xff]);
    const evs: Ev[] = [{ kind: Kind.Entry, method: 0, tsc: 0 }];
    for (let k = 0; k < 3; k++) for (const bci of [1, 2]) evs.push({ kind: Kind.Bytecode, method: 0, bci, tsc: 100 * k + (bci === 1 ? 0 : 50) });
    evs.push({ kind: Kind.Exit, method: 0, tsc: 400 });
    const lat = computeLatency(analysis([m], [thread('main', evs)], 1));
    // arrivals at bci 1 at 0, 100, 200: two iterations of 100 ns
    expect(lat.loops[0]).toMatchObject({ bci: 1, count: 2, minNs: 100, maxNs: 100 });
  });

  it('past exactDurations per histogram, counts in fine buckets: the same counts, min, mean, max and buckets; percentiles within 0.2%', () => {
    // one method called 3000 times with durations spread over six powers of two (and some zero)
    const r = rng(17);
    const evs: Ev[] = [];
    let t = 0;
    for (let k = 0; k < 3000; k++) {
      evs.push({ kind: Kind.Entry, method: 0, tsc: t });
      t += r() < 0.05 ? 0 : Math.round(2 ** (4 + 6 * r()));
      evs.push({ kind: Kind.Exit, method: 0, tsc: t });
      t += 3;
    }
    const a = analysis([plain('p/C', 'm')], [thread('main', evs)], 2);
    const exact = computeLatency(a).methods[0];
    const fine = computeLatency(a, { exactDurations: 100 }).methods[0];
    expect(exact.percentilesExact).toBe(true);
    expect(fine.percentilesExact).toBe(false);
    for (const k of ['count', 'zero', 'minNs', 'maxNs', 'buckets'] as const) expect(fine[k]).toEqual(exact[k]);
    expect(fine.meanNs).toBeCloseTo(exact.meanNs, 6);
    for (const k of ['p50Ns', 'p90Ns', 'p99Ns'] as const) {
      expect(Math.abs(fine[k] - exact[k])).toBeLessThanOrEqual(exact[k] * 0.002 + 1e-9);
    }
  });

  it('states the resolution in latency.txt, and has nothing for ground truth', () => {
    const dir = tempDir('lat-');
    const t = thread('main', randomThread(5, 3, 1000));
    writeLatency(analysis([0, 1, 2].map((k) => plain('p/C', `m${k}`)), [t], 2.5), dir);
    const text = fs.readFileSync(path.join(dir, 'latency.txt'), 'utf8');
    expect(text).toMatch(/Time resolution: TSC 2\.5000 ticks\/ns/);
    expect(text).toMatch(/smallest nonzero step[\s\S]*?512 ticks/);
    const truth = analysis([plain('p/C', 'm')], [thread('main', [{ kind: Kind.Entry, method: 0 }, { kind: Kind.Exit, method: 0 }])], 0);
    const lat = computeLatency(truth);
    expect(lat.hasTime).toBe(false);
    expect(lat.methods).toHaveLength(0);
  });
});
