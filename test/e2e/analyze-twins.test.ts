/**
 * Methods PT cannot tell apart: examples/twins loads four plug-in classes whose methods have the same opcodes,
 * by reflection, one after another (as ServiceLoader does). The decoder names each interpreted frame from the
 * opcodes, and where several methods fit, by when their classes were loaded, by a class being initialized once,
 * and by which class an object was last made of. Checked against ground truth (the oracle) of the same run: every plug-in method that ran is named, and
 * none that did not run.
 */
import { AnalysisMethod, loadOracleAnalysis, loadTraceAnalysis, methodKeyOf, Profiled, windowsOf } from '@jportal/analyze';
import type { MethodRun } from '@jportal/format';
import { analyzeFixture, analyzeFixtureMissing } from '../lib/analyze-fixture';

/** @jportal/analyze's Kind (a const enum: not importable where each file compiles alone) */
const Kind = { Bytecode: 0, Entry: 1 } as const;

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP twins tests: ${missing}`);
const maybe = missing ? describe.skip : describe;

/** Bytecodes per method of the methods whose key `keys` matches, by method key. */
function methodCounts(a: Profiled & { methods: AnalysisMethod[] }, keys: RegExp): Map<string, number> {
  const out = new Map<string, number>();
  a.threads.forEach((_, k) => {
    for (const w of windowsOf(a, k))
      for (let i = 0; i < w.length; i++) {
        if (w.kind[i] !== Kind.Bytecode || w.method[i] < 0) continue;
        const key = methodKeyOf(a.methods[w.method[i]]);
        if (keys.test(key)) out.set(key, (out.get(key) ?? 0) + 1);
      }
  });
  return out;
}
/** ... of the plug-in classes (Twins$P1..P4) */
const pluginCounts = (a: Profiled & { methods: AnalysisMethod[] }) => methodCounts(a, /^Twins\$P\d\./);
/** ... of Twins$Q1, Q2 (Doubler), R1, R2 and S1, S2 (Valued) */
const doublerCounts = (a: Profiled & { methods: AnalysisMethod[] }) => methodCounts(a, /^Twins\$[QRS]\d\./);

/** Bytecodes per bci of the methods whose key starts with `prefix` (e.g. 'Twins.pick('), as sorted [bci, count] pairs. */
function bcisOf(a: Profiled & { methods: AnalysisMethod[] }, prefix: string): [number, number][] {
  const bcis = new Map<number, number>();
  a.threads.forEach((_, k) => {
    for (const w of windowsOf(a, k))
      for (let i = 0; i < w.length; i++)
        if (w.kind[i] === Kind.Bytecode && w.method[i] >= 0 && methodKeyOf(a.methods[w.method[i]]).startsWith(prefix)) bcis.set(w.bci[i], (bcis.get(w.bci[i]) ?? 0) + 1);
  });
  return [...bcis].sort((x, y) => x[0] - y[0]);
}

/** What METHOD_RUNS says of the class named `cls` (any loader): its methods that ran, by name + descriptor. */
function runsOf(trace: { model: { methodRuns: Map<string, Map<string, MethodRun>> } }, cls: string): Map<string, MethodRun> | undefined {
  return [...trace.model.methodRuns].find(([k]) => k.endsWith(`:${cls}`))?.[1];
}

/** The static initializers of Twins$Tag1 and Twins$Tag2 in the order their activations began. */
function tagInitializers(a: Profiled & { methods: AnalysisMethod[] }): string[] {
  const out: string[] = [];
  a.threads.forEach((_, k) => {
    for (const w of windowsOf(a, k))
      for (let i = 0; i < w.length; i++) {
        if (w.kind[i] !== Kind.Entry || w.method[i] < 0) continue;
        const key = methodKeyOf(a.methods[w.method[i]]);
        if (/^Twins\$Tag\d\.<clinit>/.test(key)) out.push(key);
      }
  });
  return out;
}

maybe('twin methods (same opcodes, reached by reflection and interface calls)', () => {
  test('every plug-in method that ran is named, and no other; the twins together ran as often as the truth says', async () => {
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    const got = pluginCounts(trace);
    const want = pluginCounts(truth);
    // 4 classes x (<clinit>, <init>, priority, name)
    expect([...want.keys()].sort()).toHaveLength(16);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    // static initializers, constructors, and calls on objects just made: named exactly
    for (const [k, n] of want) if (/<clinit>|<init>|name\(/.test(k)) expect({ k, n: got.get(k) }).toEqual({ k, n });
    // interface calls on objects made long before cannot be told apart (the same opcodes): their sum is right,
    // their split is not claimed
    const sum = (m: Map<string, number>, re: RegExp) => [...m].filter(([k]) => re.test(k)).reduce((s, [, n]) => s + n, 0);
    expect(sum(got, /priority/)).toBe(sum(want, /priority/));
  }, 900_000);

  test('a static initializer the VM runs for a getstatic is the one of the class the getstatic names', async () => {
    // Tag1 and Tag2 are loaded in that order and initialized in that order: without the instruction's class,
    // the class used last (Tag2) would be taken for Tag1's initializer, and then Tag1 for Tag2's (run once each).
    // (The oracle sees these activations' entries but not their bytecodes: HotSpot hides single steps while
    // it resolves a field, which runs the initializer.)
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    const want = tagInitializers(truth);
    expect(want.map((k) => k.slice(0, 'Twins$TagN'.length))).toEqual(['Twins$Tag1', 'Twins$Tag2']);
    expect(tagInitializers(trace)).toEqual(want);
  }, 900_000);

  test('of twin methods, one the VM says the interpreter never entered (METHOD_RUNS) is not named', async () => {
    // Q1 and Q2 are made in that order, then only Q1's twice() is called, 20 times, through the interface: the
    // class used last (Q2) would be the guess; the VM's counters at its death say Q2.twice never ran
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    // what the agent read from the VM: Q1.twice entered by the interpreter 20 times, Q2.twice never
    expect(runsOf(trace, 'Twins$Q1')?.get('twice()I')?.invocations).toBe(20);
    expect(runsOf(trace, 'Twins$Q2')?.has('<init>(I)V')).toBe(true);
    expect(runsOf(trace, 'Twins$Q2')?.has('twice()I')).toBe(false);
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    const want = doublerCounts(truth);
    expect([...want.keys()].filter((k) => k.includes('twice')).map((k) => k.slice(0, 'Twins$QN.twice'.length))).toEqual(['Twins$Q1.twice']);
    const q = (m: Map<string, number>) => Object.fromEntries([...m].filter(([k]) => k.startsWith('Twins$Q')));
    expect(q(doublerCounts(trace))).toEqual(q(want));
  }, 900_000);

  test('of switch cases that differ only in the twin they call, the one whose callee the VM says ran (METHOD_RUNS)', async () => {
    // pick(1, x) runs `case 1: return R2.v(x)` 20 times; case 0 (`return R1.v(x)`) has the same opcodes and R1 is
    // loaded and initialized, but R1.v never runs. The case went first before (R1.v named).
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    expect(runsOf(trace, 'Twins$R1')?.has('touch()V')).toBe(true);
    expect(runsOf(trace, 'Twins$R1')?.has('v(I)I')).toBe(false);
    expect(runsOf(trace, 'Twins$R2')?.get('v(I)I')?.invocations).toBe(20);
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    const want = doublerCounts(truth);
    const rv = (k: string) => /^Twins\$R\d\.v\(/.test(k);
    expect([...want.keys()].filter(rv).map((k) => k.slice(0, 'Twins$RN.v'.length))).toEqual(['Twins$R2.v']);
    const got = doublerCounts(trace);
    expect([...got].filter(([k]) => rv(k))).toEqual([...want].filter(([k]) => rv(k)));
    // and pick's own bytecodes: the case that ran
    expect(bcisOf(trace, 'Twins.pick(')).toEqual(bcisOf(truth, 'Twins.pick('));
  }, 900_000);

  test('twins that both ran: none is named more often than the VM counted its entries (METHOD_RUNS)', async () => {
    // S2.v() runs 3 times, then S1.v() 17 times, both objects made before; after S1.v's first call (its bytecode in
    // class-file form: not run before), the class made last (S2) was the guess for the 16 calls left
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    expect(runsOf(trace, 'Twins$S1')?.get('v()I')).toMatchObject({ state: 1, invocations: 17 });
    expect(runsOf(trace, 'Twins$S2')?.get('v()I')).toMatchObject({ state: 1, invocations: 3 });
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    const only = (m: Map<string, number>) => [...m].filter(([k]) => /^Twins\$S\d\.v\(/.test(k)).sort();
    expect(only(doublerCounts(truth)).map(([, n]) => n)).toEqual([17 * 5, 3 * 5]);
    expect(only(doublerCounts(trace))).toEqual(only(doublerCounts(truth)));
  }, 900_000);

  test('of switch cases that differ only in which constant they read, run while their class is initialized, those run least go first', async () => {
    // Unit.of(k % 4) for k = 0..7, from UnitTable's initializer, which Unit's runs: the VM keeps Unit's static
    // fields unresolved meanwhile, so every getstatic runs the slow path, and Unit's initializer read each constant
    // first. The first case was named every time before
    // (the oracle sees nothing inside a static initializer the VM runs, so the truth is the program's: each case twice)
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    expect(runsOf(trace, 'Twins$Unit')?.get('of(I)LTwins$Unit;')?.invocations).toBe(8);
    const cases = [32, 36, 40, 44].flatMap((bci) => [[bci, 2], [bci + 3, 2]]); // getstatic; areturn
    expect(bcisOf(trace, 'Twins$Unit.of(')).toEqual([[0, 8], [1, 8], ...cases]);
  }, 900_000);

  test('of switch cases that differ only in a constant, one whose getfield the VM never rewrote did not run (METHOD_RUNS)', async () => {
    // Acc.arm(2) runs 20 times; cases 0-3 are `aload_0; getfield base; bipush N; iadd; ireturn`. The case first in
    // order (0) was named before; at VM death only case 2's getfield is rewritten
    const fx = analyzeFixture('twins');
    const trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true, recover: false });
    const arm = runsOf(trace, 'Twins$Acc')?.get('arm(I)I');
    const GETFIELD = 0xb4;
    expect([33, 41, 49, 57].map((bci) => arm?.bytecodes[bci] === GETFIELD)).toEqual([true, true, false, true]);
    const truth = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
    expect(bcisOf(truth, 'Twins$Acc.arm(').map(([bci]) => bci)).toEqual([0, 1, 48, 49, 52, 54, 55]);
    expect(bcisOf(trace, 'Twins$Acc.arm(')).toEqual(bcisOf(truth, 'Twins$Acc.arm('));
  }, 900_000);
});
