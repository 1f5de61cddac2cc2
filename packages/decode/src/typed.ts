type Typed = Float64Array | Uint32Array | Uint8Array | Int32Array | Int16Array;

/** A copy of `a` with room for `n` elements (default twice its length; for growable typed-array columns). */
export function grown<T extends Typed>(a: T, n = Math.max(16, a.length * 2)): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}
