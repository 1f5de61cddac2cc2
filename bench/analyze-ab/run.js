#!/usr/bin/env node
// `jportal analyze` of two builds side by side on the same trace: this checkout against a git revision (BASE).
// Each round runs both analyses at once, one per core (taskset), and swaps the cores the next round, so a machine
// whose speed drifts (this one is shared) moves both alike; with one CPU they run one after the other. Every output
// file of the two is compared: byte for byte, except summary.json (its times and paths) and report.html (its data
// compared field by field without the generation time). Logs on stderr; the table (or --json) on stdout.
//
// Usage: node bench/analyze-ab/run.js TRACE_DIR --base REV [--rounds N] [--keep DIR] [--json] [-- ANALYZE_ARGS...]
//   --base    the revision to compare with (built in a worktree of its own under DIR, node_modules copied)
//   --rounds  rounds of the pair (default 2)
//   --keep    where the base worktree and the reports go, left there (default a temporary directory, removed)
//   after --, extra `jportal analyze` arguments for both (default `--workers 1`)
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const args = dash >= 0 ? argv.slice(0, dash) : argv;
const analyzeArgs = dash >= 0 ? argv.slice(dash + 1) : ['--workers', '1'];
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const json = args.includes('--json');
const trace = args.find((a, i) => !a.startsWith('--') && (i === 0 || !['--base', '--rounds', '--keep'].includes(args[i - 1])));
const base = opt('--base');
const rounds = Number(opt('--rounds') ?? 2);
const log = (m) => process.stderr.write(`bench/analyze-ab: ${m}\n`);
const usage = 'usage: node bench/analyze-ab/run.js TRACE_DIR --base REV [--rounds N] [--keep DIR] [--json] [-- ANALYZE_ARGS...]';
if (!trace || !fs.existsSync(path.join(trace, 'meta.jpt')) || !base || !(rounds >= 1)) {
  log(`${usage}${trace && !fs.existsSync(path.join(trace, 'meta.jpt')) ? ` (${trace}: no meta.jpt)` : ''}`);
  process.exit(2);
}
for (const tool of ['/usr/bin/time', 'git']) {
  const r = spawnSync(tool === 'git' ? 'git' : tool, ['--version'], { encoding: 'utf8' });
  if (r.error) {
    log(`needs ${tool}${tool === '/usr/bin/time' ? ' (apt install time) for peak memory' : ''}`);
    process.exit(3);
  }
}
const rev = spawnSync('git', ['-C', REPO, 'rev-parse', '--verify', `${base}^{commit}`], { encoding: 'utf8' });
if (rev.status !== 0) {
  log(`--base ${base}: not a revision of ${REPO}`);
  process.exit(2);
}
const baseRev = rev.stdout.trim();
const headRev = spawnSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
const dirty = spawnSync('git', ['-C', REPO, 'status', '--porcelain', '--', 'packages'], { encoding: 'utf8' }).stdout.trim() !== '';
const work = opt('--keep') ? path.resolve(opt('--keep')) : fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-ab-'));
fs.mkdirSync(work, { recursive: true });
const cpus = os.availableParallelism();
const hasTaskset = spawnSync('taskset', ['--version']).error === undefined;

const run = (cmd, cmdArgs, cwd) => {
  const r = spawnSync(cmd, cmdArgs, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    log(`${cmd} ${cmdArgs.join(' ')} (in ${cwd}) exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
    process.exit(1);
  }
  return r.stdout;
};

// the base build: a worktree at BASE, this checkout's node_modules copied (its @jportal links are relative, so they
// resolve to the worktree's own packages), built
const baseDir = path.join(work, `base-${baseRev.slice(0, 12)}`);
if (!fs.existsSync(path.join(baseDir, 'packages', 'cli', 'dist', 'bin.js'))) {
  log(`building ${baseRev.slice(0, 12)} in ${baseDir}`);
  if (fs.existsSync(baseDir)) run('git', ['-C', REPO, 'worktree', 'remove', '--force', baseDir], REPO);
  run('git', ['-C', REPO, 'worktree', 'add', '--detach', baseDir, baseRev], REPO);
  run('cp', ['-a', path.join(REPO, 'node_modules'), path.join(baseDir, 'node_modules')], REPO);
  run('npx', ['turbo', 'run', 'build', '--filter=@jportal/cli'], baseDir);
}
const builds = [
  { name: 'base', rev: baseRev, bin: path.join(baseDir, 'packages', 'cli', 'dist', 'bin.js') },
  { name: 'new', rev: headRev + (dirty ? ' (with uncommitted changes)' : ''), bin: path.join(REPO, 'packages', 'cli', 'dist', 'bin.js') },
];
const heap = `--max-old-space-size=${Math.max(4096, Math.floor((os.totalmem() / 2 ** 20) * 0.4))}`;

/** one analysis under /usr/bin/time; resolves to { seconds, rssMiB, out } */
function analyze(b, cpu, out) {
  fs.rmSync(out, { recursive: true, force: true });
  const timeFile = `${out}.time`;
  const cmd = ['/usr/bin/time', '-o', timeFile, '-f', '%e %M', process.execPath, heap, b.bin, 'analyze', trace, '-o', out, '--json', ...analyzeArgs];
  const full = cpu >= 0 && hasTaskset ? ['taskset', '-c', String(cpu), ...cmd] : cmd;
  return new Promise((resolve, reject) => {
    const p = spawn(full[0], full.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    p.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${b.name}: jportal analyze exited ${code}: ${err.trim().split('\n').pop()}`));
      const [e, m] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ');
      resolve({ seconds: Number(e), rssMiB: Number(m) / 1024, out });
    });
  });
}

/** files of a report directory, relative */
function filesOf(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

const reportData = (file) => {
  const m = /id="report-data">([\s\S]*?)<\/script>/.exec(fs.readFileSync(file, 'utf8'));
  if (!m) return null;
  const d = JSON.parse(m[1]);
  delete d.generated;
  return d;
};
const summaryData = (file) => {
  const d = JSON.parse(fs.readFileSync(file, 'utf8'));
  delete d.timingsMs;
  delete d.report;
  // (bytes of the scratch spill: how it packs windows is not an output)
  if (d.windows) delete d.windows.spillBytes;
  return d;
};

/** files whose content differs (past what may: times, paths) */
function differing(a, b) {
  const fa = filesOf(a);
  const fb = filesOf(b);
  const diff = [...fa.filter((f) => !fb.includes(f)), ...fb.filter((f) => !fa.includes(f))].map((f) => `${f} (only one has it)`);
  for (const f of fa.filter((x) => fb.includes(x))) {
    const x = fs.readFileSync(path.join(a, f));
    const y = fs.readFileSync(path.join(b, f));
    if (x.equals(y)) continue;
    const same =
      f === 'report.html' ? JSON.stringify(reportData(path.join(a, f))) === JSON.stringify(reportData(path.join(b, f)))
      : f === 'summary.json' ? JSON.stringify(summaryData(path.join(a, f))) === JSON.stringify(summaryData(path.join(b, f)))
      : false;
    if (!same) diff.push(f);
  }
  return diff;
}

const cleanUp = () => {
  if (opt('--keep')) return;
  spawnSync('git', ['-C', REPO, 'worktree', 'remove', '--force', baseDir]);
  fs.rmSync(work, { recursive: true, force: true });
};
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => {
  log(`${sig}: stopped`);
  cleanUp();
  process.exit(1);
});

(async () => {
  log(`${trace}: base ${baseRev.slice(0, 12)} against ${builds[1].rev.slice(0, 12)}${dirty ? '+' : ''}, ${rounds} round(s), ${cpus >= 2 && hasTaskset ? 'side by side on cores 0 and 1' : 'one after the other'}; analyze ${analyzeArgs.join(' ')}`);
  const rows = [];
  for (let r = 0; r < rounds; r++) {
    const cores = r % 2 === 0 ? [0, 1] : [1, 0];
    const outs = builds.map((b) => path.join(work, `r${r + 1}-${b.name}`));
    let res;
    if (cpus >= 2 && hasTaskset) res = await Promise.all(builds.map((b, k) => analyze(b, cores[k], outs[k])));
    else {
      res = [];
      for (let k = 0; k < 2; k++) res.push(await analyze(builds[(k + r) % 2], -1, outs[(k + r) % 2]));
      if (r % 2) res.reverse();
    }
    const diff = differing(outs[0], outs[1]);
    const row = { round: r + 1, baseCore: cores[0], base: res[0], new: res[1], ratio: res[1].seconds / res[0].seconds, differing: diff };
    rows.push(row);
    log(`round ${r + 1}: base ${res[0].seconds.toFixed(1)} s, new ${res[1].seconds.toFixed(1)} s (${(100 * (row.ratio - 1)).toFixed(1)}%); ${diff.length ? `outputs differ: ${diff.join(', ')}` : 'outputs the same'}`);
    if (!opt('--keep') || r + 1 < rounds) for (const o of outs) fs.rmSync(o, { recursive: true, force: true });
  }
  const geo = Math.exp(rows.reduce((s, x) => s + Math.log(x.ratio), 0) / rows.length);
  const same = rows.every((x) => x.differing.length === 0);
  if (json) process.stdout.write(`${JSON.stringify({ trace, base: baseRev, new: builds[1].rev, analyzeArgs, rows, geomeanRatio: geo, outputsSame: same }, null, 2)}\n`);
  else {
    const L = [`analyze of ${trace}, base ${baseRev.slice(0, 12)} vs new ${builds[1].rev.slice(0, 12)}${dirty ? '+' : ''} (${analyzeArgs.join(' ')})`, '', '| round | base core | base | new | new / base | base RSS | new RSS | outputs |', '|---|---|---|---|---|---|---|---|'];
    for (const x of rows) L.push(`| ${x.round} | ${x.baseCore} | ${x.base.seconds.toFixed(1)} s | ${x.new.seconds.toFixed(1)} s | ${x.ratio.toFixed(3)} | ${x.base.rssMiB.toFixed(0)} MiB | ${x.new.rssMiB.toFixed(0)} MiB | ${x.differing.length ? `differ: ${x.differing.join(', ')}` : 'same'} |`);
    L.push('', `geometric mean new / base: ${geo.toFixed(3)}; outputs ${same ? 'the same in every round' : 'differ'}`);
    process.stdout.write(`${L.join('\n')}\n`);
  }
  cleanUp();
  process.exit(same ? 0 : 1);
})().catch((e) => {
  log(e.message);
  cleanUp();
  process.exit(1);
});
