import yargs from 'yargs';
import * as os from 'os';
import { runCompare } from './commands/compare';
import { runAccuracy } from './commands/accuracy';
import { ANALYZE_PARTS, runAnalyze } from './commands/analyze';
import { runBenchApps } from './commands/bench';
import { runDecode } from './commands/decode';
import { runDoctor } from './commands/doctor';
import { runInspect } from './commands/inspect';
import { runOracle } from './commands/oracle';
import { runRecord } from './commands/record';
import { APPS, AppSize } from './bench-apps';
import { CliError, ExitCode } from './exit';
import { CLASS_MODES, type ClassMode } from './java-command';
import { isFormatError } from './format-adapter';
import { parseTimeSpan } from './time-span';

/** Runs the jportal CLI on argv (without node and script); resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let code: number = ExitCode.Ok;
  const parser = yargs(argv)
    .scriptName('jportal')
    .parserConfiguration({ 'populate--': true })
    .usage('$0 <command> [options]')
    .command(
      'record',
      'run a Java program with the jportal agent and write a trace directory',
      (y) =>
        y
          .usage('$0 record [options] -- java ARGS...')
          .option('out', { alias: 'o', type: 'string', describe: 'trace directory (default: ./jportal-trace-<time>)' })
          .option('ring-mb', { type: 'number', describe: 'shared-memory ring size in MiB (power of two)' })
          .option('patch-interval-ms', { type: 'number', describe: 'how often live compiled code is re-read for patches (0: off)' })
          .option('snapshot', { type: 'boolean', describe: "also record every live nmethod's bytes at VM death" })
          .option('classes', {
            choices: CLASS_MODES,
            describe: "how class files reach the trace: path (default: named, read at analysis from the JDK's runtime image and the recorded class path; no ClassFileLoadHook, the cheapest), hook (bytes through ClassFileLoadHook: for programs whose classes another agent transforms at load), early (the early hook: class-data sharing off), none",
          })
          .option('agent-log', { choices: ['quiet', 'info', 'debug'], describe: "the agent's stderr verbosity" })
          .option('pt', {
            choices: ['auto', 'perf', 'emulate', 'none'],
            default: 'auto',
            describe: 'Intel PT: perf = real PT through perf_event_open; auto = perf when this machine has it, else metadata only; emulate = run the JVM under qemu-x86_64 with the PT emulator',
          })
          .option('aux-mb', { type: 'number', describe: 'perf: AUX (trace) buffer per CPU in MiB, a power of two (default 4)' })
          .option('flight-recorder', { type: 'boolean', describe: 'perf: keep only the last AUX buffer of trace per CPU (snapshot mode)' })
          .option('pt-filter', { type: 'string', describe: "perf: address filter 'filter START/SIZE@FILE' for a file-backed code cache" })
          .option('psb-period', { type: 'number', describe: 'emulator: bytes between PSB packets (default 4096)' })
          .option('loss', { type: 'string', describe: 'emulator loss model BUFFER:RATE: per-thread buffer bytes drained at RATE bytes/s of emulated run time' })
          .option('seed', { type: 'number', describe: 'emulator: seed of the loss model (same seed, same loss)' })
          .option('cpus', { type: 'number', describe: 'emulator: per-CPU mode with N emulated CPUs (one stream each, switch sideband)' })
          .option('retcomp', { type: 'boolean', describe: 'emulator: compress returns to TNT bits (default: every return is a TIP)' })
          .option('deterministic', { type: 'boolean', describe: 'add JVM flags that make runs reproducible (serial GC, -Xbatch, fixed compiler threads)' })
          .option('force', { type: 'boolean', describe: 'overwrite an existing trace directory' })
          .option('json', { type: 'boolean', describe: 'print a machine-readable summary on stdout' }),
      async (a) => {
        code = await runRecord({
          out: a.out,
          command: ((a['--'] as unknown[] | undefined) ?? []).map(String),
          ringMb: a['ring-mb'],
          patchIntervalMs: a['patch-interval-ms'],
          snapshot: a.snapshot,
          classes: a.classes as ClassMode | undefined,
          agentLog: a['agent-log'],
          force: a.force,
          json: a.json,
          pt: a.pt as 'auto' | 'perf' | 'emulate' | 'none',
          auxMb: a['aux-mb'],
          flightRecorder: a['flight-recorder'],
          ptFilter: a['pt-filter'],
          psbPeriod: a['psb-period'],
          loss: a.loss,
          seed: a.seed,
          retcomp: a.retcomp,
          cpus: a.cpus,
          deterministic: a.deterministic,
        });
      },
    )
    .command(
      'inspect <dir>',
      'summarize a trace directory',
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'trace directory (or its meta.jpt)' })
          .option('codelets', { type: 'boolean', describe: 'list every interpreter codelet' })
          .option('method', { type: 'string', describe: 'show compiles, inlining and patches of methods matching NAME' })
          .option('patches', { type: 'boolean', describe: 'list every code patch' })
          .option('json', { type: 'boolean', describe: 'print a machine-readable summary on stdout' }),
      (a) => {
        code = runInspect({ dir: a.dir, codelets: a.codelets, method: a.method, patches: a.patches, json: a.json });
      },
    )
    .command(
      'decode <dir>',
      'decode the PT of a trace directory into per-thread bytecode events (DIR/decoded/<tid>.jpe)',
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'trace directory' })
          .option('dump', { type: 'boolean', describe: 'print every event, readable, on stdout' })
          .option('tid', { type: 'number', array: true, describe: 'only these OS thread ids' })
          .option('time', { type: 'string', describe: 'only this span of the run: FROM,TO in seconds since the capture started (units s, ms, us; an end left out is open); cut at the PSBs around it' })
          .option('write', { type: 'boolean', default: true, describe: 'write DIR/decoded/<tid>.jpe (--no-write to skip)' })
          .option('gaps', { type: 'boolean', describe: 'list where the decoder lost its way: per thread the code, reason and cause of its most frequent gaps' })
          .option('workers', { type: 'number', describe: 'worker threads; streams are split at PSB boundaries (default: one per core)' })
          .option('json', { type: 'boolean', describe: 'print a machine-readable summary on stdout' }),
      async (a) => {
        if (a.workers !== undefined && (!Number.isInteger(a.workers) || a.workers < 1)) throw new CliError('decode: --workers must be a positive integer', ExitCode.BadInput);
        code = await runDecode({ dir: a.dir, dump: a.dump, tid: a.tid, span: parseTimeSpan(a.time, 'decode'), json: a.json, gaps: a.gaps, noWrite: a.write === false, workers: a.workers ?? os.availableParallelism() });
      },
    )
    .command(
      'oracle',
      'record ground truth: every bytecode each thread executes, through JVMTI single-stepping (slow; a separate run)',
      (y) =>
        y
          .usage('$0 oracle [--out DIR] -- java ARGS...')
          .option('out', { alias: 'o', type: 'string', describe: 'oracle directory (default: ./jportal-oracle-<time>)' })
          .option('classes', { choices: CLASS_MODES, describe: 'the --classes of the record run this is compared with (class loading takes the same paths)' })
          .option('deterministic', { type: 'boolean', describe: 'add the JVM flags record --deterministic adds' })
          .option('force', { type: 'boolean', describe: 'overwrite an existing oracle directory' })
          .option('json', { type: 'boolean', describe: 'print a machine-readable summary on stdout' }),
      async (a) => {
        code = await runOracle({
          out: a.out,
          command: ((a['--'] as unknown[] | undefined) ?? []).map(String),
          classes: a.classes as ClassMode | undefined,
          deterministic: a.deterministic,
          force: a.force,
          json: a.json,
        });
      },
    )
    .command(
      'compare <trace> <oracle>',
      'decode a trace and measure it against ground truth from `jportal oracle` (threads paired by name)',
      (y) =>
        y
          .positional('trace', { type: 'string', demandOption: true, describe: 'trace directory (jportal record)' })
          .positional('oracle', { type: 'string', demandOption: true, describe: 'oracle directory (jportal oracle)' })
          .option('thread', { type: 'string', array: true, describe: 'only threads with these names' })
          .option('min-accuracy', { type: 'number', describe: 'exit 1 when a thread\'s sequence accuracy is below this (0..1)' })
          .option('diff', { type: 'string', describe: 'write a readable diff per thread (methods losing most, regions where the sequences part) into this directory; with --refine also each fill of recovered events against its hole (.fills.tsv)' })
          .option('refine', { type: 'boolean', default: false, describe: 'measure what analyze works on: reconstruction and recovery after decoding, as `jportal accuracy` does' })
          .option('json', { type: 'boolean', describe: 'print a machine-readable report on stdout' }),
      async (a) => {
        const min = a['min-accuracy'];
        if (min !== undefined && !(min >= 0 && min <= 1)) throw new CliError('compare: --min-accuracy wants a number in 0..1', ExitCode.BadInput);
        code = await runCompare({ trace: a.trace, oracle: a.oracle, thread: a.thread, minAccuracy: min, json: a.json, diff: a.diff, refine: a.refine });
      },
    )
    .command(
      'accuracy',
      "how right the decoded paths are as PT loses data: records under the emulator at each loss setting and the oracle once, then the paper's table per thread (PMD, PDC, PD, DA, PR, RA, overall, hot methods)",
      (y) =>
        y
          .usage('$0 accuracy [--loss 0,10,25,50] [--md FILE] -- java ARGS...')
          .option('loss', { type: 'string', default: '0,10,25,50', describe: "comma-separated loss settings: presets 0, 10, 25, 50 (percent of the busiest thread's instructions lost, reached by calibration) or BUFFER:RATE (as given)" })
          .option('seed', { type: 'number', default: 1, describe: 'seed of the emulator loss model' })
          .option('out', { alias: 'o', type: 'string', describe: 'keep the traces and the oracle in this directory (default: a temporary one, removed)' })
          .option('thread', { type: 'string', array: true, describe: 'only threads with these names' })
          .option('min-bytecodes', { type: 'number', default: 1000, describe: 'leave out threads whose truth has fewer bytecodes' })
          .option('md', { type: 'string', describe: 'also write the table as markdown to this file (e.g. docs/accuracy.md)' })
          .option('recover', { type: 'boolean', default: true, describe: 'fill gaps with recovered events (--no-recover: decoded events only)' })
          .option('calibrate', { type: 'boolean', default: true, describe: "re-record a preset at other drain rates until the busiest thread lost about the preset's share (--no-calibrate: the preset's rate as is)" })
          .option('reference', { type: 'boolean', default: false, describe: 'also record each lossy setting again with another seed and measure the first recording with the second as recovery\'s reference (rows "L +ref")' })
          .option('json', { type: 'boolean', describe: 'print the rows as JSON on stdout' }),
      async (a) => {
        code = await runAccuracy({
          command: ((a['--'] as unknown[] | undefined) ?? []).map(String),
          loss: a.loss.split(',').filter(Boolean),
          seed: a.seed,
          out: a.out,
          thread: a.thread,
          minBytecodes: a['min-bytecodes'],
          md: a.md,
          json: a.json,
          recover: a.recover,
          calibrate: a.calibrate,
          reference: a.reference,
        });
      },
    )
    .command(
      'analyze <dir>',
      'profiles from a trace: coverage (lcov, JaCoCo XML, HTML), hot methods (table, pprof), calling-context tree, path profiles, timelines (Chrome trace, speedscope), flame-graph stacks, latency histograms, report.html',
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'trace directory' })
          .option('out', { alias: 'o', type: 'string', describe: 'report directory (default DIR/report)' })
          .option('classpath', { type: 'string', array: true, describe: 'class directories or jars for classes the trace has no bytes of (agent classes=0)' })
          .option('reference', { type: 'string', describe: 'another recording (trace directory) of the same program: gaps may be filled from what its namesake threads ran (start-up runs once per run)' })
          .option('sources', { type: 'string', array: true, describe: 'Java source roots: coverage as HTML source pages' })
          .option('extent', { type: 'string', describe: "calling-context tree of only this method's dynamic extent (Class.method or pkg.Class.method(desc))" })
          .option('recover', { type: 'boolean', default: true, describe: 'fill gaps PT lost from matching context (--no-recover: leave them)' })
          .option('reconstruct', { type: 'boolean', default: true, describe: "check decoded steps against the methods' CFGs and insert what they prove missing (--no-reconstruct: as decoded)" })
          .option('workers', { type: 'number', describe: 'decoder worker threads (default 1)' })
          .option('tid', { type: 'number', array: true, describe: 'only these OS threads' })
          .option('time', { type: 'string', describe: 'only this span of the run: FROM,TO in seconds since the capture started (units s, ms, us; an end left out is open: 2, or ,1.5); cut at the PSBs around it' })
          .option('only', { type: 'string', array: true, describe: `only these parts: ${ANALYZE_PARTS.join(', ')} (report.html always)` })
          .option('json', { type: 'boolean', describe: 'print a machine-readable summary on stdout' }),
      async (a) => {
        code = await runAnalyze({
          dir: a.dir as string,
          out: a.out,
          classpath: a.classpath?.map(String),
          reference: a.reference,
          sources: a.sources?.map(String),
          extent: a.extent,
          recover: a.recover,
          reconstruct: a.reconstruct,
          workers: a.workers,
          tid: a.tid,
          span: parseTimeSpan(a.time, 'analyze'),
          only: a.only?.map(String),
          json: a.json,
        });
      },
    )
    .command(
      'bench <suite>',
      'the real-application suite (bench/apps/setup.sh installs it): per application native, agent and JFR run times, emulated PT, decode beside libipt, analyze, top-10 hot methods against JFR, coverage against JaCoCo; writes docs/performance.md',
      (y) =>
        y
          .usage('$0 bench apps [--only NAME] [--size short|medium|full|both|all]')
          .positional('suite', { type: 'string', choices: ['apps'], demandOption: true, describe: 'which suite (apps)' })
          .option('only', { type: 'string', array: true, describe: `only these applications: ${APPS.map((a) => a.name).join(', ')}` })
          .option('size', { choices: ['short', 'medium', 'full', 'both', 'all'], default: 'short', describe: 'workload size (both: short and full; all: the three)' })
          .option('runs', { type: 'number', describe: 'timing rounds, median taken (default 5 short, 3 full)' })
          .option('out', { alias: 'o', type: 'string', describe: 'working directory; traces and runs (default out/bench-apps)' })
          .option('results', { type: 'string', describe: 'where results are kept (default bench/apps/results, committed; OUT/results with --out)' })
          .option('md', { type: 'string', describe: 'the report (default docs/performance.md)' })
          .option('loss', { type: 'boolean', default: true, describe: 'also trace at the 25% loss preset for the top-10 comparison (--no-loss to skip)' })
          .option('jacoco', { type: 'boolean', default: true, describe: 'coverage cross-check with JaCoCo (--no-jacoco to skip)' })
          .option('report-only', { type: 'boolean', describe: 'run nothing: rewrite the report from the kept results (--results)' })
          .option('timing', { type: 'boolean', default: true, describe: 'the timing rounds (--no-timing: keep the timing rows of the kept result and run the trace stages only)' })
          .option('decode-stages', { type: 'boolean', default: true, describe: 'jportal decode, the throughput beside libipt and the per-stage timing (--no-decode-stages: record and analyze only)' })
          .option('throughput-only', { type: 'boolean', describe: 'record the loss-free trace and measure only the decode throughput beside libipt (bench/decode); the kept result keeps every other row' })
          .option('coverage-only', { type: 'boolean', describe: 'only the coverage check against JaCoCo, on the loss-free trace in the work directory (recorded when there is none); the kept result keeps every other row' })
          .option('growth-only', { type: 'boolean', describe: 'only the growth measurement: the loss-free trace in the work directory (recorded when there is none) analyzed whole with one worker under /usr/bin/time; the kept result keeps every other row' })
          .option('time', { type: 'string', describe: 'with --growth-only: analyze only FROM,TO of the trace (seconds since the capture started, as analyze --time): a row for a prefix of a trace too long to analyze whole' })
          .option('stages-only', { type: 'boolean', describe: "only the decoder's stages timed (flow, attribute, reconstruct, recover; one process), on the loss-free trace in the work directory (recorded when there is none); the kept result keeps every other row" })
          .option('overhead-only', { type: 'boolean', describe: "only dedicated overhead rounds: native and agent alternating (--runs of each), kept beside the full timing rounds; the report's overhead and its interval come from them; the kept result keeps every other row" })
          .option('add-rounds', { type: 'boolean', describe: "with --overhead-only: add this run's rounds to the kept dedicated rounds (same agent source, same CPU) instead of replacing them" })
          .option('trace', { type: 'boolean', default: true, describe: 'the emulated trace and all that needs it (--no-trace: run times of native, agent and JFR only; a kept result keeps its trace rows)' })
          .option('json', { type: 'boolean', describe: 'print the results as JSON on stdout' }),
      async (a) => {
        code = await runBenchApps({
          only: a.only?.map(String),
          sizes: a.size === 'both' ? ['short', 'full'] : a.size === 'all' ? ['short', 'medium', 'full'] : [a.size as AppSize],
          runs: a.runs,
          out: a.out,
          results: a.results,
          md: a.md,
          noLoss: a.loss === false,
          noJacoco: a.jacoco === false,
          noTrace: a.trace === false,
          noTiming: a.timing === false,
          noDecodeStages: a['decode-stages'] === false,
          throughputOnly: a['throughput-only'],
          coverageOnly: a['coverage-only'],
          growthOnly: a['growth-only'],
          span: parseTimeSpan(a.time, 'bench apps'),
          spanText: a.time,
          stagesOnly: a['stages-only'],
          overheadOnly: a['overhead-only'],
          addRounds: a['add-rounds'],
          reportOnly: a['report-only'],
          json: a.json,
          commandLine: `jportal ${argv.join(' ')}`,
        });
      },
    )
    .command(
      'doctor',
      'what this machine can do: CPU, Intel PT, perf_event_paranoid, kernel, JDKs, emulator; exit 0 when real PT capture is possible, 3 when not',
      (y) =>
        y
          .option('json', { type: 'boolean', describe: 'print the report as JSON' })
          .option('sysfs', { type: 'string', hidden: true, describe: 'sysfs root (tests)' })
          .option('proc', { type: 'string', hidden: true, describe: 'procfs root (tests)' }),
      (a) => {
        code = runDoctor({ json: a.json, sysfsRoot: a.sysfs, procRoot: a.proc });
      },
    )
    .demandCommand(1, 'name a command: record, inspect, decode, analyze, oracle, compare, accuracy, bench or doctor')
    .strict()
    .help()
    .version(false)
    .fail((msg, err) => {
      if (err) throw err;
      throw new CliError(msg, ExitCode.BadInput);
    });
  try {
    await parser.parseAsync();
  } catch (e) {
    return reportError(e);
  }
  return code;
}

function reportError(e: unknown): number {
  if (e instanceof CliError) {
    process.stderr.write(`jportal: ${e.message}\n`);
    return e.exitCode;
  }
  // typed errors of the packages that read input files name the file and byte offset: bad input
  if (isFormatError(e) || (e instanceof Error && ['OracleFormatError', 'ClassFormatError', 'EventsFormatError', 'PtDecodeError'].includes(e.name))) {
    process.stderr.write(`jportal: ${(e as Error).message}\n`);
    return ExitCode.BadInput;
  }
  // a thread whose events this machine cannot hold (@jportal/decode's EventBudgetError): unsupported here
  if (e instanceof Error && e.name === 'EventBudgetError') {
    process.stderr.write(`jportal: a thread is too large to hold in memory here: ${e.message}\n`);
    return ExitCode.Unsupported;
  }
  const err = e as NodeJS.ErrnoException;
  if (err && (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'ENOTDIR')) {
    process.stderr.write(`jportal: ${err.message}\n`);
    return ExitCode.BadInput;
  }
  // the machine ran out of disk or the file system failed: what was written before stays, the rest is not written
  if (err && (err.code === 'ENOSPC' || err.code === 'EDQUOT' || err.code === 'EIO' || err.code === 'EFBIG')) {
    process.stderr.write(`jportal: ${err.message}\n`);
    return ExitCode.Failed;
  }
  process.stderr.write(`jportal: internal error: ${err?.stack ?? String(e)}\n`);
  return ExitCode.Failed;
}
