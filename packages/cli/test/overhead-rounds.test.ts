/**
 * docs/performance.md's overhead table with dedicated overhead rounds (bench apps --overhead-only): the overhead and
 * its interval come from those rounds, not from the full timing rounds kept beside them.
 */
import { AppResult, performanceMarkdown } from '../src/commands/bench';

const facts = { cpu: 'cpu', cores: '2', ram: '1 GiB', kernel: 'k', jdk: 'jdk', node: 'n', qemu: 'q' };
const result = (app: string, extra: Partial<AppResult>): AppResult => ({ app, size: 'full', date: '2026-11-30T10:00:00.000Z', command: 'jportal bench apps', ok: true, errors: [], machine: 'cpu', ...extra });
// rounds around a level, spread a little (deterministic)
const rounds = (level: number, n: number) => Array.from({ length: n }, (_, i) => level * (1 + 0.01 * Math.sin(i * 1.7)));
const cells = (md: string, app: string) => md.split('\n').find((l) => l.startsWith(`| ${app} |`))!.split('|').map((c) => c.trim());

test('dedicated rounds give the overhead and its interval; the full timing rounds the other columns', () => {
  // full timing rounds: +10% (noisy); dedicated rounds: +2%
  const full = { run: { native: 2, agent: 2.2, agentNoClasses: 2.1 }, runSamples: { native: rounds(2, 5), agent: rounds(2.2, 5) }, runs: 5 };
  const overhead = { date: '2026-11-30T16:34:00.000Z', machine: 'cpu', runs: 40, agentTree: 'abcdef0123456789', samples: { native: rounds(3, 40), agent: rounds(3.06, 40) } };
  const md = performanceMarkdown([result('fop', { ...full, overhead })], facts);
  const c = cells(md, 'fop');
  expect(c.slice(2, 5)).toEqual(['3.00 s', '3.06 s', '+2.0%']);
  // the interval is around the dedicated rounds' ratio, not the timing rounds'
  const [lo, hi] = c[5]!.split(' .. ').map((x) => Number(x.replace('%', '')));
  expect(lo).toBeLessThanOrEqual(2);
  expect(hi).toBeGreaterThanOrEqual(2);
  expect(hi).toBeLessThan(5);
  // classes=0 stays against the full rounds' native
  expect(c.slice(6, 8)).toEqual(['2.10 s', '+5.0%']);
  expect(md).toContain('dedicated alternating rounds of native and agent only (`--overhead-only`; 40 rounds each; 2026-11-30 16:34 UTC; agent source tree abcdef012345)');
  // the JFR table's agent column stays with the rounds JFR ran in
  const jfr = md.split('\n').filter((l) => l.startsWith('| fop |'))[1]!;
  expect(jfr.split('|')[2]!.trim()).toBe('+10.0%');
  // without dedicated rounds: the full timing rounds, and no such sentence
  const plain = performanceMarkdown([result('fop', full)], facts);
  expect(cells(plain, 'fop').slice(2, 5)).toEqual(['2.00 s', '2.20 s', '+10.0%']);
  expect(plain).not.toContain('--overhead-only');
});

test('rounds pooled from batches name them, with the span of their dates', () => {
  const overhead = {
    date: '2026-11-30T16:34:00.000Z', machine: 'cpu', runs: 84, agentTree: 'abcdef0123456789',
    samples: { native: rounds(3, 84), agent: rounds(3.03, 84) },
    batches: [{ date: '2026-11-30T16:34:00.000Z', runs: 42 }, { date: '2026-11-30T17:11:00.000Z', runs: 42 }],
  };
  const md = performanceMarkdown([result('h2', { run: { native: 1, agent: 1.1 }, overhead })], facts);
  expect(md).toContain('84 rounds each in up to 2 batches (`--add-rounds`; ');
  expect(md).toContain('; 2026-11-30 16:34 .. 17:11 UTC; agent source tree abcdef012345)');
  // two batches of +1% and +5%: the overhead is their mean, not the pooled medians' ratio
  const b = { ...overhead, runs: 20, samples: { native: [...rounds(3, 10), ...rounds(4, 10)], agent: [...rounds(3.03, 10), ...rounds(4.2, 10)] }, batches: [{ date: overhead.date, runs: 10 }, { date: '2026-11-30T17:11:00.000Z', runs: 10 }] };
  const c = cells(performanceMarkdown([result('h2', { overhead: b })], facts), 'h2');
  expect(c[4]).toBe(`+${(100 * (Math.sqrt(1.01 * 1.05) - 1)).toFixed(1)}%`);
  // measured on another CPU than the report's: named
  const other = performanceMarkdown([result('h2', { run: { native: 1, agent: 1.1 }, overhead: { ...overhead, machine: 'other' } })], facts);
  expect(other).toContain('other: h2 full overhead rounds');
});
