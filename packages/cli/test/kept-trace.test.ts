// `bench apps --growth-only` and `--coverage-only` reuse the loss-free trace kept in the work directory. A complete
// trace of a run that ended early is no measure of the workload: sunflow's short one held 0.98 MB of PT against the
// 120.8 MB its kept result measured, and its growth row came out as 132 bytecodes analyzed in 1 s.
import { keptTraceFits } from '../src/commands/bench';

describe('a kept trace is reused only when it can be the workload run the kept result measured', () => {
  test('the early-ended sunflow trace is not; runs of the same workload are', () => {
    expect(keptTraceFits(979_452, 120_803_793)).toBe(false);
    // (sunflow short's own runs: 120.8 MB on one machine, about as much on another)
    expect(keptTraceFits(118_500_000, 120_803_793)).toBe(true);
    expect(keptTraceFits(125_000_000, 120_803_793)).toBe(true);
  });
  test('more than twice the measured size is another workload too; nothing measured, any complete trace is taken', () => {
    expect(keptTraceFits(250_000_000, 120_803_793)).toBe(false);
    expect(keptTraceFits(979_452, 0)).toBe(true);
  });
});
