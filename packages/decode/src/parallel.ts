/**
 * Parallel decoding: every thread's stream is cut at PSB boundaries into parts of ~`partBytes`, the parts are
 * spread over worker_threads (each loads the code image once), and each thread's events are stitched back in
 * stream order.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { DecodedThread, DecodeError, javaThreadNames, releaseEvents, spanTsc, streamRange, switchInRange, TimeSpan, tooLarge, universeOf } from './decode-trace';
import { MethodUniverse } from './attribute';
import { EventSink, ThreadPipeline } from './pipeline';
import { EventStream } from './events';
import { FlowStats, mergeGapSites } from './flow';
import { JavaDecodeStats } from './java';
import { JvmModel, loadTrace, LoadOptions } from './load';
import { splitFileAtPsb } from './split';

export interface ParallelOptions extends LoadOptions {
  /** Worker threads (default: available cores). */
  workers?: number;
  /**
   * Target size of a part of a stream (default 1 MiB): a worker holds a part's Java events whole, and PT dense in
   * events makes up to 11 per byte (batik medium), so 4 MiB parts held 1.2 GB each.
   */
  partBytes?: number;
  tids?: number[];
  /** only this span of the run (see DecodeOptions.span) */
  span?: TimeSpan;
  /** attribute interpreted bytecodes to methods (default true; see DecodeOptions.attribute) */
  attribute?: boolean;
  /** called after each thread is stitched and attributed (see DecodeOptions.onThread) */
  onThread?: (t: DecodedThread, done: number, total: number, model: JvmModel) => void;
  /** drop each thread's events after onThread (see DecodeOptions.release) */
  release?: boolean;
  /** hand each thread's events to a sink instead of holding them (see DecodeOptions.sinkFor) */
  sinkFor?: (tid: number, model: JvmModel) => EventSink;
}

/** One unit of work for a worker. */
export interface PartTask {
  lookahead: number;
  id: number;
  tid: number;
  file: string;
  begin: number;
  end: number;
  endIp: number;
  noSync: boolean;
}

export interface PartResult {
  id: number;
  columns: Record<string, ArrayBuffer>;
  length: number;
  flow: FlowStats;
  java: JavaDecodeStats;
  ms: number;
  error?: string;
  /** the error was an EventBudgetError: its message */
  tooLarge?: string;
}

export async function decodeTraceParallel(dir: string, opts: ParallelOptions = {}): Promise<{ model: JvmModel; threads: DecodedThread[]; workers: number; parts: number }> {
  const model = loadTrace(dir, opts);
  const sb = model.sideband;
  if (!sb) throw new DecodeError(`${path.join(dir, 'pt')}: no PT data in this trace directory (recorded with --pt=none?)`, 2);
  const names = javaThreadNames(model);
  const partBytes = opts.partBytes ?? 1 << 20;
  const tscRange = opts.span && spanTsc(dir, model, opts.span);
  const tasks: PartTask[] = [];
  const todo = sb.threads.filter((t) => !opts.tids || opts.tids.includes(t.tid));
  for (const t of todo) {
    if (t.file) {
      const file = path.join(dir, t.file);
      if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
      const range = streamRange(file, tscRange, sb.timing);
      if (range && range.end === range.begin) continue; // (the span ends before its first PSB)
      for (const p of splitFileAtPsb(file, partBytes, sb.timing, range)) tasks.push({ id: tasks.length, tid: t.tid, file: t.file, begin: p.begin, end: p.end, endIp: p.endIp, noSync: false, lookahead: 64 << 10 });
    } else {
      for (const w of sb.switches)
        if (w.tid === t.tid && switchInRange(w, tscRange)) tasks.push({ id: tasks.length, tid: t.tid, file: `pt/cpu${w.cpu}.pt`, begin: w.offset, end: w.offset + w.bytes, endIp: -1, noSync: true, lookahead: 0 });
    }
  }
  const nworkers = Math.max(1, Math.min(opts.workers ?? os.availableParallelism(), tasks.length));
  // parts in stream order, thread after thread: attribution reads each thread's parts in order as they come in,
  // on this thread, while the workers decode the next ones (a pipeline), and holds no part longer than that
  const queue = [...tasks];
  const results: (PartResult | undefined)[] = new Array(tasks.length);
  const byThread = todo.map((t) => tasks.filter((k) => k.tid === t.tid));
  const threads: DecodedThread[] = [];
  let cur: ThreadAssembly | undefined;
  const universe = opts.attribute === false ? undefined : universeOf(model);
  /** Feeds every part that is next in stream order; finishes each thread whose parts are all in. */
  const pump = (): void => {
    while (threads.length < todo.length) {
      const k = threads.length;
      const t = todo[k];
      const info = names.get(t.tid);
      const name = info?.name ?? t.comm;
      try {
        cur ??= new ThreadAssembly(universe, byThread[k].reduce((n, x) => n + (x.end - x.begin), 0), opts.sinkFor?.(t.tid, model));
        const mine = byThread[k];
        while (cur.fed < mine.length) {
          const r = results[mine[cur.fed].id];
          if (!r) return; // not decoded yet
          results[mine[cur.fed].id] = undefined;
          cur.feed(r, mine[cur.fed].end - mine[cur.fed].begin);
        }
        const d: DecodedThread = { tid: t.tid, name, javaTid: info?.javaTid ?? -1, events: new EventStream(0), eventCount: 0, flow: cur.flow, java: cur.java, expectedInsns: t.insns, decodeMs: cur.ms, peakJavaEvents: cur.peak };
        cur.finish(d);
        cur = undefined;
        threads.push(d);
        opts.onThread?.(d, threads.length, todo.length, model);
        releaseEvents(d, opts);
      } catch (e) {
        throw tooLarge(e, t.tid, name);
      }
    }
  };
  // the compiled worker (from sources run by ts-jest, the package's dist/)
  let script = path.join(__dirname, 'worker.js');
  if (!fs.existsSync(script)) script = path.join(__dirname, '..', 'dist', 'worker.js');
  let failed = false;
  const workers: Worker[] = [];
  await Promise.all(
    Array.from({ length: nworkers }, () => {
      return new Promise<void>((resolve, reject) => {
        const w = new Worker(script, { workerData: { dir, patchLead: opts.patchLead } });
        workers.push(w);
        const fail = (e: unknown) => {
          failed = true;
          queue.length = 0;
          // every worker stops (one left running would keep the process alive)
          for (const x of workers) void x.terminate();
          reject(e);
        };
        const next = () => {
          const t = queue.shift();
          if (!t) {
            void w.terminate().then(() => resolve());
            return;
          }
          w.postMessage(t);
        };
        w.on('message', (r: PartResult) => {
          if (failed) {
            void w.terminate();
            resolve();
            return;
          }
          if (r.error) {
            const t = tasks[r.id];
            fail(r.tooLarge ? new DecodeError(`thread ${t.tid} (${names.get(t.tid)?.name ?? 'unnamed'}) is too large to decode in memory here: ${r.tooLarge}`, 3) : new Error(r.error));
            return;
          }
          results[r.id] = r;
          // the worker gets its next part before this thread goes on with attribution
          next();
          try {
            pump();
          } catch (e) {
            fail(e);
          }
        });
        w.on('error', fail);
        next();
      });
    }),
  );
  pump(); // (threads with no parts)
  return { model, threads, workers: nworkers, parts: tasks.length };
}

/** One thread's parts as they are read in order, through a ThreadPipeline (attribution, completion, sink). */
class ThreadAssembly {
  fed = 0;
  ms = 0;
  /** the largest part's Java events */
  peak = 0;
  flow: FlowStats = emptyFlow();
  java: JavaDecodeStats = { bytecodes: 0, interpreted: 0, compiled: 0, entries: 0, gaps: 0, hoisted: 0 };
  private readonly pipe: ThreadPipeline;
  private fedBytes = 0;

  constructor(universe: MethodUniverse | undefined, totalBytes: number, sink: EventSink | undefined) {
    // (gathering: attribution's output grows to a projection from the PT bytes read so far)
    this.pipe = new ThreadPipeline(universe, sink, (made) => Math.ceil(((made * Math.max(1, totalBytes)) / Math.max(1, this.fedBytes)) * 1.05) + 4096);
  }

  feed(r: PartResult, bytes: number): void {
    const part = EventStream.fromColumns(r.columns, r.length);
    this.peak = Math.max(this.peak, r.length);
    r.columns = {};
    this.fedBytes += bytes;
    this.pipe.feed(part);
    this.ms += r.ms;
    const first = this.fed++ === 0;
    if (first) {
      this.flow = { ...r.flow, gapReasons: [...r.flow.gapReasons], gapSites: r.flow.gapSites.map((g) => ({ ...g })) };
      this.java = { ...r.java };
      return;
    }
    const flow = this.flow;
    for (const k of ['bytes', 'packets', 'blocks', 'insns', 'gaps', 'skippedBytes', 'tntBits', 'tips', 'droppedBlocks', 'speculations', 'alternatives'] as const) flow[k] += r.flow[k];
    r.flow.gapReasons.forEach((n, j) => (flow.gapReasons[j] += n));
    mergeGapSites(flow.gapSites, r.flow.gapSites);
    flow.lastTsc = r.flow.lastTsc;
    for (const k of ['bytecodes', 'interpreted', 'compiled', 'entries', 'gaps', 'hoisted'] as const) this.java[k] += r.java[k];
  }

  /** The thread's events (or their count, when they went to a sink) and statistics into `d`. */
  finish(d: DecodedThread): void {
    const st = this.pipe.finish();
    d.attribution = st.attribution;
    d.completion = st.completion;
    d.eventCount = this.pipe.count;
    d.events = st.events;
  }
}

function emptyFlow(): FlowStats {
  return { bytes: 0, packets: 0, blocks: 0, insns: 0, gaps: 0, skippedBytes: 0, tntBits: 0, tips: 0, firstTsc: 0, lastTsc: 0, gapReasons: [0, 0, 0, 0, 0, 0], droppedBlocks: 0, speculations: 0, alternatives: 0, gapSites: [] };
}
