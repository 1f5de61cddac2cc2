/**
 * The intel_pt config words from named terms, with bit positions read from the PMU's format/ files and values
 * checked against its caps/ (the rules `perf record -e intel_pt/.../` applies).
 */
import { CaptureError } from './errors';
import { encodeField } from './format-field';
import { allowedValues, PtPmu } from './pmu';

export interface PtConfigOptions {
  /** TSC packets (default on) */
  tsc?: boolean;
  /** MTC timing packets (default: on when caps/mtc says the CPU has them) */
  mtc?: boolean;
  /** MTC every 2^n CTC ticks (default 3, or the nearest lower value caps/mtc_periods allows) */
  mtcPeriod?: number;
  /** CYC packets (default off; needs caps/psb_cyc) */
  cyc?: boolean;
  /** CYC threshold: a CYC packet at most every 2^(n-1) cycles (caps/cycle_thresholds) */
  cycThresh?: number;
  /** every return as a TIP instead of a compressed TNT bit. Default on: the emulator's default, and robust to
   * JIT code that returns to addresses its call did not push (deoptimization, exception unwinding). */
  noretcomp?: boolean;
  /** PSB every 2^(n+11) bytes (default 3 when caps/psb_cyc, the nearest lower value caps/psb_periods allows) */
  psbPeriod?: number;
}

/** The terms `perf record -e intel_pt//u` uses by default (tools/perf/arch/x86/util/intel-pt.c: tsc, mtc,
 * mtc_period=3, psb_period=3, pt, branch) and return compression on. */
export const PERF_DEFAULT_TERMS: PtConfigOptions = { noretcomp: false };

export interface PtConfig {
  config: bigint;
  config1: bigint;
  config2: bigint;
  /** every term set, by name, as perf would print it */
  terms: Record<string, number>;
}

/** The highest allowed value <= target; else the lowest allowed one (perf's intel_pt_pick_bit). */
export function pickAllowed(mask: number, target: number): number | undefined {
  const allowed = allowedValues(mask);
  if (!allowed.length) return undefined;
  const lower = allowed.filter((v) => v <= target);
  return lower.length ? lower[lower.length - 1] : allowed[0];
}

function checkAllowed(pmu: PtPmu, term: string, cap: string, value: number): void {
  const mask = pmu.caps[cap];
  if (mask === undefined) return; // the kernel will judge
  if (!allowedValues(mask).includes(value))
    throw new CaptureError('bad-config', `invalid ${term}=${value} for intel_pt: valid values are ${allowedValues(mask).join(',') || 'none'} (caps/${cap})`);
}

export function buildPtConfig(pmu: PtPmu, opts: PtConfigOptions = {}): PtConfig {
  const terms: Record<string, number> = {};
  const caps = pmu.caps;
  if (opts.tsc ?? true) terms.tsc = 1;
  const mtcCap = caps.mtc ?? 1;
  if (opts.mtc === true && !mtcCap) throw new CaptureError('bad-config', 'intel_pt: this CPU has no MTC packets (caps/mtc is 0)');
  let mtcOn = false;
  if (opts.mtc ?? !!mtcCap) {
    const periods = caps.mtc_periods ?? 0;
    if (opts.mtcPeriod !== undefined) {
      checkAllowed(pmu, 'mtc_period', 'mtc_periods', opts.mtcPeriod);
      terms.mtc = 1;
      terms.mtc_period = opts.mtcPeriod;
      mtcOn = true;
    } else if (periods) {
      terms.mtc = 1;
      terms.mtc_period = pickAllowed(periods, 3)!;
      mtcOn = true;
    } else if (opts.mtc === true) {
      terms.mtc = 1;
      mtcOn = true;
    }
  }
  const psbCyc = caps.psb_cyc ?? 1;
  if (opts.cyc) {
    if (!psbCyc) throw new CaptureError('bad-config', 'intel_pt: this CPU has no CYC packets (caps/psb_cyc is 0)');
    terms.cyc = 1;
    if (opts.cycThresh !== undefined) {
      checkAllowed(pmu, 'cyc_thresh', 'cycle_thresholds', opts.cycThresh);
      terms.cyc_thresh = opts.cycThresh;
    }
  } else if (opts.cycThresh !== undefined) throw new CaptureError('bad-config', 'intel_pt: cyc_thresh needs cyc');
  if (opts.noretcomp ?? true) terms.noretcomp = 1;
  if (opts.psbPeriod !== undefined) {
    if (!psbCyc) throw new CaptureError('bad-config', 'intel_pt: this CPU has a fixed PSB period (caps/psb_cyc is 0)');
    checkAllowed(pmu, 'psb_period', 'psb_periods', opts.psbPeriod);
    terms.psb_period = opts.psbPeriod;
  } else if (psbCyc && mtcOn && caps.psb_periods) {
    terms.psb_period = pickAllowed(caps.psb_periods, 3)!;
  }
  // trace enable and branch tracing: terms only newer kernels name (older ones imply them)
  if (pmu.format.pt) terms.pt = 1;
  if (pmu.format.branch) terms.branch = 1;

  const words: Record<string, bigint> = { config: 0n, config1: 0n, config2: 0n, config3: 0n };
  for (const [name, value] of Object.entries(terms)) {
    const field = pmu.format[name];
    if (!field) {
      // a term the kernel does not describe cannot be placed without hard-coding its bit
      if (name === 'tsc' || name === 'noretcomp' || name === 'mtc' || name === 'mtc_period' || name === 'cyc' || name === 'cyc_thresh' || name === 'psb_period')
        throw new CaptureError('bad-config', `intel_pt: ${pmu.dir}/format/${name} does not exist, so ${name} cannot be configured on this kernel`);
      continue;
    }
    const bits = encodeField(field, value);
    if (words[field.word] & bits) throw new CaptureError('bad-config', `intel_pt: format/${name} overlaps another term`);
    words[field.word] |= bits;
  }
  return { config: words.config, config1: words.config1, config2: words.config2, terms };
}

/** "tsc,mtc,mtc_period=3,..." as perf prints a config */
export function describeTerms(terms: Record<string, number>): string {
  return Object.entries(terms)
    .map(([k, v]) => (v === 1 && !/period|thresh/.test(k) ? k : `${k}=${v}`))
    .join(',');
}
