import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CANONICAL_LAYOUTS, MetaReader, MetaWriter, readMetaFile, RecordType, TraceFormatError, validateTrace } from '../src';
import { extraType, sampleTrace } from './fixtures';

const read = (bytes: Uint8Array, chunkSize?: number) => {
  const r = MetaReader.fromBytes('meta.jpt', bytes, { chunkSize });
  const records = [...r.records()];
  return { records, problems: r.problems, header: r.header };
};

function readErr(bytes: Uint8Array): TraceFormatError {
  try {
    read(bytes);
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('expected a TraceFormatError');
}

describe('round trip', () => {
  test('every record type reads back as written, with seq, tsc and flags', () => {
    const { bytes } = sampleTrace();
    const { records, problems, header } = read(bytes);
    expect(problems).toEqual([]);
    expect(records).toHaveLength(21);
    expect(records.map((r) => r.seq)).toEqual([...Array(21).keys()]);
    expect(new Set(records.map((r) => r.typeName))).toEqual(new Set(Object.keys(RecordType)));
    for (const [name, id] of Object.entries(RecordType)) {
      expect(header.types.get(id)!.name).toBe(name);
      expect(header.types.get(id)!.layout).toBe(CANONICAL_LAYOUTS[name as keyof typeof RecordType]);
    }
    const nm = records.find((r) => r.typeName === 'NMETHOD_LOAD')!.payload as any;
    expect(nm.level).toBe(4);
    expect(nm.osr_bci).toBe(-1);
    expect(nm.pcs[0].frames).toEqual([{ method: 1, bci: 1 }, { method: 0, bci: 12 }]);
    expect(Array.from(nm.code)).toEqual(new Array(64).fill(0x90));
    const th = records.find((r) => r.typeName === 'THREAD_START')!.payload as any;
    expect(th.name).toBe('main ✓');
    expect(records[3].flags).toBe(1);
    expect(records[1].tsc).toBe(1034n);
    const vm = records[1].payload as any;
    expect(vm.code_low).toBe(0x7f0000000000);
    expect(vm.flags[1]).toEqual({ name: 'UseCompressedOops', value: 'true' });
  });

  test('a streaming reader with 7-byte chunks gives the same records as the whole buffer', () => {
    const { bytes } = sampleTrace();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jpfmt-'));
    const file = path.join(dir, 'meta.jpt');
    fs.writeFileSync(file, bytes);
    const whole = read(bytes).records;
    const streamed = readMetaFile(file, { chunkSize: 7 }).records;
    expect(streamed).toEqual(whole);
    fs.rmSync(dir, { recursive: true });
  });

  test('records of a type this reader does not know are decoded by the layout in the file', () => {
    const t = extraType(900, 'FUTURE_THING', 'id:u32 when:w64 tags:[k:str v:i16] blob:bytes');
    const w = new MetaWriter(undefined, [t]);
    w.writeType(900, { id: 7, when: 2n ** 63n + 5n, tags: [{ k: 'a', v: -3 }], blob: new Uint8Array([1, 2]) });
    const { records } = read(w.bytes());
    expect(records[0].typeName).toBe('FUTURE_THING');
    expect(records[0].payload).toEqual({ id: 7, when: 2n ** 63n + 5n, tags: [{ k: 'a', v: -3 }], blob: new Uint8Array([1, 2]) });
  });

  test('a known type whose layout lacks a field is refused by name', () => {
    const w = new MetaWriter(undefined, [extraType(RecordType.CODELET, 'CODELET', 'begin:u64 end:u64')]);
    w.writeType(RecordType.CODELET, { begin: 1, end: 2 });
    const e = readErr(w.bytes());
    expect(e.code).toBe('layout-mismatch');
    expect(e.message).toMatch(/CODELET/);
  });
});

describe('damage', () => {
  test('truncation inside the last record keeps every earlier record and names the cut', () => {
    const { bytes } = sampleTrace();
    const full = read(bytes).records;
    const last = full[full.length - 1];
    for (const cut of [last.offset + 1, last.offset + 27, last.offset + 28, bytes.length - 1]) {
      const { records, problems } = read(bytes.subarray(0, cut));
      expect(records).toHaveLength(full.length - 1);
      expect(problems).toHaveLength(1);
      expect(problems[0].code).toBe('truncated');
      expect(problems[0].offset).toBe(last.offset);
      expect(problems[0].message).toContain(`meta.jpt: byte ${last.offset}`);
    }
  });

  test('truncation inside the file header is an error', () => {
    const { bytes } = sampleTrace();
    for (const cut of [0, 5, 23, 100]) {
      const e = readErr(bytes.subarray(0, cut));
      expect(e.code).toBe('truncated');
    }
  });

  test('every single-bit flip anywhere in the file is detected with the offset of the damaged part', () => {
    const { bytes } = sampleTrace();
    const { records, header } = read(bytes);
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 300; i++) {
      const at = Math.floor(rand() * bytes.length);
      const bit = Math.floor(rand() * 8);
      const damaged = Buffer.from(bytes);
      damaged[at] ^= 1 << bit;
      let err: TraceFormatError | undefined;
      let problems: unknown[] = [];
      try {
        problems = read(damaged).problems;
      } catch (e) {
        err = e as TraceFormatError;
      }
      if (!err) {
        // a flipped size field can make the last record look truncated: still reported, never silent
        expect(problems.length).toBeGreaterThan(0);
        continue;
      }
      expect(err).toBeInstanceOf(TraceFormatError);
      if (at < header.size) expect(err.offset).toBeLessThan(header.size);
      else {
        const rec = records.filter((r) => r.offset <= at).pop()!;
        expect(err.offset).toBe(rec.offset);
      }
    }
  });

  test('a record size smaller than a header is refused at its offset', () => {
    const { bytes } = sampleTrace();
    const { records } = read(bytes);
    const damaged = Buffer.from(bytes);
    damaged.writeUInt32LE(3, records[5].offset);
    const e = readErr(damaged);
    expect(e.code).toBe('bad-size');
    expect(e.offset).toBe(records[5].offset);
  });

  test('a seq gap is reported with its size and reading goes on', () => {
    const w = new MetaWriter();
    w.write('VM_START', {});
    w.skipSeq(3);
    w.write('VM_START', {});
    w.write('VM_START', {});
    const { records, problems } = read(w.bytes());
    expect(records.map((r) => r.seq)).toEqual([0, 4, 5]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: 'seq-gap', missing: 3 });
  });

  test('bad magic and unsupported major versions are refused', () => {
    const { bytes } = sampleTrace();
    const a = Buffer.from(bytes);
    a[0] = 0x41;
    expect(readErr(a).code).toBe('bad-magic');
    const b = Buffer.from(bytes);
    b.writeUInt16LE(2, 8);
    expect(readErr(b).code).toBe('unsupported-version');
  });
});

describe('validator', () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'jpval-'));
  test('a consistent trace validates clean', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'meta.jpt'), sampleTrace().bytes);
    const r = validateTrace(d);
    expect(r.problems).toEqual([]);
    expect(r.complete).toBe(true);
    expect(r.records).toBe(21);
    expect(r.countsByType.CODELET).toBe(2);
  });

  test('overlapping codelets, stray dispatch entries and pcs outside their nmethod are reported', () => {
    const w = new MetaWriter();
    w.write('INTERP_CODE', { base: 0x1000, code: new Uint8Array(0x100) });
    w.write('CODELET', { begin: 0x1000, end: 0x1040, bytecode: -1, kind: 0, description: 'a' });
    w.write('CODELET', { begin: 0x1030, end: 0x1080, bytecode: -1, kind: 0, description: 'b' });
    w.write('DISPATCH_TABLE', { table: 0, source: 0, address: 0, states: 1, per_state: 1, entries: [{ target: 0x5000 }] });
    w.write('METHOD', { method: 0, class_id: 0, loader: 0, class_name: 'A', name: 'm', signature: '()V', modifiers: 0 });
    w.write('NMETHOD_LOAD', {
      method: 0, code_begin: 0x9000, code_size: 16, blob_begin: 0, insts_begin: 0, stub_begin: 0, entry: 0, verified_entry: 0,
      osr_entry: 0, compile_id: 1, level: 1, osr_bci: -1, code: new Uint8Array(16), pcs: [{ pc: 0x9010, frames: [{ method: 0, bci: 0 }] }],
    });
    const d = tmp();
    fs.writeFileSync(path.join(d, 'meta.jpt'), w.bytes());
    const r = validateTrace(d);
    expect(r.complete).toBe(false);
    expect(r.problems.some((p) => /overlap/.test(p))).toBe(true);
    expect(r.problems.some((p) => /dispatch table 0: 1 entries/.test(p))).toBe(true);
    expect(r.problems.some((p) => /pc 0x9010 outside/.test(p))).toBe(true);
  });
});
