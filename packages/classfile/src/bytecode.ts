/** Java bytecode mnemonics by opcode (JVMS chapter 6), 0..201. */
export const OPCODE_NAMES: readonly string[] = [
  'nop', 'aconst_null', 'iconst_m1', 'iconst_0', 'iconst_1', 'iconst_2', 'iconst_3', 'iconst_4', 'iconst_5',
  'lconst_0', 'lconst_1', 'fconst_0', 'fconst_1', 'fconst_2', 'dconst_0', 'dconst_1', 'bipush', 'sipush', 'ldc',
  'ldc_w', 'ldc2_w', 'iload', 'lload', 'fload', 'dload', 'aload', 'iload_0', 'iload_1', 'iload_2', 'iload_3',
  'lload_0', 'lload_1', 'lload_2', 'lload_3', 'fload_0', 'fload_1', 'fload_2', 'fload_3', 'dload_0', 'dload_1',
  'dload_2', 'dload_3', 'aload_0', 'aload_1', 'aload_2', 'aload_3', 'iaload', 'laload', 'faload', 'daload', 'aaload',
  'baload', 'caload', 'saload', 'istore', 'lstore', 'fstore', 'dstore', 'astore', 'istore_0', 'istore_1', 'istore_2',
  'istore_3', 'lstore_0', 'lstore_1', 'lstore_2', 'lstore_3', 'fstore_0', 'fstore_1', 'fstore_2', 'fstore_3',
  'dstore_0', 'dstore_1', 'dstore_2', 'dstore_3', 'astore_0', 'astore_1', 'astore_2', 'astore_3', 'iastore',
  'lastore', 'fastore', 'dastore', 'aastore', 'bastore', 'castore', 'sastore', 'pop', 'pop2', 'dup', 'dup_x1',
  'dup_x2', 'dup2', 'dup2_x1', 'dup2_x2', 'swap', 'iadd', 'ladd', 'fadd', 'dadd', 'isub', 'lsub', 'fsub', 'dsub',
  'imul', 'lmul', 'fmul', 'dmul', 'idiv', 'ldiv', 'fdiv', 'ddiv', 'irem', 'lrem', 'frem', 'drem', 'ineg', 'lneg',
  'fneg', 'dneg', 'ishl', 'lshl', 'ishr', 'lshr', 'iushr', 'lushr', 'iand', 'land', 'ior', 'lor', 'ixor', 'lxor',
  'iinc', 'i2l', 'i2f', 'i2d', 'l2i', 'l2f', 'l2d', 'f2i', 'f2l', 'f2d', 'd2i', 'd2l', 'd2f', 'i2b', 'i2c', 'i2s',
  'lcmp', 'fcmpl', 'fcmpg', 'dcmpl', 'dcmpg', 'ifeq', 'ifne', 'iflt', 'ifge', 'ifgt', 'ifle', 'if_icmpeq',
  'if_icmpne', 'if_icmplt', 'if_icmpge', 'if_icmpgt', 'if_icmple', 'if_acmpeq', 'if_acmpne', 'goto', 'jsr', 'ret',
  'tableswitch', 'lookupswitch', 'ireturn', 'lreturn', 'freturn', 'dreturn', 'areturn', 'return', 'getstatic',
  'putstatic', 'getfield', 'putfield', 'invokevirtual', 'invokespecial', 'invokestatic', 'invokeinterface',
  'invokedynamic', 'new', 'newarray', 'anewarray', 'arraylength', 'athrow', 'checkcast', 'instanceof',
  'monitorenter', 'monitorexit', 'wide', 'multianewarray', 'ifnull', 'ifnonnull', 'goto_w', 'jsr_w',
];

export function opcodeName(op: number): string {
  return op >= 0 && op < OPCODE_NAMES.length ? OPCODE_NAMES[op] : op < 0 ? '?' : `op${op}`;
}

/** Opcodes of invokevirtual, invokespecial, invokestatic, invokeinterface, invokedynamic. */
export const INVOKE_OPCODES: ReadonlySet<number> = new Set([0xb6, 0xb7, 0xb8, 0xb9, 0xba]);

// fixed lengths by opcode (0: variable or undefined); JVMS §6.5
const FIXED = new Uint8Array(256);
(() => {
  FIXED.fill(1, 0, 202);
  for (const op of [0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3a, 0xa9, 0xbc]) FIXED[op] = 2; // bipush ldc *load *store ret newarray
  for (const op of [0x11, 0x13, 0x14, 0x84, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xbb, 0xbd, 0xc0, 0xc1, 0xc6, 0xc7]) FIXED[op] = 3;
  for (let op = 0x99; op <= 0xa8; op++) FIXED[op] = 3; // if*, goto, jsr
  FIXED[0xc5] = 4; // multianewarray
  FIXED[0xb9] = 5; // invokeinterface
  FIXED[0xba] = 5; // invokedynamic
  FIXED[0xc8] = 5; // goto_w
  FIXED[0xc9] = 5; // jsr_w
  FIXED[0xaa] = 0; // tableswitch
  FIXED[0xab] = 0; // lookupswitch
  FIXED[0xc4] = 0; // wide
})();

/**
 * Length in bytes of the instruction at `bci` of `code`, or -1 when it is not a valid instruction or runs past
 * the end of the code.
 */
export function instructionLength(code: Uint8Array, bci: number): number {
  if (bci < 0 || bci >= code.length) return -1;
  const op = code[bci];
  let n = FIXED[op];
  if (n === 0) {
    const v = new DataView(code.buffer, code.byteOffset, code.byteLength);
    const pad = (4 - ((bci + 1) & 3)) & 3;
    const at = bci + 1 + pad;
    if (op === 0xc4) n = code[bci + 1] === 0x84 ? 6 : 4; // wide iinc / wide load-store
    else if (at + 12 > code.length) return -1;
    else if (op === 0xaa) {
      const lo = v.getInt32(at + 4);
      const hi = v.getInt32(at + 8);
      if (hi < lo || hi - lo > 0xffff) return -1;
      n = 1 + pad + 12 + 4 * (hi - lo + 1);
    } else if (op === 0xab) {
      const pairs = v.getInt32(at + 4);
      if (pairs < 0 || pairs > 0xffff) return -1;
      n = 1 + pad + 8 + 8 * pairs;
    } else return -1;
  }
  return bci + n <= code.length ? n : -1;
}

/** Calls `f(bci, opcode)` for each instruction of `code` in order; returns false if the code is malformed. */
export function forEachInstruction(code: Uint8Array, f: (bci: number, opcode: number) => void): boolean {
  let bci = 0;
  while (bci < code.length) {
    const n = instructionLength(code, bci);
    if (n < 0) return false;
    f(bci, code[bci]);
    bci += n;
  }
  return true;
}

/**
 * Where control can go after the instruction at `bci` within the method (JVMS §4.10.1): the next instruction
 * unless it always jumps or leaves, plus branch and switch targets. Returns, athrow, ret and jsr's subroutine
 * return are not followed (they leave the method or depend on the stack). -1 in the result never appears.
 */
export function successors(code: Uint8Array, bci: number): number[] {
  const n = instructionLength(code, bci);
  if (n < 0) return [];
  const op = code[bci];
  const v = new DataView(code.buffer, code.byteOffset, code.byteLength);
  const next = bci + n;
  if ((op >= 0x99 && op <= 0xa6) || op === 0xc6 || op === 0xc7) return [next, bci + v.getInt16(bci + 1)]; // if*
  if (op === 0xa7) return [bci + v.getInt16(bci + 1)]; // goto
  if (op === 0xc8) return [bci + v.getInt32(bci + 1)]; // goto_w
  if (op === 0xa8) return [bci + v.getInt16(bci + 1)]; // jsr
  if (op === 0xc9) return [bci + v.getInt32(bci + 1)]; // jsr_w
  if (op === 0xaa || op === 0xab) {
    const t = switchTable(code, bci);
    if (!t) return [];
    const out = new Set<number>([t.defaultTarget]);
    for (const x of t.targets) out.add(x);
    return [...out];
  }
  if ((op >= 0xac && op <= 0xb1) || op === 0xbf || op === 0xa9) return []; // *return, athrow, ret
  if (op === 0xc4 && code[bci + 1] === 0xa9) return []; // wide ret
  return [next];
}

/** The operands of a tableswitch or lookupswitch: its default target and, per case, the key and the target
 * (absolute bcis), in the order the instruction lists them. */
export interface SwitchTable {
  defaultTarget: number;
  keys: Int32Array;
  targets: Int32Array;
}

/**
 * The operands of the tableswitch or lookupswitch at `bci` (JVMS §6.5: padded to a 4-byte boundary from the start
 * of the code), or undefined for another instruction or operands that run past the end of the code.
 */
export function switchTable(code: Uint8Array, bci: number): SwitchTable | undefined {
  const op = code[bci];
  if (op !== 0xaa && op !== 0xab) return undefined;
  const at = (bci + 4) & ~3;
  if (at + 12 > code.length) return undefined;
  const v = new DataView(code.buffer, code.byteOffset, code.byteLength);
  const defaultTarget = bci + v.getInt32(at);
  if (op === 0xaa) {
    const low = v.getInt32(at + 4);
    const n = v.getInt32(at + 8) - low + 1;
    if (n < 0 || at + 12 + 4 * n > code.length) return undefined;
    const keys = new Int32Array(n);
    const targets = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      keys[k] = low + k;
      targets[k] = bci + v.getInt32(at + 12 + 4 * k);
    }
    return { defaultTarget, keys, targets };
  }
  const n = v.getInt32(at + 4);
  if (n < 0 || at + 8 + 8 * n > code.length) return undefined;
  const keys = new Int32Array(n);
  const targets = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    keys[k] = v.getInt32(at + 8 + 8 * k);
    targets[k] = bci + v.getInt32(at + 12 + 8 * k);
  }
  return { defaultTarget, keys, targets };
}
