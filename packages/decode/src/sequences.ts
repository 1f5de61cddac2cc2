/**
 * Decoded events as per-thread bytecode sequences in the shape @jportal/oracle compares (its ThreadSequence):
 * methods by class name + name + signature, parallel typed arrays, and the method-level call sequence.
 */
import { decodeTrace, DecodeOptions } from './decode-trace';
import { EventKind } from './events';

export interface SequenceMethod {
  className: string;
  name: string;
  signature: string;
}

export interface DecodedSequence {
  thread: { name: string; javaTid?: number; osTid?: number; startIndex?: number };
  methods: SequenceMethod[];
  length: number;
  method: Int32Array;
  bci: Int32Array;
  opcode: Int16Array;
  calls: Int32Array;
}

export async function loadDecodedSequences(traceDir: string, opts: DecodeOptions = {}): Promise<DecodedSequence[]> {
  const { model, threads } = decodeTrace(traceDir, opts);
  return threads.map((t, startIndex) => {
    const e = t.events;
    const methods: SequenceMethod[] = [];
    const index = new Map<number, number>();
    const idx = (id: number): number => {
      if (id < 0) return -1;
      let i = index.get(id);
      if (i === undefined) {
        const m = model.methods.get(id);
        i = methods.length;
        methods.push(m ? { className: m.className, name: m.name, signature: m.signature } : { className: '?', name: `method#${id}`, signature: '' });
        index.set(id, i);
      }
      return i;
    };
    let n = 0;
    let nc = 0;
    for (let i = 0; i < e.length; i++) {
      if (e.kind[i] === EventKind.Bytecode) n++;
      else if ((e.kind[i] === EventKind.Entry || e.kind[i] === EventKind.Exit) && e.method[i] >= 0) nc++;
    }
    const method = new Int32Array(n);
    const bci = new Int32Array(n);
    const opcode = new Int16Array(n);
    const calls = new Int32Array(nc);
    let k = 0;
    let c = 0;
    for (let i = 0; i < e.length; i++) {
      const kind = e.kind[i];
      if (kind === EventKind.Bytecode) {
        method[k] = idx(e.method[i]);
        bci[k] = e.bci[i];
        opcode[k] = e.opcode[i];
        k++;
      } else if ((kind === EventKind.Entry || kind === EventKind.Exit) && e.method[i] >= 0) {
        const m = idx(e.method[i]);
        calls[c++] = kind === EventKind.Entry ? m : -1 - m;
      }
    }
    return { thread: { name: t.name, javaTid: t.javaTid, osTid: t.tid, startIndex }, methods, length: n, method, bci, opcode, calls };
  });
}
