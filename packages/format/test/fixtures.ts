import { canonicalTypeTable, MetaWriter, TypeEntry } from '../src';
import { parseLayout } from '../src/layout';

/** A small but complete trace with every record type, made with the writer. */
export function sampleTrace(extraTypes: TypeEntry[] = []): { writer: MetaWriter; bytes: Buffer } {
  const w = new MetaWriter(undefined, [...canonicalTypeTable(), ...extraTypes]);
  let tsc = 1000n;
  const t = () => (tsc += 17n);
  w.write('CALIBRATION', { mono_ns: 5_000_000n, realtime_ns: 1_790_000_000_000_000_000n }, t());
  w.write('VM_INFO', {
    pid: 1234, java_version: '17.0.15', vm_version: '17.0.15+6', vm_vendor: 'Debian', vm_name: 'OpenJDK 64-Bit Server VM',
    java_home: '/usr/lib/jvm/java-17', agent_version: '0.1.0', code_low: 0x7f0000000000, code_high: 0x7f0010000000,
    flags: [{ name: 'CodeEntryAlignment', value: '32' }, { name: 'UseCompressedOops', value: 'true' }],
    heaps: [{ low: 0x7f0000000000, high: 0x7f0008000000, committed_high: 0x7f0000100000, name: 'CodeHeap' }],
  }, t());
  w.write('VM_START', {}, t());
  const base = 0x7f0000001000;
  const code = new Uint8Array(256).map((_, i) => i);
  w.write('INTERP_CODE', { base, code }, t(), 1);
  w.write('CODELET', { begin: base + 0x20, end: base + 0x60, bytecode: -1, kind: 0, description: 'slow signature handler' }, t());
  w.write('CODELET', { begin: base + 0x60, end: base + 0xa0, bytecode: 0x60, kind: 1, description: 'iadd' }, t());
  w.write('DISPATCH_TABLE', { table: 0, source: 0, address: 0x7f00aaaa0000, states: 1, per_state: 3, entries: [{ target: base + 0x60 }, { target: 0 }, { target: base + 0x70 }] }, t());
  w.write('CODE_BLOB', { address: base + 0x1000, size: 4, name: 'StubRoutines (1)', code: new Uint8Array([0x90, 0x90, 0xc3, 0xcc]) }, t());
  w.write('METHOD', { method: 0, class_id: 0xffffffff, loader: 0, class_name: 'Hot', name: 'run', signature: '(I)J', modifiers: 9 }, t());
  w.write('METHOD', { method: 1, class_id: 0xffffffff, loader: 0, class_name: 'Hot', name: 'getV', signature: '()I', modifiers: 0 }, t());
  const nmBegin = base + 0x2000;
  w.write('NMETHOD_LOAD', {
    method: 0, code_begin: nmBegin, code_size: 64, blob_begin: nmBegin - 0x80, insts_begin: nmBegin, stub_begin: nmBegin + 48,
    entry: nmBegin, verified_entry: nmBegin + 16, osr_entry: 0, compile_id: 7, level: 4, osr_bci: -1,
    code: new Uint8Array(64).fill(0x90),
    pcs: [
      { pc: nmBegin + 8, frames: [{ method: 1, bci: 1 }, { method: 0, bci: 12 }] },
      { pc: nmBegin + 20, frames: [{ method: 0, bci: -1 }] },
    ],
  }, t());
  w.write('CODE_PATCH', { code_begin: nmBegin, address: nmBegin + 16, bytes: new Uint8Array([0xe9, 1, 2, 3, 4]) }, t());
  w.write('CODE_SNAPSHOT', { code_begin: nmBegin, code: new Uint8Array(64).fill(0x90) }, t());
  w.write('NMETHOD_UNLOAD', { method: 0, code_begin: nmBegin }, t());
  w.write('CLASS', { class_id: 0, loader: 0, source: 0, name: 'Hot', bytes: new Uint8Array([0xca, 0xfe, 0xba, 0xbe]) }, t());
  w.write('THREAD_START', { os_tid: 4321, java_tid: 1, daemon: 0, name: 'main ✓' }, t());
  w.write('THREAD_END', { os_tid: 4321, java_tid: 1 }, t());
  w.write('AGENT_LOG', { level: 1, component: 'interpreter', message: 'fallback used' }, t());
  w.write('DROPPED', { count: 0, bytes: 0, first_seq: 0 }, t());
  w.write('CALIBRATION', { mono_ns: 2n ** 60n, realtime_ns: 0n }, t());
  w.write('VM_END', { records: 21, bytes: 999, stalls: 0, stall_ns: 0, dropped: 0, dropped_bytes: 0, patch_scans: 3, errors: 0 }, t());
  return { writer: w, bytes: w.bytes() };
}

export function extraType(type: number, name: string, layout: string): TypeEntry {
  return { type, name, layout, fields: parseLayout(layout) };
}
