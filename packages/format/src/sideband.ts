/**
 * The PT side of a trace directory (docs/trace-format.md §6): TRACE_DIR/pt/<tid>.pt packet streams and
 * TRACE_DIR/pt/sideband.jsonl (one JSON object per line: header, filter ranges, thread starts and ends).
 */
import * as fs from 'fs';
import * as path from 'path';
import { TraceFormatError } from './errors';

export interface PtThread {
  tid: number;
  file: string;
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
  complete: boolean;
}

const PACKET_FIELDS = ['psb', 'tnt', 'tip', 'pge', 'pgd', 'fup', 'ovf'];

/** Reads TRACE_DIR/pt/sideband.jsonl; undefined when the directory has no PT data. */
export function readPtSideband(dir: string): PtSideband | undefined {
  const file = path.join(dir, 'pt', 'sideband.jsonl');
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  const sb: PtSideband = { source: '?', version: 0, psbPeriod: 0, returnCompression: false, ranges: [], threads: [], losses: [], complete: false };
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
        if (e.loss_buffer > 0) sb.lossModel = { buffer: e.loss_buffer, rate: e.loss_rate, seed: e.seed };
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
    const f = path.join(dir, t.file);
    t.bytes = fs.existsSync(f) ? fs.statSync(f).size : 0;
  }
  return sb;
}
