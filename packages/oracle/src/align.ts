/**
 * Monotone alignment of two sequences under a match predicate, maximizing matched pairs (LCS-like); see
 * README.md. Exact (Myers) while the edit distance is small; beyond, windowed greedy extension from both ends
 * of a region, anchors (grams unique on both sides) to split what is left, forced window steps where none is.
 */
import { countAnchors } from './grams';
import { Matcher, Myers } from './myers';

export type { Matcher } from './myers';

export interface AlignOptions {
  /** sequenceAccuracy & co.: also return the matched pairs as two Int32Arrays (off by default; the alignment
   * itself keeps only its runs of matches) */
  pairs?: boolean;
  /** largest edit distance solved exactly in one piece (default 1024); 0 forces the approximate path */
  exactMaxEdits?: number;
  /** window of the approximate path, events per side (default 4096); a window step allows 1/8 edits */
  window?: number;
  /** gram length of anchors (default 32) */
  gram?: number;
  /** anchors are grams occurring equally often on both sides, at most this many times (default ANCHOR_COUNT; 1:
   * unique grams only, as patience diff) */
  anchorCount?: number;
}

export interface Alignment {
  matched: number;
  /** true when the alignment is a maximum one (solved by one exact run) */
  exact: boolean;
  /** the matched runs: (a, b, length) triples, not in order */
  snakes: Int32Array;
}

/** Growable list of (a, b, length) runs of matched pairs. */
class Runs {
  data = new Int32Array(3 * 256);
  length = 0;
  matched = 0;

  push(a: number, b: number, len: number): void {
    if (len <= 0) return;
    if (3 * (this.length + 1) > this.data.length) {
      const g = new Int32Array(this.data.length * 2);
      g.set(this.data);
      this.data = g;
    }
    const o = 3 * this.length++;
    this.data[o] = a;
    this.data[o + 1] = b;
    this.data[o + 2] = len;
    this.matched += len;
  }
}

const MIN_WINDOW = 64;
/** The approximate path's window (AlignOptions.window) unless told. */
export const DEFAULT_WINDOW = 4096;
/**
 * Most occurrences of an anchor gram (on each side, equal counts): the rounds of a loop anchor. Measured on
 * recursion 200 (5.96 M truth bytecodes, its 200 rounds alike in their bytecodes): unique grams only, 97.54%;
 * see README.md for this value's.
 */
const ANCHOR_COUNT = 1024;
/**
 * Farthest an anchor may lie from its region's diagonal, as a share of the region's longer side. Measured on
 * exceptions -Xint at 25% loss (1.43 M truth bytecodes, 46% of the decoded ones unnamed, so few grams anchor):
 * 19 anchors shared by chance paired truth at 40 k with decoded events at the end, and the alignment matched 3.2%
 * against a bound of 93.6%.
 */
const BAND = 1 / 3;
/**
 * Window of a forced step (any number of edits). In a long loop no gram is unique, so forced steps carry the
 * alignment; a small window lets it slip by an iteration where the decoded side differs (inferred or recovered
 * events), and stay slipped. Measured on switches 20000 at 25% loss, 1.3 M truth events: 256 matched 49.1% of the
 * truth, 1024 71.9%, 2048 72.6% (at 2x the time of 1024).
 */
const FORCED_WINDOW = 1024;

/**
 * A forced step that matched nothing and moved on one side only looks for where the sides agree again: the first
 * RESYNC_GRAM-long gram of one side found on the other, at most RESYNC_RANGE events ahead (looked for in the next
 * RESYNC_LOOK events of its own side), taken where the next window from there matches more than from where the
 * step ended. Without it, a stretch only one side holds (start-up code the decoded side lost in an unfilled gap)
 * stalled the forced steps: a window matching nothing ends on either edge alike, and each step skipped a window of
 * the decoded side while the truth stood still, to the decoded side's end. exceptions (JIT) at 50% loss,
 * twenty-fourth session's seeds 2 and 5: overall 1.2% and 1.1% -> 91.4% and 87.2% (see docs/accuracy.md for the
 * other recordings). Triggered by any step matching under 1/16 of its window, it also jumped to other rounds of
 * switches' loop where lockstep was the better way on (two JIT rows at 50% down 1-5 points of DA or RA).
 */
const RESYNC_GRAM = 16;
const RESYNC_RANGE = 1 << 16;
const RESYNC_LOOK = 256;

class Aligner {
  readonly myers = new Myers();
  readonly runs = new Runs();
  readonly agree = (i: number, j: number): boolean => this.p.match(i, j);

  constructor(
    readonly p: Matcher,
    readonly exactMaxEdits: number,
    readonly window: number,
    readonly gram: number,
    readonly anchorCount: number,
  ) {}

  /** Keeps the first `snakes` snakes of the last Myers path (window coordinates from (aS, bS) in direction dir), the last one cut to lastLen. */
  private commit(aS: number, bS: number, dir: number, snakes: number, lastLen: number): void {
    const path = this.myers.path;
    for (let s = 0; s < snakes; s++) {
      const x = path[3 * s];
      const y = path[3 * s + 1];
      const len = s === snakes - 1 ? lastLen : path[3 * s + 2];
      if (dir > 0) this.runs.push(aS + x, bS + y, len);
      else this.runs.push(aS - x - len + 1, bS - y - len + 1, len);
    }
  }

  /** One exact Myers run over the whole region, if its edit distance is small enough. */
  exact(a0: number, a1: number, b0: number, b1: number): boolean {
    const n = a1 - a0;
    const m = b1 - b0;
    if (n === 0 || m === 0) return true;
    const maxD = Math.min(this.exactMaxEdits, n + m);
    if (maxD <= 0 || !this.myers.run(this.p, a0, b0, 1, n, m, true, maxD, 8 * (n + m) + 2 * maxD * maxD)) return false;
    this.commit(a0, b0, 1, this.myers.pathLength, this.myers.path[3 * this.myers.pathLength - 1]);
    return true;
  }

  /**
   * One window step from (i, j) in direction dir (for -1, exclusive ends): Myers over n x m events, stopping
   * where it reaches a window edge, with at most maxD edits. Keeps the whole path when it exhausted a side of
   * the region (restA, restB events left), else the part up to half its progress (the rest is decided again
   * with the next window's look-ahead). Returns how far it moved on each side, or null if maxD was exceeded.
   */
  private step(i: number, j: number, dir: number, n: number, m: number, restA: number, restB: number, maxD: number): [number, number] | null {
    const my = this.myers;
    const aS = dir > 0 ? i : i - 1;
    const bS = dir > 0 ? j : j - 1;
    if (!my.run(this.p, aS, bS, dir, n, m, false, maxD, Infinity)) return null;
    let cx = my.endX;
    let cy = my.endY;
    let snakes = my.pathLength;
    let lastLen = snakes ? my.path[3 * snakes - 1] : 0;
    if (!((cx === n && n === restA) || (cy === m && m === restB))) {
      const half = (my.endX + my.endY) >> 1;
      cx = 0;
      cy = 0;
      snakes = 0;
      for (let s = 0; s < my.pathLength; s++) {
        const x = my.path[3 * s];
        const y = my.path[3 * s + 1];
        const len = my.path[3 * s + 2];
        if (x + y >= half) {
          if (snakes === 0) {
            cx = x; // keep the edits before the first snake rather than stand still
            cy = y;
          }
          break;
        }
        lastLen = Math.min(len, Math.ceil((half - x - y) / 2));
        snakes = s + 1;
        cx = x + lastLen;
        cy = y + lastLen;
        if (lastLen < len) break;
      }
      if (cx + cy === 0) {
        cx = my.endX;
        cy = my.endY;
        snakes = my.pathLength;
        lastLen = snakes ? my.path[3 * snakes - 1] : 0;
      }
    }
    this.commit(aS, bS, dir, snakes, lastLen);
    return [cx, cy];
  }

  /**
   * Greedy windowed extension from one corner of A[a0, a1) x B[b0, b1) (dir +1: from (a0, b0) forward; -1:
   * from (a1, b1) backward): window steps allowing edits up to 1/8 of the smaller window side (so a short
   * rest is never written off as deleted). A window that needs more is halved (after a success it doubles
   * again, up to the window option); at MIN_WINDOW its common prefix is kept, and without one the extension
   * stops. Returns where it stopped: [i, j] (for dir -1, the exclusive ends).
   */
  extend(a0: number, a1: number, b0: number, b1: number, dir: number, w = this.window): [number, number] {
    let i = dir > 0 ? a0 : a1;
    let j = dir > 0 ? b0 : b1;
    for (;;) {
      const restA = dir > 0 ? a1 - i : i - a0;
      const restB = dir > 0 ? b1 - j : j - b0;
      if (restA === 0 || restB === 0) return [i, j];
      const n = Math.min(w, restA);
      const m = Math.min(w, restB);
      const moved = this.step(i, j, dir, n, m, restA, restB, Math.max(1, Math.min(n, m) >> 3));
      if (moved) {
        i += dir * moved[0];
        j += dir * moved[1];
        w = Math.min(this.window, 2 * w);
      } else if (w > MIN_WINDOW) {
        w >>= 1;
      } else {
        const prefix = this.myers.prefix;
        if (prefix === 0) return [i, j];
        this.runs.push(dir > 0 ? i : i - prefix, dir > 0 ? j : j - prefix, prefix);
        i += dir * prefix;
        j += dir * prefix;
      }
    }
  }

  /**
   * Where the sides disagree densely and share no anchor: forced window steps (any number of edits, so the
   * window's best alignment), handing back to the extension wherever it gets through again.
   */
  forced(a0: number, a1: number, b0: number, b1: number): void {
    const w = Math.min(this.window, FORCED_WINDOW);
    let i = a0;
    let j = b0;
    while (i < a1 && j < b1) {
      const n = Math.min(w, a1 - i);
      const m = Math.min(w, b1 - j);
      const before = this.runs.matched;
      const moved = this.step(i, j, 1, n, m, a1 - i, b1 - j, n + m)!; // n deletions always reach the edge
      let ni = i + moved[0];
      let nj = j + moved[1];
      // a step that matched nothing and skipped one side's window: that side holds a stretch the other lacks,
      // longer than a window, and no anchor cut the region; skipping on may never meet the other side again
      if (this.runs.matched === before && (moved[0] === 0 || moved[1] === 0)) {
        // taken where the window after it matches more than the window in lockstep would (in a loop whose rounds
        // differ, a gram's first occurrence ahead can be another round, and lockstep the better way on)
        const r = this.resync(ni, a1, nj, b1);
        if (r && this.trial(r[0], a1, r[1], b1, w) > this.trial(ni, a1, nj, b1, w)) [ni, nj] = r;
      }
      [i, j] = this.extend(ni, a1, nj, b1, 1, Math.min(this.window, MIN_WINDOW));
    }
  }

  /** Matches of the best forward alignment of the next w events of each side from (i, j) (nothing kept). */
  private trial(i: number, a1: number, j: number, b1: number, w: number): number {
    const n = Math.min(w, a1 - i);
    const m = Math.min(w, b1 - j);
    if (n <= 0 || m <= 0) return 0;
    const my = this.myers;
    if (!my.run(this.p, i, j, 1, n, m, false, n + m, Infinity)) return 0;
    return (my.endX + my.endY - my.edits) >> 1;
  }

  /**
   * Where the sides agree again after (i, j): the first gram of one side (from i, or from j; wildcard-free,
   * RESYNC_GRAM long) found ahead on the other within RESYNC_RANGE, whichever skips fewer events; null if none.
   */
  private resync(i: number, a1: number, j: number, b1: number): [number, number] | null {
    const g = RESYNC_GRAM;
    const { keyA, keyB } = this.p;
    const firstGram = (keys: Int32Array, from: number, end: number): number => {
      for (let x = from, run = 0; x < Math.min(end, from + RESYNC_LOOK); x++) {
        run = keys[x] < 0 ? 0 : run + 1;
        if (run === g) return x - g + 1;
      }
      return -1;
    };
    /** The first place from `from` (fewer than `limit` events on, within RESYNC_RANGE) where the gram at `at` of one
     * side (A's if onA) occurs on the other; -1 if none. */
    const seek = (onA: boolean, at: number, from: number, end: number, limit: number): number => {
      const own = onA ? keyA : keyB;
      const other = onA ? keyB : keyA;
      for (let y = from; y + g <= end && y - from < limit && y - from <= RESYNC_RANGE; y++) {
        if (other[y] !== own[at]) continue;
        let t = 0;
        while (t < g && (onA ? this.p.match(at + t, y + t) : this.p.match(y + t, at + t))) t++;
        if (t === g) return y;
      }
      return -1;
    };
    let best: [number, number] | null = null;
    let bestSkip = Infinity;
    const ga = firstGram(keyA, i, a1);
    const y = ga >= 0 ? seek(true, ga, j, b1, Infinity) : -1;
    if (y >= 0) {
      best = [ga, y];
      bestSkip = y - j + (ga - i);
    }
    const gb = firstGram(keyB, j, b1);
    const x = gb >= 0 ? seek(false, gb, i, a1, bestSkip - (gb - j)) : -1;
    if (x >= 0) best = [x, gb];
    return best;
  }

  /** Aligns A[a0, a1) x B[b0, b1), pieces kept on an explicit stack (each strictly smaller than its parent). */
  region(a0: number, a1: number, b0: number, b1: number): void {
    const stack = [a0, a1, b0, b1];
    let first = true; // the whole region was tried exactly already
    while (stack.length) {
      const e1 = stack.pop()!;
      const e0 = stack.pop()!;
      const s1 = stack.pop()!;
      const s0 = stack.pop()!;
      if (s0 >= s1 || e0 >= e1 || (!first && this.exact(s0, s1, e0, e1))) continue;
      // the whole is first cut at grams unique in each whole sequence (patience diff), before any greedy
      // extension: extending first through a loop lets the windows slip by rounds wherever one side has rounds
      // the other lacks, and stay slipped to the region's end (switches -Xint at 25% loss: the backward extension
      // paired the truth's first rounds with decoded rounds 13 k events later). Only the whole: in a piece of a
      // loop, a gram once on each side may be two different rounds.
      if (first) {
        first = false;
        if (s1 - s0 + (e1 - e0) > 4 * this.window && this.split(s0, s1, e0, e1, stack, 1)) continue;
      }
      const [fi, fj] = this.extend(s0, s1, e0, e1, 1);
      if (fi === s1 || fj === e1) continue;
      const [bi, bj] = this.extend(fi, s1, fj, e1, -1);
      // what is left between the two extensions
      if (fi === bi || fj === bj || this.exact(fi, bi, fj, bj)) continue;
      // anchors split long stretches; a short one (two windows or less) takes forced steps directly
      const short = bi - fi + (bj - fj) <= 2 * this.window;
      // (unique grams; where there is none, grams occurring equally often on both sides: a loop's rounds)
      // (and near the region's diagonal: a gram the two sides share only by chance, one near the start of one
      // side and the other near the end of the other, would write off everything between as unmatched)
      if (short || !this.split(fi, bi, fj, bj, stack, this.anchorCount)) this.forced(fi, bi, fj, bj);
    }
  }

  /**
   * Cuts A[a0, a1) x B[b0, b1) at its anchors (grams occurring equally often on both sides, at most maxCount
   * times, near the region's diagonal), pushing the pieces on the stack; false if there is none.
   */
  private split(a0: number, a1: number, b0: number, b1: number, stack: number[], maxCount: number): boolean {
    const band = Math.max(this.window, BAND * Math.max(a1 - a0, b1 - b0));
    const { a, b } = countAnchors(this.p.keyA, a0, a1, this.p.keyB, b0, b1, this.gram, maxCount, band, this.agree);
    let ci = a0;
    let cj = b0;
    for (let t = 0; t < a.length; t++) {
      if (a[t] === a0 && b[t] === b0) continue;
      stack.push(ci, a[t], cj, b[t]);
      ci = a[t];
      cj = b[t];
    }
    if (ci === a0 && cj === b0) return false;
    stack.push(ci, a1, cj, b1);
    return true;
  }
}

/** Maximum (or, past exactMaxEdits, near-maximum) monotone alignment of p's two sequences. */
export function align(p: Matcher, opts: AlignOptions = {}): Alignment {
  const al = new Aligner(p, opts.exactMaxEdits ?? 4096, Math.max(8, opts.window ?? DEFAULT_WINDOW), Math.max(1, opts.gram ?? 32), Math.max(1, opts.anchorCount ?? ANCHOR_COUNT));
  const exact = al.exact(0, p.n, 0, p.m);
  if (!exact) al.region(0, p.n, 0, p.m);
  return { matched: al.runs.matched, exact, snakes: al.runs.data.slice(0, 3 * al.runs.length) };
}

/** The matched pairs of an alignment, ordered: indices of A and of B. */
export function alignmentPairs(al: Alignment): { a: Int32Array; b: Int32Array } {
  const count = al.snakes.length / 3;
  const order = new Int32Array(count);
  for (let s = 0; s < count; s++) order[s] = s;
  order.sort((x, y) => al.snakes[3 * x] - al.snakes[3 * y]);
  const a = new Int32Array(al.matched);
  const b = new Int32Array(al.matched);
  let o = 0;
  for (const s of order) {
    for (let t = 0; t < al.snakes[3 * s + 2]; t++, o++) {
      a[o] = al.snakes[3 * s] + t;
      b[o] = al.snakes[3 * s + 1] + t;
    }
  }
  return { a, b };
}
