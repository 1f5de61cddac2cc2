/**
 * `jportal bench apps [--only NAME] [--size short|medium|full|both|all]`: the real-application suite (issue 8). Per
 * application of bench-apps.ts (Debian's batik, fop, h2, jython, Lucene, sunflow; inputs from bench/apps/setup.sh):
 *
 * 1. timing, alternating runs (one of each variant per round, median over rounds): no agent; the agent writing
 *    metadata only (default options, and classes=0); JDK Flight Recorder's sampling profiler at `settings=profile`
 *    (10 ms) and at 1 ms (`method-profiling=max`); and the same for a start-up run of the application (no work);
 * 2. the emulator: `jportal record --pt=emulate --deterministic` loss-free (and at the 25% loss preset), PT bytes
 *    per second of emulated run and per traced instruction;
 * 3. `jportal decode --json` with all workers (outputs written), bench/decode/run.js on the same trace (our flow
 *    layer with one worker and all workers beside libipt's block decoder, one run), the decoder's stages timed
 *    in a process of their own (bench-stages.ts: flow, attribution, reconstruction, recovery, peak memory), and
 *    `jportal analyze --json` (time and peak memory through /usr/bin/time);
 * 4. top-10 hot methods of the loss-free trace (exclusive bytecodes) against JFR's (top frames of
 *    jdk.ExecutionSample) and against ours from the 25%-loss trace;
 * 5. the same workload under Debian's JaCoCo 0.8.6: covered lines against those of the loss-free trace.
 *
 * `--growth-only` measures the growth of analyze with trace size instead: each size's loss-free trace analyzed whole
 * with one worker (the growth table compares each size with short; with `--time FROM,TO` only that span of the trace,
 * for a full trace too long to analyze whole); `--stages-only` times the decoder's stages again
 * on the kept trace.
 *
 * Each application's result is kept in bench/apps/results/<app>-<size>.json (committed: the report's rows survive a
 * new checkout; OUT/results with --out); docs/performance.md is written from all results kept there (so `--only` refreshes one row). Exit: 0 ok, 1 a stage failed, 2 bad usage, 3 the suite is
 * not installed (bench/apps/setup.sh) or a tool is missing.
 */
import { spawnSync, SpawnSyncReturns } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { validateTrace } from '@jportal/format';
import { ptBytesInSpan } from '@jportal/decode';
import type { TimeSpan } from '@jportal/decode';
import { AppContext, AppDef, AppSize, APPS, appCommand, appInputs, appMissing, repoRoot } from '../bench-apps';
import type { StageTimes } from '../bench-stages';
import { CliError, ExitCode } from '../exit';
import { extractJacocoAgent, jacocoAgentOption, jacocoMissing, jacocoReportXml, parseJacocoXml } from '../jacoco';
import { lineShapes, twinLines } from '../coverage-twins';
import { findExecutable, locateAgent, locateEmulatorPlugin } from '../agent-path';
import { stderrLogger } from '../log';
import { LOSS_PRESETS } from './accuracy';
import { DETERMINISTIC_JVM_FLAGS } from './record';
import { AgentCost, AppRounds, overheadInterval, parseAgentCost } from '../overhead-stats';
import { spanJson } from '../time-span';

export interface BenchAppsOptions {
  only?: string[];
  sizes: AppSize[];
  /** timing rounds (default 5 short, 3 full) */
  runs?: number;
  /** working directory (default out/bench-apps) */
  out?: string;
  /** where results are kept (default bench/apps/results; OUT/results when `out` is given) */
  results?: string;
  /** markdown report (default docs/performance.md) */
  md?: string;
  /** leave out the 25%-loss trace */
  noLoss?: boolean;
  /** leave out JaCoCo */
  noJacoco?: boolean;
  /** write the report from the kept results only, run nothing */
  reportOnly?: boolean;
  /** timing only: leave out the emulator and everything that needs its trace (hot methods, coverage) */
  noTrace?: boolean;
  /**
   * leave out the timing rounds (native, agent, JFR): the kept result's timing rows and JFR recordings are used
   * (timing wants a quiet machine; the trace stages can run on a busy one)
   */
  noTiming?: boolean;
  /**
   * leave out the decode-only stages (jportal decode, the throughput beside libipt, the per-stage timing): the
   * trace is recorded and analyzed only (a full size's trace is hours of decoding for each of them)
   */
  noDecodeStages?: boolean;
  /**
   * record the loss-free trace and measure only the decode throughput beside libipt (bench/decode); every other row
   * of the kept result stays
   */
  throughputOnly?: boolean;
  /**
   * the coverage check only: the loss-free trace already in the work directory (recorded when there is none) analyzed
   * for coverage, and the JaCoCo run; every other row of the kept result stays
   */
  coverageOnly?: boolean;
  /**
   * the growth measurement only: the loss-free trace (the one in the work directory, recorded when there is none)
   * analyzed whole with one worker under /usr/bin/time; every other row of the kept result stays. The growth table
   * compares these rows across sizes (run each size the same way, e.g. pinned to one core with taskset)
   */
  growthOnly?: boolean;
  /** with growthOnly: only this span of the trace analyzed (`--time`), as given (spanText) and parsed */
  span?: TimeSpan;
  spanText?: string;
  /**
   * the decoder's stages only (bench-stages.ts: flow, attribution, reconstruction, recovery, one process) on the
   * loss-free trace in the work directory (recorded when there is none); every other row of the kept result stays
   */
  stagesOnly?: boolean;
  /**
   * dedicated overhead rounds only: native and agent alternating (no other variant, no start-up timing), kept as the
   * result's `overhead` beside the full timing rounds; every other row of the kept result stays. More rounds of the
   * two runs that matter narrow the overhead's interval for the same machine time
   */
  overheadOnly?: boolean;
  /**
   * with overheadOnly: this run's rounds are added to the kept dedicated rounds (same agent source tree, same CPU)
   * instead of replacing them
   */
  addRounds?: boolean;
  json?: boolean;
  /** the command line, for the report */
  commandLine: string;
}

type Variant = 'native' | 'agent' | 'agentNoClasses' | 'debugNonSafepoints' | 'jfrProfile' | 'jfr1ms';

export interface HotTop {
  reference: string[];
  jfrProfile?: { samples: number; top: string[]; shared: number };
  jfr1ms?: { samples: number; top: string[]; shared: number };
  loss25?: { top: string[]; shared: number; pmd: number };
}

export interface CoverageCheck {
  jacocoCovered: number;
  oursCovered: number;
  both: number;
  onlyJacoco: number;
  onlyOurs: number;
  /** both / (covered by either) over the source files JaCoCo reports */
  agreement: number;
  onlyJacocoSample: string[];
  onlyOursSample: string[];
  /** disagreements by class (Java source file), the largest first */
  byFile: { file: string; onlyJacoco: number; onlyOurs: number }[];
  /**
   * Of the lines only one tool covers, those whose bytecode is the same as a line only the other covers
   * (coverage-twins.ts): code the trace cannot tell from its twin. Absent when the jars were not read.
   */
  twins?: { onlyJacoco: number; onlyOurs: number; sample: string[] };
  /**
   * Garbage collections (-Xlog:gc) of the workload without JaCoCo and of the JaCoCo run whose coverage was taken, and
   * the young generation that run was given (undefined: the JVM's default) so that it collects no more often
   */
  gc?: { plain: number; jacoco: number; youngMiB?: number; metaspaceMiB?: number };
  /** 'method': the jar has no line numbers, so the counts are of methods run (undefined: lines) */
  unit?: 'method';
}

export interface AppResult {
  app: string;
  size: AppSize;
  date: string;
  command: string;
  ok: boolean;
  errors: { stage: string; message: string }[];
  runs?: number;
  /** when the timing rounds ran (differs from `date` when a later run kept them: --no-timing) */
  timingDate?: string;
  /** median wall seconds per variant */
  run?: Partial<Record<Variant, number>>;
  /** every round's wall seconds per variant (for the overhead's bootstrap interval) */
  runSamples?: Partial<Record<Variant, number[]>>;
  /** the agent's own account of its cost (`stats=1`), medians over the timed agent rounds */
  agentCost?: AgentCost;
  /**
   * `--overhead-only`: dedicated alternating rounds of native and agent only; when present the report's overhead and its
   * interval come from these. `agentTree`: git's tree id of agent-java/ (the agent's source measured; "-dirty" when
   * it had uncommitted changes)
   */
  overhead?: {
    date: string;
    machine: string;
    runs: number;
    agentTree?: string;
    samples: { native: number[]; agent: number[] };
    agentCost?: AgentCost;
    /** the command that measured them (the first batch's) */
    command?: string;
    /** `--add-rounds`: each batch of rounds pooled here (the first one's date is `date`) */
    batches?: { date: string; runs: number; command?: string }[];
  };
  startup?: { native: number; agent: number; agentNoClasses: number };
  metadataBytes?: number;
  emulated?: {
    seconds: number;
    ptBytes: number;
    metaBytes: number;
    threads: number;
    insns: number;
    lostInsns: number;
    complete: boolean;
    validationErrors: number;
  };
  decodeCli?: { workers: number; wallMs: number; ptBytes: number; gaps: number; bytecodes: number };
  throughput?: {
    ptBytes: number;
    oursMBs: number;
    oursParallelMBs?: number;
    workers?: number;
    /** libipt's block decoder given the latest bytes of each code section only */
    libiptMBs: number;
    ratio1: number;
    ratioAll?: number;
    oursGaps: number;
    libiptErrors: number;
    /** the flow walk alone (PT -> blocks) over libipt's block decoder, one worker and all */
    walkRatio1?: number;
    walkRatioAll?: number;
    /** instructions: our walk's, and libipt's on the latest bytes */
    walkInsns?: number;
    libiptInsns?: number;
    /**
     * libipt's block decoder given every version of every section with its time span (the image our walk uses),
     * and the ratios against it: like for like
     */
    libiptTimed?: { mbs: number; insns: number; errors: number };
    timedRatio1?: number;
    timedRatioAll?: number;
    walkTimedRatio1?: number;
    walkTimedRatioAll?: number;
    /** when this was measured (differs from `date` after --throughput-only) */
    date?: string;
  };
  /** the decoder's stages; `date` and `machine` when they were measured apart from the rest (--stages-only) */
  stages?: StageTimes & { date?: string; machine?: string };
  analyze?: { seconds: number; maxRssBytes: number; threads: number; bytecodes: number; gaps: number; recovered: number; lostTimeShare: number; problems: number };
  hot?: HotTop;
  coverage?: CoverageCheck;
  /** when the coverage check ran (differs from `date` after --coverage-only) */
  coverageDate?: string;
  /** the CPU (model name) the run's stages were measured on, and the coverage check's (absent in results from before the field: measuredOn names them 'unknown CPU') */
  machine?: string;
  coverageMachine?: string;
  /** `--growth-only`: the loss-free trace analyzed whole with one worker (time, peak memory, work) */
  growth?: AnalyzeGrowth;
}

export interface AnalyzeGrowth {
  date: string;
  ptBytes: number;
  seconds: number;
  maxRssBytes: number;
  bytecodes: number;
  /** analyze's windows (a thread longer than a window is reconstructed and recovered window by window) */
  windows: number;
  workers: number;
  /** the CPUs the process was allowed to run on (taskset) */
  cpus: number;
  /** the CPU's model name */
  machine?: string;
  /** decoded in a worker thread while the main thread walked the windows (analyze's default since 2026-12-01); absent: spilled, then read */
  streamed?: boolean;
  /**
   * `--time`: only this span of the trace was analyzed (seconds since the capture started; null: open), out of a
   * recording of `recordSeconds` (jportal record's wall time, when known) and `wholePtBytes` of PT; `ptBytes` is then
   * what the span's decode read
   */
  span?: { fromSeconds: number | null; toSeconds: number | null; recordSeconds?: number; wholePtBytes: number };
}

/** Child node processes may hold a large trace's events: a heap limit well above node's default. */
const NODE_HEAP = `--max-old-space-size=${Math.max(4096, Math.floor((os.totalmem() / 2 ** 20) * 0.6))}`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function oneLine(s: string | undefined): string {
  const lines = (s ?? '').trim().split('\n').filter(Boolean);
  return (lines.find((l) => /error|exception|jportal:/i.test(l)) ?? lines[lines.length - 1] ?? '').slice(0, 300);
}

/** Runs the jportal CLI (this build) as a child; stdout captured, stderr kept for the error line. */
function cli(args: string[], timeoutMs = 3_600_000): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [NODE_HEAP, path.join(__dirname, '..', 'bin.js'), ...args], { encoding: 'utf8', maxBuffer: 512 << 20, timeout: timeoutMs });
}

function javaVersion(java: string): string {
  const r = spawnSync(java, ['-version'], { encoding: 'utf8' });
  return (r.stderr ?? '').split('\n').filter(Boolean).slice(0, 2).join('; ');
}

const cpuModel = () => os.cpus()[0]?.model ?? 'unknown CPU';

function machineFacts(java: string): Record<string, string> {
  const cpu = cpuModel();
  const qemu = spawnSync('qemu-x86_64', ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? 'no qemu-x86_64';
  return {
    cpu,
    cores: String(os.cpus().length), // (the machine's, not the ones this process may use: bench runs may be pinned)
    ram: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel: `${os.type()} ${os.release()}`,
    jdk: javaVersion(java),
    node: process.version,
    qemu,
  };
}

/**
 * Seconds of each variant over alternating rounds: every round's (`samples`) and their median; throws naming the
 * variant when a run fails.
 */
function timeAlternating(
  variants: { name: string; argv: string[]; before?: () => void; after?: (round: number, stderr: string) => void }[],
  java: string,
  rounds: number,
  cwd: string,
): { medians: Record<string, number>; samples: Record<string, number[]> } {
  const times: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++)
    for (const v of variants) {
      v.before?.();
      const t0 = process.hrtime.bigint();
      const p = spawnSync(java, v.argv, { cwd, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 << 20, timeout: 600_000 });
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (p.status !== 0) throw new Error(`${v.name} run ${r + 1} exited ${p.status ?? p.signal}: ${oneLine(p.stderr) || p.error?.message}`);
      (times[v.name] ??= []).push(s);
      v.after?.(r, p.stderr);
    }
  return { medians: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])), samples: times };
}

/** dedicated overhead rounds as the interval takes them: one batch, or each `--add-rounds` batch apart */
function dedicatedRounds(o: NonNullable<AppResult['overhead']>): AppRounds {
  const batches = o.batches ?? [{ date: o.date, runs: o.runs }];
  if (batches.length === 1) return { base: o.samples.native, test: o.samples.agent };
  let at = 0;
  return {
    batches: batches.map((b) => {
      const r = { base: o.samples.native.slice(at, at + b.runs), test: o.samples.agent.slice(at, at + b.runs) };
      at += b.runs;
      return r;
    }),
  };
}

/** the medians of the agent's own cost accounts over its rounds; undefined when it printed none */
function medianCost(costs: readonly AgentCost[]): AgentCost | undefined {
  if (!costs.length) return undefined;
  return {
    jvmThreadsMs: median(costs.map((k) => k.jvmThreadsMs)),
    watcherCpuMs: median(costs.map((k) => k.watcherCpuMs)),
    writerCpuMs: median(costs.map((k) => k.writerCpuMs)),
    processCpuMs: median(costs.map((k) => k.processCpuMs)),
  };
}

/** why this run's rounds may not join the kept dedicated rounds (`--add-rounds`); '' when they may */
function addRoundsRefusal(kept: AppResult['overhead'], tree: string | undefined): string {
  if (!kept) return 'there are no kept dedicated rounds (run --overhead-only without --add-rounds first)';
  if (!tree || tree.endsWith('-dirty') || kept.agentTree !== tree) return `the agent's source differs from the kept rounds' (${tree ?? 'not in git'} against ${kept.agentTree ?? 'unknown'})`;
  if (kept.machine !== cpuModel()) return `the kept rounds ran on another CPU (${kept.machine})`;
  return '';
}

/** git's tree id of agent-java/ (the agent's source), "-dirty" when it has uncommitted changes; undefined outside git */
function agentTree(): string | undefined {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: repoRoot(), encoding: 'utf8' });
  const tree = git('rev-parse', 'HEAD:agent-java');
  if (tree.status !== 0) return undefined;
  const dirty = git('status', '--porcelain', '--', 'agent-java').stdout.trim() !== '';
  return tree.stdout.trim() + (dirty ? '-dirty' : '');
}

function emptyDir(d: string): void {
  fs.rmSync(d, { recursive: true, force: true });
  fs.mkdirSync(d, { recursive: true });
}

/** Top-N methods by top-frame samples of jdk.ExecutionSample in a JFR file, labelled like hot-methods.json. */
export function jfrTop(jfrFile: string, n: number): { samples: number; top: string[] } {
  const r = spawnSync('jfr', ['print', '--json', '--stack-depth', '1', '--events', 'jdk.ExecutionSample', jfrFile], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`jfr print ${jfrFile}: ${oneLine(r.stderr)}`);
  type Frame = { method: { type: { name: string }; name: string; descriptor: string } };
  const j = JSON.parse(r.stdout) as { recording: { events: { values: { stackTrace?: { frames: Frame[] } } }[] } };
  const counts = new Map<string, number>();
  let samples = 0;
  for (const e of j.recording.events) {
    const f = e.values.stackTrace?.frames[0];
    if (!f) continue;
    samples++;
    const label = `${f.method.type.name.replace(/\//g, '.')}.${f.method.name}${f.method.descriptor}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n).map(([k]) => k);
  return { samples, top };
}

/** Top-N methods by exclusive bytecodes from an analyze report's hot-methods.json. */
export function oursTop(reportDir: string, n: number): string[] {
  const j = JSON.parse(fs.readFileSync(path.join(reportDir, 'hot-methods.json'), 'utf8')) as { total: { methods: { label: string; exclBytecodes: number }[] } };
  return j.total.methods.filter((m) => m.label !== '(unknown)' && m.exclBytecodes > 0).slice(0, n).map((m) => m.label);
}

const shared = (a: string[], b: string[]) => a.filter((x) => b.includes(x)).length;

/** Instructions traced and lost, from the emulator's thread_end sideband records. */
export function sidebandInsns(trace: string): { insns: number; lost: number } {
  const f = path.join(trace, 'pt', 'sideband.jsonl');
  let insns = 0;
  let lost = 0;
  if (!fs.existsSync(f)) return { insns, lost };
  for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
    if (!line.includes('"thread_end"')) continue;
    const e = JSON.parse(line) as { insns?: number; lost_insns?: number };
    insns += e.insns ?? 0;
    lost += e.lost_insns ?? 0;
  }
  return { insns, lost };
}

interface RecordJson {
  bytes: number;
  complete: boolean;
  ptThreads: number;
  ptBytes: number;
}

function record(trace: string, java: string, argv: string[], extra: string[]): { seconds: number; summary: RecordJson } {
  const t0 = process.hrtime.bigint();
  const r = cli(['record', '--pt=emulate', '--deterministic', '--force', '--json', '--out', trace, ...extra, '--', java, ...argv]);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`jportal record --pt=emulate exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
  return { seconds, summary: JSON.parse(r.stdout) as RecordJson };
}

interface AnalyzeJson {
  threads: unknown[];
  bytecodes: number;
  gaps: number;
  recovered: number;
  lostTimeShare: number;
  problems: string[];
  windows?: { count: number; streamed?: boolean };
}

/** Bytes of PT in a trace directory (every thread's file). */
function ptBytesOf(trace: string): number {
  const d = path.join(trace, 'pt');
  return fs.readdirSync(d).filter((f) => f.endsWith('.pt')).reduce((s, f) => s + fs.statSync(path.join(d, f)).size, 0);
}

function twinsOf(onlyJ: string[], onlyO: string[], jars: readonly string[]): CoverageCheck['twins'] {
  const t = twinLines(onlyJ, onlyO, lineShapes(jars));
  return { onlyJacoco: t.onlyFirst, onlyOurs: t.onlySecond, sample: t.sample };
}

/** A recording's row of the report (validated, instructions from the sideband), and why it is not usable, if not. */
function emulatedRow(trace: string, r: ReturnType<typeof record>): { row: NonNullable<AppResult['emulated']>; problem?: string } {
  const v = validateTrace(trace);
  const sb = sidebandInsns(trace);
  const row = {
    seconds: r.seconds,
    ptBytes: r.summary.ptBytes,
    metaBytes: r.summary.bytes,
    threads: r.summary.ptThreads,
    insns: sb.insns,
    lostInsns: sb.lost,
    complete: r.summary.complete && v.complete,
    validationErrors: v.issues.filter((i) => i.severity === 'error').length,
  };
  return { row, problem: row.complete && !row.validationErrors ? undefined : `the emulated trace did not validate: ${v.problems[0] ?? 'incomplete'}` };
}

/**
 * Whether a kept trace holding `have` bytes of PT can be the workload's run the kept result measured (`measured` bytes;
 * 0: none measured): within a factor of 2. Runs of one workload differ by a few percent; a run that ended early
 * leaves a complete trace of a few MB (sunflow short: 1 MB against 121 MB, analyzed in 1 s as 132 bytecodes).
 */
export function keptTraceFits(have: number, measured: number): boolean {
  return !(measured > 0) || (have * 2 >= measured && have <= measured * 2);
}

/**
 * The loss-free trace already in `trace` when it is complete, validates and fits the kept result's (keptTraceFits;
 * undefined), else one recorded there anew (the recording's result; `scratch`, the program's own output directory,
 * emptied first).
 */
function keptOrRecorded(trace: string, java: string, argv: string[], scratch: string, info: (m: string) => void, measured = 0): ReturnType<typeof record> | undefined {
  const v = fs.existsSync(trace) ? validateTrace(trace) : undefined;
  if (v?.complete && !v.issues.some((i) => i.severity === 'error')) {
    const have = ptBytesOf(trace);
    if (keptTraceFits(have, measured)) {
      info(`using the trace in ${trace}`);
      return undefined;
    }
    info(`the trace in ${trace} holds ${(have / 1e6).toFixed(1)} MB of PT, the kept result's run ${(measured / 1e6).toFixed(1)} MB: not a whole run of the workload; recording again`);
  }
  emptyDir(scratch);
  return record(trace, java, argv, []);
}

/** The decoder's stages on `trace`, timed in a process of their own (bench-stages.ts). */
function stageTimes(trace: string): StageTimes {
  const r = spawnSync(process.execPath, [NODE_HEAP, path.join(__dirname, '..', 'bench-stages.js'), trace], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`bench-stages exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
  return JSON.parse(r.stdout) as StageTimes;
}

/** jportal analyze under /usr/bin/time: wall seconds and peak RSS. */
function analyze(trace: string, extra: string[]): { seconds: number; maxRssBytes: number; summary: AnalyzeJson } {
  const timeFile = path.join(trace, 'analyze.time');
  const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%e %M', process.execPath, NODE_HEAP, path.join(__dirname, '..', 'bin.js'), 'analyze', trace, '--json', ...extra], {
    encoding: 'utf8',
    maxBuffer: 512 << 20,
  });
  if (r.status !== 0) throw new Error(`jportal analyze exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
  const [e, m] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ');
  const summary = JSON.parse(r.stdout) as AnalyzeJson;
  const only = extra.includes('--only') ? extra[extra.indexOf('--only') + 1] : undefined;
  const expected = only === 'hot' ? ['hot-methods.json'] : only === 'coverage' ? ['coverage/jacoco.xml'] : ['report.html', 'hot-methods.json', 'coverage/jacoco.xml'];
  for (const f of expected) if (!fs.existsSync(path.join(trace, 'report', f))) throw new Error(`jportal analyze wrote no ${f}`);
  return { seconds: Number(e), maxRssBytes: Number(m) * 1024, summary };
}

export function compareCoverage(jacocoXml: string, oursXml: string, jars?: readonly string[]): CoverageCheck {
  const j = parseJacocoXml(jacocoXml);
  const o = parseJacocoXml(oursXml);
  // a jar compiled without line-number tables (Debian's sunflow.jar) has no lines for either tool: the methods run
  // (JaCoCo: some instruction covered) are compared instead
  const byMethod = j.lines.size === 0 && j.methods.size > 0;
  const jx = byMethod ? j.methods : j.lines;
  const ox = byMethod ? o.methods : o.lines;
  let both = 0;
  const onlyJ: string[] = [];
  const onlyO: string[] = [];
  let jc = 0;
  let oc = 0;
  const byFile = new Map<string, { file: string; onlyJacoco: number; onlyOurs: number }>();
  const bump = (key: string, side: 'onlyJacoco' | 'onlyOurs') => {
    // (the source file; comparing methods, the class)
    const file = byMethod ? key.slice(0, key.lastIndexOf('.', key.indexOf('('))) : key.slice(0, key.lastIndexOf(':'));
    const e = byFile.get(file) ?? { file, onlyJacoco: 0, onlyOurs: 0 };
    e[side]++;
    byFile.set(file, e);
  };
  // the lines JaCoCo knows (the source files of the coverage jars); ours restricted to the same
  for (const [k, jcov] of jx) {
    const ocov = ox.get(k) === true;
    if (jcov) jc++;
    if (ocov) oc++;
    if (jcov && ocov) both++;
    else if (jcov) {
      onlyJ.push(k);
      bump(k, 'onlyJacoco');
    } else if (ocov) {
      onlyO.push(k);
      bump(k, 'onlyOurs');
    }
  }
  const either = both + onlyJ.length + onlyO.length;
  return {
    jacocoCovered: jc,
    oursCovered: oc,
    both,
    onlyJacoco: onlyJ.length,
    onlyOurs: onlyO.length,
    agreement: either ? both / either : 1,
    onlyJacocoSample: onlyJ.slice(0, 20),
    onlyOursSample: onlyO.slice(0, 20),
    byFile: [...byFile.values()].sort((a, b) => b.onlyJacoco + b.onlyOurs - (a.onlyJacoco + a.onlyOurs)).slice(0, 15),
    twins: jars && !byMethod ? twinsOf(onlyJ, onlyO, jars) : undefined,
    unit: byMethod ? 'method' : undefined,
  };
}

/**
 * A partial run (--no-trace, --throughput-only, --coverage-only) merged into the kept result: `fields` from this run,
 * the kept result's errors of the stages it re-ran (names starting with `stage`) replaced by this run's.
 */
function keptWith(before: AppResult, res: AppResult, fields: Partial<AppResult>, stage: string): AppResult {
  return { ...before, ...fields, ok: before.ok && res.ok, errors: [...before.errors.filter((e) => !e.stage.startsWith(stage)), ...res.errors] };
}

async function benchApp(app: AppDef, size: AppSize, o: BenchAppsOptions, java: string, agent: string, work: string, log: ReturnType<typeof stderrLogger>, before?: AppResult): Promise<AppResult> {
  const dir = path.join(work, `${app.name}-${size}`);
  fs.mkdirSync(dir, { recursive: true });
  const c: AppContext = { inputs: appInputs(), scratch: path.join(dir, 'scratch') };
  const argv = appCommand(app, c, size, app.args(size, c));
  const res: AppResult = { app: app.name, size, date: new Date().toISOString(), command: o.commandLine, ok: true, errors: [], machine: cpuModel() };
  const stage = async (name: string, f: () => void | Promise<void>) => {
    const t0 = Date.now();
    try {
      await f();
      log.info(`${app.name} ${size}: ${name} done (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      res.ok = false;
      const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
      res.errors.push({ stage: name, message });
      log.warn(`${app.name} ${size}: ${name} failed: ${message}`);
    }
  };
  const runs = o.runs ?? (size === 'short' ? 5 : 3);
  res.runs = runs;
  const agentDir = path.join(dir, 'agent-run');
  const jfrDir = path.join(dir, 'jfr');
  fs.mkdirSync(jfrDir, { recursive: true });
  const jfrProfile = path.join(jfrDir, 'profile.jfr');
  const jfr1ms = path.join(jfrDir, 'max.jfr');

  if (o.throughputOnly && !before) throw new CliError(`bench apps: --throughput-only: no kept result for ${app.name} ${size} (run once without it)`, ExitCode.BadInput);
  if (o.coverageOnly) {
    if (!before) throw new CliError(`bench apps: --coverage-only: no kept result for ${app.name} ${size} (run once without it)`, ExitCode.BadInput);
    const trace = path.join(dir, 'trace');
    await stage('loss-free trace for coverage', () => {
      keptOrRecorded(trace, java, argv, c.scratch, (m) => log.info(`${app.name} ${size}: ${m}`), before.emulated?.ptBytes);
      analyze(trace, ['--only', 'coverage']);
    });
    if (res.ok) await coverageStage(stage, res, app, c, java, argv, dir, trace);
    return keptWith(before, res, res.coverage ? { coverage: res.coverage, coverageDate: res.date, coverageMachine: res.machine } : {}, 'coverage');
  }
  if (o.stagesOnly) {
    if (!before) throw new CliError(`bench apps: --stages-only: no kept result for ${app.name} ${size} (run once without it)`, ExitCode.BadInput);
    const trace = path.join(dir, 'trace');
    await stage('decoder stages (flow, attribute, reconstruct, recover)', () => {
      keptOrRecorded(trace, java, argv, c.scratch, (m) => log.info(`${app.name} ${size}: ${m}`), before.emulated?.ptBytes);
      res.stages = { ...stageTimes(trace), date: res.date, machine: res.machine };
    });
    return keptWith(before, res, { stages: res.stages ?? before.stages }, 'decoder stages');
  }
  if (o.growthOnly) {
    const trace = path.join(dir, 'trace');
    await stage('loss-free trace analyzed whole, one worker (growth)', () => {
      const r = keptOrRecorded(trace, java, argv, c.scratch, (m) => log.info(`${app.name} ${size}: ${m}`), before?.emulated?.ptBytes);
      if (r) {
        const e = emulatedRow(trace, r);
        if (e.problem) throw new Error(e.problem);
        res.emulated = e.row;
      }
      const a = analyze(trace, ['--workers', '1', ...(o.spanText !== undefined ? ['--time', o.spanText] : [])]);
      const wholePtBytes = ptBytesOf(trace);
      res.growth = {
        date: res.date,
        ptBytes: o.span ? ptBytesInSpan(trace, o.span) : wholePtBytes,
        seconds: a.seconds,
        maxRssBytes: a.maxRssBytes,
        bytecodes: a.summary.bytecodes,
        windows: a.summary.windows?.count ?? a.summary.threads.length,
        workers: 1,
        cpus: os.availableParallelism(),
        machine: res.machine,
        streamed: !!a.summary.windows?.streamed,
        ...(o.span ? { span: { ...spanJson(o.span)!, recordSeconds: r ? r.seconds : before?.emulated?.seconds, wholePtBytes } } : {}),
      };
    });
    // (a trace recorded again here is described by the growth row alone: the kept emulated row stays beside the stage
    // rows measured on its trace)
    return before ? keptWith(before, res, { growth: res.growth ?? before.growth, emulated: before.emulated ?? res.emulated }, 'loss-free trace analyzed whole') : res;
  }
  const agentArg = (extra: string) => `-agentpath:${agent}=out=${agentDir}${extra}`;
  const costs: AgentCost[] = [];
  const checkAgent = (round: number, stderr: string) => {
    const cost = parseAgentCost(stderr);
    if (cost) costs.push(cost);
    if (round !== 0) return;
    const v = validateTrace(agentDir);
    if (!v.complete || v.issues.some((i) => i.severity === 'error')) throw new Error(`the agent's metadata did not validate: ${v.problems[0] ?? 'incomplete'}`);
    res.metadataBytes = fs.statSync(path.join(agentDir, 'meta.jpt')).size;
  };
  const nativeRun = { name: 'native' as const, argv, before: () => emptyDir(c.scratch) };
  // (stats=1 only prints what the agent counts anyway)
  const agentRun = { name: 'agent' as const, argv: [agentArg(',stats=1'), ...argv], before: () => (emptyDir(c.scratch), emptyDir(agentDir)), after: checkAgent };
  if (o.overheadOnly) {
    const tree = agentTree();
    // (--add-rounds: runBenchApps checked every application's kept rounds before any round ran)
    const kept = before?.overhead;
    await stage('overhead rounds (native, agent; alternating)', () => {
      const t = timeAlternating([nativeRun, agentRun], java, runs, dir);
      const fresh = { date: res.date, machine: res.machine ?? cpuModel(), runs, agentTree: tree, command: o.commandLine, samples: { native: t.samples.native!, agent: t.samples.agent! }, agentCost: medianCost(costs) };
      res.overhead =
        o.addRounds && kept
          ? {
              ...kept,
              runs: kept.runs + runs,
              samples: { native: [...kept.samples.native, ...fresh.samples.native], agent: [...kept.samples.agent, ...fresh.samples.agent] },
              // (the agent's cost account: medians over every batch's rounds are not kept, the latest batch's stands)
              agentCost: fresh.agentCost ?? kept.agentCost,
              batches: [...(kept.batches ?? [{ date: kept.date, runs: kept.runs, command: kept.command }]), { date: fresh.date, runs, command: o.commandLine }],
            }
          : fresh;
      fs.rmSync(agentDir, { recursive: true, force: true });
    });
    return before ? keptWith(before, res, { overhead: res.overhead ?? before.overhead }, 'overhead rounds') : res;
  }
  if (o.noTiming) {
    if (!before?.run) throw new CliError(`bench apps: --no-timing: no kept timing result for ${app.name} ${size} (run once without it)`, ExitCode.BadInput);
    res.runs = before.runs;
    res.metadataBytes = before.metadataBytes;
    res.run = before.run;
    res.runSamples = before.runSamples;
    res.agentCost = before.agentCost;
    res.startup = before.startup;
    res.timingDate = before.timingDate ?? before.date;
  } else if (!o.throughputOnly) // (--throughput-only: the kept result keeps its timing rows)
    await stage('timing (native, agent, JFR; alternating)', () => {
    const v: { name: Variant; argv: string[]; before?: () => void; after?: (r: number, stderr: string) => void }[] = [
      nativeRun,
      agentRun,
      { name: 'agentNoClasses', argv: [agentArg(',classes=0'), ...argv], before: () => (emptyDir(c.scratch), emptyDir(agentDir)) },
      // no agent, only the VM flag the agent sets (debug info at every compiled instruction, which the decoder needs):
      // the part of the overhead that is the VM's own work for the agent
      { name: 'debugNonSafepoints', argv: ['-XX:+UnlockDiagnosticVMOptions', '-XX:+DebugNonSafepoints', ...argv], before: () => emptyDir(c.scratch) },
      { name: 'jfrProfile', argv: [`-XX:StartFlightRecording=filename=${jfrProfile},settings=profile`, ...argv], before: () => emptyDir(c.scratch) },
      { name: 'jfr1ms', argv: [`-XX:StartFlightRecording=filename=${jfr1ms},settings=profile,method-profiling=max`, ...argv], before: () => emptyDir(c.scratch) },
    ];
    const timed = timeAlternating(v, java, runs, dir);
    res.run = timed.medians as Partial<Record<Variant, number>>;
    res.runSamples = timed.samples as Partial<Record<Variant, number[]>>;
    res.agentCost = medianCost(costs);
    const su = appCommand(app, c, size, app.startupArgs(c));
    const s = timeAlternating(
      [
        { name: 'native', argv: su, before: () => emptyDir(c.scratch) },
        { name: 'agent', argv: [agentArg(''), ...su], before: () => (emptyDir(c.scratch), emptyDir(agentDir)) },
        { name: 'agentNoClasses', argv: [agentArg(',classes=0'), ...su], before: () => (emptyDir(c.scratch), emptyDir(agentDir)) },
      ],
      java,
      runs,
      dir,
    ).medians;
    res.startup = { native: s.native, agent: s.agent, agentNoClasses: s.agentNoClasses };
    fs.rmSync(agentDir, { recursive: true, force: true });
  });

  // --no-trace: the kept result's trace stages stay, with this run's timing rows
  if (o.noTrace)
    return before?.emulated
      ? keptWith(before, res, { runs: res.runs, run: res.run, runSamples: res.runSamples, agentCost: res.agentCost, startup: res.startup, metadataBytes: res.metadataBytes, timingDate: res.date }, 'timing')
      : res;
  const trace = path.join(dir, 'trace');
  let traced = false;
  await stage('emulated PT record (loss-free)', () => {
    emptyDir(c.scratch);
    const e = emulatedRow(trace, record(trace, java, argv, []));
    res.emulated = e.row;
    if (e.problem) throw new Error(e.problem);
    traced = true;
  });

  if (traced && o.noDecodeStages) log.info(`${app.name} ${size}: decode, throughput and decoder-stage timing left out (--no-decode-stages)`);
  if (traced && !o.noDecodeStages) {
    if (!o.throughputOnly) await stage('jportal decode --json', () => {
      const workers = os.availableParallelism();
      // (the events are counted, not written: analyze decodes again as it goes, and a ray tracer's 32x32 image is
      // 2.4 G events, 68 GB in decoded-events files)
      const r = cli(['decode', trace, '--json', '--no-write', '--workers', String(workers)]);
      if (r.status !== 0) throw new Error(`jportal decode exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
      const j = JSON.parse(r.stdout) as { wallMs: number; ptBytes: number; threads: { gaps: number; bytecodes: number }[] };
      res.decodeCli = { workers, wallMs: j.wallMs, ptBytes: j.ptBytes, gaps: j.threads.reduce((s, t) => s + t.gaps, 0), bytecodes: j.threads.reduce((s, t) => s + t.bytecodes, 0) };
    });
    await stage('decode throughput beside libipt (bench/decode)', () => {
      const script = path.join(repoRoot(), 'bench', 'decode', 'run.js');
      if (!fs.existsSync(script)) throw new Error(`${script} not found`);
      const r = spawnSync(process.execPath, [NODE_HEAP, script, trace, '--runs', '1', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status !== 0) throw new Error(`bench/decode/run.js exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
      type D = {
        ptBytes: number;
        flow: { ours: number; oursGaps: number; libiptBlock: number; libiptErrors: number; libiptInsns: number; ratio: number; timedRatio?: number };
        parallel: { workers: number; ours: number; timedRatio?: number } | null;
        flowWalk?: { ratio: number; allRatio: number | null; timedRatio?: number; timedAllRatio?: number | null; insns: number };
        libiptBlockTimed?: { mbs: number; insns: number; errors: number };
      };
      const j = JSON.parse(r.stdout) as D;
      const T = j.libiptBlockTimed;
      res.throughput = {
        ptBytes: j.ptBytes,
        oursMBs: j.flow.ours,
        oursParallelMBs: j.parallel?.ours,
        workers: j.parallel?.workers,
        libiptMBs: j.flow.libiptBlock,
        ratio1: j.flow.ratio,
        ratioAll: j.parallel ? j.parallel.ours / j.flow.libiptBlock : undefined,
        oursGaps: j.flow.oursGaps,
        libiptErrors: j.flow.libiptErrors,
        walkRatio1: j.flowWalk?.ratio,
        walkRatioAll: j.flowWalk?.allRatio ?? undefined,
        walkInsns: j.flowWalk?.insns,
        libiptInsns: j.flow.libiptInsns,
        libiptTimed: T ? { mbs: T.mbs, insns: T.insns, errors: T.errors } : undefined,
        timedRatio1: j.flow.timedRatio,
        timedRatioAll: j.parallel?.timedRatio,
        walkTimedRatio1: j.flowWalk?.timedRatio,
        walkTimedRatioAll: j.flowWalk?.timedAllRatio ?? undefined,
        date: res.date,
      };
    });
    // --throughput-only: the new throughput row in the kept result, nothing else of it changed
    if (o.throughputOnly)
      return keptWith(before!, res, { throughput: res.throughput ?? before!.throughput }, 'decode throughput');
    await stage('decoder stages (flow, attribute, reconstruct, recover)', () => {
      res.stages = stageTimes(trace);
    });
  }
  if (o.throughputOnly) return keptWith(before!, { ...res, ok: false }, {}, 'decode throughput');
  if (traced) {
    await stage('jportal analyze --json', () => {
      const a = analyze(trace, []);
      res.analyze = {
        seconds: a.seconds,
        maxRssBytes: a.maxRssBytes,
        threads: a.summary.threads.length,
        bytecodes: a.summary.bytecodes,
        gaps: a.summary.gaps,
        recovered: a.summary.recovered,
        lostTimeShare: a.summary.lostTimeShare,
        problems: a.summary.problems.length,
      };
      res.hot = { reference: oursTop(path.join(trace, 'report'), 10) };
    });
  }

  await stage('top-10 hot methods (JFR, 25% loss)', () => {
    if (!res.hot) throw new Error('no loss-free hot methods to compare with (the trace or its analysis failed)');
    const ref = res.hot.reference;
    if (fs.existsSync(jfrProfile)) {
      const t = jfrTop(jfrProfile, 10);
      res.hot.jfrProfile = { ...t, shared: shared(t.top, ref) };
    }
    if (fs.existsSync(jfr1ms)) {
      const t = jfrTop(jfr1ms, 10);
      res.hot.jfr1ms = { ...t, shared: shared(t.top, ref) };
    }
    if (!o.noLoss) {
      const lossTrace = path.join(dir, 'trace-loss25');
      emptyDir(c.scratch);
      record(lossTrace, java, argv, ['--loss', LOSS_PRESETS['25']!, '--seed', '1']);
      analyze(lossTrace, ['--only', 'hot']);
      const top = oursTop(path.join(lossTrace, 'report'), 10);
      const sb = sidebandInsns(lossTrace);
      res.hot.loss25 = { top, shared: shared(top, ref), pmd: sb.insns ? sb.lost / sb.insns : 0 };
    }
  });

  if (!o.noJacoco) await coverageStage(stage, res, app, c, java, argv, dir, trace);
  return res;
}

/**
 * Young-generation sizes (MiB) tried in turn for the JaCoCo run until it collects no more often than the plain run;
 * each with a metaspace high-water mark of half as much (JaCoCo's instrumented classes are larger: jython short
 * otherwise collects at the default 21 MB mark, "Metadata GC Threshold", whatever the heap).
 */
const JACOCO_YOUNG_MIB = [512, 1024, 2048, 4096];

/**
 * The workload's coverage under JaCoCo 0.8.6 against the loss-free trace's. The JaCoCo run gets the traced run's JVM
 * flags (`record --deterministic`). JaCoCo's probes and runtime allocate: jython short collects garbage 4 times under
 * JaCoCo and never without it, and only then do its finalizers run (Jython's gc module, FinalizeTrigger, generators'
 * __del__: 83 lines that the traced run, which never collects, did not run). So the garbage collections of a plain run
 * (no JaCoCo, same flags) are counted, and the JaCoCo run is given a larger young generation and metaspace mark
 * (JACOCO_YOUNG_MIB) until it collects no more often; both counts are kept with the result.
 */
async function coverageStage(
  stage: (name: string, f: () => void | Promise<void>) => Promise<void>,
  res: AppResult,
  app: AppDef,
  c: AppContext,
  java: string,
  argv: string[],
  dir: string,
  trace: string,
): Promise<void> {
  await stage('coverage against JaCoCo 0.8.6', () => {
    const ours = path.join(trace, 'report', 'coverage', 'jacoco.xml');
    if (!fs.existsSync(ours)) throw new Error('no coverage from the loss-free trace to compare with');
    const jd = path.join(dir, 'jacoco');
    emptyDir(jd);
    const agentJar = extractJacocoAgent(jd);
    const exec = path.join(jd, 'jacoco.exec');
    const gcLog = path.join(jd, 'gc.log');
    /** runs the workload with `extra` JVM flags and -Xlog:gc; its garbage collections */
    const collections = (what: string, extra: string[]): number => {
      emptyDir(c.scratch);
      fs.rmSync(gcLog, { force: true });
      const r = spawnSync(java, [...extra, ...DETERMINISTIC_JVM_FLAGS, `-Xlog:gc:file=${gcLog}`, ...argv], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 << 20 });
      if (r.status !== 0) throw new Error(`${app.name} ${what} exited ${r.status ?? r.signal}: ${oneLine(r.stderr)}`);
      return gcCount(fs.existsSync(gcLog) ? fs.readFileSync(gcLog, 'utf8') : '');
    };
    const plain = collections('without JaCoCo', []);
    let jacoco = collections('under JaCoCo', [jacocoAgentOption(agentJar, exec)]);
    let youngMiB: number | undefined;
    for (const mib of JACOCO_YOUNG_MIB) {
      if (jacoco <= plain) break;
      youngMiB = mib;
      fs.rmSync(exec, { force: true });
      jacoco = collections(`under JaCoCo (young generation ${mib} MiB)`, [jacocoAgentOption(agentJar, exec), `-Xmn${mib}m`, `-Xmx${2 * mib}m`, `-XX:MetaspaceSize=${mib / 2}m`]);
    }
    const xml = jacocoReportXml(java, exec, app.coverageJars, path.join(jd, 'jacoco.xml'), app.name, path.join(jd, 'no-sources'), jd);
    res.coverage = { ...compareCoverage(xml, fs.readFileSync(ours, 'utf8'), app.coverageJars), gc: { plain, jacoco, youngMiB, metaspaceMiB: youngMiB && youngMiB / 2 } };
  });
}

/** Garbage collections in a -Xlog:gc log: the distinct GC(n) ids of its pauses. */
export function gcCount(log: string): number {
  const ids = new Set<string>();
  for (const m of log.matchAll(/GC\((\d+)\) Pause/g)) ids.add(m[1]!);
  return ids.size;
}

// ---- report ----------------------------------------------------------------------------------------------

const f1 = (x: number | undefined, d = 1, unit = '') => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d) + unit);
const pctS = (x: number | undefined, d = 1) => (x === undefined || !Number.isFinite(x) ? '—' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(d)}%`);
const mb = (b: number | undefined) => (b === undefined ? '—' : `${(b / 1e6).toFixed(1)} MB`);
const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
const geomean = (xs: number[]) => (xs.length ? Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length) : NaN);

/**
 * Which CPU each part of the results was measured on: the run's stages (`machine`), the coverage check, the growth
 * row, the dedicated overhead rounds, as "app size part" lists by CPU model. Results from before these fields were kept name none: `unknown CPU`.
 */
export function measuredOn(results: AppResult[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  const add = (cpu: string | undefined, what: string) => {
    const k = cpu ?? 'unknown CPU';
    if (!by.has(k)) by.set(k, []);
    by.get(k)!.push(what);
  };
  for (const r of [...results].sort((a, b) => a.app.localeCompare(b.app) || a.size.localeCompare(b.size))) {
    if (r.run || r.analyze || r.throughput) add(r.machine, `${r.app} ${r.size} runs`);
    if (r.coverage) add(r.coverageMachine ?? r.machine, `${r.app} ${r.size} coverage`);
    if (r.growth) add(r.growth.machine ?? r.machine, `${r.app} ${r.size} growth`);
    if (r.stages?.machine) add(r.stages.machine, `${r.app} ${r.size} decoder stages`);
    if (r.overhead) add(r.overhead.machine, `${r.app} ${r.size} overhead rounds`);
  }
  return by;
}

export function performanceMarkdown(results: AppResult[], facts: Record<string, string>): string {
  const L: string[] = [];
  const sizes = [...new Set(results.map((r) => r.size))];
  L.push('# Performance on real applications', '');
  L.push('Written by `jportal bench apps` (packages/cli/src/commands/bench.ts) from the results kept in `bench/apps/results/`;');
  L.push('the applications are Debian\'s packages of the programs behind DaCapo\'s batik, fop, h2, jython, luindex and sunflow');
  L.push('(`bench/apps/setup.sh` installs them and prepares the inputs; definitions in packages/cli/src/bench-apps.ts).', '');
  L.push('Commands:', '');
  const overheadCommands = (r: AppResult) => (r.overhead ? (r.overhead.batches ?? [r.overhead]).map((b) => b.command) : []);
  for (const c of [...new Set(results.flatMap((r) => [r.command, ...overheadCommands(r)]))]) if (c) L.push(`    ${c}`);
  L.push('', `Machine: ${facts.cpu}, ${facts.cores} cores, ${facts.ram} RAM, ${facts.kernel}; ${facts.jdk}; node ${facts.node}; ${facts.qemu}.`);
  const elsewhere = [...measuredOn(results)].filter(([cpu]) => cpu !== facts.cpu);
  if (elsewhere.length) L.push(`Measured on other CPUs (same kernel, JDK, node and qemu): ${elsewhere.map(([cpu, parts]) => `${cpu}: ${parts.join(', ')}`).join('; ')}.`);
  L.push('The machine is shared and has no Intel PT: PT is emulated (qemu-x86_64 + the jportal plugin), so PT rates are per');
  L.push('second of *emulated* run time; ratios measured side by side in one run are what to compare, not absolute times.', '');
  // (a size measured for growth only has its rows in the growth table)
  for (const size of sizes.filter((z) => results.some((r) => r.size === z && (r.run || r.overhead || r.analyze || r.coverage || r.throughput)))) {
    const rs = results.filter((r) => r.size === size).sort((a, b) => a.app.localeCompare(b.app));
    L.push(`## ${size} workloads`, '');
    L.push(`Runs: median of alternating rounds (${[...new Set(rs.map((r) => r.runs))].join('/')} per variant); dates ${[...new Set(rs.map((r) => (r.timingDate ?? r.date).slice(0, 16).replace('T', ' ')))].join(', ')} UTC.`, '');
    L.push('### Agent overhead (metadata only, no PT)', '');
    L.push('| app | native | agent | overhead | 95% interval | agent `classes=0` | overhead | `DebugNonSafepoints` alone | overhead | start-up native | start-up agent | ratio | start-up `classes=0` | ratio | metadata |');
    L.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    const ov: number[] = [];
    const ov0: number[] = [];
    const ovFlag: number[] = [];
    const span = (i: ReturnType<typeof overheadInterval>) => (i ? `${pctS(i.low - 1)} .. ${pctS(i.high - 1)}` : '—');
    // (dedicated overhead rounds, when kept, are what the overhead and its interval are taken from)
    const roundsOf = (r: AppResult): AppRounds | undefined =>
      r.overhead ? dedicatedRounds(r.overhead) : r.runSamples?.native && r.runSamples.agent ? { base: r.runSamples.native, test: r.runSamples.agent } : undefined;
    for (const r of rs) {
      const own = r.overhead ? { native: median(r.overhead.samples.native), agent: median(r.overhead.samples.agent) } : undefined;
      const rounds = roundsOf(r);
      const interval = rounds && overheadInterval([rounds]);
      // (dedicated rounds in batches: each batch's ratio of medians, weighted by its rounds; see AppRounds)
      const a = own ? (interval?.ratio ?? ratio(own.agent, own.native)) : ratio(r.run?.agent, r.run?.native);
      const a0 = ratio(r.run?.agentNoClasses, r.run?.native);
      if (a) ov.push(a);
      if (a0) ov0.push(a0);
      const aFlag = ratio(r.run?.debugNonSafepoints, r.run?.native);
      if (aFlag) ovFlag.push(aFlag);
      L.push(`| ${r.app} | ${f1(own?.native ?? r.run?.native, 2, ' s')} | ${f1(own?.agent ?? r.run?.agent, 2, ' s')} | ${pctS(a && a - 1)} | ${span(interval)} | ${f1(r.run?.agentNoClasses, 2, ' s')} | ${pctS(a0 && a0 - 1)} | ${f1(r.run?.debugNonSafepoints, 2, ' s')} | ${pctS(aFlag && aFlag - 1)} | ${f1(r.startup?.native, 2, ' s')} | ${f1(r.startup?.agent, 2, ' s')} | ${f1(ratio(r.startup?.agent, r.startup?.native), 2, 'x')} | ${f1(r.startup?.agentNoClasses, 2, ' s')} | ${f1(ratio(r.startup?.agentNoClasses, r.startup?.native), 2, 'x')} | ${mb(r.metadataBytes)} |`);
    }
    const all = rs.map(roundsOf);
    const suite = all.every((x) => x) ? overheadInterval(all as AppRounds[]) : undefined;
    L.push(`| **geometric mean** | | | **${pctS(geomean(ov) - 1)}** | ${span(suite)} | | **${pctS(geomean(ov0) - 1)}** | | ${ovFlag.length === rs.length ? `**${pctS(geomean(ovFlag) - 1)}**` : '—'} | | | | | | |`, '');
    const dedicated = rs.filter((r) => r.overhead);
    const batchesOf = (xs: AppResult[]) => {
      const n = Math.max(...xs.map((r) => r.overhead!.batches?.length ?? 1));
      return n > 1 ? ` in up to ${n} batches (\`--add-rounds\`; native and agent: medians over all rounds; overhead: each batch's ratio of medians, weighted by its rounds, so that the machine's drift between batches does not mix into the medians)` : '';
    };
    const dateSpan = (ds: string[]) => {
      const m = ds.map((d) => d.slice(0, 16).replace('T', ' ')).sort();
      const [first, last] = [m[0]!, m[m.length - 1]!];
      return first === last ? first : `${first} .. ${first.slice(0, 10) === last.slice(0, 10) ? last.slice(11) : last}`;
    };
    if (dedicated.length)
      L.push(
        `native, agent, overhead and its interval${dedicated.length < rs.length ? ` (${dedicated.map((r) => r.app).join(', ')})` : ''}: dedicated alternating rounds of native and agent only (\`--overhead-only\`; ${[...new Set(dedicated.map((r) => r.overhead!.runs))].join('/')} rounds each${batchesOf(dedicated)}; ${dateSpan(dedicated.flatMap((r) => (r.overhead!.batches ?? [r.overhead!]).map((b) => b.date)))} UTC; agent source tree ${[...new Set(dedicated.map((r) => r.overhead!.agentTree?.slice(0, 12) ?? 'unknown'))].join(', ')}); the other columns: the full timing rounds.`,
        '',
      );
    L.push('The interval: a percentile bootstrap (4,000 resamples of each application\'s native and agent rounds, fixed seed) of');
    L.push('the ratio of medians, and of their geometric mean over the suite; it says how far this machine\'s noise alone moves the');
    L.push('number. "—": rounds from before every round was kept.', '');
    if (rs.some((r) => r.overhead?.agentCost ?? r.agentCost)) {
      L.push('What the agent itself spent (`stats=1`, medians over the agent rounds): wall time inside its JVMTI callbacks and its');
      L.push('start-up and VM-death phases, on the JVM\'s threads; CPU time of its own two threads (the watcher, which finds new');
      L.push('compiled methods and patches, and the writer); their sum as a share of the process\'s CPU time. The rest of the');
      L.push('overhead is the VM\'s own work for the agent (`DebugNonSafepoints`: debug info at every compiled instruction; JVMTI');
      L.push('events) and noise.', '');
      L.push('| app | in JVM threads | watcher CPU | writer CPU | process CPU | agent share of CPU | of native run time |');
      L.push('|---|---|---|---|---|---|---|');
      const share = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(1)}%`);
      for (const r of rs) {
        // (the dedicated overhead rounds' account when there are such rounds)
        const k = r.overhead?.agentCost ?? r.agentCost;
        if (!k) continue;
        const own = k.jvmThreadsMs + k.watcherCpuMs + k.writerCpuMs;
        const native = r.overhead?.agentCost ? median(r.overhead.samples.native) : r.run?.native;
        L.push(`| ${r.app} | ${f1(k.jvmThreadsMs, 1, ' ms')} | ${f1(k.watcherCpuMs, 1, ' ms')} | ${f1(k.writerCpuMs, 1, ' ms')} | ${f1(k.processCpuMs / 1000, 2, ' s')} | ${share(own / k.processCpuMs)} | ${share(native ? own / 1000 / native : undefined)} |`);
      }
      L.push('');
    }
    L.push('### JDK Flight Recorder\'s sampling profiler beside the agent (run-time overhead; top-10 hot methods found)', '');
    L.push('Reference: the 10 methods with the most exclusive bytecodes in the loss-free emulated trace (exact counts). JFR: top');
    L.push('frames of `jdk.ExecutionSample` (Java code only), `settings=profile` (10 ms) and `method-profiling=max` (1 ms).', '');
    L.push('agent: the full timing rounds, beside JFR\'s in the same rounds.', '');
    L.push('| app | agent | JFR 10 ms | JFR 1 ms | JFR 10 ms: samples, top-10 found | JFR 1 ms: samples, top-10 found | jportal at 25% loss (PMD): top-10 found |');
    L.push('|---|---|---|---|---|---|---|');
    for (const r of rs) {
      const h = r.hot;
      L.push(`| ${r.app} | ${pctS(ratio(r.run?.agent, r.run?.native) && ratio(r.run?.agent, r.run?.native)! - 1)} | ${pctS(ratio(r.run?.jfrProfile, r.run?.native) && ratio(r.run?.jfrProfile, r.run?.native)! - 1)} | ${pctS(ratio(r.run?.jfr1ms, r.run?.native) && ratio(r.run?.jfr1ms, r.run?.native)! - 1)} | ${h?.jfrProfile ? `${h.jfrProfile.samples}, ${h.jfrProfile.shared}/10` : '—'} | ${h?.jfr1ms ? `${h.jfr1ms.samples}, ${h.jfr1ms.shared}/10` : '—'} | ${h?.loss25 ? `${h.loss25.shared}/10 (${(100 * h.loss25.pmd).toFixed(1)}%)` : '—'} |`);
    }
    L.push('');
    L.push('### Emulated PT, decoding and analysis', '');
    L.push('| app | emulated run | PT | PT/s emulated | PT bytes/insn | threads | flow | attribute | reconstruct | recover | analyze | peak RSS (analyze) | bytecodes |');
    L.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rs) {
      const e = r.emulated;
      const s = r.stages;
      L.push(`| ${r.app} | ${f1(e?.seconds, 1, ' s')} | ${mb(e?.ptBytes)} | ${e ? `${mb(e.ptBytes / e.seconds)}/s` : '—'} | ${e ? f1(e.ptBytes / e.insns, 3) : '—'} | ${e?.threads ?? '—'} | ${s ? f1(s.flowMs / 1000, 1, ' s') : '—'} | ${s ? f1(s.attributeMs / 1000, 1, ' s') : '—'} | ${s?.reconstructMs !== undefined ? f1(s.reconstructMs / 1000, 1, ' s') : '—'} | ${s ? f1(s.recoverMs / 1000, 1, ' s') : '—'} | ${f1(r.analyze?.seconds, 1, ' s')} | ${r.analyze ? `${(r.analyze.maxRssBytes / 2 ** 20).toFixed(0)} MiB` : '—'} | ${r.analyze ? r.analyze.bytecodes.toLocaleString('en-US') : '—'} |`);
    }
    L.push('');
    L.push('flow / attribute / reconstruct / recover: `bench-stages.js`, one process: a streamed decode without attribution; attribution of interpreted code + completion of compiled frames: a second streamed decode with them, minus the time of the first and of the steps after it; then on each window of 2^24 events, as analyze takes them and with its code, @jportal/reconstruct (orphan frames, CFG check and repair) and @jportal/recover. — : measured before reconstruction was timed (the recover column of those rows is `recoverGaps` alone).', '');
    const apart = rs.filter((r) => r.stages?.date);
    if (apart.length) L.push(`Decoder stages timed apart from the rest of their row (\`--stages-only\`, on the kept trace): ${apart.map((r) => `${r.app} (${r.stages!.machine ?? 'unknown CPU'}, ${r.stages!.date!.slice(0, 10)})`).join(', ')}.`, '');
    L.push('### Decode throughput beside libipt (same trace, one run)', '');
    L.push('| app | PT | walk: insns | libipt (time-indexed image): MB/s, insns, errors | walk / libipt, 1 worker | all workers | whole decode 1 worker | all workers | decode / libipt 1 | all | libipt (latest bytes): MB/s, insns, errors | walk / that, 1 | all |');
    L.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    const mi = (n?: number) => (n === undefined ? '—' : `${(n / 1e6).toFixed(0)} M`);
    for (const r of rs) {
      const t = r.throughput;
      const T = t?.libiptTimed;
      L.push(`| ${r.app} | ${mb(t?.ptBytes)} | ${mi(t?.walkInsns)} | ${T ? `${f1(T.mbs, 1, ' MB/s')}, ${mi(T.insns)}, ${T.errors.toLocaleString('en-US')}` : '—'} | ${f1(t?.walkTimedRatio1, 2, 'x')} | ${f1(t?.walkTimedRatioAll, 2, 'x')} | ${f1(t?.oursMBs, 1, ' MB/s')} | ${f1(t?.oursParallelMBs, 1, ' MB/s')} | ${f1(t?.timedRatio1, 2, 'x')} | ${f1(t?.timedRatioAll, 2, 'x')} | ${t ? `${f1(t.libiptMBs, 1, ' MB/s')}, ${mi(t.libiptInsns)}, ${t.libiptErrors.toLocaleString('en-US')}` : '—'} | ${f1(t?.walkRatio1, 2, 'x')} | ${f1(t?.walkRatioAll, 2, 'x')} |`);
    }
    L.push('');
    L.push('`bench/decode/run.js TRACE --runs 1` (bench/decode/README.md). **walk**: our flow walk alone (PT -> the blocks that');
    L.push('ran over the time-indexed code image, what libipt\'s `pt_blk_next` does; the image loaded before the clock starts, as in');
    L.push('ptbench) on one worker and on one per core, over the same parts cut at PSBs. **whole decode**: `decodeTrace` (flow, Java');
    L.push('events, attribution and completion, with loading) and `decodeTraceParallel`. **libipt**: its block decoder');
    L.push('(`bench/decode/ptbench.c`), code served through its read-memory callback, as perf does, in two ways: *time-indexed*, every');
    L.push('version of every code section with its time span, the version at the decoder\'s current time (`pt_blk_time`) served,');
    L.push('i.e. the image our walk uses, like for like; *latest bytes*, the last version of each section only: libipt then');
    L.push('meets stale code, counts an error and skips to the next PSB, so it decodes fewer instructions in less time and');
    L.push('its MB/s counts bytes it skipped. Ratios are of times on the same bytes (> 1: ours faster).', '');
    L.push('### Line coverage against JaCoCo 0.8.6 (same workload, separate run; loss-free trace)', '');
    L.push('| app | JaCoCo covered | jportal covered | both | only JaCoCo | only jportal | agreement (both / either) | of the disagreements, twins: only JaCoCo, only jportal | agreement outside twins | collections: plain, JaCoCo (its young gen.) |');
    L.push('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rs) {
      const v = r.coverage;
      // (a jar compiled without line-number tables, as Debian's sunflow.jar is, has no lines for either tool: methods
      // run are compared; a result from before that says n/a)
      const agreement = !v
        ? '—'
        : v.jacocoCovered + v.oursCovered === 0
          ? 'n/a: no line numbers in the jar'
          : `${(100 * v.agreement).toFixed(2)}%${v.unit === 'method' ? ' (methods run: no line numbers in the jar)' : ''}`;
      const gc = v?.gc ? `${v.gc.plain}, ${v.gc.jacoco}${v.gc.youngMiB ? ` (${v.gc.youngMiB} MiB${v.gc.metaspaceMiB ? `; metaspace ${v.gc.metaspaceMiB} MiB` : ''})` : ''}` : '—';
      const t = v?.twins;
      const twins = t ? `${t.onlyJacoco}, ${t.onlyOurs}` : '—';
      const outside = t && v && v.both + v.onlyJacoco + v.onlyOurs > 0 ? `${((100 * v.both) / (v.both + v.onlyJacoco + v.onlyOurs - t.onlyJacoco - t.onlyOurs)).toFixed(2)}%` : '—';
      L.push(v ? `| ${r.app} | ${v.jacocoCovered} | ${v.oursCovered} | ${v.both} | ${v.onlyJacoco} | ${v.onlyOurs} | ${agreement} | ${twins} | ${outside} | ${gc} |` : `| ${r.app} | — | — | — | — | — | — | — | — | — |`);
    }
    L.push('');
    L.push('*Twins*: lines only one tool covers whose bytecode (the opcodes of each range of the line) is the same as that of');
    L.push('a line only the other covers. PT shows which opcodes the interpreter ran, not which method or switch case they');
    L.push('belong to: where two such pieces of code exist and one ran, the trace cannot tell which (`packages/cli/src/coverage-twins.ts`).');
    L.push('');
    L.push('The JaCoCo run has the traced run\'s JVM flags (`record --deterministic`). Finalizers run only after a garbage');
    L.push('collection, and JaCoCo\'s probes allocate and its instrumented classes fill metaspace sooner: its run is given a larger');
    L.push('young generation and metaspace mark until it collects no more often than the same run without JaCoCo (collections');
    L.push('counted with `-Xlog:gc`).', '');
    const failed = rs.filter((r) => r.errors.length);
    if (failed.length) {
      L.push('### Stages that failed', '');
      for (const r of failed) for (const e of r.errors) L.push(`- ${r.app} (${r.size}), ${e.stage}: ${e.message.replace(/\|/g, '\\|')}`);
      L.push('');
    }
  }
  const grown = results.filter((r) => r.growth);
  if (grown.some((r) => r.size !== 'short')) {
    const order: AppSize[] = ['short', 'medium', 'full'];
    L.push('## Growth with trace size (short -> medium -> full)', '');
    L.push('Each size\'s loss-free trace analyzed whole (`jportal analyze --workers 1` under `/usr/bin/time`; `jportal bench apps');
    L.push('--growth-only`); ratios are to the short size of the same application. Bytecodes, not PT bytes, are the work: a');
    L.push('longer run spends more of its time in compiled code, which makes many more bytecodes per PT byte than start-up.');
    L.push('*streamed*: decoded in a worker thread while the main thread walked each window (two threads; analyze\'s default since');
    L.push('2026-12-01); otherwise spilled, then read. Ratios are to the short size measured the same way (CPUs, streamed or not), else —.');
    L.push('A size followed by a span (*full, 0-60 s of 900 s*) is that part of the size\'s trace analyzed alone (`--growth-only --time');
    L.push('FROM,TO`: each thread\'s PT cut at the PSBs around the span), for a trace too long to analyze whole here; PT is then what');
    L.push('the span\'s decode read.', '');
    L.push('| app | size | PT | bytecodes | windows | analyze | peak RSS | x PT | x bytecodes | x time | x RSS | ns per bytecode | measured |');
    L.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const app of [...new Set(grown.map((r) => r.app))].sort()) {
      const rows = order.map((z) => grown.find((r) => r.app === app && r.size === z)).filter((r): r is AppResult => !!r);
      const short = rows.find((r) => r.size === 'short')?.growth;
      if (!short || rows.length < 2) continue; // (growth needs the short size and a larger one)
      for (const r of rows) {
        const g = r.growth!;
        // (ratios only to a short size measured the same way: CPUs and streamed or not)
        const base = g.cpus === short.cpus && !!g.streamed === !!short.streamed ? short : undefined;
        L.push(`| ${app} | ${r.size}${spanLabel(g)} | ${mb(g.ptBytes)} | ${g.bytecodes.toLocaleString('en-US')} | ${g.windows} | ${f1(g.seconds, 1, ' s')} | ${(g.maxRssBytes / 2 ** 20).toFixed(0)} MiB | ${f1(ratio(g.ptBytes, base?.ptBytes), 2)} | ${f1(ratio(g.bytecodes, base?.bytecodes), 2)} | ${f1(ratio(g.seconds, base?.seconds), 2)} | ${f1(ratio(g.maxRssBytes, base?.maxRssBytes), 2)} | ${f1((g.seconds * 1e9) / g.bytecodes, 0)} | ${g.date.slice(0, 16).replace('T', ' ')}, ${g.cpus} CPU${g.cpus === 1 ? '' : 's'}${g.streamed ? ', streamed' : ''} |`);
      }
    }
    L.push('');
  }
  return L.join('\n');
}

/** ', 0-60 s of 900 s' for a growth row of a span of its trace ('' for a whole trace) */
export function spanLabel(g: AnalyzeGrowth): string {
  if (!g.span) return '';
  const t = (x: number | null, open: string) => (x === null ? open : `${+x.toFixed(3)}`);
  const of = g.span.recordSeconds !== undefined ? ` of ${g.span.recordSeconds.toFixed(0)} s` : '';
  return `, ${t(g.span.fromSeconds, 'start')}-${t(g.span.toSeconds, 'end')} s${of} (${mb(g.span.wholePtBytes)} of PT in all)`;
}

export async function runBenchApps(o: BenchAppsOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  const unknown = (o.only ?? []).filter((n) => !APPS.some((a) => a.name === n));
  if (unknown.length) throw new CliError(`bench apps: --only: unknown application ${unknown.join(', ')} (known: ${APPS.map((a) => a.name).join(', ')})`, ExitCode.BadInput);
  if (o.span && !o.growthOnly) throw new CliError('bench apps: --time goes with --growth-only', ExitCode.BadInput);
  if (o.addRounds && !o.overheadOnly) throw new CliError('bench apps: --add-rounds goes with --overhead-only', ExitCode.BadInput);
  if (o.runs !== undefined && (!Number.isInteger(o.runs) || o.runs < 1)) throw new CliError('bench apps: --runs must be a positive integer', ExitCode.BadInput);
  const apps = APPS.filter((a) => !o.only?.length || o.only.includes(a.name));
  const java = findExecutable('java');
  if (!java) throw new CliError('bench apps: java not found on PATH (install openjdk-17-jdk-headless)', ExitCode.Unsupported);
  if (!findExecutable('jfr')) throw new CliError('bench apps: jfr (the JDK\'s Flight Recorder tool) not found on PATH', ExitCode.Unsupported);
  if (!fs.existsSync('/usr/bin/time')) throw new CliError('bench apps: /usr/bin/time not found (apt-get install time)', ExitCode.Unsupported);
  if (!o.noTrace && !findExecutable('qemu-x86_64')) throw new CliError('bench apps: qemu-x86_64 not found (apt-get install qemu-user)', ExitCode.Unsupported);
  const agent = locateAgent();
  if (!o.noTrace) locateEmulatorPlugin();
  if (!o.noJacoco && !o.noTrace && jacocoMissing().length) throw new CliError(`bench apps: JaCoCo missing: ${jacocoMissing()[0]} (run bench/apps/setup.sh, or --no-jacoco)`, ExitCode.Unsupported);
  const inputs = appInputs();
  if (!fs.existsSync(path.join(inputs, '.ready'))) throw new CliError(`bench apps: inputs not prepared in ${inputs} (run bench/apps/setup.sh)`, ExitCode.Unsupported);
  for (const a of apps) {
    const miss = appMissing(a, { inputs, scratch: '' });
    if (miss.length) throw new CliError(`bench apps: ${a.name}: missing ${miss[0]} (run bench/apps/setup.sh; Debian package ${a.packages.join(', ')})`, ExitCode.Unsupported);
  }
  const work = path.resolve(o.out ?? path.join(repoRoot(), 'out', 'bench-apps'));
  // kept in the repository by default (bench/apps/results), so a new checkout still has every row of the report
  const resultsDir = path.resolve(o.results ?? (o.out ? path.join(work, 'results') : path.join(repoRoot(), 'bench', 'apps', 'results')));
  fs.mkdirSync(resultsDir, { recursive: true });
  const facts = machineFacts(java);
  if (o.addRounds)
    for (const size of o.sizes)
      for (const app of apps) {
        const kept = path.join(resultsDir, `${app.name}-${size}.json`);
        const why = addRoundsRefusal(fs.existsSync(kept) ? (JSON.parse(fs.readFileSync(kept, 'utf8')) as AppResult).overhead : undefined, agentTree());
        if (why) throw new CliError(`bench apps: --add-rounds: ${app.name} ${size}: ${why}`, ExitCode.BadInput);
      }
  const fresh: AppResult[] = [];
  for (const size of o.reportOnly ? [] : o.sizes)
    for (const app of apps) {
      log.info(`bench apps: ${app.name} (${size}): ${app.what}`);
      const kept = path.join(resultsDir, `${app.name}-${size}.json`);
      const before = fs.existsSync(kept) ? (JSON.parse(fs.readFileSync(kept, 'utf8')) as AppResult) : undefined;
      const r = await benchApp(app, size, o, java, agent, work, log, before);
      fs.writeFileSync(path.join(resultsDir, `${app.name}-${size}.json`), JSON.stringify(r, null, 2) + '\n');
      fresh.push(r);
    }
  // the report covers every result kept (runs of other applications or sizes included)
  const all: AppResult[] = fs
    .readdirSync(resultsDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(resultsDir, f), 'utf8')) as AppResult);
  const md = o.md ?? path.join(repoRoot(), 'docs', 'performance.md');
  const text = performanceMarkdown(all, facts);
  fs.mkdirSync(path.dirname(md), { recursive: true });
  const keep = fs.existsSync(md) ? /(\n## What does not hold[\s\S]*)$/.exec(fs.readFileSync(md, 'utf8'))?.[1] ?? '' : '';
  fs.writeFileSync(md, text + (keep ? keep : '\n'));
  log.info(`bench apps: wrote ${md}`);
  if (o.json) process.stdout.write(JSON.stringify({ machine: facts, results: fresh }, null, 2) + '\n');
  else process.stdout.write(text.split('\n').filter((l) => l.startsWith('|') || l.startsWith('#')).join('\n') + '\n');
  return fresh.every((r) => r.ok) ? ExitCode.Ok : ExitCode.Failed;
}
