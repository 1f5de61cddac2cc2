/**
 * Streaming reader of meta.jpt files.
 *
 * Error policy: records are yielded in file order. Problems that leave later data readable are collected
 * in `problems` and reading goes on (a seq gap) or ends quietly (a truncated last record: everything before
 * it was yielded). Corruption that makes the rest untrustworthy (bad magic, header or record CRC mismatch,
 * impossible record size, payload overrun) throws a TraceFormatError after every record before it was
 * yielded. Every error and problem names the file and the byte offset.
 */
import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { TraceFormatError } from './errors';
import { decodeFileHeader, FILE_HEADER_FIXED, FileHeader, RECORD_HEADER_SIZE } from './header';
import { decodeFields, layoutHasPrefix, parseLayout, PayloadError } from './layout';
import { CANONICAL_LAYOUTS, PayloadOf, RECORD_NAMES, RecordTypeName } from './records';

/** Records larger than this are treated as corrupt sizes. */
export const MAX_RECORD_SIZE = 1 << 30;

export interface TraceRecord<P = unknown> {
  seq: number;
  tsc: bigint;
  type: number;
  typeName: string;
  flags: number;
  /** Byte offset of the record in the file. */
  offset: number;
  size: number;
  payload: P;
}

export type KnownRecord = { [K in RecordTypeName]: TraceRecord<PayloadOf[K]> & { typeName: K } }[RecordTypeName];

export interface ReadProblem {
  code: 'seq-gap' | 'truncated';
  file: string;
  offset: number;
  message: string;
  /** For seq gaps: how many records are missing. */
  missing?: number;
}

export interface ReaderOptions {
  /** Bytes read from the file at a time (default 4 MiB). Records may straddle chunks. */
  chunkSize?: number;
}

const CANONICAL_FIELDS = new Map(
  (Object.keys(CANONICAL_LAYOUTS) as RecordTypeName[]).map((n) => [n, parseLayout(CANONICAL_LAYOUTS[n])]),
);

function checkKnownLayouts(file: string, header: FileHeader): void {
  for (const t of header.types.values()) {
    const known = RECORD_NAMES.get(t.type);
    if (!known || known !== t.name) continue;
    if (!layoutHasPrefix(t.fields, CANONICAL_FIELDS.get(known)!))
      throw new TraceFormatError('layout-mismatch', file, 0, `record type ${t.type} (${t.name}) has layout "${t.layout}", expected "${CANONICAL_LAYOUTS[known]}" or an extension of it`);
  }
}

/** Source of file bytes: a whole in-memory buffer or a file read chunk by chunk. */
class ByteWindow {
  buf: Uint8Array = new Uint8Array(0);
  /** File offset of buf[0]. */
  base = 0;
  eof = false;
  private fd?: number;
  private filePos = 0;

  constructor(
    source: { fd: number } | { bytes: Uint8Array },
    private readonly chunkSize: number,
  ) {
    if ('fd' in source) this.fd = source.fd;
    else {
      this.buf = source.bytes;
      this.eof = true;
    }
  }

  /** Makes bytes [offset, offset+n) available unless the file ends first; returns whether they are. */
  ensure(offset: number, n: number): boolean {
    if (offset + n <= this.base + this.buf.length) return true;
    if (this.eof || this.fd === undefined) return false;
    // keep [offset, end) and read more into a fresh buffer, so subarrays handed out earlier stay valid
    const keepFrom = offset - this.base;
    const kept = this.buf.subarray(keepFrom);
    const want = Math.max(this.chunkSize, n);
    const nb = Buffer.allocUnsafe(kept.length + want);
    nb.set(kept, 0);
    let filled = kept.length;
    while (filled < n && !this.eof) {
      const r = fs.readSync(this.fd, nb, filled, nb.length - filled, this.filePos);
      if (r === 0) this.eof = true;
      this.filePos += r;
      filled += r;
      if (filled >= nb.length) break;
    }
    this.buf = nb.subarray(0, filled);
    this.base = offset;
    return offset + n <= this.base + this.buf.length;
  }

  fileLength(): number {
    return this.base + this.buf.length;
  }
}

export class MetaReader {
  readonly problems: ReadProblem[] = [];
  private headerCache?: FileHeader;
  private readonly window: ByteWindow;
  private fd?: number;

  private constructor(
    readonly file: string,
    source: { fd: number } | { bytes: Uint8Array },
    opts: ReaderOptions,
  ) {
    if ('fd' in source) this.fd = source.fd;
    this.window = new ByteWindow(source, opts.chunkSize ?? 4 << 20);
  }

  /** Opens a file for streaming (it is read chunk by chunk, never whole). */
  static open(file: string, opts: ReaderOptions = {}): MetaReader {
    return new MetaReader(file, { fd: fs.openSync(file, 'r') }, opts);
  }

  /** Reads from bytes already in memory; `file` is only used in messages. */
  static fromBytes(file: string, bytes: Uint8Array, opts: ReaderOptions = {}): MetaReader {
    return new MetaReader(file, { bytes }, opts);
  }

  get header(): FileHeader {
    if (!this.headerCache) {
      const w = this.window;
      const haveFixed = w.ensure(0, FILE_HEADER_FIXED);
      let h = decodeFileHeader(this.file, w.buf, !haveFixed);
      if (!h) {
        const size = new DataView(w.buf.buffer, w.buf.byteOffset, w.buf.byteLength).getUint32(12, true);
        w.ensure(0, size);
        h = decodeFileHeader(this.file, w.buf, true)!;
      }
      this.headerCache = h;
      checkKnownLayouts(this.file, this.headerCache);
    }
    return this.headerCache;
  }

  /** Yields every record; see the error policy at the top of this module. Closes the file at the end. */
  *records(): Generator<KnownRecord | TraceRecord> {
    try {
      const header = this.header;
      const w = this.window;
      let off = header.size;
      let expectSeq = 0;
      for (;;) {
        if (!w.ensure(off, RECORD_HEADER_SIZE)) {
          const left = w.fileLength() - off;
          if (left > 0)
            this.problems.push({ code: 'truncated', file: this.file, offset: off, message: `${this.file}: byte ${off}: truncated record header (${left} of ${RECORD_HEADER_SIZE} bytes); the file ends here` });
          return;
        }
        let rel = off - w.base;
        let view = new DataView(w.buf.buffer, w.buf.byteOffset, w.buf.byteLength);
        const size = view.getUint32(rel, true);
        if (size < RECORD_HEADER_SIZE || size > MAX_RECORD_SIZE)
          throw new TraceFormatError('bad-size', this.file, off, `impossible record size ${size}`);
        if (!w.ensure(off, size)) {
          this.problems.push({
            code: 'truncated',
            file: this.file,
            offset: off,
            message: `${this.file}: byte ${off}: truncated record (${w.fileLength() - off} of ${size} bytes); the file ends here`,
          });
          return;
        }
        rel = off - w.base;
        view = new DataView(w.buf.buffer, w.buf.byteOffset, w.buf.byteLength);
        const rec = w.buf.subarray(rel, rel + size);
        const stored = view.getUint32(rel + 24, true);
        const computed = crc32Excluding(rec, 24);
        if (stored !== computed)
          throw new TraceFormatError('record-crc', this.file, off, `record CRC mismatch (stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)})`);
        const type = view.getUint16(rel + 4, true);
        const flags = view.getUint16(rel + 6, true);
        const seqBig = view.getBigUint64(rel + 8, true);
        if (seqBig > BigInt(Number.MAX_SAFE_INTEGER)) throw new TraceFormatError('number-overflow', this.file, off + 8, `seq ${seqBig} exceeds 2^53`);
        const seq = Number(seqBig);
        if (seq !== expectSeq) {
          const missing = seq - expectSeq;
          this.problems.push({
            code: 'seq-gap',
            file: this.file,
            offset: off,
            missing,
            message: `${this.file}: byte ${off}: sequence gap: expected seq ${expectSeq}, found ${seq} (${missing > 0 ? `${missing} records missing` : 'out of order'})`,
          });
        }
        expectSeq = seq + 1;
        const tsc = view.getBigUint64(rel + 16, true);
        const entry = header.types.get(type);
        let payload: Record<string, unknown> = {};
        if (entry) {
          try {
            decodeFields(entry.fields, view, w.buf, rel + RECORD_HEADER_SIZE, rel + size, payload);
          } catch (e) {
            if (e instanceof PayloadError) throw new TraceFormatError(e.code, this.file, w.base + e.at, `${entry.name} record at byte ${off}: ${e.message}`);
            throw e;
          }
        } else {
          payload = { raw: rec.subarray(RECORD_HEADER_SIZE) };
        }
        yield { seq, tsc, type, typeName: entry?.name ?? `type${type}`, flags, offset: off, size, payload } as TraceRecord;
        off += size;
      }
    } finally {
      this.close();
    }
  }

  close(): void {
    if (this.fd !== undefined) {
      fs.closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

/** Reads a whole meta.jpt into an array (convenience for tools and tests). */
export function readMetaFile(file: string, opts: ReaderOptions = {}): { header: FileHeader; records: TraceRecord[]; problems: ReadProblem[] } {
  const r = MetaReader.open(file, opts);
  const records = [...r.records()];
  return { header: r.header, records, problems: r.problems };
}
