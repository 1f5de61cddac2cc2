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

export function writeEvents(file: string, head: Omit<EventsFileHeader, 'format' | 'version' | 'count' | 'columns'>, ev: EventStream): void {
  const cols = ev.columns();
  const header: EventsFileHeader = { format: 'jportal-decoded-events', version: EVENTS_VERSION, ...head, count: ev.length, columns: cols.map((c) => ({ name: c.name, type: c.type })) };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const pre = Buffer.alloc(16);
  pre.write(EVENTS_MAGIC, 0, 'latin1');
  pre.writeUInt32LE(EVENTS_VERSION, 8);
  pre.writeUInt32LE(json.length, 12);
  const parts: Buffer[] = [pre, json];
  let off = 16 + json.length;
  for (const c of cols) {
    const size = SIZES[c.type];
    const pad = (size - (off % size)) % size; // columns are aligned to their element size
    if (pad) parts.push(Buffer.alloc(pad));
    off += pad;
    const b = Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength);
    parts.push(b);
    off += b.length;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  // part by part, in chunks: a thread's columns can pass the largest Buffer (2 GiB) together and even alone
  const fd = fs.openSync(tmp, 'w');
  try {
    const CHUNK = 64 << 20;
    for (const b of parts) for (let at = 0; at < b.length; at += CHUNK) fs.writeSync(fd, b, at, Math.min(CHUNK, b.length - at));
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
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
