/**
 * Timelines per thread with method frames and gaps:
 * - `timeline.trace.json`: Chrome Trace Event Format (JSON object form), one "X" (complete) event per frame and
 *   per gap on pid 1 / tid = the thread's tid, thread names as "M" events; opens in Perfetto and chrome://tracing.
 * - `timeline.speedscope.json`: speedscope's file format, one "evented" profile per thread (O/C events over
 *   shared frames).
 * Both are written in chunks (millions of frames), at most `maxEvents` frames (the shortest go first). Formats
 * and limits: docs/timeline.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Profiled, AnalysisMethod, methodLabel, PartResult } from './model';
import { gapName, SliceKind, SliceOptions, SliceSet, sliceAnalysis } from './timeslices';

export interface TimelineOptions {
  /** frames shorter than this (ns; events when the analysis has no time) are left out (default 0) */
  minDurationNs?: number;
  /** at most this many frames over all threads (default 2,000,000); gaps: at most a quarter of it */
  maxEvents?: number;
}

/** Appends text to a file in chunks of about 1 MB. */
export class ChunkWriter {
  private readonly fd: number;
  private parts: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(file: string) {
    this.fd = fs.openSync(file, 'w');
  }
  write(s: string): void {
    this.parts.push(s);
    this.size += s.length;
    if (this.size >= 1 << 20) this.flush();
  }
  flush(): void {
    if (!this.parts.length) return;
    const b = Buffer.from(this.parts.join(''), 'utf8');
    fs.writeSync(this.fd, b);
    this.bytes += b.length;
    this.parts = [];
    this.size = 0;
  }
  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
}

const methodName = (methods: AnalysisMethod[], m: number): string => (m >= 0 && m < methods.length ? methodLabel(methods[m]) : '[unknown]');

/** Unique Chrome/speedscope thread ids: the OS tid, or a made-up one (100000 + index) when unknown or repeated. */
export function threadIds(a: Profiled): number[] {
  const seen = new Set<number>();
  return a.threads.map((t, k) => {
    const id = t.tid >= 0 && !seen.has(t.tid) ? t.tid : 100000 + k;
    seen.add(id);
    return id;
  });
}

/** What the timeline files say about how they were made. */
function timelineMetadata(a: Profiled, set: SliceSet, opts: TimelineOptions) {
  const timed = set.clock.kind === 'tsc-ns';
  return {
    generator: 'jportal analyze',
    source: a.source,
    clock: timed
      ? `TSC in ns from ${a.startTsc === set.clock.t0Tsc ? 'the capture\'s start' : 'the first event'} (TSC ${set.clock.t0Tsc}, ${set.clock.tscPerNs} ticks/ns); Chrome ts in µs`
      : 'event index: the analysis has no time (ground truth); 1 µs in the Chrome trace = 1 event of the thread, threads are not aligned in time',
    frames: set.frames,
    framesWritten: set.framesKept,
    gaps: set.gaps,
    gapsWritten: set.gapsKept,
    minDuration: set.threshold,
    cut:
      set.framesKept < set.frames || set.gapsKept < set.gaps
        ? `${set.frames - set.framesKept} frames shorter than ${set.threshold} ${timed ? 'ns' : 'events'} (or beyond maxEvents ${opts.maxEvents ?? 2_000_000}) and ${set.gaps - set.gapsKept} gaps left out`
        : 'nothing',
  };
}

function writeChrome(file: string, a: Profiled, set: SliceSet, tids: number[], meta: object): number {
  const w = new ChunkWriter(file);
  const scale = set.clock.kind === 'tsc-ns' ? 1 / 1000 : 1;
  const names = a.methods.map((m) => JSON.stringify(methodLabel(m)));
  const unknown = JSON.stringify('[unknown]');
  let events = 0;
  w.write('{"displayTimeUnit":"ns","traceEvents":[\n');
  w.write(`{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":${JSON.stringify(`jportal ${a.source.kind} ${a.source.dir}`)}}}`);
  set.threads.forEach((ts, k) => {
    const tid = tids[k];
    w.write(`,\n{"name":"thread_name","ph":"M","pid":1,"tid":${tid},"args":{"name":${JSON.stringify(ts.thread.name)}}}`);
    w.write(`,\n{"name":"thread_sort_index","ph":"M","pid":1,"tid":${tid},"args":{"sort_index":${k}}}`);
    const s = ts.slices;
    const head = `,"pid":1,"tid":${tid}}`;
    for (let i = 0; i < s.count; i++) {
      const ts0 = s.start[i] * scale;
      const dur = (s.end[i] - s.start[i]) * scale;
      if (s.kind[i] === SliceKind.Gap)
        w.write(`,\n{"name":"${gapName(s.id[i])}","cat":"gap","ph":"X","ts":${ts0},"dur":${dur},"args":{"reason":${s.id[i]}}${head}`);
      else {
        const m = s.id[i];
        w.write(`,\n{"name":${m >= 0 && m < names.length ? names[m] : unknown},"cat":"frame","ph":"X","ts":${ts0},"dur":${dur}${head}`);
      }
      events++;
    }
  });
  w.write(`\n],"metadata":${JSON.stringify(meta)}}\n`);
  w.close();
  return events;
}

function writeSpeedscope(file: string, a: Profiled, set: SliceSet, tids: number[], meta: object): void {
  const w = new ChunkWriter(file);
  // shared frames: methods in use, then one per gap reason in use
  const frameOfMethod = new Map<number, number>();
  const frameOfGap = new Map<number, number>();
  const frames: { name: string; file?: string }[] = [];
  for (const ts of set.threads) {
    const s = ts.slices;
    for (let i = 0; i < s.count; i++) {
      const id = s.id[i];
      const map = s.kind[i] === SliceKind.Gap ? frameOfGap : frameOfMethod;
      if (map.has(id)) continue;
      map.set(id, frames.length);
      if (s.kind[i] === SliceKind.Gap) frames.push({ name: gapName(id) });
      else {
        const m = id >= 0 ? a.methods[id] : undefined;
        const src = m?.classFile?.sourceFile;
        frames.push(src ? { name: methodName(a.methods, id), file: src } : { name: methodName(a.methods, id) });
      }
    }
  }
  const unit = set.clock.kind === 'tsc-ns' ? 'nanoseconds' : 'none';
  w.write(`{"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"jportal analyze","name":${JSON.stringify(`jportal ${a.source.dir}`)},"activeProfileIndex":0,`);
  w.write(`"shared":{"frames":${JSON.stringify(frames)}},"profiles":[`);
  // the open slices of the current thread
  let stackPost = new Float64Array(64);
  let stackFrame = new Int32Array(64);
  let stackEnd = new Float64Array(64);
  set.threads.forEach((ts, k) => {
    const s = ts.slices;
    const first = s.count ? s.start[0] : 0;
    w.write(`${k ? ',' : ''}\n{"type":"evented","name":${JSON.stringify(`${ts.thread.name} (tid ${tids[k]})`)},"unit":"${unit}","startValue":${first},"endValue":${Math.max(first, ts.endTime)},"events":[`);
    let top = -1;
    let sep = '';
    const close = () => {
      w.write(`${sep}{"type":"C","frame":${stackFrame[top]},"at":${stackEnd[top]}}`);
      sep = ',';
      top--;
    };
    for (let i = 0; i < s.count; i++) {
      while (top >= 0 && !(s.pre[i] < stackPost[top])) close();
      const f = (s.kind[i] === SliceKind.Gap ? frameOfGap : frameOfMethod).get(s.id[i])!;
      w.write(`${sep}{"type":"O","frame":${f},"at":${s.start[i]}}`);
      sep = ',';
      if (++top === stackPost.length) {
        const grow = <T extends Float64Array | Int32Array>(x: T, make: (n: number) => T): T => {
          const y = make(x.length * 2);
          y.set(x as never);
          return y;
        };
        stackPost = grow(stackPost, (n) => new Float64Array(n));
        stackFrame = grow(stackFrame, (n) => new Int32Array(n));
        stackEnd = grow(stackEnd, (n) => new Float64Array(n));
      }
      stackPost[top] = s.post[i];
      stackFrame[top] = f;
      stackEnd[top] = s.end[i];
    }
    while (top >= 0) close();
    w.write(']}');
  });
  w.write(`\n],"metadata":${JSON.stringify(meta)}}\n`);
  w.close();
}

/** The slicing writeTimeline asks for (for slicePasses when the slices are made by a shared walk). */
export function timelineSliceOptions(opts: TimelineOptions = {}): SliceOptions {
  return { minDuration: opts.minDurationNs ?? 0, maxFrames: opts.maxEvents ?? 2_000_000 };
}

/** Writes timeline.trace.json (Chrome) and timeline.speedscope.json into outDir. */
export function writeTimeline(a: Profiled, outDir: string, opts: TimelineOptions = {}, built?: SliceSet): PartResult {
  fs.mkdirSync(outDir, { recursive: true });
  const set = built ?? sliceAnalysis(a, timelineSliceOptions(opts));
  const tids = threadIds(a);
  const meta = timelineMetadata(a, set, opts);
  const chrome = 'timeline.trace.json';
  const speedscope = 'timeline.speedscope.json';
  const events = writeChrome(path.join(outDir, chrome), a, set, tids, meta);
  writeSpeedscope(path.join(outDir, speedscope), a, set, tids, meta);
  return {
    files: [chrome, speedscope],
    summary: {
      clock: set.clock.kind,
      threads: a.threads.length,
      frames: set.frames,
      framesWritten: set.framesKept,
      gaps: set.gaps,
      gapsWritten: set.gapsKept,
      minDuration: set.threshold,
      chromeEvents: events,
      chromeBytes: fs.statSync(path.join(outDir, chrome)).size,
      speedscopeBytes: fs.statSync(path.join(outDir, speedscope)).size,
    },
  };
}
