import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { canonicalTypeTable, MetaReader, MetaWriter, PayloadOf, RecordTypeName, TraceFormatError, TypeEntry } from '../src';
import { parseLayout } from '../src/layout';

export interface Written {
  name: string;
  payload: Record<string, unknown>;
  tsc: bigint;
  flags: number;
}

/** A small but complete trace with every record type, made with the writer; `written` lists what went in. */
export function sampleTrace(extraTypes: TypeEntry[] = []): { writer: MetaWriter; bytes: Buffer; written: Written[] } {
  const w = new MetaWriter(undefined, [...canonicalTypeTable(), ...extraTypes]);
  const written: Written[] = [];
  let tsc = 1000n;
  const put = <K extends RecordTypeName>(name: K, payload: PayloadOf[K], flags = 0) => {
    tsc += 17n;
    w.write(name, payload, tsc, flags);
    written.push({ name, payload: payload as unknown as Record<string, unknown>, tsc, flags });
  };
  put('CALIBRATION', { mono_ns: 5_000_000n, realtime_ns: 1_790_000_000_000_000_000n });
  put('VM_INFO', {
    pid: 1234, java_version: '17.0.15', vm_version: '17.0.15+6', vm_vendor: 'Debian', vm_name: 'OpenJDK 64-Bit Server VM',
    java_home: '/usr/lib/jvm/java-17', agent_version: '0.1.0', code_low: 0x7f0000000000, code_high: 0x7f0010000000,
    flags: [{ name: 'CodeEntryAlignment', value: '32' }, { name: 'UseCompressedOops', value: 'true' }],
    heaps: [{ low: 0x7f0000000000, high: 0x7f0008000000, committed_high: 0x7f0000100000, name: 'CodeHeap' }],
  });
  put('VM_START', {});
  const base = 0x7f0000001000;
  const code = new Uint8Array(256).map((_, i) => i);
  put('INTERP_CODE', { base, code }, 1);
  put('CODELET', { begin: base + 0x20, end: base + 0x60, bytecode: -1, kind: 6, description: 'slow signature handler' });
  put('CODELET', { begin: base + 0x60, end: base + 0xa0, bytecode: 0x60, kind: 1, description: 'iadd' });
  put('DISPATCH_TABLE', { table: 0, source: 0, address: 0x7f00aaaa0000, states: 1, per_state: 3, entries: [{ target: base + 0x60 }, { target: 0 }, { target: base + 0x70 }] });
  put('CODE_BLOB', { address: base + 0x1000, size: 4, name: 'StubRoutines (1)', code: new Uint8Array([0x90, 0x90, 0xc3, 0xcc]) });
  put('METHOD', { method: 0, class_id: 0xffffffff, loader: 0, class_name: 'Hot', name: 'run', signature: '(I)J', modifiers: 9 });
  put('METHOD', { method: 1, class_id: 0xffffffff, loader: 0, class_name: 'Hot', name: 'getV', signature: '()I', modifiers: 0 });
  const nmBegin = base + 0x2000;
  put('NMETHOD_LOAD', {
    method: 0, code_begin: nmBegin, code_size: 64, blob_begin: nmBegin - 0x80, insts_begin: nmBegin, stub_begin: nmBegin + 48,
    entry: nmBegin, verified_entry: nmBegin + 16, osr_entry: 0, compile_id: 7, level: 4, osr_bci: -1,
    code: new Uint8Array(64).fill(0x90),
    pcs: [
      { pc: nmBegin + 8, frames: [{ method: 1, bci: 1 }, { method: 0, bci: 12 }] },
      { pc: nmBegin + 20, frames: [{ method: 0, bci: -1 }] },
    ],
    consts_begin: nmBegin - 16,
    consts: new Uint8Array(16).fill(7),
  });
  put('CODE_PATCH', { code_begin: nmBegin, address: nmBegin + 16, bytes: new Uint8Array([0xe9, 1, 2, 3, 4]), since: 0n });
  put('CODE_SNAPSHOT', { code_begin: nmBegin, code: new Uint8Array(64).fill(0x90) });
  put('NMETHOD_UNLOAD', { method: 0, code_begin: nmBegin, last_seen: 0n });
  put('CLASS', { class_id: 0, loader: 0, source: 0, name: 'Hot', bytes: new Uint8Array([0xca, 0xfe, 0xba, 0xbe]) });
  put('METHOD_RUNS', { classes: [{ class_id: 0, methods: [{ name: 'run', signature: '(I)J', state: 5, invocations: 3, bytecodes: new Uint8Array([0x2a, 0xcc, 0, 4, 0xad]) }] }] });
  put('THREAD_START', { os_tid: 4321, java_tid: 1, daemon: 0, name: 'main ✓' }, 1);
  put('THREAD_END', { os_tid: 4321, java_tid: 1 });
  put('AGENT_LOG', { level: 1, component: 'interpreter', message: 'fallback used' });
  put('DROPPED', { count: 2, bytes: 300, first_seq: 18 });
  put('CALIBRATION', { mono_ns: 2n ** 60n, realtime_ns: 0n });
  put('VM_END', { records: 21, bytes: 999, stalls: 0, stall_ns: 0, dropped: 2, dropped_bytes: 300, patch_scans: 3, errors: 0 });
  return { writer: w, bytes: w.bytes(), written };
}

export function extraType(type: number, name: string, layout: string): TypeEntry {
  return { type, name, layout, fields: parseLayout(layout) };
}

export function read(bytes: Uint8Array, chunkSize?: number, file = 'meta.jpt') {
  const r = MetaReader.fromBytes(file, bytes, { chunkSize });
  const records = [...r.records()];
  return { records, problems: r.problems, header: r.header };
}

/** Reads as far as possible; returns what was yielded, the problems and the error (if any). */
export function readAll(bytes: Uint8Array) {
  const r = MetaReader.fromBytes('meta.jpt', bytes);
  const records = [];
  let error: TraceFormatError | undefined;
  try {
    for (const rec of r.records()) records.push(rec);
  } catch (e) {
    if (!(e instanceof TraceFormatError)) throw e;
    error = e;
  }
  return { records, problems: r.problems, error };
}

export function readErr(bytes: Uint8Array): TraceFormatError {
  const { error } = readAll(bytes);
  if (!error) throw new Error('expected a TraceFormatError');
  return error;
}

export function tmpDir(prefix = 'jpfmt-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
