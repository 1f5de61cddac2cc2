/**
 * Streaming reader of meta.jpt files (docs/trace-format.md §1-§4).
 *
 * Error policy — every record before a problem is yielded first:
 * - Non-fatal problems are collected in `reader.problems` (as data: code, file, offset, message):
 *   - `seq-gap`: a record's seq is not the previous seq + 1; `missing` says how many records are missing.
 *     Reading goes on.
 *   - `truncated`: the file ends inside the last record (or its header). That record is not yielded;
 *     iteration ends normally. Its `offset` is the record's first byte.
 * - Corruption stops iteration with a `TraceFormatError` (code, file, offset, one-line message), thrown
 *   after every earlier record was yielded: bad magic / major version, header CRC, malformed type table
 *   (all while reading the header, before any record), record size < 28 or > 1 GiB (`bad-size`), record CRC
 *   mismatch (`record-crc`), a field running past its payload (`payload-overrun`), a u64/i64 or seq past
 *   2^53-1 (`number-overflow`), a record of a known type whose layout in this file lacks a typed field
 *   (`layout-mismatch`).
 * - With `{ throwOnCorruption: false }` record corruption ends iteration normally and the error is left in
 *   `reader.error` instead (header errors still throw: there is nothing before them).
 *
 * Payloads are decoded with the layouts of the file's own type table (compiled once per file). Types in
 * the table that this library does not know decode generically; types missing from the table get
 * `{ raw: Uint8Array }`.
 */
import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { TraceFormatError, TraceErrorCode } from './errors';
import { decodeFileHeader, FILE_HEADER_FIXED, FileHeader, RECORD_HEADER_SIZE } from './header';
import { decodeInto, PayloadError } from './layout';
import { GenericRecord, KnownRecord } from './records';

export type { TraceRecord, KnownRecord, GenericRecord } from './records';

/** Records larger than this are treated as corrupt sizes. */
export const MAX_RECORD_SIZE = 1 << 30;
export const DEFAULT_CHUNK_SIZE = 4 << 20;

/** What records() yields: typed for §4's types, generic otherwise. Narrow with `isRecord(r, 'CODELET')`. */
export type AnyRecord = KnownRecord | GenericRecord;

export interface ReadProblem {
  code: 'seq-gap' | 'truncated';
  file: string;
  /** Byte offset of the record concerned. */
  offset: number;
  message: string;
  /** For seq gaps: how many records are missing (0 when seq went backwards). */
  missing?: number;
}

export interface ReaderOptions {
  /** Bytes read from the file at a time (default 4 MiB). Records may straddle chunks. */
  chunkSize?: number;
  /** Default true: record corruption throws. False: it ends iteration and is left in `reader.error`. */
  throwOnCorruption?: boolean;
}

/**
 * The bytes of the file around the read position: the whole file (in-memory source) or a window refilled
 * chunk by chunk. A refill allocates a new buffer, so subarrays handed out in earlier payloads stay valid.
 */
class ByteWindow {
  buf: Uint8Array = new Uint8Array(0);
  view: DataView = new DataView(this.buf.buffer);
  /** File offset of buf[0]. */
  base = 0;
  private fileSize: number;

  constructor(
    private readonly fd: number | undefined,
    bytes: Uint8Array | undefined,
    private readonly chunkSize: number,
  ) {
    if (bytes) this.setBuf(bytes);
    this.fileSize = fd !== undefined ? fs.fstatSync(fd).size : this.buf.length;
  }

  private setBuf(b: Uint8Array): void {
    this.buf = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  /** Makes bytes [offset, offset+n) available (offset >= base) unless the file ends first; returns whether they are. */
  ensure(offset: number, n: number): boolean {
    if (offset + n <= this.base + this.buf.length) return true;
    if (this.fd === undefined) return false;
    if (offset + n > this.fileSize) {
      this.fileSize = fs.fstatSync(this.fd).size; // the file may have grown
      if (offset + n > this.fileSize) return false; // never allocate for bytes that are not there
    }
    const kept = this.buf.subarray(Math.min(offset - this.base, this.buf.length));
    const want = Math.min(Math.max(this.chunkSize, n), this.fileSize - offset);
    const nb = Buffer.allocUnsafe(want);
    nb.set(kept, 0);
    let filled = kept.length;
    while (filled < want) {
      const r = fs.readSync(this.fd, nb, filled, want - filled, offset + filled);
      if (r === 0) break; // shrank under us
      filled += r;
    }
    this.setBuf(nb.subarray(0, filled));
    this.base = offset;
    return offset + n <= this.base + filled;
  }

  fileLength(): number {
    return Math.max(this.fileSize, this.base + this.buf.length);
  }
}

export class MetaReader {
  /** Non-fatal problems found by the last records() pass. */
  readonly problems: ReadProblem[] = [];
  /** The corruption that ended the last records() pass, when `throwOnCorruption` is false. */
  error?: TraceFormatError;
  private headerCache?: FileHeader;
  private readonly window: ByteWindow;
  private fd?: number;
  private readonly throwOnCorruption: boolean;
  private started = false;
  private readonly fileBacked: boolean;

  protected constructor(
    readonly file: string,
    source: { fd: number } | { bytes: Uint8Array },
    opts: ReaderOptions,
  ) {
    const chunk = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!(chunk >= 1)) throw new RangeError(`chunkSize must be >= 1, got ${chunk}`);
    if ('fd' in source) this.fd = source.fd;
    this.fileBacked = 'fd' in source;
    this.window = new ByteWindow(this.fd, 'bytes' in source ? source.bytes : undefined, chunk);
    this.throwOnCorruption = opts.throwOnCorruption ?? true;
  }

  /** Opens a file for streaming: it is read chunk by chunk with fs.readSync, never whole. */
  static open(file: string, opts: ReaderOptions = {}): MetaReader {
    return new MetaReader(file, { fd: fs.openSync(file, 'r') }, opts);
  }

  /** Reads from bytes already in memory; `file` is only used in messages. */
  static fromBytes(file: string, bytes: Uint8Array, opts: ReaderOptions = {}): MetaReader {
    return new MetaReader(file, { bytes }, opts);
  }

  /** The file header (read on first use; throws a TraceFormatError when it is damaged). */
  get header(): FileHeader {
    if (!this.headerCache) {
      const w = this.window;
      if (w.base !== 0) throw new Error('header must be read before records are');
      const haveFixed = w.ensure(0, FILE_HEADER_FIXED);
      let h = decodeFileHeader(this.file, w.buf, !haveFixed);
      if (!h) {
        w.ensure(0, w.view.getUint32(12, true)); // <= MAX_HEADER_SIZE, checked by decodeFileHeader
        h = decodeFileHeader(this.file, w.buf, true)!;
      }
      this.headerCache = h;
    }
    return this.headerCache;
  }

  /**
   * Yields every record in file order; see the error policy at the top of this module. A file-backed
   * reader can be iterated once (the file is closed at the end); an in-memory one any number of times.
   */
  *records(): Generator<AnyRecord, void, undefined> {
    if (this.started && this.fileBacked) throw new Error(`${this.file}: records() of a file-backed reader can only be iterated once`);
    this.started = true;
    this.problems.length = 0;
    this.error = undefined;
    const file = this.file;
    try {
      const header = this.header;
      const w = this.window;
      let off = header.size;
      let expectSeq = 0;
      for (;;) {
        if (!w.ensure(off, RECORD_HEADER_SIZE)) {
          const left = w.fileLength() - off;
          if (left > 0) this.truncated(off, `truncated: the file ends inside a record header (${left} of ${RECORD_HEADER_SIZE} bytes)`);
          return;
        }
        const size = w.view.getUint32(off - w.base, true);
        if (size < RECORD_HEADER_SIZE || size > MAX_RECORD_SIZE)
          throw recordError('bad-size', file, off, `impossible record size ${size} (a record is ${RECORD_HEADER_SIZE} bytes to 1 GiB)`);
        if (!w.ensure(off, size)) {
          this.truncated(off, `truncated: the file ends inside a record (${w.fileLength() - off} of ${size} bytes)`);
          return;
        }
        const buf = w.buf;
        const view = w.view;
        const rel = off - w.base;
        const stored = view.getUint32(rel + 24, true);
        const computed = crc32Excluding(buf.subarray(rel, rel + size), 24);
        if (stored !== computed)
          throw recordError('record-crc', file, off, `record CRC mismatch (stored 0x${hex8(stored)}, computed 0x${hex8(computed)})`);
        const type = view.getUint16(rel + 4, true);
        const flags = view.getUint16(rel + 6, true);
        const seqHi = view.getUint32(rel + 12, true);
        if (seqHi > 0x1fffff) throw recordError('number-overflow', file, off, `seq ${view.getBigUint64(rel + 8, true)} exceeds 2^53-1`);
        const seq = seqHi * 0x100000000 + view.getUint32(rel + 8, true);
        if (seq !== expectSeq) {
          const missing = Math.max(0, seq - expectSeq);
          this.problems.push({
            code: 'seq-gap',
            file,
            offset: off,
            missing,
            message: `${file}: record at byte ${off}: seq gap: expected seq ${expectSeq}, found ${seq} (${seq > expectSeq ? `${missing} records missing` : 'seq went backwards'})`,
          });
        }
        expectSeq = seq + 1;
        const tsc = view.getBigUint64(rel + 16, true);
        const entry = header.types.get(type);
        let payload: Record<string, unknown>;
        if (entry) {
          if (entry.mismatch) throw recordError('layout-mismatch', file, off, entry.mismatch);
          payload = {};
          try {
            decodeInto(entry.compiled, payload, view, buf, rel + RECORD_HEADER_SIZE, rel + size);
          } catch (e) {
            if (e instanceof PayloadError)
              throw recordError(e.code, file, off, `${entry.name} payload, field at byte ${w.base + e.at}: ${e.message}`);
            throw e;
          }
        } else {
          payload = { raw: buf.subarray(rel + RECORD_HEADER_SIZE, rel + size) };
        }
        yield { seq, tsc, type, typeName: entry?.name ?? `type${type}`, flags, offset: off, size, payload } as AnyRecord;
        off += size;
      }
    } catch (e) {
      if (e instanceof TraceFormatError && !this.throwOnCorruption && this.headerCache) {
        this.error = e;
        return;
      }
      throw e;
    } finally {
      this.close();
    }
  }

  /** Closes the file (records() does so when it ends). */
  close(): void {
    if (this.fd !== undefined) {
      fs.closeSync(this.fd);
      this.fd = undefined;
    }
  }

  private truncated(offset: number, detail: string): void {
    this.problems.push({ code: 'truncated', file: this.file, offset, message: `${this.file}: record at byte ${offset}: ${detail}; the file ends here` });
  }
}

/** The chunked streaming reader: `new MetaStreamReader(path, { chunkSize })` is `MetaReader.open(path, ...)`. */
export class MetaStreamReader extends MetaReader {
  constructor(file: string, opts: ReaderOptions = {}) {
    super(file, { fd: fs.openSync(file, 'r') }, opts);
  }
}

function recordError(code: TraceErrorCode, file: string, offset: number, detail: string): TraceFormatError {
  return new TraceFormatError(code, file, offset, detail, 'record at byte');
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

export interface MetaFileContents {
  header: FileHeader;
  records: AnyRecord[];
  problems: ReadProblem[];
  /** Set only with `throwOnCorruption: false`: the corruption after the last record returned. */
  error?: TraceFormatError;
}

/** Reads a whole meta.jpt into an array (convenience for tools and tests; streams the file). */
export function readMetaFile(file: string, opts: ReaderOptions = {}): MetaFileContents {
  const r = MetaReader.open(file, opts);
  try {
    const records = [...r.records()];
    return { header: r.header, records, problems: r.problems, ...(r.error ? { error: r.error } : {}) };
  } finally {
    r.close();
  }
}
