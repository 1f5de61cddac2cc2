/**
 * The layout language of docs/trace-format.md §3: `name:type ...` with types u8 u16 u32 u64 i8 i16 i32
 * i64 w64 str bytes, and arrays `name:[ ...fields... ]` (u32 count + elements). A layout is compiled
 * once into a field list; decoding walks the list without any string handling.
 */
export type ScalarType = 'u8' | 'u16' | 'u32' | 'u64' | 'i8' | 'i16' | 'i32' | 'i64' | 'w64' | 'str' | 'bytes';

export interface LayoutField {
  name: string;
  type: ScalarType | 'array';
  fields?: LayoutField[];
}

const SCALARS = new Set<string>(['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64', 'w64', 'str', 'bytes']);

export class LayoutSyntaxError extends Error {}

/** Parses a layout string; throws LayoutSyntaxError on anything malformed. */
export function parseLayout(text: string): LayoutField[] {
  let i = 0;
  const skipWs = () => {
    while (i < text.length && text[i] === ' ') i++;
  };
  const parseFields = (closing: boolean): LayoutField[] => {
    const out: LayoutField[] = [];
    for (;;) {
      skipWs();
      if (i >= text.length) {
        if (closing) throw new LayoutSyntaxError(`unclosed '[' in layout "${text}"`);
        return out;
      }
      if (text[i] === ']') {
        if (!closing) throw new LayoutSyntaxError(`unexpected ']' at ${i} in layout "${text}"`);
        i++;
        return out;
      }
      const colon = text.indexOf(':', i);
      if (colon < 0) throw new LayoutSyntaxError(`missing ':' after position ${i} in layout "${text}"`);
      const name = text.slice(i, colon);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new LayoutSyntaxError(`bad field name "${name}" in layout "${text}"`);
      i = colon + 1;
      if (text[i] === '[') {
        i++;
        out.push({ name, type: 'array', fields: parseFields(true) });
      } else {
        let j = i;
        while (j < text.length && text[j] !== ' ' && text[j] !== ']') j++;
        const type = text.slice(i, j);
        if (!SCALARS.has(type)) throw new LayoutSyntaxError(`unknown type "${type}" for field "${name}" in layout "${text}"`);
        out.push({ name, type: type as ScalarType });
        i = j;
      }
    }
  };
  return parseFields(false);
}

export function formatLayout(fields: LayoutField[]): string {
  return fields.map((f) => (f.type === 'array' ? `${f.name}:[${formatLayout(f.fields!)}]` : `${f.name}:${f.type}`)).join(' ');
}

/** Thrown by the decoder; the reader turns it into a TraceFormatError with file and offset. */
export class PayloadError extends Error {
  constructor(
    readonly code: 'payload-overrun' | 'number-overflow',
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder('utf-8');

/**
 * Decodes fields from `bytes[pos, end)`. Returns the new position. u64/i64 become numbers (error if not
 * exactly representable), w64 a bigint, bytes a subarray of the input (no copy).
 */
export function decodeFields(
  fields: LayoutField[],
  view: DataView,
  bytes: Uint8Array,
  pos: number,
  end: number,
  out: Record<string, unknown>,
): number {
  for (const f of fields) {
    const need = (n: number) => {
      if (pos + n > end) throw new PayloadError('payload-overrun', `field ${f.name} (${f.type}) needs ${n} bytes, ${end - pos} left`, pos);
    };
    switch (f.type) {
      case 'u8': need(1); out[f.name] = view.getUint8(pos); pos += 1; break;
      case 'i8': need(1); out[f.name] = view.getInt8(pos); pos += 1; break;
      case 'u16': need(2); out[f.name] = view.getUint16(pos, true); pos += 2; break;
      case 'i16': need(2); out[f.name] = view.getInt16(pos, true); pos += 2; break;
      case 'u32': need(4); out[f.name] = view.getUint32(pos, true); pos += 4; break;
      case 'i32': need(4); out[f.name] = view.getInt32(pos, true); pos += 4; break;
      case 'u64': {
        need(8);
        const lo = view.getUint32(pos, true);
        const hi = view.getUint32(pos + 4, true);
        if (hi > 0x1fffff) throw new PayloadError('number-overflow', `field ${f.name} = 0x${view.getBigUint64(pos, true).toString(16)} exceeds 2^53`, pos);
        out[f.name] = hi * 0x100000000 + lo;
        pos += 8;
        break;
      }
      case 'i64': {
        need(8);
        const v = view.getBigInt64(pos, true);
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
          throw new PayloadError('number-overflow', `field ${f.name} = ${v} exceeds 2^53`, pos);
        out[f.name] = Number(v);
        pos += 8;
        break;
      }
      case 'w64': need(8); out[f.name] = view.getBigUint64(pos, true); pos += 8; break;
      case 'str':
      case 'bytes': {
        need(4);
        const n = view.getUint32(pos, true);
        pos += 4;
        if (n > end - pos) throw new PayloadError('payload-overrun', `field ${f.name} (${f.type}) of ${n} bytes runs past the record end (${end - pos} left)`, pos - 4);
        const sub = bytes.subarray(pos, pos + n);
        out[f.name] = f.type === 'str' ? utf8.decode(sub) : sub;
        pos += n;
        break;
      }
      case 'array': {
        need(4);
        const n = view.getUint32(pos, true);
        pos += 4;
        // every element takes at least one byte unless the element layout is empty: bound before allocating
        if (f.fields!.length > 0 && n > end - pos)
          throw new PayloadError('payload-overrun', `array ${f.name} claims ${n} elements, ${end - pos} bytes left`, pos - 4);
        const arr: Record<string, unknown>[] = new Array(n);
        for (let k = 0; k < n; k++) {
          const el: Record<string, unknown> = {};
          pos = decodeFields(f.fields!, view, bytes, pos, end, el);
          arr[k] = el;
        }
        out[f.name] = arr;
        break;
      }
    }
  }
  return pos;
}

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
    let cap = this.buf.length * 2;
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

/** Encodes an object by a layout (the inverse of decodeFields). Missing fields are an error. */
export function encodeFields(fields: LayoutField[], value: Record<string, unknown>, sink: ByteSink): void {
  for (const f of fields) {
    const v = value[f.name];
    if (v === undefined) throw new Error(`missing field ${f.name}`);
    switch (f.type) {
      case 'u8': sink.u8(v as number); break;
      case 'i8': sink.i8(v as number); break;
      case 'u16': sink.u16(v as number); break;
      case 'i16': sink.i16(v as number); break;
      case 'u32': sink.u32(v as number); break;
      case 'i32': sink.i32(v as number); break;
      case 'u64': case 'w64': sink.u64(v as number | bigint); break;
      case 'i64': sink.i64(v as number | bigint); break;
      case 'str': sink.str(v as string); break;
      case 'bytes': sink.bytes(v as Uint8Array); break;
      case 'array': {
        const arr = v as Record<string, unknown>[];
        sink.u32(arr.length);
        for (const el of arr) encodeFields(f.fields!, el, sink);
        break;
      }
    }
  }
}

/** True when `actual` starts with every field of `expected` (same names, types, nested likewise). */
export function layoutHasPrefix(actual: LayoutField[], expected: LayoutField[]): boolean {
  if (actual.length < expected.length) return false;
  return expected.every((e, i) => {
    const a = actual[i];
    if (a.name !== e.name || a.type !== e.type) return false;
    return e.type !== 'array' || layoutHasPrefix(a.fields!, e.fields!);
  });
}
