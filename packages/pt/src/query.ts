/**
 * The query layer (libipt's middle layer): packets -> the items a flow decoder asks for, one at a time — a
 * TNT bit, an indirect-branch target, tracing enabled/disabled, an interrupt, lost data — with the full IP
 * reconstructed (last-IP compression) and the time kept (TSC/MTC/CYC). Timing, PSB+, MODE, PAD and power
 * packets are consumed on the way. The whole state can be saved and restored, so a flow decoder can read ahead
 * to choose between possible paths and come back.
 */
import { decodePacket, findPsb } from './decode';
import { PtDecodeError } from './errors';
import { LastIp } from './ip';
import { Packet, PacketKind as K } from './packet';
import { TimeTracker, TimingConfig } from './time';

export enum Item {
  /** end of the stream (or of the part being decoded) */
  End = 0,
  /** one conditional-branch outcome (or a compressed return): `bit` */
  Tnt = 1,
  /** an indirect branch or return went to `ip` (-1: suppressed) */
  Tip = 2,
  /** tracing (re)starts at `ip` */
  Pge = 3,
  /** tracing stops; `ip` is where control went (-1: suppressed) */
  Pgd = 4,
  /** an asynchronous event interrupted execution before the instruction at `ip` (a TIP or PGD follows) */
  FupAsync = 5,
  /** where execution is (PSB+ status, or the resume point after an overflow): no control flow implied */
  FupStatus = 6,
  /** the PT unit lost data */
  Ovf = 7,
  /** bytes that do not decode; the cursor moved on to the next PSB (`offset` is where the bad bytes began) */
  BadPacket = 8,
}

export const ITEM_NAMES = ['end', 'tnt', 'tip', 'pge', 'pgd', 'fup-async', 'fup-status', 'ovf', 'bad-packet'];

/** Numbers in a saved state. */
const STATE_SIZE = 29;

export class QueryDecoder {
  /** The current item (valid after peek()). */
  kind: Item = Item.End;
  ip = -1;
  bit = 0;
  /** Offset of the packet the current item came from (relative to the stream, not to `begin`). */
  offset = 0;
  /** Bytes from `begin` to the end of the packet of the current item. */
  get position(): number {
    return this.pos;
  }

  private readonly p = new Packet();
  private readonly lastIp = new LastIp();
  readonly time: TimeTracker;
  private pos: number;
  private readonly begin: number;
  private readonly end: number;
  private inPsb = false;
  private afterOvf = false;
  private inBlock = false;
  private bipBytes = 8;
  private tntLo = 0;
  private tntHi = 0;
  private tntLeft = 0;
  private tntOffset = 0;
  private have = false;
  packets = 0;

  constructor(
    private readonly bytes: Uint8Array,
    timing: TimingConfig,
    readonly file?: string,
    begin = 0,
    end = bytes.length,
    noSync = false,
  ) {
    this.time = new TimeTracker(timing);
    this.begin = begin;
    this.end = end;
    this.pos = begin;
    if (!noSync) {
      const at = findPsb(bytes, begin, end);
      this.pos = at < 0 ? end : at;
    }
  }

  /** Where decoding actually started (the first PSB, or `begin` with noSync). */
  get tsc(): number {
    return this.time.tsc;
  }

  /** The next item, without consuming it. */
  peek(): Item {
    if (!this.have) this.read();
    return this.kind;
  }

  /** Consumes the current item. */
  consume(): void {
    if (!this.have) this.read();
    this.have = false;
  }

  /** Saves the cursor's whole state (into `out` when given: a reused buffer saves an allocation per read-ahead). */
  save(out: Float64Array = new Float64Array(STATE_SIZE)): Float64Array {
    out[0] = this.pos;
    out[1] = this.inPsb ? 1 : 0;
    out[2] = this.afterOvf ? 1 : 0;
    out[3] = this.inBlock ? 1 : 0;
    out[4] = this.bipBytes;
    out[5] = this.tntLo;
    out[6] = this.tntHi;
    out[7] = this.tntLeft;
    out[8] = this.tntOffset;
    out[9] = this.have ? 1 : 0;
    out[10] = this.kind;
    out[11] = this.ip;
    out[12] = this.bit;
    out[13] = this.offset;
    this.lastIp.save(out, 14);
    this.time.save(out, 17);
    out[28] = this.packets;
    return out;
  }

  restore(s: Float64Array): void {
    this.pos = s[0];
    this.inPsb = s[1] === 1;
    this.afterOvf = s[2] === 1;
    this.inBlock = s[3] === 1;
    this.bipBytes = s[4];
    this.tntLo = s[5];
    this.tntHi = s[6];
    this.tntLeft = s[7];
    this.tntOffset = s[8];
    this.have = s[9] === 1;
    this.kind = s[10] as Item;
    this.ip = s[11];
    this.bit = s[12];
    this.offset = s[13];
    this.lastIp.restore(s, 14);
    this.time.restore(s, 17);
    // packets read ahead and given back are not counted twice
    this.packets = s[28];
  }

  private read(): void {
    this.have = true;
    if (this.tntLeft > 0) {
      const i = --this.tntLeft;
      this.bit = i >= 32 ? (this.tntHi >>> (i - 32)) & 1 : (this.tntLo >>> i) & 1;
      this.kind = Item.Tnt;
      this.offset = this.tntOffset;
      return;
    }
    const p = this.p;
    for (;;) {
      if (this.pos >= this.end) {
        this.kind = Item.End;
        this.offset = this.end;
        return;
      }
      const at = this.pos;
      try {
        this.pos += decodePacket(this.bytes, at, this.end, p, this.inBlock, this.bipBytes);
      } catch (e) {
        if (!(e instanceof PtDecodeError)) throw e;
        // as libipt, look up to 15 bytes back: a PSB whose first bytes were misread as part of the packets
        // before it (it cannot have been decoded: the bad packet would then start past its end)
        const next = findPsb(this.bytes, Math.max(this.begin, at - 15), this.end);
        this.pos = next < 0 ? this.end : next;
        this.lastIp.reset();
        this.inPsb = false;
        this.inBlock = false;
        this.kind = Item.BadPacket;
        this.offset = at;
        return;
      }
      this.packets++;
      if (this.time.update(p)) continue;
      switch (p.kind) {
        case K.Psb:
          this.inPsb = true;
          this.inBlock = false;
          this.lastIp.reset();
          continue;
        case K.PsbEnd:
          this.inPsb = false;
          continue;
        case K.Tnt8:
        case K.Tnt64:
          if (p.bits === 0) continue;
          this.tntLo = p.lo;
          this.tntHi = p.hi;
          this.tntLeft = p.bits - 1;
          this.tntOffset = at;
          this.bit = p.bits - 1 >= 32 ? (p.hi >>> (p.bits - 33)) & 1 : (p.lo >>> (p.bits - 1)) & 1;
          this.kind = Item.Tnt;
          this.offset = at;
          return;
        case K.Tip:
          this.ip = this.lastIp.update(p);
          this.kind = Item.Tip;
          this.offset = at;
          return;
        case K.TipPge:
          this.ip = this.lastIp.update(p);
          this.afterOvf = false;
          this.kind = Item.Pge;
          this.offset = at;
          return;
        case K.TipPgd:
          this.ip = this.lastIp.update(p);
          this.kind = Item.Pgd;
          this.offset = at;
          return;
        case K.Fup:
          this.ip = this.lastIp.update(p);
          this.kind = this.inPsb || this.afterOvf ? Item.FupStatus : Item.FupAsync;
          this.afterOvf = false;
          this.offset = at;
          return;
        case K.Ovf:
          this.afterOvf = true;
          this.tntLeft = 0;
          this.kind = Item.Ovf;
          this.offset = at;
          return;
        case K.Bbp:
          this.inBlock = true;
          this.bipBytes = p.b ? 4 : 8;
          continue;
        case K.Bep:
          this.inBlock = false;
          continue;
        default:
          continue;
      }
    }
  }
}
