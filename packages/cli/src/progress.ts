/**
 * Progress on stderr: a bar with rate and ETA on a terminal; nothing when stderr is not a TTY, under CI, or with
 * --json (logs stay one line per stage there).
 */
export class Progress {
  private readonly live: boolean;
  private t0 = Date.now();
  private total = 0;
  private label = '';
  private unit = '';
  private lastDraw = 0;

  constructor(quiet: boolean) {
    this.live = !quiet && !!process.stderr.isTTY && !process.env.CI;
  }

  /** Starts a stage of `total` units (0: unknown). */
  start(label: string, total = 0, unit = ''): void {
    this.label = label;
    this.total = total;
    this.unit = unit;
    this.t0 = Date.now();
    this.lastDraw = 0;
    this.update(0);
  }

  update(done: number, detail = ''): void {
    if (!this.live) return;
    const now = Date.now();
    if (now - this.lastDraw < 100 && done < this.total) return;
    this.lastDraw = now;
    const secs = (now - this.t0) / 1000;
    const rate = secs > 0 ? done / secs : 0;
    let line = `jportal: ${this.label}`;
    if (this.total > 0) {
      const share = Math.min(1, done / this.total);
      const width = 24;
      const fill = Math.round(share * width);
      const eta = rate > 0 ? (this.total - done) / rate : 0;
      line += ` [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${(share * 100).toFixed(0)}% ${fmt(done)}/${fmt(this.total)}${this.unit}`;
      if (rate > 0) line += ` ${fmt(rate)}${this.unit}/s ETA ${eta < 1 ? '<1' : eta.toFixed(0)}s`;
    } else if (done) line += ` ${fmt(done)}${this.unit}`;
    if (detail) line += ` ${detail}`;
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 120) - 1)}\x1b[K`);
  }

  /** Ends the stage (clears the bar). */
  done(): void {
    if (this.live) process.stderr.write('\r\x1b[K');
  }
}

const fmt = (n: number): string => (n >= 1e9 ? `${(n / 1e9).toFixed(1)}G` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : `${Math.round(n)}`);
