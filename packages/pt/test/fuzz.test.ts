/**
 * Fuzzing the packet layer, the query layer and time tracking: random bytes, and valid streams (libipt's
 * fixture, and streams of every packet kind built here) with bit flips, truncations, inserted and deleted bytes.
 *
 * Claims checked: only PtDecodeError escapes (typed, with an offset inside the input); every call makes progress
 * and the number of packets / items / resyncs is bounded by a function of the input length; packets and items
 * hold sane numbers (no NaN, no out-of-range payloads); damage never changes what was decoded before it;
 * memory does not grow across thousands of runs.
 *
 * Reproducible: every case has its own seed, printed when it fails. Rerun one case with
 *   JPORTAL_FUZZ_CASE=<suite>:<seed> npx jest test/fuzz.test.ts
 * Other seeds: JPORTAL_FUZZ_SEED=<n>; more iterations: JPORTAL_FUZZ_SCALE=<factor>.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { decodePacket, dumpPackets, findPsb, formatPacket, Item, Packet, PacketDecoder, PacketKind as K, PtDecodeError, QueryDecoder, TimeTracker } from '../src';
import type { TimingConfig } from '../src';
import { BASE_SEED, check, current, fuzz as fuzzWith, hash, heapAfterGc, hex, Rng, setCase } from './fuzz-harness';

jest.setTimeout(120_000);

// ---------------------------------------------------------------------------------------------------------------
// seeded randomness and the case runner

// globals are slow to reach from test code (jest runs it in a vm context): hot paths use local copies
const isInteger = Number.isInteger;
const isFinite = Number.isFinite;

/**
 * Seeds that failed before a fix (each fails with just that fix undone; they run first, whatever the base seed):
 *  - random, mutate: a CYC with 146+ continuation bytes got a NaN payload; formatPacket/dumpPackets then threw
 *    a RangeError (BigInt of NaN). Now, as libipt, a 9th continuation byte is a bad packet.
 *  - libipt 149940325: PWRX store bit read from bit 1 (the timer deadline) instead of bit 2.
 *  - libipt 1172145648: TMA with reserved bits set accepted (libipt: bad packet).
 *  - libipt 2004357689: after an error the resync missed a PSB that the misread packets before it ran into
 *    (libipt looks 15 bytes back); the rest of the PSB period was lost.
 *  - libipt 2417683187: in a run of PSB pattern longer than a PSB libipt syncs at the last PSB.
 *  - libipt 3185964262: MWAIT ext kept 2 of its 32 bits.
 *  - query-random, query-mutate: QueryDecoder.packets counted packets read ahead twice (save/restore).
 */
const REGRESSIONS: Record<string, number[]> = {
  random: [1255276448],
  mutate: [3430003799],
  libipt: [149940325, 1172145648, 2004357689, 2417683187, 3185964262],
  'query-random': [3893694885],
  'query-mutate': [1912900929],
};

/** Runs a suite's cases (its regression seeds first): fuzz-harness.ts. */
const fuzz = (suite: string, iterations: number, body: (r: Rng, i: number) => void): number => fuzzWith(suite, iterations, body, REGRESSIONS);


// ---------------------------------------------------------------------------------------------------------------
// valid streams

const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];

/** libipt's fixture (`ptdump --fixture`, made with libipt's encoder): every packet kind libipt 2.0 knows. */
const FIXTURE = Uint8Array.from(
  Buffer.from(
    '0282028202820282028202820282028219cdab89674523010273efbe00ab0102032a009901024301785634120002c8efcdab00007d78563412007f0223003178566a02a3a5a5a5a5a5014df0debc9a8dbc9a78563412cd00000081ffffffff59c3fbb74547049921992202f33d34120102c3888877665544332211026202e202c222000000010000000222083502a226090000000292efbeadde0232efcdab8967452301028301',
    'hex',
  ),
);
const PTDUMP = path.resolve(__dirname, '..', '..', '..', 'native', 'qemu-pt', 'build', 'ptdump');
const haveLibipt = fs.existsSync(PTDUMP);

const le = (v: bigint, n: number) => Array.from({ length: n }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));

interface Built {
  bytes: Uint8Array;
  /** The canonical line (formatPacket) of every packet, as the encoder meant it. */
  lines: string[];
  /** Start offset of every packet. */
  starts: number[];
}

/**
 * A valid stream of random packets of every kind the packet layer knows (an encoder written from the SDM
 * layouts, independent of the decoder), with a PSB+ every `period` bytes or so.
 */
function buildStream(r: Rng, approxBytes: number, period = 200, blocks = true): Built {
  const out: number[] = [];
  const lines: string[] = [];
  const starts: number[] = [];
  const add = (bytes: number[], line: string) => {
    starts.push(out.length);
    lines.push(`${out.length} ${line}`);
    for (const b of bytes) out.push(b);
  };
  const ipKinds: [number, string][] = [[0x0d, 'tip'], [0x11, 'tip.pge'], [0x01, 'tip.pgd'], [0x1d, 'fup']];
  const ipSize = [0, 2, 4, 6, 6, -1, 8];
  let sincePsb = period;
  while (out.length < approxBytes) {
    if (sincePsb >= period) {
      sincePsb = 0;
      add(PSB, 'psb');
      const t = r.big(40) + 1n;
      add([0x19, ...le(t, 7)], `tsc tsc=${t}`);
      const ctc = r.int(0x10000), fc = r.int(0x200);
      add([0x02, 0x73, ctc & 0xff, ctc >> 8, 0, fc & 0xff, fc >> 8], `tma ctc=${ctc} fc=${fc}`);
      const ratio = r.int(256);
      add([0x02, 0x03, ratio, 0], `cbr ratio=${ratio}`);
      add([0x99, 0x01], 'mode.exec csl=1 csd=0');
      const ip = r.big(47);
      add([0x1d | (6 << 5), ...le(ip, 8)], `fup ipc=6 ip=${ip}`);
      add([0x02, 0x23], 'psbend');
      continue;
    }
    const before = out.length;
    switch (r.int(20)) {
      case 0:
        add([0x00], 'pad');
        break;
      case 1:
      case 2: {
        const n = r.range(1, 6);
        const v = r.int(1 << n);
        add([((1 << n) | v) << 1], `tnt8 bits=${n} payload=${v}`);
        break;
      }
      case 3: {
        const n = r.range(1, 47);
        const v = r.big(n);
        add([0x02, 0xa3, ...le((1n << BigInt(n)) | v, 6)], `tnt64 bits=${n} payload=${v}`);
        break;
      }
      case 4:
      case 5:
      case 6: {
        const [low5, name] = r.pick(ipKinds);
        const ipc = r.pick([0, 1, 2, 3, 4, 6]);
        const v = r.big(8 * ipSize[ipc]);
        add([low5 | (ipc << 5), ...le(v, ipSize[ipc])], `${name} ipc=${ipc} ip=${v}`);
        break;
      }
      case 7: {
        const a = r.int(2), b = r.int(2);
        if (r.bool()) add([0x99, (b << 1) | a], `mode.exec csl=${a} csd=${b}`);
        else add([0x99, 0x20 | (b << 1) | a], `mode.tsx intx=${a} abrt=${b}`);
        break;
      }
      case 8: {
        const t = r.big(52);
        add([0x19, ...le(t, 7)], `tsc tsc=${t}`);
        break;
      }
      case 9: {
        const c = r.int(256);
        add([0x59, c], `mtc ctc=${c}`);
        break;
      }
      case 10: {
        const v = r.bool() ? r.int(32) : Number(r.big(r.range(5, 48)));
        const bytes = [((v % 32) << 3) | 3];
        let rest = Math.floor(v / 32);
        if (rest > 0) bytes[0] |= 4;
        while (rest > 0) {
          const next = Math.floor(rest / 128);
          bytes.push(((rest % 128) << 1) | (next > 0 ? 1 : 0));
          rest = next;
        }
        add(bytes, `cyc value=${v}`);
        break;
      }
      case 11: {
        const ctc = r.int(0x10000), fc = r.int(0x200);
        add([0x02, 0x73, ctc & 0xff, ctc >> 8, 0, fc & 0xff, fc >> 8], `tma ctc=${ctc} fc=${fc}`);
        break;
      }
      case 12:
        if (r.bool()) add([0x02, 0xf3], 'ovf');
        else add([0x02, 0x83], 'stop');
        break;
      case 13: {
        const f = r.big(47), nr = r.int(2);
        add([0x02, 0x43, ...le(f * 2n + BigInt(nr), 6)], `pip cr3=${f * 32n} nr=${nr}`);
        break;
      }
      case 14: {
        const v = r.big(40);
        add([0x02, 0xc8, ...le(v, 5)], `vmcs base=${v * 4096n}`);
        break;
      }
      case 15: {
        const v = r.big(64);
        add([0x02, 0xc3, 0x88, ...le(v, 8)], `mnt payload=${v}`);
        break;
      }
      case 16: {
        const ip = r.int(2);
        add([0x02, 0x62 | (ip << 7)], `exstop ip=${ip}`);
        const hints = r.u32(), ext = r.int(4);
        add([0x02, 0xc2, ...le(BigInt(hints), 4), ext, 0, 0, 0], `mwait hints=${hints} ext=${ext}`);
        break;
      }
      case 17: {
        const st = r.int(16), sub = r.int(16), hw = r.int(2);
        add([0x02, 0x22, hw << 3, (st << 4) | sub], `pwre state=${st} sub=${sub} hw=${hw}`);
        const last = r.int(16), deepest = r.int(16), i = r.int(2), s = r.int(2), a = r.int(2);
        add([0x02, 0xa2, (last << 4) | deepest, i | (s << 2) | (a << 3), 0, 0, 0], `pwrx last=${last} deepest=${deepest} interrupt=${i} store=${s} autonomous=${a}`);
        break;
      }
      case 18: {
        const plc = r.int(2), ip = r.int(2), n = plc ? 8 : 4;
        const v = r.big(8 * n);
        add([0x02, 0x12 | (plc << 5) | (ip << 7), ...le(v, n)], `ptw size=${n} ip=${ip} payload=${v}`);
        break;
      }
      case 19: {
        if (!blocks) break;
        // a block: BBP, BIPs (whose headers would read as other packets outside it), BEP
        const sz = r.int(2), type = r.int(32), n = sz ? 4 : 8;
        add([0x02, 0x63, (sz << 7) | type], `bbp type=${type} sz=${sz}`);
        for (let k = r.int(4); k > 0; k--) {
          const id = r.int(32), v = r.big(8 * n);
          add([(id << 3) | 0x04, ...le(v, n)], `bip id=${id} payload=${v}`);
        }
        const ip = r.int(2);
        add([0x02, 0x33 | (ip << 7)], `bep ip=${ip}`);
        break;
      }
    }
    sincePsb += out.length - before;
  }
  return { bytes: Uint8Array.from(out), lines, starts };
}

// ---------------------------------------------------------------------------------------------------------------
// mutations

interface Mutated {
  bytes: Uint8Array;
  /** First offset at which the bytes differ from the original (bytes before it are untouched). */
  first: number;
  what: string;
}

function mutate(r: Rng, src: Uint8Array): Mutated {
  const b = Uint8Array.from(src);
  const n = b.length;
  switch (r.int(7)) {
    case 0:
    case 1: {
      // bit flips
      const k = r.range(1, r.bool(0.7) ? 1 : 8);
      let first = n;
      for (let i = 0; i < k; i++) {
        const at = r.int(n);
        b[at] ^= 1 << r.int(8);
        first = Math.min(first, at);
      }
      return { bytes: b, first, what: `${k} bit flip(s)` };
    }
    case 2: {
      const at = r.int(n);
      b[at] = r.pick([0x00, 0x02, 0x82, 0x03, 0x07, 0x01, 0xff, 0x19, 0x99, 0x59, 0x63, 0xa3, r.int(256)]);
      return { bytes: b, first: b[at] === src[at] ? n : at, what: `byte ${at} set` };
    }
    case 3: {
      const at = r.int(n + 1), k = r.range(1, 24);
      const ins = r.bool(0.3) ? Uint8Array.from(r.bool() ? PSB.slice(0, r.range(1, 16)) : [0x02]) : r.bytes(k);
      const out = new Uint8Array(n + ins.length);
      out.set(b.subarray(0, at));
      out.set(ins, at);
      out.set(b.subarray(at), at + ins.length);
      return { bytes: out, first: at, what: `${ins.length} byte(s) inserted at ${at}` };
    }
    case 4: {
      const at = r.int(n), k = Math.min(n - at, r.range(1, 24));
      const out = new Uint8Array(n - k);
      out.set(b.subarray(0, at));
      out.set(b.subarray(at + k), at);
      return { bytes: out, first: at, what: `${k} byte(s) deleted at ${at}` };
    }
    case 5: {
      const at = r.int(n + 1);
      return { bytes: b.slice(0, at), first: at, what: `truncated to ${at}` };
    }
    default: {
      // a run of one byte value (long CYCs, PAD runs, broken PSBs)
      const at = r.int(n), k = Math.min(n - at, r.range(1, 400));
      b.fill(r.pick([0x00, 0x01, 0x02, 0x82, 0x03, 0x07, 0xff, r.int(256)]), at, at + k);
      return { bytes: b, first: at, what: `run of ${k} at ${at}` };
    }
  }
}

/** Random bytes: uniform, or biased towards packet headers and continuation bytes. */
function randomInput(r: Rng): Uint8Array {
  const n = r.bool(0.1) ? r.int(40) : r.range(1, 3000);
  if (r.bool(0.5)) {
    const b = r.bytes(n);
    if (r.bool(0.7) && n >= 16) b.set(PSB, r.int(n - 15));
    return b;
  }
  const vocab = [0x00, 0x01, 0x02, 0x82, 0x23, 0x03, 0x07, 0x0d, 0x11, 0x1d, 0xff, 0x19, 0x59, 0x99, 0x63, 0xa3, 0x73, 0xc3, 0x88, 0xf3, 0x04, 0x33, 0xb3];
  const out: number[] = [];
  while (out.length < n) {
    if (r.bool(0.05)) out.push(...PSB);
    else if (r.bool(0.02)) for (let k = r.range(1, 200), v = r.pick(vocab); k > 0; k--) out.push(v);
    else out.push(r.bool(0.7) ? r.pick(vocab) : r.int(256));
  }
  return Uint8Array.from(out.slice(0, n));
}

// ---------------------------------------------------------------------------------------------------------------
// walkers that check every step

const ERROR_CODES = new Set(['truncated', 'bad-opcode', 'bad-packet', 'nosync']);
const MAX_KIND = K.Bep;

function expectTyped(e: unknown, offset: number, len: number, file?: string): PtDecodeError {
  check(e instanceof PtDecodeError, () => `untyped error escaped: ${(e as Error)?.stack ?? String(e)}`);
  const t = e as PtDecodeError;
  check(t.name === 'PtDecodeError' && ERROR_CODES.has(t.code), () => `bad error code ${t.code}`);
  check(t.offset === offset && offset >= 0 && offset < len, () => `error offset ${t.offset}, packet at ${offset}, length ${len}`);
  check(t.message.startsWith(`${file ? file + ': ' : ''}byte ${offset}: `), () => `error message ${t.message}`);
  return t;
}

const isU32 = (x: number) => isInteger(x) && x >= 0 && x < 4294967296;
const isInt = (x: number) => isInteger(x);

function checkPacket(p: Packet, at: number, end: number): void {
  check(isInt(p.kind) && p.kind >= 0 && p.kind <= MAX_KIND, () => `kind ${p.kind}`);
  check(p.offset === at, () => `packet offset ${p.offset}, expected ${at}`);
  check(isInt(p.size) && p.size >= 1 && at + p.size <= end, () => `packet size ${p.size} at ${at}, end ${end}`);
  check(isU32(p.lo) && isU32(p.hi), () => `payload lo=${p.lo} hi=${p.hi} (${formatPacket(p)})`);
  for (const f of [p.a, p.b, p.c, p.d, p.e, p.bits, p.ipc]) check(isInt(f), () => `field ${f} in ${formatPacket(p)}`);
  switch (p.kind) {
    case K.Tnt8:
      check(p.bits >= 1 && p.bits <= 6 && p.hi === 0 && p.lo < 2 ** p.bits, () => formatPacket(p));
      break;
    case K.Tnt64:
      check(p.bits >= 0 && p.bits <= 47 && p.value < 2 ** p.bits, () => formatPacket(p));
      break;
    case K.Tip:
    case K.TipPge:
    case K.TipPgd:
    case K.Fup:
      check([0, 1, 2, 3, 4, 6].includes(p.ipc), () => formatPacket(p));
      break;
    case K.Cyc:
      check(p.hi < 2 ** 29 && p.size <= 9, () => formatPacket(p)); // at most 61 bits in at most 9 bytes
      break;
  }
}

interface PacketWalk {
  lines: string[];
  /** Every error, with the index of its line. */
  errors: { offset: number; code: string; line: number }[];
}

/**
 * Every packet of `bytes` through PacketDecoder, resyncing after errors as dumpPackets does, checking every
 * step: typed errors only, progress on every call, at most one packet per byte, resyncs at PSBs.
 */
function walkPackets(bytes: Uint8Array, file?: string, withLines = true): PacketWalk {
  const d = new PacketDecoder(bytes, file);
  const p = new Packet();
  const lines: string[] = [];
  const errors: { offset: number; code: string; line: number }[] = [];
  const len = bytes.length;
  if (!d.syncForward()) {
    check(d.offset === len && findPsb(bytes, 0, len) < 0, () => 'syncForward failed with a PSB in the input');
    return { lines: ['error nosync'], errors };
  }
  let steps = 0;
  let packets = 0;
  let lastSync = d.offset;
  for (;;) {
    check(++steps <= 2 * len + 2, () => `no progress after ${steps} steps`);
    const before = d.offset;
    let ok: boolean;
    try {
      ok = d.next(p);
    } catch (e) {
      const t = expectTyped(e, before, len, file);
      errors.push({ offset: t.offset, code: t.code, line: lines.length });
      lines.push(`${before} error`);
      check(d.offset === before, () => 'offset moved on a failed packet');
      if (!d.syncForward(1)) {
        check(d.offset === len, () => `failed sync left offset ${d.offset}`);
        break;
      }
      check(d.offset > lastSync && findPsb(bytes, d.offset, len) === d.offset, () => `resync to ${d.offset}, not a new PSB (last ${lastSync})`);
      lastSync = d.offset;
      continue;
    }
    if (!ok) {
      check(before >= len, () => `next() false at ${before} of ${len}`);
      break;
    }
    checkPacket(p, before, len);
    check(d.offset === before + p.size, () => 'offset does not advance by the packet size');
    if (p.kind === K.Psb) lastSync = before;
    packets++;
    if (withLines) lines.push(formatPacket(p));
  }
  check(packets <= len, () => 'more packets than bytes');
  return { lines, errors };
}

interface ItemRec {
  kind: Item;
  ip: number;
  bit: number;
  offset: number;
  tsc: number;
}
const itemKey = (x: ItemRec) => `${x.offset}:${Item[x.kind]}:${x.ip}:${x.bit}:${x.tsc}`;

const TIMINGS: TimingConfig[] = [
  { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 },
  { ctcRatio: 64, mtcFreq: 3, nomFreq: 32 },
  { ctcRatio: 2.5, mtcFreq: 0, nomFreq: 1 },
  { ctcRatio: 1 << 20, mtcFreq: 15, nomFreq: 255 },
];

/** Every item of a QueryDecoder over [begin, end), checking every step. */
function walkQuery(bytes: Uint8Array, timing: TimingConfig, begin = 0, end = bytes.length, noSync = false, saveAt = -1): ItemRec[] {
  const q = new QueryDecoder(bytes, timing, 'f.pt', begin, end, noSync);
  const out: ItemRec[] = [];
  // TNT-64 is the densest packet: 47 items in 8 bytes; short TNT 6 in 1
  const limit = 6 * (end - begin) + 1;
  let lastOffset = begin;
  for (;;) {
    const k = q.peek();
    check(isInt(k) && k >= Item.End && k <= Item.BadPacket, () => `item kind ${k}`);
    const rec = { kind: k, ip: q.ip, bit: q.bit, offset: q.offset, tsc: q.tsc };
    check(q.peek() === k && q.offset === rec.offset && q.ip === rec.ip && q.bit === rec.bit, () => 'peek() is not idempotent');
    check(isInt(rec.offset) && rec.offset >= lastOffset && rec.offset <= end, () => `item offset ${rec.offset} (last ${lastOffset}, end ${end})`);
    check(k === Item.End || rec.offset < end, () => `item at ${rec.offset} past the end ${end}`);
    check(q.ip === -1 || (isFinite(q.ip) && Math.abs(q.ip) < 2 ** 64), () => `ip ${q.ip}`);
    check(q.bit === 0 || q.bit === 1, () => `bit ${q.bit}`);
    check(isFinite(q.tsc), () => `tsc ${q.tsc}`);
    check(q.position <= end && q.packets <= end - begin, () => `position ${q.position}, packets ${q.packets}`);
    lastOffset = rec.offset;
    out.push(rec);
    if (k === Item.End) break;
    check(out.length <= limit, () => `more than ${limit} items from ${end - begin} bytes`);
    if (out.length === saveAt) {
      // read ahead and come back: the items must be the same after restore
      const s = q.save();
      const ahead: string[] = [];
      for (let i = 0; i < 40 && q.peek() !== Item.End; i++) {
        ahead.push(`${q.peek()}:${q.ip}:${q.bit}:${q.offset}`);
        q.consume();
      }
      q.restore(s);
      check(q.peek() === k && q.offset === rec.offset, () => 'restore did not come back to the current item');
      const again: string[] = [];
      for (let i = 0; i < ahead.length; i++) {
        again.push(`${q.peek()}:${q.ip}:${q.bit}:${q.offset}`);
        q.consume();
      }
      check(again.join() === ahead.join(), () => `after restore: ${again.join()} vs ${ahead.join()}`);
      q.restore(s);
    }
    q.consume();
  }
  check(q.peek() === Item.End, () => 'End is not sticky');
  const t = new Float64Array(11);
  q.time.save(t);
  check(t.every((x) => !Number.isNaN(x)), () => `time state has NaN: ${Array.from(t)}`);
  return out;
}

/** Offsets of the packets of a clean stream (for "before the damage" comparisons). */
function packetSpans(bytes: Uint8Array): { start: number; end: number }[] {
  const d = new PacketDecoder(bytes);
  const p = new Packet();
  const out: { start: number; end: number }[] = [];
  d.syncForward();
  while (d.next(p)) out.push({ start: p.offset, end: p.offset + p.size });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

describe('fuzz: packet layer', () => {
  const stats: string[] = [];
  afterAll(() => console.log(`packet-layer fuzz (base seed ${BASE_SEED}):\n  ${stats.join('\n  ')}`));

  test('the embedded fixture is what libipt encodes and decodes', () => {
    expect(walkPackets(FIXTURE).errors).toEqual([]);
    if (!haveLibipt) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jppt-fuzz-'));
    const f = path.join(dir, 'fixture.pt');
    expect(spawnSync(PTDUMP, ['--fixture', f]).status).toBe(0);
    expect(hex(fs.readFileSync(f), 1e6)).toBe(hex(FIXTURE, 1e6));
    fs.rmSync(dir, { recursive: true });
  });

  test('the stream builder makes valid streams that decode back to what it encoded', () => {
    const t0 = Date.now();
    const n = fuzz('roundtrip', 300, (r) => {
      const s = buildStream(r, r.range(50, 3000), r.range(40, 400));
      current.input = s.bytes;
      const w = walkPackets(s.bytes);
      check(w.errors.length === 0, () => `errors in a valid stream: ${JSON.stringify(w.errors)}`);
      expect(w.lines).toEqual(s.lines);
      check(dumpPackets(s.bytes).join('\n') === s.lines.join('\n'), () => 'dumpPackets differs');
    });
    stats.push(`round trip of built streams: ${n} cases, ${Date.now() - t0} ms`);
  });

  test('random bytes: typed errors only, progress on every call', () => {
    const t0 = Date.now();
    let bytes = 0;
    const n = fuzz('random', 4000, (r) => {
      const b = randomInput(r);
      current.input = b;
      bytes += b.length;
      walkPackets(b, r.bool() ? 'r.pt' : undefined, false);
      // the bare decoder at arbitrary offsets, in and out of BBP blocks
      const p = new Packet();
      for (let k = 0; k < 20 && b.length > 0; k++) {
        const at = r.int(b.length);
        const end = r.range(at + 1, b.length);
        try {
          const size = decodePacket(b, at, end, p, r.bool(0.2), r.pick([4, 8]));
          check(size === p.size, () => 'returned size differs from p.size');
          checkPacket(p, at, end);
        } catch (e) {
          expectTyped(e, at, end);
        }
      }
    });
    stats.push(`random bytes: ${n} cases, ${(bytes / 1e6).toFixed(1)} MB, ${Date.now() - t0} ms`);
  });

  test('truncation at every offset of the fixture and of built streams: exactly the packets before the cut', () => {
    const t0 = Date.now();
    let cases = 0;
    const streams: Uint8Array[] = [FIXTURE];
    const r0 = new Rng(hash(BASE_SEED, 7));
    for (let i = 0; i < 4; i++) streams.push(buildStream(r0, 300, 120).bytes);
    for (const s of streams) {
      const full = walkPackets(s);
      const spans = packetSpans(s);
      for (let cut = 0; cut <= s.length; cut++) {
        setCase(s.subarray(0, cut), `truncated to ${cut}`);
        const w = walkPackets(s.subarray(0, cut));
        const whole = spans.filter((x) => x.end <= cut).length;
        const straddles = spans.some((x) => x.start < cut && x.end > cut);
        const want = cut < 16 ? ['error nosync'] : [...full.lines.slice(0, whole), ...(straddles ? [`${spans[whole].start} error`] : [])];
        expect(w.lines).toEqual(want);
        if (straddles && cut >= 16) expect(w.errors.map((e) => e.code)).toEqual(['truncated']);
        // and the suffix: syncing into the middle of a stream finds the next PSB or nothing
        walkPackets(s.subarray(cut));
        cases += 2;
      }
    }
    stats.push(`truncations: ${cases} cases, ${Date.now() - t0} ms`);
  });

  test('bit flips, inserted and deleted bytes: typed errors only; everything before the damage unchanged', () => {
    const t0 = Date.now();
    const n = fuzz('mutate', 2500, (r) => {
      const clean = r.bool(0.3) ? { bytes: FIXTURE, lines: walkPackets(FIXTURE).lines } : buildStream(r, r.range(100, 2500), r.range(60, 300));
      const m = mutate(r, clean.bytes);
      setCase(m.bytes, m.what);
      const w = walkPackets(m.bytes, 'm.pt');
      // packets that end before the first changed byte decode exactly as before
      const spans = packetSpans(clean.bytes);
      const before = spans.filter((x) => x.end <= m.first).length;
      check(w.lines.slice(0, before).join('\n') === clean.lines.slice(0, before).join('\n'), () => `packets before the damage at ${m.first} changed`);
    });
    stats.push(`mutated valid streams: ${n} cases, ${Date.now() - t0} ms`);
  });

  (haveLibipt ? test : test.skip)('mutated streams decode as libipt decodes them (ptdump)', () => {
    const t0 = Date.now();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jppt-fuzz-'));
    const f = path.join(dir, 's.pt');
    let n = 0;
    try {
      n = fuzz('libipt', 250, (r) => {
        // libipt 2.0 knows no BBP/BIP/BEP: no blocks in the built streams compared with it
        const clean = r.bool(0.3) ? FIXTURE : buildStream(r, r.range(100, 1500), r.range(60, 300), false).bytes;
        const m = r.bool(0.1) ? { bytes: randomInput(r), what: 'random', first: 0 } : mutate(r, clean);
        setCase(m.bytes, m.what);
        fs.writeFileSync(f, m.bytes);
        const res = spawnSync(PTDUMP, [f], { encoding: 'utf8' });
        check(res.status === 0, () => `ptdump failed: ${res.stderr}`);
        const w = walkPackets(m.bytes);
        // ptdump stops silently where libipt reports the end of the stream inside a packet (pte_eos); we resync
        // (a PSB whose first bytes the cut packet swallowed may still follow)
        const eos = w.errors.find((e) => e.code === 'truncated');
        const ours = eos ? w.lines.slice(0, eos.line) : w.lines;
        const theirs = res.stdout.trim().split('\n').map((l) => l.replace(/ error .*$/, ' error'));
        // libipt 2.0 does not know the block packets: compare up to the first one we decode
        const cut = ours.findIndex((l) => / (bbp|bip|bep)\b/.test(l));
        const upto = cut < 0 ? ours.length : cut;
        expect(ours.slice(0, upto)).toEqual(theirs.slice(0, upto));
        if (cut < 0) expect(ours.length).toBe(theirs.length);
      });
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
    stats.push(`differential against libipt: ${n} cases, ${Date.now() - t0} ms`);
  });
});

describe('fuzz: query layer and time', () => {
  const stats: string[] = [];
  afterAll(() => console.log(`query-layer fuzz (base seed ${BASE_SEED}):\n  ${stats.join('\n  ')}`));

  test('random bytes, any window, with and without sync: typed items only, bounded, save/restore exact', () => {
    const t0 = Date.now();
    let items = 0;
    const n = fuzz('query-random', 2000, (r) => {
      const b = randomInput(r);
      current.input = b;
      const begin = r.bool(0.7) ? 0 : r.int(b.length + 1);
      const end = r.bool(0.7) ? b.length : r.range(begin, b.length);
      const timing = r.pick(TIMINGS);
      const noSync = r.bool(0.3);
      const plain = walkQuery(b, timing, begin, end, noSync);
      items += plain.length;
      // reading ahead and restoring at some item leaves the item sequence unchanged
      const again = walkQuery(b, timing, begin, end, noSync, r.range(1, Math.max(1, plain.length)));
      check(again.map(itemKey).join() === plain.map(itemKey).join(), () => 'save/restore changed the items');
    });
    stats.push(`random bytes: ${n} cases, ${items} items, ${Date.now() - t0} ms`);
  });

  test('mutated valid streams: items before the damage unchanged; truncation gives the same items then one bad packet', () => {
    const t0 = Date.now();
    const n = fuzz('query-mutate', 1500, (r) => {
      const clean = r.bool(0.2) ? FIXTURE : buildStream(r, r.range(100, 2500), r.range(60, 300)).bytes;
      const timing = r.pick(TIMINGS);
      const cleanItems = walkQuery(clean, timing);
      const m = mutate(r, clean);
      setCase(m.bytes, m.what);
      const items = walkQuery(m.bytes, timing, 0, m.bytes.length, false, r.range(1, 60));
      const spans = packetSpans(clean);
      // the first packet touched by the damage; items from packets before it are unchanged
      const firstBad = spans.find((x) => x.end > m.first)?.start ?? clean.length;
      const keep = (x: ItemRec) => x.kind !== Item.End && x.offset < firstBad;
      const want = cleanItems.filter(keep).map(itemKey);
      const got = items.filter(keep).map(itemKey);
      // the first PSB may be what the damage hit: then nothing before it is decoded either
      if (findPsb(m.bytes, 0, m.bytes.length) === findPsb(clean, 0, clean.length))
        check(got.slice(0, want.length).join() === want.join(), () => `items before the damage at ${m.first} (packet ${firstBad}) changed:\n${got.join(' ')}\nvs\n${want.join(' ')}`);
      if (m.what.startsWith('truncated') && m.first >= findPsb(clean, 0, clean.length) + 16) {
        const straddles = spans.some((x) => x.start < m.first && x.end > m.first);
        const tail = items.slice(want.length).map((x) => Item[x.kind]);
        const wantTail = straddles ? ['BadPacket', 'End'] : ['End'];
        check(tail.join() === wantTail.join(), () => `after the cut: ${tail.join()} (want ${wantTail.join()})`);
      }
    });
    stats.push(`mutated streams: ${n} cases, ${Date.now() - t0} ms`);
  });

  test('TimeTracker on random timing packets and configs: time stays a finite number, save/restore exact', () => {
    const t0 = Date.now();
    const n = fuzz('time', 4000, (r) => {
      const cfg: TimingConfig = { ctcRatio: r.pick([0, 1, 2.5, 3, 64, 1 << 20, r.int(1000)]), mtcFreq: r.int(32), nomFreq: r.pick([0, 1, 32, 255, r.int(256)]) };
      const t = new TimeTracker(cfg);
      const p = new Packet();
      const s = new Float64Array(11);
      current.note = JSON.stringify(cfg);
      for (let i = 0, n = r.range(1, 300); i < n; i++) {
        const kind = r.pick([K.Tsc, K.Tma, K.Mtc, K.Cbr, K.Cyc, K.Cyc, K.Mtc, K.Tip, K.Psb]);
        p.kind = kind;
        p.lo = r.u32();
        p.hi = kind === K.Tsc ? r.int(1 << 24) : kind === K.Cyc ? r.int(1 << 21) : 0;
        p.a = kind === K.Tma ? r.int(1 << 16) : r.int(256);
        p.b = r.int(512);
        const timing = t.update(p);
        check(timing === [K.Tsc, K.Tma, K.Mtc, K.Cbr, K.Cyc].includes(kind), () => `update() says ${timing} for kind ${kind}`);
        check(isFinite(t.tsc) && isFinite(t.lostMtc) && t.lostMtc >= 0 && isInt(t.mtcCount), () => `time ${t.tsc}, lost ${t.lostMtc}`);
        if (kind === K.Tsc) check(t.tsc === p.hi * 2 ** 32 + p.lo, () => 'a TSC packet does not set the time');
        t.save(s);
        check(s.every((x) => isFinite(x)), () => `state ${Array.from(s)}`);
        if (r.bool(0.05)) {
          const t2 = new TimeTracker(cfg);
          t2.restore(s);
          const s2 = new Float64Array(11);
          t2.save(s2);
          check(s2.join() === s.join(), () => 'save/restore differs');
        }
      }
    });
    stats.push(`timing packet sequences: ${n} cases, ${Date.now() - t0} ms`);
  });
});

describe('fuzz: resources', () => {
  test('a large random input decodes in time linear in its size', () => {
    const r = new Rng(hash(BASE_SEED, 99));
    const big = new Uint8Array(4 << 20);
    for (let i = 0; i < big.length; i += 1 << 16) big.set(randomInput(r).subarray(0, 1 << 16), i);
    // long runs that make the worst cases: continuation bytes, PADs, broken PSBs
    big.fill(0x07, 1000, 200_000);
    big.fill(0x00, 300_000, 500_000);
    for (let i = 600_000; i < 900_000; i += 14) big.set(PSB.slice(0, 14), i);
    const t0 = Date.now();
    walkPackets(big, undefined, false);
    const items = walkQuery(big, TIMINGS[1]).length;
    const ms = Date.now() - t0;
    console.log(`4 MiB of random bytes: packet + query layer in ${ms} ms, ${items} items`);
    expect(ms).toBeLessThan(5_000);
  });

  test('thousands of decodes do not grow the heap', () => {
    const r = new Rng(hash(BASE_SEED, 100));
    const inputs = Array.from({ length: 50 }, () => randomInput(r));
    const run = (k: number) => {
      for (let i = 0; i < k; i++) {
        const b = inputs[i % inputs.length];
        walkPackets(b, undefined, false);
        const q = new QueryDecoder(b, TIMINGS[1]);
        while (q.peek() !== Item.End) q.consume();
      }
    };
    run(200); // warm up (JIT, caches)
    const h0 = heapAfterGc();
    run(3000);
    const h1 = heapAfterGc();
    console.log(`heap: ${(h0 / 1e6).toFixed(1)} MB before, ${(h1 / 1e6).toFixed(1)} MB after 3000 decodes`);
    expect(h1 - h0).toBeLessThan(8e6);
  });
});

describe('fuzz regressions: the bugs the fuzzing found, as plain inputs', () => {
  /** dumpPackets, and libipt's view of the same bytes when ptdump is built. */
  function dumpBoth(bytes: number[]): string[] {
    const ours = dumpPackets(Uint8Array.from(bytes));
    if (haveLibipt) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jppt-reg-'));
      const f = path.join(dir, 'r.pt');
      fs.writeFileSync(f, Uint8Array.from(bytes));
      const theirs = spawnSync(PTDUMP, [f], { encoding: 'utf8' }).stdout.trim().split('\n').map((l) => l.replace(/ error .*$/, ' error'));
      fs.rmSync(dir, { recursive: true });
      expect(ours).toEqual(theirs);
    }
    return ours;
  }

  test('a CYC wider than 64 bits is a bad packet (was: NaN payload, RangeError from dumpPackets)', () => {
    expect(dumpBoth([...PSB, 0x07, ...new Array(200).fill(0x01), 0x00])).toEqual(['0 psb', '16 error']);
    expect(dumpBoth([...PSB, ...new Array(9).fill(0xff), 0xfe])).toEqual(['0 psb', '16 error']);
    // 8 continuation bytes: 61 bits, exact
    expect(dumpBoth([...PSB, ...new Array(8).fill(0xff), 0xfe])).toEqual(['0 psb', `16 cyc value=${2n ** 61n - 1n}`]);
  });

  test('PWRX store is bit 2 of byte 3; TMA reserved bits make a bad packet; MWAIT ext has 32 bits', () => {
    expect(dumpBoth([...PSB, 0x02, 0xa2, 0x26, 0x04, 0, 0, 0, 0x02, 0xa2, 0x26, 0x02, 0, 0, 0, 0x02, 0xc2, 0x22, 0, 0, 0, 0x0a, 0, 0, 0, 0x02, 0x73, 1, 2, 0, 3, 1])).toEqual([
      '0 psb',
      '16 pwrx last=2 deepest=6 interrupt=0 store=1 autonomous=0',
      '23 pwrx last=2 deepest=6 interrupt=0 store=0 autonomous=0',
      '30 mwait hints=34 ext=10',
      '40 tma ctc=513 fc=259',
    ]);
    expect(dumpBoth([...PSB, 0x02, 0x73, 1, 2, 4, 3, 0])).toEqual(['0 psb', '16 error']);
    expect(dumpBoth([...PSB, 0x02, 0x73, 1, 2, 0, 3, 2])).toEqual(['0 psb', '16 error']);
  });

  test('the resync after an error finds a PSB whose first bytes were misread (was: the PSB period lost)', () => {
    // MODE eats the PSB's first byte; the rest reads as a TNT and a broken PSB at 19; the real one is at 17
    const bytes = [...PSB, 0x99, ...PSB, 0x02, 0x23, 0x00];
    expect(dumpBoth(bytes)).toEqual(['0 psb', '16 mode.exec csl=0 csd=1', '18 tnt8 bits=6 payload=1', '19 error', '17 psb', '33 psbend', '35 pad']);
    const q = new QueryDecoder(Uint8Array.from([...PSB, 0x99, ...PSB, 0x02, 0x23, 0x11 | (6 << 5), 0x00, 0x10, 0, 0, 0, 0, 0, 0]), TIMINGS[0]);
    const items: string[] = [];
    while (q.peek() !== Item.End) {
      items.push(`${Item[q.kind]}@${q.offset}${q.ip >= 0 ? ':' + q.ip.toString(16) : ''}`);
      q.consume();
    }
    expect(items).toEqual(['Tnt@18', 'Tnt@18', 'Tnt@18', 'Tnt@18', 'Tnt@18', 'Tnt@18', 'BadPacket@19', 'Pge@35:1000']);
  });

  test('in a run of PSB pattern longer than one PSB, sync is at the last PSB of the run, as libipt', () => {
    const bytes = [...PSB, 0x02, 0x82, 0x02, 0x23];
    expect(findPsb(Uint8Array.from(bytes), 0, bytes.length)).toBe(2);
    expect(dumpBoth(bytes)).toEqual(['2 psb', '18 psbend']);
  });

  test('packets read ahead and restored are counted once', () => {
    const s = buildStream(new Rng(1), 2000);
    const q = new QueryDecoder(s.bytes, TIMINGS[1]);
    for (let i = 0; i < 10; i++) q.consume();
    const saved = q.save();
    for (let i = 0; i < 30; i++) q.consume();
    q.restore(saved);
    while (q.peek() !== Item.End) q.consume();
    expect(q.packets).toBe(s.lines.length);
  });
});
