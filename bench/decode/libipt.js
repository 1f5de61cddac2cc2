// libipt's side of bench/decode: builds ptbench.c, exports a trace's code image for it in the two forms it reads,
// and runs it over each PT stream. Used by run.js and by test/e2e/bench-decode.test.ts.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

/** Builds ptbench into `buildDir`; returns its path, or throws with the compiler's first line (needs libipt-dev). */
function buildPtbench(buildDir) {
  fs.mkdirSync(buildDir, { recursive: true });
  const bin = path.join(buildDir, 'ptbench');
  const cc = spawnSync('cc', ['-O2', '-o', bin, path.join(__dirname, 'ptbench.c'), '-lipt'], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`cannot build ptbench (needs libipt-dev): ${(cc.stderr || String(cc.error)).trim().split('\n')[0]}`);
  return bin;
}

const tsc64 = (x) => (Number.isFinite(x) ? BigInt(Math.max(0, Math.floor(x))) : 0xffffffffffffffffn);

/**
 * Writes a loaded trace's code image (@jportal/decode CodeImage) for ptbench: `image.bin`, the latest bytes of
 * every section (begin u64, length u32, bytes), and `image-timed.bin`, every version of every section with its TSC
 * span (begin u64, length u32, validFrom u64, validTo u64, bytes). Returns both paths.
 */
function writeImages(image, buildDir) {
  fs.mkdirSync(buildDir, { recursive: true });
  const latest = new Map();
  for (const s of image.sections) latest.set(s.begin, s);
  const parts = [];
  for (const s of latest.values()) {
    const h = Buffer.alloc(12);
    h.writeBigUInt64LE(BigInt(s.begin), 0);
    h.writeUInt32LE(s.bytes.length, 8);
    parts.push(h, Buffer.from(s.bytes));
  }
  const timedParts = [];
  for (const s of image.sections) {
    const h = Buffer.alloc(28);
    h.writeBigUInt64LE(BigInt(s.begin), 0);
    h.writeUInt32LE(s.bytes.length, 8);
    h.writeBigUInt64LE(tsc64(s.validFrom), 12);
    h.writeBigUInt64LE(tsc64(s.validTo), 20);
    timedParts.push(h, Buffer.from(s.bytes));
  }
  const latestFile = path.join(buildDir, 'image.bin');
  const timedFile = path.join(buildDir, 'image-timed.bin');
  fs.writeFileSync(latestFile, Buffer.concat(parts));
  fs.writeFileSync(timedFile, Buffer.concat(timedParts));
  return { latest: latestFile, timed: timedFile };
}

/**
 * Runs ptbench in `mode` (pkt, blk: latest bytes, blkt: time-indexed) over every stream; returns the summed
 * seconds (decoding only, not loading), instructions and errors.
 */
function runPtbench(bin, mode, streams, images, timing) {
  let seconds = 0, insns = 0, errors = 0, items = 0;
  for (const f of streams) {
    const o = spawnSync(bin, [mode, f, mode === 'blkt' ? images.timed : images.latest, String(timing.ctcRatio), String(timing.mtcFreq), String(timing.nomFreq)], { encoding: 'utf8', timeout: 30 * 60_000 });
    if (o.status !== 0) throw new Error(`ptbench ${mode} ${f}: ${o.error ? o.error.message : `exit ${o.status ?? o.signal}`}: ${(o.stderr || '').trim().split('\n').pop()}`);
    const j = JSON.parse(o.stdout);
    seconds += j.seconds;
    insns += j.insns;
    errors += j.errors;
    items += j.items;
  }
  return { seconds, insns, errors, items };
}

module.exports = { buildPtbench, writeImages, runPtbench };
