/**
 * struct perf_event_attr (include/uapi/linux/perf_event.h) as bytes: the addon passes the Buffer to
 * perf_event_open unchanged. Size PERF_ATTR_SIZE_VER8 (136 bytes, through config3); the kernel accepts a larger
 * struct than it knows as long as the unknown tail is zero.
 */
import type { PtConfig } from './pt-config';
import type { PtPmu } from './pmu';

export const PERF_ATTR_SIZE_VER8 = 136;

export const PerfType = { HARDWARE: 0, SOFTWARE: 1, TRACEPOINT: 2, HW_CACHE: 3, RAW: 4, BREAKPOINT: 5 } as const;
export const PERF_COUNT_SW_DUMMY = 9;

/** perf_event_sample_format bits */
export const Sample = {
  IP: 1n << 0n,
  TID: 1n << 1n,
  TIME: 1n << 2n,
  ADDR: 1n << 3n,
  READ: 1n << 4n,
  CALLCHAIN: 1n << 5n,
  ID: 1n << 6n,
  CPU: 1n << 7n,
  PERIOD: 1n << 8n,
  STREAM_ID: 1n << 9n,
  RAW: 1n << 10n,
  IDENTIFIER: 1n << 16n,
} as const;

export const ReadFormat = { TOTAL_TIME_ENABLED: 1n, TOTAL_TIME_RUNNING: 2n, ID: 4n, GROUP: 8n, LOST: 16n } as const;

/** The single-bit flags of the bitfield word at offset 40, by bit number (precise_ip, 2 bits at 15, is separate). */
export const ATTR_FLAG_BITS = {
  disabled: 0,
  inherit: 1,
  pinned: 2,
  exclusive: 3,
  exclude_user: 4,
  exclude_kernel: 5,
  exclude_hv: 6,
  exclude_idle: 7,
  mmap: 8,
  comm: 9,
  freq: 10,
  inherit_stat: 11,
  enable_on_exec: 12,
  task: 13,
  watermark: 14,
  mmap_data: 17,
  sample_id_all: 18,
  exclude_host: 19,
  exclude_guest: 20,
  exclude_callchain_kernel: 21,
  exclude_callchain_user: 22,
  mmap2: 23,
  comm_exec: 24,
  use_clockid: 25,
  context_switch: 26,
  write_backward: 27,
  namespaces: 28,
  ksymbol: 29,
  bpf_event: 30,
  aux_output: 31,
  cgroup: 32,
  text_poke: 33,
  build_id: 34,
  inherit_thread: 35,
  remove_on_exec: 36,
  sigtrap: 37,
} as const;
export type AttrFlag = keyof typeof ATTR_FLAG_BITS;

export interface PerfEventAttr {
  type: number;
  size: number;
  config: bigint;
  /** sample_period or sample_freq (with the freq flag) */
  samplePeriod: bigint;
  sampleType: bigint;
  readFormat: bigint;
  flags: Partial<Record<AttrFlag, boolean>>;
  preciseIp: number;
  /** wakeup_events, or wakeup_watermark (bytes) with the watermark flag */
  wakeup: number;
  bpType: number;
  config1: bigint;
  config2: bigint;
  branchSampleType: bigint;
  sampleRegsUser: bigint;
  sampleStackUser: number;
  clockid: number;
  sampleRegsIntr: bigint;
  auxWatermark: number;
  sampleMaxStack: number;
  auxSampleSize: number;
  sigData: bigint;
  config3: bigint;
}

export function emptyAttr(): PerfEventAttr {
  return {
    type: 0,
    size: PERF_ATTR_SIZE_VER8,
    config: 0n,
    samplePeriod: 0n,
    sampleType: 0n,
    readFormat: 0n,
    flags: {},
    preciseIp: 0,
    wakeup: 0,
    bpType: 0,
    config1: 0n,
    config2: 0n,
    branchSampleType: 0n,
    sampleRegsUser: 0n,
    sampleStackUser: 0,
    clockid: 0,
    sampleRegsIntr: 0n,
    auxWatermark: 0,
    sampleMaxStack: 0,
    auxSampleSize: 0,
    sigData: 0n,
    config3: 0n,
  };
}

export function serializeAttr(a: PerfEventAttr): Buffer {
  const b = Buffer.alloc(PERF_ATTR_SIZE_VER8);
  b.writeUInt32LE(a.type, 0);
  b.writeUInt32LE(PERF_ATTR_SIZE_VER8, 4);
  b.writeBigUInt64LE(a.config, 8);
  b.writeBigUInt64LE(a.samplePeriod, 16);
  b.writeBigUInt64LE(a.sampleType, 24);
  b.writeBigUInt64LE(a.readFormat, 32);
  let bits = 0n;
  for (const [name, on] of Object.entries(a.flags)) if (on) bits |= 1n << BigInt(ATTR_FLAG_BITS[name as AttrFlag]);
  bits |= BigInt(a.preciseIp & 3) << 15n;
  b.writeBigUInt64LE(bits, 40);
  b.writeUInt32LE(a.wakeup, 48);
  b.writeUInt32LE(a.bpType, 52);
  b.writeBigUInt64LE(a.config1, 56);
  b.writeBigUInt64LE(a.config2, 64);
  b.writeBigUInt64LE(a.branchSampleType, 72);
  b.writeBigUInt64LE(a.sampleRegsUser, 80);
  b.writeUInt32LE(a.sampleStackUser, 88);
  b.writeInt32LE(a.clockid, 92);
  b.writeBigUInt64LE(a.sampleRegsIntr, 96);
  b.writeUInt32LE(a.auxWatermark, 104);
  b.writeUInt16LE(a.sampleMaxStack, 108);
  // 110: __reserved_2 (u16) stays 0
  b.writeUInt32LE(a.auxSampleSize, 112);
  // 116: aux_action bits / __reserved_3 (u32) stay 0
  b.writeBigUInt64LE(a.sigData, 120);
  b.writeBigUInt64LE(a.config3, 128);
  return b;
}

export function parseAttr(b: Buffer): PerfEventAttr {
  const bits = b.readBigUInt64LE(40);
  const flags: Partial<Record<AttrFlag, boolean>> = {};
  for (const [name, bit] of Object.entries(ATTR_FLAG_BITS)) if ((bits >> BigInt(bit)) & 1n) flags[name as AttrFlag] = true;
  return {
    type: b.readUInt32LE(0),
    size: b.readUInt32LE(4),
    config: b.readBigUInt64LE(8),
    samplePeriod: b.readBigUInt64LE(16),
    sampleType: b.readBigUInt64LE(24),
    readFormat: b.readBigUInt64LE(32),
    flags,
    preciseIp: Number((bits >> 15n) & 3n),
    wakeup: b.readUInt32LE(48),
    bpType: b.readUInt32LE(52),
    config1: b.readBigUInt64LE(56),
    config2: b.readBigUInt64LE(64),
    branchSampleType: b.readBigUInt64LE(72),
    sampleRegsUser: b.readBigUInt64LE(80),
    sampleStackUser: b.readUInt32LE(88),
    clockid: b.readInt32LE(92),
    sampleRegsIntr: b.readBigUInt64LE(96),
    auxWatermark: b.readUInt32LE(104),
    sampleMaxStack: b.readUInt16LE(108),
    auxSampleSize: b.readUInt32LE(112),
    sigData: b.readBigUInt64LE(120),
    config3: b.readBigUInt64LE(128),
  };
}

/** sample_type of the PT event: what `perf record -e intel_pt//u` uses; TID/TIME/CPU/IDENTIFIER also fill the
 * sample_id_all trailer of every sideband record. */
export const PT_SAMPLE_TYPE = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;

export interface PtAttrOptions {
  /** full: AUX mapped read-write, every byte kept (loss marked); snapshot: overwrite mode, the latest bytes */
  mode: 'full' | 'snapshot';
  /** bytes of AUX data after which the kernel emits PERF_RECORD_AUX and wakes the reader (full mode) */
  auxWatermark: number;
  /** bytes in the data ring after which poll() wakes the reader */
  wakeupWatermark: number;
  /** start on exec of the traced command (the launcher stops itself before exec; see perf-session.ts) */
  enableOnExec: boolean;
  /** follow threads and processes the traced one creates (needs per-CPU events: the kernel refuses to mmap an
   * inherited per-thread event) */
  inherit: boolean;
}

/**
 * The PT event: `perf record -e intel_pt//u`'s attr (type, config, sample_period 1, sample_type
 * IP|TID|TIME|CPU|IDENTIFIER, read_format ID, disabled, inherit, exclude_kernel, exclude_hv, sample_id_all) plus
 * the sideband perf puts on its separate dummy tracking event: context switches, COMM (with exec), FORK/EXIT.
 */
export function ptEventAttr(pmu: PtPmu, cfg: PtConfig, o: PtAttrOptions): PerfEventAttr {
  const a = emptyAttr();
  a.type = pmu.type;
  a.config = cfg.config;
  a.config1 = cfg.config1;
  a.config2 = cfg.config2;
  a.samplePeriod = 1n;
  a.sampleType = PT_SAMPLE_TYPE;
  a.readFormat = ReadFormat.ID;
  a.flags = {
    disabled: true,
    inherit: o.inherit,
    exclude_kernel: true,
    exclude_hv: true,
    sample_id_all: true,
    enable_on_exec: o.enableOnExec,
    context_switch: true,
    comm: true,
    comm_exec: true,
    task: true,
    watermark: true,
  };
  a.wakeup = o.wakeupWatermark;
  a.auxWatermark = o.mode === 'full' ? o.auxWatermark : 0;
  return a;
}
