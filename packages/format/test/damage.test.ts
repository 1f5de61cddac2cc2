import { MetaReader, MetaWriter, TraceFormatError } from '../src';
import { read, readAll, readErr, rng, sampleTrace } from './fixtures';

const { bytes } = sampleTrace();
const { records: full, header } = read(bytes);
const containing = (at: number) => full.filter((r) => r.offset <= at).pop()!;

describe('truncation', () => {
  test('a cut anywhere inside the last record keeps every earlier record and names the cut record', () => {
    const last = full[full.length - 1];
    for (let cut = last.offset + 1; cut < bytes.length; cut++) {
      const { records, problems } = read(bytes.subarray(0, cut));
      expect(records).toEqual(full.slice(0, -1));
      expect(problems).toHaveLength(1);
      expect(problems[0].code).toBe('truncated');
      expect(problems[0].offset).toBe(last.offset);
      expect(problems[0].message).toMatch(new RegExp(`^meta\\.jpt: record at byte ${last.offset}: `));
    }
  });

  test('a cut inside an earlier record keeps the records before it', () => {
    const r = full[7];
    const { records, problems } = read(bytes.subarray(0, r.offset + 30));
    expect(records).toHaveLength(7);
    expect(problems).toMatchObject([{ code: 'truncated', offset: r.offset }]);
  });

  test('a cut at a record boundary is not a problem', () => {
    expect(read(bytes.subarray(0, full[5].offset)).problems).toEqual([]);
    expect(read(bytes.subarray(0, header.size)).records).toEqual([]);
  });

  test('a cut inside the file header is a truncated error', () => {
    for (const cut of [0, 5, 8, 23, 24, 100, header.size - 1]) {
      const e = readErr(bytes.subarray(0, cut));
      expect(e).toBeInstanceOf(TraceFormatError);
      expect(e.code).toBe('truncated');
      expect(e.offset).toBe(cut);
      expect(e.message).toMatch(/^meta\.jpt: byte \d+: truncated: the file ends inside the file header/);
    }
  });
});

describe('bit flips', () => {
  const flip = (at: number, bit: number) => {
    const d = Buffer.from(bytes);
    d[at] ^= 1 << bit;
    return d;
  };

  test('in a payload: record-crc at the record, after every earlier record', () => {
    const r = full[10];
    const { records, error } = readAll(flip(r.offset + 40, 3));
    expect(records).toEqual(full.slice(0, 10));
    expect(error!.code).toBe('record-crc');
    expect(error!.offset).toBe(r.offset);
    expect(error!.message).toMatch(new RegExp(`^meta\\.jpt: record at byte ${r.offset}: record CRC mismatch \\(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\\)$`));
  });

  test('in a size field: bad-size, record-crc or truncation, always at that record', () => {
    const r = full[4];
    for (let bit = 0; bit < 32; bit++) {
      const { records, problems, error } = readAll(flip(r.offset + (bit >> 3), bit & 7));
      expect(records).toEqual(full.slice(0, 4));
      const size = r.size ^ (1 << bit);
      if (size < 28 || size > 1 << 30) expect(error?.code).toBe('bad-size');
      else if (r.offset + size > bytes.length) expect(problems).toMatchObject([{ code: 'truncated', offset: r.offset }]);
      else expect(error?.code).toBe('record-crc');
      if (error) expect(error.offset).toBe(r.offset);
    }
  });

  test('in the file header: the matching header error', () => {
    expect(readErr(flip(0, 0)).code).toBe('bad-magic');
    expect(readErr(flip(9, 0)).code).toBe('unsupported-version');
    expect(readErr(flip(10, 0))).toMatchObject({ code: 'header-crc', offset: 16 });
    expect(readErr(flip(16, 5))).toMatchObject({ code: 'header-crc', offset: 16 });
    expect(readErr(flip(header.size - 3, 1))).toMatchObject({ code: 'header-crc', offset: 16 });
    expect(readErr(flip(15, 7))).toMatchObject({ code: 'bad-header', offset: 12 });
    expect(readErr(flip(header.size - 3, 1)).message).toMatch(/^meta\.jpt: header at byte 16: file header CRC mismatch/);
  });

  test('200 random single-bit flips are all detected, at the damaged record or header, quickly', () => {
    const rand = rng(20240611);
    const t0 = Date.now();
    for (let i = 0; i < 200; i++) {
      const at = Math.floor(rand() * bytes.length);
      const bit = Math.floor(rand() * 8);
      const { records, problems, error } = readAll(flip(at, bit));
      const where = `flip of bit ${bit} at byte ${at}`;
      if (at < header.size) {
        // nothing of a damaged header is trusted
        expect({ where, records: records.length }).toEqual({ where, records: 0 });
        expect(error).toBeDefined();
        expect(['bad-magic', 'unsupported-version', 'header-crc', 'bad-header', 'truncated']).toContain(error!.code);
        continue;
      }
      const rec = containing(at);
      expect({ where, before: records.length }).toEqual({ where, before: full.indexOf(rec) });
      expect(records).toEqual(full.slice(0, full.indexOf(rec)));
      if (error) expect({ where, offset: error.offset }).toEqual({ where, offset: rec.offset });
      else expect({ where, problems: problems.map((p) => [p.code, p.offset]) }).toEqual({ where, problems: [['truncated', rec.offset]] });
    }
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('sequence', () => {
  test('a seq gap is reported with its size and reading goes on', () => {
    const w = new MetaWriter();
    w.write('VM_START', {});
    w.skipSeq(3);
    const at = w.write('VM_START', {});
    w.write('VM_START', {});
    const { records, problems } = read(w.bytes());
    expect(records.map((r) => r.seq)).toEqual([0, 4, 5]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: 'seq-gap', missing: 3, offset: at });
    expect(problems[0].message).toMatch(/expected seq 1, found 4 \(3 records missing\)/);
  });

  test('a file that does not start at seq 0 reports the missing head', () => {
    const w = new MetaWriter();
    w.skipSeq(2);
    w.write('VM_START', {});
    expect(read(w.bytes()).problems).toMatchObject([{ code: 'seq-gap', missing: 2 }]);
  });

  test('throwOnCorruption: false leaves the error in reader.error after the good records', () => {
    const bad = Buffer.from(bytes);
    bad[full[3].offset + 29] ^= 1;
    const r = MetaReader.fromBytes('meta.jpt', bad, { throwOnCorruption: false });
    expect([...r.records()]).toHaveLength(3);
    expect(r.error).toMatchObject({ code: 'record-crc', offset: full[3].offset });
  });
});
