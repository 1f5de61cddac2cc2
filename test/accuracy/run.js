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

Reading the tables (measured 2026-11-24, eleventh session, at 151bfec, seeds 1, 2 and 3; each seed is its own
recording). What changed since the ninth session's run (bec1f28): the agent's default is \`classes=path\` (classes
named, read at analysis from the runtime image and the class path; VMInit-listed classes carry no load time), and
compiled frames are completed with C2's jump-table arms, paths that avoid bytecodes whose PcDesc did not run, and
C2's compare-tree PcDescs read as the code after their jump (no-loss switches JIT: 95.9% -> 99.95% sequence
accuracy, README). The -Xint rows do not run compiled code; their differences from the ninth session's are the
recordings' (where the loss falls).
- Without loss, overall is 99.5-100.0% on every example, DA 99.8% on both exceptions rows, 98.7% on switches JIT
  and 98.2% on switches -Xint: PD is 101.2-101.3% there, decoded events beyond the truth that no alignment pairs
  (not analysed this session), so DA misses the issue's 99% on the switches rows.
- At about 25% lost, exceptions JIT meets the issue's marks on all three seeds: RA 95.4% (94.7-96.7%), overall
  92.4% (90.2-94.4%), hot methods 10/10. exceptions -Xint: overall 92.6% (89.7-94.2%), but RA 68.8% (56.9-85.1%) and
  hot methods 6-10 of 10. switches -Xint: RA 46.2%, overall 84.8% (81.9-88.8%), hot 7-10. switches JIT: seed 1 has
  overall 84.5% with RA 38.5%; another seed's overall of 2.3% (and 1.6% at 50%; exceptions JIT 2.5% at 50%) is not
  credible next to seed 1's bound (90.2%): the comparison's windowed alignment lost its anchor in those loops, so
  those cells measure the alignment, not the decode (not investigated this session).
- So at 25% the targets (RA >= 70%, overall >= 90%, 10/10 hot) hold for exceptions JIT only; the switches rows
  miss them. Likely what recovery lacks there: a gap in switch-heavy loops has many equally fitting candidates (the arms),
  and the bound column says a part of the lost stretches gets no fill at all.
`;
fs.writeFileSync(path.join(REPO, 'docs', 'accuracy.md'), head + sections.join('\n'));
process.stderr.write('test/accuracy: wrote docs/accuracy.md\n');
