/**
 * Interpreter branch outcomes read from the PT trace itself: each if* template's first conditional jump goes one
 * way for "taken" and the other for "not taken" (packages/decode/src/java.ts); the decoder puts the outcome on
 * the bytecode event. Checked against ground truth without going through the decoder's own attribution of
 * successors: per if* site of the example's methods, the numbers of taken and not-taken outcomes must equal
 * those single-stepping observed (the bytecode after the branch in the same frame).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { decodeTrace } from '@jportal/decode';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, runCli, tmpDir } from '../lib/run';

const jdk17 = findJdks().available.find((j) => j.feature === 17);
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const missing = [!jdk17 && 'JDK 17', !qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin (./setup.sh)'].filter(Boolean);
if (missing.length) console.warn(`SKIP branch outcome tests: missing ${missing.join(', ')}`);
const maybe = missing.length ? describe.skip : describe;

const isIf = (op: number) => (op >= 153 && op <= 166) || op === 198 || op === 199;

maybe('interpreter branch outcomes from the template TNT bits', () => {
  test('per if* site of the example, taken / not-taken counts equal ground truth (-Xint)', () => {
    const dir = tmpDir('branches');
    try {
      const args = ['-Xint', '-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '300'];
      const trace = path.join(dir, 'trace');
      const truth = path.join(dir, 'oracle');
      expect(runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      expect(runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000).status).toBe(0);

      // decoded: outcome from aux (1 taken, -1 not taken, 0 unknown), site from the attribution
      const { model, threads } = decodeTrace(trace);
      const main = threads.find((t) => t.name === 'main')!;
      const e = main.events;
      const ours = new Map<string, [number, number]>();
      let ifs = 0;
      let known = 0;
      for (let i = 0; i < e.length; i++) {
        if (e.kind[i] !== 0 || e.source[i] !== 0 || !isIf(e.opcode[i])) continue;
        ifs++;
        if (e.aux[i] !== 0) known++;
        const m = model.methods.get(e.method[i]);
        if (!m || m.className !== 'Switches' || e.aux[i] === 0) continue;
        const k = `${m.name}${m.signature}@${e.bci[i]}`;
        const c = ours.get(k) ?? [0, 0];
        c[e.aux[i] > 0 ? 0 : 1]++;
        ours.set(k, c);
      }
      // every interpreted if* of the thread has an outcome
      expect(ifs).toBeGreaterThan(10_000);
      expect(known).toBe(ifs);

      // truth: the next bytecode after an if* (in -Xint nothing runs between a branch and its successor)
      const o = readOracle(truth);
      const om = o.threads.find((t) => t.name === 'main')!;
      const ev = readOracleThread(o, om);
      const theirs = new Map<string, [number, number]>();
      const names = new Map(o.methods.map((m) => [m.id, m]));
      for (let i = 0; i < ev.length; i++) {
        if (ev.kind[i] !== OracleKind.Bytecode || !isIf(ev.opcode[i])) continue;
        const m = names.get(ev.method[i]);
        if (!m || m.className !== 'Switches') continue;
        let j = i + 1;
        while (j < ev.length && ev.kind[j] !== OracleKind.Bytecode) j++;
        if (j >= ev.length || ev.method[j] !== ev.method[i]) continue;
        const k = `${m.name}${m.signature}@${ev.bci[i]}`;
        const c = theirs.get(k) ?? [0, 0];
        c[ev.bci[j] !== ev.bci[i] + 3 ? 0 : 1]++;
        theirs.set(k, c);
      }
      expect(theirs.size).toBeGreaterThan(5);
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
      // both ways occur (a test that could not tell taken from not taken would not see this)
      const all = [...theirs.values()];
      expect(all.some(([t]) => t > 0)).toBe(true);
      expect(all.some(([, n]) => n > 0)).toBe(true);
    } finally {
      cleanup(dir);
    }
  });
});
