import { align, callSequenceAccuracy, EventSeq, Matcher, sequenceAccuracy } from '../src';
import { bytecodeMatch, dpMatched, Ev, program, rng, seqOf } from './gen';

const full = (method: number, bci: number, opcode: number): Ev => ({ method, bci, opcode });
const interpreted = (opcode: number): Ev => ({ method: -1, bci: -1, opcode });
const compiled = (method: number, bci: number): Ev => ({ method, bci, opcode: -1 });
/** n events with distinct (method, bci) and opcodes cycling over 0..9 */
const distinct = (n: number): Ev[] => Array.from({ length: n }, (_, i) => full(i >> 4, i & 15, i % 10));

/** The first pair that is not strictly increasing on both sides, pairs a non-bytecode or fails the predicate; null if none. */
function badPair(t: EventSeq, d: EventSeq, pairs: { truth: Int32Array; decoded: Int32Array }): number | null {
  for (let q = 0; q < pairs.truth.length; q++) {
    const i = pairs.truth[q];
    const j = pairs.decoded[q];
    if (t.kind[i] !== 0 || d.kind[j] !== 0 || !bytecodeMatch(t, i, d, j)) return q;
    if (q > 0 && (i <= pairs.truth[q - 1] || j <= pairs.decoded[q - 1])) return q;
  }
  return null;
}
const checkPairs = (t: EventSeq, d: EventSeq, pairs: { truth: Int32Array; decoded: Int32Array }) => expect(badPair(t, d, pairs)).toBeNull();

describe('sequenceAccuracy', () => {
  test('identical sequences align completely, exactly', () => {
    const t = seqOf(distinct(500));
    const r = sequenceAccuracy(t, t, { pairs: true });
    expect(r).toMatchObject({ truthLength: 500, decodedLength: 500, matched: 500, accuracy: 1, unknownFieldsMatched: 0, exact: true });
    expect(Array.from(r.pairs!.truth)).toEqual(Array.from(r.pairs!.decoded));
  });

  test('known deletions, insertions and substitutions give the computable accuracy', () => {
    const truth = distinct(200);
    const dec = truth.slice();
    dec.splice(150, 5); // 5 deleted
    dec[100] = full(999, 0, 3); // 2 substituted by events that exist nowhere in the truth
    dec[40] = full(999, 1, 4);
    dec.splice(10, 0, full(998, 0, 1), full(998, 1, 2), full(998, 2, 3)); // 3 inserted
    const r = sequenceAccuracy(seqOf(truth), seqOf(dec));
    expect(r).toMatchObject({ truthLength: 200, decodedLength: 198, matched: 193, exact: true });
    expect(r.accuracy).toBeCloseTo(193 / 200, 12);
  });

  test('a field unknown on either side is a wildcard; a known field that differs never matches', () => {
    const t = seqOf([full(1, 0, 42), full(1, 1, 43), full(1, 2, 44), full(1, 3, 45), full(1, 4, 46)]);
    const d = seqOf([
      interpreted(42), // opcode only: matches
      compiled(1, 1), // method and bci only: matches
      { method: 1, bci: 2, opcode: 99 }, // right place, wrong opcode: no match
      { method: -1, bci: -1, opcode: -1 }, // nothing known: no match
      { method: 1, bci: -1, opcode: 46 }, // method and opcode: matches event 4
    ]);
    const r = sequenceAccuracy(t, d, { pairs: true });
    expect(r.matched).toBe(3);
    expect(r.unknownFieldsMatched).toBe(3);
    expect(Array.from(r.pairs!.truth)).toEqual([0, 1, 4]);
    expect(Array.from(r.pairs!.decoded)).toEqual([0, 1, 4]);
  });

  test('only bytecode events are aligned; pairs index the original sequences', () => {
    const t = seqOf([{ kind: 1, method: 1, bci: -1, opcode: -1 }, full(1, 0, 5), full(1, 1, 6), { kind: 2, method: 1, bci: -1, opcode: -1 }]);
    const d = seqOf([{ kind: 3, method: -1, bci: 7, opcode: -1 }, interpreted(5), { kind: 1, method: -1, bci: -1, opcode: -1 }, interpreted(6)]);
    const r = sequenceAccuracy(t, d, { pairs: true });
    expect(r).toMatchObject({ truthLength: 2, decodedLength: 2, matched: 2, accuracy: 1 });
    expect(Array.from(r.pairs!.truth)).toEqual([1, 2]);
    expect(Array.from(r.pairs!.decoded)).toEqual([1, 3]);
  });

  test('empty sides', () => {
    const t = seqOf(distinct(10));
    const e = seqOf([]);
    expect(sequenceAccuracy(t, e)).toMatchObject({ matched: 0, accuracy: 0, exact: true });
    expect(sequenceAccuracy(e, t)).toMatchObject({ matched: 0, accuracy: 1, truthLength: 0 });
  });
});

/** A random related pair: truth from a small program; decoded with edits at `rate` and fields hidden as a decoder would. */
function randomPair(seed: number, n: number, rate: number, opcodes: number): { t: EventSeq; d: EventSeq } {
  const r = rng(seed);
  const blocks = program(r, 6, opcodes);
  const truth: Ev[] = [];
  while (truth.length < n) truth.push(...blocks[Math.floor(r() * blocks.length)]);
  truth.length = n;
  const dec: Ev[] = [];
  const any = () => {
    const b = blocks[Math.floor(r() * blocks.length)];
    return b[Math.floor(r() * b.length)];
  };
  for (const e of truth) {
    const u = r();
    if (u < rate / 3) continue; // deleted
    if (u < (2 * rate) / 3) dec.push(any()); // inserted (a real instruction, so it may match elsewhere)
    dec.push(u < rate ? any() : e); // substituted or kept
  }
  // hide fields: interpreted stretches carry the opcode only, compiled ones method and bci (opcode sometimes filled)
  let mode = 0;
  const hidden = dec.map((e) => {
    if (r() < 0.05) mode = Math.floor(r() * 3);
    return mode === 0 ? interpreted(e.opcode) : mode === 1 ? compiled(e.method, e.bci) : e;
  });
  return { t: seqOf(truth), d: seqOf(hidden) };
}

describe('alignment against an O(N*M) dynamic program', () => {
  test('exact mode equals the DP on random inputs (edits 0-60%, 3-40 opcodes, wildcards)', () => {
    for (let seed = 1; seed <= 120; seed++) {
      const n = 20 + (seed % 7) * 40;
      const { t, d } = randomPair(seed, n, [0, 0.02, 0.1, 0.3, 0.6][seed % 5], [3, 8, 40][seed % 3]);
      const r = sequenceAccuracy(t, d, { pairs: true });
      expect(r.exact).toBe(true);
      expect(r.matched).toBe(dpMatched(t, d));
      expect(r.pairs!.truth.length).toBe(r.matched);
      checkPairs(t, d, r.pairs!);
    }
  });

  test('the forced approximate path (exact runs off, windows of 16-64): valid, <= the DP, >= 98% of it, 99.5% in total', () => {
    let sumApprox = 0;
    let sumDp = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const n = 100 + (seed % 5) * 100;
      const rate = [0.005, 0.02, 0.05, 0.1, 0.3][seed % 5];
      const { t, d } = randomPair(1000 + seed, n, rate, [8, 40, 202][seed % 3]);
      const r = sequenceAccuracy(t, d, { pairs: true, exactMaxEdits: 0, window: [16, 32, 64][seed % 3] });
      const dp = dpMatched(t, d);
      expect(r.exact).toBe(false);
      expect(r.matched).toBeLessThanOrEqual(dp);
      expect(r.matched).toBeGreaterThanOrEqual(0.98 * dp);
      checkPairs(t, d, r.pairs!);
      sumApprox += r.matched;
      sumDp += dp;
    }
    expect(sumApprox / sumDp).toBeGreaterThan(0.995);
  });

  test('short grams make anchors of short stretches (some spurious): still valid and <= the DP', () => {
    let sumApprox = 0;
    let sumDp = 0;
    for (let seed = 1; seed <= 90; seed++) {
      const { t, d } = randomPair(3000 + seed, 300, [0.02, 0.1, 0.3][seed % 3], [8, 40, 202][seed % 3]);
      const r = sequenceAccuracy(t, d, { pairs: true, exactMaxEdits: 0, window: 16, gram: [4, 8, 16][seed % 3] });
      const dp = dpMatched(t, d);
      expect(r.matched).toBeLessThanOrEqual(dp);
      checkPairs(t, d, r.pairs!);
      sumApprox += r.matched;
      sumDp += dp;
    }
    expect(sumApprox / sumDp).toBeGreaterThan(0.9);
  });

  test('the forced approximate path on unrelated random inputs: valid and <= the DP', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const a = randomPair(5000 + seed, 150, 0, 6).t;
      const b = randomPair(7000 + seed, 150, 0, 6).d;
      const r = sequenceAccuracy(a, b, { pairs: true, exactMaxEdits: 0, window: 32, gram: 4 });
      expect(r.matched).toBeLessThanOrEqual(dpMatched(a, b));
      checkPairs(a, b, r.pairs!);
    }
  });
});

describe('callSequenceAccuracy', () => {
  const call = (kind: number, method: number): Ev => ({ kind, method, bci: -1, opcode: -1 });
  test('entries and exits align as (kind, method); an unknown method matches any entry', () => {
    const t = seqOf([call(1, 1), full(1, 0, 1), call(1, 2), call(2, 2), call(1, 3), call(2, 3), call(2, 1)]);
    const d = seqOf([call(1, -1), call(1, 2), call(2, 2), call(1, 4), call(2, 3), call(2, 1)]);
    const r = callSequenceAccuracy(t, d, { pairs: true });
    // entry 3 is decoded as entry 4 (no match); everything else aligns, the first entry by wildcard
    expect(r).toMatchObject({ truthLength: 6, decodedLength: 6, matched: 5, unknownFieldsMatched: 1, exact: true });
    expect(Array.from(r.pairs!.truth)).toEqual([0, 2, 3, 5, 6]);
    expect(Array.from(r.pairs!.decoded)).toEqual([0, 1, 2, 4, 5]);
  });

  test('an entry never matches an exit', () => {
    const r = callSequenceAccuracy(seqOf([call(1, 1)]), seqOf([call(2, 1)]));
    expect(r.matched).toBe(0);
  });
});

describe('align (generic)', () => {
  test('a custom predicate: equal up to case, Myers exact against the DP', () => {
    const r = rng(7);
    for (let round = 0; round < 30; round++) {
      const a = Array.from({ length: 80 }, () => 'abcAB'[Math.floor(r() * 5)]);
      const b = Array.from({ length: 70 }, () => 'abcAB'[Math.floor(r() * 5)]);
      const p: Matcher = {
        n: a.length,
        m: b.length,
        keyA: Int32Array.from(a, (c) => c.toLowerCase().charCodeAt(0)),
        keyB: Int32Array.from(b, (c) => c.toLowerCase().charCodeAt(0)),
        match: (i, j) => a[i].toLowerCase() === b[j].toLowerCase(),
      };
      let prev = new Int32Array(b.length + 1);
      let cur = new Int32Array(b.length + 1);
      for (let i = 0; i < a.length; i++) {
        for (let j = 1; j <= b.length; j++) cur[j] = p.match(i, j - 1) ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
        [prev, cur] = [cur, prev];
      }
      expect(align(p).matched).toBe(prev[b.length]);
    }
  });
});
