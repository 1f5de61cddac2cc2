/**
 * docs/performance.md's table of the decoder's stages (bench-stages.ts): reconstruction is a column of its own; rows
 * measured before it was timed show none.
 */
import { AppResult, performanceMarkdown } from '../src/commands/bench';

const facts = { cpu: 'cpu', cores: '2', ram: '1 GiB', kernel: 'k', jdk: 'jdk', node: 'n', qemu: 'q' };
const stages = { threads: 9, ptBytes: 15.7e6, insns: 38e6, flowMs: 6112, attributeMs: 4989, recoverMs: 38, bytecodes: 3.78e6, gaps: 0, recovered: 0, maxRssBytes: 690e6 };
const result = (app: string, extra: Partial<AppResult>): AppResult => ({ app, size: 'short', date: '2026-11-29T04:00:00.000Z', command: 'jportal bench apps', ok: true, errors: [], ...extra });

test('the stage table gives reconstruction its own column, and none for rows measured before it was timed', () => {
  const md = performanceMarkdown([result('h2', { run: { native: 1, agent: 1.01 }, stages: { ...stages, reconstructMs: 1166 } }), result('fop', { run: { native: 1, agent: 1.01 }, stages })], facts);
  const header = md.split('\n').find((l) => l.startsWith('| app | emulated run |'))!;
  const cols = header.split('|').map((c) => c.trim());
  const at = (name: string) => cols.indexOf(name);
  expect(at('reconstruct')).toBe(at('attribute') + 1);
  const row = (app: string) => md.split('\n').find((l) => l.startsWith(`| ${app} |`) && l.split('|').length === cols.length)!.split('|').map((c) => c.trim());
  expect(row('h2').slice(at('flow'), at('recover') + 1)).toEqual(['6.1 s', '5.0 s', '1.2 s', '0.0 s']);
  expect(row('fop')[at('reconstruct')]).toBe('—');
  expect(row('fop')[at('attribute')]).toBe('5.0 s');
});
