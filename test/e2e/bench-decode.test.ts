/**
 * bench/decode's libipt side (ptbench.c, bench/decode/libipt.js): libipt's block decoder served the trace's code
 * image through its read-memory callback, either the latest bytes of each section or every version by the
 * decoder's current time. On a JIT run (code installed, patched and freed while it runs), the time-indexed image
 * must let libipt decode more of what ran, with fewer errors, than the latest bytes do, and never more than the
 * emulator says ran; on the same trace our own flow walk must decode at least as much as libipt does.
 */
import * as fs from 'fs';
import * as path from 'path';
import { FlowDecoder, FlowSink, invokeCallees, loadTrace, MethodUniverse } from '@jportal/decode';
import { analyzeFixture, analyzeFixtureMissing } from '../lib/analyze-fixture';
import { REPO, tmpDir, cleanup } from '../lib/run';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const lib = require(path.join(REPO, 'bench', 'decode', 'libipt.js')) as {
  buildPtbench(dir: string): string;
  writeImages(image: unknown, dir: string): { latest: string; timed: string };
  runPtbench(bin: string, mode: string, streams: string[], images: { latest: string; timed: string }, timing: unknown): { seconds: number; insns: number; errors: number };
};

let why = analyzeFixtureMissing();
const build = tmpDir('bench-decode');
let bin = '';
if (!why) {
  try {
    bin = lib.buildPtbench(build);
  } catch (e) {
    why = (e as Error).message;
  }
}
if (why) console.warn(`SKIP bench/decode libipt tests: ${why}`);
const maybe = why ? describe.skip : describe;
afterAll(() => cleanup(build));

/** Instructions the emulator traced, from its thread_end sideband records. */
function tracedInsns(trace: string): number {
  let n = 0;
  for (const line of fs.readFileSync(path.join(trace, 'pt', 'sideband.jsonl'), 'utf8').split('\n')) {
    if (line.includes('"thread_end"')) n += (JSON.parse(line) as { insns?: number }).insns ?? 0;
  }
  return n;
}

maybe('libipt beside our flow walk (bench/decode)', () => {
  test('the time-indexed image: libipt decodes more, with fewer errors, than on the latest bytes (switches, JIT)', () => {
    const fx = analyzeFixture('switches');
    const model = loadTrace(fx.trace);
    const sb = model.sideband!;
    const streams = sb.threads.filter((t) => t.file).map((t) => path.join(fx.trace, t.file!));
    const images = lib.writeImages(model.image, build);
    const latest = lib.runPtbench(bin, 'blk', streams, images, sb.timing);
    const timed = lib.runPtbench(bin, 'blkt', streams, images, sb.timing);
    const truth = tracedInsns(fx.trace);
    console.log(`switches: traced ${truth} instructions; libipt latest bytes ${latest.insns} (${latest.errors} errors), time-indexed ${timed.insns} (${timed.errors} errors)`);
    // the run patches and replaces compiled code, so the latest bytes are stale somewhere
    expect(latest.errors).toBeGreaterThan(0);
    expect(timed.errors).toBeLessThan(latest.errors);
    expect(timed.insns).toBeGreaterThan(latest.insns);
    expect(timed.insns).toBeLessThanOrEqual(truth);

    // our walk over the same streams and image
    const callees = invokeCallees(model.image, new MethodUniverse(model));
    let ours = 0;
    for (const f of streams) {
      const bytes = new Uint8Array(fs.readFileSync(f));
      const sink: FlowSink = { block() {}, partial() {}, enable() {}, disable() {}, gap() {} };
      const flow = new FlowDecoder(model.image, sink, callees);
      ours += flow.decode(bytes, { retcomp: sb.returnCompression, timing: sb.timing, file: path.basename(f) }).insns;
    }
    console.log(`switches: our flow walk ${ours} instructions`);
    expect(ours).toBeGreaterThanOrEqual(timed.insns);
    expect(ours).toBeLessThanOrEqual(truth);
  });
});
