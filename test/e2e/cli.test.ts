/**
 * `jportal record` and `jportal inspect` as a user runs them: real JVMs, real exit codes, real files.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findJdks } from '../lib/jdks';
import { cleanup, CLI, EXAMPLES, runCli, tmpDir } from '../lib/run';
import { readTrace } from '../lib/trace';

const { available } = findJdks();
const jdk17 = available.find((j) => j.feature === 17);
const maybe = jdk17 ? describe : describe.skip;
if (!jdk17) console.warn('SKIP cli tests: JDK 17 not installed');

maybe('jportal record + inspect', () => {
  let dir: string;
  beforeAll(() => {
    dir = tmpDir('cli');
  });
  afterAll(() => cleanup(dir));

  test('record writes a complete trace and says it holds metadata only', () => {
    const out = path.join(dir, 'jit');
    const r = runCli(['record', '--json', '--out', out, '--', jdk17!.java, '-cp', path.join(EXAMPLES, 'jit-hot', 'classes'), 'JitHot']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('metadata only');
    const summary = JSON.parse(r.stdout);
    expect(summary.complete).toBe(true);
    expect(summary.pt).toBe('none');
    expect(summary.ptThreads).toBe(0);
    expect(summary.javaExit).toBe(0);
    // the program's own stdout went to stderr so that stdout stays JSON
    expect(r.stderr).toContain('run=35000000');
    const trace = readTrace(out);
    expect(trace.problems).toEqual([]);
    expect(trace.records.length).toBe(summary.records);
    expect(fs.readdirSync('/dev/shm').filter((f) => f.startsWith('jportal-'))).not.toContain(`jportal-${trace.byType('VM_INFO')[0].payload.pid}.ring`);
  });

  test('inspect summarizes it, as text and as JSON', () => {
    const out = path.join(dir, 'jit');
    const text = runCli(['inspect', out]);
    expect(text.status).toBe(0);
    for (const k of ['jdk', 'codelets', 'dispatch', 'nmethods', 'patches', 'classes', 'threads', 'transport']) expect(text.stdout).toMatch(new RegExp(`^${k}\\s`, 'm'));
    const j = JSON.parse(runCli(['inspect', '--json', out]).stdout);
    const trace = readTrace(out);
    expect(j.records).toBe(trace.records.length);
    expect(j.codelets).toBe(trace.byType('CODELET').length);
    expect(j.nmethods).toBe(trace.byType('NMETHOD_LOAD').length);
    expect(j.patches).toBe(trace.byType('CODE_PATCH').length);
    expect(j.classes).toBe(trace.byType('CLASS').length);
    expect(j.osr).toBeGreaterThan(0);
    expect(j.complete).toBe(true);
    const m = runCli(['inspect', out, '--method', 'JitHot.run']);
    expect(m.stdout).toMatch(/JitHot\.run\(\[LJitHot;I\)J: \d+ compiles/);
    expect(m.stdout).toContain('inlines: JitHot.twice');
    const c = runCli(['inspect', out, '--codelets']);
    expect(c.stdout).toMatch(/ bytecode\s+96\s+iadd/);
  });

  test('bad input: missing directory, corrupt file, no command, missing java', () => {
    const missing = runCli(['inspect', path.join(dir, 'nope')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);

    const src = path.join(dir, 'jit', 'meta.jpt');
    const bad = path.join(dir, 'bad');
    fs.mkdirSync(bad);
    const bytes = fs.readFileSync(src);
    const at = Math.floor(bytes.length / 2);
    bytes[at] ^= 0x10;
    fs.writeFileSync(path.join(bad, 'meta.jpt'), bytes);
    const corrupt = runCli(['inspect', bad]);
    expect(corrupt.status).toBe(2);
    expect(corrupt.stderr).toMatch(/meta\.jpt.*byte \d+/);
    expect(corrupt.stderr.trim().split('\n')).toHaveLength(1);

    const trunc = path.join(dir, 'trunc');
    fs.mkdirSync(trunc);
    fs.writeFileSync(path.join(trunc, 'meta.jpt'), fs.readFileSync(src).subarray(0, at));
    const t = runCli(['inspect', '--json', trunc]);
    // a truncated file is still summarized (everything before the cut), and the cut is reported
    expect(t.status).toBe(0);
    const tj = JSON.parse(t.stdout);
    expect(tj.complete).toBe(false);
    expect(tj.problems.join(' ')).toMatch(/truncated/);

    expect(runCli(['record', '--out', path.join(dir, 'x')]).status).toBe(2);
    expect(runCli(['frobnicate']).status).toBe(2);
    const noJava = runCli(['record', '--out', path.join(dir, 'y'), '--', '/nonexistent/bin/java', '-version']);
    expect(noJava.status).toBe(3);
  });

  test('if the collector dies, the agent takes over and the trace is still complete', async () => {
    const out = path.join(dir, 'takeover');
    const child = spawn(process.execPath, [CLI, 'record', '--out', out, '--', jdk17!.java, '-cp', path.join(EXAMPLES, 'compute', 'classes'), 'Compute', '3000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // wait until the collector has written something, then kill it without warning
    const meta = path.join(out, 'meta.jpt');
    const t0 = Date.now();
    while (!(fs.existsSync(meta) && fs.statSync(meta).size > 100_000) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    // the JVM goes on; wait for its VM_END to reach the file
    let trace;
    for (let i = 0; i < 600; i++) {
      await new Promise((r) => setTimeout(r, 200));
      try {
        trace = readTrace(out);
        if (trace.byType('VM_END').length) break;
      } catch {
        // the agent may be mid-write
      }
    }
    expect(trace).toBeDefined();
    expect(trace!.byType('VM_END')).toHaveLength(1);
    expect(trace!.problems).toEqual([]);
    expect(trace!.byType('NMETHOD_LOAD').length).toBeGreaterThan(10);
    // the agent said, in the trace itself, that it took over
    expect(trace!.byType('AGENT_LOG').some((r) => /collector \(pid \d+\) is gone/.test(r.payload.message))).toBe(true);
  });

  test('Ctrl-C (SIGINT to the process group) ends the JVM and still leaves a complete trace', async () => {
    const out = path.join(dir, 'ctrlc');
    const child = spawn(process.execPath, [CLI, 'record', '--out', out, '--', jdk17!.java, '-cp', path.join(EXAMPLES, 'compute', 'classes'), 'Compute', '100000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true, // its own process group, like a shell job
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const meta = path.join(out, 'meta.jpt');
    const t0 = Date.now();
    while (!(fs.existsSync(meta) && fs.statSync(meta).size > 100_000) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
    // past start-up (a SIGINT before the JVM installs its handler kills it the default way: a valid but
    // incomplete trace, which the collector test above covers)
    await new Promise((r) => setTimeout(r, 1500));
    const started = Date.now();
    process.kill(-child.pid!, 'SIGINT');
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(Date.now() - started).toBeLessThan(30_000); // the 100000-iteration program would run for ~10 s
    expect(code).toBe(1); // the traced program was interrupted: a failed run, but a complete trace
    expect(stderr).toMatch(/SIGINT: letting the JVM shut down/);
    const trace = readTrace(out);
    expect(trace.problems).toEqual([]);
    expect(trace.byType('VM_END')).toHaveLength(1);
  });

  test('a tiny ring with no wait drops records visibly, never hangs the JVM', () => {
    // a 64 KiB ring cannot hold the interpreter's code (~140 KiB): that record is dropped and reported
    const out = path.join(dir, 'tiny');
    const r = spawnSync(
      jdk17!.java,
      [`-agentpath:${path.resolve(CLI, '../../../../agent-java/build/libjportal.so')}=out=${out},ring_kb=64,wait_ms=0`, '-cp', path.join(EXAMPLES, 'jit-hot', 'classes'), 'JitHot'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status).toBe(0);
    const trace = readTrace(out);
    expect(trace.problems).toEqual([]);
    const dropped = trace.byType('DROPPED').reduce((s, d) => s + d.payload.count, 0);
    const end = trace.byType('VM_END')[0].payload;
    expect(end.dropped).toBe(dropped);
    expect(dropped).toBeGreaterThan(0);
    expect(trace.byType('INTERP_CODE')).toHaveLength(0);
    // the ring goes on after a drop: later records arrive (how many of the ~300 codelets depends on when the drain
    // thread runs: more than 200 on an idle machine, 5 once with the machine's two cores busy beside the test)
    expect(trace.byType('CODELET').length).toBeGreaterThan(0);
  });

  test('record --pt=emulate writes the metadata and per-thread PT streams into one directory', () => {
    const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
    if (!qemu) {
      console.warn('SKIP record --pt=emulate: qemu-x86_64 not installed');
      return;
    }
    const out = path.join(dir, 'emulated');
    const r = runCli(['record', '--pt=emulate', '--deterministic', '--json', '--out', out, '--', jdk17!.java, '-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '20000']);
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.pt).toBe('emulated');
    expect(s.complete).toBe(true);
    expect(s.ptThreads).toBeGreaterThan(2);
    const j = JSON.parse(runCli(['inspect', '--json', out]).stdout);
    expect(j.pt.threads.map((t: { comm: string }) => t.comm)).toContain('main');
    const main = j.pt.threads.find((t: { comm: string }) => t.comm === 'main');
    expect(main.bytes).toBeGreaterThan(100_000);
    expect(main.packets.tnt).toBeGreaterThan(1000);
    // the agent ran under the emulator too, with everything recorded
    expect(j.nmethods).toBeGreaterThan(50);
    expect(j.patches).toBeGreaterThan(0);
    expect(j.warnings).toBe(0);
  });

  test('record --pt=emulate refuses a wrapper script with a clear message', () => {
    const script = path.join(dir, 'wrapper.sh');
    fs.writeFileSync(script, '#!/bin/sh\nexec java "$@"\n', { mode: 0o755 });
    const r = runCli(['record', '--pt=emulate', '--out', path.join(dir, 'w'), '--', script, '-version']);
    const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
    expect(r.status).toBe(qemu ? 2 : 3);
    expect(r.stderr).toMatch(qemu ? /not an ELF binary/ : /qemu-x86_64 not found/);
  });

  test('agent options: help and an unknown option leave the JVM running', () => {
    const so = path.resolve(CLI, '../../../../agent-java/build/libjportal.so');
    const help = spawnSync(jdk17!.java, [`-agentpath:${so}=help`, '-version'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const opt of ['out=', 'ring_mb=', 'patch_interval_ms=', 'snapshot=', 'wait_ms=']) expect(help.stderr).toContain(opt);
    const bad = spawnSync(jdk17!.java, [`-agentpath:${so}=bogus=1`, '-version'], { encoding: 'utf8' });
    expect(bad.status).toBe(0);
    expect(bad.stderr).toMatch(/\[jportal\].*bogus/);
  });
});
