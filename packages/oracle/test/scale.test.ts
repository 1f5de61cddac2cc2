import { sequenceAccuracy } from '../src';
import { corrupt, dpMatched, rng, traceLike } from './gen';

describe('large inputs', () => {
  test(
    '2.5 M events with 0.5% random edits: accuracy within 0.2 points of the construction, in seconds',
    () => {
      const r = rng(42);
      const truth = traceLike(r, 2_500_000, 400);
      const { decoded, kept } = corrupt(r, truth, { rate: 0.005 });
      const t0 = performance.now();
      const res = sequenceAccuracy(truth, decoded);
      const ms = performance.now() - t0;
      const expected = kept / truth.length;
      console.log(`2.5 M events, 0.5% edits: accuracy ${res.accuracy.toFixed(5)} (construction ${expected.toFixed(5)}), ${res.unknownFieldsMatched} on partial fields, ${ms.toFixed(0)} ms`);
      expect(res.truthLength).toBe(2_500_000);
      expect(res.decodedLength).toBe(decoded.length);
      expect(res.matched).toBeLessThanOrEqual(kept); // junk matches nothing: `kept` is the maximum
      expect(Math.abs(res.accuracy - expected)).toBeLessThan(0.002);
      expect(ms).toBeLessThan(20_000);
    },
    120_000,
  );

  test(
    'long gaps, inserted junk and a replaced stretch between sparse edits (500 k events)',
    () => {
      const r = rng(7);
      const truth = traceLike(r, 500_000, 400);
      const gaps: [number, number][] = [
        [50_000, 60_000], // the decoder lost 60 k events
        [300_000, 20_000], // ... and 20 k, replaced by 15 k of junk
        [499_000, 1_000], // ... and the end
      ];
      const junk: [number, number][] = [
        [0, 3_000], // decoded-only prefix (e.g. start-up before the oracle begins)
        [200_000, 5_000],
        [320_000, 15_000],
      ];
      const { decoded, kept } = corrupt(r, truth, { rate: 0.005, gaps, junk });
      const t0 = performance.now();
      const res = sequenceAccuracy(truth, decoded);
      const ms = performance.now() - t0;
      console.log(`500 k events with gaps and junk: accuracy ${res.accuracy.toFixed(5)} (construction ${(kept / truth.length).toFixed(5)}), ${ms.toFixed(0)} ms`);
      expect(res.exact).toBe(false);
      expect(res.matched).toBeLessThanOrEqual(kept);
      expect(res.matched).toBeGreaterThanOrEqual(kept - 0.001 * truth.length);
    },
    60_000,
  );

  test('the same shapes, small enough for the DP: within 1% of the maximum with exact runs disabled', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const r = rng(seed);
      const truth = traceLike(r, 3_000, 60);
      const { decoded } = corrupt(r, truth, {
        rate: 0.01,
        gaps: [
          [500, 300],
          [2_000, 100],
        ],
        junk: [
          [0, 50],
          [1_200, 200],
          [2_050, 80],
        ],
      });
      const res = sequenceAccuracy(truth, decoded, { exactMaxEdits: 0, window: 64 });
      const dp = dpMatched(truth, decoded);
      expect(res.matched).toBeLessThanOrEqual(dp);
      expect(res.matched).toBeGreaterThanOrEqual(0.99 * dp);
    }
  });
});
