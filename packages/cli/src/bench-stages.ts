/**
 * One trace's decoder stages timed in a process of their own (so that its peak memory is theirs), for `jportal
 * bench apps`: the flow decode into Java events (decodeTrace without attribution), attribution (attribution
 * of interpreted bytecodes to methods and bcis, completion of compiled frames), and recovery of PT-loss gaps.
 * Prints one JSON line on stdout.   node bench-stages.js TRACE_DIR
 */
import { attributeInterpreted, completeCompiled, decodeTrace, MethodUniverse } from '@jportal/decode';
import { recoverGaps } from '@jportal/recover';

export interface StageTimes {
  threads: number;
  ptBytes: number;
  insns: number;
  flowMs: number;
  attributeMs: number;
  recoverMs: number;
  bytecodes: number;
  gaps: number;
  recovered: number;
  /** peak resident set of this process, bytes */
  maxRssBytes: number;
}

function main(dir: string): StageTimes {
  const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
  let attributeMs = 0;
  let recoverMs = 0;
  let gaps = 0;
  let recovered = 0;
  let bytecodes = 0;
  let u: MethodUniverse | undefined;
  const t0 = process.hrtime.bigint();
  // thread by thread (each thread's events let go before the next is decoded): the stages' own times summed
  const d = decodeTrace(dir, {
    attribute: false,
    release: true,
    onThread: (t, _done, _total, model) => {
      let s = process.hrtime.bigint();
      u ??= new MethodUniverse(model);
      t.events = completeCompiled(u, attributeInterpreted(u, t.events).events).events;
      attributeMs += ms(s);
      s = process.hrtime.bigint();
      const r = recoverGaps(t.events);
      recoverMs += ms(s);
      gaps += r.stats.gaps;
      recovered += r.stats.recovered;
      for (let i = 0; i < r.events.length; i++) if (r.events.kind[i] === 0) bytecodes++;
    },
  });
  const flowMs = ms(t0) - attributeMs - recoverMs;
  return {
    threads: d.threads.length,
    ptBytes: d.threads.reduce((s, t) => s + t.flow.bytes, 0),
    insns: d.threads.reduce((s, t) => s + t.flow.insns, 0),
    flowMs,
    attributeMs,
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
