/**
 * Orphan frames: interpreted bytecodes the decoder could not attribute (method = -1, bci = -1), projected onto the
 * ICFG. After a `gap` the decoder no longer knows the call stack: when a callee entered after the gap returns, its
 * caller's frame goes on with opcodes (the interpreter's codelets tell them) but no method or bci. This pass finds
 * which method and bcis those opcodes are, as the JPortal paper's NFA matching does, from the evidence the events
 * around the frame give.
 *
 * Frames follow the rules of check.ts (an `entry` pushes, an `exit` pops to its method's frame or, -1, pops the
 * top; a bytecode of a method not on top pops to its frame or pushes an implicit one; an unattributed bytecode
 * belongs to the top frame), with one refinement: an unattributed *interpreted* bytecode cannot run in a compiled
 * frame, so compiled frames on top are popped first (their `exit` was not seen) and count as returns into the frame
 * below. An orphan frame is the stretch of one frame's own unattributed bytecodes, with the calls it makes and the
 * returns into it, from its first unattributed bytecode until it is popped, a `gap`, `deopt` or `osr-entry` ends
 * what is known, or the frame shows an attributed bytecode again.
 *
 * Constraints on a frame, in order:
 * 1. its own bytecodes' opcodes (and, for an interpreted `if*`, the outcome in `aux`);
 * 2. before an `entry` of callee X from the frame, its last bytecode is an invoke that can reach X (class-hierarchy
 *    targets; invokedynamic and signature-polymorphic sites reach anything); `<clinit>` and `loadClass` are
 *    upcalls the VM makes, which instructions that resolve or initialize classes (new, getstatic, ldc, ...) allow;
 * 3. after the `exit` of a callee Y back into the frame, the next own bytecode follows an invoke that can reach Y;
 * 4. consecutive own bytecodes are CFG successors (normal or exception edges; after an `exception` event only
 *    exception edges); between a call and the return the state stays at the invoke.
 * Of several calls and returns between two own bytecodes only the last is the invoke's own (the others are upcalls,
 * or returns a stack left stale by a gap put there). A callee is evidence as far as its identity is reliable: a
 * compiled callee is its method; an interpreted one is any method that can run the opcodes the callee ran (the
 * decoder found a lost frame's callees by searching on opcodes, and of several methods of the same shape took the
 * first); a callee that was itself an orphan frame is what this pass made of it (frames are solved in the order
 * they end); a frame popped by an `exit` of unknown method while nothing of it was seen since a gap is unknown.
 *
 * Candidates: the methods with an invoke that can reach one of the first callees seen (the callee with the fewest
 * such methods first, up to 3 callees tried; invokes are indexed lazily by the name and descriptor they name and confirmed with
 * @jportal/icfg's targets); a frame entered by an `entry` of a known method has that method first; a frame whose
 * method and last bci were known (no gap since) starts there first. Each frame is simulated as an NFA over
 * (candidate method, instruction) states, forward over its own bytecodes (a set of live states per bytecode, no
 * backtracking), then backward to keep only the states on a path that survives to the end. A frame is attributed
 * when every bytecode has exactly one state on a surviving path (one (method, bci sequence) survives); otherwise
 * its events are left as they are and it counts as ambiguous. Work is bounded per frame (live states per bytecode,
 * state expansions in all); a frame over the bound is given up. Only bytecode events with unknown method or bci are
 * written (method and bci); nothing else changes.
 */
import { instructionLength, successors } from '@jportal/classfile';
import { EventStream, type JvmModel } from '@jportal/decode';
import { EdgeKind, Icfg, InsnKind, hierarchyOf, loadKeyedClasses, methodKey, type ClassHierarchy, type MethodCfg, type MethodNode } from '@jportal/icfg';

// EventKind and EventSource values of @jportal/decode (const enums: not readable across isolated modules)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const DEOPT = 4;
const EXCEPTION = 5;
const OSR_ENTRY = 6;
const INTERPRETER = 0;

/**
 * Instructions that may make the VM call Java code before they complete: class loading, initialization, linkage;
 * and the constructor of the exception an instruction raises itself (array bounds and stores, division by zero,
 * null dereferences, casts, negative array sizes, monitors).
 */
const UPCALL_OPS = new Uint8Array(256);
for (const op of [0x12, 0x13, 0x14, 0xb2, 0xb3, 0xb4, 0xb5, 0xbb, 0xbd, 0xc0, 0xc1, 0xc5]) UPCALL_OPS[op] = 1;
for (let op = 0x2e; op <= 0x35; op++) UPCALL_OPS[op] = 1; // xaload
for (let op = 0x4f; op <= 0x56; op++) UPCALL_OPS[op] = 1; // xastore
for (const op of [0x6c, 0x6d, 0x70, 0x71, 0xbc, 0xbe, 0xbf, 0xc2, 0xc3]) UPCALL_OPS[op] = 1; // idiv ldiv irem lrem newarray arraylength athrow monitorenter/exit
/** Throwable and the classes right under it (an exception class's chain of superclasses ends in one of them) */
const THROWABLE_ROOTS = new Set(['java/lang/Throwable', 'java/lang/Exception', 'java/lang/RuntimeException', 'java/lang/Error']);
const isIf = (op: number) => (op >= 0x99 && op <= 0xa6) || op === 0xc6 || op === 0xc7;
/** own bytecodes of an interpreted callee kept as its path (what its identity is checked against) */
const PATH_MAX = 16;
/** callee classes with more members than this are not used to find candidates (too weak) */
const MAX_CLASS_FOR_CANDIDATES = 256;
/** distinct callees considered for candidates, and candidate sets tried */
const CALLEES_CONSIDERED = 16;
const TRIES = 3;

export interface OrphanOptions {
  /** write into the input stream (default false: a copy is returned) */
  inPlace?: boolean;
  /** live states at one bytecode above which a frame is given up (default 20000) */
  maxStates?: number;
  /** state expansions per frame (forward and backward, all tries) above which it is given up (default 4e6) */
  maxWork?: number;
  /**
   * also attribute, in frames left ambiguous, the bytecodes whose state is the same on every surviving path
   * (default false: a frame is attributed whole or not at all)
   */
  partial?: boolean;
  /** list every orphan frame in the report (default false) */
  details?: boolean;
}

type Outcome = 'unique' | 'ambiguous' | 'noCandidate' | 'noSurvivor' | 'gaveUp';

/** One orphan frame, as `details` lists it. */
export interface OrphanFrameDetail {
  /** event index of its first and last own bytecode */
  first: number;
  last: number;
  bytecodes: number;
  /** calls and returns seen between its bytecodes */
  callees: number;
  start: 'entry' | 'state' | 'unknown';
  outcome: Outcome;
  /** the method attributed (unique), else -1 */
  method: number;
  /** candidate methods of the last try */
  candidates: number;
  /** noSurvivor: the event index of the own bytecode no state reached (last try), else -1 */
  diedAt: number;
}

export interface OrphanReport {
  /** bytecode events with unknown method or bci in the input */
  orphans: number;
  /** orphan frames (stretches of one frame's unattributed bytecodes) */
  frames: number;
  /** frames attributed (one method and bci sequence survived) */
  attributedFrames: number;
  /** bytecode events given method and bci */
  attributedBytecodes: number;
  /** frames where more than one (method, bci sequence) survived */
  ambiguous: number;
  /** of the ambiguous frames' bytecodes, those attributed anyway (`partial`: the same state on every path) */
  partialBytecodes: number;
  /** frames with no candidate method (no callee with a known caller, no known entry) */
  noCandidate: number;
  /** frames whose candidates all contradict the events */
  noSurvivor: number;
  /** frames over the work bound */
  gaveUp: number;
  /** bytecode events with unknown method or bci in the output */
  remaining: number;
  /** frames by how they started: known entry, known previous state, unknown */
  byStart: { entry: number; state: number; unknown: number };
  /** state expansions, all frames */
  work: number;
  /** with `details`: every orphan frame, in the order they were solved (the order they ended) */
  details?: OrphanFrameDetail[];
}

/** One candidate method: its decode id, ICFG node and CFG. */
interface Cand {
  id: number;
  node: MethodNode;
  cfg: MethodCfg;
  /** per-instruction generation stamps for deduplication (lazily allocated) */
  stamp: Int32Array | null;
}

/** A set of methods a callee may be: one method, or those consistent with what an interpreted callee ran. */
interface CalleeClass {
  /** the method the events name */
  nominal: number;
  members: number[];
  set: Set<number>;
  /** decode ids of the methods with an invoke that can reach a member, and those invokes; null: not computed */
  callers: { ids: number[]; sites: { id: number; bci: number }[] } | null;
}

/**
 * The class hierarchy and ICFG of a decoded trace's recorded classes, with the mapping between the trace's method
 * ids and ICFG methods (by loader, class, name and descriptor). Build once per trace, use for every thread.
 */
export class OrphanContext {
  readonly hierarchy: ClassHierarchy;
  readonly icfg: Icfg;
  /** generation of the candidates' stamps (shared by every solver over this context) */
  gen = 0;
  private readonly idOfNode: Int32Array;
  private readonly nodeOfId = new Map<number, MethodNode>();
  private readonly cands = new Map<number, Cand | null>();
  private readonly callerCache = new Map<number, { id: number; bci: number }[]>();
  private readonly targetCache = new Map<number, Set<number> | null>();
  private readonly upcall = new Map<number, boolean>();
  private readonly classKeys = new Map<string, number>();
  readonly classes: CalleeClass[] = [];
  private readonly accepts = new Map<number, boolean>();
  /** invoke sites by the name + descriptor they name: [decode id, bci] pairs, flat */
  private byRef: Map<string, number[]> | undefined;
  /** decode ids of the methods with code, by their first opcode */
  private byFirstOp: number[][] | undefined;
  private allIds: number[] | undefined;
  /** methods (and where in them) consistent with a path prefix (`consistent`), by the prefix */
  private readonly prefixes = new Map<string, { id: number; at: number[] }[]>();

  constructor(readonly model: Pick<JvmModel, 'methods' | 'classes'>) {
    this.hierarchy = hierarchyOf(loadKeyedClasses(model.classes));
    this.icfg = new Icfg(this.hierarchy);
    this.idOfNode = new Int32Array(this.hierarchy.methods.length).fill(-1);
    for (const [id, m] of model.methods) {
      const node = this.hierarchy.method(methodKey(m.loader, m.className, m.name, m.signature));
      if (!node) continue;
      this.nodeOfId.set(id, node);
      this.idOfNode[node.id] = id;
    }
  }

  /** the candidate record of a decode method id: undefined without an ICFG method with code */
  cand(id: number): Cand | undefined {
    let c = this.cands.get(id);
    if (c === undefined) {
      c = null;
      const node = this.nodeOfId.get(id);
      if (node) {
        let cfg: MethodCfg | undefined;
        try {
          cfg = this.icfg.cfg(node);
        } catch {
          cfg = undefined;
        }
        if (cfg) c = { id, node, cfg, stamp: null };
      }
      this.cands.set(id, c);
    }
    return c ?? undefined;
  }

  /** resets every candidate's stamps (when the generation wraps) */
  clearStamps(): void {
    for (const c of this.cands.values()) c?.stamp?.fill(0);
  }

  /**
   * `<clinit>`, a class loader's loadClass, or a constructor of a Throwable: called by the VM while an instruction
   * resolves or initializes a class, or raises an exception itself
   */
  isUpcall(id: number): boolean {
    let u = this.upcall.get(id);
    if (u === undefined) {
      const m = this.model.methods.get(id);
      u = !!m && (m.name === '<clinit>' || m.name === 'loadClass' || m.name === 'loadClassInternal' || (m.name === '<init>' && this.isThrowable(id)));
      this.upcall.set(id, u);
    }
    return u;
  }

  /**
   * Whether the method's class is java/lang/Throwable or a subclass of it: through the recorded classes, and where
   * the chain leaves them, by the name of the first superclass not recorded (Throwable and its direct subclasses).
   */
  private isThrowable(id: number): boolean {
    let c = this.nodeOfId.get(id)?.cls;
    for (let depth = 0; c && depth < 32; depth++) {
      if (c.cf.name === 'java/lang/Throwable') return true;
      const sup = this.hierarchy.superclass(c);
      if (!sup) return THROWABLE_ROOTS.has(c.cf.superName ?? '');
      c = sup;
    }
    return false;
  }

  /** Decode ids the invoke at `bci` of method `id` can reach; null: anything (invokedynamic, polymorphic, unresolved). */
  targets(id: number, bci: number): Set<number> | null {
    const key = id * 65536 + bci;
    let t = this.targetCache.get(key);
    if (t !== undefined) return t;
    t = null;
    const node = this.nodeOfId.get(id);
    const site = node ? this.icfg.callSite(node, bci) : undefined;
    if (site) {
      const list = this.icfg.targets(site);
      if (list.length > 0) {
        t = new Set<number>();
        for (const m of list) if (this.idOfNode[m.id] >= 0) t.add(this.idOfNode[m.id]);
      }
    }
    this.targetCache.set(key, t);
    return t;
  }

  /** The invokes (decode method id, bci) that can reach method `callee`. */
  callerSites(callee: number): { id: number; bci: number }[] {
    let out = this.callerCache.get(callee);
    if (out) return out;
    out = [];
    const m = this.model.methods.get(callee);
    if (m && this.nodeOfId.has(callee)) {
      const flat = this.refIndex().get(m.name + m.signature) ?? [];
      for (let k = 0; k < flat.length; k += 2) {
        const t = this.targets(flat[k], flat[k + 1]);
        if (t && t.has(callee)) out.push({ id: flat[k], bci: flat[k + 1] });
      }
    }
    this.callerCache.set(callee, out);
    return out;
  }

  /** The class of exactly method `m`. */
  exactClass(m: number): number {
    return this.intern(`=${m}`, m, () => [m]);
  }

  /**
   * The class of method `m` and the methods that can run what an interpreted callee was seen to run: `path` holds
   * its first own bytecodes (bci * 256 + opcode); a member has the first opcode at the first bci and then the
   * following opcodes along successors in its code (bcis may differ: same-shape code laid out otherwise).
   */
  pathClass(m: number, path: readonly number[]): number {
    if (path.length === 0) return this.exactClass(m);
    const ops = path.map((p) => p & 255);
    return this.intern(`${m}:${path[0] >> 8}:${ops.join(',')}`, m, () => {
      const members = this.consistent(path[0] >> 8, ops);
      return members.includes(m) ? members.slice() : [m, ...members];
    });
  }

  /** The methods that can run opcodes `ops` from bci `bci` on, prefix by prefix (memoized). */
  private consistent(bci: number, ops: readonly number[]): number[] {
    let key = `${bci}:`;
    let list: { id: number; at: number[] }[] | undefined;
    for (let j = 0; j < ops.length; j++) {
      const op = ops[j];
      key += `${op},`;
      const hit = this.prefixes.get(key);
      if (hit) {
        list = hit;
        continue;
      }
      const next: { id: number; at: number[] }[] = [];
      if (!list) {
        const pool = bci === 0 ? this.firstOpIndex()[op] : (this.allIds ??= [...this.nodeOfId.keys()]);
        for (const id of pool) {
          const code = this.codeOf(id);
          if (code && bci < code.length && code[bci] === op) next.push({ id, at: [bci] });
        }
      } else {
        for (const x of list) {
          const code = this.codeOf(x.id)!;
          const at: number[] = [];
          for (const b of x.at) for (const t of successors(code, b)) if (t < code.length && code[t] === op && !at.includes(t)) at.push(t);
          if (at.length) next.push({ id: x.id, at });
        }
      }
      this.prefixes.set(key, next);
      list = next;
    }
    return (list ?? []).map((x) => x.id);
  }

  private codeOf(id: number): Uint8Array | undefined {
    return this.nodeOfId.get(id)?.info.code;
  }

  /** The class of any of `ids` (an orphan callee left ambiguous between them). */
  unionClass(ids: readonly number[]): number {
    const sorted = [...ids].sort((a, b) => a - b);
    return this.intern(`|${sorted.join(',')}`, sorted[0], () => sorted);
  }

  /** true when the invoke at `bci` of `id` can reach a member of class `cls` */
  siteAccepts(id: number, bci: number, cls: number): boolean {
    const key = cls * 1073741824 + id * 65536 + bci;
    let a = this.accepts.get(key);
    if (a === undefined) {
      const t = this.targets(id, bci);
      if (!t) a = true;
      else {
        const set = this.classes[cls].set;
        a = false;
        if (t.size <= set.size) {
          for (const x of t) if (set.has(x)) { a = true; break; }
        } else for (const x of set) if (t.has(x)) { a = true; break; }
      }
      this.accepts.set(key, a);
    }
    return a;
  }

  /** The invokes that can reach a member of class `cls`, and their methods; null when the class is too large. */
  classCallers(cls: number): { ids: number[]; sites: { id: number; bci: number }[] } | null {
    const c = this.classes[cls];
    if (c.callers) return c.callers;
    if (c.members.length > MAX_CLASS_FOR_CANDIDATES) return null;
    const sites: { id: number; bci: number }[] = [];
    const seen = new Set<number>();
    const ids = new Set<number>();
    for (const m of c.members) {
      for (const s of this.callerSites(m)) {
        const key = s.id * 65536 + s.bci;
        if (seen.has(key)) continue;
        seen.add(key);
        sites.push(s);
        ids.add(s.id);
      }
    }
    c.callers = { ids: [...ids], sites };
    return c.callers;
  }

  private intern(key: string, nominal: number, members: () => number[]): number {
    let id = this.classKeys.get(key);
    if (id === undefined) {
      const list = members();
      id = this.classes.length;
      this.classes.push({ nominal, members: list, set: new Set(list), callers: null });
      this.classKeys.set(key, id);
    }
    return id;
  }

  private firstOpIndex(): number[][] {
    if (this.byFirstOp) return this.byFirstOp;
    const index: number[][] = Array.from({ length: 256 }, () => []);
    for (const [id, node] of this.nodeOfId) {
      const code = node.info.code;
      if (code && code.length > 0) index[code[0]].push(id);
    }
    this.byFirstOp = index;
    return index;
  }

  /** Every invoke of every method, by the name and descriptor of the method it names (built on first use). */
  private refIndex(): Map<string, number[]> {
    if (this.byRef) return this.byRef;
    const index = new Map<string, number[]>();
    for (const node of this.hierarchy.methods) {
      const id = this.idOfNode[node.id];
      const code = node.info.code;
      if (id < 0 || !code || code.length === 0) continue;
      const cf = node.cls.cf;
      forEachInvoke(code, (b, op) => {
        if (op === 0xba) return; // invokedynamic names no method
        const ref = cf.methodRef((code[b + 1] << 8) | code[b + 2]);
        if (!ref) return;
        const key = ref.name + ref.descriptor;
        const l = index.get(key);
        if (l) l.push(id, b);
        else index.set(key, [id, b]);
      });
    }
    this.byRef = index;
    return index;
  }
}

/** Calls f(bci, opcode) for each invoke of `code` (a linear sweep, no CFG), stopping quietly at a malformed instruction. */
function forEachInvoke(code: Uint8Array, f: (bci: number, op: number) => void): void {
  for (let bci = 0; bci < code.length; ) {
    const n = instructionLength(code, bci);
    if (n < 0) return;
    const op = code[bci];
    if (op >= 0xb6 && op <= 0xba && bci + 2 < code.length) f(bci, op);
    bci += n;
  }
}

const START_UNKNOWN = 0;
const START_ENTRY = 1;
const START_STATE = 2;

/** What is known of a stack frame, as evidence for its caller. */
interface FrameInfo {
  /** the frame's method (-1 unknown) */
  method: number;
  /** entered or run as compiled code: its method is exact */
  compiled: boolean;
  /** no own attributed bytecode since a gap: its method is from before the gap */
  stale: boolean;
  /** its first own attributed interpreted bytecodes, bci * 256 + opcode */
  path: number[];
  /** its callee class once computed (for a return whose exit named it, and for one whose exit did not) */
  clsNamed?: number;
  clsUnnamed?: number;
  /** the orphan frame of its latest own bytecodes (they were unattributed), else null */
  rec: OrphanFrame | null;
}

/** A call from or return into a frame: the callee and whether the event named its method. */
interface CalleeItem {
  info: FrameInfo;
  named: boolean;
}

/** One orphan frame: its own unattributed bytecodes and what happened between them. */
interface OrphanFrame {
  start: number;
  /** START_ENTRY: the entry's method (-1 unknown); START_STATE: the frame's method; else -1 */
  method: number;
  /** START_STATE: the bci of the frame's last known bytecode */
  bci: number;
  /** event index of each own bytecode */
  ev: number[];
  /** per own bytecode: the callees between the previous own bytecode (or the start) and it, from calleeStart[k] */
  calleeStart: number[];
  callees: CalleeItem[];
  /** per own bytecode: an `exception` event came right before it */
  exc: number[];
  closed: boolean;
  /** once solved: the methods of its surviving states (one when unique; empty when none) */
  solved: number[] | null;
}

/** A frame of the walk's stack. */
interface StackFrame {
  info: FrameInfo;
  /** entered by an `entry` and no own bytecode yet */
  fresh: boolean;
  /** bci of its last own bytecode when attributed, else -1 */
  last: number;
  /** the open orphan frame of this frame */
  rec: OrphanFrame | null;
  /** calls and returns since its last own bytecode */
  pend: CalleeItem[];
  /** an exception came since its last own bytecode */
  exc: boolean;
}

/** Growable int32 storage of states (candidate index, instruction). */
class StateStore {
  c = new Int32Array(1024);
  i = new Int32Array(1024);
  n = 0;
  push(c: number, i: number): void {
    if (this.n === this.c.length) {
      const nc = new Int32Array(this.n * 2);
      nc.set(this.c);
      this.c = nc;
      const ni = new Int32Array(this.n * 2);
      ni.set(this.i);
      this.i = ni;
    }
    this.c[this.n] = c;
    this.i[this.n++] = i;
  }
}

/**
 * Gives unattributed interpreted bytecodes of one thread's events their method and bci where the ICFG leaves one
 * possibility (see the file comment). `ctx`: an OrphanContext, or the trace's model to build one from.
 */
export function attributeOrphans(
  events: EventStream,
  ctx: OrphanContext | Pick<JvmModel, 'methods' | 'classes'>,
  opts: OrphanOptions = {},
): { events: EventStream; report: OrphanReport } {
  const cx = ctx instanceof OrphanContext ? ctx : new OrphanContext(ctx);
  const report: OrphanReport = {
    orphans: 0, frames: 0, attributedFrames: 0, attributedBytecodes: 0, ambiguous: 0, partialBytecodes: 0, noCandidate: 0,
    noSurvivor: 0, gaveUp: 0, remaining: 0, byStart: { entry: 0, state: 0, unknown: 0 }, work: 0,
  };
  const frames = collectFrames(events, report);
  const out = opts.inPlace ? events : events.clone();
  const solver = new Solver(cx, events, opts.maxStates ?? 20000, opts.maxWork ?? 4e6);
  for (const f of frames) {
    report.frames++;
    if (f.start === START_ENTRY) report.byStart.entry++;
    else if (f.start === START_STATE) report.byStart.state++;
    else report.byStart.unknown++;
    const r = solver.solve(f);
    report.work += solver.work;
    f.solved = r === 'unique' || r === 'ambiguous' ? solver.survivors() : [];
    if (opts.details) {
      (report.details ??= []).push({
        first: f.ev[0], last: f.ev[f.ev.length - 1], bytecodes: f.ev.length, callees: f.callees.length,
        start: f.start === START_ENTRY ? 'entry' : f.start === START_STATE ? 'state' : 'unknown', outcome: r,
        method: r === 'unique' ? f.solved[0] : -1, candidates: solver.cands.length,
        diedAt: r === 'noSurvivor' && solver.diedAt >= 0 ? f.ev[solver.diedAt] : -1,
      });
    }
    if (r === 'noCandidate') report.noCandidate++;
    else if (r === 'noSurvivor') report.noSurvivor++;
    else if (r === 'gaveUp') report.gaveUp++;
    else {
      const all = r === 'unique';
      if (all) report.attributedFrames++;
      else report.ambiguous++;
      if (!all && !opts.partial) continue;
      for (let k = 0; k < f.ev.length; k++) {
        const c = solver.only[k];
        if (c < 0) continue;
        const cand = solver.cands[c];
        const e = f.ev[k];
        out.method[e] = cand.id;
        out.bci[e] = cand.cfg.insns.bci[solver.onlyInsn[k]];
        report.attributedBytecodes++;
        if (!all) report.partialBytecodes++;
      }
    }
  }
  for (let i = 0; i < out.length; i++) if (out.kind[i] === BYTECODE && (out.method[i] < 0 || out.bci[i] < 0)) report.remaining++;
  return { events: out, report };
}

/** Walks the events with the frame rules of the file comment; returns the orphan frames in the order they end. */
function collectFrames(events: EventStream, report: OrphanReport): OrphanFrame[] {
  const order: OrphanFrame[] = [];
  const stack: StackFrame[] = [];
  let excPending = false;

  const close = (f: StackFrame) => {
    if (f.rec && !f.rec.closed) {
      f.rec.closed = true;
      order.push(f.rec);
    }
    f.rec = null;
  };
  const push = (m: number, compiled: boolean, fresh: boolean): StackFrame => {
    const f: StackFrame = { info: { method: m, compiled, stale: false, path: [], rec: null }, fresh, last: -1, rec: null, pend: [], exc: false };
    stack.push(f);
    return f;
  };
  const find = (m: number): number => {
    for (let d = stack.length - 1; d >= 0; d--) if (stack[d].info.method === m) return d;
    return -1;
  };
  /** pops the frames above d (d = -1: all); the one directly above d returned into it (`named`: by an exit naming it) */
  const popTo = (d: number, named: boolean) => {
    if (d >= stack.length - 1) return;
    const callee = stack[d + 1].info;
    while (stack.length - 1 > d) close(stack.pop()!);
    if (d >= 0) stack[d].pend.push({ info: callee, named });
  };
  const ensureTop = (m: number, compiled: boolean) => {
    const top = stack[stack.length - 1];
    if (m < 0 || (top && top.info.method === m)) return;
    const d = find(m);
    if (d >= 0) popTo(d, false);
    else push(m, compiled, false);
  };
  const closeAll = () => {
    for (let d = stack.length - 1; d >= 0; d--) {
      close(stack[d]);
      stack[d].pend = [];
      stack[d].exc = false;
    }
  };

  const { kind: K, source: S, method: M, bci: B, opcode: O } = events;
  for (let i = 0; i < events.length; i++) {
    const k = K[i];
    const m = M[i];
    if (k === BYTECODE) {
      const exc = excPending;
      excPending = false;
      const compiled = S[i] !== INTERPRETER;
      if (m >= 0 && B[i] >= 0) {
        ensureTop(m, compiled);
        const f = stack[stack.length - 1];
        close(f);
        f.pend = [];
        f.exc = false;
        f.last = B[i];
        f.fresh = false;
        const info = f.info;
        info.stale = false;
        info.rec = null;
        info.compiled = compiled;
        if (!compiled && info.path.length < PATH_MAX && O[i] >= 0) info.path.push(B[i] * 256 + O[i]);
        continue;
      }
      report.orphans++;
      if (m >= 0) ensureTop(m, compiled);
      else if (!compiled) {
        // interpreted code does not run in a compiled frame: those returned unseen
        let d = stack.length - 1;
        while (d >= 0 && stack[d].info.compiled) d--;
        if (d < stack.length - 1) popTo(d, false);
      }
      if (stack.length === 0) push(-1, compiled, false);
      const f = stack[stack.length - 1];
      if (exc) f.exc = true;
      let r = f.rec;
      if (!r) {
        const fm = f.info.method;
        let start = START_UNKNOWN;
        let method = -1;
        let bci = -1;
        if (f.fresh) {
          start = START_ENTRY;
          method = fm;
        } else if (!f.info.stale && fm >= 0 && f.last >= 0) {
          start = START_STATE;
          method = fm;
          bci = f.last;
        }
        r = { start, method, bci, ev: [], calleeStart: [], callees: [], exc: [], closed: false, solved: null };
        f.rec = r;
        f.fresh = false;
      }
      r.ev.push(i);
      r.calleeStart.push(r.callees.length);
      for (const c of f.pend) r.callees.push(c);
      r.exc.push(f.exc ? 1 : 0);
      f.pend = [];
      f.exc = false;
      f.last = -1;
      f.info.rec = r;
    } else if (k === ENTRY) {
      const callee = push(m, S[i] !== INTERPRETER, true);
      if (stack.length > 1) stack[stack.length - 2].pend.push({ info: callee.info, named: m >= 0 });
    } else if (k === EXIT) {
      const d = m < 0 ? stack.length - 1 : find(m);
      if (d >= 0) popTo(d - 1, m >= 0);
    } else if (k === GAP) {
      excPending = false;
      closeAll();
      for (const f of stack) {
        f.info.stale = true;
        f.fresh = false;
      }
    } else if (k === DEOPT) {
      closeAll();
      for (const f of stack) {
        f.last = -1;
        f.fresh = false;
        // the deoptimized frames go on in the interpreter
        f.info.compiled = false;
      }
    } else if (k === OSR_ENTRY) {
      ensureTop(m, true);
      const f = stack[stack.length - 1];
      if (f) {
        close(f);
        f.pend = [];
        f.last = -1;
        f.fresh = false;
        f.info.compiled = true;
      }
    } else if (k === EXCEPTION) excPending = true;
  }
  closeAll();
  return order;
}

class GiveUp extends Error {}

/** The NFA of one orphan frame over its candidates, forward then backward. */
class Solver {
  cands: Cand[] = [];
  /** per own bytecode: the candidate of its single surviving state, -1 when none or several */
  only = new Int32Array(64);
  onlyInsn = new Int32Array(64);
  work = 0;
  /** the own bytecode at which the last try lost every state (-1: none) */
  diedAt = -1;
  private readonly store = new StateStore();
  private stepOff = new Int32Array(65);
  private alive = new Uint8Array(1024);
  private f!: OrphanFrame;
  /** first state of the step being built */
  private curStart = 0;
  /** per transition k (into own bytecode k): a call or return came; the callee classes that must be reachable */
  private tHasCall = new Uint8Array(64);
  private tReal: number[][] = [];
  private op = new Int16Array(64);
  private aux = new Float64Array(64);
  private evMethod = new Int32Array(64);

  constructor(
    private readonly cx: OrphanContext,
    private readonly events: EventStream,
    private readonly maxStates: number,
    private readonly maxWork: number,
  ) {}

  /** the callee class of a call or return (-1: unknown); computed once per callee frame (they are solved first) */
  private calleeClass(c: CalleeItem): number {
    const info = c.info;
    const memo = c.named ? info.clsNamed : info.clsUnnamed;
    if (memo !== undefined) return memo;
    const cls = this.classOf(c);
    if (info.rec && !info.rec.solved) return cls; // (not solved yet: not kept)
    if (c.named) info.clsNamed = cls;
    else info.clsUnnamed = cls;
    return cls;
  }

  private classOf(c: CalleeItem): number {
    const info = c.info;
    if (info.rec) {
      const s = info.rec.solved;
      if (!s || s.length === 0) return -1;
      return s.length === 1 ? this.cx.exactClass(s[0]) : this.cx.unionClass(s);
    }
    if (info.method < 0 || (info.stale && !c.named)) return -1;
    if (info.compiled) return this.cx.exactClass(info.method);
    return this.cx.pathClass(info.method, info.path);
  }

  solve(f: OrphanFrame): Outcome {
    this.f = f;
    this.work = 0;
    this.cands = [];
    this.diedAt = -1;
    const n = f.ev.length;
    if (this.only.length < n) {
      this.only = new Int32Array(n * 2);
      this.onlyInsn = new Int32Array(n * 2);
      this.tHasCall = new Uint8Array(n * 2);
      this.op = new Int16Array(n * 2);
      this.aux = new Float64Array(n * 2);
      this.evMethod = new Int32Array(n * 2);
      this.stepOff = new Int32Array(n * 2 + 1);
    }
    this.tReal.length = n;
    const order: number[] = [];
    for (let k = 0; k < n; k++) {
      const e = f.ev[k];
      this.op[k] = this.events.opcode[e];
      this.aux[k] = this.events.aux[e];
      this.evMethod[k] = this.events.method[e];
      const from = f.calleeStart[k];
      const to = k + 1 < n ? f.calleeStart[k + 1] : f.callees.length;
      // the invoke's own call is the last one; earlier ones are upcalls, or returns a stale stack put there
      const reals: number[] = [];
      for (let q = to - 1; q >= from; q--) {
        const cls = this.calleeClass(f.callees[q]);
        if (cls < 0 || this.cx.isUpcall(this.cx.classes[cls].nominal)) continue;
        reals.push(cls);
        if (!order.includes(cls) && order.length < CALLEES_CONSIDERED) order.push(cls);
        break;
      }
      this.tHasCall[k] = to > from ? 1 : 0;
      this.tReal[k] = reals;
    }
    // a frame whose opcodes are unknown (-1) cannot be matched
    for (let k = 0; k < n; k++) if (this.op[k] < 0) return 'noCandidate';
    try {
      if (f.start === START_STATE) {
        const c = this.cx.cand(f.method);
        const at = c ? c.cfg.insnAt(f.bci) : -1;
        if (c && at >= 0) {
          this.cands = [c];
          const r = this.run(START_STATE, at, -1);
          if (r !== 'noSurvivor') return r;
        }
      }
      if (f.start === START_ENTRY && f.method >= 0) {
        const c = this.cx.cand(f.method);
        if (c) {
          this.cands = [c];
          const r = this.run(START_ENTRY, 0, -1);
          if (r !== 'noSurvivor') return r;
        }
      }
      // candidates: the callers of a callee (the one with the fewest first; another when it fails)
      const sets: { cls: number; ids: number[] }[] = [];
      for (const cls of order) {
        const callers = this.cx.classCallers(cls);
        if (callers && callers.ids.length > 0) sets.push({ cls, ids: callers.ids });
      }
      sets.sort((a, b) => a.ids.length - b.ids.length);
      let result: Outcome = this.cands.length ? 'noSurvivor' : 'noCandidate';
      for (let t = 0; t < sets.length && t < TRIES; t++) {
        this.cands = [];
        for (const id of sets[t].ids) {
          const c = this.cx.cand(id);
          if (c) this.cands.push(c);
        }
        if (this.cands.length === 0) continue;
        result = this.run(f.start === START_ENTRY ? START_ENTRY : START_UNKNOWN, 0, sets[t].cls);
        if (result !== 'noSurvivor') return result;
      }
      return result;
    } catch (e) {
      if (e instanceof GiveUp) return 'gaveUp';
      throw e;
    }
  }

  /** the methods of the states that survived the last run, each once */
  survivors(): number[] {
    const n = this.f.ev.length;
    const out: number[] = [];
    for (let s = this.stepOff[n - 1]; s < this.stepOff[n]; s++) {
      if (!this.alive[s]) continue;
      const id = this.cands[this.store.c[s]].id;
      if (!out.includes(id)) out.push(id);
    }
    return out;
  }

  /**
   * One NFA run over `this.cands`. START_STATE: from the single candidate at instruction `at`; START_ENTRY: from bci
   * 0; START_UNKNOWN: anywhere (`from`: the callee class the candidates came from, whose invokes start the frame
   * when a return into it comes first).
   */
  private run(start: number, at: number, from: number): Outcome {
    const n = this.f.ev.length;
    const st = this.store;
    st.n = 0;
    const cands = this.cands;
    this.stepOff[0] = 0;
    this.curStart = 0;
    this.diedAt = -1;
    const gen0 = this.nextGen();
    const add0 = (c: number, i: number) => this.add(c, i, gen0);
    if (start === START_ENTRY) {
      for (let c = 0; c < cands.length; c++) this.emitIf(c, 0, 0, add0);
    } else if (start === START_STATE) {
      this.expand(0, at, 0, add0);
    } else if (this.tHasCall[0]) {
      // a return (or call) into the frame comes first: the frame is at an invoke (or an upcall instruction)
      if (from >= 0 && this.tReal[0].includes(from)) {
        const index = new Map<number, number>();
        cands.forEach((x, c) => index.set(x.id, c));
        for (const s of this.cx.classCallers(from)!.sites) {
          const c = index.get(s.id);
          const i = c === undefined ? -1 : cands[c].cfg.insnAt(s.bci);
          if (i >= 0) this.expand(c!, i, 0, add0);
        }
      } else {
        for (let c = 0; c < cands.length; c++) {
          const insns = cands[c].cfg.insns;
          for (let i = 0; i < insns.count; i++) if (insns.kind[i] === InsnKind.Call || UPCALL_OPS[insns.opcode[i]]) this.expand(c, i, 0, add0);
        }
      }
    } else {
      for (let c = 0; c < cands.length; c++) {
        const insns = cands[c].cfg.insns;
        for (let i = 0; i < insns.count; i++) this.emitIf(c, i, 0, add0);
      }
    }
    this.stepOff[1] = st.n;
    for (let k = 1; k < n; k++) {
      const lo = this.stepOff[k - 1];
      const hi = this.stepOff[k];
      if (hi === lo) {
        this.diedAt = k - 1;
        return 'noSurvivor';
      }
      this.curStart = hi;
      const g = this.nextGen();
      const add = (c: number, i: number) => this.add(c, i, g);
      for (let s = lo; s < hi; s++) this.expand(st.c[s], st.i[s], k, add);
      this.stepOff[k + 1] = st.n;
    }
    if (this.stepOff[n] === this.stepOff[n - 1]) {
      this.diedAt = n - 1;
      return 'noSurvivor';
    }
    // backward: keep the states on a path to a state of the last bytecode
    if (this.alive.length < st.n) this.alive = new Uint8Array(st.n * 2);
    const alive = this.alive;
    alive.fill(1, this.stepOff[n - 1], this.stepOff[n]);
    let hit = false;
    let g = 0;
    const probe = (c: number, i: number) => {
      if (cands[c].stamp![i] === g) hit = true;
    };
    for (let k = n - 1; k >= 1; k--) {
      g = this.nextGen();
      for (let s = this.stepOff[k]; s < this.stepOff[k + 1]; s++) if (alive[s]) cands[st.c[s]].stamp![st.i[s]] = g;
      for (let s = this.stepOff[k - 1]; s < this.stepOff[k]; s++) {
        hit = false;
        this.expand(st.c[s], st.i[s], k, probe);
        alive[s] = hit ? 1 : 0;
      }
    }
    let unique = true;
    for (let k = 0; k < n; k++) {
      let c = -1;
      let i = -1;
      let count = 0;
      for (let s = this.stepOff[k]; s < this.stepOff[k + 1]; s++) {
        if (!alive[s]) continue;
        if (count++ === 0) {
          c = st.c[s];
          i = st.i[s];
        }
      }
      if (count === 1) {
        this.only[k] = c;
        this.onlyInsn[k] = i;
      } else {
        this.only[k] = -1;
        unique = false;
      }
    }
    return unique ? 'unique' : 'ambiguous';
  }

  private nextGen(): number {
    if (++this.cx.gen === 0x7fffffff) {
      this.cx.gen = 1;
      this.cx.clearStamps();
    }
    return this.cx.gen;
  }

  /** adds state (c, i) to the step being built unless it is there already */
  private add(c: number, i: number, g: number): void {
    const x = this.cands[c];
    if (!x.stamp) x.stamp = new Int32Array(x.cfg.insns.count);
    if (x.stamp[i] === g) return;
    x.stamp[i] = g;
    this.store.push(c, i);
    if (this.store.n - this.curStart > this.maxStates) throw new GiveUp();
  }

  /** emits (c, i) as own bytecode k when its opcode (and the event's method, if known) fit */
  private emitIf(c: number, i: number, k: number, emit: (c: number, i: number) => void): void {
    const x = this.cands[c];
    if (x.cfg.insns.opcode[i] !== this.op[k]) return;
    if (this.evMethod[k] >= 0 && x.id !== this.evMethod[k]) return;
    emit(c, i);
  }

  /** the states own bytecode k can be in when the frame's previous own bytecode was at (c, i) */
  private expand(c: number, i: number, k: number, emit: (c: number, i: number) => void): void {
    if (++this.work > this.maxWork) throw new GiveUp();
    const x = this.cands[c];
    const { insns, graph } = x.cfg;
    const kind = insns.kind[i];
    const exc = this.f.exc[k] === 1;
    if (this.tHasCall[k]) {
      const reals = this.tReal[k];
      if (kind === InsnKind.Call) {
        for (const cls of reals) if (!this.cx.siteAccepts(x.id, insns.bci[i], cls)) return;
      } else if (reals.length > 0 || !UPCALL_OPS[insns.opcode[i]]) return;
      for (let e = graph.start[i], end = graph.start[i + 1]; e < end; e++) {
        const ek = graph.kind[e];
        if (exc ? ek !== EdgeKind.Exception : ek !== EdgeKind.Fallthrough) continue;
        this.emitIf(c, graph.target[e], k, emit);
      }
      return;
    }
    // an if* whose outcome the interpreter's template told (aux 1 taken, -1 not taken)
    const outcome = k > 0 && isIf(insns.opcode[i]) ? this.aux[k - 1] : 0;
    for (let e = graph.start[i], end = graph.start[i + 1]; e < end; e++) {
      const ek = graph.kind[e];
      if (exc && ek !== EdgeKind.Exception) continue;
      if (outcome > 0 && ek === EdgeKind.BranchNotTaken) continue;
      if (outcome < 0 && ek === EdgeKind.BranchTaken) continue;
      this.emitIf(c, graph.target[e], k, emit);
    }
  }
}
