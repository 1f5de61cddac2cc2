/**
 * `jportal analyze DIR`: decode every thread, fill what PT lost (recover), and write the profiles into a report
 * directory (default DIR/report): coverage (lcov, JaCoCo XML, HTML with --sources), hot methods (table, pprof),
 * calling-context tree, context ids, Ball-Larus paths, timelines (Chrome trace, speedscope), collapsed stacks,
 * latency histograms, and report.html linking all of it. Ends with a one-screen summary (or --json).
 */
import * as fs from 'fs';
import * as path from 'path';
import { analyzeWindowEvents, EventWindow, loadTraceWindows, PartResult, profilePasses, PROFILE_PARTS, Profiled, refineDecoded, runPasses, TraceStream, WalkPass, WindowedTraceAnalysis, WrittenProfiles } from '@jportal/analyze';
import { decodeTrace, DecodeError, type DecodedTrace, type TimeSpan } from '@jportal/decode';
import { CliError, ExitCode } from '../exit';
import { stderrLogger } from '../log';
import { spanJson } from '../time-span';
import { Progress } from '../progress';

export interface AnalyzeCommandOptions {
  dir: string;
  out?: string;
  classpath?: string[];
  /** another recording of the same program: recovery may fill gaps from its threads too */
  reference?: string;
  sources?: string[];
  extent?: string;
  recover?: boolean;
  reconstruct?: boolean;
  workers?: number;
  tid?: number[];
  /** only this span of the run (seconds since the capture started) */
  span?: TimeSpan;
  json?: boolean;
  /** the parts to write (default all) */
  only?: string[];
}

export const ANALYZE_PARTS = ['coverage', 'hot', 'pprof', 'cct', 'contexts', 'paths', 'timeline', 'collapsed', 'latency'] as const;

export async function runAnalyze(o: AnalyzeCommandOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  if (!fs.existsSync(o.dir) || !fs.statSync(o.dir).isDirectory()) throw new CliError(`analyze: ${o.dir}: not a trace directory`, ExitCode.BadInput);
  if (!fs.existsSync(path.join(o.dir, 'meta.jpt'))) throw new CliError(`analyze: ${path.join(o.dir, 'meta.jpt')}: missing (not a jportal trace directory)`, ExitCode.BadInput);
  for (const s of [...(o.sources ?? []), ...(o.classpath ?? [])]) if (!fs.existsSync(s)) throw new CliError(`analyze: ${s}: no such file or directory`, ExitCode.BadInput);
  const unknown = (o.only ?? []).filter((p) => !(ANALYZE_PARTS as readonly string[]).includes(p));
  if (unknown.length) throw new CliError(`analyze: --only: unknown part ${unknown.join(', ')} (known: ${ANALYZE_PARTS.join(', ')})`, ExitCode.BadInput);
  const out = o.out ?? path.join(o.dir, 'report');
  fs.mkdirSync(out, { recursive: true });
  const progress = new Progress(!!o.json);
  const t0 = Date.now();

  let reference: DecodedTrace | undefined;
  if (o.reference !== undefined) {
    if (!fs.existsSync(path.join(o.reference, 'meta.jpt'))) throw new CliError(`analyze: --reference ${path.join(o.reference, 'meta.jpt')}: missing (not a jportal trace directory)`, ExitCode.BadInput);
    log.info(`analyze: decoding the reference recording ${o.reference}`);
    try {
      reference = decodeTrace(o.reference);
    } catch (e) {
      if (e instanceof DecodeError) throw new CliError(`analyze: --reference: ${e.message}`, e.exitCode as ExitCode);
      throw e;
    }
    // as this trace is, but without recovery (copies of copies are not evidence)
    refineDecoded(reference, { recover: false });
  }
  progress.start('decoding', 0, ' threads');
  let started = false;
  const onThread = (name: string, done: number, total: number) => {
    if (!started) progress.start('decoding', total, ' threads');
    started = true;
    progress.update(done, `(${name})`);
  };
  const decodeError = (e: unknown): unknown => {
    progress.done();
    return e instanceof DecodeError ? new CliError(`analyze: ${e.message}`, e.exitCode as ExitCode) : e;
  };
  // streamed (decoded in a worker while this thread walks each window, stream.ts) unless a reference recording is
  // given, the trace does not say when its capture started (the timelines' time 0), or JPORTAL_ANALYZE_STREAM=0
  if (!reference && process.env.JPORTAL_ANALYZE_STREAM !== '0') {
    let stream: TraceStream;
    try {
      stream = await TraceStream.open(o.dir, { tids: o.tid, span: o.span, workers: o.workers, recover: o.recover, reconstruct: o.reconstruct, classpath: o.classpath, onThread });
    } catch (e) {
      throw decodeError(e);
    }
    if (stream.analysis!.startTsc !== undefined)
      try {
        return await analyzeStreamed(o, stream, out, progress, t0, log, decodeError);
      } finally {
        stream.close();
      }
    stream.close();
    log.info('analyze: the trace does not say when its capture started: decoding it whole before the profiles (spilled to disk)');
  }
  let a: WindowedTraceAnalysis;
  try {
    // each thread's events go a window at a time to a scratch directory in the report's, removed at the end
    removeStaleSpills(out, log);
    a = await loadTraceWindows(o.dir, {
      spillDir: fs.mkdtempSync(path.join(out, `${SPILL_PREFIX}${process.pid}-`)),
      tids: o.tid,
      span: o.span,
      workers: o.workers,
      recover: o.recover,
      reconstruct: o.reconstruct,
      classpath: o.classpath,
      reference,
      onThread,
    });
  } catch (e) {
    throw decodeError(e);
  }
  progress.done();
  try {
    const decodeMs = Date.now() - t0;
    logFacts(a, decodeMs, log);
    const run = startProfiles(o, a, out, progress);
    const written = run.write(runPasses(a, run.passes));
    return finishAnalysis(o, a, written, out, t0, decodeMs, { spillBytes: a.spillBytes, heldBytes: a.heldBytes, streamed: false });
  } finally {
    a.close();
  }
}

/** The streamed analysis: the read runs as the trace is decoded; the facts of decoding are known after it. */
async function analyzeStreamed(o: AnalyzeCommandOptions, stream: TraceStream, out: string, progress: Progress, t0: number, log: ReturnType<typeof stderrLogger>, decodeError: (e: unknown) => unknown): Promise<number> {
  const a = stream.analysis!;
  const run = startProfiles(o, a, out, progress, false);
  let results: unknown[];
  try {
    results = await stream.read(run.passes);
  } catch (e) {
    throw decodeError(e);
  }
  progress.done();
  const decodeMs = Date.now() - t0;
  logFacts(a, decodeMs, log);
  const written = run.write(results);
  return finishAnalysis(o, a, written, out, t0, decodeMs, { spillBytes: 0, heldBytes: 0, streamed: true });
}

/** What decoding and refinement did, as log lines. */
function logFacts(a: Facts, decodeMs: number, log: ReturnType<typeof stderrLogger>): void {
  const orphans = orphansOf(a);
  if (orphans.unattributed) log.info(`analyze: ${orphans.unattributed} bytecodes ran in frames the decoder could not name (callers lost in a gap); ${orphans.attributed} named by projecting their ${orphans.frames} frames onto the ICFG (${orphans.ambiguousFrames} frames ambiguous)`);
  const rc = reconstructionOf(a);
  if (rc.contradictions) log.info(`analyze: ${rc.contradictions} decoded steps contradict the methods' CFGs; ${rc.repaired} repaired by inserting ${rc.inserted} bytecodes (@jportal/reconstruct)`);
  const windows = a.windowCounts.reduce((x, y) => x + y, 0);
  if (windows > a.threads.length) {
    const where = 'spillBytes' in a ? ` (${((a as WindowedTraceAnalysis).heldBytes / 2 ** 30).toFixed(1)} GiB kept in memory, ${((a as WindowedTraceAnalysis).spillBytes / 2 ** 30).toFixed(1)} GiB spilled to disk)` : ', walked as they were decoded';
    log.info(`analyze: ${windows} windows of at most ${analyzeWindowEvents().toLocaleString('en-US')} events${where}; reconstruction and recovery saw one window at a time`);
  }
  log.info(`analyze: decoded ${a.threads.length} threads in ${(decodeMs / 1000).toFixed(1)} s${a.recovery.some((r) => r?.gaps) ? `; recovery filled ${a.recovery.reduce((s, r) => s + (r?.recovered ?? 0), 0)} of ${a.recovery.reduce((s, r) => s + (r?.gaps ?? 0), 0)} gaps` : ''}`);
}

/** The scratch directories of spilled events in a report directory: `.events-<pid>-<random>` (removeStaleSpills). */
const SPILL_PREFIX = '.events-';

/**
 * Removes the spill directories an analysis that was killed left in `out` (a killed process cannot clean up, and a
 * full size's spill is gigabytes): those whose process is gone. Returns how many were removed.
 */
export function removeStaleSpills(out: string, log?: { info(m: string): void }): number {
  let removed = 0;
  for (const name of fs.existsSync(out) ? fs.readdirSync(out) : []) {
    const m = /^\.events-(\d+)-/.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    fs.rmSync(path.join(out, name), { recursive: true, force: true });
    log?.info(`analyze: removed ${path.join(out, name)}, left by an analysis that did not finish (process ${m[1]})`);
    removed++;
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What the summary and the log say of decoding, whether the trace was spilled or streamed. */
type Facts = Pick<WindowedTraceAnalysis, 'threads' | 'orphans' | 'reconstruction' | 'recovery' | 'windowCounts'>;

function orphansOf(a: Facts) {
  return a.orphans.reduce((x, r) => ({ unattributed: x.unattributed + (r?.orphans ?? 0), attributed: x.attributed + (r?.attributedBytecodes ?? 0), frames: x.frames + (r?.frames ?? 0), ambiguousFrames: x.ambiguousFrames + (r?.ambiguous ?? 0) }), { unattributed: 0, attributed: 0, frames: 0, ambiguousFrames: 0 });
}

function reconstructionOf(a: Facts) {
  return { ...a.reconstruction.reduce((x, r) => ({ contradictions: x.contradictions + (r?.contradictions ?? 0), repaired: x.repaired + (r ? r.repair.unique + r.repair.ambiguous : 0), inserted: x.inserted + (r?.repair.inserted ?? 0) }), { contradictions: 0, repaired: 0, inserted: 0 }), orphans: orphansOf(a) };
}

/**
 * The profiles' passes (with the summary's own counts) and their writing, with progress: the read a step of it
 * (`readHere`: the caller reads now) or already done (a streamed read ran while decoding).
 */
function startProfiles(o: AnalyzeCommandOptions, a: Profiled, out: string, progress: Progress, readHere = true): { passes: WalkPass<unknown>[]; write(results: unknown[]): WrittenProfiles } {
  const want = (p: string) => !o.only?.length || o.only.includes(p);
  // (steps: the read of the events, each wanted part's files but contexts', written as the read ends, and report.html)
  const steps = (readHere ? 2 : 1) + PROFILE_PARTS.filter((p) => want(p) && p !== 'contexts').length;
  let step = 0;
  const stepOf = (name: string) => progress.update(step++, `(${name === 'read' ? 'reading the events' : name})`);
  const run = profilePasses(a, out, { only: o.only, sources: o.sources, extent: o.extent, extra: [threadCountsPass(a)], step: stepOf });
  let readStart = 0;
  if (readHere) {
    progress.start('writing profiles', steps, ' steps');
    stepOf('read');
    readStart = Date.now();
  }
  return {
    passes: run.passes,
    write: (results) => {
      const readMs = readHere ? Date.now() - readStart : 0;
      if (!readHere) progress.start('writing profiles', steps, ' steps');
      const written = run.write(results, readMs);
      progress.done();
      return written;
    },
  };
}

function finishAnalysis(o: AnalyzeCommandOptions, a: Profiled & Facts, written: WrittenProfiles, out: string, t0: number, decodeMs: number, memory: { spillBytes: number; heldBytes: number; streamed: boolean }): number {
  const { parts, report, timingsMs: timings } = written;
  const windows = { count: a.windowCounts.reduce((x, y) => x + y, 0), maxEvents: analyzeWindowEvents(), ...memory };
  const summary = { ...summarize(a, written.extra[0] as ThreadCounts, parts, out, report), ...(o.span ? { span: spanJson(o.span) } : {}), reconstruction: reconstructionOf(a), windows };
  fs.writeFileSync(path.join(out, 'summary.json'), JSON.stringify({ ...summary, timingsMs: { decode: decodeMs, ...timings } }, null, 2) + '\n');
  if (o.json) process.stdout.write(JSON.stringify({ ...summary, timingsMs: { decode: decodeMs, ...timings, total: Date.now() - t0 } }, null, 2) + '\n');
  else printSummary(summary, Date.now() - t0);
  return ExitCode.Ok;
}

interface AnalyzeSummary {
  trace: string;
  report: string;
  threads: { name: string; tid: number; bytecodes: number; observed: number; inferred: number; recovered: number; gaps: number }[];
  bytecodes: number;
  observed: number;
  inferred: number;
  recovered: number;
  gaps: number;
  /** share of PT time lost in gaps (sum of gap spans / span of the thread's events), over all threads */
  lostTimeShare: number;
  parts: Record<string, { files: string[]; summary: Record<string, unknown> }>;
  problems: string[];
}

interface ThreadCounts {
  threads: AnalyzeSummary['threads'];
  /** gap ticks, and the sum over threads of the span of their events' times */
  lost: number;
  span: number;
}

/** The summary's counts per thread, as a pass of writeProfiles' first read of the events. */
function threadCountsPass(a: Profiled): WalkPass<ThreadCounts> {
  const threads: AnalyzeSummary['threads'] = a.threads.map((t) => ({ name: t.name, tid: t.tid, bytecodes: 0, observed: 0, inferred: 0, recovered: 0, gaps: 0 }));
  const counts: ThreadCounts = { threads, lost: 0, span: 0 };
  const first = a.threads.map(() => NaN);
  const last = a.threads.map(() => NaN);
  const window = (t: EventWindow, tk: number) => {
    const row = threads[tk];
    for (let i = 0; i < t.length; i++) {
      const k = t.kind[i];
      if (t.tsc[i] > 0) {
        if (!(first[tk] <= t.tsc[i])) first[tk] = t.tsc[i];
        if (!(last[tk] >= t.tsc[i])) last[tk] = t.tsc[i];
      }
      // (numbers of @jportal/analyze's Kind and Origin: const enums do not cross packages here)
      if (k === 0) {
        row.bytecodes++;
        const og = t.origin[i];
        if (og === 2) row.recovered++;
        else if (og === 1) row.inferred++;
        else row.observed++;
      } else if (k === 3) {
        row.gaps++;
        if (t.endTsc[i] > t.tsc[i]) counts.lost += t.endTsc[i] - t.tsc[i];
      }
    }
  };
  return {
    thread: (k) => ({ visitor: {}, window: (w) => window(w, k) }),
    finish: () => {
      a.threads.forEach((_, tk) => {
        if (last[tk] > first[tk]) counts.span += last[tk] - first[tk];
      });
      return counts;
    },
  };
}

function summarize(a: Profiled, counts: ThreadCounts, parts: Record<string, PartResult>, out: string, report: PartResult): AnalyzeSummary {
  const { threads, lost, span } = counts;
  threads.sort((x, y) => y.bytecodes - x.bytecodes);
  const sum = (k: 'bytecodes' | 'observed' | 'inferred' | 'recovered' | 'gaps') => threads.reduce((s, t) => s + t[k], 0);
  return {
    trace: a.source.dir,
    report: path.join(out, report.files[0] ?? 'report.html'),
    threads,
    bytecodes: sum('bytecodes'),
    observed: sum('observed'),
    inferred: sum('inferred'),
    recovered: sum('recovered'),
    gaps: sum('gaps'),
    lostTimeShare: span > 0 ? Math.min(1, lost / span) : 0,
    parts: Object.fromEntries(Object.entries({ ...parts, report }).map(([k, v]) => [k, { files: v.files, summary: v.summary }])),
    problems: a.problems.slice(0, 50),
  };
}

const pct = (x: number, of: number) => (of > 0 ? `${((100 * x) / of).toFixed(1)}%` : '-');
const num = (n: number) => n.toLocaleString('en-US');

function printSummary(s: AnalyzeSummary, ms: number): void {
  const w = (line: string) => process.stderr.write(line + '\n');
  w(`jportal analyze: ${s.trace} -> ${path.dirname(s.report)} (${(ms / 1000).toFixed(1)} s)`);
  w(`  threads      ${s.threads.length}: ${s.threads.slice(0, 4).map((t) => `${t.name} ${num(t.bytecodes)}`).join(', ')}${s.threads.length > 4 ? ', ...' : ''}`);
  w(`  bytecodes    ${num(s.bytecodes)}: observed ${pct(s.observed, s.bytecodes)}, inferred ${pct(s.inferred, s.bytecodes)} (between compiled-code samples), recovered ${pct(s.recovered, s.bytecodes)}`);
  w(`  loss         ${num(s.gaps)} gaps, ${(s.lostTimeShare * 100).toFixed(1)}% of the traced time`);
  type Counter = { covered: number; missed: number };
  const cov = s.parts.coverage?.summary as { LINE?: Counter; BRANCH?: Counter; METHOD?: Counter; classCount?: number; recoveredOnly?: { lines: number } } | undefined;
  const ratio = (c: Counter) => `${num(c.covered)}/${num(c.covered + c.missed)} (${pct(c.covered, c.covered + c.missed)})`;
  if (cov?.LINE) w(`  coverage     lines ${ratio(cov.LINE)}${cov.BRANCH ? `, branches ${ratio(cov.BRANCH)}` : ''}${cov.METHOD ? `, methods ${ratio(cov.METHOD)}` : ''} in ${cov.classCount ?? '?'} classes (JDK classes left out)${cov.recoveredOnly?.lines ? `; ${num(cov.recoveredOnly.lines)} lines recovered only` : ''}`);
  const hot = s.parts.hot?.summary as { top?: { method: string; exclBytecodes: number }[] } | undefined;
  if (hot?.top?.length) {
    w('  hot methods  (share of bytecodes executed in the method itself)');
    for (const m of hot.top.slice(0, 5)) w(`    ${pct(m.exclBytecodes, s.bytecodes).padStart(6)}  ${m.method}`);
  }
  w(`  report       ${s.report}`);
}
