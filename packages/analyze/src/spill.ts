/**
 * Spill files: a thread's converted events written window by window to a scratch file, and read back window by
 * window as often as the profiles need. So `jportal analyze` holds one window per thread being decoded and two
 * while profiling, never a whole thread.
 *
 * One file per thread, a sequence of blocks, each the columns of one window in this order (native byte order,
 * little-endian on every machine jportal runs on): kind u8, origin u8, tier u8, opcode i16, method i32, bci i32,
 * tsc f64, endTsc f64. The block index (offset, events) lives in memory only: these files are scratch, removed
 * when the analysis is closed, and not a format anything else reads.
 */
import * as fs from 'fs';
import * as path from 'path';
import { EventWindow, ThreadEvents, ThreadInfo } from './model';

/** bytes one event takes in a spill file */
export const SPILL_EVENT_BYTES = 1 + 1 + 1 + 2 + 4 + 4 + 8 + 8;

type Column = 'kind' | 'origin' | 'tier' | 'opcode' | 'method' | 'bci' | 'tsc' | 'endTsc';
const COLUMNS: Column[] = ['kind', 'origin', 'tier', 'opcode', 'method', 'bci', 'tsc', 'endTsc'];
const WIDTH: Record<Column, number> = { kind: 1, origin: 1, tier: 1, opcode: 2, method: 4, bci: 4, tsc: 8, endTsc: 8 };

interface Block {
  offset: number;
  events: number;
}

interface SpilledThread {
  info: ThreadInfo;
  file: string;
  blocks: Block[];
  fd: number;
  bytes: number;
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function columns(n: number): ThreadEvents {
  return {
    name: '', tid: -1, javaTid: -1, length: n, kind: new Uint8Array(n), origin: new Uint8Array(n), tier: new Uint8Array(n), opcode: new Int16Array(n),
    method: new Int32Array(n), bci: new Int32Array(n), tsc: new Float64Array(n), endTsc: new Float64Array(n),
  };
}

export class EventSpill {
  private readonly threads: SpilledThread[] = [];
  private closed = false;

  /** `dir`: a directory of its own (created; removed by close()) */
  constructor(readonly dir: string) {
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
    s.blocks.push({ offset: s.bytes, events: n });
    try {
      for (const c of COLUMNS) {
        const data = bytesOf(t[c].subarray(0, n));
        let done = 0;
        while (done < data.length) done += fs.writeSync(s.fd, data, done, data.length - done, s.bytes + done);
        s.bytes += data.length;
      }
    } catch (e) {
      // (a full disk: say which file, at which offset; the caller removes the spill)
      const err = e as NodeJS.ErrnoException;
      err.message = `${s.file} at offset ${s.bytes}: ${err.message}`;
      throw err;
    }
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

  /**
   * Thread k's windows, read back in order into two buffers in turn: a window's columns stay valid while the next
   * one is processed, and are overwritten by the one after.
   */
  *windows(k: number): Generator<EventWindow> {
    const s = this.threads[k];
    if (this.closed) throw new Error(`spill ${this.dir}: read after close`);
    const max = s.blocks.reduce((m, b) => Math.max(m, b.events), 0);
    const bufs: ThreadEvents[] = [];
    let base = 0;
    for (let b = 0; b < s.blocks.length; b++) {
      const block = s.blocks[b];
      const turn = b & 1;
      const buf = bufs[turn] ?? (bufs[turn] = columns(max));
      const n = block.events;
      let at = block.offset;
      const w = { name: s.info.name, tid: s.info.tid, javaTid: s.info.javaTid, length: n, base, last: b === s.blocks.length - 1 } as EventWindow;
      for (const c of COLUMNS) {
        const view = buf[c].subarray(0, n);
        const data = bytesOf(view);
        let done = 0;
        while (done < data.length) {
          const r = fs.readSync(s.fd, data, done, data.length - done, at + done);
          if (r <= 0) throw new Error(`spill ${s.file}: short read at offset ${at + done}`);
          done += r;
        }
        at += n * WIDTH[c];
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
    for (const s of this.threads)
      try {
        fs.closeSync(s.fd);
      } catch {
        // (already closed)
      }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
