import { calibratedRate, CALIBRATION_ATTEMPTS, CALIBRATION_TOLERANCE } from '../src/commands/accuracy';

/**
 * A model of the emulator's loss (docs/emulator.md): a buffer of `buffer` bytes fills with the packets a run writes
 * and drains at `rate` bytes per second; when full, packets are dropped until it has drained to half. The run is a
 * list of stretches, each writing `bytesPerSec` for `seconds` (instructions run at a constant pace, so the lost share
 * of time is the lost share of instructions).
 */
function lostShare(run: { bytesPerSec: number; seconds: number }[], buffer: number, rate: number): number {
  const dt = 1e-5;
  let fill = 0;
  let dropping = false;
  let lost = 0;
  let total = 0;
  for (const s of run)
    for (let t = 0; t < s.seconds; t += dt) {
      total += dt;
      fill = Math.max(0, fill - rate * dt);
      if (dropping && fill <= buffer / 2) dropping = false;
      if (!dropping && fill + s.bytesPerSec * dt > buffer) dropping = true;
      if (dropping) lost += dt;
      else fill += s.bytesPerSec * dt;
    }
  return lost / total;
}

/** The tries calibration makes from a first rate, as accuracy.ts does: until within the tolerance or out of tries. */
function calibrate(run: { bytesPerSec: number; seconds: number }[], target: number, first: number): number[] {
  const rates = [first];
  const lost = [lostShare(run, 65536, first)];
  while (Math.abs(lost[lost.length - 1] - target) > CALIBRATION_TOLERANCE && rates.length < CALIBRATION_ATTEMPTS) {
    rates.push(calibratedRate(target, rates, lost));
    lost.push(lostShare(run, 65536, rates[rates.length - 1]));
  }
  return lost;
}

// a start-up that writes PT densely, then a steady loop at a lower density, then a dense burst again
const program = [
  { bytesPerSec: 420e6, seconds: 0.05 },
  { bytesPerSec: 260e6, seconds: 0.12 },
  { bytesPerSec: 520e6, seconds: 0.03 },
];

describe('loss calibration', () => {
  test.each([0.1, 0.25, 0.5])('reaches a %p lost share within the tolerance from a preset made for another machine', (target) => {
    // presets that lose about half (and about twice) the target here
    for (const first of [230e6, 150e6, 330e6]) {
      const lost = calibrate(program, target, first);
      expect(Math.abs(lost[lost.length - 1] - target)).toBeLessThanOrEqual(CALIBRATION_TOLERANCE);
    }
  });

  test('a rate that already loses the target is not moved, and steps go the right way', () => {
    const r = 230e6;
    const l = lostShare(program, 65536, r);
    // more loss wanted: drain slower; less: faster
    expect(calibratedRate(l + 0.1, [r], [l])).toBeLessThan(r);
    expect(calibratedRate(Math.max(0, l - 0.1), [r], [l])).toBeGreaterThan(r);
    expect(calibratedRate(l, [r], [l])).toBe(r);
    // and stays within a factor of 3 of the first try
    expect(calibratedRate(0.99, [r], [0])).toBeGreaterThanOrEqual(Math.round(r / 3));
  });
});
