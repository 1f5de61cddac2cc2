/**
 * Traces and ground truth of a few examples for the analyze tests, recorded once per test run and shared by the
 * analyze-*.test.ts files (jest runs them in one process, one after another, but each file loads modules anew:
 * the cache is on disk, test/tmp/analyze-fixture/<name>, stamped with the agent, plugin and CLI build times).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findJdks } from './jdks';
import { CLI, EXAMPLES, REPO } from './run';

export const ANALYZE_EXAMPLES = {
  switches: ['-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '3000'],
  exceptions: ['-cp', path.join(EXAMPLES, 'exceptions', 'classes'), 'Exceptions', '2000'],
  twins: ['-cp', path.join(EXAMPLES, 'twins', 'classes'), 'Twins', '20'],
} as const;
export type AnalyzeExample = keyof typeof ANALYZE_EXAMPLES;

const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const AGENT = path.join(REPO, 'agent-java', 'build', 'libjportal.so');

/** Why the fixture cannot be made here (printed by the tests that skip), or undefined. */
export function analyzeFixtureMissing(): string | undefined {
  const jdk17 = findJdks().available.find((j) => j.feature === 17);
  const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
  const missing = [!jdk17 && 'JDK 17', !qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin (./setup.sh)', !fs.existsSync(AGENT) && 'the agent (./setup.sh)'].filter(Boolean);
  return missing.length ? `missing ${missing.join(', ')}` : undefined;
}

export interface AnalyzeFixture {
  name: AnalyzeExample;
  /** trace directory recorded under the emulator without loss */
  trace: string;
  /** ground truth of the same run arguments */
  oracle: string;
  /** the example's class directory (classpath) */
  classes: string;
  /** its sources */
  sources: string;
  java: string;
}

const stampOf = () => [AGENT, PLUGIN, CLI].map((f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : 0)).join(',');

/** Records (or reuses) the example's loss-free emulated trace and its oracle. */
export function analyzeFixture(name: AnalyzeExample): AnalyzeFixture {
  const java = findJdks().available.find((j) => j.feature === 17)!.java;
  const base = path.join(REPO, 'test', 'tmp', 'analyze-fixture', name);
  const args = ANALYZE_EXAMPLES[name];
  const fx: AnalyzeFixture = { name, trace: path.join(base, 'trace'), oracle: path.join(base, 'oracle'), classes: args[1], sources: path.dirname(args[1]), java };
  const stampFile = path.join(base, 'stamp');
  // (and the example's classes: a rebuilt example is recorded again)
  const classStamp = fs.existsSync(args[1]) ? fs.readdirSync(args[1]).map((f) => fs.statSync(path.join(args[1], f)).mtimeMs).sort().join(',') : '';
  const stamp = `${stampOf()} ${classStamp} ${args.join(' ')}`;
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) return fx;
  fs.rmSync(base, { recursive: true, force: true });
  fs.mkdirSync(base, { recursive: true });
  const run = (argv: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`jportal ${argv.slice(0, 2).join(' ')} failed (${r.status}): ${r.stderr.slice(-1000)}`);
  };
  run(['record', '--pt=emulate', '--deterministic', '--force', '--out', fx.trace, '--', java, ...args]);
  run(['oracle', '--deterministic', '--force', '--out', fx.oracle, '--', java, ...args]);
  fs.writeFileSync(stampFile, stamp);
  return fx;
}
