/**
 * How the spill packs one column of one window (spill.ts): as runs of one value when the column has few of them,
 * else as it is; then raw deflate, level 1. Decoded events run in runs: a compiled block's bytecodes share one time
 * and mostly one method, and only gaps have an end time (NaN elsewhere). Measured on luindex short (110 M events,
 * every window on disk): 0.096 distinct-time runs per event, 0.088 method runs, endTsc one NaN run per gap; inflating
 * the eight plain columns took 98 ns per event, 68 of them on tsc, endTsc and method, whose plain bytes are 2.2 GB of
 * the 3.2 GB.
 *
 * Values are compared and copied as their bits (f64 as two 32-bit halves), so every value comes back exactly: NaN
 * payloads, -0, fractions. A plain time column is first turned into the XOR of each value's bits with the one before
 * (close times leave mostly zero bytes).
 *
 * A packed column: byte 0 the form (PLAIN or RUNS), bytes 1.. the deflated body. PLAIN's body: the column's bytes
 * (times XORed). RUNS' body: the number of runs r (u32), r run lengths (u32), r values (as the column's elements),
 * little-endian. Scratch only: these bytes live in a spill file that is removed with the analysis.
 */
import * as zlib from 'zlib';

export type SpillColumnArray = Uint8Array | Int16Array | Int32Array | Float64Array;

const PLAIN = 0;
const RUNS = 1;

/** runs are worth it when their lengths and values take at most this share of the plain bytes */
const RUNS_SHARE = 0.5;

/** The column's elements as unsigned words (f64: two 32-bit words each), over the same bytes. */
function words(a: SpillColumnArray): Uint8Array | Uint16Array | Uint32Array {
  if (a instanceof Uint8Array) return a;
  if (a instanceof Int16Array) return new Uint16Array(a.buffer, a.byteOffset, a.length);
  if (a instanceof Int32Array) return new Uint32Array(a.buffer, a.byteOffset, a.length);
  return new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
}

/** Runs of one value in w (stride 1 or 2 words per element); stops counting past `limit` (returns limit + 1). */
function countRuns(w: Uint8Array | Uint16Array | Uint32Array, stride: number, limit: number): number {
  const n = w.length;
  if (n === 0) return 0;
  let runs = 1;
  if (stride === 1) {
    for (let i = 1; i < n; i++) if (w[i] !== w[i - 1] && ++runs > limit) return runs;
  } else {
    for (let i = 2; i < n; i += 2) if ((w[i] !== w[i - 2] || w[i + 1] !== w[i - 1]) && ++runs > limit) return runs;
  }
  return runs;
}

/** XOR of each 8-byte value's bits with the one before (`undo`: back), in place. */
function xorWithPrevious(u: Uint32Array, undo: boolean): void {
  const n = u.length >> 1;
  if (undo) {
    for (let i = 1; i < n; i++) {
      u[2 * i] ^= u[2 * i - 2];
      u[2 * i + 1] ^= u[2 * i - 1];
    }
  } else {
    for (let i = n - 1; i > 0; i--) {
      u[2 * i] ^= u[2 * i - 2];
      u[2 * i + 1] ^= u[2 * i - 1];
    }
  }
}

/** Packs column `a` (all of it; see the module comment). `xorTimes`: a plain f64 column is XORed first. */
export function packColumn(a: SpillColumnArray, xorTimes: boolean): Buffer {
  const w = words(a);
  const stride = a instanceof Float64Array ? 2 : 1;
  const n = a.length;
  // (a column of many runs, most of them, is known for one as soon as its runs pass what would pay)
  const limit = Math.floor((RUNS_SHARE * a.byteLength - 4) / (4 + a.BYTES_PER_ELEMENT));
  const runs = countRuns(w, stride, limit);
  const runBytes = 4 + runs * (4 + a.BYTES_PER_ELEMENT);
  let body: Uint8Array;
  let form: number;
  if (n > 0 && runs <= limit) {
    form = RUNS;
    const buf = new ArrayBuffer((runBytes + 3) & ~3);
    const head = new Uint32Array(buf, 0, 1 + runs);
    head[0] = runs;
    const valueAt = 4 + runs * 4;
    const lengths = head.subarray(1);
    if (stride === 1) {
      const values = new (w.constructor as new (b: ArrayBuffer, o: number, n: number) => Uint8Array | Uint16Array | Uint32Array)(buf, valueAt, runs);
      let r = 0;
      let start = 0;
      for (let i = 1; i <= n; i++) {
        if (i === n || w[i] !== w[i - 1]) {
          values[r] = w[i - 1];
          lengths[r++] = i - start;
          start = i;
        }
      }
    } else {
      const values = new Uint32Array(buf, valueAt, runs * 2);
      let r = 0;
      let start = 0;
      for (let i = 1; i <= n; i++) {
        if (i === n || w[2 * i] !== w[2 * i - 2] || w[2 * i + 1] !== w[2 * i - 1]) {
          values[2 * r] = w[2 * i - 2];
          values[2 * r + 1] = w[2 * i - 1];
          lengths[r++] = i - start;
          start = i;
        }
      }
    }
    body = new Uint8Array(buf, 0, runBytes);
  } else {
    form = PLAIN;
    body = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    if (xorTimes && stride === 2) {
      body = body.slice();
      xorWithPrevious(new Uint32Array(body.buffer, body.byteOffset, body.byteLength >> 2), false);
    }
  }
  const packed = zlib.deflateRawSync(body, { level: 1 });
  const out = Buffer.allocUnsafe(1 + packed.length);
  out[0] = form;
  packed.copy(out, 1);
  return out;
}

/** Thrown when packed bytes do not make the column asked for (a damaged spill file). */
export class SpillCodecError extends Error {}

/** Unpacks `packed` (from packColumn) into `into` (the column's length, its type). `xorTimes` as it was packed. */
export function unpackColumn(packed: Uint8Array, into: SpillColumnArray, xorTimes: boolean): void {
  const form = packed[0];
  const deflated = packed.subarray(1);
  const w = words(into);
  const stride = into instanceof Float64Array ? 2 : 1;
  const n = into.length;
  if (form === PLAIN) {
    const raw = zlib.inflateRawSync(deflated, { chunkSize: Math.max(64, into.byteLength + 1) });
    if (raw.length !== into.byteLength) throw new SpillCodecError(`${raw.length} plain bytes, not ${into.byteLength}`);
    new Uint8Array(into.buffer, into.byteOffset, into.byteLength).set(raw);
    if (xorTimes && stride === 2) xorWithPrevious(w as Uint32Array, true);
    return;
  }
  if (form !== RUNS) throw new SpillCodecError(`form ${form} is neither plain nor runs`);
  const raw = zlib.inflateRawSync(deflated);
  if (raw.length < 4) throw new SpillCodecError(`${raw.length} bytes of runs, less than their count`);
  // (the 32-bit views need a 4-byte aligned start: a copy when inflate's Buffer does not have one)
  let body = raw.buffer;
  let base = raw.byteOffset;
  if (base & 3) {
    body = new ArrayBuffer((raw.length + 3) & ~3);
    new Uint8Array(body).set(raw);
    base = 0;
  }
  const runs = new Uint32Array(body, base, 1)[0];
  const valueAt = base + 4 + runs * 4;
  if (raw.length !== 4 + runs * (4 + into.BYTES_PER_ELEMENT)) throw new SpillCodecError(`${raw.length} bytes do not hold ${runs} runs of ${into.BYTES_PER_ELEMENT}-byte values`);
  const lengths = new Uint32Array(body, base + 4, runs);
  let at = 0;
  if (stride === 1) {
    const values = new (w.constructor as new (b: ArrayBuffer, o: number, n: number) => Uint8Array | Uint16Array | Uint32Array)(body, valueAt, runs);
    for (let r = 0; r < runs; r++) {
      const v = values[r];
      const end = at + lengths[r];
      if (end > n) throw new SpillCodecError(`runs past the column's ${n} values`);
      for (let i = at; i < end; i++) w[i] = v;
      at = end;
    }
  } else {
    const values = new Uint32Array(body, valueAt, runs * 2);
    for (let r = 0; r < runs; r++) {
      const lo = values[2 * r];
      const hi = values[2 * r + 1];
      const end = at + lengths[r];
      if (end > n) throw new SpillCodecError(`runs past the column's ${n} values`);
      for (let i = at; i < end; i++) {
        w[2 * i] = lo;
        w[2 * i + 1] = hi;
      }
      at = end;
    }
  }
  if (at !== n) throw new SpillCodecError(`runs make ${at} values, not ${n}`);
}
