import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { canonicalTypeTable, encodeFileHeader, FORMAT_MINOR, TypeEntry } from './header';
import { ByteSink, encodeFields, LayoutField, parseLayout } from './layout';
import { PayloadOf, RecordType, RecordTypeName } from './records';

export interface WriterOptions {
  /** The type table written into the header (default: §4's canonical table). */
  types?: readonly TypeEntry[];
  minor?: number;
}

/**
 * Writes meta.jpt files byte-identical to the agent's: the header with the type table, then records with
 * consecutive seq numbers (from 0) and CRCs. Output goes to a file descriptor or is collected in memory.
 * Payloads are encoded by the layout in this writer's type table; values are range-checked.
 */
export class MetaWriter {
  private seq = 0;
  private readonly types = new Map<number, { entry: TypeEntry; fields: LayoutField[] }>();
  private readonly chunks: Uint8Array[] = [];
  private bytesWritten = 0;
  /** The header bytes written first. */
  readonly headerBytes: Uint8Array;

  /**
   * @param fd where to write (undefined: in memory, see `bytes()`)
   * @param types the type table (default: §4's canonical table)
   */
  constructor(
    private fd?: number,
    types: readonly TypeEntry[] | WriterOptions = canonicalTypeTable(),
  ) {
    const opts: WriterOptions = Array.isArray(types) ? { types } : (types as WriterOptions);
    const table = opts.types ?? canonicalTypeTable();
    for (const t of table) this.types.set(t.type, { entry: t, fields: parseLayout(t.layout) });
    this.headerBytes = encodeFileHeader(table, opts.minor ?? FORMAT_MINOR);
    this.emit(this.headerBytes);
  }

  /** A writer into a new file (truncated if it exists). */
  static toFile(path: string, types?: readonly TypeEntry[] | WriterOptions): MetaWriter {
    return new MetaWriter(fs.openSync(path, 'w', 0o644), types);
  }

  /** A writer collecting the bytes in memory (`bytes()`). */
  static toBuffer(types?: readonly TypeEntry[] | WriterOptions): MetaWriter {
    return new MetaWriter(undefined, types);
  }

  /** The seq the next record gets. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Skips seq numbers (tests use it to make gaps, and to write a stream that continues another). */
  skipSeq(n: number): void {
    this.seq += n;
  }

  /** Writes a record of one of §4's types; returns its byte offset. */
  write<K extends RecordTypeName>(name: K, payload: PayloadOf[K], tsc: bigint = 0n, flags = 0): number {
    return this.writeType(RecordType[name], payload as unknown as Record<string, unknown>, tsc, flags);
  }

  /** Writes a record of any type in the table (including ones this library does not know); returns its offset. */
  writeType(type: number, payload: Record<string, unknown>, tsc: bigint = 0n, flags = 0): number {
    const t = this.types.get(type);
    if (!t) throw new Error(`record type ${type} is not in this file's type table`);
    const at = this.bytesWritten;
    this.emit(encodeRecord(type, t.fields, payload, this.seq, tsc, flags));
    this.seq++;
    return at;
  }

  /** In-memory output: header and records so far (only when no file descriptor was given). */
  bytes(): Buffer {
    if (this.fd !== undefined) throw new Error('this writer writes to a file');
    return Buffer.concat(this.chunks);
  }

  /** Bytes written so far, header included. */
  get size(): number {
    return this.bytesWritten;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private emit(b: Uint8Array): void {
    this.bytesWritten += b.length;
    if (this.fd !== undefined) {
      let done = 0;
      while (done < b.length) done += fs.writeSync(this.fd, b, done, b.length - done);
    } else this.chunks.push(Uint8Array.from(b));
  }
}

/** One record's bytes: the 28-byte header (size, type, flags, seq, tsc, CRC) and the encoded payload. */
export function encodeRecord(type: number, fields: LayoutField[], payload: Record<string, unknown>, seq: number, tsc: bigint, flags: number): Uint8Array {
  if (!Number.isInteger(type) || type < 0 || type > 0xffff) throw new RangeError(`record type ${type} is not a u16`);
  if (!Number.isInteger(flags) || flags < 0 || flags > 0xffff) throw new RangeError(`flags ${flags} is not a u16`);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`seq ${seq} is not a u64 below 2^53`);
  if (typeof tsc !== 'bigint' || tsc < 0n || tsc >= 1n << 64n) throw new RangeError(`tsc ${String(tsc)} is not a u64 bigint`);
  const s = new ByteSink(256);
  s.u32(0);
  s.u16(type);
  s.u16(flags);
  s.u64(seq);
  s.u64(tsc);
  s.u32(0);
  encodeFields(fields, payload, s);
  const rec = s.result();
  if (rec.length > 0xffffffff) throw new RangeError(`record of ${rec.length} bytes does not fit a u32 size`);
  const v = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  v.setUint32(0, rec.length, true);
  v.setUint32(24, crc32Excluding(rec, 24), true);
  return rec;
}
