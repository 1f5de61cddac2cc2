#!/usr/bin/env node
// Decoding accuracy against ground truth, per example: records each program under the PT emulator and, in a
// separate run, with the oracle (JVMTI single-stepping), then runs `jportal compare` and prints one row per
// thread: sequence accuracy (and how much of it matched on the opcode alone), per-bci count error, top-10 hot
// methods shared, call/return accuracy. Slow (the emulator and single-stepping): minutes.
// Usage: node bench/accuracy/run.js [--json] [--keep] [NAME...]   (names from the table below)
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'packages', 'cli', 'dist', 'bin.js');
const EX = path.join(REPO, 'examples');
const cases = {
  'compute-xint': ['-Xint', '-cp', path.join(EX, 'compute', 'classes'), 'Compute', '1'],
  'switches-xint': ['-Xint', '-cp', path.join(EX, 'switches', 'classes'), 'Switches', '200'],
  'exceptions-xint': ['-Xint', '-cp', path.join(EX, 'exceptions', 'classes'), 'Exceptions', '2000'],
  switches: ['-cp', path.join(EX, 'switches', 'classes'), 'Switches', '20000'],
  exceptions: ['-cp', path.join(EX, 'exceptions', 'classes'), 'Exceptions', '20000'],
  // (a tenth of the default work: the default's main thread, 316 M events, is past what one stream may hold)
  'jit-hot': ['-cp', path.join(EX, 'jit-hot', 'classes'), 'JitHot', '0.1'],
  recursion: ['-cp', path.join(EX, 'recursion', 'classes'), 'Recursion', '200'],
  threads: ['-cp', path.join(EX, 'threads', 'classes'), 'Threads', '4'],
};
const args = process.argv.slice(2);
const json = args.includes('--json');
const keep = args.includes('--keep');
const names = args.filter((a) => !a.startsWith('--'));
const todo = names.length ? names : Object.keys(cases);
const log = (m) => process.stderr.write(`bench/accuracy: ${m}\n`);
const run = (argv) => spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', maxBuffer: 256 << 20 });
const rows = [];
for (const name of todo) {
  const javaArgs = cases[name];
  if (!javaArgs) {
    log(`unknown case ${name} (known: ${Object.keys(cases).join(', ')})`);
    process.exit(2);
  }
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `jportal-acc-${name}-`));
  const trace = path.join(base, 'trace');
  const truth = path.join(base, 'oracle');
  let t0 = Date.now();
  const r = run(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', 'java', ...javaArgs]);
  if (r.status !== 0) {
    log(`${name}: record failed: ${r.stderr.slice(-500)}`);
    continue;
  }
  log(`${name}: recorded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  t0 = Date.now();
  const o = run(['oracle', '--deterministic', '--force', '--out', truth, '--', 'java', ...javaArgs]);
  if (o.status !== 0) {
    log(`${name}: oracle failed: ${o.stderr.slice(-500)}`);
    continue;
  }
  log(`${name}: ground truth in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const c = run(['compare', trace, truth, '--json']);
  if (c.status !== 0) {
    log(`${name}: compare failed: ${c.stderr.slice(-500)}`);
    continue;
  }
  for (const t of JSON.parse(c.stdout).threads) {
    const x = t.comparison;
    rows.push({
      case: name,
      thread: t.name,
      truth: x.sequence.truthLength,
      sequence: x.sequence.accuracy,
      opcodeOnly: x.sequence.matched ? x.sequence.unknownFieldsMatched / x.sequence.matched : 0,
      countError: x.counts.relError,
      hotShared: `${x.hot.shared}/${Math.max(x.hot.truth.length, x.hot.decoded.length)}`,
      hotIdentical: x.hot.identical,
      calls: x.calls.accuracy,
    });
  }
  if (!keep) fs.rmSync(base, { recursive: true, force: true });
  else log(`${name}: kept ${base}`);
}
if (json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
else {
  const pct = (x) => `${(100 * x).toFixed(2)}%`;
  console.log('| case | thread | truth bytecodes | sequence | of it opcode-only | count error | top-10 shared | calls |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.case} | ${r.thread} | ${r.truth} | ${pct(r.sequence)} | ${pct(r.opcodeOnly)} | ${pct(r.countError)} | ${r.hotShared}${r.hotIdentical ? ' (identical)' : ''} | ${pct(r.calls)} |`);
}
