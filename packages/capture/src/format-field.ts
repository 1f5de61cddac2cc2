/**
 * A PMU format term as sysfs describes it (format/<term>): "config:10", "config:14-17", "config1:0-31" or a
 * comma-separated list of bit ranges. Bit positions are always read from here, never hard-coded.
 */
import { CaptureError } from './errors';

export type ConfigWord = 'config' | 'config1' | 'config2' | 'config3';

export interface FormatField {
  name: string;
  word: ConfigWord;
  /** bit ranges, low bits of the value first, each inclusive */
  ranges: { lo: number; hi: number }[];
  /** total width in bits */
  width: number;
}

export function parseFormatField(name: string, text: string): FormatField {
  const m = /^(config[123]?):([0-9,\- ]+)$/.exec(text.trim());
  if (!m) throw new CaptureError('bad-config', `format/${name}: cannot parse "${text.trim()}" (expected e.g. config:14-17)`);
  const ranges = m[2].split(',').map((part) => {
    const [a, b] = part.trim().split('-').map(Number);
    const lo = a;
    const hi = b === undefined ? a : b;
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && hi <= 63 && lo <= hi))
      throw new CaptureError('bad-config', `format/${name}: bad bit range "${part}"`);
    return { lo, hi };
  });
  return { name, word: m[1] as ConfigWord, ranges, width: ranges.reduce((w, r) => w + r.hi - r.lo + 1, 0) };
}

/** Places `value` into the field's bits of its config word (bigint), checking that it fits. */
export function encodeField(field: FormatField, value: number | bigint): bigint {
  let v = BigInt(value);
  if (v < 0n || v >= 1n << BigInt(field.width))
    throw new CaptureError('bad-config', `${field.name}=${value} does not fit in its ${field.width} bit(s)`);
  let out = 0n;
  for (const r of field.ranges) {
    const w = BigInt(r.hi - r.lo + 1);
    out |= (v & ((1n << w) - 1n)) << BigInt(r.lo);
    v >>= w;
  }
  return out;
}

/** The field's value inside a config word (the inverse of encodeField). */
export function decodeField(field: FormatField, word: bigint): bigint {
  let out = 0n;
  let shift = 0n;
  for (const r of field.ranges) {
    const w = BigInt(r.hi - r.lo + 1);
    out |= ((word >> BigInt(r.lo)) & ((1n << w) - 1n)) << shift;
    shift += w;
  }
  return out;
}
