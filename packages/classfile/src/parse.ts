/**
 * A class-file reader (JVMS §4): the class and super names, and every method with its bytecode and exception
 * table. Bounds are checked everywhere; a malformed file throws ClassFormatError naming the byte offset.
 */
export class ClassFormatError extends Error {
  constructor(
    readonly offset: number,
    detail: string,
    readonly file?: string,
  ) {
    super(`${file ? file + ': ' : ''}byte ${offset}: ${detail}`);
    this.name = 'ClassFormatError';
  }
}

export interface ExceptionHandler {
  startPc: number;
  endPc: number;
  handlerPc: number;
  /** internal name of the caught class; undefined for `finally` (catch any) */
  catchType?: string;
}

export interface MethodInfo {
  access: number;
  name: string;
  descriptor: string;
  /** undefined for abstract and native methods */
  code?: Uint8Array;
  maxStack: number;
  maxLocals: number;
  handlers: ExceptionHandler[];
  /**
   * The LineNumberTable(s) of the Code attribute, as pairs: lineNumbers[2k] = start bci, lineNumbers[2k+1] =
   * source line, sorted by start bci; empty when the class was compiled without line numbers (javac -g:none).
   */
  lineNumbers: Uint32Array;
}

export interface ClassFile {
  major: number;
  minor: number;
  access: number;
  name: string;
  superName?: string;
  interfaces: string[];
  methods: MethodInfo[];
  /** the SourceFile attribute (e.g. "Main.java"), if present */
  sourceFile?: string;
  /** the method named `name` with `descriptor`, if the class declares it */
  method(name: string, descriptor: string): MethodInfo | undefined;
  /**
   * The Methodref / InterfaceMethodref at constant-pool index `index` (what invoke* name), or undefined when the
   * entry is something else (an InvokeDynamic, say) or out of range.
   */
  methodRef(index: number): MethodRef | undefined;
  /**
   * The class constant-pool entry `index` names: a Class entry's name, or the class of a Fieldref, Methodref or
   * InterfaceMethodref (what new, getstatic/putstatic and invokestatic name); undefined for anything else.
   */
  classRef(index: number): string | undefined;
  /** the tag of constant-pool entry `index` (JVMS 4.4: 7 Class, 8 String, 9 Fieldref, ...), 0 when out of range */
  constantTag(index: number): number;
}

export interface MethodRef {
  className: string;
  name: string;
  descriptor: string;
  isInterface: boolean;
}

const enum Tag {
  Utf8 = 1, Integer = 3, Float = 4, Long = 5, Double = 6, Class = 7, String = 8, Fieldref = 9, Methodref = 10,
  InterfaceMethodref = 11, NameAndType = 12, MethodHandle = 15, MethodType = 16, Dynamic = 17, InvokeDynamic = 18,
  Module = 19, Package = 20,
}

const decoder = new TextDecoder('utf-8');

export function parseClass(bytes: Uint8Array, file?: string): ClassFile {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  const need = (n: number, what: string) => {
    if (p + n > bytes.length) throw new ClassFormatError(p, `truncated in ${what} (needs ${n} bytes, ${bytes.length - p} left)`, file);
  };
  const u1 = (what: string) => (need(1, what), v.getUint8(p++));
  const u2 = (what: string) => (need(2, what), (p += 2), v.getUint16(p - 2));
  const u4 = (what: string) => (need(4, what), (p += 4), v.getUint32(p - 4));
  const skip = (n: number, what: string) => (need(n, what), (p += n));

  if (u4('magic') !== 0xcafebabe) throw new ClassFormatError(0, 'not a class file (no 0xCAFEBABE)', file);
  const minor = u2('version');
  const major = u2('version');
  const cpCount = u2('constant pool count');
  const utf8: (string | undefined)[] = new Array(cpCount);
  const classNameIdx = new Int32Array(cpCount).fill(-1);
  // Methodref / InterfaceMethodref: class index, name-and-type index; NameAndType: name index, descriptor index;
  // refTag: every entry's tag
  const refA = new Int32Array(cpCount).fill(-1);
  const refB = new Int32Array(cpCount).fill(-1);
  const refTag = new Uint8Array(cpCount);
  for (let i = 1; i < cpCount; i++) {
    const at = p;
    const tag = u1('constant pool');
    refTag[i] = tag;
    switch (tag) {
      case Tag.Utf8: {
        const len = u2('constant pool');
        need(len, 'constant pool utf8');
        // modified UTF-8 differs from UTF-8 only for NUL and supplementary characters: names never need them
        utf8[i] = decoder.decode(bytes.subarray(p, p + len));
        p += len;
        break;
      }
      case Tag.Class:
        classNameIdx[i] = u2('constant pool');
        break;
      case Tag.String: case Tag.MethodType: case Tag.Module: case Tag.Package:
        skip(2, 'constant pool');
        break;
      case Tag.Methodref: case Tag.InterfaceMethodref: case Tag.NameAndType: case Tag.Fieldref:
        refTag[i] = tag;
        refA[i] = u2('constant pool');
        refB[i] = u2('constant pool');
        break;
      case Tag.Integer: case Tag.Float: case Tag.Dynamic: case Tag.InvokeDynamic:
        skip(4, 'constant pool');
        break;
      case Tag.Long: case Tag.Double:
        skip(8, 'constant pool');
        i++;
        break;
      case Tag.MethodHandle:
        skip(3, 'constant pool');
        break;
      default:
        throw new ClassFormatError(at, `bad constant pool tag ${tag} (entry ${i})`, file);
    }
  }
  const str = (idx: number, at: number): string => {
    const s = utf8[idx];
    if (s === undefined) throw new ClassFormatError(at, `constant pool entry ${idx} is not a Utf8`, file);
    return s;
  };
  const className = (idx: number, at: number): string => {
    if (idx <= 0 || idx >= cpCount || classNameIdx[idx] < 0) throw new ClassFormatError(at, `constant pool entry ${idx} is not a Class`, file);
    return str(classNameIdx[idx], at);
  };
  const access = u2('access flags');
  let at = p;
  const name = className(u2('this_class'), at);
  at = p;
  const superIdx = u2('super_class');
  const superName = superIdx === 0 ? undefined : className(superIdx, at);
  const interfaces: string[] = [];
  const nIf = u2('interfaces');
  for (let i = 0; i < nIf; i++) {
    at = p;
    interfaces.push(className(u2('interfaces'), at));
  }
  const skipAttributes = () => {
    const n = u2('attributes');
    for (let a = 0; a < n; a++) {
      skip(2, 'attribute');
      skip(u4('attribute length'), 'attribute');
    }
  };
  const nFields = u2('fields');
  for (let i = 0; i < nFields; i++) {
    skip(6, 'field');
    skipAttributes();
  }
  const methods: MethodInfo[] = [];
  const nMethods = u2('methods');
  for (let i = 0; i < nMethods; i++) {
    const acc = u2('method');
    at = p;
    const mName = str(u2('method'), at);
    at = p;
    const desc = str(u2('method'), at);
    const m: MethodInfo = { access: acc, name: mName, descriptor: desc, maxStack: 0, maxLocals: 0, handlers: [], lineNumbers: NO_LINES };
    const nAttr = u2('method attributes');
    for (let a = 0; a < nAttr; a++) {
      at = p;
      const an = str(u2('attribute'), at);
      const len = u4('attribute length');
      need(len, `attribute ${an}`);
      const end = p + len;
      if (an === 'Code') {
        m.maxStack = u2('Code');
        m.maxLocals = u2('Code');
        const codeLen = u4('Code');
        need(codeLen, 'Code');
        m.code = bytes.subarray(p, p + codeLen);
        p += codeLen;
        const nH = u2('exception table');
        for (let h = 0; h < nH; h++) {
          const startPc = u2('exception table');
          const endPc = u2('exception table');
          const handlerPc = u2('exception table');
          at = p;
          const ct = u2('exception table');
          m.handlers.push({ startPc, endPc, handlerPc, catchType: ct === 0 ? undefined : className(ct, at) });
        }
        const lines: number[] = [];
        const nCodeAttr = u2('Code attributes');
        for (let ca = 0; ca < nCodeAttr; ca++) {
          at = p;
          const can = str(u2('Code attribute'), at);
          const clen = u4('Code attribute length');
          need(clen, `Code attribute ${can}`);
          const cend = p + clen;
          if (can === 'LineNumberTable') {
            const nL = u2('LineNumberTable');
            for (let l = 0; l < nL; l++) lines.push(u2('LineNumberTable'), u2('LineNumberTable'));
            if (p > cend) throw new ClassFormatError(cend, `LineNumberTable of ${mName} overruns its length`, file);
          }
          p = cend;
        }
        if (lines.length) m.lineNumbers = sortedLinePairs(lines);
        if (p > end) throw new ClassFormatError(end, `Code attribute of ${mName} overruns its length`, file);
      }
      p = end;
    }
    methods.push(m);
  }
  let sourceFile: string | undefined;
  const nClassAttr = u2('class attributes');
  for (let a = 0; a < nClassAttr; a++) {
    at = p;
    const an = str(u2('class attribute'), at);
    const len = u4('class attribute length');
    need(len, `class attribute ${an}`);
    const end = p + len;
    if (an === 'SourceFile' && len >= 2) {
      at = p;
      sourceFile = str(u2('SourceFile'), at);
    }
    p = end;
  }
  if (p !== bytes.length) throw new ClassFormatError(p, `${bytes.length - p} bytes after the end of the class`, file);
  const byKey = new Map<string, MethodInfo>();
  for (const m of methods) byKey.set(m.name + m.descriptor, m);
  const refs = new Map<number, MethodRef | undefined>();
  const methodRef = (index: number): MethodRef | undefined => {
    if (refs.has(index)) return refs.get(index);
    let r: MethodRef | undefined;
    const tag = index > 0 && index < cpCount ? refTag[index] : 0;
    if (tag === Tag.Methodref || tag === Tag.InterfaceMethodref) {
      const nat = refB[index];
      const cls = classNameIdx[refA[index]] ?? -1;
      if (nat > 0 && nat < cpCount && refTag[nat] === Tag.NameAndType && cls > 0) {
        const [c, n, d] = [utf8[cls], utf8[refA[nat]], utf8[refB[nat]]];
        if (c !== undefined && n !== undefined && d !== undefined) r = { className: c, name: n, descriptor: d, isInterface: tag === Tag.InterfaceMethodref };
      }
    }
    refs.set(index, r);
    return r;
  };
  const classRef = (index: number): string | undefined => {
    if (!(index > 0 && index < cpCount)) return undefined;
    const tag = refTag[index];
    const cls = tag === Tag.Fieldref || tag === Tag.Methodref || tag === Tag.InterfaceMethodref ? refA[index] : index;
    const u = cls > 0 && cls < cpCount ? classNameIdx[cls] : -1;
    return u > 0 ? utf8[u] : undefined;
  };
  const constantTag = (index: number): number => (index > 0 && index < cpCount ? refTag[index] : 0);
  return { major, minor, access, name, superName, interfaces, methods, sourceFile, method: (n, d) => byKey.get(n + d), methodRef, classRef, constantTag };
}

const NO_LINES = new Uint32Array(0);

/** (start bci, line) pairs sorted by start bci (javac emits them in source order, not bci order). */
function sortedLinePairs(flat: number[]): Uint32Array {
  const idx = Array.from({ length: flat.length / 2 }, (_, i) => i).sort((a, b) => flat[2 * a] - flat[2 * b] || a - b);
  const out = new Uint32Array(flat.length);
  idx.forEach((k, i) => {
    out[2 * i] = flat[2 * k];
    out[2 * i + 1] = flat[2 * k + 1];
  });
  return out;
}

/** The source line of `bci` by a method's LineNumberTable (the entry with the greatest start <= bci); -1 if none. */
export function lineOf(m: MethodInfo, bci: number): number {
  const t = m.lineNumbers;
  let lo = 0;
  let hi = t.length / 2 - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (t[2 * mid] <= bci) {
      best = t[2 * mid + 1];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}
