/**
 * The call stack of a thread, replayed from its events: every profile that needs context (calling-context trees,
 * inclusive counts, timelines, flame graphs, latency) walks a thread through this one set of rules.
 *
 * - `entry` pushes its method (-1 when the interpreter's entry was not attributed); `exit` pops its method.
 * - An `exit` of a method below the top pops the frames above it too (their exits were not seen: an exception
 *   unwound them, or data was lost). An `exit` of a method not on the stack is counted and ignored (the frame
 *   began before the trace did).
 * - A `bytecode` (or `osr-entry`) of a method that is not on top: if the method is on the stack, the frames above
 *   it are popped; otherwise it is pushed as an implicit frame (its entry was not seen). Bytecodes of unknown
 *   method (-1) belong to the top frame.
 * - Gaps leave the stack as it is (recovery, when it ran, put the lost events back).
 *
 * A thread can be walked window by window (`walkThread`): the stack carries over from one window to the next.
 * Callbacks get the event's index within the current window (`w.t`); `openedAt` holds indexes within the thread
 * (window base + index), so a visitor that needs something of the event that opened a frame keeps it itself.
 */
import { EventWindow, Kind, Profiled, ThreadEvents, windowsOf } from './model';

export interface StackVisitor {
  /** a frame was pushed: `stack[0..depth]` is the new context, `stack[depth]` = method */
  enter?(w: StackWalker, i: number, implicit: boolean): void;
  /** the top frame is about to be popped (`stack[w.depth]`); `implicit` when no exit event of its own */
  exit?(w: StackWalker, i: number, implicit: boolean): void;
  /** a bytecode event ran in the top frame */
  bytecode?(w: StackWalker, i: number): void;
  /**
   * a run of bytecode events `from..to-1` ran in the top frame, with no stack change between them (each one's
   * method is the top's, or unknown): what `bytecode` would get event by event, at once. The walker prefers it.
   */
  bytecodes?(w: StackWalker, from: number, to: number): void;
  /** a gap (lost or undecodable data); the stack is kept */
  gap?(w: StackWalker, i: number): void;
  /** an exception event */
  exception?(w: StackWalker, i: number): void;
}

export interface WalkStats {
  /** exits of methods that were not on the stack */
  unmatchedExits: number;
  /** frames pushed without an entry event */
  implicitEntries: number;
  /** frames popped without an exit event */
  implicitExits: number;
  /** the deepest stack seen */
  maxDepth: number;
  /** frames still open at the end of the thread */
  openAtEnd: number;
}

export class StackWalker {
  /** methods of the open frames, outermost first; valid up to `depth` */
  stack = new Int32Array(256);
  /** index of the top frame; -1 when the stack is empty */
  depth = -1;
  /** index within the thread of the event that opened each frame */
  openedAt = new Float64Array(256);
  readonly stats: WalkStats = { unmatchedExits: 0, implicitEntries: 0, implicitExits: 0, maxDepth: 0, openAtEnd: 0 };
  /** the events being walked (the current window) */
  t: ThreadEvents;
  /** index within the thread of t's first event */
  base = 0;

  constructor(t?: ThreadEvents) {
    this.t = t ?? EMPTY;
  }

  get top(): number {
    return this.depth >= 0 ? this.stack[this.depth] : -1;
  }

  private push(method: number, i: number, implicit: boolean, v: StackVisitor): void {
    if (++this.depth === this.stack.length) {
      const s = new Int32Array(this.stack.length * 2);
      s.set(this.stack);
      this.stack = s;
      const o = new Float64Array(this.openedAt.length * 2);
      o.set(this.openedAt);
      this.openedAt = o;
    }
    this.stack[this.depth] = method;
    this.openedAt[this.depth] = this.base + i;
    if (this.depth + 1 > this.stats.maxDepth) this.stats.maxDepth = this.depth + 1;
    if (implicit) this.stats.implicitEntries++;
    v.enter?.(this, i, implicit);
  }

  private pop(i: number, implicit: boolean, v: StackVisitor): void {
    if (implicit) this.stats.implicitExits++;
    v.exit?.(this, i, implicit);
    this.depth--;
  }

  /** the position of `method` in the stack, searching from the top; -1 if absent */
  find(method: number): number {
    for (let d = this.depth; d >= 0; d--) if (this.stack[d] === method) return d;
    return -1;
  }

  /** makes `method` the top frame: pops to it when it is open, pushes it otherwise */
  private ensureTop(method: number, i: number, v: StackVisitor): void {
    if (method < 0 || this.top === method) return;
    const d = this.find(method);
    if (d >= 0) while (this.depth > d) this.pop(i, true, v);
    else this.push(method, i, true, v);
  }

  /** Replays every event; at the end, frames still open are closed (implicit exits at index `length`). */
  walk(v: StackVisitor): WalkStats {
    this.walkWindow(this.t, this.base, v);
    return this.close(v);
  }

  /** Replays the events of one window (`base`: its first event's index within the thread); the stack stays open. */
  walkWindow(t: ThreadEvents, base: number, v: StackVisitor): void {
    this.t = t;
    this.base = base;
    const kind = t.kind;
    const method = t.method;
    const n = t.length;
    for (let i = 0; i < n; i++) {
      const m = method[i];
      switch (kind[i]) {
        case Kind.Entry:
          this.push(m, i, false, v);
          break;
        case Kind.Exit: {
          const d = m < 0 ? this.depth : this.find(m);
          if (d < 0) {
            this.stats.unmatchedExits++;
            break;
          }
          while (this.depth > d) this.pop(i, true, v);
          this.pop(i, false, v);
          break;
        }
        case Kind.Bytecode:
          this.ensureTop(m, i, v);
          if (this.depth < 0) break;
          if (v.bytecodes) {
            // the run of bytecodes that stay in this frame
            const top = this.stack[this.depth];
            let j = i + 1;
            while (j < n && kind[j] === Kind.Bytecode && (method[j] === top || method[j] < 0)) j++;
            v.bytecodes(this, i, j);
            i = j - 1;
          } else v.bytecode?.(this, i);
          break;
        case Kind.OsrEntry:
          this.ensureTop(m, i, v);
          break;
        case Kind.Gap:
          v.gap?.(this, i);
          break;
        case Kind.Exception:
          v.exception?.(this, i);
          break;
        default:
          break;
      }
    }
  }

  /** The end of the thread: frames still open are closed (implicit exits at index `length` of the last window). */
  close(v: StackVisitor): WalkStats {
    this.stats.openAtEnd = this.depth + 1;
    while (this.depth >= 0) this.pop(this.t.length, true, v);
    return this.stats;
  }
}

const EMPTY: ThreadEvents = {
  name: '', tid: -1, javaTid: -1, length: 0, kind: new Uint8Array(0), method: new Int32Array(0), bci: new Int32Array(0),
  opcode: new Int16Array(0), tsc: new Float64Array(0), endTsc: new Float64Array(0), origin: new Uint8Array(0), tier: new Uint8Array(0),
};

/** Walks one thread's stack with `v` (see the rules above). */
export function walkStacks(t: ThreadEvents, v: StackVisitor): WalkStats {
  return new StackWalker(t).walk(v);
}

/**
 * Walks thread k of `a` window by window with `v`; `onWindow` is called before each window's events (a visitor
 * that reads the events keeps the window it gets).
 */
export function walkThread(a: Profiled, k: number, v: StackVisitor, onWindow?: (w: EventWindow) => void): WalkStats {
  return walkWindows(windowsOf(a, k), v, onWindow);
}

/** A thread's events whole, or its windows: as windows. */
export function asWindows(t: ThreadEvents | Iterable<EventWindow>): Iterable<EventWindow> {
  return 'kind' in t ? [{ ...t, base: 0 }] : t;
}

/**
 * One profile's part in a walk of one thread: its visitor, what it does before each window's events (a visitor
 * that reads the events keeps the window it gets), and what it does once the thread's frames are closed.
 */
export interface ThreadWalk {
  visitor: StackVisitor;
  window?(w: EventWindow): void;
  done?(stats: WalkStats): void;
}

/**
 * A profile computed by walking every thread once: `thread(k)` is called for each thread in order (undefined: the
 * profile skips it), `finish()` after the last. Several passes share one read of the events and one walk
 * (runPasses): on a spilled trace each read inflates every window again.
 */
export interface WalkPass<R> {
  thread(k: number): ThreadWalk | undefined;
  finish(): R;
  /** the walk failed (a damaged spill, a callback threw): let go of what the pass holds outside memory */
  abort?(): void;
}

type Callback = 'enter' | 'exit' | 'gap' | 'exception';

/** A visitor's bytecodes of a run: its `bytecodes`, or its `bytecode` event by event. */
function runOf(v: StackVisitor): ((w: StackWalker, from: number, to: number) => void) | undefined {
  if (v.bytecodes) return v.bytecodes.bind(v);
  const one = v.bytecode?.bind(v);
  return one && ((w, from, to) => {
    for (let i = from; i < to; i++) one(w, i);
  });
}

/** One visitor calling each of `vs` in turn (bytecodes a run at a time: see StackVisitor.bytecodes). */
export function fanOut(vs: StackVisitor[]): StackVisitor {
  if (vs.length === 1) return vs[0];
  type Any = (w: StackWalker, i: number, implicit: boolean) => void;
  const out: Record<string, Any> = {};
  for (const c of ['enter', 'exit', 'gap', 'exception'] as Callback[]) {
    const fs = vs.filter((v) => v[c]).map((v) => (v[c] as Any).bind(v));
    if (fs.length === 1) out[c] = fs[0];
    else if (fs.length > 1)
      out[c] = (w, i, implicit) => {
        for (let j = 0; j < fs.length; j++) fs[j](w, i, implicit);
      };
  }
  const runs = vs.map(runOf).filter((f): f is NonNullable<typeof f> => !!f);
  const fan: StackVisitor = out as StackVisitor;
  if (runs.length === 1) fan.bytecodes = runs[0];
  else if (runs.length > 1)
    fan.bytecodes = (w, from, to) => {
      for (let j = 0; j < runs.length; j++) runs[j](w, from, to);
    };
  return fan;
}

/**
 * Drives passes over threads that are handed to it window by window, in thread order: what runPasses does for an
 * analysis it reads itself, for windows pushed as they arrive (a trace streamed while it is decoded, stream.ts).
 * `beginThread(k)`, `window(w)` for each of its windows, `endThread()`; after the last thread, `finish()`. When
 * anything throws, `abort()` lets go of what the unfinished passes hold.
 */
export class PassRunner {
  private parts: ThreadWalk[] = [];
  private visitor: StackVisitor = {};
  private onWindow: ThreadWalk[] = [];
  private walker: StackWalker | undefined;
  private finished = 0;
  constructor(private readonly passes: WalkPass<unknown>[]) {}

  /** starts thread k; false when no pass wants it (its windows are then ignored, and need not be read) */
  beginThread(k: number): boolean {
    this.parts = this.passes.map((p) => p.thread(k)).filter((x): x is ThreadWalk => !!x);
    // (a thread no pass wants is not walked)
    this.walker = this.parts.length ? new StackWalker() : undefined;
    this.visitor = fanOut(this.parts.map((p) => p.visitor));
    this.onWindow = this.parts.filter((p) => p.window);
    return !!this.walker;
  }

  window(w: EventWindow): void {
    if (!this.walker) return;
    for (const p of this.onWindow) p.window!(w);
    this.walker.walkWindow(w, w.base, this.visitor);
  }

  endThread(): void {
    if (!this.walker) return;
    const stats = this.walker.close(this.visitor);
    for (const p of this.parts) p.done?.(stats);
    this.walker = undefined;
    this.parts = [];
  }

  /** the passes' results, in order */
  finish(): unknown[] {
    const results: unknown[] = [];
    for (const p of this.passes) {
      results.push(p.finish());
      this.finished++;
    }
    return results;
  }

  /** the passes not finished yet (the one that threw included) let go of what they hold outside memory */
  abort(): void {
    for (const p of this.passes.slice(this.finished)) p.abort?.();
  }
}

/** Runs `passes` over one read and one walk of each thread of `a`; returns their results in order. */
export function runPasses(a: Profiled, passes: WalkPass<unknown>[]): unknown[] {
  const run = new PassRunner(passes);
  try {
    for (let k = 0; k < a.threads.length; k++) {
      if (run.beginThread(k)) for (const w of windowsOf(a, k)) run.window(w);
      run.endThread();
    }
    return run.finish();
  } catch (e) {
    run.abort();
    throw e;
  }
}

/** One pass alone (see runPasses). */
export function runPass<R>(a: Profiled, pass: WalkPass<R>): R {
  return runPasses(a, [pass])[0] as R;
}

/** walkThread over a thread's windows (or its events whole). */
export function walkWindows(windows: ThreadEvents | Iterable<EventWindow>, v: StackVisitor, onWindow?: (w: EventWindow) => void): WalkStats {
  const walker = new StackWalker();
  for (const w of asWindows(windows)) {
    onWindow?.(w);
    walker.walkWindow(w, w.base, v);
  }
  return walker.close(v);
}
