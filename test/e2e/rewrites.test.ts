/**
 * Which form of a bytecode the interpreter ran, read from the PT trace (packages/decode/src/java.ts): HotSpot
 * rewrites getfield, aload_0 and iload in place the first time it runs them at a bci, so the class-file form runs
 * once per bci and the rewritten form every later time. Attribution relies on this to tell methods with the same
 * bytecode apart (packages/decode/src/rewrites.ts). Checked against ground truth on a real JVM: per bytecode of the
 * example's methods that rewrites itself on its first run, the class-file form must have run once and the
 * rewritten form as often as single-stepping saw it run after that. And constant-pool resolution (resolution.ts):
 * per constant an instance getfield, invoke or new of the example's classes names, the template called the VM to resolve
 * it on the first run of any bytecode naming it, and found it resolved on every later run that tested.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseClass } from '@jportal/classfile';
import { decodeTrace, originalMeansFirst } from '@jportal/decode';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, runCli, tmpDir } from '../lib/run';

const jdk17 = findJdks().available.find((j) => j.feature === 17);
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const missing = [!jdk17 && 'JDK 17', !qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin (./setup.sh)'].filter(Boolean);
if (missing.length) console.warn(`SKIP bytecode form tests: missing ${missing.join(', ')}`);
const maybe = missing.length ? describe.skip : describe;

/** BytecodeForm (docs/decoded-format.md): an interpreted bytecode's aux & FORM_MASK; the resolution its template saw */
const ORIGINAL = 2;
const REWRITTEN = 3;
const FORM_MASK = 3;
const RESOLVED_PATH = 4;
const SLOW_PATH = 8;
/** getfield, invokevirtual, invokespecial, invokeinterface: instance members, which the VM never keeps unresolved;
 * new: its class (the template tests the entry's tag) */
const INSTANCE_RESOLVING = new Set([180, 182, 183, 185, 187]);

maybe('the interpreter\'s bytecode rewriting, read from the trace', () => {
  // Switches: iload of its many locals; Exceptions: getfield and aload_0 of its list nodes (static and instance code)
  test.each([
    ['switches', 'Switches', '300', ['Switches']],
    ['exceptions', 'Exceptions', '2000', ['Exceptions', 'Exceptions$Node']],
  ])('%s: per self-rewriting bytecode of the example, its class-file form ran once, its rewritten form every later run (-Xint)', (example, main, size, classNames) => {
    const dir = tmpDir('rewrites');
    try {
      const classes = path.join(EXAMPLES, example, 'classes');
      const args = ['-Xint', '-cp', classes, main, size];
      const trace = path.join(dir, 'trace');
      const truth = path.join(dir, 'oracle');
      expect(runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      expect(runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      const code = new Map<string, Uint8Array>();
      for (const c of classNames) {
        const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(classes, `${c}.class`))));
        for (const m of cf.methods) if (m.code) code.set(`${c}.${m.name}${m.descriptor}`, m.code);
      }
      const site = (cls: string, name: string, signature: string, bci: number, op: number): string | undefined => {
        const c = code.get(`${cls}.${name}${signature}`);
        return c && originalMeansFirst(c, bci, op) ? `${cls}.${name}${signature}@${bci} op ${op}` : undefined;
      };

      // decoded: per such site of the example's methods, [class-file form runs, rewritten form runs]
      const { model, threads } = decodeTrace(trace);
      const e = threads.find((t) => t.name === 'main')!.events;
      type Key = (cls: string, name: string, signature: string, bci: number, op: number) => string | undefined;
      /** per key of the interpreted events keyOf names: [runs `which` says 0 of, runs it says 1 of] */
      const countDecoded = (keyOf: Key, which: (aux: number) => number): Map<string, [number, number]> => {
        const counts = new Map<string, [number, number]>();
        for (let i = 0; i < e.length; i++) {
          if (e.kind[i] !== 0 || e.source[i] !== 0) continue;
          const m = model.methods.get(e.method[i]);
          const k = m && keyOf(m.className, m.name, m.signature, e.bci[i], e.opcode[i]);
          if (!k) continue;
          const c = counts.get(k) ?? [0, 0];
          const w = which(e.aux[i]);
          if (w >= 0) c[w]++;
          counts.set(k, c);
        }
        return counts;
      };
      const ours = countDecoded(site, (aux) => ((aux & FORM_MASK) === ORIGINAL ? 0 : (aux & FORM_MASK) === REWRITTEN ? 1 : -1));
      // truth: how often each site ran: once in the class-file form, the rest rewritten
      const o = readOracle(truth);
      const ev = readOracleThread(o, o.threads.find((t) => t.name === 'main')!);
      const names = new Map(o.methods.map((m) => [m.id, m]));
      const runs = new Map<string, number>();
      // a run that throws (a getfield on null) ends before the template rewrites the bytecode: such sites are
      // left out (their class-file form runs again)
      const threw = new Set<string>();
      for (let i = 0; i < ev.length; i++) {
        if (ev.kind[i] !== OracleKind.Bytecode) continue;
        const m = names.get(ev.method[i]);
        const k = m && site(m.className, m.name, m.signature, ev.bci[i], ev.opcode[i]);
        if (!k) continue;
        runs.set(k, (runs.get(k) ?? 0) + 1);
        // (nothing but a bytecode of the same frame follows a getfield, aload_0 or iload that completed)
        if (i + 1 < ev.length && (ev.kind[i + 1] !== OracleKind.Bytecode || ev.method[i + 1] !== ev.method[i])) threw.add(k);
      }
      for (const k of threw) {
        runs.delete(k);
        ours.delete(k);
      }
      const theirs = new Map([...runs].map(([k, n]) => [k, [1, n - 1] as [number, number]]));
      expect(theirs.size).toBeGreaterThanOrEqual(5);
      expect([...theirs.values()].some(([, n]) => n > 100)).toBe(true);
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));

      // constant-pool resolution: per constant of the example's classes an instance getfield or invoke names
      // (JDK 17: one resolved entry per class and constant), the template called the VM the first time any
      // bytecode of the class ran with it, and found it resolved every later time
      const cpKey: Key = (cls, name, signature, bci, op) => {
        const c = code.get(`${cls}.${name}${signature}`);
        return c && INSTANCE_RESOLVING.has(op) && c[bci] === op ? `${cls}#${(c[bci + 1] << 8) | c[bci + 2]} op ${op}` : undefined;
      };
      const oursCp = countDecoded(cpKey, (aux) => (aux & SLOW_PATH ? 0 : aux & RESOLVED_PATH ? 1 : -1));
      // (a getfield runs its resolving template until a run of it completes and rewrites it: fast_agetfield tests
      // nothing; a run on null throws first)
      const cpRuns = new Map<string, number>();
      const rewritten = new Set<string>();
      for (let i = 0; i < ev.length; i++) {
        if (ev.kind[i] !== OracleKind.Bytecode) continue;
        const m = names.get(ev.method[i]);
        const k = m && cpKey(m.className, m.name, m.signature, ev.bci[i], ev.opcode[i]);
        if (!k) continue;
        if (ev.opcode[i] === 180) {
          const at = `${ev.method[i]}@${ev.bci[i]}`;
          if (rewritten.has(at)) continue;
          if (i + 1 < ev.length && ev.kind[i + 1] === OracleKind.Bytecode && ev.method[i + 1] === ev.method[i]) rewritten.add(at);
        }
        cpRuns.set(k, (cpRuns.get(k) ?? 0) + 1);
      }
      const theirsCp = new Map([...cpRuns].map(([k, n]) => [k, [1, n - 1] as [number, number]]));
      expect(theirsCp.size).toBeGreaterThanOrEqual(3);
      expect(Object.fromEntries(oursCp)).toEqual(Object.fromEntries(theirsCp));
    } finally {
      cleanup(dir);
    }
  });
});
