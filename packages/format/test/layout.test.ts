import { compileLayout, formatLayout, parseLayout } from '../src';
import { decodeInto, LayoutSyntaxError, PayloadError } from '../src/layout';

describe('layout language', () => {
  test('parses scalars, nested arrays and the empty layout', () => {
    expect(parseLayout('')).toEqual([]);
    const f = parseLayout('a:u8 pcs:[pc:u64 frames:[method:u32 bci:i32]] z:w64');
    expect(f).toEqual([
      { name: 'a', type: 'u8' },
      { name: 'pcs', type: 'array', fields: [{ name: 'pc', type: 'u64' }, { name: 'frames', type: 'array', fields: [{ name: 'method', type: 'u32' }, { name: 'bci', type: 'i32' }] }] },
      { name: 'z', type: 'w64' },
    ]);
    expect(formatLayout(f)).toBe('a:u8 pcs:[pc:u64 frames:[method:u32 bci:i32]] z:w64');
  });

  test.each([
    ['a:u128', /unknown type/],
    ['a', /missing ':'/],
    ['a:[b:u8', /unclosed/],
    ['a:u8]', /unexpected '\]'/],
    ['a:[]', /without element fields/],
    ['a:u8 a:u16', /duplicate/],
    ['1a:u8', /bad field name/],
  ])('refuses %s', (text, why) => {
    expect(() => parseLayout(text)).toThrow(LayoutSyntaxError);
    expect(() => parseLayout(text)).toThrow(why);
  });

  test('decodes every scalar type little-endian with the documented TypeScript types', () => {
    const l = compileLayout('a:u8 b:i8 c:u16 d:i16 e:u32 f:i32 g:u64 h:i64 i:w64 s:str y:bytes');
    const parts: Buffer[] = [];
    const put = (n: number, f: (b: Buffer) => void) => { const b = Buffer.alloc(n); f(b); parts.push(b); };
    put(1, (x) => x.writeUInt8(0xfe)); put(1, (x) => x.writeInt8(-2)); put(2, (x) => x.writeUInt16LE(0xfffe)); put(2, (x) => x.writeInt16LE(-300));
    put(4, (x) => x.writeUInt32LE(0xfffffffe)); put(4, (x) => x.writeInt32LE(-70000));
    put(8, (x) => x.writeBigUInt64LE(2n ** 53n - 1n)); put(8, (x) => x.writeBigInt64LE(-(2n ** 53n - 1n))); put(8, (x) => x.writeBigUInt64LE(2n ** 64n - 1n));
    put(4, (x) => x.writeUInt32LE(4)); parts.push(Buffer.from('x€', 'utf8'));
    put(4, (x) => x.writeUInt32LE(2)); parts.push(Buffer.from([7, 8]));
    const b = Buffer.concat(parts);
    const out: Record<string, unknown> = {};
    const end = decodeInto(l, out, new DataView(b.buffer, b.byteOffset, b.length), b, 0, b.length);
    expect(end).toBe(b.length);
    expect(out).toEqual({ a: 0xfe, b: -2, c: 0xfffe, d: -300, e: 0xfffffffe, f: -70000, g: 2 ** 53 - 1, h: -(2 ** 53 - 1), i: 2n ** 64n - 1n, s: 'x€', y: new Uint8Array([7, 8]) });
    expect(out.y).toBeInstanceOf(Uint8Array);
    expect((out.y as Uint8Array).buffer).toBe(b.buffer); // a view, not a copy
  });

  test('u64 and i64 past 2^53-1 are number-overflow errors; w64 is not', () => {
    const dec = (layout: string, v: bigint, signed = false) => {
      const b = Buffer.alloc(8);
      if (signed) b.writeBigInt64LE(v);
      else b.writeBigUInt64LE(v);
      return decodeInto(compileLayout(layout), {}, new DataView(b.buffer, b.byteOffset, 8), b, 0, 8);
    };
    expect(() => dec('x:u64', 2n ** 53n)).toThrow(PayloadError);
    expect(() => dec('x:u64', 2n ** 53n)).toThrow(/exceeds/);
    expect(dec('x:u64', 2n ** 53n - 1n)).toBe(8);
    expect(() => dec('x:i64', -(2n ** 53n), true)).toThrow(/exceeds/);
    expect(() => dec('x:i64', 2n ** 53n, true)).toThrow(/exceeds/);
    expect(dec('x:i64', -(2n ** 53n) + 1n, true)).toBe(8);
    expect(dec('x:w64', 2n ** 64n - 1n)).toBe(8);
  });

  test('lengths and counts running past the payload are overruns, checked before allocating', () => {
    const b = Buffer.alloc(8);
    b.writeUInt32LE(0xffffffff, 0);
    const v = new DataView(b.buffer, b.byteOffset, 8);
    for (const layout of ['s:str', 'b:bytes', 'a:[x:u8]']) {
      try {
        decodeInto(compileLayout(layout), {}, v, b, 0, 8);
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(PayloadError);
        expect((e as PayloadError).code).toBe('payload-overrun');
        expect((e as PayloadError).at).toBe(0);
      }
    }
    expect(() => decodeInto(compileLayout('a:u32 b:u32 c:u8'), {}, v, b, 0, 8)).toThrow(/field c \(u8\) needs 1 bytes, 0 left/);
  });
});
