import * as path from 'path';

export interface LaunchSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Adds `-agentpath:AGENT=OPTIONS` to a Java command line. When the command is a `java` launcher the
 * option goes right after it; for a wrapper script (e.g. an application's start script) it goes through
 * JAVA_TOOL_OPTIONS, which every HotSpot launcher reads.
 */
export function injectAgent(argv: string[], agentPath: string, options: string): LaunchSpec {
  if (argv.length === 0) throw new Error('no command given');
  const agentArg = `-agentpath:${agentPath}=${options}`;
  const [command, ...rest] = argv;
  const env = { ...process.env };
  if (path.basename(command) === 'java') {
    return { command, args: [agentArg, ...rest], env };
  }
  // under the emulator: qemu-x86_64 -plugin SPEC /path/to/java ARGS -> the agent goes right after java
  if (path.basename(command) === 'qemu-x86_64' && rest.length >= 3 && rest[0] === '-plugin') {
    return { command, args: [rest[0], rest[1], rest[2], agentArg, ...rest.slice(3)], env };
  }
  env.JAVA_TOOL_OPTIONS = env.JAVA_TOOL_OPTIONS ? `${env.JAVA_TOOL_OPTIONS} ${agentArg}` : agentArg;
  return { command, args: rest, env };
}

/** Agent option string from key/value pairs; values must not contain ',' (the agent's separator). */
/** The agent's `classes` modes as the CLI names them. */
export const CLASS_MODES = ['path', 'hook', 'early', 'none'] as const;
export type ClassMode = (typeof CLASS_MODES)[number];

/** The agent option value of a class mode (undefined: the agent's default, path). */
export function agentClassesOption(mode: ClassMode | undefined): string | undefined {
  return mode === 'none' ? '0' : mode;
}

export function agentOptions(opts: Record<string, string | number | boolean | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(opts)) {
    if (v === undefined) continue;
    const s = typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
    if (s.includes(',')) throw new Error(`agent option ${k} must not contain ',' (got ${s})`);
    parts.push(`${k}=${s}`);
  }
  return parts.join(',');
}
