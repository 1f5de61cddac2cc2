/**
 * The decoding side of a streamed analysis (stream.ts), in a worker thread: decodeInWindows over the trace, each
 * window posted to the analysing thread as it is made (its columns transferred, not copied), at most
 * IN_FLIGHT windows ahead of the walk. Messages: StreamMessage, in this order: `start` (the threads, the class
 * bytes), per thread its `window`s then `done`, and `end`; or `error` at any point.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'worker_threads';
import { javaThreadNames, JvmModel } from '@jportal/decode';
import { decodeInWindows, ThreadWho, WindowBuffers } from './load';
import { AnalysisMethod, ThreadEvents } from './model';
import { IN_FLIGHT, RECYCLED_MAX, StreamControl, StreamMessage, StreamWorkerData } from './stream-protocol';

const data = workerData as StreamWorkerData;
const control = new Int32Array(data.control);
const post = (m: StreamMessage, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(m, transfer);

class Cancelled extends Error {}

/** Windows' buffers handed back by the analysing thread (taken off the port synchronously: decoding never yields). */
const recycled: WindowBuffers[] = [];
function takeRecycled(): WindowBuffers | undefined {
  for (let m = receiveMessageOnPort(data.recycle); m; m = receiveMessageOnPort(data.recycle)) {
    if (recycled.length < RECYCLED_MAX) recycled.push(m.message as WindowBuffers);
  }
  return recycled.pop();
}

/** Waits until the walk is fewer than IN_FLIGHT windows behind (or the analysis is called off). */
function awaitRoom(posted: number): void {
  for (;;) {
    if (Atomics.load(control, StreamControl.Cancel)) throw new Cancelled();
    const walked = Atomics.load(control, StreamControl.Walked);
    if (posted - walked < IN_FLIGHT) return;
    Atomics.wait(control, StreamControl.Walked, walked, 1000);
  }
}

async function run(): Promise<void> {
  const methods: AnalysisMethod[] = [];
  // (the analysing thread reports the problems: those of loading come with `start`, and it parses the classes itself)
  const problems: string[] = [];
  let sentMethods = 0;
  let posted = 0;
  const index = new Map<number, number>();
  const started = (model: JvmModel) => {
    // the threads in the decoder's order, named as it names them (decode-trace.ts, parallel.ts)
    const names = javaThreadNames(model);
    const threads: ThreadWho[] = (model.sideband?.threads ?? [])
      .filter((t) => !data.opts.tids || data.opts.tids.includes(t.tid))
      .map((t) => ({ name: names.get(t.tid)?.name ?? t.comm, tid: t.tid, javaTid: names.get(t.tid)?.javaTid ?? -1 }));
    threads.forEach((t, k) => index.set(t.tid, k));
    post({ type: 'start', threads, classes: model.classes, problems: [...problems], tscPerNs: model.tscPerNs, startTsc: model.sideband?.clock?.tsc });
  };
  await decodeInWindows(
    data.dir,
    { ...data.opts, reuse: false },
    {
      model: started,
      open: (who) => {
        const k = index.get(who.tid);
        if (k === undefined) throw new Error(`stream: thread ${who.tid} is not among the sideband's threads`);
        return k;
      },
      window: (k: number, t: ThreadEvents) => {
        awaitRoom(posted);
        const fresh = methods.slice(sentMethods).map((m) => ({ className: m.className, name: m.name, signature: m.signature, loader: m.loader }));
        sentMethods = methods.length;
        const { kind, method, bci, opcode, tsc, endTsc, origin, tier } = t;
        const columns = { kind, method, bci, opcode, tsc, endTsc, origin, tier };
        const buffers = new Set<ArrayBuffer>();
        for (const c of Object.values(columns)) buffers.add(c.buffer as ArrayBuffer);
        post({ type: 'window', k, methods: fresh, length: t.length, columns }, [...buffers]);
        posted++;
      },
      recycled: takeRecycled,
      done: (k, t, facts) => {
        const { events: _events, ...stats } = t;
        post({ type: 'done', k, name: t.name, javaTid: t.javaTid, facts, decoded: stats });
      },
    },
    methods,
    problems,
  );
  post({ type: 'end' });
}

run().catch((e: unknown) => {
  if (e instanceof Cancelled) return;
  const err = e instanceof Error ? e : new Error(String(e));
  // (the error crosses to the analysing thread as its class name and fields: the CLI's exit code depends on them)
  const props: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(err)) if (['string', 'number', 'boolean'].includes(typeof v)) props[k] = v as string | number | boolean;
  post({ type: 'error', name: err.name, message: err.message, stack: err.stack, props });
});
