/** Typed-array helpers for the per-depth and per-row state the profiles keep. */

/** `a` itself when it holds `need` elements, else a copy with room for them (at least twice as many). */
export function withRoom<T extends Uint8Array | Int32Array | Float64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}
