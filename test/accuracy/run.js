#!/usr/bin/env node
// The accuracy table for the examples, as `jportal accuracy` measures it: each example recorded under the PT
// emulator at about 0%, 10%, 25% and 50% lost data, its ground truth recorded once by single-stepping, and the
// paper's rows per thread. Writes docs/accuracy.md (with the commands that made it). Slow: minutes per example.
// Usage: node test/accuracy/run.js [--loss 0,10,25,50] [--seeds 1,2,3] [--reference] [--keep DIR] [NAME...]
// With several seeds of the emulator's loss model, each example is recorded once per seed; the tables are the first
// seed's, and a table of the spread over the seeds (mean, lowest and highest) follows each.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'packages', 'cli', 'dist', 'bin.js');
const EX = path.join(REPO, 'examples');
const cases = {
  // (-Xint runs long enough that the program's own bytecodes, not the VM's hidden upcalls and linkage, are most of
  // what the oracle sees: at 2000 rounds exceptions -Xint had 151 k visible bytecodes beside 1.37 M hidden ones)
  'switches -Xint': ['-Xint', '-cp', path.join(EX, 'switches', 'classes'), 'Switches', '2000'],
  'exceptions -Xint': ['-Xint', '-cp', path.join(EX, 'exceptions', 'classes'), 'Exceptions', '20000'],
  'switches (JIT)': ['-cp', path.join(EX, 'switches', 'classes'), 'Switches', '20000'],
  'exceptions (JIT)': ['-cp', path.join(EX, 'exceptions', 'classes'), 'Exceptions', '20000'],
};
const args = process.argv.slice(2);
const li = args.indexOf('--loss');
const loss = li >= 0 ? args.splice(li, 2)[1] : '0,10,25,50';
const ki = args.indexOf('--keep');
const keep = ki >= 0 ? path.resolve(args.splice(ki, 2)[1]) : undefined;
// --reference: each lossy setting is recorded again with another seed, and measured with it as recovery's reference
const ri = args.indexOf('--reference');
const reference = ri >= 0 && args.splice(ri, 1).length > 0;
const si = args.indexOf('--seeds');
const seeds = si >= 0 ? args.splice(si, 2)[1].split(',').map(Number) : [1];
if (seeds.length === 0 || seeds.some((x) => !Number.isInteger(x))) {
  process.stderr.write('test/accuracy: --seeds wants integers, comma-separated (e.g. 1,2,3)\n');
  process.exit(2);
}
const pct = (x) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`);
/** Per loss setting and thread: mean (lowest-highest) over the seeds of overall, RA, PR, DA, and the hot methods. */
function spreadTable(runs) {
  const groups = new Map();
  for (const { rows } of runs)
    for (const r of rows) {
      const k = `${r.loss} | ${r.thread}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(r);
    }
  const cell = (rs, f, fmt = pct) => {
    const v = rs.map(f).filter((x) => x !== null && x !== undefined);
    if (!v.length) return '—';
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    return `${fmt(mean)} (${fmt(Math.min(...v))}-${fmt(Math.max(...v))})`;
  };
  const hot = (x) => x.toFixed(1);
  const lines = [
    `Spread over ${runs.length} seeds (${runs.map((r) => r.seed).join(', ')}): mean (lowest-highest).`,
    '',
    '| loss | thread | PMD | DA | PR | RA | overall | top-10 hot |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [k, rs] of groups) lines.push(`| ${k} | ${cell(rs, (r) => r.pmd)} | ${cell(rs, (r) => r.da)} | ${cell(rs, (r) => r.pr)} | ${cell(rs, (r) => r.ra)} | ${cell(rs, (r) => r.overall)} | ${cell(rs, (r) => r.hotShared, hot)} |`);
  return lines.join('\n') + '\n';
}
const names = args.length ? args : Object.keys(cases);
const sections = [];
for (const name of names) {
  if (!cases[name]) {
    process.stderr.write(`test/accuracy: unknown case ${name} (known: ${Object.keys(cases).join(', ')})\n`);
    process.exit(2);
  }
  const md = path.join(os.tmpdir(), `jportal-accuracy-${process.pid}.md`);
  process.stderr.write(`test/accuracy: ${name}\n`);
  const runs = [];
  for (const seed of seeds) {
    const extra = seed === seeds[0] ? ['--md', md] : [];
    if (reference) extra.push('--reference');
    // (--keep: the recordings and the oracle, to look into a cell afterwards)
    if (keep) extra.push('--out', path.join(keep, `${name.replace(/[^A-Za-z0-9]+/g, '-').replace(/-$/, '')}-seed${seed}`));
    const r = spawnSync(process.execPath, [CLI, 'accuracy', '--loss', loss, '--seed', String(seed), '--json', ...extra, '--', 'java', ...cases[name]], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (r.status !== 0) {
      process.stderr.write(`test/accuracy: ${name} (seed ${seed}) failed (exit ${r.status})\n`);
      process.exit(1);
    }
    runs.push({ seed, rows: JSON.parse(r.stdout).rows });
  }
  const spread = seeds.length > 1 ? `\n${spreadTable(runs)}` : '';
  sections.push(`## ${name}\n\n${fs.readFileSync(md, 'utf8').replace(/\/\S*\/examples\//g, 'examples/')}${spread}`);
  fs.rmSync(md);
}
const head = `# Accuracy under data loss

Written by \`node test/accuracy/run.js\` (\`jportal accuracy\` per example; see packages/cli/src/commands/accuracy.ts).
Columns, per thread (the JPortal paper's Table 3 rows, on bytecode events):

- **PMD**: share of the thread's traced instructions the PT unit lost (the emulator's own account of its loss
  model); **PDC** = 1 - PMD. Loss falls where PT data is densest (compiled code), so the bytecodes lost are
  usually a larger share than the instructions lost.
- **PD**: decoded bytecode events (observed, or inferred between observed ones in compiled frames) over the
  truth's bytecodes; **DA**: the share of them aligned with the truth.
- **PR**: events recovery (@jportal/recover) copied into gaps of lost data, over the truth's bytecodes; **RA**: the
  share of them aligned with the truth.
- **overall**: the truth's bytecodes aligned with any decoded event (\`jportal compare\`'s sequence accuracy; like
  DA and RA, over what both sides could see: decoded events inside activations the oracle cannot see are left
  out); **(bound)**: what no alignment can exceed (per method and bci the smaller of the two counts, plus events
  without a method, which match on the opcode alone). Where overall is far below it, the comparison's windowed
  alignment lost its way (the examples are loops, so few grams are unique to anchor on) and overall understates
  the decode;
  **top-10 hot**: hot methods shared with the truth.

What the decoded side is: what \`jportal analyze\` works on, i.e. decoding, then reconstruction (frames the
decoder lost in a gap named by projecting them onto the ICFG; bytecodes a CFG contradiction proves missing
inserted), then recovery (gaps filled from matching context, sized by the gap's PT time at the thread's pace). So
PD can exceed 100% (inferred bytecodes that did not run, or ran elsewhere) and PR too (recovery sizes fills by time,
and PT time also counts time the thread spent off the CPU or in the kernel).

`;
// the reading of the tables is written by hand after a run: kept from the file as it was (what lies between the
// column definitions and the first table), to be brought up to date with the new numbers
const out = path.join(REPO, 'docs', 'accuracy.md');
let reading = '';
if (fs.existsSync(out)) {
  const old = fs.readFileSync(out, 'utf8');
  const a = old.indexOf('Reading the tables');
  const b = old.indexOf('\n## ', a);
  if (a >= 0 && b > a) reading = old.slice(a, b + 1);
}
fs.writeFileSync(out, head + reading + sections.join('\n'));
process.stderr.write('test/accuracy: wrote docs/accuracy.md\n');
