/**
 * Stable numeric calling-context ids: PCCE (Sumner et al., "Precise calling context encoding", ICSE 2010) over
 * the observed call graph. Nodes are methods (by method key, so two analyses of one program share them), edges
 * are observed calls (caller, call-site bci, callee). Back edges of a DFS from the root (recursion) and edges
 * whose addend would overflow become "push" edges: the context restarts there (PCCE pushes the id and starts
 * anew), which the numbering models with a root edge into the callee. Every remaining acyclic context from the
 * root to a method n then has a unique local id in [0, numCC(n)), and base(n) + local id is unique over all
 * methods: the global context id an event carries. Definitions, the rules for gaps and the files: docs/contexts.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { EventWindow, methodKeyOf, PartResult, Profiled, ThreadEvents } from './model';
import { PairMap } from './pair-map';
import { withRoom } from './typed';
import { asWindows, fanOut, runPass, StackWalker, ThreadWalk, walkWindows, WalkPass } from './walk';

/** the root (thread start, or restart after a push edge) as a caller */
export const ROOT = -1;
const SITES = 65537;
const ID_LIMIT = 2 ** 31 - 1;

export const enum EdgeKind {
  /** an acyclic call edge: adds its addend */
  Call = 0,
  /** a back edge of the DFS (recursion): pushes, the callee's context restarts */
  Back = 1,
  /** an edge whose addend would overflow the id range: pushes like a back edge */
  Overflow = 2,
  /** from the root into a method: where threads start, and where contexts restart after a push */
  Root = 3,
}
export const EDGE_KIND_NAMES = ['call', 'back', 'overflow', 'root'];

export interface ContextEdge {
  /** node index, or ROOT */
  caller: number;
  callSite: number;
  callee: number;
  kind: EdgeKind;
  /** added to the caller's local id (Call and Root edges); 0 for push edges */
  addend: number;
}

export interface ContextFrame {
  /** method key (Class.nameDesc), '?' for an unattributed method */
  method: string;
  /** the call-site bci in the caller; -1 for the outermost frame of a context */
  callSite: number;
}

export class ContextNumbering {
  /** node keys (method keys), sorted: node index = position */
  readonly keys: string[];
  readonly numCC: Float64Array;
  /** first global id of each node's contexts */
  readonly base: Float64Array;
  /** total global ids */
  readonly total: number;
  readonly edges: ContextEdge[];
  private readonly nodeByKey = new Map<string, number>();
  private readonly edgeByKey = new Map<number, number>();
  /** incoming Call/Root edges of each node, by addend */
  private readonly incoming: number[][];

  constructor(keys: string[], edges: ContextEdge[], numCC: Float64Array) {
    this.keys = keys;
    this.edges = edges;
    this.numCC = numCC;
    keys.forEach((k, i) => this.nodeByKey.set(k, i));
    this.base = new Float64Array(keys.length + 1);
    for (let n = 0; n < keys.length; n++) this.base[n + 1] = this.base[n] + numCC[n];
    this.total = this.base[keys.length];
    this.incoming = keys.map(() => []);
    edges.forEach((e, i) => {
      this.edgeByKey.set(this.edgeKey(e.caller, e.callSite, e.callee), i);
      if (e.kind === EdgeKind.Call || e.kind === EdgeKind.Root) this.incoming[e.callee].push(i);
    });
    for (const list of this.incoming) list.sort((x, y) => edges[x].addend - edges[y].addend);
  }

  edgeKey(caller: number, callSite: number, callee: number): number {
    return ((caller + 1) * SITES + callSite + 1) * (this.keys.length + 1) + callee;
  }

  /** the edge index of (caller, callSite, callee), -1 if not in the numbering */
  edge(caller: number, callSite: number, callee: number): number {
    return this.edgeByKey.get(this.edgeKey(caller, callSite, callee)) ?? -1;
  }

  node(key: string): number {
    return this.nodeByKey.get(key) ?? -1;
  }

  /** node index of every method of `a` (-1: not in the numbering) */
  nodesOf(a: Profiled): Int32Array {
    return Int32Array.from(a.methods, (m) => this.node(methodKeyOf(m)));
  }

  /** the frames (outermost first) of global id `id`; undefined when out of range */
  decode(id: number): ContextFrame[] | undefined {
    if (!(id >= 0 && id < this.total)) return undefined;
    let lo = 0;
    let hi = this.keys.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.base[mid] <= id) lo = mid;
      else hi = mid - 1;
    }
    let n = lo;
    let local = id - this.base[n];
    const out: ContextFrame[] = [];
    for (;;) {
      const inc = this.incoming[n];
      let pick = -1;
      for (const e of inc) {
        if (this.edges[e].addend <= local) pick = e;
        else break;
      }
      if (pick < 0) return undefined;
      const e = this.edges[pick];
      local -= e.addend;
      out.push({ method: this.keys[n], callSite: e.caller === ROOT ? -1 : e.callSite });
      if (e.caller === ROOT) break;
      n = e.caller;
    }
    return out.reverse();
  }
}

type ObservedEdge = { caller: string; callSite: number; callee: string };

/** Observed edges of one analysis: [caller key or '', callSite, callee key] per distinct edge. */
function observedEdges(a: Profiled): WalkPass<ObservedEdge[]> {
  // (the method table may grow as the walk goes: a streamed trace's; keys are taken when first needed)
  const keyOf: string[] = [];
  const mk = (m: number) => (m >= 0 ? (keyOf[m] ??= methodKeyOf(a.methods[m])) : '?');
  // (caller, call site) -> its index; (that index, callee) -> seen
  const callerSites = new PairMap();
  const seen = new PairMap();
  const out: ObservedEdge[] = [];
  const thread = (): ThreadWalk => {
    const last = new CallSites();
    return { visitor: {
      enter(w: StackWalker) {
        const d = w.depth;
        last.enter(d);
        const caller = d > 0 ? w.stack[d - 1] : -2;
        const site = d > 0 ? last.at(d - 1) : -1;
        const callee = w.stack[d];
        let cs = callerSites.get(caller, site);
        if (cs < 0) callerSites.set(caller, site, (cs = callerSites.size));
        if (seen.get(cs, callee) >= 0) return;
        seen.set(cs, callee, 1);
        out.push({ caller: caller === -2 ? '' : mk(caller), callSite: site, callee: mk(callee) });
      },
      bytecodes(w: StackWalker, _from: number, to: number) {
        last.set(w.depth, w.t.bci[to - 1]);
      },
    } };
  };
  return { thread, finish: () => out };
}

/** the last bytecode bci of each open frame (the call site of the frame above it) */
class CallSites {
  bci = new Int32Array(256);
  enter(d: number): void {
    if (d >= this.bci.length) {
      const b = new Int32Array(this.bci.length * 2);
      b.set(this.bci);
      this.bci = b;
    }
    this.bci[d] = -1;
  }
  set(d: number, bci: number): void {
    this.bci[d] = bci;
  }
  at(d: number): number {
    return this.bci[d];
  }
}

/**
 * The numbering of the union of the analyses' observed call graphs. Canonical: nodes sorted by method key, edges
 * by (caller, call site, callee), so the ids depend only on the set of observed edges, not on event order.
 */
export function buildContextNumbering(analyses: Profiled | Profiled[]): ContextNumbering {
  const list = Array.isArray(analyses) ? analyses : [analyses];
  return numberEdges(list.flatMap((a) => runPass(a, observedEdges(a))));
}

function numberEdges(raw: ObservedEdge[]): ContextNumbering {
  const keySet = new Set<string>();
  for (const e of raw) {
    if (e.caller) keySet.add(e.caller);
    keySet.add(e.callee);
  }
  const keys = [...keySet].sort();
  const nodeOf = new Map(keys.map((k, i) => [k, i] as const));
  const uniq = new Map<string, { caller: number; callSite: number; callee: number }>();
  for (const e of raw) {
    const caller = e.caller ? nodeOf.get(e.caller)! : ROOT;
    const callee = nodeOf.get(e.callee)!;
    uniq.set(`${caller},${e.callSite},${callee}`, { caller, callSite: caller === ROOT ? -1 : e.callSite, callee });
  }
  const sorted = [...uniq.values()].sort((x, y) => x.caller - y.caller || x.callSite - y.callSite || x.callee - y.callee);
  return numberGraph(keys, sorted);
}

/** PCCE over nodes 0..n-1 and sorted edges (ROOT edges included): back edges, root edges, numCC, addends. */
export function numberGraph(keys: string[], sortedEdges: { caller: number; callSite: number; callee: number }[]): ContextNumbering {
  const n = keys.length;
  const edges: ContextEdge[] = sortedEdges.map((e) => ({ ...e, kind: e.caller === ROOT ? EdgeKind.Root : EdgeKind.Call, addend: 0 }));
  // out-edges in canonical order; DFS from the root marks back edges
  const outStart = new Int32Array(n + 2);
  const slot = (c: number) => c + 1;
  for (const e of edges) outStart[slot(e.caller) + 1]++;
  for (let i = 0; i <= n; i++) outStart[i + 1] += outStart[i];
  const outList = new Int32Array(edges.length);
  const fill = outStart.slice();
  edges.forEach((e, i) => (outList[fill[slot(e.caller)]++] = i));
  const state = new Uint8Array(n + 1); // 0 new, 1 on stack, 2 done
  const hasRoot = new Uint8Array(n);
  for (const e of edges) if (e.caller === ROOT) hasRoot[e.callee] = 1;
  const dfs = (start: number) => {
    const nodeStack = [start];
    const pos = [outStart[start]];
    state[start] = 1;
    while (nodeStack.length) {
      const top = nodeStack.length - 1;
      const v = nodeStack[top];
      if (pos[top] === outStart[v + 1]) {
        state[v] = 2;
        nodeStack.pop();
        pos.pop();
        continue;
      }
      const e = edges[outList[pos[top]++]];
      const w = slot(e.callee);
      if (state[w] === 1) e.kind = EdgeKind.Back;
      else if (state[w] === 0) {
        state[w] = 1;
        nodeStack.push(w);
        pos.push(outStart[w]);
      }
    }
  };
  dfs(0);
  for (let v = 0; v < n; v++)
    if (!state[v + 1]) {
      hasRoot[v] = 1; // unreachable from the root (not from observed walks): a root of its own
      dfs(v + 1);
    }
  for (const e of edges) if (e.kind === EdgeKind.Back) hasRoot[e.callee] = 1;
  // incoming Call edges per node (canonical order), topological order by Kahn
  const inList: number[][] = keys.map(() => []);
  const indeg = new Int32Array(n);
  edges.forEach((e, i) => {
    if (e.kind === EdgeKind.Call) {
      inList[e.callee].push(i);
      indeg[e.callee]++;
    }
  });
  const order: number[] = [];
  for (let v = 0; v < n; v++) if (indeg[v] === 0) order.push(v);
  for (let k = 0; k < order.length; k++) {
    const v = order[k];
    for (let p = outStart[slot(v)]; p < outStart[slot(v) + 1]; p++) {
      const e = edges[outList[p]];
      if (e.kind === EdgeKind.Call && --indeg[e.callee] === 0) order.push(e.callee);
    }
  }
  if (order.length !== n) throw new Error('context numbering: call graph still cyclic after removing back edges');
  const cap = Math.max(2, Math.floor(ID_LIMIT / Math.max(1, n)));
  const rootEdge = new Int32Array(n).fill(-1);
  edges.forEach((e, i) => {
    if (e.caller === ROOT) rootEdge[e.callee] = i;
  });
  const numCC = new Float64Array(n);
  const added: ContextEdge[] = [];
  for (const v of order) {
    let total = hasRoot[v] ? 1 : 0;
    let overflow = false;
    for (const i of inList[v]) {
      const e = edges[i];
      const c = numCC[e.caller];
      if (total + c > cap - 1) {
        e.kind = EdgeKind.Overflow;
        overflow = true;
        continue;
      }
      e.addend = total;
      total += c;
    }
    if (overflow && !hasRoot[v]) {
      hasRoot[v] = 1;
      for (const i of inList[v]) if (edges[i].kind === EdgeKind.Call) edges[i].addend += 1;
      total += 1;
    }
    if (hasRoot[v]) {
      if (rootEdge[v] >= 0) edges[rootEdge[v]].addend = 0;
      else added.push({ caller: ROOT, callSite: -1, callee: v, kind: EdgeKind.Root, addend: 0 });
    }
    numCC[v] = total;
  }
  // root edges first (addend 0): the Call edges' addends started at 1 where a root edge exists
  return new ContextNumbering(keys, [...edges, ...added], numCC);
}

/**
 * Per event of `t`, the global id of its context (the innermost segment after the last push edge), -1 where
 * there is none. Which context an event has: an entry, the new frame's; an exit, the frame it leaves; a
 * bytecode, gap, exception and every other event, the top frame's after the walker applied the event
 * (a gap keeps the stack: its context is where data was lost). Contexts through an edge the numbering does not
 * know (or a caller whose context is unknown) are -1.
 */
export function contextIds(a: Profiled, t: ThreadEvents | Iterable<EventWindow>, numbering: ContextNumbering = buildContextNumbering(a)): Int32Array {
  const parts: Int32Array[] = [];
  let n = 0;
  contextIdWindows(a, t, numbering, (ids) => {
    parts.push(ids.slice());
    n += ids.length;
  });
  if (parts.length === 1) return parts[0];
  const ids = new Int32Array(n);
  let at = 0;
  for (const p of parts) {
    ids.set(p, at);
    at += p.length;
  }
  return ids;
}

/**
 * contextIds window by window: `sink(ids)` gets the ids of each window's events in turn (a buffer it must not
 * keep). The id of an event without a callback of its own is the context current at the next callback, which the
 * stack keeps until then: so a window's last events take the context current at the window's end.
 */
export function contextIdWindows(a: Profiled, t: ThreadEvents | Iterable<EventWindow>, numbering: ContextNumbering, sink: (ids: Int32Array) => void): void {
  const walk = contextIdWalk(a, numbering, sink);
  walkWindows(asWindows(t), walk.visitor, walk.window);
  walk.done();
}

/**
 * contextIdWindows as a walk of one thread that can share its read with others (runPasses): contextTreeWalk's
 * runs of context-tree nodes, each node's id computed as it first comes (TreeIds), written out per window.
 */
function contextIdWalk(a: Profiled, numbering: ContextNumbering, sink: (ids: Int32Array) => void): ThreadWalk & { done(): void } {
  const tree = new ContextTree();
  const idOf = new TreeIds(a, tree, numbering);
  let buf = new Int32Array(0);
  let ids = buf;
  let at = 0;
  let started = false;
  const walk = contextTreeWalk(tree, (count, node) => {
    ids.fill(node >= 0 ? idOf.of(node) : -1, at, at + count);
    at += count;
  });
  return {
    visitor: walk.visitor,
    window: (w: EventWindow) => {
      // (the tree walk hands on the rest of the previous window first)
      walk.window(w);
      if (started) sink(ids);
      started = true;
      if (buf.length < w.length) buf = new Int32Array(w.length);
      ids = buf.subarray(0, w.length);
      at = 0;
    },
    done: () => {
      walk.done();
      if (started) sink(ids);
    },
  };
}

const MAGIC = 'JPCTXIDS';
/** the .ctx version this writes: runs of equal ids, deflated in chunks (version 1: one Int32 per event) */
const CTX_VERSION = 2;
/** runs per deflated chunk */
const CHUNK_RUNS = 1 << 16;
/** events per run at most */
const RUN_LIMIT = 0x7fffffff;

/**
 * Writes one thread's per-event context ids as runs (count, id), deflated in chunks of CHUNK_RUNS runs: ids change
 * only at calls and returns, so a run is ~10 events and deflate takes the rest (luindex short's main thread: 438 MB
 * as one Int32 per event, 5 MB as runs).
 */
class ContextRunWriter {
  private readonly runs = new Int32Array(2 * CHUNK_RUNS);
  private n = 0;
  private id = 0;
  private count = 0;
  private readonly head: Buffer = Buffer.alloc(8);

  constructor(private readonly fd: number) {}

  /** `count` more events of id `id` (a run; runs of one id in a row merge) */
  addRun(count: number, id: number): void {
    if (count <= 0) return;
    let c = this.count;
    if (c > 0 && id !== this.id) {
      this.push(c, this.id);
      c = 0;
    }
    this.id = id;
    // (runs are at most 0x7fffffff events: a longer one is split as the per-event add splits it)
    c += count;
    while (c > RUN_LIMIT) {
      this.push(RUN_LIMIT, id);
      c -= RUN_LIMIT;
    }
    this.count = c;
  }

  /** the next ids of the thread, in event order */
  add(ids: Int32Array): void {
    let id = this.id;
    let count = this.count;
    for (let i = 0; i < ids.length; i++) {
      const v = ids[i];
      if (v === id && count > 0 && count < RUN_LIMIT) {
        count++;
        continue;
      }
      if (count > 0) this.push(count, id);
      id = v;
      count = 1;
    }
    this.id = id;
    this.count = count;
  }

  /** writes what is left */
  close(): void {
    if (this.count > 0) this.push(this.count, this.id);
    this.count = 0;
    this.flush();
  }

  private push(count: number, id: number): void {
    this.runs[2 * this.n] = count;
    this.runs[2 * this.n + 1] = id;
    if (++this.n === CHUNK_RUNS) this.flush();
  }

  private flush(): void {
    if (this.n === 0) return;
    // (little-endian, as the file format says: every machine Node runs jportal on)
    const body = zlib.deflateRawSync(Buffer.from(this.runs.buffer, 0, 8 * this.n), { level: 1 });
    this.head.writeUInt32LE(body.length, 0);
    this.head.writeUInt32LE(this.n, 4);
    fs.writeSync(this.fd, this.head);
    fs.writeSync(this.fd, body);
    this.n = 0;
  }
}

/** The runs of a file ContextRunWriter wrote from `offset` on, chunk by chunk: (counts, values) pairs interleaved. */
function* readRunChunks(fd: number, file: string, offset: number): Generator<Int32Array> {
  const head = Buffer.alloc(8);
  let at = offset;
  for (;;) {
    const got = fs.readSync(fd, head, 0, 8, at);
    if (got === 0) return;
    if (got !== 8) throw new Error(`${file}: offset ${at}: a chunk header cut short`);
    const bytes = head.readUInt32LE(0);
    const n = head.readUInt32LE(4);
    const body = Buffer.alloc(bytes);
    if (fs.readSync(fd, body, 0, bytes, at + 8) !== bytes) throw new Error(`${file}: offset ${at + 8}: a chunk of ${bytes} bytes cut short`);
    const raw = zlib.inflateRawSync(body);
    if (raw.length !== 8 * n) throw new Error(`${file}: offset ${at + 8}: a chunk of ${n} runs inflates to ${raw.length} bytes`);
    // (an aligned copy for the Int32Array view)
    const runs = new Int32Array(2 * n);
    new Uint8Array(runs.buffer).set(raw);
    yield runs;
    at += 8 + bytes;
  }
}

/**
 * The calling contexts the walks went through, as a tree: a node is (parent node, call site, method), -1 the
 * root. Each node stands for one stack of (method, call site) frames, so once the numbering is known each node has
 * one context id (TreeIds): a thread's events can be recorded as runs of nodes while the numbering is still
 * being observed, in the same read.
 */
class ContextTree {
  size = 0;
  parent = new Int32Array(1024);
  site = new Int32Array(1024);
  method = new Int32Array(1024);
  /** (call site, method) -> pair; (parent, pair) -> node */
  private readonly pairs = new PairMap();
  private readonly children = new PairMap();

  child(parent: number, site: number, method: number): number {
    let pair = this.pairs.get(site, method);
    if (pair < 0) this.pairs.set(site, method, (pair = this.pairs.size));
    let n = this.children.get(parent, pair);
    if (n >= 0) return n;
    n = this.size++;
    this.parent = withRoom(this.parent, n + 1);
    this.site = withRoom(this.site, n + 1);
    this.method = withRoom(this.method, n + 1);
    this.parent[n] = parent;
    this.site[n] = site;
    this.method[n] = method;
    this.children.set(parent, pair, n);
    return n;
  }
}

/**
 * The global context id of each node of `tree` (-1: none), computed frame by frame down from the root, as the
 * numbering defines it (docs/contexts.md): a node's id follows from its parent's and the edge (parent's method,
 * call site, method). Nodes are numbered as they first come (`of`), parents always before their children.
 */
class TreeIds {
  private ids = new Int32Array(1024);
  private nodeOf = new Int32Array(1024);
  private local = new Float64Array(1024);
  private size = 0;
  private readonly nodes: Int32Array;
  private readonly unknown: number;
  constructor(
    a: Profiled,
    private readonly tree: ContextTree,
    private readonly numbering: ContextNumbering,
  ) {
    this.nodes = numbering.nodesOf(a);
    this.unknown = numbering.node('?');
  }

  /** the id of node x */
  of(x: number): number {
    if (x >= this.size) this.extend();
    return this.ids[x];
  }

  /** ids for every node the tree has now */
  all(): Int32Array {
    this.extend();
    return this.ids.subarray(0, this.size);
  }

  private extend(): void {
    const { tree, numbering } = this;
    const n = tree.size;
    this.ids = withRoom(this.ids, n);
    this.nodeOf = withRoom(this.nodeOf, n);
    this.local = withRoom(this.local, n);
    const { ids, nodeOf, local } = this;
    for (let x = this.size; x < n; x++) {
      const m = tree.method[x];
      const v = m >= 0 ? this.nodes[m] : this.unknown;
      nodeOf[x] = v;
      local[x] = -1;
      const p = tree.parent[x];
      if (v >= 0) {
        if (p < 0) {
          const e = numbering.edge(ROOT, -1, v);
          if (e >= 0) local[x] = numbering.edges[e].addend;
        } else {
          const c = nodeOf[p];
          const e = c >= 0 ? numbering.edge(c, tree.site[x], v) : -1;
          if (e >= 0) {
            const edge = numbering.edges[e];
            if (edge.kind === EdgeKind.Call) local[x] = local[p] >= 0 ? local[p] + edge.addend : -1;
            else {
              // a push (back or overflow edge): the context restarts at the callee
              const r = numbering.edge(ROOT, -1, v);
              local[x] = r >= 0 ? numbering.edges[r].addend : -1;
            }
          }
        }
      }
      ids[x] = local[x] >= 0 ? numbering.base[v] + local[x] : -1;
    }
    this.size = n;
  }
}

/**
 * contextIdWalk's events-to-contexts rules, recording runs of context-tree nodes instead of ids (`run(count,
 * node)`, node -1: no context), a run at a time rather than an id per event. contextIdWalk writes ids into a
 * buffer, and an event marked twice (an implicit frame's entry and its first bytecode) keeps the second id: here
 * the newest run stays open so that its last event can be taken back and given again.
 */
function contextTreeWalk(tree: ContextTree, run: (count: number, node: number) => void): ThreadWalk & { window(w: EventWindow): void; done(): void } {
  let treeAt = new Int32Array(256);
  // per depth, the last (parent, call site, method) entered there and its node + 1 (0: none yet)
  let lastParent = new Int32Array(256);
  let lastSite = new Int32Array(256);
  let lastMethod = new Int32Array(256);
  let lastNode1 = new Int32Array(256);
  const sites = new CallSites();
  let length = 0;
  let next = 0;
  let depth = -1;
  let started = false;
  // the newest run, not yet handed on
  let openCount = 0;
  let openNode = -1;
  const emit = (count: number, node: number) => {
    if (node === openNode) openCount += count;
    else {
      if (openCount > 0) run(openCount, openNode);
      openNode = node;
      openCount = count;
    }
  };
  const cur = () => (depth >= 0 ? treeAt[depth] : -1);
  // (events past the window's end are dropped, as the per-event ids buffer drops them)
  const fillTo = (i: number) => {
    if (next >= i) return;
    const end = i < length ? i : length;
    if (end > next) emit(end - next, cur());
    next = i;
  };
  const mark = (i: number) => {
    if (i < next && i < length) {
      // marked again (callbacks come in event order, so only the newest event can be): it takes the new id
      const back = Math.min(next, length) - i;
      if (back > openCount) throw new Error(`context walk: event ${i} marked after ${next - 1}`);
      openCount -= back;
      next = i;
    }
    fillTo(i);
    if (i < length) emit(1, cur());
    next = i + 1;
  };
  const visitor = {
    enter(w: StackWalker, i: number) {
      fillTo(i);
      const d = w.depth;
      sites.enter(d);
      if (d >= treeAt.length) {
        treeAt = withRoom(treeAt, d + 1);
        lastNode1 = withRoom(lastNode1, d + 1);
        lastParent = withRoom(lastParent, d + 1);
        lastSite = withRoom(lastSite, d + 1);
        lastMethod = withRoom(lastMethod, d + 1);
      }
      depth = d;
      const parent = d === 0 ? -1 : treeAt[d - 1];
      const site = d === 0 ? -1 : sites.at(d - 1);
      const m = w.stack[d];
      // (a loop calls the same method from the same place again and again: the node it got the last time)
      if (lastNode1[d] > 0 && lastParent[d] === parent && lastSite[d] === site && lastMethod[d] === m) treeAt[d] = lastNode1[d] - 1;
      else {
        treeAt[d] = tree.child(parent, site, m);
        lastNode1[d] = treeAt[d] + 1;
        lastParent[d] = parent;
        lastSite[d] = site;
        lastMethod[d] = m;
      }
      mark(i);
    },
    exit(w: StackWalker, i: number, implicit: boolean) {
      if (implicit || i >= length) fillTo(i);
      else mark(i);
      depth = w.depth - 1;
    },
    bytecodes(w: StackWalker, _from: number, to: number) {
      sites.set(w.depth, w.t.bci[to - 1]);
      mark(to - 1);
    },
    gap(_w: StackWalker, i: number) {
      mark(i);
    },
    exception(_w: StackWalker, i: number) {
      mark(i);
    },
  };
  // (a window's events are all handed on at its end: a mark goes back only within its window)
  const flushWindow = () => {
    if (!started) return;
    fillTo(length);
    if (openCount > 0) run(openCount, openNode);
    openCount = 0;
  };
  return {
    visitor,
    window: (w: EventWindow) => {
      flushWindow();
      started = true;
      length = w.length;
      next = 0;
    },
    done: flushWindow,
  };
}

/** Writes contexts.json (the numbering) and contexts/<tid>.ctx (per-event ids) into `outDir`. */
export function writeContexts(a: Profiled, outDir: string, opts: { numbering?: ContextNumbering } = {}): PartResult {
  return runPass(a, contextsPass(a, outDir, opts.numbering));
}

/**
 * writeContexts as a pass that can share its walk with others (runPasses), in one read: the walk observes the call
 * graph (for the numbering) and records each thread's events as runs of context-tree nodes into a scratch file next
 * to its .ctx; at the end the numbering gives every node its id, and each scratch file is rewritten as ids.
 * `numbering`: given, instead of observed (the ids of another analysis's numbering).
 */
export function contextsPass(a: Profiled, outDir: string, numbering?: ContextNumbering): WalkPass<PartResult> {
  fs.mkdirSync(path.join(outDir, 'contexts'), { recursive: true });
  const observed = numbering ? undefined : observedEdges(a);
  const tree = new ContextTree();
  // every scratch file made (removed however the pass ends), the fd of the one being written, the threads done
  const scratches: string[] = [];
  let writing = -1;
  const pending: { k: number; name: string; scratch: string }[] = [];
  const used = new Set<string>();
  const removeScratch = () => {
    if (writing >= 0) fs.closeSync(writing);
    writing = -1;
    for (const f of scratches) fs.rmSync(f, { force: true });
  };
  const thread = (k: number): ThreadWalk => {
    const t = a.threads[k];
    let name = `contexts/${t.tid}.ctx`;
    if (used.has(name)) name = `contexts/${t.tid}-${k}.ctx`;
    used.add(name);
    const scratch = path.join(outDir, `${name}.nodes`);
    scratches.push(scratch);
    const fd = (writing = fs.openSync(scratch, 'w'));
    const runs = new ContextRunWriter(fd);
    const walk = contextTreeWalk(tree, (count, node) => runs.addRun(count, node));
    const edges = observed?.thread(k);
    const visitor = edges ? fanOut([edges.visitor, walk.visitor]) : walk.visitor;
    return {
      visitor,
      window: walk.window,
      done: () => {
        walk.done();
        runs.close();
        writing = -1;
        fs.closeSync(fd);
        pending.push({ k, name, scratch });
      },
    };
  };
  const finish = (): PartResult => {
    try {
      const num = numbering ?? numberEdges(observed!.finish());
      const idOf = new TreeIds(a, tree, num).all();
      const files = ['contexts.json'];
      const threads: { tid: number; name: string; file: string; events: number; withContext: number; distinct: number }[] = [];
      for (const { k, name, scratch } of pending) {
        const t = a.threads[k];
        let withContext = 0;
        const distinct = new Set<number>();
        const in_ = fs.openSync(scratch, 'r');
        try {
          const fd = fs.openSync(path.join(outDir, name), 'w');
          try {
            fs.writeSync(fd, ctxHead(t.tid, t.name, t.length));
            const out = new ContextRunWriter(fd);
            for (const runs of readRunChunks(in_, scratch, 0))
              for (let r = 0; r < runs.length; r += 2) {
                const node = runs[r + 1];
                const id = node >= 0 ? idOf[node] : -1;
                if (id >= 0) {
                  withContext += runs[r];
                  distinct.add(id);
                }
                out.addRun(runs[r], id);
              }
            out.close();
          } finally {
            fs.closeSync(fd);
          }
        } finally {
          fs.closeSync(in_);
          fs.rmSync(scratch, { force: true });
        }
        files.push(name);
        threads.push({ tid: t.tid, name: t.name, file: name, events: t.length, withContext, distinct: distinct.size });
      }
      return writeNumbering(outDir, num, files, threads);
    } finally {
      removeScratch();
    }
  };
  return { thread, finish, abort: removeScratch };
}

/** The start of a .ctx file: magic, version, the JSON header's length, the header, padding to 4 bytes. */
function ctxHead(tid: number, name: string, count: number): Buffer {
  const header = Buffer.from(JSON.stringify({ format: 'jportal-context-ids', version: CTX_VERSION, encoding: 'runs-deflate', tid, name, count }));
  const pre = 16 + header.length;
  const pad = (4 - (pre % 4)) % 4;
  const head = Buffer.alloc(pre + pad);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(CTX_VERSION, 8);
  head.writeUInt32LE(header.length, 12);
  header.copy(head, 16);
  return head;
}

function writeNumbering(outDir: string, numbering: ContextNumbering, files: string[], threads: { tid: number; name: string; file: string; events: number; withContext: number; distinct: number }[]): PartResult {
  const json = {
    format: 'jportal-contexts',
    version: 1,
    total: numbering.total,
    nodes: numbering.keys.map((key, i) => ({ method: key, numCC: numbering.numCC[i], base: numbering.base[i] })),
    edges: numbering.edges.map((e) => ({ caller: e.caller, callSite: e.callSite, callee: e.callee, kind: EDGE_KIND_NAMES[e.kind], addend: e.addend })),
    threads,
  };
  fs.writeFileSync(path.join(outDir, 'contexts.json'), JSON.stringify(json));
  const count = (k: EdgeKind) => numbering.edges.filter((e) => e.kind === k).length;
  return {
    files,
    summary: {
      methods: numbering.keys.length,
      edges: numbering.edges.length,
      backEdges: count(EdgeKind.Back),
      overflowEdges: count(EdgeKind.Overflow),
      contexts: numbering.total,
      threads: threads.map(({ tid, withContext, events, distinct }) => ({ tid, events, withContext, distinct })),
    },
  };
}

export interface ContextIdHeader {
  tid: number;
  name: string;
  /** events of the thread */
  count: number;
}

/**
 * Reads a contexts/<tid>.ctx file as runs: `counts[r]` consecutive events carry `ids[r]`, in event order (a
 * version-1 file, one id per event, is read as runs of one). Throws with the file and offset on a damaged file.
 */
export function readContextRuns(file: string): { header: ContextIdHeader; counts: Int32Array; ids: Int32Array } {
  const buf = fs.readFileSync(file);
  const bad = (offset: number, what: string) => new Error(`${file}: offset ${offset}: ${what}`);
  if (buf.length < 16 || buf.toString('latin1', 0, 8) !== MAGIC) throw bad(0, 'not a context-id file (no JPCTXIDS magic)');
  const version = buf.readUInt32LE(8);
  if (version !== 1 && version !== 2) throw bad(8, `context-id file version ${version}, this reads 1 and 2`);
  const h = buf.readUInt32LE(12);
  if (16 + h > buf.length) throw bad(12, `header of ${h} bytes past the end (${buf.length})`);
  const header = JSON.parse(buf.toString('utf8', 16, 16 + h)) as ContextIdHeader;
  const pre = 16 + h;
  let at = pre + ((4 - (pre % 4)) % 4);
  if (version === 1) {
    if (at + 4 * header.count > buf.length) throw bad(at, `${header.count} ids need ${4 * header.count} bytes, ${buf.length - at} left`);
    const ids = new Int32Array(header.count);
    for (let i = 0; i < ids.length; i++) ids[i] = buf.readInt32LE(at + 4 * i);
    return { header, counts: new Int32Array(header.count).fill(1), ids };
  }
  const chunks: Buffer[] = [];
  let runs = 0;
  let events = 0;
  while (events < header.count) {
    if (at + 8 > buf.length) throw bad(at, `truncated: ${events} of ${header.count} events read`);
    const bytes = buf.readUInt32LE(at);
    const n = buf.readUInt32LE(at + 4);
    if (at + 8 + bytes > buf.length) throw bad(at, `chunk of ${bytes} bytes past the end (${buf.length})`);
    let body: Buffer;
    try {
      body = zlib.inflateRawSync(buf.subarray(at + 8, at + 8 + bytes));
    } catch (e) {
      throw bad(at + 8, `chunk does not inflate: ${(e as Error).message}`);
    }
    if (body.length !== 8 * n) throw bad(at + 8, `chunk of ${n} runs inflates to ${body.length} bytes, not ${8 * n}`);
    for (let r = 0; r < n; r++) events += body.readInt32LE(8 * r);
    chunks.push(body);
    runs += n;
    at += 8 + bytes;
  }
  if (events !== header.count) throw bad(at, `runs hold ${events} events, the header says ${header.count}`);
  const counts = new Int32Array(runs);
  const ids = new Int32Array(runs);
  let r = 0;
  for (const body of chunks)
    for (let k = 0; k < body.length; k += 8, r++) {
      counts[r] = body.readInt32LE(k);
      ids[r] = body.readInt32LE(k + 4);
    }
  return { header, counts, ids };
}

/** Reads a contexts/<tid>.ctx file: its header and one id per event (readContextRuns, expanded). */
export function readContextIds(file: string): { header: ContextIdHeader; ids: Int32Array } {
  const { header, counts, ids: runIds } = readContextRuns(file);
  const ids = new Int32Array(header.count);
  let at = 0;
  for (let r = 0; r < counts.length; r++) {
    ids.fill(runIds[r], at, at + counts[r]);
    at += counts[r];
  }
  return { header, ids };
}
