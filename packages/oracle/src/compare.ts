/**
 * Measures a decoder's per-thread events against ground truth, both given column-wise in one method-id space:
 * sequence accuracy (alignment of bytecode events), per-(method, bci) count error, hot-method overlap, and
 * call-sequence accuracy (entries and exits). See README.md.
 */
import { align, DEFAULT_WINDOW, AlignOptions, alignmentPairs } from './align';
import type { Matcher } from './myers';
import { PairTable } from './table';

/** Event kinds the metrics use; other kinds may appear in a sequence and are ignored. */
export const EventKind = { Bytecode: 0, Entry: 1, Exit: 2 } as const;

/** One thread's events, column-wise. */
export interface EventSeq {
  length: number;
  kind: Uint8Array;
  /** shared method id; -1 = unknown */
  method: Int32Array;
  /** -1 = unknown */
  bci: Int32Array;
  /** Java opcode 0..201; -1 = unknown */
  opcode: Int16Array;
  /** decoded side only: where each event comes from (Origin); absent = all observed */
  origin?: Uint8Array;
}

/** Where a decoded event comes from. */
export const Origin = { Observed: 0, Inferred: 1, Recovered: 2 } as const;

export type SequenceOptions = AlignOptions;

export interface SequenceAccuracy {
  truthLength: number;
  decodedLength: number;
  matched: number;
  /** matched / truthLength (1 for an empty truth) */
  accuracy: number;
  /** matches that relied on fewer than all fields (for bytecodes: opcode, method, bci; for calls: the method) */
  unknownFieldsMatched: number;
  /** true when `matched` is the maximum (one exact Myers run); else a lower bound from the windowed path */
  exact: boolean;
  /**
   * with opts.pairs: matched pairs as event indices into the two input sequences, increasing (with recovered
   * events, the fills' regions' pairs: fewer than `matched` where the whole alignment matched more)
   */
  pairs?: { truth: Int32Array; decoded: Int32Array };
  /** true when the default window's alignment fell far below the bound and a 4x window's was better (kept) */
  widened?: boolean;
  /** with recovered events: each fill region as measured (sequenceAccuracy's second step), in decoded order */
  fills?: FillMeasure[];
}

/**
 * One region of recovered events as the accuracy measured it: decoded events [decodedFrom, decodedTo) (the fills
 * and any decoded events between them), aligned with the truth's [truthFrom, truthTo), the hole the decoded events
 * around them left. `holeBytecodes` against `fillBytecodes` says whether recovery sized it right.
 */
export interface FillMeasure {
  decodedFrom: number;
  decodedTo: number;
  truthFrom: number;
  truthTo: number;
  holeBytecodes: number;
  fillBytecodes: number;
  /** recovered bytecodes of the region paired with the truth */
  matched: number;
}

export interface CountError {
  /** distinct (method, bci) keys of truth and decoded together */
  keys: number;
  truthTotal: number;
  /** decoded bytecode events with method and bci known */
  attributedDecoded: number;
  /** sum over keys of |truth count - decoded count| */
  absError: number;
  /** absError / truthTotal (0 for an empty truth) */
  relError: number;
  /** share of truth events whose key the decoded side has at least once (1 for an empty truth) */
  coverage: number;
}

export interface MethodCount {
  method: number;
  count: number;
}

export interface HotMethods {
  k: number;
  /** top-k methods by bytecode events, count descending then method id ascending */
  truth: MethodCount[];
  decoded: MethodCount[];
  /** methods in both lists */
  shared: number;
  /** shared / max(list lengths): shared / k when both sides have k methods or more; 1 when both are empty */
  overlap: number;
  /** the two top-k sets are the same */
  identical: boolean;
}

export interface ThreadComparison {
  sequence: SequenceAccuracy;
  calls: SequenceAccuracy;
  counts: CountError;
  hot: HotMethods;
}

/** Events of the given kinds, compacted: their indices and fields. */
interface Selected {
  length: number;
  index: Int32Array;
  kind: Uint8Array;
  method: Int32Array;
  bci: Int32Array;
  opcode: Int16Array;
}

function select(s: EventSeq, k0: number, k1 = k0): Selected {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.kind[i] === k0 || s.kind[i] === k1) n++;
  const out: Selected = { length: n, index: new Int32Array(n), kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n) };
  for (let i = 0, o = 0; i < s.length; i++) {
    if (s.kind[i] !== k0 && s.kind[i] !== k1) continue;
    out.index[o] = i;
    out.kind[o] = s.kind[i];
    out.method[o] = s.method[i];
    out.bci[o] = s.bci[i];
    out.opcode[o++] = s.opcode[i];
  }
  return out;
}

/** Bytecodes match when every field known on both sides is equal and at least one is; anchoring key: the opcode. */
class BytecodeMatcher implements Matcher {
  readonly n: number;
  readonly m: number;
  readonly keyA: Int32Array;
  readonly keyB: Int32Array;

  /** bOrigin: the decoded sequence's origins (by its own index), if it has any */
  constructor(
    readonly a: Selected,
    readonly b: Selected,
    bOrigin?: Uint8Array,
  ) {
    this.n = a.length;
    this.m = b.length;
    this.keyA = Int32Array.from(a.opcode);
    // a decoded bytecode without opcode but with method and bci takes the truth's opcode there, if any
    const at = new PairTable();
    for (let i = 0; i < a.length; i++) {
      if (a.method[i] < 0 || a.bci[i] < 0 || a.opcode[i] < 0) continue;
      const s = at.slot(a.method[i], a.bci[i]); // (before reading at.v0: adding a key may grow the table)
      at.v0[s] = a.opcode[i] + 1;
    }
    this.keyB = new Int32Array(b.length);
    for (let j = 0; j < b.length; j++) {
      let key = b.opcode[j];
      if (key < 0 && b.method[j] >= 0 && b.bci[j] >= 0) {
        const s = at.find(b.method[j], b.bci[j]);
        key = s < 0 ? -1 : at.v0[s] - 1;
      }
      // a recovered bytecode is a copy of events from elsewhere in the thread: it still matches, but it anchors
      // nothing (a copy of a stretch that is unique in the truth made it look unique at the place of the copy,
      // and one such anchor split a lossy trace wrongly: switches JIT at 25% loss, 31.5% against a bound of 93.9%)
      if (bOrigin && bOrigin[b.index[j]] === Origin.Recovered) key = -1;
      this.keyB[j] = key;
    }
  }

  match(i: number, j: number): boolean {
    let known = false;
    const oa = this.a.opcode[i];
    const ob = this.b.opcode[j];
    if (oa >= 0 && ob >= 0) {
      if (oa !== ob) return false;
      known = true;
    }
    const ma = this.a.method[i];
    const mb = this.b.method[j];
    if (ma >= 0 && mb >= 0) {
      if (ma !== mb) return false;
      known = true;
    }
    const ba = this.a.bci[i];
    const bb = this.b.bci[j];
    if (ba >= 0 && bb >= 0) {
      if (ba !== bb) return false;
      known = true;
    }
    return known;
  }

  /** every field known on both sides */
  full(i: number, j: number): boolean {
    return this.a.opcode[i] >= 0 && this.b.opcode[j] >= 0 && this.a.method[i] >= 0 && this.b.method[j] >= 0 && this.a.bci[i] >= 0 && this.b.bci[j] >= 0;
  }
}

/** Entries and exits match when the kinds are equal and the methods are, or either is unknown (-1). */
class CallMatcher implements Matcher {
  readonly n: number;
  readonly m: number;
  readonly keyA: Int32Array;
  readonly keyB: Int32Array;

  constructor(
    readonly a: Selected,
    readonly b: Selected,
  ) {
    this.n = a.length;
    this.m = b.length;
    this.keyA = CallMatcher.keys(a);
    this.keyB = CallMatcher.keys(b);
  }

  private static keys(s: Selected): Int32Array {
    const k = new Int32Array(s.length);
    for (let i = 0; i < s.length; i++) k[i] = s.method[i] < 0 ? -1 : ((s.method[i] << 1) | (s.kind[i] === EventKind.Exit ? 1 : 0)) & 0x7fffffff;
    return k;
  }

  match(i: number, j: number): boolean {
    if (this.a.kind[i] !== this.b.kind[j]) return false;
    const ma = this.a.method[i];
    const mb = this.b.method[j];
    return ma < 0 || mb < 0 || ma === mb;
  }

  full(i: number, j: number): boolean {
    return this.a.method[i] >= 0 && this.b.method[j] >= 0;
  }
}

function accuracyOf(p: BytecodeMatcher | CallMatcher, opts: SequenceOptions): SequenceAccuracy {
  const al = align(p, opts);
  let unknown = 0;
  for (let s = 0; s < al.snakes.length; s += 3)
    for (let t = 0; t < al.snakes[s + 2]; t++) if (!p.full(al.snakes[s] + t, al.snakes[s + 1] + t)) unknown++;
  const r: SequenceAccuracy = {
    truthLength: p.n,
    decodedLength: p.m,
    matched: al.matched,
    accuracy: p.n ? al.matched / p.n : 1,
    unknownFieldsMatched: unknown,
    exact: al.exact,
  };
  if (opts.pairs) {
    const { a, b } = alignmentPairs(al);
    for (let t = 0; t < a.length; t++) {
      a[t] = p.a.index[a[t]];
      b[t] = p.b.index[b[t]];
    }
    r.pairs = { truth: a, decoded: b };
  }
  return r;
}

/**
 * Accuracy of the decoded bytecode sequence: a monotone alignment of the two sides' bytecode events (kind 0) in
 * which paired events agree on every field known on both sides, matched over the truth's length.
 *
 * Without recovered events it is the largest such alignment (or near it: align.ts). With them, the alignment of
 * all events is taken, then each fill's neighbourhood is aligned again (fillRegions): a fill is a copy of events
 * from elsewhere in the thread, and one longer than its gap matched the truth after the gap as well as the
 * decoded events after it would have, by count, and left those unmatched (switches -Xint at 25% loss: 4 k decoded
 * events unmatched after a fill, DA 82%). What was decoded is measured as decoded (DA), a fill by what it adds (RA).
 */
export function sequenceAccuracy(truth: EventSeq, decoded: EventSeq, opts: SequenceOptions = {}): SequenceAccuracy {
  const origin = decoded.origin;
  let recovered = 0;
  if (origin) for (let i = 0; i < decoded.length; i++) if (decoded.kind[i] === EventKind.Bytecode && origin[i] === Origin.Recovered) recovered++;
  const whole = onePass(truth, decoded, recovered ? { ...opts, pairs: true } : opts);
  if (recovered === 0) return whole;
  const fills: FillMeasure[] = [];
  const { truth: pt, decoded: pd } = fillRegions(truth, decoded, whole.pairs!, opts, fills);
  let unknown = 0;
  for (let k = 0; k < pt.length; k++) if (!fullMatch(truth, pt[k], decoded, pd[k])) unknown++;
  // the fills' regions are aligned with the decoded events kept in place, a constraint: where the whole alignment
  // (as valid, every pair agreeing) matched more, that count is the better estimate of the largest; the pairs,
  // which say what was decoded and what recovered (DA, RA, the fills' measures), stay the regions'
  const matched = Math.max(pt.length, whole.matched);
  const r: SequenceAccuracy = { ...whole, matched, accuracy: whole.truthLength ? matched / whole.truthLength : 1, unknownFieldsMatched: unknown, exact: false, fills };
  if (opts.pairs) r.pairs = { truth: pt, decoded: pd };
  else delete r.pairs;
  return r;
}

const isFill = (s: EventSeq, i: number): boolean => s.kind[i] === EventKind.Bytecode && s.origin![i] === Origin.Recovered;

const fullMatch = (a: EventSeq, i: number, b: EventSeq, j: number): boolean =>
  a.opcode[i] >= 0 && b.opcode[j] >= 0 && a.method[i] >= 0 && b.method[j] >= 0 && a.bci[i] >= 0 && b.bci[j] >= 0;

/** Pairs of the whole alignment taken as placed: decoded (not recovered) events in a diagonal run this long. */
const TRUSTED_RUN = 32;

/**
 * The whole alignment with each fill's region aligned again. A region runs from the last trusted pair before a
 * fill (trusted: a decoded event in a run of TRUSTED_RUN pairs, each a few events from the last on both sides)
 * to where the next fill's region begins, the last to the end. In it, the decoded events before its fill are
 * aligned from its start, those after it from its end (on reversed sequences), and the fill with the truth left
 * between. So the decoded events keep the truth they match, and a fill gets the truth between them: its gap,
 * where the decoded events around it are placed right. (A trusted pair after a fill can be misplaced: a fill
 * too long for its gap matched the truth after it, a run of the decoded events after it matched a later round of
 * a loop, and the rest of them nothing.)
 */
function fillRegions(truth: EventSeq, decoded: EventSeq, whole: { truth: Int32Array; decoded: Int32Array }, opts: SequenceOptions, fills: FillMeasure[]): { truth: Int32Array; decoded: Int32Array } {
  const pt = whole.truth;
  const pd = whole.decoded;
  const n = pt.length;
  const trusted = new Uint8Array(n);
  for (let k = 0; k < n; ) {
    let e = k;
    if (!isFill(decoded, pd[k])) while (e + 1 < n && !isFill(decoded, pd[e + 1]) && pt[e + 1] - pt[e] <= 4 && pd[e + 1] - pd[e] <= 4) e++;
    if (e - k + 1 >= TRUSTED_RUN) trusted.fill(1, k, e + 1);
    k = e + 1;
  }
  // each fill's left end: the last trusted pair before it; fills with the same one share a region, and a region
  // ends where the next begins (the last at the end): the decoded events after a fill, up to the next one's
  // region, are aligned back from there
  const lefts: number[] = [];
  let k = 0;
  for (let i = 0; i < decoded.length; i++) {
    if (!isFill(decoded, i)) continue;
    while (k < n && pd[k] < i) k++;
    let left = k - 1;
    while (left >= 0 && !trusted[left]) left--;
    if (!lefts.length || left > lefts[lefts.length - 1]) lefts.push(left);
    while (i + 1 < decoded.length && (decoded.kind[i + 1] !== EventKind.Bytecode || isFill(decoded, i + 1))) i++;
  }
  const regions: number[] = [];
  for (let r = 0; r < lefts.length; r++) regions.push(lefts[r], r + 1 < lefts.length ? lefts[r + 1] : n);
  const outT: number[] = [];
  const outD: number[] = [];
  const push = (t: number, d: number): void => {
    outT.push(t);
    outD.push(d);
  };
  let c = 0; // next pair of the whole alignment to copy
  for (let r = 0; r < regions.length; r += 2) {
    const left = regions[r];
    const right = regions[r + 1];
    for (; c <= left; c++) push(pt[c], pd[c]);
    c = right;
    const t0 = left >= 0 ? pt[left] + 1 : 0;
    const d0 = left >= 0 ? pd[left] + 1 : 0;
    const t1 = right < n ? pt[right] : truth.length;
    const d1 = right < n ? pd[right] : decoded.length;
    let f0 = d0;
    while (!isFill(decoded, f0)) f0++;
    let f1 = d1 - 1;
    while (!isFill(decoded, f1)) f1--;
    f1++;
    const at = { ...opts, pairs: true };
    // decoded events before the first fill, from the region's start
    const pre = onePass(slice(truth, t0, t1), slice(decoded, d0, f0), at).pairs!;
    for (let t = 0; t < pre.truth.length; t++) push(t0 + pre.truth[t], d0 + pre.decoded[t]);
    const tq = pre.truth.length ? t0 + pre.truth[pre.truth.length - 1] + 1 : t0;
    // those after the last fill, from the region's end
    const post = onePass(reversed(truth, tq, t1), reversed(decoded, f1, d1), at).pairs!;
    const tp = post.truth.length ? t1 - 1 - post.truth[post.truth.length - 1] : t1;
    // the fills and what lies between them, with the truth left between
    const mid = onePass(slice(truth, tq, tp), slice(decoded, f0, f1), at).pairs!;
    for (let t = 0; t < mid.truth.length; t++) push(tq + mid.truth[t], f0 + mid.decoded[t]);
    const f: FillMeasure = { decodedFrom: f0, decodedTo: f1, truthFrom: tq, truthTo: tp, holeBytecodes: 0, fillBytecodes: 0, matched: 0 };
    for (let x = tq; x < tp; x++) if (truth.kind[x] === EventKind.Bytecode) f.holeBytecodes++;
    for (let x = f0; x < f1; x++) if (isFill(decoded, x)) f.fillBytecodes++;
    for (let t = 0; t < mid.decoded.length; t++) if (isFill(decoded, f0 + mid.decoded[t])) f.matched++;
    fills.push(f);
    for (let t = post.truth.length - 1; t >= 0; t--) push(t1 - 1 - post.truth[t], d1 - 1 - post.decoded[t]);
  }
  for (; c < n; c++) push(pt[c], pd[c]);
  return { truth: Int32Array.from(outT), decoded: Int32Array.from(outD) };
}

/** Events [from, to) of s, last first. */
function reversed(s: EventSeq, from: number, to: number): EventSeq {
  const r = slice(s, from, to);
  return {
    length: r.length,
    kind: r.kind.slice().reverse(),
    method: r.method.slice().reverse(),
    bci: r.bci.slice().reverse(),
    opcode: r.opcode.slice().reverse(),
    origin: r.origin?.slice().reverse(),
  };
}

/** Events [from, to) of s (views, not copies). */
function slice(s: EventSeq, from: number, to: number): EventSeq {
  return {
    length: to - from,
    kind: s.kind.subarray(from, to),
    method: s.method.subarray(from, to),
    bci: s.bci.subarray(from, to),
    opcode: s.opcode.subarray(from, to),
    origin: s.origin?.subarray(from, to),
  };
}

/** The alignment in one pass over all decoded events (sequenceAccuracy's, without recovered events). */
function onePass(truth: EventSeq, decoded: EventSeq, opts: SequenceOptions): SequenceAccuracy {
  const p = new BytecodeMatcher(select(truth, EventKind.Bytecode), select(decoded, EventKind.Bytecode), decoded.origin);
  const r = accuracyOf(p, opts);
  // an approximate alignment far below what the counts allow may have lost its way in a long stretch without
  // anchors (forced steps through a loop whose decoded rounds are longer: recovered fills): tried again with
  // a 4x window, the better one kept (both are alignments, so either is a lower bound of the best)
  if (r.exact || opts.window !== undefined || r.matched >= RETRY_BELOW * alignmentBound(truth, decoded)) return r;
  const wide = accuracyOf(p, { ...opts, window: 4 * DEFAULT_WINDOW });
  return wide.matched > r.matched ? { ...wide, widened: true } : r;
}

/**
 * An approximate alignment matching less than this share of the bound is tried again with a wider window.
 * Measured on switches JIT at 50% loss (a kept recording): the 4096 window matched 49.4% of the truth against a
 * bound of 98.96%, in 11.1 s; 16384 matched 94.1% in 5.1 s.
 */
const RETRY_BELOW = 0.8;

/** The same over entries and exits as (kind, method) symbols; an unknown method (-1) matches any of its kind. */
export function callSequenceAccuracy(truth: EventSeq, decoded: EventSeq, opts: SequenceOptions = {}): SequenceAccuracy {
  return accuracyOf(new CallMatcher(select(truth, EventKind.Entry, EventKind.Exit), select(decoded, EventKind.Entry, EventKind.Exit)), opts);
}

/**
 * Bytecode events counted per (method, bci): v0 the truth's, v1 the decoded side's (events with both known);
 * the truth's total, and the decoded events with and without method and bci.
 */
function bytecodeCounts(truth: EventSeq, decoded: EventSeq): { t: PairTable; truthTotal: number; truthUnattributed: number; attributed: number; unattributed: number } {
  const t = new PairTable();
  let truthTotal = 0;
  let truthUnattributed = 0;
  let attributed = 0;
  let unattributed = 0;
  for (let i = 0; i < truth.length; i++) {
    if (truth.kind[i] !== EventKind.Bytecode) continue;
    truthTotal++;
    if (truth.method[i] < 0 || truth.bci[i] < 0) {
      truthUnattributed++;
      continue;
    }
    const s = t.slot(truth.method[i], truth.bci[i]); // (before reading t.v0: adding a key may grow the table)
    t.v0[s]++;
  }
  for (let i = 0; i < decoded.length; i++) {
    if (decoded.kind[i] !== EventKind.Bytecode) continue;
    if (decoded.method[i] < 0 || decoded.bci[i] < 0) {
      unattributed++;
      continue;
    }
    attributed++;
    const s = t.slot(decoded.method[i], decoded.bci[i]);
    t.v1[s]++;
  }
  return { t, truthTotal, truthUnattributed, attributed, unattributed };
}

/** Execution counts per (method, bci) of bytecode events, truth against decoded (decoded events with both known). */
export function countError(truth: EventSeq, decoded: EventSeq): CountError {
  const { t, truthTotal, attributed } = bytecodeCounts(truth, decoded);
  let absError = 0;
  let covered = 0;
  for (let s = 0; s < t.capacity; s++) {
    if (!t.used[s]) continue;
    absError += Math.abs(t.v0[s] - t.v1[s]);
    if (t.v1[s] > 0) covered += t.v0[s];
  }
  return {
    keys: t.size,
    truthTotal,
    attributedDecoded: attributed,
    absError,
    relError: truthTotal ? absError / truthTotal : 0,
    coverage: truthTotal ? covered / truthTotal : 1,
  };
}

function topMethods(s: EventSeq, k: number): MethodCount[] {
  const t = new PairTable();
  for (let i = 0; i < s.length; i++) {
    if (s.kind[i] !== EventKind.Bytecode || s.method[i] < 0) continue;
    const slot = t.slot(s.method[i], 0); // (before reading t.v0: adding a key may grow the table)
    t.v0[slot]++;
  }
  const all: MethodCount[] = [];
  for (let slot = 0; slot < t.capacity; slot++) if (t.used[slot]) all.push({ method: t.ka[slot], count: t.v0[slot] });
  all.sort((x, y) => y.count - x.count || x.method - y.method);
  return all.slice(0, k);
}

/** The k methods with most bytecode events on each side (decoded: events whose method is known), and their overlap. */
export function hotMethodOverlap(truth: EventSeq, decoded: EventSeq, k = 10): HotMethods {
  const a = topMethods(truth, k);
  const b = topMethods(decoded, k);
  const inA = new Set(a.map((x) => x.method));
  const shared = b.filter((x) => inA.has(x.method)).length;
  const size = Math.max(a.length, b.length);
  return { k, truth: a, decoded: b, shared, overlap: size ? shared / size : 1, identical: shared === a.length && shared === b.length };
}

/** The four metrics for one thread. */
export function compareThread(truth: EventSeq, decoded: EventSeq, opts: SequenceOptions & { k?: number } = {}): ThreadComparison {
  return {
    sequence: sequenceAccuracy(truth, decoded, opts),
    calls: callSequenceAccuracy(truth, decoded, opts),
    counts: countError(truth, decoded),
    hot: hotMethodOverlap(truth, decoded, opts.k),
  };
}

/**
 * The paper's table rows for one thread, on bytecode events (truth length T):
 * PD = decoded (observed or inferred) events / T; DA = those of them aligned to the truth / them; PR = recovered
 * events / T; RA = those of them aligned / them; overall = all aligned / T.
 */
export interface LossAccuracy {
  truthLength: number;
  decoded: number;
  decodedMatched: number;
  recovered: number;
  recoveredMatched: number;
  pd: number;
  da: number;
  pr: number;
  /** NaN when nothing was recovered */
  ra: number;
  overall: number;
  /** alignmentBound over T: what no alignment of these two sequences can exceed */
  bound: number;
}

export function lossAccuracy(truth: EventSeq, decoded: EventSeq, opts: SequenceOptions = {}): LossAccuracy {
  const s = sequenceAccuracy(truth, decoded, { ...opts, pairs: true });
  const origin = decoded.origin;
  let dec = 0;
  let rec = 0;
  for (let i = 0; i < decoded.length; i++) {
    if (decoded.kind[i] !== EventKind.Bytecode) continue;
    if (origin && origin[i] === Origin.Recovered) rec++;
    else dec++;
  }
  let decM = 0;
  let recM = 0;
  const pd = s.pairs!.decoded;
  for (let k = 0; k < pd.length; k++) {
    if (origin && origin[pd[k]] === Origin.Recovered) recM++;
    else decM++;
  }
  const t = s.truthLength;
  return {
    truthLength: t,
    decoded: dec,
    decodedMatched: decM,
    recovered: rec,
    recoveredMatched: recM,
    pd: t ? dec / t : 0,
    da: dec ? decM / dec : 1,
    pr: t ? rec / t : 0,
    ra: rec ? recM / rec : NaN,
    overall: s.accuracy,
    bound: t ? alignmentBound(truth, decoded) / t : 1,
  };
}

/**
 * An upper bound of the bytecode events any alignment of the two sequences can match: per (method, bci) the
 * smaller of the two counts, plus the decoded events without method or bci (they match on the opcode alone), at
 * most the truth's length.
 */
export function alignmentBound(truth: EventSeq, decoded: EventSeq): number {
  const { t, truthTotal, truthUnattributed, unattributed } = bytecodeCounts(truth, decoded);
  let sum = 0;
  for (let s = 0; s < t.capacity; s++) if (t.used[s]) sum += Math.min(t.v0[s], t.v1[s]);
  // a bytecode without method or bci, on either side, may match any of the other side's
  return Math.min(truthTotal, sum + unattributed + truthUnattributed);
}
