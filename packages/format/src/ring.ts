/**
 * The collector's side of the agent's shared-memory ring (docs/trace-format.md §5).
 *
 * Node has no mmap, so the ring file is read and written with positioned reads/writes; on tmpfs these hit
 * the same page-cache pages the agent has mapped MAP_SHARED. Nothing in the ring is trusted: the file must
 * be ours with mode 0600, header fields, counters and record sizes are bound-checked, and every record's
 * size, CRC and seq are verified before its bytes are written to the output; `tail` is published only after
 * the output write succeeded. Memory use is bounded by max(8 MiB, one record) <= capacity.
 *
 * Collector loop:
 *   const ring = RingReader.open(path);          // checks owner, mode, header, consumer_pid == our pid
 *   ring.writeFileHeader(fd);
 *   for (;;) { const closed = ring.isClosed(); ring.drain(fd); if (closed && ring.pending() === 0) break; sleep }
 */
import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { TraceFormatError } from './errors';
import { decodeFileHeader, FileHeader, RECORD_HEADER_SIZE } from './header';

export const RING_MAGIC = Buffer.from('JPRING\0\0', 'latin1');
export const RING_VERSION = 1;
export const RING_HEADER_FIXED = 56;
const OFF_HEAD = 24;
const OFF_TAIL = 32;
const OFF_CONSUMER = 40;
const OFF_STATE = 44;
/** Most bytes copied per drainOnce call (more only for a single larger record). */
const MAX_DRAIN_CHUNK = 8 << 20;
const MIN_CAPACITY = 64;
const MAX_CAPACITY = 2 ** 40;

export interface RingInfo {
  version: number;
  dataOffset: number;
  capacity: number;
  agentPid: number;
  consumerPid: number;
  /** The meta.jpt file header carried in the ring header (bytes 56..56+file_header_size). */
  fileHeader: Uint8Array;
  header: FileHeader;
}

export class RingReader {
  private tail: number;
  private expectSeq = 0;
  private readonly scratch = Buffer.alloc(8);
  /** Records verified and written so far. */
  records = 0;

  private constructor(
    readonly path: string,
    private fd: number | undefined,
    readonly info: RingInfo,
  ) {
    this.tail = this.readU64(OFF_TAIL);
  }

  /**
   * Opens a ring the agent created for this collector: a regular file (not a symlink) owned by this user
   * with mode 0600, a valid ring header and file header, and `consumer_pid` equal to `consumerPid`
   * (default: this process; the agent's option `collector=PID` pre-sets it). Throws a TraceFormatError
   * (code 'ring') naming the reason otherwise.
   */
  static open(path: string, consumerPid: number = process.pid): RingReader {
    const fd = fs.openSync(path, fs.constants.O_RDWR | (fs.constants.O_NOFOLLOW ?? 0));
    try {
      const st = fs.fstatSync(fd);
      const err = (msg: string, off = 0) => new TraceFormatError('ring', path, off, msg);
      if (!st.isFile()) throw err('not a regular file');
      if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw err(`owned by uid ${st.uid}, not by this user (uid ${process.getuid()}): refusing to read it`);
      if ((st.mode & 0o777) !== 0o600) throw err(`mode ${(st.mode & 0o777).toString(8).padStart(3, '0')}, expected 600: refusing to read it`);
      const fixed = Buffer.alloc(RING_HEADER_FIXED);
      if (readFully(fd, fixed, 0) < RING_HEADER_FIXED) throw err(`shorter than the ring header (${st.size} bytes; still being created?)`);
      if (!fixed.subarray(0, 8).equals(RING_MAGIC)) throw err('bad ring magic (not a ring, or still being created)');
      const version = fixed.readUInt32LE(8);
      if (version !== RING_VERSION) throw err(`ring version ${version} is not supported (this reader reads ${RING_VERSION})`, 8);
      const dataOffset = fixed.readUInt32LE(12);
      const capBig = fixed.readBigUInt64LE(16);
      const capacity = Number(capBig);
      const fileHeaderSize = fixed.readUInt32LE(52);
      if (capBig > BigInt(MAX_CAPACITY) || capacity < MIN_CAPACITY || (capBig & (capBig - 1n)) !== 0n) throw err(`implausible capacity ${capBig} (a power of two from ${MIN_CAPACITY} to 2^40)`, 16);
      if (fileHeaderSize < 24 || fileHeaderSize > dataOffset - RING_HEADER_FIXED) throw err(`file_header_size ${fileHeaderSize} does not fit before data_offset ${dataOffset}`, 52);
      if (dataOffset > 1 << 24) throw err(`implausible data_offset ${dataOffset}`, 12);
      if (st.size < dataOffset + capacity) throw err(`file has ${st.size} bytes, the header promises ${dataOffset + capacity}`);
      const fileHeader = Buffer.alloc(fileHeaderSize);
      if (readFully(fd, fileHeader, RING_HEADER_FIXED) < fileHeaderSize) throw err('file header cut short', RING_HEADER_FIXED);
      let header: FileHeader;
      try {
        header = decodeFileHeader(path, fileHeader, true)!;
      } catch (e) {
        if (e instanceof TraceFormatError) throw err(`file header in the ring: ${e.detail} (at header byte ${e.offset})`, RING_HEADER_FIXED + e.offset);
        throw e;
      }
      if (header.size !== fileHeaderSize) throw err(`file_header_size ${fileHeaderSize} differs from the header's own size ${header.size}`, 52);
      const reader = new RingReader(path, fd, { version, dataOffset, capacity, agentPid: fixed.readUInt32LE(48), consumerPid: 0, fileHeader, header });
      reader.attach(consumerPid);
      if (reader.tail !== 0) throw err(`ring already drained up to stream byte ${reader.tail} by another consumer`, OFF_TAIL);
      return reader; // owns fd from here on
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /**
   * Verifies that the agent named `expectedConsumerPid` (default: this process) as the ring's consumer.
   * `open` calls it; `drainOnce` re-checks before every output write, so a collector whose ring the agent
   * took over (it believed the collector dead) stops instead of writing to a file the agent now continues.
   */
  attach(expectedConsumerPid: number = process.pid): void {
    const consumer = this.readU32(OFF_CONSUMER);
    if (consumer !== expectedConsumerPid)
      throw new TraceFormatError('ring', this.path, OFF_CONSUMER, `the agent's consumer_pid is ${consumer}, not ${expectedConsumerPid}: this ring is not ours to drain`);
    this.info.consumerPid = consumer;
  }

  /** Writes the trace file's header (carried in the ring header, validated by open) to `out`. */
  writeFileHeader(out: number): void {
    writeAll(out, this.info.fileHeader);
  }

  /** Stream bytes committed by the agent and not yet drained. */
  pending(): number {
    return this.readHead() - this.tail;
  }

  /** Stream bytes drained so far (the ring's tail). */
  get drained(): number {
    return this.tail;
  }

  /** The agent committed VM_END and will write no more. Read it before draining the final time. */
  isClosed(): boolean {
    return this.readU32(OFF_STATE) === 1;
  }

  /** Drains until caught up with the head seen at the call (bounded); returns the bytes copied. */
  drain(out: number): number {
    const target = this.readHead();
    let total = 0;
    while (this.tail < target) {
      const n = this.drainOnce(out);
      if (n === 0) break;
      total += n;
    }
    return total;
  }

  /**
   * Copies committed, verified whole records (at most 8 MiB, or one larger record) to `out`, then
   * advances the ring's tail past them. Returns the number of bytes copied (0: nothing complete yet).
   * A damaged record or inconsistent counter throws a TraceFormatError after the records before it were
   * written and consumed.
   */
  drainOnce(out: number): number {
    const closed = this.isClosed(); // read before head: when closed, head is final
    const head = this.readHead();
    const cap = this.info.capacity;
    const avail = head - this.tail;
    if (avail < 0 || avail > cap)
      throw new TraceFormatError('ring', this.path, OFF_HEAD, `inconsistent ring counters: head ${head}, tail ${this.tail}, capacity ${cap}`);
    if (avail === 0) return 0;
    let want = Math.min(avail, MAX_DRAIN_CHUNK);
    let buf: Buffer;
    let scan: ScanResult;
    for (;;) {
      buf = this.readStream(this.tail, want);
      scan = this.scan(buf);
      // one record larger than the chunk: read exactly enough for it (it is <= capacity, checked by scan)
      if (scan.good === 0 && !scan.error && scan.needed > want && scan.needed <= avail) {
        want = scan.needed;
        continue;
      }
      break;
    }
    if (scan.good === 0 && !scan.error && closed)
      scan.error = this.streamError('truncated', this.tail, `ring closed with an incomplete record (${avail} bytes left, record needs ${scan.needed})`);
    if (scan.good > 0) {
      this.attach(this.info.consumerPid);
      writeAll(out, buf.subarray(0, scan.good));
      this.tail += scan.good;
      this.scratch.writeBigUInt64LE(BigInt(this.tail));
      if (fs.writeSync(this.fd!, this.scratch, 0, 8, OFF_TAIL) !== 8) throw new TraceFormatError('ring', this.path, OFF_TAIL, 'could not publish tail');
      this.expectSeq = scan.expectSeq;
      this.records += scan.records;
    }
    if (scan.error) throw scan.error;
    return scan.good;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** Verifies whole records at the start of `data` (stream bytes from this.tail). */
  private scan(data: Buffer): ScanResult {
    const res: ScanResult = { good: 0, records: 0, expectSeq: this.expectSeq, needed: 0 };
    let p = 0;
    while (data.length - p >= RECORD_HEADER_SIZE) {
      const at = this.tail + p;
      const size = data.readUInt32LE(p);
      if (size < RECORD_HEADER_SIZE || size > this.info.capacity) {
        res.error = this.streamError('bad-size', at, `impossible record size ${size} (${RECORD_HEADER_SIZE} to capacity ${this.info.capacity})`);
        break;
      }
      if (data.length - p < size) {
        res.needed = size;
        break;
      }
      const rec = data.subarray(p, p + size);
      const stored = rec.readUInt32LE(24);
      const computed = crc32Excluding(rec, 24);
      if (stored !== computed) {
        res.error = this.streamError('record-crc', at, `record CRC mismatch (stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)})`);
        break;
      }
      const seq = rec.readBigUInt64LE(8);
      if (seq !== BigInt(res.expectSeq)) {
        res.error = this.streamError('seq-gap', at, `seq ${seq}, expected ${res.expectSeq}`);
        break;
      }
      res.expectSeq++;
      res.records++;
      p += size;
    }
    if (p === 0 && !res.error && res.needed === 0) res.needed = RECORD_HEADER_SIZE;
    res.good = p;
    return res;
  }

  private streamError(code: ConstructorParameters<typeof TraceFormatError>[0], streamByte: number, detail: string): TraceFormatError {
    const ringByte = this.info.dataOffset + (streamByte % this.info.capacity);
    const metaByte = this.info.fileHeader.length + streamByte;
    return new TraceFormatError(code, this.path, ringByte, `record at stream byte ${streamByte} (meta.jpt byte ${metaByte}): ${detail}`, 'ring byte');
  }

  /** Stream bytes [from, from+n) out of the circular area (two reads when they wrap). */
  private readStream(from: number, n: number): Buffer {
    const cap = this.info.capacity;
    const pos = from % cap;
    const first = Math.min(n, cap - pos);
    const buf = Buffer.allocUnsafe(n);
    this.readExactly(buf, 0, first, this.info.dataOffset + pos);
    if (n > first) this.readExactly(buf, first, n - first, this.info.dataOffset);
    return buf;
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
    if (readFully(this.fd!, this.scratch, off) < 8) throw new TraceFormatError('ring', this.path, off, 'ring header cut short');
    const v = this.scratch.readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new TraceFormatError('ring', this.path, off, `counter ${v} exceeds 2^53-1`);
    return Number(v);
  }

  private readU32(off: number): number {
    if (fs.readSync(this.fd!, this.scratch, 0, 4, off) < 4) throw new TraceFormatError('ring', this.path, off, 'ring header cut short');
    return this.scratch.readUInt32LE(0);
  }
}

interface ScanResult {
  /** Bytes of whole verified records from the start. */
  good: number;
  records: number;
  expectSeq: number;
  /** Size of the incomplete record after `good` (0 when none). */
  needed: number;
  error?: TraceFormatError;
}

function readFully(fd: number, buf: Buffer, pos: number): number {
  let done = 0;
  while (done < buf.length) {
    const r = fs.readSync(fd, buf, done, buf.length - done, pos + done);
    if (r === 0) break;
    done += r;
  }
  return done;
}

function writeAll(fd: number, b: Uint8Array): void {
  let done = 0;
  while (done < b.length) done += fs.writeSync(fd, b, done, b.length - done);
}
