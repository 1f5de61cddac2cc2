/**
 * Parallel decoding: every thread's stream is cut at PSB boundaries into parts of ~`partBytes`, the parts are
 * spread over worker_threads (each loads the code image once), and each thread's events are stitched back in
 * stream order.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { attribute, DecodedThread, DecodeError, releaseEvents, tooLarge } from './decode-trace';
import { EventStream } from './events';
import { FlowStats } from './flow';
import { JavaDecodeStats } from './java';
import { JvmModel, loadTrace, LoadOptions } from './load';
import { splitAtPsb } from './split';

export interface ParallelOptions extends LoadOptions {
  /** Worker threads (default: available cores). */
  workers?: number;
  /** Target size of a part of a stream (default 4 MiB). */
  partBytes?: number;
  tids?: number[];
  /** attribute interpreted bytecodes to methods (default true; see DecodeOptions.attribute) */
  attribute?: boolean;
  /** called after each thread is stitched and attributed (see DecodeOptions.onThread) */
  onThread?: (t: DecodedThread, done: number, total: number, model: JvmModel) => void;
  /** drop each thread's events after onThread (see DecodeOptions.release) */
  release?: boolean;
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
  const names = new Map<number, { name: string; javaTid: number }>();
  for (const t of model.threads) if (!names.has(t.osTid)) names.set(t.osTid, { name: t.name, javaTid: t.javaTid });
  const partBytes = opts.partBytes ?? 4 << 20;
  const tasks: PartTask[] = [];
  const todo = sb.threads.filter((t) => !opts.tids || opts.tids.includes(t.tid));
  for (const t of todo) {
    if (t.file) {
      const file = path.join(dir, t.file);
      if (!fs.existsSync(file)) throw new DecodeError(`${file}: missing (named by pt/sideband.jsonl)`, 2);
      const bytes = fs.readFileSync(file);
      for (const p of splitAtPsb(bytes, partBytes, sb.timing)) tasks.push({ id: tasks.length, tid: t.tid, file: t.file, begin: p.begin, end: p.end, endIp: p.endIp, noSync: false, lookahead: 64 << 10 });
    } else {
      for (const w of sb.switches)
        if (w.tid === t.tid) tasks.push({ id: tasks.length, tid: t.tid, file: `pt/cpu${w.cpu}.pt`, begin: w.offset, end: w.offset + w.bytes, endIp: -1, noSync: true, lookahead: 0 });
    }
  }
  const nworkers = Math.max(1, Math.min(opts.workers ?? os.availableParallelism(), tasks.length));
  const results: PartResult[] = new Array(tasks.length);
  // biggest parts first, each worker pulls the next when done
  const queue = [...tasks].sort((a, b) => b.end - b.begin - (a.end - a.begin));
  // the compiled worker (from sources run by ts-jest, the package's dist/)
  let script = path.join(__dirname, 'worker.js');
  if (!fs.existsSync(script)) script = path.join(__dirname, '..', 'dist', 'worker.js');
  await Promise.all(
    Array.from({ length: nworkers }, () => {
      return new Promise<void>((resolve, reject) => {
        const w = new Worker(script, { workerData: { dir, patchLead: opts.patchLead } });
        const next = () => {
          const t = queue.shift();
          if (!t) {
            void w.terminate().then(() => resolve());
            return;
          }
          w.postMessage(t);
        };
        w.on('message', (r: PartResult) => {
          if (r.error) {
            queue.length = 0; // the other workers stop after their current part
            void w.terminate();
            const t = tasks[r.id];
            reject(r.tooLarge ? new DecodeError(`thread ${t.tid} (${names.get(t.tid)?.name ?? 'unnamed'}) is too large to decode in memory here: ${r.tooLarge}`, 3) : new Error(r.error));
            return;
          }
          results[r.id] = r;
          next();
        });
        w.on('error', reject);
        next();
      });
    }),
  );
  const threads: DecodedThread[] = todo.map((t, done) => {
    const mine = tasks.filter((k) => k.tid === t.tid).map((k) => results[k.id]);
    const flow = mine.length ? { ...mine[0].flow, gapReasons: [...mine[0].flow.gapReasons] } : emptyFlow();
    const java = mine.length ? { ...mine[0].java } : { bytecodes: 0, interpreted: 0, compiled: 0, entries: 0, gaps: 0 };
    let ms = 0;
    const parts: EventStream[] = [];
    mine.forEach((r, i) => {
      parts.push(EventStream.fromColumns(r.columns, r.length));
      r.columns = {}; // (held by `parts` only: let go as attribution reads them)
      ms += r.ms;
      if (i === 0) return;
      for (const k of ['bytes', 'packets', 'blocks', 'insns', 'gaps', 'skippedBytes', 'tntBits', 'tips', 'droppedBlocks', 'speculations', 'alternatives'] as const) flow[k] += r.flow[k];
      r.flow.gapReasons.forEach((n, j) => (flow.gapReasons[j] += n));
      flow.lastTsc = r.flow.lastTsc;
      for (const k of ['bytecodes', 'interpreted', 'compiled', 'entries', 'gaps'] as const) java[k] += r.java[k];
    });
    const info = names.get(t.tid);
    const d: DecodedThread = { tid: t.tid, name: info?.name ?? t.comm, javaTid: info?.javaTid ?? -1, events: new EventStream(0), flow, java, expectedInsns: t.insns, decodeMs: ms };
    try {
      if (opts.attribute === false) {
        // the parts stitched in stream order
        const events = new EventStream(parts.reduce((n, e) => n + e.length, 0));
        for (let k = 0; k < parts.length; k++) {
          events.appendStream(parts[k]);
          parts[k] = new EventStream(0);
        }
        d.events = events;
      } else attribute(model, d, opts, parts);
      opts.onThread?.(d, done + 1, todo.length, model);
      releaseEvents(d, opts);
    } catch (e) {
      throw tooLarge(e, t.tid, d.name);
    }
    return d;
  });
  return { model, threads, workers: nworkers, parts: tasks.length };
}

function emptyFlow(): FlowStats {
  return { bytes: 0, packets: 0, blocks: 0, insns: 0, gaps: 0, skippedBytes: 0, tntBits: 0, tips: 0, firstTsc: 0, lastTsc: 0, gapReasons: [0, 0, 0, 0, 0, 0], droppedBlocks: 0, speculations: 0, alternatives: 0 };
}
