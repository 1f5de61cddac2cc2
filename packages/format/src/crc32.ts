import * as zlib from 'zlib';

const native = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

let table: Uint32Array | undefined;
function makeTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

/** CRC-32 (IEEE, as zlib), continuing from `prev` (0 to start). zlib.crc32 when Node has it (20.15+). */
export function crc32(data: Uint8Array, prev = 0): number {
  return native ? native(data, prev) : crc32Portable(data, prev);
}

/** The pure-TypeScript fallback (table-driven, reflected 0xEDB88320). */
export function crc32Portable(data: Uint8Array, prev = 0): number {
  table ??= makeTable();
  let c = ~prev >>> 0;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

const ZERO4 = new Uint8Array(4);

/** CRC of `buf` with the 4 bytes at `at` taken as zero (how headers and records carry their own CRC). */
export function crc32Excluding(buf: Uint8Array, at: number): number {
  let c = crc32(buf.subarray(0, at));
  c = crc32(ZERO4, c);
  return crc32(buf.subarray(at + 4), c);
}
