/**
 * A stream read in parts (in stream order) so that every event is read with the same events after it however the
 * stream was cut: a part's last `look` events wait and are read together with the next part's first (or at finish).
 * Attribution and completion read this way (their look-ahead must not stop at a part's edge).
 */
import { EventStream } from './events';

/** Reads input[from..end) (looking ahead past `end`); returns the index of the first event not read (>= end). */
export type RangeReader = (input: EventStream, from: number, end: number) => number;

export class PartReader {
  /** the last events fed and not read yet */
  private readonly carry = new EventStream(16);
  /** the carried events and the first of the next part, read together */
  private joined: EventStream | undefined;

  constructor(
    private readonly look: number,
    private readonly read: RangeReader,
  ) {}

  /** The next part. */
  feed(input: EventStream): void {
    const { look, carry, read } = this;
    let at = 0;
    if (carry.length) {
      if (carry.length + input.length < 2 * look) {
        carry.appendStream(input);
        return;
      }
      const c = carry.length;
      const head = Math.min(input.length, 2 * look);
      const joined = (this.joined ??= new EventStream(4 * look + 16));
      joined.length = 0;
      joined.appendStream(carry);
      joined.appendStream(input.view(0, head));
      carry.length = 0;
      const r = read(joined, 0, joined.length - look);
      if (r < c) {
        // (only with a short part, all of it in `joined`: what was not read waits on)
        carry.appendStream(joined.view(r, joined.length));
        return;
      }
      at = r - c;
    }
    const end = input.length - look;
    if (at < end) at = read(input, at, end);
    carry.appendStream(input.view(at, input.length));
  }

  /** The stream ended: what waits is read. */
  finish(): void {
    this.read(this.carry, 0, this.carry.length);
    this.carry.length = 0;
  }
}
