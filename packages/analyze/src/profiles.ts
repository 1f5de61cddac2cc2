/**
 * Every report part from two reads of the events. Each profile is a walk pass (walk.ts); the passes that need
 * nothing but the events share the first read and one stack walk, and the three that need a first result (the
 * context numbering, and the two timelines' duration thresholds) make their second walk together. On a spilled
 * trace every read inflates every window again, so this is what a full-size trace's analysis costs after decoding.
 */
import { writeCct, cctPass, CctResult } from './cct';
import { stackTreePass, StackTree, writeCollapsed } from './collapsed';
import { contextNumberingPass, contextsPass, ContextNumbering } from './contexts';
import { coveragePass, Coverage, writeCoverage } from './coverage';
import { hotMethodsPass, HotMethods, writeHotMethods } from './hot';
import { latencyPass, Latency, writeLatency } from './latency';
import { PartResult, Profiled } from './model';
import { MethodPaths, pathsPass, writePaths } from './ball-larus';
import { BuiltPprof, pprofPass, writePprof } from './pprof';
import { hotMethodsListPass, REPORT_HOT_METHODS, reportSliceOptions, ReportSummary, reportSummaryPass, writeReport } from './report';
import { timelineSliceOptions, writeTimeline } from './timeline';
import { slicePasses, SliceSet } from './timeslices';
import { runPasses, WalkPass } from './walk';

/** The report parts, in the order they are written. */
export const PROFILE_PARTS = ['coverage', 'hot', 'pprof', 'cct', 'contexts', 'paths', 'timeline', 'collapsed', 'latency'] as const;
export type ProfilePart = (typeof PROFILE_PARTS)[number];

/** latency.txt's histograms per kind */
const LATENCY_TOP = 20;

export interface WriteProfilesOptions {
  /** only these parts (report.html always) */
  only?: readonly string[];
  /** Java source roots (coverage as HTML) */
  sources?: string[];
  /** the calling-context tree of only this method's dynamic extent */
  extent?: string;
  /** more passes for the first read (the caller's own counts) */
  extra?: WalkPass<unknown>[];
  /** called as each step begins: 'read 1', 'read 2', or a part's name (its files being written) */
  step?(name: string): void;
}

export interface WrittenProfiles {
  parts: Record<string, PartResult>;
  report: PartResult;
  /** the results of opts.extra, in order */
  extra: unknown[];
  /** wall time of each read (both walks of the events) and of writing each part's files */
  timingsMs: Record<string, number>;
}

/** Writes the report parts of `a` into `out` (see the module comment). */
export function writeProfiles(a: Profiled, out: string, opts: WriteProfilesOptions = {}): WrittenProfiles {
  const want = (p: ProfilePart) => !opts.only?.length || opts.only.includes(p);
  const timingsMs: Record<string, number> = {};
  const timed = <T>(name: string, f: () => T): T => {
    opts.step?.(name);
    const t0 = Date.now();
    const r = f();
    timingsMs[name] = Date.now() - t0;
    return r;
  };

  // read 1: everything that needs only the events
  const first: { name: string; pass: WalkPass<unknown> }[] = [];
  const add = <T>(name: string, pass: WalkPass<T>) => first.push({ name, pass: pass as WalkPass<unknown> });
  if (want('coverage')) add('coverage', coveragePass(a));
  if (want('hot')) add('hot', hotMethodsPass(a));
  if (want('pprof')) add('pprof', pprofPass(a));
  if (want('cct')) add('cct', cctPass(a, { extent: opts.extent }));
  if (want('contexts')) add('contexts', contextNumberingPass(a));
  if (want('paths')) add('paths', pathsPass(a));
  if (want('latency')) add('latency', latencyPass(a, { top: LATENCY_TOP }));
  add('tree', stackTreePass(a));
  add('summary', reportSummaryPass(a));
  add('reportHot', hotMethodsListPass(a, REPORT_HOT_METHODS));
  const timeline = want('timeline') ? slicePasses(a, timelineSliceOptions()) : undefined;
  const reportSlices = slicePasses(a, reportSliceOptions());
  if (timeline) add('timelineDurations', timeline.durations);
  add('reportDurations', reportSlices.durations);
  const extra = opts.extra ?? [];
  const results = timed('read 1', () => runPasses(a, [...first.map((f) => f.pass), ...extra]));
  const got = new Map(first.map((f, i) => [f.name, results[i]]));
  const tree = got.get('tree') as StackTree;

  const parts: Record<string, PartResult> = {};
  const write = (name: ProfilePart, f: () => PartResult) => {
    if (want(name)) parts[name] = timed(name, f);
  };
  // each part read 1 completes is written now and let go before read 2 (latency's durations alone can be gigabytes)
  write('coverage', () => writeCoverage(a, out, { sources: opts.sources, coverage: got.get('coverage') as Coverage }));
  write('hot', () => writeHotMethods(a, out, { hot: got.get('hot') as HotMethods }));
  write('pprof', () => writePprof(a, out, got.get('pprof') as BuiltPprof));
  write('cct', () => writeCct(a, out, { extent: opts.extent }, got.get('cct') as CctResult));
  write('paths', () => writePaths(a, out, { paths: got.get('paths') as Map<number, MethodPaths> }));
  write('collapsed', () => writeCollapsed(a, out, tree));
  write('latency', () => writeLatency(a, out, { top: LATENCY_TOP }, got.get('latency') as Latency));
  for (const name of ['coverage', 'hot', 'pprof', 'cct', 'paths', 'latency']) got.delete(name);
  const extraResults = results.slice(first.length);
  // (the passes hold what they computed too)
  first.length = 0;
  results.length = 0;

  // read 2: what needs read 1's results
  const second: WalkPass<unknown>[] = [];
  const contexts = want('contexts') ? contextsPass(a, out, got.get('contexts') as ContextNumbering) : undefined;
  if (contexts) second.push(contexts);
  const timelineSlices = timeline?.slices();
  if (timelineSlices) second.push(timelineSlices);
  second.push(reportSlices.slices());
  const r2 = timed('read 2', () => runPasses(a, second));
  let j = 0;
  if (contexts) parts.contexts = r2[j++] as PartResult;
  const timelineSet = timelineSlices ? (r2[j++] as SliceSet) : undefined;
  const reportSet = r2[j++] as SliceSet;
  write('timeline', () => writeTimeline(a, out, {}, timelineSet));
  const report = timed('report', () =>
    writeReport(a, out, orderParts(parts), {
      tree,
      summary: got.get('summary') as ReportSummary,
      hot: got.get('reportHot') as { name: string; self: number }[],
      slices: reportSet,
    }),
  );
  return { parts: orderParts(parts), report, extra: extraResults, timingsMs };
}

/** The parts in PROFILE_PARTS order (contexts is filled in after read 2). */
function orderParts(parts: Record<string, PartResult>): Record<string, PartResult> {
  const out: Record<string, PartResult> = {};
  for (const p of PROFILE_PARTS) if (parts[p]) out[p] = parts[p];
  return out;
}
