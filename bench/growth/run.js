#!/usr/bin/env node
// How `jportal analyze` grows with trace length, measured on one recording: the trace as if recording had stopped
// earlier. Each size keeps the trace's metadata and every other thread's PT, and the first N MB of the largest
// thread's PT, cut at a PSB (so the prefix is a stream that ends cleanly). Each prefix is analyzed in turn under
// /usr/bin/time (wall time, peak RSS) and the table gives time and memory against PT bytes and bytecodes, with
// each size's ratio to the smallest. Logs on stderr; --json result on stdout.
//
// Usage: node bench/growth/run.js TRACE_DIR [--sizes 16,32,64,128] [--json] [--keep DIR]
//   --sizes  prefixes of the largest thread's PT, in MB (default 16,32,64,128); "all" for the whole file
//   --keep   put the prefixes (and their reports) under DIR and leave them; default a temporary directory, removed
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const json = args.includes('--json');
const dir = args.find((a, i) => !a.startsWith('--') && (i === 0 || !['--sizes', '--keep'].includes(args[i - 1])));
const log = (m) => process.stderr.write(`bench/growth: ${m}\n`);
if (!dir || !fs.existsSync(path.join(dir, 'meta.jpt'))) {
  log(`usage: node bench/growth/run.js TRACE_DIR [--sizes 16,32,64,128] [--json] [--keep DIR]${dir ? ` (${dir}: no meta.jpt)` : ''}`);
  process.exit(2);
}
if (!fs.existsSync('/usr/bin/time')) {
  log('needs /usr/bin/time (apt install time) for peak memory');
  process.exit(3);
}
const { findPsb } = require(path.join(REPO, 'packages', 'pt', 'dist'));
const BIN = path.join(REPO, 'packages', 'cli', 'dist', 'bin.js');
const NODE_HEAP = `--max-old-space-size=${Math.max(4096, Math.floor((os.totalmem() / 2 ** 20) * 0.6))}`;

const ptDir = path.join(dir, 'pt');
const ptFiles = fs.readdirSync(ptDir).filter((f) => f.endsWith('.pt'));
const main = ptFiles.map((f) => ({ f, size: fs.statSync(path.join(ptDir, f)).size })).sort((x, y) => y.size - x.size)[0];
if (!main) {
  log(`${ptDir}: no PT files`);
  process.exit(2);
}
const MB = 1e6;
const sizes = (opt('--sizes') ?? '16,32,64,128').split(',').map((s) => (s === 'all' ? main.size : Math.round(Number(s) * MB)));
if (sizes.some((s) => !(s > 0))) {
  log(`--sizes: numbers of MB, or "all" (got ${opt('--sizes')})`);
  process.exit(2);
}

/** The offset of the first PSB at or after `at` in the file (its size when there is none before the end). */
function psbAtOrAfter(fd, at, size) {
  const step = 4 << 20;
  const buf = Buffer.alloc(step + 32);
  for (let p = at; p < size; p += step) {
    const n = fs.readSync(fd, buf, 0, buf.length, p);
    const i = findPsb(buf, 0, n);
    if (i >= 0) return p + i;
  }
  return size;
}

/** A trace directory holding the first `bytes` (cut at a PSB) of the largest thread's PT; the rest linked. */
function prefix(out, bytes) {
  fs.mkdirSync(path.join(out, 'pt'), { recursive: true });
  for (const f of fs.readdirSync(dir)) if (fs.statSync(path.join(dir, f)).isFile()) fs.copyFileSync(path.join(dir, f), path.join(out, f));
  for (const f of fs.readdirSync(ptDir)) if (f !== main.f) fs.copyFileSync(path.join(ptDir, f), path.join(out, 'pt', f));
  const src = fs.openSync(path.join(ptDir, main.f), 'r');
  const dst = fs.openSync(path.join(out, 'pt', main.f), 'w');
  try {
    const end = bytes >= main.size ? main.size : psbAtOrAfter(src, bytes, main.size);
    const buf = Buffer.alloc(16 << 20);
    for (let p = 0; p < end; ) {
      const n = fs.readSync(src, buf, 0, Math.min(buf.length, end - p), p);
      if (n <= 0) throw new Error(`${path.join(ptDir, main.f)}: short read at offset ${p}`);
      fs.writeSync(dst, buf, 0, n);
      p += n;
    }
    return end;
  } finally {
    fs.closeSync(src);
    fs.closeSync(dst);
  }
}

const keep = opt('--keep');
const work = keep ? path.resolve(keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-growth-'));
fs.mkdirSync(work, { recursive: true });
const rows = [];
try {
  for (const want of sizes) {
    const out = path.join(work, `prefix-${Math.round(want / MB)}MB`);
    fs.rmSync(out, { recursive: true, force: true });
    const ptBytes = prefix(out, want);
    log(`${path.basename(out)}: ${(ptBytes / MB).toFixed(1)} MB of ${main.f} (of ${(main.size / MB).toFixed(1)} MB); analyzing`);
    const timeFile = path.join(out, 'analyze.time');
    const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%e %M', process.execPath, NODE_HEAP, BIN, 'analyze', out, '--json'], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28,
    });
    if (r.status !== 0) {
      log(`${out}: jportal analyze exited ${r.status}`);
      process.exit(1);
    }
    const s = JSON.parse(r.stdout);
    const [sec, kb] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    rows.push({ ptBytes, seconds: sec, maxRssBytes: kb * 1024, bytecodes: s.bytecodes, windows: s.windows?.count ?? 1, spillBytes: s.windows?.spillBytes ?? 0, timingsMs: s.timingsMs });
    const x = rows[rows.length - 1];
    log(`  ${x.seconds.toFixed(1)} s, peak RSS ${(x.maxRssBytes / 2 ** 20).toFixed(0)} MiB, ${x.bytecodes.toLocaleString('en-US')} bytecodes (${(x.bytecodes / x.seconds / 1e6).toFixed(2)} M/s)`);
    if (!keep) fs.rmSync(out, { recursive: true, force: true });
  }
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}

const b = rows[0];
const f = (x, d = 2) => x.toFixed(d);
const lines = [
  `analyze growth on ${dir} (${main.f}: ${(main.size / MB).toFixed(1)} MB of PT), ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
  '| PT MB | bytecodes | windows | analyze s | peak RSS MiB | x PT | x bytecodes | x time | x RSS | ns per bytecode |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${f(r.ptBytes / MB, 1)} | ${r.bytecodes.toLocaleString('en-US')} | ${r.windows} | ${f(r.seconds, 1)} | ${(r.maxRssBytes / 2 ** 20).toFixed(0)} | ${f(r.ptBytes / b.ptBytes)} | ${f(r.bytecodes / b.bytecodes)} | ${f(r.seconds / b.seconds)} | ${f(r.maxRssBytes / b.maxRssBytes)} | ${f((r.seconds * 1e9) / r.bytecodes, 0)} |`),
];
process.stderr.write(lines.join('\n') + '\n');
if (json) process.stdout.write(JSON.stringify({ trace: dir, thread: main.f, ptFileBytes: main.size, rows }, null, 2) + '\n');
