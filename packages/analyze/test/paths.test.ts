/**
 * Ball-Larus path profiles on classes compiled here: the numbering against brute-force enumeration of the
 * acyclic paths (back edges found independently, by dominators), and the replay of frames against paths cut
 * independently from random walks over each method's CFG.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseClass } from '@jportal/classfile';
import { MethodCfg } from '@jportal/icfg';
import { Analysis, AnalysisMethod, BlPath, Kind, PathNumbering, profilePaths, ThreadEvents, writePaths } from '../src';

const SOURCE = `
public class Paths {
  static int straight(int x) { return x + 1; }
  static int branches(int x) { int s = 0; if (x > 3) s += 1; else s -= 1; if (x % 2 == 0) s *= 2; return s; }
  static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) { if (i % 3 == 0) s += i; else s--; } return s; }
  static int nested(int n) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) { if (j == 5) break; s += j; } while (s > 100) s /= 2; } return s; }
  static int doWhileFirst(int n) { do { n -= 3; } while (n > 0); return n; }
  static int sw(int x) { switch (x & 7) { case 0: return 1; case 1: case 2: return 2; case 5: x++; default: return x; } }
  static int tryCatch(int[] a, int i) { try { return a[i]; } catch (ArrayIndexOutOfBoundsException e) { return -1; } finally { i++; } }
  static int loopTry(int n) { int s = 0; for (int i = 0; i < n; i++) { try { s += 10 / (i - 2); } catch (ArithmeticException e) { s = -s; } } return s; }
  static void thrower(int x) { if (x > 0) throw new IllegalStateException(); }
}
`;

const haveJavac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).status === 0;
if (!haveJavac) console.warn('SKIP Ball-Larus on compiled classes: no javac on PATH (install openjdk-17-jdk-headless)');

/** unique successor blocks of b (as the numbering sees them) */
const succs = (cfg: MethodCfg, b: number) => [...new Set(cfg.blockSuccessors(b))].sort((x, y) => x - y);

/** back edges v->w where w dominates v (iterative dominator sets; independent of any DFS order) */
function dominatorBackEdges(cfg: MethodCfg): Set<string> {
  const B = cfg.blockCount;
  const preds: number[][] = Array.from({ length: B }, () => []);
  for (let b = 0; b < B; b++) for (const s of succs(cfg, b)) preds[s].push(b);
  const all = () => new Set(Array.from({ length: B }, (_, i) => i));
  const dom: Set<number>[] = Array.from({ length: B }, (_, b) => (b === 0 ? new Set([0]) : all()));
  for (let changed = true; changed; ) {
    changed = false;
    for (let b = 1; b < B; b++) {
      let next: Set<number> | undefined;
      for (const p of preds[b]) next = next ? new Set([...next].filter((x) => dom[p].has(x))) : new Set(dom[p]);
      next = next ?? new Set();
      next.add(b);
      if (next.size !== dom[b].size) {
        dom[b] = next;
        changed = true;
      }
    }
  }
  const out = new Set<string>();
  for (let v = 0; v < B; v++) for (const w of succs(cfg, v)) if (dom[v].has(w)) out.add(`${v}>${w}`);
  return out;
}

/** every Ball-Larus path, brute force: starts at block 0 or at a back-edge target, DAG edges, ends leaving or at a back edge */
function enumeratePaths(cfg: MethodCfg, back: Set<string>): BlPath[] {
  const heads = new Set([...back].map((e) => Number(e.split('>')[1])));
  const out: BlPath[] = [];
  const go = (fromLoop: boolean, blocks: number[]) => {
    const v = blocks[blocks.length - 1];
    out.push({ fromLoop, blocks: [...blocks], toLoopHead: -1 });
    for (const w of succs(cfg, v)) {
      if (back.has(`${v}>${w}`)) out.push({ fromLoop, blocks: [...blocks], toLoopHead: w });
      else go(fromLoop, [...blocks, w]);
    }
  };
  go(false, [0]);
  for (const h of heads) go(true, [h]);
  return out;
}

(haveJavac ? describe : describe.skip)('Ball-Larus on javac output', () => {
  let dir = '';
  let methods: AnalysisMethod[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-paths-'));
    fs.writeFileSync(path.join(dir, 'Paths.java'), SOURCE);
    const r = spawnSync('javac', ['-g', '-d', dir, path.join(dir, 'Paths.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Paths.class'))), 'Paths.class');
    methods = cf.methods.filter((m) => m.code && m.name !== '<init>').map((info) => ({ className: 'Paths', name: info.name, signature: info.descriptor, classFile: cf, info }));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const cfgOf = (m: AnalysisMethod) => MethodCfg.build(m.info!.code!, m.info!.handlers, m.name);

  test('numPaths equals the brute-force count; ids are 0..numPaths-1 and decode back', () => {
    expect(methods.length).toBe(9);
    const counts: Record<string, number> = {};
    for (const m of methods) {
      const cfg = cfgOf(m);
      const back = dominatorBackEdges(cfg);
      const p = PathNumbering.build(cfg)!;
      // the DFS back edges are the dominator back edges (javac's CFGs are reducible)
      const dfsBack = new Set<string>();
      for (let v = 0; v < cfg.blockCount; v++) for (let e = p.succStart[v]; e < p.succStart[v + 1]; e++) if (p.succBack[e]) dfsBack.add(`${v}>${p.succBlock[e]}`);
      expect([...dfsBack].sort()).toEqual([...back].sort());
      const all = enumeratePaths(cfg, back);
      counts[m.name] = all.length;
      expect(p.numPaths).toBe(all.length);
      const ids = all.map((x) => p.encode(x));
      expect([...ids].sort((x, y) => x - y)).toEqual(all.map((_, i) => i));
      all.forEach((x, i) => expect(p.decode(ids[i])).toEqual(x));
    }
    // a few by hand: straight 1 block (1 path); branches: 2 x 2 complete paths plus early leaves
    expect(counts.straight).toBe(1);
    expect(counts.loop).toBeGreaterThan(4);
  });

  /** a frame's bcis from a random walk over the CFG, and its paths cut independently at dominator back edges */
  function randomFrame(cfg: MethodCfg, back: Set<string>, rnd: () => number): { bcis: number[]; paths: BlPath[] } {
    const bcis: number[] = [];
    const paths: BlPath[] = [];
    let cur: BlPath = { fromLoop: false, blocks: [0], toLoopHead: -1 };
    let b = 0;
    for (let steps = 0; ; steps++) {
      for (let i = cfg.blockFirst[b]; i < cfg.blockFirst[b + 1]; i++) bcis.push(cfg.insns.bci[i]);
      const s = succs(cfg, b);
      // leave at a return/athrow block, now and then anywhere (an exception out of the method), or after enough steps
      if (!s.length || rnd() < 0.08 || steps > 60) {
        paths.push(cur);
        return { bcis, paths };
      }
      const w = s[Math.floor(rnd() * s.length)];
      if (back.has(`${b}>${w}`)) {
        paths.push({ ...cur, toLoopHead: w });
        cur = { fromLoop: true, blocks: [w], toLoopHead: -1 };
      } else cur.blocks.push(w);
      b = w;
    }
  }

  function threadOf(frames: { method: number; bcis: number[] }[], extra?: (ev: { kind: number; method: number; bci: number }[]) => void): ThreadEvents {
    const ev: { kind: number; method: number; bci: number }[] = [];
    for (const f of frames) {
      ev.push({ kind: Kind.Entry, method: f.method, bci: -1 });
      for (const bci of f.bcis) ev.push({ kind: Kind.Bytecode, method: f.method, bci });
      ev.push({ kind: Kind.Exit, method: f.method, bci: -1 });
    }
    extra?.(ev);
    const n = ev.length;
    return {
      name: 'main', tid: 1, javaTid: 1, length: n, kind: Uint8Array.from(ev, (e) => e.kind), method: Int32Array.from(ev, (e) => e.method),
      bci: Int32Array.from(ev, (e) => e.bci), opcode: new Int16Array(n).fill(-1), tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN),
      origin: new Uint8Array(n), tier: new Uint8Array(n),
    };
  }

  const analysis = (threads: ThreadEvents[]): Analysis => ({ source: { kind: 'trace', dir }, methods, threads, tscPerNs: 0, problems: [] });

  test('replayed frames count exactly the paths cut from random walks', () => {
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
    const frames: { method: number; bcis: number[] }[] = [];
    const expected = new Map<number, Map<string, number>>();
    methods.forEach((m, k) => {
      const cfg = cfgOf(m);
      const back = dominatorBackEdges(cfg);
      const exp = new Map<string, number>();
      expected.set(k, exp);
      for (let r = 0; r < 40; r++) {
        const f = randomFrame(cfg, back, rnd);
        frames.push({ method: k, bcis: f.bcis });
        for (const p of f.paths) exp.set(JSON.stringify(p), (exp.get(JSON.stringify(p)) ?? 0) + 1);
      }
    });
    const prof = profilePaths(analysis([threadOf(frames)]));
    methods.forEach((_, k) => {
      const p = prof.get(k)!;
      expect(p.broken).toBe(0);
      expect(p.frames).toBe(40);
      const got = new Map<string, number>();
      for (const [id, c] of p.counts) got.set(JSON.stringify(p.numbering!.decode(id)), c);
      expect(got).toEqual(expected.get(k));
    });
  });

  test('broken paths: a frame not starting at bci 0, an unfilled gap, a jump that is no CFG edge; a recovered fill is not broken', () => {
    const k = methods.findIndex((m) => m.name === 'loop');
    const cfg = cfgOf(methods[k]);
    const back = dominatorBackEdges(cfg);
    let seed = 5;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
    let f = randomFrame(cfg, back, rnd);
    while (f.paths.length < 3) f = randomFrame(cfg, back, rnd);
    // 1: starts mid-method: its first path is broken, the following ones (after a back edge) are not
    const t1 = threadOf([{ method: k, bcis: f.bcis.slice(1) }]);
    const p1 = profilePaths(analysis([t1])).get(k)!;
    expect(p1.broken).toBe(1);
    expect([...p1.counts.values()].reduce((s, x) => s + x, 0)).toBe(f.paths.length - 1);
    // 2: a gap after the first bytecode breaks the first path; 3: a recovered event after the gap keeps it
    const withGap = () =>
      threadOf([{ method: k, bcis: f.bcis }], (ev) => {
        ev.splice(2, 0, { kind: Kind.Gap, method: -1, bci: 0 });
      });
    const t2 = withGap();
    expect(profilePaths(analysis([t2])).get(k)!.broken).toBe(1);
    const t3 = withGap();
    t3.origin[3] = 2; // Origin.Recovered
    expect(profilePaths(analysis([t3])).get(k)!.broken).toBe(0);
    // 4: a bci sequence that jumps where the CFG has no edge
    const t4 = threadOf([{ method: k, bcis: [0, cfg.insns.bci[cfg.blockFirst[cfg.blockCount - 1]]] }]);
    const p4 = profilePaths(analysis([t4])).get(k)!;
    expect([p4.broken, p4.invalidTransitions]).toEqual([1, 1]);
  });

  test('writePaths: paths.json and paths.txt with bci ranges and source lines', () => {
    const k = methods.findIndex((m) => m.name === 'branches');
    const cfg = cfgOf(methods[k]);
    const f = randomFrame(cfg, dominatorBackEdges(cfg), () => 0.5);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-paths-out-'));
    try {
      const r = writePaths(analysis([threadOf([{ method: k, bcis: f.bcis }, { method: k, bcis: f.bcis }])]), out, { top: 5 });
      expect(r.files).toEqual(['paths.json', 'paths.txt']);
      expect(r.summary).toMatchObject({ paths: 2, broken: 0, distinctPaths: 1 });
      const json = JSON.parse(fs.readFileSync(path.join(out, 'paths.json'), 'utf8'));
      const m = json.methods.find((x: { label: string }) => x.label === 'Paths.branches');
      expect(m.counts).toEqual([2]);
      expect(m.top[0].blocks[0][0]).toBe(0);
      expect(m.top[0].lines[0]).toBe(4);
      const txt = fs.readFileSync(path.join(out, 'paths.txt'), 'utf8');
      expect(txt).toMatch(/Paths\.branches\(I\)I: 2 paths \(1 distinct of \d+\), 0 broken, 2 frames/);
      expect(txt).toMatch(/#\d+  2  0-\d+ \(l\.4\) -> .* -> leave/);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
