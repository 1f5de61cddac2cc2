import * as fs from 'fs';
import * as path from 'path';
import { CliError, ExitCode } from './exit';

/**
 * Finds libjportal.so: $JPORTAL_AGENT, else the agent-java workspace's build output.
 * Throws a CliError (exit 3) naming what is missing.
 */
export function locateAgent(): string {
  const candidates: string[] = [];
  const env = process.env.JPORTAL_AGENT;
  if (env) candidates.push(path.resolve(env));
  try {
    const pkg = require.resolve('@jportal/agent-java/package.json');
    candidates.push(path.join(path.dirname(pkg), 'build', 'libjportal.so'));
  } catch {
    // not installed as a workspace dependency; fall through to the source-tree layout
  }
  candidates.push(path.resolve(__dirname, '..', '..', '..', 'agent-java', 'build', 'libjportal.so'));
  for (const c of candidates) if (fs.existsSync(c)) return c;
  throw new CliError(
    `the jportal agent is not built (looked for ${candidates.join(', ')}); run ./setup.sh or set JPORTAL_AGENT`,
    ExitCode.Unsupported,
  );
}

/** Finds the QEMU PT emulator plugin: $JPORTAL_QEMU_PLUGIN, else the native workspace's build output. */
export function locateEmulatorPlugin(): string {
  const candidates: string[] = [];
  if (process.env.JPORTAL_QEMU_PLUGIN) candidates.push(path.resolve(process.env.JPORTAL_QEMU_PLUGIN));
  try {
    const pkg = require.resolve('@jportal/native/package.json');
    candidates.push(path.join(path.dirname(pkg), 'qemu-pt', 'build', 'libjportal-qemu-pt.so'));
  } catch {
    // not installed as a workspace dependency
  }
  candidates.push(path.resolve(__dirname, '..', '..', '..', 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so'));
  for (const c of candidates) if (fs.existsSync(c)) return c;
  throw new CliError(`the PT emulator plugin is not built (looked for ${candidates.join(', ')}); run ./setup.sh`, ExitCode.Unsupported);
}

/** An executable found on PATH (or given as a path), or undefined. */
export function findExecutable(name: string): string | undefined {
  if (name.includes('/')) return fs.existsSync(name) ? path.resolve(name) : undefined;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}
