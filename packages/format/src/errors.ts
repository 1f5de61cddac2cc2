/** Why a trace file could not be read (or read completely). */
export type TraceErrorCode =
  | 'bad-magic'
  | 'unsupported-version'
  | 'header-crc'
  | 'bad-header'
  | 'truncated'
  | 'bad-size'
  | 'record-crc'
  | 'payload-overrun'
  | 'number-overflow'
  | 'layout-mismatch'
  | 'bad-layout'
  | 'seq-gap'
  | 'ring';

/** A typed error naming the file and the byte offset where reading failed. */
export class TraceFormatError extends Error {
  constructor(
    readonly code: TraceErrorCode,
    readonly file: string,
    readonly offset: number,
    detail: string,
  ) {
    super(`${file}: byte ${offset}: ${detail}`);
    this.name = 'TraceFormatError';
  }
}

export function isTraceFormatError(e: unknown): e is TraceFormatError {
  return e instanceof TraceFormatError;
}
