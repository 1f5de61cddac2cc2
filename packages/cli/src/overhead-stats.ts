/**
 * How sure an overhead measured on a noisy machine is: percentile-bootstrap intervals for the ratio of two medians
 * (one application, agent rounds over native rounds) and for the geometric mean of such ratios over a suite. The
 * resampling uses a fixed-seed generator, so the same rounds always give the same interval (a report regenerated
 * from kept results does not move).
 */

export interface Interval {
  /** the point estimate: median(test) / median(base), or the geometric mean of those */
  ratio: number;
  low: number;
  high: number;
}

export const median = (xs: readonly number[]): number => {
  const a = [...xs].sort((x, y) => x - y);
  const n = a.length;
  if (n === 0) return NaN;
  return n % 2 ? a[(n - 1) / 2]! : (a[n / 2 - 1]! + a[n / 2]!) / 2;
};

/** mulberry32: a small deterministic generator, uniform in [0, 1) */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function resampledMedian(xs: readonly number[], rnd: () => number, scratch: number[]): number {
  scratch.length = xs.length;
  for (let i = 0; i < xs.length; i++) scratch[i] = xs[Math.floor(rnd() * xs.length)]!;
  return median(scratch);
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(p * (sorted.length - 1))))]!;

/**
 * The geometric mean over applications of median(test) / median(base), with a `level` (default 95%) percentile
 * bootstrap interval: each resample draws every application's base and test rounds with replacement. One application
 * gives that application's interval. Undefined when any application has fewer than 2 rounds of either.
 */
export function overheadInterval(apps: readonly { base: readonly number[]; test: readonly number[] }[], resamples = 4000, level = 0.95, seed = 1): Interval | undefined {
  if (apps.length === 0 || apps.some((a) => a.base.length < 2 || a.test.length < 2)) return undefined;
  const logRatio = (base: number, test: number) => Math.log(test / base);
  const point = Math.exp(apps.reduce((s, a) => s + logRatio(median(a.base), median(a.test)), 0) / apps.length);
  const rnd = generator(seed);
  const scratch: number[] = [];
  const draws = new Array<number>(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (const a of apps) s += logRatio(resampledMedian(a.base, rnd, scratch), resampledMedian(a.test, rnd, scratch));
    draws[r] = Math.exp(s / apps.length);
  }
  draws.sort((x, y) => x - y);
  return { ratio: point, low: percentile(draws, (1 - level) / 2), high: percentile(draws, 1 - (1 - level) / 2) };
}

/** What the agent reports about its own cost with `stats=1` (agent-java/src/cost.cpp), in ms. */
export interface AgentCost {
  /** wall time inside JVMTI callbacks and the start-up and VM-death phases, on the JVM's threads */
  jvmThreadsMs: number;
  watcherCpuMs: number;
  writerCpuMs: number;
  processCpuMs: number;
}

/** Parses the agent's `[jportal] stats: ...` line out of a run's stderr; undefined when there is none. */
export function parseAgentCost(stderr: string): AgentCost | undefined {
  const line = stderr.split('\n').find((l) => l.includes('[jportal] stats: '));
  if (!line) return undefined;
  const m = /in JVM threads ([\d.]+) ms wall; watcher ([\d.]+) ms CPU, writer ([\d.]+) ms CPU; process ([\d.]+) ms CPU/.exec(line);
  if (!m) return undefined;
  return { jvmThreadsMs: Number(m[1]), watcherCpuMs: Number(m[2]), writerCpuMs: Number(m[3]), processCpuMs: Number(m[4]) };
}
