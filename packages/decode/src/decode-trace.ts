/**
 * Decodes a whole trace directory: every thread's PT (per-thread streams as they are; per-CPU streams cut into
 * threads by the switch sideband) into Java event streams.
 */
import * as fs from 'fs';
import * as path from 'path';
import { FlowDecoder, FlowOptions, FlowStats } from './flow';
import type { TimingConfig } from '@jportal/pt';
import { invokeCallees } from './callees';
import { fileRangeAtTime, readFileRange, readRange, splitAtPsb, StreamPart, TscRange, UntimedStreamError } from './split';
import { EventBudgetError, EventStream } from './events';
import { JavaDecodeStats, JavaEventBuilder } from './java';
import { JvmModel, loadTrace, LoadOptions } from './load';
import { AttributionStats, MethodUniverse } from './attribute';
import { CompletionStats } from './complete';
import { EventSink, ThreadPipeline } from './pipeline';

export interface DecodedThread {
  tid: number;
  name: string;
  javaTid: number;
  events: EventStream;
  /** how many events the thread has (also when they went to a sink instead of `events`) */
  eventCount: number;
  flow: FlowStats;
  java: JavaDecodeStats;
  /** How much of the interpreted code got its method and bci (absent with attribute: false). */
  attribution?: AttributionStats;
  /** How compiled frames were completed into bytecode sequences (absent with attribute: false). */
  completion?: CompletionStats;
  /** Instructions the capture says ran (emulator sideband), when known: for checking. */
  expectedInsns?: number;
  decodeMs: number;
  /**
   * The most Java events (before attribution) the thread held at once: streamed, about `heldEvents` plus one chunk's
   * (parallel: the largest part's); gathered, all of them.
   */
  peakJavaEvents: number;
}

export interface DecodedTrace {
  model: JvmModel;
  threads: DecodedThread[];
}

export class DecodeError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'DecodeError';
  }
}

export interface DecodeOptions extends LoadOptions {
  /** Only these OS tids. */
  tids?: number[];
  /**
   * Only this span of the run, in seconds since the capture started (either end open: -Infinity, Infinity): each
   * stream is decoded from the last PSB at or before its start to the first PSB after its end (a per-CPU stream's
   * switch windows that overlap it). PSBs come every few KiB of PT, so the events hold the span and a little more
   * at each side (split.ts fileRangeAtTime).
   */
  span?: TimeSpan;
  /**
   * Streams larger than this are read and decoded in windows of this size, cut at PSB boundaries, so a
   * stream of any size decodes in bounded memory (default 16 MiB); see chunkBytes for the events.
   */
  windowBytes?: number;
  /**
   * A window is decoded in chunks of about this many bytes, cut at PSBs (default 256 KiB; Infinity: a window at once):
   * a streamed thread's Java events go on after a chunk that brings them past 4 M, so PT dense in events holds
   * little. The chunks join exactly (the same instructions and events as one decode).
   */
  chunkBytes?: number;
  /** Java events a streamed thread holds before they go on through attribution and completion (default 4 M). */
  heldEvents?: number;
  /**
   * Hand each thread's events to a sink, in stream order and in pieces, instead of holding them: `sinkFor` is
   * asked for the thread's sink before it is decoded; `t.events` then stays empty (`t.eventCount` counts them).
   * A thread of any length then decodes in bounded memory.
   */
  sinkFor?: (tid: number, model: JvmModel) => EventSink;
  /**
   * Attribute interpreted bytecodes to methods and bcis and complete compiled frames into bytecode sequences,
   * from the recorded class files (default true; attribute.ts, complete.ts). Method ids of methods no METHOD
   * record named are added to `model.methods`.
   */
  attribute?: boolean;
  /** Called after each thread, with its events (progress; or to consume them one thread at a time, see `release`). */
  onThread?: (t: DecodedThread, done: number, total: number, model: JvmModel) => void;
  /**
   * Drop each thread's events once `onThread` has returned (its `events` become empty; the stats stay), so that
   * only one thread's events live at a time: for callers that write or convert them in `onThread`.
   */
  release?: boolean;
}

/** Empties `t.events` when `release` asks for it (after onThread has taken what it needs). */
export function releaseEvents(t: DecodedThread, opts: { release?: boolean }): void {
  if (opts.release) t.events = new EventStream(0);
}

/**
 * The Java thread that names each OS thread of the trace, by OS tid: an OS tid can carry two Java threads (main, then
 * DestroyJavaVM), the first names it. What a decoded thread is called (DecodedThread.name, javaTid).
 */
export function javaThreadNames(model: JvmModel): Map<number, { name: string; javaTid: number }> {
  const names = new Map<number, { name: string; javaTid: number }>();
  for (const t of model.threads) if (!names.has(t.osTid)) names.set(t.osTid, { name: t.name, javaTid: t.javaTid });
  return names;
}

/** A span of a run in seconds since the capture started; either end may be open (-Infinity, Infinity). */
export interface TimeSpan {
  from: number;
  to: number;
}

/** `span` in TSC ticks, by the capture's start and the trace's TSC rate (a DecodeError, exit 2, when it has neither). */
export function spanTsc(dir: string, model: JvmModel, span: TimeSpan): TscRange {
  const start = model.sideband?.clock?.tsc;
  if (start === undefined) throw new DecodeError(`${path.join(dir, 'pt', 'sideband.jsonl')}: says nothing of when the capture started: the trace cannot be cut by time`, 2);
  if (!(model.tscPerNs > 0)) throw new DecodeError(`${path.join(dir, 'meta.jpt')}: no TSC calibration records: the trace's TSC rate is unknown, it cannot be cut by time`, 2);
  const at = (s: number) => (Number.isFinite(s) ? start + s * 1e9 * model.tscPerNs : s);
  return { from: at(span.from), to: at(span.to) };
}

/** The bytes of a thread's stream file that hold `range` (all of them without one); a stream without time as a DecodeError (exit 2). */
export function streamRange(file: string, range: TscRange | undefined, timing: TimingConfig): StreamPart | undefined {
  if (!range) return undefined;
  try {
    return fileRangeAtTime(file, range, timing);
  } catch (e) {
    throw e instanceof UntimedStreamError ? new DecodeError(e.message, 2) : e;
  }
}

/**
 * Bytes of PT a decode of `span` reads, over every stream of the trace (`model`: loadTrace's, when the caller has
 * it): each per-thread file cut at the PSBs around the span, each per-CPU switch window that overlaps it. Without a
 * span, all of them.
 */
export function ptBytesInSpan(dir: string, span: TimeSpan | undefined, model: JvmModel = loadTrace(dir)): number {
  const sb = model.sideband;
  if (!sb) throw new DecodeError(`${path.join(dir, 'pt')}: no PT data in this trace directory (recorded with --pt=none?)`, 2);
  const tscRange = span && spanTsc(dir, model, span);
  let bytes = 0;
  for (const t of sb.threads) {
    if (!t.file) continue;
    const file = path.join(dir, t.file);
    if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
    const range = streamRange(file, tscRange, sb.timing);
    bytes += range ? range.end - range.begin : statSize(file);
  }
  for (const w of sb.switches) if (switchInRange(w, tscRange)) bytes += w.bytes;
  return bytes;
}

export function decodeTrace(dir: string, opts: DecodeOptions = {}): DecodedTrace {
  const model = loadTrace(dir, opts);
  const sb = model.sideband;
  if (!sb) throw new DecodeError(`${path.join(dir, 'pt')}: no PT data in this trace directory (recorded with --pt=none?)`, 2);
  const tscRange = opts.span && spanTsc(dir, model, opts.span);
  const names = javaThreadNames(model);
  const threads: DecodedThread[] = [];
  const todo = sb.threads.filter((t) => !opts.tids || opts.tids.includes(t.tid));
  const cpuSizes = new Map<number, number>();
  // (the call-site candidates shape the flow itself, with or without attribution: the same walk either way)
  const callees = invokeCallees(model.image, universeOf(model));
  const universe = opts.attribute === false ? undefined : universeOf(model);
  for (const t of todo) {
    const name = names.get(t.tid)?.name ?? t.comm;
    try {
      const t0 = Date.now();
      const sink = opts.sinkFor?.(t.tid, model);
      const pipe = new ThreadPipeline(universe, sink);
      const java = new JavaEventBuilder(model);
      const flow = new FlowDecoder(model.image, java, callees);
      const flowOpts = { retcomp: sb.returnCompression, timing: sb.timing };
      // streaming: the events made go on once there are `held` of them (else the thread's Java events are read
      // whole, at the end); what a take must keep (behind a branch not yet known) counts double towards the next
      const held = Math.max(1, opts.heldEvents ?? HELD_EVENTS);
      let takeAt = held;
      let peak = 0;
      // the stream taken last: the pipeline read it before feed returned (EventSink's contract), so it is reused
      let spare: EventStream | undefined;
      const afterChunk = (): void => {
        if (!sink || java.events.length < takeAt) return;
        peak = Math.max(peak, java.events.length);
        const taken = java.takeSettledEvents(spare);
        pipe.feed(taken);
        spare = taken;
        takeAt = Math.max(held, 2 * java.events.length);
      };
      const chunkBytes = opts.chunkBytes ?? CHUNK_BYTES;
      if (t.file) {
        const file = path.join(dir, t.file);
        if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
        const range = streamRange(file, tscRange, sb.timing);
        decodeFile(file, flow, { ...flowOpts, file: t.file }, opts.windowBytes ?? 16 << 20, chunkBytes, afterChunk, range);
      } else {
        for (const w of sb.switches) {
          if (w.tid !== t.tid || !switchInRange(w, tscRange)) continue;
          // (only the window's bytes: a per-CPU file holds every thread's and may be past what one buffer holds)
          const file = `pt/cpu${w.cpu}.pt`;
          const size = cpuSizes.get(w.cpu) ?? statSize(path.join(dir, file));
          cpuSizes.set(w.cpu, size);
          if (w.offset + w.bytes > size) throw new DecodeError(`${file}: switch record of tid ${w.tid} covers bytes ${w.offset}..${w.offset + w.bytes}, past the end (${size})`, 2);
          const bytes = readFileRange(path.join(dir, file), w.offset, w.offset + w.bytes);
          decodeChunks(flow, bytes, { ...flowOpts, begin: 0, end: bytes.length, noSync: true, file, streamOffset: w.offset }, chunkBytes, afterChunk);
        }
      }
      peak = Math.max(peak, java.events.length);
      pipe.feed(java.takeEvents());
      const st = pipe.finish();
      const info = names.get(t.tid);
      const d: DecodedThread = {
        tid: t.tid,
        name,
        javaTid: info?.javaTid ?? -1,
        events: st.events,
        eventCount: pipe.count,
        flow: flow.stats,
        java: java.stats,
        attribution: st.attribution,
        completion: st.completion,
        expectedInsns: t.insns,
        decodeMs: Date.now() - t0,
        peakJavaEvents: peak,
      };
      threads.push(d);
      opts.onThread?.(d, threads.length, todo.length, model);
      releaseEvents(d, opts);
    } catch (e) {
      throw tooLarge(e, t.tid, name);
    }
  }
  return { model, threads };
}

/** An EventBudgetError as a DecodeError naming the thread (exit 3: this machine cannot hold it); others as they are. */
export function tooLarge(e: unknown, tid: number, name: string): unknown {
  if (!(e instanceof EventBudgetError)) return e;
  return new DecodeError(`thread ${tid} (${name}) is too large to decode in memory here: ${e.message}`, 3);
}

/** Java events a streamed thread holds before they go on through attribution and completion (afterChunk). */
const HELD_EVENTS = 4 << 20;
/**
 * PT bytes decoded at a time (a chunk ends at a PSB): the Java events made are looked at after each chunk. Where PT is
 * dense in events (compiled loops: batik medium made 171 M Java events from one window of 16 MiB or less, 4.8 GB of
 * columns, and attribution's output grew as large), a window's events go on after each chunk that brings them past
 * HELD_EVENTS, so a thread holds about HELD_EVENTS plus one chunk's events (measured: up to 11 per PT byte).
 */
const CHUNK_BYTES = 256 << 10;

/** Whether a per-CPU stream's switch window overlaps the span (every window when there is none). */
export function switchInRange(w: { tscBegin: number; tscEnd: number }, range: TscRange | undefined): boolean {
  return !range || (w.tscEnd >= range.from && w.tscBegin <= range.to);
}

/**
 * Decodes one stream file window by window (windows of `windowBytes`, each ending at a PSB; the walk goes on to the
 * IP that PSB+ names and may read ahead into the next 64 KiB, so windows join like one decode), each window chunk by
 * chunk (decodeChunks); only `range` of it when given (from a PSB to a PSB, whose FUP names its endIp).
 */
function decodeFile(file: string, flow: FlowDecoder, flowOpts: FlowOptions, windowBytes: number, chunkBytes: number, afterChunk: () => void, range?: StreamPart): void {
  const fileSize = fs.statSync(file).size;
  const size = range?.end ?? fileSize;
  const LOOK = 64 << 10;
  const fd = fs.openSync(file, 'r');
  try {
    let at = range?.begin ?? 0;
    while (at < size) {
      const len = Math.min(fileSize - at, windowBytes + LOOK);
      const buf = readRange(fd, at, at + len);
      let end = Math.min(buf.length, size - at);
      let endIp = size < fileSize ? (range?.endIp ?? -1) : -1;
      if (at + len < size) {
        // cut at the first PSB at or after windowBytes (PSBs come every few KiB: one lies in the look-ahead)
        const parts = splitAtPsb(buf, windowBytes, flowOpts.timing);
        if (parts.length > 1) {
          end = parts[0].end;
          endIp = parts[0].endIp;
        } else end = windowBytes;
      }
      decodeChunks(flow, buf, { ...flowOpts, end, endIp, streamOffset: at }, chunkBytes, afterChunk);
      at += end;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Decodes `buf` [opts.begin ?? 0, opts.end) in chunks of about `chunkBytes` cut at PSBs (they join as windows do:
 * one decode's instructions exactly), calling `afterChunk` after each; bytes past `end` are look-ahead.
 */
function decodeChunks(flow: FlowDecoder, buf: Uint8Array, opts: FlowOptions, chunkBytes: number, afterChunk: () => void): void {
  const begin = opts.begin ?? 0;
  const end = opts.end ?? buf.length;
  const chunks = end - begin > chunkBytes ? splitAtPsb(buf.subarray(begin, end), chunkBytes, opts.timing) : [{ begin: 0, end: end - begin, endIp: -1 }];
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i];
    const last = i === chunks.length - 1;
    flow.decode(buf, {
      ...opts,
      begin: begin + c.begin,
      end: begin + c.end,
      endIp: last ? opts.endIp : c.endIp,
      lookahead: buf.length - (begin + c.end),
      noSync: i === 0 && opts.noSync,
    });
    afterChunk();
  }
}

/** The size of a stream file named by the sideband (a typed error when it is missing). */
function statSize(file: string): number {
  if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
  return fs.statSync(file).size;
}

const universes = new WeakMap<JvmModel, MethodUniverse>();

export function universeOf(model: JvmModel): MethodUniverse {
  let u = universes.get(model);
  if (!u) universes.set(model, (u = new MethodUniverse(model)));
  return u;
}

