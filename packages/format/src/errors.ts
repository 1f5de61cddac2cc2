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

/**
 * A typed error naming the file and the byte offset where reading failed. The message is one line:
 * `meta.jpt: record at byte 123456: record CRC mismatch (stored 0x..., computed 0x...)`.
 */
export class TraceFormatError extends Error {
  /**
   * @param where how the offset is introduced in the message ('byte', 'record at byte', 'header at byte',
   *   'ring byte', 'stream byte'); the numeric offset is always `offset`.
   */
  constructor(
    readonly code: TraceErrorCode,
    readonly file: string,
    readonly offset: number,
    readonly detail: string,
    where = 'byte',
  ) {
    super(`${file}: ${where} ${offset}: ${detail}`);
    this.name = 'TraceFormatError';
  }
}

export function isTraceFormatError(e: unknown): e is TraceFormatError {
  return e instanceof TraceFormatError;
}
