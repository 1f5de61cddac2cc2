/** A PT stream could not be decoded at `offset`: a typed error naming where. */
export class PtDecodeError extends Error {
  constructor(
    readonly code: 'truncated' | 'bad-opcode' | 'bad-packet' | 'nosync',
    readonly offset: number,
    detail: string,
    readonly file?: string,
  ) {
    super(`${file ? file + ': ' : ''}byte ${offset}: ${detail}`);
    this.name = 'PtDecodeError';
  }
}
