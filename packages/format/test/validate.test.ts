import * as fs from 'fs';
import * as path from 'path';
import { MetaWriter, validateTrace } from '../src';
import { read, sampleTrace, tmpDir } from './fixtures';

const nm = (code_begin: number, code_size: number, pcs: { pc: number; frames: { method: number; bci: number }[] }[], method = 0) => ({
  method, code_begin, code_size, blob_begin: 0, insts_begin: code_begin, stub_begin: 0, entry: code_begin, verified_entry: code_begin,
  osr_entry: 0, compile_id: 1, level: 4, osr_bci: -1, code: new Uint8Array(code_size), pcs, consts_begin: 0, consts: new Uint8Array(0),
});
const method = (id: number) => ({ method: id, class_id: 0, loader: 0, class_name: 'A', name: `m${id}`, signature: '()V', modifiers: 0 });

function validate(bytes: Uint8Array) {
  const d = tmpDir('jpval-');
  fs.writeFileSync(path.join(d, 'meta.jpt'), bytes);
  const r = validateTrace(d);
  fs.rmSync(d, { recursive: true });
  return r;
}
const codes = (r: ReturnType<typeof validate>) => r.issues.map((i) => i.code).sort();

describe('validateTrace', () => {
  test('a consistent trace validates clean, with counts, tsc range, drops and completeness', () => {
    const { bytes, written } = sampleTrace();
    const r = validate(bytes);
    expect(r.issues).toEqual([]);
    expect(r.problems).toEqual([]);
    expect(r.complete).toBe(true);
    expect(r.hasVmEnd).toBe(true);
    expect(r.records).toBe(written.length);
    expect(r.bytes).toBe(bytes.length);
    expect(r.countsByType).toMatchObject({ CODELET: 2, METHOD: 2, CALIBRATION: 2, VM_END: 1 });
    expect(r.firstTsc).toBe(written[0].tsc);
    expect(r.lastTsc).toBe(written[written.length - 1].tsc);
    expect(r.dropped).toBe(2);
    expect(r.droppedBytes).toBe(300);
    expect(r.seqGaps).toBe(0);
  });

  test('overlapping codelets, codelets outside the interpreter and stray dispatch entries', () => {
    const w = new MetaWriter();
    w.write('INTERP_CODE', { base: 0x1000, code: new Uint8Array(0x100) });
    w.write('CODELET', { begin: 0x1000, end: 0x1040, bytecode: -1, kind: 0, description: 'a' });
    const overlap = w.write('CODELET', { begin: 0x1030, end: 0x1080, bytecode: -1, kind: 0, description: 'b' });
    const outside = w.write('CODELET', { begin: 0x10f0, end: 0x1110, bytecode: -1, kind: 0, description: 'c' });
    const table = w.write('DISPATCH_TABLE', { table: 0, source: 0, address: 0, states: 1, per_state: 2, entries: [{ target: 0x1010 }, { target: 0x5000 }] });
    const r = validate(w.bytes());
    expect(codes(r)).toEqual(['codelet-outside-interp', 'codelet-overlap', 'dispatch-outside-codelets']);
    expect(r.issues.find((i) => i.code === 'codelet-overlap')!.offset).toBe(overlap);
    expect(r.issues.find((i) => i.code === 'codelet-outside-interp')!.offset).toBe(outside);
    expect(r.issues.find((i) => i.code === 'dispatch-outside-codelets')).toMatchObject({ offset: table, message: expect.stringMatching(/1 entries .* \(first 0x5000\)/) });
    expect(r.complete).toBe(false);
    expect(r.hasVmEnd).toBe(false);
  });

  test('nmethod pcs outside the code, undefined methods and patches outside their nmethod', () => {
    const w = new MetaWriter();
    w.write('METHOD', method(0));
    const bad = w.write('NMETHOD_LOAD', nm(0x9000, 16, [{ pc: 0x9000, frames: [{ method: 0, bci: 0 }] }, { pc: 0x9010, frames: [{ method: 5, bci: 0 }] }]));
    const undef = w.write('NMETHOD_LOAD', nm(0xa000, 16, [], 7));
    const patch = w.write('CODE_PATCH', { code_begin: 0x9000, address: 0x900e, bytes: new Uint8Array(4), since: 0n });
    w.write('CODE_PATCH', { code_begin: 0x9000, address: 0x900c, bytes: new Uint8Array(4), since: 0n }); // fits exactly
    const r = validate(w.bytes());
    expect(codes(r)).toEqual(['patch-outside-nmethod', 'pc-outside-nmethod', 'undefined-method', 'undefined-method']);
    expect(r.issues.find((i) => i.code === 'pc-outside-nmethod')).toMatchObject({ offset: bad, message: expect.stringContaining('pc 0x9010 outside') });
    expect(r.issues.filter((i) => i.code === 'undefined-method').map((i) => i.offset)).toEqual([bad, undef]);
    expect(r.issues.find((i) => i.code === 'patch-outside-nmethod')!.offset).toBe(patch);
  });

  test('a METHOD that comes after the nmethod referring to it does not count', () => {
    const w = new MetaWriter();
    w.write('NMETHOD_LOAD', nm(0x9000, 16, [{ pc: 0x9000, frames: [{ method: 0, bci: 0 }] }]));
    w.write('METHOD', method(0));
    expect(codes(validate(w.bytes()))).toEqual(['undefined-method', 'undefined-method']);
  });

  test('METHOD_RUNS naming a class without an earlier CLASS record', () => {
    const w = new MetaWriter();
    w.write('CLASS', { class_id: 3, loader: 0, source: 0, name: 'A', bytes: new Uint8Array(0) });
    w.write('METHOD_RUNS', { classes: [{ class_id: 3, methods: [] }] });
    const bad = w.write('METHOD_RUNS', { classes: [{ class_id: 3, methods: [] }, { class_id: 4, methods: [{ name: 'm', signature: '()V', state: 1, invocations: 1, bytecodes: new Uint8Array([0xb1]) }] }] });
    const r = validate(w.bytes());
    expect(codes(r)).toEqual(['undefined-class']);
    expect(r.issues[0]).toMatchObject({ offset: bad, message: expect.stringContaining('class ids without an earlier CLASS record: 4') });
  });

  test('truncated, gapped and corrupt files are reported, not thrown', () => {
    const { bytes } = sampleTrace();
    const full = read(bytes).records;
    const cut = validate(bytes.subarray(0, bytes.length - 3));
    expect(cut.truncated).toBe(true);
    expect(cut.complete).toBe(false);
    expect(cut.records).toBe(full.length - 1);
    expect(codes(cut)).toEqual(['truncated']);

    const bad = Buffer.from(bytes);
    bad[full[6].offset + 30] ^= 2;
    const r = validate(bad);
    expect(r.records).toBe(6);
    expect(r.error).toMatchObject({ code: 'record-crc', offset: full[6].offset });
    expect(r.issues).toMatchObject([{ severity: 'error', code: 'record-crc', offset: full[6].offset }]);
    expect(r.complete).toBe(false);

    const hdr = Buffer.from(bytes);
    hdr[3] = 0;
    expect(validate(hdr).error?.code).toBe('bad-magic');

    const w = new MetaWriter();
    w.write('VM_START', {});
    w.skipSeq(4);
    w.write('VM_START', {});
    const g = validate(w.bytes());
    expect(g.seqGaps).toBe(4);
    expect(codes(g)).toEqual(['seq-gap']);
  });

  test('tsc going backwards and records after VM_END are reported', () => {
    const w = new MetaWriter();
    w.write('VM_START', {}, 10n);
    w.write('VM_START', {}, 9n);
    w.write('VM_END', { records: 0, bytes: 0, stalls: 0, stall_ns: 0, dropped: 0, dropped_bytes: 0, patch_scans: 0, errors: 0 }, 11n);
    w.write('VM_START', {}, 12n);
    expect(codes(validate(w.bytes()))).toEqual(['after-vm-end', 'tsc-backwards']);
  });
});
