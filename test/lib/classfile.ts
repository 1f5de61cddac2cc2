/**
 * A minimal class-file reader for the end-to-end tests: enough to find each method's bytecode.
 * (The full parser with typed errors is packages/classfile's job in a later issue.)
 */
export interface MethodCode {
  name: string;
  descriptor: string;
  code?: Uint8Array;
  maxStack?: number;
  maxLocals?: number;
}

export interface ParsedClass {
  name: string;
  major: number;
  methods: MethodCode[];
}

export function parseClass(bytes: Uint8Array): ParsedClass {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  const u1 = () => v.getUint8(p++);
  const u2 = () => ((p += 2), v.getUint16(p - 2));
  const u4 = () => ((p += 4), v.getUint32(p - 4));
  if (u4() !== 0xcafebabe) throw new Error('not a class file');
  u2();
  const major = u2();
  const cpCount = u2();
  const utf8: (string | undefined)[] = new Array(cpCount);
  const classIdx: number[] = new Array(cpCount);
  for (let i = 1; i < cpCount; i++) {
    const tag = u1();
    switch (tag) {
      case 1: {
        const len = u2();
        utf8[i] = Buffer.from(bytes.subarray(p, p + len)).toString('utf8');
        p += len;
        break;
      }
      case 7:
        classIdx[i] = u2();
        break;
      case 8: case 16: case 19: case 20:
        p += 2;
        break;
      case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
        p += 4;
        break;
      case 5: case 6:
        p += 8;
        i++;
        break;
      case 15:
        p += 3;
        break;
      default:
        throw new Error(`bad constant pool tag ${tag} at ${p - 1}`);
    }
  }
  u2();
  const thisClass = u2();
  u2();
  const nIf = u2();
  p += 2 * nIf;
  const skipMembers = (collect: boolean): MethodCode[] => {
    const out: MethodCode[] = [];
    const n = u2();
    for (let i = 0; i < n; i++) {
      u2();
      const name = utf8[u2()] ?? '?';
      const descriptor = utf8[u2()] ?? '?';
      const m: MethodCode = { name, descriptor };
      const nAttr = u2();
      for (let a = 0; a < nAttr; a++) {
        const an = utf8[u2()];
        const len = u4();
        const start = p;
        if (collect && an === 'Code') {
          m.maxStack = u2();
          m.maxLocals = u2();
          const cl = u4();
          m.code = bytes.subarray(p, p + cl);
        }
        p = start + len;
      }
      out.push(m);
    }
    return out;
  };
  skipMembers(false);
  const methods = skipMembers(true);
  return { name: utf8[classIdx[thisClass]] ?? '?', major, methods };
}

/** Opcodes of invokevirtual, invokespecial, invokestatic, invokeinterface, invokedynamic. */
export const INVOKE_OPCODES = new Set([0xb6, 0xb7, 0xb8, 0xb9, 0xba]);
