/** The file header of meta.jpt (docs/trace-format.md §1): magic, version, size, CRC and the type table. */
import { crc32Excluding } from './crc32';
import { TraceFormatError } from './errors';
import { ByteSink, CompiledLayout, compileLayout, LayoutField, LayoutSyntaxError, missingField, parseLayout } from './layout';
import { CANONICAL_LAYOUTS, REQUIRED_FIELDS, RECORD_NAMES, RecordType, RecordTypeName } from './records';

export const MAGIC = Buffer.from('JPORTAL\0', 'latin1');
export const FORMAT_MAJOR = 1;
export const FORMAT_MINOR = 5;
export const RECORD_HEADER_SIZE = 28;
/** Fixed part of the file header before the type table. */
export const FILE_HEADER_FIXED = 24;
/** Headers larger than this are rejected as corrupt (the real one is a few KiB). */
export const MAX_HEADER_SIZE = 1 << 20;

/** One entry of a type table, as written. */
export interface TypeEntry {
  type: number;
  name: string;
  layout: string;
  fields: LayoutField[];
}

/** A type table entry as read from a file: compiled, and matched against the types this library knows. */
export interface HeaderType extends TypeEntry {
  compiled: CompiledLayout;
  /** Byte offset of the entry in the file. */
  offset: number;
  /** Set when `type` and `name` are one of §4's record types: the payload is then typed. */
  known?: RecordTypeName;
  /**
   * For a known type whose layout in this file lacks a field the typed payload needs: what is missing.
   * Reading a record of that type is a `layout-mismatch` error (records of other types stay readable).
   */
  mismatch?: string;
}

export interface FileHeader {
  major: number;
  minor: number;
  /** header_size: records start at this offset. */
  size: number;
  crc: number;
  types: Map<number, HeaderType>;
}

/** §4's table: every record type with its canonical name and layout, in type order. */
export function canonicalTypeTable(): TypeEntry[] {
  return (Object.keys(RecordType) as RecordTypeName[]).map((name) => ({
    type: RecordType[name],
    name,
    layout: CANONICAL_LAYOUTS[name],
    fields: parseLayout(CANONICAL_LAYOUTS[name]),
  }));
}

/** The header bytes a writer puts at the start of meta.jpt (and the agent into the ring header). */
export function encodeFileHeader(types: readonly TypeEntry[] = canonicalTypeTable(), minor = FORMAT_MINOR): Uint8Array {
  const s = new ByteSink();
  s.raw(MAGIC);
  s.u16(FORMAT_MAJOR);
  s.u16(minor);
  s.u32(0); // size, patched below
  s.u32(0); // crc, patched below
  s.u32(types.length);
  const seen = new Set<number>();
  for (const t of types) {
    if (seen.has(t.type)) throw new Error(`type ${t.type} appears twice in the type table`);
    seen.add(t.type);
    parseLayout(t.layout); // refuse to write a layout no reader can parse
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
  const err = (code: ConstructorParameters<typeof TraceFormatError>[0], offset: number, detail: string) =>
    new TraceFormatError(code, file, offset, detail, 'header at byte');
  const short = (need: number): undefined => {
    if (!complete) return undefined;
    throw new TraceFormatError('truncated', file, bytes.length, `truncated: the file ends inside the file header (needs ${need} bytes, has ${bytes.length})`);
  };
  const magicLen = Math.min(8, bytes.length);
  for (let i = 0; i < magicLen; i++) if (bytes[i] !== MAGIC[i]) throw err('bad-magic', 0, 'not a jportal metadata file (bad magic)');
  if (bytes.length < FILE_HEADER_FIXED) return short(FILE_HEADER_FIXED);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = v.getUint16(8, true);
  const minor = v.getUint16(10, true);
  if (major !== FORMAT_MAJOR)
    throw err('unsupported-version', 8, `format version ${major}.${minor} is not supported (this reader reads ${FORMAT_MAJOR}.x)`);
  const size = v.getUint32(12, true);
  if (size < FILE_HEADER_FIXED || size > MAX_HEADER_SIZE) throw err('bad-header', 12, `implausible header size ${size}`);
  if (bytes.length < size) return short(size);
  const head = bytes.subarray(0, size);
  const stored = v.getUint32(16, true);
  const computed = crc32Excluding(head, 16);
  if (stored !== computed)
    throw err('header-crc', 16, `file header CRC mismatch (stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)})`);
  // The CRC matched, so what follows is what the writer wrote; it can still be malformed.
  const count = v.getUint32(20, true);
  const types = new Map<number, HeaderType>();
  let p = FILE_HEADER_FIXED;
  const str = (): string => {
    if (p + 4 > size) throw err('bad-header', p, 'type table runs past the header');
    const n = v.getUint32(p, true);
    if (n > size - p - 4) throw err('bad-header', p, 'type table string runs past the header');
    const s = Buffer.from(head.buffer, head.byteOffset + p + 4, n).toString('utf8');
    p += 4 + n;
    return s;
  };
  for (let i = 0; i < count; i++) {
    if (p + 2 > size) throw err('bad-header', p, `type table has ${i} of ${count} entries before the header ends`);
    const at = p;
    const type = v.getUint16(p, true);
    p += 2;
    const name = str();
    const layout = str();
    if (types.has(type)) throw err('bad-header', at, `record type ${type} (${name}) appears twice in the type table`);
    let fields: LayoutField[];
    try {
      fields = parseLayout(layout);
    } catch (e) {
      if (e instanceof LayoutSyntaxError) throw err('bad-layout', at, `record type ${type} (${name}): ${e.message}`);
      throw e;
    }
    const entry: HeaderType = { type, name, layout, fields, compiled: compileLayout(fields), offset: at };
    const known = RECORD_NAMES.get(type);
    if (known !== undefined && known === name) {
      entry.known = known;
      const missing = missingField(fields, REQUIRED_FIELDS[known]);
      if (missing) entry.mismatch = `record type ${type} (${name}) has layout "${layout}", which lacks field ${missing} of "${CANONICAL_LAYOUTS[known]}"`;
    }
    types.set(type, entry);
  }
  // bytes between the end of the type table and header_size are ignored (room for later minor versions)
  return { major, minor, size, crc: stored, types };
}
