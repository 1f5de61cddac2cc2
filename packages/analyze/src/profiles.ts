/**
 * Every report part from one read of the events. Each profile is a walk pass (walk.ts), and all of them share the
 * read and one stack walk: even the three whose result depends on the whole trace (the context ids, numbered from
 * the call graph the trace shows, and the two timelines, cut at a duration threshold set by every frame's) keep in
 * that walk what their end needs (contexts.ts, timeslices.ts). On a spilled trace a read inflates every window.
 */
import { writeCct, cctPass, CctResult } from './cct';
import { stackTreePass, StackTree, writeCollapsed } from './collapsed';
import { contextsPass } from './contexts';
import { coveragePass, Coverage, writeCoverage } from './coverage';
import { hotMethodsPass, HotMethods, writeHotMethods } from './hot';
import { latencyPass, Latency, writeLatency } from './latency';
import { PartResult, Profiled } from './model';
import { MethodPaths, pathsPass, writePaths } from './ball-larus';
import { BuiltPprof, pprofPass, writePprof } from './pprof';
import { hotMethodsListPass, REPORT_HOT_METHODS, reportSliceOptions, ReportSummary, reportSummaryPass, writeReport } from './report';
import { timelineSliceOptions, writeTimeline } from './timeline';
import { slicePass, SliceSet } from './timeslices';
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
  /** called as each step begins: 'read', or a part's name (its files being written) */
  step?(name: string): void;
}

export interface WrittenProfiles {
  parts: Record<string, PartResult>;
  report: PartResult;
  /** the results of opts.extra, in order */
  extra: unknown[];
  /** wall time of the read (the walk of the events) and of writing each part's files */
  timingsMs: Record<string, number>;
}

/** Writes the report parts of `a` into `out` (see the module comment). */
export function writeProfiles(a: Profiled, out: string, opts: WriteProfilesOptions = {}): WrittenProfiles {
  const p = profilePasses(a, out, opts);
  opts.step?.('read');
  const t0 = Date.now();
  const results = runPasses(a, p.passes);
  return p.write(results, Date.now() - t0);
}

/**
 * writeProfiles in two steps, for a caller that drives the read itself (a trace streamed while it is decoded:
 * stream.ts): the passes of the read, and `write(results, readMs)`, which writes the parts from their results.
 */
export interface ProfileRead {
  passes: WalkPass<unknown>[];
  write(results: unknown[], readMs: number): WrittenProfiles;
}

/** The two steps of writeProfiles (see ProfileRead). */
export function profilePasses(a: Profiled, out: string, opts: WriteProfilesOptions = {}): ProfileRead {
  const want = (p: ProfilePart) => !opts.only?.length || opts.only.includes(p);
  const timingsMs: Record<string, number> = {};
  const timed = <T>(name: string, f: () => T): T => {
    opts.step?.(name);
    const t0 = Date.now();
    const r = f();
    timingsMs[name] = Date.now() - t0;
    return r;
  };

  // the read: every part's pass
  const first: { name: string; pass: WalkPass<unknown> }[] = [];
  const add = <T>(name: string, pass: WalkPass<T>) => first.push({ name, pass: pass as WalkPass<unknown> });
  if (want('coverage')) add('coverage', coveragePass(a));
  if (want('hot')) add('hot', hotMethodsPass(a));
  if (want('pprof')) add('pprof', pprofPass(a));
  if (want('cct')) add('cct', cctPass(a, { extent: opts.extent }));
  if (want('contexts')) add('contexts', contextsPass(a, out));
  if (want('paths')) add('paths', pathsPass(a));
  if (want('latency')) add('latency', latencyPass(a, { top: LATENCY_TOP }));
  add('tree', stackTreePass(a));
  add('summary', reportSummaryPass(a));
  add('reportHot', hotMethodsListPass(a, REPORT_HOT_METHODS));
  if (want('timeline')) add('timeline', slicePass(a, timelineSliceOptions()));
  add('reportSlices', slicePass(a, reportSliceOptions()));
  const extra = opts.extra ?? [];
  const passes = [...first.map((f) => f.pass), ...extra];

  const write = (results: unknown[], readMs: number): WrittenProfiles => {
    timingsMs.read = readMs;
    const got = new Map(first.map((f, i) => [f.name, results[i]]));
    const extraResults = results.slice(first.length);
    first.length = 0;
    results.length = 0;
    const tree = got.get('tree') as StackTree;

    const parts: Record<string, PartResult> = {};
    const writePart = (name: ProfilePart, f: () => PartResult) => {
      if (want(name)) parts[name] = timed(name, f);
    };
    // each part is written and let go in turn (latency's durations alone can be gigabytes)
    const take = <T>(name: string): T => {
      const r = got.get(name) as T;
      got.delete(name);
      return r;
    };
    writePart('coverage', () => writeCoverage(a, out, { sources: opts.sources, coverage: take<Coverage>('coverage') }));
    writePart('hot', () => writeHotMethods(a, out, { hot: take<HotMethods>('hot') }));
    writePart('pprof', () => writePprof(a, out, take<BuiltPprof>('pprof')));
    writePart('cct', () => writeCct(a, out, { extent: opts.extent }, take<CctResult>('cct')));
    // (contexts.ts wrote its files as the read finished)
    if (want('contexts')) parts.contexts = take<PartResult>('contexts');
    writePart('paths', () => writePaths(a, out, { paths: take<Map<number, MethodPaths>>('paths') }));
    writePart('timeline', () => writeTimeline(a, out, {}, take<SliceSet>('timeline')));
    writePart('collapsed', () => writeCollapsed(a, out, tree));
    writePart('latency', () => writeLatency(a, out, { top: LATENCY_TOP }, take<Latency>('latency')));
    const report = timed('report', () =>
      writeReport(a, out, orderParts(parts), {
        tree,
        summary: got.get('summary') as ReportSummary,
        hot: got.get('reportHot') as { name: string; self: number }[],
        slices: got.get('reportSlices') as SliceSet,
      }),
    );
    return { parts: orderParts(parts), report, extra: extraResults, timingsMs };
  };
  return { passes, write };
}

/** The parts in PROFILE_PARTS order. */
function orderParts(parts: Record<string, PartResult>): Record<string, PartResult> {
  const out: Record<string, PartResult> = {};
  for (const p of PROFILE_PARTS) if (parts[p]) out[p] = parts[p];
  return out;
}
