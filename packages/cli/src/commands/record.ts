import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CaptureError, CaptureStats, PerfSession, probePerfEnvironment } from '@jportal/capture';
import { findExecutable, locateAgent, locateEmulatorPlugin } from '../agent-path';
import { Collector } from '../collector';
import { CliError, ExitCode } from '../exit';
import { agentClassesOption, agentOptions, injectAgent, type ClassMode } from '../java-command';
import { stderrLogger } from '../log';
import { loadTraceModel } from '../trace-model';

export interface RecordOptions {
  out?: string;
  command: string[];
  ringMb?: number;
  patchIntervalMs?: number;
  snapshot?: boolean;
  /** how class files reach the trace (the agent's classes option; default path) */
  classes?: ClassMode;
  agentLog?: string;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
  /**
   * 'perf': real Intel PT through perf_event_open (exit 3 with the reason when it cannot run); 'auto': perf when
   * this machine can, else metadata only with the reason logged; 'emulate': run the JVM under qemu-x86_64 with
   * the PT emulator plugin; 'none': metadata only.
   */
  pt?: PtChoice;
  /** perf: AUX area per CPU in MiB (power of two) */
  auxMb?: number;
  /** perf: flight-recorder mode (keep only the last AUX area's worth of trace per CPU) */
  flightRecorder?: boolean;
  /** perf: an address filter "filter START/SIZE@FILE" (a file-backed code cache) */
  ptFilter?: string;
  psbPeriod?: number;
  /** Emulator loss model "BUFFER:RATE" (bytes, bytes per second of emulated run time), and its seed. */
  loss?: string;
  seed?: number;
  /** Emulator: compress returns to TNT bits (a real PT unit's default; off means noretcomp). */
  retcomp?: boolean;
  /** Emulator per-CPU mode: N emulated CPUs, one stream each, with context-switch sideband. */
  cpus?: number;
  /** Add the JVM flags that make emulated runs reproducible (DETERMINISTIC_JVM_FLAGS). */
  deterministic?: boolean;
}

/** JVM flags for reproducible runs: one GC thread, synchronous compilation, a fixed compiler thread count,
 * one contiguous code cache, and implicit exceptions constructed by compiled code as by the interpreter (the
 * oracle's run is interpreted; see docs/emulator.md). */
export const DETERMINISTIC_JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-Xbatch',
  '-XX:CICompilerCount=2',
  '-XX:-UseDynamicNumberOfCompilerThreads',
  '-XX:ReservedCodeCacheSize=64m',
  '-XX:-OmitStackTraceInFastThrow',
];

export type PtChoice = 'auto' | 'perf' | 'emulate' | 'none';

export interface RecordSummary {
  out: string;
  metaFile: string;
  bytes: number;
  records: number;
  complete: boolean;
  javaExit: number | null;
  javaSignal: string | null;
  pt: 'none' | 'emulated' | 'perf';
  ptThreads: number;
  ptBytes: number;
  /** perf capture: what the rings said (AUX records, truncations, lost sideband records) */
  perf?: CaptureStats;
  note: string;
}

/** Which PT source this run uses; throws CliError (exit 3) when --pt=perf cannot run, naming the obstacle. */
export function choosePtSource(choice: PtChoice, log: { info(m: string): void }, probe = () => probePerfEnvironment()): 'perf' | 'emulate' | 'none' {
  if (choice === 'emulate' || choice === 'none') return choice;
  const env = probe();
  if (env.usable) return 'perf';
  const why = env.obstacle?.message ?? 'unknown';
  if (choice === 'perf') throw new CliError(`record --pt=perf: ${why}`, (env.obstacle ? new CaptureError(env.obstacle.kind, why).exitCode : ExitCode.Unsupported) as ExitCode);
  log.info(`no real Intel PT capture: ${why}`);
  return 'none';
}

/** --psb-period is in bytes (as for the emulator); the intel_pt term is n for 2^(n+11) bytes. */
export function psbPeriodTerm(bytes: number | undefined): number | undefined {
  if (bytes === undefined) return undefined;
  const n = Math.log2(bytes) - 11;
  if (!Number.isInteger(n) || n < 0) throw new CliError(`record --pt=perf: --psb-period must be 2^(n+11) bytes (2048, 4096, 8192, ...), got ${bytes}`, ExitCode.BadInput);
  return n;
}

/** Waits until the launcher shell has stopped itself (state T in /proc/PID/stat), so events can be attached before exec. */
async function waitStopped(pid: number, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    let state = '';
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      throw new CliError(`record: the launcher (pid ${pid}) exited before tracing could start`, ExitCode.Failed);
    }
    if (state === 'T' || state === 't') return;
    if (Date.now() - t0 > timeoutMs) throw new CliError(`record: the launcher (pid ${pid}) did not stop within ${timeoutMs} ms`, ExitCode.Failed);
    await sleep(2);
  }
}

/** The launch wrapped so the process stops before exec: perf events are attached to it, then SIGCONT lets it exec
 * the JVM, which enables them (enable_on_exec) with the very first instruction of the JVM. */
function stoppedLaunch(command: string, args: string[]): { command: string; args: string[] } {
  return { command: '/bin/sh', args: ['-c', 'kill -STOP $$; exec "$@"', 'jportal-launch', command, ...args] };
}

/** How the JVM is started under the emulator: qemu-x86_64 -plugin PLUGIN,out=DIR /path/to/java ARGS. */
interface EmulatorOptions {
  psbPeriod?: number;
  loss?: string;
  seed?: number;
  retcomp?: boolean;
  cpus?: number;
}

function emulatedLaunch(command: string[], out: string, o: EmulatorOptions): string[] {
  const { psbPeriod, loss, seed, retcomp, cpus } = o;
  if (cpus !== undefined && (!Number.isInteger(cpus) || cpus < 1 || cpus > 1024))
    throw new CliError(`record: --cpus wants 1..1024 (got ${cpus})`, ExitCode.BadInput);
  if (cpus && loss) throw new CliError('record: --loss works per thread and cannot be combined with --cpus yet', ExitCode.BadInput);
  if (loss !== undefined && !/^\d+(\.\d+)?[:,]\d+(\.\d+)?$/.test(loss))
    throw new CliError(`record: --loss wants BUFFER_BYTES:BYTES_PER_SECOND (got ${loss})`, ExitCode.BadInput);
  const qemu = findExecutable('qemu-x86_64');
  if (!qemu) throw new CliError('record --pt=emulate: qemu-x86_64 not found (Debian: apt-get install qemu-user)', ExitCode.Unsupported);
  const plugin = locateEmulatorPlugin();
  const java = findExecutable(command[0]);
  if (!java) throw new CliError(`record: cannot run ${command[0]}: not found`, ExitCode.Unsupported);
  const real = fs.realpathSync(java);
  const head = Buffer.alloc(4);
  const fd = fs.openSync(real, 'r');
  fs.readSync(fd, head, 0, 4, 0);
  fs.closeSync(fd);
  if (!head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])))
    throw new CliError(`record --pt=emulate runs the java launcher itself under qemu-x86_64; ${command[0]} is not an ELF binary (give the java binary, not a wrapper script)`, ExitCode.BadInput);
  const pluginArgs = [
    `out=${out}`,
    psbPeriod ? `psb_period=${psbPeriod}` : undefined,
    loss ? `loss=${loss.replace(',', ':')}` : undefined,
    seed !== undefined ? `seed=${seed}` : undefined,
    retcomp ? 'retcomp=1' : undefined,
    cpus ? `cpus=${cpus}` : undefined,
    // test hook: extra plugin arguments, e.g. exact=DIR for the instruction-level oracle (docs/emulator.md)
    process.env.JPORTAL_EMULATOR_ARGS || undefined,
  ]
    .filter(Boolean)
    .join(',');
  return [qemu, '-plugin', `${plugin},${pluginArgs}`, real, ...command.slice(1)];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function defaultOut(): string {
  const t = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `jportal-trace-${t}`;
}

export async function runRecord(opts: RecordOptions): Promise<number> {
  const log = stderrLogger(opts.quiet);
  if (opts.command.length === 0) throw new CliError('record: no command given (usage: jportal record [options] -- java ARGS...)', ExitCode.BadInput);
  const agent = locateAgent();
  const out = path.resolve(opts.out ?? defaultOut());
  if (out.includes(',')) throw new CliError(`record: the output directory must not contain ',' (${out})`, ExitCode.BadInput);
  const metaFile = path.join(out, 'meta.jpt');
  if (fs.existsSync(metaFile) && !opts.force)
    throw new CliError(`record: ${metaFile} already exists (use --force to overwrite)`, ExitCode.BadInput);
  const source = choosePtSource(opts.pt ?? 'auto', log);
  const emulate = source === 'emulate';
  const perf = source === 'perf';
  if (!perf && (opts.auxMb !== undefined || opts.flightRecorder || opts.ptFilter)) throw new CliError('record: --aux-mb, --flight-recorder and --pt-filter need real Intel PT (--pt=perf)', ExitCode.BadInput);
  // what an earlier recording there left (its PT, its metadata, what was decoded and reported from them) would
  // mix with this one's: a thread of the old run would show up decoded next to the new ones
  if (opts.force) for (const old of ['meta.jpt', 'pt', 'decoded', 'report']) fs.rmSync(path.join(out, old), { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });

  let command = opts.command;
  if (opts.deterministic) command = [command[0], ...DETERMINISTIC_JVM_FLAGS, ...command.slice(1)];
  if (!emulate && (opts.loss || opts.seed !== undefined)) throw new CliError('record: --loss and --seed need --pt=emulate', ExitCode.BadInput);
  if (emulate) command = emulatedLaunch(command, out, opts);
  const launch = injectAgent(
    command,
    agent,
    agentOptions({
      out,
      collector: process.pid,
      ring_mb: opts.ringMb,
      patch_interval_ms: opts.patchIntervalMs,
      snapshot: opts.snapshot,
      classes: agentClassesOption(opts.classes),
      log: opts.agentLog,
    }),
  );
  log.info(`recording ${opts.command.join(' ')} -> ${out}`);
  if (emulate) log.info('Intel PT: emulated (the JVM runs under qemu-x86_64 with the jportal PT plugin; expect it to be slower)');
  else if (perf) log.info(`Intel PT: real, through perf (per-CPU ${opts.flightRecorder ? 'flight recorder' : 'full trace'}, user space only)`);
  else log.info('no Intel PT capture in this run: metadata only (--pt=emulate uses the emulator)');

  const started = perf ? stoppedLaunch(launch.command, launch.args) : launch;
  const child = spawn(started.command, started.args, {
    env: launch.env,
    stdio: ['inherit', opts.json ? 2 : 'inherit', 'inherit'],
  });
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  child.on('error', (e) => (spawnError = e));
  child.on('exit', (code, signal) => (exit = { code, signal }));

  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      log.info(`${sig}: letting the JVM shut down and finishing the trace (again to kill the JVM)`);
      if (sig !== 'SIGINT') child.kill(sig); // SIGINT already reached the JVM through the process group
    } else {
      child.kill('SIGKILL');
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const collector = new Collector(metaFile, child.pid ?? -1);
  let session: PerfSession | undefined;
  let pump: Promise<void> | undefined;
  let perfStats: CaptureStats | undefined;
  try {
    if (perf && child.pid !== undefined) {
      try {
        await waitStopped(child.pid);
        session = PerfSession.open({
          dir: out,
          pid: child.pid,
          mode: opts.flightRecorder ? 'snapshot' : 'full',
          auxMb: opts.auxMb,
          filter: opts.ptFilter,
          pt: { noretcomp: !opts.retcomp, psbPeriod: psbPeriodTerm(opts.psbPeriod) },
        });
      } catch (e) {
        child.kill('SIGKILL');
        if (e instanceof CaptureError) throw new CliError(`record --pt=perf: ${e.message}`, e.exitCode);
        throw e;
      }
      child.kill('SIGCONT');
      pump = session.pump(() => !!exit || !!spawnError);
    }
    while (!exit && !spawnError) {
      collector.tryAttach();
      const n = collector.drain();
      await sleep(n > 0 ? 1 : 20);
    }
    if (pump) await pump;
    if (session) perfStats = session.stop();
    if (spawnError) {
      const code = (spawnError as NodeJS.ErrnoException).code === 'ENOENT' ? ExitCode.Unsupported : ExitCode.Failed;
      throw new CliError(`record: cannot run ${opts.command[0]}: ${spawnError.message}`, code);
    }
    collector.tryAttach();
    collector.finish();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // whatever ended the run, a perf capture leaves a complete pt/ (thread ends and `end` written)
    if (session && !perfStats) {
      if (pump) await pump.catch(() => undefined);
      perfStats = session.stop();
    }
  }

  if (!collector.stats.ringPath) {
    const why = collector.lastOpenError ? ` (${collector.lastOpenError.message})` : '';
    throw new CliError(
      `record: the agent's ring never appeared: the JVM did not load the agent or failed before it started${why}`,
      ExitCode.Failed,
    );
  }
  const model = loadTraceModel(metaFile);
  const javaExit = exit?.code ?? null;
  const javaSignal = exit?.signal ?? null;
  const note = model.complete
    ? 'complete (VM_END recorded)'
    : 'INCOMPLETE: the JVM ended without VM_END (killed or crashed); everything recorded until then is kept';
  const summary: RecordSummary = {
    out,
    metaFile,
    bytes: model.fileBytes,
    records: model.records,
    complete: model.complete,
    javaExit,
    javaSignal,
    pt: model.pt ? (model.pt.source === 'perf-intel-pt' ? 'perf' : 'emulated') : 'none',
    ptThreads: model.pt?.threads.length ?? 0,
    ptBytes: model.pt?.threads.reduce((n, t) => n + t.bytes, 0) ?? 0,
    perf: perfStats,
    note,
  };
  if (opts.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else
    log.info(
      `wrote ${out} (${model.records} records, ${model.fileBytes} bytes, ${note}); ` +
        (model.pt
          ? summary.pt === 'perf'
            ? `PT: ${summary.ptThreads} threads, ${summary.ptBytes} bytes in ${model.pt.cpus.length} CPU streams` +
              (perfStats && (perfStats.truncated || perfStats.lostRecords) ? ` (${perfStats.truncated} truncated AUX chunks, ${perfStats.lostRecords} lost sideband records)` : '')
            : `PT: ${summary.ptThreads} emulated thread streams, ${summary.ptBytes} bytes`
          : 'metadata only, no PT data'),
    );
  if (javaSignal || (javaExit !== null && javaExit !== 0)) {
    log.warn(`the traced program exited with ${javaSignal ?? `status ${javaExit}`}`);
    return ExitCode.Failed;
  }
  return model.complete ? ExitCode.Ok : ExitCode.Failed;
}
