const { imul } = Math;

/** Open-addressing hash table keyed by a pair of int32 (typed arrays, no object per key), two int32 values per key. */
export class PairTable {
  size = 0;
  capacity: number;
  ka: Int32Array;
  kb: Int32Array;
  used: Uint8Array;
  v0: Int32Array;
  v1: Int32Array;

  constructor(capacity = 1024) {
    let cap = 16;
    while (cap < capacity) cap *= 2;
    this.capacity = cap;
    this.ka = new Int32Array(cap);
    this.kb = new Int32Array(cap);
    this.used = new Uint8Array(cap);
    this.v0 = new Int32Array(cap);
    this.v1 = new Int32Array(cap);
  }

  private start(a: number, b: number): number {
    let h = imul(a, 0x9e3779b1) ^ imul(b + 0x7f4a7c15, 0x85ebca6b);
    h ^= h >>> 15;
    h = imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 13)) & (this.capacity - 1);
  }

  /** The slot of (a, b), or -1. */
  find(a: number, b: number): number {
    const mask = this.capacity - 1;
    for (let s = this.start(a, b); this.used[s]; s = (s + 1) & mask) if (this.ka[s] === a && this.kb[s] === b) return s;
    return -1;
  }

  /** The slot of (a, b), added with values 0 when absent. */
  slot(a: number, b: number): number {
    if (2 * (this.size + 1) > this.capacity) this.grow();
    const mask = this.capacity - 1;
    let s = this.start(a, b);
    for (; this.used[s]; s = (s + 1) & mask) if (this.ka[s] === a && this.kb[s] === b) return s;
    this.used[s] = 1;
    this.ka[s] = a;
    this.kb[s] = b;
    this.size++;
    return s;
  }

  private grow(): void {
    const { ka, kb, used, v0, v1 } = this;
    this.capacity *= 2;
    this.ka = new Int32Array(this.capacity);
    this.kb = new Int32Array(this.capacity);
    this.used = new Uint8Array(this.capacity);
    this.v0 = new Int32Array(this.capacity);
    this.v1 = new Int32Array(this.capacity);
    this.size = 0;
    for (let s = 0; s < used.length; s++) {
      if (!used[s]) continue;
      const t = this.slot(ka[s], kb[s]);
      this.v0[t] = v0[s];
      this.v1[t] = v1[s];
    }
  }
}
