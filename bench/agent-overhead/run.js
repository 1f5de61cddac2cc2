#!/usr/bin/env node
// Agent overhead: run time and start-up time of a compute-heavy example with vs without libjportal.so,
// measured alternately in one run (medians), and the metadata bytes/s the agent produced.
// Usage: node bench/agent-overhead/run.js [--runs N] [--iterations N] [--java PATH]
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const runs = Number(opt('--runs', 7));
const iterations = Number(opt('--iterations', 12000));
const java = opt('--java', 'java');
const repo = path.resolve(__dirname, '..', '..');
const agent = path.join(repo, 'agent-java', 'build', 'libjportal.so');
const cp = path.join(repo, 'examples', 'compute', 'classes');
if (!fs.existsSync(agent)) {
  console.error(`agent not built: ${agent} (run ./setup.sh)`);
  process.exit(3);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-bench-'));

function timed(argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(java, argv, { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${java} ${argv.join(' ')} failed: ${r.stderr}`);
  return ms;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function measure(label, progArgs) {
  const base = [];
  const withAgent = [];
  const bytesPerSec = [];
  for (let i = 0; i < runs; i++) {
    // alternate so that machine noise hits both sides alike
    base.push(timed(['-cp', cp, 'Compute', ...progArgs]));
    const out = path.join(tmp, `${label}-${i}`);
    const ms = timed([`-agentpath:${agent}=out=${out}`, '-cp', cp, 'Compute', ...progArgs]);
    withAgent.push(ms);
    bytesPerSec.push(fs.statSync(path.join(out, 'meta.jpt')).size / (ms / 1000));
    fs.rmSync(out, { recursive: true, force: true });
    process.stderr.write('.');
  }
  return { base: median(base), agent: median(withAgent), bytesPerSec: median(bytesPerSec) };
}

const startup = measure('startup', ['1']);
const run = measure('run', [String(iterations)]);
process.stderr.write('\n');
const v = spawnSync(java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
console.log(`agent overhead on examples/compute (${v}; ${os.cpus().length} cpus; median of ${runs} alternating runs)`);
console.log(`start-up  (Compute 1):      without ${startup.base.toFixed(0)} ms, with agent ${startup.agent.toFixed(0)} ms, ratio ${(startup.agent / startup.base).toFixed(3)}`);
console.log(`run time  (Compute ${iterations}): without ${run.base.toFixed(0)} ms, with agent ${run.agent.toFixed(0)} ms, ratio ${(run.agent / run.base).toFixed(3)}`);
console.log(`metadata: ${(run.bytesPerSec / 1e6).toFixed(2)} MB/s over the whole run, ${(startup.bytesPerSec / 1e6).toFixed(2)} MB/s for a start-up-only run`);
fs.rmSync(tmp, { recursive: true, force: true });
