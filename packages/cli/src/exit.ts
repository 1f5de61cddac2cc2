/** Exit codes every jportal command uses. */
export const ExitCode = {
  Ok: 0,
  /** The command ran but failed (e.g. the traced program failed, a check did not hold). */
  Failed: 1,
  /** Bad usage or bad input (corrupt trace, missing directory, unknown option). */
  BadInput: 2,
  /** The environment cannot do this (no agent build, no JDK, no PT and no emulator). */
  Unsupported: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error that ends a command with a one-line message and a meaningful exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
