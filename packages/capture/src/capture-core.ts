/**
 * The part of a perf capture that needs no PMU: turns what the rings hold into the trace directory. Each drain
 * round reads every ring's records and AUX chunks; stream bytes are appended at once (freeing AUX space), the
 * sideband lines are queued and written in time order once no ring can still hold an earlier record (perf's
 * ordered-events rule: everything older than the previous round's start).
 *
 * Per-CPU layout (the default: per-CPU events bound to the JVM with inherit): each PERF_RECORD_AUX covers one
 * stretch of one thread on that CPU (the PT driver ends the AUX transaction whenever the traced task is
 * scheduled out, and at the watermark), its sample_id names the thread, so it becomes a `switch` record:
 * where the stretch lies in pt/cpu<k>.pt, from the switch-in (or ITRACE_START, or the previous chunk) to the
 * record's time. Per-thread layout: each chunk is appended to pt/<tid>.pt.
 */
import { PtDirWriter, SidebandLine } from './pt-dir-writer';
import { AuxFlag, PerfRecord } from './perf-records';
import { AuxAreaReader, DataRingReader, PerfMmapView, snapshotAux } from './ring';
import { tscConverter } from './time-conv';

export type CaptureLayout = 'per-cpu' | 'per-thread';
export type CaptureMode = 'full' | 'snapshot';

/** Header fields of pt/sideband.jsonl that describe the capture (the emulator's keys, plus perf's own). */
export interface PerfCaptureHeader {
  /** bytes between PSBs (2^(psb_period+11)) */
  psbPeriodBytes: number;
  ipFiltering: boolean;
  returnCompression: boolean;
  mtc: boolean;
  cyc: boolean;
  /** TSC ticks per CTC tick (CPUID 0x15 EBX/EAX), 0 when unknown */
  ctcRatio: number;
  /** mtc_period: MTC every 2^mtcFreq CTC ticks */
  mtcFreq: number;
  /** max_nonturbo_ratio */
  nomFreq: number;
  /** TSC and CLOCK_MONOTONIC read together at the start */
  tsc: bigint;
  monoNs: bigint;
  pmuType: number;
  config: bigint;
  /** the address filter given to the kernel, if any */
  filter?: string;
}

export interface PerfCaptureCoreOptions {
  dir: string;
  layout: CaptureLayout;
  mode: CaptureMode;
  /** per-CPU layout: streams cpu0 .. cpu<cpus-1> */
  cpus: number;
  sampleType: bigint;
  header: PerfCaptureHeader;
}

/** One mmap'ed event: key is the CPU (per-CPU layout) or the thread id (per-thread layout). */
export interface RingSource {
  key: number;
  view: PerfMmapView;
}

export interface CaptureStats {
  rounds: number;
  records: number;
  auxRecords: number;
  auxBytes: number;
  truncated: number;
  partial: number;
  collisions: number;
  /** PERF_RECORD_LOST: sideband records the data ring had no room for */
  lostRecords: number;
  threads: number;
  /** snapshot mode: AUX areas that had wrapped (older data overwritten) */
  wrapped: number;
}

interface Pending {
  tsc: bigint;
  seq: number;
  line: SidebandLine | (() => SidebandLine);
}

interface Stretch {
  key: number;
  tid: number;
  start: bigint;
  end: bigint;
  tscBegin: bigint;
  tscEnd: bigint;
}

interface SourceState {
  source: RingSource;
  data: DataRingReader;
  aux: AuxAreaReader;
  /** when the current stretch on this ring began (switch-in, ITRACE_START, previous chunk) */
  stretchBegin?: bigint;
  /** the loss line waiting for the time tracing resumed */
  openLoss?: SidebandLine;
  /** snapshot mode: AUX bytes announced so far, and the stretches they form */
  announced: bigint;
  stretches: Stretch[];
  lastTsc: bigint;
}

const LOSS_FLAGS: [number, string][] = [
  [AuxFlag.TRUNCATED, 'aux-truncated'],
  [AuxFlag.PARTIAL, 'aux-partial'],
  [AuxFlag.COLLISION, 'aux-collision'],
];

export class PerfCaptureCore {
  readonly stats: CaptureStats = { rounds: 0, records: 0, auxRecords: 0, auxBytes: 0, truncated: 0, partial: 0, collisions: 0, lostRecords: 0, threads: 0, wrapped: 0 };
  private readonly writer: PtDirWriter;
  private readonly states: SourceState[];
  private readonly queue: Pending[] = [];
  private seq = 0;
  private previousRound?: bigint;
  private readonly threads = new Map<number, { comm?: string; ended: boolean; bytes: number; segments: number }>();
  /** per thread: when it was last switched out (its context-switch records), until it is switched in again */
  private readonly switchedOut = new Map<number, bigint>();
  private readonly toTsc: (time: bigint) => bigint;
  private finished = false;

  constructor(
    private readonly opts: PerfCaptureCoreOptions,
    sources: RingSource[],
  ) {
    this.writer = new PtDirWriter(opts.dir);
    this.states = sources.map((source) => ({
      source,
      data: new DataRingReader(source.view, opts.sampleType),
      aux: new AuxAreaReader(source.view),
      announced: 0n,
      stretches: [],
      lastTsc: opts.header.tsc,
    }));
    const conv = sources.length ? tscConverter(sources[0].view.timeConv()) : undefined;
    this.timeUnit = conv ? 'tsc' : 'perf-ns';
    this.toTsc = conv ?? ((t) => t);
    const h = opts.header;
    this.writer.line({
      type: 'header',
      format: 'jportal-pt-sideband',
      version: 1,
      source: 'perf-intel-pt',
      psb_period: h.psbPeriodBytes,
      ip_filtering: h.ipFiltering,
      user_only: true,
      return_compression: h.returnCompression,
      loss_buffer: 0,
      loss_rate: 0,
      seed: 0,
      cpus: opts.layout === 'per-cpu' ? opts.cpus : 0,
      mtc: h.mtc,
      cyc: h.cyc,
      ctc_ratio: h.ctcRatio,
      mtc_freq: h.mtcFreq,
      nom_freq: h.nomFreq,
      tsc: h.tsc,
      mono_ns: h.monoNs,
      capture: 'perf',
      mode: opts.mode,
      pmu_type: h.pmuType,
      config: '0x' + h.config.toString(16),
      time_unit: this.timeUnit,
      ...(h.filter ? { filter: h.filter } : {}),
    });
    if (opts.layout === 'per-cpu') for (let k = 0; k < opts.cpus; k++) this.writer.openStream(`cpu${k}.pt`);
  }

  /** 'tsc' when the mmap page converts perf time to TSC (cap_user_time_zero), else raw perf nanoseconds */
  readonly timeUnit: 'tsc' | 'perf-ns';

  /**
   * Drains every ring once. roundTsc: the TSC read just before this round started; sideband lines older than
   * the previous round's start are final and written.
   */
  drainRound(roundTsc: bigint): void {
    if (this.finished) return;
    this.stats.rounds++;
    for (const s of this.states) this.drainSource(s);
    if (this.previousRound !== undefined) this.flush(this.previousRound);
    this.previousRound = roundTsc;
  }

  /** Last round, snapshot copies, thread ends and `end`; closes the files. */
  finish(endTsc: bigint): CaptureStats {
    if (this.finished) return this.stats;
    for (const s of this.states) this.drainSource(s);
    if (this.opts.mode === 'snapshot') for (const s of this.states) this.takeSnapshot(s, endTsc);
    for (const [tid, t] of this.threads) if (!t.ended) this.endThread(tid, 'capture_end', endTsc);
    this.flush(undefined);
    this.writer.line({
      type: 'end',
      tsc: endTsc,
      rounds: this.stats.rounds,
      aux_records: this.stats.auxRecords,
      aux_bytes: this.stats.auxBytes,
      truncated: this.stats.truncated,
      lost_records: this.stats.lostRecords,
    });
    this.writer.close();
    this.finished = true;
    return this.stats;
  }

  private streamName(key: number): string {
    return this.opts.layout === 'per-cpu' ? `cpu${key}.pt` : `${key}.pt`;
  }

  private push(tsc: bigint, line: SidebandLine | (() => SidebandLine)): void {
    this.queue.push({ tsc, seq: this.seq++, line });
  }

  private flush(limit: bigint | undefined): void {
    this.queue.sort((a, b) => (a.tsc < b.tsc ? -1 : a.tsc > b.tsc ? 1 : a.seq - b.seq));
    let n = 0;
    while (n < this.queue.length && (limit === undefined || this.queue[n].tsc < limit)) {
      const p = this.queue[n++];
      this.writer.line(typeof p.line === 'function' ? p.line() : p.line);
    }
    this.queue.splice(0, n);
  }

  private seeThread(tid: number, tsc: bigint): void {
    if (this.threads.has(tid)) return;
    const t = { comm: undefined as string | undefined, ended: false, bytes: 0, segments: 0 };
    this.threads.set(tid, t);
    this.stats.threads++;
    const file = this.opts.layout === 'per-cpu' ? null : `pt/${tid}.pt`;
    if (file) this.writer.openStream(`${tid}.pt`);
    // the name is resolved when the line is written: COMM records may come a little later (prctl renames)
    this.push(tsc, () => ({ type: 'thread_start', tid, file, comm: t.comm ?? '?', tsc }));
  }

  private endThread(tid: number, why: string, tsc: bigint): void {
    const t = this.threads.get(tid);
    if (!t || t.ended) return;
    t.ended = true;
    this.push(tsc, () => ({ type: 'thread_end', tid, why, bytes: t.bytes, segments: t.segments, tsc }));
  }

  private resume(s: SourceState, tsc: bigint): void {
    s.stretchBegin = tsc;
    if (s.openLoss) {
      s.openLoss.tsc_end = tsc;
      s.openLoss = undefined;
    }
  }

  private drainSource(s: SourceState): void {
    const records = s.data.drain();
    for (const r of records) this.visit(s, r);
    if (this.opts.mode === 'full') s.aux.release();
  }

  private tscOf(s: SourceState, r: PerfRecord): bigint {
    const time = 'sample' in r ? r.sample.time : undefined;
    if (time !== undefined) s.lastTsc = this.toTsc(time);
    return s.lastTsc;
  }

  private visit(s: SourceState, r: PerfRecord): void {
    this.stats.records++;
    const tsc = this.tscOf(s, r);
    switch (r.kind) {
      case 'itrace_start':
        this.seeThread(r.tid, tsc);
        this.resume(s, tsc);
        break;
      case 'fork':
        this.seeThread(r.tid, this.toTsc(r.time));
        break;
      case 'comm': {
        this.seeThread(r.tid, tsc);
        const t = this.threads.get(r.tid)!;
        const renamed = t.comm !== undefined && t.comm !== r.comm;
        t.comm = r.comm;
        if (renamed) this.push(tsc, { type: 'comm', tid: r.tid, comm: r.comm, exec: r.exec, tsc });
        break;
      }
      case 'exit':
        this.endThread(r.tid, 'exit', this.toTsc(r.time));
        break;
      case 'switch':
      case 'switch_cpu_wide': {
        // the thread's time off the CPU, from its switch-out to its switch-in: an `offcpu` line (recovery leaves it
        // out of a gap's time). The sample_id is the task switching (out, or in); an in seen before its out (the two
        // CPUs' rings drained in either order within a round) gives nothing.
        const tid = this.opts.layout === 'per-thread' ? s.source.key : r.sample.tid;
        if (tid !== undefined) {
          const since = this.switchedOut.get(tid);
          if (r.out) this.switchedOut.set(tid, tsc);
          else if (since !== undefined) {
            this.switchedOut.delete(tid);
            if (tsc > since) this.push(tsc, { type: 'offcpu', tid, tsc_begin: since, tsc_end: tsc, ticks: tsc - since });
          }
        }
        if (!r.out) this.resume(s, tsc);
        break;
      }
      case 'lost':
        this.stats.lostRecords += Number(r.lost);
        this.push(tsc, { type: 'sideband_lost', [this.opts.layout === 'per-cpu' ? 'cpu' : 'tid']: s.source.key, lost: r.lost, tsc });
        break;
      case 'aux':
        this.visitAux(s, r, tsc);
        break;
      default:
        break;
    }
  }

  private visitAux(s: SourceState, r: Extract<PerfRecord, { kind: 'aux' }>, tsc: bigint): void {
    this.stats.auxRecords++;
    const key = s.source.key;
    const tid = this.opts.layout === 'per-thread' ? key : (r.sample.tid ?? -1);
    this.seeThread(tid, s.stretchBegin ?? tsc);
    const t = this.threads.get(tid)!;
    const begin = s.stretchBegin ?? tsc;
    const file = this.streamName(key);
    if (this.opts.mode === 'snapshot') {
      s.stretches.push({ key, tid, start: s.announced, end: s.announced + r.auxSize, tscBegin: begin, tscEnd: tsc });
      s.announced += r.auxSize;
      this.resume(s, tsc);
      return;
    }
    const bytes = s.aux.take(r.auxOffset, r.auxSize);
    const at = this.writer.append(file, bytes);
    this.stats.auxBytes += bytes.length;
    t.bytes += bytes.length;
    if (bytes.length && this.opts.layout === 'per-cpu') {
      const segment = t.segments++;
      this.push(begin, { type: 'switch', cpu: key, tid, segment, offset: at, bytes: bytes.length, tsc_begin: begin, tsc_end: tsc });
    }
    this.resume(s, tsc);
    for (const [flag, cause] of LOSS_FLAGS) {
      if (!(r.flags & flag)) continue;
      if (flag === AuxFlag.TRUNCATED) this.stats.truncated++;
      if (flag === AuxFlag.PARTIAL) this.stats.partial++;
      if (flag === AuxFlag.COLLISION) this.stats.collisions++;
      // what was lost is unknown to perf: 0 bytes/instructions here means "not measured"; tsc_end is set when
      // tracing resumes on this ring
      const loss: SidebandLine = { type: 'loss', tid, offset: at + bytes.length, lost_bytes: 0, lost_insns: 0, tsc_begin: tsc, tsc_end: tsc, cause };
      if (this.opts.layout === 'per-cpu') loss.cpu = key;
      this.push(tsc, loss);
      if (flag === AuxFlag.TRUNCATED) s.openLoss = loss;
    }
  }

  private takeSnapshot(s: SourceState, endTsc: bigint): void {
    const { view, key } = s.source;
    const snap = snapshotAux(view);
    if (snap.wrapped) this.stats.wrapped++;
    const file = this.streamName(key);
    const at = this.writer.append(file, snap.bytes);
    this.stats.auxBytes += snap.bytes.length;
    const windowEnd = s.announced;
    const windowStart = windowEnd - BigInt(snap.bytes.length);
    const consistent = windowEnd % BigInt(view.auxSize) === view.auxHead() % BigInt(view.auxSize) && windowStart >= 0n;
    if (snap.wrapped) {
      const tid = this.opts.layout === 'per-thread' ? key : (s.stretches.find((x) => x.end > windowStart)?.tid ?? -1);
      const loss: SidebandLine = { type: 'loss', tid, offset: at, lost_bytes: 0, lost_insns: 0, tsc_begin: this.opts.header.tsc, tsc_end: s.stretches.find((x) => x.end > windowStart)?.tscBegin ?? endTsc, cause: 'snapshot-overwritten' };
      if (this.opts.layout === 'per-cpu') loss.cpu = key;
      this.push(this.opts.header.tsc, loss);
    }
    for (const x of s.stretches) {
      if (x.end <= windowStart) continue;
      const from = x.start > windowStart ? x.start : windowStart;
      const t = this.threads.get(x.tid);
      if (!t) continue;
      t.bytes += Number(x.end - from);
      if (this.opts.layout !== 'per-cpu' || !consistent || x.end === from) continue;
      const segment = t.segments++;
      const line: SidebandLine = { type: 'switch', cpu: key, tid: x.tid, segment, offset: at + Number(from - windowStart), bytes: Number(x.end - from), tsc_begin: x.tscBegin, tsc_end: x.tscEnd };
      if (from !== x.start) line.partial = true;
      this.push(x.tscBegin, line);
    }
  }
}
