/**
 * Per-thread Java-level event streams, held column-wise in growable typed arrays (no object per event).
 * The binary form is documented in docs/decoded-format.md.
 */
import * as os from 'os';
import { grown } from './typed';

/** Bytes one event takes in an EventStream (its seven columns). */
export const EVENT_BYTES = 1 + 1 + 4 + 4 + 2 + 8 + 8;

/**
 * The most one stream may take: a thread's events are held whole (attribution reads one stream while it writes
 * another), so a stream past this would run the machine out of memory and get the process killed. Default 35%
 * of the machine's memory; JPORTAL_MAX_STREAM_BYTES overrides.
 */
export function streamByteBudget(): number {
  const env = Number(process.env.JPORTAL_MAX_STREAM_BYTES);
  return env > 0 ? env : Math.floor(os.totalmem() * 0.35);
}

/**
 * The most one stream may take when it is the one large thing its process holds (a thread's events kept for
 * analysis while the decoder streams): default 40% of the machine's memory; JPORTAL_MAX_STREAM_BYTES overrides.
 * (analyze peaked at about 1.75 times its kept stream on h2; jython short, with the stream near 50%, passed 22 of
 * 23.5 GB before it was stopped)
 */
export function heldStreamByteBudget(): number {
  const env = Number(process.env.JPORTAL_MAX_STREAM_BYTES);
  return env > 0 ? env : Math.floor(os.totalmem() * 0.4);
}

/** A stream would pass streamByteBudget(): the thread is too large to decode on this machine. */
export class EventBudgetError extends Error {
  constructor(
    readonly events: number,
    readonly budget: number,
  ) {
    const gb = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;
    const share = Math.round((100 * budget) / os.totalmem());
    const why = Number(process.env.JPORTAL_MAX_STREAM_BYTES) > 0 ? 'set by JPORTAL_MAX_STREAM_BYTES' : `${share}% of ${gb(os.totalmem())}; JPORTAL_MAX_STREAM_BYTES sets it`;
    super(`its events need more than ${gb(events * EVENT_BYTES)} (${(events / 1e6).toFixed(1)} M events), past the ${gb(budget)} one stream may hold on this machine (${why})`);
    this.name = 'EventBudgetError';
  }
}

/** The most events one stream may hold (streamByteBudget()). */
export function maxStreamEvents(): number {
  return Math.floor(streamByteBudget() / EVENT_BYTES);
}

function checkBudget(events: number, budget = streamByteBudget()): void {
  if (events * EVENT_BYTES > budget) throw new EventBudgetError(events, budget);
}

export const enum EventKind {
  /** a bytecode ran: interpreted (opcode known, method and bci not yet attributed) or compiled (method, bci) */
  Bytecode = 0,
  /** a method was entered: interpreted entry (method unknown: -1), compiled entry, or an inlined frame */
  Entry = 1,
  /** a compiled or inlined frame was left */
  Exit = 2,
  /** data is missing: `bci` holds the GapReason, `tsc` and `aux` the time bounds */
  Gap = 3,
  /** compiled code entered the deoptimization or uncommon-trap blob */
  Deopt = 4,
  /** control reached an exception path (exception blob / unwind / interpreter throw entry) */
  Exception = 5,
  /** compiled code was entered at its OSR entry (method = the compiled method, bci = its OSR bci) */
  OsrEntry = 6,
}

export const EVENT_NAMES = ['bytecode', 'entry', 'exit', 'gap', 'deopt', 'exception', 'osr-entry'];

/**
 * The `aux` of an interpreted bytecode event that is no if*: which of HotSpot's forms of it the interpreter ran. The
 * interpreter rewrites some bytecodes of a method in place the first time they run (getfield to fast_agetfield,
 * aload_0 to fast_aload_0, iload to fast_iload, ...; classes from the CDS archive hold nofast_ forms, never
 * rewritten), so the form tells whether that bytecode of its method had run before: what tells methods with the
 * same bytecode apart (attribute.ts).
 */
export const enum BytecodeForm {
  /** not told (a bytecode with one form, a nofast_ form, or one rewritten when its class was linked) */
  Unknown = 0,
  /** the form the class file holds of a bytecode the interpreter rewrites when it runs: getfield, aload_0, iload */
  Original = 2,
  /** a form the interpreter rewrote to: that bytecode of its method ran before (in some thread) */
  Rewritten = 3,
}

/**
 * Added to the `aux` of an interpreted bytecode event whose template looks up a constant-pool cache entry the
 * interpreter resolves on first use (invoke*, get/put field/static, checkcast, instanceof, ldc of a class or string):
 * RESOLVED_PATH when the template went on at once (the entry was resolved: some earlier run resolved it; not given
 * for checkcast and instanceof, whose templates go on at once for null without testing the entry), SLOW_PATH when
 * it called into the VM first (InterpreterRuntime's resolution: no earlier run had resolved it, unless the VM keeps
 * it unresolved, see resolution.ts). The form is `aux & FORM_MASK`.
 */
export const RESOLVED_PATH = 4;
export const SLOW_PATH = 8;
export const FORM_MASK = 3;

/**
 * The `aux` of an interpreted tableswitch or lookupswitch whose template the flow read to its dispatch (java.ts):
 * SWITCH_TOLD, plus SWITCH_DEFAULT when it took the default case. The way a case shows: a tableswitch tells only
 * that it took one; HotSpot's linear search of a lookupswitch of few pairs (fast_linearswitch) compares them from
 * the last down, and `floor(aux / SWITCH_DETAIL)` is how many compares it made (the pair it took is pairs less that);
 * its binary search (fast_binaryswitch, SWITCH_BINARY) chooses by cmov, and `floor(aux / SWITCH_DETAIL)` is how
 * many rounds it made, which depends on the key. (switch-arms.ts reads it.)
 */
export const SWITCH_TOLD = 16;
export const SWITCH_DEFAULT = 32;
export const SWITCH_BINARY = 64;
export const SWITCH_DETAIL = 128;

/** Where a bytecode event came from. */
export const enum EventSource {
  Interpreter = 0,
  Compiled = 1,
  /** an inlined frame of compiled code */
  Inlined = 2,
  Other = 3,
  /** copied into a gap by recovery (@jportal/recover): reconstructed, not decoded */
  Recovered = 4,
  /** inserted by reconstruction (@jportal/reconstruct) on a shortest ICFG path between two events of a frame */
  Reconstructed = 5,
}

/** EventStream.splice's values of inserted event q (of group g), per column, from the column as it was. */
export interface SpliceValues {
  kind: (g: number, q: number, old: Uint8Array) => number;
  source: (g: number, q: number, old: Uint8Array) => number;
  method: (g: number, q: number, old: Int32Array) => number;
  bci: (g: number, q: number, old: Int32Array) => number;
  opcode: (g: number, q: number, old: Int16Array) => number;
  tsc: (g: number, q: number, old: Float64Array) => number;
  aux: (g: number, q: number, old: Float64Array) => number;
}

/**
 * The `aux` of a compiled bytecode event as the flow layer makes it (java.ts; complete.ts reads it and keeps 0):
 * `imm + COMPILED_CONTEXT * (1 + context)`, `imm` the step of an unrolled loop's add at its PcDesc (else 0),
 * `context` the PcDesc's inlining context (CodeImage.pcContexts; -1 none).
 */
export const COMPILED_CONTEXT = 65536;

export class EventStream {
  kind: Uint8Array;
  source: Uint8Array;
  method: Int32Array;
  bci: Int32Array;
  opcode: Int16Array;
  tsc: Float64Array;
  aux: Float64Array;
  length = 0;
  /** How many events the columns should hold when they next grow (default: twice as many): a caller's projection. */
  growHint?: () => number;
  /**
   * The most bytes this stream may take (default streamByteBudget()): a caller that holds this one stream and
   * little else (the stream analyze keeps of a thread) may allow more.
   */
  budgetBytes?: number;

  /** `capacity`: how many events fit before the columns grow (a good guess saves copies and memory). */
  constructor(capacity = 4096) {
    const n = Math.max(16, capacity);
    checkBudget(n);
    this.kind = new Uint8Array(n);
    this.source = new Uint8Array(n);
    this.method = new Int32Array(n);
    this.bci = new Int32Array(n);
    this.opcode = new Int16Array(n);
    this.tsc = new Float64Array(n);
    this.aux = new Float64Array(n);
  }

  push(kind: EventKind, source: EventSource, method: number, bci: number, opcode: number, tsc: number, aux = 0): void {
    if (this.length === this.kind.length) this.grow();
    const i = this.length++;
    this.kind[i] = kind;
    this.source[i] = source;
    this.method[i] = method;
    this.bci[i] = bci;
    this.opcode[i] = opcode;
    this.tsc[i] = tsc;
    this.aux[i] = aux;
  }

  /** A copy holding the same events (columns cut to the length). */
  clone(): EventStream {
    const c = new EventStream(this.length);
    const n = this.length;
    c.kind.set(this.kind.subarray(0, n));
    c.source.set(this.source.subarray(0, n));
    c.method.set(this.method.subarray(0, n));
    c.bci.set(this.bci.subarray(0, n));
    c.opcode.set(this.opcode.subarray(0, n));
    c.tsc.set(this.tsc.subarray(0, n));
    c.aux.set(this.aux.subarray(0, n));
    c.length = n;
    return c;
  }

  private grow(need = this.kind.length + 1): void {
    // twice the room (or the caller's projection), at least `need`, or what is left of the budget (past it:
    // EventBudgetError)
    const want = Math.max(need, this.growHint ? Math.max(this.kind.length + 4096, this.growHint()) : this.kind.length * 2);
    const budget = this.budgetBytes ?? streamByteBudget();
    const n = Math.max(16, Math.min(want, Math.floor(budget / EVENT_BYTES)));
    if (n < need) checkBudget(need, budget);
    this.kind = grown(this.kind, n);
    this.source = grown(this.source, n);
    this.method = grown(this.method, n);
    this.bci = grown(this.bci, n);
    this.opcode = grown(this.opcode, n);
    this.tsc = grown(this.tsc, n);
    this.aux = grown(this.aux, n);
  }

  /** Events [from, to) as a stream over the same memory (valid until this stream changes). */
  view(from: number, to: number): EventStream {
    const e = new EventStream(0);
    e.kind = this.kind.subarray(from, to);
    e.source = this.source.subarray(from, to);
    e.method = this.method.subarray(from, to);
    e.bci = this.bci.subarray(from, to);
    e.opcode = this.opcode.subarray(from, to);
    e.tsc = this.tsc.subarray(from, to);
    e.aux = this.aux.subarray(from, to);
    e.length = to - from;
    return e;
  }

  /** Moves event `i` after the `k` events that follow it (they move one place forward). */
  moveAfter(i: number, k: number): void {
    if (k <= 0) return;
    const cols = [this.kind, this.source, this.method, this.bci, this.opcode, this.tsc, this.aux];
    for (const c of cols) {
      const v = c[i];
      c.copyWithin(i, i + 1, i + 1 + k);
      c[i + k] = v;
    }
  }

  /** Drops the first `n` events (the rest move to the front; the room stays). */
  dropFront(n: number): void {
    const len = this.length;
    this.kind.copyWithin(0, n, len);
    this.source.copyWithin(0, n, len);
    this.method.copyWithin(0, n, len);
    this.bci.copyWithin(0, n, len);
    this.opcode.copyWithin(0, n, len);
    this.tsc.copyWithin(0, n, len);
    this.aux.copyWithin(0, n, len);
    this.length = len - n;
  }

  /** Cuts the columns to the length, one at a time (so only one column is ever held twice). */
  trim(): void {
    const n = this.length;
    if (this.kind.length <= n + (n >> 6) + 1024) return;
    this.kind = this.kind.slice(0, n);
    this.source = this.source.slice(0, n);
    this.method = this.method.slice(0, n);
    this.bci = this.bci.slice(0, n);
    this.opcode = this.opcode.slice(0, n);
    this.tsc = this.tsc.slice(0, n);
    this.aux = this.aux.slice(0, n);
  }

  /**
   * Inserts events, in place, one column at a time (so at most one column is ever held twice): group g's events
   * (`first[g]` to `first[g + 1]` - 1, q numbering all inserted events) go before event `at[g]` (ascending; the
   * length appends). `values` gives each column's value of inserted event q of group g from that column as it
   * was (`old`): a column's values may read only its own old column.
   */
  splice(at: ArrayLike<number>, first: ArrayLike<number>, groups: number, values: SpliceValues): void {
    const n = this.length;
    const total = groups > 0 ? first[groups] - first[0] : 0;
    if (total === 0) return;
    checkBudget(n + total, this.budgetBytes);
    const merge = <T extends Uint8Array | Int16Array | Int32Array | Float64Array>(col: T, make: (len: number) => T, value: (g: number, q: number, old: T) => number): T => {
      const out = make(n + total);
      let from = 0;
      let to = 0;
      for (let g = 0; g < groups; g++) {
        const a = at[g];
        out.set(col.subarray(from, a), to);
        to += a - from;
        from = a;
        for (let q = first[g]; q < first[g + 1]; q++) out[to++] = value(g, q, col);
      }
      out.set(col.subarray(from, n), to);
      return out;
    };
    this.kind = merge(this.kind, (l) => new Uint8Array(l), values.kind);
    this.source = merge(this.source, (l) => new Uint8Array(l), values.source);
    this.method = merge(this.method, (l) => new Int32Array(l), values.method);
    this.bci = merge(this.bci, (l) => new Int32Array(l), values.bci);
    this.opcode = merge(this.opcode, (l) => new Int16Array(l), values.opcode);
    this.tsc = merge(this.tsc, (l) => new Float64Array(l), values.tsc);
    this.aux = merge(this.aux, (l) => new Float64Array(l), values.aux);
    this.length = n + total;
  }

  /**
   * The stream a caller keeps of a whole thread while the decoder streams into it (`jportal analyze`): it may take
   * heldStreamByteBudget(), and grows a quarter at a time (its columns one at a time), so little room is left over.
   */
  static held(): EventStream {
    const e = new EventStream(1 << 16);
    e.budgetBytes = heldStreamByteBudget();
    e.growHint = () => Math.ceil(e.kind.length * 1.25) + (1 << 16);
    return e;
  }

  /** Appends another stream's events, column by column. */
  appendStream(o: EventStream): void {
    const n = o.length;
    if (this.length + n > this.kind.length) this.grow(this.length + n);
    const at = this.length;
    this.kind.set(o.kind.subarray(0, n), at);
    this.source.set(o.source.subarray(0, n), at);
    this.method.set(o.method.subarray(0, n), at);
    this.bci.set(o.bci.subarray(0, n), at);
    this.opcode.set(o.opcode.subarray(0, n), at);
    this.tsc.set(o.tsc.subarray(0, n), at);
    this.aux.set(o.aux.subarray(0, n), at);
    this.length += n;
  }

  /** A stream over column buffers (from a worker) holding `n` events each: wrapped, not copied. */
  static fromColumns(cols: Record<string, ArrayBuffer>, n: number): EventStream {
    const e = new EventStream(0);
    e.kind = new Uint8Array(cols.kind, 0, n);
    e.source = new Uint8Array(cols.source, 0, n);
    e.method = new Int32Array(cols.method, 0, n);
    e.bci = new Int32Array(cols.bci, 0, n);
    e.opcode = new Int16Array(cols.opcode, 0, n);
    e.tsc = new Float64Array(cols.tsc, 0, n);
    e.aux = new Float64Array(cols.aux, 0, n);
    e.length = n;
    return e;
  }

  /** The columns in file order (docs/decoded-format.md). */
  columns(): { name: string; type: string; data: ArrayBufferView }[] {
    const n = this.length;
    return [
      { name: 'kind', type: 'u8', data: this.kind.subarray(0, n) },
      { name: 'source', type: 'u8', data: this.source.subarray(0, n) },
      { name: 'method', type: 'i32', data: this.method.subarray(0, n) },
      { name: 'bci', type: 'i32', data: this.bci.subarray(0, n) },
      { name: 'opcode', type: 'i16', data: this.opcode.subarray(0, n) },
      { name: 'tsc', type: 'f64', data: this.tsc.subarray(0, n) },
      { name: 'aux', type: 'f64', data: this.aux.subarray(0, n) },
    ];
  }
}
