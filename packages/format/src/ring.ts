/**
 * The collector's side of the agent's shared-memory ring (docs/trace-format.md §5).
 *
 * Node has no mmap, so the ring file is read and written with positioned reads/writes; on tmpfs these hit
 * the same pages the agent has mapped. Nothing in the ring is trusted: sizes, offsets and counters are
 * bound-checked, and every record's framing, CRC and seq are verified as the stream passes through.
 */
import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { TraceFormatError } from './errors';
import { decodeFileHeader, RECORD_HEADER_SIZE } from './header';

export const RING_MAGIC = Buffer.from('JPRING\0\0', 'latin1');
export const RING_VERSION = 1;
export const RING_HEADER_FIXED = 56;
const OFF_HEAD = 24;
const OFF_TAIL = 32;
const OFF_CONSUMER = 40;
const OFF_STATE = 44;
/** Most bytes copied per drain call, so one call never holds much memory. */
const MAX_DRAIN_CHUNK = 8 << 20;

export interface RingInfo {
  version: number;
  dataOffset: number;
  capacity: number;
  agentPid: number;
  consumerPid: number;
  fileHeader: Uint8Array;
}

export class RingReader {
  private tail: number;
  private partial: Buffer = Buffer.alloc(0);
  private partialOffset = 0;
  private expectSeq = 0;
  private readonly u64 = Buffer.alloc(8);
  records = 0;

  private constructor(
    readonly path: string,
    private fd: number | undefined,
    readonly info: RingInfo,
  ) {
    this.tail = this.readU64(OFF_TAIL);
    if (this.tail !== 0) throw new TraceFormatError('ring', path, OFF_TAIL, `ring already drained up to ${this.tail} by another consumer`);
  }

  /**
   * Opens a ring the agent created for this collector: the file must belong to this user with mode 0600,
   * and the agent must have named `consumerPid` as its consumer.
   */
  static open(path: string, consumerPid: number): RingReader {
    const fd = fs.openSync(path, 'r+');
    try {
      const st = fs.fstatSync(fd);
      const err = (msg: string, off = 0) => new TraceFormatError('ring', path, off, msg);
      if (!st.isFile()) throw err('not a regular file');
      if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw err(`owned by uid ${st.uid}, not by this user: refusing to read it`);
      if ((st.mode & 0o777) !== 0o600) throw err(`mode ${(st.mode & 0o777).toString(8)}, expected 600: refusing to read it`);
      const fixed = Buffer.alloc(RING_HEADER_FIXED);
      if (fs.readSync(fd, fixed, 0, RING_HEADER_FIXED, 0) < RING_HEADER_FIXED) throw err('shorter than the ring header (still being created?)');
      if (!fixed.subarray(0, 8).equals(RING_MAGIC)) throw err('bad ring magic (still being created?)');
      const version = fixed.readUInt32LE(8);
      if (version !== RING_VERSION) throw err(`ring version ${version} is not supported`, 8);
      const dataOffset = fixed.readUInt32LE(12);
      const capBig = fixed.readBigUInt64LE(16);
      const capacity = Number(capBig);
      const fileHeaderSize = fixed.readUInt32LE(52);
      if (capBig > 1n << 40n || capacity < 4096 || (capacity & (capacity - 1)) !== 0) throw err(`implausible capacity ${capBig}`, 16);
      if (dataOffset < RING_HEADER_FIXED + fileHeaderSize || dataOffset > 1 << 24) throw err(`implausible data offset ${dataOffset}`, 12);
      if (st.size < dataOffset + capacity) throw err(`file has ${st.size} bytes, the header promises ${dataOffset + capacity}`);
      const consumer = fixed.readUInt32LE(OFF_CONSUMER);
      if (consumer !== consumerPid) throw err(`the agent expects consumer pid ${consumer}, not ${consumerPid}`, OFF_CONSUMER);
      const fileHeader = Buffer.alloc(fileHeaderSize);
      fs.readSync(fd, fileHeader, 0, fileHeaderSize, RING_HEADER_FIXED);
      decodeFileHeader(path, fileHeader, true);
      // the reader owns fd from here on
      return new RingReader(path, fd, { version, dataOffset, capacity, agentPid: fixed.readUInt32LE(48), consumerPid: consumer, fileHeader });
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /** Writes the trace file's header (carried in the ring header) to `out`. */
  writeFileHeader(out: number): void {
    writeAll(out, this.info.fileHeader);
  }

  /** Bytes committed by the agent and not yet drained. */
  pending(): number {
    return this.readHead() - this.tail;
  }

  isClosed(): boolean {
    return this.readU32(OFF_STATE) === 1;
  }

  /**
   * Copies committed bytes to `out` (at most 8 MiB per call), verifying record framing on the way, then
   * advances the ring's tail. Returns the number of bytes copied.
   */
  drainOnce(out: number): number {
    const head = this.readHead();
    const avail = head - this.tail;
    if (avail === 0) return 0;
    if (avail < 0 || avail > this.info.capacity)
      throw new TraceFormatError('ring', this.path, OFF_HEAD, `inconsistent ring counters: head ${head}, tail ${this.tail}, capacity ${this.info.capacity}`);
    const n = Math.min(avail, MAX_DRAIN_CHUNK);
    const cap = this.info.capacity;
    const pos = this.tail % cap;
    const first = Math.min(n, cap - pos);
    const buf = Buffer.allocUnsafe(n);
    this.readExactly(buf, 0, first, this.info.dataOffset + pos);
    if (n > first) this.readExactly(buf, first, n - first, this.info.dataOffset);
    this.verify(buf);
    writeAll(out, buf);
    this.tail += n;
    this.u64.writeBigUInt64LE(BigInt(this.tail));
    fs.writeSync(this.fd!, this.u64, 0, 8, OFF_TAIL);
    return n;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private verify(chunk: Buffer): void {
    const data = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    let p = 0;
    while (data.length - p >= RECORD_HEADER_SIZE) {
      const size = data.readUInt32LE(p);
      const at = this.partialOffset + p;
      if (size < RECORD_HEADER_SIZE || size > this.info.capacity)
        throw new TraceFormatError('ring', this.path, at, `record at stream byte ${at}: impossible size ${size}`);
      if (data.length - p < size) break;
      const rec = data.subarray(p, p + size);
      const stored = rec.readUInt32LE(24);
      const computed = crc32Excluding(rec, 24);
      if (stored !== computed) throw new TraceFormatError('ring', this.path, at, `record at stream byte ${at}: CRC mismatch`);
      const seq = Number(rec.readBigUInt64LE(8));
      if (seq !== this.expectSeq)
        throw new TraceFormatError('ring', this.path, at, `record at stream byte ${at}: seq ${seq}, expected ${this.expectSeq}`);
      this.expectSeq++;
      this.records++;
      p += size;
    }
    this.partialOffset += p;
    this.partial = Buffer.from(data.subarray(p));
  }

  private readExactly(buf: Buffer, off: number, len: number, pos: number): void {
    let done = 0;
    while (done < len) {
      const r = fs.readSync(this.fd!, buf, off + done, len - done, pos + done);
      if (r === 0) throw new TraceFormatError('ring', this.path, pos + done, 'ring file shorter than its data area');
      done += r;
    }
  }

  /** head is written by the agent with one 8-byte store; read until two reads agree so a torn read is never used. */
  private readHead(): number {
    let prev = this.readU64(OFF_HEAD);
    for (let i = 0; i < 8; i++) {
      const cur = this.readU64(OFF_HEAD);
      if (cur === prev) return cur;
      prev = cur;
    }
    return prev;
  }

  private readU64(off: number): number {
    fs.readSync(this.fd!, this.u64, 0, 8, off);
    const v = this.u64.readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new TraceFormatError('ring', this.path, off, `counter ${v} exceeds 2^53`);
    return Number(v);
  }

  private readU32(off: number): number {
    fs.readSync(this.fd!, this.u64, 0, 4, off);
    return this.u64.readUInt32LE(0);
  }
}

function writeAll(fd: number, b: Uint8Array): void {
  let done = 0;
  while (done < b.length) done += fs.writeSync(fd, b, done, b.length - done);
}
