/**
 * docs/performance.md's table of the decoder's stages (bench-stages.ts): reconstruction is a column of its own; rows
 * measured before it was timed show none.
 */
import { AppResult, measuredOn, performanceMarkdown } from '../src/commands/bench';

const facts = { cpu: 'cpu', cores: '2', ram: '1 GiB', kernel: 'k', jdk: 'jdk', node: 'n', qemu: 'q' };
const stages = { threads: 9, ptBytes: 15.7e6, insns: 38e6, flowMs: 6112, attributeMs: 4989, recoverMs: 38, bytecodes: 3.78e6, gaps: 0, recovered: 0, maxRssBytes: 690e6 };
const result = (app: string, extra: Partial<AppResult>): AppResult => ({ app, size: 'short', date: '2026-11-29T04:00:00.000Z', command: 'jportal bench apps', ok: true, errors: [], ...extra });

test('the stage table gives reconstruction its own column, and none for rows measured before it was timed', () => {
  const md = performanceMarkdown([result('h2', { run: { native: 1, agent: 1.01 }, stages: { ...stages, reconstructMs: 1166 } }), result('fop', { run: { native: 1, agent: 1.01 }, stages })], facts);
  const lines = md.split('\n');
  const headerAt = lines.findIndex((l) => l.startsWith('| app | emulated run |'));
  const header = lines[headerAt]!;
  const cols = header.split('|').map((c) => c.trim());
  const at = (name: string) => cols.indexOf(name);
  expect(at('reconstruct')).toBe(at('attribute') + 1);
  // (the stage table's own rows: other tables may have as many columns)
  const row = (app: string) => lines.slice(headerAt).find((l) => l.startsWith(`| ${app} |`) && l.split('|').length === cols.length)!.split('|').map((c) => c.trim());
  expect(row('h2').slice(at('flow'), at('recover') + 1)).toEqual(['6.1 s', '5.0 s', '1.2 s', '0.0 s']);
  expect(row('fop')[at('reconstruct')]).toBe('—');
  expect(row('fop')[at('attribute')]).toBe('5.0 s');
});

test('stage rows timed apart from the rest (--stages-only) name their CPU when it is not the run\'s', () => {
  const r = result('h2', { run: { native: 1, agent: 1.01 }, machine: 'AMD EPYC', stages: { ...stages, reconstructMs: 1166, machine: 'cpu', date: '2026-11-29T15:00:00.000Z' } });
  expect(measuredOn([r]).get('cpu')).toEqual(['h2 short decoder stages']);
  expect(performanceMarkdown([r], facts)).toContain('Decoder stages timed apart from the rest of their row (`--stages-only`, on the kept trace): h2 (cpu, 2026-11-29).');
  expect(performanceMarkdown([r], facts)).toContain('Measured on other CPUs (same kernel, JDK, node and qemu): AMD EPYC: h2 short runs.');
});
