/**
 * The collector side of the agent's shared-memory ring: finds the ring of the JVM we launched, drains it
 * into TRACE_DIR/meta.jpt while the JVM runs (sleeping between polls, never spinning), and finishes the
 * file when the JVM has exited.
 */
import * as fs from 'fs';
import * as path from 'path';
import { openRing, RingDrain } from './format-adapter';

const RING_DIR = '/dev/shm';

export interface CollectorStats {
  ringPath?: string;
  bytes: number;
  closed: boolean;
}

export class Collector {
  private ring?: RingDrain;
  private fd?: number;
  private firstOpenError?: Error;
  readonly stats: CollectorStats = { bytes: 0, closed: false };

  constructor(
    private readonly metaPath: string,
    private readonly jvmPid: number,
  ) {}

  get attached(): boolean {
    return this.ring !== undefined;
  }

  get lastOpenError(): Error | undefined {
    return this.firstOpenError;
  }

  /** Looks for the ring: first the launched pid's, then any ring whose consumer is this process. */
  tryAttach(): boolean {
    if (this.ring) return true;
    const candidates = [path.join(RING_DIR, `jportal-${this.jvmPid}.ring`)];
    try {
      for (const f of fs.readdirSync(RING_DIR))
        if (/^jportal-\d+\.ring$/.test(f) && f !== `jportal-${this.jvmPid}.ring`) candidates.push(path.join(RING_DIR, f));
    } catch {
      return false;
    }
    for (const c of candidates) {
      if (!fs.existsSync(c)) continue;
      try {
        const ring = openRing(c, process.pid);
        this.ring = ring;
        this.stats.ringPath = c;
        this.fd = fs.openSync(this.metaPath, 'w', 0o644);
        ring.writeFileHeader(this.fd);
        return true;
      } catch (e) {
        // a ring still being initialised, or another collector's ring: retried on the next poll
        this.firstOpenError ??= e as Error;
      }
    }
    return false;
  }

  /** Copies whatever the agent committed since the last call; returns the number of bytes copied. */
  drain(): number {
    if (!this.ring || this.fd === undefined) return 0;
    const n = this.ring.drainOnce(this.fd);
    this.stats.bytes += n;
    this.stats.closed = this.ring.isClosed();
    return n;
  }

  /** Drains the rest, fsyncs, closes the file and removes the ring. */
  finish(): void {
    if (!this.ring || this.fd === undefined) return;
    for (let i = 0; i < 1_000_000 && this.drain() > 0; i++);
    this.stats.closed = this.ring.isClosed();
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
    this.fd = undefined;
    this.ring.close();
    if (this.stats.ringPath) fs.rmSync(this.stats.ringPath, { force: true });
    this.ring = undefined;
  }
}
