/**
 * Calling-context trees, context ids and Ball-Larus paths of loss-free emulated traces against ground truth of
 * the same runs (test/lib/analyze-fixture.ts): the CCT of the example's own methods (extent of main) must have
 * the oracle's invocation counts node for node; context ids must round-trip to the walker's stacks and be equal
 * for equal contexts in both analyses; path profiles are compared per method and the differences printed.
 */
import {
  Analysis, buildCct, buildContextNumbering, contextIds, contextKeyOf, ContextNumbering, loadOracleAnalysis, loadTraceAnalysis,
  methodKeyOf, MethodPaths, pathTotal, profilePaths, StackWalker, ThreadEvents, walkStacks,
} from '@jportal/analyze';
import { analyzeFixture, analyzeFixtureMissing, AnalyzeExample } from '../lib/analyze-fixture';

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP analyze-cct: ${missing}`);

const MAIN: Partial<Record<AnalyzeExample, string>> = { switches: 'Switches.main', exceptions: 'Exceptions.main' };
const isJdk = (key: string) => /^(java|jdk|sun)\//.test(key);

/** Per event, whether decode(id) is the walker's stack (acyclic contexts) or its innermost segment (after a push). */
function checkRoundTrip(a: Analysis, t: ThreadEvents, ids: Int32Array, num: ContextNumbering): { acyclic: number; segments: number; none: number; bad: number } {
  const keyOf = a.methods.map(methodKeyOf);
  const sites: number[] = [];
  const last: number[] = [];
  const cache = new Map<number, string[]>();
  const r = { acyclic: 0, segments: 0, none: 0, bad: 0 };
  const frameKey = (w: StackWalker, d: number) => `${d === 0 ? -1 : sites[d]}:${w.stack[d] >= 0 ? keyOf[w.stack[d]] : '?'}`;
  const check = (w: StackWalker, depth: number, i: number) => {
    const id = ids[i];
    if (id < 0) {
      r.none++;
      return;
    }
    let dec = cache.get(id);
    if (!dec) cache.set(id, (dec = num.decode(id)!.map((f) => `${f.callSite}:${f.method}`)));
    const n = dec.length;
    if (n === depth + 1) {
      for (let d = 0; d <= depth; d++) if (dec[d] !== frameKey(w, d)) return void r.bad++;
      r.acyclic++;
    } else {
      // the segment after the last push: its first frame's method, then exact frames
      const off = depth + 1 - n;
      if (off < 0 || dec[0].slice(dec[0].indexOf(':') + 1) !== frameKey(w, off).slice(frameKey(w, off).indexOf(':') + 1)) return void r.bad++;
      for (let k = 1; k < n; k++) if (dec[k] !== frameKey(w, off + k)) return void r.bad++;
      r.segments++;
    }
  };
  walkStacks(t, {
    enter(w, i) {
      sites[w.depth] = w.depth > 0 ? last[w.depth - 1] : -1;
      last[w.depth] = -1;
      if (t.kind[i] === 1) check(w, w.depth, i);
    },
    exit(w, i, implicit) {
      if (!implicit && i < t.length) check(w, w.depth, i);
    },
    bytecode(w, i) {
      last[w.depth] = t.bci[i];
      check(w, w.depth, i);
    },
  });
  return r;
}

(missing ? describe.skip : describe).each(['switches', 'exceptions'] as AnalyzeExample[])('%s: CCT, context ids, paths against the oracle', (name) => {
  let trace: Awaited<ReturnType<typeof loadTraceAnalysis>>;
  let oracle: Analysis;
  beforeAll(async () => {
    const fx = analyzeFixture(name);
    trace = await loadTraceAnalysis(fx.trace, { fromVmStart: true });
    oracle = loadOracleAnalysis(fx.oracle, { recordedClasses: trace.model.classes });
  }, 900_000);

  test('the CCT of the example\'s own methods has the oracle\'s invocation counts, node for node', () => {
    for (const foldRecursion of [false, true]) {
      const nodes = (a: Analysis) => {
        const r = buildCct(a, { extent: MAIN[name], foldRecursion });
        const m = new Map<string, number>();
        for (let n = 1; n < r.merged.size; n++) {
          const path = r.merged.pathOf(n);
          if (path.some((p) => p.method < 0 || isJdk(methodKeyOf(a.methods[p.method])))) continue;
          m.set(contextKeyOf(r.merged, a.methods, n), r.merged.invocations[n]);
        }
        return m;
      };
      const t = nodes(trace);
      const o = nodes(oracle);
      console.log(`${name} fold=${foldRecursion}: ${o.size} own-method CCT nodes in the oracle, ${t.size} in the trace; invocations ${[...o.values()].reduce((s, x) => s + x, 0)}`);
      expect(o.size).toBeGreaterThan(3);
      expect([...t.entries()].sort()).toEqual([...o.entries()].sort());
    }
  });

  test('context ids round-trip to the walker stacks and are equal for equal contexts in trace and oracle', () => {
    const num = buildContextNumbering([trace, oracle]);
    const again = buildContextNumbering([oracle, trace]);
    expect(again.edges).toEqual(num.edges);
    expect(again.keys).toEqual(num.keys);
    const ownIds = (a: Analysis) => {
      const ids = new Set<number>();
      for (const t of a.threads) {
        const x = contextIds(a, t, num);
        const r = checkRoundTrip(a, t, x, num);
        if (t.length) console.log(`${name} ${a.source.kind} ${t.name}: ${t.length} events, ${r.acyclic} acyclic, ${r.segments} in a segment after a push, ${r.none} without context, ${r.bad} wrong`);
        expect(r.bad).toBe(0);
        for (let i = 0; i < x.length; i++) if (x[i] >= 0 && t.kind[i] === 0) ids.add(x[i]);
      }
      // the contexts made of the example's own methods only
      return new Set([...ids].filter((id) => num.decode(id)!.every((f) => f.method !== '?' && !isJdk(f.method))));
    };
    const t = ownIds(trace);
    const o = ownIds(oracle);
    console.log(`${name}: ${num.keys.length} methods, ${num.edges.length} edges, ${num.total} context ids; own-method contexts with bytecodes: trace ${t.size}, oracle ${o.size}`);
    expect([...t].sort()).toEqual([...o].sort());
  });

  test('Ball-Larus path profiles of the example\'s methods against the oracle', () => {
    const own = (a: Analysis) => {
      const m = new Map<string, MethodPaths>();
      for (const p of profilePaths(a).values()) {
        const key = methodKeyOf(a.methods[p.method]);
        if (!isJdk(key)) m.set(key, p);
      }
      return m;
    };
    const t = own(trace);
    const o = own(oracle);
    let equal = 0;
    const report: string[] = [];
    for (const [key, op] of o) {
      const tp = t.get(key);
      expect(op.broken).toBe(0); // ground truth has every bytecode
      expect(tp).toBeDefined();
      // every frame is there (the CCT test checks the invocations); paths and broken fragments cover them
      expect(tp!.frames).toBe(op.frames);
      const ids = new Set([...op.counts.keys(), ...tp!.counts.keys()]);
      const diffs = [...ids].filter((id) => (op.counts.get(id) ?? 0) !== (tp!.counts.get(id) ?? 0));
      if (!diffs.length && tp!.broken === 0) equal++;
      else
        report.push(
          `${key}: oracle ${pathTotal(op)} paths (${op.counts.size} distinct), trace ${pathTotal(tp!)} (${tp!.counts.size} distinct), ${tp!.broken} broken, ` +
            `${tp!.invalidTransitions} invalid transitions; ${diffs.length} ids differ: ` +
            diffs.slice(0, 6).map((id) => `#${id} ${op.counts.get(id) ?? 0}/${tp!.counts.get(id) ?? 0}`).join(' '),
        );
    }
    console.log(`${name}: Ball-Larus paths equal to the oracle's in ${equal} of ${o.size} own methods\n${report.join('\n')}`);
    expect(o.size).toBeGreaterThan(2);
  });
});
