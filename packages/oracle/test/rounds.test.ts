import { sequenceAccuracy } from '../src';
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
