/** Logs go to stderr; stdout is reserved for data and --json summaries. */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
}

export function stderrLogger(quiet = false): Logger {
  return {
    info: (msg) => {
      if (!quiet) process.stderr.write(`jportal: ${msg}\n`);
    },
    warn: (msg) => process.stderr.write(`jportal: warning: ${msg}\n`),
  };
}
