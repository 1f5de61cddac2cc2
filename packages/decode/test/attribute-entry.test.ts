/**
 * Virtual-call targets with the same bytecode told apart by what the interpreter's method entry showed
 * (method-entry.ts): an entry that built the method's invocation counters is a method not entered before; one that
 * found them made, a method that was. And the locals the entry cleared rule out methods with another count.
 */
import { attributeInterpreted, EventStream } from '../src';
import { COUNTERS_BUILT, COUNTERS_TOLD, LOCALS_TOLD, LOCALS_UNIT } from '../src/java';
import { EnteredMethods, extraLocals, parameterSlots } from '../src/method-entry';
import { STRONG, WEAK } from '../src/rewrites';
import { compileUniverse, haveJavac } from './javac-universe';

const SOURCES: Record<string, string> = {
  'S.java': 'interface S { int v(); }',
  'A.java': 'class A implements S { int x; public int v() { return x; } }',
  'B.java': 'class B implements S { int x; public int v() { return x; } }',
  'M.java': 'class M { static int run(S a, S b) { return a.v() + b.v() + a.v(); } }',
};
if (!haveJavac) console.warn('SKIP attribute-entry test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
const INVOKEINTERFACE = 0xb9;

/** M.run's three calls of v(), their entries showing `auxes`: the class each is attributed to. */
function targets(auxes: number[]): string[] {
  const { model, universe, insns } = compileUniverse(SOURCES, ['S', 'A', 'B', 'M']);
  const s = new EventStream();
  let t = 0;
  const run = (ops: number[]) => {
    for (const op of ops) s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t, 0);
  };
  const runOps = insns('M', 'run');
  const v = insns('A', 'v');
  expect(insns('B', 'v')).toEqual(v);
  s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
  let from = 0;
  for (let k = 0; k < 3; k++) {
    const call = runOps.indexOf(INVOKEINTERFACE, from);
    run(runOps.slice(from, call + 1));
    s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, auxes[k]);
    run(v);
    from = call + 1;
  }
  run(runOps.slice(from));
  const { events } = attributeInterpreted(universe, s);
  const out: string[] = [];
  for (let i = 1; i < events.length; i++) if (events.kind[i] === ENTRY) out.push(model.methods.get(events.method[i])?.className ?? '?');
  expect(out).toHaveLength(3);
  return out;
}

(haveJavac ? describe : describe.skip)('virtual-call twins told apart by their entries', () => {
  test('not told: every call is named the same method', () => {
    expect(new Set(targets([0, 0, 0])).size).toBe(1);
  });

  test('two entries that built counters are two methods; the third, which found them, one of those', () => {
    const [a, b, c] = targets([COUNTERS_TOLD + COUNTERS_BUILT, COUNTERS_TOLD + COUNTERS_BUILT, COUNTERS_TOLD]);
    expect(a).not.toBe(b);
    expect([a, b]).toContain(c);
  });

  test('an entry that built counters is not a method entered before', () => {
    const [a, , c] = targets([COUNTERS_TOLD + COUNTERS_BUILT, COUNTERS_TOLD, COUNTERS_TOLD + COUNTERS_BUILT]);
    expect(c).not.toBe(a);
  });
});

describe('what an entry tells about a method', () => {
  test('parameter slots: the receiver one, long and double two, arrays and classes one', () => {
    expect(parameterSlots('()V', true)).toBe(0);
    expect(parameterSlots('()V', false)).toBe(1);
    expect(parameterSlots('(IJLjava/lang/String;[[DD)V', true)).toBe(1 + 2 + 1 + 1 + 2);
    expect(parameterSlots('([J[Ljava/lang/Object;)I', false)).toBe(3);
    expect(extraLocals(5, '(J)V', false)).toBe(2);
    expect(extraLocals(1, '(J)V', true)).toBe(0);
  });

  test('locals cleared: another count is impossible; counters built: not for a method entered before', () => {
    const e = new EnteredMethods(3);
    expect(e.against(LOCALS_TOLD + 2 * LOCALS_UNIT, 0, 2, 10)).toBe(0);
    expect(e.against(LOCALS_TOLD + 2 * LOCALS_UNIT, 0, 1, 10)).toBe(STRONG);
    expect(e.against(LOCALS_TOLD, 0, 0, 10)).toBe(0);
    // not told: no evidence either way
    expect(e.against(0, 0, 7, 10)).toBe(0);
    e.mark(1, 5);
    expect(e.against(COUNTERS_TOLD + COUNTERS_BUILT, 1, 0, 10)).toBe(STRONG);
    expect(e.against(COUNTERS_TOLD + COUNTERS_BUILT, 0, 0, 10)).toBe(0);
    // entered after this entry (a callee decided first): not before it
    expect(e.against(COUNTERS_TOLD + COUNTERS_BUILT, 1, 0, 3)).toBe(0);
    expect(e.against(COUNTERS_TOLD, 1, 0, 10)).toBe(0);
    expect(e.against(COUNTERS_TOLD, 2, 0, 10)).toBe(WEAK);
  });
});
