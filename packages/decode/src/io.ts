/**
 * The decoded-events file (docs/decoded-format.md): TRACE_DIR/decoded/<tid>.jpe, column-wise, self-describing.
 */
import * as fs from 'fs';
import * as path from 'path';
import { EventStream } from './events';

export const EVENTS_MAGIC = 'JPEVENTS';
export const EVENTS_VERSION = 1;

export interface EventsFileHeader {
  format: 'jportal-decoded-events';
  version: number;
  tid: number;
  name: string;
  javaTid: number;
  count: number;
  columns: { name: string; type: string }[];
  stats?: Record<string, unknown>;
  /** names of the method ids this file uses that meta.jpt's METHOD records do not name: id -> [class, name, descriptor] */
  methods?: Record<string, [string, string, string]>;
}

export class EventsFormatError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    message: string,
  ) {
    super(`${file}: byte ${offset}: ${message}`);
    this.name = 'EventsFormatError';
  }
}

const SIZES: Record<string, number> = { u8: 1, i16: 2, i32: 4, f64: 8 };

export type EventsFileHead = Omit<EventsFileHeader, 'format' | 'version' | 'count' | 'columns'>;

/** The column names and types in file order (docs/decoded-format.md). */
const COLUMNS = new EventStream(0).columns().map((c) => ({ name: c.name, type: c.type }));

/** The magic, version, header length and header of a file of `count` events. */
function headerBytes(head: EventsFileHead, count: number): Buffer {
  const header: EventsFileHeader = { format: 'jportal-decoded-events', version: EVENTS_VERSION, ...head, count, columns: COLUMNS };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const pre = Buffer.alloc(16);
  pre.write(EVENTS_MAGIC, 0, 'latin1');
  pre.writeUInt32LE(EVENTS_VERSION, 8);
  pre.writeUInt32LE(json.length, 12);
  return Buffer.concat([pre, json]);
}

/** Writes `file` (through `file.tmp`, renamed when complete): the header, then each column aligned to its element size. */
function writeLayout(file: string, head: Buffer, writeColumn: (fd: number, k: number) => void): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, head);
    let off = head.length;
    COLUMNS.forEach((c, k) => {
      const size = SIZES[c.type];
      const pad = (size - (off % size)) % size;
      if (pad) fs.writeSync(fd, Buffer.alloc(pad));
      writeColumn(fd, k);
      off = fs.fstatSync(fd).size;
    });
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** Writes all of `b`, in chunks (a column can pass the largest Buffer, 2 GiB). */
function writeAll(fd: number, b: Buffer): void {
  const CHUNK = 64 << 20;
  for (let at = 0; at < b.length; at += CHUNK) fs.writeSync(fd, b, at, Math.min(CHUNK, b.length - at));
}

export function writeEvents(file: string, head: EventsFileHead, ev: EventStream): void {
  const cols = ev.columns();
  writeLayout(file, headerBytes(head, ev.length), (fd, k) => writeAll(fd, Buffer.from(cols[k].data.buffer, cols[k].data.byteOffset, cols[k].data.byteLength)));
}

/**
 * Writes a thread's events file from pieces that come in stream order (`sink`), in bounded memory: each column
 * goes to a file of its own as they come, and close() writes the events file from them.
 */
export class EventsFileWriter {
  count = 0;
  private readonly parts: string[];
  private fds: number[];

  constructor(private readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.parts = COLUMNS.map((c) => `${file}.${c.name}.part`);
    this.fds = this.parts.map((p) => fs.openSync(p, 'w'));
  }

  readonly sink = (e: EventStream): void => {
    try {
      e.columns().forEach((c, k) => writeAll(this.fds[k], Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength)));
    } catch (x) {
      // (a full disk, say: the error names the file)
      const err = x as NodeJS.ErrnoException;
      throw Object.assign(new Error(`${this.file}: writing ${this.count + e.length} events: ${err.message}`), { code: err.code });
    }
    this.count += e.length;
  };

  /** Writes the events file (the header names `count` events) and removes the column parts. */
  close(head: EventsFileHead): void {
    this.closeParts();
    const buf = Buffer.alloc(64 << 20);
    try {
      writeLayout(this.file, headerBytes(head, this.count), (fd, k) => {
        const src = fs.openSync(this.parts[k], 'r');
        try {
          for (let n; (n = fs.readSync(src, buf, 0, buf.length, null)) > 0; ) fs.writeSync(fd, buf, 0, n);
        } finally {
          fs.closeSync(src);
        }
      });
    } finally {
      this.removeParts();
    }
  }

  /** Drops what was written (on failure). */
  abort(): void {
    this.closeParts();
    this.removeParts();
  }

  private closeParts(): void {
    for (const fd of this.fds) fs.closeSync(fd);
    this.fds = [];
  }

  private removeParts(): void {
    for (const p of this.parts) fs.rmSync(p, { force: true });
  }
}

export function readEvents(file: string): { header: EventsFileHeader; events: EventStream } {
  // read by pieces (header, then each column into its array): files of long threads pass 2 GiB
  const fd = fs.openSync(file, 'r');
  try {
    const fileSize = fs.fstatSync(fd).size;
    const readAt = (dst: Uint8Array, pos: number): void => {
      const CHUNK = 64 << 20;
      for (let done = 0; done < dst.length; ) {
        const n = fs.readSync(fd, dst, done, Math.min(CHUNK, dst.length - done), pos + done);
        if (n <= 0) throw new EventsFormatError(file, pos + done, 'unexpected end of file');
        done += n;
      }
    };
    const pre = Buffer.alloc(16);
    if (fileSize < 16) throw new EventsFormatError(file, 0, 'not a jportal decoded-events file (bad magic)');
    readAt(pre, 0);
    if (pre.toString('latin1', 0, 8) !== EVENTS_MAGIC) throw new EventsFormatError(file, 0, 'not a jportal decoded-events file (bad magic)');
    const version = pre.readUInt32LE(8);
    if (version !== EVENTS_VERSION) throw new EventsFormatError(file, 8, `version ${version} is not supported (this reader: ${EVENTS_VERSION})`);
    const jlen = pre.readUInt32LE(12);
    if (16 + jlen > fileSize) throw new EventsFormatError(file, 12, `header length ${jlen} runs past the end of the file (${fileSize} bytes)`);
    const jbuf = Buffer.alloc(jlen);
    readAt(jbuf, 16);
    let header: EventsFileHeader;
    try {
      header = JSON.parse(jbuf.toString('utf8'));
    } catch {
      throw new EventsFormatError(file, 16, 'header is not JSON');
    }
    const n = header.count;
    if (!Number.isInteger(n) || n < 0) throw new EventsFormatError(file, 16, `bad event count ${n}`);
    const ev = new EventStream(n);
    let off = 16 + jlen;
    const target: Record<string, ArrayBufferView & { set(a: ArrayLike<number>): void }> = {};
    Object.assign(target, { kind: ev.kind, source: ev.source, method: ev.method, bci: ev.bci, opcode: ev.opcode, tsc: ev.tsc, aux: ev.aux });
    for (const c of header.columns) {
      const size = SIZES[c.type];
      if (!size) throw new EventsFormatError(file, 16, `column ${c.name} has unknown type ${c.type}`);
      off += (size - (off % size)) % size;
      if (off + n * size > fileSize) throw new EventsFormatError(file, off, `column ${c.name} is truncated (needs ${n * size} bytes, ${fileSize - off} left)`);
      const dst = target[c.name];
      if (dst && (dst as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT === size) readAt(new Uint8Array(dst.buffer, dst.byteOffset, n * size), off);
      else if (dst) {
        // a known column stored with another element type: read, then convert
        const copy = new Uint8Array(n * size);
        readAt(copy, off);
        const view = c.type === 'u8' ? copy : c.type === 'i16' ? new Int16Array(copy.buffer) : c.type === 'i32' ? new Int32Array(copy.buffer) : new Float64Array(copy.buffer);
        dst.set(view as ArrayLike<number>);
      }
      off += n * size;
    }
    ev.length = n;
    return { header, events: ev };
  } finally {
    fs.closeSync(fd);
  }
}
