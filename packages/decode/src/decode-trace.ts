/**
 * Decodes a whole trace directory: every thread's PT (per-thread streams as they are; per-CPU streams cut into
 * threads by the switch sideband) into Java event streams.
 */
import * as fs from 'fs';
import * as path from 'path';
import { FlowDecoder, FlowOptions, FlowStats } from './flow';
import { invokeCallees } from './callees';
import { readFileRange, splitAtPsb } from './split';
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
   * Streams larger than this are read and decoded in windows of this size, cut at PSB boundaries, so a
   * stream of any size decodes in bounded memory (default 16 MiB). After each window the events made so far
   * go on through attribution and completion (ThreadPipeline).
   */
  windowBytes?: number;
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

export function decodeTrace(dir: string, opts: DecodeOptions = {}): DecodedTrace {
  const model = loadTrace(dir, opts);
  const sb = model.sideband;
  if (!sb) throw new DecodeError(`${path.join(dir, 'pt')}: no PT data in this trace directory (recorded with --pt=none?)`, 2);
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
      // streaming: what each window made goes on at once (else the thread's Java events are read whole, at the end);
      // returns how many events the window made
      const afterWindow = (): number => {
        if (!sink) return 0;
        const e = java.takeSettledEvents();
        pipe.feed(e);
        return e.length;
      };
      const java = new JavaEventBuilder(model);
      const flow = new FlowDecoder(model.image, java, callees);
      const flowOpts = { retcomp: sb.returnCompression, timing: sb.timing };
      if (t.file) {
        const file = path.join(dir, t.file);
        if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
        decodeFile(file, flow, { ...flowOpts, file: t.file }, opts.windowBytes ?? 16 << 20, afterWindow);
      } else {
        for (const w of sb.switches) {
          if (w.tid !== t.tid) continue;
          // (only the window's bytes: a per-CPU file holds every thread's and may be past what one buffer holds)
          const file = `pt/cpu${w.cpu}.pt`;
          const size = cpuSizes.get(w.cpu) ?? statSize(path.join(dir, file));
          cpuSizes.set(w.cpu, size);
          if (w.offset + w.bytes > size) throw new DecodeError(`${file}: switch record of tid ${w.tid} covers bytes ${w.offset}..${w.offset + w.bytes}, past the end (${size})`, 2);
          const bytes = readFileRange(path.join(dir, file), w.offset, w.offset + w.bytes);
          flow.decode(bytes, { ...flowOpts, begin: 0, end: bytes.length, noSync: true, file, streamOffset: w.offset });
          afterWindow();
        }
      }
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

/** Java events a streamed window should make at most: the window's PT bytes shrink to keep near it. */
const WINDOW_EVENTS = 4 << 20;
/** The smallest window of PT a stream is decoded in. */
const MIN_WINDOW_BYTES = 1 << 20;

/**
 * Decodes one stream file: whole when small, else window by window. Each window ends at a PSB; the walk goes on
 * to the IP that PSB+ names (endIp) and may read ahead into the next 64 KiB, so windows join like one decode.
 * `afterWindow` returns the events the window made: where PT is dense in events (compiled loops: luindex full's
 * steady state made 64 M Java events in one 16 MiB window, 1.8 GB held at once), the next windows are smaller,
 * down to MIN_WINDOW_BYTES, so a window makes about WINDOW_EVENTS.
 */
function decodeFile(file: string, flow: FlowDecoder, flowOpts: FlowOptions, maxWindowBytes: number, afterWindow: () => number): void {
  let windowBytes = maxWindowBytes;
  const size = fs.statSync(file).size;
  if (size <= windowBytes) {
    flow.decode(new Uint8Array(fs.readFileSync(file)), flowOpts);
    return;
  }
  const LOOK = 64 << 10;
  const fd = fs.openSync(file, 'r');
  try {
    let at = 0;
    while (at < size) {
      const len = Math.min(size - at, windowBytes + LOOK);
      const buf = new Uint8Array(len);
      fs.readSync(fd, buf, 0, len, at);
      let end = len;
      let endIp = -1;
      if (at + len < size) {
        // cut at the first PSB at or after windowBytes (PSBs come every few KiB: one lies in the look-ahead)
        const parts = splitAtPsb(buf, windowBytes, flowOpts.timing);
        if (parts.length > 1) {
          end = parts[0].end;
          endIp = parts[0].endIp;
        } else end = windowBytes;
      }
      flow.decode(buf, { ...flowOpts, begin: 0, end, endIp, lookahead: len - end, streamOffset: at });
      at += end;
      const made = afterWindow();
      windowBytes = made > 0 ? Math.max(Math.min(MIN_WINDOW_BYTES, maxWindowBytes), Math.min(maxWindowBytes, Math.floor((WINDOW_EVENTS / made) * end))) : maxWindowBytes;
    }
  } finally {
    fs.closeSync(fd);
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

