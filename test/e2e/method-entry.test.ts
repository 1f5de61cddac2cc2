/**
 * What the interpreter's entry into a method shows in the PT trace (packages/decode/src/java.ts), which
 * attribution reads to tell methods with the same bytecode apart (packages/decode/src/method-entry.ts): the rounds
 * of the loop that clears the locals beyond the parameters (max_locals less the parameters' slots), and whether the
 * entry called the VM to build the method's invocation counters (the first interpreted entry of a method does,
 * no later one). Checked on a real JVM against the class files and against ground truth: per method of the
 * examples, every entry's rounds are the class file's count, and of the entries single-stepping saw, the first built
 * counters and none of the others did.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseClass } from '@jportal/classfile';
import { decodeTrace } from '@jportal/decode';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, runCli, tmpDir } from '../lib/run';

const jdk17 = findJdks().available.find((j) => j.feature === 17);
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const missing = [!jdk17 && 'JDK 17', !qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin (./setup.sh)'].filter(Boolean);
if (missing.length) console.warn(`SKIP method entry tests: missing ${missing.join(', ')}`);
const maybe = missing.length ? describe.skip : describe;

/** An interpreter `entry` event's aux (docs/decoded-format.md) */
const ENTRY_CLASS_MASK = 7;
const COUNTERS_TOLD = 16;
const COUNTERS_BUILT = 32;
const LOCALS_TOLD = 64;
const LOCALS_UNIT = 128;

/** max_locals less the slots of the parameters (the receiver one, long and double two) */
function clearedLocals(maxLocals: number, descriptor: string, isStatic: boolean): number {
  const params = descriptor.slice(1, descriptor.indexOf(')')).replace(/\[*(L[^;]*;|[ZBCSIFJD])/g, (t) => (t.endsWith('J') || t.endsWith('D') ? 'xx' : 'x'));
  return Math.max(0, maxLocals - params.length - (isStatic ? 0 : 1));
}

maybe('what an interpreted method entry shows', () => {
  // Switches: methods with many locals; Recursion: methods entered thousands of times (recursively)
  test.each([
    ['switches', 'Switches', '300', ['Switches']],
    ['recursion', 'Recursion', '6', ['Recursion', 'Recursion$Node']],
  ])('%s: each entry of the example\'s methods cleared their locals beyond the parameters; the first built counters, no later one did', (example, main, size, classNames) => {
    const dir = tmpDir('entries');
    try {
      const classes = path.join(EXAMPLES, example, 'classes');
      // the example's methods interpreted, but invocations counted (-Xint's and -XX:TieredStopAtLevel=0's entries
      // have no counters code): the recursive ones pass the counters' notification thresholds
      const args = ['-XX:CompileCommand=quiet', `-XX:CompileCommand=exclude,${main}*::*`, '-cp', classes, main, size];
      const trace = path.join(dir, 'trace');
      const truth = path.join(dir, 'oracle');
      expect(runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      expect(runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      const cleared = new Map<string, number>();
      for (const c of classNames) {
        const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(classes, `${c}.class`))));
        for (const m of cf.methods) if (m.code) cleared.set(`${c}.${m.name}${m.descriptor}`, clearedLocals(m.maxLocals, m.descriptor, (m.access & 8) !== 0));
      }

      // the same trace decoded with attribution (which method each entry is) and without (what each entry showed):
      // the interpreted entries are the same, in the same order
      const named = decodeTrace(trace);
      const raw = decodeTrace(trace, { attribute: false });
      const a = named.threads.find((t) => t.name === 'main')!.events;
      const r = raw.threads.find((t) => t.name === 'main')!.events;
      const entriesOf = (e: typeof a): number[] => {
        const out: number[] = [];
        for (let i = 0; i < e.length; i++) if (e.kind[i] === 1 && e.source[i] === 0) out.push(i);
        return out;
      };
      const ae = entriesOf(a);
      const re = entriesOf(r);
      expect(re.length).toBe(ae.length);
      const ours = new Map<string, [number, number]>();
      let told = 0;
      for (let k = 0; k < ae.length; k++) {
        const m = named.model.methods.get(a.method[ae[k]]);
        const key = m && `${m.className}.${m.name}${m.signature}`;
        const aux = r.aux[re[k]];
        if (!key || !cleared.has(key) || (aux & ENTRY_CLASS_MASK) !== 0) continue;
        expect(aux & LOCALS_TOLD).toBe(LOCALS_TOLD);
        expect([key, Math.floor(aux / LOCALS_UNIT)]).toEqual([key, cleared.get(key)]);
        told++;
        expect(aux & COUNTERS_TOLD).toBe(COUNTERS_TOLD);
        const c = ours.get(key) ?? [0, 0];
        c[aux & COUNTERS_BUILT ? 0 : 1]++;
        ours.set(key, c);
      }
      expect(told).toBeGreaterThan(50);
      expect([...cleared.values()].some((n) => n > 0)).toBe(true);

      // truth: how often each of the example's methods was entered
      const o = readOracle(truth);
      const ev = readOracleThread(o, o.threads.find((t) => t.name === 'main')!);
      const names = new Map(o.methods.map((m) => [m.id, m]));
      const entries = new Map<string, number>();
      for (let i = 0; i < ev.length; i++) {
        if (ev.kind[i] !== OracleKind.Entry) continue;
        const m = names.get(ev.method[i]);
        const key = m && `${m.className}.${m.name}${m.signature}`;
        if (key && cleared.has(key)) entries.set(key, (entries.get(key) ?? 0) + 1);
      }
      const theirs = new Map([...entries].map(([k, n]) => [k, [1, n - 1] as [number, number]]));
      expect([...theirs.values()].some(([, n]) => n > 100)).toBe(true);
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
    } finally {
      cleanup(dir);
    }
  });
});
