/**
 * Switch cases with the same bytecode told apart by HotSpot's lazy resolution: each case reads a different static
 * field, and the interpreter's getstatic calls the VM to resolve the field's constant-pool cache entry the first
 * time any bytecode of the class reads it (the event's SLOW_PATH), after that not (RESOLVED_PATH). Without what
 * the template did, every run of the switch is named the same case.
 */
import { forEachInstruction } from '@jportal/classfile';
import { attributeInterpreted, EventStream, RESOLVED_PATH, SLOW_PATH } from '../src';
import { compileUniverse, haveJavac } from './javac-universe';

const SOURCES: Record<string, string> = {
  'E.java': `class E {
  static Object A = new Object(), B = new Object(), C = new Object();
  static Object first() { return A; }
  static Object pick(int k) { switch (k) { case 0: return A; case 1: return B; default: return C; } }
}`,
  'M.java': 'class M { static void run() { E.first(); E.pick(0); E.pick(1); E.pick(2); } }',
};
if (!haveJavac) console.warn('SKIP attribute-resolution test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
const GETSTATIC = 0xb2;
const INVOKESTATIC = 0xb8;

/**
 * M.run calling E.first (its getstatic run with aux `firstPath`) and E.pick three times (its getstatics with
 * `paths`), on a JVM of release `feature`: the field each pick's getstatic is attributed to (by bci: the case).
 */
function picks(firstPath: number, paths: number[], feature: number): { cases: number[]; caseA: number } {
  const { model, universe, insns } = compileUniverse(SOURCES, ['E', 'M'], feature);
  const s = new EventStream();
  let t = 0;
  const run = (ops: number[], aux = 0) => {
    for (const op of ops) s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t, op === GETSTATIC ? aux : 0);
  };
  const entry = () => s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
  const runOps = insns('M', 'run');
  const calls: number[] = [];
  for (let i = runOps.indexOf(INVOKESTATIC); i >= 0; i = runOps.indexOf(INVOKESTATIC, i + 1)) calls.push(i);
  const pick = insns('E', 'pick');
  // a case: iload_0, tableswitch, getstatic, areturn
  const oneCase = [pick[0], pick[1], GETSTATIC, 0xb0];
  entry();
  run(runOps.slice(0, calls[0] + 1));
  entry();
  run(insns('E', 'first'), firstPath);
  for (let k = 0; k < 3; k++) {
    run(runOps.slice(calls[k] + 1, calls[k + 1] + 1));
    entry();
    run(oneCase, paths[k]);
  }
  run(runOps.slice(calls[3] + 1));
  const { events } = attributeInterpreted(universe, s);
  const bcis: number[] = [];
  for (let i = 0; i < events.length; i++) if (events.kind[i] === BYTECODE && events.opcode[i] === GETSTATIC) bcis.push(events.bci[i]);
  expect(bcis).toHaveLength(4);
  expect(bcis.every((b) => b >= 0)).toBe(true);
  // the case of pick that reads A: its getstatic names the constant first()'s does
  const code = (name: string) => universe.byId.get([...model.methods].find(([, m]) => m.className === 'E' && m.name === name)![0])!.code!;
  const [f, p] = [code('first'), code('pick')];
  const cpA = (f[1] << 8) | f[2];
  let caseA = -1;
  forEachInstruction(p, (b) => {
    if (p[b] === GETSTATIC && ((p[b + 1] << 8) | p[b + 2]) === cpA) caseA = b;
  });
  return { cases: bcis.slice(1), caseA };
}

(haveJavac ? describe : describe.skip)('switch cases told apart by constant-pool resolution', () => {
  test('not told: every run is named the same case', () => {
    const { cases } = picks(0, [0, 0, 0], 17);
    expect(new Set(cases).size).toBe(1);
  });

  test('three slow paths: three cases never run before', () => {
    const { cases } = picks(SLOW_PATH, [SLOW_PATH, SLOW_PATH, SLOW_PATH], 0);
    expect(new Set(cases).size).toBe(3);
  });

  test('a slow path is never a case whose entry was seen resolved', () => {
    const { cases } = picks(SLOW_PATH, [RESOLVED_PATH, SLOW_PATH, SLOW_PATH], 0);
    expect(cases[1]).not.toBe(cases[0]);
    expect(new Set(cases).size).toBe(3);
  });

  test('JDK 17 shares an entry per constant: the field first() resolved is not what pick resolves', () => {
    // release unknown (an entry per bytecode): the case reading A is as good as any for pick's first slow path
    const perSite = picks(SLOW_PATH, [SLOW_PATH, SLOW_PATH, SLOW_PATH], 0);
    expect(perSite.caseA).toBeGreaterThan(0);
    expect(perSite.cases).toContain(perSite.caseA);
    // JDK 17: first() resolved A's entry, so pick's first two slow paths are B's and C's cases
    const shared = picks(SLOW_PATH, [SLOW_PATH, SLOW_PATH, SLOW_PATH], 17);
    expect(shared.cases.slice(0, 2)).not.toContain(shared.caseA);
    expect(new Set(shared.cases.slice(0, 2)).size).toBe(2);
  });
});
