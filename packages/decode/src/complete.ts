/**
 * Compiled code, bytecode by bytecode. The flow layer gives one event per PcDesc that ran, and compiled code has
 * PcDescs only where machine code stands for a bytecode (loads and stores of locals usually have none, and a
 * bytecode can have several). This pass makes every compiled frame a bytecode sequence:
 * - repeated events at the same (method, bci) in a row are one execution;
 * - between two events of a frame at b1 and b2, the bytecodes on the shortest path from b1 to b2 in the
 *   method's control flow (JVMS successors) are inserted when that path is short (at most MAX_FILL bytecodes,
 *   and unique in length: when two shortest paths differ, nothing is inserted rather than a guess), or, however
 *   long, when it is forced (no branch or throw on the way: a loop body between its test and back branch), or when
 *   the second is on the unique way once around the loop from the first (at most LOOP_FILL bytecodes: an unrolled
 *   loop's next round);
 * - an invoke passed by a fill whose callee left no event gets the callee's certain path inserted (the events
 *   output since the frame's last event, if any, belong to one callee: the invoke it stood at, or the first on the
 *   path);
 * - a frame's first event is reached from bci 0 (entry) or from the OSR bci, and a frame that returns goes on
 *   to the nearest return bytecode.
 * Inserted events carry the source of the frame they belong to, the time of the event that follows them, and
 * aux = INFERRED.
 */
import { successors } from '@jportal/classfile';
import { COMPILED_CONTEXT, EventKind, EventSource, EventStream, maxStreamEvents } from './events';
import type { Method, MethodUniverse } from './attribute';
import { PartReader } from './part-reader';
import { SuccessorTable } from './successor-table';
import { SwitchKeys, UNKNOWN } from './switch-keys';

/**
 * The longest run of bytecodes inserted between two events of a frame. Measured on examples/switches against the
 * oracle: 8 gives 80.6% sequence accuracy and 28% count error, 16 gives 83.8% and 49% (longer fills more often
 * follow a path the code did not take: C2 hoists instructions, so a PcDesc does not prove its bytecode ran).
 */
const MAX_FILL = 8;

export interface CompletionStats {
  /** compiled bytecode events before */
  compiledIn: number;
  /** repeated (method, bci) events merged */
  merged: number;
  /** bytecodes inserted */
  inserted: number;
  /** pairs of events with no short or no unique path between them (left as they are) */
  unfilled: number;
  /** observed events dropped as echoes: a bytecode the frame had just passed, out of order in the machine code
   * (C2 schedules a bytecode's instructions before or after those of its neighbours) */
  echoes: number;
  /** call sites advanced to when an inlined callee's frame began (its call-site bci is in the chain) */
  callSites: number;
  /** callees inserted where an invoke left no event at all (intrinsics, inlined code with no PcDesc) */
  silentCallees: number;
  /** loop iterations inserted for unrolled loops (one pass of C2's unrolled body is k iterations) */
  unrolled: number;
  /** observed events taken back as hoisted: the frame's next event cannot follow them but follows the bytecode
   * before them (C2 moves a bytecode's instructions ahead of a branch, a field load above its null test) */
  hoisted: number;
  /** inlined callees dropped as labels of shared code: entered and left just before their caller returns, at a
   * call site the caller cannot reach without bytecodes whose PcDescs left no event */
  sharedTails: number;
  /** frames started again at their entry: their first events ran ahead of the guard that decided them */
  restarts: number;
  /** observed events at a `goto` dropped as labels of the code where two ways join (the frame passed its target) */
  joinLabels: number;
}

/** At most this many output events of a frame since its entry are taken back by restartAtEntry. */
const RESTART_REACH = 32;
/**
 * At most this many output events are taken back with a hoisted event (takeBackHoisted): it and the path filled up to
 * it, and the events of inlined callees whose loads were hoisted with it. More than that after it is code that ran,
 * not code scheduled ahead: its events stay. (Without a bound, sunflow's Thread-0 lost 16 M of its 200 M events to
 * take-backs, 3,656 of them interpreted bytecodes, which are observed.)
 */
const HOIST_REACH = 64;
/**
 * Output events flush() keeps back (the newest): what a later event may still take back (RESTART_REACH, HOIST_REACH),
 * so what is handed on, and what is taken back, does not depend on when flush() is called.
 */
const KEEP_BACK = Math.max(RESTART_REACH, HOIST_REACH);

/** How deep callees that left no event are inserted: a silent callee's own invokes left none either. */
const SILENT_DEPTH = 3;

/** At most this many bytecode events of a callee entered and left just before its caller returns (sharedTail). */
const SHARED_TAIL_EVENTS = 3;
/**
 * Input events feed() looks ahead of the one it reads, at most (isLateEcho: 4; the arm after a keyed switch and the
 * exit after it: 5; sharedTail: SHARED_TAIL_EVENTS + 2), and one to spare. A fed part's last LOOK_AHEAD events are
 * read with the next part (or at finish()), so every event is read with the same events after it however the stream
 * was cut into parts.
 */
const LOOK_AHEAD = Math.max(6, SHARED_TAIL_EVENTS + 3);

/** A compiled frame on the completion stack. Frames are reused by depth (no object per entry). */
class CFrame {
  method = -1;
  /** bci of the frame's last bytecode event; -1 before the first (the frame starts at bci 0), -2 unknown */
  last = -1;
  source = EventSource.Compiled;
  /** the bcis this frame's last events were at (observed or inserted), newest at `recentAt - 1` */
  readonly recent = new Int32Array(RECENT);
  recentAt = 0;
  /** output length when `last` was set: an invoke at `last` whose callee left no event has out.length equal */
  outAtLast = -1;
  /** bci of the unrolled loop's step (an iinc whose PcDesc is a k-fold add) last seen in this frame; -1: none */
  stepBci = -1;
  /** how many times the frame was at stepBci since its last step event */
  sinceStep = 0;
  /** output position (counting flushed events) right after the frame's entry; -1 none (seen without entry, OSR) */
  entryOut = -1;
  /** events ever output (taken back or not: Completion's `pushed()`) when entryOut was set */
  entryPushed = -1;
  /** the inlining context of the frame's last observed event (CodeImage.pcContexts), -1 unknown */
  ctx = -1;
  /** the method's switches keyed by a local holding a constant (javac's string switch), or null */
  keys: SwitchKeys | null = null;
  /** the value of `keys.local` after the frame's last bytecode (UNKNOWN when not a known constant) */
  keyValue = UNKNOWN;
  /** output position (counting flushed events) where the frame's last observed event and the path filled up
   * to it begin; -1 none */
  observedAt = -1;
  /** events ever output when observedAt was set */
  observedPushed = -1;
  /** bci of that event */
  observedBci = -1;
  /** the frame's `last`, `keyValue`, `outAtLast` and `recentAt` before them (what taking them back restores) */
  beforeLast = -2;
  beforeKeyValue = UNKNOWN;
  beforeOutAtLast = -1;
  beforeRecentAt = 0;

  /** `bci` is one of the recent bcis. */
  wasAt(bci: number): boolean {
    const r = this.recent;
    for (let k = 0; k < RECENT; k++) if (r[k] === bci) return true;
    return false;
  }

  reset(method: number, last: number, source: EventSource, keys: SwitchKeys | null): void {
    this.method = method;
    this.keys = keys;
    this.keyValue = UNKNOWN;
    this.last = last;
    this.source = source;
    this.recent.fill(-3);
    this.recentAt = 0;
    this.outAtLast = -1;
    this.stepBci = -1;
    this.sinceStep = 0;
    this.ctx = -1;
    this.observedAt = -1;
    this.observedPushed = -1;
    this.entryOut = -1;
    this.entryPushed = -1;
  }
}

const RECENT = 16;
/** How far ahead (bytecodes on the shortest path) a frame's next event may lie and still be a step forward. */
const REACH = 64;

const isReturn = (op: number) => op >= 0xac && op <= 0xb1;

/** `aux` of a bytecode event this pass inserted (inferred from the control flow, not observed) */
export const INFERRED = 1;
/** `aux` of an entry or exit this pass inserted (of a callee that left no event): the call-site form is bci + 1,
 * so this value, which no call site has, is negative */
export const INFERRED_ENTRY = -1;

/** Key of a (from, to) pair of bcis or -1 (other values have none: -1). */
function pairKey(from: number, to: number): number {
  return from >= -1 && from <= 0xffff && to >= -1 && to <= 0xffff ? (from + 1) * 0x10001 + (to + 1) : -1;
}

/** What completion learned of one method's control flow, by pairKey. */
interface MethodMemo {
  paths: Map<number, Int32Array | null>;
  /** `distance(.., REACH)` */
  reach: Map<number, number>;
}

/** Room for the input's events and two inserted per compiled bytecode (what C2 code needed on real applications). */
function completedCapacity(input: EventStream): number {
  let compiled = 0;
  for (let i = 0; i < input.length; i++) if (input.kind[i] === EventKind.Bytecode && (input.source[i] === EventSource.Compiled || input.source[i] === EventSource.Inlined)) compiled++;
  // (at most what a stream may hold: past that, growing says so)
  return Math.min(input.length + 2 * compiled + 1024, Math.max(input.length, maxStreamEvents()));
}

export function completeCompiled(universe: MethodUniverse, input: EventStream): { events: EventStream; stats: CompletionStats } {
  const c = completion(universe, completedCapacity(input));
  c.feed(input);
  return c.finish();
}

/**
 * Completion of one thread's attributed stream read part by part (feed, in stream order): `out` holds what the
 * parts made and flush() has not handed on; finish() reads what is left and gives the rest and the statistics.
 * The events made, in all, do not depend on how the stream was cut into parts or when flush() was called: a part's
 * last events are read with the next part's first (LOOK_AHEAD), and flush() keeps back what may still be taken back
 * (KEEP_BACK).
 */
export interface Completion {
  readonly out: EventStream;
  feed(input: EventStream): void;
  /** Hands `out`'s events but the newest KEEP_BACK to `sink` (which reads them before it returns). */
  flush(sink: (events: EventStream) => void): void;
  /** Reads the events fed and not read yet; `events` then holds all not handed on. */
  finish(): { events: EventStream; stats: CompletionStats };
}

export function completion(universe: MethodUniverse, capacity: number): Completion {
  const out = new EventStream(capacity);
  /** events handed on by flush(): positions in the output are `flushed + out.length` */
  let flushed = 0;
  /** events taken back out of the output so far (takeBackHoisted, restartAtEntry) */
  let removed = 0;
  /**
   * Events ever output, taken back or not: it never goes down, so how far back a take-back reaches is measured on it
   * (positions go down when events are taken back: an event further back than KEEP_BACK may have been handed on, and
   * whether it was would depend on when flush() ran; never one fewer than REACH pushes back).
   */
  const pushed = () => flushed + out.length + removed;
  const stats: CompletionStats = { compiledIn: 0, merged: 0, inserted: 0, unfilled: 0, echoes: 0, callSites: 0, silentCallees: 0, unrolled: 0, hoisted: 0, sharedTails: 0, restarts: 0, joinLabels: 0 };
  /** the stack: frames[0..depth); frames beyond are kept for reuse */
  const frames: CFrame[] = [];
  let depth = 0;
  /** by Method.index */
  const memos: (MethodMemo | undefined)[] = new Array(universe.methods.length).fill(undefined);
  const bfs = new BoundedBfs();

  // the method of the last lookup by id (events come in runs of one method)
  let lastId = -1;
  let lastMethod: Method | undefined;
  const methodOf = (id: number): Method | undefined => {
    if (id !== lastId) {
      lastId = id;
      lastMethod = universe.byId.get(id);
    }
    return lastMethod;
  };
  const memoOf = (m: Method): MethodMemo => (memos[m.index] ??= { paths: new Map(), reach: new Map() });
  /** by Method.index: the method's keyed switches (null: none) */
  const keyed: (SwitchKeys | null | undefined)[] = new Array(universe.methods.length).fill(undefined);
  const keysOf = (id: number): SwitchKeys | null => {
    const m = methodOf(id);
    if (!m?.code) return null;
    let k = keyed[m.index];
    if (k === undefined) keyed[m.index] = k = SwitchKeys.of(m.code);
    return k;
  };

  /** by Method.index: the method's paths for searches that avoid bytecodes (SwitchKeys.plain) */
  const plain: (SwitchKeys | undefined)[] = new Array(universe.methods.length).fill(undefined);
  const plainKeysOf = (id: number): SwitchKeys | undefined => {
    const m = methodOf(id);
    if (!m?.code) return undefined;
    return (plain[m.index] ??= SwitchKeys.plain(m.code));
  };

  /** bcis strictly between `from` and `to` on the unique shortest path (from = -1: from the method's start, bci 0
   * included; to = -1: to the nearest return, included); null when there is none within MAX_FILL */
  const path = (method: number, from: number, to: number): Int32Array | null => {
    const m = methodOf(method);
    if (!m?.code) return null;
    const key = pairKey(from, to);
    if (key < 0) return shortest(m.code, from, to) ?? forced(m.code, from, to);
    const paths = memoOf(m).paths;
    let result = paths.get(key);
    if (result === undefined) paths.set(key, (result = shortest(m.code, from, to) ?? forced(m.code, from, to)));
    return result;
  };

  /** The length of a shortest path from `from` to `to` in the method (with code), -1 beyond REACH. */
  const distance = (m: Method, from: number, to: number): number => {
    const key = pairKey(from, to);
    if (key < 0) return bfs.distance(universe.successors(m), from, to, REACH);
    const reach = memoOf(m).reach;
    let d = reach.get(key);
    if (d === undefined) reach.set(key, (d = bfs.distance(universe.successors(m), from, to, REACH)));
    return d;
  };

  /** The loop around `bci` (bytecodes after it, back to it, included), or null (see cycleOf); memoized. */
  const cycles = new Map<number, Int32Array | null>();
  const loopAround = (m: Method, bci: number): Int32Array | null => {
    const key = m.index * 0x10000 + bci;
    let c = cycles.get(key);
    if (c === undefined) cycles.set(key, (c = cycleOf(m.code!, bci)));
    return c;
  };
  /**
   * An observed event at a loop step whose PcDesc is an `add` of `imm`: when the bytecode is an iinc of c and imm is
   * k times c (k >= 2), one pass of this machine code went k times around the loop (C2's unrolling). The frame
   * was at the step `sinceStep` times since the last such event (the observed one included): the loop is
   * inserted k - sinceStep more times after it. The first such event of a frame has no previous one: it counts
   * the passes the frame's recent bcis show.
   */
  const unroll = (f: CFrame, m: Method, bci: number, imm: number, tsc: number) => {
    const code = m.code!;
    if (code[bci] !== 0x84 || bci + 2 >= code.length) return; // iinc index const
    const c = (code[bci + 2] << 24) >> 24;
    if (c <= 0 || imm % c !== 0) return;
    const k = imm / c;
    if (k < 2 || k > MAX_UNROLL) return;
    let seen = f.sinceStep;
    if (f.stepBci !== bci) {
      seen = 0;
      for (let r = 0; r < RECENT; r++) if (f.recent[r] === bci) seen++;
      f.stepBci = bci;
    }
    const loop = loopAround(m, bci);
    f.sinceStep = 0;
    if (!loop) return;
    for (let n = seen; n < k; n++) {
      for (let q = 0; q < loop.length; q++) {
        out.push(EventKind.Bytecode, f.source, f.method, loop[q], code[loop[q]], tsc, INFERRED);
        note(f, loop[q]);
        // (a round that left no event: its invokes' callees left none either)
        if (isInvoke(code[loop[q]])) insertCallee(m, loop[q], tsc, SILENT_DEPTH);
      }
      stats.inserted += loop.length;
      stats.unrolled++;
    }
    f.sinceStep = 0;
  };

  const push = (method: number, last: number, source: EventSource): CFrame => {
    if (depth === frames.length) frames.push(new CFrame());
    const f = frames[depth++];
    f.reset(method, last, source, keysOf(method));
    return f;
  };
  const note = (f: CFrame, bci: number) => {
    if (bci === f.stepBci) f.sinceStep++;
    if (f.keys) f.keyValue = f.keys.after(f.last, bci, f.keyValue);
    f.last = bci;
    f.recent[f.recentAt++ % RECENT] = bci;
    f.outAtLast = flushed + out.length;
  };
  /** Inserts the path from the frame's last bytecode to `to` (see path); a keyed switch's arm is the one its
   * local's constant selects, and the arm `need` (a successor of the keyed switch `needAt`, seen next) rules out
   * paths that leave another constant in the local. */
  const fill = (f: CFrame, to: number, tsc: number, needAt = -1, need = -1) => {
    if (f.last === -2) return;
    // bytecodes with a PcDesc in this code that left no event since the last: a path that avoids them is preferred
    const avoid = f.ctx >= 0 ? universe.pcContexts[f.ctx] : null;
    let p =
      (f.keys && f.keys.path(f.last, to, f.keyValue, needAt, need, avoid, f.ctx)) ??
      (avoid && !f.keys ? plainKeysOf(f.method)?.path(f.last, to, UNKNOWN, -1, -1, avoid, f.ctx) : null) ??
      path(f.method, f.last, to);
    if (!p && to >= 0 && f.last >= 0) {
      const c = loopAround(methodOf(f.method)!, f.last);
      const at = c ? c.indexOf(to) : -1;
      if (at >= 0 && at <= LOOP_FILL) p = c!.subarray(0, at);
    }
    if (!p) {
      stats.unfilled++;
      return;
    }
    const code = methodOf(f.method)!.code!;
    // the events output since the frame's last event (if any) are those of one callee: of the invoke the frame
    // stood at, or else of the first invoke on the path; every other invoke on the path called a method that left
    // no event
    let accounted = f.outAtLast === flushed + out.length || (f.last >= 0 && isInvoke(code[f.last]));
    for (let k = 0; k < p.length; k++) {
      out.push(EventKind.Bytecode, f.source, f.method, p[k], code[p[k]], tsc, INFERRED);
      note(f, p[k]);
      if (!isInvoke(code[p[k]])) continue;
      if (accounted) silentCallee(f, tsc);
      accounted = true;
    }
    stats.inserted += p.length;
  };
  /** an event at `bci` the frame has just passed and cannot reach going forward: an echo of scheduling */
  const isEcho = (f: CFrame, bci: number): boolean => {
    if (f.last < 0 || !f.wasAt(bci)) return false;
    const m = methodOf(f.method);
    return !!m?.code && distance(m, f.last, bci) < 0;
  };
  /**
   * The frame's last event was observed (what came after it in the output is callees' events), the event at
   * `bci` cannot follow it but can follow the bytecode the frame was at before it: that event ran ahead of its
   * place (C2 hoists loads above the branch that guards them, with the PcDescs of their bytecodes and of the
   * inlined methods they are in). It is taken back out of the output, with the callees' events after it.
   */
  const takeBackHoisted = (f: CFrame, bci: number): boolean => {
    const at = f.observedAt - flushed;
    if (at < 0 || at >= out.length || pushed() - f.observedPushed > HOIST_REACH || f.beforeLast < 0 || f.last !== f.observedBci || bci === f.beforeLast) return false;
    const m = methodOf(f.method);
    if (!m?.code || distance(m, f.last, bci) >= 0 || distance(m, f.beforeLast, bci) < 0) return false;
    // (only the frame's own code and what was inlined into it runs ahead: a callee it called, compiled or interpreted,
    // ran where its events are)
    for (let k = at; k < out.length; k++) if (out.source[k] !== EventSource.Inlined && out.method[k] !== f.method) return false;
    removed += out.length - at;
    out.length = at;
    for (let r = f.beforeRecentAt; r < f.recentAt && r < f.beforeRecentAt + RECENT; r++) f.recent[r % RECENT] = -3;
    f.recentAt = f.beforeRecentAt;
    f.last = f.beforeLast;
    f.keyValue = f.beforeKeyValue;
    f.outAtLast = f.beforeOutAtLast;
    f.observedAt = -1;
    stats.hoisted++;
    return true;
  };
  /**
   * An event at a `goto` that the frame cannot reach shortly, whose target it can: C2 gives the code where two
   * ways join the PcDesc of the goto that ends one of them, so the other way passes it too. String.hashCode
   * inlined: `ifne 58` taken (the hash is cached) runs the code at 58, labelled `goto 58` at bci 50 (the end of
   * the way that stored hashIsZero): the frame passed 58, not the goto.
   */
  const isJoinLabel = (f: CFrame, bci: number): boolean => {
    if (f.last < 0) return false;
    const m = methodOf(f.method);
    const code = m?.code;
    if (!code) return false;
    if (code[bci] !== 0xa7 && code[bci] !== 0xc8) return false; // goto, goto_w
    const table = universe.successors(m);
    const o = table.of(bci);
    if (table.list[o] !== 1) return false;
    const target = table.list[o + 1];
    const d = distance(m, f.last, bci);
    if (d >= 0 && d <= MAX_FILL + 1) return false;
    const dt = distance(m, f.last, target);
    return dt >= 0 && dt <= MAX_FILL + 1;
  };
  /**
   * The frame's events so far (its own bytecodes only since its entry, at most RESTART_REACH of them) cannot be
   * followed by one at `bci`, which its entry can reach: they ran ahead of their place, and the frame starts
   * again at its entry. C2 computes an inlined fib's `n - 2` and `(n - 1) - 1` (bcis 17, 11) before its `n < 2`
   * test (bci 2): with the test false, those never ran.
   */
  const restartAtEntry = (f: CFrame, bci: number): boolean => {
    if (f.entryOut < 0 || f.last < 0) return false;
    const from = f.entryOut - flushed;
    if (from < 0 || pushed() - f.entryPushed > RESTART_REACH) return false;
    // (the memoized distances first: most events follow the frame's last one)
    const m = methodOf(f.method);
    if (!m?.code || distance(m, f.last, bci) >= 0 || (bci !== 0 && distance(m, 0, bci) < 0)) return false;
    // (one event taken back is enough when the one before it leads here: takeBackHoisted)
    if (f.beforeLast >= 0 && f.last === f.observedBci && distance(m, f.beforeLast, bci) >= 0) return false;
    for (let k = from; k < out.length; k++) if (out.kind[k] !== EventKind.Bytecode || out.method[k] !== f.method) return false;
    removed += out.length - from;
    out.length = from;
    f.entryPushed = pushed(); // (as if just entered)
    f.recent.fill(-3);
    f.recentAt = 0;
    f.last = -1;
    f.keyValue = UNKNOWN;
    f.outAtLast = f.entryOut;
    f.observedAt = -1;
    return true;
  };
  /**
   * An event at a bytecode the frame was at recently, while the frame's next event is a short way ahead: an echo
   * of the last iteration that C2 scheduled after the loop's back branch (a `ladd` of iteration i among the
   * instructions of i + 1), when the event is far ahead of where the frame stands (no short path: only around the
   * loop), or a short way ahead but with the next event around the loop from it. `i` is its index in `input`; the
   * next event is looked for among the few after it.
   */
  const isLateEcho = (f: CFrame, bci: number, input: EventStream, i: number): boolean => {
    if (f.last < 0 || !f.wasAt(bci)) return false;
    const m = methodOf(f.method);
    if (!m?.code) return false;
    const ahead = distance(m, f.last, bci);
    const near = ahead >= 0 && ahead <= MAX_FILL + 1;
    for (let j = i + 1; j < input.length && j <= i + 4; j++) {
      if (input.kind[j] !== EventKind.Bytecode || input.method[j] !== f.method) return false;
      const next = input.bci[j];
      if (next === bci) continue;
      const d = distance(m, f.last, next);
      if (d < 1 || d > MAX_FILL + 1) return false;
      if (!near) return ahead < 0 || d < ahead;
      // a short way ahead, but the next event lies around the loop from it: taking it would add a round that the
      // next event, right ahead of the frame, says did not run (C2's unrolled body computes i + 1's index before
      // i's sum, so a round's events come as 18 25 17 23 for a body 17 18 ... 23 25)
      const back = distance(m, bci, next);
      return back < 0 || ahead + back > d + MAX_FILL;
    }
    return false;
  };
  /**
   * The inlined entry at input[i] (call site `site` of frame `caller`) is a label of shared code, not a call: the
   * callee leaves again after at most SHARED_TAIL_EVENTS of its bytecodes and the caller returns at once, and
   * every way from the caller's last bytecode to the call site passes a bytecode with a PcDesc in the caller's code
   * that left no event (and that the frame was not at lately). C2 merges equal code: a leaf's `return 0` (its
   * `xor eax, eax` before the epilogue) can carry the PcDesc of the same constant in an inlined callee's return.
   * Returns the index of the callee's exit, or -1.
   */
  const sharedTail = (caller: CFrame, site: number, input: EventStream, i: number): number => {
    if (caller.last < 0 || caller.ctx < 0) return -1;
    const callee = input.method[i];
    let j = i + 1;
    for (let n = 0; j < input.length && input.kind[j] === EventKind.Bytecode && input.method[j] === callee; j++) if (++n > SHARED_TAIL_EVENTS) return -1;
    if (j + 1 >= input.length || input.kind[j] !== EventKind.Exit || input.method[j] !== callee) return -1;
    if (input.kind[j + 1] !== EventKind.Exit || input.method[j + 1] !== caller.method) return -1;
    const m = methodOf(caller.method);
    if (!m?.code) return -1;
    const avoid = universe.pcContexts[caller.ctx];
    const blocked = (b: number) => b !== site && avoid.has(b) && !caller.wasAt(b);
    return reachesAvoiding(universe.successors(m), caller.last, site, blocked) ? -1 : j;
  };
  /** The frame stands at an invoke whose callee left no event: the callee's bytecodes, entry to return, when one
   * method fits and its path is unique and short. */
  const silentCallee = (f: CFrame, tsc: number) => {
    if (f.last < 0 || f.outAtLast !== flushed + out.length) return;
    const caller = methodOf(f.method);
    if (!caller?.code || !isInvoke(caller.code[f.last])) return;
    insertCallee(caller, f.last, tsc, SILENT_DEPTH);
  };
  /** The certain path of the callee of the invoke at `bci` of `caller`, and of the invokes on it (they left no
   * event either), `depth` levels deep; false when there is none. */
  const insertCallee = (caller: Method, bci: number, tsc: number, depth: number): boolean => {
    const callee = universe.mostSpecificTarget(caller, bci);
    if (!callee || !callee.code || callee.native) return false;
    const p = path(callee.id, -1, -1);
    if (!p) return false;
    out.push(EventKind.Entry, EventSource.Inlined, callee.id, -1, -1, tsc, INFERRED_ENTRY);
    for (let k = 0; k < p.length; k++) {
      const op = callee.code[p[k]];
      out.push(EventKind.Bytecode, EventSource.Inlined, callee.id, p[k], op, tsc, INFERRED);
      if (depth > 1 && isInvoke(op)) insertCallee(callee, p[k], tsc, depth - 1);
    }
    out.push(EventKind.Exit, EventSource.Inlined, callee.id, -1, -1, tsc, INFERRED_ENTRY);
    stats.inserted += p.length;
    stats.silentCallees++;
    return true;
  };

  /** Reads input[from..end) (looking ahead past `end`); returns the index of the first event not read (a step may
   * read a few events past `end` at once: sharedTail). */
  const read = (input: EventStream, from: number, end: number): number => {
    let i = from;
    for (; i < end; i++) {
      const kind = input.kind[i];
      const source = input.source[i];
      const method = input.method[i];
      const bci = input.bci[i];
      const tsc = input.tsc[i];
      const compiled = source === EventSource.Compiled || source === EventSource.Inlined;
      if (compiled && kind === EventKind.Entry) {
        const caller = depth ? frames[depth - 1] : undefined;
        const site = source === EventSource.Inlined ? input.aux[i] - 1 : -1;
        const m = caller && methodOf(caller.method);
        const code = m?.code;
        const ahead = !!code && site >= 0 && site < code.length && (caller!.last < 0 || distance(m!, caller!.last, site) >= 0);
        const tail = caller && ahead && caller.last !== site ? sharedTail(caller, site, input, i) : -1;
        if (tail >= 0) {
          stats.sharedTails++;
          i = tail;
          continue;
        }
        if (caller && ahead && caller.last !== site) {
          // an inlined callee begins: its caller has reached the call site (the callee's code may come first in
          // the machine code, before any event of the caller's own bytecodes up to the call)
          fill(caller, site, tsc);
          out.push(EventKind.Bytecode, caller.source, caller.method, site, code[site], tsc, INFERRED);
          note(caller, site);
          stats.callSites++;
        }
        push(method, -1, source);
      } else if (compiled && kind === EventKind.OsrEntry) {
        push(method, bci >= 0 ? bci : -2, EventSource.Compiled);
      } else if (compiled && kind === EventKind.Exit) {
        const f = depth ? frames[depth - 1] : undefined;
        if (f && f.method === method) {
          silentCallee(f, tsc);
          fill(f, -1, tsc);
          depth--;
        } else depth = 0; // out of step (an exception unwound frames): start afresh
      } else if (compiled && kind === EventKind.Bytecode && method >= 0 && bci >= 0) {
        stats.compiledIn++;
        // a frame we did not see enter (the stream's start, a gap, unwinding): from here on
        while (depth && frames[depth - 1].method !== method) depth--;
        const f = depth ? frames[depth - 1] : push(method, -2, source);
        const ctx = Math.floor(input.aux[i] / COMPILED_CONTEXT) - 1;
        if (ctx >= 0) f.ctx = ctx;
        if (f.last === bci) {
          stats.merged++;
          continue;
        }
        if (restartAtEntry(f, bci)) stats.restarts++;
        if (isEcho(f, bci) || isLateEcho(f, bci, input, i)) {
          stats.echoes++;
          continue;
        }
        if (isJoinLabel(f, bci)) {
          stats.joinLabels++;
          continue;
        }
        takeBackHoisted(f, bci);
        // (what taking this event back would restore: it and the path filled up to it)
        const mark = flushed + out.length;
        const beforeLast = f.last;
        const beforeKeyValue = f.keyValue;
        const beforeOutAtLast = f.outAtLast;
        const beforeRecentAt = f.recentAt;
        silentCallee(f, tsc);
        const s = f.keys ? f.keys.switchAt(bci) : -1;
        if (f.keys && s >= 0) {
          // at a keyed switch (or its load): the arm seen next says which constant the local holds
          const load = f.keys.loads.get(s)!;
          let need = -1;
          let j = i + 1;
          for (; j < input.length && j <= i + 4; j++) {
            if (input.kind[j] !== EventKind.Bytecode || input.method[j] !== method) break;
            const b = input.bci[j];
            if (b === bci || b === s || b === load) continue;
            need = f.keys.armTo(s, b);
            break;
          }
          // the frame returns next: an arm whose first bytecode has a PcDesc here (that did not run) was not taken
          if (need === -1 && j < input.length && input.kind[j] === EventKind.Exit && input.method[j] === method && f.ctx >= 0) {
            const avoid = universe.pcContexts[f.ctx];
            const unseen = successors(methodOf(method)!.code!, s).filter((t) => avoid.has(t));
            if (unseen.length === 1) need = -2 - unseen[0];
          }
          fill(f, bci, tsc, s, need);
        } else fill(f, bci, tsc);
        f.source = source;
        f.observedAt = mark;
        f.observedPushed = mark + removed;
        f.observedBci = bci;
        f.beforeLast = beforeLast;
        f.beforeKeyValue = beforeKeyValue;
        f.beforeOutAtLast = beforeOutAtLast;
        f.beforeRecentAt = beforeRecentAt;
        // (aux of an observed compiled bytecode: the immediate of an add at its PcDesc, used here and not kept)
        out.push(kind, source, method, bci, input.opcode[i], tsc, 0);
        const m = methodOf(method);
        const code = m?.code;
        if (code && bci < code.length) out.opcode[out.length - 1] = code[bci];
        note(f, bci);
        const imm = input.aux[i] % COMPILED_CONTEXT;
        if (imm >= 2 && code && bci < code.length) unroll(f, m!, bci, imm, tsc);
        continue;
      } else if (kind === EventKind.Gap || kind === EventKind.Exception || kind === EventKind.Deopt) {
        // what ran in between is unknown: no path is drawn across it
        for (let d = 0; d < depth; d++) frames[d].last = -2;
        if (kind !== EventKind.Exception) depth = 0;
      }
      out.push(kind, source, method, bci, input.opcode[i], tsc, input.aux[i]);
      // a frame that begins has output nothing since: the first invoke on its first fill left no event either
      if (compiled && (kind === EventKind.Entry || kind === EventKind.OsrEntry) && depth) {
        frames[depth - 1].outAtLast = flushed + out.length;
        if (kind === EventKind.Entry) {
          frames[depth - 1].entryOut = flushed + out.length;
          frames[depth - 1].entryPushed = pushed();
        }
      }
    }
    return i;
  };
  // (a part's last LOOK_AHEAD events are read with the next part's first)
  const parts = new PartReader(LOOK_AHEAD, read);
  const feed = (input: EventStream): void => parts.feed(input);
  const flush = (sink: (events: EventStream) => void): void => {
    const n = out.length - KEEP_BACK;
    if (n <= 0) return;
    sink(out.view(0, n));
    flushed += n;
    out.dropFront(n);
  };
  const finish = (): { events: EventStream; stats: CompletionStats } => {
    parts.finish();
    return { events: out, stats };
  };
  return { out, feed, flush, finish };
}

/**
 * Breadth-first search over a method's successors for a shortest path's length, with no allocation per search:
 * the visited marks are generation stamps by bci, the frontiers typed arrays.
 */
class BoundedBfs {
  private stamps = new Uint32Array(256);
  private gen = 0;
  private frontier = new Int32Array(256);
  private next = new Int32Array(256);

  /** Length of a shortest path from `from` to `to` over successors (1 for a direct successor), or -1 when `to` is
   * not within `limit` steps. */
  distance(table: SuccessorTable, from: number, to: number, limit: number): number {
    const n = table.code.length;
    if (this.stamps.length < n) {
      this.stamps = new Uint32Array(n);
      this.frontier = new Int32Array(n);
      this.next = new Int32Array(n);
      this.gen = 0;
    }
    if (this.gen === 0xffffffff) {
      this.stamps.fill(0);
      this.gen = 0;
    }
    const gen = ++this.gen;
    const stamps = this.stamps;
    let frontier = this.frontier;
    let next = this.next;
    let size = 0;
    frontier[size++] = from;
    if (from >= 0 && from < n) stamps[from] = gen;
    for (let d = 1; d <= limit && size > 0; d++) {
      let nextSize = 0;
      for (let k = 0; k < size; k++) {
        const o = table.of(frontier[k]);
        const list = table.list;
        for (let j = o + 1, end = o + 1 + list[o]; j < end; j++) {
          const s = list[j];
          if (s === to) return d;
          // a bci outside the code has no successors: nothing to visit
          if (s >= 0 && s < n && stamps[s] !== gen) {
            stamps[s] = gen;
            next[nextSize++] = s;
          }
        }
      }
      const t = frontier;
      frontier = next;
      next = t;
      size = nextSize;
    }
    return -1;
  }
}

/** The largest unrolling taken from an `add` at a loop step (C2 unrolls up to 16 times; vectorized loops more). */
const MAX_UNROLL = 64;

/**
 * The bytecodes once around the loop through `bci`: the unique shortest way from `bci` back to it (at most
 * MAX_FORCED bytecodes, `bci` itself last), or null when there is none or two.
 */
function cycleOf(code: Uint8Array, bci: number): Int32Array | null {
  // (a target one step past MAX_FORCED still counts: bci itself is the last of the bytecodes)
  const { prev, found } = layers(code, successors(code, bci), bci, 1, MAX_FORCED + 1, (b) => b === bci);
  if (found < 0) return null;
  const out: number[] = [];
  for (let b = bci; ; ) {
    const p = prev.get(b);
    if (p === -2 || p === undefined) return null;
    out.push(b);
    if (p === bci) break;
    b = p;
  }
  return Int32Array.from(out.reverse());
}

/**
 * Bytecodes a forced path may not pass: invokedynamic and athrow. Other invokes may be on it: a callee that ran as a
 * call leaves an event at its call site (a call has a PcDesc), so an invoke on a forced path is an inlined callee or
 * an intrinsic that left no event, inserted as a silent callee where its body is certain.
 */
const stopsForcedPath = (op: number) => op === 0xba || op === 0xbf;
/** The longest forced path filled (a loop body with no PcDesc but its loop test: C1's OSR code, say). */
const MAX_FORCED = 256;
/**
 * The longest piece of a loop filled between two events of a frame when no short path joins them but the second is
 * on the unique way once around the loop from the first (C2's unrolled bodies leave PcDescs a round apart).
 * Measured on examples (threads main, exceptions, switches JIT): 32 and 256 give the same; 0 loses 0.2 points on
 * threads main.
 */
const LOOP_FILL = 32;
const isInvoke = (op: number) => op >= 0xb6 && op <= 0xb9;

/**
 * The bytecodes strictly between `from` and `to` when the way is forced: exactly one successor of `from` (bci 0
 * for from = -1) starts a chain of bytecodes with one successor each that reaches `to` (-1: a return, included),
 * within MAX_FORCED and through no invokedynamic or athrow; else null. Such a path has no alternative, however long:
 * where a compiled loop leaves PcDescs only at its test and back branch, its body between them ran.
 */
function forced(code: Uint8Array, from: number, to: number): Int32Array | null {
  const starts = from === -1 ? [0] : successors(code, from);
  let found: number[] | null = null;
  for (const s0 of starts) {
    const chain: number[] = [];
    let b = s0;
    let ok = false;
    for (let steps = 0; steps <= MAX_FORCED; steps++) {
      if (b === to) {
        ok = true;
        break;
      }
      if (to === -1 && isReturn(code[b])) {
        chain.push(b);
        ok = true;
        break;
      }
      if (stopsForcedPath(code[b]) && !isInvoke(code[b])) break;
      const next = successors(code, b);
      if (next.length !== 1) break;
      chain.push(b);
      b = next[0];
    }
    if (!ok) continue;
    if (found) return null; // two ways: not forced
    found = chain;
  }
  return found ? Int32Array.from(found) : null;
}

/**
 * Breadth-first search over a method's successors from `starts` (at depth `d0`, predecessor `startPrev`) to the
 * first depth (at most `maxDepth`) where `isTarget` accepts a bci. Returns each bci's predecessor on a shortest
 * way (-2: reached two ways at the same depth) and the target (-1: none within reach, -2: two at that depth).
 */
function layers(code: Uint8Array, starts: readonly number[], startPrev: number | undefined, d0: number, maxDepth: number, isTarget: (b: number) => boolean): { prev: Map<number, number>; found: number } {
  const prev = new Map<number, number>();
  const depth = new Map<number, number>();
  let frontier: number[] = [];
  for (const s of starts) {
    if (depth.has(s)) {
      prev.set(s, -2);
      continue;
    }
    depth.set(s, d0);
    if (startPrev !== undefined) prev.set(s, startPrev);
    frontier.push(s);
  }
  let found = -1;
  for (let d = d0; frontier.length && d <= maxDepth && found < 0; d++) {
    const next: number[] = [];
    for (const b of frontier) {
      if (isTarget(b)) {
        if (found >= 0 && found !== b) return { prev, found: -2 }; // two targets at the same depth
        found = b;
        continue;
      }
      for (const s of successors(code, b)) {
        const ds = depth.get(s);
        if (ds === undefined) {
          depth.set(s, d + 1);
          prev.set(s, b);
          next.push(s);
        } else if (ds === d + 1 && prev.get(s) !== b) prev.set(s, -2); // reached two ways: ambiguous
      }
    }
    frontier = next;
  }
  return { prev, found };
}

/**
 * Breadth-first search over successors from `from` (-1: the method's entry) to `to` (-1: any return
 * instruction). Returns the bcis strictly between the two (for from = -1, bci 0 is included unless it is `to`;
 * for to = -1, the return reached is included), or null if `to` is not within MAX_FILL steps or two shortest
 * paths differ.
 */
function shortest(code: Uint8Array, from: number, to: number): Int32Array | null {
  if (to === -1 && from >= 0 && isReturn(code[from])) return new Int32Array(0); // it was the return
  if (from === -1 && to === 0) return new Int32Array(0);
  const isTo = (b: number) => (to === -1 && isReturn(code[b]) && b !== from) || b === to;
  // from the method's entry: bci 0 is the first step (its predecessor -1)
  const { prev, found } = from === -1 ? layers(code, [0], -1, 1, MAX_FILL, isTo) : layers(code, [from], undefined, 0, MAX_FILL, isTo);
  if (found < 0) return null;
  const bcis: number[] = [];
  for (let b = found; ; ) {
    const p = prev.get(b);
    if (p === -2) return null;
    if (b !== to) bcis.push(b);
    if (p === undefined || p === -1 || p === from) break;
    b = p;
  }
  if (from === -1 && to !== 0 && bcis[bcis.length - 1] !== 0) bcis.push(0);
  return Int32Array.from(bcis.reverse());
}

/** Whether some way through the method's successors leads from `from` to `to` without a bytecode `blocked` says no to. */
function reachesAvoiding(table: SuccessorTable, from: number, to: number, blocked: (bci: number) => boolean): boolean {
  const seen = new Set<number>([from]);
  const todo = [from];
  while (todo.length) {
    const o = table.of(todo.pop()!);
    const list = table.list;
    for (let k = 1; k <= list[o]; k++) {
      const t = list[o + k];
      if (t === to) return true;
      if (t < 0 || seen.has(t) || blocked(t)) continue;
      seen.add(t);
      todo.push(t);
    }
  }
  return false;
}
