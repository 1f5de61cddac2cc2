/**
 * What every profile is computed from: per-thread event columns whose method ids index one method table, with
 * the class-file facts (bytecode, line numbers, source file) profiles need. Built from a decoded trace
 * (`loadTraceAnalysis`) or from ground truth (`loadOracleAnalysis`), so the same profile code runs on both and
 * tests can compare them.
 */
import type { ClassFile, MethodInfo as ClassMethod } from '@jportal/classfile';

/** Event kinds (the numbers of @jportal/decode's EventKind and docs/decoded-format.md). */
export const enum Kind {
  Bytecode = 0,
  Entry = 1,
  Exit = 2,
  Gap = 3,
  Deopt = 4,
  Exception = 5,
  OsrEntry = 6,
}

/** How an event is known. */
export const enum Origin {
  /** decoded from PT (or recorded by the oracle) */
  Observed = 0,
  /** added by the completion of compiled frames (a bytecode between two observed PcDescs) */
  Inferred = 1,
  /** copied into a gap by recovery (@jportal/recover) */
  Recovered = 2,
}

/** Which code ran the event (pprof label "tier"). */
export const enum Tier {
  Interpreted = 0,
  Compiled = 1,
  Inlined = 2,
  Other = 3,
  Unknown = 4,
}

export const TIER_NAMES = ['interpreted', 'compiled', 'inlined', 'other', 'unknown'];
export const ORIGIN_NAMES = ['observed', 'inferred', 'recovered'];

export interface AnalysisMethod {
  /** internal class name, e.g. java/lang/String */
  className: string;
  name: string;
  /** JVM descriptor, e.g. (I)V */
  signature: string;
  /** the parsed class, when its bytes were recorded or found on the classpath */
  classFile?: ClassFile;
  /** the method in that class (bytecode, handlers, line numbers) */
  info?: ClassMethod;
  /** the class loader the trace recorded the class under (its METHOD record), when known */
  loader?: number;
}

/** A Java thread: who it is and how many events it has. */
export interface ThreadInfo {
  name: string;
  /** OS tid (trace) or the oracle's thread id; -1 unknown */
  tid: number;
  javaTid: number;
  /** events of the thread (of a window: events of the window) */
  length: number;
}

/** One Java thread's events, column-wise (one element per event). */
export interface ThreadEvents extends ThreadInfo {
  kind: Uint8Array;
  /** index into Analysis.methods; -1 unknown */
  method: Int32Array;
  /** bytecode index; for a gap the gap reason; -1 unknown */
  bci: Int32Array;
  /** the Java opcode of a bytecode event; -1 unknown */
  opcode: Int16Array;
  /** PT time (TSC ticks); NaN where unknown (ground truth has no time) */
  tsc: Float64Array;
  /** for a gap: the TSC where data resumes; NaN otherwise */
  endTsc: Float64Array;
  origin: Uint8Array;
  tier: Uint8Array;
}

/**
 * Consecutive events of one thread: events [base, base + length) of it. Profiles see a thread as a sequence of
 * windows (one, the whole thread, when it is held in memory), so a thread of a billion events needs no more
 * memory than one window. A window's columns are valid only until the next one is read.
 */
export interface EventWindow extends ThreadEvents {
  /**
   * index within the thread of the window's first event (whether a window is the thread's last is not known when
   * it is walked: a streamed thread's end comes after its last window; a pass learns it in its `done`)
   */
  base: number;
}

/** What every profile reads: a method table, and per thread its events, whole or window by window. */
interface AnalysisCommon {
  /** where it came from: a trace directory or an oracle directory */
  source: { kind: 'trace' | 'oracle'; dir: string };
  methods: AnalysisMethod[];
  /** TSC ticks per nanosecond; 0 when unknown (no time: the oracle) */
  tscPerNs: number;
  /**
   * TSC when the capture started (PT sideband's header): time 0 of the timelines. Undefined when unknown (then
   * time 0 is the first event of all threads, found by reading each thread's first window).
   */
  startTsc?: number;
  /** problems met while loading (classes that did not parse, ...), one line each */
  problems: string[];
}

/** An analysis held in memory: every thread's events whole. */
export interface Analysis extends AnalysisCommon {
  threads: ThreadEvents[];
}

/**
 * An analysis whose events are read back window by window (a spill file per thread: `jportal analyze` on
 * traces of any length). `windows(k)` reads thread k from the start again each time it is called.
 */
export interface WindowedAnalysis extends AnalysisCommon {
  threads: ThreadInfo[];
  windows(k: number): Iterable<EventWindow>;
}

/** Either kind: what the profiles take. */
export type Profiled = Analysis | WindowedAnalysis;

/** Thread k's events as windows: the whole thread once when it is in memory. */
export function windowsOf(a: Profiled, k: number): Iterable<EventWindow> {
  if ('windows' in a) return a.windows(k);
  return [{ ...(a.threads[k] as ThreadEvents), base: 0 }];
}

/** Calls `f` for every window of every thread, in thread order. */
export function forEachWindow(a: Profiled, f: (w: EventWindow, k: number) => void): void {
  for (let k = 0; k < a.threads.length; k++) for (const w of windowsOf(a, k)) f(w, k);
}

export const methodLabel = (m: AnalysisMethod): string => `${m.className.replace(/\//g, '.')}.${m.name}`;
export const methodKeyOf = (m: AnalysisMethod): string => `${m.className}.${m.name}${m.signature}`;

/** What each report part (coverage, profile, cct, timeline, ...) returns: the files it wrote and a summary. */
export interface PartResult {
  /** files written, relative to the report directory */
  files: string[];
  /** a JSON-able summary (numbers the CLI prints and report.html shows) */
  summary: Record<string, unknown>;
}
