/**
 * docs/performance.md's growth table (bench apps --growth-only): each size's whole-trace analysis against the short
 * size of the same application, and no per-size section for a size measured for growth only.
 */
import { AppResult, performanceMarkdown } from '../src/commands/bench';

const facts = { cpu: 'cpu', cores: '2', ram: '1 GiB', kernel: 'k', jdk: 'jdk', node: 'n', qemu: 'q' };
const growth = (ptMB: number, bytecodes: number, seconds: number, rssMiB: number) => ({
  date: '2026-11-29T05:00:00.000Z', ptBytes: ptMB * 1e6, seconds, maxRssBytes: rssMiB * 2 ** 20, bytecodes, windows: 3, workers: 1, cpus: 1,
});
const result = (app: string, size: AppResult['size'], extra: Partial<AppResult>): AppResult => ({ app, size, date: '2026-11-29T04:00:00.000Z', command: 'jportal bench apps', ok: true, errors: [], ...extra });

test('the growth table gives each size against short, per application', () => {
  const md = performanceMarkdown(
    [
      result('h2', 'short', { run: { native: 1, agent: 1.01 }, growth: growth(100, 200e6, 250, 2000) }),
      result('h2', 'medium', { growth: growth(250, 600e6, 700, 3000) }),
      result('fop', 'short', { growth: growth(50, 100e6, 100, 1000) }),
    ],
    facts,
  );
  const rows = md.split('\n').filter((l) => l.startsWith('| h2 |') && l.includes('MiB |'));
  expect(rows).toHaveLength(2);
  const cells = (l: string) => l.split('|').map((c) => c.trim());
  const [short, medium] = rows.map(cells);
  expect(short.slice(2, 4)).toEqual(['short', '100.0 MB']);
  expect(medium.slice(2, 13)).toEqual(['medium', '250.0 MB', '600,000,000', '3', '700.0 s', '3000 MiB', '2.50', '3.00', '2.80', '1.50', '1167']);
  // fop has no size but short: no growth rows of its own
  expect(md).not.toMatch(/\| fop \| short \| 50\.0 MB/);
  // medium has growth rows only: no section of its own
  expect(md).toContain('## short workloads');
  expect(md).not.toContain('## medium workloads');
});

test('a size measured another way than short (CPUs, streamed or not) gets no ratios, and the table marks streamed rows', () => {
  const md = performanceMarkdown(
    [
      result('jython', 'short', { growth: { ...growth(100, 200e6, 200, 2000), cpus: 2, streamed: true } }),
      result('jython', 'medium', { growth: growth(150, 300e6, 600, 2500) }),
      result('jython', 'full', { growth: { ...growth(300, 2000e6, 1800, 3000), cpus: 2, streamed: true } }),
    ],
    facts,
  );
  const cells = (l: string) => l.split('|').map((c) => c.trim());
  const row = (size: string) => cells(md.split('\n').find((l) => l.startsWith(`| jython | ${size} |`) && l.includes('MiB |'))!);
  expect(row('medium').slice(8, 12)).toEqual(['—', '—', '—', '—']);
  expect(row('full').slice(8, 12)).toEqual(['3.00', '10.00', '9.00', '1.50']);
  expect(row('full')[13]).toMatch(/2 CPUs, streamed$/);
  expect(row('medium')[13]).toMatch(/1 CPU$/);
});

test('rows measured on another CPU than the report\'s are named with it', () => {
  const md = performanceMarkdown(
    [
      result('h2', 'short', { run: { native: 1, agent: 1.01 }, machine: 'AMD EPYC', coverage: undefined, growth: { ...growth(100, 200e6, 250, 2000), machine: 'cpu' } }),
      result('fop', 'short', { growth: growth(50, 100e6, 100, 1000), machine: 'cpu' }),
    ],
    facts,
  );
  const line = md.split('\n').find((l) => l.startsWith('Measured on other CPUs'));
  // h2's timing rows came from the other CPU; its growth row and all of fop's from the report's
  expect(line).toBe('Measured on other CPUs (same kernel, JDK, node and qemu): AMD EPYC: h2 short runs.');
  expect(performanceMarkdown([result('fop', 'short', { growth: growth(50, 100e6, 100, 1000), machine: 'cpu' })], facts)).not.toContain('Measured on other CPUs');
});

test('a row of a span of a trace (--growth-only --time) says which span, of how long a recording and how much PT in all', () => {
  const span = { fromSeconds: 0, toSeconds: 60, recordSeconds: 912.4, wholePtBytes: 2460e6 };
  const md = performanceMarkdown(
    [
      result('luindex', 'short', { growth: { ...growth(100, 100e6, 130, 3600), cpus: 2, streamed: true } }),
      result('luindex', 'full', { growth: { ...growth(400, 2500e6, 2600, 4000), cpus: 2, streamed: true, span } }),
      result('h2', 'short', { growth: growth(100, 200e6, 250, 2000) }),
      result('h2', 'full', { growth: { ...growth(300, 900e6, 1000, 2200), span: { ...span, fromSeconds: 10.5, toSeconds: null, recordSeconds: undefined } } }),
    ],
    facts,
  );
  const cells = (l: string) => l.split('|').map((c) => c.trim());
  const row = (app: string) => cells(md.split('\n').find((l) => l.startsWith(`| ${app} | full`) && l.includes('MiB |'))!);
  expect(row('luindex').slice(2, 4)).toEqual(['full, 0-60 s of 912 s (2460.0 MB of PT in all)', '400.0 MB']);
  // the ratios are those of the span's own work
  expect(row('luindex').slice(8, 12)).toEqual(['4.00', '25.00', '20.00', '1.11']);
  expect(row('h2')[2]).toBe('full, 10.5-end s (2460.0 MB of PT in all)');
  expect(md).toContain('A size followed by a span');
});
