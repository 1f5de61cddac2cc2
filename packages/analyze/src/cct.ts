/**
 * Calling-context tree (CCT) with JP2's metrics: per call-site-aware context, the invocations and the bytecodes
 * executed there (exclusive, inclusive, and how many of them recovery copied into gaps). Built per thread from the
 * shared stack rules of walk.ts, then merged over threads. Options: recursion folding, and the dynamic extent of
 * chosen methods only (`--extent Class.method`). Definitions and file formats: docs/contexts.md.
 *
 * Nodes live in typed arrays (node 0 is the root, method -1); a child is found through one Map keyed by
 * parent * 2^26 + the interned (call-site bci, method) pair.
 */
import * as fs from 'fs';
import * as path from 'path';
import { AnalysisMethod, EventWindow, methodKeyOf, methodLabel, Origin, PartResult, Profiled, ThreadEvents } from './model';
import { PairMap } from './pair-map';
import { withRoom } from './typed';
import { ChunkWriter } from './timeline';
import { runPass, StackVisitor, StackWalker, walkWindows, WalkPass } from './walk';

/** bounds of a tree (a tree this large would not fit this machine anyway) */
const PAIR_LIMIT = 1 << 26;
const NODE_LIMIT = 2 ** 27;

export interface CctOptions {
  /** fold recursion: a frame of a method already on its context path joins the nearest such ancestor node */
  foldRecursion?: boolean;
  /**
   * only the dynamic extent of these methods: 'Class.method', 'pkg.Class.method' or 'pkg/Class.method(desc)';
   * several separated by commas
   */
  extent?: string;
}

/** One calling-context tree; all columns have `size` valid elements. */
export class Cct {
  size = 1;
  parent = new Int32Array(64).fill(-1);
  method = new Int32Array(64).fill(-1);
  /** the caller's call-site bci (its last bytecode before the entry); -1 at the root's children and unknown */
  callSite = new Int32Array(64).fill(-1);
  invocations = new Float64Array(64);
  /** of the invocations, frames pushed without an entry event (the walker's implicit entries) */
  implicitEntries = new Float64Array(64);
  /** bytecodes executed in the context itself (exclusive) */
  bytecodes = new Float64Array(64);
  /** of those, bytecodes recovery copied into gaps */
  recovered = new Float64Array(64);
  /** (parent, pair) -> child node */
  private readonly children = new PairMap();
  /** (callSite, method) -> pair */
  private readonly pairs = new PairMap();

  constructor(readonly methodCount: number) {}

  /** the child of `parent` for (callSite, method), created when absent */
  child(parent: number, callSite: number, method: number): number {
    let pair = this.pairs.get(callSite, method);
    if (pair < 0) {
      pair = this.pairs.size;
      if (pair >= PAIR_LIMIT) throw new Error('calling-context tree: too many (call site, method) pairs');
      this.pairs.set(callSite, method, pair);
    }
    let n = this.children.get(parent, pair);
    if (n < 0) {
      n = this.size++;
      if (n >= NODE_LIMIT) throw new Error('calling-context tree: too many nodes');
      if (n === this.parent.length) this.grow();
      this.parent[n] = parent;
      this.method[n] = method;
      this.callSite[n] = callSite;
      this.children.set(parent, pair, n);
    }
    return n;
  }

  /** the existing child, or -1 */
  findChild(parent: number, callSite: number, method: number): number {
    const pair = this.pairs.get(callSite, method);
    return pair < 0 ? -1 : this.children.get(parent, pair);
  }

  private grow(): void {
    const n = this.parent.length * 2;
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(n).fill(-1);
      b.set(a);
      return b;
    };
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.parent = i32(this.parent);
    this.method = i32(this.method);
    this.callSite = i32(this.callSite);
    this.invocations = f64(this.invocations);
    this.implicitEntries = f64(this.implicitEntries);
    this.bytecodes = f64(this.bytecodes);
    this.recovered = f64(this.recovered);
  }

  /** inclusive sums of a column: a node's value plus its subtree's (children always follow their parent) */
  inclusive(column: Float64Array): Float64Array {
    const out = column.slice(0, this.size);
    for (let n = this.size - 1; n > 0; n--) out[this.parent[n]] += out[n];
    return out;
  }

  /** depth of each node (root 0) */
  depths(): Int32Array {
    const d = new Int32Array(this.size);
    for (let n = 1; n < this.size; n++) d[n] = d[this.parent[n]] + 1;
    return d;
  }

  /** the children of every node, as CSR (start[n]..start[n+1] into list), in creation order */
  childLists(): { start: Int32Array; list: Int32Array } {
    const start = new Int32Array(this.size + 1);
    for (let n = 1; n < this.size; n++) start[this.parent[n] + 1]++;
    for (let n = 0; n < this.size; n++) start[n + 1] += start[n];
    const fill = start.slice(0, this.size);
    const list = new Int32Array(Math.max(0, this.size - 1));
    for (let n = 1; n < this.size; n++) list[fill[this.parent[n]]++] = n;
    return { start, list };
  }

  /** adds `other`'s nodes and metrics into this tree (same method table) */
  merge(other: Cct): void {
    const map = new Int32Array(other.size);
    map[0] = 0;
    for (let n = 1; n < other.size; n++) {
      const m = this.child(map[other.parent[n]], other.callSite[n], other.method[n]);
      map[n] = m;
    }
    for (let n = 0; n < other.size; n++) {
      const m = map[n];
      this.invocations[m] += other.invocations[n];
      this.implicitEntries[m] += other.implicitEntries[n];
      this.bytecodes[m] += other.bytecodes[n];
      this.recovered[m] += other.recovered[n];
    }
  }

  /** the path of (callSite, method) pairs from the root's child down to `node` */
  pathOf(node: number): { callSite: number; method: number }[] {
    const out: { callSite: number; method: number }[] = [];
    for (let n = node; n > 0; n = this.parent[n]) out.push({ callSite: this.callSite[n], method: this.method[n] });
    return out.reverse();
  }
}

/** One method an extent names: its simple or qualified class name (slashed), name, and descriptor if given. */
interface ExtentSpec {
  cls: string;
  name: string;
  desc?: string;
}

/** Parses an extent: 'Class.method' (simple or dotted/slashed qualified class name), optionally with a descriptor; several separated by commas. */
function parseExtent(spec: string): ExtentSpec[] {
  const out: ExtentSpec[] = [];
  for (const raw of spec.split(',')) {
    const s = raw.trim();
    if (!s) continue;
    const paren = s.indexOf('(');
    const head = paren >= 0 ? s.slice(0, paren) : s;
    const dot = head.lastIndexOf('.');
    if (dot <= 0) throw new Error(`--extent ${s}: expected Class.method`);
    out.push({ cls: head.slice(0, dot).replace(/\./g, '/'), name: head.slice(dot + 1), desc: paren >= 0 ? s.slice(paren) : undefined });
  }
  return out;
}

const inExtent = (specs: ExtentSpec[], m: AnalysisMethod): boolean =>
  specs.some((x) => m.name === x.name && (x.desc === undefined || m.signature === x.desc) && (m.className === x.cls || m.className.endsWith(`/${x.cls}`) || m.className.endsWith(`$${x.cls}`)));

/**
 * The methods an extent names: 'Class.method' (simple or dotted/slashed qualified class name), optionally with
 * a descriptor; several separated by commas.
 */
export function matchMethods(methods: AnalysisMethod[], spec: string): Set<number> {
  const specs = parseExtent(spec);
  const out = new Set<number>();
  methods.forEach((m, i) => {
    if (inExtent(specs, m)) out.add(i);
  });
  return out;
}

/** matchMethods asked one method id at a time, of a method table that may grow (a streamed trace's). */
class ExtentMatcher {
  private readonly specs: ExtentSpec[];
  /** per method id: 0 not asked yet, 1 outside, 2 in the extent */
  private known = new Uint8Array(0);
  constructor(
    private readonly methods: AnalysisMethod[],
    spec: string,
  ) {
    this.specs = parseExtent(spec);
  }

  has(m: number): boolean {
    if (m < 0 || m >= this.methods.length) return false;
    this.known = withRoom(this.known, m + 1);
    if (!this.known[m]) this.known[m] = inExtent(this.specs, this.methods[m]) ? 2 : 1;
    return this.known[m] === 2;
  }
}

/** Builds one thread's tree into `tree` (see the module comment and docs/contexts.md for the rules). */
export function addThreadToCct(tree: Cct, t: ThreadEvents | Iterable<EventWindow>, opts: { foldRecursion?: boolean; extent?: { has(m: number): boolean } } = {}): void {
  walkWindows(t, cctVisitor(tree, opts));
}

/** The visitor of addThreadToCct: a walk of one thread with it builds the thread's tree into `tree`. */
function cctVisitor(tree: Cct, opts: { foldRecursion?: boolean; extent?: { has(m: number): boolean } }): StackVisitor {
  const fold = !!opts.foldRecursion;
  const extent = opts.extent;
  let nodeAt = new Int32Array(256);
  let lastBci = new Int32Array(256);
  /** depth of the outermost open extent frame, -1 when none (always 0-based root otherwise) */
  let extentBase = -1;
  const ensure = (d: number) => {
    if (d < nodeAt.length) return;
    const a = new Int32Array(nodeAt.length * 2);
    a.set(nodeAt);
    nodeAt = a;
    const b = new Int32Array(lastBci.length * 2);
    b.set(lastBci);
    lastBci = b;
  };
  return {
    enter(w: StackWalker, _i: number, implicit: boolean) {
      const d = w.depth;
      ensure(d);
      const m = w.stack[d];
      lastBci[d] = -1;
      let parent: number;
      let site: number;
      if (extent) {
        if (extentBase < 0) {
          if (!extent.has(m)) {
            nodeAt[d] = -1;
            return;
          }
          extentBase = d;
          parent = 0;
          site = -1;
        } else {
          parent = nodeAt[d - 1];
          site = lastBci[d - 1];
        }
      } else {
        parent = d > 0 ? nodeAt[d - 1] : 0;
        site = d > 0 ? lastBci[d - 1] : -1;
      }
      let n = -1;
      if (fold) for (let a = parent; a > 0; a = tree.parent[a]) if (tree.method[a] === m) { n = a; break; }
      if (n < 0) n = tree.child(parent, site, m);
      nodeAt[d] = n;
      tree.invocations[n]++;
      if (implicit) tree.implicitEntries[n]++;
    },
    exit(w: StackWalker) {
      if (w.depth === extentBase) extentBase = -1;
    },
    bytecodes(w: StackWalker, from: number, to: number) {
      const d = w.depth;
      lastBci[d] = w.t.bci[to - 1];
      const n = nodeAt[d];
      if (n < 0) return;
      tree.bytecodes[n] += to - from;
      const origin = w.t.origin;
      let recovered = 0;
      for (let i = from; i < to; i++) if (origin[i] === Origin.Recovered) recovered++;
      tree.recovered[n] += recovered;
    },
  };
}

export interface CctResult {
  threads: { name: string; tid: number; tree: Cct }[];
  /** all threads' trees merged (the root's children are every thread's outermost contexts) */
  merged: Cct;
  /** the extent's methods (indices into Analysis.methods), when an extent was asked for */
  extentMethods?: number[];
}

export function buildCct(a: Profiled, opts: CctOptions = {}): CctResult {
  return runPass(a, cctPass(a, opts));
}

/** buildCct as a pass that can share its walk with others (runPasses). */
export function cctPass(a: Profiled, opts: CctOptions = {}): WalkPass<CctResult> {
  const extent = opts.extent !== undefined ? new ExtentMatcher(a.methods, opts.extent) : undefined;
  const merged = new Cct(a.methods.length);
  const threads: CctResult['threads'] = [];
  return {
    thread(k) {
      const t = a.threads[k];
      const tree = new Cct(a.methods.length);
      return {
        visitor: cctVisitor(tree, { foldRecursion: opts.foldRecursion, extent }),
        done: () => {
          merged.merge(tree);
          threads.push({ name: t.name, tid: t.tid, tree });
        },
      };
    },
    finish: () => ({ threads, merged, extentMethods: opts.extent !== undefined ? [...matchMethods(a.methods, opts.extent)].sort((x, y) => x - y) : undefined }),
  };
}

/** Key of a node's context independent of the method table: "callSite:Class.nameDesc > ..." (for comparisons). */
export function contextKeyOf(tree: Cct, methods: AnalysisMethod[], node: number): string {
  return tree
    .pathOf(node)
    .map((p) => `${p.callSite}:${p.method >= 0 ? methodKeyOf(methods[p.method]) : '?'}`)
    .join(' > ');
}

export interface WriteCctOptions extends CctOptions {
  /** cct.txt shows nodes with at least this share of the inclusive bytecodes (default 0.001) */
  threshold?: number;
  /** and at most this many lines (default 2000) */
  maxLines?: number;
}

/** A tree's fields as JSON object members (no braces), its columns written a slice at a time. */
function writeTreeJson(w: ChunkWriter, tree: Cct): void {
  const n = tree.size;
  const columns: [string, ArrayLike<number>][] = [
    ['parent', tree.parent], ['method', tree.method], ['callSite', tree.callSite], ['invocations', tree.invocations],
    ['implicitEntries', tree.implicitEntries], ['bytecodes', tree.bytecodes], ['inclusiveBytecodes', tree.inclusive(tree.bytecodes)],
    ['recovered', tree.recovered], ['inclusiveRecovered', tree.inclusive(tree.recovered)],
  ];
  w.write(`"nodes":${n}`);
  for (const [name, col] of columns) {
    w.write(`,"${name}":[`);
    for (let i = 0; i < n; i += 1 << 16) w.write(`${i ? ',' : ''}${Array.prototype.slice.call(col, i, Math.min(n, i + (1 << 16))).join(',')}`);
    w.write(']');
  }
}

/** Readable top of a tree: children by inclusive bytecodes, nodes below `threshold` of the total cut. */
export function formatCct(tree: Cct, methods: AnalysisMethod[], threshold = 0.001, maxLines = 2000): string {
  const inc = tree.inclusive(tree.bytecodes);
  const total = inc[0];
  const { start, list } = tree.childLists();
  const lines: string[] = [`# inclusive bytecodes  exclusive  invocations  [call-site bci] method   (total ${total}, cut below ${threshold * 100}%)`];
  const depthOf = tree.depths();
  const stack: number[] = [];
  const kids = (n: number) => Array.from(list.subarray(start[n], start[n + 1])).sort((x, y) => inc[y] - inc[x] || x - y);
  stack.push(...kids(0).reverse());
  let cut = 0;
  while (stack.length) {
    const n = stack.pop()!;
    if (inc[n] < threshold * total || lines.length > maxLines) {
      cut++;
      continue;
    }
    const m = tree.method[n];
    const label = m >= 0 ? `${methodLabel(methods[m])}${methods[m].signature}` : '(unknown method)';
    const pct = total > 0 ? ((100 * inc[n]) / total).toFixed(1) : '0.0';
    const site = tree.callSite[n] >= 0 ? `[${tree.callSite[n]}] ` : '';
    lines.push(`${'  '.repeat(depthOf[n] - 1)}${inc[n]} (${pct}%)  ${tree.bytecodes[n]}  x${tree.invocations[n]}  ${site}${label}`);
    stack.push(...kids(n).reverse());
  }
  if (cut) lines.push(`# ${cut} subtrees below the threshold not shown`);
  return lines.join('\n') + '\n';
}

/** Writes cct.json and cct.txt into `outDir`. */
export function writeCct(a: Profiled, outDir: string, opts: WriteCctOptions = {}, built?: CctResult): PartResult {
  const r = built ?? buildCct(a, opts);
  fs.mkdirSync(outDir, { recursive: true });
  // written piece by piece: a tree of millions of contexts is more JSON than one string may hold
  const w = new ChunkWriter(path.join(outDir, 'cct.json'));
  const head = {
    format: 'jportal-cct',
    version: 1,
    source: a.source,
    foldRecursion: !!opts.foldRecursion,
    extent: opts.extent ?? null,
    extentMethods: r.extentMethods ?? null,
    methods: a.methods.map((m) => ({ className: m.className, name: m.name, signature: m.signature })),
  };
  w.write(JSON.stringify(head).slice(0, -1));
  w.write(',"merged":{');
  writeTreeJson(w, r.merged);
  w.write('},"threads":[');
  r.threads.forEach((t, k) => {
    w.write(`${k ? ',' : ''}{"name":${JSON.stringify(t.name)},"tid":${JSON.stringify(t.tid)},`);
    writeTreeJson(w, t.tree);
    w.write('}');
  });
  w.write(']}');
  w.close();
  fs.writeFileSync(path.join(outDir, 'cct.txt'), formatCct(r.merged, a.methods, opts.threshold ?? 0.001, opts.maxLines ?? 2000));
  const inc = r.merged.inclusive(r.merged.bytecodes);
  const depths = r.merged.depths();
  let maxDepth = 0;
  for (let n = 0; n < r.merged.size; n++) if (depths[n] > maxDepth) maxDepth = depths[n];
  return {
    files: ['cct.json', 'cct.txt'],
    summary: {
      nodes: r.merged.size - 1,
      maxDepth,
      bytecodes: inc[0],
      recoveredBytecodes: r.merged.inclusive(r.merged.recovered)[0],
      foldRecursion: !!opts.foldRecursion,
      extent: opts.extent ?? null,
      extentMethods: r.extentMethods?.map((m) => methodLabel(a.methods[m])) ?? null,
    },
  };
}
