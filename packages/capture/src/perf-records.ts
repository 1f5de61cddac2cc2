/**
 * PERF_RECORD_* records of the data ring (include/uapi/linux/perf_event.h), with the sample_id_all trailer
 * whose fields follow the event's sample_type: { pid, tid } if TID, { time } if TIME, { id } if ID,
 * { stream_id } if STREAM_ID, { cpu, res } if CPU, { id } if IDENTIFIER.
 */
import { Sample } from './attr';
import { PerfProtocolError } from './errors';

export const RecordType = {
  MMAP: 1,
  LOST: 2,
  COMM: 3,
  EXIT: 4,
  THROTTLE: 5,
  UNTHROTTLE: 6,
  FORK: 7,
  READ: 8,
  SAMPLE: 9,
  MMAP2: 10,
  AUX: 11,
  ITRACE_START: 12,
  LOST_SAMPLES: 13,
  SWITCH: 14,
  SWITCH_CPU_WIDE: 15,
} as const;

export const PERF_RECORD_MISC_SWITCH_OUT = 1 << 13;
export const PERF_RECORD_MISC_SWITCH_OUT_PREEMPT = 1 << 14;
export const PERF_RECORD_MISC_COMM_EXEC = 1 << 13;

/** PERF_RECORD_AUX flags */
export const AuxFlag = { TRUNCATED: 0x01, OVERWRITE: 0x02, PARTIAL: 0x04, COLLISION: 0x08 } as const;

export const RECORD_HEADER_SIZE = 8;

export interface SampleId {
  pid?: number;
  tid?: number;
  /** perf clock (ns) */
  time?: bigint;
  id?: bigint;
  streamId?: bigint;
  cpu?: number;
}

export type PerfRecord =
  | { kind: 'aux'; auxOffset: bigint; auxSize: bigint; flags: number; sample: SampleId }
  | { kind: 'lost'; id: bigint; lost: bigint; sample: SampleId }
  | { kind: 'itrace_start'; pid: number; tid: number; sample: SampleId }
  | { kind: 'switch'; out: boolean; preempt: boolean; sample: SampleId }
  | { kind: 'switch_cpu_wide'; out: boolean; preempt: boolean; nextPrevPid: number; nextPrevTid: number; sample: SampleId }
  | { kind: 'comm'; pid: number; tid: number; comm: string; exec: boolean; sample: SampleId }
  | { kind: 'fork' | 'exit'; pid: number; ppid: number; tid: number; ptid: number; time: bigint; sample: SampleId }
  | { kind: 'lost_samples'; lost: bigint; sample: SampleId }
  | { kind: 'other'; type: number; misc: number; size: number };

/** Bytes of the sample_id_all trailer for a sample_type. */
export function sampleIdSize(sampleType: bigint): number {
  let n = 0;
  if (sampleType & Sample.TID) n += 8;
  if (sampleType & Sample.TIME) n += 8;
  if (sampleType & Sample.ID) n += 8;
  if (sampleType & Sample.STREAM_ID) n += 8;
  if (sampleType & Sample.CPU) n += 8;
  if (sampleType & Sample.IDENTIFIER) n += 8;
  return n;
}

/** Reads the trailer that ends at `end` (the record's end). */
export function parseSampleId(b: Buffer, end: number, sampleType: bigint): SampleId {
  let at = end - sampleIdSize(sampleType);
  const s: SampleId = {};
  if (sampleType & Sample.TID) {
    s.pid = b.readUInt32LE(at);
    s.tid = b.readUInt32LE(at + 4);
    at += 8;
  }
  if (sampleType & Sample.TIME) {
    s.time = b.readBigUInt64LE(at);
    at += 8;
  }
  if (sampleType & Sample.ID) {
    s.id = b.readBigUInt64LE(at);
    at += 8;
  }
  if (sampleType & Sample.STREAM_ID) {
    s.streamId = b.readBigUInt64LE(at);
    at += 8;
  }
  if (sampleType & Sample.CPU) {
    s.cpu = b.readUInt32LE(at);
    at += 8;
  }
  if (sampleType & Sample.IDENTIFIER) s.id = b.readBigUInt64LE(at);
  return s;
}

/** Parses one whole record (header included) of an event whose attr had sample_id_all and `sampleType`. */
export function parseRecord(b: Buffer, sampleType: bigint): PerfRecord {
  if (b.length < RECORD_HEADER_SIZE) throw new PerfProtocolError(`perf record shorter than its header (${b.length} bytes)`);
  const type = b.readUInt32LE(0);
  const misc = b.readUInt16LE(4);
  const size = b.readUInt16LE(6);
  if (size !== b.length) throw new PerfProtocolError(`perf record of type ${type}: size ${size} but ${b.length} bytes given`);
  const trailer = sampleIdSize(sampleType);
  const need = (body: number) => {
    if (size < RECORD_HEADER_SIZE + body + trailer)
      throw new PerfProtocolError(`perf record of type ${type}: ${size} bytes, needs ${RECORD_HEADER_SIZE + body + trailer}`);
  };
  const sample = () => parseSampleId(b, size, sampleType);
  switch (type) {
    case RecordType.AUX:
      need(24);
      return { kind: 'aux', auxOffset: b.readBigUInt64LE(8), auxSize: b.readBigUInt64LE(16), flags: Number(b.readBigUInt64LE(24)), sample: sample() };
    case RecordType.LOST:
      need(16);
      return { kind: 'lost', id: b.readBigUInt64LE(8), lost: b.readBigUInt64LE(16), sample: sample() };
    case RecordType.ITRACE_START:
      need(8);
      return { kind: 'itrace_start', pid: b.readUInt32LE(8), tid: b.readUInt32LE(12), sample: sample() };
    case RecordType.SWITCH:
      need(0);
      return { kind: 'switch', out: !!(misc & PERF_RECORD_MISC_SWITCH_OUT), preempt: !!(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), sample: sample() };
    case RecordType.SWITCH_CPU_WIDE:
      need(8);
      return {
        kind: 'switch_cpu_wide',
        out: !!(misc & PERF_RECORD_MISC_SWITCH_OUT),
        preempt: !!(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT),
        nextPrevPid: b.readUInt32LE(8),
        nextPrevTid: b.readUInt32LE(12),
        sample: sample(),
      };
    case RecordType.COMM: {
      need(8);
      const end = size - trailer;
      const nul = b.indexOf(0, 16);
      const comm = b.toString('utf8', 16, nul >= 16 && nul < end ? nul : end);
      return { kind: 'comm', pid: b.readUInt32LE(8), tid: b.readUInt32LE(12), comm, exec: !!(misc & PERF_RECORD_MISC_COMM_EXEC), sample: sample() };
    }
    case RecordType.FORK:
    case RecordType.EXIT:
      need(24);
      return {
        kind: type === RecordType.FORK ? 'fork' : 'exit',
        pid: b.readUInt32LE(8),
        ppid: b.readUInt32LE(12),
        tid: b.readUInt32LE(16),
        ptid: b.readUInt32LE(20),
        time: b.readBigUInt64LE(24),
        sample: sample(),
      };
    case RecordType.LOST_SAMPLES:
      need(8);
      return { kind: 'lost_samples', lost: b.readBigUInt64LE(8), sample: sample() };
    default:
      return { kind: 'other', type, misc, size };
  }
}
