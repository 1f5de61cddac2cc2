/**
 * k-grams of anchoring keys: rolling hashes and anchors (grams that occur once on each side, chained by a
 * longest increasing subsequence, as in patience diff). Typed arrays only: an open-addressing table keyed by
 * the 32-bit gram hash; a hash hit is checked key by key.
 */

const BASE = 0x01000193;
const { imul } = Math; // a local: global lookups are slow in some sandboxes (Jest's vm)

function fmix(h: number): number {
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Hashes of keys[lo+p .. lo+p+k) for p in [0, hi-lo-k]; ok[p] = 0 when the gram holds a wildcard (key < 0). */
export function gramHashes(keys: Int32Array, lo: number, hi: number, k: number): { hash: Int32Array; ok: Uint8Array } {
  const count = Math.max(0, hi - lo - k + 1);
  const hash = new Int32Array(count);
  const ok = new Uint8Array(count);
  if (count === 0) return { hash, ok };
  let pow = 1;
  for (let t = 1; t < k; t++) pow = imul(pow, BASE);
  let h = 0;
  let wild = -1;
  for (let t = 0; t < hi - lo; t++) {
    const key = keys[lo + t];
    if (t >= k) h = (h - imul(keys[lo + t - k], pow)) | 0;
    h = (imul(h, BASE) + key) | 0;
    if (key < 0) wild = t;
    const p = t - k + 1;
    if (p >= 0) {
      hash[p] = fmix(h);
      ok[p] = wild < p ? 1 : 0;
    }
  }
  return { hash, ok };
}

function sameGram(a: Int32Array, i: number, b: Int32Array, j: number, k: number): boolean {
  for (let t = 0; t < k; t++) if (a[i + t] !== b[j + t]) return false;
  return true;
}

/** Every pair of the two grams satisfies `agree` (the matcher's own predicate: keys can be coarser than it). */
function agreeing(agree: (i: number, j: number) => boolean, i: number, j: number, k: number): boolean {
  for (let t = 0; t < k; t++) if (!agree(i + t, j + t)) return false;
  return true;
}

/** Open addressing on 32-bit hashes with one int32 value per entry (-1 = none). */
class HashIndex {
  readonly hash: Int32Array;
  readonly value: Int32Array;
  readonly used: Uint8Array;
  private readonly mask: number;

  constructor(entries: number) {
    let cap = 16;
    while (cap < 2 * entries) cap *= 2;
    this.mask = cap - 1;
    this.hash = new Int32Array(cap);
    this.value = new Int32Array(cap);
    this.used = new Uint8Array(cap);
  }

  /** The slot of h: found, or a free one (used[slot] tells which). */
  slot(h: number): number {
    let s = h & this.mask;
    while (this.used[s] && this.hash[s] !== h) s = (s + 1) & this.mask;
    return s;
  }
}

/**
 * Anchors in A[a0, a1) x B[b0, b1): grams occurring equally often on each side, at most `maxCount` times (among
 * the sampled ones: for long regions only grams whose hash has some bits zero, about 2^18 per region, so tables
 * stay small), the t-th occurrence in A paired with the t-th in B, chained into the longest sequence increasing
 * on both sides; only unique grams when there are any. maxCount 1 is patience diff's unique grams; more lets
 * the rounds of a loop anchor (a gram of a loop's body runs once per round on both sides when the rounds decode
 * whole). Anchors farther than `band` events (on B) from the region's diagonal are left out, and so are pairs
 * of grams equal in their keys whose events `agree` does not pair (keys are opcodes: a gram of one method's
 * bytecodes is often the same as another's). Returns absolute
 * positions (a[t], b[t]) of each gram's start.
 */
export function countAnchors(
  keyA: Int32Array,
  a0: number,
  a1: number,
  keyB: Int32Array,
  b0: number,
  b1: number,
  k: number,
  maxCount = 1,
  band = Infinity,
  agree?: (i: number, j: number) => boolean,
): { a: Int32Array; b: Int32Array } {
  const ga = gramHashes(keyA, a0, a1, k);
  const gb = gramHashes(keyB, b0, b1, k);
  const na = ga.hash.length;
  const nb = gb.hash.length;
  let sampleMask = 0;
  while (na / (sampleMask + 1) > 1 << 18) sampleMask = 2 * sampleMask + 1;
  const sampled = (h: number) => ((h >>> 16) & sampleMask) === 0;
  const index = new HashIndex(Math.ceil(na / (sampleMask + 1)) + 16);
  const slots = index.hash.length;
  const countA = new Int32Array(slots);
  const countB = new Int32Array(slots);
  for (let p = 0; p < na; p++) {
    const h = ga.hash[p];
    if (!ga.ok[p] || !sampled(h)) continue;
    const s = index.slot(h);
    if (!index.used[s]) {
      index.used[s] = 1;
      index.hash[s] = h;
    }
    countA[s]++;
  }
  const slotOfB = new Int32Array(nb).fill(-1);
  for (let p = 0; p < nb; p++) {
    const h = gb.hash[p];
    if (!gb.ok[p] || !sampled(h)) continue;
    const s = index.slot(h);
    if (index.used[s]) {
      countB[s]++;
      slotOfB[p] = s;
    }
  }
  // B positions of the eligible grams, grouped by slot in B order (counting sort)
  const start = new Int32Array(slots + 1);
  for (let s = 0; s < slots; s++) start[s + 1] = start[s] + (countA[s] > 0 && countA[s] === countB[s] && countA[s] <= maxCount ? countA[s] : 0);
  const posB = new Int32Array(start[slots]);
  const fill = start.slice(0, slots);
  for (let p = 0; p < nb; p++) {
    const s = slotOfB[p];
    if (s >= 0 && start[s + 1] > start[s]) posB[fill[s]++] = p;
  }
  // (the region's diagonal: an anchor farther from it than `band` is not taken)
  const slope = na > 0 ? nb / na : 1;
  // candidate pairs in A order, of grams occurring at most `limit` times: the t-th occurrence on each side
  const chain = (limit: number) => {
    const seen = new Int32Array(slots);
    const pa: number[] = [];
    const pb: number[] = [];
    for (let p = 0; p < na; p++) {
      const h = ga.hash[p];
      if (!ga.ok[p] || !sampled(h)) continue;
      const s = index.slot(h);
      const n = start[s + 1] - start[s];
      if (n === 0 || n > limit) continue;
      const q = posB[start[s] + seen[s]++];
      if (Math.abs(q - p * slope) <= band && sameGram(keyA, a0 + p, keyB, b0 + q, k) && (!agree || agreeing(agree, a0 + p, b0 + q, k))) {
        pa.push(a0 + p);
        pb.push(b0 + q);
      }
    }
    return longestIncreasing(pa, pb);
  };
  // unique grams first (equal counts can pair occurrences that are not the same ones); the others where none is
  const unique = chain(1);
  return unique.a.length > 0 || maxCount <= 1 ? unique : chain(maxCount);
}

/** The longest chain of pairs (given in increasing a) that also increases strictly in b (patience sorting). */
export function longestIncreasing(pa: number[], pb: number[]): { a: Int32Array; b: Int32Array } {
  const n = pa.length;
  const tails = new Int32Array(n);
  const prev = new Int32Array(n);
  let len = 0;
  for (let i = 0; i < n; i++) {
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pb[tails[mid]] < pb[i]) lo = mid + 1;
      else hi = mid;
    }
    prev[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
    if (lo === len) len++;
  }
  const a = new Int32Array(len);
  const b = new Int32Array(len);
  for (let t = len - 1, i = len ? tails[len - 1] : -1; t >= 0; t--, i = prev[i]) {
    a[t] = pa[i];
    b[t] = pb[i];
  }
  return { a, b };
}
