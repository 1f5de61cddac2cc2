#!/usr/bin/env node
// The accuracy table for the examples, as `jportal accuracy` measures it: each example recorded under the PT
// emulator at about 0%, 10%, 25% and 50% lost data, its ground truth recorded once by single-stepping, and the
// paper's rows per thread. Writes docs/accuracy.md (with the commands that made it). Slow: minutes per example.
// Usage: node test/accuracy/run.js [--loss 0,10,25,50] [--seeds 1,2,3] [NAME...]
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
- **overall**: the truth's bytecodes aligned with any decoded event (\`jportal compare\`'s sequence accuracy);
  **(bound)**: what no alignment can exceed (per method and bci the smaller of the two counts, plus decoded
  events without a method, which match on the opcode alone). Where overall
  is far below it, the comparison's windowed alignment lost its way (it does at about half the data lost: the
  examples are loops, so no gram is unique to anchor on) and overall understates the decode;
  **top-10 hot**: hot methods shared with the truth.

What the decoded side is: what \`jportal analyze\` works on, i.e. decoding, then reconstruction (frames the
decoder lost in a gap named by projecting them onto the ICFG; bytecodes a CFG contradiction proves missing
inserted), then recovery (gaps filled from matching context, sized by the gap's PT time at the thread's pace). So
PD can exceed 100% (inferred bytecodes that did not run, or ran elsewhere) and PR too (recovery sizes fills by time,
and PT time also counts time the thread spent off the CPU or in the kernel).

Reading the tables (measured 2026-11-24, ninth session, at bec1f28). What changed since the eighth session's run:
the mask of activations the oracle cannot see now also ends one whose exit was lost at the first decoded call the
alignment paired with a truth call after it (fills of VM upcalls had been counted as wrong recovery); recovery
takes a fill's candidates first where the same callers (4 frames, then 2) were on the stack; a deoptimized frame
that resumes in a VM upcall is attributed right; \`--deterministic\` adds \`-XX:-OmitStackTraceInFastThrow\` (compiled
code constructs implicit exceptions as the interpreted oracle does); and the -Xint examples run 10x longer
(Switches 2000, Exceptions 20000): at the old sizes their truth was mostly the program's start and the VM's hidden
upcalls (exceptions -Xint 2000: 151 k visible bytecodes beside 1.37 M hidden ones). Each row is its own recording
with seed 1, so the lost data falls in different code from one run to the next; one run per row is a sample, not an
estimate (the eighth session's two runs of switches JIT at 25% gave 91.2% and 69.8%).
- Without loss, DA is 99.8% on both exceptions rows, 98.2% on switches -Xint and 97.3% on switches JIT. What is left
  in switches JIT is C2 code that merges the arms of both switches into one return whose PcDesc names one arm.
- At about 25% lost, RA is 87.2% (switches -Xint), 69.6% (exceptions -Xint), 79.0% (switches JIT) and 90.9%
  (exceptions JIT). The eighth session's run had RA 4-8% on the -Xint rows (shorter runs) and 75.4% on exceptions
  JIT. Measured on the same kept recordings at 25%, the mask change alone moved RA from 47.6% to 70.3% (exceptions
  -Xint 20000) and from 17.4% to 35.3% (switches -Xint 2000), with matched events unchanged; the calling-context
  candidates then to 70.4% and 35.9%. The switches -Xint row above is another recording, whose loss fell elsewhere.
  Overall is 85.2%, 93.0%, 77.9% and 95.7%: the exceptions rows meet overall >= 90%, the switches rows do not
  (their bounds, 90.6% and 83.4%, say the decoded side itself lacks part of the lost stretches: a gap without a
  fitting walk is left empty). Hot methods at 25%: 9, 6, 8 and 9 of 10, not the 10 the issue asks for; the lost
  stretch of a hot loop moves counts enough to reorder methods near the tenth place.
- At about half the data lost, the exceptions rows keep 93-95% overall; switches falls to 59-82%.
- switches -Xint at 10% has PMD 4.2% but nothing to recover in the live phase: its loss fell in the start-up code.
`;
fs.writeFileSync(path.join(REPO, 'docs', 'accuracy.md'), head + sections.join('\n'));
process.stderr.write('test/accuracy: wrote docs/accuracy.md\n');
