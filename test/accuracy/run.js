#!/usr/bin/env node
// The accuracy table for the examples, as `jportal accuracy` measures it: each example recorded under the PT
// emulator at about 0%, 10%, 25% and 50% lost data, its ground truth recorded once by single-stepping, and the
// paper's rows per thread. Writes docs/accuracy.md (with the commands that made it). Slow: minutes per example.
// Usage: node test/accuracy/run.js [--loss 0,10,25,50] [NAME...]
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
const names = args.length ? args : Object.keys(cases);
const sections = [];
for (const name of names) {
  if (!cases[name]) {
    process.stderr.write(`test/accuracy: unknown case ${name} (known: ${Object.keys(cases).join(', ')})\n`);
    process.exit(2);
  }
  const md = path.join(os.tmpdir(), `jportal-accuracy-${process.pid}.md`);
  process.stderr.write(`test/accuracy: ${name}\n`);
  const r = spawnSync(process.execPath, [CLI, 'accuracy', '--loss', loss, '--md', md, '--', 'java', ...cases[name]], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write(`test/accuracy: ${name} failed (exit ${r.status})\n`);
    process.exit(1);
  }
  sections.push(`## ${name}\n\n${fs.readFileSync(md, 'utf8').replace(/\/\S*\/examples\//g, 'examples/')}`);
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

Reading the tables (measured 2026-11-24, eighth session, at e352006: completion follows javac's string switch
through its local's constant, takes back hoisted PcDescs and drops late echoes; twins are told apart by linker
types and an implicit exception's constructor chain; exceptions JIT runs with \`-XX:-OmitStackTraceInFastThrow\`, so
compiled code constructs implicit exceptions as the interpreted oracle does. Each row is its own recording, so the
lost data falls in different code from one run to the next, and one run per row is a sample, not an estimate: an
earlier run of this script the same session, at 33c90b7, gave at 25% lost switches JIT 91.2% (RA 73.2%), exceptions
JIT 93.7% (RA 77.4%), exceptions -Xint 86.9% and switches -Xint 83.6%):
- Without loss, DA is 99.7% on exceptions JIT, 98.6% on exceptions -Xint, 95.4% on switches -Xint and 97.3% on
  switches JIT (was 89.6%: the string switch). What is left in switches JIT is C2 code that merges the arms of both
  switches into one return whose PcDesc names one arm. DA counts decoded events the oracle cannot see (PD above
  100% on -Xint: code run for the VM, e.g. class loading, that the masking does not pair), so overall, 99.6% and
  99.7% on the -Xint rows, is the better measure there.
- At about 25% lost: exceptions JIT 96.3% with RA 75.4% meets RA >= 70% and overall >= 90% (both runs did);
  switches JIT does in one run (91.2%, RA 73.2%) and not in this one (69.8%, RA 52.0%, bound 73.9%: the decoded
  side itself lacks the events of the lost stretch of the hot loop). The -Xint rows do not: switches -Xint 72.4% and
  exceptions -Xint 18.9% (bound 89.1%: the comparison's alignment lost its way; 86.9% in the other run), with RA
  4-8%: recovery copies more than was lost (PR 114% and 213%), and the fills land in code the VM runs for itself,
  which the oracle cannot see.
- At about half the data lost, rows with a bound of 100% and DA or RA of a few percent are the comparison's
  windowed alignment losing its way (these are loops: no gram is unique to anchor on), not the decode.
- switches -Xint 200 is startup-dominated: its truth is 48 k bytecodes of the live phase, and the decoded side has
  more than that even without loss (PD 104%: code the oracle cannot see that the masking does not pair). What
  recovery fills there aligns with almost nothing: the losses fall in that unseen code, so those rows measure the
  comparison more than the recovery.
`;
fs.writeFileSync(path.join(REPO, 'docs', 'accuracy.md'), head + sections.join('\n'));
process.stderr.write('test/accuracy: wrote docs/accuracy.md\n');
