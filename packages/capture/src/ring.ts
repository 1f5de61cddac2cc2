/**
 * Draining one perf mmap: the data ring (records) and the AUX area (trace bytes), over an abstract view so that
 * the same code runs on the addon's real mapping and on the simulator of the tests.
 *
 * The protocol (include/uapi/linux/perf_event.h, perf_event_mmap_page): the kernel advances data_head after
 * writing whole records and never overwrites bytes at or after data_tail - size; the reader reads data_head
 * (acquire), copies, then stores data_tail (release). The AUX area works the same with aux_head/aux_tail in
 * full mode (mapped read-write); the kernel emits a PERF_RECORD_AUX (offset, size, flags) for each chunk before
 * it publishes aux_head, so the records say exactly which AUX bytes are complete. Mapped read-only, the AUX area
 * is an overwriting flight recorder (snapshot mode) whose aux_head is the write position within the area.
 */
import { PerfProtocolError } from './errors';
import { parseRecord, PerfRecord, RECORD_HEADER_SIZE } from './perf-records';
import type { TimeConv } from './time-conv';

export interface PerfMmapView {
  /** bytes of the data ring (a power of two number of pages) */
  readonly dataSize: number;
  /** bytes of the AUX area (0: none) */
  readonly auxSize: number;
  dataHead(): bigint;
  setDataTail(tail: bigint): void;
  auxHead(): bigint;
  setAuxTail(tail: bigint): void;
  /** len bytes of the data ring from stream position pos (taken modulo dataSize; the copy wraps) */
  readData(pos: bigint, len: number): Buffer;
  /** len bytes of the AUX area from stream position pos (modulo auxSize; the copy wraps) */
  readAux(pos: bigint, len: number): Buffer;
  timeConv(): TimeConv;
}

/** The data ring's reader: every complete record between the consumed tail and data_head, in order. */
export class DataRingReader {
  private tail = 0n;
  constructor(
    private readonly view: PerfMmapView,
    private readonly sampleType: bigint,
  ) {}

  get consumed(): bigint {
    return this.tail;
  }

  drain(): PerfRecord[] {
    const head = this.view.dataHead();
    const size = BigInt(this.view.dataSize);
    if (head < this.tail || head - this.tail > size)
      throw new PerfProtocolError(`data ring: head ${head} is not within [tail ${this.tail}, tail + ${size}]`);
    const out: PerfRecord[] = [];
    let tail = this.tail;
    while (tail < head) {
      if (head - tail < BigInt(RECORD_HEADER_SIZE)) throw new PerfProtocolError(`data ring: ${head - tail} bytes left at ${tail}, less than a record header`);
      const recSize = this.view.readData(tail, RECORD_HEADER_SIZE).readUInt16LE(6);
      if (recSize < RECORD_HEADER_SIZE || tail + BigInt(recSize) > head)
        throw new PerfProtocolError(`data ring: record at ${tail} has size ${recSize}, past head ${head}`);
      out.push(parseRecord(this.view.readData(tail, recSize), this.sampleType));
      tail += BigInt(recSize);
    }
    this.tail = tail;
    this.view.setDataTail(tail);
    return out;
  }
}

/** The AUX area in full mode: hands out the bytes each PERF_RECORD_AUX announces, then frees them. */
export class AuxAreaReader {
  private tail = 0n;
  constructor(private readonly view: PerfMmapView) {}

  get consumed(): bigint {
    return this.tail;
  }

  /** The chunk [offset, offset + size) of the AUX stream (copied out; the space is freed by release()). */
  take(offset: bigint, size: bigint): Buffer {
    const area = BigInt(this.view.auxSize);
    if (size > area) throw new PerfProtocolError(`AUX record of ${size} bytes in a ${area}-byte area`);
    if (offset < this.tail) throw new PerfProtocolError(`AUX record at ${offset} overlaps bytes already consumed (up to ${this.tail})`);
    const bytes = size > 0n ? this.view.readAux(offset, Number(size)) : Buffer.alloc(0);
    this.tail = offset + size;
    return bytes;
  }

  /** Publishes aux_tail: the kernel may reuse everything taken so far. */
  release(): void {
    this.view.setAuxTail(this.tail);
  }
}

/**
 * Snapshot mode: the whole AUX area as it stands, oldest byte first. aux_head is the write position within the
 * area (the PT driver keeps it modulo the size in overwrite mode); the area starts zero-filled, so non-zero bytes
 * after the write position mean it has wrapped (the test perf's intel_pt_find_snapshot also relies on).
 */
export function snapshotAux(view: PerfMmapView): { bytes: Buffer; wrapped: boolean } {
  const size = view.auxSize;
  const pos = Number(view.auxHead() % BigInt(size));
  const after = pos < size ? view.readAux(BigInt(pos), size - pos) : Buffer.alloc(0);
  const wrapped = after.some((b) => b !== 0);
  if (!wrapped) return { bytes: pos ? view.readAux(0n, pos) : Buffer.alloc(0), wrapped: false };
  return { bytes: pos ? Buffer.concat([after, view.readAux(0n, pos)]) : after, wrapped: true };
}
