/** Synthetic threads and methods for the profile tests (no JVM, no trace). */
import type { ClassFile, MethodInfo } from '@jportal/classfile';
import { Analysis, AnalysisMethod, Kind, Origin, ThreadEvents, Tier } from '../src';

export interface Ev {
  kind: Kind;
  method?: number;
  bci?: number;
  opcode?: number;
  tsc?: number;
  tier?: Tier;
  origin?: Origin;
  endTsc?: number;
}

export function thread(name: string, evs: Ev[]): ThreadEvents {
  const n = evs.length;
  const t: ThreadEvents = {
    name, tid: 7, javaTid: 1, length: n,
    kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n),
    tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN), origin: new Uint8Array(n), tier: new Uint8Array(n),
  };
  evs.forEach((e, i) => {
    t.kind[i] = e.kind;
    t.method[i] = e.method ?? -1;
    t.bci[i] = e.bci ?? (e.kind === Kind.Bytecode ? 0 : -1);
    t.opcode[i] = e.opcode ?? -1;
    t.tsc[i] = e.tsc ?? NaN;
    t.tier[i] = e.tier ?? Tier.Interpreted;
    t.origin[i] = e.origin ?? Origin.Observed;
    if (e.endTsc !== undefined) t.endTsc[i] = e.endTsc;
  });
  return t;
}

/** A method of class `cls` with `codeLength` bytes of code and (start bci, line) pairs. */
export function method(cls: string, name: string, sig: string, codeLength: number, lines: number[], sourceFile = 'Main.java'): AnalysisMethod {
  const info: MethodInfo = { access: 0, name, descriptor: sig, code: new Uint8Array(codeLength), maxStack: 1, maxLocals: 1, handlers: [], lineNumbers: Uint32Array.from(lines) };
  const classFile = { name: cls, sourceFile, methods: [info], interfaces: [], major: 61, minor: 0, access: 0, method: () => info, methodRef: () => undefined, classRef: () => undefined } as unknown as ClassFile;
  return { className: cls, name, signature: sig, classFile, info };
}

export const plain = (cls: string, name: string): AnalysisMethod => ({ className: cls, name, signature: '()V' });

export function analysis(methods: AnalysisMethod[], threads: ThreadEvents[], tscPerNs = 2): Analysis {
  return { source: { kind: 'trace', dir: 'synthetic' }, methods, threads, tscPerNs, problems: [] };
}

/** A deterministic pseudo-random generator (xorshift). */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** A well-formed random thread: matched entries and exits, bytecodes, some gaps, recursion among `methods` ids. */
export function randomThread(seed: number, methods: number, n: number): Ev[] {
  const r = rng(seed);
  const evs: Ev[] = [];
  const stack: number[] = [];
  let tsc = 1000;
  const next = () => (tsc += Math.floor(r() * 4) * 512);
  for (let k = 0; k < n; k++) {
    const x = r();
    if (stack.length === 0 || (x < 0.15 && stack.length < 12)) {
      const m = Math.floor(r() * methods);
      stack.push(m);
      evs.push({ kind: Kind.Entry, method: m, tsc: next(), tier: Math.floor(r() * 3) });
    } else if (x < 0.27) {
      evs.push({ kind: Kind.Exit, method: stack.pop()!, tsc: next() });
    } else if (x < 0.29) {
      const t0 = next();
      evs.push({ kind: Kind.Gap, bci: 0, tsc: t0, endTsc: t0 + 512 });
    } else {
      const recovered = r() < 0.1;
      evs.push({ kind: Kind.Bytecode, method: stack[stack.length - 1], bci: Math.floor(r() * 8), tsc: next(), tier: Math.floor(r() * 3), origin: recovered ? Origin.Recovered : Origin.Observed });
    }
  }
  while (stack.length) evs.push({ kind: Kind.Exit, method: stack.pop()!, tsc: next() });
  return evs;
}

