/**
 * A simulated perf mmap, written from the kernel's side of the protocol (kernel/events/ring_buffer.c as
 * documented in include/uapi/linux/perf_event.h), independently of the code under test:
 * - records are written whole at data_head (wrapping at the end of the ring) and data_head is published after
 *   the bytes; a record that does not fit in size - (head - tail) is dropped and counted, and the next record
 *   that fits is preceded by PERF_RECORD_LOST { id, lost } (both must fit);
 * - AUX bytes go at aux_head (wrapping); in full mode only size - (aux_head - aux_tail) bytes fit, the rest is
 *   cut and the PERF_RECORD_AUX says TRUNCATED (size 0 when nothing fitted); the AUX record is written before
 *   aux_head is published; in overwrite mode old bytes are overwritten and aux_head is the position in the area.
 * Every record carries the sample_id_all trailer of sample_type IP|TID|TIME|CPU|IDENTIFIER:
 *   u32 pid, u32 tid, u64 time, u32 cpu, u32 res, u64 id (IP is not part of the trailer).
 */
import type { PerfMmapView, TimeConv } from '../src';

export interface Who {
  pid: number;
  tid: number;
  time: number;
}

const TYPE = { LOST: 2, COMM: 3, EXIT: 4, FORK: 7, AUX: 11, ITRACE_START: 12, SWITCH: 14 };
const MISC_SWITCH_OUT = 1 << 13;
const MISC_COMM_EXEC = 1 << 13;

export class SimulatedPerfMmap implements PerfMmapView {
  readonly data: Buffer;
  readonly aux: Buffer;
  private head = 0n;
  private tail = 0n;
  private auxHeadValue = 0n;
  private auxTailValue = 0n;
  private lostPending = 0n;
  /** what the consumer did, for assertions */
  tailWrites: bigint[] = [];

  constructor(
    readonly dataSize: number,
    readonly auxSize: number,
    private readonly cpu: number,
    private readonly eventId: bigint,
    private readonly overwrite = false,
    private readonly conv: TimeConv = { capUserTime: true, capUserTimeZero: true, capUserTimeShort: false, timeShift: 10, timeMult: 512, timeZero: 0n, timeCycles: 0n, timeMask: 0n },
  ) {
    this.data = Buffer.alloc(dataSize);
    this.aux = Buffer.alloc(auxSize);
  }

  // ---- the consumer's view (what the addon gives the real code) ----
  dataHead(): bigint {
    return this.head;
  }
  setDataTail(t: bigint): void {
    this.tail = t;
    this.tailWrites.push(t);
  }
  auxHead(): bigint {
    return this.auxHeadValue;
  }
  setAuxTail(t: bigint): void {
    if (this.overwrite) throw new Error('aux_tail written in overwrite mode (the AUX area is mapped read-only there)');
    this.auxTailValue = t;
  }
  readData(pos: bigint, len: number): Buffer {
    return wrapRead(this.data, pos, len);
  }
  readAux(pos: bigint, len: number): Buffer {
    return wrapRead(this.aux, pos, len);
  }
  timeConv(): TimeConv {
    return this.conv;
  }

  // ---- the kernel's side ----
  get lostSoFar(): bigint {
    return this.lostPending;
  }

  private trailer(w: Who): Buffer {
    const t = Buffer.alloc(32);
    t.writeUInt32LE(w.pid, 0);
    t.writeUInt32LE(w.tid, 4);
    t.writeBigUInt64LE(BigInt(w.time), 8);
    t.writeUInt32LE(this.cpu, 16);
    t.writeUInt32LE(0, 20);
    t.writeBigUInt64LE(this.eventId, 24);
    return t;
  }

  private record(type: number, misc: number, body: Buffer, w: Who): Buffer {
    const trailer = this.trailer(w);
    const h = Buffer.alloc(8);
    h.writeUInt32LE(type, 0);
    h.writeUInt16LE(misc, 4);
    h.writeUInt16LE(8 + body.length + trailer.length, 6);
    return Buffer.concat([h, body, trailer]);
  }

  private put(rec: Buffer, w: Who): boolean {
    let bytes = rec;
    if (this.lostPending > 0n) {
      const body = Buffer.alloc(16);
      body.writeBigUInt64LE(this.eventId, 0);
      body.writeBigUInt64LE(this.lostPending, 8);
      bytes = Buffer.concat([this.record(TYPE.LOST, 0, body, w), rec]);
    }
    const free = BigInt(this.dataSize) - (this.head - this.tail);
    if (BigInt(bytes.length) > free) {
      this.lostPending++;
      return false;
    }
    this.lostPending = 0n;
    wrapWrite(this.data, this.head, bytes);
    this.head += BigInt(bytes.length); // published after the bytes
    return true;
  }

  itraceStart(w: Who): void {
    const b = Buffer.alloc(8);
    b.writeUInt32LE(w.pid, 0);
    b.writeUInt32LE(w.tid, 4);
    this.put(this.record(TYPE.ITRACE_START, 0, b, w), w);
  }

  comm(w: Who, comm: string, exec = false): boolean {
    const name = Buffer.from(comm + '\0', 'utf8');
    const padded = Buffer.alloc(Math.ceil(name.length / 8) * 8);
    name.copy(padded);
    const b = Buffer.alloc(8);
    b.writeUInt32LE(w.pid, 0);
    b.writeUInt32LE(w.tid, 4);
    return this.put(this.record(TYPE.COMM, exec ? MISC_COMM_EXEC : 0, Buffer.concat([b, padded]), w), w);
  }

  switch(w: Who, out: boolean): void {
    this.put(this.record(TYPE.SWITCH, out ? MISC_SWITCH_OUT : 0, Buffer.alloc(0), w), w);
  }

  forkOrExit(kind: 'fork' | 'exit', w: Who, child: { pid: number; ppid: number; tid: number; ptid: number }): void {
    const b = Buffer.alloc(24);
    b.writeUInt32LE(child.pid, 0);
    b.writeUInt32LE(child.ppid, 4);
    b.writeUInt32LE(child.tid, 8);
    b.writeUInt32LE(child.ptid, 12);
    b.writeBigUInt64LE(BigInt(w.time), 16);
    this.put(this.record(kind === 'fork' ? TYPE.FORK : TYPE.EXIT, 0, b, w), w);
  }

  /** The PT unit wrote `bytes` for thread w; the driver ends the AUX transaction (sched-out or watermark). */
  auxChunk(bytes: Buffer, w: Who): void {
    let flags = 0n;
    let kept = bytes;
    if (this.overwrite) {
      flags |= 2n; // OVERWRITE
      const pos = this.auxHeadValue;
      wrapWrite(this.aux, pos, bytes);
      this.auxRecord(pos, BigInt(bytes.length), flags, w);
      this.auxHeadValue = (pos + BigInt(bytes.length)) % BigInt(this.auxSize);
      return;
    }
    const free = BigInt(this.auxSize) - (this.auxHeadValue - this.auxTailValue);
    if (BigInt(bytes.length) > free) {
      kept = bytes.subarray(0, Number(free));
      flags |= 1n; // TRUNCATED
    }
    const at = this.auxHeadValue;
    wrapWrite(this.aux, at, kept);
    this.auxRecord(at, BigInt(kept.length), flags, w);
    this.auxHeadValue += BigInt(kept.length); // published after the record
  }

  private auxRecord(offset: bigint, size: bigint, flags: bigint, w: Who): void {
    const b = Buffer.alloc(24);
    b.writeBigUInt64LE(offset, 0);
    b.writeBigUInt64LE(size, 8);
    b.writeBigUInt64LE(flags, 16);
    this.put(this.record(TYPE.AUX, 0, b, w), w);
  }
}

function wrapWrite(area: Buffer, pos: bigint, bytes: Buffer): void {
  for (let i = 0; i < bytes.length; i++) area[Number((pos + BigInt(i)) % BigInt(area.length))] = bytes[i];
}

function wrapRead(area: Buffer, pos: bigint, len: number): Buffer {
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) out[i] = area[Number((pos + BigInt(i)) % BigInt(area.length))];
  return out;
}

/** Distinct, recognizable PT-ish bytes: chunk k of n bytes. */
export function chunk(k: number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (k * 37 + i * 3 + 1) & 0xff || 1;
  return b;
}
