import * as fs from 'fs';
import { crc32Excluding } from './crc32';
import { canonicalTypeTable, encodeFileHeader, RECORD_HEADER_SIZE, TypeEntry } from './header';
import { ByteSink, encodeFields, LayoutField } from './layout';
import { PayloadOf, RecordType, RecordTypeName } from './records';

/**
 * Writes meta.jpt files byte-identical to the agent's: the header with the type table, then records with
 * consecutive seq numbers and CRCs. Output goes to a file descriptor or is collected in memory.
 */
export class MetaWriter {
  private seq = 0;
  private readonly types = new Map<number, TypeEntry>();
  private readonly chunks: Uint8Array[] = [];
  private bytesWritten = 0;

  constructor(
    private readonly fd?: number,
    types: TypeEntry[] = canonicalTypeTable(),
  ) {
    for (const t of types) this.types.set(t.type, t);
    this.emit(encodeFileHeader(types));
  }

  static toFile(path: string, types?: TypeEntry[]): MetaWriter {
    return new MetaWriter(fs.openSync(path, 'w', 0o644), types);
  }

  get nextSeq(): number {
    return this.seq;
  }

  /** Skips seq numbers, as when records were dropped (tests use it to make gaps). */
  skipSeq(n: number): void {
    this.seq += n;
  }

  write<K extends RecordTypeName>(name: K, payload: PayloadOf[K], tsc: bigint = 0n, flags = 0): void {
    this.writeType(RecordType[name], payload as unknown as Record<string, unknown>, tsc, flags);
  }

  /** Writes a record of any type in the table (including ones this library does not know). */
  writeType(type: number, payload: Record<string, unknown>, tsc: bigint = 0n, flags = 0): void {
    const entry = this.types.get(type);
    if (!entry) throw new Error(`record type ${type} is not in this file's type table`);
    this.emit(encodeRecord(type, entry.fields, payload, this.seq++, tsc, flags));
  }

  /** In-memory output (only when no file descriptor was given). */
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  get size(): number {
    return this.bytesWritten;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
  }

  private emit(b: Uint8Array): void {
    this.bytesWritten += b.length;
    if (this.fd !== undefined) fs.writeSync(this.fd, b);
    else this.chunks.push(Uint8Array.from(b));
  }
}

export function encodeRecord(type: number, fields: LayoutField[], payload: Record<string, unknown>, seq: number, tsc: bigint, flags: number): Uint8Array {
  const s = new ByteSink(256);
  s.u32(0);
  s.u16(type);
  s.u16(flags);
  s.u64(seq);
  s.u64(tsc);
  s.u32(0);
  encodeFields(fields, payload, s);
  const rec = s.result();
  const v = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  v.setUint32(0, rec.length, true);
  v.setUint32(24, crc32Excluding(rec, 24), true);
  if (rec.length < RECORD_HEADER_SIZE) throw new Error('unreachable: record shorter than its header');
  return rec;
}
