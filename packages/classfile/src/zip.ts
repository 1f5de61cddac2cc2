import { inflateRawSync } from 'zlib';

/** A zip (jar) entry: its name and a way to read its bytes. */
export interface ZipEntry {
  readonly name: string;
  /** offset of the entry's local header in the archive */
  readonly offset: number;
  read(): Uint8Array;
}

export class ZipError extends Error {
  constructor(
    readonly offset: number,
    detail: string,
  ) {
    super(`byte ${offset}: ${detail}`);
    this.name = 'ZipError';
  }
}

/**
 * The entries of a zip archive from its central directory (stored and deflated entries; no zip64, no
 * encryption: a ZipError names the offset). Entry bytes are read on demand.
 */
export function readZip(data: Uint8Array): ZipEntry[] {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let eocd = -1;
  for (let p = data.length - 22; p >= Math.max(0, data.length - 22 - 0xffff); p--) {
    if (v.getUint32(p, true) === 0x06054b50) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw new ZipError(data.length, 'no end of central directory (not a zip file)');
  const count = v.getUint16(eocd + 10, true);
  const dirOffset = v.getUint32(eocd + 16, true);
  if (count === 0xffff || dirOffset === 0xffffffff) throw new ZipError(eocd, 'zip64 archives are not supported');
  const decoder = new TextDecoder('utf-8');
  const entries: ZipEntry[] = [];
  let p = dirOffset;
  for (let k = 0; k < count; k++) {
    if (p + 46 > data.length || v.getUint32(p, true) !== 0x02014b50) throw new ZipError(p, `central directory entry ${k} is malformed`);
    const flags = v.getUint16(p + 8, true);
    const method = v.getUint16(p + 10, true);
    const compressed = v.getUint32(p + 20, true);
    const size = v.getUint32(p + 24, true);
    const nameLen = v.getUint16(p + 28, true);
    const extraLen = v.getUint16(p + 30, true);
    const commentLen = v.getUint16(p + 32, true);
    const local = v.getUint32(p + 42, true);
    if (p + 46 + nameLen > data.length) throw new ZipError(p, `central directory entry ${k} is truncated`);
    const name = decoder.decode(data.subarray(p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
    entries.push({
      name,
      offset: local,
      read: () => {
        if (flags & 1) throw new ZipError(local, `${name}: encrypted`);
        if (local + 30 > data.length || v.getUint32(local, true) !== 0x04034b50) throw new ZipError(local, `${name}: bad local header`);
        const start = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
        if (start + compressed > data.length) throw new ZipError(start, `${name}: truncated`);
        const raw = data.subarray(start, start + compressed);
        if (method === 0) return raw;
        if (method !== 8) throw new ZipError(local, `${name}: compression method ${method} is not supported`);
        let out: Uint8Array;
        try {
          out = inflateRawSync(raw);
        } catch (e) {
          throw new ZipError(start, `${name}: ${(e as Error).message}`);
        }
        if (out.length !== size) throw new ZipError(start, `${name}: inflated to ${out.length} bytes, expected ${size}`);
        return out;
      },
    });
  }
  return entries;
}
