#!/usr/bin/env node
// Decoder throughput, measured side by side on the same trace in one run: our packet layer and flow layer
// (@jportal/pt, @jportal/decode; serial and with worker threads) against libipt's packet and block decoders
// (ptbench.c, built here). Prints MB/s of PT (median of --runs) and the ratios. Logs on stderr; --json result on
// stdout.  Usage: node bench/decode/run.js [TRACE_DIR] [--runs N] [--json]
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const REPO = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
const json = args.includes('--json');
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
let dir = args.find((a, i) => !a.startsWith('--') && (i === 0 || args[i - 1] !== '--runs'));
const log = (m) => process.stderr.write(`bench/decode: ${m}\n`);

const pt = require(path.join(REPO, 'packages', 'pt', 'dist'));
const dec = require(path.join(REPO, 'packages', 'decode', 'dist'));

if (!dir) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-bench-decode-'));
  log(`recording examples/switches 100000 under the PT emulator into ${dir}`);
  const r = spawnSync(process.execPath, [path.join(REPO, 'packages', 'cli', 'dist', 'bin.js'), 'record', '--pt=emulate', '--deterministic', '--force', '--out', dir, '--',
    'java', '-cp', path.join(REPO, 'examples', 'switches', 'classes'), 'Switches', '100000'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) process.exit(r.status || 1);
}

// libipt side: build ptbench, export the image (latest bytes of each code section; every version with its time span)
const lib = require('./libipt');
const build = path.join(__dirname, 'build');
let bin;
try {
  bin = lib.buildPtbench(build);
} catch (e) {
  log(e.message);
  process.exit(3);
}
const model = dec.loadTrace(dir);
const sb = model.sideband;
if (!sb) {
  log(`${dir}: no PT data`);
  process.exit(2);
}
const images = lib.writeImages(model.image, build);
const streams = sb.threads.filter((t) => t.file).map((t) => path.join(dir, t.file));
const ptBytes = streams.reduce((a, f) => a + fs.statSync(f).size, 0);
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];

function libipt(mode) {
  const times = [];
  let insns = 0, errors = 0;
  for (let r = 0; r < RUNS; r++) {
    const o = lib.runPtbench(bin, mode, streams, images, sb.timing);
    insns = o.insns;
    errors = o.errors;
    times.push(o.seconds);
  }
  return { seconds: median(times), insns, errors };
}

function oursPackets() {
  // read before the clock starts, in pieces cut at PSBs (a stream may be larger than one buffer can hold)
  const bufs = [];
  for (const f of streams) {
    const fd = fs.openSync(f, 'r');
    for (const p of dec.splitFileAtPsb(f, 256 << 20, sb.timing)) {
      const b = new Uint8Array(p.end - p.begin);
      for (let done = 0, n = 1; done < b.length && n > 0; done += n) n = fs.readSync(fd, b, done, b.length - done, p.begin + done);
      bufs.push(b);
    }
    fs.closeSync(fd);
  }
  const times = [];
  let n = 0;
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    n = 0;
    const p = new pt.Packet();
    for (const b of bufs) {
      const d = new pt.PacketDecoder(b);
      if (!d.syncForward()) continue;
      for (;;) {
        try {
          if (!d.next(p)) break;
          n++;
        } catch {
          if (!d.syncForward(1)) break;
        }
      }
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { seconds: median(times), packets: n };
}

/** A thread's sink for the whole-decode runs: counts the events (what `jportal decode --no-write` keeps). */
let streamedEvents = 0;
const countingSink = () => (e) => {
  streamedEvents += e.length;
};

function oursFlow() {
  const times = [];
  let insns = 0, gaps = 0;
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    // (each thread's events streamed to a sink that counts them, as `jportal decode` streams them into its files:
    // bounded memory for a thread of any length; the speed, not the memory, is measured here)
    const d = dec.decodeTrace(dir, { release: true, sinkFor: countingSink });
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    insns = d.threads.reduce((a, t) => a + t.flow.insns, 0);
    gaps = d.threads.reduce((a, t) => a + t.flow.gaps, 0);
  }
  return { seconds: median(times), insns, gaps };
}

/**
 * The flow walk alone (PT -> blocks, what pt_blk_next does), every stream cut at PSB boundaries into ~4 MiB parts
 * spread over `workers` worker threads (one part list for every worker count, so 1 and N walk the same parts). The
 * clock starts once every worker has loaded the code image (ptbench's time excludes loading too).
 */
async function oursFlowWalk(workers) {
  const { Worker } = require('worker_threads');
  const parts = [];
  for (const f of streams) {
    for (const p of dec.splitFileAtPsb(f, 4 << 20, sb.timing)) parts.push({ file: f, begin: p.begin, end: p.end, endIp: p.endIp });
  }
  parts.sort((a, b) => b.end - b.begin - (a.end - a.begin));
  const decodeDist = path.join(REPO, 'packages', 'decode', 'dist');
  const pool = await Promise.all(
    Array.from({ length: workers }, () => new Promise((resolve, reject) => {
      const w = new Worker(path.join(__dirname, 'flow-worker.js'), { workerData: { dir, decodeDist } });
      w.once('message', () => resolve(w));
      w.once('error', reject);
    })),
  );
  const times = [];
  let insns = 0, gaps = 0, blocks = 0;
  for (let r = 0; r < RUNS; r++) {
    insns = gaps = blocks = 0;
    const queue = [...parts];
    const t0 = process.hrtime.bigint();
    await Promise.all(pool.map((w) => new Promise((resolve, reject) => {
      const next = () => {
        const p = queue.shift();
        if (!p) {
          w.off('message', done);
          resolve();
          return;
        }
        w.postMessage(p);
      };
      const done = (m) => {
        insns += m.insns;
        gaps += m.gaps;
        blocks += m.blocks;
        next();
      };
      w.on('message', done);
      w.once('error', reject);
      next();
    })));
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  await Promise.all(pool.map((w) => w.terminate()));
  return { seconds: median(times), insns, gaps, blocks, parts: parts.length };
}

async function oursParallel(workers) {
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    await dec.decodeTraceParallel(dir, { workers, release: true, sinkFor: countingSink });
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { seconds: median(times) };
}

(async () => {
  const cores = os.availableParallelism();
  log(`${(ptBytes / 1e6).toFixed(1)} MB of PT in ${streams.length} streams; ${RUNS} runs each; ${cores} cores, node ${process.version}`);
  const rPkt = libipt('pkt');
  const rBlk = libipt('blk');
  const rBlkT = libipt('blkt');
  const oPkt = oursPackets();
  const oWalk1 = await oursFlowWalk(1);
  const oWalkN = cores > 1 ? await oursFlowWalk(cores) : undefined;
  const oFlow = oursFlow();
  const oPar = cores > 1 ? await oursParallel(cores) : undefined;
  const mbs = (s) => ptBytes / 1e6 / s;
  const result = {
    trace: dir,
    ptBytes,
    runs: RUNS,
    cores,
    packet: { ours: mbs(oPkt.seconds), libipt: mbs(rPkt.seconds), ratio: rPkt.seconds / oPkt.seconds },
    // libipt's block decoder given only the latest bytes of each section (it stops at each error until the next
    // PSB, so it skips what it cannot decode), and given every version with its time span (blkt: the same image
    // our walk uses, served by the decoder's current time)
    libiptBlock: { mbs: mbs(rBlk.seconds), insns: rBlk.insns, errors: rBlk.errors, insnsPerSec: rBlk.insns / rBlk.seconds },
    libiptBlockTimed: { mbs: mbs(rBlkT.seconds), insns: rBlkT.insns, errors: rBlkT.errors, insnsPerSec: rBlkT.insns / rBlkT.seconds },
    // the flow walk alone (PT -> blocks), as libipt's block decoder; ratio*: against the latest-bytes libipt,
    // timedRatio*: against the time-indexed one (like for like)
    flowWalk: {
      parts: oWalk1.parts, insns: oWalk1.insns, gaps: oWalk1.gaps, insnsPerSec: oWalk1.insns / oWalk1.seconds,
      one: mbs(oWalk1.seconds), ratio: rBlk.seconds / oWalk1.seconds, timedRatio: rBlkT.seconds / oWalk1.seconds,
      all: oWalkN ? mbs(oWalkN.seconds) : null, allRatio: oWalkN ? rBlk.seconds / oWalkN.seconds : null,
      timedAllRatio: oWalkN ? rBlkT.seconds / oWalkN.seconds : null, workers: cores,
    },
    // the whole decode (flow + Java events + attribution and completion): decodeTrace, decodeTraceParallel
    flow: {
      ours: mbs(oFlow.seconds), oursInsns: oFlow.insns, oursGaps: oFlow.gaps,
      libiptBlock: mbs(rBlk.seconds), libiptInsns: rBlk.insns, libiptErrors: rBlk.errors,
      ratio: rBlk.seconds / oFlow.seconds, timedRatio: rBlkT.seconds / oFlow.seconds,
    },
    parallel: oPar ? { workers: cores, ours: mbs(oPar.seconds), speedup: oFlow.seconds / oPar.seconds, ratio: rBlk.seconds / oPar.seconds, timedRatio: rBlkT.seconds / oPar.seconds } : null,
  };
  const f = (x) => x.toFixed(1).padStart(7);
  log(`packet layer   ours ${f(result.packet.ours)} MB/s   libipt pt_pkt ${f(result.packet.libipt)} MB/s   ours/libipt ${result.packet.ratio.toFixed(2)}`);
  const w = result.flowWalk;
  const T = result.libiptBlockTimed;
  log(`flow walk      ours ${f(w.one)} MB/s   libipt pt_blk ${f(T.mbs)} MB/s   ours/libipt ${w.timedRatio.toFixed(2)}   (PT -> blocks, ${w.parts} parts, 1 worker; both on the time-indexed image)`);
  if (oWalkN) log(`flow walk      ours ${f(w.all)} MB/s   with ${cores} workers: ours/libipt ${w.timedAllRatio.toFixed(2)}, speedup ${(oWalk1.seconds / oWalkN.seconds).toFixed(2)}x`);
  log(`               (ours: ${oWalk1.insns} instructions, ${oWalk1.gaps} gaps; libipt: ${rBlkT.insns} instructions, ${rBlkT.errors} errors)`);
  log(`               libipt on the latest bytes only: ${f(result.libiptBlock.mbs)} MB/s, ${rBlk.insns} instructions, ${rBlk.errors} errors (skips to the next PSB at each): ours/libipt ${w.ratio.toFixed(2)}${oWalkN ? `, ${w.allRatio.toFixed(2)} with ${cores} workers` : ''}`);
  log(`whole decode   ours ${f(result.flow.ours)} MB/s   ours/libipt ${result.flow.timedRatio.toFixed(2)} (latest bytes: ${result.flow.ratio.toFixed(2)})   (decodeTrace: + Java events, attribution, completion; with loading)`);
  if (oPar) log(`whole decode   ours ${f(result.parallel.ours)} MB/s   with ${cores} workers: ours/libipt ${result.parallel.timedRatio.toFixed(2)} (latest bytes: ${result.parallel.ratio.toFixed(2)}), speedup ${result.parallel.speedup.toFixed(2)}x (decodeTraceParallel)`);
  if (json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
})();
