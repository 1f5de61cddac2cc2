/**
 * The abstraction of the paper: every instruction is one of call, return, branch, jump, switch, throw or other;
 * edges of the instruction graph and of the block graph carry an EdgeKind.
 */
export const InsnKind = {
  Other: 0,
  /** invokevirtual, invokespecial, invokestatic, invokeinterface, invokedynamic */
  Call: 1,
  /** ireturn .. return */
  Return: 2,
  /** if*, ifnull, ifnonnull: two successors */
  Branch: 3,
  /** goto, goto_w, jsr, jsr_w, ret (and wide ret): one or (ret) several successors, never the next instruction */
  Jump: 4,
  /** tableswitch, lookupswitch */
  Switch: 5,
  /** athrow */
  Throw: 6,
} as const;
export type InsnKind = (typeof InsnKind)[keyof typeof InsnKind];

export const INSN_KIND_NAMES: readonly string[] = ['other', 'call', 'return', 'branch', 'jump', 'switch', 'throw'];

export const EdgeKind = {
  /** to the next instruction after one that does not transfer control (including a call) */
  Fallthrough: 0,
  BranchTaken: 1,
  BranchNotTaken: 2,
  /** a switch arm; the edge's key is the case value */
  SwitchCase: 3,
  SwitchDefault: 4,
  /** goto, goto_w */
  Goto: 5,
  /** jsr, jsr_w to the subroutine's first instruction */
  Jsr: 6,
  /** ret to the instruction after a jsr that called the subroutine the ret belongs to */
  Ret: 7,
  /** to a handler covering the instruction; the edge's handler is its index in the method's exception table */
  Exception: 8,
} as const;
export type EdgeKind = (typeof EdgeKind)[keyof typeof EdgeKind];

export const EDGE_KIND_NAMES: readonly string[] = [
  'fallthrough', 'branch-taken', 'branch-not-taken', 'switch-case', 'switch-default', 'goto', 'jsr', 'ret', 'exception',
];

// opcode -> kind (wide is classified by its modified opcode in insnKind)
const KIND_BY_OPCODE = new Uint8Array(256);
(() => {
  for (let op = 0x99; op <= 0xa6; op++) KIND_BY_OPCODE[op] = InsnKind.Branch; // if*
  KIND_BY_OPCODE[0xc6] = InsnKind.Branch; // ifnull
  KIND_BY_OPCODE[0xc7] = InsnKind.Branch; // ifnonnull
  for (const op of [0xa7, 0xa8, 0xa9, 0xc8, 0xc9]) KIND_BY_OPCODE[op] = InsnKind.Jump; // goto jsr ret goto_w jsr_w
  KIND_BY_OPCODE[0xaa] = InsnKind.Switch;
  KIND_BY_OPCODE[0xab] = InsnKind.Switch;
  for (let op = 0xac; op <= 0xb1; op++) KIND_BY_OPCODE[op] = InsnKind.Return;
  for (let op = 0xb6; op <= 0xba; op++) KIND_BY_OPCODE[op] = InsnKind.Call;
  KIND_BY_OPCODE[0xbf] = InsnKind.Throw;
})();

/** The kind of the instruction at `bci` of `code` (a valid instruction start). */
export function insnKind(code: Uint8Array, bci: number): InsnKind {
  const op = code[bci];
  if (op === 0xc4) return code[bci + 1] === 0xa9 ? InsnKind.Jump : InsnKind.Other; // wide ret
  return KIND_BY_OPCODE[op] as InsnKind;
}

/** ret or wide ret at `bci` */
export function isRet(code: Uint8Array, bci: number): boolean {
  return code[bci] === 0xa9 || (code[bci] === 0xc4 && code[bci + 1] === 0xa9);
}

/** jsr or jsr_w */
export function isJsr(op: number): boolean {
  return op === 0xa8 || op === 0xc9;
}
