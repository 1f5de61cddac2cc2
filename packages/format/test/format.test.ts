import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import {
  canonicalTypeTable, CANONICAL_LAYOUTS, crc32, isRecord, MetaReader, MetaStreamReader, MetaWriter, openTrace, readMetaFile,
  RecordType, RecordTypeName, TraceFormatError,
} from '../src';
import { crc32 as crcImpl, crc32Portable } from '../src/crc32';
import { extraType, read, readAll, readErr, sampleTrace, tmpDir } from './fixtures';

describe('canonical type table', () => {
  test('ids, names and layouts are exactly those of the spec table (docs/trace-format.md §4)', () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../../docs/trace-format.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## 4. Record types'), doc.indexOf('## 5.'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([A-Z_]+)` \| `([^`]*)`[^|]*\|\s*$/gm)].map((m) => ({ type: Number(m[1]), name: m[2], layout: m[3] }));
    expect(rows.length).toBe(19);
    expect(canonicalTypeTable().map(({ type, name, layout }) => ({ type, name, layout }))).toEqual(rows);
  });

  test('crc32 is the zlib CRC, native and fallback alike', () => {
    const data = Buffer.from('123456789');
    expect(crc32(data)).toBe(0xcbf43926);
    expect(crcImpl(data.subarray(4), crcImpl(data.subarray(0, 4)))).toBe(0xcbf43926);
    expect(crc32Portable(data)).toBe(0xcbf43926);
    expect(crc32Portable(data.subarray(4), crc32Portable(data.subarray(0, 4)))).toBe(0xcbf43926);
    const big = sampleTrace().bytes;
    expect(crc32Portable(big)).toBe(crc32(big));
    const z = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
    if (z) expect(z(data)).toBe(0xcbf43926);
  });
});

describe('writer', () => {
  test('produces the bytes the spec describes (independently assembled)', () => {
    const t = extraType(7, 'X', 'a:u16 s:str');
    const w = new MetaWriter(undefined, [t]);
    w.writeType(7, { a: 0x1234, s: 'hi' }, 0x0102030405060708n, 1);
    // header
    const name = Buffer.from('X');
    const layout = Buffer.from('a:u16 s:str');
    const hdr = Buffer.alloc(24 + 2 + 4 + name.length + 4 + layout.length);
    hdr.write('JPORTAL\0', 0, 'latin1');
    hdr.writeUInt16LE(1, 8);
    hdr.writeUInt16LE(5, 10); // minor version 1.5
    hdr.writeUInt32LE(hdr.length, 12);
    hdr.writeUInt32LE(1, 20);
    hdr.writeUInt16LE(7, 24);
    hdr.writeUInt32LE(name.length, 26);
    name.copy(hdr, 30);
    hdr.writeUInt32LE(layout.length, 30 + name.length);
    layout.copy(hdr, 34 + name.length);
    hdr.writeUInt32LE(crcImpl(hdr), 16); // computed with the field zero
    // record
    const rec = Buffer.alloc(28 + 2 + 4 + 2);
    rec.writeUInt32LE(rec.length, 0);
    rec.writeUInt16LE(7, 4);
    rec.writeUInt16LE(1, 6);
    rec.writeBigUInt64LE(0n, 8);
    rec.writeBigUInt64LE(0x0102030405060708n, 16);
    rec.writeUInt16LE(0x1234, 28);
    rec.writeUInt32LE(2, 30);
    rec.write('hi', 34);
    rec.writeUInt32LE(crcImpl(rec), 24);
    expect(w.bytes().toString('hex')).toBe(Buffer.concat([hdr, rec]).toString('hex'));
  });

  test('refuses values that do not fit their fields', () => {
    const w = new MetaWriter();
    expect(() => w.write('AGENT_LOG', { level: 256, component: 'c', message: 'm' })).toThrow(/level/);
    expect(() => w.write('THREAD_END', { os_tid: -1, java_tid: 1 })).toThrow(/os_tid/);
    expect(() => w.write('THREAD_END', { os_tid: 1, java_tid: 1.5 })).toThrow(/java_tid/);
    expect(() => w.write('CODELET', { begin: 1, end: 2, bytecode: 0, kind: 0 } as never)).toThrow(/missing field description/);
    expect(() => w.writeType(999, {})).toThrow(/not in this file's type table/);
    expect(w.nextSeq).toBe(0); // nothing was written
  });

  test('writes to a file what it would collect in memory', () => {
    const d = tmpDir();
    const f = path.join(d, 'meta.jpt');
    const fw = MetaWriter.toFile(f);
    const mw = MetaWriter.toBuffer();
    for (const w of [fw, mw]) {
      w.write('VM_START', {}, 5n);
      w.write('THREAD_START', { os_tid: 1, java_tid: 2, daemon: 1, name: 'x' }, 6n, 1);
    }
    fw.close();
    expect(fs.readFileSync(f).equals(mw.bytes())).toBe(true);
    fs.rmSync(d, { recursive: true });
  });
});

describe('round trip', () => {
  test('every record type reads back as written: payloads, seq, tsc, flags, offsets', () => {
    const { bytes, written, writer } = sampleTrace();
    const { records, problems, header } = read(bytes);
    expect(problems).toEqual([]);
    expect(records).toHaveLength(written.length);
    expect(new Set(records.map((r) => r.typeName))).toEqual(new Set(Object.keys(RecordType)));
    records.forEach((r, i) => {
      expect(r.seq).toBe(i);
      expect(r.typeName).toBe(written[i].name);
      expect(r.type).toBe(RecordType[written[i].name as RecordTypeName]);
      expect(r.tsc).toBe(written[i].tsc);
      expect(r.flags).toBe(written[i].flags);
      expect(r.payload).toEqual(written[i].payload);
    });
    expect(records[0].offset).toBe(header.size);
    expect(header.size).toBe(writer.headerBytes.length);
    records.slice(1).forEach((r, i) => expect(r.offset).toBe(records[i].offset + records[i].size));
    expect(records[records.length - 1].offset + records[records.length - 1].size).toBe(bytes.length);
    // the header's table is the canonical one
    expect([...header.types.values()].map(({ type, name, layout }) => ({ type, name, layout }))).toEqual(
      Object.entries(RecordType).map(([name, type]) => ({ type, name, layout: CANONICAL_LAYOUTS[name as RecordTypeName] })),
    );
    // typed access
    const nm = records.find((r) => isRecord(r, 'NMETHOD_LOAD'));
    if (!nm || !isRecord(nm, 'NMETHOD_LOAD')) throw new Error('no nmethod');
    expect(nm.payload.pcs[0].frames[1]).toEqual({ method: 0, bci: 12 });
    expect(typeof nm.payload.code_begin).toBe('number');
    const cal = records[0];
    if (!isRecord(cal, 'CALIBRATION')) throw new Error('no calibration');
    expect(typeof cal.payload.mono_ns).toBe('bigint');
  });

  test('records of a type this reader does not know are decoded by the layout in the file', () => {
    const t = extraType(900, 'FUTURE_THING', 'id:u32 when:w64 tags:[k:str v:i16] blob:bytes neg:i64');
    const w = new MetaWriter(undefined, [...canonicalTypeTable(), t]);
    w.write('VM_START', {});
    w.writeType(900, { id: 7, when: 2n ** 63n + 5n, tags: [{ k: 'a', v: -3 }, { k: 'ü', v: 32767 }], blob: new Uint8Array([1, 2]), neg: -5 });
    const { records, header } = read(w.bytes());
    expect(header.types.get(900)!.known).toBeUndefined();
    expect(records[1].typeName).toBe('FUTURE_THING');
    expect(records[1].payload).toEqual({ id: 7, when: 2n ** 63n + 5n, tags: [{ k: 'a', v: -3 }, { k: 'ü', v: 32767 }], blob: new Uint8Array([1, 2]), neg: -5 });
  });

  test('a record whose type is missing from the table is passed through raw', () => {
    const w = new MetaWriter(undefined, [extraType(901, 'GONE', 'x:u8')]);
    w.writeType(901, { x: 9 });
    const bytes = w.bytes();
    // same stream under a header without type 901
    const header2 = new MetaWriter(undefined, [extraType(5, 'AGENT_LOG', 'level:u8 component:str message:str')]).headerBytes;
    const records = read(Buffer.concat([header2, bytes.subarray(w.headerBytes.length)])).records;
    expect(records[0].typeName).toBe('type901');
    expect(records[0].payload).toEqual({ raw: new Uint8Array([9]) });
  });

  test('a known type whose layout lacks a typed field fails at its first record, naming the type', () => {
    const table = canonicalTypeTable().map((t) => (t.type === RecordType.CODELET ? extraType(11, 'CODELET', 'begin:u64 end:u64 bytecode:i32') : t));
    const w = new MetaWriter(undefined, table);
    w.write('VM_START', {});
    const at = w.writeType(RecordType.CODELET, { begin: 1, end: 2, bytecode: 3 });
    const { records, error } = readAll(w.bytes());
    expect(records.map((r) => r.typeName)).toEqual(['VM_START']);
    expect(error!.code).toBe('layout-mismatch');
    expect(error!.offset).toBe(at);
    expect(error!.message).toMatch(/CODELET.*kind:u8/);
  });

  test('fields appended by a newer minor version are decoded and tolerated', () => {
    const table = canonicalTypeTable().map((t) => (t.type === RecordType.CODELET ? extraType(11, 'CODELET', `${t.layout} extra:u32`) : t));
    const w = new MetaWriter(undefined, { types: table, minor: 99 });
    w.writeType(RecordType.CODELET, { begin: 1, end: 2, bytecode: 3, kind: 1, description: 'd', extra: 77 });
    const { records, header } = read(w.bytes());
    expect(header.minor).toBe(99);
    expect(records[0].payload).toEqual({ begin: 1, end: 2, bytecode: 3, kind: 1, description: 'd', extra: 77 });
  });

  test('a 1.2 file, whose NMETHOD_LOAD lacks the constants section 1.3 appended, still reads (consts absent)', () => {
    const table = canonicalTypeTable().map((t) =>
      t.type === RecordType.NMETHOD_LOAD ? extraType(21, 'NMETHOD_LOAD', t.layout.replace(' consts_begin:u64 consts:bytes', '')) : t,
    );
    const w = new MetaWriter(undefined, { types: table, minor: 2 });
    const nm = { method: 1, code_begin: 64, code_size: 2, blob_begin: 0, insts_begin: 64, stub_begin: 66, entry: 64, verified_entry: 64, osr_entry: 0, compile_id: 5, level: 4, osr_bci: -1, code: new Uint8Array([0x90, 0xc3]), pcs: [] };
    w.writeType(RecordType.NMETHOD_LOAD, nm);
    const p2 = read(w.bytes()).records[0].payload as Record<string, unknown>;
    expect(p2.consts).toBeUndefined();
    expect(p2.compile_id).toBe(5);
    // and a 1.3 record carries them
    const w3 = new MetaWriter(undefined);
    w3.write('NMETHOD_LOAD', { ...nm, consts_begin: 32, consts: new Uint8Array([1, 2, 3]) });
    const r3 = read(w3.bytes()).records[0].payload as { consts_begin: number; consts: Uint8Array };
    expect([r3.consts_begin, Array.from(r3.consts)]).toEqual([32, [1, 2, 3]]);
  });

  test('a 1.0 file, whose CODE_PATCH layout lacks the since field 1.1 appended, still reads (since absent)', () => {
    const table = canonicalTypeTable().map((t) => (t.type === RecordType.CODE_PATCH ? extraType(23, 'CODE_PATCH', 'code_begin:u64 address:u64 bytes:bytes') : t));
    const w = new MetaWriter(undefined, { types: table, minor: 0 });
    w.writeType(RecordType.CODE_PATCH, { code_begin: 16, address: 20, bytes: new Uint8Array([1, 2]) });
    const { records, header } = read(w.bytes());
    expect(header.minor).toBe(0);
    const p0 = records[0].payload as Record<string, unknown>;
    expect(p0.since).toBeUndefined();
    expect(p0.address).toBe(20);
    // a layout missing a field that 1.0 already had is still refused
    const bad = canonicalTypeTable().map((t) => (t.type === RecordType.CODE_PATCH ? extraType(23, 'CODE_PATCH', 'code_begin:u64 address:u64') : t));
    const wb = new MetaWriter(undefined, { types: bad });
    wb.writeType(RecordType.CODE_PATCH, { code_begin: 16, address: 20 });
    expect(readErr(wb.bytes()).message).toMatch(/CODE_PATCH.*lacks field bytes:bytes/);
  });

  test('a payload longer than its layout is fine; a shorter one is a payload-overrun at the record', () => {
    const long = extraType(RecordType.THREAD_END, 'THREAD_END', 'os_tid:u32 java_tid:u64 pad:u32');
    const w = new MetaWriter(undefined, [long]);
    w.writeType(RecordType.THREAD_END, { os_tid: 1, java_tid: 2, pad: 3 });
    const rec = Buffer.from(w.bytes().subarray(w.headerBytes.length));
    const canonical = new MetaWriter(undefined, canonicalTypeTable()).headerBytes;
    expect(read(Buffer.concat([canonical, rec])).records[0].payload).toEqual({ os_tid: 1, java_tid: 2 });

    const short = new MetaWriter(undefined, [extraType(RecordType.THREAD_END, 'THREAD_END', 'os_tid:u32')]);
    short.writeType(RecordType.THREAD_END, { os_tid: 1 });
    const e = readErr(Buffer.concat([canonical, short.bytes().subarray(short.headerBytes.length)]));
    expect(e.code).toBe('payload-overrun');
    expect(e.offset).toBe(canonical.length);
    expect(e.message).toMatch(/^meta\.jpt: record at byte \d+: THREAD_END payload.*java_tid/);
  });

  test('a u64 past 2^53-1 is a number-overflow at its record', () => {
    const w = new MetaWriter();
    w.write('VM_START', {});
    const at = w.write('THREAD_END', { os_tid: 1, java_tid: 2n ** 53n as unknown as number });
    const { records, error } = readAll(w.bytes());
    expect(records).toHaveLength(1);
    expect(error!.code).toBe('number-overflow');
    expect(error!.offset).toBe(at);
  });
});

describe('streaming', () => {
  test('tiny chunks give exactly what the whole-buffer reader gives', () => {
    const { bytes } = sampleTrace();
    const d = tmpDir();
    const file = path.join(d, 'meta.jpt');
    fs.writeFileSync(file, bytes);
    const whole = read(bytes).records;
    for (const chunkSize of [1, 7, 28, 100, 4096]) {
      const r = new MetaStreamReader(file, { chunkSize });
      expect([...r.records()]).toEqual(whole);
      expect(r.problems).toEqual([]);
    }
    expect(readMetaFile(file, { chunkSize: 7 }).records).toEqual(whole);
    fs.rmSync(d, { recursive: true });
  });

  test('tiny chunks report the same truncation and corruption as the whole-buffer reader', () => {
    const { bytes } = sampleTrace();
    const whole = read(bytes).records;
    const d = tmpDir();
    const file = path.join(d, 'meta.jpt');
    const cut = bytes.subarray(0, whole[10].offset + 40);
    fs.writeFileSync(file, cut);
    const a = read(cut, undefined, file);
    const b = readMetaFile(file, { chunkSize: 7 });
    expect(b.records).toEqual(a.records);
    expect(b.problems).toEqual(a.problems);
    const bad = Buffer.from(bytes);
    bad[whole[12].offset + 30] ^= 0x10;
    fs.writeFileSync(file, bad);
    const r = new MetaStreamReader(file, { chunkSize: 7 });
    const got: unknown[] = [];
    expect(() => {
      for (const x of r.records()) got.push(x);
    }).toThrow(readErr(bad).message);
    expect(got).toHaveLength(12);
    fs.rmSync(d, { recursive: true });
  });

  test('a huge size in a small file is reported as truncation without allocating it', () => {
    const { bytes } = sampleTrace();
    const last = read(bytes).records.at(-1)!;
    const bad = Buffer.from(bytes);
    bad.writeUInt32LE(1 << 30, last.offset);
    const d = tmpDir();
    const file = path.join(d, 'meta.jpt');
    fs.writeFileSync(file, bad);
    const before = process.memoryUsage().arrayBuffers;
    const r = readMetaFile(file);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 << 20);
    expect(r.problems).toMatchObject([{ code: 'truncated', offset: last.offset }]);
    fs.rmSync(d, { recursive: true });
  });

  test('openTrace opens TRACE_DIR/meta.jpt and checks its header', () => {
    const d = tmpDir();
    fs.writeFileSync(path.join(d, 'meta.jpt'), sampleTrace().bytes);
    const t = openTrace(d);
    expect(t.header.major).toBe(1);
    expect([...t.meta.records()]).toHaveLength(22);
    expect(t.sideband()).toBeUndefined();
    expect(() => [...t.meta.records()]).toThrow(/only be iterated once/);
    fs.writeFileSync(path.join(d, 'meta.jpt'), 'JPORTAL');
    expect(() => openTrace(d)).toThrow(TraceFormatError);
    fs.rmSync(d, { recursive: true });
  });

  test('an in-memory reader can be iterated again with the same result', () => {
    const r = MetaReader.fromBytes('m', sampleTrace().bytes);
    expect([...r.records()]).toEqual([...r.records()]);
  });
});
