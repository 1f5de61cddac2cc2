/**
 * Puts a decoded thread and an oracle thread into one comparable form: event sequences whose method ids come
 * from one shared space (methods are the same when class, name and descriptor are), with the kinds the
 * comparison knows (0 bytecode, 1 entry, 2 exit, 5 exception, 7 catch — oracle only).
 */
import { parseClass, ClassFile } from '@jportal/classfile';
import type { DecodedThread, JvmModel } from '@jportal/decode';
import { OracleDir, OracleEvents, OracleKind } from './read';
import { Origin } from './compare';
import type { EventSeq } from './compare';

/**
 * A hidden class's name ends in the address of its metadata (`LambdaForm$MH.0x00007f122f002800`, or with '/'),
 * which differs from run to run (under the emulator the JVM's mappings lie elsewhere): two runs' hidden classes
 * meet by the name without it. Hidden classes that share a name and a method's name and descriptor become one.
 */
const HIDDEN_SUFFIX = /[./]0x[0-9a-fA-F]+$/;
export function runIndependentClassName(className: string): string {
  return className.replace(HIDDEN_SUFFIX, '');
}

/** Interns methods by "class.name descriptor" so that two runs' ids meet. */
export class MethodSpace {
  private readonly ids = new Map<string, number>();
  readonly names: string[] = [];

  id(className: string, name: string, signature: string): number {
    const key = `${runIndependentClassName(className)}.${name}${signature}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(key, id);
      this.names.push(key);
    }
    return id;
  }
}

export const CATCH_KIND = 7;

export function oracleSequence(o: OracleDir, ev: OracleEvents, space: MethodSpace): EventSeq {
  const map = new Int32Array(o.methods.length);
  for (const m of o.methods) map[m.id] = space.id(m.className, m.name, m.signature);
  const n = ev.length;
  const seq: EventSeq = { length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n) };
  for (let i = 0; i < n; i++) {
    const k = ev.kind[i];
    seq.kind[i] = k === OracleKind.Bytecode ? 0 : k === OracleKind.Entry ? 1 : k === OracleKind.Exit || k === OracleKind.ExitByException ? 2 : k === OracleKind.Throw ? 5 : CATCH_KIND;
    seq.method[i] = ev.method[i] < map.length ? map[ev.method[i]] : -1;
    seq.bci[i] = ev.bci[i];
    seq.opcode[i] = ev.opcode[i];
  }
  return seq;
}

/**
 * A decoded thread's events with shared method ids; compiled bytecode events get their opcode from the
 * recorded class bytes (a method's code at the bci), so both sides can be aligned on opcodes.
 */
export function decodedSequence(model: JvmModel, t: DecodedThread, space: MethodSpace, opts: { fromTsc?: number } = {}): EventSeq {
  const e = t.events;
  // events before `fromTsc` are left out (e.g. the start-up code that ran before the oracle could see it)
  let first = 0;
  if (opts.fromTsc) while (first < e.length && !(e.tsc[first] >= opts.fromTsc)) first++;
  const n = e.length - first;
  const seq: EventSeq = { length: n, kind: e.kind.slice(first, e.length), method: new Int32Array(n), bci: e.bci.slice(first, e.length), opcode: e.opcode.slice(first, e.length), origin: new Uint8Array(n) };
  // compiled events completion inserted carry aux = 1 (packages/decode/src/complete.ts)
  // events recovery copied into gaps have source 4 (@jportal/recover)
  for (let i = 0; i < n; i++) {
    const src = e.source[first + i];
    if (src === 4) seq.origin![i] = Origin.Recovered;
    // inserted by completion (aux 1) or by @jportal/reconstruct (source 5)
    else if (e.kind[first + i] === 0 && (src === 5 || (src !== 0 && e.aux[first + i] === 1))) seq.origin![i] = Origin.Inferred;
  }
  const ids = new Map<number, number>();
  const code = new Map<number, Uint8Array | null>();
  const classes = new Map<string, ClassFile | null>();
  const codeOf = (method: number): Uint8Array | null => {
    let c = code.get(method);
    if (c !== undefined) return c;
    c = null;
    const m = model.methods.get(method);
    if (m) {
      const key = `${m.loader}:${m.className}`;
      let cf = classes.get(key);
      if (cf === undefined) {
        const bytes = model.classes.get(key);
        cf = null;
        if (bytes)
          try {
            cf = parseClass(bytes, m.className);
          } catch {
            cf = null; // a class we cannot read gives no opcodes; its events still compare on method and bci
          }
        classes.set(key, cf);
      }
      c = cf?.method(m.name, m.signature)?.code ?? null;
    }
    code.set(method, c);
    return c;
  };
  for (let i = 0; i < n; i++) {
    const m = e.method[first + i];
    if (m < 0) {
      seq.method[i] = -1;
      continue;
    }
    let id = ids.get(m);
    if (id === undefined) {
      const info = model.methods.get(m);
      id = info ? space.id(info.className, info.name, info.signature) : -1;
      ids.set(m, id);
    }
    seq.method[i] = id;
    const bci = seq.bci[i];
    if (seq.kind[i] === 0 && seq.opcode[i] < 0 && bci >= 0) {
      const c = codeOf(m);
      if (c && bci < c.length) seq.opcode[i] = c[bci];
    }
  }
  return seq;
}
