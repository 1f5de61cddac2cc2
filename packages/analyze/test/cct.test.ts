/**
 * Calling-context trees and context ids on synthetic threads: call-site keys, JP2's metrics, recursion folding,
 * extents, merging; PCCE numbering against brute-force enumeration of acyclic contexts, per-event ids against
 * the walker's stacks, stability under event order.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  Analysis, AnalysisMethod, buildCct, buildContextNumbering, contextIds, contextKeyOf, CONTEXT_ROOT, ContextEdgeKind,
  Kind, numberGraph, Origin, readContextIds, readContextRuns, StackWalker, ThreadEvents, walkStacks, writeCct, writeContexts,
} from '../src';

type Op = ['e', number] | ['x', number] | ['b', number, number] | ['r', number, number] | ['g'];

function thread(ops: Op[], tid = 1): ThreadEvents {
  const n = ops.length;
  const t: ThreadEvents = {
    name: `t${tid}`, tid, javaTid: tid, length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n),
    opcode: new Int16Array(n).fill(-1), tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN), origin: new Uint8Array(n), tier: new Uint8Array(n),
  };
  ops.forEach((op, i) => {
    t.method[i] = -1;
    t.bci[i] = -1;
    if (op[0] === 'e') [t.kind[i], t.method[i]] = [Kind.Entry, op[1]];
    else if (op[0] === 'x') [t.kind[i], t.method[i]] = [Kind.Exit, op[1]];
    else if (op[0] === 'b' || op[0] === 'r') {
      [t.kind[i], t.method[i], t.bci[i]] = [Kind.Bytecode, op[1], op[2]];
      if (op[0] === 'r') t.origin[i] = Origin.Recovered;
    } else [t.kind[i], t.bci[i]] = [Kind.Gap, 0];
  });
  return t;
}

const METHODS: AnalysisMethod[] = ['main', 'a', 'b', 'c', 'd'].map((name) => ({ className: 'p/C', name, signature: '()V' }));
const [MAIN, A, B, C, D] = [0, 1, 2, 3, 4];
const analysis = (threads: ThreadEvents[], methods = METHODS): Analysis => ({ source: { kind: 'trace', dir: '' }, methods, threads, tscPerNs: 0, problems: [] });

/** node of a context given as [callSite, method] pairs from the root */
function nodeOf(tree: ReturnType<typeof buildCct>['merged'], pathPairs: [number, number][]): number {
  let n = 0;
  for (const [site, m] of pathPairs) {
    n = tree.findChild(n, site, m);
    if (n < 0) return -1;
  }
  return n;
}

describe('calling-context tree', () => {
  // main calls a at bci 3 and at bci 7; a calls b at bci 2 (the second time, b recovered into a gap)
  const ops: Op[] = [
    ['e', MAIN], ['b', MAIN, 0], ['b', MAIN, 3],
    ['e', A], ['b', A, 0], ['b', A, 2], ['e', B], ['b', B, 0], ['x', B], ['b', A, 5], ['x', A],
    ['b', MAIN, 4], ['b', MAIN, 7],
    ['e', A], ['b', A, 0], ['b', A, 2], ['g'], ['r', B, 0], ['r', B, 1], ['x', B], ['x', A],
    ['e', A], ['x', A], // called from bci 7 again, no bytecode
    ['b', MAIN, 9], ['x', MAIN],
  ];

  test('call-site aware nodes with invocations, exclusive, inclusive and recovered bytecodes', () => {
    const r = buildCct(analysis([thread(ops)]));
    const t = r.merged;
    const main = nodeOf(t, [[-1, MAIN]]);
    const a3 = nodeOf(t, [[-1, MAIN], [3, A]]);
    const a7 = nodeOf(t, [[-1, MAIN], [7, A]]);
    const b3 = nodeOf(t, [[-1, MAIN], [3, A], [2, B]]);
    const b7 = nodeOf(t, [[-1, MAIN], [7, A], [2, B]]);
    expect([main, a3, a7, b3, b7].every((n) => n > 0)).toBe(true);
    expect(t.size).toBe(6);
    expect([t.invocations[main], t.invocations[a3], t.invocations[a7], t.invocations[b3], t.invocations[b7]]).toEqual([1, 1, 2, 1, 1]);
    expect([t.bytecodes[main], t.bytecodes[a3], t.bytecodes[a7], t.bytecodes[b3], t.bytecodes[b7]]).toEqual([5, 3, 2, 1, 2]);
    const inc = t.inclusive(t.bytecodes);
    expect([inc[0], inc[main], inc[a3], inc[a7]]).toEqual([13, 13, 4, 4]);
    expect(t.recovered[b7]).toBe(2);
    expect(t.inclusive(t.recovered)[main]).toBe(2);
    expect(contextKeyOf(t, METHODS, b7)).toBe('-1:p/C.main()V > 7:p/C.a()V > 2:p/C.b()V');
  });

  test('implicit entries are invocations, counted apart too; threads merge', () => {
    // a bytecode of c with c not on the stack: the walker pushes c implicitly above main
    const t1 = thread([['e', MAIN], ['b', MAIN, 1], ['b', C, 0], ['x', C], ['x', MAIN]], 1);
    const t2 = thread([['e', MAIN], ['b', MAIN, 1], ['e', C], ['b', C, 0], ['x', C], ['x', MAIN]], 2);
    const r = buildCct(analysis([t1, t2]));
    const c = nodeOf(r.merged, [[-1, MAIN], [1, C]]);
    expect(r.merged.invocations[c]).toBe(2);
    expect(r.merged.implicitEntries[c]).toBe(1);
    expect(r.threads.map((x) => x.tree.invocations[nodeOf(x.tree, [[-1, MAIN], [1, C]])])).toEqual([1, 1]);
    expect(r.merged.invocations[nodeOf(r.merged, [[-1, MAIN]])]).toBe(2);
  });

  // main -> a -> b -> a -> b -> c (indirect recursion), then main -> a -> a (direct)
  const rec: Op[] = [
    ['e', MAIN], ['b', MAIN, 1],
    ['e', A], ['b', A, 1], ['e', B], ['b', B, 1], ['e', A], ['b', A, 4], ['e', B], ['b', B, 2], ['e', C], ['b', C, 0], ['x', C], ['x', B], ['x', A], ['x', B], ['x', A],
    ['b', MAIN, 2], ['e', A], ['b', A, 3], ['e', A], ['b', A, 0], ['x', A], ['x', A],
    ['x', MAIN],
  ];

  test('without folding every activation is its own context', () => {
    const t = buildCct(analysis([thread(rec)])).merged;
    expect(nodeOf(t, [[-1, MAIN], [1, A], [1, B], [1, A], [4, B], [2, C]])).toBeGreaterThan(0);
    expect(nodeOf(t, [[-1, MAIN], [2, A], [3, A]])).toBeGreaterThan(0);
    expect(t.size).toBe(9);
  });

  test('folding: a recurring method joins its nearest ancestor node of the same method', () => {
    const t = buildCct(analysis([thread(rec)]), { foldRecursion: true }).merged;
    const a = nodeOf(t, [[-1, MAIN], [1, A]]);
    const b = nodeOf(t, [[-1, MAIN], [1, A], [1, B]]);
    // the inner a folded into the outer a node: its call to b (at bci 4) is a child of that node
    const b4 = nodeOf(t, [[-1, MAIN], [1, A], [4, B]]);
    const c = nodeOf(t, [[-1, MAIN], [1, A], [4, B], [2, C]]);
    const a2 = nodeOf(t, [[-1, MAIN], [2, A]]);
    expect([a, b, b4, c, a2].every((n) => n > 0)).toBe(true);
    expect(t.size).toBe(7); // root main a b b4 c a2
    expect([t.invocations[a], t.invocations[b], t.invocations[b4], t.invocations[c], t.invocations[a2]]).toEqual([2, 1, 1, 1, 2]);
    expect([t.bytecodes[a], t.bytecodes[b], t.bytecodes[b4], t.bytecodes[a2]]).toEqual([2, 1, 1, 2]);
    const inc = t.inclusive(t.bytecodes);
    expect(inc[0]).toBe(9);
    expect(inc[a]).toBe(5);
  });

  test('extent: the subtrees where the method is entered (outermost activation), merged', () => {
    // a reached from main@1 through d, and from main@5 directly; recursion inside the extent stays in it
    const ops2: Op[] = [
      ['e', MAIN], ['b', MAIN, 1], ['e', D], ['b', D, 0], ['e', A], ['b', A, 0], ['b', A, 1], ['e', B], ['b', B, 0], ['x', B], ['x', A], ['x', D],
      ['b', MAIN, 5], ['e', A], ['b', A, 0], ['b', A, 2], ['e', A], ['b', A, 0], ['x', A], ['b', A, 1], ['e', B], ['b', B, 0], ['b', B, 1], ['x', B], ['x', A],
      ['b', MAIN, 6], ['x', MAIN],
    ];
    const r = buildCct(analysis([thread(ops2)]), { extent: 'p.C.a' });
    const t = r.merged;
    expect(r.extentMethods).toEqual([A]);
    const a = nodeOf(t, [[-1, A]]);
    const b = nodeOf(t, [[-1, A], [1, B]]);
    const aa = nodeOf(t, [[-1, A], [2, A]]);
    expect(t.size).toBe(4);
    expect([t.invocations[a], t.bytecodes[a], t.invocations[b], t.bytecodes[b], t.invocations[aa]]).toEqual([2, 5, 2, 3, 1]);
    expect(t.inclusive(t.bytecodes)[0]).toBe(9);
    expect(buildCct(analysis([thread(ops2)]), { extent: 'C.a()V' }).merged.size).toBe(4);
    expect(buildCct(analysis([thread(ops2)]), { extent: 'C.zz' }).merged.size).toBe(1);
  });

  test('writeCct: cct.json columns and cct.txt sorted by inclusive bytecodes', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-cct-'));
    try {
      const res = writeCct(analysis([thread(ops)]), dir, { threshold: 0 });
      expect(res.files).toEqual(['cct.json', 'cct.txt']);
      expect(res.summary).toMatchObject({ nodes: 5, bytecodes: 13, recoveredBytecodes: 2 });
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'cct.json'), 'utf8'));
      expect(json.merged.nodes).toBe(6);
      expect(json.merged.inclusiveBytecodes[0]).toBe(13);
      expect(json.threads[0].invocations.reduce((s: number, x: number) => s + x, 0)).toBe(6);
      const txt = fs.readFileSync(path.join(dir, 'cct.txt'), 'utf8').split('\n');
      expect(txt[1]).toMatch(/^13 \(100\.0%\)\s+5\s+x1\s+p\.C\.main/);
      expect(txt[2]).toMatch(/^  4 .*\[3\] p\.C\.a/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** all root-to-node paths of a numbering's acyclic graph (Call and Root edges), brute force */
function enumerateContexts(edges: { caller: number; callSite: number; callee: number; kind: number }[]) {
  const out: { edges: number[]; node: number }[] = [];
  const go = (node: number, via: number[]) => {
    out.push({ edges: via, node });
    edges.forEach((e, i) => {
      if (e.caller === node && e.kind === ContextEdgeKind.Call) go(e.callee, [...via, i]);
    });
  };
  edges.forEach((e, i) => {
    if (e.caller === CONTEXT_ROOT && e.kind === ContextEdgeKind.Root) go(e.callee, [i]);
  });
  return out;
}

describe('context numbering (PCCE)', () => {
  test('random call graphs: every acyclic context has a unique id that decodes back', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
    for (let round = 0; round < 30; round++) {
      const n = 2 + Math.floor(rnd() * 7);
      const keys = Array.from({ length: n }, (_, i) => `m${i}`);
      const raw = new Map<string, { caller: number; callSite: number; callee: number }>();
      raw.set('r', { caller: CONTEXT_ROOT, callSite: -1, callee: 0 });
      for (let k = 0; k < n * 2; k++) {
        const caller = Math.floor(rnd() * n);
        const callee = Math.floor(rnd() * n); // cycles included: back edges
        const site = Math.floor(rnd() * 3);
        raw.set(`${caller},${site},${callee}`, { caller, callSite: site, callee });
      }
      const sorted = [...raw.values()].sort((x, y) => x.caller - y.caller || x.callSite - y.callSite || x.callee - y.callee);
      const num = numberGraph(keys, sorted);
      const all = enumerateContexts(num.edges);
      const ids = all.map((c) => num.base[c.node] + c.edges.reduce((s, e) => s + num.edges[e].addend, 0));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(num.total);
      all.forEach((c, k) => {
        const d = num.decode(ids[k])!;
        expect(d.map((f) => f.method)).toEqual(c.edges.map((e) => keys[num.edges[e].callee]));
        expect(d.slice(1).map((f) => f.callSite)).toEqual(c.edges.slice(1).map((e) => num.edges[e].callSite));
      });
    }
  });

  /** the walker's stack (method keys and call sites) at each event, by the rules contextIds documents */
  function stacksOf(a: Analysis, t: ThreadEvents): ({ method: string; callSite: number }[] | undefined)[] {
    const out: ({ method: string; callSite: number }[] | undefined)[] = new Array(t.length);
    const sites: number[] = [];
    const last: number[] = [];
    const snap = (w: StackWalker) =>
      w.depth < 0 ? undefined : Array.from(w.stack.subarray(0, w.depth + 1), (m, d) => ({ method: m >= 0 ? `${a.methods[m].className}.${a.methods[m].name}${a.methods[m].signature}` : '?', callSite: sites[d] }));
    let cur: ReturnType<typeof snap>;
    let next = 0;
    const fill = (i: number) => {
      for (; next < i; next++) out[next] = cur;
    };
    walkStacks(t, {
      enter(w, i) {
        fill(i);
        sites[w.depth] = w.depth > 0 ? last[w.depth - 1] : -1;
        last[w.depth] = -1;
        cur = snap(w);
        out[i] = cur;
        next = i + 1;
      },
      exit(w, i, implicit) {
        fill(i);
        if (!implicit && i < t.length) {
          out[i] = cur;
          next = i + 1;
        }
        cur = w.depth > 0 ? snap({ ...w, depth: w.depth - 1 } as StackWalker) : undefined;
      },
      bytecode(w, i) {
        fill(i);
        last[w.depth] = t.bci[i];
        cur = snap(w);
        out[i] = cur;
        next = i + 1;
      },
      gap(_w, i) {
        fill(i);
        out[i] = cur;
        next = i + 1;
      },
    });
    fill(t.length);
    return out;
  }

  test('per-event ids decode to the walker stack; recursion restarts the context at the back edge', () => {
    const rec: Op[] = [
      ['e', MAIN], ['b', MAIN, 1], ['e', A], ['b', A, 1], ['e', B], ['b', B, 1], ['g'], ['e', A], ['b', A, 4], ['e', C], ['b', C, 0], ['x', C], ['x', A], ['x', B], ['x', A],
      ['b', MAIN, 2], ['e', C], ['x', C], ['b', C, 3], ['x', MAIN], ['x', MAIN], ['b', D, 0],
    ];
    const an = analysis([thread(rec)]);
    const num = buildContextNumbering(an);
    expect(num.edges.filter((e) => e.kind === ContextEdgeKind.Back).length).toBe(1); // b -> a
    const ids = contextIds(an, an.threads[0], num);
    const stacks = stacksOf(an, an.threads[0]);
    let acyclic = 0;
    let restarted = 0;
    stacks.forEach((s, i) => {
      if (!s) return expect(ids[i]).toBe(-1);
      const d = num.decode(ids[i])!;
      if (d.length === s.length) {
        acyclic++;
        expect(d).toEqual(s.map((f, k) => (k === 0 ? { ...f, callSite: -1 } : f)));
      } else {
        restarted++;
        // the innermost segment: from the back edge's callee on
        expect(d.slice(1)).toEqual(s.slice(s.length - d.length + 1));
        expect(d[0].method).toBe(s[s.length - d.length].method);
      }
    });
    expect(acyclic).toBeGreaterThan(10);
    expect(restarted).toBe(6); // entry a, bytecode, entry c, bytecode, exit c, exit a
    expect(ids[ids.length - 1]).toBe(num.base[num.node('p/C.d()V')]); // d pushed implicitly at depth 0
  });

  test('stable: the same observed edges give the same numbering whatever the event order', () => {
    const x: Op[] = [['e', MAIN], ['b', MAIN, 1], ['e', A], ['x', A], ['b', MAIN, 2], ['e', B], ['b', B, 0], ['e', A], ['x', A], ['x', B], ['x', MAIN]];
    const y: Op[] = [['e', MAIN], ['b', MAIN, 2], ['e', B], ['b', B, 0], ['e', A], ['x', A], ['x', B], ['b', MAIN, 1], ['e', A], ['x', A], ['x', MAIN]];
    // method tables in different orders too
    const perm = [D, C, B, A, MAIN];
    const methods2 = perm.map((m) => METHODS[m]);
    const remap = (ops: Op[]) => ops.map((o) => (o[0] === 'g' ? o : ([o[0], perm.indexOf(o[1]), ...o.slice(2)] as Op)));
    const n1 = buildContextNumbering(analysis([thread(x)]));
    const n2 = buildContextNumbering(analysis([thread(remap(y))], methods2));
    expect(n2.keys).toEqual(n1.keys);
    expect(n2.edges).toEqual(n1.edges);
    const i1 = contextIds(analysis([thread(x)]), thread(x), n1);
    expect(Array.from(i1.slice(0, 3)).map((id) => n1.decode(id)!.map((f) => f.method).join('>'))).toEqual(['p/C.main()V', 'p/C.main()V', 'p/C.main()V>p/C.a()V']);
  });

  test('writeContexts: contexts.json and one .ctx column per thread', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-ctx-'));
    try {
      const an = analysis([thread([['e', MAIN], ['b', MAIN, 1], ['e', A], ['x', A], ['x', MAIN]], 42)]);
      const res = writeContexts(an, dir);
      expect(res.files).toEqual(['contexts.json', 'contexts/42.ctx']);
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'contexts.json'), 'utf8'));
      expect(json.total).toBe(2);
      expect(json.edges.map((e: { kind: string }) => e.kind).sort()).toEqual(['call', 'root']);
      const { header, ids } = readContextIds(path.join(dir, 'contexts/42.ctx'));
      expect(header).toMatchObject({ tid: 42, count: 5 });
      expect(Array.from(ids)).toEqual(Array.from(contextIds(an, an.threads[0])));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('.ctx holds runs of equal ids, deflated in chunks: many runs read back as the ids, damage names the offset', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-ctx-'));
    try {
      // main calls a, b, a in turn 70000 times: 140000 context changes (two per call), past one chunk of runs
      const ops: Op[] = [['e', MAIN]];
      for (let k = 0; k < 70000; k++) ops.push(['b', MAIN, 1], ['b', MAIN, 2], ['e', k % 3 === 1 ? B : A], ['b', k % 3 === 1 ? B : A, 0], ['x', k % 3 === 1 ? B : A]);
      ops.push(['x', MAIN]);
      const an = analysis([thread(ops, 7)]);
      writeContexts(an, dir);
      const file = path.join(dir, 'contexts/7.ctx');
      const expected = contextIds(an, an.threads[0]);
      const { header, ids } = readContextIds(file);
      expect(header).toMatchObject({ tid: 7, count: ops.length, version: 2 });
      expect(ids).toEqual(expected);
      const runs = readContextRuns(file);
      let changes = 1;
      for (let i = 1; i < expected.length; i++) if (expected[i] !== expected[i - 1]) changes++;
      expect(runs.ids.length).toBe(changes);
      expect(changes).toBeGreaterThan(2 * (1 << 16));
      // far smaller than one id per event
      expect(fs.statSync(file).size).toBeLessThan(ops.length / 4);
      const whole = fs.readFileSync(file);
      fs.writeFileSync(file, whole.subarray(0, whole.length - 3));
      expect(() => readContextIds(file)).toThrow(/7\.ctx: offset \d+: chunk of \d+ bytes past the end/);
      fs.writeFileSync(file, whole.subarray(0, 200));
      expect(() => readContextIds(file)).toThrow(/7\.ctx: offset \d+: /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a version-1 .ctx (one Int32 per event) still reads', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-ctx-'));
    try {
      const header = Buffer.from(JSON.stringify({ format: 'jportal-context-ids', version: 1, tid: 5, name: 'x', count: 3 }));
      const pre = 16 + header.length;
      const head = Buffer.alloc(pre + ((4 - (pre % 4)) % 4));
      head.write('JPCTXIDS', 0, 'latin1');
      head.writeUInt32LE(1, 8);
      head.writeUInt32LE(header.length, 12);
      header.copy(head, 16);
      const file = path.join(dir, '5.ctx');
      fs.writeFileSync(file, Buffer.concat([head, Buffer.from(new Int32Array([4, 4, -1]).buffer)]));
      expect(Array.from(readContextIds(file).ids)).toEqual([4, 4, -1]);
      expect(Array.from(readContextRuns(file).counts)).toEqual([1, 1, 1]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
