/**
 * The states of search frames (attribute.ts: interpreted frames of unknown method, which start with every method
 * as a candidate) as a trie over the opcodes they ran. The states after a sequence of opcodes are the same for
 * every frame that runs it, and they are many (thousands of methods start with aload_0, getfield): each node is
 * computed once, and a frame walks the trie until few states are left.
 */

import type { CallSite } from './attribute';

/** The states after one sequence of opcodes, in the order the NFA step makes them. */
export class SearchNode {
  /** what led here from the parent node: the opcode, and the outcome of the parent's if* (edgeKey) */
  readonly children = new Map<number, SearchNode>();
  /** what an entry after the entries' invokes may start, once asked for (attribute.ts: callersSite; null: unknown) */
  site: CallSite | null | undefined = undefined;

  /**
   * @param op the opcode run to get here (every entry's bci holds it)
   * @param method Method.index of each entry
   * @param bci the bci of each entry
   * @param parent the entry of the parent node each entry came from (-1 at the first level)
   * @param count entries (more than the arrays hold when the step gave up: too many states)
   * @param agreedId the method id all entries share, else undefined
   * @param agreedMethod the Method.index all entries share, else -1
   */
  constructor(
    readonly op: number,
    readonly method: Int32Array,
    readonly bci: Int32Array,
    readonly parent: Int32Array,
    readonly count: number,
    readonly agreedId: number | undefined,
    readonly agreedMethod: number,
  ) {}
}

/** Key of a child: the opcode and the parent's if* outcome (1 taken, -1 not taken, 0 unknown or not an if*). */
export function edgeKey(op: number, outcome: number): number {
  return op * 3 + outcome + 1;
}

/** The key of the edge by `op` from a switch whose event told the way it went (`aux`, events.ts SWITCH_TOLD). */
export function switchEdgeKey(op: number, aux: number): number {
  return -1 - (op + 256 * aux);
}
