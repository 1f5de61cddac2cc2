#!/usr/bin/env node
// PT emulator cost on a fixed example (examples/switches, deterministic JVM flags), measured side by side
// in one run: native, plain qemu-x86_64, and qemu-x86_64 with the jportal PT plugin. Prints the slowdowns
// (medians) and the PT bytes per traced instruction.
// Usage: node bench/emulator/run.js [--runs N] [--n ITERATIONS] [--java PATH]
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = process.argv.slice(2);
const opt = (k, d) => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : d);
const runs = Number(opt('--runs', 3));
const n = opt('--n', '200000');
const java = fs.realpathSync(opt('--java', '/usr/lib/jvm/java-17-openjdk-amd64/bin/java'));
const repo = path.resolve(__dirname, '..', '..');
const plugin = path.join(repo, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
if (!qemu || !fs.existsSync(plugin)) {
  console.error(`needs qemu-x86_64 and ${plugin} (run ./setup.sh)`);
  process.exit(3);
}
const flags = ['-XX:+UseSerialGC', '-Xbatch', '-XX:CICompilerCount=2', '-XX:-UseDynamicNumberOfCompilerThreads', '-XX:ReservedCodeCacheSize=64m'];
const prog = ['-cp', path.join(repo, 'examples', 'switches', 'classes'), 'Switches', n];

function timed(cmd, argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const t = { native: [], qemu: [], plugin: [] };
let bytes = 0, insns = 0;
for (let i = 0; i < runs; i++) {
  t.native.push(timed(java, [...flags, ...prog]));
  t.qemu.push(timed(qemu, [java, ...flags, ...prog]));
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-emubench-'));
  t.plugin.push(timed(qemu, ['-plugin', `${plugin},out=${out}`, java, ...flags, ...prog]));
  bytes = 0;
  insns = 0;
  for (const line of fs.readFileSync(path.join(out, 'pt', 'sideband.jsonl'), 'utf8').trim().split('\n')) {
    const e = JSON.parse(line);
    if (e.type === 'thread_end') {
      bytes += e.bytes;
      insns += e.insns;
    }
  }
  fs.rmSync(out, { recursive: true, force: true });
  process.stderr.write('.');
}
process.stderr.write('\n');
const m = { native: median(t.native), qemu: median(t.qemu), plugin: median(t.plugin) };
console.log(`PT emulator on examples/switches ${n} (${os.cpus().length} cpus, median of ${runs} runs each, interleaved)`);
console.log(`native ${m.native.toFixed(0)} ms | qemu ${m.qemu.toFixed(0)} ms | qemu + PT plugin ${m.plugin.toFixed(0)} ms`);
console.log(`slowdown: ${(m.plugin / m.qemu).toFixed(2)}x vs plain qemu, ${(m.plugin / m.native).toFixed(2)}x vs native`);
console.log(`PT: ${(bytes / 1e6).toFixed(1)} MB for ${(insns / 1e6).toFixed(1)} M traced instructions = ${(bytes / insns).toFixed(3)} bytes/instruction`);
