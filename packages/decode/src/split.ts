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
export function splitFileAtPsb(file: string, target: number, timing: TimingConfig, range?: StreamPart): StreamPart[] {
  const fd = fs.openSync(file, 'r');
  try {
    return cutAtPsb(fs.fstatSync(fd).size, target, timing, (begin, end) => readRange(fd, begin, end), range);
  } finally {
    fs.closeSync(fd);
  }
}

/** A span of time in TSC ticks, either end open (-Infinity, Infinity). */
export interface TscRange {
  from: number;
  to: number;
}

/** A stream names no time (no TSC in its PSB+): it cannot be cut by time. */
export class UntimedStreamError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
  ) {
    super(`${file}: the PSB+ at offset ${offset} carries no TSC: the stream cannot be cut by time`);
    this.name = 'UntimedStreamError';
  }
}

/**
 * The bytes of the stream in `file` that hold the span `range`: from the last PSB at or before its start (the first
 * PSB when none is) to the first PSB after its end (the stream's end when none is), with the IP that PSB+ names as
 * `endIp`. PSBs come every few KiB, so the part holds the span and at most a PSB period more at each side. A stream's
 * TSC only rises, so the two PSBs are found by bisection, reading a few KiB per step. Empty (begin = end) when the
 * span ends before the stream's first PSB.
 */
export function fileRangeAtTime(file: string, range: TscRange, timing: TimingConfig): StreamPart {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const read = (begin: number, end: number) => readRange(fd, begin, end);
    const first = nextPsb(read, size, 0);
    if (first < 0) return { begin: 0, end: size, endIp: -1 };
    const tscAt = (at: number): number => {
      const t = psbTsc(read(at, Math.min(size, at + PSB_HEAD_BYTES)), timing);
      if (!(t > 0)) throw new UntimedStreamError(file, at);
      return t;
    };
    /** the last PSB whose TSC is at or before `tsc` (-1: none) */
    const lastAtOrBefore = (tsc: number): number => {
      if (tsc === Infinity) return lastPsb(read, size, first);
      if (tscAt(first) > tsc) return -1;
      let lo = first; // a PSB at or before tsc
      let hi = size; // every PSB at or after hi is past tsc
      while (hi - lo > BISECT_STOP) {
        const mid = lo + Math.floor((hi - lo) / 2);
        const p = nextPsb(read, size, mid, hi);
        if (p < 0 || tscAt(p) > tsc) hi = mid;
        else lo = p;
      }
      for (let p = nextPsb(read, size, lo + 1, hi); p >= 0 && tscAt(p) <= tsc; p = nextPsb(read, size, p + 1, hi)) lo = p;
      return lo;
    };
    const begin = range.from === -Infinity ? 0 : Math.max(0, lastAtOrBefore(range.from));
    const last = lastAtOrBefore(range.to);
    if (last < 0) return { begin: 0, end: 0, endIp: -1 };
    const end = nextPsb(read, size, last + 1);
    if (end < 0) return { begin, end: size, endIp: -1 };
    return { begin, end, endIp: psbFupIp(read(end, Math.min(size, end + PSB_HEAD_BYTES)), timing) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes of a PSB+ looked at for its TSC and FUP (a PSB+ is a few dozen bytes). */
const PSB_HEAD_BYTES = 256;
/** The bisection stops when its bounds are this close, and steps from PSB to PSB. */
const BISECT_STOP = 64 << 10;

type Reader = (begin: number, end: number) => Uint8Array;

/**
 * The first PSB that starts in [from, end) of a stream of `size` bytes (-1: none), reading a search step at a time
 * (each step reads a little past its end, so a PSB across two steps, or across `end`, is seen whole).
 */
function nextPsb(read: Reader, size: number, from: number, end = size): number {
  for (let at = from; at < end; at += SEARCH_BYTES) {
    const chunk = read(at, Math.min(size, Math.min(end, at + SEARCH_BYTES) + STEP_OVERLAP));
    const k = findPsb(chunk, 0, chunk.length);
    if (k >= 0) return at + k < end ? at + k : -1;
  }
  return -1;
}

/** The last PSB of a stream of `size` bytes whose first PSB is at `first`: the last search step back from its end that has one. */
function lastPsb(read: Reader, size: number, first: number): number {
  for (let from = Math.max(first, size - SEARCH_BYTES); ; from = Math.max(first, from - SEARCH_BYTES)) {
    const chunk = read(from, Math.min(size, from + SEARCH_BYTES + STEP_OVERLAP));
    let found = -1;
    for (let k = findPsb(chunk, 0, chunk.length); k >= 0 && from + k < size; k = findPsb(chunk, k + 16, chunk.length)) found = from + k;
    if (found >= 0) return found;
    if (from === first) return first;
  }
}

/** The TSC the PSB+ at the start of `head` names (0: none). */
function psbTsc(head: Uint8Array, timing: TimingConfig): number {
  const q = new QueryDecoder(head, timing, undefined, 0, head.length, true);
  q.peek();
  return q.tsc;
}

/** The IP the PSB+ at the start of `head` names in its FUP (-1: none, tracing is off there). */
function psbFupIp(head: Uint8Array, timing: TimingConfig): number {
  const q = new QueryDecoder(head, timing, undefined, 0, head.length, true);
  for (let n = 0; n < 16; n++) {
    const k = q.peek();
    if (k === Item.FupStatus) return q.ip;
    if (k === Item.End || k === Item.BadPacket) break;
    q.consume();
  }
  return -1;
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

/**
 * splitAtPsb over a stream of `size` bytes that `read(begin, end)` returns pieces of; over `range` of it when given
 * (a part of the stream that starts at a PSB: its parts end at its end, the last naming its `endIp`).
 */
function cutAtPsb(size: number, target: number, timing: TimingConfig, read: (begin: number, end: number) => Uint8Array, range?: StreamPart): StreamPart[] {
  const start = range?.begin ?? 0;
  const stop = range?.end ?? size;
  const cuts: number[] = [start];
  let at = start + target;
  while (at < stop) {
    const psb = nextPsb(read, stop, at);
    if (psb < 0) break;
    if (psb > cuts[cuts.length - 1]) cuts.push(psb);
    at = psb + target;
  }
  const parts: StreamPart[] = [];
  for (let i = 0; i < cuts.length; i++) {
    const last = i + 1 === cuts.length;
    const end = last ? stop : cuts[i + 1];
    // the PSB+ at `end`: its FUP (if tracing is on there) says where execution is
    const endIp = last ? (range?.endIp ?? -1) : psbFupIp(read(end, Math.min(size, end + PSB_HEAD_BYTES)), timing);
    parts.push({ begin: cuts[i], end, endIp });
  }
  return parts;
}
