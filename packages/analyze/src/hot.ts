/**
 * Hot methods: per method, bytecodes executed (exclusive: in its own frames; inclusive: while it is on the stack,
 * recursion counted once), calls (frames opened, with or without an entry event), and PT time (exclusive and
 * inclusive), split by tier; per thread and in total. Definitions in docs/profiles.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import { AnalysisMethod, Kind, Origin, PartResult, Profiled, ThreadEvents, TIER_NAMES } from './model';
import { withRoom } from './typed';
import { runPass, StackWalker, ThreadWalk, WalkPass, WalkStats } from './walk';

/** Tier classes of the split: the five tiers of model.ts, then events recovery copied into gaps. */
export const TIER_CLASS_NAMES = [...TIER_NAMES, 'recovered'];
export const TIER_CLASSES = TIER_CLASS_NAMES.length;
export const RECOVERED_CLASS = TIER_CLASSES - 1;

/** The tier class of event `i`: `recovered` for events recovery copied into a gap, else the event's tier. */
export function tierClassOf(t: ThreadEvents, i: number): number {
  return t.origin[i] === Origin.Recovered ? RECOVERED_CLASS : Math.min(t.tier[i], RECOVERED_CLASS - 1);
}

/**
 * The row of the unknown method (-1) where rows are method ids (keys, tables): above any method id. (Not the row
 * after the last method: the method table grows while a trace is streamed, stream.ts.)
 */
export const UNKNOWN_ROW = 0xffffff;

/** Method label with descriptor, e.g. java.lang.String.hashCode()I; "(unknown)" for the unknown row. */
export function methodDisplay(a: Profiled, row: number): string {
  const m: AnalysisMethod | undefined = a.methods[row];
  return m ? `${m.className.replace(/\//g, '.')}.${m.name}${m.signature}` : '(unknown)';
}

/**
 * Attributes the time between events: the interval [tsc[j], tsc[j+1]) belongs to whatever was active after event
 * j ran. `advance(i, ...)` hands out the intervals of every event before `i` not handed out yet; call it before
 * the stack changes at event i, so that all of them belong to the current top frame (events without a visitor
 * callback do not change the stack). Intervals that start at a gap are lost time; intervals with a NaN end are
 * skipped; negative ones (never seen in a decoded thread) are counted and skipped. The thread's last event has no
 * interval: `advance(t.length)` of the last window hands it out without one.
 *
 * Window by window: `window(w)` before each window's events after the first. Events not handed out yet are kept
 * (copied) across the switch, so callbacks get the events they are about (`src`, `j`) from wherever they are.
 */
export class IntervalClock {
  /** index within the thread of the first event not handed out */
  private pending = 0;
  private t: ThreadEvents;
  private base = 0;
  /** copies of the events [carryBase, base) not handed out when the window changed */
  private carry: ThreadEvents | undefined;
  private carryBase = 0;
  negative = 0;
  constructor(t?: ThreadEvents, base = 0) {
    this.t = t ?? emptyEvents(0);
    this.base = base;
  }

  /** The next window of the thread (events from `base` on). */
  window(w: ThreadEvents, base: number): void {
    const from = this.pending;
    const end = this.base + this.t.length;
    if (from < end) {
      // keep the events not handed out: the old carry's still pending ones, then the window's
      const keep = emptyEvents(end - from);
      let k = 0;
      const copy = (src: ThreadEvents, j0: number, j1: number) => {
        for (let j = j0; j < j1; j++, k++) {
          keep.kind[k] = src.kind[j];
          keep.method[k] = src.method[j];
          keep.bci[k] = src.bci[j];
          keep.opcode[k] = src.opcode[j];
          keep.tsc[k] = src.tsc[j];
          keep.endTsc[k] = src.endTsc[j];
          keep.origin[k] = src.origin[j];
          keep.tier[k] = src.tier[j];
        }
      };
      if (this.carry && from < this.base) copy(this.carry, from - this.carryBase, this.carry.length);
      copy(this.t, Math.max(0, from - this.base), this.t.length);
      this.carry = keep;
      this.carryBase = from;
    } else this.carry = undefined;
    this.t = w;
    this.base = base;
  }

  /**
   * Calls `interval(src, j, ticks)` for each non-gap interval of events [pending, i) (ticks may be 0; `src` holds
   * the event at j), `lost(ticks)` for each interval starting at a gap, and `event(src, j)` for every event handed
   * out (with or without time).
   */
  advance(
    i: number,
    interval: (src: ThreadEvents, j: number, ticks: number) => void,
    lost: (ticks: number) => void,
    event?: (src: ThreadEvents, j: number) => void,
  ): void {
    const t = this.t;
    const base = this.base;
    const c = this.carry;
    if (c && this.pending < base) {
      for (let j = this.pending - this.carryBase; j < c.length; j++) {
        event?.(c, j);
        const next = j + 1 < c.length ? c.tsc[j + 1] : t.length > 0 ? t.tsc[0] : NaN;
        this.hand(c, j, next - c.tsc[j], interval, lost);
      }
      this.carry = undefined;
      this.pending = base;
    }
    const last = t.length - 1;
    for (let j = this.pending - base; j < i; j++) {
      event?.(t, j);
      if (j >= last) continue;
      this.hand(t, j, t.tsc[j + 1] - t.tsc[j], interval, lost);
    }
    if (base + i > this.pending) this.pending = base + i;
  }

  private hand(src: ThreadEvents, j: number, dt: number, interval: (src: ThreadEvents, j: number, ticks: number) => void, lost: (ticks: number) => void): void {
    if (!(dt >= 0)) {
      if (dt < 0) this.negative++;
      return;
    }
    if (src.kind[j] === Kind.Gap) lost(dt);
    else interval(src, j, dt);
  }
}

/** Events columns of `n` events (zeros), named nothing: scratch space. */
function emptyEvents(n: number): ThreadEvents {
  return {
    name: '', tid: -1, javaTid: -1, length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n),
    tsc: new Float64Array(n), endTsc: new Float64Array(n), origin: new Uint8Array(n), tier: new Uint8Array(n),
  };
}

export interface MethodHot {
  /** index into Analysis.methods; -1 the unknown method */
  method: number;
  label: string;
  exclBytecodes: number;
  inclBytecodes: number;
  /** frames opened (entry events and implicit frames) */
  calls: number;
  /** of which without an entry event */
  implicitCalls: number;
  exclNs: number;
  inclNs: number;
  /** exclusive bytecodes per tier class (TIER_CLASS_NAMES) */
  bytecodesByTier: number[];
  /** exclusive time per tier class, ns */
  nsByTier: number[];
}

export interface ThreadHot {
  name: string;
  tid: number;
  /** bytecode events of the thread */
  bytecodes: number;
  /** of which ran with no frame on the stack (unknown method, empty stack): in no method's counts */
  bytecodesNoFrame: number;
  /** time attributed to frames, ns */
  timeNs: number;
  /** time in intervals that start at a gap (PT data lost or undecodable), ns */
  lostNs: number;
  /** time with an empty stack, ns */
  noFrameNs: number;
  walk: WalkStats;
  /** methods with a bytecode, call or time, by exclusive bytecodes descending (then inclusive, then label) */
  methods: MethodHot[];
}

export interface HotMethods {
  /** whether the events have time (false for ground truth) */
  hasTime: boolean;
  tscPerNs: number;
  threads: ThreadHot[];
  /** the threads summed (inclusive counts add up: a method's frames in different threads are disjoint) */
  total: ThreadHot;
}

const SUMS = ['excl', 'incl', 'calls', 'implicitCalls', 'exclTicks', 'inclTicks'] as const;
const TIER_SUMS = ['tierBytecodes', 'tierTicks'] as const;

/**
 * Per-method sums of one thread, in slots: method m in slot m + 1, the unknown method in slot 0. `ensure(methods)`
 * before events of methods up to `methods - 1` are added (the method table grows while a trace is streamed).
 */
class HotAccumulator {
  excl = new Float64Array(0);
  incl = new Float64Array(0);
  calls = new Float64Array(0);
  implicitCalls = new Float64Array(0);
  exclTicks = new Float64Array(0);
  inclTicks = new Float64Array(0);
  tierBytecodes = new Float64Array(0);
  tierTicks = new Float64Array(0);
  /** slots with room */
  slots = 0;
  bytecodes = 0;
  bytecodesNoFrame = 0;
  ticks = 0;
  lostTicks = 0;
  noFrameTicks = 0;
  constructor(methods: number) {
    this.ensure(methods);
  }

  /** room for methods 0 .. methods - 1 (and the unknown one) */
  ensure(methods: number): void {
    const need = methods + 1;
    if (need <= this.slots) return;
    for (const k of SUMS) this[k] = withRoom(this[k], need);
    for (const k of TIER_SUMS) this[k] = withRoom(this[k], need * TIER_CLASSES);
    this.slots = this.excl.length;
  }

  add(o: HotAccumulator): void {
    this.ensure(o.slots - 1);
    for (const k of [...SUMS, ...TIER_SUMS]) {
      const dst = this[k];
      const src = o[k];
      for (let r = 0; r < src.length; r++) dst[r] += src[r];
    }
    this.bytecodes += o.bytecodes;
    this.bytecodesNoFrame += o.bytecodesNoFrame;
    this.ticks += o.ticks;
    this.lostTicks += o.lostTicks;
    this.noFrameTicks += o.noFrameTicks;
  }
}

/** A walk of one thread that fills `acc`; `done` gets the walk's stats and whether any event has time. */
function accumulateThread(a: Profiled, acc: HotAccumulator, done: (r: { walk: WalkStats; hasTime: boolean }) => void): ThreadWalk {
  // (the accumulator's slots: the unknown method in 0)
  const rowOf = (m: number) => m + 1;
  let onStack = new Int32Array(acc.slots);
  let bytecodesAtFirst = new Float64Array(acc.slots);
  let ticksAtFirst = new Float64Array(acc.slots);
  const clock = new IntervalClock();
  let t: ThreadEvents | undefined;
  let hasTime = false;
  let top = -1; // row the pending intervals belong to; -1: no frame
  let framed = 0; // bytecodes counted in a frame so far
  const interval = (src: ThreadEvents, j: number, dt: number) => {
    if (top < 0) {
      acc.noFrameTicks += dt;
      return;
    }
    acc.exclTicks[top] += dt;
    acc.tierTicks[top * TIER_CLASSES + tierClassOf(src, j)] += dt;
    acc.ticks += dt;
  };
  const lost = (dt: number) => {
    acc.lostTicks += dt;
  };
  const event = (src: ThreadEvents, j: number) => {
    if (top < 0 && src.kind[j] === Kind.Bytecode) acc.bytecodesNoFrame++;
  };
  const flush = (i: number, row: number) => {
    top = row;
    clock.advance(i, interval, lost, event);
  };
  const topRow = (w: StackWalker) => (w.depth >= 0 ? rowOf(w.top) : -1);
  const visitor = {
    enter(w: StackWalker, i: number, implicit: boolean) {
      flush(i, w.depth > 0 ? rowOf(w.stack[w.depth - 1]) : -1);
      const m = rowOf(w.top);
      acc.calls[m]++;
      if (implicit) acc.implicitCalls[m]++;
      if (onStack[m]++ === 0) {
        bytecodesAtFirst[m] = framed;
        ticksAtFirst[m] = acc.ticks;
      }
    },
    exit(w: StackWalker, i: number) {
      flush(i, topRow(w));
      const m = rowOf(w.top);
      if (--onStack[m] === 0) {
        acc.incl[m] += framed - bytecodesAtFirst[m];
        acc.inclTicks[m] += acc.ticks - ticksAtFirst[m];
      }
    },
    bytecodes(w: StackWalker, from: number, to: number) {
      // (the intervals up to each event of the run go to the same frame: handed out up to its last event at once)
      flush(to - 1, topRow(w));
      const m = rowOf(w.top);
      acc.excl[m] += to - from;
      const row = m * TIER_CLASSES;
      for (let i = from; i < to; i++) acc.tierBytecodes[row + tierClassOf(w.t, i)]++;
      framed += to - from;
    },
    gap(w: StackWalker, i: number) {
      flush(i, topRow(w));
    },
  };
  return {
    visitor,
    window: (w) => {
      // (the window's methods are in the table)
      acc.ensure(a.methods.length);
      onStack = withRoom(onStack, acc.slots);
      bytecodesAtFirst = withRoom(bytecodesAtFirst, acc.slots);
      ticksAtFirst = withRoom(ticksAtFirst, acc.slots);
      clock.window(w, w.base);
      t = w;
      for (let i = 0; i < w.length && !hasTime; i++) hasTime = !Number.isNaN(w.tsc[i]);
    },
    done: (stats) => {
      flush(t ? t.length : 0, -1);
      acc.bytecodes += framed + acc.bytecodesNoFrame;
      done({ walk: stats, hasTime });
    },
  };
}

function threadHot(a: Profiled, name: string, tid: number, acc: HotAccumulator, walk: WalkStats): ThreadHot {
  const ns = (ticks: number) => (a.tscPerNs > 0 ? ticks / a.tscPerNs : 0);
  const methods: MethodHot[] = [];
  for (let r = 0; r < acc.slots; r++) {
    if (!acc.excl[r] && !acc.calls[r] && !acc.exclTicks[r] && !acc.incl[r]) continue;
    const tier = (arr: Float64Array, f: (x: number) => number) => Array.from(arr.subarray(r * TIER_CLASSES, (r + 1) * TIER_CLASSES), f);
    methods.push({
      method: r - 1,
      label: methodDisplay(a, r > 0 ? r - 1 : UNKNOWN_ROW),
      exclBytecodes: acc.excl[r],
      inclBytecodes: acc.incl[r],
      calls: acc.calls[r],
      implicitCalls: acc.implicitCalls[r],
      exclNs: ns(acc.exclTicks[r]),
      inclNs: ns(acc.inclTicks[r]),
      bytecodesByTier: tier(acc.tierBytecodes, (x) => x),
      nsByTier: tier(acc.tierTicks, ns),
    });
  }
  methods.sort((x, y) => y.exclBytecodes - x.exclBytecodes || y.inclBytecodes - x.inclBytecodes || (x.label < y.label ? -1 : x.label > y.label ? 1 : 0));
  return {
    name, tid, bytecodes: acc.bytecodes, bytecodesNoFrame: acc.bytecodesNoFrame,
    timeNs: ns(acc.ticks), lostNs: ns(acc.lostTicks), noFrameNs: ns(acc.noFrameTicks), walk, methods,
  };
}

/** Hot methods of every thread and of all threads together. */
export function computeHotMethods(a: Profiled): HotMethods {
  return runPass(a, hotMethodsPass(a));
}

/** computeHotMethods as a pass that can share its walk with others (runPasses). */
export function hotMethodsPass(a: Profiled): WalkPass<HotMethods> {
  const total = new HotAccumulator(a.methods.length);
  const totalWalk: WalkStats = { unmatchedExits: 0, implicitEntries: 0, implicitExits: 0, maxDepth: 0, openAtEnd: 0 };
  const threads: ThreadHot[] = [];
  let hasTime = false;
  return {
    thread(k) {
      const t = a.threads[k];
      const acc = new HotAccumulator(a.methods.length);
      return accumulateThread(a, acc, (r) => {
        const walk = r.walk;
        hasTime ||= r.hasTime;
        total.add(acc);
        totalWalk.unmatchedExits += walk.unmatchedExits;
        totalWalk.implicitEntries += walk.implicitEntries;
        totalWalk.implicitExits += walk.implicitExits;
        totalWalk.maxDepth = Math.max(totalWalk.maxDepth, walk.maxDepth);
        totalWalk.openAtEnd += walk.openAtEnd;
        threads.push(threadHot(a, t.name, t.tid, acc, walk));
      });
    },
    finish: () => ({ hasTime: hasTime && a.tscPerNs > 0, tscPerNs: a.tscPerNs, threads, total: threadHot(a, '(all threads)', -1, total, totalWalk) }),
  };
}

// ---- the readable table ----

/** A count with thousands separators. */
const count = (x: number): string => Math.round(x).toLocaleString('en-US');
const percent = (x: number, of: number): string => (of > 0 ? (x > 0 && x < of / 1000 ? '<0.1%' : `${((100 * x) / of).toFixed(1)}%`) : '-');

/** `s` cut to `max` characters in the middle (long descriptors), marked with "..". */
export const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 20)}..${s.slice(s.length - 18)}`);

/** A duration in ns, in the unit that keeps 3 significant digits (ns, us, ms, s). */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return '-';
  if (ns < 1000) return `${ns.toFixed(ns < 10 ? 1 : 0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toPrecision(3)} us`;
  if (ns < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toPrecision(3)} s`;
}

/** Columns padded to their widest cell; `right` marks right-aligned columns. */
export function alignTable(rows: string[][], right: boolean[]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (right[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ').trimEnd()).join('\n');
}

/** The tier split of a method's exclusive bytecodes, e.g. "int 62% cmp 30% inl 8%" (classes with a share only). */
function tierSplit(m: MethodHot): string {
  const short = ['int', 'cmp', 'inl', 'oth', 'unk', 'rec'];
  const parts: string[] = [];
  for (let c = 0; c < TIER_CLASSES; c++) if (m.bytecodesByTier[c] > 0) parts.push(`${short[c]} ${percent(m.bytecodesByTier[c], m.exclBytecodes)}`);
  return parts.join(' ');
}

function threadTable(h: ThreadHot, top: number, hasTime: boolean): string {
  const head = ['#', 'method', 'excl', 'excl%', 'incl', 'incl%', 'calls'];
  if (hasTime) head.push('time excl', 'time incl', 'time%');
  head.push('tier split (excl bytecodes)');
  const rows = [head];
  h.methods.slice(0, top).forEach((m, k) => {
    const r = [`${k + 1}`, clip(m.label, 100), count(m.exclBytecodes), percent(m.exclBytecodes, h.bytecodes), count(m.inclBytecodes), percent(m.inclBytecodes, h.bytecodes), count(m.calls)];
    if (hasTime) r.push(formatNs(m.exclNs), formatNs(m.inclNs), percent(m.exclNs, h.timeNs));
    r.push(tierSplit(m));
    rows.push(r);
  });
  const right = head.map((c) => c !== 'method' && !c.startsWith('tier'));
  const time = hasTime ? `, time in frames ${formatNs(h.timeNs)}, lost in gaps ${formatNs(h.lostNs)}` : ', no time (ground truth)';
  const noFrame = h.bytecodesNoFrame ? ` (${count(h.bytecodesNoFrame)} outside any frame)` : '';
  return `${h.name}${h.tid >= 0 ? ` (tid ${h.tid})` : ''}: ${count(h.bytecodes)} bytecodes${noFrame}, ${count(h.methods.length)} methods${time}\n${alignTable(rows, right)}`;
}

/** hot-methods.txt (the top methods of all threads, then of each thread with bytecodes) and hot-methods.json. */
export function writeHotMethods(a: Profiled, outDir: string, opts: { top?: number; hot?: HotMethods } = {}): PartResult {
  const top = opts.top ?? 30;
  const hot = opts.hot ?? computeHotMethods(a);
  fs.mkdirSync(outDir, { recursive: true });
  const legend = [
    `Hot methods (${a.source.kind} ${a.source.dir}). excl: bytecodes executed in the method's own frames; incl: while it`,
    'is on the stack (recursion counted once); calls: frames opened (entry events and implicit frames); time: PT time',
    'of the intervals between events, attributed to the frame active after each event (gaps: lost). Tier split:',
    'int(erpreted) cmp (compiled root) inl(ined) oth(er) unk(nown) rec(overed into a gap). See docs/profiles.md.',
  ].join('\n');
  const sections = [legend, threadTable(hot.total, top, hot.hasTime)];
  for (const t of hot.threads) if (t.bytecodes > 0 && hot.threads.length > 1) sections.push(threadTable(t, top, hot.hasTime));
  fs.writeFileSync(path.join(outDir, 'hot-methods.txt'), sections.join('\n\n') + '\n');
  fs.writeFileSync(path.join(outDir, 'hot-methods.json'), JSON.stringify({ format: 'jportal-hot-methods', version: 1, tierClasses: TIER_CLASS_NAMES, ...hot }) + '\n');
  return {
    files: ['hot-methods.txt', 'hot-methods.json'],
    summary: {
      threads: hot.threads.length,
      bytecodes: hot.total.bytecodes,
      methods: hot.total.methods.length,
      timeNs: hot.total.timeNs,
      lostNs: hot.total.lostNs,
      top: hot.total.methods.slice(0, 5).map((m) => ({ method: m.label, exclBytecodes: m.exclBytecodes })),
    },
  };
}
