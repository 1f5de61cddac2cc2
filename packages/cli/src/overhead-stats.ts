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

/** One application's alternating rounds of the two variants, measured together. */
export interface Rounds {
  base: readonly number[];
  test: readonly number[];
}

/**
 * One application's rounds: one batch, or several batches run apart (`bench apps --add-rounds`). Batches are kept
 * apart because the machine's level drifts between them (h2's native median moved 9.6% from one batch to the next
 * here): a median over rounds pooled from two levels mixes them, and the ratio of such medians is biased.
 */
export type AppRounds = Rounds | { batches: readonly Rounds[] };

const batchesOf = (a: AppRounds): readonly Rounds[] => ('batches' in a ? a.batches : [a]);

/**
 * An application's log ratio: each batch's log(median(test) / median(base)), weighted by its rounds (stratified by
 * batch); `pick` gives a batch's medians (the rounds themselves, or a resample of them).
 */
function appLogRatio(batches: readonly Rounds[], pick: (r: Rounds) => [number, number]): number {
  let sum = 0;
  let weight = 0;
  for (const b of batches) {
    const [base, test] = pick(b);
    const w = b.base.length + b.test.length;
    sum += w * Math.log(test / base);
    weight += w;
  }
  return sum / weight;
}

/**
 * The geometric mean over applications of median(test) / median(base), with a `level` (default 95%) percentile
 * bootstrap interval: each resample draws every batch's base and test rounds with replacement, within the batch.
 * An application of several batches contributes the rounds-weighted mean of its batches' log ratios. One application
 * gives that application's interval. Undefined when any batch has fewer than 2 rounds of either.
 */
export function overheadInterval(apps: readonly AppRounds[], resamples = 4000, level = 0.95, seed = 1): Interval | undefined {
  const all = apps.map(batchesOf);
  if (all.length === 0 || all.some((bs) => bs.length === 0 || bs.some((b) => b.base.length < 2 || b.test.length < 2))) return undefined;
  const point = Math.exp(all.reduce((s, bs) => s + appLogRatio(bs, (b) => [median(b.base), median(b.test)]), 0) / all.length);
  const rnd = generator(seed);
  const scratch: number[] = [];
  const draws = new Array<number>(resamples);
  const resampled = (b: Rounds): [number, number] => [resampledMedian(b.base, rnd, scratch), resampledMedian(b.test, rnd, scratch)];
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (const bs of all) s += appLogRatio(bs, resampled);
    draws[r] = Math.exp(s / all.length);
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
