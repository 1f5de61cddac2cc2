/**
 * A hash map from a pair of int32 keys to an int32 value (>= 0), open addressing with linear probing. Each slot's
 * two keys and value sit side by side in one Int32Array, so a probe reads one cache line: the profiles' trees look
 * up a child per frame pushed and per line changed, in maps of millions of nodes. (A Map keyed by
 * `parent * K + child` hashes a double, boxed, per lookup.)
 */
export class PairMap {
  /** slots of [x, y, value, unused]; x = EMPTY marks a free slot */
  private slots = new Int32Array(4 * 1024).fill(EMPTY);
  private mask = 1023;
  size = 0;

  private find(x: number, y: number): number {
    const s = this.slots;
    let h = (Math.imul(x, 0x9e3779b1) ^ Math.imul(y + 0x7f4a7c15, 0x85ebca77)) & this.mask;
    for (;;) {
      const k = h << 2;
      const a = s[k];
      if (a === EMPTY || (a === x && s[k + 1] === y)) return k;
      h = (h + 1) & this.mask;
    }
  }

  /** the value of (x, y), or -1 */
  get(x: number, y: number): number {
    const k = this.find(x, y);
    return this.slots[k] === EMPTY ? -1 : this.slots[k + 2];
  }

  set(x: number, y: number, value: number): void {
    if (x === EMPTY) throw new RangeError(`PairMap: key ${x} is reserved`);
    if (2 * (this.size + 1) > this.mask + 1) this.rehash();
    const k = this.find(x, y);
    if (this.slots[k] === EMPTY) this.size++;
    this.slots[k] = x;
    this.slots[k + 1] = y;
    this.slots[k + 2] = value;
  }

  private rehash(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2).fill(EMPTY);
    this.mask = (this.slots.length >> 2) - 1;
    for (let k = 0; k < old.length; k += 4)
      if (old[k] !== EMPTY) {
        const j = this.find(old[k], old[k + 1]);
        this.slots[j] = old[k];
        this.slots[j + 1] = old[k + 1];
        this.slots[j + 2] = old[k + 2];
      }
  }
}

/** the x no key may be: marks a free slot */
const EMPTY = -2147483648;
