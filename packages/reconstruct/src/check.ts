/**
 * Checking a thread's decoded events against the methods' control-flow graphs, and repairing what is missing.
 *
 * Frames are tracked with the stack-walk rules of packages/analyze/src/walk.ts, reduced to what a check needs:
 * - `entry` pushes a frame of its method (-1 when unattributed); `exit` pops to its method's frame (the frames
 *   above go too) and is ignored when the method is not on the stack (-1: pops the top frame).
 * - A `bytecode` (or `osr-entry`) of a method not on top pops to that method's frame when it is on the stack,
 *   else pushes an implicit frame (its entry was not seen). A bytecode of unknown method or bci (-1) ends what
 *   the top frame knows (its next bytecode is not checked).
 * - `gap` is a segment boundary: every open frame's next bytecode is compared but a mismatch is counted as
 *   `acrossGap`, never a contradiction. `deopt` and `osr-entry` also end what the frames know (the frame is
 *   rebuilt at a bci the event stream does not tie to the one before). `exception` keeps the frames: the next
 *   bytecode of a frame must then be reachable over an exception edge, which the CFG has.
 * Within a frame, each bytecode (m, b) must be a CFG successor (normal or exception edge) of the frame's
 * previous bytecode (m, a). A pair that is not is classified:
 * - `path`: no edge, but a path from a to b exists in m (bytecodes missing between them);
 * - `noPath`: b cannot be reached from a at all (out of order, or a stale code image);
 * - `unknownMethod`: no CFG for m (no class bytes, native or abstract, malformed code);
 * - `unknownBci`: a or b is not the start of an instruction of m (a stale or wrong code image).
 * Repair: for a `path` pair of an interpreted frame, when the shortest path over normal edges has at most
 * `maxInsert` bytecodes between a and b, the bytecodes of it that every path from a to b passes through are
 * inserted before b (source RECONSTRUCTED, opcode from the class file, tsc of b, aux = 1 when that is the whole
 * path and it is the only one, else the number of shortest paths, at least 2: counted as ambiguous). Compiled
 * frames are checked and reported but not repaired unless `repairCompiled` (their pairs are mostly C2's code
 * order, which the decoder's completion already handled). Nothing is dropped: the output has every input event,
 * in order.
 */
import { EventStream, grown } from '@jportal/decode';
import { EdgeKind, type MethodCfg } from '@jportal/icfg';

// EventKind values of @jportal/decode (a const enum: not readable across isolated modules)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const DEOPT = 4;
const OSR_ENTRY = 6;

/** EventSource of a bytecode this pass inserted (inferred from the ICFG; docs/decoded-format.md). */
export const RECONSTRUCTED_SOURCE = 5;

/** The classes of a pair of consecutive bytecodes of a frame that is not a CFG edge. */
export const Contradiction = {
  /** no edge, but a path exists: bytecodes are missing */
  Path: 0,
  /** no path from the first to the second */
  NoPath: 1,
  /** the method has no CFG */
  UnknownMethod: 2,
  /** a bci is not an instruction of the method */
  UnknownBci: 3,
  /** the pair spans a gap: a segment boundary, not a contradiction */
  AcrossGap: 4,
} as const;
export type ContradictionClass = (typeof Contradiction)[keyof typeof Contradiction];
export const CONTRADICTION_NAMES = ['path', 'noPath', 'unknownMethod', 'unknownBci', 'acrossGap'] as const;
export type ContradictionName = (typeof CONTRADICTION_NAMES)[number];

/** What happened to a `path` contradiction. */
export const Repair = {
  /** the unique shortest path was inserted */
  Unique: 0,
  /** one of several shortest paths was inserted (marked ambiguous: aux = their number) */
  Ambiguous: 1,
  /** the shortest path has more than maxInsert bytecodes between the two: left as it is */
  TooLong: 2,
  /** only paths through exception edges exist (an exception the events do not show): left as it is */
  ExceptionOnly: 3,
  /** not a path contradiction: nothing to repair */
  None: 4,
} as const;
export type RepairKind = (typeof Repair)[keyof typeof Repair];

export interface ContradictionExample {
  cls: ContradictionName;
  method: number;
  fromBci: number;
  toBci: number;
  /** index of the later event in the input */
  event: number;
  /** for `path`: bytecodes on a shortest path strictly between the two (-1: none found); repair outcome */
  missing: number;
  repair: 'unique' | 'ambiguous' | 'tooLong' | 'exceptionOnly' | 'none';
}

export interface ReconstructReport {
  events: number;
  /** segments: stretches between gaps (gaps + 1 for a non-empty stream) */
  segments: number;
  gaps: number;
  /** bytecode events that had a previous bytecode in their frame (the pairs checked) */
  pairs: number;
  /** pairs that are CFG edges */
  consistent: number;
  /** counts per class (acrossGap is not a contradiction) */
  byClass: Record<ContradictionName, number>;
  /** path + noPath + unknownMethod + unknownBci */
  contradictions: number;
  /** contradictions whose later event came from the interpreter (source 0) and from compiled code (1, 2) */
  bySource: { interpreted: number; compiled: number; other: number };
  /** per method id: counts per class */
  byMethod: Map<number, Record<ContradictionName, number>>;
  /** bytecode events whose opcode differs from the class file's at their bci (a stale code image) */
  opcodeMismatches: number;
  /** bytecode events with unknown method or bci */
  unattributed: number;
  repair: {
    /** path contradictions repaired with the unique shortest path */
    unique: number;
    /** repaired with one of several shortest paths */
    ambiguous: number;
    tooLong: number;
    exceptionOnly: number;
    /** path contradictions in compiled frames left as they are (repairCompiled off) */
    compiledLeft: number;
    /** bytecodes inserted */
    inserted: number;
    /** largest number of shortest paths among the ambiguous repairs (saturates at 2^31) */
    maxPaths: number;
  };
  /** up to `examples` examples per class, first seen first */
  examples: ContradictionExample[];
}

export interface CheckOptions {
  /** longest run of bytecodes inserted between two events (default 16) */
  maxInsert?: number;
  /** examples kept per class (default 10) */
  examples?: number;
  /** insert only the bytecodes every path between the two passes through (default true); false: the whole
   * first-found shortest path */
  mustPass?: boolean;
  /** also insert into compiled frames (source 1, 2; default false: they are checked and reported only) */
  repairCompiled?: boolean;
  /** insert missing bytecodes (default true); false: check and report only */
  repair?: boolean;
  /**
   * widen the given stream itself instead of building a new one (default false): each column is replaced in turn,
   * so at most one column's worth of memory is added at a time, and nothing when nothing is inserted. The
   * stream returned is then the one given.
   */
  inPlace?: boolean;
}

/** The bytecodes a repair inserts: per group (inserted before event `at`) the method, path count and bcis. */
class Insertions {
  groups = 0;
  at = new Float64Array(64);
  method = new Int32Array(64);
  paths = new Int32Array(64);
  /** index of the group's first bci in `bci` (one past the last: the next group's) */
  first = new Int32Array(65);
  total = 0;
  bci = new Int32Array(256);
  opcode = new Int16Array(256);

  add(at: number, method: number, paths: number, bcis: Int32Array, code: Uint8Array): void {
    if (this.groups + 1 >= this.at.length) {
      const n = this.at.length * 2;
      this.at = grown(this.at, n);
      this.method = grown(this.method, n);
      this.paths = grown(this.paths, n);
      this.first = grown(this.first, n + 1);
    }
    if (this.total + bcis.length > this.bci.length) {
      const n = Math.max(this.bci.length * 2, this.total + bcis.length);
      this.bci = grown(this.bci, n);
      this.opcode = grown(this.opcode, n);
    }
    const g = this.groups++;
    this.at[g] = at;
    this.method[g] = method;
    this.paths[g] = paths;
    this.first[g] = this.total;
    for (let q = 0; q < bcis.length; q++) {
      this.bci[this.total] = bcis[q];
      this.opcode[this.total++] = code[bcis[q]];
    }
    this.first[this.groups] = this.total;
  }
}


/** The result of one (method, a, b) query, cached. */
interface PairResult {
  cls: ContradictionClass | -1;
  repair: RepairKind;
  /** bytecodes strictly between, for Unique and Ambiguous */
  bcis: Int32Array | null;
  /** bytecodes on a shortest normal path strictly between the two, -1 when none */
  missing: number;
  paths: number;
}

const OK: PairResult = { cls: -1, repair: Repair.None, bcis: null, missing: 0, paths: 1 };

/** Breadth-first search from a's successors, counting shortest paths; arrays allocated once per CFG. */
class PathSearch {
  private readonly dist: Int32Array;
  private readonly count: Float64Array;
  private readonly parent: Int32Array;
  private readonly via: Int32Array;
  private readonly stamp: Int32Array;
  private readonly queue: Int32Array;
  private gen = 0;

  constructor(readonly cfg: MethodCfg) {
    const n = cfg.graph.nodeCount;
    this.dist = new Int32Array(n);
    this.count = new Float64Array(n);
    this.parent = new Int32Array(n);
    this.via = new Int32Array(n);
    this.stamp = new Int32Array(n);
    this.queue = new Int32Array(n);
  }

  /**
   * Shortest paths from instruction `a` to instruction `b` (a path of at least one edge, so a = b asks for a
   * cycle), not passing through `avoid`. Returns the number of edges (-1: unreachable within `bound` edges); then
   * `paths(b)` and `between(b)`.
   */
  run(a: number, b: number, exceptions: boolean, bound: number, avoid = -1): number {
    const { start, target, kind } = this.cfg.graph;
    const { dist, count, parent, via, stamp, queue } = this;
    const gen = ++this.gen;
    let head = 0;
    let tail = 0;
    // a itself is not marked: reaching it again is a cycle back to it
    const expand = (u: number, du: number, cu: number) => {
      for (let e = start[u], end = start[u + 1]; e < end; e++) {
        if (!exceptions && kind[e] === EdgeKind.Exception) continue;
        const v = target[e];
        if (v === avoid) continue;
        if (stamp[v] !== gen) {
          stamp[v] = gen;
          dist[v] = du + 1;
          count[v] = cu;
          parent[v] = u;
          via[v] = u;
          queue[tail++] = v;
        } else if (dist[v] === du + 1 && via[v] !== u) {
          // several edges u -> v (switch arms to one target) are one path
          count[v] = Math.min(2147483648, count[v] + cu);
          via[v] = u;
        }
      }
    };
    expand(a, 0, 1);
    while (head < tail) {
      const u = queue[head++];
      const du = dist[u];
      if (stamp[b] === gen && du >= dist[b]) break;
      if (du >= bound) break;
      if (u === a) continue; // a cycle back to a: paths through a again are not shortest to anything new
      expand(u, du, count[u]);
    }
    return stamp[b] === gen ? dist[b] : -1;
  }

  paths(b: number): number {
    return this.count[b];
  }

  /** instruction indices strictly between a and b on the first-found shortest path */
  between(b: number): Int32Array {
    const d = this.dist[b];
    const out = new Int32Array(d - 1);
    let x = this.parent[b];
    for (let k = d - 2; k >= 0; k--) {
      out[k] = x;
      x = this.parent[x];
    }
    return out;
  }
}

const emptyCounts = (): Record<ContradictionName, number> => ({ path: 0, noPath: 0, unknownMethod: 0, unknownBci: 0, acrossGap: 0 });

/**
 * Checks one thread's events against the CFGs `cfgOf` gives (undefined: unknown method) and, unless
 * `repair: false`, inserts the bytecodes missing on short shortest paths. The input is not changed.
 */
export function checkAndRepair(
  events: EventStream,
  cfgOf: (method: number) => MethodCfg | undefined,
  opts: CheckOptions = {},
): { events: EventStream; report: ReconstructReport } {
  const maxInsert = opts.maxInsert ?? 16;
  const mustPass = opts.mustPass ?? true;
  const repairCompiled = opts.repairCompiled ?? false;
  const maxExamples = opts.examples ?? 10;
  const doRepair = opts.repair ?? true;
  const report: ReconstructReport = {
    events: events.length,
    segments: events.length > 0 ? 1 : 0,
    gaps: 0,
    pairs: 0,
    consistent: 0,
    byClass: emptyCounts(),
    contradictions: 0,
    bySource: { interpreted: 0, compiled: 0, other: 0 },
    byMethod: new Map(),
    opcodeMismatches: 0,
    unattributed: 0,
    repair: { unique: 0, ambiguous: 0, tooLong: 0, exceptionOnly: 0, compiledLeft: 0, inserted: 0, maxPaths: 0 },
    examples: [],
  };
  const examplesOf = new Int32Array(CONTRADICTION_NAMES.length);
  // what repairs insert (a few per thousand events measured on real applications), merged in after the pass
  const ins = new Insertions();

  const cfgs = new Map<number, MethodCfg | null>();
  const searches = new Map<number, PathSearch>();
  // (consecutive bytecodes are mostly of one method: the last answer saves most lookups)
  let lastCfgMethod = -1;
  let lastCfg: MethodCfg | null = null;
  const cfg = (m: number): MethodCfg | null => {
    if (m === lastCfgMethod) return lastCfg;
    let c = cfgs.get(m);
    if (c === undefined) {
      c = cfgOf(m) ?? null;
      cfgs.set(m, c);
    }
    lastCfgMethod = m;
    lastCfg = c;
    return c;
  };
  // (method, a, b) -> result; bcis are < 65536
  const cache = new Map<number, PairResult>();

  const classify = (m: number, a: number, b: number): PairResult => {
    const c = cfg(m);
    if (!c) return { ...OK, cls: Contradiction.UnknownMethod };
    const ia = c.insnAt(a);
    const ib = c.insnAt(b);
    if (ia < 0 || ib < 0) return { ...OK, cls: Contradiction.UnknownBci };
    const g = c.graph;
    for (let e = g.start[ia], end = g.start[ia + 1]; e < end; e++) if (g.target[e] === ib) return OK;
    const key = m * 4294967296 + a * 65536 + b;
    const hit = cache.get(key);
    if (hit) return hit;
    let s = searches.get(m);
    if (!s) searches.set(m, (s = new PathSearch(c)));
    let r: PairResult;
    const d = s.run(ia, ib, false, 0x7fffffff);
    if (d > 0) {
      const paths = s.paths(ib);
      if (d - 1 > maxInsert) r = { cls: Contradiction.Path, repair: Repair.TooLong, bcis: null, missing: d - 1, paths };
      else {
        const insns = s.between(ib);
        // an instruction of the shortest path is certain when every path from a to b passes through it
        let kept = 0;
        for (let k = 0; k < insns.length; k++) if (!mustPass || s.run(ia, ib, false, 0x7fffffff, insns[k]) < 0) insns[kept++] = insns[k];
        const bcis = kept > 0 ? new Int32Array(kept) : null;
        for (let k = 0; k < kept; k++) bcis![k] = c.insns.bci[insns[k]];
        const unique = kept === insns.length && paths === 1;
        r = { cls: Contradiction.Path, repair: unique ? Repair.Unique : Repair.Ambiguous, bcis, missing: d - 1, paths: unique ? 1 : Math.max(2, paths) };
      }
    } else if (s.run(ia, ib, true, 0x7fffffff) > 0) r = { cls: Contradiction.Path, repair: Repair.ExceptionOnly, bcis: null, missing: -1, paths: 0 };
    else r = { cls: Contradiction.NoPath, repair: Repair.None, bcis: null, missing: -1, paths: 0 };
    cache.set(key, r);
    return r;
  };

  const REPAIR_NAMES = ['unique', 'ambiguous', 'tooLong', 'exceptionOnly', 'none'] as const;
  const count = (r: PairResult, m: number, a: number, b: number, i: number, source: number) => {
    const cls = r.cls as ContradictionClass;
    const name = CONTRADICTION_NAMES[cls];
    report.byClass[name]++;
    let pm = report.byMethod.get(m);
    if (!pm) report.byMethod.set(m, (pm = emptyCounts()));
    pm[name]++;
    if (cls !== Contradiction.AcrossGap) {
      report.contradictions++;
      if (source === 0) report.bySource.interpreted++;
      else if (source === 1 || source === 2) report.bySource.compiled++;
      else report.bySource.other++;
    }
    if (examplesOf[cls] < maxExamples) {
      examplesOf[cls]++;
      report.examples.push({ cls: name, method: m, fromBci: a, toBci: b, event: i, missing: r.missing, repair: REPAIR_NAMES[r.repair] });
    }
  };

  // frames: method, bci of the last bytecode (-1: none known), a gap since then
  let cap = 256;
  let fMethod = new Int32Array(cap);
  let fLast = new Int32Array(cap);
  let fGap = new Uint8Array(cap);
  let depth = -1;
  const push = (m: number) => {
    if (++depth === cap) {
      cap *= 2;
      const nm = new Int32Array(cap);
      nm.set(fMethod);
      fMethod = nm;
      const nl = new Int32Array(cap);
      nl.set(fLast);
      fLast = nl;
      const ng = new Uint8Array(cap);
      ng.set(fGap);
      fGap = ng;
    }
    fMethod[depth] = m;
    fLast[depth] = -1;
    fGap[depth] = 0;
  };
  const find = (m: number): number => {
    for (let d = depth; d >= 0; d--) if (fMethod[d] === m) return d;
    return -1;
  };
  const ensureTop = (m: number) => {
    if (m < 0 || (depth >= 0 && fMethod[depth] === m)) return;
    const d = find(m);
    if (d >= 0) depth = d;
    else push(m);
  };

  const { kind: K, source: S, method: M, bci: B, opcode: O } = events;
  for (let i = 0; i < events.length; i++) {
    const k = K[i];
    const m = M[i];
    if (k === BYTECODE) {
      const b = B[i];
      ensureTop(m);
      if (m < 0 || b < 0) {
        report.unattributed++;
        if (depth >= 0) fLast[depth] = -1;
      } else {
        const c = cfg(m);
        if (c && O[i] >= 0) {
          const ib = c.insnAt(b);
          if (ib >= 0 && c.insns.opcode[ib] !== O[i]) report.opcodeMismatches++;
        }
        const a = fLast[depth];
        if (a >= 0) {
          report.pairs++;
          const r = classify(m, a, b);
          if (r.cls < 0) report.consistent++;
          else if (fGap[depth]) count({ ...r, cls: Contradiction.AcrossGap, repair: Repair.None }, m, a, b, i, S[i]);
          else {
            count(r, m, a, b, i, S[i]);
            // in compiled frames the decoder has already filled what the control flow proves (its completion);
            // a pair it left is C2's code order (hoisted, unrolled, reordered), not missing bytecodes: inserting
            // the path there was measured wrong for ~90% of the bytecodes (switches, no loss)
            if (r.cls === Contradiction.Path && r.bcis && !(repairCompiled || S[i] === 0 || S[i] > 2)) report.repair.compiledLeft++;
            else if (r.cls === Contradiction.Path) {
              if (r.repair === Repair.Unique) report.repair.unique++;
              else if (r.repair === Repair.Ambiguous) report.repair.ambiguous++;
              else if (r.repair === Repair.TooLong) report.repair.tooLong++;
              else if (r.repair === Repair.ExceptionOnly) report.repair.exceptionOnly++;
              if (doRepair && r.bcis) {
                ins.add(i, m, r.paths, r.bcis, c!.code);
                report.repair.inserted += r.bcis.length;
                if (r.paths > 1 && r.paths > report.repair.maxPaths) report.repair.maxPaths = r.paths;
              }
            }
          }
        }
        fLast[depth] = b;
        fGap[depth] = 0;
      }
    } else if (k === ENTRY) push(m);
    else if (k === EXIT) {
      const d = m < 0 ? depth : find(m);
      if (d >= 0) depth = d - 1;
    } else if (k === GAP) {
      report.gaps++;
      report.segments++;
      for (let d = 0; d <= depth; d++) fGap[d] = 1;
    } else if (k === OSR_ENTRY) {
      ensureTop(m);
      if (depth >= 0) fLast[depth] = -1;
    } else if (k === DEOPT) for (let d = 0; d <= depth; d++) fLast[d] = -1;
  }
  return { events: withInsertions(events, ins, opts.inPlace ?? false), report };
}

/** `events` with the inserted bytecodes merged in (the inserted events take the time of the event they precede). */
function withInsertions(events: EventStream, ins: Insertions, inPlace: boolean): EventStream {
  const out = inPlace ? events : events.clone();
  out.splice(ins.at, ins.first, ins.groups, {
    kind: () => BYTECODE,
    source: () => RECONSTRUCTED_SOURCE,
    method: (g) => ins.method[g],
    bci: (_g, q) => ins.bci[q],
    opcode: (_g, q) => ins.opcode[q],
    tsc: (g, _q, old) => old[ins.at[g]],
    aux: (g) => ins.paths[g],
  });
  return out;
}

/** Bytecodes strictly between two bytecodes of a method on a shortest path over normal edges. */
export interface PathBetween {
  bcis: Int32Array;
  opcodes: Uint8Array;
  /** how many shortest paths there are (1: unique; saturates at 2^31) */
  paths: number;
}

/**
 * A function giving, for (method, from bci, to bci), the bytecodes strictly between the two on a shortest path
 * over normal edges of the method's CFG (from = to asks for a round of a loop through it), or undefined when
 * there is no CFG, a bci is no instruction start, or no such path exists within `bound` edges. Searches and
 * their results are cached per method and pair. What @jportal/recover falls back to for a gap no context fills.
 */
export function shortestPathBetween(cfgOf: (method: number) => MethodCfg | undefined, bound = 4096): (method: number, from: number, to: number) => PathBetween | undefined {
  const searches = new Map<number, PathSearch | null>();
  const cache = new Map<number, PathBetween | null>();
  return (method, from, to) => {
    const k = (method * 65536 + from) * 65536 + to;
    const hit = cache.get(k);
    if (hit !== undefined) return hit ?? undefined;
    let s = searches.get(method);
    if (s === undefined) {
      const c = cfgOf(method);
      s = c ? new PathSearch(c) : null;
      searches.set(method, s);
    }
    let r: PathBetween | null = null;
    const ia = s ? s.cfg.insnAt(from) : -1;
    const ib = s ? s.cfg.insnAt(to) : -1;
    if (s && ia >= 0 && ib >= 0 && s.run(ia, ib, false, bound) > 0) {
      const between = s.between(ib);
      const bcis = new Int32Array(between.length);
      const opcodes = new Uint8Array(between.length);
      for (let q = 0; q < between.length; q++) {
        bcis[q] = s.cfg.insns.bci[between[q]];
        opcodes[q] = s.cfg.insns.opcode[between[q]];
      }
      r = { bcis, opcodes, paths: s.paths(ib) };
    }
    cache.set(k, r);
    return r ?? undefined;
  };
}
