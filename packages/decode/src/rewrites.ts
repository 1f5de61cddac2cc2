/**
 * What HotSpot's bytecode rewriting tells about interpreted code. The interpreter rewrites some bytecodes of a
 * method in place the first time it runs them (getfield -> fast_agetfield, aload_0 -> fast_aload_0, iload ->
 * fast_iload, ...), and the flow layer tells which form ran (BytecodeForm, java.ts). So an interpreted bytecode in
 * its class-file form had never run at that bci, in any thread; in a rewritten form, it had. Methods with the same
 * bytecode (twin classes, copy-pasted switch cases) are told apart by it: the first run of a twin is one whose
 * bytecodes have not run yet.
 */
import { BytecodeForm } from './events';

const GETFIELD = 180;
const ALOAD_0 = 42;
const ILOAD = 21;

/**
 * Whether an interpreted `op` at `bci` of `code`, run in its class-file form (BytecodeForm.Original), was that
 * bci's first run. getfield is rewritten by its first run. aload_0 waits while a getfield follows (its pair is
 * rewritten once that getfield is); iload waits while an iload follows (the pair becomes fast_iload2): for those
 * the class-file form may be a second run. A run that throws before the template rewrites (a getfield on null)
 * leaves the class-file form too: strictly, the form tells no earlier run at the bci completed
 * (test/e2e/rewrites.test.ts checks both against single-stepping).
 */
export function originalMeansFirst(code: Uint8Array, bci: number, op: number): boolean {
  if (op === GETFIELD) return true;
  if (op === ALOAD_0) return code[bci + 1] !== GETFIELD;
  if (op === ILOAD) return code[bci + 2] !== ILOAD;
  return false;
}

/**
 * Whether a method's bytecodes as the VM had them at its death (METHOD_RUNS), `end`, say that no interpreted run of
 * `op` at `bci` ever completed, in any thread: a getfield still in its class-file form (its first completed run
 * rewrites it; classes from the CDS archive hold `nofast_getfield` instead, which never changes). Switch cases
 * that differ only in constants are told apart by it where a case that never ran reads a field (ANTLR parsers'
 * `state.failed` tests).
 */
export function endFormSaysNeverRan(end: Uint8Array | null, bci: number, op: number): boolean {
  return end !== null && op === GETFIELD && end[bci] === GETFIELD;
}

/** The (method, bci) pairs one thread has been attributed interpreted bytecodes at, by Method.index. */
export class RanBytecodes {
  /** by Method.index: where the method's bits begin in `bits` (-1: none ran yet) */
  private readonly base: Int32Array;
  private bits = new Uint8Array(1 << 16);
  private used = 0;

  constructor(
    methods: number,
    private readonly codeLength: (method: number) => number,
  ) {
    this.base = new Int32Array(methods).fill(-1);
  }

  mark(method: number, bci: number): void {
    let b = this.base[method];
    if (b < 0) {
      const n = this.codeLength(method);
      if (this.used + n > this.bits.length) {
        const grown = new Uint8Array(Math.max(this.bits.length * 2, this.used + n));
        grown.set(this.bits);
        this.bits = grown;
      }
      b = this.base[method] = this.used;
      this.used += n;
    }
    if (bci >= 0) this.bits[b + bci] = 1;
  }

  ran(method: number, bci: number): boolean {
    const b = this.base[method];
    return b >= 0 && bci >= 0 && this.bits[b + bci] === 1;
  }

  /**
   * How much the interpreter's rewriting speaks against a bytecode event of form `form` at (method, bci) of
   * `code`: STRONG when it ran in its class-file form at a bci this thread has run (impossible, unless an earlier
   * attribution was wrong), WEAK when it ran rewritten at a bci this thread has not run (another thread may have,
   * or the run was in lost data), else 0.
   */
  against(form: number, method: number, bci: number, code: Uint8Array, op: number): number {
    if (form === BytecodeForm.Original) return originalMeansFirst(code, bci, op) && this.ran(method, bci) ? STRONG : 0;
    if (form === BytecodeForm.Rewritten) return this.ran(method, bci) ? 0 : WEAK;
    return 0;
  }
}

/** RanBytecodes.against's weights: any strong count outweighs the weak ones of a frame. */
export const STRONG = 1 << 20;
export const WEAK = 1;
