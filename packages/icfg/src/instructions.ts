import { instructionLength, switchTable } from '@jportal/classfile';
import { CfgError } from './errors';
import { InsnKind, insnKind } from './kinds';

/** One method's instructions on typed arrays: index <-> bci, opcode, kind. */
export interface InstructionTable {
  readonly count: number;
  /** instruction index -> bci; one more entry than instructions: `bci[count]` is the code length */
  readonly bci: Int32Array;
  /** instruction index -> opcode (0xc4 for wide) */
  readonly opcode: Uint8Array;
  /** instruction index -> InsnKind */
  readonly kind: Uint8Array;
  /** bci -> instruction index, -1 inside an instruction */
  readonly indexOfBci: Int32Array;
}

export function decodeInstructions(code: Uint8Array, method = ''): InstructionTable {
  if (code.length === 0) throw new CfgError(method, 0, 'empty code');
  const indexOfBci = new Int32Array(code.length).fill(-1);
  const starts: number[] = [];
  for (let bci = 0; bci < code.length; ) {
    const n = instructionLength(code, bci);
    if (n < 0) throw new CfgError(method, bci, `bad or truncated instruction (opcode 0x${code[bci].toString(16)})`);
    indexOfBci[bci] = starts.length;
    starts.push(bci);
    bci += n;
  }
  const count = starts.length;
  const bci = new Int32Array(count + 1);
  const opcode = new Uint8Array(count);
  const kind = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    bci[i] = starts[i];
    opcode[i] = code[starts[i]];
    kind[i] = insnKind(code, starts[i]);
  }
  bci[count] = code.length;
  return { count, bci, opcode, kind, indexOfBci };
}

/**
 * The jump targets (bcis) of the branch, goto, jsr or switch at `bci`, in a fixed order: if*: the taken target;
 * goto/jsr: the target; switch: default first, then the arms in table order (`keys` receives each arm's value).
 * Empty for other instructions.
 */
export function jumpTargets(code: Uint8Array, bci: number, keys?: number[]): number[] {
  const op = code[bci];
  const v = new DataView(code.buffer, code.byteOffset, code.byteLength);
  if ((op >= 0x99 && op <= 0xa8) || op === 0xc6 || op === 0xc7) return [bci + v.getInt16(bci + 1)];
  if (op === 0xc8 || op === 0xc9) return [bci + v.getInt32(bci + 1)];
  const table = switchTable(code, bci);
  if (!table) return [];
  if (keys) for (const k of table.keys) keys.push(k);
  return [table.defaultTarget, ...table.targets];
}

/** True when control never continues at the next instruction (goto, jsr, ret, switch, return, athrow). */
export function endsFlow(kind: number): boolean {
  return kind === InsnKind.Jump || kind === InsnKind.Switch || kind === InsnKind.Return || kind === InsnKind.Throw;
}
