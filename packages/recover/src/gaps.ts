/**
 * Recovery of lost stretches: a thread's decoded events have a `gap` event wherever PT data was lost. Programs
 * repeat themselves, so what ran in a gap has usually run elsewhere in the same thread with the same context:
 * the K bytecodes before the gap and the K after it.
 *
 * How long the gap ran is known from PT time: the span from the last event before it to the first after it, less
 * what the thread likely spent waiting on the VM (records of its work inside the span, opts.vmWork, times the wait
 * per record measured where data is complete) and pauses (opts.pauses).
 * For each gap, candidates start right after an occurrence of the pre-gap context in complete data and are
 * walked forward bytecode by bytecode. Where a walk runs into the end of its segment (another gap), it is
 * composed: it goes on after another occurrence of the K bytecodes it copied last (a loop's next iteration,
 * seen elsewhere). Every place where the post-gap context follows is a possible end; the end whose copy took,
 * where it ran, the time closest to the gap's span is the candidate's fill. (The span times the thread's pace in
 * the stretches around it, the expected length L, is reported, and stands in where the gap has no time span:
 * then the end closest to L, or the first end.) The fills are ranked by the context they matched on both sides,
 * then by whether their copy took the gap's time, then by how many candidates agree on them, then by time; the
 * first is copied into the gap (where its evidence is strong enough: see MIN_FILL_CONTEXT and LONG_FILL).
 *
 * Where one side of a gap ran only once (start-up code into a loop's first round, a loop's last round into code
 * that follows it once), no copy matches both sides: the gap is filled from the side that ran again (a tail fill:
 * what ran before another occurrence of the post context; a head fill: what ran after one of the pre context),
 * as long as the gap's time: a tail fill from a bytecode of a frame the stack holds at the gap, a head fill up to a
 * bytecode of the method after the gap.
 *
 * Contexts compare (method, bci) keys; a bytecode whose method the decoder could not name (it returned into a
 * frame lost in an earlier gap) matches on its opcode alone. Occurrences are found through indexes of K-grams
 * (of keys, and of opcodes for contexts with unnamed bytecodes), so the work is linear in the trace plus a walk
 * of at most a few times L per candidate (a one-sided fill's: at most the larger of LONG_FILL and 1.1 L).
 *
 * Copied events keep their kind, method, bci and opcode; their source becomes RECOVERED and their time is
 * spread over the gap's time span. The gap event itself stays: the data was lost, and what fills it is a
 * reconstruction, scored by how many candidates agreed (GapFill).
 */
import { EventStream } from '@jportal/decode';

// EventKind and EventSource values of @jportal/decode (const enums: not readable across isolated modules)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const EXCEPTION = 5;
/** EventSource of an event copied into a gap by recovery. */
export const RECOVERED_SOURCE = 4;

export interface RecoveryOptions {
  /** bytecodes of context on each side of a gap (default 6) */
  context?: number;
  /** candidate occurrences of the pre-gap context tried per gap (default 32) */
  candidates?: number;
  /** longest fill in bytecodes (default 200000) */
  maxFill?: number;
  /**
   * A fill may be at most this many times the expected length (from the gap's PT time and the thread's pace),
   * and at least that length divided by it (default 4).
   */
  timeFactor?: number;
  /** most pieces a composed fill may have (default 4096) */
  maxPieces?: number;
  /**
   * Stretches of time in which the thread is known to have run no Java code, as [from, to) pairs of TSC ticks, in
   * any order, overlapping or not (analyze passes the agent's VMInit work on the JVM's main thread:
   * JvmModel.vmInitEndTsc, and the stretches the capture saw the thread off the CPU: DecodedThread.offCpu). Every
   * duration recovery takes (a gap's time, the thread's pace, the time a copy took where it ran) counts without
   * them.
   */
  pauses?: number[];
  /**
   * TSCs of the VM's own work the trace records (classes loaded, compiled methods installed), ascending. A thread
   * may have waited on such work (loading a class it needs; with -Xbatch, its compile), and a gap's time then holds
   * that wait, which a copy's own time does not. Where data is complete, the waits show: the time between two
   * events of the thread around such a record. Their total over the records in them, per record, is taken out of a
   * gap's time for each record inside it. (Records inside a pause are the pause's own and are not counted.)
   */
  vmWork?: ArrayLike<number>;
  /**
   * Gap reasons (GapReason values of @jportal/decode) to fill; default: overflow only (data the PT unit lost).
   * Decoder gaps (a mismatch with the code image, ...) are short and sit where the decode itself went wrong.
   */
  reasons?: number[];
  /**
   * For a gap no context fills whose bytecodes on both sides are of one method under the same callers: the
   * bytecodes strictly between two bcis of a method on a shortest feasible path of its CFG (@jportal/reconstruct's
   * shortestPathBetween), or undefined. Such a fill is the least that ran; its score is 0.
   */
  fallback?: (method: number, from: number, to: number) => { bcis: Int32Array; opcodes: Uint8Array; paths: number } | undefined;
  /**
   * fill the given stream itself (default false): its columns are widened one at a time, so at most one column's
   * worth of memory is added at a time; the stream returned is then the one given
   */
  inPlace?: boolean;
  /**
   * Events of the same thread in another recording of the same program, in this stream's method ids (see
   * @jportal/analyze's referenceEvents): what a gap lost may have run there with the same context, where it ran
   * once in this thread (start-up: the launcher's class-path work, the first call of each bootstrap method). Its
   * occurrences are candidates like this thread's own (nearer ones come first, so this thread's own are taken where
   * they fit as well); its gaps are not filled; its TSCs are its own run's, used only for durations within it.
   */
  reference?: EventStream;
  /**
   * Methods that run at most once per run: class initializers (each class's, per loader, has its own method id). A
   * copy leaves out an activation of one and everything it called: the copy's source ran it, so by the gap's time
   * the class was initialized already (a source before the gap) or was not yet (after it); either way the code the
   * gap lost did not run it. (Copies from a `reference` recording are the other run's: there the activation is left
   * out only where this stream holds one of the same method.)
   */
  onceOnly?: ReadonlySet<number>;
}

/** GapReason-like value of the gap recovery puts between a thread's events and its reference's (never filled). */
const REFERENCE_BOUNDARY = 255;

export interface RecoveryStats {
  gaps: number;
  /** gaps filled */
  recovered: number;
  /** gaps with no usable context on one side (stream start or end, another gap right next to it) */
  noContext: number;
  /** gaps whose context occurs elsewhere but no walk from it reaches the post context at a fitting length */
  noCandidate: number;
  /** filled gaps whose fill is composed of pieces from more than one place (a loop longer than any segment) */
  composed: number;
  /** filled gaps where the candidates disagreed (the most frequent fill was taken) */
  ambiguous: number;
  /** filled gaps whose fill meets only a shorter post context (1 or 2 bytecodes) */
  shortPost: number;
  /** filled gaps whose fill was copied from where the same callers were on the stack: 4 frames, or only 2 */
  callersFar: number;
  callersNear: number;
  /** gaps whose best fill matched fewer than MIN_FILL_CONTEXT bytecodes around it, or is long and matched fewer than
   * LONG_FILL_SIDE on one side (unless the rest is strong: the same four callers, the other side matched in full,
   * the weak one past K, its length within LONG_FILL_PACE of the expected; or it is `mixed`): not copied (a one-sided
   * fill, else the fallback's shortest path, may still fill the gap) */
  weakContext: number;
  /**
   * of the filled gaps, those whose best fill would be weakContext but copies the code around the gap: one side
   * matched in full, the copy took the gap's time, and its mix of bytecodes is that of the thread on both sides of
   * the gap (a loop whose rounds vary)
   */
  mixed: number;
  /** filled gaps whose context matched on opcodes alone (its named bytecodes were nowhere else) */
  opcodesOnly: number;
  /** gaps no context filled that were filled with a shortest path of their method's CFG (the fallback option) */
  shortestPath: number;
  /** gaps no two-sided context filled that were filled from one side (GapFill.how 'tail' or 'head') */
  oneSided: number;
  /** bytecode events copied into gaps (or put there by the fallback) */
  bytecodes: number;
  /** all events copied into gaps */
  events: number;
  /** bytecodes the filled gaps were expected to hold (PT time x pace), for comparison with `bytecodes` */
  expected: number;
}

export interface GapFill {
  /** index of the gap event in the input */
  gap: number;
  /** bytecodes copied */
  bytecodes: number;
  /** bytecodes expected from the gap's PT time and the thread's pace (0: unknown) */
  expected: number;
  /** pieces the fill is composed of */
  pieces: number;
  /** candidates that agreed with the chosen fill, and candidates that fit at all */
  agreeing: number;
  fitting: number;
  /**
   * bytecodes of context the chosen fill matched: before its source against before the gap, after its end against
   * after the gap (up to 256 each; the candidates are ranked by it, then by whether the copy's time fits the gap's,
   * then by agreement, then by time; a one-sided fill has its one side's, 256)
   */
  context: number;
  /** the fill's score in [0, 1]: context over the most that is compared (512); every event of the fill has it */
  score: number;
  /** the next best fills (up to 2), ranked as the chosen one */
  alternatives: { bytecodes: number; agreeing: number; context: number; score: number }[];
  /**
   * 'context': copied from matching context on both sides; 'tail' / 'head': copied from one side, where the other
   * ran only once (what preceded an occurrence of the post context / followed one of the pre context; context
   * CONTEXT_MATCH, score 0.5 at most); 'shortestPath': the fallback's shortest CFG path (score 0)
   */
  how: 'context' | 'tail' | 'head' | 'shortestPath';
}

const UNKNOWN = -1;
/** Bytecodes on each side of a gap over which the thread's pace is measured. */
const PACE_WINDOW = 20000;
/** Occurrences of a gap's context looked at per candidate taken (those in other calling contexts are passed over). */
const SCAN_PER_CANDIDATE = 64;
/** Bytecodes a composed walk may drop from the end of a piece to find a place to go on from. */
const MAX_BACKOFF = 64;

/**
 * Most bytecodes of context compared on each side of a gap when ranking candidates: what ran before the
 * candidate against what ran before the gap, what follows its end against what follows the gap. Measured on
 * switches -Xint at 25% loss (a loop whose rounds take one of 80 combinations of switch arms by the counter):
 * the 6 bytecodes of the lookup context alone chose a round at random.
 */
const CONTEXT_MATCH = 256;
/** Fills listed per gap: the chosen one and the next best (GapFill.alternatives). */
const TOP_N = 3;

/** A walk's result: pieces [from, to] of bytecode indexes, in order; how many bytecodes after its end are alike those after the gap. */
interface Walk {
  from: number[];
  to: number[];
  bytecodes: number;
  after: number;
  /** the ticks the copied bytecodes took where they ran (their pieces' spans; 0 when the gap has no time) */
  ticks: number;
}

/** A fill's score in [0, 1]: the share of the context compared (CONTEXT_MATCH on each side) it matched. */
const fillScore = (context: number): number => Math.min(1, context / (2 * CONTEXT_MATCH));

/**
 * Up to `max` occurrences (a sorted list of bytecode indexes) nearest to x, nearest first (alternating after and
 * before x), written to out; returns how many.
 */
function nearest(occ: Int32Array, x: number, max: number, out: Int32Array): number {
  let lo = 0;
  let hi = occ.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (occ[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  let after = lo;
  let before = lo - 1;
  let count = 0;
  while (count < max && (after < occ.length || before >= 0)) {
    if (before < 0 || (after < occ.length && occ[after] - x <= x - occ[before])) out[count++] = occ[after++];
    else out[count++] = occ[before--];
  }
  return count;
}

/**
 * Fills each PT-loss gap of one thread's events (see the module comment). The input is not changed; when it has no
 * gap to fill, it is returned itself rather than copied.
 */
export function recoverGaps(input: EventStream, opts: RecoveryOptions = {}): { events: EventStream; stats: RecoveryStats; fills: GapFill[] } {
  const K = Math.max(1, opts.context ?? 6);
  const maxCand = opts.candidates ?? 32;
  const maxFill = opts.maxFill ?? 200_000;
  const factor = Math.max(1, opts.timeFactor ?? 4);
  const maxPieces = opts.maxPieces ?? 4096;
  const reasons = new Set(opts.reasons ?? [0]);
  const stats: RecoveryStats = { gaps: 0, recovered: 0, noContext: 0, noCandidate: 0, composed: 0, ambiguous: 0, shortPost: 0, callersFar: 0, callersNear: 0, weakContext: 0, mixed: 0, opcodesOnly: 0, shortestPath: 0, oneSided: 0, bytecodes: 0, events: 0, expected: 0 };
  const fills: GapFill[] = [];

  // nothing to fill: the input itself (no copy: a loss-free thread of 100 M events is gigabytes)
  if (!hasGap(input, reasons)) return { events: input, stats, fills };
  if (opts.reference && opts.reference.length > 0) return recoverWithReference(input, opts.reference, opts);
  const bc = BytecodeView.of(input, reasons, K);
  // (let: the big columns are let go before the output is made)
  let { key, op, seg } = bc;
  const { n, pos, segStart, segEnd } = bc;
  stats.gaps = bc.gapAt.length;

  /** Do the K bytecodes ending at x match those ending at y (keys where both are named, else opcodes)? */
  // the last level of the search (a gap whose named context is nowhere else: the decoder may have named a
  // bytecode or two near the loss wrongly) compares opcodes alone, as for unnamed bytecodes
  let loose = false;
  const compat = (x: number, y: number): boolean => (loose ? op[x] === op[y] && op[x] >= 0 : compatible(key, op, x, y));
  const sameGram = (x: number, y: number): boolean => {
    for (let t = 0; t < K; t++) if (!compat(x - t, y - t)) return false;
    return true;
  };
  /** Occurrences of the context ending at x: the key index when x's context is all named, else the opcode one. */
  const occurrencesOf = (x: number): Int32Array | undefined => (loose || Number.isNaN(bc.keyGram[x]) ? bc.opIndex.get(bc.opGram[x]) : bc.keyIndex.get(bc.keyGram[x]));

  // the thread's own clock: TSC less the pauses before it (durations in it leave the pauses out)
  const pauses = mergedPauses(opts.pauses ?? []);
  const pausedBefore = new Float64Array(pauses.length / 2 + 1);
  for (let p = 0; p + 1 < pauses.length; p += 2) pausedBefore[p / 2 + 1] = pausedBefore[p / 2] + pauses[p + 1] - pauses[p];
  const ownTime = (t: number): number => {
    let lo = 0;
    let hi = pauses.length / 2;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (pauses[2 * m] <= t) lo = m + 1;
      else hi = m;
    }
    if (lo === 0) return t;
    const p = 2 * (lo - 1);
    return t - pausedBefore[lo - 1] - (Math.min(t, pauses[p + 1]) - pauses[p]);
  };
  /** Whether a pause overlaps [t0, t1) (the own clock then runs slower than the TSC). */
  const pausedBetween = (t0: number, t1: number): boolean => ownTime(t1) - ownTime(t0) !== t1 - t0;
  // (per bytecode, once: the walks read it at every step)
  let own: Float64Array | undefined;
  if (pauses.length) {
    own = new Float64Array(n);
    for (let x = 0; x < n; x++) own[x] = ownTime(input.tsc[pos[x]]);
  }
  /** The thread's own time at bytecode x. */
  const clock = (x: number): number => (own ? own[x] : input.tsc[pos[x]]);

  /** Bytecodes per tick in the stretches of up to PACE_WINDOW bytecodes on each side of a gap. */
  const pace = (a: number, b: number): number => {
    let count = 0;
    let ticks = 0;
    if (a >= 0) {
      const s0 = Math.max(a - PACE_WINDOW, segStart[seg[a]]);
      count += a - s0;
      ticks += clock(a) - clock(s0);
    }
    if (b < n) {
      const s1 = Math.min(b + PACE_WINDOW, segEnd[seg[b]]);
      count += s1 - b;
      ticks += clock(s1) - clock(b);
    }
    return ticks > 0 ? count / ticks : 0;
  };

  /** The ticks from bytecode a to bytecode b the thread may have run Java code in (opts.pauses left out). */
  const javaTicks = (a: number, b: number): number => clock(b) - clock(a);

  // opts.vmWork's records, less those inside a pause (its own: the agent's VMInit replays what existed before it,
  // and the pause's time is left out as a whole), ascending
  const inPause = (t: number): boolean => pausedBetween(t, t + 1);
  const workAt = Array.prototype.filter.call(opts.vmWork ?? [], (t: number) => !inPause(t)) as number[];
  /** The first record after tsc t. */
  const firstAfter = (t: number): number => {
    let lo = 0;
    let hi = workAt.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (workAt[m] <= t) lo = m + 1;
      else hi = m;
    }
    return lo;
  };
  /**
   * The thread's wait per record of VM work, where its data is complete: the time between consecutive events that
   * have such records between them (not across a gap, nor a pause), over the number of those records. (Per kind of
   * record, C2's compiles apart, was tried: the longest waits are the ones lost data hides, so the kinds' means
   * came from few samples; on the kept recordings it did worse.)
   */
  const waitPerRecord = ((): number => {
    if (!workAt.length) return 0;
    let waited = 0;
    let records = 0;
    let r = firstAfter(input.tsc[0]);
    for (let i = 1; i < input.length && r < workAt.length; i++) {
      const t0 = input.tsc[i - 1];
      const t1 = input.tsc[i];
      let k = 0;
      while (r < workAt.length && workAt[r] <= t1) {
        if (workAt[r] > t0) k++;
        r++;
      }
      if (!k || input.kind[i] === GAP || input.kind[i - 1] === GAP) continue;
      if (pausedBetween(t0, t1)) continue;
      waited += t1 - t0;
      records += k;
    }
    return records ? waited / records : 0;
  })();
  /** The thread's likely waits on the VM's work recorded between bytecodes a and b (ticks). */
  const vmWaitBetween = (a: number, b: number): number => (workAt.length ? (firstAfter(input.tsc[pos[b]]) - firstAfter(input.tsc[pos[a]])) * waitPerRecord : 0);

  /** A gap's time between bytecodes a and b, less the thread's likely waits on the VM in it (0: no time; else at least a tick). */
  const gapSpan = (a: number, b: number): number => {
    const ticks = javaTicks(a, b);
    return ticks > 0 ? Math.max(1, ticks - vmWaitBetween(a, b)) : 0;
  };

  /** Bytecodes a gap between bytecodes a and b held: the time from a to b at the thread's pace (0: no time). */
  const expectedBetween = (a: number, b: number): number => {
    const span = javaTicks(a, b);
    return span > 0 ? Math.round(span * pace(a, b)) : 0;
  };

  /**
   * How alike a walk's bytecodes are to the thread's around the gap between bytecodes a and b: the overlap in [0, 1]
   * of their shares per method and bci (sum of the smaller share; opcode where unnamed), the thread's taken over the
   * PACE_WINDOW bytecodes on each side within their segments.
   */
  const mixAround = (a: number, b: number, w: Walk): number => {
    const mixKey = (x: number): number => (key[x] !== UNKNOWN ? key[x] : -2 - op[x]);
    const around = new Map<number, number>();
    let aroundLen = 0;
    const count = (into: Map<number, number>, from: number, to: number): number => {
      for (let x = from; x <= to; x++) into.set(mixKey(x), (into.get(mixKey(x)) ?? 0) + 1);
      return Math.max(0, to - from + 1);
    };
    if (a >= 0) aroundLen += count(around, Math.max(segStart[seg[a]], a - PACE_WINDOW), a);
    if (b < n) aroundLen += count(around, b, Math.min(segEnd[seg[b]], b + PACE_WINDOW));
    const copy = new Map<number, number>();
    let copyLen = 0;
    for (let p = 0; p < w.from.length; p++) copyLen += count(copy, w.from[p], w.to[p]);
    if (!aroundLen || !copyLen) return 0;
    let overlap = 0;
    for (const [k, c] of copy) overlap += Math.min(c / copyLen, (around.get(k) ?? 0) / aroundLen);
    return overlap;
  };

  /**
   * Walks forward from just after bytecode j (an occurrence of the pre context), composing across segment ends,
   * and returns the walk to the end (a place where the post context `post..post+K-1` follows) whose length is
   * closest to `expected` within [lo, hi] (the first end when expected is 0), or undefined.
   */
  const walk = (j: number, post: number, postK: number, expected: number, span: number, lo: number, hi: number, ctx: Int32Array | null): Walk | undefined => {
    const from: number[] = [j + 1];
    const to: number[] = [];
    let cur = j + 1;
    let copied = 0;
    // the time the copy took where it ran: the pieces before the current one, and the bytecode whose time the
    // current one counts from (the occurrence's last bytecode of context, as the gap's span counts from its)
    let done = 0;
    let pieceBase = j;
    const timed = span > 0;
    let bestTicks = 0;
    let best = -1;
    let bestPieces = 0;
    let bestErr = Infinity;
    let bestPost = -1;
    for (;;) {
      if (cur >= n || seg[cur] !== seg[from[from.length - 1]]) {
        // the piece ran into a gap: go on after another occurrence of the K bytecodes copied last. The last few
        // bytecodes before a gap may be nowhere else (the decode went astray there): then back off up to
        // MAX_BACKOFF of them and go on from an earlier point of the piece.
        if (from.length >= maxPieces) break;
        const first = from[from.length - 1];
        let next = -1;
        let last = cur - 1;
        for (; last - first + 1 >= K && cur - 1 - last <= MAX_BACKOFF; last--) {
          next = continuation(last, hi - copied);
          if (next >= 0) break;
        }
        if (next < 0) break;
        copied -= cur - 1 - last;
        done += clock(last) - clock(pieceBase);
        pieceBase = next;
        to.push(last);
        from.push(next + 1);
        cur = next + 1;
        continue;
      }
      // how long the copy up to here took where it ran
      const ticks = timed ? done + clock(cur) - clock(pieceBase) : 0;
      if (cur + postK - 1 < n && seg[cur + postK - 1] === seg[cur] && (timed ? ticks * factor >= span : copied >= lo) && (!ctx || key[post] === UNKNOWN || ctx[cur] === ctx[post]) && startsPost(cur, post, postK)) {
        // the end where the most of what follows the gap follows too (a loop's rounds differ: the round that
        // goes on as the trace does is the one that ran), then the one whose copy took the time closest to the
        // gap's (else the length closest to the expected one)
        const err = timed ? Math.abs(ticks - span) : Math.abs(copied - expected);
        // (once an end matched all that is compared, only a closer one can be better)
        const after = bestPost < CONTEXT_MATCH || err < bestErr ? matchForward(cur, post, CONTEXT_MATCH) : -1;
        if (after > bestPost || (after === bestPost && err < bestErr)) {
          bestErr = err;
          bestPost = after;
          best = copied;
          bestTicks = ticks;
          bestPieces = from.length;
        }
        if (expected === 0) break;
      }
      // an end that matched all that is compared, and every later end farther from the expected length: done
      if (bestPost === CONTEXT_MATCH && (timed ? ticks - span : copied - expected) >= bestErr) break;
      if (copied >= hi || ticks > span * factor) break;
      copied++;
      cur++;
    }
    if (best < 0) return undefined;
    // rebuild the pieces up to the best end
    const outFrom = from.slice(0, bestPieces);
    const outTo = to.slice(0, bestPieces - 1);
    let before = 0;
    for (let p = 0; p < outTo.length; p++) before += outTo[p] - outFrom[p] + 1;
    outTo.push(outFrom[bestPieces - 1] + (best - before) - 1);
    return { from: outFrom, to: outTo, bytecodes: best, after: bestPost, ticks: bestTicks };
  };
  /**
   * How many bytecodes from x and from y on are alike: where they first differ, or cap when they do not differ
   * within cap bytecodes or before either one's segment ends (what a gap hid is no evidence against x: scored by
   * the stretch seen, a candidate nearer its segment's end would lose to one that is not, by noise).
   */
  const matchForward = (x: number, y: number, cap: number): number => {
    const ex = segEnd[seg[x]];
    const ey = segEnd[seg[y]];
    for (let t = 0; t < cap; t++) {
      if (x + t > ex || y + t > ey) return cap;
      if (!compat(x + t, y + t)) return t;
    }
    return cap;
  };
  /** As matchForward, going back from x and y (the bytecodes ending at them). */
  const matchBackward = (x: number, y: number, cap: number): number => {
    const sx = segStart[seg[x]];
    const sy = segStart[seg[y]];
    for (let t = 0; t < cap; t++) {
      if (x - t < sx || y - t < sy) return cap;
      if (!compat(x - t, y - t)) return t;
    }
    return cap;
  };
  /** Does the post context (postK bytecodes from `post`) start at bytecode c? */
  const startsPost = (c: number, post: number, postK: number): boolean => {
    for (let t = 0; t < postK; t++) if (!compat(c + t, post + t)) return false;
    return true;
  };
  /**
   * Another occurrence of the K bytecodes ending at `last` to go on from: the one (of the first few checked)
   * with the most bytecodes after it in its segment, preferring one with at least `want`.
   */
  const continuation = (last: number, want: number): number => {
    const occ = occurrencesOf(last);
    if (!occ) return -1;
    let best = -1;
    let bestRoom = 0;
    let bestPast = -1;
    let checked = 0;
    const count = nearest(occ, last, maxCand * SCAN_PER_CANDIDATE, nearPiece);
    for (let o = 0; o < count && checked < maxCand; o++) {
      const x = nearPiece[o];
      if (x === last || !sameGram(x, last)) continue;
      checked++;
      const room = segEnd[seg[x]] - x;
      if (room <= K) continue; // a continuation must at least get past one context's length
      // the occurrence whose past is most like the piece's (the same round of a loop with varying rounds),
      // then the one with the most room, enough for what is still wanted
      const past = matchBackward(x, last, CONTEXT_MATCH);
      const enough = room >= want;
      const bestEnough = bestRoom >= want;
      if (past > bestPast || (past === bestPast && (enough ? !bestEnough : !bestEnough && room > bestRoom))) {
        bestPast = past;
        bestRoom = room;
        best = x;
        if (past === CONTEXT_MATCH && enough) break; // none can be better
      }
    }
    return best;
  };

  // the fallback's fills, by gap event: method, and bcis and opcodes
  const shortest = new Map<number, { method: number; bcis: Int32Array; opcodes: Uint8Array }>();
  /** Gap g (bytecodes a before it, b after it) filled with a shortest path of their method, where that applies. */
  const shortestFill = (g: number, a: number, b: number): void => {
    if (!opts.fallback || a < 0 || b >= n || key[a] === UNKNOWN || key[b] === UNKNOWN) return;
    const m = Math.floor(key[a] / 65536);
    // the same method under the same callers: one activation, as far as the stack tells
    if (Math.floor(key[b] / 65536) !== m || bc.ctxFar[a] !== bc.ctxFar[b]) return;
    const path = opts.fallback(m, key[a] % 65536, key[b] % 65536);
    if (!path || path.bcis.length === 0) return;
    shortest.set(bc.gapAt[g], { method: m, bcis: path.bcis, opcodes: path.opcodes });
    stats.shortestPath++;
    const expected = expectedBetween(a, b);
    stats.expected += expected;
    fills.push({ gap: bc.gapAt[g], bytecodes: path.bcis.length, expected, pieces: 1, agreeing: 0, fitting: 0, context: 0, score: 0, alternatives: [], how: 'shortestPath' });
  };
  // the fills chosen, by gap event
  const chosen = new Map<number, Walk>();
  /**
   * gaps filled from one side (oneSidedFill): a head fill's copy is followed by the events after the gap, not by its
   * source's (the calls and returns after its last bytecode are left out); a tail fill's copy starts in a frame the
   * stack already holds (those before its first bytecode are left out)
   */
  const oneSidedKind = new Map<number, 'head' | 'tail'>();
  const near = new Int32Array(maxCand * SCAN_PER_CANDIDATE);
  /** (continuation's own: a walk's search must not overwrite the gap's occurrences, which the next level reads) */
  const nearPiece = new Int32Array(maxCand * SCAN_PER_CANDIDATE);
  const rankPast = new Int32Array(maxCand);
  const rankAt = new Int32Array(maxCand);
  /**
   * Gap g (bytecodes a before it, b after it) filled from one side, where the other ran only once (start-up code
   * before a loop's first round, a loop's last round before code that follows it once): no copy can match both
   * sides. The side that ran again is found elsewhere and matched in full (CONTEXT_MATCH bytecodes, within both
   * segments), and the stretch next to it copied:
   * - a tail fill: what ran before an occurrence of the post context, back to a bytecode of a frame the stack held at
   *   the gap, under the same callers (after the gap the thread went on in one of them, or in what it called; the
   *   callers of b itself are not known after lost data);
   * - a head fill: what ran after an occurrence of the pre context (with a's four callers), up to a bytecode of b's
   *   method (under b's callers, where b's frame was on the stack at the gap); where the decoder could not name b (the
   *   thread went on in a frame it could not place: code run once after the loop, say), up to a bytecode of a's
   *   method under a's callers, so that the copy's calls are whole.
   * Where the copy starts (ends) is where its own time is closest to the gap's, within TIME_FIT of it, inside its
   * segment; occurrences whose segment holds the gap's time next to them go first (nearest first, up to the
   * candidates option). Among the fills, the one most occurrences agree on, then the closest in time. Its context is
   * the one side's: CONTEXT_MATCH, score 0.5.
   */
  const oneSidedFill = (g: number, a: number, b: number, sides: 'both' | 'tail' | 'head' = 'both'): boolean => {
    if (a < 0 || b >= n || key[a] === UNKNOWN) return false;
    // (a tail fill starts from the post context, which needs b named; a head fill without it ends in a's frame)
    const bNamed = key[b] !== UNKNOWN;
    if (!bNamed && sides === 'tail') return false;
    const span = gapSpan(a, b);
    if (span === 0) return false;
    const expected = expectedBetween(a, b);
    // the longest copy: as a two-sided fill, one longer than LONG_FILL must have the length the gap's time at the
    // thread's pace gives (within LONG_FILL_PACE: a gap's time may hold time off the CPU or outside Java)
    const paced = (len: number): boolean => len <= LONG_FILL || (expected > 0 && Math.abs(len - expected) <= LONG_FILL_PACE * expected);
    const cap = Math.min(maxFill, Math.max(LONG_FILL, Math.ceil(expected * (1 + LONG_FILL_PACE))));
    const byFill = new Map<string, { count: number; walk: Walk; err: number; head: boolean }>();
    const methodOf = (x: number): number => Math.floor(key[x] / 65536);
    const consider = (from: number, to: number, t: number, head: boolean): void => {
      if (!paced(to - from + 1)) return;
      const w: Walk = { from: [from], to: [to], bytecodes: to - from + 1, after: head ? 0 : CONTEXT_MATCH, ticks: t };
      const sig = fillSignature(key, op, w);
      const e = byFill.get(sig);
      if (e) e.count++;
      else byFill.set(sig, { count: 1, walk: w, err: Math.abs(t - span), head });
    };
    const frames = bc.gapFrames[g];
    /** Is bytecode x of a frame on the stack at the gap, under the same callers? */
    const onStack = (x: number): boolean => {
      if (key[x] === UNKNOWN) return false;
      for (let d = 0; d < frames.method.length; d++) if (frames.method[d] === methodOf(x) && frames.callers[d] === bc.ctxFar[x]) return true;
      return false;
    };
    // b's callers are known where its frame was on the stack at the gap (the thread returned to it); else the
    // stack replayed across the gap put it on top of the frames before the gap, and only its method tells
    const bCallersKnown = onStack(b);
    // candidates whose segment holds the gap's time next to them first (a copy cut short by its segment's end is
    // shorter than the gap), then those holding at least its time over TIME_FIT (and not the first)
    const fullRoom = (r: number, pass: number): boolean => (pass === 0 ? r >= span : r >= span / TIME_FIT && r < span);
    for (let pass = 0; pass < 2; pass++) {
      // tail: copies of what ran before the post context
      if (sides !== 'head' && bNamed && b + Math.max(K, CONTEXT_MATCH) - 1 <= segEnd[seg[b]] && !Number.isNaN(bc.keyGram[b + K - 1])) {
        const occ = bc.keyIndex.get(bc.keyGram[b + K - 1])!;
        const count = nearest(occ, b + K - 1, maxCand * SCAN_PER_CANDIDATE, near);
        for (let o = 0, taken = 0; o < count && taken < maxCand; o++) {
          const c = near[o] - K + 1;
          if (c === b || !fullRoom(clock(c) - clock(segStart[seg[c]]), pass) || c + CONTEXT_MATCH - 1 > segEnd[seg[c]] || matchForward(c, b, CONTEXT_MATCH) < CONTEXT_MATCH) continue;
          taken++;
          let best = -1;
          let bestErr = Infinity;
          for (let x = c - 1; x > segStart[seg[c]] && c - x <= cap; x--) {
            const t = clock(c) - clock(x - 1);
            if (t > span * TIME_FIT) break;
            if (fitsTime(t, span) && Math.abs(t - span) < bestErr && onStack(x)) {
              bestErr = Math.abs(t - span);
              best = x;
            }
          }
          if (best >= 0) consider(best, c - 1, clock(c) - clock(best - 1), false);
        }
      }
      // head: copies of what ran after the pre context
      if (sides !== 'tail' && !byFill.size && a - Math.max(K, CONTEXT_MATCH) + 1 >= segStart[seg[a]] && !Number.isNaN(bc.keyGram[a])) {
        const occ = bc.keyIndex.get(bc.keyGram[a])!;
        const count = nearest(occ, a, maxCand * SCAN_PER_CANDIDATE, near);
        for (let o = 0, taken = 0; o < count && taken < maxCand; o++) {
          const j = near[o];
          if (j === a || bc.ctxFar[j] !== bc.ctxFar[a] || !fullRoom(clock(segEnd[seg[j]]) - clock(j), pass) || j - CONTEXT_MATCH + 1 < segStart[seg[j]] || matchBackward(j, a, CONTEXT_MATCH) < CONTEXT_MATCH) continue;
          taken++;
          let best = -1;
          let bestErr = Infinity;
          for (let x = j + 1; x < segEnd[seg[j]] && x - j <= cap; x++) {
            const t = clock(x + 1) - clock(j);
            if (t > span * TIME_FIT) break;
            const ends = bNamed ? methodOf(x) === methodOf(b) && (!bCallersKnown || bc.ctxFar[x] === bc.ctxFar[b]) : key[x] !== UNKNOWN && methodOf(x) === methodOf(a) && bc.ctxFar[x] === bc.ctxFar[a];
            if (fitsTime(t, span) && Math.abs(t - span) < bestErr && ends) {
              bestErr = Math.abs(t - span);
              best = x;
            }
          }
          if (best >= 0) consider(j + 1, best, clock(best + 1) - clock(j), true);
        }
      }
      if (byFill.size) break;
    }
    if (!byFill.size) return false;
    const ranked = [...byFill.values()].sort((x, y) => y.count - x.count || x.err - y.err);
    const best = ranked[0];
    stats.oneSided++;
    if (byFill.size > 1) stats.ambiguous++;
    stats.expected += expected;
    chosen.set(bc.gapAt[g], best.walk);
    oneSidedKind.set(bc.gapAt[g], best.head ? 'head' : 'tail');
    let fitting = 0;
    for (const e of byFill.values()) fitting += e.count;
    fills.push({
      gap: bc.gapAt[g],
      bytecodes: best.walk.bytecodes,
      expected,
      pieces: 1,
      agreeing: best.count,
      fitting,
      context: CONTEXT_MATCH,
      score: fillScore(CONTEXT_MATCH),
      alternatives: ranked.slice(1, TOP_N).map((e) => ({ bytecodes: e.walk.bytecodes, agreeing: e.count, context: CONTEXT_MATCH, score: fillScore(CONTEXT_MATCH) })),
      how: best.head ? 'head' : 'tail',
    });
    return true;
  };
  // choose a fill per gap
  for (let g = 0; g < bc.gapAt.length; g++) {
    const a = bc.gapBefore[g] - 1; // last bytecode before the gap
    const b = bc.gapBefore[g]; // first after
    const post = b;
    if (a < K - 1 || b + K - 1 >= n || segStart[seg[a]] > a - K + 1 || seg[b + K - 1] !== seg[b] || seg[a] === seg[b]) {
      stats.noContext++;
      if (!oneSidedFill(g, a, b)) shortestFill(g, a, b);
      continue;
    }
    const occ = occurrencesOf(a);
    if (!occ) {
      stats.noContext++;
      if (!oneSidedFill(g, a, b)) shortestFill(g, a, b);
      continue;
    }
    const expected = expectedBetween(a, b);
    // the gap's PT time: a fill is the copy whose own time (where it ran) is closest to it, within `factor` of it
    // (less the thread's likely waits on the VM's work recorded inside it, opts.vmWork; at least a tick: a gap
    // that was all waiting gets the shortest fill that fits)
    const span = gapSpan(a, b);
    const lo = expected > 0 ? Math.floor(expected / factor) : 0;
    const hi = Math.min(maxFill, expected > 0 ? Math.ceil(expected * factor) + K : maxFill);
    // per fill: how many candidates made it, its walk, the most context one matched and that one's two sides
    const byFill = new Map<string, { count: number; walk: Walk; context: number; past: number; after: number }>();
    let fitting = 0;
    // the occurrences nearest the gap first (the same phase of the program)
    let scan = nearest(occ, a, maxCand * SCAN_PER_CANDIDATE, near);
    // calling context first: candidates where the same callers (4 frames, then 2) were on the stack before the
    // gap's context, whose walk ends where the same callers are on the stack as after the gap (the paper's call
    // structure: a gap in a method called from here is filled from calls made from here); then bytecodes alone;
    // then opcodes alone, on a longer past (LOOSE_PAST)
    let postK = K + 1;
    // the search level the fill was found at: 1 the same four callers, 2 the same two, 3 bytecodes alone, 4
    // opcodes alone (a bytecode the decoder could not name has no known frame: bytecodes alone, level 3)
    let level = 0;
    const levels = key[a] === UNKNOWN ? [null] : [bc.ctxFar, bc.ctxNear, null, LOOSE];
    for (const ctx of levels) {
      level = ctx === null ? 3 : ctx === LOOSE ? 4 : level + 1;
      if (ctx === LOOSE) {
        const occOps = bc.opIndex.get(bc.opGram[a]);
        if (!occOps) break;
        loose = true;
        scan = nearest(occOps, a, maxCand * SCAN_PER_CANDIDATE, near);
      }
      // the candidates: the occurrences whose past is most like the gap's (longest first, up to CONTEXT_MATCH:
      // in a loop whose rounds differ, the rounds before the gap tell which round it was)
      let taken = 0;
      for (let o = 0; o < scan; o++) {
        const j = near[o];
        if (j === a || (ctx && ctx !== LOOSE && ctx[j] !== ctx[a]) || !sameGram(j, a)) continue;
        const past = matchBackward(j, a, CONTEXT_MATCH);
        if (loose && past < LOOSE_PAST) continue; // (opcodes alone are weaker evidence: more of them must match)
        // insertion into the ranked list (ties keep the nearer occurrence first)
        let at = Math.min(taken, maxCand - 1);
        if (taken === maxCand && past <= rankPast[at]) continue;
        while (at > 0 && rankPast[at - 1] < past) {
          rankPast[at] = rankPast[at - 1];
          rankAt[at] = rankAt[at - 1];
          at--;
        }
        rankPast[at] = past;
        rankAt[at] = j;
        if (taken < maxCand) taken++;
        if (taken === maxCand && rankPast[maxCand - 1] === CONTEXT_MATCH) break; // none can rank higher
      }
      // the whole post context first; where no walk meets it at a length the gap's time allows (it may be rare:
      // the first bytecodes after a resync are often a transition), a shorter one: the bytecode after the gap
      // must still follow the fill
      postK = K + 1;
      while (!fitting && postK > 1) {
        postK = postK > 3 ? (postK === K + 1 ? K : 2) : postK - 1;
        for (let c = 0; c < taken; c++) {
          const w = walk(rankAt[c], post, postK, expected, span, lo, span > 0 ? maxFill : hi, ctx === LOOSE ? null : ctx);
          if (!w) continue;
          fitting++;
          const context = rankPast[c] + w.after;
          const sig = fillSignature(key, op, w);
          const e = byFill.get(sig);
          if (e) {
            e.count++;
            if (context > e.context) {
              e.context = context;
              e.past = rankPast[c];
              e.after = w.after;
            }
          } else byFill.set(sig, { count: 1, walk: w, context, past: rankPast[c], after: w.after });
        }
      }
      if (fitting) break;
    }
    loose = false;
    if (!fitting) {
      stats.noCandidate++;
      if (!oneSidedFill(g, a, b)) shortestFill(g, a, b);
      continue;
    }
    // ranked: the most context matched on both sides; then a fill whose copy took the gap's time (within TIME_FIT)
    // before one that did not; then the most candidates agreeing; then the length closest to the time's. (Agreement
    // after time fit: in a loop whose rounds differ at random, the copies as long as the gap differ from each other,
    // each agreed on by one, while walks stopped early by a difference in what follows all stop at the same end.
    // examples/switches -Xint at 25% loss, seed 2: 3,500 bytecodes in 1.48 M ticks, agreed on by three, beat 8,677
    // in 3.68 M for a gap of 3.59 M whose hole was 8,677: overall 86.4% -> 89.5%. On the 24 kept recordings at 25%
    // two rows changed, both up; ranking time fit first within each walk's ends too was tried: two rows down.)
    const fits = (w: Walk): number => (span > 0 && !fitsTime(w.ticks, span) ? 0 : 1);
    const ranked = [...byFill.values()].sort(
      (x, y) =>
        y.context - x.context ||
        fits(y.walk) - fits(x.walk) ||
        y.count - x.count ||
        (span > 0 ? Math.abs(x.walk.ticks - span) - Math.abs(y.walk.ticks - span) : Math.abs(x.walk.bytecodes - expected) - Math.abs(y.walk.bytecodes - expected)),
    );
    const best = ranked[0];
    // its weaker side
    const side = Math.min(best.past, best.after);
    // a long fill with one weak side is still copied where the evidence around it is otherwise strong: the same four
    // callers, the other side matched all that is compared, the weak one more than the K bytecodes every candidate
    // matches, and the copy's length is the gap's time at the thread's pace (within LONG_FILL_PACE; with a time
    // span the walk is sized by its copy's own time, so this says the copy ran at the pace around the gap). In a
    // loop whose rounds vary, what follows the gap may be followed by no copy (examples/switches with C2 at 25%
    // loss, seed 3: a main-loop gap of 101 k bytecodes by the oracle, past 256, after 30, the fill within 1% of the
    // expected; overall 86.7% -> 90.7%). On the 36 kept recordings (10, 25, 50%
    // loss) it changed 4 rows, all for the better. Without the weak side's bound it changed 8, and one for the
    // worse (switches C2 25% seed 1, 94.7% -> 93.9%): that fill matched 6 after its gap (K), and the rounds on both
    // sides of the gap say its copy ended in the wrong phase of the loop.
    // (the strong side measured on as many bytecodes of the gap's own segment: matching up to a segment's end counts
    // as matching all, which is no evidence here; the weak side past the K bytecodes any candidate matches)
    const strongPast = best.past >= CONTEXT_MATCH && a - segStart[seg[a]] + 1 >= CONTEXT_MATCH;
    const strongAfter = best.after >= CONTEXT_MATCH && segEnd[seg[b]] - b + 1 >= CONTEXT_MATCH;
    // a one-sided fill (matched CONTEXT_MATCH on the side it copies from, its junction checked against the gap's
    // stack) goes first, on the side the two-sided fill is weaker on, where the two-sided fill has less evidence:
    // - one side matched no more than the K bytecodes every candidate matches, found without the callers (level 3
    //   or 4): the evidence of its other side only (examples/switches -Xint at 25% loss, seed 2: the gap from class
    //   loading into main's loop, where opcodes alone had copied more class loading, matching 1 bytecode after it;
    //   the tail fill copied the loop's rounds);
    // - both sides together matched less than one side of a one-sided fill: the code on one side ran once
    //   (switches -Xint 25%, twenty-third session's seed 4: a gap from the first rounds of main's loop, where each
    //   word's hash was computed the first time, into rounds that find it cached. The hash's past occurs only in the
    //   first rounds; a copy from there matched 119 before, 25 after, 2,169 of the hole's 7,694 bytecodes: overall
    //   89.3% -> 92.6%, RA 66.3% -> 76.0%; with a fill below MIN_FILL_CONTEXT, the gap was left to a shortest path)
    const weakest = best.after <= best.past ? 'tail' : 'head';
    if (((level >= 3 && side <= K) || best.context < CONTEXT_MATCH) && oneSidedFill(g, a, b, weakest)) continue;
    if (level === 1) stats.callersFar++;
    else if (level === 2) stats.callersNear++;
    else if (level === 4) stats.opcodesOnly++;
    if (postK < K) stats.shortPost++;
    const paced = level === 1 && (strongPast || strongAfter) && side > K && expected > 0 && Math.abs(best.walk.bytecodes - expected) <= LONG_FILL_PACE * expected;
    // a long fill with one weak side whose copy is the code the thread ran around the gap is copied too: one side
    // matched in full, the copy took the gap's time where it ran, and its bytecodes (by method and bci) are the
    // mix of those around the gap (mixAround >= MIX_MATCH). In a loop whose rounds take their branches at random no
    // copy's end meets what follows the gap for long, and the gap left empty loses all its rounds (examples/switches
    // with C2 at 25% loss on a loaded host: three main-loop gaps of 12-16 M ticks, mixes 0.998-0.999, left empty,
    // overall 88.2%). Start-up code the rule is for (a weak match sized by a long gap's time) mixed 0.34-0.89 there.
    const mixed = (): boolean => span > 0 && (strongPast || strongAfter) && fits(best.walk) === 1 && mixAround(a, b, best.walk) >= MIX_MATCH;
    const weak = best.context < MIN_FILL_CONTEXT || (best.walk.bytecodes > LONG_FILL && ((side < LONG_FILL_SIDE && !paced) || (level >= 3 && !fits(best.walk))));
    if (weak && best.context >= MIN_FILL_CONTEXT && mixed()) stats.mixed++;
    else if (weak) {
      // a guess: the best fill matched too little around it to be copied (in once-run start-up code, a weak match
      // sized by a long gap's time made 200 k bytecodes of HashMap); a long fill needs both sides to match well (a
      // gap's time may hold time the thread spent off the CPU or outside Java: 165 M ticks of start-up, sized as
      // 225 k bytecodes, matched 7 bytecodes on one side); and a long fill found without the callers (levels 3-4)
      // must have taken about the gap's time where it ran (within TIME_FIT: switches -Xint 25%, twenty-third session's
      // seed 4, a start-up copy of 33.6 k bytecodes matched 256 on both sides but took 3.5x the gap's time; RA 39.3%
      // -> 66.3%. At level 1 the same rule dropped right fills whose copy ran at another pace than the gap's code,
      // interpreted against compiled: switches and exceptions JIT, two rows down 1.5 points)
      stats.weakContext++;
      // not copied; a one-sided fill has evidence of its own (its side matched CONTEXT_MATCH, its junction is on the
      // gap's stack, its length the gap's time): examples/switches with C2 at 25% loss, a gap from the main loop's last
      // rounds into the unnamed code after it, whose two-sided copy matched 2 after it, 16 k bytecodes of the loop's
      // rounds from the head side (overall 90.2% -> 91.3%, RA 88.5% -> 93.9%)
      if (!oneSidedFill(g, a, b)) shortestFill(g, a, b);
      continue;
    }
    if (byFill.size > 1) stats.ambiguous++;
    if (best.walk.from.length > 1) stats.composed++;
    stats.expected += expected;
    chosen.set(bc.gapAt[g], best.walk);
    fills.push({
      gap: bc.gapAt[g],
      bytecodes: best.walk.bytecodes,
      expected,
      pieces: best.walk.from.length,
      agreeing: best.count,
      fitting,
      context: best.context,
      score: fillScore(best.context),
      alternatives: ranked.slice(1, TOP_N).map((e) => ({ bytecodes: e.walk.bytecodes, agreeing: e.count, context: e.context, score: fillScore(e.context) })),
      how: 'context',
    });
  }

  // the spans of events each chosen walk copies (event indexes, inclusive pairs), by gap event: after this only
  // they are needed, and the bytecode view's columns and indexes (~40 bytes per bytecode) can go
  const spansOf = new Map<number, number[]>();
  for (let g = 0; g < bc.gapAt.length; g++) {
    const gap = bc.gapAt[g];
    const w = chosen.get(gap);
    if (!w) continue;
    // each piece: the events of its bytecodes and the calls and returns between them, from just after the
    // bytecode before the piece; the last piece also takes the events up to just before the bytecode after it
    // (the transition into the post context). Where the stream has its own events between the bytecode before the
    // gap and the gap (or between the gap and the bytecode after it), those are the transition, decoded: the
    // copy's is left out (a call the decoder saw just before the loss was otherwise entered twice).
    const b = bc.gapBefore[g];
    const ownLead = b > 0 && pos[b - 1] + 1 < gap;
    const ownTrail = pos[b] > gap + 1;
    const kind = oneSidedKind.get(gap);
    const spans: number[] = [];
    for (let p = 0; p < w.from.length; p++) {
      const last = p === w.from.length - 1;
      const e0 = p === 0 && (kind === 'tail' || ownLead) ? pos[w.from[p]] : pos[w.from[p] - 1] + 1;
      const e1 = last && kind !== 'head' && !ownTrail ? pos[w.to[p] + 1] - 1 : pos[w.to[p]];
      if (e1 >= e0) spans.push(e0, e1);
    }
    spansOf.set(gap, spans);
  }
  chosen.clear();
  oneSidedKind.clear();
  bc.release();
  key = new Float64Array(0);
  op = seg = new Int32Array(0);

  // events inside activations that run once per run (opts.onceOnly): not copied
  const ranOnce = spansOf.size && opts.onceOnly?.size ? onceOnlyEvents(input, opts.onceOnly, (opts as InternalOptions).ownEnd ?? input.length) : undefined;
  // the output: the input with each chosen walk's events copied after its gap event (only events of these kinds,
  // spread evenly over the gap's PT time), or the fallback's bytecodes
  const gapsFilled = [...spansOf.keys(), ...shortest.keys()].sort((a, b) => a - b);
  let total = 0;
  let synthetic = 0;
  for (const i of gapsFilled) {
    const spans = spansOf.get(i);
    if (!spans) synthetic += shortest.get(i)!.bcis.length;
    else for (let s = 0; s < spans.length; s += 2) for (let e = spans[s]; e <= spans[s + 1]; e++) if (copied(input.kind[e]) && !ranOnce?.[e]) total++;
  }
  total += synthetic;
  const at = new Float64Array(gapsFilled.length);
  const first = new Int32Array(gapsFilled.length + 1);
  // per event: the input event it copies, or -1 - k for the fallback's k-th bytecode
  const from = new Int32Array(total);
  const time = new Float64Array(total);
  const synMethod = new Int32Array(synthetic);
  const synBci = new Int32Array(synthetic);
  const synOp = new Int32Array(synthetic);
  let q = 0;
  let k0 = 0;
  gapsFilled.forEach((i, g) => {
    at[g] = i + 1;
    first[g] = q;
    stats.recovered++;
    const t0 = input.tsc[i];
    const t1 = input.aux[i] > t0 ? input.aux[i] : t0;
    const spans = spansOf.get(i);
    if (!spans) {
      const path = shortest.get(i)!;
      for (let k = 0; k < path.bcis.length; k++, k0++) {
        synMethod[k0] = path.method;
        synBci[k0] = path.bcis[k];
        synOp[k0] = path.opcodes[k];
        from[q] = -1 - k0;
        time[q++] = t0 + ((t1 - t0) * (k + 1)) / (path.bcis.length + 1);
        stats.events++;
        stats.bytecodes++;
      }
      return;
    }
    let count = 0;
    for (let s = 0; s < spans.length; s += 2) count += spans[s + 1] - spans[s] + 1;
    let k = 0;
    for (let s = 0; s < spans.length; s += 2)
      for (let e = spans[s]; e <= spans[s + 1]; e++, k++) {
        const kind = input.kind[e];
        if (!copied(kind) || ranOnce?.[e]) continue;
        from[q] = e;
        time[q++] = t0 + ((t1 - t0) * (k + 1)) / (count + 1);
        stats.events++;
        if (kind === BYTECODE) stats.bytecodes++;
      }
  });
  first[gapsFilled.length] = q;
  spansOf.clear();
  shortest.clear();
  const out = opts.inPlace ? input : input.clone();
  const pick = (synth: Int32Array | number) => (_g: number, q: number, old: ArrayLike<number>) => {
    const f = from[q];
    return f >= 0 ? old[f] : typeof synth === 'number' ? synth : synth[-1 - f];
  };
  out.splice(at, first, gapsFilled.length, {
    kind: pick(BYTECODE),
    source: () => RECOVERED_SOURCE,
    method: pick(synMethod),
    bci: pick(synBci),
    opcode: pick(synOp),
    tsc: (_g, q) => time[q],
    aux: pick(0),
  });
  return { events: out, stats, fills };
}

/**
 * recoverGaps with a reference: the thread's events, a boundary gap, then the reference's (its gaps made boundaries
 * too, so only the thread's own are filled) are recovered as one stream, and the result is cut at the boundary. The
 * thread's events come first, so the fills' gap indexes are the input's.
 */
function recoverWithReference(input: EventStream, reference: EventStream, opts: RecoveryOptions): { events: EventStream; stats: RecoveryStats; fills: GapFill[] } {
  const n = input.length;
  const both = new EventStream(n + 1 + reference.length);
  both.appendStream(input);
  both.push(GAP, 0, -1, REFERENCE_BOUNDARY, -1, n > 0 ? input.tsc[n - 1] : 0, n > 0 ? input.tsc[n - 1] : 0);
  const from = both.length;
  both.appendStream(reference);
  for (let i = from; i < both.length; i++) if (both.kind[i] === GAP) both.bci[i] = REFERENCE_BOUNDARY;
  const r = recoverGaps(both, { ...opts, reasons: (opts.reasons ?? [0]).filter((x) => x !== REFERENCE_BOUNDARY), reference: undefined, inPlace: true, ownEnd: n } as InternalOptions);
  // every event recovery adds lies before the boundary
  const end = n + r.stats.events;
  if (r.events.kind[end] !== GAP || r.events.bci[end] !== REFERENCE_BOUNDARY) throw new Error(`recover: the reference boundary is not at event ${end} after recovery`);
  const out = r.events;
  out.length = end;
  out.trim();
  if (!opts.inPlace) return { events: out, stats: r.stats, fills: r.fills };
  // the stream given, holding the result
  input.kind = out.kind;
  input.source = out.source;
  input.method = out.method;
  input.bci = out.bci;
  input.opcode = out.opcode;
  input.tsc = out.tsc;
  input.aux = out.aux;
  input.length = end;
  return { events: input, stats: r.stats, fills: r.fills };
}

/** recoverWithReference's call: events from `ownEnd` on are the reference recording's. */
type InternalOptions = RecoveryOptions & { ownEnd?: number };

/** Pauses as sorted [from, to) pairs with overlapping or touching ones joined. */
function mergedPauses(p: ArrayLike<number>): Float64Array {
  const order: number[] = [];
  for (let k = 0; k + 1 < p.length; k += 2) if (p[k + 1] > p[k]) order.push(k);
  order.sort((x, y) => p[x] - p[y]);
  const out: number[] = [];
  for (const k of order) {
    const n = out.length;
    if (n && p[k] <= out[n - 1]) out[n - 1] = Math.max(out[n - 1], p[k + 1]);
    else out.push(p[k], p[k + 1]);
  }
  return Float64Array.from(out);
}

/** Kinds of event a fill copies. */
const copied = (kind: number): boolean => kind === BYTECODE || kind === ENTRY || kind === EXIT || kind === EXCEPTION;

/** Whether the stream has a gap of one of these reasons. */
function hasGap(input: EventStream, reasons: Set<number>): boolean {
  for (let i = 0; i < input.length; i++) if (input.kind[i] === GAP && reasons.has(input.bci[i])) return true;
  return false;
}

/**
 * Per event: whether it lies inside an activation of a method of `once` (its own events and those of everything it
 * called, as the thread's frames replay; not across a gap, where the frames are guessed). Events from `ownEnd` on
 * are another recording's (recoverWithReference): there only activations of methods this stream's own events
 * (before `ownEnd`) also run count.
 */
function onceOnlyEvents(input: EventStream, once: ReadonlySet<number>, ownEnd: number): Uint8Array {
  const n = input.length;
  const mark = new Uint8Array(n);
  let seen = once;
  if (ownEnd < n) {
    const own = new Set<number>();
    for (let i = 0; i < ownEnd; i++) if (input.method[i] >= 0 && once.has(input.method[i])) own.add(input.method[i]);
    seen = own;
  }
  const stack = new CallStack();
  // the depth the once-run frame sits at (the stack's depth with it on top), -1 outside one
  let onceDepth = -1;
  for (let i = 0; i < n; i++) {
    const k = input.kind[i];
    const m = input.method[i];
    const set = i < ownEnd ? once : seen;
    if (k === GAP) {
      onceDepth = -1;
      continue;
    }
    if (k === ENTRY) stack.enter(m);
    else if (k === EXIT) stack.exit(m);
    else if (k === BYTECODE) stack.at(m);
    const d = stack.size;
    if (onceDepth >= 0 && d < onceDepth) onceDepth = -1;
    if (m >= 0 && set.has(m)) {
      if (onceDepth < 0 && k !== EXIT) onceDepth = d;
      mark[i] = 1;
    } else if (onceDepth >= 0) mark[i] = 1;
  }
  return mark;
}

/** A fill whose context (before and after it, against the gap's) matched fewer bytecodes than this is not taken. */
const MIN_FILL_CONTEXT = 32;
/**
 * A fill longer than this many bytecodes is copied only when both its sides matched at least LONG_FILL_SIDE, or its
 * length is within LONG_FILL_PACE of the expected one (and the rest of the evidence is strong: see their use).
 */
const LONG_FILL = 16_384;
const LONG_FILL_SIDE = 128;
/** A copy whose time is within this factor of its gap's fits it: ranked before agreement; one-sided fills' bound. */
const TIME_FIT = 1.5;
/** Does a copy that took `ticks` fit a gap of `span` ticks (within TIME_FIT either way)? */
const fitsTime = (ticks: number, span: number): boolean => ticks * TIME_FIT >= span && ticks <= span * TIME_FIT;
/** How close to the expected length (a share of it) a long fill with a weak side must be to be copied. */
const LONG_FILL_PACE = 0.1;
/**
 * Least overlap of a long fill's mix of bytecodes with the thread's around its gap (mixAround) for it to be copied
 * with one weak side. Measured on examples/switches with C2 at 25% loss: the main loop's gaps 0.998-0.999, start-up
 * fills (the module system's, HashMap's) 0.34-0.89.
 */
const MIX_MATCH = 0.95;
/** The search level that compares opcodes alone (see `loose`). */
const LOOSE = new Int32Array(0);
/** at that level, a candidate's past must match the gap's over at least this many opcodes */
const LOOSE_PAST = 32;

/** Equal keys where both bytecodes are named; equal opcodes where either is not. */
function compatible(key: Float64Array, op: Int32Array, x: number, y: number): boolean {
  const kx = key[x];
  const ky = key[y];
  if (kx !== UNKNOWN && ky !== UNKNOWN) return kx === ky;
  return op[x] === op[y] && op[x] >= 0;
}

/** The bytecode events of a stream as columns, with their segments (gaps separate them) and K-gram indexes. */
class BytecodeView {
  n = 0;
  /** event index of each bytecode */
  pos!: Int32Array;
  /** method * 65536 + bci, or UNKNOWN */
  key!: Float64Array;
  op!: Int32Array;
  /** segment of each bytecode */
  seg!: Int32Array;
  /** per segment: its first and last bytecode */
  segStart!: Int32Array;
  segEnd!: Int32Array;
  /** gaps to fill: event index, and the number of bytecodes before it */
  gapAt: number[] = [];
  gapBefore: number[] = [];
  /**
   * per gap: the frames on the stack at the gap, from the top down (at most GAP_FRAMES), each as its method and the
   * hash of its callers (as ctxFar): after the gap the thread runs in one of them, or in a method one of them called
   */
  gapFrames: { method: Int32Array; callers: Int32Array }[] = [];
  /**
   * Calling context of each bytecode: a hash of the methods of the CALLERS_NEAR (ctxNear) and CALLERS_FAR
   * (ctxFar) frames below its own, from the stack the events' entries and exits build (frames the decoder did
   * not see begin are pushed when their bytecodes show up, as the profiles' walker does).
   */
  ctxNear!: Int32Array;
  ctxFar!: Int32Array;
  /** hash of the K keys ending at each bytecode (NaN: crosses a gap or holds an unnamed bytecode) */
  keyGram!: Float64Array;
  /** hash of the K opcodes ending at each bytecode (NaN: crosses a gap) */
  opGram!: Float64Array;
  keyIndex = new Map<number, Int32Array>();
  opIndex = new Map<number, Int32Array>();

  /** Lets go of everything but `pos` and the segment bounds. */
  release(): void {
    this.key = this.keyGram = this.opGram = new Float64Array(0);
    this.op = this.seg = this.ctxNear = this.ctxFar = new Int32Array(0);
    this.keyIndex = new Map();
    this.opIndex = new Map();
    this.gapFrames = [];
  }

  static of(input: EventStream, reasons: Set<number>, K: number): BytecodeView {
    const v = new BytecodeView();
    let n = 0;
    let gaps = 0;
    for (let i = 0; i < input.length; i++) {
      if (input.kind[i] === BYTECODE) n++;
      else if (input.kind[i] === GAP) gaps++;
    }
    v.n = n;
    v.pos = new Int32Array(n + 1);
    v.key = new Float64Array(n);
    v.op = new Int32Array(n);
    v.seg = new Int32Array(n);
    v.segStart = new Int32Array(gaps + 1).fill(-1);
    v.segEnd = new Int32Array(gaps + 1).fill(-1);
    v.ctxNear = new Int32Array(n);
    v.ctxFar = new Int32Array(n);
    const stack = new CallStack();
    for (let i = 0, b = 0, s = 0; i < input.length; i++) {
      const k = input.kind[i];
      if (k === ENTRY) stack.enter(input.method[i]);
      else if (k === EXIT) stack.exit(input.method[i]);
      else if (k === BYTECODE) {
        stack.at(input.method[i]);
        v.ctxNear[b] = stack.callers(CALLERS_NEAR);
        v.ctxFar[b] = stack.callers(CALLERS_FAR);
      }
      if (k === GAP) {
        s++;
        if (reasons.has(input.bci[i])) {
          v.gapAt.push(i);
          v.gapBefore.push(b);
          v.gapFrames.push(stack.topFrames(GAP_FRAMES, CALLERS_FAR));
        }
      } else if (k === BYTECODE) {
        v.pos[b] = i;
        v.key[b] = input.method[i] >= 0 && input.bci[i] >= 0 ? input.method[i] * 65536 + input.bci[i] : UNKNOWN;
        v.op[b] = input.opcode[i];
        v.seg[b] = s;
        if (v.segStart[s] < 0) v.segStart[s] = b;
        v.segEnd[s] = b;
        b++;
      }
    }
    v.pos[n] = input.length; // one past the last bytecode: the end of the last piece's trailing events
    v.keyGram = new Float64Array(n).fill(NaN);
    v.opGram = new Float64Array(n).fill(NaN);
    for (let j = K - 1; j < n; j++) {
      if (v.seg[j - K + 1] !== v.seg[j]) continue;
      let hk = 0x811c9dc5;
      let ho = 0x811c9dc5;
      let named = true;
      for (let t = j - K + 1; t <= j; t++) {
        const x = v.key[t];
        if (x === UNKNOWN) named = false;
        else {
          hk = Math.imul(hk ^ (x & 0xffffffff), 0x01000193) >>> 0;
          hk = Math.imul(hk ^ Math.floor(x / 4294967296), 0x01000193) >>> 0;
        }
        ho = Math.imul(ho ^ (v.op[t] & 0xffff), 0x01000193) >>> 0;
      }
      if (named) v.keyGram[j] = hk;
      v.opGram[j] = ho;
    }
    v.keyIndex = occurrenceIndex(v.keyGram);
    v.opIndex = occurrenceIndex(v.opGram);
    return v;
  }
}

/** Frames below a bytecode's own that its near and far calling contexts hash. */
const CALLERS_NEAR = 2;
const CALLERS_FAR = 4;
/** Frames kept per gap (BytecodeView.gapFrames). */
const GAP_FRAMES = 16;
/** How far down the stack an exit or a bytecode looks for its method's frame. */
const FRAME_SEARCH = 64;

/** The method ids of a thread's frames, replayed from its events (bounded: deeper frames are counted, not kept). */
class CallStack {
  private frames = new Int32Array(1024);
  private depth = 0;

  /** frames on the stack (deeper ones than are kept included) */
  get size(): number {
    return this.depth;
  }

  enter(m: number): void {
    if (this.depth === this.frames.length && this.depth < 1 << 20) {
      const f = new Int32Array(this.depth * 2);
      f.set(this.frames);
      this.frames = f;
    }
    if (this.depth < this.frames.length) this.frames[this.depth] = m;
    this.depth++;
  }

  /** An exit of method m (-1: unnamed, the top frame's): its frame and those above it go. */
  exit(m: number): void {
    if (m < 0) {
      if (this.depth > 0) this.depth--;
      return;
    }
    const d = this.find(m, 0);
    if (d >= 0) this.depth = d;
  }

  /** A bytecode of method m: a frame of it below the top has the control again, else it is a frame not seen begin. */
  at(m: number): void {
    if (m < 0 || (this.depth > 0 && this.top(0) === m)) return;
    const d = this.find(m, 1);
    if (d >= 0) this.depth = d + 1;
    else this.enter(m);
  }

  /** A hash of the methods of the `count` frames below the top (-2 where there is none). */
  callers(count: number, from = 0): number {
    let h = 0x811c9dc5;
    for (let k = from + 1; k <= from + count; k++) h = Math.imul(h ^ (this.top(k) + 2), 0x01000193);
    return h | 0;
  }

  /** The top `max` frames (fewer if the stack is shallower), top first: each one's method and callers(count) hash. */
  topFrames(max: number, count: number): { method: Int32Array; callers: Int32Array } {
    const d = Math.min(max, this.depth);
    const method = new Int32Array(d);
    const callers = new Int32Array(d);
    for (let k = 0; k < d; k++) {
      method[k] = this.top(k);
      callers[k] = this.callers(count, k);
    }
    return { method, callers };
  }

  /** The method of the frame `k` below the top (-1: unnamed or not kept, -2: none). */
  private top(k: number): number {
    const d = this.depth - 1 - k;
    return d < 0 ? -2 : d < this.frames.length ? this.frames[d] : -1;
  }

  /** The stack index of the nearest frame of m, from `skip` frames below the top, or -1. */
  private find(m: number, skip: number): number {
    for (let k = skip; k < FRAME_SEARCH; k++) {
      const t = this.top(k);
      if (t === -2) return -1;
      if (t === m) return this.depth - 1 - k;
    }
    return -1;
  }
}

/** Occurrences per gram hash, in trace order, as one flat array sliced per hash. */
function occurrenceIndex(gram: Float64Array): Map<number, Int32Array> {
  const counts = new Map<number, number>();
  for (let j = 0; j < gram.length; j++) {
    const h = gram[j];
    if (!Number.isNaN(h)) counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  let total = 0;
  for (const c of counts.values()) total += c;
  const flat = new Int32Array(total);
  const start = new Map<number, number>();
  let at = 0;
  for (const [h, c] of counts) {
    start.set(h, at);
    at += c;
  }
  const fillAt = new Map(start);
  for (let j = 0; j < gram.length; j++) {
    const h = gram[j];
    if (Number.isNaN(h)) continue;
    const p = fillAt.get(h)!;
    flat[p] = j;
    fillAt.set(h, p + 1);
  }
  const index = new Map<number, Int32Array>();
  for (const [h, c] of counts) index.set(h, flat.subarray(start.get(h)!, start.get(h)! + c));
  return index;
}

/** A fill's identity: its keys (the same code copied from two places is one candidate). */
function fillSignature(key: Float64Array, op: Int32Array, w: Walk): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x12345678;
  for (let p = 0; p < w.from.length; p++)
    for (let t = w.from[p]; t <= w.to[p]; t++) {
      const x = key[t] === UNKNOWN ? -1 - op[t] : key[t];
      h1 = Math.imul(h1 ^ (x & 0xffffffff), 0x01000193) >>> 0;
      h2 = Math.imul(h2 ^ Math.floor(x / 65536), 0x5bd1e995) >>> 0;
    }
  return `${w.bytecodes}:${h1}:${h2}`;
}
