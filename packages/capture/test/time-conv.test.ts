import { perfTimeToTsc, TimeConv, tscConverter, tscToPerfTime } from '../src';

// a 2.1 GHz TSC as the kernel describes it: ns = cyc * mult >> shift, mult = 10^9 * 2^31 / 2.1e9
const conv: TimeConv = { capUserTime: true, capUserTimeZero: true, capUserTimeShort: false, timeShift: 31, timeMult: 1022611260, timeZero: -123456789n, timeCycles: 0n, timeMask: 0n };

test('perf time and TSC convert both ways by the mmap page formula', () => {
  for (const tsc of [0n, 1n, 2_100_000_000n, 123_456_789_012_345n, 29_295_245_025_865n]) {
    const time = tscToPerfTime(tsc, conv);
    // perf time has ns resolution: the inverse is exact to within the ~2.1 ticks of one ns, plus rounding
    const back = perfTimeToTsc(time, conv);
    expect(back >= tsc - 3n && back <= tsc).toBe(true);
  }
  // one second of TSC ticks is one second of perf time
  expect(tscToPerfTime(2_100_000_000n, conv) - tscToPerfTime(0n, conv)).toBe(999_999_999n);
});

test('no converter when the kernel does not offer cap_user_time_zero', () => {
  expect(tscConverter({ ...conv, capUserTimeZero: false })).toBeUndefined();
  expect(tscConverter(conv)!(tscToPerfTime(42_000n, conv))).toBeGreaterThanOrEqual(41_997n);
});
