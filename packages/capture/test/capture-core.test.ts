/**
 * The ring-draining logic against the simulated kernel (perf-kernel-sim.ts): data ring and AUX area with
 * wrap-around, a TRUNCATED chunk, LOST records, and the exact trace directory that must come out.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readPtSideband } from '@jportal/format';
import { PerfCaptureCore, PerfCaptureHeader, PT_SAMPLE_TYPE } from '../src';
import { chunk, SimulatedPerfMmap } from './perf-kernel-sim';

const HEADER: PerfCaptureHeader = {
  psbPeriodBytes: 16384,
  ipFiltering: false,
  returnCompression: false,
  mtc: true,
  cyc: false,
  ctcRatio: 2,
  mtcFreq: 3,
  nomFreq: 24,
  tsc: 900n,
  monoNs: 123456789n,
  pmuType: 8,
  config: 0x300ee01n,
};

const HEADER_LINE =
  '{"type":"header","format":"jportal-pt-sideband","version":1,"source":"perf-intel-pt","psb_period":16384,"ip_filtering":false,"user_only":true,' +
  '"return_compression":false,"loss_buffer":0,"loss_rate":0,"seed":0,"cpus":2,"mtc":true,"cyc":false,"ctc_ratio":2,"mtc_freq":3,"nom_freq":24,' +
  '"tsc":900,"mono_ns":123456789,"capture":"perf","mode":"full","pmu_type":8,"config":"0x300ee01","time_unit":"tsc"}';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-capture-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const JVM = 100;
const C2 = 101;
const who = (tid: number, time: number) => ({ pid: JVM, tid, time });

test('per-CPU full capture: wrap-around, a truncated chunk and lost records give exactly the expected directory', () => {
  // the simulated clock: perf time = TSC * 512 >> 10, so every sideband tsc below is twice the perf time
  const cpu0 = new SimulatedPerfMmap(512, 64, 0, 11n);
  const cpu1 = new SimulatedPerfMmap(512, 64, 1, 12n);
  const core = new PerfCaptureCore({ dir, layout: 'per-cpu', mode: 'full', cpus: 2, sampleType: PT_SAMPLE_TYPE, header: HEADER }, [
    { key: 0, view: cpu0 },
    { key: 1, view: cpu1 },
  ]);
  const A = chunk(1, 40), B = chunk(2, 50), C = chunk(3, 30), D = chunk(4, 60), E = chunk(5, 20);

  // round 1: the JVM's main thread starts on cpu0, forks the compiler thread, which runs on cpu1
  cpu0.itraceStart(who(JVM, 500));
  cpu0.comm(who(JVM, 510), 'java', true);
  cpu0.auxChunk(A, who(JVM, 600));
  cpu0.switch(who(JVM, 610), true);
  cpu0.forkOrExit('fork', who(JVM, 620), { pid: JVM, ppid: JVM, tid: C2, ptid: JVM });
  cpu1.itraceStart(who(C2, 630));
  cpu1.comm(who(C2, 640), 'C2 CompilerThre');
  cpu1.auxChunk(B, who(C2, 700));
  core.drainRound(1600n);
  expect(cpu0.tailWrites).toEqual([272n]);

  // round 2: AUX wraps on both CPUs; cpu1's area fills (TRUNCATED); cpu0's data ring overflows (4 COMMs lost)
  cpu0.switch(who(JVM, 900), false);
  cpu0.auxChunk(C, who(JVM, 950));
  const kept = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => cpu0.comm(who(JVM, 1000 + k), `worker-${k}`));
  expect(kept).toEqual([true, true, true, true, true, true, false, false, false, false]);
  cpu1.auxChunk(D, who(C2, 960));
  cpu1.auxChunk(E, who(C2, 970)); // only 4 bytes fit
  core.drainRound(2100n);

  // round 3: PERF_RECORD_LOST precedes the next record that fits; the compiler thread resumes and exits
  cpu0.comm(who(JVM, 1100), 'main');
  cpu1.switch(who(C2, 1150), false);
  cpu1.forkOrExit('exit', who(C2, 1200), { pid: JVM, ppid: JVM, tid: C2, ptid: JVM });
  core.drainRound(2500n);
  const stats = core.finish(2600n);

  expect(fs.readdirSync(path.join(dir, 'pt')).sort()).toEqual(['cpu0.pt', 'cpu1.pt', 'sideband.jsonl']);
  expect(fs.readFileSync(path.join(dir, 'pt', 'cpu0.pt'))).toEqual(Buffer.concat([A, C]));
  expect(fs.readFileSync(path.join(dir, 'pt', 'cpu1.pt'))).toEqual(Buffer.concat([B, D, E.subarray(0, 4)]));
  const expected = [
    HEADER_LINE,
    '{"type":"thread_start","tid":100,"file":null,"comm":"worker-5","tsc":1000}',
    '{"type":"switch","cpu":0,"tid":100,"segment":0,"offset":0,"bytes":40,"tsc_begin":1000,"tsc_end":1200}',
    '{"type":"thread_start","tid":101,"file":null,"comm":"C2 CompilerThre","tsc":1240}',
    '{"type":"switch","cpu":1,"tid":101,"segment":0,"offset":0,"bytes":50,"tsc_begin":1260,"tsc_end":1400}',
    '{"type":"switch","cpu":1,"tid":101,"segment":1,"offset":50,"bytes":60,"tsc_begin":1400,"tsc_end":1920}',
    // (the main thread off the CPU from its switch-out at 610 to its switch-in at 900; C2's switch-in at 1150
    // follows no switch-out and says nothing)
    '{"type":"offcpu","tid":100,"tsc_begin":1220,"tsc_end":1800,"ticks":580}',
    '{"type":"switch","cpu":0,"tid":100,"segment":1,"offset":40,"bytes":30,"tsc_begin":1800,"tsc_end":1900}',
    '{"type":"switch","cpu":1,"tid":101,"segment":2,"offset":110,"bytes":4,"tsc_begin":1920,"tsc_end":1940}',
    '{"type":"loss","tid":101,"offset":114,"lost_bytes":0,"lost_insns":0,"tsc_begin":1940,"tsc_end":2300,"cause":"aux-truncated","cpu":1}',
    '{"type":"comm","tid":100,"comm":"worker-0","exec":false,"tsc":2000}',
    '{"type":"comm","tid":100,"comm":"worker-1","exec":false,"tsc":2002}',
    '{"type":"comm","tid":100,"comm":"worker-2","exec":false,"tsc":2004}',
    '{"type":"comm","tid":100,"comm":"worker-3","exec":false,"tsc":2006}',
    '{"type":"comm","tid":100,"comm":"worker-4","exec":false,"tsc":2008}',
    '{"type":"comm","tid":100,"comm":"worker-5","exec":false,"tsc":2010}',
    '{"type":"sideband_lost","cpu":0,"lost":4,"tsc":2200}',
    '{"type":"comm","tid":100,"comm":"main","exec":false,"tsc":2200}',
    '{"type":"thread_end","tid":101,"why":"exit","bytes":114,"segments":3,"tsc":2400}',
    '{"type":"thread_end","tid":100,"why":"capture_end","bytes":70,"segments":2,"tsc":2600}',
    '{"type":"end","tsc":2600,"rounds":3,"aux_records":5,"aux_bytes":184,"truncated":1,"lost_records":4}',
  ];
  expect(fs.readFileSync(path.join(dir, 'pt', 'sideband.jsonl'), 'utf8').split('\n')).toEqual([...expected, '']);
  expect(stats).toMatchObject({ rounds: 3, auxRecords: 5, auxBytes: 184, truncated: 1, lostRecords: 4, threads: 2 });
  // every consumed byte was handed back to the kernel
  expect(cpu0.tailWrites[cpu0.tailWrites.length - 1]).toBe(cpu0.dataHead());
  expect(cpu1.tailWrites[cpu1.tailWrites.length - 1]).toBe(cpu1.dataHead());
});

test('the directory reads through the same sideband reader as an emulated one, and only the header tells them apart', () => {
  const cpu0 = new SimulatedPerfMmap(4096, 256, 0, 1n);
  const core = new PerfCaptureCore({ dir, layout: 'per-cpu', mode: 'full', cpus: 1, sampleType: PT_SAMPLE_TYPE, header: HEADER }, [{ key: 0, view: cpu0 }]);
  cpu0.itraceStart(who(JVM, 10));
  cpu0.comm(who(JVM, 11), 'main');
  cpu0.auxChunk(chunk(1, 100), who(JVM, 20));
  cpu0.switch(who(JVM, 21), true);
  cpu0.forkOrExit('fork', who(JVM, 22), { pid: JVM, ppid: JVM, tid: C2, ptid: JVM });
  cpu0.switch(who(C2, 30), false);
  cpu0.auxChunk(chunk(2, 70), who(C2, 40));
  core.drainRound(100n);
  core.finish(200n);
  const sb = readPtSideband(dir)!;
  expect(sb.source).toBe('perf-intel-pt');
  expect(sb.complete).toBe(true);
  expect(sb.cpus).toEqual([{ cpu: 0, file: 'pt/cpu0.pt', bytes: 170, segments: 2, threads: 2 }]);
  expect(sb.switches).toEqual([
    { cpu: 0, tid: JVM, segment: 0, offset: 0, bytes: 100, tscBegin: 20, tscEnd: 40 },
    { cpu: 0, tid: C2, segment: 0, offset: 100, bytes: 70, tscBegin: 60, tscEnd: 80 },
  ]);
  expect(sb.threads.map((t) => [t.tid, t.comm, t.file, t.bytes, t.ended])).toEqual([
    [JVM, 'main', null, 100, true],
    [C2, '?', null, 70, true],
  ]);
  expect(sb.timing).toEqual({ mtc: true, cyc: false, ctcRatio: 2, mtcFreq: 3, nomFreq: 24 });
  expect(sb.clock).toEqual({ tsc: 900, monoNs: 123456789 });
});

test('per-thread layout: one stream per thread, loss at the stream offset where data is missing', () => {
  const t7 = new SimulatedPerfMmap(1024, 32, 0, 7n);
  const core = new PerfCaptureCore({ dir, layout: 'per-thread', mode: 'full', cpus: 0, sampleType: PT_SAMPLE_TYPE, header: HEADER }, [{ key: 7, view: t7 }]);
  const who7 = { pid: 7, tid: 7, time: 50 };
  t7.itraceStart(who7);
  t7.auxChunk(chunk(1, 20), { ...who7, time: 60 });
  t7.auxChunk(chunk(2, 20), { ...who7, time: 70 }); // 12 fit
  core.drainRound(1000n);
  t7.auxChunk(chunk(3, 25), { ...who7, time: 80 }); // after the release, wraps
  core.drainRound(2000n);
  core.finish(3000n);
  expect(fs.readFileSync(path.join(dir, 'pt', '7.pt'))).toEqual(Buffer.concat([chunk(1, 20), chunk(2, 12), chunk(3, 25)]));
  const lines = fs.readFileSync(path.join(dir, 'pt', 'sideband.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines[0].cpus).toBe(0);
  expect(lines.filter((l) => l.type !== 'header' && l.type !== 'end')).toEqual([
    { type: 'thread_start', tid: 7, file: 'pt/7.pt', comm: '?', tsc: 100 },
    { type: 'loss', tid: 7, offset: 32, lost_bytes: 0, lost_insns: 0, tsc_begin: 140, tsc_end: 160, cause: 'aux-truncated' },
    { type: 'thread_end', tid: 7, why: 'capture_end', bytes: 57, segments: 0, tsc: 3000 },
  ]);
  const sb = readPtSideband(dir)!;
  expect(sb.threads[0]).toMatchObject({ tid: 7, file: 'pt/7.pt', bytes: 57 });
  expect(sb.losses).toEqual([{ tid: 7, offset: 32, lostBytes: 0, lostInsns: 0, tscBegin: 140, tscEnd: 160 }]);
});

test('snapshot (flight-recorder) mode: the AUX area is copied once, oldest byte first, with the stretches still in it', () => {
  const cpu0 = new SimulatedPerfMmap(1024, 64, 0, 3n, true);
  const header = { ...HEADER, tsc: 10n }; // the capture started before everything in it
  const core = new PerfCaptureCore({ dir, layout: 'per-cpu', mode: 'snapshot', cpus: 1, sampleType: PT_SAMPLE_TYPE, header }, [{ key: 0, view: cpu0 }]);
  const X = chunk(1, 40), Y = chunk(2, 50);
  cpu0.itraceStart(who(JVM, 10));
  cpu0.auxChunk(X, who(JVM, 20));
  cpu0.switch(who(C2, 25), false);
  cpu0.auxChunk(Y, who(C2, 30)); // 90 bytes into a 64-byte area: the first 26 are overwritten
  core.drainRound(100n);
  core.finish(200n);
  expect(fs.readFileSync(path.join(dir, 'pt', 'cpu0.pt'))).toEqual(Buffer.concat([X, Y]).subarray(26));
  const lines = fs.readFileSync(path.join(dir, 'pt', 'sideband.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines[0].mode).toBe('snapshot');
  expect(lines.filter((l) => l.type === 'switch' || l.type === 'loss')).toEqual([
    { type: 'loss', tid: JVM, offset: 0, lost_bytes: 0, lost_insns: 0, tsc_begin: 10, tsc_end: 20, cause: 'snapshot-overwritten', cpu: 0 },
    { type: 'switch', cpu: 0, tid: JVM, segment: 0, offset: 0, bytes: 14, tsc_begin: 20, tsc_end: 40, partial: true },
    { type: 'switch', cpu: 0, tid: C2, segment: 0, offset: 14, bytes: 50, tsc_begin: 50, tsc_end: 60 },
  ]);
});
