/**
 * Interpreter branch outcomes read from the PT trace itself: each if* template's first conditional jump goes one
 * way for "taken" and the other for "not taken" (packages/decode/src/java.ts); the decoder puts the outcome on
 * the bytecode event. Checked against ground truth without going through the decoder's own attribution of
 * successors: per if* site of the example's methods, the numbers of taken and not-taken outcomes must equal
 * those single-stepping observed (the bytecode after the branch in the same frame). And switches: the way each
 * tableswitch and lookupswitch template went (default or a case; the pair a linear search stopped at; the rounds a
 * binary search made) per switch site, against the case single-stepping saw it take.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseClass, switchTable } from '@jportal/classfile';
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
const isSwitch = (op: number) => op === 0xaa || op === 0xab;
/** A switch event's aux (docs/decoded-format.md) */
const SWITCH_TOLD = 16;
const SWITCH_DEFAULT = 32;
const SWITCH_BINARY = 64;
const SWITCH_DETAIL = 128;

/**
 * Per bytecode of the Switches class whose opcode `which` picks in the oracle's main thread: its method, bci and the
 * bci the same frame went on at (in -Xint nothing runs between a bytecode and its successor); `visit` gets each.
 */
function successorsInTruth(truth: string, which: (op: number) => boolean, visit: (m: { name: string; signature: string }, op: number, bci: number, next: number) => void): void {
  const o = readOracle(truth);
  const ev = readOracleThread(o, o.threads.find((t) => t.name === 'main')!);
  const names = new Map(o.methods.map((m) => [m.id, m]));
  for (let i = 0; i < ev.length; i++) {
    if (ev.kind[i] !== OracleKind.Bytecode || !which(ev.opcode[i])) continue;
    const m = names.get(ev.method[i]);
    if (!m || m.className !== 'Switches') continue;
    let j = i + 1;
    while (j < ev.length && ev.kind[j] !== OracleKind.Bytecode) j++;
    if (j >= ev.length || ev.method[j] !== ev.method[i]) continue;
    visit(m, ev.opcode[i], ev.bci[i], ev.bci[j]);
  }
}

/** Rounds of a binary search for `key` in sorted `keys` as HotSpot's fast_binaryswitch makes them */
function rounds(keys: Int32Array, key: number): number {
  let [i, j, r] = [0, keys.length, 0];
  for (; i + 1 < j; r++) {
    const h = (i + j) >> 1;
    if (key < keys[h]) j = h;
    else i = h;
  }
  return r;
}

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
      const theirs = new Map<string, [number, number]>();
      successorsInTruth(truth, isIf, (m, _op, bci, next) => {
        const k = `${m.name}${m.signature}@${bci}`;
        const c = theirs.get(k) ?? [0, 0];
        c[next !== bci + 3 ? 0 : 1]++;
        theirs.set(k, c);
      });
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

  test('per switch site of the example, the ways its template went equal the cases ground truth took (-Xint)', () => {
    const dir = tmpDir('switches');
    try {
      const classes = path.join(EXAMPLES, 'switches', 'classes');
      const args = ['-Xint', '-cp', classes, 'Switches', '300'];
      const trace = path.join(dir, 'trace');
      const truth = path.join(dir, 'oracle');
      expect(runCli(['record', '--pt=emulate', '--deterministic', '--force', '--out', trace, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      expect(runCli(['oracle', '--deterministic', '--force', '--out', truth, '--', jdk17!.java, ...args], 600_000).status).toBe(0);
      const code = new Map<string, Uint8Array>();
      for (const m of parseClass(new Uint8Array(fs.readFileSync(path.join(classes, 'Switches.class')))).methods) if (m.code) code.set(`${m.name}${m.descriptor}`, m.code);

      // decoded: per site, how often each way (default; a case; the pair a linear search stopped at; a binary
      // search's rounds)
      const { model, threads } = decodeTrace(trace);
      const e = threads.find((t) => t.name === 'main')!.events;
      const ours = new Map<string, Record<string, number>>();
      let switches = 0;
      let told = 0;
      for (let i = 0; i < e.length; i++) {
        if (e.kind[i] !== 0 || e.source[i] !== 0 || !isSwitch(e.opcode[i])) continue;
        switches++;
        const aux = e.aux[i];
        if (aux & SWITCH_TOLD) told++;
        const m = model.methods.get(e.method[i]);
        if (!m || m.className !== 'Switches' || !(aux & SWITCH_TOLD)) continue;
        const c = code.get(`${m.name}${m.signature}`)!;
        const n = switchTable(c, e.bci[i])!.keys.length;
        const detail = Math.floor(aux / SWITCH_DETAIL);
        const way = aux & SWITCH_DEFAULT ? 'default' : c[e.bci[i]] === 0xaa ? 'case' : aux & SWITCH_BINARY ? `rounds ${detail}` : `pair ${n - detail}`;
        const site = `${m.name}${m.signature}@${e.bci[i]}`;
        const w = ours.get(site) ?? {};
        w[way] = (w[way] ?? 0) + 1;
        ours.set(site, w);
      }
      // every interpreted switch of the thread was read
      expect(switches).toBeGreaterThan(1_000);
      expect(told).toBe(switches);

      // truth: the case each switch took (the next bytecode in the same frame), as HotSpot's template for it shows
      // it: a tableswitch default or not, a lookupswitch of fewer than 5 pairs (BinarySwitchThreshold) the pair,
      // of more the rounds of the binary search for the pair's key
      const theirs = new Map<string, Record<string, number>>();
      successorsInTruth(truth, isSwitch, (m, op, bci, next) => {
        const table = switchTable(code.get(`${m.name}${m.signature}`)!, bci)!;
        const k = table.targets.indexOf(next);
        const way = k < 0 ? 'default' : op === 0xaa ? 'case' : table.keys.length >= 5 ? `rounds ${rounds(table.keys, table.keys[k])}` : `pair ${k}`;
        const site = `${m.name}${m.signature}@${bci}`;
        const w = theirs.get(site) ?? {};
        w[way] = (w[way] ?? 0) + 1;
        theirs.set(site, w);
      });
      // a tableswitch, a binary and a linear lookupswitch, each with more than one way
      expect(theirs.size).toBe(4);
      expect([...theirs.values()].every((w) => Object.keys(w).length > 1)).toBe(true);
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
    } finally {
      cleanup(dir);
    }
  });
});
