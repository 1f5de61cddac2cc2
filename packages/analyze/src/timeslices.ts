/**
 * Time slices of a thread: one per method frame (from the shared stack rules of walk.ts) and one per gap, with
 * start and end on a common clock, ready for timelines (Chrome trace, speedscope, report.html).
 *
 * Clock: TSC converted to integer nanoseconds relative to the capture's start (the analysis' startTsc; when it is
 * unknown, the first event of all threads), made monotone per thread (an event earlier than its predecessor, or
 * without time, takes the predecessor's time). When the analysis has no time (ground truth: NaN TSC, tscPerNs 0)
 * the clock is the event index within the thread. The capture's start is known before any event is read, so a
 * walk can place events on the clock as they are decoded.
 *
 * A frame spans from the event that opened it to the event that closed it (the exit, the event whose implicit
 * pop closed it, or the thread's last event). A gap is a leaf in the top frame, from its start to where data
 * resumes, clamped to the next event so it never sticks out of its frame. Every slice carries its position in
 * the thread's pre-order (`pre`) and the end of its subtree (`post`): X is an ancestor of Y iff
 * X.pre < Y.pre < X.post. Any subset of the slices is still properly nested, so slices can be dropped freely.
 */
import { GAP_REASONS } from '@jportal/decode';
import { EventWindow, Profiled, ThreadEvents, ThreadInfo, windowsOf } from './model';
import { withRoom } from './typed';
import { runPass, StackWalker, ThreadWalk, WalkPass } from './walk';

export type ClockKind = 'tsc-ns' | 'event-index';

export interface Clock {
  kind: ClockKind;
  /** TSC of time 0 (tsc-ns clock); NaN otherwise */
  t0Tsc: number;
  tscPerNs: number;
}

/** Slice kinds (the `kind` column of Slices). */
export const enum SliceKind {
  Frame = 0,
  Gap = 1,
}

/** Column-wise slices of one thread, in pre-order once sorted (`sortSlices`). */
export interface Slices {
  count: number;
  kind: Uint8Array;
  /** method index (frames; -1 unknown) or gap reason (gaps) */
  id: Int32Array;
  depth: Int32Array;
  pre: Float64Array;
  post: Float64Array;
  start: Float64Array;
  end: Float64Array;
}

export const gapName = (reason: number): string => `gap: ${GAP_REASONS[reason] ?? 'unknown'}`;

/**
 * Chooses the clock: TSC from the capture's start when the analysis has a rate and knows that start (a thread
 * without any time then sits at 0); otherwise TSC from the first event when every non-empty thread has some time.
 */
export function chooseClock(a: Profiled): Clock {
  if (a.tscPerNs > 0 && Number.isFinite(a.startTsc)) return { kind: 'tsc-ns', t0Tsc: a.startTsc!, tscPerNs: a.tscPerNs };
  let t0 = Infinity;
  let ok = a.tscPerNs > 0;
  for (let k = 0; k < a.threads.length; k++) {
    if (!ok) break;
    const t = a.threads[k];
    let first = NaN;
    search: for (const w of windowsOf(a, k))
      for (let i = 0; i < w.length; i++)
        if (Number.isFinite(w.tsc[i])) {
          first = w.tsc[i];
          break search;
        }
    if (t.length > 0 && Number.isNaN(first)) ok = false;
    else if (first < t0) t0 = first;
  }
  if (!ok || t0 === Infinity) return { kind: 'event-index', t0Tsc: NaN, tscPerNs: 0 };
  return { kind: 'tsc-ns', t0Tsc: t0, tscPerNs: a.tscPerNs };
}

/** Per-event time of a thread on the clock (monotone; integer ns or the event index). One extra slot at the end. */
export function eventTimes(t: ThreadEvents, c: Clock): Float64Array {
  const times = new TimeCursor(c);
  times.window({ ...t, base: 0 });
  const out = new Float64Array(t.length + 1);
  for (let i = 0; i <= t.length; i++) out[i] = times.time(i);
  return out;
}

/**
 * The clock's time at the events of one thread, window by window, asked at event indexes that never go back
 * within a window (a walk's order). An event's time is the latest TSC up to it (monotone: an event with no TSC, or
 * one behind, keeps the time before), in whole ns from the clock's t0, never below 0; on an event-index clock,
 * the event's index within the thread. Only the TSCs are scanned, and an index's time is made when it is asked:
 * rounding is monotone, so the latest time is the time of the latest TSC. (Times used to be computed for every
 * event, four passes over luindex short's 110 M events, of which the walks read a few percent: entries, exits,
 * gaps.)
 */
export class TimeCursor {
  private w: EventWindow | undefined;
  /** events [0, scanned) of the current window are in maxTsc */
  private scanned = 0;
  /** the latest finite TSC so far (-Infinity: none yet); a typed array, not a field, so the scan stays unboxed */
  private readonly maxTsc = new Float64Array(1).fill(-Infinity);
  constructor(private readonly c: Clock) {}

  /** the next window of the thread (the previous one is left) */
  window(w: EventWindow): void {
    if (this.w && this.c.kind !== 'event-index') this.scanTo(this.w, this.w.length);
    this.w = w;
    this.scanned = 0;
  }

  /** the time of event i of the current window (i = its length: the time after its last event, as end()) */
  time(i: number): number {
    const w = this.w;
    if (!w) return 0;
    if (this.c.kind === 'event-index') return w.base + Math.min(i, w.length);
    this.scanTo(w, Math.min(i + 1, w.length));
    return this.now();
  }

  /** the time after the last event of the windows so far */
  end(): number {
    const w = this.w;
    if (!w) return 0;
    return this.time(w.length);
  }

  private scanTo(w: EventWindow, to: number): void {
    if (this.scanned >= to) return;
    const tsc = w.tsc;
    const max = this.maxTsc;
    for (let i = this.scanned; i < to; i++) {
      const x = tsc[i];
      if (x > max[0] && Number.isFinite(x)) max[0] = x;
    }
    this.scanned = to;
  }

  private now(): number {
    const x = this.maxTsc[0];
    if (x === -Infinity) return 0;
    const ns = Math.round((x - this.c.t0Tsc) / this.c.tscPerNs);
    return ns > 0 ? ns : 0;
  }
}

/** The end of a gap that ran from `start` to TSC `endTsc` on the clock: where data resumes, at most `next`. */
function gapEnd(endTsc: number, start: number, next: number, c: Clock): number {
  if (c.kind === 'event-index') return next;
  if (!Number.isFinite(endTsc)) return start;
  const ns = Math.round((endTsc - c.t0Tsc) / c.tscPerNs);
  return Math.max(start, Math.min(ns, next));
}

/** Buckets of slice durations: 8 per octave, so a threshold can be chosen that keeps at most a budget. */
const PER_OCTAVE = 8;
const BUCKETS = 64 * PER_OCTAVE;
const bucketOf = (d: number): number => (d <= 0 ? 0 : Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(d) * PER_OCTAVE)));
/** The smallest duration of bucket b (inverse of bucketOf, rounded up so bucketOf(lowerBound(b)) >= b). */
const lowerBound = (b: number): number => (b === 0 ? 0 : Math.ceil(Math.pow(2, (b - 1) / PER_OCTAVE)));

export class DurationHistogram {
  readonly counts = new Float64Array(BUCKETS);
  total = 0;
  add(d: number): void {
    this.counts[bucketOf(d)]++;
    this.total++;
  }
  /** the smallest threshold (a bucket's lower bound, >= min) such that at most `budget` durations are >= it */
  threshold(budget: number, min: number): number {
    let kept = 0;
    let b = BUCKETS - 1;
    for (; b >= 0; b--) {
      if (kept + this.counts[b] > budget) break;
      kept += this.counts[b];
    }
    // buckets above b fit; everything from bucket b+1 up is kept
    return Math.max(min, b < 0 ? 0 : lowerBound(b + 1));
  }
  /** how many durations are >= d (bucket resolution; exact when d is a bucket's lower bound) */
  atLeast(d: number): number {
    let n = 0;
    for (let b = bucketOf(d); b < BUCKETS; b++) n += this.counts[b];
    return n;
  }
}

class SliceBuilder implements Slices {
  count = 0;
  kind = new Uint8Array(1024);
  id = new Int32Array(1024);
  depth = new Int32Array(1024);
  pre = new Float64Array(1024);
  post = new Float64Array(1024);
  start = new Float64Array(1024);
  end = new Float64Array(1024);

  add(kind: number, id: number, depth: number, pre: number, post: number, start: number, end: number): void {
    if (this.count === this.kind.length) this.grow();
    const k = this.count++;
    this.kind[k] = kind;
    this.id[k] = id;
    this.depth[k] = depth;
    this.pre[k] = pre;
    this.post[k] = post;
    this.start[k] = start;
    this.end[k] = end;
  }

  /**
   * Keeps the gaps and, of the frames, those at least `threshold` long, the first `cap` of them in order (the
   * rest go); returns the frames kept.
   */
  keepFrames(threshold: number, cap: number): number {
    let out = 0;
    let frames = 0;
    for (let k = 0; k < this.count; k++) {
      if (this.kind[k] === SliceKind.Frame) {
        if (!(this.end[k] - this.start[k] >= threshold && frames < cap)) continue;
        frames++;
      }
      if (out !== k) {
        this.kind[out] = this.kind[k];
        this.id[out] = this.id[k];
        this.depth[out] = this.depth[k];
        this.pre[out] = this.pre[k];
        this.post[out] = this.post[k];
        this.start[out] = this.start[k];
        this.end[out] = this.end[k];
      }
      out++;
    }
    this.count = out;
    return frames;
  }

  /** Drops the frames shorter than `threshold` (keepFrames without a cap); returns the frames left. */
  dropFramesUnder(threshold: number): number {
    return this.keepFrames(threshold, Infinity);
  }

  private grow(): void {
    const n = this.kind.length * 2;
    const g = <T extends Uint8Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a as never);
      return b;
    };
    this.kind = g(this.kind, (m) => new Uint8Array(m));
    this.id = g(this.id, (m) => new Int32Array(m));
    this.depth = g(this.depth, (m) => new Int32Array(m));
    this.pre = g(this.pre, (m) => new Float64Array(m));
    this.post = g(this.post, (m) => new Float64Array(m));
    this.start = g(this.start, (m) => new Float64Array(m));
    this.end = g(this.end, (m) => new Float64Array(m));
  }
}

export interface CollectStats {
  frames: number;
  framesKept: number;
  gaps: number;
  gapsKept: number;
}

/** Reorders slices by pre-order serial (they are collected when they close). */
export function sortSlices(s: Slices): Slices {
  const n = s.count;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const pre = s.pre;
  order.sort((x, y) => pre[x] - pre[y]);
  const pick = <T extends Uint8Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
    const b = make(n);
    for (let i = 0; i < n; i++) b[i] = a[order[i]];
    return b;
  };
  return {
    count: n,
    kind: pick(s.kind, (m) => new Uint8Array(m)),
    id: pick(s.id, (m) => new Int32Array(m)),
    depth: pick(s.depth, (m) => new Int32Array(m)),
    pre: pick(s.pre, (m) => new Float64Array(m)),
    post: pick(s.post, (m) => new Float64Array(m)),
    start: pick(s.start, (m) => new Float64Array(m)),
    end: pick(s.end, (m) => new Float64Array(m)),
  };
}

export interface ThreadSlices {
  thread: ThreadInfo;
  slices: Slices;
  stats: CollectStats;
  /** the thread's last time on the clock */
  endTime: number;
}

export interface SliceSet {
  clock: Clock;
  threads: ThreadSlices[];
  /** frames shorter than this were left out (clock units) */
  threshold: number;
  frames: number;
  framesKept: number;
  gaps: number;
  gapsKept: number;
}

/**
 * The slices of every thread, at most `maxFrames` frames in all: when there are more, the shortest frames go
 * (a duration threshold common to all threads), so what remains is the outline of every thread.
 */
export function sliceAnalysis(a: Profiled, opts: SliceOptions = {}): SliceSet {
  return runPass(a, slicePass(a, opts));
}

export interface SliceOptions {
  minDuration?: number;
  maxFrames?: number;
  maxGaps?: number;
}

/** frames closed between two updates of the running threshold */
const THRESHOLD_EVERY = 4096;

/**
 * sliceAnalysis as a pass that can share its walk with others (runPasses), in one read. The threshold depends on
 * every frame's duration, known only at the end; but durations only add to the histogram, so the threshold of the
 * durations so far only rises, and a frame under it is under the final one too. So the walk keeps each frame at
 * least as long as the threshold so far (updated every THRESHOLD_EVERY frames; when more than twice the budget
 * are kept, those under it go), and the end applies the final threshold to what was kept, in the order the
 * frames closed: the same slices, and the same budget cuts, as a second read with the final threshold.
 */
export function slicePass(a: Profiled, opts: SliceOptions = {}): WalkPass<SliceSet> {
  const clock = chooseClock(a);
  const min = opts.minDuration ?? 0;
  const maxFrames = opts.maxFrames ?? 2_000_000;
  const maxGaps = opts.maxGaps ?? Math.max(1, Math.floor(maxFrames / 4));
  const h = new DurationHistogram();
  const thresholdOf = () => (h.atLeast(min) > maxFrames ? h.threshold(maxFrames, min) : min);
  let running = min;
  let checked = 0;
  let held = 0;
  let gapsLeft = maxGaps;
  const kept: { k: number; s: SliceBuilder; stats: CollectStats; endTime: number }[] = [];
  const open: SliceBuilder[] = [];
  const update = () => {
    running = thresholdOf();
    checked = h.total;
    if (held <= 2 * maxFrames) return;
    held = 0;
    for (const s of [...kept.map((x) => x.s), ...open]) held += s.dropFramesUnder(running);
  };
  const thread = (k: number): ThreadWalk => {
    const s = new SliceBuilder();
    open.push(s);
    const stats: CollectStats = { frames: 0, framesKept: 0, gaps: 0, gapsKept: 0 };
    const gapBudget = gapsLeft;
    const times = new TimeCursor(clock);
    let serial = 0;
    // pre-order serial and start time of each open frame
    let openPre = new Float64Array(256);
    let openTime = new Float64Array(256);
    // a gap that ended a window: its end waits for the next event's time
    let gap: { reason: number; depth: number; pre: number; post: number; start: number; endTsc: number } | undefined;
    const at = (i: number) => times.time(i);
    const visitor = {
      enter(w: StackWalker, i: number) {
        openPre = withRoom(openPre, w.depth + 1);
        openTime = withRoom(openTime, w.depth + 1);
        openPre[w.depth] = serial++;
        openTime[w.depth] = at(i);
      },
      exit(w: StackWalker, i: number) {
        stats.frames++;
        const d = w.depth;
        const start = openTime[d];
        const end = at(i);
        h.add(end - start);
        if (end - start >= running) {
          s.add(SliceKind.Frame, w.stack[d], d, openPre[d], serial, start, end);
          held++;
        }
        if (h.total - checked >= THRESHOLD_EVERY) update();
      },
      gap(w: StackWalker, i: number) {
        stats.gaps++;
        const pre = serial++;
        if (stats.gapsKept < gapBudget) {
          stats.gapsKept++;
          const t = w.t;
          const start = at(i);
          if (i + 1 < t.length) s.add(SliceKind.Gap, t.bci[i], w.depth + 1, pre, serial, start, gapEnd(t.endTsc[i], start, at(i + 1), clock));
          else gap = { reason: t.bci[i], depth: w.depth + 1, pre, post: serial, start, endTsc: t.endTsc[i] };
        }
      },
    };
    return {
      visitor,
      window: (w: EventWindow) => {
        times.window(w);
        if (gap) s.add(SliceKind.Gap, gap.reason, gap.depth, gap.pre, gap.post, gap.start, gapEnd(gap.endTsc, gap.start, at(0), clock));
        gap = undefined;
      },
      done: () => {
        const endTime = times.end();
        if (gap) s.add(SliceKind.Gap, gap.reason, gap.depth, gap.pre, gap.post, gap.start, gapEnd(gap.endTsc, gap.start, endTime, clock));
        gapsLeft -= stats.gapsKept;
        open.splice(open.indexOf(s), 1);
        kept.push({ k, s, stats, endTime });
      },
    };
  };
  const finish = (): SliceSet => {
    const threshold = thresholdOf();
    const threads: ThreadSlices[] = [];
    const set: SliceSet = { clock, threads, threshold, frames: 0, framesKept: 0, gaps: 0, gapsKept: 0 };
    for (const { k, s, stats, endTime } of kept) {
      stats.framesKept = s.keepFrames(threshold, maxFrames - set.framesKept);
      set.frames += stats.frames;
      set.framesKept += stats.framesKept;
      set.gaps += stats.gaps;
      set.gapsKept += stats.gapsKept;
      threads.push({ thread: a.threads[k], slices: sortSlices(s), stats, endTime });
    }
    return set;
  };
  return { thread, finish };
}
