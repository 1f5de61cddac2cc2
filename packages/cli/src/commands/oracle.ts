/**
 * `jportal oracle [--out DIR] -- java ARGS...`: runs a Java program with the agent in ground-truth mode
 * (every executed bytecode of every thread through JVMTI single-stepping; docs/oracle-format.md).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readOracle } from '@jportal/oracle';
import { locateAgent } from '../agent-path';
import { CliError, ExitCode } from '../exit';
import { agentClassesOption, agentOptions, injectAgent, type ClassMode } from '../java-command';
import { stderrLogger } from '../log';
import { DETERMINISTIC_JVM_FLAGS } from './record';

export interface OracleCommandOptions {
  out?: string;
  command: string[];
  force?: boolean;
  json?: boolean;
  /** how class files reach the trace (the agent's classes option; default path) */
  classes?: ClassMode;
  deterministic?: boolean;
}

export async function runOracle(o: OracleCommandOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  if (o.command.length === 0) throw new CliError('oracle: no command given (usage: jportal oracle [--out DIR] -- java ARGS...)', ExitCode.BadInput);
  const agent = locateAgent();
  const out = path.resolve(o.out ?? `jportal-oracle-${Date.now()}`);
  if (out.includes(',')) throw new CliError(`oracle: the output directory must not contain ',' (${out})`, ExitCode.BadInput);
  if (fs.existsSync(path.join(out, 'methods.jsonl'))) {
    if (!o.force) throw new CliError(`oracle: ${out} already holds ground truth (use --force to overwrite)`, ExitCode.BadInput);
    fs.rmSync(path.join(out, 'threads'), { recursive: true, force: true });
    fs.rmSync(path.join(out, 'oracle.json'), { force: true });
  }
  fs.mkdirSync(out, { recursive: true });
  let command = o.command;
  if (o.deterministic) command = [command[0], ...DETERMINISTIC_JVM_FLAGS, ...command.slice(1)];
  const launch = injectAgent(command, agent, agentOptions({ oracle: true, out, classes: agentClassesOption(o.classes) }));
  log.info(`ground truth of ${o.command.join(' ')} -> ${out} (every bytecode is single-stepped: expect it to be slow)`);
  const t0 = Date.now();
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['inherit', o.json ? 2 : 'inherit', 'inherit'] });
    child.on('error', (e) => reject(new CliError(`oracle: cannot run ${o.command[0]}: ${e.message}`, (e as NodeJS.ErrnoException).code === 'ENOENT' ? ExitCode.Unsupported : ExitCode.Failed)));
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  if (!fs.existsSync(path.join(out, 'methods.jsonl')))
    throw new CliError(`oracle: the agent wrote nothing to ${out}: the JVM did not load it or failed before it started`, ExitCode.Failed);
  const dir = readOracle(out);
  const records = dir.threads.reduce((n, t) => n + t.records, 0);
  const summary = {
    out,
    complete: dir.complete,
    vmVersion: dir.vmVersion,
    methods: dir.methods.length,
    records,
    threads: dir.threads.map((t) => ({ tid: t.tid, name: t.name, records: t.records, complete: t.complete })),
    javaExit: exit.code,
    javaSignal: exit.signal,
    ms: Date.now() - t0,
  };
  if (o.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else {
    log.info(`wrote ${out}: ${records} records in ${dir.threads.length} threads, ${dir.methods.length} methods${dir.complete ? '' : ' (INCOMPLETE: the JVM did not reach VM death)'}`);
    for (const t of dir.threads) log.info(`  ${t.tid} ${t.name}: ${t.records} records`);
  }
  if (exit.signal || (exit.code !== null && exit.code !== 0)) {
    log.warn(`the program exited with ${exit.signal ?? `status ${exit.code}`}`);
    return ExitCode.Failed;
  }
  return dir.complete ? ExitCode.Ok : ExitCode.Failed;
}
