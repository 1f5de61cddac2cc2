/**
 * The layout language of docs/trace-format.md §3: `name:type ...` with types u8 u16 u32 u64 i8 i16 i32
 * i64 w64 str bytes, and arrays `name:[ ...fields... ]` (u32 count + elements).
 *
 * A layout string is parsed once (`parseLayout`) and compiled once (`compileLayout`) into a flat list of
 * numeric ops; decoding a payload walks that list with a DataView — no string handling and no per-field
 * closures on the hot path.
 */
export type ScalarType = 'u8' | 'u16' | 'u32' | 'u64' | 'i8' | 'i16' | 'i32' | 'i64' | 'w64' | 'str' | 'bytes';

export interface LayoutField {
  name: string;
  type: ScalarType | 'array';
  /** Element fields, for arrays. */
  fields?: LayoutField[];
}

const SCALARS = new Set<string>(['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64', 'w64', 'str', 'bytes']);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isWs = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

export class LayoutSyntaxError extends Error {}

/**
 * Parses a layout string; throws LayoutSyntaxError on anything malformed (unknown type, bad name, a
 * duplicate name in one level, unbalanced brackets, an array without element fields).
 */
export function parseLayout(text: string): LayoutField[] {
  let i = 0;
  const fail = (msg: string): never => {
    throw new LayoutSyntaxError(`${msg} in layout "${text}"`);
  };
  const parseFields = (closing: boolean): LayoutField[] => {
    const out: LayoutField[] = [];
    const seen = new Set<string>();
    for (;;) {
      while (i < text.length && isWs(text[i])) i++;
      if (i >= text.length) {
        if (closing) fail(`unclosed '['`);
        return out;
      }
      if (text[i] === ']') {
        if (!closing) fail(`unexpected ']' at ${i}`);
        i++;
        if (out.length === 0) fail(`array without element fields before position ${i}`);
        return out;
      }
      let j = i;
      while (j < text.length && text[j] !== ':' && text[j] !== ']' && !isWs(text[j])) j++;
      if (text[j] !== ':') fail(`missing ':' after "${text.slice(i, j)}" at ${i}`);
      const name = text.slice(i, j);
      if (!NAME.test(name)) fail(`bad field name "${name}"`);
      if (seen.has(name)) fail(`duplicate field name "${name}"`);
      seen.add(name);
      i = j + 1;
      if (text[i] === '[') {
        i++;
        out.push({ name, type: 'array', fields: parseFields(true) });
        continue;
      }
      j = i;
      while (j < text.length && !isWs(text[j]) && text[j] !== ']') j++;
      const type = text.slice(i, j);
      if (!SCALARS.has(type)) fail(`unknown type "${type}" for field "${name}"`);
      out.push({ name, type: type as ScalarType });
      i = j;
    }
  };
  return parseFields(false);
}

export function formatLayout(fields: LayoutField[]): string {
  return fields.map((f) => (f.type === 'array' ? `${f.name}:[${formatLayout(f.fields!)}]` : `${f.name}:${f.type}`)).join(' ');
}

// ---------------------------------------------------------------------------------------------------------
// compiled layouts

const OP_U8 = 0, OP_I8 = 1, OP_U16 = 2, OP_I16 = 3, OP_U32 = 4, OP_I32 = 5, OP_U64 = 6, OP_I64 = 7, OP_W64 = 8;
const OP_STR = 9, OP_BYTES = 10, OP_ARRAY = 11;
const OP_OF: Record<LayoutField['type'], number> = {
  u8: OP_U8, i8: OP_I8, u16: OP_U16, i16: OP_I16, u32: OP_U32, i32: OP_I32, u64: OP_U64, i64: OP_I64, w64: OP_W64,
  str: OP_STR, bytes: OP_BYTES, array: OP_ARRAY,
};
/** Bytes a field takes at least (variable-length ones: their u32 length/count). */
const MIN_WIDTH = [1, 1, 2, 2, 4, 4, 8, 8, 8, 4, 4, 4];

/** A layout compiled into ops: parallel arrays of opcode, field name and (arrays) element layout. */
export interface CompiledLayout {
  readonly fields: LayoutField[];
  readonly ops: Uint8Array;
  readonly names: string[];
  readonly elements: (CompiledLayout | undefined)[];
  /** Smallest encoded size (all strings, byte fields and arrays empty). */
  readonly minSize: number;
}

export function compileLayout(layout: string | LayoutField[]): CompiledLayout {
  const fields = typeof layout === 'string' ? parseLayout(layout) : layout;
  const ops = new Uint8Array(fields.length);
  const names: string[] = [];
  const elements: (CompiledLayout | undefined)[] = [];
  let minSize = 0;
  fields.forEach((f, k) => {
    ops[k] = OP_OF[f.type];
    names.push(f.name);
    elements.push(f.type === 'array' ? compileLayout(f.fields!) : undefined);
    minSize += MIN_WIDTH[ops[k]];
  });
  return { fields, ops, names, elements, minSize };
}

/** Thrown by the decoder; the reader turns it into a TraceFormatError with file and offset. */
export class PayloadError extends Error {
  constructor(
    readonly code: 'payload-overrun' | 'number-overflow',
    message: string,
    /** Offset of the offending field, relative to the buffer being decoded. */
    readonly at: number,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder('utf-8');
const TWO32 = 0x100000000;

function overrun(l: CompiledLayout, k: number, need: number, pos: number, end: number): PayloadError {
  const f = l.fields[k];
  return new PayloadError('payload-overrun', `field ${f.name} (${f.type}) needs ${need} bytes, ${end - pos} left in the payload`, pos);
}

/**
 * Decodes fields of `l` from `bytes[pos, end)` into `out` and returns the position after them. `view` must
 * be a DataView over exactly `bytes` (same buffer, offset and length). u64/i64 become numbers (a value
 * whose magnitude exceeds 2^53-1 is a number-overflow), w64 a bigint, str a string, bytes a subarray of
 * `bytes` (no copy), arrays arrays of plain objects.
 */
export function decodeInto(l: CompiledLayout, out: Record<string, unknown>, view: DataView, bytes: Uint8Array, pos: number, end: number): number {
  const ops = l.ops;
  const names = l.names;
  for (let k = 0; k < ops.length; k++) {
    const op = ops[k];
    const w = MIN_WIDTH[op];
    if (pos + w > end) throw overrun(l, k, w, pos, end);
    switch (op) {
      case OP_U8: out[names[k]] = view.getUint8(pos); break;
      case OP_I8: out[names[k]] = view.getInt8(pos); break;
      case OP_U16: out[names[k]] = view.getUint16(pos, true); break;
      case OP_I16: out[names[k]] = view.getInt16(pos, true); break;
      case OP_U32: out[names[k]] = view.getUint32(pos, true); break;
      case OP_I32: out[names[k]] = view.getInt32(pos, true); break;
      case OP_U64: {
        const hi = view.getUint32(pos + 4, true);
        if (hi > 0x1fffff)
          throw new PayloadError('number-overflow', `field ${names[k]} = 0x${view.getBigUint64(pos, true).toString(16)} exceeds 2^53-1`, pos);
        out[names[k]] = hi * TWO32 + view.getUint32(pos, true);
        break;
      }
      case OP_I64: {
        const hi = view.getInt32(pos + 4, true);
        const lo = view.getUint32(pos, true);
        if (hi > 0x1fffff || hi < -0x200000 || (hi === -0x200000 && lo === 0))
          throw new PayloadError('number-overflow', `field ${names[k]} = ${view.getBigInt64(pos, true)} exceeds 2^53-1 in magnitude`, pos);
        out[names[k]] = hi * TWO32 + lo;
        break;
      }
      case OP_W64: out[names[k]] = view.getBigUint64(pos, true); break;
      case OP_STR:
      case OP_BYTES: {
        const n = view.getUint32(pos, true);
        if (n > end - pos - 4)
          throw new PayloadError('payload-overrun', `field ${names[k]} (${op === OP_STR ? 'str' : 'bytes'}) of ${n} bytes runs past the payload end (${end - pos - 4} left)`, pos);
        const sub = bytes.subarray(pos + 4, pos + 4 + n);
        out[names[k]] = op === OP_BYTES ? sub : n === 0 ? '' : utf8.decode(sub);
        pos += n;
        break;
      }
      case OP_ARRAY: {
        const n = view.getUint32(pos, true);
        const el = l.elements[k]!;
        // bound the count by the bytes left before allocating anything
        if (n * el.minSize > end - pos - 4)
          throw new PayloadError('payload-overrun', `array ${names[k]} of ${n} elements (at least ${el.minSize} bytes each) runs past the payload end (${end - pos - 4} left)`, pos);
        const arr: Record<string, unknown>[] = new Array(n);
        let p = pos + 4;
        for (let e = 0; e < n; e++) {
          const o: Record<string, unknown> = {};
          p = decodeInto(el, o, view, bytes, p, end);
          arr[e] = o;
        }
        out[names[k]] = arr;
        pos = p - w; // `pos += w` below
        break;
      }
    }
    pos += w;
  }
  return pos;
}

// ---------------------------------------------------------------------------------------------------------
// encoding (the writer)

/** Growable little-endian byte sink used by the writer. */
export class ByteSink {
  buf: Uint8Array;
  view: DataView;
  len = 0;
  constructor(initial = 4096) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }
  reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = Math.max(16, this.buf.length * 2);
    while (cap < this.len + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.len));
    this.buf = nb;
    this.view = new DataView(nb.buffer);
  }
  u8(v: number) { this.reserve(1); this.view.setUint8(this.len, v); this.len += 1; }
  i8(v: number) { this.reserve(1); this.view.setInt8(this.len, v); this.len += 1; }
  u16(v: number) { this.reserve(2); this.view.setUint16(this.len, v, true); this.len += 2; }
  i16(v: number) { this.reserve(2); this.view.setInt16(this.len, v, true); this.len += 2; }
  u32(v: number) { this.reserve(4); this.view.setUint32(this.len, v, true); this.len += 4; }
  i32(v: number) { this.reserve(4); this.view.setInt32(this.len, v, true); this.len += 4; }
  u64(v: number | bigint) { this.reserve(8); this.view.setBigUint64(this.len, BigInt(v), true); this.len += 8; }
  i64(v: number | bigint) { this.reserve(8); this.view.setBigInt64(this.len, BigInt(v), true); this.len += 8; }
  raw(b: Uint8Array) { this.reserve(b.length); this.buf.set(b, this.len); this.len += b.length; }
  str(s: string) { const b = Buffer.from(s, 'utf8'); this.u32(b.length); this.raw(b); }
  bytes(b: Uint8Array) { this.u32(b.length); this.raw(b); }
  result(): Uint8Array { return this.buf.subarray(0, this.len); }
}

const INT_RANGE: Record<string, [number, number]> = {
  u8: [0, 0xff], i8: [-0x80, 0x7f], u16: [0, 0xffff], i16: [-0x8000, 0x7fff], u32: [0, 0xffffffff], i32: [-0x80000000, 0x7fffffff],
};
const U64_MAX = (1n << 64n) - 1n;

function checkInt(path: string, type: string, v: unknown): void {
  const r = INT_RANGE[type];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < r[0] || v > r[1]) throw new RangeError(`field ${path}: ${String(v)} is not a ${type}`);
}

function checkWide(path: string, type: string, v: unknown): void {
  // numbers must be exact integers; bigints are allowed for every 64-bit type (a u64 above 2^53 is legal on
  // the wire and only the reader refuses it, so fixtures for that error can be written)
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || (type !== 'i64' && v < 0)) throw new RangeError(`field ${path}: ${v} is not a ${type}`);
  } else if (typeof v === 'bigint') {
    const ok = type === 'i64' ? v >= -(1n << 63n) && v < 1n << 63n : v >= 0n && v <= U64_MAX;
    if (!ok) throw new RangeError(`field ${path}: ${v} is not a ${type}`);
  } else throw new TypeError(`field ${path}: expected a number or bigint for ${type}, got ${typeof v}`);
}

/** Encodes an object by a layout (the inverse of decodeInto). Missing or out-of-range fields throw. */
export function encodeFields(fields: LayoutField[], value: Record<string, unknown>, sink: ByteSink, prefix = ''): void {
  for (const f of fields) {
    const v = value[f.name];
    const path = prefix + f.name;
    if (v === undefined) throw new TypeError(`missing field ${path}`);
    switch (f.type) {
      case 'u8': checkInt(path, f.type, v); sink.u8(v as number); break;
      case 'i8': checkInt(path, f.type, v); sink.i8(v as number); break;
      case 'u16': checkInt(path, f.type, v); sink.u16(v as number); break;
      case 'i16': checkInt(path, f.type, v); sink.i16(v as number); break;
      case 'u32': checkInt(path, f.type, v); sink.u32(v as number); break;
      case 'i32': checkInt(path, f.type, v); sink.i32(v as number); break;
      case 'u64': case 'w64': checkWide(path, f.type, v); sink.u64(v as number | bigint); break;
      case 'i64': checkWide(path, f.type, v); sink.i64(v as number | bigint); break;
      case 'str':
        if (typeof v !== 'string') throw new TypeError(`field ${path}: expected a string`);
        sink.str(v);
        break;
      case 'bytes':
        if (!(v instanceof Uint8Array)) throw new TypeError(`field ${path}: expected a Uint8Array`);
        sink.bytes(v);
        break;
      case 'array': {
        if (!Array.isArray(v)) throw new TypeError(`field ${path}: expected an array`);
        sink.u32(v.length);
        v.forEach((el, k) => encodeFields(f.fields!, el as Record<string, unknown>, sink, `${path}[${k}].`));
        break;
      }
    }
  }
}

/**
 * The first field of `expected` that `actual` does not carry at the same position with the same type
 * (nested likewise), or undefined when `actual` starts with all of `expected` (trailing extras are fine).
 */
export function missingField(actual: LayoutField[], expected: LayoutField[], prefix = ''): string | undefined {
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    const a = actual[i];
    if (!a || a.name !== e.name || (a.type !== e.type)) return `${prefix}${e.name}:${e.type === 'array' ? '[...]' : e.type}`;
    if (e.type === 'array') {
      const m = missingField(a.fields!, e.fields!, `${prefix}${e.name}.`);
      if (m) return m;
    }
  }
  return undefined;
}

export function layoutHasPrefix(actual: LayoutField[], expected: LayoutField[]): boolean {
  return missingField(actual, expected) === undefined;
}
