type Typed = Float64Array | Uint32Array | Uint8Array | Int32Array | Int16Array;

/** A copy of `a` with twice the capacity (for growable typed-array columns). */
export function grown<T extends Typed>(a: T): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(16, a.length * 2));
  b.set(a);
  return b;
}
