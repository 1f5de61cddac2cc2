/**
 * The overhead's bootstrap interval (bench apps' agent table) and the agent's own cost report it prints beside it:
 * the interval covers a known ratio, narrows with more rounds, does not move between calls, and spans 1 when the two
 * variants are the same distribution; the stats line a real JVM's agent prints parses into plausible numbers.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { locateAgent } from '../src/agent-path';
import { median, overheadInterval, parseAgentCost } from '../src/overhead-stats';

/** n rounds around `level` with a spread of +-`spread` (a fixed pseudo-random sequence) */
function rounds(n: number, level: number, spread: number, seed: number): number[] {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out.push(level * (1 + spread * (2 * (s / 2147483648) - 1)));
  }
  return out;
}

test('the interval covers the true ratio and narrows with more rounds', () => {
  const few = overheadInterval([{ base: rounds(11, 4, 0.1, 1), test: rounds(11, 4.2, 0.1, 2) }])!;
  const many = overheadInterval([{ base: rounds(201, 4, 0.1, 1), test: rounds(201, 4.2, 0.1, 2) }])!;
  for (const i of [few, many]) {
    expect(i.low).toBeLessThan(1.05);
    expect(i.high).toBeGreaterThan(1.05);
    expect(i.low).toBeLessThanOrEqual(i.ratio);
    expect(i.high).toBeGreaterThanOrEqual(i.ratio);
  }
  expect(many.high - many.low).toBeLessThan((few.high - few.low) / 2);
});

test('the interval is reproducible, spans 1 for equal variants, and needs two rounds of each', () => {
  const apps = [
    { base: rounds(11, 3, 0.08, 5), test: rounds(11, 3, 0.08, 6) },
    { base: rounds(11, 7, 0.05, 7), test: rounds(11, 7, 0.05, 8) },
  ];
  const a = overheadInterval(apps)!;
  expect(overheadInterval(apps)).toEqual(a);
  expect(a.low).toBeLessThan(1);
  expect(a.high).toBeGreaterThan(1);
  // the point estimate is the geometric mean of the ratios of medians
  const g = Math.sqrt((median(apps[0]!.test) / median(apps[0]!.base)) * (median(apps[1]!.test) / median(apps[1]!.base)));
  expect(a.ratio).toBeCloseTo(g, 12);
  expect(overheadInterval([{ base: [1], test: [1, 2] }])).toBeUndefined();
  expect(overheadInterval([])).toBeUndefined();
});

test('batches run apart are compared within themselves: the machine\'s drift between them does not count', () => {
  // the same +2% in both batches, the machine 20% slower in the second: each batch's ratio is what counts
  const b1 = { base: rounds(21, 5, 0.02, 11), test: rounds(21, 5.1, 0.02, 12) };
  const b2 = { base: rounds(21, 6, 0.02, 13), test: rounds(21, 6.12, 0.02, 14) };
  const both = overheadInterval([{ batches: [b1, b2] }])!;
  const r1 = median(b1.test) / median(b1.base);
  const r2 = median(b2.test) / median(b2.base);
  // equal rounds: the geometric mean of the two batches' ratios
  expect(both.ratio).toBeCloseTo(Math.sqrt(r1 * r2), 12);
  expect(both.low).toBeLessThan(1.02);
  expect(both.high).toBeGreaterThan(1.02);
  // a batch with more rounds weighs more
  const b3 = { base: rounds(63, 5, 0.02, 15), test: rounds(63, 5.25, 0.02, 16) };
  const r3 = median(b3.test) / median(b3.base);
  expect(overheadInterval([{ batches: [b1, b3] }])!.ratio).toBeCloseTo(Math.exp((42 * Math.log(r1) + 126 * Math.log(r3)) / 168), 12);
  // one batch is the same as the rounds given plainly, interval and all
  expect(overheadInterval([{ batches: [b1] }])).toEqual(overheadInterval([b1]));
  // a batch of fewer than two rounds leaves no interval
  expect(overheadInterval([{ batches: [b1, { base: [1], test: [1, 2] }] }])).toBeUndefined();
});

const java = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' }).stdout.trim();
let agent = '';
try {
  agent = locateAgent();
} catch {
  agent = '';
}
if (!java || !agent) console.warn(`SKIP agent stats test: ${!java ? 'no java on PATH' : 'libjportal.so not built (./setup.sh)'}`);
const maybe = java && agent ? test : test.skip;

maybe('a real agent run with stats=1 reports its own cost', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-stats-'));
  try {
    const src = path.join(dir, 'Spin.java');
    // enough work for the JIT to compile something, so the watcher has nmethods to read
    fs.writeFileSync(src, 'public class Spin { public static void main(String[] a) { long s = 0; for (int i = 0; i < 50_000_000; i++) s += Integer.toString(i & 1023).length(); System.out.println(s); } }\n');
    const r = spawnSync(java, [`-agentpath:${agent}=out=${path.join(dir, 'trace')},stats=1`, src], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const cost = parseAgentCost(r.stderr);
    expect(cost).toBeDefined();
    expect(cost!.jvmThreadsMs).toBeGreaterThan(0);
    expect(cost!.watcherCpuMs).toBeGreaterThan(0);
    expect(cost!.processCpuMs).toBeGreaterThan(cost!.jvmThreadsMs + cost!.watcherCpuMs + cost!.writerCpuMs);
    expect(parseAgentCost('no stats here\n')).toBeUndefined();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
