/**
 * Methods PT cannot tell apart: examples/twins loads four plug-in classes whose methods have the same opcodes,
 * by reflection, one after another (as ServiceLoader does). The decoder names each interpreted frame from the
 * opcodes, and where several methods fit, by when their classes were loaded, by a class being initialized once,
 * and by which class an object was last made of. Checked against ground truth (the oracle) of the same run: every plug-in method that ran is named, and
 * none that did not run.
 */
import { AnalysisMethod, Kind, loadOracleAnalysis, loadTraceAnalysis, methodKeyOf, Profiled, windowsOf } from '@jportal/analyze';
import { analyzeFixture, analyzeFixtureMissing } from '../lib/analyze-fixture';

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP twins tests: ${missing}`);
const maybe = missing ? describe.skip : describe;

/** Bytecodes per method of the plug-in classes (Twins$P1..P4), by method key. */
function pluginCounts(a: Profiled & { methods: AnalysisMethod[] }): Map<string, number> {
  const out = new Map<string, number>();
  a.threads.forEach((_, k) => {
    for (const w of windowsOf(a, k))
      for (let i = 0; i < w.length; i++) {
        if (w.kind[i] !== Kind.Bytecode || w.method[i] < 0) continue;
        const key = methodKeyOf(a.methods[w.method[i]]);
        if (/^Twins\$P\d\./.test(key)) out.set(key, (out.get(key) ?? 0) + 1);
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
});
