/**
 * The flow layer: one PT stream (or one stretch of a per-CPU stream) + the code image -> the blocks that ran.
 *
 * Code-driven, on the query layer (@jportal/pt QueryDecoder): the decoder follows the code from the current IP
 * block by block — direct jumps and calls need no packet; a conditional branch takes the next TNT bit (and,
 * with return compression, so does a return); an indirect branch or return takes the next TIP; a TIP.PGD ends
 * the walk at the branch that left the traced range; an asynchronous FUP stops it inside a block.
 *
 * Bytes the agent captured may be newer than the code that ran (a call site resolved, or re-resolved, before the
 * agent saw the method): at a direct call out of compiled code whose bytes may postdate the moment, the decoder
 * reads ahead (the query layer saves and restores its state) and takes the recorded target only if the packets
 * that follow fit it; otherwise the call-resolution stubs and the method's own static stubs (to the interpreter)
 * are tried. Anything inconsistent (a TNT where the code has an indirect branch, code
 * missing from the image, bytes that changed) becomes a gap: the decoder drops what it cannot place and resumes
 * at the next packet with a full IP, accounting the skipped bytes and the time span. It never gives up on the
 * rest of a stream.
 */
import { Item, QueryDecoder, TimingConfig } from '@jportal/pt';
import { CodeImage, CodeSection, SectionKind } from './image';
import { BLOCK_END_NAMES, BlockEnd } from './x86';
import { ITEM_NAMES } from '@jportal/pt';

// The query layer's items as module constants: `Item` is another package's export, read through a getter at every
// use in the hot loop otherwise.
const BAD_PACKET = Item.BadPacket;
const END = Item.End;
const FUP_ASYNC = Item.FupAsync;
const FUP_STATUS = Item.FupStatus;
const OVF = Item.Ovf;
const PGD = Item.Pgd;
const PGE = Item.Pge;
const TIP = Item.Tip;
const TNT = Item.Tnt;

/** Why a gap happened. */
export const enum GapReason {
  /** OVF: the PT unit lost data */
  Overflow = 0,
  /** the packet bytes do not decode (corrupt or truncated stream): skipped to the next PSB */
  BadPacket = 1,
  /** no code in the image at the IP */
  NoCode = 2,
  /** the packets do not fit the code (stale bytes, a missed patch, a wrong code version) */
  Mismatch = 3,
  /** control left the traced range where no TIP.PGD says so, or a walk ran without end */
  Runaway = 4,
  /** the stream ended inside a walk, or started without a full IP */
  Unsynced = 5,
}
export const GAP_REASONS = ['overflow', 'bad-packet', 'no-code', 'mismatch', 'runaway', 'unsynced'];

/** Receives the flow. Block indexes refer to `image.blocks`. */
export interface FlowSink {
  /** Block `b` ran to its end. */
  block(b: number, tsc: number): void;
  /** The first `insns` instructions of block `b` ran (an interrupt came before the next one). */
  partial(b: number, insns: number, tsc: number): void;
  /** Tracing (re)starts at `ip` (TIP.PGE, or a resync). */
  enable(ip: number, tsc: number): void;
  /** Tracing stops (TIP.PGD: control left the traced range, or an interrupt). */
  disable(tsc: number): void;
  /** A stretch of the stream could not be turned into flow. */
  gap(reason: GapReason, fromOffset: number, toOffset: number, tscBegin: number, tscEnd: number): void;
}

/**
 * Entry points a call out of compiled code may have gone to, by the invoke it stands for: the recorded bytes show
 * an inline cache as the agent copied it (often later, megamorphic: a call to a vtable stub), while earlier the
 * same call site was monomorphic (a direct call to a callee's entry) or unresolved.
 * `nmethod`: index into CodeImage.nmethods of the caller; `ret`: the call's return address; `tsc`: the time.
 */
export type CallCandidates = (nmethod: number, ret: number, tsc: number) => readonly number[];

export interface FlowOptions {
  retcomp: boolean;
  timing: TimingConfig;
  /** Bytes [begin, end) of the stream to decode (default: all). Decoding starts at the first PSB in it. */
  begin?: number;
  end?: number;
  /** Stream name for error messages. */
  file?: string;
  /** Start decoding at `begin` itself rather than at the first PSB (a per-CPU stretch starts with a full IP). */
  noSync?: boolean;
  /**
   * Where execution is when the stream part ends (the next part's first PSB+ FUP, when a stream is split at a
   * PSB): the walk goes on to exactly there, so the parts join without losing or repeating instructions.
   */
  endIp?: number;
  /** Bytes past `end` a read-ahead may look at (the next part's packets), so choices match a whole-stream decode. */
  lookahead?: number;
  /** Offset of `bytes[0]` in the whole stream (when `bytes` is a window of a larger file): gap offsets use it. */
  streamOffset?: number;
}

export interface FlowStats {
  bytes: number;
  packets: number;
  blocks: number;
  insns: number;
  gaps: number;
  /** Bytes of packets that were read but could not be placed in the flow (inside gaps). */
  skippedBytes: number;
  tntBits: number;
  tips: number;
  firstTsc: number;
  lastTsc: number;
  gapReasons: number[];
  /** Blocks walked for a packet that then proved inconsistent: not reported as flow. */
  droppedBlocks: number;
  /** Read-aheads at call sites whose bytes may postdate the moment, and how many chose another target. */
  speculations: number;
  alternatives: number;
  /**
   * Where walks failed: per site (gap reason, the IP the walk stopped at, why) how many gaps began there and the
   * time of the first; the IP is -1 when no walk failed (lost or bad packets). For `jportal decode --gaps`.
   */
  gapSites: GapSite[];
}

export interface GapSite {
  reason: number;
  ip: number;
  why: string;
  count: number;
  firstTsc: number;
}

/** Adds `from`'s gap sites into `into` (the same site counted once, its first time kept). */
export function mergeGapSites(into: GapSite[], from: GapSite[]): void {
  for (const g of from) {
    const have = into.find((x) => x.reason === g.reason && x.ip === g.ip && x.why === g.why);
    if (have) {
      have.count += g.count;
      have.firstTsc = Math.min(have.firstTsc, g.firstTsc);
    } else into.push({ ...g });
  }
}


/** Items a speculative walk must fit before a path is believed. */
const LOOKAHEAD_ITEMS = 32;
/** fits() within fits(): at most this many read-aheads nest. */
const MAX_SPECULATION_DEPTH = 3;
/** olderCompilation(): the target is not compiled code loaded after this moment. */
const NOT_LATE = -2;
/** Futile full searches at one call site after which it is searched again only every FUTILE_RETRY_EVERY times. */
const MAX_FUTILE_SEARCHES = 4;
const FUTILE_RETRY_EVERY = 64;
/** Blocks walked for one item before the walk is declared runaway (a spin loop has no packets). */
const WALK_LIMIT = 1 << 20;
/** The same for a speculative walk: a wrong guess must fail fast. */
const SPECULATION_WALK_LIMIT = 1 << 12;

const enum Step {
  /** went on (ip set, or tracing stopped: ip -1) */
  Ok = 0,
  NoCode = 1,
  Mismatch = 2,
  Runaway = 3,
  /** the stream ended in the middle of a walk */
  End = 4,
}

export class FlowDecoder {
  readonly stats: FlowStats = { bytes: 0, packets: 0, blocks: 0, insns: 0, gaps: 0, skippedBytes: 0, tntBits: 0, tips: 0, firstTsc: 0, lastTsc: 0, gapReasons: [0, 0, 0, 0, 0, 0], droppedBlocks: 0, speculations: 0, alternatives: 0, gapSites: [] };
  /** Gap sites by reason, IP and why (the objects in stats.gapSites). */
  private readonly siteIndex = new Map<string, GapSite>();
  /** Last walk failure, for diagnostics: the IP and why. */
  lastFailure = { ip: -1, why: '' };
  private ip = -1;
  /** The block at `ip` when a conditional branch just chose it (-1: look it up); checked against `ip` before use. */
  private nextBlock = -1;
  private readonly stack = new Float64Array(256);
  private sp = 0;
  private q!: QueryDecoder;
  /** Gap bookkeeping: where the current gap began (-1: in sync). */
  private gapOffset = -1;
  private gapTsc = 0;
  private gapReason = GapReason.Unsynced;
  private base = 0;
  private endIp = -1;
  /** Items from packets at or past this offset belong to the next part (read only by read-aheads). */
  private partEnd = Infinity;
  /** While > 0: a speculative walk (no output, no stats); counts the items it may still consume. */
  private budget = 0;
  private speculating = false;
  /** Blocks of the current stretch not yet handed out (dropped if the stretch proves inconsistent). */
  private readonly pending = new Int32Array(1 << 16);
  private npending = 0;
  /** Call sites whose recorded target proved wrong: section id -> call block start -> chosen alternative. */
  private readonly stubCache = new Map<number, number[]>();
  /** Call blocks whose recorded target was seen to fit (not read ahead again). */
  private readonly confirmed = new Set<number>();
  /** Call or jump block -> its targets in the neighbouring versions of its code (siteTargets). */
  private readonly siteCache = new Map<number, number[]>();
  /** Call block -> the alternative target that last fitted there (tried first next time). */
  private readonly preferred = new Map<number, number>();
  /** Call block -> the target a running search is trying there (what a read-ahead meeting the site again takes). */
  private readonly assumed = new Map<number, number>();
  /** Call block -> full alternative searches in a row that found nothing. */
  private readonly futile = new Map<number, number>();

  /**
   * `callees`, when given, names where a call out of compiled code may have gone by what the code calls: the
   * entry points of compiled methods the invoke at the call's return address can reach (see CallCandidates).
   */
  constructor(
    private readonly image: CodeImage,
    private readonly sink: FlowSink,
    private readonly callees?: CallCandidates,
  ) {}

  /** Decodes a stream (or the part [begin, end) of it). */
  decode(bytes: Uint8Array, opts: FlowOptions): FlowStats {
    const begin = opts.begin ?? 0;
    const end = opts.end ?? bytes.length;
    const q = (this.q = new QueryDecoder(bytes, opts.timing, opts.file, begin, Math.min(bytes.length, end + (opts.lookahead ?? 0)), !!opts.noSync));
    this.partEnd = end;
    this.endIp = opts.endIp ?? -1;
    const st = this.stats;
    st.bytes += end - begin;
    this.base = opts.streamOffset ?? 0;
    this.ip = -1;
    this.sp = 0;
    const retcomp = opts.retcomp;
    let enabled = false;
    for (;;) {
      if (this.ip < 0) {
        // not following code: the next item with a full IP puts the decoder (back) on it
        const k = q.peek();
        if (k === END || q.offset >= this.partEnd) break;
        q.consume();
        switch (k) {
          case TNT:
            st.tntBits++;
            this.startGap(GapReason.Unsynced, q.offset);
            break;
          case TIP:
            st.tips++;
            this.resume(q.ip, q.offset);
            break;
          case PGE:
            enabled = true;
            this.resume(q.ip, q.offset);
            if (this.ip >= 0) this.sink.enable(this.ip, q.tsc);
            break;
          case FUP_STATUS:
          case FUP_ASYNC:
            // PSB+ status or the resume point after lost data; a lone async FUP while lost: a TIP or PGD follows
            if (k === FUP_STATUS) {
              enabled = true;
              this.resume(q.ip, q.offset);
              if (this.ip >= 0) this.sink.enable(this.ip, q.tsc);
            }
            break;
          case PGD:
            if (enabled) this.sink.disable(q.tsc);
            enabled = false;
            this.endGap(q.offset);
            break;
          case OVF:
            this.startGap(GapReason.Overflow, q.offset);
            break;
          case BAD_PACKET:
            this.startGap(GapReason.BadPacket, q.offset);
            break;
        }
        if (!st.firstTsc && q.tsc) st.firstTsc = q.tsc;
        continue;
      }
      const r = this.follow(retcomp);

      if (r === Step.Ok) {
        this.flush();
        if (this.ip < 0) {
          // tracing stopped (PGD): the sink was told in follow()
          enabled = false;
        }
        continue;
      }
      if (r === Step.End) {
        this.flush();
        break;
      }
      this.fail(r, q.offset);
    }
    this.flush();
    if (this.gapOffset >= 0) this.endGap(end);
    st.packets += q.packets;
    st.lastTsc = q.tsc;
    return st;
  }

  /**
   * Follows the code from `this.ip` until one item has been consumed (or tracing stopped). Ok: `this.ip` is
   * where execution goes on (-1 after a disable).
   */
  private follow(retcomp: boolean): Step {
    const image = this.image;
    const B = image.blocks;
    const q = this.q;
    let ip = this.ip;
    // the block at ip, when known from the successor caches (valid at the current time, starting at ip)
    let b = this.nextBlock;
    this.nextBlock = -1;
    if (b >= 0 && B.start[b] !== ip) b = -1;
    const limit = this.speculating ? SPECULATION_WALK_LIMIT : WALK_LIMIT;
    // Until an item is consumed the walk is deterministic: back at an address it has been at, it would go round
    // for ever (a loop without packets, where only bad packets lead; a real spin ends with an interrupt, whose FUP
    // stops the walk in the first round). Brent's cycle detection: compare with the address at steps 1, 2, 4...
    let mark = -1;
    let lap = 1;
    let steps = 0;
    for (let n = 0; n < limit; n++) {
      if (ip === mark) return this.why(Step.Runaway, ip, 'loop without packets');
      if (++steps === lap) {
        mark = ip;
        lap *= 2;
        steps = 0;
      }
      if (b < 0) {
        b = image.blockAt(ip, q.tsc);
        if (b < 0) return this.why(Step.NoCode, ip, 'no code');
      }
      const sec = B.section[b];
      let k = q.peek();
      if (!this.speculating && q.offset >= this.partEnd) k = END;
      // an interrupt inside this block?
      if (k === FUP_ASYNC && q.ip >= ip && q.ip < B.end[b]) {
        const stopAt = q.ip;
        if (stopAt > ip) {
          const addrs = image.blockInstructions(b);
          const c = addrs.indexOf(stopAt);
          if (c < 0) return this.why(Step.Mismatch, ip, 'interrupt inside an instruction');
          if (!this.speculating) {
            this.flush();
            this.stats.insns += c;
            this.sink.partial(b, c, q.tsc);
          }
        }
        q.consume();
        // what the interrupt did: a TIP into traced code, or a disable
        const k2 = q.peek();
        if (k2 === TIP) {
          q.consume();
          this.ip = q.ip >= 0 && image.inRange(q.ip) ? q.ip : -1;
          if (this.ip < 0 && !this.speculating) this.sink.disable(q.tsc);
          return this.spend();
        }
        if (k2 === PGD) {
          q.consume();
          this.ip = -1;
          if (!this.speculating) this.sink.disable(q.tsc);
          return this.spend();
        }
        this.ip = stopAt;
        return this.spend();
      }
      if (k === OVF || k === BAD_PACKET || k === PGE || k === FUP_STATUS) {
        if (k === FUP_STATUS) {
          // PSB+ in the middle of straight-line code: the status FUP says where we are — no flow
          q.consume();
          if (!image.blockValidAt(b, q.tsc)) b = -1;
          mark = -1;
          lap = 1;
          steps = 0;
          continue;
        }
        return this.why(Step.Mismatch, ip, `${k === OVF ? 'overflow' : k === BAD_PACKET ? 'bad packet' : 'enable'} while following code`);
      }
      const kind = B.kind[b];
      if (k === END) {
        const endIp = this.endIp;
        if (endIp < 0 || this.speculating) return Step.End;
        if (endIp >= ip && endIp < B.end[b]) {
          if (endIp > ip) {
            const addrs = image.blockInstructions(b);
            const c = addrs.indexOf(endIp);
            this.flush();
            if (c > 0) {
              this.stats.insns += c;
              this.sink.partial(b, c, q.tsc);
            }
          }
          this.endIp = -1;
          return Step.End;
        }
        // straight-line code up to the split point needs no packet
        if (kind !== BlockEnd.Next && kind !== BlockEnd.Jump && kind !== BlockEnd.Call) return Step.End;
      }
      switch (kind) {
        case BlockEnd.Next:
          this.emit(b);
          ip = B.end[b];
          b = image.blockAfter(b, false, q.tsc);
          continue;
        case BlockEnd.Jump:
        case BlockEnd.Call: {
          let target = B.target[b];
          const s = image.sections[sec];
          if (kind === BlockEnd.Jump && s.skipAt === B.last[b] && k !== PGD) {
            // a not-entrant entry that was not yet patched when this ran: the original first instruction (the
            // block may begin before the entry: the unverified entry falls through into it)
            this.emit(b);
            ip = s.skipTo!;
            b = -1;
            continue;
          }
          const resolved = kind === BlockEnd.Call && this.speculating ? (this.assumed.get(b) ?? (image.resolveStubs.has(target) ? this.preferred.get(b) : undefined)) : undefined;
          if (resolved !== undefined && !image.resolveStubs.has(resolved)) {
            // inside a read-ahead, a call site that the search this read-ahead belongs to is trying (it goes where
            // it is assumed to go, whatever the image says: the image's version of it is what is in doubt), or a
            // call to a resolution stub at a site already seen resolved: a site is resolved once, and its patch
            // may be polled late or never (cleaned back when its target went not-entrant), so the image still
            // shows the stub. A recursive callee meets its own call sites at every level, which nested read-aheads
            // cannot follow past MAX_SPECULATION_DEPTH
            target = resolved;
          } else if (kind === BlockEnd.Call && s.kind === SectionKind.Nmethod && this.specDepth < MAX_SPECULATION_DEPTH && !this.confirmed.has(b) && (this.mayBeStale(s, target, q.tsc) || image.dispatchStubs.has(target) || image.resolveStubs.has(target) || (s.settledFrom > q.tsc && this.siteVaries(sec, b, target)))) {
            const chosen = this.chooseCallTarget(sec, b, target, retcomp);
            // call sites only move forward (unresolved -> resolved -> newer code): once the recorded target fits,
            // it fits from then on — when the read-ahead proved it, not when tracing merely stopped (a call that
            // went into the runtime to be resolved fits any target that can leave the traced range)
            if (chosen === target && this.lastFitStrong && !this.speculating) this.confirmed.add(b);
            target = chosen;
          } else if (kind === BlockEnd.Jump && s.kind === SectionKind.Blob && (target < s.begin || target >= s.end) && this.specDepth < MAX_SPECULATION_DEPTH && !this.confirmed.has(b)) {
            // a stub's jump into compiled code (an inline-cache stub): the stub is read by polling, so its newest
            // bytes may name a compilation installed after this moment, while an older one of the method ran
            const older = this.olderCompilation(target, -1, retcomp);
            const varies = older < 0 && this.siteVaries(sec, b, target);
            if (older >= 0) target = older;
            // the stub changed lately (found by polling): the jump it held before may still have been there
            else if (varies && s.settledFrom > q.tsc) target = this.chooseSiteTarget(sec, b, target, retcomp);
            // (the target is code already loaded, or none: from now on this block's jump is what it says)
            else if (older === NOT_LATE && (!varies || s.settledFrom <= q.tsc) && !this.speculating) this.confirmed.add(b);
          }
          this.emit(b);
          if (kind === BlockEnd.Call) this.push(B.end[b]);
          if (!image.inRange(target)) {
            // leaving the traced range: a TIP.PGD must say so
            if (k === PGD && (q.ip < 0 || q.ip === target)) {
              q.consume();
              this.ip = -1;
              if (!this.speculating) this.sink.disable(q.tsc);
              return this.spend();
            }
            return this.why(Step.Runaway, ip, `direct branch to 0x${target.toString(16)} outside the traced range, next item ${ITEM_NAMES[k]}`);
          }
          b = target === B.target[b] ? image.blockAfter(b, true, q.tsc) : -1;
          ip = target;
          continue;
        }
        case BlockEnd.Cond:
          if (k === TNT) {
            q.consume();
            this.stats.tntBits += this.speculating ? 0 : 1;
            this.emit(b);
            this.ip = q.bit ? B.target[b] : B.end[b];
            this.nextBlock = image.blockAfter(b, q.bit === 1, q.tsc);
            return this.spend();
          }
          if (k === PGD && q.ip >= 0 && q.ip === B.target[b]) {
            q.consume();
            this.emit(b);
            this.ip = -1;
            if (!this.speculating) this.sink.disable(q.tsc);
            return this.spend();
          }
          return this.why(Step.Mismatch, ip, `conditional branch, next item ${ITEM_NAMES[k]}`);
        case BlockEnd.IndirectJump:
        case BlockEnd.IndirectCall:
          if (k === TIP || k === PGD) {
            q.consume();
            this.emit(b);
            if (kind === BlockEnd.IndirectCall) this.push(B.end[b]);
            if (!this.speculating) this.stats.tips++;
            this.ip = k === TIP && q.ip >= 0 && image.inRange(q.ip) ? q.ip : -1;
            if (this.ip < 0 && !this.speculating) this.sink.disable(q.tsc);
            return this.spend();
          }
          return this.why(Step.Mismatch, ip, `indirect branch, next item ${ITEM_NAMES[k]}`);
        case BlockEnd.Return:
          if (k === TNT) {
            // return compression: a taken bit for a return to where its call pointed
            if (!retcomp || !q.bit || this.sp === 0) return this.why(Step.Mismatch, ip, 'return, next item a TNT bit');
            q.consume();
            this.emit(b);
            this.ip = this.stack[--this.sp & 255];
            return this.spend();
          }
          if (k === TIP || k === PGD) {
            q.consume();
            this.emit(b);
            if (this.sp > 0) this.sp--;
            this.ip = k === TIP && q.ip >= 0 && image.inRange(q.ip) ? q.ip : -1;
            if (this.ip < 0 && !this.speculating) this.sink.disable(q.tsc);
            return this.spend();
          }
          return this.why(Step.Mismatch, ip, `return, next item ${ITEM_NAMES[k]}`);
        default:
          // Stop / Truncated: only an interrupt (FUP, handled above) or a disable can explain going on
          if (k === PGD) {
            q.consume();
            this.ip = -1;
            if (!this.speculating) this.sink.disable(q.tsc);
            return this.spend();
          }
          return this.why(Step.Mismatch, ip, `instruction that cannot go on (${BLOCK_END_NAMES[kind]})`);
      }
    }
    return this.why(Step.Runaway, ip, 'walked too far without a packet');
  }

  /** One item consumed: in a speculative walk, counts down the budget. */
  private spend(): Step {
    if (this.speculating) this.budget--;
    return Step.Ok;
  }

  private why(r: Step, ip: number, why: string): Step {
    if (!this.speculating) this.lastFailure = { ip, why };
    return r;
  }

  /**
   * True when the call's target in these bytes may not be what ran at time `tsc`: the caller's bytes were
   * captured after that time, or the target is compiled code that was only recorded later.
   */
  private mayBeStale(caller: { nmethod: number; validTo: number }, target: number, tsc: number): boolean {
    const image = this.image;
    const nm = image.nmethods[caller.nmethod];
    if (nm && tsc < nm.loadTsc) return true;
    const t = image.find(target, tsc);
    if (t < 0) return false;
    const ts = image.sections[t];
    if (ts.kind === SectionKind.Nmethod && tsc < image.nmethods[ts.nmethod].loadTsc) return true;
    return false;
  }

  /**
   * When `target` enters a compiled method installed after this moment (its load record is later: records are
   * posted late, stubs and call sites are read by polling): the entry of an older compilation of the same method,
   * live now, that the next items fit; NOT_LATE when the target is not compiled code loaded later than now, -1
   * when no older compilation fits. `ret`: the return address a call pushes (-1 for a jump).
   */
  private olderCompilation(target: number, ret: number, retcomp: boolean): number {
    const image = this.image;
    const tsc = this.q.tsc;
    const ts = image.find(target, tsc);
    const tnm = ts >= 0 && image.sections[ts].kind === SectionKind.Nmethod ? image.nmethods[image.sections[ts].nmethod] : undefined;
    if (!tnm || tsc >= tnm.loadTsc) return NOT_LATE;
    const older = image.nmethodsOf(tnm.method).filter((o) => o !== tnm && o.loadTsc <= tsc && o.unloadTsc > tsc && o.osrBci < 0);
    older.sort((x, y) => y.loadTsc - x.loadTsc);
    for (const o of older) {
      const alt = target === tnm.verifiedEntry ? o.verifiedEntry : target === tnm.entry ? o.entry : -1;
      if (alt > 0 && this.fits(alt, ret, retcomp)) {
        this.stats.alternatives++;
        return alt;
      }
    }
    return -1;
  }

  /**
   * Chooses where a call out of compiled code went: the recorded target if the next items fit it, else the
   * first alternative that fits (call-resolution stubs, then the caller's static stubs to the interpreter).
   */
  private chooseCallTarget(sec: number, b: number, target: number, retcomp: boolean): number {
    const image = this.image;
    const ret = image.blocks.end[b];
    // the target may be a compiled method installed after this moment: an older compilation of the same method
    // (entered at the same entry point) is then the likelier callee
    const older = this.olderCompilation(target, ret, retcomp);
    if (older >= 0) return older;
    const pref = this.preferred.get(b);
    if (pref !== undefined && pref !== target && this.fitsAt(b, pref, ret, retcomp)) {
      this.stats.alternatives++;
      return pref;
    }
    if (this.fitsAt(b, target, ret, retcomp)) return target;
    if (this.speculating) {
      // inside a read-ahead only what this call site was seen to take (a full search nested in every candidate of
      // the outer search costs more than the few gaps it saves), except at a call to a resolution stub: a
      // recursive callee read ahead meets its own call sites, which the image may hold unresolved throughout (a
      // site resolved to the method's own code and cleaned back once that code went not-entrant: no poll saw it
      // resolved), so without the invoke's compiled callees there no candidate of the outer search fits
      const nmIndex = image.sections[sec].nmethod;
      if (image.resolveStubs.has(target) && this.callees && nmIndex >= 0) {
        for (const alt of this.callees(nmIndex, ret, this.q.tsc)) if (alt !== target && alt !== pref && this.fitsAt(b, alt, ret, retcomp)) return alt;
      }
      return target;
    }
    // a site where the full search found nothing several times running: what goes wrong there is not a stale
    // target (lost data, a wrong path before it); search again only now and then
    const misses = this.futile.get(b) ?? 0;
    if (misses >= MAX_FUTILE_SEARCHES) {
      this.futile.set(b, misses + 1);
      if ((misses - MAX_FUTILE_SEARCHES) % FUTILE_RETRY_EVERY !== FUTILE_RETRY_EVERY - 1) return target;
    }
    const found = this.searchAlternatives(sec, b, target, pref, ret, retcomp);
    if (found < 0) {
      this.futile.set(b, misses + 1);
      return target;
    }
    this.futile.delete(b);
    this.stats.alternatives++;
    this.preferred.set(b, found);
    return found;
  }

  /** The first alternative target of a call (in section sec) that the next items fit, or -1 (see chooseCallTarget). */
  private searchAlternatives(sec: number, b: number, target: number, pref: number | undefined, ret: number, retcomp: boolean): number {
    const image = this.image;
    const tsc = this.q.tsc;
    // what the same call held in the other versions of this code: a patch is seen by polling, so near a version
    // switch either side may have been in effect
    for (const alt of this.siteTargets(sec, b)) {
      if (alt !== target && alt !== pref && this.fitsAt(b, alt, ret, retcomp)) return alt;
    }
    for (const alt of this.alternatives(sec)) {
      if (alt !== target && alt !== pref && this.fitsAt(b, alt, ret, retcomp)) return alt;
    }
    // what the invoke can call: a monomorphic inline cache went straight to a compiled callee's entry
    const nmIndex = image.sections[sec].nmethod;
    if (this.callees && nmIndex >= 0) {
      for (const alt of this.callees(nmIndex, ret, tsc)) {
        if (alt !== target && alt !== pref && this.fitsAt(b, alt, ret, retcomp)) return alt;
      }
    }
    // a monomorphic inline cache to an interpreted method: the unverified entry of the callee's c2i adapter
    if (nmIndex >= 0) {
      for (const alt of image.c2iUnverifiedEntries) {
        if (alt !== target && alt !== pref && this.fitsAt(b, alt, ret, retcomp)) return alt;
      }
    }
    return -1;
  }

  /** fits(), with call block b taken as going to `target` wherever the read-ahead meets it again (recursion). */
  private fitsAt(b: number, target: number, ret: number, retcomp: boolean): boolean {
    const before = this.assumed.get(b);
    this.assumed.set(b, target);
    const ok = this.fits(target, ret, retcomp);
    if (before === undefined) this.assumed.delete(b);
    else this.assumed.set(b, before);
    return ok;
  }

  /** Whether the last fits() that succeeded consumed its whole read-ahead budget (not ended by tracing stopping). */
  private lastFitStrong = false;
  /** How many fits() are running (a read-ahead may choose a call target by reading ahead itself). */
  private specDepth = 0;
  private readonly savedStates: Float64Array[] = [];
  private readonly savedStacks: Float64Array[] = [];

  /** Reads ahead from a call to `target` (returning to `ret`): do the next items fit? State is restored. */
  private fits(target: number, ret: number, retcomp: boolean): boolean {
    const q = this.q;
    // per nesting depth, buffers reused for the saved state (a read-ahead is taken at most call sites)
    const depth = this.specDepth;
    const saved = this.savedStates[depth] ? q.save(this.savedStates[depth]) : (this.savedStates[depth] = q.save());
    const ip0 = this.ip;
    const nextBlock0 = this.nextBlock;
    const sp0 = this.sp;
    const stackCopy = (this.savedStacks[depth] ??= new Float64Array(256));
    const nstack = Math.min(this.sp, 256);
    stackCopy.set(nstack === 256 ? this.stack : this.stack.subarray(0, nstack));
    const npending0 = this.npending;
    const outerSpeculating = this.speculating;
    const outerBudget = this.budget;
    this.specDepth++;
    this.speculating = true;
    this.budget = LOOKAHEAD_ITEMS;
    this.stats.speculations++;
    let ok = true;
    if (ret >= 0) this.push(ret);
    this.ip = target;
    if (!this.image.inRange(target)) {
      ok = q.peek() === PGD;
    } else {
      while (this.budget > 0) {
        const r = this.follow(retcomp);
        if (r === Step.End) break;
        if (r !== Step.Ok) {
          ok = false;
          break;
        }
        if (this.ip < 0) break; // tracing stopped consistently
      }
    }
    this.lastFitStrong = ok && this.budget <= 0;
    this.specDepth--;
    this.speculating = outerSpeculating;
    this.budget = outerBudget;
    q.restore(saved);
    this.ip = ip0;
    this.nextBlock = nextBlock0;
    this.sp = sp0;
    this.stack.set(nstack === 256 ? stackCopy : stackCopy.subarray(0, nstack));
    this.npending = npending0;
    return ok;
  }

  /**
   * The targets of the direct call or jump ending block `b` (of section `sec`) in the neighbouring versions of the
   * same code: the versions before it back to the last one that was in effect for a while (patches seen by one
   * scan share a switch time), then those after it likewise; nearest first. Cached per block.
   */
  private siteTargets(sec: number, b: number): number[] {
    let out = this.siteCache.get(b);
    if (out) return out;
    out = [];
    const image = this.image;
    const S = image.sections;
    const s = S[sec];
    const at = image.blocks.last[b] - s.begin;
    const op = s.bytes[at];
    const same = (o: CodeSection | undefined): o is CodeSection => !!o && o.begin === s.begin && o.nmethod === s.nmethod && o.kind === s.kind;
    // (versions of one piece of code are added one after another: their ids are consecutive)
    for (const dir of [-1, 1]) {
      for (let d = 1; d < 64; d++) {
        const o = S[sec + dir * d];
        if (!same(o)) break;
        if (at + 5 <= o.bytes.length && o.bytes[at] === op && (op === 0xe8 || op === 0xe9)) {
          const rel = o.bytes[at + 1] | (o.bytes[at + 2] << 8) | (o.bytes[at + 3] << 16) | (o.bytes[at + 4] << 24);
          const t = o.begin + at + 5 + rel;
          if (!out.includes(t)) out.push(t);
        }
        if (o.validTo > o.validFrom) break;
      }
    }
    this.siteCache.set(b, out);
    return out;
  }

  /** Whether the call or jump ending block `b` went elsewhere in a neighbouring version of its code. */
  private siteVaries(sec: number, b: number, target: number): boolean {
    const l = this.siteTargets(sec, b);
    for (let i = 0; i < l.length; i++) if (l[i] !== target) return true;
    return false;
  }

  /** A stub's jump that changed lately: the recorded target if the next items fit it, else a neighbouring version's. */
  private chooseSiteTarget(sec: number, b: number, target: number, retcomp: boolean): number {
    if (this.fits(target, -1, retcomp)) return target;
    for (const alt of this.siteTargets(sec, b)) {
      if (alt !== target && this.fits(alt, -1, retcomp)) {
        this.stats.alternatives++;
        return alt;
      }
    }
    return target;
  }

  /** Where a call out of compiled code may have gone instead: resolution stubs, then the caller's static stubs. */
  private alternatives(sec: number): number[] {
    let l = this.stubCache.get(sec);
    if (l) return l;
    const image = this.image;
    l = [...new Set(image.resolveExits.values())];
    const s = image.sections[sec];
    const nm = image.nmethods[s.nmethod];
    // static stubs (to the interpreter): movabs $Method*, %rbx (48 bb imm64); jmp rel32 (e9) — in the stub section
    if (nm) {
      const from = Math.max(0, nm.stubBegin - s.begin);
      const bytes = s.bytes;
      for (let i = from; i + 15 <= bytes.length; i++) {
        if (bytes[i] === 0x48 && bytes[i + 1] === 0xbb && bytes[i + 10] === 0xe9) l.push(s.begin + i);
      }
    }
    this.stubCache.set(sec, l);
    return l;
  }

  /** Continues at `ip` (a full IP from a packet); closes an open gap. */
  private resume(ip: number, offset: number): void {
    if (ip < 0 || !this.image.inRange(ip)) {
      this.ip = -1;
      return;
    }
    this.ip = ip;
    this.sp = 0;
    if (this.gapOffset >= 0) this.endGap(offset);
  }

  private fail(r: Step, offset: number): void {
    this.stats.droppedBlocks += this.npending;
    this.npending = 0;
    // the walk stopped because the packets it needed were lost: the next item is the PT unit's OVF
    const lost = this.q.peek() === OVF;
    this.startGap(lost ? GapReason.Overflow : r === Step.NoCode ? GapReason.NoCode : r === Step.Runaway ? GapReason.Runaway : GapReason.Mismatch, offset);
    this.ip = -1;
    this.sp = 0;
  }

  private startGap(reason: GapReason, offset: number): void {
    if (this.gapOffset >= 0) return;
    this.gapOffset = offset;
    this.gapTsc = this.q.tsc;
    this.gapReason = reason;
    // (a failed walk says where and why; a gap of lost or bad packets has no such place)
    const f = this.lastFailure;
    const ip = reason === GapReason.Overflow || reason === GapReason.BadPacket || reason === GapReason.Unsynced ? -1 : f.ip;
    const why = ip < 0 ? GAP_REASONS[reason] : f.why;
    const key = `${reason}:${ip}:${why}`;
    let site = this.siteIndex.get(key);
    if (!site) {
      this.siteIndex.set(key, (site = { reason, ip, why, count: 0, firstTsc: this.q.tsc }));
      this.stats.gapSites.push(site);
    }
    site.count++;
    this.lastFailure = { ip: -1, why: '' };
  }

  private endGap(offset: number): void {
    if (this.gapOffset < 0) return;
    this.stats.gaps++;
    this.stats.gapReasons[this.gapReason]++;
    this.stats.skippedBytes += Math.max(0, offset - this.gapOffset);
    this.sink.gap(this.gapReason, this.base + this.gapOffset, this.base + offset, this.gapTsc, this.q.tsc);
    this.gapOffset = -1;
  }

  private emit(b: number): void {
    if (this.speculating) return;
    if (this.npending === this.pending.length) this.flush();
    this.pending[this.npending++] = b;
  }

  private flush(): void {
    const B = this.image.blocks;
    const tsc = this.q.tsc;
    for (let i = 0; i < this.npending; i++) {
      const b = this.pending[i];
      this.stats.blocks++;
      this.stats.insns += B.insns[b];
      this.sink.block(b, tsc);
    }
    this.npending = 0;
  }

  private push(ret: number): void {
    // a ring: a deeper stack keeps only the newest 256 (`sp` goes on counting, so pops stay in step)
    this.stack[this.sp++ & 255] = ret;
  }
}
