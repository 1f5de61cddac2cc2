#!/usr/bin/env node
// How reconstruction's and recovery's time grow with trace length (issue 6: "about linearly"): examples/switches
// recorded under the PT emulator at the 25%-loss preset for 4 sizes, decoded once each, then @jportal/reconstruct
// (frames lost in gaps named by NFA matching, then the check against the CFGs with repairs) and @jportal/recover
// (with the shortest-path fallback, as analyze runs it) timed on every thread (median of --runs). Prints events,
// gaps, fills and times per size, and time per million events: flat = linear.
// Logs on stderr; --json result on stdout.  Usage: node bench/recover/run.js [--sizes 10000,40000,80000,160000] [--runs N] [--json]
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'packages', 'cli', 'dist', 'bin.js');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const json = args.includes('--json');
const sizes = opt('--sizes', '10000,40000,80000,160000').split(',').map(Number);
const RUNS = Number(opt('--runs', '3'));
const LOSS = '65536:230000000'; // the accuracy command's 25% preset (docs/emulator.md)
const log = (m) => process.stderr.write(`bench/recover: ${m}\n`);

const dec = require(path.join(REPO, 'packages', 'decode', 'dist'));
const rec = require(path.join(REPO, 'packages', 'recover', 'dist'));
const recon = require(path.join(REPO, 'packages', 'reconstruct', 'dist'));

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-bench-recover-'));
const rows = [];
for (const size of sizes) {
  const dir = path.join(base, `switches-${size}`);
  const r = spawnSync(process.execPath, [CLI, 'record', '--pt=emulate', '--deterministic', '--force', '--loss', LOSS, '--seed', '1', '--out', dir, '--',
    'java', '-cp', path.join(REPO, 'examples', 'switches', 'classes'), 'Switches', String(size)], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) {
    log(`record Switches ${size} failed: ${r.stderr.trim().split('\n').pop()}`);
    process.exit(1);
  }
  const { threads, model } = dec.decodeTrace(dir);
  const cfgOf = recon.cfgFromModel(model);
  const orphanContext = new recon.OrphanContext(model);
  const fallback = recon.shortestPathBetween(cfgOf);
  /** reconstruction of one thread's events (copies: the decoded events stay as they are for the next run) */
  const reconstruct = (events) => recon.checkAndRepair(recon.attributeOrphans(events, orphanContext).events, cfgOf).events;
  for (const t of threads) reconstruct(t.events); // warm-up (and the CFGs built), not timed
  const rtimes = [];
  for (let k = 0; k < RUNS; k++) {
    const t0 = process.hrtime.bigint();
    for (const t of threads) reconstruct(t.events);
    rtimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  rtimes.sort((a, b) => a - b);
  const reconMs = rtimes[Math.floor(rtimes.length / 2)];
  for (const t of threads) t.events = reconstruct(t.events); // recovery works on reconstructed events, as in analyze
  let events = 0;
  let gaps = 0;
  let recovered = 0;
  let copied = 0;
  const times = [];
  for (const t of threads) rec.recoverGaps(t.events, { fallback }); // warm-up (the JIT compiling recover itself), not timed
  for (let k = 0; k < RUNS; k++) {
    const t0 = process.hrtime.bigint();
    let g = 0;
    let f = 0;
    let c = 0;
    for (const t of threads) {
      const out = rec.recoverGaps(t.events, { fallback });
      g += out.stats.gaps;
      f += out.stats.recovered;
      c += out.stats.events;
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    gaps = g;
    recovered = f;
    copied = c;
  }
  for (const t of threads) events += t.events.length;
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)];
  rows.push({ size, events, gaps, recovered, copied, reconstructMs: reconMs, reconstructMsPerMillionEvents: (reconMs / events) * 1e6, ms, msPerMillionEvents: (ms / events) * 1e6 });
  log(`Switches ${size}: ${events} events, ${gaps} gaps (${recovered} filled, ${copied} events copied), reconstruction ${reconMs.toFixed(0)} ms, recovery ${ms.toFixed(0)} ms`);
  fs.rmSync(dir, { recursive: true, force: true });
}
fs.rmSync(base, { recursive: true, force: true });
const spreadOf = (per) => Math.max(...per) / Math.min(...per);
const spread = spreadOf(rows.map((r) => r.msPerMillionEvents));
const reconstructSpread = spreadOf(rows.map((r) => r.reconstructMsPerMillionEvents));
if (json) process.stdout.write(JSON.stringify({ loss: LOSS, runs: RUNS, rows, perEventSpread: spread, reconstructPerEventSpread: reconstructSpread }, null, 2) + '\n');
else {
  console.log('| Switches N | events | gaps | filled | events copied | reconstruction ms | ms per M events | recovery ms | ms per M events |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.size} | ${r.events} | ${r.gaps} | ${r.recovered} | ${r.copied} | ${r.reconstructMs.toFixed(0)} | ${r.reconstructMsPerMillionEvents.toFixed(0)} | ${r.ms.toFixed(0)} | ${r.msPerMillionEvents.toFixed(0)} |`);
  console.log(`\ntime per event, largest / smallest over the sizes: reconstruction ${reconstructSpread.toFixed(2)}x, recovery ${spread.toFixed(2)}x (1.0 = exactly linear)`);
}
