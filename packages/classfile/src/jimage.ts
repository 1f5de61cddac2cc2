/**
 * A reader for the JDK's run-time image, `$JAVA_HOME/lib/modules` (the "jimage" format that jrt:/ and the JVM's
 * boot loader read), so that class files of JDK classes can be had without a recording of them.
 *
 * The layout (OpenJDK, jdk.internal.jimage), all integers in the image's byte order (the builder's native order;
 * little-endian on x86) unless said otherwise:
 *  - header, 7 u4: magic 0xCAFEDADA, version (major << 16 | minor, 1.0), flags, resource count, table length,
 *    locations size, strings size;
 *  - redirect table (table length s4) and offsets table (table length u4): a perfect hash of the resource names;
 *  - locations: one attribute stream per resource (module, parent, base and extension as strings-table offsets,
 *    content offset, compressed and uncompressed size), each value big-endian in 1..8 bytes;
 *  - strings: NUL-terminated modified UTF-8;
 *  - then the resources, a location's content offset counting from the end of the index (the five parts above).
 * A resource's name is "/<module>/<parent>/<base>.<extension>". Besides resources the image holds directory
 * entries: "/modules/<module>/<dir>" and "/packages/<package.with.dots>" (whose content lists the modules that
 * have the package).
 *
 * Only the header and the index are kept in memory (a few MB); resources are read on demand from a kept file
 * descriptor, so call close() when done.
 */
import * as fs from 'fs';
import * as zlib from 'zlib';

/** A malformed, truncated or unsupported image: names the file and the byte offset in it. */
export class JImageError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    detail: string,
  ) {
    super(`${file}: byte ${offset}: ${detail}`);
    this.name = 'JImageError';
  }
}

/** A compressed resource whose decompressor (named in the image's strings table) this reader does not know. */
export class JImageDecompressorError extends JImageError {
  constructor(
    file: string,
    offset: number,
    readonly decompressor: string,
    resource: string,
  ) {
    super(file, offset, `${resource}: unsupported decompressor "${decompressor}" (known: zip, compact-cp)`);
    this.name = 'JImageDecompressorError';
  }
}

export interface JImageHeader {
  majorVersion: number;
  minorVersion: number;
  flags: number;
  /** number of entries (resources and directory entries) */
  resourceCount: number;
  /** slots in the redirect and offsets tables */
  tableLength: number;
  locationsSize: number;
  stringsSize: number;
  /** bytes of header, tables, locations and strings: resource content offsets count from here */
  indexSize: number;
  littleEndian: boolean;
}

/** One entry of the image: a resource ("/java.base/java/lang/String.class") or a directory entry. */
export interface JImageLocation {
  /** the full name, "/<module>/<parent>/<base>.<extension>" (parts that are empty left out) */
  name: string;
  module: string;
  parent: string;
  base: string;
  extension: string;
  /** where the content starts, counted from the end of the index */
  contentOffset: number;
  /** bytes stored in the image when compressed; 0 when stored as is */
  compressedSize: number;
  uncompressedSize: number;
}

const MAGIC = 0xcafedada;
const HEADER_SIZE = 7 * 4;
const SUPPORTED_MAJOR = 1;
const HASH_MULTIPLIER = 0x01000193;
const COMPRESSED_MAGIC = 0xcafefafa;
/** magic u4, compressed size u8, uncompressed size u8, decompressor name offset u4, (unused) u4, terminal u1 */
const COMPRESSED_HEADER_SIZE = 29;

const enum Attr {
  End = 0, Module = 1, Parent = 2, Base = 3, Extension = 4, Offset = 5, Compressed = 6, Uncompressed = 7,
}
const KNOWN_ATTR_KINDS = 8;

/**
 * The image's name hash (jdk.internal.jimage.ImageStringsReader): FNV-1 style, 32-bit, over the name's modified
 * UTF-8 bytes, starting from `seed`; the result is masked to be non-negative.
 */
export function jimageHash(name: string, seed: number = HASH_MULTIPLIER): number {
  let h = seed | 0;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c !== 0 && c < 0x80) h = Math.imul(h, HASH_MULTIPLIER) ^ c;
    else if (c < 0x800) {
      // (NUL is the two bytes C0 80 in modified UTF-8)
      h = Math.imul(h, HASH_MULTIPLIER) ^ (0xc0 | (c >> 6));
      h = Math.imul(h, HASH_MULTIPLIER) ^ (0x80 | (c & 0x3f));
    } else {
      // (a supplementary character is two surrogates of three bytes each, as Java's chars are)
      h = Math.imul(h, HASH_MULTIPLIER) ^ (0xe0 | (c >> 12));
      h = Math.imul(h, HASH_MULTIPLIER) ^ (0x80 | ((c >> 6) & 0x3f));
      h = Math.imul(h, HASH_MULTIPLIER) ^ (0x80 | (c & 0x3f));
    }
  }
  return h & 0x7fffffff;
}

export class JImage {
  /** package (with dots) -> the modules the image lists for it, in the image's order */
  private readonly packageModules = new Map<string, readonly string[]>();
  private readonly strings = new Map<number, string>();
  /** scratch for locationInSlot(): attribute values by kind */
  private readonly attrs = new Float64Array(KNOWN_ATTR_KINDS);
  private readonly view: DataView;
  private readonly redirectAt: number;
  private readonly offsetsAt: number;
  private readonly locationsAt: number;
  private readonly stringsAt: number;
  private fd: number | undefined;

  private constructor(
    /** the image file's path, as given to open() */
    readonly file: string,
    readonly header: JImageHeader,
    /** the file's size in bytes when opened */
    readonly fileSize: number,
    /** header, tables, locations and strings: the first header.indexSize bytes of the file */
    private readonly index: Uint8Array,
    fd: number,
  ) {
    this.fd = fd;
    this.view = new DataView(index.buffer, index.byteOffset, index.byteLength);
    this.redirectAt = HEADER_SIZE;
    this.offsetsAt = this.redirectAt + 4 * header.tableLength;
    this.locationsAt = this.offsetsAt + 4 * header.tableLength;
    this.stringsAt = this.locationsAt + header.locationsSize;
  }

  /** Opens an image: reads and checks the header and the index; throws JImageError when they are not sound. */
  static open(file: string): JImage {
    const fd = fs.openSync(file, 'r');
    try {
      const fileSize = fs.fstatSync(fd).size;
      if (fileSize < HEADER_SIZE) throw new JImageError(file, fileSize, `truncated header: the file has ${fileSize} bytes, a jimage header ${HEADER_SIZE}`);
      const head = new Uint8Array(HEADER_SIZE);
      readFully(fd, head, 0, file);
      const hv = new DataView(head.buffer);
      let littleEndian = true;
      if (hv.getUint32(0, true) !== MAGIC) {
        if (hv.getUint32(0, false) !== MAGIC) {
          throw new JImageError(file, 0, `bad magic 0x${hv.getUint32(0, false).toString(16).padStart(8, '0')} (a jimage starts with 0xCAFEDADA)`);
        }
        littleEndian = false;
      }
      const u4 = (at: number) => hv.getUint32(at, littleEndian);
      const version = u4(4);
      const majorVersion = version >>> 16;
      const minorVersion = version & 0xffff;
      if (majorVersion !== SUPPORTED_MAJOR) {
        throw new JImageError(file, 4, `unsupported jimage version ${majorVersion}.${minorVersion} (this reader knows ${SUPPORTED_MAJOR}.x)`);
      }
      const [flags, resourceCount, tableLength, locationsSize, stringsSize] = [u4(8), u4(12), u4(16), u4(20), u4(24)];
      if (tableLength === 0 || tableLength > 0x3fffffff) throw new JImageError(file, 16, `bad table length ${tableLength}`);
      if (resourceCount > tableLength) throw new JImageError(file, 12, `resource count ${resourceCount} exceeds the table length ${tableLength}`);
      // the parts of the index, each checked against the file's end so a truncated file names what it cut
      const parts: [string, number][] = [
        ['redirect table', 4 * tableLength], ['offsets table', 4 * tableLength], ['locations', locationsSize], ['strings', stringsSize],
      ];
      let at = HEADER_SIZE;
      for (const [what, size] of parts) {
        if (at + size > fileSize) throw new JImageError(file, at, `truncated ${what}: needs ${size} bytes, the file ends at byte ${fileSize}`);
        at += size;
      }
      const indexSize = at;
      const index = new Uint8Array(indexSize);
      readFully(fd, index, 0, file);
      const header: JImageHeader = { majorVersion, minorVersion, flags, resourceCount, tableLength, locationsSize, stringsSize, indexSize, littleEndian };
      return new JImage(file, header, fileSize, index, fd);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /** Closes the file; reading resources afterwards throws. Idempotent. */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** The entry named `name` ("/java.base/java/lang/String.class", "/packages/java.lang"), if the image has it. */
  find(name: string): JImageLocation | undefined {
    const slot = this.slotOf(name);
    if (slot < 0) return undefined;
    const loc = this.locationInSlot(slot);
    // the perfect hash maps every name to some slot: only the stored name says whether it is this one
    return loc.name === name ? loc : undefined;
  }

  /** The content of the resource named `name`, decompressed; undefined if the image has no such entry. */
  resource(name: string): Uint8Array | undefined {
    const loc = this.find(name);
    return loc && this.read(loc);
  }

  /** The content of an entry, decompressed (a fresh array the caller owns). */
  read(loc: JImageLocation): Uint8Array {
    if (this.fd === undefined) throw new JImageError(this.file, this.header.indexSize + loc.contentOffset, `${loc.name}: the image is closed`);
    const start = this.header.indexSize + loc.contentOffset;
    const stored = loc.compressedSize !== 0 ? loc.compressedSize : loc.uncompressedSize;
    if (start + stored > this.fileSize) {
      throw new JImageError(this.file, start, `${loc.name}: truncated resource: needs ${stored} bytes, the file ends at byte ${this.fileSize}`);
    }
    const bytes = new Uint8Array(stored);
    readFully(this.fd, bytes, start, this.file);
    if (loc.compressedSize === 0) return bytes;
    const out = this.decompress(bytes, loc, start);
    if (out.length !== loc.uncompressedSize) {
      throw new JImageError(this.file, start, `${loc.name}: decompressed to ${out.length} bytes, the location says ${loc.uncompressedSize}`);
    }
    return out;
  }

  /**
   * The class file of the class with internal name `internalName` ("java/lang/String"), or undefined when no
   * module of the image has it.
   */
  classBytes(internalName: string): Uint8Array | undefined {
    const loc = this.classLocation(internalName);
    return loc && this.read(loc);
  }

  /** The module ("java.base") whose class file `internalName` is, or undefined when the image has none. */
  moduleOf(internalName: string): string | undefined {
    return this.classLocation(internalName)?.module;
  }

  /**
   * The modules that the image lists for a package ("java.lang", with dots), from the "/packages/<package>" entry;
   * empty when it has none. A package can be listed under several modules, in all but one of them empty.
   */
  modulesOfPackage(pkg: string): readonly string[] {
    let modules = this.packageModules.get(pkg);
    if (modules) return modules;
    const loc = this.find(`/packages/${pkg}`);
    const found: string[] = [];
    if (loc) {
      // pairs of u4 (flags, module name offset); what the flags mean changed over JDK versions (1 = "empty";
      // later bits for "has resources" and preview), so classLocation() asks the modules, not the flags
      const content = this.read(loc);
      if (content.length % 8 !== 0) throw new JImageError(this.file, this.header.indexSize + loc.contentOffset, `${loc.name}: package entry of ${content.length} bytes is not (flags, module) pairs`);
      const v = new DataView(content.buffer, content.byteOffset, content.byteLength);
      for (let i = 0; i < content.length; i += 8) found.push(this.stringAt(v.getUint32(i + 4, this.header.littleEndian)));
    }
    modules = found;
    this.packageModules.set(pkg, modules);
    return modules;
  }

  /** Every entry of the image (resources and directory entries), in table order. */
  *entries(): Generator<JImageLocation> {
    for (let slot = 0; slot < this.header.tableLength; slot++) yield this.locationInSlot(slot);
  }

  /**
   * Internal names of the classes in `module` (or in every module), as classBytes() takes them: the ".class"
   * resources other than module-info.
   */
  classNames(module?: string): string[] {
    const names: string[] = [];
    for (const loc of this.entries()) {
      if (loc.extension !== 'class' || loc.parent === '' || loc.module === 'modules' || loc.module === 'packages') continue;
      if (module === undefined || loc.module === module) names.push(`${loc.parent}/${loc.base}`);
    }
    return names;
  }

  private classLocation(internalName: string): JImageLocation | undefined {
    const slash = internalName.lastIndexOf('/');
    if (slash <= 0) return undefined; // (no JDK class is in the unnamed package)
    for (const module of this.modulesOfPackage(internalName.slice(0, slash).replace(/\//g, '.'))) {
      const loc = this.find(`/${module}/${internalName}.class`);
      if (loc) return loc;
    }
    return undefined;
  }

  /** The offsets-table slot the perfect hash gives `name`; -1 when the redirect table has no entry for it. */
  private slotOf(name: string): number {
    const n = this.header.tableLength;
    const at = this.redirectAt + 4 * (jimageHash(name) % n);
    const redirect = this.view.getInt32(at, this.header.littleEndian);
    let slot: number;
    if (redirect < 0) slot = -1 - redirect; // the slot itself
    else if (redirect > 0) slot = jimageHash(name, redirect) % n; // a second hash with this seed
    else return -1;
    if (slot >= n) throw new JImageError(this.file, at, `redirect entry ${redirect} points past the table (length ${n})`);
    return slot;
  }

  /** The entry whose attribute stream the offsets table gives for `slot`. */
  private locationInSlot(slot: number): JImageLocation {
    const { locationsSize } = this.header;
    const at = this.offsetsAt + 4 * slot;
    const offset = this.view.getUint32(at, this.header.littleEndian);
    if (offset >= locationsSize) throw new JImageError(this.file, at, `location offset ${offset} is past the locations (${locationsSize} bytes)`);
    const attrs = this.attrs.fill(0);
    const end = this.locationsAt + locationsSize;
    let p = this.locationsAt + offset;
    while (p < end) {
      const lead = this.index[p++];
      const kind = lead >>> 3;
      if (kind === Attr.End) break;
      const length = (lead & 7) + 1;
      if (p + length > end) throw new JImageError(this.file, p - 1, `location attribute ${kind} (${length} bytes) runs past the locations`);
      let value = 0;
      for (let i = 0; i < length; i++) value = value * 256 + this.index[p++]; // (big-endian, up to 8 bytes)
      if (kind < KNOWN_ATTR_KINDS) attrs[kind] = value; // (kinds newer images may add are skipped)
    }
    const module = attrs[Attr.Module] ? this.stringAt(attrs[Attr.Module]) : '';
    const parent = attrs[Attr.Parent] ? this.stringAt(attrs[Attr.Parent]) : '';
    const base = this.stringAt(attrs[Attr.Base]);
    const extension = attrs[Attr.Extension] ? this.stringAt(attrs[Attr.Extension]) : '';
    const name = (module ? `/${module}/` : '') + (parent ? `${parent}/` : '') + base + (extension ? `.${extension}` : '');
    return {
      name, module, parent, base, extension,
      contentOffset: attrs[Attr.Offset], compressedSize: attrs[Attr.Compressed], uncompressedSize: attrs[Attr.Uncompressed],
    };
  }

  /** The modified UTF-8 bytes of the string at `offset` in the strings table (without the NUL). */
  private stringBytes(offset: number): Uint8Array {
    const { stringsSize } = this.header;
    if (offset >= stringsSize) throw new JImageError(this.file, this.stringsAt, `string offset ${offset} is past the strings (${stringsSize} bytes)`);
    const start = this.stringsAt + offset;
    const nul = this.index.indexOf(0, start);
    if (nul < 0 || nul >= this.stringsAt + stringsSize) throw new JImageError(this.file, start, 'string without its terminating NUL');
    return this.index.subarray(start, nul);
  }

  private stringAt(offset: number): string {
    let s = this.strings.get(offset);
    if (s === undefined) {
      s = decodeModifiedUtf8(this.stringBytes(offset), this.file, this.stringsAt + offset);
      this.strings.set(offset, s);
    }
    return s;
  }

  /** Undoes the compression passes of a stored resource (each pass has a compressed-resource header). */
  private decompress(stored: Uint8Array, loc: JImageLocation, at: number): Uint8Array {
    let content = stored;
    for (let pass = 0; content.length >= COMPRESSED_HEADER_SIZE; pass++) {
      const v = new DataView(content.buffer, content.byteOffset, content.byteLength);
      const le = this.header.littleEndian;
      if (v.getUint32(0, le) !== COMPRESSED_MAGIC) break;
      if (pass > 16) throw new JImageError(this.file, at, `${loc.name}: more than 16 compression passes`);
      const uncompressedSize = Number(v.getBigUint64(12, le));
      if (uncompressedSize > 0x7fffffff) throw new JImageError(this.file, at, `${loc.name}: compression pass ${pass} claims ${uncompressedSize} bytes`);
      const decompressor = this.stringAt(v.getUint32(20, le));
      const body = content.subarray(COMPRESSED_HEADER_SIZE);
      if (decompressor === 'zip') {
        try {
          const out = zlib.inflateSync(body, { maxOutputLength: Math.max(1, uncompressedSize) });
          content = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
        } catch (e) {
          throw new JImageError(this.file, at, `${loc.name}: zip pass ${pass}: ${(e as Error).message}`);
        }
      } else if (decompressor === 'compact-cp') {
        content = this.expandSharedStrings(body, uncompressedSize, loc, at);
      } else {
        throw new JImageDecompressorError(this.file, at, decompressor, loc.name);
      }
      if (content.length !== uncompressedSize) {
        throw new JImageError(this.file, at, `${loc.name}: ${decompressor} pass ${pass} gave ${content.length} bytes, its header says ${uncompressedSize}`);
      }
    }
    return content;
  }

  /**
   * The "compact-cp" pass (jlink's string sharing): a class file whose constant pool has Utf8 entries moved to
   * the image's strings table. Tag 23 is a Utf8 given by a strings-table offset; tag 25 a descriptor given as its
   * skeleton (class names cut out after each 'L') plus a (package, simple name) pair of offsets per 'L'. Offsets
   * are in CompressIndexes form; everything else of the class file is as in a class file (big-endian).
   */
  private expandSharedStrings(input: Uint8Array, size: number, loc: JImageLocation, at: number): Uint8Array {
    const out = new Uint8Array(size);
    let i = 0;
    let o = 0;
    const fail = (detail: string): never => {
      throw new JImageError(this.file, at, `${loc.name}: compact-cp: ${detail} (input byte ${i}, output byte ${o})`);
    };
    /** the next `n` input bytes */
    const take = (n: number): Uint8Array => {
      if (i + n > input.length) fail(`input ends early (needs ${n} bytes, ${input.length - i} left)`);
      i += n;
      return input.subarray(i - n, i);
    };
    const put = (bytes: Uint8Array) => {
      if (o + bytes.length > size) fail('output overruns its size');
      out.set(bytes, o);
      o += bytes.length;
    };
    const putByte = (b: number) => {
      if (o >= size) fail('output overruns its size');
      out[o++] = b;
    };
    const putU2 = (v: number) => {
      putByte(v >> 8);
      putByte(v & 0xff);
    };
    const u1 = () => take(1)[0];
    const u2 = () => (u1() << 8) | u1();
    /** CompressIndexes: a lead byte with bit 7 set holds the length (bits 5-6) and the top 5 value bits; else 4 bytes. */
    const compressedIndex = (): number => {
      const lead = u1();
      const length = lead & 0x80 ? (lead >> 5) & 3 : 4;
      if (length === 0) fail('bad compressed index');
      let value = lead & 0x80 ? lead & 0x1f : lead;
      for (let k = 1; k < length; k++) value = value * 256 + u1();
      return value;
    };
    put(take(8)); // magic, minor, major
    const cpCount = u2();
    putU2(cpCount);
    for (let e = 1; e < cpCount; e++) {
      const tag = u1();
      switch (tag) {
        case 1: { // Utf8, kept
          const len = u2();
          putByte(1);
          putU2(len);
          put(take(len));
          break;
        }
        case 23: { // Utf8 from the strings table
          const s = this.stringBytes(compressedIndex());
          putByte(1);
          putU2(s.length);
          put(s);
          break;
        }
        case 25: { // descriptor rebuilt from its skeleton and the class names
          const skeleton = this.stringBytes(compressedIndex());
          const namesLength = compressedIndex();
          if (i + namesLength > input.length) fail('descriptor indexes run past the input');
          const namesEnd = i + namesLength;
          putByte(1);
          const lengthAt = o;
          putU2(0); // (the length, set below)
          for (const c of skeleton) {
            putByte(c);
            if (c !== 0x4c /* L */) continue;
            if (i >= namesEnd) fail('descriptor has more class names than indexes');
            const pkg = this.stringBytes(compressedIndex());
            if (pkg.length) {
              put(pkg);
              putByte(0x2f /* / */);
            }
            if (i >= namesEnd) fail('descriptor has more class names than indexes');
            put(this.stringBytes(compressedIndex()));
          }
          if (i > namesEnd) fail('descriptor indexes overrun their length');
          i = namesEnd;
          const len = o - lengthAt - 2;
          out[lengthAt] = len >> 8;
          out[lengthAt + 1] = len & 0xff;
          break;
        }
        case 5: case 6: // Long, Double: two entries
          e++;
          putByte(tag);
          put(take(8));
          break;
        default: {
          const n = CONSTANT_SIZES[tag];
          if (n === undefined) fail(`bad constant pool tag ${tag} (entry ${e})`);
          putByte(tag);
          put(take(n));
        }
      }
    }
    if (input.length - i !== size - o) fail(`the rest of the class is ${input.length - i} bytes, the output has room for ${size - o}`);
    put(input.subarray(i)); // the rest of the class file is as it was
    return out;
  }
}

/** Bytes after the tag of the fixed-size constant pool entries (JVMS §4.4). */
const CONSTANT_SIZES: Record<number, number> = {
  3: 4, 4: 4, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2,
};

function readFully(fd: number, into: Uint8Array, position: number, file: string): void {
  let done = 0;
  while (done < into.length) {
    const n = fs.readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) throw new JImageError(file, position + done, `the file ends early (wanted ${into.length - done} more bytes)`);
    done += n;
  }
}

/** Modified UTF-8 (JVMS §4.4.7) to a string; every 1-, 2- and 3-byte form is one UTF-16 unit. */
function decodeModifiedUtf8(bytes: Uint8Array, file: string, at: number): string {
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] & 0x80) { ascii = false; break; }
  if (ascii) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const units: number[] = [];
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    if (b < 0x80) {
      units.push(b);
      i++;
    } else if ((b & 0xe0) === 0xc0 && i + 1 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80) {
      units.push(((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f));
      i += 2;
    } else if ((b & 0xf0) === 0xe0 && i + 2 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80) {
      units.push(((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f));
      i += 3;
    } else {
      throw new JImageError(file, at + i, `bad modified UTF-8 byte 0x${b.toString(16)}`);
    }
  }
  return fromCharCodes(units);
}

function fromCharCodes(units: number[]): string {
  let s = '';
  for (let i = 0; i < units.length; i += 8192) s += String.fromCharCode(...units.slice(i, i + 8192));
  return s;
}
