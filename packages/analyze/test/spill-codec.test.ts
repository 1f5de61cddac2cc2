/**
 * The spill's column packing: both forms (runs, plain) give back every bit, for every column type, and the form
 * follows the data (a column of few runs packs as runs, far smaller than deflate alone makes it).
 */
import * as zlib from 'zlib';
import { packColumn, SpillCodecError, unpackColumn, SpillColumnArray } from '../src/spill-codec';
import { rng } from './synthetic';

const bitsOf = (a: SpillColumnArray) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** a copy of `a` packed and unpacked, with the form byte */
function roundTrip<T extends SpillColumnArray>(a: T, xorTimes = false): { back: T; form: number; bytes: number } {
  const packed = packColumn(a, xorTimes);
  const back = new (a.constructor as new (n: number) => T)(a.length);
  unpackColumn(packed, back, xorTimes);
  return { back, form: packed[0], bytes: packed.length };
}

/** n values in runs of 1..maxRun of values from `pick` */
function runsOf<T extends SpillColumnArray>(make: new (n: number) => T, n: number, maxRun: number, pick: (r: () => number) => number, seed: number): T {
  const r = rng(seed);
  const a = new make(n);
  let i = 0;
  while (i < n) {
    const v = pick(r);
    const end = Math.min(n, i + 1 + Math.floor(r() * maxRun));
    for (; i < end; i++) a[i] = v;
  }
  return a;
}

describe('spill column packing', () => {
  test('times in runs (a block shares one), with NaN, -0, infinities and fractions: runs form, bit for bit', () => {
    let t = 1.7e13;
    const tsc = runsOf(Float64Array, 100_000, 20, (r) => {
      const x = r();
      t += Math.floor(r() * 900);
      return x < 0.01 ? NaN : x < 0.02 ? -0 : x < 0.03 ? Infinity : x < 0.1 ? t + r() : t;
    }, 1);
    const { back, form, bytes } = roundTrip(tsc, true);
    expect(form).toBe(1);
    expect(bitsOf(back).equals(bitsOf(tsc))).toBe(true);
    // (the runs form's point: smaller than plain deflate of the XORed times)
    expect(bytes).toBeLessThan(zlib.deflateRawSync(bitsOf(tsc), { level: 1 }).length);
  });

  test('NaN payloads other than the canonical one come back as they were', () => {
    const a = new Float64Array(64);
    const u = new Uint32Array(a.buffer);
    for (let i = 0; i < 64; i++) {
      u[2 * i] = i < 32 ? 0x1 : 0xdeadbeef; // two runs of two different NaNs
      u[2 * i + 1] = 0x7ff00000 | (i < 32 ? 0 : 0x80000);
    }
    const { back, form } = roundTrip(a, false);
    expect(form).toBe(1);
    expect(bitsOf(back).equals(bitsOf(a))).toBe(true);
  });

  test('end times: NaN but at gaps', () => {
    const end = new Float64Array(50_000).fill(NaN);
    for (let i = 7; i < end.length; i += 4093) end[i] = 1e12 + i * 0.5;
    const { back, form } = roundTrip(end);
    expect(form).toBe(1);
    expect(bitsOf(back).equals(bitsOf(end))).toBe(true);
  });

  test('every integer column in runs and not: each form where it pays, bit for bit', () => {
    const cases: [SpillColumnArray, number][] = [
      [runsOf(Int32Array, 30_000, 40, (r) => Math.floor(r() * 5000) - 10, 2), 1],
      [runsOf(Int16Array, 30_000, 40, (r) => Math.floor(r() * 65536) - 32768, 3), 1],
      [runsOf(Uint8Array, 30_000, 60, (r) => Math.floor(r() * 256), 4), 1],
      [runsOf(Int32Array, 30_000, 1, (r) => Math.floor(r() * 2 ** 32) - 2 ** 31, 5), 0],
      [runsOf(Int16Array, 30_000, 1, (r) => Math.floor(r() * 400) - 1, 6), 0],
      [runsOf(Uint8Array, 30_000, 2, (r) => Math.floor(r() * 4), 7), 0],
      [runsOf(Float64Array, 30_000, 1, (r) => 1e13 + r() * 1e9, 8), 0],
    ];
    for (const [a, wantForm] of cases) {
      const { back, form } = roundTrip(a, a instanceof Float64Array);
      expect([a.constructor.name, form]).toEqual([a.constructor.name, wantForm]);
      expect(bitsOf(back).equals(bitsOf(a))).toBe(true);
    }
  });

  test('empty and one-value columns; views into a larger buffer', () => {
    for (const a of [new Int32Array(0), new Float64Array(1).fill(3.5), new Uint8Array(1)]) expect(bitsOf(roundTrip(a).back).equals(bitsOf(a))).toBe(true);
    const whole = runsOf(Int32Array, 1000, 30, (r) => Math.floor(r() * 9), 9);
    const view = whole.subarray(13, 913);
    expect(bitsOf(roundTrip(view).back).equals(bitsOf(view))).toBe(true);
  });

  test('damaged bytes: a typed error, not wrong values', () => {
    const a = runsOf(Int32Array, 10_000, 30, (r) => Math.floor(r() * 9), 10);
    const packed = packColumn(a, false);
    // too few values asked for, an unknown form, a cut stream
    expect(() => unpackColumn(packed, new Int32Array(9_999), false)).toThrow(SpillCodecError);
    const bad = Buffer.from(packed);
    bad[0] = 7;
    expect(() => unpackColumn(bad, new Int32Array(10_000), false)).toThrow(/form 7/);
    expect(() => unpackColumn(packed.subarray(0, packed.length >> 1), new Int32Array(10_000), false)).toThrow();
    const plain = packColumn(runsOf(Int32Array, 1000, 1, (r) => Math.floor(r() * 1e9), 11), false);
    expect(plain[0]).toBe(0);
    expect(() => unpackColumn(plain, new Int32Array(999), false)).toThrow(SpillCodecError);
  });
});
