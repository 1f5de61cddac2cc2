/** A minimal class-file writer for fixtures javac no longer emits (jsr/ret): one class, static methods. */
export interface HandWrittenMethod {
  name: string;
  descriptor: string;
  maxStack: number;
  maxLocals: number;
  code: number[];
  handlers?: { start: number; end: number; handler: number; catchType?: string }[];
}

export function writeClass(name: string, major: number, methods: HandWrittenMethod[]): Uint8Array {
  const bytes: number[] = [];
  const u1 = (x: number) => bytes.push(x & 0xff);
  const u2 = (x: number) => (u1(x >> 8), u1(x));
  const u4 = (x: number) => (u2(x >>> 16), u2(x & 0xffff));
  const pool: number[][] = [];
  const utf8 = new Map<string, number>();
  const classes = new Map<string, number>();
  const addUtf8 = (s: string) => {
    let i = utf8.get(s);
    if (i === undefined) {
      const b = [...Buffer.from(s, 'utf8')];
      pool.push([1, b.length >> 8, b.length & 0xff, ...b]);
      utf8.set(s, (i = pool.length));
    }
    return i;
  };
  const addClass = (s: string) => {
    let i = classes.get(s);
    if (i === undefined) {
      const n = addUtf8(s);
      pool.push([7, n >> 8, n & 0xff]);
      classes.set(s, (i = pool.length));
    }
    return i;
  };
  const thisClass = addClass(name);
  const superClass = addClass('java/lang/Object');
  const code = addUtf8('Code');
  const ms = methods.map((m) => ({ m, name: addUtf8(m.name), desc: addUtf8(m.descriptor), types: (m.handlers ?? []).map((h) => (h.catchType ? addClass(h.catchType) : 0)) }));
  u4(0xcafebabe);
  u2(0);
  u2(major);
  u2(pool.length + 1);
  for (const e of pool) e.forEach(u1);
  u2(0x21);
  u2(thisClass);
  u2(superClass);
  u2(0); // interfaces
  u2(0); // fields
  u2(ms.length);
  for (const { m, name: n, desc, types } of ms) {
    u2(0x09); // public static
    u2(n);
    u2(desc);
    u2(1);
    u2(code);
    const hs = m.handlers ?? [];
    u4(2 + 2 + 4 + m.code.length + 2 + 8 * hs.length + 2);
    u2(m.maxStack);
    u2(m.maxLocals);
    u4(m.code.length);
    m.code.forEach(u1);
    u2(hs.length);
    hs.forEach((h, k) => (u2(h.start), u2(h.end), u2(h.handler), u2(types[k])));
    u2(0);
  }
  u2(0); // class attributes
  return Uint8Array.from(bytes);
}
