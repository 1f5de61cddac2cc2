import { lossAccuracy, sequenceAccuracy } from '../src';
import { Builder, corrupt, program, rng } from './gen';

/**
 * A loop of rounds alike in their bytecodes (recursion 200: main's loop calls fib(12 + i % 4) and walks a tree
 * each round): no gram longer than a round is unique, so unique-gram anchors find nothing to split on, while a
 * round's header gram runs once per round on both sides.
 */
function rounds(seed: number, count: number): { seq: ReturnType<Builder['seq']>; starts: number[] } {
  const r = rng(seed);
  const prog = program(r, 12);
  const out = new Builder();
  const run = (b: number, times: number) => {
    for (let k = 0; k < times; k++) for (const e of prog[b]) out.push(0, e.method, e.bci, e.opcode);
  };
  const starts: number[] = [];
  for (let i = 0; i < count; i++) {
    starts.push(out.length);
    run(0, 1); // the loop's header
    for (let k = 0; k < 40 * (1 + (i % 4)); k++) run(1 + (k % 3), 1 + (k % 2)); // fib-like, size by i % 4
    run(4, 1);
    for (let k = 0; k < 30; k++) run(5 + (k % 2), 1); // the tree walk, the same each round
  }
  return { seq: out.seq(), starts };
}

describe('rounds of a loop', () => {
  test(
    'equal-count anchors align the rounds where unique grams cannot (a decoded-only stretch near the end, lost events early)',
    () => {
      const { seq: truth, starts } = rounds(11, 200);
      // inside rounds 1-4, clear of their headers: what a decoder loses while a method's code warms up
      const inside = (k: number, len: number): [number, number] => [starts[k] + 100, Math.min(len, starts[k + 1] - starts[k] - 200)];
      const r = rng(12);
      const n = truth.length;
      const { decoded, kept } = corrupt(r, truth, {
        rate: 0, // the losses are where the decoder goes wrong: in a few early rounds (code still warming up)
        gaps: [inside(1, 500), inside(2, 2_000), inside(4, 3_000)],
        junk: [
          [starts[3] + 500, 1_000],
          [Math.floor(0.995 * n), 300_000], // an activation the oracle could not see, near the end
        ],
      });
      const unique = sequenceAccuracy(truth, decoded, { anchorCount: 1 });
      const counted = sequenceAccuracy(truth, decoded);
      console.log(`${n} events in 200 rounds: construction ${(kept / n).toFixed(5)}, unique-gram anchors ${unique.accuracy.toFixed(5)}, equal-count anchors ${counted.accuracy.toFixed(5)}`);
      expect(counted.matched).toBeLessThanOrEqual(kept);
      expect(counted.matched).toBeGreaterThanOrEqual(kept - 0.001 * n);
      expect(unique.matched).toBeLessThan(0.9 * kept); // what patience diff's unique grams alone made of it
    },
    120_000,
  );
});

describe('recovered events', () => {
  test('a recovered copy of a stretch unique in the truth anchors nothing: it would split a lossy loop far off its diagonal', () => {
    const r = rng(21);
    const prog = program(r, 10);
    const out = new Builder();
    const run = (b: number) => {
      for (const e of prog[b]) out.push(0, e.method, e.bci, e.opcode);
    };
    // start-up (blocks 0-1, once), the way into the loop (block 2, once), 300 alike rounds (blocks 3-6), the end (7-9)
    run(0);
    run(1);
    const into = out.length;
    run(2);
    const rounds = out.length;
    for (let i = 0; i < 300; i++) for (let b = 3; b <= 6; b++) run(b);
    const ending = out.length;
    for (let b = 7; b <= 9; b++) run(b);
    const truth = out.seq();
    // the decoded side: the way into the loop lost, the end lost, and recovery's copy of the way into the loop put
    // into a gap a quarter of the way through the loop (its events are marked recovered)
    const late = rounds + Math.floor(0.25 * (ending - rounds));
    const d = new Builder();
    const origin: number[] = [];
    const copy = (i: number, o: number) => {
      d.push(0, truth.method[i], truth.bci[i], truth.opcode[i]);
      origin.push(o);
    };
    for (let i = 0; i < into; i++) copy(i, 0);
    // a fill that went wrong where the way into the loop was lost (the windowed extension stops in it)
    for (let k = 0; k < 2_000; k++) {
      d.push(0, 2_000_000 + (k % 499), 0, 251);
      origin.push(2);
    }
    for (let i = rounds; i < ending; i++) {
      if (i === late) for (let k = into; k < rounds; k++) copy(k, 2);
      copy(i, 0);
    }
    // and it ends in what the truth does not have (the truth's last activations hidden from the oracle, say)
    for (let k = 0; k < 10_000; k++) {
      d.push(0, 1_000_000 + (k % 977), 0, 250);
      origin.push(0);
    }
    const decoded = { ...d.seq(), origin: Uint8Array.from(origin) };
    const kept = into + (ending - rounds); // the truth events the decoded side has, in order
    const res = sequenceAccuracy(truth, decoded, { exactMaxEdits: 0 });
    const asObserved = sequenceAccuracy(truth, { ...decoded, origin: new Uint8Array(decoded.length) }, { exactMaxEdits: 0 });
    console.log(`recovered copy: ${res.matched} of ${kept} kept matched; the same events taken as observed: ${asObserved.matched}`);
    expect(res.matched).toBeGreaterThanOrEqual(kept - 0.001 * truth.length);
    // the copy, anchoring, splits the loop off its diagonal (a quarter of the way in: within the band anchors may
    // lie in, see the next test for one farther off)
    expect(asObserved.matched).toBeLessThan(0.8 * kept);
  });
});

describe('anchors off the diagonal', () => {
  test('a stretch the two sides share only far apart (early in one, at the end of the other) anchors nothing', () => {
    const r = rng(31);
    const prog = program(r, 48);
    const t = new Builder();
    const d = new Builder();
    const run = (out: Builder, b: number) => {
      for (const e of prog[b]) out.push(0, e.method, e.bci, e.opcode);
    };
    // truth: start-up (0), a stretch run once (1, 2, 8-47: longer than the extension's edits allow), 400 alike
    // rounds (3-6), the end (7)
    // decoded: start-up, a stretch that went wrong (junk: the extension stops in it), the rounds with every
    // fifth lost (no gram occurs equally often on both sides), then the once-run stretch (misplaced), the end
    const once = [1, 2, ...Array.from({ length: 40 }, (_, k) => 8 + k)];
    run(t, 0);
    for (const b of once) run(t, b);
    for (let i = 0; i < 400; i++) for (let b = 3; b <= 6; b++) run(t, b);
    run(t, 7);
    run(d, 0);
    for (let k = 0; k < 3_000; k++) d.push(0, 3_000_000 + (k % 701), 0, 249);
    let kept = prog[0].length + prog[7].length;
    for (let i = 0; i < 400; i++)
      if (i % 5 !== 2)
        for (let b = 3; b <= 6; b++) {
          run(d, b);
          kept += prog[b].length;
        }
    for (const b of once) run(d, b);
    run(d, 7);
    const truth = t.seq();
    const decoded = d.seq();
    const res = sequenceAccuracy(truth, decoded, { exactMaxEdits: 0 });
    console.log(`misplaced stretch: ${res.matched} matched of ${kept} the rounds and ends give (truth ${truth.length})`);
    // the rounds align (less the misplaced stretch, which no monotone alignment can have with them)
    expect(res.matched).toBeGreaterThanOrEqual(0.99 * kept);
  });
});

describe('fills of the wrong length', () => {
  /**
   * Truth: start-up, 600 alike rounds (every 20th also runs a block of its own: switches' rare sparse cases),
   * the end. Decoded: the same with two gaps of 40 rounds, filled with copies of plain rounds, one 3x too long
   * and one a third as long: the decoded events keep their truth, and each fill gets at most its gap.
   */
  test('decoded events are aligned before fills: a fill longer than its gap does not take the truth after it', () => {
    const r = rng(41);
    const prog = program(r, 40);
    const t = new Builder();
    const d = new Builder();
    const origin: number[] = [];
    const run = (out: Builder, b: number, o = -1): number => {
      for (const e of prog[b]) {
        out.push(0, e.method, e.bci, e.opcode);
        if (o >= 0) origin.push(o);
      }
      return prog[b].length;
    };
    const round = (out: Builder, i: number, o = -1): number => {
      let n = 0;
      for (let b = 2; b <= 5; b++) n += run(out, b, o);
      if (i % 20 === 0) n += run(out, 7 + i / 20, o);
      return n;
    };
    run(t, 0);
    run(t, 1);
    for (let i = 0; i < 600; i++) round(t, i);
    run(t, 6);
    let observed = run(d, 0, 0) + run(d, 1, 0);
    let gapped = 0;
    let firstGap = 0;
    let filled = 0;
    for (let i = 0; i < 600; i++) {
      if (i === 150) for (let k = 0; k < 120; k++) filled += round(d, 1, 2); // 3x the gap
      if (i === 400) for (let k = 0; k < 13; k++) filled += round(d, 1, 2); // a third of it
      if ((i >= 150 && i < 190) || (i >= 400 && i < 440)) {
        const n = round(new Builder(), i);
        gapped += n;
        if (i < 190) firstGap += n;
      }
      else observed += round(d, i, 0);
    }
    observed += run(d, 6, 0);
    const truth = t.seq();
    const decoded = { ...d.seq(), origin: Uint8Array.from(origin) };
    const res = lossAccuracy(truth, decoded, { exactMaxEdits: 0 });
    console.log(`fills: decoded ${res.decodedMatched} of ${res.decoded} matched; recovered ${res.recoveredMatched} of ${res.recovered} (gaps ${gapped})`);
    expect(res.decoded).toBe(observed);
    expect(res.recovered).toBe(filled);
    expect(res.decodedMatched).toBeGreaterThanOrEqual(0.999 * observed);
    // the long fill matches no more than its gap (40 rounds less its two rare blocks), the short one itself
    const plain = prog.slice(2, 6).reduce((s, b) => s + b.length, 0);
    expect(res.recoveredMatched).toBeLessThanOrEqual(53 * plain);
    expect(res.recoveredMatched).toBeGreaterThanOrEqual(52 * plain);
    // per fill: the long one against its gap (40 rounds, two of them with their own block), the short one
    const fills = sequenceAccuracy(truth, decoded, { exactMaxEdits: 0 }).fills!;
    expect(fills.map((f) => f.fillBytecodes)).toEqual([120 * plain, 13 * plain]);
    expect(fills[0].holeBytecodes).toBe(firstGap);
    expect(fills[1].holeBytecodes).toBe(gapped - firstGap);
    expect(fills[0].matched).toBeLessThanOrEqual(40 * plain);
    expect(fills[1].matched).toBe(13 * plain);
    // the count is never below the plain alignment of the same events (fills aligned as any decoded event): the
    // regions keep the decoded events in place, a constraint that can cost matches
    const plainAlignment = sequenceAccuracy(truth, { ...decoded, origin: undefined }, { exactMaxEdits: 0 });
    console.log(`matched: plain alignment ${plainAlignment.matched}, with fills' regions ${sequenceAccuracy(truth, decoded, { exactMaxEdits: 0 }).matched}`);
    expect(sequenceAccuracy(truth, decoded, { exactMaxEdits: 0 }).matched).toBeGreaterThanOrEqual(plainAlignment.matched);
  });
});

describe('sides out of step by more than a window', () => {
  test('a stretch only one side has, where nothing anchors: forced steps find where the sides agree again', () => {
    // start-up code run once (3,000 events), then 100 rounds of a loop, each 5 phases of 2,000 events of their own
    // code; the decoded side lost the start-up and ends with 5,000 events the truth lacks (an activation the
    // oracle cannot see). No anchors (grams longer than either side), so neither end extends: forced steps from
    // the start. The first pairs the start-up's window with the loop's and matches nothing; in lockstep from
    // there, windows of the two sides would hold different code to the end
    const r = rng(31);
    const truth = new Builder();
    const decoded = new Builder();
    let kept = 0;
    for (let k = 0; k < 3_000; k++) truth.push(0, 6000 + (k >> 4), k & 15, Math.floor(r() * 200));
    const phases = Array.from({ length: 5 }, (_, p) => Array.from({ length: 2_000 }, (_, k) => [100 * (p + 1) + (k >> 5), k & 31, Math.floor(r() * 200)]));
    for (let round = 0; round < 100; round++)
      for (const phase of phases)
        for (const [m, b, o] of phase) {
          truth.push(0, m, b, o);
          decoded.push(0, m, b, o);
          kept++;
        }
    for (let k = 0; k < 5_000; k++) decoded.push(0, 999_999, k & 7, 250);
    const t = truth.seq();
    const s = sequenceAccuracy(t, decoded.seq(), { gram: 1 << 21 });
    console.log(`${t.length} events: construction ${(kept / t.length).toFixed(5)}, aligned ${s.accuracy.toFixed(5)}`);
    expect(s.matched).toBeLessThanOrEqual(kept);
    expect(s.matched).toBeGreaterThanOrEqual(0.98 * kept);
  });
});
