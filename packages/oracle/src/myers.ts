/**
 * Myers' greedy furthest-reaching alignment ("An O(ND) difference algorithm", 1986) over a match predicate.
 *
 * Myers' proof never uses that matching is an equality: it needs only that a diagonal edge exists where the
 * predicate holds, and that taking an available diagonal is never worse (if a[x] ~ b[y], some maximum alignment
 * pairs them: an optimal one pairs at most one of the two elsewhere, and that pair can be moved to (x, y)). So
 * the result is a maximum alignment for wildcard predicates too.
 */

/** The two sequences, seen through their match predicate (indices are absolute positions of each side). */
export interface Matcher {
  readonly n: number;
  readonly m: number;
  /** anchoring key of each side's elements; -1 = wildcard (never part of an anchor) */
  readonly keyA: Int32Array;
  readonly keyB: Int32Array;
  match(i: number, j: number): boolean;
}

/** V entry of a diagonal no valid path reaches */
const DEAD = -1;

export class Myers {
  /** V of every d: V(d, k) at d(d+1)/2 + (k+d)/2, so that the path can be traced back */
  private hist = new Int32Array(1 << 12);
  /** the path of the last successful run, as snakes (x, y, length) in window coordinates, in order */
  path = new Int32Array(3 * 64);
  pathLength = 0;
  endX = 0;
  endY = 0;
  edits = 0;
  /** length of the d = 0 snake (the common prefix) of the last run, successful or not */
  prefix = 0;

  /**
   * Aligns a window of n elements of A starting at absolute aStart and m of B starting at bStart, read in
   * direction dir (+1 forward, -1 backward), with at most maxD edits and about `budget` steps of work.
   * global: the path must end at (n, m) (a maximum alignment of the two windows). Otherwise it ends on the
   * far edge (x = n or y = m) where matches (x + y - d) / 2 are most: all of one window aligned with the
   * best-matching prefix of the other. Returns false when maxD or the budget is exceeded first.
   */
  run(p: Matcher, aStart: number, bStart: number, dir: number, n: number, m: number, global: boolean, maxD: number, budget: number): boolean {
    const need = ((maxD + 1) * (maxD + 2)) >> 1;
    if (this.hist.length < need) this.hist = new Int32Array(need);
    const h = this.hist;
    let work = 0;
    let bestScore = -1;
    let bestD = 0;
    let bestK = 0;
    for (let d = 0; d <= maxD; d++) {
      const base = (d * (d + 1)) >> 1;
      const prev = ((d - 1) * d) >> 1;
      let alive = false;
      for (let k = -d; k <= d; k += 2) {
        const i = (k + d) >> 1;
        let x = 0;
        if (d > 0) {
          // furthest of: a deletion from diagonal k-1, an insertion from k+1 (ties: the deletion, as Myers)
          const xl = k > -d ? h[prev + i - 1] : DEAD;
          const xu = k < d ? h[prev + i] : DEAD;
          const right = xl >= 0 && xl < n ? xl + 1 : DEAD;
          const down = xu >= 0 && xu - k - 1 < m ? xu : DEAD;
          x = right >= down ? right : down;
          if (x === DEAD) {
            h[base + i] = DEAD;
            continue;
          }
        }
        alive = true;
        let y = x - k;
        const x0 = x;
        while (x < n && y < m && p.match(aStart + dir * x, bStart + dir * y)) {
          x++;
          y++;
        }
        work += x - x0 + 1;
        h[base + i] = x;
        if (global ? x === n && y === m : x === n || y === m) {
          if (x + y - d > bestScore) {
            bestScore = x + y - d;
            bestD = d;
            bestK = k;
          }
        }
      }
      if (d === 0) this.prefix = h[0];
      // global: the first end is the only one; otherwise no later end can score more than n + m - d
      if (bestScore >= 0 && (global || n + m - d - 1 <= bestScore || !alive)) break;
      if (work > budget) break;
    }
    if (bestScore < 0) return false;
    this.trace(bestD, bestK, n, m);
    return true;
  }

  /** Walks back from (d, k) by the same choices and stores the path's snakes in forward order. */
  private trace(d: number, k: number, n: number, m: number): void {
    const h = this.hist;
    let x = h[((d * (d + 1)) >> 1) + ((k + d) >> 1)];
    this.endX = x;
    this.endY = x - k;
    this.edits = d;
    this.pathLength = 0;
    for (let e = d; e > 0; e--) {
      const prev = ((e - 1) * e) >> 1;
      const i = (k + e) >> 1;
      const xl = k > -e ? h[prev + i - 1] : DEAD;
      const xu = k < e ? h[prev + i] : DEAD;
      const right = xl >= 0 && xl < n ? xl + 1 : DEAD;
      const down = xu >= 0 && xu - k - 1 < m ? xu : DEAD;
      const xs = right >= down ? right : down; // where the snake on diagonal k began
      if (x > xs) this.pushSnake(xs, xs - k, x - xs);
      if (right >= down) {
        x = xl;
        k--;
      } else {
        x = xu;
        k++;
      }
    }
    if (x > 0) this.pushSnake(0, 0, x);
    // reverse the snakes into forward order
    const s = this.path;
    for (let a = 0, b = this.pathLength - 1; a < b; a++, b--)
      for (let f = 0; f < 3; f++) {
        const t = s[3 * a + f];
        s[3 * a + f] = s[3 * b + f];
        s[3 * b + f] = t;
      }
  }

  private pushSnake(x: number, y: number, len: number): void {
    if (3 * (this.pathLength + 1) > this.path.length) {
      const g = new Int32Array(this.path.length * 2);
      g.set(this.path);
      this.path = g;
    }
    const o = 3 * this.pathLength++;
    this.path[o] = x;
    this.path[o + 1] = y;
    this.path[o + 2] = len;
  }
}
