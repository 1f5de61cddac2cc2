/**
 * Ground truth (`jportal oracle`, the agent's single-stepping mode) checked independently: every recorded
 * bytecode of the example's own classes is the byte the class file on disk has at that bci, consecutive bytecodes
 * of a frame follow the method's control flow (successors from @jportal/classfile), throws and catches land on
 * exception-table handlers, and the program's output is unchanged. Then `jportal compare` on a real emulated
 * trace, and bad input.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ClassFile, parseClass, successors } from '@jportal/classfile';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, runCli, tmpDir } from '../lib/run';

const jdk17 = findJdks().available.find((j) => j.feature === 17);
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
if (!jdk17) console.warn('SKIP oracle e2e tests: no JDK 17');
const maybe = jdk17 ? describe : describe.skip;

/** Runs `jportal oracle --json`; the program's own output goes to stderr then (stdout holds the summary). */
function oracle(label: string, javaArgs: string[]): { dir: string; programOutput: string } {
  const dir = tmpDir(`oracle-${label}`);
  const r = runCli(['oracle', '--force', '--json', '--out', dir, '--', jdk17!.java, ...javaArgs], 600_000);
  if (r.status !== 0) throw new Error(`oracle failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { dir, programOutput: r.stderr };
}

/** Class files of an example directory by internal name. */
function exampleClasses(dir: string): Map<string, ClassFile> {
  const out = new Map<string, ClassFile>();
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.class')) {
    const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, f))), f);
    out.set(cf.name, cf);
  }
  return out;
}

maybe('ground truth', () => {
  test('exceptions: opcodes equal the class files, frames follow control flow, throws and catches meet handlers', () => {
    const classesDir = path.join(EXAMPLES, 'exceptions', 'classes');
    const plain = spawnSync(jdk17!.java, ['-cp', classesDir, 'Exceptions', '300'], { encoding: 'utf8' });
    const { dir, programOutput } = oracle('exc', ['-cp', classesDir, 'Exceptions', '300']);
    const o = readOracle(dir);
    expect(o.complete).toBe(true);
    const main = o.threads.find((t) => t.name === 'main')!;
    const ev = readOracleThread(o, main);
    const classes = exampleClasses(classesDir);
    const codeOf = (m: number) => {
      const info = o.methods[m];
      return classes.get(info.className)?.method(info.name, info.signature);
    };
    let checked = 0, badOpcode = 0, badFlow = 0, badFrame = 0, throws = 0, catches = 0, badCatch = 0;
    // a frame stack from entry/exit records; bytecodes belong to the top frame
    const stack: { m: number; last: number }[] = [];
    for (let i = 0; i < ev.length; i++) {
      const k = ev.kind[i], m = ev.method[i], bci = ev.bci[i];
      if (k === OracleKind.Entry) stack.push({ m, last: -1 });
      else if (k === OracleKind.Exit || k === OracleKind.ExitByException) stack.pop();
      else if (k === OracleKind.Throw) throws += codeOf(m) ? 1 : 0;
      else if (k === OracleKind.Catch) {
        const info = codeOf(m);
        if (!info) continue;
        catches++;
        if (!info.handlers.some((h) => h.handlerPc === bci)) badCatch++;
        const top = stack[stack.length - 1];
        if (top && top.m === m) top.last = -2; // the next bytecode is the handler
      } else if (k === OracleKind.Bytecode) {
        const top = stack[stack.length - 1];
        const info = codeOf(m);
        if (!info?.code) continue;
        checked++;
        if (ev.opcode[i] !== info.code[bci]) badOpcode++;
        if (!top || top.m !== m) {
          badFrame++;
          continue;
        }
        if (top.last === -1 && bci !== 0) badFlow++;
        else if (top.last === -2 && !info.handlers.some((h) => h.handlerPc === bci)) badFlow++;
        else if (top.last >= 0 && !successors(info.code, top.last).includes(bci)) {
          if (badFlow++ < 5) console.log(`flow: ${o.methods[m].name} ${top.last} -> ${bci}`, Array.from({ length: 8 }, (_, d) => i - 6 + d).map((j) => `${ev.kind[j]}:${o.methods[ev.method[j]].name}@${ev.bci[j]}`).join(' '));
        }
        top.last = bci;
      }
    }
    console.log(`oracle Exceptions 300: ${ev.length} records; ${checked} bytecodes of the example's classes checked, ${throws} throws, ${catches} catches`);
    expect(checked).toBeGreaterThan(10_000);
    expect(badOpcode).toBe(0);
    expect(badFrame).toBe(0);
    expect(badFlow).toBe(0);
    expect(throws).toBeGreaterThanOrEqual(3 + 60 + 30); // (300/100 depth throws) + NPEs + AIOOBEs, at least
    expect(catches).toBeGreaterThan(90);
    expect(badCatch).toBe(0);
    // ground truth must not change what the program does
    expect(plain.stdout.trim()).toMatch(/^sum=\d+ caught=\d+$/);
    expect(programOutput).toContain(plain.stdout.trim());
    cleanup(dir);
  });
});

const haveEmulator = !!qemu && fs.existsSync(PLUGIN);
if (jdk17 && !haveEmulator) console.warn('SKIP compare e2e tests: no qemu-x86_64 or emulator plugin (./setup.sh)');

(jdk17 && haveEmulator ? describe : describe.skip)('jportal compare on an emulated trace', () => {
  let trace = '';
  let truth = '';
  let other = '';
  const args = ['-Xint', '-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '40'];
  beforeAll(() => {
    trace = tmpDir('cmp-trace');
    const r = runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000);
    if (r.status !== 0) throw new Error(r.stderr.slice(-2000));
    truth = tmpDir('cmp-oracle');
    const o = runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000);
    if (o.status !== 0) throw new Error(o.stderr.slice(-2000));
    other = tmpDir('cmp-other');
    const x = runCli(['oracle', '--deterministic', '--force', '--out', other, '--', jdk17!.java, '-Xint', '-cp', path.join(EXAMPLES, 'exceptions', 'classes'), 'Exceptions', '300'], 600_000);
    if (x.status !== 0) throw new Error(x.stderr.slice(-2000));
  });
  afterAll(() => [trace, truth, other].forEach(cleanup));

  interface Report { threads: { name: string; comparison: { sequence: { accuracy: number; matched: number; unknownFieldsMatched: number; truthLength: number }; calls: { accuracy: number }; hot: { identical: boolean; shared: number }; counts: { coverage: number } } }[] }
  const run = (o: string): Report => {
    const r = runCli(['compare', trace, o, '--json']);
    expect(r.status).toBe(0);
    return JSON.parse(r.stdout);
  };

  test('interpreter only: bytecodes attributed to method and bci match the ground truth', () => {
    const rep = run(truth);
    const main = rep.threads.find((t) => t.name === 'main')!.comparison;
    console.log(`compare -Xint Switches 40, main: sequence ${(100 * main.sequence.accuracy).toFixed(2)}% of ${main.sequence.truthLength} (${main.sequence.unknownFieldsMatched} matched on the opcode alone), calls ${(100 * main.calls.accuracy).toFixed(2)}%, hot methods shared ${main.hot.shared}/10, count coverage ${(100 * main.counts.coverage).toFixed(2)}%`);
    expect(main.sequence.truthLength).toBeGreaterThan(20_000);
    expect(main.sequence.accuracy).toBeGreaterThanOrEqual(0.985);
    // the matches rest on method and bci, not on opcodes alone
    expect(main.sequence.unknownFieldsMatched).toBeLessThan(0.02 * main.sequence.matched);
    expect(main.hot.identical).toBe(true);
    expect(main.calls.accuracy).toBeGreaterThanOrEqual(0.95);
    for (const t of rep.threads) if (t.name !== 'main') expect(t.comparison.sequence.accuracy).toBe(1);
  });

  test('against another program\'s ground truth the same trace scores far lower (the metric discriminates)', () => {
    const rep = run(other);
    const main = rep.threads.find((t) => t.name === 'main')!.comparison;
    expect(main.sequence.accuracy).toBeLessThan(0.8);
    expect(main.hot.identical).toBe(false);
  });

  test('bad input: a missing or truncated oracle is exit 2 with the file named', () => {
    const none = runCli(['compare', trace, path.join(truth, 'nope')]);
    expect(none.status).toBe(2);
    const copy = tmpDir('cmp-bad');
    fs.cpSync(truth, copy, { recursive: true });
    const o = readOracle(copy);
    const f = path.join(copy, o.threads[0].file);
    fs.truncateSync(f, fs.statSync(f).size - 12);
    const bad = runCli(['compare', trace, copy]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`${o.threads[0].file.replace('/', '\\/')}: byte \\d+: .*truncated`));
    fs.writeFileSync(path.join(copy, 'oracle.json'), '{"format":"something-else"');
    expect(runCli(['compare', trace, copy]).stderr).toMatch(/oracle.json: byte 0: not JSON/);
    cleanup(copy);
  });
});


(jdk17 && haveEmulator ? describe : describe.skip)('jportal compare on a JIT-heavy emulated trace', () => {
  test('compiled frames completed into bytecodes; interpreted code attributed; numbers as measured by bench/accuracy', () => {
    const args = ['-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '20000'];
    const trace = tmpDir('cmp-jit-trace');
    const truth = tmpDir('cmp-jit-oracle');
    expect(runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
    expect(runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
    const r = runCli(['compare', trace, truth, '--json']);
    expect(r.status).toBe(0);
    const main = JSON.parse(r.stdout).threads.find((t: { name: string }) => t.name === 'main').comparison;
    console.log(`compare Switches 20000 (JIT), main: sequence ${(100 * main.sequence.accuracy).toFixed(2)}% of ${main.sequence.truthLength}, count error ${(100 * main.counts.relError).toFixed(2)}%, hot ${main.hot.shared}/10, calls ${(100 * main.calls.accuracy).toFixed(2)}%`);
    // measured 80.6% / 28% error / 7 of 10 (compiled code gives PcDesc samples, not bytecodes: see the decode README)
    expect(main.sequence.accuracy).toBeGreaterThanOrEqual(0.75);
    expect(main.counts.relError).toBeLessThan(0.4);
    expect(main.hot.shared).toBeGreaterThanOrEqual(6);
    expect(main.calls.accuracy).toBeGreaterThanOrEqual(0.85);
    const dec = runCli(['decode', trace, '--json', '--no-write', '--workers', '1']);
    const a = JSON.parse(dec.stdout).threads.find((t: { name: string }) => t.name === 'main').attribution;
    expect(a.withBci / a.interpreted).toBeGreaterThanOrEqual(0.95);
    cleanup(trace);
    cleanup(truth);
  });
});
