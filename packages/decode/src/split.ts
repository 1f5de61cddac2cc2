/**
 * Splitting one PT stream at PSB boundaries, so parts decode independently (in worker threads) and join
 * exactly: each part but the first starts at a PSB; the part before it walks on to the IP its PSB+ names.
 */
import * as fs from 'fs';
import { findPsb, Item, QueryDecoder, TimingConfig } from '@jportal/pt';

export interface StreamPart {
  begin: number;
  end: number;
  /** Where execution is at `end` (the next part's PSB+ FUP); -1 when tracing was off there or at the stream end. */
  endIp: number;
}

/** Cuts `bytes` into parts of about `target` bytes, each (but the first) starting at a PSB. */
export function splitAtPsb(bytes: Uint8Array, target: number, timing: TimingConfig): StreamPart[] {
  return cutAtPsb(bytes.length, target, timing, (begin, end) => bytes.subarray(begin, end));
}

/**
 * Cuts the stream in `file` as splitAtPsb does, reading only around the cuts (a stream may be larger than one
 * buffer can hold: Node's are at most 2 GiB, and a long run's PT is more).
 */
export function splitFileAtPsb(file: string, target: number, timing: TimingConfig): StreamPart[] {
  const fd = fs.openSync(file, 'r');
  try {
    return cutAtPsb(fs.fstatSync(fd).size, target, timing, (begin, end) => readRange(fd, begin, end));
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes [begin, end) of an open file (fewer at its end). */
export function readRange(fd: number, begin: number, end: number): Uint8Array {
  const len = Math.max(0, end - begin);
  const buf = new Uint8Array(len);
  let done = 0;
  while (done < len) {
    const n = fs.readSync(fd, buf, done, len - done, begin + done);
    if (n <= 0) break;
    done += n;
  }
  return done < len ? buf.subarray(0, done) : buf;
}

/** Bytes [begin, end) of a file (fewer at its end). */
export function readFileRange(file: string, begin: number, end: number): Uint8Array {
  const fd = fs.openSync(file, 'r');
  try {
    return readRange(fd, begin, end);
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes of a stream looked at per step of the search for the next PSB. */
const SEARCH_BYTES = 1 << 20;
/** A search step also reads this many bytes past its end, so no PSB (16 bytes, or a run of them) falls between steps. */
const STEP_OVERLAP = 256;

/** splitAtPsb over a stream of `size` bytes that `read(begin, end)` returns pieces of. */
function cutAtPsb(size: number, target: number, timing: TimingConfig, read: (begin: number, end: number) => Uint8Array): StreamPart[] {
  const cuts: number[] = [0];
  let at = target;
  while (at < size) {
    let psb = -1;
    for (let from = at; psb < 0 && from < size; from += SEARCH_BYTES) {
      const chunk = read(from, Math.min(size, from + SEARCH_BYTES + STEP_OVERLAP));
      const k = findPsb(chunk, 0, chunk.length);
      if (k >= 0) psb = from + k;
    }
    if (psb < 0) break;
    if (psb > cuts[cuts.length - 1]) cuts.push(psb);
    at = psb + target;
  }
  const parts: StreamPart[] = [];
  for (let i = 0; i < cuts.length; i++) {
    const end = i + 1 < cuts.length ? cuts[i + 1] : size;
    let endIp = -1;
    if (i + 1 < cuts.length) {
      // the PSB+ at `end`: its FUP (if tracing is on there) says where execution is
      const head = read(end, Math.min(size, end + 256));
      const q = new QueryDecoder(head, timing, undefined, 0, head.length, true);
      for (let n = 0; n < 16; n++) {
        const k = q.peek();
        if (k === Item.FupStatus) {
          endIp = q.ip;
          break;
        }
        if (k !== Item.End && k !== Item.BadPacket) break;
        if (k === Item.End) break;
        q.consume();
      }
    }
    parts.push({ begin: cuts[i], end, endIp });
  }
  return parts;
}
