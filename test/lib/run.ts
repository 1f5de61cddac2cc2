import { spawnSync, SpawnSyncReturns } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export const REPO = path.resolve(__dirname, '..', '..');
export const AGENT = path.join(REPO, 'agent-java', 'build', 'libjportal.so');
export const CLI = path.join(REPO, 'packages', 'cli', 'dist', 'bin.js');
export const EXAMPLES = path.join(REPO, 'examples');

export function tmpDir(prefix: string): string {
  const base = path.join(REPO, 'test', 'tmp');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, prefix + '-'));
}

export interface AgentRun {
  dir: string;
  result: SpawnSyncReturns<string>;
}

/** Runs `java -agentpath:libjportal.so=out=DIR,OPTIONS JVM_ARGS...` (the agent drains its own ring). */
export function runWithAgent(java: string, label: string, agentOpts: string, jvmArgs: string[], timeoutMs = 240_000): AgentRun {
  if (!fs.existsSync(AGENT)) throw new Error(`agent not built: ${AGENT} (run ./setup.sh)`);
  const dir = tmpDir(label);
  const opts = [`out=${dir}`, agentOpts].filter(Boolean).join(',');
  const result = spawnSync(java, [`-agentpath:${AGENT}=${opts}`, ...jvmArgs], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { dir, result };
}

export function runCli(args: string[], timeoutMs = 240_000, env?: Record<string, string>): SpawnSyncReturns<string> {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: env ? { ...process.env, ...env } : undefined });
  if (r.error) throw r.error;
  return r;
}

export function cleanup(dir: string): void {
  if (!process.env.JPORTAL_KEEP_TMP) fs.rmSync(dir, { recursive: true, force: true });
}

export const CPUS = os.cpus().length;
