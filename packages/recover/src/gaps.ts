/**
 * Recovery of lost stretches: a thread's decoded events have a `gap` event wherever PT data was lost. Programs
 * repeat themselves, so what ran in a gap has usually run elsewhere in the same thread with the same context:
 * the K bytecodes before the gap and the K after it. For each gap this finds the complete stretches (no gap
 * inside) that start right after an occurrence of the pre-gap context and end right before an occurrence of the
 * post-gap context; where the post context comes again and again (a loop), the end whose PT time best matches the
 * gap's time (last event before it to first after it) is taken, within a multiple of that time. The most
 * frequent of the candidates' fills is copied into the gap.
 *
 * Contexts are found through an index of K-grams of (method, bci) keys, so the work is linear in the trace plus
 * a bounded walk per candidate. Copied events keep their kind, method, bci and opcode; their source becomes
 * RECOVERED and their time is spread over the gap's time span. The gap event itself stays: the data was lost,
 * and what fills it is a reconstruction, scored by how many candidates agreed.
 */
import { EventStream } from '@jportal/decode';

// EventKind and EventSource values of @jportal/decode (const enums: not readable across isolated modules)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const EXCEPTION = 5;
/** EventSource of an event copied into a gap by recovery. */
export const RECOVERED_SOURCE = 4;

export interface RecoveryOptions {
  /** bytecodes of context on each side of a gap (default 6) */
  context?: number;
  /** candidate occurrences of the pre-gap context tried per gap (default 32) */
  candidates?: number;
  /** longest fill in bytecodes (default 200000) */
  maxFill?: number;
  /** a fill may take at most this many times the gap's PT time span, and at least its share (default 4) */
  timeFactor?: number;
  /**
   * Gap reasons (GapReason values of @jportal/decode) to fill; default: overflow only (data the PT unit lost).
   * Decoder gaps (a mismatch with the code image, ...) are short and sit where the decode itself went wrong.
   */
  reasons?: number[];
}

export interface RecoveryStats {
  gaps: number;
  /** gaps filled */
  recovered: number;
  /** gaps with no usable context on one side (stream start or end, unattributed events) */
  noContext: number;
  /** gaps whose context occurs elsewhere but no stretch fits (too long, no post context) */
  noCandidate: number;
  /** gaps filled with whole iterations of a loop (no complete stretch as long as the gap was found) */
  periodic: number;
  /** filled gaps where the candidates disagreed (the most frequent fill was taken) */
  ambiguous: number;
  /** bytecode events copied into gaps */
  bytecodes: number;
  /** all events copied into gaps */
  events: number;
}

export interface GapFill {
  /** index of the gap event in the input */
  gap: number;
  /** bytecodes copied */
  bytecodes: number;
  /** candidates that agreed with the chosen fill, and candidates that fit at all */
  agreeing: number;
  fitting: number;
}

const UNKNOWN = -1;

export function recoverGaps(input: EventStream, opts: RecoveryOptions = {}): { events: EventStream; stats: RecoveryStats; fills: GapFill[] } {
  const K = Math.max(1, opts.context ?? 6);
  const maxCand = opts.candidates ?? 32;
  const maxFill = opts.maxFill ?? 200_000;
  const timeFactor = opts.timeFactor ?? 4;
  const reasons = new Set(opts.reasons ?? [0]);
  const stats: RecoveryStats = { gaps: 0, recovered: 0, noContext: 0, noCandidate: 0, periodic: 0, ambiguous: 0, bytecodes: 0, events: 0 };
  const fills: GapFill[] = [];

  // the bytecode subsequence: event index, key, segment (gaps separate segments)
  let n = 0;
  for (let i = 0; i < input.length; i++) if (input.kind[i] === BYTECODE) n++;
  const pos = new Int32Array(n);
  const key = new Float64Array(n);
  const seg = new Int32Array(n);
  /** for each event index: bytecodes before it (so a gap at event i lies between bytecodes before[i]-1 and before[i]) */
  const gapAt: number[] = [];
  const gapBefore: number[] = [];
  for (let i = 0, b = 0, s = 0; i < input.length; i++) {
    const k = input.kind[i];
    if (k === GAP) {
      s++;
      if (reasons.has(input.bci[i])) {
        gapAt.push(i);
        gapBefore.push(b);
      }
    } else if (k === BYTECODE) {
      pos[b] = i;
      key[b] = input.method[i] >= 0 && input.bci[i] >= 0 ? input.method[i] * 65536 + input.bci[i] : UNKNOWN;
      seg[b++] = s;
    }
  }
  stats.gaps = gapAt.length;

  // hash of the K-gram ending at each bytecode (NaN when it crosses a gap or holds an unknown key)
  const gram = new Float64Array(n).fill(NaN);
  for (let j = K - 1; j < n; j++) {
    if (seg[j - K + 1] !== seg[j]) continue;
    let h = 0x811c9dc5;
    let ok = true;
    for (let t = j - K + 1; t <= j; t++) {
      const x = key[t];
      if (x === UNKNOWN) {
        ok = false;
        break;
      }
      h = Math.imul(h ^ (x & 0xffffffff), 0x01000193) >>> 0;
      h = Math.imul(h ^ Math.floor(x / 4294967296), 0x01000193) >>> 0;
    }
    if (ok) gram[j] = h;
  }
  const sameGram = (a: number, b: number): boolean => {
    for (let t = 0; t < K; t++) if (key[a - t] !== key[b - t]) return false;
    return true;
  };
  // occurrences of each gram (the first few per gram: enough candidates, bounded memory)
  const index = new Map<number, number[]>();
  for (let j = 0; j < n; j++) {
    const h = gram[j];
    if (Number.isNaN(h)) continue;
    let l = index.get(h);
    if (!l) index.set(h, (l = []));
    if (l.length < maxCand * 4) l.push(j);
  }

  // choose a fill per gap: [first bytecode, last bytecode] of the stretch to copy
  /** per gap event: copy bytecodes [loopFrom, loopTo] `times` times, then [from, to] */
  const chosen = new Map<number, { from: number; to: number; loopFrom: number; loopTo: number; times: number }>();
  /** Bytecodes the thread would run in `span` ticks at the pace of the segment that ends at bytecode `a`. */
  const expectedBytecodes = (a: number, span: number): number => {
    let s0 = a;
    while (s0 > 0 && seg[s0 - 1] === seg[a]) s0--;
    const dt = input.tsc[pos[a]] - input.tsc[pos[s0]];
    return dt > 0 && span > 0 ? ((a - s0 + 1) / dt) * span : 0;
  };

  /**
   * Whole iterations of a loop through the pre context, then the part of one up to the post context: from an
   * occurrence j of the pre context whose next occurrence j2 (one iteration later) lies in the same segment and
   * whose iteration holds the post context at q. `times` follows from the gap's time and the iteration's.
   */
  const periodicFill = (a: number, post: number, span: number, expected: number) => {
    const occ = index.get(gram[a])!;
    let tried = 0;
    for (let o = 0; o + 1 < occ.length && tried < maxCand; o++) {
      const j = occ[o];
      const j2 = occ[o + 1];
      if (j === a || j2 === a || seg[j2] !== seg[j] || !sameGram(j, a) || !sameGram(j2, a)) continue;
      tried++;
      const period = input.tsc[pos[j2]] - input.tsc[pos[j]];
      for (let q = j + 1; q <= j2 && q + K - 1 < n && seg[q + K - 1] === seg[j]; q++) {
        if (gram[q + K - 1] !== gram[post] || !sameGram(q + K - 1, post)) continue;
        const partial = input.tsc[pos[q]] - input.tsc[pos[j]];
        if (span > 0 && partial > span * timeFactor) break; // even the part up to the post context takes too long
        const times = period > 0 && span > partial ? Math.round((span - partial) / period) : 0;
        // timestamps are coarse (MTC): no more bytecodes than the thread ran before the gap at its own pace
        if (times * (j2 - j) > Math.min(maxFill, expected * timeFactor)) return undefined;
        return { from: j + 1, to: q - 1, loopFrom: j + 1, loopTo: j2, times };
      }
    }
    return undefined;
  };

  for (let g = 0; g < gapAt.length; g++) {
    const a = gapBefore[g] - 1; // last bytecode before the gap
    const b = gapBefore[g]; // first after
    const post = b + K - 1;
    if (a < 0 || post >= n || Number.isNaN(gram[a]) || Number.isNaN(gram[post]) || seg[post] === seg[a]) {
      stats.noContext++;
      continue;
    }
    const gi = gapAt[g];
    // the time from the last event before the gap to the first after it, which a fill's own time should match
    const span = input.tsc[pos[b]] - input.tsc[pos[a]];
    const budget = span > 0 ? span * timeFactor : Infinity;
    const occurrences = index.get(gram[a])!;
    const byFill = new Map<string, { count: number; from: number; to: number; dt: number }>();
    let fitting = 0;
    let tried = 0;
    for (const j of occurrences) {
      if (j === a || !sameGram(j, a)) continue;
      if (++tried > maxCand) break;
      // among the places where the post context follows (a loop repeats it every iteration), the one whose time
      // best matches the gap's
      const t0 = input.tsc[pos[j]];
      let bestQ = -1;
      let bestErr = Infinity;
      for (let q = j + 1; q + K - 1 < n && q - j - 1 <= maxFill && seg[q + K - 1] === seg[j]; q++) {
        const dt = input.tsc[pos[q]] - t0;
        if (dt > budget) break;
        if (gram[q + K - 1] !== gram[post] || !sameGram(q + K - 1, post)) continue;
        if (span > 0 && dt * timeFactor < span) continue; // far quicker than the gap: not what ran there
        const err = Math.abs(dt - span);
        if (err < bestErr) {
          bestErr = err;
          bestQ = q;
        }
        if (span <= 0) break; // no time to go by: the shortest
      }
      if (bestQ < 0) continue;
      fitting++;
      const sig = fillSignature(key, j + 1, bestQ - 1);
      const e = byFill.get(sig);
      if (e) e.count++;
      else byFill.set(sig, { count: 1, from: j + 1, to: bestQ - 1, dt: input.tsc[pos[bestQ]] - t0 });
    }
    if (!fitting) {
      // a loop: the pre context comes again one iteration later, and the post context within that iteration;
      // the gap is whole iterations plus the part up to the post context, as many as its time allows
      const loop = periodicFill(a, post, span, expectedBytecodes(a, span));
      if (!loop) {
        stats.noCandidate++;
        continue;
      }
      chosen.set(gi, loop);
      stats.periodic++;
      fills.push({ gap: gi, bytecodes: loop.times * (loop.loopTo - loop.loopFrom + 1) + Math.max(0, loop.to - loop.from + 1), agreeing: 1, fitting: 1 });
      continue;
    }
    let best: { count: number; from: number; to: number; dt: number } | undefined;
    for (const e of byFill.values()) if (!best || e.count > best.count || (e.count === best.count && Math.abs(e.dt - span) < Math.abs(best.dt - span))) best = e;
    if (byFill.size > 1) stats.ambiguous++;
    chosen.set(gi, { from: best!.from, to: best!.to, loopFrom: 0, loopTo: -1, times: 0 });
    fills.push({ gap: gi, bytecodes: Math.max(0, best!.to - best!.from + 1), agreeing: best!.count, fitting });
  }

  // the output: the input with each chosen stretch copied after its gap event
  const out = new EventStream();
  for (let i = 0; i < input.length; i++) {
    out.push(input.kind[i], input.source[i], input.method[i], input.bci[i], input.opcode[i], input.tsc[i], input.aux[i]);
    const c = chosen.get(i);
    if (!c) continue;
    stats.recovered++;
    const t0 = input.tsc[i];
    const t1 = input.aux[i] > t0 ? input.aux[i] : t0;
    // the events of bytecodes [from, to] and the calls and returns between them: from just after the bytecode
    // before `from` up to just before the bytecode after `to`
    const spans: [number, number][] = [];
    for (let r = 0; r < c.times; r++) spans.push([pos[c.loopFrom - 1] + 1, pos[c.loopTo]]);
    if (c.to >= c.from || c.times > 0) spans.push([pos[c.from - 1] + 1, pos[c.to + 1] - 1]);
    let count = 0;
    for (const [e0, e1] of spans) count += Math.max(0, e1 - e0 + 1);
    let k = 0;
    for (const [e0, e1] of spans)
      for (let e = e0; e <= e1; e++, k++) {
        const kind = input.kind[e];
        if (kind !== BYTECODE && kind !== ENTRY && kind !== EXIT && kind !== EXCEPTION) continue;
        out.push(kind, RECOVERED_SOURCE, input.method[e], input.bci[e], input.opcode[e], t0 + ((t1 - t0) * (k + 1)) / (count + 1), input.aux[e]);
        stats.events++;
        if (kind === BYTECODE) stats.bytecodes++;
      }
  }
  return { events: out, stats, fills };
}

/** A fill's identity: its keys (the same stretch of code from two places is one candidate). */
function fillSignature(key: Float64Array, from: number, to: number): string {
  if (to < from) return '';
  let h1 = 0x811c9dc5;
  let h2 = 0x12345678;
  for (let t = from; t <= to; t++) {
    const x = key[t];
    h1 = Math.imul(h1 ^ (x & 0xffffffff), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ Math.floor(x / 65536), 0x5bd1e995) >>> 0;
  }
  return `${to - from + 1}:${h1}:${h2}`;
}
