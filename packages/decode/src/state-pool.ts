/**
 * Typed-array storage for the NFA of attribute.ts, so that following the interpreter's opcodes allocates no
 * object per event.
 */

const INITIAL = 1 << 14;

/** Lists of live states (attribute.ts's frames): what `StatePool.compact` keeps and renumbers. */
export interface StateRoots {
  /** state indices, the first `stored` of them */
  readonly states: Int32Array;
  readonly stored: number;
}

/**
 * The states of the interpreted frames, column-wise: a state is an index into the columns. A state is a
 * (method, bci) the opcodes so far may have run, with a back-pointer to the state it came from (`prev`, -1:
 * none) and the output event it explains (`ev`, -1: none). States are only ever added; `compact`, called
 * between events, drops those no frame reaches any more and renumbers the rest (a copying collector).
 */
export class StatePool {
  /** Method.index of the method */
  method = new Int32Array(INITIAL);
  bci = new Int32Array(INITIAL);
  prev = new Int32Array(INITIAL);
  ev = new Int32Array(INITIAL);
  length = 0;
  /** `compact` is worth running from this length on (it keeps the cost per added state constant) */
  private limit = INITIAL;
  // the other half of the copying collector, and its work arrays
  private toMethod = new Int32Array(INITIAL);
  private toBci = new Int32Array(INITIAL);
  private toPrev = new Int32Array(INITIAL);
  private toEv = new Int32Array(INITIAL);
  private forward = new Int32Array(INITIAL);
  private chain = new Int32Array(INITIAL);

  add(method: number, bci: number, prev: number, ev: number): number {
    if (this.length === this.method.length) this.grow();
    const s = this.length++;
    this.method[s] = method;
    this.bci[s] = bci;
    this.prev[s] = prev;
    this.ev[s] = ev;
    return s;
  }

  get full(): boolean {
    return this.length >= this.limit;
  }

  /**
   * Keeps the states of `roots[0..count)` and those their back-pointers reach, renumbered (in place in the
   * roots); every other state index becomes invalid.
   */
  compact(roots: readonly StateRoots[], count: number): void {
    const n = this.length;
    if (this.forward.length < n) {
      this.forward = new Int32Array(this.method.length);
      this.chain = new Int32Array(this.method.length);
    }
    if (this.toMethod.length < this.method.length) {
      const cap = this.method.length;
      this.toMethod = new Int32Array(cap);
      this.toBci = new Int32Array(cap);
      this.toPrev = new Int32Array(cap);
      this.toEv = new Int32Array(cap);
    }
    this.forward.fill(-1, 0, n);
    let live = 0;
    for (let r = 0; r < count; r++) {
      const { states, stored: k } = roots[r];
      for (let j = 0; j < k; j++) {
        const s = states[j];
        if (this.forward[s] < 0) live = this.copyChain(s, live);
        states[j] = this.forward[s];
      }
    }
    [this.method, this.toMethod] = [this.toMethod, this.method];
    [this.bci, this.toBci] = [this.toBci, this.bci];
    [this.prev, this.toPrev] = [this.toPrev, this.prev];
    [this.ev, this.toEv] = [this.toEv, this.ev];
    this.length = live;
    this.limit = Math.max(INITIAL, live * 2);
  }

  /** Copies `s` and the states before it that are not copied yet, oldest first (so back-pointers resolve). */
  private copyChain(s: number, live: number): number {
    const fwd = this.forward;
    let k = 0;
    for (let x = s; x >= 0 && fwd[x] < 0; x = this.prev[x]) this.chain[k++] = x;
    while (k > 0) {
      const x = this.chain[--k];
      const p = this.prev[x];
      this.toMethod[live] = this.method[x];
      this.toBci[live] = this.bci[x];
      this.toPrev[live] = p >= 0 ? fwd[p] : -1;
      this.toEv[live] = this.ev[x];
      fwd[x] = live++;
    }
    return live;
  }

  private grow(): void {
    const cap = this.method.length * 2;
    const grown = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.method = grown(this.method);
    this.bci = grown(this.bci);
    this.prev = grown(this.prev);
    this.ev = grown(this.ev);
  }
}

/** A set of integer keys in [0, 2^53) with an O(1) `clear`: open addressing, entries stamped by generation. */
export class KeySet {
  private keys = new Float64Array(64);
  private stamps = new Uint32Array(64);
  private gen = 1;
  private size = 0;

  clear(): void {
    this.size = 0;
    if (++this.gen === 0xffffffff) {
      this.stamps.fill(0);
      this.gen = 1;
    }
  }

  /** Adds `key`; false when it was in the set already. */
  add(key: number): boolean {
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    return this.insert(key);
  }

  private insert(key: number): boolean {
    const mask = this.keys.length - 1;
    for (let h = hashKey(key) & mask; ; h = (h + 1) & mask) {
      if (this.stamps[h] !== this.gen) {
        this.stamps[h] = this.gen;
        this.keys[h] = key;
        this.size++;
        return true;
      }
      if (this.keys[h] === key) return false;
    }
  }

  private grow(): void {
    const { keys, stamps, gen } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.stamps = new Uint32Array(keys.length * 2);
    this.gen = 1;
    this.size = 0;
    for (let h = 0; h < keys.length; h++) if (stamps[h] === gen) this.insert(keys[h]);
  }
}

function hashKey(key: number): number {
  let h = Math.imul(key | 0, 0x9e3779b1) ^ Math.imul((key / 4294967296) | 0, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
