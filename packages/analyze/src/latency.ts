/**
 * Latency histograms from PT timestamps between pairs of events: method entry -> its exit, monitorenter -> the
 * monitorexit that releases it in the same frame, and loop iterations (successive arrivals at a loop head within
 * one frame). Log-scaled (HDR-style) buckets, exact percentiles, and the time resolution of the trace. Definitions
 * in docs/profiles.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import { forEachInstruction, successors } from '@jportal/classfile';
import { EventWindow, PartResult, Profiled, ThreadEvents, windowsOf } from './model';
import { alignTable, clip, formatNs, methodDisplay, UNKNOWN_ROW } from './hot';
import { withRoom } from './typed';
import { runPass, StackWalker, ThreadWalk, WalkPass } from './walk';

const MONITORENTER = 194;
const MONITOREXIT = 195;
/** bcis go up to 65535: (method row, bci) keys are row * BCI_SPAN + bci */
const BCI_SPAN = 65536;

export type LatencyKind = 'method' | 'monitor' | 'loop';

export interface Bucket {
  /** lower bound (inclusive), ns */
  fromNs: number;
  /** upper bound (exclusive), ns */
  toNs: number;
  count: number;
}

export interface Histogram {
  kind: LatencyKind;
  /** index into Analysis.methods (-1 unknown) */
  method: number;
  /** method: -1; monitor: the monitorenter's bci; loop: the loop head's bci */
  bci: number;
  label: string;
  /** intervals measured */
  count: number;
  /** intervals left out because a gap lies between their two events */
  excludedGap: number;
  /** intervals left out because one end was not an event of its own (method: implicit entry or exit, e.g. an
   * exception unwound the frame or the frame was open at the end; monitor: the frame ended with the monitor held) */
  excludedIncomplete: number;
  /** intervals of 0 ns (both events at one timestamp: shorter than the resolution) */
  zero: number;
  minNs: number;
  meanNs: number;
  p50Ns: number;
  p90Ns: number;
  p99Ns: number;
  maxNs: number;
  /** whether p50/p90/p99 are exact (at most EXACT_DURATIONS intervals); else read from fine buckets, within 0.2% */
  percentilesExact: boolean;
  /** non-empty buckets, ascending */
  buckets: Bucket[];
}

export interface TimeResolution {
  /** TSC ticks per ns (the trace's TSC frequency) */
  tscPerNs: number;
  /** one TSC tick in ns */
  tickNs: number;
  /** the smallest nonzero difference between two successive distinct event timestamps of a thread */
  minDeltaTicks: number;
  minDeltaNs: number;
  /** the most frequent nonzero difference (in a PT trace with MTC: the MTC period) */
  commonDeltaTicks: number;
  commonDeltaNs: number;
  /** successive events with one timestamp, of all successive pairs */
  sameTimestampShare: number;
  /** successive events whose timestamp goes back (expected 0) */
  nonMonotonic: number;
}

export interface Latency {
  /** false when the events have no time (ground truth): no histograms */
  hasTime: boolean;
  resolution: TimeResolution;
  /** histograms by count descending (then label), each list cut to `top` */
  methods: Histogram[];
  monitors: Histogram[];
  loops: Histogram[];
  /** per kind over all its histograms (also those beyond `top`) */
  totals: Record<LatencyKind, { histograms: number; intervals: number; excludedGap: number; excludedIncomplete: number }>;
  /** monitorexits with no monitorenter of the same frame open */
  unmatchedMonitorExits: number;
  /** the bucket scheme: sub-buckets per power of two */
  subBuckets: number;
}

export interface LatencyOptions {
  /** histograms kept per kind (default all) */
  top?: number;
  /** sub-buckets per power of two (default 4: bucket width at most 25% of its lower bound) */
  subBuckets?: number;
  /** indices into Analysis.threads (default all) */
  threads?: number[];
  /** durations a histogram keeps one by one, its percentiles exact (default EXACT_DURATIONS) */
  exactDurations?: number;
}

/** Durations each histogram keeps one by one (its percentiles exact); past them, counts in fine buckets. */
export const EXACT_DURATIONS = 1 << 20;
/** Sub-buckets per power of two of the fine buckets: a percentile read from them is within 1/512 of the value. */
const FINE_SUB = 256;

/**
 * Durations of one (kind, method, bci), in ns, with the counts of what was left out. Each duration is kept up to
 * EXACT_DURATIONS of them; beyond, they are counted in fine log buckets (FINE_SUB per power of two), so a
 * histogram's memory is bounded however long the trace (luindex full's steady state makes a billion intervals in
 * a few minutes of run). Count, zero, min, mean and max stay exact.
 */
class Durations {
  constructor(private readonly exact: number) {}
  values: Float64Array | null = new Float64Array(8);
  fine: Float64Array | null = null;
  n = 0;
  sum = 0;
  zero = 0;
  min = Infinity;
  max = -Infinity;
  excludedGap = 0;
  excludedIncomplete = 0;
  add(ns: number): void {
    const i = this.n++;
    this.sum += ns;
    if (ns === 0) this.zero++;
    if (ns < this.min) this.min = ns;
    if (ns > this.max) this.max = ns;
    if (this.values) {
      if (i < this.values.length) {
        this.values[i] = ns;
        return;
      }
      if (i < this.exact) {
        const v = new Float64Array(Math.min(this.exact, Math.max(8, i * 2)));
        v.set(this.values);
        this.values = v;
        this.values[i] = ns;
        return;
      }
      this.fine = new Float64Array(1 + 64 * FINE_SUB);
      for (let k = 0; k < i; k++) this.fine[bucketIndex(this.values[k], FINE_SUB)]++;
      this.values = null;
    }
    this.fine![Math.min(this.fine!.length - 1, bucketIndex(ns, FINE_SUB))]++;
  }
}

class DurationTable {
  readonly byKey = new Map<number, Durations>();
  constructor(private readonly exact: number) {}
  get(key: number): Durations {
    let d = this.byKey.get(key);
    if (!d) this.byKey.set(key, (d = new Durations(this.exact)));
    return d;
  }
}

/** The bucket of `ns` with `sub` sub-buckets per power of two: 0 for [0, 1), then 1 + octave * sub + sub-bucket. */
export function bucketIndex(ns: number, sub: number): number {
  if (!(ns >= 1)) return 0;
  let e = Math.floor(Math.log2(ns));
  while (2 ** e > ns) e--;
  while (2 ** (e + 1) <= ns) e++;
  const s = Math.min(sub - 1, Math.floor((ns / 2 ** e - 1) * sub));
  return 1 + e * sub + s;
}

/** The bounds [from, to) of bucket `index`. */
export function bucketBounds(index: number, sub: number): [number, number] {
  if (index === 0) return [0, 1];
  const e = Math.floor((index - 1) / sub);
  const s = (index - 1) % sub;
  return [2 ** e * (1 + s / sub), 2 ** e * (1 + (s + 1) / sub)];
}

/** Nearest-rank percentile of sorted values: the smallest value with at least p% of the values at or below it. */
export function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

function histogramOf(kind: LatencyKind, a: Profiled, key: number, d: Durations, sub: number): Histogram {
  const row = kind === 'method' ? key : Math.floor(key / BCI_SPAN);
  const bci = kind === 'method' ? -1 : key % BCI_SPAN;
  const counts = new Map<number, number>();
  let p50 = NaN;
  let p90 = NaN;
  let p99 = NaN;
  if (d.values) {
    const v = d.values.slice(0, d.n).sort();
    for (let k = 0; k < v.length; k++) {
      const b = bucketIndex(v[k], sub);
      counts.set(b, (counts.get(b) ?? 0) + 1);
    }
    [p50, p90, p99] = [percentile(v, 50), percentile(v, 90), percentile(v, 99)];
  } else {
    const fine = d.fine!;
    for (let f = 0; f < fine.length; f++) {
      if (!fine[f]) continue;
      const [from, to] = bucketBounds(f, FINE_SUB);
      const b = f === 0 ? 0 : bucketIndex(Math.max(from, Math.min(to, (from + to) / 2)), sub);
      counts.set(b, (counts.get(b) ?? 0) + fine[f]);
    }
    [p50, p90, p99] = [50, 90, 99].map((p) => fineRank(fine, d, p));
  }
  const buckets = [...counts.entries()].sort((x, y) => x[0] - y[0]).map(([b, count]) => {
    const [fromNs, toNs] = bucketBounds(b, sub);
    return { fromNs, toNs, count };
  });
  const label = methodDisplay(a, row) + (bci >= 0 ? ` @${bci}` : '');
  const n = d.n;
  return {
    kind, method: row !== UNKNOWN_ROW ? row : -1, bci, label, count: n,
    excludedGap: d.excludedGap, excludedIncomplete: d.excludedIncomplete, zero: d.zero,
    minNs: n ? d.min : NaN, meanNs: n ? d.sum / n : NaN,
    p50Ns: p50, p90Ns: p90, p99Ns: p99, maxNs: n ? d.max : NaN,
    percentilesExact: !!d.values,
    buckets,
  };
}

/** The nearest-rank percentile p of durations counted in fine buckets: the middle of its bucket, within [min, max]. */
function fineRank(fine: Float64Array, d: Durations, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * d.n));
  let seen = 0;
  for (let f = 0; f < fine.length; f++) {
    seen += fine[f];
    if (seen < rank) continue;
    const [from, to] = bucketBounds(f, FINE_SUB);
    return Math.max(d.min, Math.min(d.max, f === 0 ? d.min : (from + to) / 2));
  }
  return d.max;
}

/** The time resolution observed in the threads' event timestamps. */
export function timeResolution(a: Profiled, threads: number[] = a.threads.map((_, k) => k)): TimeResolution {
  const r = new ResolutionCounter(a);
  for (const k of threads) {
    r.thread();
    for (const w of windowsOf(a, k)) r.window(w);
  }
  return r.result();
}

/** Positive whole deltas below this are counted in an array (ResolutionCounter). */
const SMALL_DELTAS = 1 << 16;

/** timeResolution's counts, fed window by window (thread() before each thread's first window). */
class ResolutionCounter {
  private minDelta = Infinity;
  private pairs = 0;
  private same = 0;
  private nonMonotonic = 0;
  private readonly deltas = new Map<number, number>();
  private readonly small = new Float64Array(SMALL_DELTAS);
  private prev = NaN;
  constructor(private readonly a: Profiled) {}

  thread(): void {
    this.prev = NaN;
  }

  window(t: ThreadEvents): void {
    let prev = this.prev;
    for (let i = 0; i < t.length; i++) {
      const d = t.tsc[i] - prev;
      prev = t.tsc[i];
      if (Number.isNaN(d)) continue;
      this.pairs++;
      if (d === 0) this.same++;
      else if (d < 0) this.nonMonotonic++;
      else {
        if (d < this.minDelta) this.minDelta = d;
        // (small whole deltas, the rule, counted in an array; others in a map)
        if (d < SMALL_DELTAS && d === Math.floor(d)) this.small[d]++;
        else this.deltas.set(d, (this.deltas.get(d) ?? 0) + 1);
      }
    }
    this.prev = prev;
  }

  result(): TimeResolution {
    const { a, minDelta, pairs, same, nonMonotonic } = this;
    let common = NaN;
    let best = 0;
    const counts = new Map<number, number>();
    this.small.forEach((n, d) => n > 0 && counts.set(d, n));
    for (const [d, n] of this.deltas) counts.set(d, n);
    for (const [d, n] of counts) if (n > best || (n === best && d < common)) [common, best] = [d, n];
    const ns = (ticks: number) => (a.tscPerNs > 0 ? ticks / a.tscPerNs : NaN);
    return {
      tscPerNs: a.tscPerNs, tickNs: ns(1),
      minDeltaTicks: Number.isFinite(minDelta) ? minDelta : NaN, minDeltaNs: Number.isFinite(minDelta) ? ns(minDelta) : NaN,
      commonDeltaTicks: common, commonDeltaNs: ns(common),
      sameTimestampShare: pairs ? same / pairs : 0, nonMonotonic,
    };
  }
}

/** The targets of a method's backward branches (bci -> 1), known loop heads before any iteration ran. */
function staticLoopHeads(a: Profiled, row: number): Uint8Array | null {
  const code = a.methods[row]?.info?.code;
  if (!code) return null;
  const heads = new Uint8Array(code.length);
  forEachInstruction(code, (bci) => {
    for (const s of successors(code, bci)) if (s >= 0 && s <= bci && s < code.length) heads[s] = 1;
  });
  return heads;
}

/**
 * Collects the three kinds of intervals of thread k. An interval [s, e] keeps the TSC of its start and the number
 * of gaps before it (it holds a gap iff more gaps were seen by its end), so it may span windows.
 */
function collectThread(a: Profiled, methods: DurationTable, monitors: DurationTable, loops: DurationTable, done: (unmatchedExits: number) => void): ThreadWalk {
  const unknown = UNKNOWN_ROW;
  const rowOf = (m: number) => (m < 0 ? unknown : m);
  /** gaps among the events before the current one */
  let gaps = 0;
  const ns = (startTsc: number, endTsc: number) => (endTsc - startTsc) / a.tscPerNs;
  // per open frame: TSC and gap count of its opening event
  let openTsc = new Float64Array(256);
  let openGaps = new Float64Array(256);
  let implicitOpen = new Uint8Array(256);
  // monitors held: frame depth, event index and (row, bci) key of their monitorenter
  let monDepth: Int32Array = new Int32Array(64);
  let monStart = new Float64Array(64);
  let monGaps = new Float64Array(64);
  let monKey = new Float64Array(64);
  let held = 0;
  let unmatchedExits = 0;
  // loops: per frame depth the bci of its last bytecode and the last arrival (event index) at each loop head
  let lastBci: Int32Array = new Int32Array(256);
  const arrivals: (Map<number, number> | undefined)[] = [];
  const arrivalGaps: (Map<number, number> | undefined)[] = [];
  // loop heads per method row: static (backward branch targets) and found running (undefined: not computed yet)
  const heads: (Uint8Array | null | undefined)[] = [];
  const visitor = {
    enter(w: StackWalker, i: number, implicit: boolean) {
      implicitOpen = withRoom(implicitOpen, w.depth + 1);
      implicitOpen[w.depth] = implicit ? 1 : 0;
      openTsc = withRoom(openTsc, w.depth + 1);
      openGaps = withRoom(openGaps, w.depth + 1);
      openTsc[w.depth] = w.t.tsc[i];
      openGaps[w.depth] = gaps;
      lastBci = withRoom(lastBci, w.depth + 1);
      lastBci[w.depth] = -1;
      arrivals[w.depth] = undefined;
      arrivalGaps[w.depth] = undefined;
    },
    exit(w: StackWalker, i: number, implicit: boolean) {
      const d = methods.get(rowOf(w.top));
      if (implicit || implicitOpen[w.depth]) d.excludedIncomplete++;
      else if (gaps > openGaps[w.depth]) d.excludedGap++;
      else d.add(ns(openTsc[w.depth], w.t.tsc[i]));
      while (held > 0 && monDepth[held - 1] >= w.depth) {
        held--;
        monitors.get(monKey[held]).excludedIncomplete++;
      }
    },
    gap() {
      gaps++;
    },
    bytecodes(w: StackWalker, from: number, to: number) {
      // (a run in the top frame: each event in turn)
      const t = w.t;
      const D = w.depth;
      const row = rowOf(w.top);
      for (let i = from; i < to; i++) {
        const op = t.opcode[i];
        if (op === MONITORENTER && t.bci[i] >= 0) {
          if (held === monDepth.length) {
            monDepth = withRoom(monDepth, held + 1);
            monStart = withRoom(monStart, held + 1);
            monGaps = withRoom(monGaps, held + 1);
            monKey = withRoom(monKey, held + 1);
          }
          monDepth[held] = D;
          monKey[held] = rowOf(w.top) * BCI_SPAN + t.bci[i];
          monGaps[held] = gaps;
          monStart[held++] = t.tsc[i];
        } else if (op === MONITOREXIT) {
          if (held > 0 && monDepth[held - 1] === D) {
            const s = monStart[--held];
            const d = monitors.get(monKey[held]);
            if (gaps > monGaps[held]) d.excludedGap++;
            else d.add(ns(s, t.tsc[i]));
          } else unmatchedExits++;
        }
        const b = t.bci[i];
        if (b < 0 || row === unknown) {
          lastBci[D] = -1;
          continue;
        }
        const back = lastBci[D] >= 0 && b <= lastBci[D];
        lastBci[D] = b;
        let h = heads[row];
        if (h === undefined) heads[row] = h = staticLoopHeads(a, row);
        if (back && !h?.[b]) {
          if (!h) heads[row] = h = new Uint8Array(Math.max(b + 1, a.methods[row]?.info?.code?.length ?? 0));
          h[b] = 1;
        }
        if (!h?.[b]) continue;
        let arr = arrivals[D];
        let arrGaps = arrivalGaps[D];
        if (!arr || !arrGaps) {
          arrivals[D] = arr = new Map();
          arrivalGaps[D] = arrGaps = new Map();
        }
        const prev = arr.get(b);
        if (back && prev !== undefined) {
          const d = loops.get(row * BCI_SPAN + b);
          if (gaps > arrGaps.get(b)!) d.excludedGap++;
          else d.add(ns(prev, t.tsc[i]));
        }
        arr.set(b, t.tsc[i]);
        arrGaps.set(b, gaps);
      }
    },
  };
  return { visitor, done: () => done(unmatchedExits) };
}

/** Latency histograms of the analysis (all threads together, or those of `opts.threads`). */
export function computeLatency(a: Profiled, opts: LatencyOptions = {}): Latency {
  return runPass(a, latencyPass(a, opts));
}

/**
 * computeLatency as a pass that can share its walk with others (runPasses). The intervals are collected while the
 * time resolution is counted; they are kept only if some thread's first event has a time.
 */
export function latencyPass(a: Profiled, opts: LatencyOptions = {}): WalkPass<Latency> {
  const exact = opts.exactDurations ?? EXACT_DURATIONS;
  const newTables = () => ({ method: new DurationTable(exact), monitor: new DurationTable(exact), loop: new DurationTable(exact) });
  const threads = new Set(opts.threads ?? a.threads.map((_, k) => k));
  const resolution = new ResolutionCounter(a);
  let timed = false;
  let tables = newTables();
  let unmatchedMonitorExits = 0;
  const thread = (k: number): ThreadWalk | undefined => {
    if (!threads.has(k)) return undefined;
    resolution.thread();
    let first = true;
    const window = (w: EventWindow) => {
      if (first && a.threads[k].length > 0 && w.length > 0 && !Number.isNaN(w.tsc[0])) timed = true;
      first = false;
      resolution.window(w);
    };
    if (!(a.tscPerNs > 0)) return { visitor: {}, window };
    const collect = collectThread(a, tables.method, tables.monitor, tables.loop, (n) => {
      unmatchedMonitorExits += n;
    });
    return { ...collect, window };
  };
  return {
    thread,
    finish: () => {
      const hasTime = a.tscPerNs > 0 && timed;
      if (!hasTime) {
        tables = newTables();
        unmatchedMonitorExits = 0;
      }
      return latencyOf(a, opts, hasTime, resolution.result(), tables, unmatchedMonitorExits);
    },
  };
}

function latencyOf(a: Profiled, opts: LatencyOptions, hasTime: boolean, resolution: TimeResolution, tables: Record<LatencyKind, DurationTable>, unmatchedMonitorExits: number): Latency {
  const sub = opts.subBuckets ?? 4;
  const top = opts.top ?? Infinity;
  const totals = {} as Latency['totals'];
  const lists = {} as Record<LatencyKind, Histogram[]>;
  for (const kind of ['method', 'monitor', 'loop'] as const) {
    const all: Histogram[] = [];
    const tot = { histograms: 0, intervals: 0, excludedGap: 0, excludedIncomplete: 0 };
    for (const [key, d] of tables[kind].byKey) {
      tot.excludedGap += d.excludedGap;
      tot.excludedIncomplete += d.excludedIncomplete;
      tot.intervals += d.n;
      if (!d.n) continue;
      tot.histograms++;
      all.push(histogramOf(kind, a, key, d, sub));
    }
    all.sort((x, y) => y.count - x.count || (x.label < y.label ? -1 : x.label > y.label ? 1 : 0));
    lists[kind] = all.slice(0, top);
    totals[kind] = tot;
  }
  return { hasTime, resolution, methods: lists.method, monitors: lists.monitor, loops: lists.loop, totals, unmatchedMonitorExits, subBuckets: sub };
}

// ---- latency.txt ----

const KIND_TITLES: Record<LatencyKind, string> = {
  method: 'Method entry -> exit (calls that returned, no gap between)',
  monitor: 'monitorenter -> monitorexit in the same frame (by monitorenter bci)',
  loop: 'Loop iterations: successive arrivals at a loop head in one frame (by head bci)',
};

function summaryTable(list: Histogram[]): string {
  const head = ['what', 'count', 'zero', 'gap-excl', 'incomplete', 'min', 'p50', 'p90', 'p99', 'max'];
  const rows = [head, ...list.map((h) => [clip(h.label, 100), `${h.count}`, `${h.zero}`, `${h.excludedGap}`, `${h.excludedIncomplete}`, formatNs(h.minNs), ...[h.p50Ns, h.p90Ns, h.p99Ns].map((x) => (h.percentilesExact ? '' : '~') + formatNs(x)), formatNs(h.maxNs)])];
  return alignTable(rows, head.map((_, c) => c > 0));
}

/** The buckets of one histogram as text bars. */
export function bucketBars(h: Histogram, width = 40): string {
  const most = Math.max(...h.buckets.map((b) => b.count));
  const rows = h.buckets.map((b) => [`[${formatNs(b.fromNs)}, ${formatNs(b.toNs)})`, `${b.count}`, '#'.repeat(Math.max(1, Math.round((width * b.count) / most)))]);
  return alignTable(rows, [false, true, false]);
}

export function resolutionText(r: TimeResolution): string {
  if (!(r.tscPerNs > 0)) return 'Time resolution: no time in these events (ground truth has none).';
  return [
    `Time resolution: TSC ${r.tscPerNs.toFixed(4)} ticks/ns (1 tick = ${r.tickNs.toFixed(3)} ns). PT timestamps come from TSC and MTC`,
    `packets; an event's time is that of the packet before the code it stands for, so events between two timing`,
    `packets share one timestamp. Measured: smallest nonzero step between successive distinct timestamps`,
    `${r.minDeltaTicks} ticks (${formatNs(r.minDeltaNs)}); most frequent step ${r.commonDeltaTicks} ticks (${formatNs(r.commonDeltaNs)}, the`,
    `MTC period: the effective resolution); ${(100 * r.sameTimestampShare).toFixed(1)}% of successive events share a timestamp.`,
    `Durations below the resolution read as 0 ns ("zero" column); timestamps going back: ${r.nonMonotonic}.`,
  ].join('\n');
}

/** latency.json and latency.txt in `outDir`. */
export function writeLatency(a: Profiled, outDir: string, opts: LatencyOptions = {}, built?: Latency): PartResult {
  const top = opts.top ?? 20;
  const lat = built ?? computeLatency(a, { ...opts, top });
  fs.mkdirSync(outDir, { recursive: true });
  const parts = [`Latency histograms (${a.source.kind} ${a.source.dir}); buckets: ${lat.subBuckets} per power of two, percentiles exact (nearest rank) up to ${EXACT_DURATIONS.toLocaleString('en-US')} intervals per histogram, beyond that within 0.2% (marked ~).`, resolutionText(lat.resolution)];
  if (lat.hasTime) {
    for (const kind of ['method', 'monitor', 'loop'] as const) {
      const list = kind === 'method' ? lat.methods : kind === 'monitor' ? lat.monitors : lat.loops;
      const tot = lat.totals[kind];
      parts.push(`${KIND_TITLES[kind]}: ${tot.intervals} intervals in ${tot.histograms} histograms (top ${list.length} shown), ${tot.excludedGap} left out for a gap, ${tot.excludedIncomplete} incomplete`);
      if (list.length) {
        parts.push(summaryTable(list));
        for (const h of list.slice(0, 3)) parts.push(`${h.label}:\n${bucketBars(h)}`);
      }
    }
    if (lat.unmatchedMonitorExits) parts.push(`monitorexits without a monitorenter in the same frame: ${lat.unmatchedMonitorExits}`);
  }
  fs.writeFileSync(path.join(outDir, 'latency.txt'), parts.join('\n\n') + '\n');
  fs.writeFileSync(path.join(outDir, 'latency.json'), JSON.stringify({ format: 'jportal-latency', version: 1, ...lat }) + '\n');
  return {
    files: ['latency.txt', 'latency.json'],
    summary: {
      hasTime: lat.hasTime,
      resolutionNs: lat.resolution.commonDeltaNs,
      minStepNs: lat.resolution.minDeltaNs,
      methodIntervals: lat.totals.method.intervals,
      monitorIntervals: lat.totals.monitor.intervals,
      loopIterations: lat.totals.loop.intervals,
    },
  };
}
