/**
 * Methods with the same bytecode (twin classes) told apart by HotSpot's bytecode rewriting: the interpreter runs a
 * getfield in its class-file form only the first time at a bci (then it is fast_igetfield), so the second twin's
 * first run cannot be the twin that ran already. Without the form, both runs are named the same twin.
 */
import { attributeInterpreted, BytecodeForm, EventStream } from '../src';
import { compileUniverse, haveJavac } from './javac-universe';

const SOURCES: Record<string, string> = {
  'I.java': 'interface I { int get(); }',
  'P.java': 'class P implements I { int v; public int get() { return v + 1; } }',
  'Q.java': 'class Q implements I { int v; public int get() { return v + 1; } }',
  'M.java': 'class M { static int twice(I a, I b) { return a.get() + b.get(); } }',
};
if (!haveJavac) console.warn('SKIP attribute-rewrites test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
const GETFIELD = 0xb4;
const INVOKEINTERFACE = 0xb9;

const load = () => compileUniverse(SOURCES, ['I', 'P', 'Q', 'M']);

/** M.twice calling get on two objects, each get run with getfield in form `forms[k]`; the classes named for the two gets. */
function twoCalls(forms: [number, number]): string[] {
  const { model, universe, insns } = load();
  const s = new EventStream();
  let t = 0;
  const run = (ops: number[], form = 0) => {
    for (const op of ops) s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t, op === GETFIELD ? form : 0);
  };
  const entry = () => s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
  const twice = insns('M', 'twice');
  const get = insns('P', 'get');
  const first = twice.indexOf(INVOKEINTERFACE);
  const second = twice.indexOf(INVOKEINTERFACE, first + 1);
  entry();
  run(twice.slice(0, first + 1));
  entry();
  run(get, forms[0]);
  run(twice.slice(first + 1, second + 1));
  entry();
  run(get, forms[1]);
  run(twice.slice(second + 1));
  const { events } = attributeInterpreted(universe, s);
  const classes: string[] = [];
  for (let i = 0; i < events.length; i++) {
    if (events.kind[i] !== BYTECODE || events.opcode[i] !== GETFIELD) continue;
    classes.push(events.method[i] >= 0 ? model.methods.get(events.method[i])!.className : '?');
  }
  return classes;
}

(haveJavac ? describe : describe.skip)('twins told apart by the interpreter\'s rewriting', () => {
  test('without the form, both first runs are named the same twin', () => {
    const got = twoCalls([BytecodeForm.Unknown, BytecodeForm.Unknown]);
    expect(got).toHaveLength(2);
    expect(got[0]).toBe(got[1]);
  });

  test('a getfield run in its class-file form both times: two first runs, so two twins', () => {
    const got = twoCalls([BytecodeForm.Original, BytecodeForm.Original]);
    expect(new Set(got)).toEqual(new Set(['P', 'Q']));
  });

  test('the second run rewritten: the twin that ran before', () => {
    const got = twoCalls([BytecodeForm.Original, BytecodeForm.Rewritten]);
    expect(got).toHaveLength(2);
    expect(got[1]).toBe(got[0]);
  });
});
