import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findExecutable, locateAgent, locateEmulatorPlugin } from '../agent-path';
import { Collector } from '../collector';
import { CliError, ExitCode } from '../exit';
import { agentOptions, injectAgent } from '../java-command';
import { stderrLogger } from '../log';
import { loadTraceModel } from '../trace-model';

export interface RecordOptions {
  out?: string;
  command: string[];
  ringMb?: number;
  patchIntervalMs?: number;
  snapshot?: boolean;
  classes?: boolean;
  agentLog?: string;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
  /** 'emulate': run the JVM under qemu-x86_64 with the PT emulator plugin; 'none': metadata only. */
  pt?: 'auto' | 'emulate' | 'none';
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
 * and one contiguous code cache (see docs/emulator.md). */
export const DETERMINISTIC_JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-Xbatch',
  '-XX:CICompilerCount=2',
  '-XX:-UseDynamicNumberOfCompilerThreads',
  '-XX:ReservedCodeCacheSize=64m',
];

export interface RecordSummary {
  out: string;
  metaFile: string;
  bytes: number;
  records: number;
  complete: boolean;
  javaExit: number | null;
  javaSignal: string | null;
  pt: 'none' | 'emulated';
  ptThreads: number;
  ptBytes: number;
  note: string;
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
  fs.mkdirSync(out, { recursive: true });

  const emulate = opts.pt === 'emulate';
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
      classes: opts.classes,
      log: opts.agentLog,
    }),
  );
  log.info(`recording ${opts.command.join(' ')} -> ${out}`);
  if (emulate) log.info('Intel PT: emulated (the JVM runs under qemu-x86_64 with the jportal PT plugin; expect it to be slower)');
  else log.info('no Intel PT capture in this run: metadata only (real PT capture comes with a later release; --pt=emulate uses the emulator)');

  const child = spawn(launch.command, launch.args, {
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
  try {
    while (!exit && !spawnError) {
      collector.tryAttach();
      const n = collector.drain();
      await sleep(n > 0 ? 1 : 20);
    }
    if (spawnError) {
      const code = (spawnError as NodeJS.ErrnoException).code === 'ENOENT' ? ExitCode.Unsupported : ExitCode.Failed;
      throw new CliError(`record: cannot run ${opts.command[0]}: ${spawnError.message}`, code);
    }
    collector.tryAttach();
    collector.finish();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
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
    pt: model.pt ? 'emulated' : 'none',
    ptThreads: model.pt?.threads.length ?? 0,
    ptBytes: model.pt?.threads.reduce((n, t) => n + t.bytes, 0) ?? 0,
    note,
  };
  if (opts.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else
    log.info(
      `wrote ${out} (${model.records} records, ${model.fileBytes} bytes, ${note}); ` +
        (model.pt ? `PT: ${summary.ptThreads} emulated thread streams, ${summary.ptBytes} bytes` : 'metadata only, no PT data'),
    );
  if (javaSignal || (javaExit !== null && javaExit !== 0)) {
    log.warn(`the traced program exited with ${javaSignal ?? `status ${javaExit}`}`);
    return ExitCode.Failed;
  }
  return model.complete ? ExitCode.Ok : ExitCode.Failed;
}
