/**
 * Writes TRACE_DIR/pt/ exactly as the emulator does (docs/trace-format.md §6): pt/<tid>.pt per thread or
 * pt/cpu<k>.pt per CPU, and pt/sideband.jsonl, one JSON object per line, header first and `end` last.
 */
import * as fs from 'fs';
import * as path from 'path';

export type SidebandLine = { type: string } & Record<string, unknown>;

/** JSON with bigint values written as plain numbers (the emulator writes u64 decimal; readers parse numbers). */
export function sidebandJson(obj: SidebandLine): string {
  return JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? `@@${v.toString()}@@` : v)).replace(/"@@(\d+)@@"/g, '$1');
}

export class PtDirWriter {
  readonly ptDir: string;
  private readonly sideband: number;
  private readonly streams = new Map<string, { fd: number; bytes: number }>();

  constructor(traceDir: string) {
    this.ptDir = path.join(traceDir, 'pt');
    fs.mkdirSync(this.ptDir, { recursive: true });
    this.sideband = fs.openSync(path.join(this.ptDir, 'sideband.jsonl'), 'w');
  }

  /** Creates (truncates) pt/<name> now, so a stream with no data still exists. */
  openStream(name: string): void {
    if (!this.streams.has(name)) this.streams.set(name, { fd: fs.openSync(path.join(this.ptDir, name), 'w'), bytes: 0 });
  }

  /** Appends to pt/<name>; returns the offset the bytes start at. */
  append(name: string, bytes: Uint8Array): number {
    this.openStream(name);
    const s = this.streams.get(name)!;
    const at = s.bytes;
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(s.fd, bytes, done, bytes.length - done);
    s.bytes += bytes.length;
    return at;
  }

  streamBytes(name: string): number {
    return this.streams.get(name)?.bytes ?? 0;
  }

  line(obj: SidebandLine): void {
    fs.writeSync(this.sideband, sidebandJson(obj) + '\n');
  }

  close(): void {
    for (const s of this.streams.values()) fs.closeSync(s.fd);
    this.streams.clear();
    fs.closeSync(this.sideband);
  }
}
