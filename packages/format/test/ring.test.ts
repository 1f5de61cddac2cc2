import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MetaWriter, readMetaFile, RingReader, TraceFormatError } from '../src';

const CAP = 4096;
const DATA_OFF = 4096;

/** Lays out a ring file per docs/trace-format.md §5 with `stream` written starting at stream byte `start`. */
function makeRing(dir: string, stream: Uint8Array, opts: { start?: number; consumer?: number; mode?: number; head?: bigint; tail?: bigint } = {}) {
  const header = new MetaWriter().bytes(); // the file header alone
  const f = Buffer.alloc(DATA_OFF + CAP);
  f.write('JPRING\0\0', 0, 'latin1');
  f.writeUInt32LE(1, 8);
  f.writeUInt32LE(DATA_OFF, 12);
  f.writeBigUInt64LE(BigInt(CAP), 16);
  const start = opts.start ?? 0;
  f.writeBigUInt64LE(opts.head ?? BigInt(start + stream.length), 24);
  f.writeBigUInt64LE(opts.tail ?? BigInt(start), 32);
  f.writeUInt32LE(opts.consumer ?? process.pid, 40);
  f.writeUInt32LE(1, 44);
  f.writeUInt32LE(999, 48);
  f.writeUInt32LE(header.length, 52);
  Buffer.from(header).copy(f, 56);
  for (let i = 0; i < stream.length; i++) f[DATA_OFF + ((start + i) % CAP)] = stream[i];
  const p = path.join(dir, `jportal-${Math.floor(Math.random() * 1e9)}.ring`);
  fs.writeFileSync(p, f, { mode: opts.mode ?? 0o600 });
  fs.chmodSync(p, opts.mode ?? 0o600);
  return { path: p, header };
}

/** Records only (no file header) of a small trace: the byte stream the agent puts in the ring. */
function recordStream(firstSeq = 0): Uint8Array {
  const w = new MetaWriter();
  w.skipSeq(firstSeq);
  const headerLen = w.size;
  w.write('VM_START', {});
  w.write('CODE_BLOB', { address: 0x1000, size: 900, name: 'stub', code: new Uint8Array(900).fill(7) });
  w.write('THREAD_START', { os_tid: 5, java_tid: 1, daemon: 0, name: 'main' });
  w.write('CODE_BLOB', { address: 0x2000, size: 1500, name: 'stub2', code: new Uint8Array(1500).fill(9) });
  w.write('VM_END', { records: 5, bytes: 0, stalls: 0, stall_ns: 0, dropped: 0, dropped_bytes: 0, patch_scans: 0, errors: 0 });
  return w.bytes().subarray(headerLen);
}

describe('RingReader', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jpring-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('drains a stream that wraps around the end of the data area into a valid meta file', () => {
    // an empty ring, then an emulated agent committing records: first a filler that ends 700 bytes before
    // the end of the data area, then records that wrap around it
    const ring = makeRing(dir, new Uint8Array(0));
    const out = path.join(dir, 'meta.jpt');
    const fd = fs.openSync(out, 'w');
    const r = RingReader.open(ring.path, process.pid);
    r.writeFileHeader(fd);
    expect(r.drainOnce(fd)).toBe(0);
    const filler = recordStreamPrefix(CAP - 700, 0);
    produce(ring.path, filler);
    expect(r.drainOnce(fd)).toBe(filler.length);
    const stream = recordStream(1);
    expect(stream.length).toBeGreaterThan(700);
    expect(stream.length).toBeLessThan(CAP);
    produce(ring.path, stream);
    expect(r.pending()).toBe(stream.length);
    expect(r.drainOnce(fd)).toBe(stream.length);
    fs.closeSync(fd);
    const back = readMetaFile(out);
    expect(back.problems).toEqual([]);
    expect(back.records.map((x) => x.typeName)).toEqual(['CODE_BLOB', 'VM_START', 'CODE_BLOB', 'THREAD_START', 'CODE_BLOB', 'VM_END']);
    expect(r.isClosed()).toBe(true);
    expect(r.pending()).toBe(0);
    // the tail was published back into the ring
    expect(fs.readFileSync(ring.path).readBigUInt64LE(32)).toBe(BigInt(filler.length + stream.length));
    r.close();
  });

  test('refuses rings it must not trust', () => {
    const stream = recordStream();
    const other = makeRing(dir, stream, { consumer: process.pid + 1 });
    expect(() => RingReader.open(other.path, process.pid)).toThrow(/expects consumer pid/);
    const open = makeRing(dir, stream, { mode: 0o644 });
    expect(() => RingReader.open(open.path, process.pid)).toThrow(/mode 644/);
  });

  test('hostile counters and record sizes end in a typed error, quickly', () => {
    const stream = Buffer.from(recordStream());
    const bad = makeRing(dir, stream, { head: BigInt(CAP * 3) });
    const fd = fs.openSync(path.join(dir, 'x'), 'w');
    const r1 = RingReader.open(bad.path, process.pid);
    expect(() => r1.drainOnce(fd)).toThrow(TraceFormatError);
    r1.close();
    const zero = Buffer.from(stream);
    zero.writeUInt32LE(0, 0);
    const r2 = RingReader.open(makeRing(dir, zero).path, process.pid);
    expect(() => r2.drainOnce(fd)).toThrow(/impossible size 0/);
    r2.close();
    const huge = Buffer.from(stream);
    huge.writeUInt32LE(0x7fffffff, 0);
    const r3 = RingReader.open(makeRing(dir, huge).path, process.pid);
    expect(() => r3.drainOnce(fd)).toThrow(/impossible size/);
    r3.close();
    const flipped = Buffer.from(stream);
    flipped[40] ^= 4;
    const r4 = RingReader.open(makeRing(dir, flipped).path, process.pid);
    expect(() => r4.drainOnce(fd)).toThrow(/CRC mismatch/);
    r4.close();
    fs.closeSync(fd);
  });
});

/** Filler records totalling exactly `n` bytes (n >= 28): one CODE_BLOB sized to fit. */
function recordStreamPrefix(n: number, seq: number): Buffer {
  // CODE_BLOB overhead: 28 header + 8 address + 4 size + 4+4 name ("fill") + 4 code length
  const overhead = 28 + 8 + 4 + 8 + 4;
  const w = new MetaWriter();
  w.skipSeq(seq);
  const headerLen = w.size;
  w.write('CODE_BLOB', { address: 1, size: n - overhead, name: 'fill', code: new Uint8Array(n - overhead) });
  const b = Buffer.from(w.bytes().subarray(headerLen));
  expect(b.length).toBe(n);
  return b;
}

/** What the agent does on commit: copy bytes at head (mod capacity, wrapping), then publish the new head. */
function produce(ringPath: string, bytes: Uint8Array): void {
  const fd = fs.openSync(ringPath, 'r+');
  const h = Buffer.alloc(8);
  fs.readSync(fd, h, 0, 8, 24);
  const head = Number(h.readBigUInt64LE(0));
  for (let i = 0; i < bytes.length; i++) fs.writeSync(fd, bytes, i, 1, DATA_OFF + ((head + i) % CAP));
  h.writeBigUInt64LE(BigInt(head + bytes.length));
  fs.writeSync(fd, h, 0, 8, 24);
  fs.closeSync(fd);
}
