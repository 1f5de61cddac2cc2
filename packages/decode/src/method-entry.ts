/**
 * What the interpreter's entry into a method tells about which method it is. The flow layer reads the entry
 * codelet (java.ts) and writes into the `entry` event's aux:
 * - how many rounds the loop that clears the locals beyond the parameters made: the method's max_locals less its
 *   parameters' slots, known from its class file for every candidate (a different count rules a method out);
 * - whether the entry made the method's invocation counters (InterpreterRuntime::build_method_counters): the first
 *   interpreted entry of a method makes them, and they stay. A method this thread entered before cannot build them
 *   again (STRONG); one it never entered, entered without building them, had them from another thread, from
 *   compiled code, or from an inlining compile (WEAK). What tells virtual-call targets with the same bytecode apart:
 *   an entry that built counters is a method that had not run, one that did not is a method that had.
 */
import { COUNTERS_BUILT, COUNTERS_TOLD, LOCALS_TOLD, LOCALS_UNIT } from './java';
import { STRONG, WEAK } from './rewrites';

/** A method descriptor's parameter types, one letter each (classes and arrays: 'L'). */
export function parameterLetters(descriptor: string): string {
  let out = '';
  for (let i = 1; i < descriptor.length && descriptor[i] !== ')'; i++) {
    const c = descriptor[i];
    if (c === '[') {
      while (descriptor[i] === '[') i++;
      if (descriptor[i] === 'L') i = descriptor.indexOf(';', i);
      out += 'L';
    } else if (c === 'L') {
      i = descriptor.indexOf(';', i);
      out += 'L';
    } else out += c;
  }
  return out;
}

/** The slots a method's parameters take in its locals (long and double two, the receiver one). */
export function parameterSlots(descriptor: string, isStatic: boolean): number {
  const p = parameterLetters(descriptor);
  let n = isStatic ? 0 : 1;
  for (let i = 0; i < p.length; i++) n += p[i] === 'J' || p[i] === 'D' ? 2 : 1;
  return n;
}

/** The locals the interpreter clears when it enters a method: max_locals beyond the parameters. */
export function extraLocals(maxLocals: number, descriptor: string, isStatic: boolean): number {
  return Math.max(0, maxLocals - parameterSlots(descriptor, isStatic));
}

const NOT_ENTERED = 0x7fffffff;

/** The methods one thread has entered (interpreted, or at a compiled entry), by the output event of the first entry. */
export class EnteredMethods {
  private readonly first: Int32Array;

  constructor(methods: number) {
    this.first = new Int32Array(methods).fill(NOT_ENTERED);
  }

  /** Method mi was entered at output event `ev`. */
  mark(mi: number, ev: number): void {
    if (ev < this.first[mi]) this.first[mi] = ev;
  }

  /**
   * How much the entry at output event `ev` (its input aux `aux`) speaks against being one of method mi, which
   * clears `extra` locals: STRONG for a locals count that is not the method's, or counters built for a method this
   * thread entered before; WEAK for counters found made for a method it never entered.
   */
  against(aux: number, mi: number, extra: number, ev: number): number {
    let v = 0;
    if (aux & LOCALS_TOLD && Math.floor(aux / LOCALS_UNIT) !== extra) v += STRONG;
    if (aux & COUNTERS_TOLD) {
      const before = this.first[mi] < ev;
      if (aux & COUNTERS_BUILT) {
        if (before) v += STRONG;
      } else if (!before) v += WEAK;
    }
    return v;
  }
}
