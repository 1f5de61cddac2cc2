#!/usr/bin/env node
// Runs every package's tests through turbo (output passed through as it comes) and ends with one line
// totalling them: "tests: N passed, N failed, N skipped", preceded by the start of each failure's report
// (CI keeps only the tail of the log). Exit code: turbo's.
'use strict';
const { spawn } = require('child_process');

const child = spawn('npx', ['turbo', 'run', 'test', '--concurrency=1', '--output-logs=full'], { stdio: ['ignore', 'pipe', 'inherit'] });
let passed = 0, failed = 0, skipped = 0, pending = '';
// jest prints "FAIL <file>" then "● <suite> › <test>" blocks; keep the first lines of each block
const failures = [];
let failureLines = 0, inFailedSuite = false;
const FAILURE_LINES = 40;
const keepFailure = (line) => {
  const text = line.replace(/^(> )?@?[\w./-]+:[\w-]+: /, '').replace(/\x1b\[[0-9;]*m/g, '');
  if (/^\s*(PASS|FAIL) /.test(text) || /^Test Suites:/.test(text)) {
    failureLines = 0;
    inFailedSuite = /^\s*FAIL /.test(text);
  }
  if (/^\s*FAIL /.test(text) || (inFailedSuite && /^\s*● /.test(text)) || /_test: FAILED/.test(text)) {
    failures.push(text);
    failureLines = /● /.test(text) ? FAILURE_LINES : 0;
  } else if (failureLines > 0) {
    failures.push(text);
    failureLines--;
  }
};
const count = (line) => {
  keepFailure(line);
  const jest = /Tests:\s+(.*)\d+ total/.exec(line);
  if (jest) {
    for (const [, n, what] of jest[1].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
      if (what === 'passed') passed += Number(n);
      else if (what === 'failed') failed += Number(n);
      else skipped += Number(n);
    }
  }
  // the C self-tests (agent-java, native) print "<name>_test: <summary>" once when they pass, and
  // "<name>_test: FAILED ..." per failed check
  const self = /\b\w+_test: (.*)$/.exec(line);
  if (self) /^FAILED/.test(self[1]) ? failed++ : /checks failed$/.test(self[1]) ? undefined : passed++;
  if (/smoke: java -version with the agent wrote/.test(line)) passed++;
  if (/SKIP smoke run/.test(line)) skipped++;
};
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop();
  lines.forEach(count);
});
child.on('close', (code) => {
  if (pending) count(pending);
  if (failures.length > 0) console.log(`\nfailures (first ${FAILURE_LINES} lines of each):\n${failures.join('\n')}`);
  console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(code ?? 1);
});
