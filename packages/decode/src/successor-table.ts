/**
 * A method's control-flow successors, memoized per bci in flat typed arrays: the NFA of attribute.ts and the
 * path searches of complete.ts ask for the same few instructions millions of times, and classfile's
 * `successors` allocates a DataView and an array on every call.
 */
import { forEachInstruction, successors } from '@jportal/classfile';

export class SuccessorTable {
  /**
   * The entries: at each offset that `of` returns, the number of successors and then the successors, in the
   * order classfile's `successors` gives them. Offset 0 holds the empty entry (bcis outside the code).
   * Read it after calling `of`: computing an entry may reallocate it.
   */
  list: Int32Array = new Int32Array(64);
  private used = 1;
  /** bci -> offset of its entry in `list`, 0 while not computed yet (offset 0 is never a computed entry) */
  private readonly at: Int32Array;
  private starts: Int32Array | null = null;

  constructor(readonly code: Uint8Array) {
    this.at = new Int32Array(code.length);
  }

  /** Offset in `list` of the successors of the instruction at `bci`: list[o] of them, at o + 1 .. o + list[o]. */
  of(bci: number): number {
    if (bci < 0 || bci >= this.at.length) return 0;
    const o = this.at[bci];
    return o !== 0 ? o : this.compute(bci);
  }

  /** The bcis of the instructions, in order, up to the first malformed one (as classfile's forEachInstruction). */
  instructions(): Int32Array {
    if (!this.starts) {
      const bcis: number[] = [];
      forEachInstruction(this.code, (b) => {
        bcis.push(b);
      });
      this.starts = Int32Array.from(bcis);
    }
    return this.starts;
  }

  private compute(bci: number): number {
    const s = successors(this.code, bci);
    const o = this.used;
    const need = o + 1 + s.length;
    if (need > this.list.length) {
      const bigger = new Int32Array(Math.max(need, this.list.length * 2));
      bigger.set(this.list.subarray(0, this.used));
      this.list = bigger;
    }
    this.list[o] = s.length;
    for (let k = 0; k < s.length; k++) this.list[o + 1 + k] = s[k];
    this.used = need;
    this.at[bci] = o;
    return o;
  }
}
