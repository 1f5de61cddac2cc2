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
