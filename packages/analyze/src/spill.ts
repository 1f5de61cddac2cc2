/**
 * Spill files: a thread's converted events written window by window to a scratch file, and read back window by
 * window as often as the profiles need. So `jportal analyze` holds one window per thread being decoded and two
 * while profiling, never a whole thread.
 *
 * One file per thread, a sequence of blocks, each the columns of one window in this order (native byte order,
 * little-endian on every machine jportal runs on): kind u8, origin u8, tier u8, opcode i16, method i32, bci i32,
 * tsc f64, endTsc f64; each column packed on its own (spill-codec.ts: as runs of one value when it has few, else
 * plain; then raw deflate, level 1). Uncompressed, a full-size trace's main thread (luindex full: past 1.7 G
 * events) was more than this machine's 48 GB of free disk.
 * The block index (offset, events, each column's compressed length) lives in memory only: these files are
 * scratch, removed when the analysis is closed, and not a format anything else reads.
 *
 * Windows that fit a memory budget (spillMemoryBudget(): 15% of the machine's memory, JPORTAL_SPILL_MEMORY_BYTES
 * sets it) are kept as they are instead, in memory, and read back without copying: compressing and inflating
 * every column was a tenth of analyze's time (luindex short, 100 M events: 2.9 GB raw, about 13 s of 118).
 * Each window is kept when it still fits the budget, else it goes to disk.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EventWindow, ThreadEvents, ThreadInfo } from './model';
import { packColumn, SpillCodecError, unpackColumn } from './spill-codec';

/** bytes one event takes in a spill file before compression */
export const SPILL_EVENT_BYTES = 1 + 1 + 1 + 2 + 4 + 4 + 8 + 8;

type Column = 'kind' | 'origin' | 'tier' | 'opcode' | 'method' | 'bci' | 'tsc' | 'endTsc';
const COLUMNS: Column[] = ['kind', 'origin', 'tier', 'opcode', 'method', 'bci', 'tsc', 'endTsc'];

interface Block {
  offset: number;
  events: number;
  /** each column's compressed bytes, in COLUMNS order (on disk) */
  sizes: number[];
  /** the columns themselves when the block is kept in memory */
  held?: ThreadEvents;
}

/** Bytes of windows a spill keeps in memory: JPORTAL_SPILL_MEMORY_BYTES, else 15% of the machine's memory. */
export function spillMemoryBudget(): number {
  const env = process.env.JPORTAL_SPILL_MEMORY_BYTES;
  const n = env === undefined || env.trim() === '' ? NaN : Number(env);
  return Number.isFinite(n) && n >= 0 ? n : Math.floor(os.totalmem() * 0.15);
}

interface SpilledThread {
  info: ThreadInfo;
  file: string;
  blocks: Block[];
  fd: number;
  bytes: number;
}

function columns(n: number): ThreadEvents {
  return {
    name: '', tid: -1, javaTid: -1, length: n, kind: new Uint8Array(n), origin: new Uint8Array(n), tier: new Uint8Array(n), opcode: new Int16Array(n),
    method: new Int32Array(n), bci: new Int32Array(n), tsc: new Float64Array(n), endTsc: new Float64Array(n),
  };
}

/**
 * A window's columns copied into one allocation (8-byte aligned views), not eight: V8 starts a full garbage
 * collection each time memory outside its heap has grown by 64 MB since the last, and the eight copies of each
 * window of luindex short (3.2 GB kept) set off ~50 of them while it decoded (5.7 s of 107); with one buffer per
 * window, about one per window.
 */
class WindowBuffer {
  private readonly buffer: ArrayBuffer;
  private used = 0;
  constructor(bytes: number) {
    this.buffer = new ArrayBuffer(bytes);
  }

  /** a copy of src[0..n) */
  copy<T extends Uint8Array | Int16Array | Int32Array | Float64Array>(src: T, n: number): T {
    const at = (this.used + 7) & ~7;
    const view = new (src.constructor as new (b: ArrayBuffer, o: number, n: number) => T)(this.buffer, at, n);
    view.set(src.subarray(0, n) as never);
    this.used = at + n * src.BYTES_PER_ELEMENT;
    return view;
  }
}

export class EventSpill {
  private readonly threads: SpilledThread[] = [];
  private closed = false;
  private held = 0;

  /** `dir`: a directory of its own (created; removed by close()); `memoryBytes`: what may be kept in memory */
  constructor(
    readonly dir: string,
    private readonly memoryBytes = spillMemoryBudget(),
  ) {
    fs.mkdirSync(dir, { recursive: true });
  }

  /** Starts the spill file of a new thread; returns its index. */
  open(info: Omit<ThreadInfo, 'length'>): number {
    const k = this.threads.length;
    const file = path.join(this.dir, `${k}.events`);
    this.threads.push({ info: { ...info, length: 0 }, file, blocks: [], fd: fs.openSync(file, 'w+'), bytes: 0 });
    return k;
  }

  /** Appends a window of thread k's events (the columns are copied out; `t` may be reused afterwards). */
  append(k: number, t: ThreadEvents): void {
    const s = this.threads[k];
    const n = t.length;
    if (n === 0) return;
    const block: Block = { offset: s.bytes, events: n, sizes: [] };
    if (this.held + n * SPILL_EVENT_BYTES <= this.memoryBytes) {
      const { kind, origin, tier, opcode, method, bci, tsc, endTsc } = t;
      // (the columns' alignment adds at most 7 bytes to each of the eight, not counted against the budget)
      const m = new WindowBuffer(n * SPILL_EVENT_BYTES + 64);
      block.held = {
        ...s.info, length: n, kind: m.copy(kind, n), origin: m.copy(origin, n), tier: m.copy(tier, n), opcode: m.copy(opcode, n),
        method: m.copy(method, n), bci: m.copy(bci, n), tsc: m.copy(tsc, n), endTsc: m.copy(endTsc, n),
      };
      this.held += n * SPILL_EVENT_BYTES;
      s.blocks.push(block);
      s.info.length += n;
      return;
    }
    try {
      for (const c of COLUMNS) {
        const packed = packColumn(t[c].subarray(0, n), c === 'tsc');
        let done = 0;
        while (done < packed.length) done += fs.writeSync(s.fd, packed, done, packed.length - done, s.bytes + done);
        s.bytes += packed.length;
        block.sizes.push(packed.length);
      }
    } catch (e) {
      // (a full disk: say which file, at which offset; the caller removes the spill)
      const err = e as NodeJS.ErrnoException;
      err.message = `${s.file} at offset ${s.bytes}: ${err.message}`;
      throw err;
    }
    s.blocks.push(block);
    s.info.length += n;
  }

  /** Names thread k (the decoder knows a thread's name for sure only once it is done). */
  rename(k: number, name: string, javaTid: number): void {
    this.threads[k].info.name = name;
    this.threads[k].info.javaTid = javaTid;
  }

  /** The threads spilled so far (length: events written). */
  get infos(): ThreadInfo[] {
    return this.threads.map((s) => s.info);
  }

  /** Bytes written to disk over all threads. */
  get bytes(): number {
    return this.threads.reduce((n, s) => n + s.bytes, 0);
  }

  /** Bytes of the windows kept in memory. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Thread k's windows, read back in order into two buffers in turn: a window's columns stay valid while the next
   * one is processed, and are overwritten by the one after.
   */
  *windows(k: number): Generator<EventWindow> {
    const s = this.threads[k];
    if (this.closed) throw new Error(`spill ${this.dir}: read after close`);
    // (buffers for the windows on disk only: those in memory are handed out as they are)
    const max = s.blocks.reduce((m, b) => (b.held ? m : Math.max(m, b.events)), 0);
    const bufs: ThreadEvents[] = [];
    let packed = Buffer.alloc(0);
    let base = 0;
    for (let b = 0; b < s.blocks.length; b++) {
      const block = s.blocks[b];
      if (block.held) {
        yield { ...block.held, name: s.info.name, tid: s.info.tid, javaTid: s.info.javaTid, base };
        base += block.events;
        continue;
      }
      const turn = b & 1;
      const buf = bufs[turn] ?? (bufs[turn] = columns(max));
      const n = block.events;
      let at = block.offset;
      const w = { name: s.info.name, tid: s.info.tid, javaTid: s.info.javaTid, length: n, base } as EventWindow;
      for (let ci = 0; ci < COLUMNS.length; ci++) {
        const c = COLUMNS[ci];
        const view = buf[c].subarray(0, n);
        const size = block.sizes[ci];
        if (packed.length < size) packed = Buffer.alloc(size);
        let done = 0;
        while (done < size) {
          const r = fs.readSync(s.fd, packed, done, size - done, at + done);
          if (r <= 0) throw new Error(`spill ${s.file}: short read at offset ${at + done}`);
          done += r;
        }
        try {
          unpackColumn(packed.subarray(0, size), view, c === 'tsc');
        } catch (e) {
          if (!(e instanceof SpillCodecError) && (e as NodeJS.ErrnoException).code === undefined) throw e;
          throw new Error(`spill ${s.file}: the block at offset ${at} does not hold ${n} values of ${c}: ${(e as Error).message}`);
        }
        at += size;
        (w as unknown as Record<Column, ArrayBufferView>)[c] = view;
      }
      yield w;
      base += n;
    }
  }

  /** Closes and removes every spill file. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.threads) for (const b of s.blocks) b.held = undefined;
    this.held = 0;
    for (const s of this.threads)
      try {
        fs.closeSync(s.fd);
      } catch {
        // (already closed)
      }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
