import { Packet, PacketKind as K } from './packet';

/** What time tracking needs to know about the PT unit's clocks (from CPUID and the capture's config). */
export interface TimingConfig {
  /** TSC ticks per CTC (crystal clock) tick: CPUID 0x15 EBX / EAX. 0: unknown (MTC is then ignored). */
  ctcRatio: number;
  /** MTC period exponent: an MTC is sent when CTC bit `mtcFreq` and above change; its payload is CTC[mtcFreq+7:mtcFreq]. */
  mtcFreq: number;
  /** Nominal core:bus ratio (CBR at the TSC rate; 0 unknown): with CBR it turns CYC core cycles into TSC ticks. */
  nomFreq: number;
}

/**
 * Time from timing packets (SDM "Timing packets"): TSC sets the time exactly; TMA relates the TSC to the crystal
 * clock (CTC[15:0] and the fast counter at that TSC); every MTC then marks a CTC edge whose TSC is
 * `tsc(TMA) - fc + (ctc(MTC) - ctc(TMA)) * ctcRatio`; CYC packets add core cycles since the last timing packet,
 * never past the next MTC edge (so time stays monotonic). `tsc` is a number: exact below 2^53 ticks.
 */
export class TimeTracker {
  /** Best estimate of the current TSC; 0 until the first TSC packet. */
  tsc = 0;
  /** The TSC of the last timing packet that gave an exact edge (TSC or MTC), without CYC refinement. */
  private anchor = 0;
  /** Full CTC value (as far as known) at `anchor`, and whether TMA has given one since the last TSC. */
  private ctc = 0;
  private haveCtc = false;
  /** The last TMA: a CTC value and the TSC at that CTC edge. */
  private haveRef = false;
  private refCtc = 0;
  private refTsc = 0;
  private cycles = 0;
  private cbr = 0;
  /** MTC packets seen; MTC periods skipped (a gap larger than one period: lost MTCs or a quiet core). */
  mtcCount = 0;
  lostMtc = 0;

  constructor(readonly config: TimingConfig) {}

  /** Saves the whole state into `out` (11 numbers), for a decoder that reads ahead and comes back. */
  save(out: Float64Array, at = 0): void {
    out[at] = this.tsc;
    out[at + 1] = this.anchor;
    out[at + 2] = this.ctc;
    out[at + 3] = this.haveCtc ? 1 : 0;
    out[at + 4] = this.cycles;
    out[at + 5] = this.cbr;
    out[at + 6] = this.mtcCount;
    out[at + 7] = this.lostMtc;
    out[at + 8] = this.haveRef ? 1 : 0;
    out[at + 9] = this.refCtc;
    out[at + 10] = this.refTsc;
  }

  restore(s: Float64Array, at = 0): void {
    this.tsc = s[at];
    this.anchor = s[at + 1];
    this.ctc = s[at + 2];
    this.haveCtc = s[at + 3] === 1;
    this.cycles = s[at + 4];
    this.cbr = s[at + 5];
    this.mtcCount = s[at + 6];
    this.lostMtc = s[at + 7];
    this.haveRef = s[at + 8] === 1;
    this.refCtc = s[at + 9];
    this.refTsc = s[at + 10];
  }

  reset(): void {
    this.tsc = this.anchor = 0;
    this.haveCtc = false;
    this.haveRef = false;
    this.cycles = 0;
  }

  /** Updates the time from a packet; returns true when the packet was a timing packet. */
  update(p: Packet): boolean {
    switch (p.kind) {
      case K.Tsc: {
        const t = p.hi * 0x100000000 + p.lo;
        // a TSC without TMA (e.g. at TIP.PGE): the crystal clock runs at a fixed ratio, so the last TMA still
        // tells where the CTC is now
        if (this.haveRef && this.config.ctcRatio) {
          this.ctc = this.refCtc + (t - this.refTsc) / this.config.ctcRatio;
          this.haveCtc = true;
        } else this.haveCtc = false;
        this.tsc = this.anchor = t;
        this.cycles = 0;
        return true;
      }
      case K.Tma: {
        if (!this.anchor || !this.config.ctcRatio) return true;
        // CTC[15:0] at the TSC; the fast counter says how far past that CTC edge the TSC was taken
        this.anchor = this.anchor - p.b;
        // CTC[15:0]: the bits above are unknown, but only differences from this reference are ever used
        const ctc = p.a;
        this.ctc = ctc;
        this.haveCtc = true;
        this.haveRef = true;
        this.refCtc = ctc;
        this.refTsc = this.anchor;
        return true;
      }
      case K.Mtc: {
        this.mtcCount++;
        if (!this.haveCtc || !this.config.ctcRatio) return true;
        const shift = this.config.mtcFreq;
        const unit = 2 ** shift; // CTC ticks per MTC period
        const span = unit * 256; // the 8-bit payload wraps every 256 periods
        const lastPeriods = Math.floor(this.ctc / unit);
        let periods = (lastPeriods - (lastPeriods % 256)) + p.a; // same high bits, new low 8 bits of period
        if (periods < lastPeriods) periods += 256;
        if (periods - lastPeriods > 1) this.lostMtc += periods - lastPeriods - 1;
        const edge = periods * unit;
        const delta = edge - this.ctc;
        if (delta <= 0 || delta > span) return true;
        this.anchor += delta * this.config.ctcRatio;
        this.ctc = edge;
        this.tsc = this.anchor;
        this.cycles = 0;
        return true;
      }
      case K.Cbr:
        this.cbr = p.a;
        return true;
      case K.Cyc: {
        if (!this.anchor || !this.cbr || !this.config.nomFreq) return true;
        this.cycles += p.hi * 0x100000000 + p.lo;
        // core cycles -> TSC ticks at the current core:bus ratio
        let t = this.anchor + Math.floor((this.cycles * this.config.nomFreq) / this.cbr);
        if (this.haveCtc && this.config.ctcRatio) {
          const nextEdge = this.anchor + (2 ** this.config.mtcFreq - (this.ctc % 2 ** this.config.mtcFreq)) * this.config.ctcRatio;
          if (t >= nextEdge) t = nextEdge - 1;
        }
        if (t > this.tsc) this.tsc = t;
        return true;
      }
    }
    return false;
  }
}
