import * as fs from 'fs';
import * as path from 'path';
import { MetaWriter, readMetaFile, RingReader, TraceFormatError } from '../src';
import { tmpDir } from './fixtures';

const CAP = 4096;
const DATA_OFF = 4096;

interface RingOpts { start?: number; consumer?: number; mode?: number; head?: bigint; tail?: bigint; cap?: number; state?: number; header?: Uint8Array; fileHeaderSize?: number; magic?: string; version?: number }

/** Lays out a ring file per docs/trace-format.md §5 with `stream` written starting at stream byte `start`. */
function makeRing(dir: string, stream: Uint8Array, opts: RingOpts = {}) {
  const cap = opts.cap ?? CAP;
  const header = opts.header ?? new MetaWriter().headerBytes;
  const f = Buffer.alloc(DATA_OFF + cap);
  f.write(opts.magic ?? 'JPRING\0\0', 0, 'latin1');
  f.writeUInt32LE(opts.version ?? 1, 8);
  f.writeUInt32LE(DATA_OFF, 12);
  f.writeBigUInt64LE(BigInt(cap), 16);
  const start = opts.start ?? 0;
  f.writeBigUInt64LE(opts.head ?? BigInt(start + stream.length), 24);
  f.writeBigUInt64LE(opts.tail ?? BigInt(start), 32);
  f.writeUInt32LE(opts.consumer ?? process.pid, 40);
  f.writeUInt32LE(opts.state ?? 0, 44);
  f.writeUInt32LE(999, 48);
  f.writeUInt32LE(opts.fileHeaderSize ?? header.length, 52);
  Buffer.from(header).copy(f, 56);
  for (let i = 0; i < stream.length; i++) f[DATA_OFF + ((start + i) % cap)] = stream[i];
  const p = path.join(dir, `jportal-${Math.floor(Math.random() * 1e9)}.ring`);
  fs.writeFileSync(p, f, { mode: opts.mode ?? 0o600 });
  fs.chmodSync(p, opts.mode ?? 0o600);
  return { path: p, header };
}

/** Records only (no file header): the byte stream the agent puts in the ring, seq from `firstSeq`. */
function recordStream(firstSeq = 0): Buffer {
  const w = new MetaWriter();
  w.skipSeq(firstSeq);
  w.write('VM_START', {});
  w.write('CODE_BLOB', { address: 0x1000, size: 900, name: 'stub', code: new Uint8Array(900).fill(7) });
  w.write('THREAD_START', { os_tid: 5, java_tid: 1, daemon: 0, name: 'main' });
  w.write('CODE_BLOB', { address: 0x2000, size: 1500, name: 'stub2', code: new Uint8Array(1500).fill(9) });
  w.write('VM_END', { records: 5, bytes: 0, stalls: 0, stall_ns: 0, dropped: 0, dropped_bytes: 0, patch_scans: 0, errors: 0 });
  return w.bytes().subarray(w.headerBytes.length);
}

/** One CODE_BLOB record of exactly `n` bytes (n >= 48). */
function filler(n: number, seq: number): Buffer {
  const overhead = 28 + 8 + 4 + 8 + 4; // header, address, size, name "fill", code length
  const w = new MetaWriter();
  w.skipSeq(seq);
  w.write('CODE_BLOB', { address: 1, size: n - overhead, name: 'fill', code: new Uint8Array(n - overhead).fill(seq & 0xff) });
  const b = w.bytes().subarray(w.headerBytes.length);
  expect(b.length).toBe(n);
  return b;
}

/** What the agent does on commit: copy bytes at head (mod capacity, wrapping), then publish the new head. */
function produce(ringPath: string, bytes: Uint8Array, cap = CAP): void {
  const fd = fs.openSync(ringPath, 'r+');
  const h = Buffer.alloc(8);
  fs.readSync(fd, h, 0, 8, 24);
  const head = Number(h.readBigUInt64LE(0));
  const pos = head % cap;
  const first = Math.min(bytes.length, cap - pos);
  fs.writeSync(fd, bytes, 0, first, DATA_OFF + pos);
  if (first < bytes.length) fs.writeSync(fd, bytes, first, bytes.length - first, DATA_OFF);
  h.writeBigUInt64LE(BigInt(head + bytes.length));
  fs.writeSync(fd, h, 0, 8, 24);
  fs.closeSync(fd);
}

const setU = (p: string, off: number, v: number | bigint, width: 4 | 8) => {
  const fd = fs.openSync(p, 'r+');
  const b = Buffer.alloc(width);
  if (width === 4) b.writeUInt32LE(Number(v));
  else b.writeBigUInt64LE(BigInt(v));
  fs.writeSync(fd, b, 0, width, off);
  fs.closeSync(fd);
};

function errorOf(f: () => unknown): TraceFormatError {
  try {
    f();
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('expected a TraceFormatError');
}

describe('RingReader', () => {
  let dir: string;
  let outFd: number;
  const outPath = () => path.join(dir, 'meta.jpt');
  beforeEach(() => {
    dir = tmpDir('jpring-');
    outFd = fs.openSync(path.join(dir, 'meta.jpt'), 'w');
  });
  afterEach(() => {
    try {
      fs.closeSync(outFd);
    } catch {
      /* closed by the test */
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('drains a stream that wraps around the end of the data area into exactly header + records', () => {
    const ring = makeRing(dir, new Uint8Array(0));
    const r = RingReader.open(ring.path);
    expect(r.info).toMatchObject({ capacity: CAP, dataOffset: DATA_OFF, agentPid: 999, consumerPid: process.pid });
    r.writeFileHeader(outFd);
    expect(r.drainOnce(outFd)).toBe(0);
    const fill = filler(CAP - 700, 0);
    produce(ring.path, fill);
    expect(r.drain(outFd)).toBe(fill.length);
    const stream = recordStream(1);
    expect(stream.length).toBeGreaterThan(700); // wraps
    expect(stream.length).toBeLessThan(CAP);
    produce(ring.path, stream);
    expect(r.pending()).toBe(stream.length);
    expect(r.isClosed()).toBe(false);
    setU(ring.path, 44, 1, 4);
    expect(r.isClosed()).toBe(true);
    expect(r.drain(outFd)).toBe(stream.length);
    expect(r.pending()).toBe(0);
    expect(r.records).toBe(6);
    fs.closeSync(outFd);
    expect(fs.readFileSync(outPath()).equals(Buffer.concat([ring.header, fill, stream]))).toBe(true);
    const back = readMetaFile(outPath());
    expect(back.problems).toEqual([]);
    expect(back.records.map((x) => x.typeName)).toEqual(['CODE_BLOB', 'VM_START', 'CODE_BLOB', 'THREAD_START', 'CODE_BLOB', 'VM_END']);
    // the tail was published back into the ring
    expect(fs.readFileSync(ring.path).readBigUInt64LE(32)).toBe(BigInt(fill.length + stream.length));
    r.close();
  });

  test('a record larger than one drain chunk (8 MiB) is read whole', () => {
    const cap = 16 << 20;
    const ring = makeRing(dir, new Uint8Array(0), { cap });
    const r = RingReader.open(ring.path);
    const big = filler(9 << 20, 0);
    produce(ring.path, big, cap);
    expect(r.drainOnce(outFd)).toBe(big.length);
    r.close();
  });

  test('only whole verified records reach the output; a bad record stops after the good ones are consumed', () => {
    const stream = recordStream();
    const firstTwo = stream.readUInt32LE(0) + stream.readUInt32LE(stream.readUInt32LE(0));
    const bad = Buffer.from(stream);
    bad[firstTwo + 30] ^= 1; // damage the third record
    const ring = makeRing(dir, bad);
    const r = RingReader.open(ring.path);
    const e = errorOf(() => r.drainOnce(outFd));
    expect(e.code).toBe('record-crc');
    expect(e.offset).toBe(DATA_OFF + firstTwo);
    expect(e.message).toMatch(new RegExp(`record at stream byte ${firstTwo} \\(meta\\.jpt byte ${ring.header.length + firstTwo}\\): record CRC mismatch`));
    expect(r.drained).toBe(firstTwo);
    expect(fs.readFileSync(ring.path).readBigUInt64LE(32)).toBe(BigInt(firstTwo));
    expect(fs.readFileSync(outPath()).equals(stream.subarray(0, firstTwo))).toBe(true);
    r.close();
  });

  test('an incomplete record is left in the ring until complete; at close it is a truncated error', () => {
    const stream = recordStream();
    const first = stream.readUInt32LE(0);
    const ring = makeRing(dir, stream, { head: BigInt(first + 10) });
    const r = RingReader.open(ring.path);
    expect(r.drainOnce(outFd)).toBe(first);
    expect(r.drainOnce(outFd)).toBe(0);
    expect(r.pending()).toBe(10);
    setU(ring.path, 44, 1, 4);
    expect(errorOf(() => r.drainOnce(outFd)).code).toBe('truncated');
    r.close();
  });

  test('refuses rings it must not trust', () => {
    const stream = recordStream();
    const msg = (o: RingOpts, s: Uint8Array = stream) => errorOf(() => RingReader.open(makeRing(dir, s, o).path)).message;
    expect(msg({ consumer: process.pid + 1 })).toMatch(/consumer_pid is \d+, not \d+/);
    expect(msg({ mode: 0o644 })).toMatch(/mode 644, expected 600/);
    expect(msg({ mode: 0o640 })).toMatch(/mode 640/);
    expect(msg({ magic: 'JPRINX\0\0' })).toMatch(/bad ring magic/);
    expect(msg({ version: 2 })).toMatch(/ring version 2/);
    expect(msg({ cap: 3000 })).toMatch(/implausible capacity 3000/);
    expect(msg({ tail: 28n, head: 28n })).toMatch(/already drained/);
    expect(msg({ fileHeaderSize: 5000 })).toMatch(/does not fit before data_offset/);
    const hdr = Buffer.from(new MetaWriter().headerBytes);
    expect(msg({ fileHeaderSize: hdr.length + 4, header: Buffer.concat([hdr, Buffer.alloc(4)]) })).toMatch(/differs from the header's own size/);
    hdr[40] ^= 1;
    expect(msg({ header: hdr })).toMatch(/file header in the ring: file header CRC mismatch/);
    const real = makeRing(dir, stream);
    const link = path.join(dir, 'link.ring');
    fs.symlinkSync(real.path, link);
    expect(() => RingReader.open(link)).toThrow(/ELOOP|symbolic/);
    const short = path.join(dir, 'short.ring');
    fs.writeFileSync(short, Buffer.alloc(10), { mode: 0o600 });
    expect(() => RingReader.open(short)).toThrow(TraceFormatError);
  });

  test('hostile counters and record sizes end in a typed error, quickly', () => {
    const stream = recordStream();
    const t0 = Date.now();
    const drainErr = (ringPath: string) => {
      const r = RingReader.open(ringPath);
      try {
        return errorOf(() => r.drain(outFd));
      } finally {
        r.close();
      }
    };
    expect(drainErr(makeRing(dir, stream, { head: BigInt(CAP * 3) }).path).message).toMatch(/inconsistent ring counters: head 12288, tail 0/);
    expect(drainErr(makeRing(dir, stream, { head: BigInt(CAP + 1) }).path).code).toBe('ring');
    expect(drainErr(makeRing(dir, stream, { head: 2n ** 63n }).path).message).toMatch(/exceeds 2\^53-1/);
    for (const [size, why] of [[0, /impossible record size 0/], [27, /impossible record size 27/], [CAP + 1, /impossible record size 4097/], [0xffffffff, /impossible record size 4294967295/]] as const) {
      const bad = Buffer.from(stream);
      bad.writeUInt32LE(size, 0);
      const e = drainErr(makeRing(dir, bad).path);
      expect(e.code).toBe('bad-size');
      expect(e.message).toMatch(why);
    }
    const wrongSeq = drainErr(makeRing(dir, recordStream(3)).path);
    expect(wrongSeq.code).toBe('seq-gap');
    // head going backwards after a drain
    const ring = makeRing(dir, stream);
    const r = RingReader.open(ring.path);
    r.drain(outFd);
    setU(ring.path, 24, 10, 8);
    expect(errorOf(() => r.drainOnce(outFd)).message).toMatch(/inconsistent ring counters: head 10/);
    // the agent took the ring over
    setU(ring.path, 24, stream.length, 8);
    produce(ring.path, filler(64, 5));
    setU(ring.path, 40, process.pid + 1, 4);
    expect(errorOf(() => r.drainOnce(outFd)).message).toMatch(/not ours to drain/);
    r.close();
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
