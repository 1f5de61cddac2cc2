/**
 * The PT side of a trace directory (docs/trace-format.md §6): TRACE_DIR/pt/<tid>.pt packet streams and
 * TRACE_DIR/pt/sideband.jsonl (one JSON object per line: header, filter ranges, thread starts and ends).
 */
import * as fs from 'fs';
import * as path from 'path';
import { TraceFormatError } from './errors';

export interface PtThread {
  tid: number;
  /** The thread's own stream; null in per-CPU mode (its stretches are in the CPU streams). */
  file: string | null;
  comm: string;
  bytes: number;
  insns?: number;
  faults?: number;
  /** Loss model: instructions whose packets were dropped, and the bytes dropped. */
  lostInsns?: number;
  lostBytes?: number;
  packets: Record<string, number>;
  ended: boolean;
}

export interface PtSideband {
  source: string;
  version: number;
  psbPeriod: number;
  returnCompression: boolean;
  ranges: { lo: number; hi: number }[];
  threads: PtThread[];
  /** Stretches of lost data, per thread, as the capture marked them. */
  losses: { tid: number; offset: number; lostBytes: number; lostInsns: number; tscBegin: number; tscEnd: number }[];
  lossModel?: { buffer: number; rate: number; seed: number };
  /** Timing packets and the clock ratios a decoder needs to turn MTC/CYC into TSC (CPUID 0x15, nominal ratio). */
  timing: { mtc: boolean; cyc: boolean; ctcRatio: number; mtcFreq: number; nomFreq: number };
  /** TSC and CLOCK_MONOTONIC read together when the capture started (relates PT time to the agent's clock). */
  clock?: { tsc: number; monoNs: number };
  /** Per-CPU mode: one stream per emulated CPU, and the stretches (switch records) each carries. */
  cpus: { cpu: number; file: string; bytes: number; segments: number; threads: number }[];
  switches: { cpu: number; tid: number; segment: number; offset: number; bytes: number; tscBegin: number; tscEnd: number }[];
  /**
   * Time threads spent off the CPU (preempted or blocked), as the capture saw it: `ticks` of TSC within
   * [tscBegin, tscEnd) (the emulator samples the thread's CPU clock against the wall clock; perf's context-switch
   * records say the same exactly).
   */
  offCpu: { tid: number; tscBegin: number; tscEnd: number; ticks: number }[];
  complete: boolean;
}

const PACKET_FIELDS = ['psb', 'tnt', 'tip', 'pge', 'pgd', 'fup', 'ovf'];

/** Reads TRACE_DIR/pt/sideband.jsonl; undefined when the directory has no PT data. */
export function readPtSideband(dir: string): PtSideband | undefined {
  const file = path.join(dir, 'pt', 'sideband.jsonl');
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  const sb: PtSideband = { source: '?', version: 0, psbPeriod: 0, returnCompression: false, ranges: [],
    timing: { mtc: false, cyc: false, ctcRatio: 0, mtcFreq: 0, nomFreq: 0 }, threads: [], losses: [], cpus: [], switches: [], offCpu: [], complete: false };
  const byTid = new Map<number, PtThread>();
  let offset = 0;
  for (const line of text.split('\n')) {
    const at = offset;
    offset += Buffer.byteLength(line, 'utf8') + 1;
    if (!line.trim()) continue;
    let e: any;
    try {
      e = JSON.parse(line);
    } catch {
      // a run cut short may leave a partial last line: everything before it stays usable
      if (offset >= text.length) break;
      throw new TraceFormatError('bad-header', file, at, 'sideband line is not JSON');
    }
    switch (e.type) {
      case 'header':
        if (e.format !== 'jportal-pt-sideband' || e.version !== 1)
          throw new TraceFormatError('unsupported-version', file, at, `sideband ${e.format} version ${e.version} is not supported`);
        sb.source = e.source;
        sb.version = e.version;
        sb.psbPeriod = e.psb_period;
        sb.returnCompression = !!e.return_compression;
        sb.timing = { mtc: !!e.mtc, cyc: !!e.cyc, ctcRatio: Number(e.ctc_ratio) || 0, mtcFreq: Number(e.mtc_freq) || 0, nomFreq: Number(e.nom_freq) || 0 };
        if (typeof e.tsc === 'number' && typeof e.mono_ns === 'number') sb.clock = { tsc: e.tsc, monoNs: e.mono_ns };
        if (e.loss_buffer > 0) sb.lossModel = { buffer: e.loss_buffer, rate: e.loss_rate, seed: e.seed };
        for (let k = 0; k < (e.cpus ?? 0); k++) sb.cpus.push({ cpu: k, file: `pt/cpu${k}.pt`, bytes: 0, segments: 0, threads: 0 });
        break;
      case 'switch':
        sb.switches.push({ cpu: e.cpu, tid: e.tid, segment: e.segment, offset: e.offset, bytes: e.bytes, tscBegin: e.tsc_begin, tscEnd: e.tsc_end });
        break;
      case 'offcpu':
        if (e.ticks > 0 && e.tsc_end >= e.tsc_begin) sb.offCpu.push({ tid: e.tid, tscBegin: e.tsc_begin, tscEnd: e.tsc_end, ticks: Math.min(e.ticks, e.tsc_end - e.tsc_begin) });
        break;
      case 'loss':
        sb.losses.push({ tid: e.tid, offset: e.offset, lostBytes: e.lost_bytes, lostInsns: e.lost_insns, tscBegin: e.tsc_begin, tscEnd: e.tsc_end });
        break;
      case 'filter_range':
        sb.ranges.push({ lo: e.lo, hi: e.hi });
        break;
      case 'thread_start': {
        const t: PtThread = { tid: e.tid, file: e.file, comm: e.comm, bytes: 0, packets: {}, ended: false };
        byTid.set(e.tid, t);
        sb.threads.push(t);
        break;
      }
      case 'thread_end': {
        const t = byTid.get(e.tid);
        if (!t) break;
        t.ended = true;
        t.insns = e.insns;
        t.faults = e.faults;
        t.lostInsns = e.lost_insns;
        t.lostBytes = e.lost_bytes;
        for (const k of PACKET_FIELDS) if (typeof e[k] === 'number') t.packets[k] = e[k];
        break;
      }
      case 'end':
        sb.complete = true;
        break;
    }
  }
  for (const t of sb.threads) {
    const f = t.file ? path.join(dir, t.file) : undefined;
    t.bytes = f && fs.existsSync(f) ? fs.statSync(f).size : sb.switches.filter((w) => w.tid === t.tid).reduce((a, w) => a + w.bytes, 0);
  }
  for (const c of sb.cpus) {
    const f = path.join(dir, c.file);
    c.bytes = fs.existsSync(f) ? fs.statSync(f).size : 0;
    const mine = sb.switches.filter((w) => w.cpu === c.cpu);
    c.segments = mine.length;
    c.threads = new Set(mine.map((w) => w.tid)).size;
  }
  return sb;
}
