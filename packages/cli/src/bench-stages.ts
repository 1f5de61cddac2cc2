/**
 * One trace's decoder stages timed in a process of their own (so that its peak memory is theirs), for `jportal
 * bench apps`, each thread streamed as `jportal decode` streams it (bounded memory for a thread of any length):
 * the flow decode into Java events (a decode without attribution, its events counted), then attribution of
 * interpreted bytecodes and completion of compiled frames (a second decode with them, minus the first one's time;
 * its events taken a window at a time, as `jportal analyze` takes them), then on each window the steps analyze runs
 * after decoding, each timed: reconstruction (@jportal/reconstruct) and recovery of PT-loss gaps (@jportal/recover).
 * Prints one JSON line on stdout.   node bench-stages.js TRACE_DIR
 */
import { analyzeWindowEvents, createRefiner, RefineTimes, ThreadRefiner } from '@jportal/analyze';
import { decodeTrace, EventStream, javaThreadNames } from '@jportal/decode';

export interface StageTimes {
  threads: number;
  ptBytes: number;
  insns: number;
  flowMs: number;
  attributeMs: number;
  /** absent from results measured before reconstruction was timed */
  reconstructMs?: number;
  recoverMs: number;
  bytecodes: number;
  gaps: number;
  recovered: number;
  /** peak resident set of this process, bytes */
  maxRssBytes: number;
}

function main(dir: string): StageTimes {
  const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
  const times: RefineTimes = { reconstructMs: 0, recoverMs: 0 };
  let refiner: ThreadRefiner | undefined;
  let gaps = 0;
  let recovered = 0;
  let bytecodes = 0;
  // 1. flow and Java events only
  let t0 = process.hrtime.bigint();
  decodeTrace(dir, { attribute: false, release: true, sinkFor: () => () => undefined });
  const flowMs = ms(t0);
  // 2. the same with attribution and completion, then reconstruction and recovery, a window at a time as
  // `jportal analyze` takes them (the same refiner, the thread named as it names it)
  const windowEvents = analyzeWindowEvents();
  const names = new Map<number, string>();
  const refine = (tid: number, w: EventStream) => {
    const r = refiner!.refineEvents(w, { name: names.get(tid) ?? `tid ${tid}`, tid });
    gaps += r.recovery?.gaps ?? 0;
    recovered += r.recovery?.recovered ?? 0;
    for (let i = 0; i < r.events.length; i++) if (r.events.kind[i] === 0) bytecodes++;
    r.events.length = 0;
    return r.events;
  };
  const windows = new Map<number, EventStream>();
  t0 = process.hrtime.bigint();
  const d = decodeTrace(dir, {
    release: true,
    sinkFor: (tid, model) => {
      refiner ??= createRefiner(model, { times });
      const t = javaThreadNames(model).get(tid);
      if (t) names.set(tid, t.name);
      windows.set(tid, new EventStream(1 << 20));
      return (e) => {
        for (let from = 0; from < e.length; ) {
          let w = windows.get(tid)!;
          const take = Math.min(e.length - from, windowEvents - w.length);
          w.appendStream(e.view(from, from + take));
          from += take;
          if (w.length >= windowEvents) windows.set(tid, (w = refine(tid, w)));
        }
      };
    },
    onThread: (t) => {
      const w = windows.get(t.tid);
      windows.delete(t.tid);
      if (w?.length) refine(t.tid, w);
    },
  });
  const { reconstructMs, recoverMs } = times;
  const attributeMs = Math.max(0, ms(t0) - reconstructMs - recoverMs - flowMs);
  return {
    threads: d.threads.length,
    ptBytes: d.threads.reduce((s, t) => s + t.flow.bytes, 0),
    insns: d.threads.reduce((s, t) => s + t.flow.insns, 0),
    flowMs,
    attributeMs,
    reconstructMs,
    recoverMs,
    bytecodes,
    gaps,
    recovered,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node bench-stages.js TRACE_DIR\n');
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(main(dir)) + '\n');
}
