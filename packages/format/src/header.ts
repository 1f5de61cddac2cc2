import { crc32Excluding } from './crc32';
import { TraceFormatError } from './errors';
import { ByteSink, LayoutField, LayoutSyntaxError, parseLayout } from './layout';
import { CANONICAL_LAYOUTS, RecordType, RecordTypeName } from './records';

export const MAGIC = Buffer.from('JPORTAL\0', 'latin1');
export const FORMAT_MAJOR = 1;
export const FORMAT_MINOR = 0;
export const RECORD_HEADER_SIZE = 28;
/** Fixed part of the file header before the type table. */
export const FILE_HEADER_FIXED = 24;
/** Headers larger than this are rejected as corrupt (the real one is a few KiB). */
export const MAX_HEADER_SIZE = 1 << 20;

export interface TypeEntry {
  type: number;
  name: string;
  layout: string;
  fields: LayoutField[];
}

export interface FileHeader {
  major: number;
  minor: number;
  size: number;
  types: Map<number, TypeEntry>;
}

export function canonicalTypeTable(): TypeEntry[] {
  return (Object.keys(RecordType) as RecordTypeName[]).map((name) => ({
    type: RecordType[name],
    name,
    layout: CANONICAL_LAYOUTS[name],
    fields: parseLayout(CANONICAL_LAYOUTS[name]),
  }));
}

export function encodeFileHeader(types: TypeEntry[] = canonicalTypeTable(), minor = FORMAT_MINOR): Uint8Array {
  const s = new ByteSink();
  s.raw(MAGIC);
  s.u16(FORMAT_MAJOR);
  s.u16(minor);
  s.u32(0); // size, patched below
  s.u32(0); // crc, patched below
  s.u32(types.length);
  for (const t of types) {
    s.u16(t.type);
    s.str(t.name);
    s.str(t.layout);
  }
  const out = s.result();
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint32(12, out.length, true);
  v.setUint32(16, crc32Excluding(out, 16), true);
  return out;
}

/**
 * Decodes the header at the start of `bytes`. `complete` says whether `bytes` is all there is (a short
 * buffer with more to come is not yet an error); returns undefined when more bytes are needed.
 */
export function decodeFileHeader(file: string, bytes: Uint8Array, complete: boolean): FileHeader | undefined {
  const short = (need: number): undefined => {
    if (!complete) return undefined;
    throw new TraceFormatError('truncated', file, bytes.length, `file ends inside the file header (needs ${need} bytes, has ${bytes.length})`);
  };
  if (bytes.length < FILE_HEADER_FIXED) return short(FILE_HEADER_FIXED);
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, 8).equals(MAGIC))
    throw new TraceFormatError('bad-magic', file, 0, 'not a jportal metadata file (bad magic)');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = v.getUint16(8, true);
  const minor = v.getUint16(10, true);
  if (major !== FORMAT_MAJOR)
    throw new TraceFormatError('unsupported-version', file, 8, `format version ${major}.${minor} is not supported (this reader reads ${FORMAT_MAJOR}.x)`);
  const size = v.getUint32(12, true);
  if (size < FILE_HEADER_FIXED || size > MAX_HEADER_SIZE)
    throw new TraceFormatError('bad-header', file, 12, `implausible header size ${size}`);
  if (bytes.length < size) return short(size);
  const head = bytes.subarray(0, size);
  const stored = v.getUint32(16, true);
  const computed = crc32Excluding(head, 16);
  if (stored !== computed)
    throw new TraceFormatError('header-crc', file, 16, `file header CRC mismatch (stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)})`);
  const count = v.getUint32(20, true);
  const types = new Map<number, TypeEntry>();
  let p = FILE_HEADER_FIXED;
  const str = (): string => {
    if (p + 4 > size) throw new TraceFormatError('bad-header', file, p, 'type table runs past the header');
    const n = v.getUint32(p, true);
    p += 4;
    if (p + n > size) throw new TraceFormatError('bad-header', file, p - 4, 'type table string runs past the header');
    const s = Buffer.from(head.buffer, head.byteOffset + p, n).toString('utf8');
    p += n;
    return s;
  };
  for (let i = 0; i < count; i++) {
    if (p + 2 > size) throw new TraceFormatError('bad-header', file, p, 'type table runs past the header');
    const at = p;
    const type = v.getUint16(p, true);
    p += 2;
    const name = str();
    const layout = str();
    let fields: LayoutField[];
    try {
      fields = parseLayout(layout);
    } catch (e) {
      if (e instanceof LayoutSyntaxError) throw new TraceFormatError('bad-layout', file, at, `record type ${type} (${name}): ${e.message}`);
      throw e;
    }
    types.set(type, { type, name, layout, fields });
  }
  return { major, minor, size, types };
}
