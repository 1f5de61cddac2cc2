/**
 * Fuzzing the flow layer: FlowDecoder over a small hand-made code image, fed random PT, random packets aimed at
 * the code, and valid streams from a simulator of that code (with their exact instruction trace) that are then
 * damaged — bit flips, set bytes, inserted and deleted bytes, truncation.
 *
 * Claims checked: decode() returns (nothing thrown); its stats are sane (gaps as reported to the sink, no NaN,
 * instructions bounded by the items the input can hold times the longest walk the image allows without a
 * packet); each run ends within a time bound; a clean stream decodes to exactly what ran; a damaged stream
 * decodes everything before the damage exactly as the clean one and resumes after it; parts split at PSBs join
 * to the whole decode; memory stays flat over thousands of decodes.
 *
 * Reproducible: every case has its own seed, printed when it fails. Rerun one case with
 *   JPORTAL_FUZZ_CASE=<suite>:<seed> npx jest test/fuzz.test.ts
 * Other seeds: JPORTAL_FUZZ_SEED=<n>; more iterations: JPORTAL_FUZZ_SCALE=<factor>.
 */
import { Packet, PacketDecoder, QueryDecoder, TimingConfig } from '@jportal/pt';
import { BlockEnd, CodeImage, FlowDecoder, FlowSink, FlowStats, GAP_REASONS, SectionKind, splitAtPsb } from '../src';
import { BASE_SEED, check, fuzz as fuzzWith, hash, heapAfterGc, Rng, setCase } from '../../pt/test/fuzz-harness';

jest.setTimeout(120_000);

// ---------------------------------------------------------------------------------------------------------------
// seeded randomness and the case runner

// globals are slow to reach from test code (jest runs it in a vm context): hot paths use local copies
const floor = Math.floor;
const isInteger = Number.isInteger;
const isFinite = Number.isFinite;
const now = () => performance.now();

/**
 * Seeds that failed before a fix (each fails with just that fix undone; they run first, whatever the base seed):
 *  - clean 2365495236: with return compression, calls nested deeper than 256 — the return stack stopped
 *    counting at 256 and wrote every deeper call into one slot, so returns went to the wrong call sites.
 *  - random 4225849603: a TIP into a loop without packets (jmp to itself) walked 2^20 blocks per item, handing
 *    out 64K-block chunks of that walk as flow before declaring it runaway: 2.9 M instructions from 435
 *    bytes, ~0.1 s per such packet (a hang on inputs full of them).
 */
const REGRESSIONS: Record<string, number[]> = {
  clean: [2365495236],
  random: [4225849603],
};

/** Runs a suite's cases (its regression seeds first): fuzz-harness.ts. */
const fuzz = (suite: string, iterations: number, body: (r: Rng, i: number) => void): number => fuzzWith(suite, iterations, body, REGRESSIONS);


// ---------------------------------------------------------------------------------------------------------------
// the code image

/*
 * A (0x1000, a stub, as in flow.test.ts):
 *   0x1000 cmp $0,%eax; 0x1003 je 0x100a; 0x1005 call 0x1010; 0x100a jmp *%rax; 0x100c nop x4; 0x1010 inc %ecx;
 *   0x1012 ret
 * B (0x2000, a stub): a recursive function with two call sites
 *   0x2000 je 0x200f; 0x2002 jne 0x200a; 0x2004 call 0x2000; 0x2009 ret; 0x200a call 0x2000; 0x200f ret
 * C (0x3000, a compiled method loaded "later" than any time in the trace, so its direct call is read ahead):
 *   0x3000 call 0x3010; 0x3005 jmp *%rax; 0x3007 nop x9; 0x3010 ret; stub section at 0x3020: a static stub
 *   (movabs $imm64,%rbx; jmp 0x1010)
 * D (0x4000): loops without packets, which only damaged or random packets lead into (a real spin ends with an
 *   interrupt, whose FUP stops the walk in the loop's first round)
 *   0x4000 jmp 0x4000; 0x4002 nop; 0x4003 jmp 0x4002; 0x4005 call 0x4000; 0x400a ret; 0x400b call 0x400b; 0x4010 ret
 */
const CODE_A = [0x83, 0xf8, 0x00, 0x74, 0x05, 0xe8, 0x06, 0x00, 0x00, 0x00, 0xff, 0xe0, 0x90, 0x90, 0x90, 0x90, 0xff, 0xc1, 0xc3];
const CODE_B = [0x74, 0x0d, 0x75, 0x06, 0xe8, 0xf7, 0xff, 0xff, 0xff, 0xc3, 0xe8, 0xf1, 0xff, 0xff, 0xff, 0xc3];
const CODE_C = [
  0xe8, 0x0b, 0x00, 0x00, 0x00, 0xff, 0xe0, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
  // 0x3020: movabs $0x1122334455667788,%rbx; jmp 0x1010
  0x48, 0xbb, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xe9, 0xe1, 0xdf, 0xff, 0xff,
];
const CODE_D = [0xeb, 0xfe, 0x90, 0xeb, 0xfd, 0xe8, 0xf6, 0xff, 0xff, 0xff, 0xc3, 0xe8, 0xfb, 0xff, 0xff, 0xff, 0xc3];
const LOADED_LATER = 2 ** 52;

function makeImage(withJit: boolean): CodeImage {
  const img = new CodeImage();
  const blob = (begin: number, code: number[], name: string) =>
    img.addSection({ kind: SectionKind.Blob, begin, end: begin + code.length, bytes: Uint8Array.from(code), name, validFrom: 0, validTo: Infinity, nmethod: -1, version: 0 });
  blob(0x1000, CODE_A, 'A');
  blob(0x2000, CODE_B, 'B');
  blob(0x4000, CODE_D, 'D');
  if (withJit) {
    img.nmethods.push({
      method: 1, codeBegin: 0x3000, codeEnd: 0x3020, entry: 0x3000, verifiedEntry: 0x3000, osrEntry: -1, osrBci: -1, stubBegin: 0x3020, level: 4,
      compileId: 1, loadTsc: LOADED_LATER, unloadTsc: Infinity, pcs: new Float64Array(0), frameStart: new Uint32Array(1), frames: new Int32Array(0),
    });
    img.addSection({ kind: SectionKind.Nmethod, begin: 0x3000, end: 0x3000 + CODE_C.length, bytes: Uint8Array.from(CODE_C), name: 'C', validFrom: 0, validTo: Infinity, nmethod: 0, version: 0 });
  }
  img.ranges = [{ lo: 0x1000, hi: 0x5000 }];
  return img;
}

/**
 * The most instructions the decoder can walk from any address without a packet (following fall-throughs, direct
 * jumps and calls, each block once: a walk that comes round a loop without packets can never be consistent):
 * with the number of items the input can hold, this bounds the instructions a decode reports.
 */
function longestWalk(img: CodeImage): number {
  const B = img.blocks;
  let worst = 0;
  for (const s of img.sections) {
    for (let a = s.begin; a < s.end; a++) {
      let ip = a;
      let n = 0;
      const seen = new Set<number>();
      for (;;) {
        const sec = img.find(ip, 0);
        if (sec < 0) break;
        if (seen.has(ip)) break;
        seen.add(ip);
        const b = img.block(sec, ip);
        n += B.insns[b];
        const k = B.kind[b];
        if (k === BlockEnd.Next) ip = B.end[b];
        else if ((k === BlockEnd.Jump || k === BlockEnd.Call) && img.inRange(B.target[b])) ip = B.target[b];
        else break;
      }
      worst = Math.max(worst, n);
    }
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------------------------
// a simulator of the image's code that writes the PT a CPU would, and the exact instruction trace

const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
const PSBEND = [0x02, 0x23];
const TIP = 0x0d, PGE = 0x11, PGD = 0x01, FUP = 0x1d;
const TIMING: TimingConfig = { ctcRatio: 2, mtcFreq: 3, nomFreq: 0 };
const IP_BYTES = [0, 2, 4, 6, 6, -1, 8];
/** 256 ** i */
const BYTE = Array.from({ length: 8 }, (_, i) => 256 ** i);
/** The low `n` bytes of `v` (< 2^53), little-endian, onto `out`. */
function le(out: number[], v: number, n: number): void {
  for (let i = 0; i < n; i++) out.push(floor(v / BYTE[i]) & 0xff);
}

interface Simulated {
  bytes: Uint8Array;
  /** Every instruction that ran, in order (hex addresses). */
  truth: string[];
  /** Offsets of the PSBs. */
  psbs: number[];
}

/**
 * Runs the image's code with random choices (branch outcomes, indirect targets, recursion depth, interrupts,
 * leaving and re-entering the traced range) and writes what Intel PT would: TNT bits (TNT-8 or TNT-64), TIPs
 * with last-IP compression, returns compressed to a taken bit when `retcomp` (a 64-deep return stack, cleared
 * at PSB and at enables, as the decoder assumes), FUP+TIP.PGD for interrupts, a PSB+ (TSC, TMA, CBR, MODE, FUP
 * status) about every `period` bytes, MTC and CYC timing packets. The stream ends with a TIP.PGD.
 */
function simulate(r: Rng, opts: { bytes: number; period: number; retcomp: boolean; jit: boolean; deep: boolean; interrupts?: number }): Simulated {
  const out: number[] = [];
  const truth: string[] = [];
  const psbs: number[] = [];
  let lastIp = -1; // -1: unknown (after a PSB)
  let tnt: number[] = [];
  let tsc = 1_000_000 + r.int(1_000_000);
  let sincePsb = 0;
  const stack: number[] = [];
  let hw: number[] = [];
  let depthTarget = 0;
  let depth = 0;

  const emit = (b: number[]) => {
    for (const x of b) out.push(x);
  };
  const flushTnt = () => {
    let at = 0;
    while (at < tnt.length) {
      const left = tnt.length - at;
      if (left > 6 && r.bool(0.5)) {
        const n = Math.min(left, r.range(7, 47));
        let v = 1;
        for (let i = 0; i < n; i++) v = v * 2 + tnt[at++];
        out.push(0x02, 0xa3);
        le(out, v, 6);
      } else {
        const n = Math.min(left, r.range(1, 6));
        let v = 1;
        for (let i = 0; i < n; i++) v = (v << 1) | tnt[at++];
        out.push(v << 1);
      }
    }
    tnt = [];
  };
  const ipPacket = (low5: number, ip: number) => {
    let ipc: number;
    if (lastIp >= 0 && floor(ip / 65536) === floor(lastIp / 65536) && r.bool(0.6)) ipc = 1;
    else if (lastIp >= 0 && floor(ip / 4294967296) === floor(lastIp / 4294967296) && r.bool(0.5)) ipc = 2;
    else ipc = lastIp >= 0 ? r.pick([3, 4, 6]) : r.pick([3, 6]);
    out.push(low5 | (ipc << 5));
    le(out, ip, IP_BYTES[ipc]);
    lastIp = ip;
  };
  const timing = () => {
    if (r.bool(0.1)) {
      tsc += r.range(1, 5000);
      out.push(0x59, floor(tsc / TIMING.ctcRatio / 2 ** TIMING.mtcFreq) & 0xff);
    }
    if (r.bool(0.1)) emit([0x03 | (r.int(32) << 3)]); // CYC (ignored without nomFreq, but parsed)
    if (r.bool(0.02)) emit([0x00]); // PAD
  };
  const psb = (enabled: boolean, ip: number) => {
    flushTnt();
    psbs.push(out.length);
    emit(PSB);
    tsc += r.range(100, 100_000);
    out.push(0x19);
    le(out, tsc, 7);
    const ctc = floor(tsc / TIMING.ctcRatio) & 0xffff;
    emit([0x02, 0x73, ctc & 0xff, ctc >> 8, 0, tsc % TIMING.ctcRatio, 0]);
    emit([0x02, 0x03, 30, 0]); // CBR
    emit([0x99, 0x01]); // MODE.Exec 64-bit
    lastIp = -1;
    if (enabled) ipPacket(FUP, ip);
    emit(PSBEND);
    hw = [];
    sincePsb = 0;
  };
  const leave = () => {
    // to code outside the traced range: TIP.PGD, suppressed or with the target
    flushTnt();
    if (r.bool()) emit([PGD]);
    else ipPacket(PGD, 0x7000_0000 + r.int(0x10000));
    stack.length = 0;
    hw = [];
    depth = 0;
  };
  const entries = opts.jit ? [0x1000, 0x100c, 0x1010, 0x2000, 0x3000] : [0x1000, 0x100c, 0x1010, 0x2000];
  const enter = (ip: number) => {
    flushTnt();
    timing();
    if (sincePsb >= opts.period) psb(false, 0);
    if (r.bool(0.2)) {
      tsc += r.range(1, 1000);
      out.push(0x19);
      le(out, tsc, 7);
    }
    ipPacket(PGE, ip);
    hw = [];
    if (ip === 0x2000) depthTarget = opts.deep && r.bool(0.5) ? r.range(200, 400) : r.int(12);
  };
  /** An indirect branch or return to `ip` (from the code's point of view): a TIP. */
  const indirect = (ip: number) => {
    flushTnt();
    ipPacket(TIP, ip);
    if (ip === 0x2000 && depth === 0) depthTarget = opts.deep && r.bool(0.5) ? r.range(200, 400) : r.int(12);
  };
  const call = (ret: number) => {
    stack.push(ret);
    hw.push(ret);
    if (hw.length > 64) hw.shift();
  };

  psb(false, 0);
  let ip = r.pick(entries);
  enter(ip);
  for (;;) {
    const before = out.length;
    if (sincePsb >= opts.period) psb(true, ip);
    if (r.bool(opts.interrupts ?? 0.01)) {
      // an interrupt before the instruction at ip: FUP, TIP.PGD; back later with TIP.PGE at the same ip
      flushTnt();
      ipPacket(FUP, ip);
      emit([PGD]);
      timing();
      enter(ip);
    }
    truth.push(ip.toString(16));
    const done = out.length >= opts.bytes;
    switch (ip) {
      // A
      case 0x1000:
        ip = 0x1003;
        break;
      case 0x1003: {
        const taken = r.bool();
        tnt.push(taken ? 1 : 0);
        ip = taken ? 0x100a : 0x1005;
        break;
      }
      case 0x1005:
        call(0x100a);
        ip = 0x1010;
        break;
      case 0x100a:
        if (done || r.bool(0.03)) {
          leave();
          if (done) return { bytes: Uint8Array.from(out), truth, psbs };
          ip = r.pick(entries);
          enter(ip);
          break;
        }
        ip = r.pick(entries);
        indirect(ip);
        break;
      case 0x100c:
      case 0x100d:
      case 0x100e:
      case 0x100f:
        ip++;
        break;
      case 0x1010:
        ip = 0x1012;
        break;
      // B
      case 0x2000: {
        const base = depth >= depthTarget || (depthTarget < 200 && depth > 0 && r.bool(0.05));
        tnt.push(base ? 1 : 0);
        ip = base ? 0x200f : 0x2002;
        break;
      }
      case 0x2002: {
        const siteB = r.bool();
        tnt.push(siteB ? 1 : 0);
        ip = siteB ? 0x200a : 0x2004;
        break;
      }
      case 0x2004:
        call(0x2009);
        depth++;
        ip = 0x2000;
        break;
      case 0x200a:
        call(0x200f);
        depth++;
        ip = 0x2000;
        break;
      // C
      case 0x3000:
        call(0x3005);
        ip = 0x3010;
        break;
      case 0x3005:
        ip = r.pick(entries);
        indirect(ip);
        break;
      // returns
      case 0x1012:
      case 0x2009:
      case 0x200f:
      case 0x3010: {
        if (ip !== 0x1012 && ip !== 0x3010) depth = Math.max(0, depth - 1);
        if (stack.length === 0) {
          // back to code we do not know: a TIP to an entry, or out of the traced range
          if (done || r.bool(0.1)) {
            leave();
            if (done) return { bytes: Uint8Array.from(out), truth, psbs };
            ip = r.pick(entries);
            enter(ip);
            break;
          }
          ip = r.pick(entries);
          indirect(ip);
          depth = 0;
          break;
        }
        ip = stack.pop()!;
        if (opts.retcomp && hw.length > 0) {
          hw.pop();
          tnt.push(1);
        } else {
          if (hw.length > 0) hw.pop();
          indirect(ip);
        }
        break;
      }
      default:
        throw new Error(`simulator at 0x${ip.toString(16)}`);
    }
    if (tnt.length >= 47) flushTnt();
    if (r.bool(0.05)) {
      flushTnt();
      timing();
    }
    sincePsb += out.length - before;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// recording what the decoder reports, tagged with the stream offset of the item that was current

interface Entry {
  /** Offset of the item the decoder had read when it reported this (see Recorder). */
  tag: number;
  what: string;
}

/**
 * A FlowSink that records every instruction (blocks expanded), enable, disable and gap. Each entry is tagged
 * with the stream offset of the query layer's current item when the decoder reported it — the decoder's cursor,
 * read from its private `q` (test-only): whatever is reported with a tag below an offset depends only on
 * packets before that offset.
 */
class Recorder implements FlowSink {
  entries: Entry[] = [];
  insns = 0;
  blocks = 0;
  gaps: { reason: number; from: number; to: number }[] = [];
  private decoder?: FlowDecoder;
  private readonly cache = new Map<number, string[]>();

  constructor(private readonly img: CodeImage) {}

  attach(d: FlowDecoder): FlowDecoder {
    this.decoder = d;
    return d;
  }

  private get tag(): number {
    return (this.decoder as unknown as { q: QueryDecoder }).q.offset;
  }

  private addrs(b: number): string[] {
    let a = this.cache.get(b);
    if (!a) this.cache.set(b, (a = this.img.blockInstructions(b).map((x) => x.toString(16))));
    return a;
  }

  block(b: number, tsc: number): void {
    const tag = this.tag;
    const a = this.addrs(b);
    check(isFinite(tsc), () => `block tsc ${tsc}`);
    check(a.length === this.img.blocks.insns[b], () => `block ${b}: ${a.length} addresses, ${this.img.blocks.insns[b]} instructions`);
    for (const x of a) this.entries.push({ tag, what: x });
    this.insns += a.length;
    this.blocks++;
  }

  partial(b: number, n: number, tsc: number): void {
    const tag = this.tag;
    const a = this.addrs(b);
    check(isFinite(tsc) && isInteger(n) && n > 0 && n < a.length, () => `partial ${n} of block ${b} (${a.length} instructions), tsc ${tsc}`);
    for (let i = 0; i < n; i++) this.entries.push({ tag, what: a[i] });
    this.insns += n;
  }

  enable(ip: number, tsc: number): void {
    check(isFinite(tsc) && this.img.inRange(ip), () => `enable at ${ip}, tsc ${tsc}`);
    this.entries.push({ tag: this.tag, what: `enable ${ip.toString(16)}` });
  }

  disable(tsc: number): void {
    check(isFinite(tsc), () => `disable tsc ${tsc}`);
    this.entries.push({ tag: this.tag, what: 'disable' });
  }

  gap(reason: number, from: number, to: number, tscBegin: number, tscEnd: number): void {
    check(isInteger(reason) && reason >= 0 && reason < GAP_REASONS.length, () => `gap reason ${reason}`);
    check(isFinite(tscBegin) && isFinite(tscEnd), () => `gap tsc ${tscBegin}-${tscEnd}`);
    this.gaps.push({ reason, from, to });
    this.entries.push({ tag: this.tag, what: `gap ${GAP_REASONS[reason]} ${from}-${to}` });
  }

  instructions(): string[] {
    return this.entries.filter((e) => !e.what.includes(' ') && e.what !== 'disable').map((e) => e.what);
  }
}

interface Run {
  rec: Recorder;
  st: FlowStats;
  ms: number;
}

/** The most items an input of `len` bytes can hold: TNT-8 carries 6 in one byte, TNT-64 47 in eight. */
const maxItems = (len: number) => 6 * len + 1;
/** Per decode: generous for this 2-core VM (a few ms is typical); a hang would be far beyond it. */
const RUN_MS = 2000;

/** One decode, with every check that holds for any input. */
function decodeChecked(img: CodeImage, walk: number, bytes: Uint8Array, retcomp: boolean, opts: { begin?: number; end?: number; endIp?: number; lookahead?: number } = {}, maxMs = RUN_MS): Run {
  const rec = new Recorder(img);
  const dec = rec.attach(new FlowDecoder(img, rec));
  const t0 = now();
  let st: FlowStats;
  try {
    st = dec.decode(bytes, { retcomp, timing: TIMING, file: 'f.pt', ...opts });
  } catch (e) {
    throw new Error(`decode() threw: ${(e as Error)?.stack ?? String(e)}`);
  }
  const ms = now() - t0;
  const begin = opts.begin ?? 0;
  const end = opts.end ?? bytes.length;
  const len = end - begin;
  check(ms < maxMs, () => `decode took ${ms.toFixed(0)} ms for ${len} bytes`);
  // the stats: what the sink saw, no NaN, bounded
  const ints = ['bytes', 'packets', 'blocks', 'insns', 'gaps', 'skippedBytes', 'tntBits', 'tips', 'droppedBlocks', 'speculations', 'alternatives'] as const;
  for (const k of ints) check(isInteger(st[k]) && st[k] >= 0, () => `stats.${k} = ${st[k]}`);
  check(isFinite(st.firstTsc) && isFinite(st.lastTsc) && st.firstTsc >= 0 && st.lastTsc >= 0, () => `tsc ${st.firstTsc}..${st.lastTsc}`);
  check(st.bytes === len, () => `stats.bytes ${st.bytes}, decoded ${len}`);
  check(st.packets <= len + (opts.lookahead ?? 0), () => `stats.packets ${st.packets} > ${len} bytes`);
  check(st.gaps === rec.gaps.length, () => `stats.gaps ${st.gaps}, sink saw ${rec.gaps.length}`);
  check(st.gapReasons.length === GAP_REASONS.length && st.gapReasons.every((x) => isInteger(x) && x >= 0), () => `gapReasons ${st.gapReasons}`);
  check(st.gapReasons.reduce((a, b) => a + b, 0) === st.gaps, () => `gapReasons ${st.gapReasons} do not add up to ${st.gaps}`);
  check(st.insns === rec.insns && st.blocks === rec.blocks, () => `stats ${st.insns} insns / ${st.blocks} blocks, sink saw ${rec.insns} / ${rec.blocks}`);
  const items = maxItems(len + (opts.lookahead ?? 0));
  check(st.insns <= (items + 1) * walk, () => `${st.insns} instructions from ${len} bytes (bound ${(items + 1) * walk})`);
  check(st.tntBits + st.tips <= items, () => `${st.tntBits} TNT bits + ${st.tips} TIPs from ${len} bytes`);
  check(st.skippedBytes <= len + (opts.lookahead ?? 0), () => `skipped ${st.skippedBytes} of ${len} bytes`);
  let lastTo = -1;
  for (const g of rec.gaps) {
    check(isInteger(g.from) && isInteger(g.to) && g.from <= g.to && g.from >= lastTo && g.to <= bytes.length, () => `gap ${g.from}-${g.to} after ${lastTo}`);
    lastTo = g.to;
  }
  for (let i = 1; i < rec.entries.length; i++) check(rec.entries[i].tag >= rec.entries[i - 1].tag, () => `reports out of stream order at ${i}`);
  return { rec, st, ms };
}

/** Start of the first packet of `clean` that the bytes from `first` on touch (everything before decodes alike). */
function firstTouchedPacket(clean: Uint8Array, first: number): number {
  const d = new PacketDecoder(clean);
  const p = new Packet();
  d.syncForward();
  while (d.next(p)) if (p.offset + p.size > first) return p.offset;
  return clean.length;
}

interface Mutated {
  bytes: Uint8Array;
  /** First changed offset; bytes at and after `resume` in the clean stream are at `resume + shift` here. */
  first: number;
  resume: number;
  shift: number;
  what: string;
}

function mutate(r: Rng, src: Uint8Array): Mutated {
  const b = Uint8Array.from(src);
  const n = b.length;
  switch (r.int(6)) {
    case 0:
    case 1: {
      const at = r.int(n);
      b[at] ^= 1 << r.int(8);
      return { bytes: b, first: at, resume: at + 1, shift: 0, what: `bit flip at ${at}` };
    }
    case 2: {
      const at = r.int(n);
      b[at] = r.pick([0x00, 0x02, 0x82, 0x03, 0x0d, 0x11, 0x01, 0x1d, 0xff, 0x19, 0x59, r.int(256)]);
      return { bytes: b, first: at, resume: at + 1, shift: 0, what: `byte ${at} set to ${b[at]}` };
    }
    case 3: {
      const at = r.int(n + 1), k = r.range(1, 16);
      const out = new Uint8Array(n + k);
      out.set(b.subarray(0, at));
      out.set(r.bytes(k), at);
      out.set(b.subarray(at), at + k);
      return { bytes: out, first: at, resume: at, shift: k, what: `${k} bytes inserted at ${at}` };
    }
    case 4: {
      const at = r.int(n), k = Math.min(n - at, r.range(1, 16));
      const out = new Uint8Array(n - k);
      out.set(b.subarray(0, at));
      out.set(b.subarray(at + k), at);
      return { bytes: out, first: at, resume: at + k, shift: -k, what: `${k} bytes deleted at ${at}` };
    }
    default: {
      const k = r.range(1, 8);
      let first = n;
      for (let i = 0; i < k; i++) {
        const at = r.int(n);
        b[at] ^= 1 << r.int(8);
        first = Math.min(first, at);
      }
      return { bytes: b, first, resume: n, shift: 0, what: `${k} bit flips from ${first}` };
    }
  }
}

/** Random packets aimed at the image: IPs in and around its code, TNTs, PSBs, OVFs, timing, garbage. */
function randomPackets(r: Rng, len: number): Uint8Array {
  const out: number[] = [];
  const ips = [0x1000, 0x1003, 0x1005, 0x100a, 0x100c, 0x1010, 0x1012, 0x2000, 0x2002, 0x2004, 0x2009, 0x200a, 0x200f, 0x3000, 0x3005, 0x3010, 0x3020, 0x4000, 0x4002, 0x4005, 0x400b];
  while (out.length < len) {
    switch (r.int(10)) {
      case 0:
        out.push(...PSB, ...(r.bool() ? PSBEND : []));
        break;
      case 1:
      case 2:
        out.push(((r.int(64) | 64) >> r.int(6)) << 1 || 4);
        break;
      case 3:
      case 4:
      case 5: {
        const ip = r.bool(0.9) ? r.pick(ips) + (r.bool(0.1) ? r.int(16) : 0) : r.int(0x5000);
        const ipc = r.pick([0, 1, 2, 3, 6]);
        out.push(r.pick([TIP, PGE, PGD, FUP]) | (ipc << 5), ...Array.from({ length: IP_BYTES[ipc] }, (_, i) => Math.floor(ip / 2 ** (8 * i)) & 0xff));
        break;
      }
      case 6:
        out.push(0x02, 0xf3); // OVF
        break;
      case 7:
        out.push(0x19, ...Array.from(r.bytes(7)), 0x59, r.int(256));
        break;
      case 8:
        out.push(0x02, 0xa3, ...Array.from(r.bytes(6)));
        break;
      default:
        out.push(...Array.from(r.bytes(r.range(1, 8))));
    }
  }
  return Uint8Array.from(out.slice(0, len));
}

// ---------------------------------------------------------------------------------------------------------------

const IMG = makeImage(false);
const JIT = makeImage(true);
const WALK = longestWalk(IMG);
const WALK_JIT = longestWalk(JIT);

describe('fuzz: flow layer', () => {
  const stats: string[] = [];
  afterAll(() => console.log(`flow-layer fuzz (base seed ${BASE_SEED}; longest walk without a packet: ${WALK} / ${WALK_JIT} instructions):\n  ${stats.join('\n  ')}`));

  test('the simulator writes streams that decode to exactly what ran', () => {
    const t0 = now();
    let insns = 0;
    let bytes = 0;
    const n = fuzz('clean', 300, (r) => {
      const jit = r.bool(0.3);
      const opts = { bytes: r.range(200, 6000), period: r.range(100, 1500), retcomp: r.bool(), jit, deep: r.bool(0.2), interrupts: r.pick([0, 0.001, 0.01]) };
      const s = simulate(r, opts);
      setCase(s.bytes, JSON.stringify(opts));
      const img = jit ? JIT : IMG;
      const { rec, st } = decodeChecked(img, jit ? WALK_JIT : WALK, s.bytes, opts.retcomp);
      const got = rec.instructions();
      const at = got.findIndex((x, i) => x !== s.truth[i]);
      check(at < 0 && got.length === s.truth.length, () => `decoded ${got.length} instructions, ran ${s.truth.length}; first difference at ${at}: ${got.slice(at, at + 5)} vs ${s.truth.slice(at, at + 5)}`);
      check(st.gaps === 0 && st.droppedBlocks === 0, () => `${st.gaps} gaps (${st.gapReasons}), ${st.droppedBlocks} dropped blocks in a clean stream`);
      insns += st.insns;
      bytes += s.bytes.length;
    });
    stats.push(`clean simulated streams: ${n} cases, ${(bytes / 1e6).toFixed(2)} MB, ${insns} instructions, ${(now() - t0).toFixed(0)} ms`);
  });

  test('random bytes and random packets aimed at the code: decode() returns, stats sane, bounded', () => {
    const t0 = now();
    let worst = 0;
    const n = fuzz('random', 2500, (r) => {
      const len = r.range(1, 4000);
      let b: Uint8Array;
      if (r.bool(0.3)) {
        b = r.bytes(len);
        if (len > 16 && r.bool(0.8)) b.set(PSB, r.int(len - 15));
      } else b = randomPackets(r, len);
      setCase(b);
      const jit = r.bool(0.5);
      const { ms } = decodeChecked(jit ? JIT : IMG, jit ? WALK_JIT : WALK, b, r.bool());
      worst = Math.max(worst, ms);
    });
    stats.push(`random input: ${n} cases, ${(now() - t0).toFixed(0)} ms, slowest decode ${worst.toFixed(1)} ms`);
  });

  test('damaged simulated streams: decode() returns; nothing before the damage changes; decoding resumes after it', () => {
    const t0 = now();
    let checkedAfter = 0;
    let identicalAfter = 0;
    let worst = 0;
    const n = fuzz('damage', 2000, (r) => {
      const opts = { bytes: r.range(1500, 5000), period: r.range(150, 600), retcomp: r.bool(), jit: r.bool(0.3), deep: r.bool(0.1), interrupts: r.pick([0.001, 0.01]) };
      const s = simulate(r, opts);
      const [img, walk] = opts.jit ? [JIT, WALK_JIT] : [IMG, WALK];
      const clean = decodeChecked(img, walk, s.bytes, opts.retcomp);
      const m = mutate(r, s.bytes);
      setCase(m.bytes, `${m.what}; ${JSON.stringify(opts)}`);
      const bad = decodeChecked(img, walk, m.bytes, opts.retcomp);
      worst = Math.max(worst, bad.ms);
      // before the damage: exactly the clean decode (nothing dropped, nothing added) — unless a call in
      // compiled code read ahead past the damage to choose its target
      const firstBad = opts.jit && bad.st.speculations > 0 ? 0 : firstTouchedPacket(s.bytes, m.first);
      const before = (x: Run) => x.rec.entries.filter((e) => e.tag < firstBad).map((e) => `${e.tag}:${e.what}`);
      const want = before(clean);
      const got = before(bad);
      check(got.length === want.length && got.every((x, i) => x === want[i]), () => {
        const at = got.findIndex((x, i) => x !== want[i]);
        return `before the damage (packet at ${firstBad}): ${got.length} reports, clean ${want.length}; first difference at ${at}: ${got.slice(at, at + 4)} vs ${want.slice(at, at + 4)}`;
      });
      // after the damage: the first PSB at or after the end of the damage is where decoding resumes at the latest
      const resumePsb = s.psbs.find((p) => p >= m.resume);
      const psbAfter = s.psbs.filter((p) => p >= m.resume).length;
      if (resumePsb !== undefined && psbAfter >= 3) {
        const cleanAfter = clean.rec.entries.filter((e) => e.tag >= resumePsb && !e.what.includes(' '));
        const badAfter = bad.rec.entries.filter((e) => e.tag >= resumePsb + m.shift && !e.what.includes(' '));
        if (cleanAfter.length > 0) {
          checkedAfter++;
          check(badAfter.length > 0, () => `nothing decoded after the damage (PSB at ${resumePsb}); clean decode has ${cleanAfter.length} reports there`);
          // and, one PSB later at the most, the same flow as the clean stream
          const psb2 = s.psbs.filter((p) => p >= m.resume)[1];
          const tail = (x: Entry[], from: number) => x.filter((e) => e.tag >= from).map((e) => e.what);
          const a = tail(cleanAfter, psb2), b = tail(badAfter, psb2 + m.shift);
          check(a.length === b.length && a.every((x, i) => x === b[i]), () => `after the PSB at ${psb2}: ${b.length} reports, clean ${a.length}`);
          if (tail(cleanAfter, resumePsb).join() === tail(badAfter, resumePsb + m.shift).join()) identicalAfter++;
        }
      }
    });
    stats.push(`damaged streams: ${n} cases, ${(now() - t0).toFixed(0)} ms, slowest decode ${worst.toFixed(1)} ms; resumed in ${checkedAfter} cases that continue for 3+ PSBs (identical from the next PSB in ${identicalAfter})`);
  });

  test('truncated at every offset of a short stream: the decode is a prefix of the whole one', () => {
    const t0 = now();
    const r = new Rng(hash(BASE_SEED, 5));
    const s = simulate(r, { bytes: 400, period: 120, retcomp: true, jit: false, deep: false });
    const whole = decodeChecked(IMG, WALK, s.bytes, true).rec.instructions();
    for (let cut = 0; cut <= s.bytes.length; cut++) {
      setCase(s.bytes.subarray(0, cut), `truncated to ${cut}`);
      const part = decodeChecked(IMG, WALK, s.bytes.subarray(0, cut), true).rec.instructions();
      check(part.length <= whole.length && part.every((x, i) => x === whole[i]), () => `truncated to ${cut}: not a prefix of the whole decode`);
    }
    stats.push(`truncations of a ${s.bytes.length}-byte stream: ${s.bytes.length + 1} cases, ${(now() - t0).toFixed(0)} ms`);
  });

  test('parts split at PSBs join to the whole decode (clean), and never throw (damaged)', () => {
    const t0 = now();
    const n = fuzz('parts', 400, (r) => {
      const opts = { bytes: r.range(1000, 5000), period: r.range(100, 500), retcomp: r.bool(), jit: false, deep: false };
      const s = simulate(r, opts);
      const damaged = r.bool(0.3);
      const bytes = damaged ? mutate(r, s.bytes).bytes : s.bytes;
      setCase(bytes, JSON.stringify(opts) + (damaged ? ' damaged' : ''));
      const whole = decodeChecked(IMG, WALK, bytes, opts.retcomp).rec.instructions();
      const joined: string[] = [];
      for (const p of splitAtPsb(bytes, r.range(100, 1500), TIMING)) {
        const lookahead = Math.min(bytes.length - p.end, 64 << 10);
        joined.push(...decodeChecked(IMG, WALK, bytes, opts.retcomp, { begin: p.begin, end: p.end, endIp: p.endIp, lookahead }).rec.instructions());
      }
      if (!damaged) check(joined.join() === whole.join(), () => `parts give ${joined.length} instructions, the whole stream ${whole.length}`);
    });
    stats.push(`split decodes: ${n} cases, ${(now() - t0).toFixed(0)} ms`);
  });
});

describe('fuzz: flow layer resources', () => {
  test('thousands of decodes keep the heap and the block table flat', () => {
    const r = new Rng(hash(BASE_SEED, 6));
    const inputs = Array.from({ length: 40 }, (_, i) => (i % 2 ? randomPackets(r, 3000) : simulate(r, { bytes: 3000, period: 300, retcomp: true, jit: true, deep: false }).bytes));
    const img = makeImage(true);
    const run = (k: number) => {
      for (let i = 0; i < k; i++) {
        const sink: FlowSink = { block() {}, partial() {}, enable() {}, disable() {}, gap() {} };
        new FlowDecoder(img, sink).decode(inputs[i % inputs.length], { retcomp: !!(i & 1), timing: TIMING });
      }
    };
    run(200);
    const blocks = img.blocks.count;
    const h0 = heapAfterGc();
    const t0 = now();
    run(1500);
    const ms = now() - t0;
    const h1 = heapAfterGc();
    console.log(`flow decodes: 1500 in ${ms.toFixed(0)} ms; heap ${(h0 / 1e6).toFixed(1)} MB before, ${(h1 / 1e6).toFixed(1)} MB after; ${img.blocks.count} blocks`);
    expect(h1 - h0).toBeLessThan(8e6);
    // blocks are decoded once per address: the table holds at most one per code byte
    expect(img.blocks.count).toBe(blocks);
    expect(img.blocks.count).toBeLessThanOrEqual(CODE_A.length + CODE_B.length + CODE_C.length + CODE_D.length);
  });

  test('a large random input decodes in bounded time', () => {
    const r = new Rng(hash(BASE_SEED, 7));
    const big = randomPackets(r, 1 << 20);
    const t0 = now();
    const { st } = decodeChecked(JIT, WALK_JIT, big, true, {}, 10_000);
    const ms = now() - t0;
    console.log(`1 MiB of random packets: ${ms.toFixed(0)} ms, ${st.insns} instructions, ${st.gaps} gaps`);
  });
});

describe('fuzz regressions: the bugs the fuzzing found, as plain inputs', () => {
  const ip8 = (low5: number, ip: number) => {
    const out = [low5 | (6 << 5)];
    le(out, ip, 8);
    return out;
  };

  test('return compression at a call depth over 256 returns to the right call sites', () => {
    // B recursing 300 deep through both call sites, then returning: the newest 64 returns compressed into
    // taken TNT bits (as a 64-deep hardware return stack would), the older ones by TIPs
    const D = 300;
    const out = [...PSB, ...PSBEND, ...ip8(PGE, 0x2000)];
    const truth: string[] = [];
    let bits: number[] = [];
    const flush = () => {
      for (let i = 0; i < bits.length; i += 6) {
        let v = 1;
        for (const b of bits.slice(i, i + 6)) v = (v << 1) | b;
        out.push(v << 1);
      }
      bits = [];
    };
    const sites: number[] = [];
    for (let d = 0; d < D; d++) {
      const siteB = d % 3 === 0 ? 1 : 0;
      bits.push(0, siteB);
      truth.push('2000', '2002', siteB ? '200a' : '2004');
      sites.push(siteB ? 0x200f : 0x2009);
    }
    bits.push(1);
    truth.push('2000', '200f');
    for (let k = D - 1; k >= 0; k--) {
      if (k >= D - 64) bits.push(1);
      else {
        flush();
        out.push(...ip8(TIP, sites[k]));
      }
      truth.push(sites[k].toString(16));
    }
    flush();
    out.push(PGD);
    const rec = new Recorder(IMG);
    const st = rec.attach(new FlowDecoder(IMG, rec)).decode(Uint8Array.from(out), { retcomp: true, timing: TIMING });
    expect(st.gaps).toBe(0);
    expect(rec.instructions()).toEqual(truth);
  });

  test('a loop without packets is a runaway gap at once (was: 2^20 blocks per packet, reported as flow)', () => {
    const out = [...PSB, ...PSBEND];
    for (let i = 0; i < 50; i++) out.push(...ip8(PGE, i % 2 ? 0x4000 : 0x400b), 0x06);
    const rec = new Recorder(IMG);
    const t0 = now();
    const st = rec.attach(new FlowDecoder(IMG, rec)).decode(Uint8Array.from(out), { retcomp: false, timing: TIMING });
    expect(now() - t0).toBeLessThan(500);
    expect(st.insns).toBe(0);
    expect(st.gaps).toBe(50);
    expect(st.gapReasons[GAP_REASONS.indexOf('runaway')]).toBe(50);
  });
});
