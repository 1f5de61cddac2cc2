/**
 * Lookahead for resuming after lost data: how far the interpreted opcodes that come next can be run by a method,
 * walked as an NFA over its successor table. Attribution uses it to choose which frame of its stack the trace goes
 * on in after a gap (the top frame's method somewhere else, a caller right after its call, a caller elsewhere).
 */
import { switchAllows } from './switch-arms';
import { EventKind, EventSource, EventStream } from './events';
import { ENTRY_CLASS_MASK, EntryClass } from './java';
import { SuccessorTable } from './successor-table';

/** At most this many opcodes are looked at: enough to tell a loop body from a three-bytecode constructor. */
export const LOOKAHEAD_MAX = 48;
/** At most this many events are read for them (calls stepped over included). */
export const LOOKAHEAD_SPAN = 4096;
/** A walk holding more states than this at once stops (it tells nothing any more). */
const WALK_STATES_MAX = 4096;

const TABLESWITCH = 0xaa;
const LOOKUPSWITCH = 0xab;

/** Whether `op` returns from its method (ireturn .. return). */
export const isReturn = (op: number) => op >= 0xac && op <= 0xb1;
const entryClass = (aux: number): EntryClass => aux & ENTRY_CLASS_MASK;
/** Whether `op` is a tableswitch or lookupswitch. */
export const isSwitchOpcode = (op: number) => op === TABLESWITCH || op === LOOKUPSWITCH;
/** Whether `op` is a conditional branch (if*, if_*cmp*, ifnull, ifnonnull). */
export const isIfOpcode = (op: number) => (op >= 153 && op <= 166) || op === 198 || op === 199;

/**
 * Whether the instruction at `bci` may go on to successor `t` given `aux`, the outcome the trace told of it
 * (an if*: 1 taken, -1 not taken; a switch: the way its template went, switch-arms.ts; 0 or any other
 * instruction: any successor).
 */
export function outcomeAllows(code: Uint8Array, bci: number, t: number, aux: number): boolean {
  if (aux === 0) return true;
  const op = code[bci];
  if (op === TABLESWITCH || op === LOOKUPSWITCH) return switchAllows(code, bci, t, aux);
  if (!isIfOpcode(op)) return true;
  return aux > 0 ? t === bci + (((code[bci + 1] << 24) >> 16) | code[bci + 2]) : t === bci + 3;
}

/**
 * The frame's interpreted opcodes in `input` from event `from` on, with their aux (an if*'s outcome), into `ops`
 * and `aux`: what calls it makes are stepped over (an interpreted callee's entry up to its return; a native,
 * intrinsic or abstract entry runs no bytecode), up to the first event that is not that (a gap, compiled code, an
 * exception, a deoptimization), through the frame's first return, at most LOOKAHEAD_MAX. Returns how many.
 */
export function collectOpcodes(input: EventStream, from: number, ops: Int32Array, aux: Int32Array): number {
  let n = 0;
  let nested = 0;
  const max = Math.min(ops.length, aux.length, LOOKAHEAD_MAX);
  for (let i = from; i < input.length && n < max && i - from < LOOKAHEAD_SPAN; i++) {
    if (input.source[i] !== EventSource.Interpreter) break;
    const kind = input.kind[i];
    if (kind === EventKind.Entry) {
      if (entryClass(input.aux[i]) === EntryClass.Bytecode) nested++;
      continue;
    }
    if (kind !== EventKind.Bytecode) break;
    const op = input.opcode[i];
    if (op < 0) break;
    if (nested > 0) {
      if (isReturn(op)) nested--;
      continue;
    }
    ops[n] = op;
    aux[n++] = input.aux[i];
    if (isReturn(op)) break;
  }
  return n;
}

/** Reusable buffers of a walk (one per attribution: no allocation per call). */
export class FitWalk {
  private cur: Int32Array = new Int32Array(64);
  private nxt: Int32Array = new Int32Array(64);
  private mark = new Int32Array(0);
  private gen = 0;

  /**
   * How many of ops[0..n) method `code` runs in order from one of `starts` (bcis, the first `count`; those
   * whose opcode is not ops[0] are left out), following `table`'s successors and each if*'s outcome in `aux`
   * (1 taken, -1 not taken, 0 unknown). 0 when no start holds ops[0].
   */
  fit(code: Uint8Array, table: SuccessorTable, starts: Int32Array, count: number, ops: Int32Array, aux: Int32Array, n: number): number {
    if (n === 0) return 0;
    if (this.mark.length < code.length) this.mark = new Int32Array(Math.max(code.length, this.mark.length * 2));
    let curN = 0;
    this.gen++;
    for (let k = 0; k < count; k++) {
      const b = starts[k];
      if (b < 0 || b >= code.length || code[b] !== ops[0] || this.mark[b] === this.gen) continue;
      this.mark[b] = this.gen;
      this.cur = pushed(this.cur, curN);
      this.cur[curN++] = b;
    }
    if (curN === 0) return 0;
    for (let k = 1; k < n; k++) {
      const op = ops[k];
      let nxtN = 0;
      this.gen++;
      for (let j = 0; j < curN; j++) {
        const bci = this.cur[j];
        const o = table.of(bci);
        const list = table.list;
        for (let x = o + 1, end = o + 1 + list[o]; x < end; x++) {
          const t = list[x];
          if (code[t] !== op || this.mark[t] === this.gen || !outcomeAllows(code, bci, t, aux[k - 1])) continue;
          this.mark[t] = this.gen;
          this.nxt = pushed(this.nxt, nxtN);
          this.nxt[nxtN++] = t;
        }
      }
      if (nxtN === 0 || nxtN > WALK_STATES_MAX) return k;
      const swap = this.cur;
      this.cur = this.nxt;
      this.nxt = swap;
      curN = nxtN;
    }
    return n;
  }
}

function pushed(a: Int32Array, n: number): Int32Array {
  if (n < a.length) return a;
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
