/**
 * perf time <-> TSC, from the mmap control page (perf_event_mmap_page: time_zero, time_mult, time_shift, valid
 * when cap_user_time_zero). The kernel documents:
 *   quot = cyc >> time_shift; rem = cyc & ((1 << time_shift) - 1);
 *   time = time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
 * and the inverse used here to put TSC values (the clock of the agent and the PT packets) in the sideband.
 */
export interface TimeConv {
  capUserTime: boolean;
  capUserTimeZero: boolean;
  capUserTimeShort: boolean;
  timeShift: number;
  timeMult: number;
  timeZero: bigint;
  timeCycles: bigint;
  timeMask: bigint;
}

export function tscToPerfTime(tsc: bigint, t: TimeConv): bigint {
  let cyc = tsc;
  if (t.capUserTimeShort) cyc = t.timeCycles + ((cyc - t.timeCycles) & t.timeMask);
  const shift = BigInt(t.timeShift);
  const mult = BigInt(t.timeMult);
  const quot = cyc >> shift;
  const rem = cyc & ((1n << shift) - 1n);
  return t.timeZero + quot * mult + ((rem * mult) >> shift);
}

export function perfTimeToTsc(time: bigint, t: TimeConv): bigint {
  const shift = BigInt(t.timeShift);
  const mult = BigInt(t.timeMult);
  const d = time - t.timeZero;
  const quot = d / mult;
  const rem = d % mult;
  return (quot << shift) + (rem << shift) / mult;
}

/** A converter, or undefined when the kernel does not offer TSC conversion (cap_user_time_zero clear). */
export function tscConverter(t: TimeConv | undefined): ((time: bigint) => bigint) | undefined {
  if (!t || !t.capUserTimeZero || t.timeMult === 0) return undefined;
  return (time) => perfTimeToTsc(time, t);
}
