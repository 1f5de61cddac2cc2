/**
 * One interpreted frame is one method: the events of a frame whose candidates (the implementations a virtual call
 * may reach) agree on a prefix of their bytecode and part later must all be named the method that fits the whole
 * frame, including the events before a call it made while still ambiguous.
 */
import { attributeInterpreted, EventStream } from '../src';
import { compileUniverse, haveJavac } from './javac-universe';

const SOURCES: Record<string, string> = {
  'E.java': 'class E { void map(Object r, int i, int j) {} }',
  // S and B begin alike (a call on a field, then a field load) and part after it
  'S.java': 'class S extends E { E a; E[] w; void map(Object r, int i, int j) { a.map(r, i, j); E[] t = w; if (t != null) t[0].map(r, i, j); } }',
  'B.java': 'class B extends E { E a, b; void map(Object r, int i, int j) { a.map(r, i, j); b.map(r, i, j); } }',
  'M.java': 'class M { static void run(E e) { e.map(null, 1, 2); } }',
};
// forty more implementations that begin as S and B do up to the call (the frame's candidates stay many until then)
const MANY = Array.from({ length: 40 }, (_, k) => `C${k}`);
for (const c of MANY) SOURCES[`${c}.java`] = `class ${c} extends E { E a; int v; void map(Object r, int i, int j) { a.map(r, i, j); v = i; } }`;
if (!haveJavac) console.warn('SKIP attribute-frame-consistency test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
const INVOKEVIRTUAL = 0xb6;

(haveJavac ? describe : describe.skip)('a frame is named one method', () => {
  test('B.map run through: every event of its frame is B.map, none S.map', () => {
    const { model, universe, insns } = compileUniverse(SOURCES, ['E', 'S', 'B', 'M', ...MANY], 17);
    const s = new EventStream();
    let t = 0;
    const run = (ops: number[]) => {
      for (const op of ops) s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t, 0);
    };
    const entry = () => s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
    const runOps = insns('M', 'run');
    const b = insns('B', 'map');
    const e = insns('E', 'map');
    entry();
    run(runOps.slice(0, runOps.indexOf(INVOKEVIRTUAL) + 1));
    entry();
    const first = b.indexOf(INVOKEVIRTUAL);
    const second = b.indexOf(INVOKEVIRTUAL, first + 1);
    run(b.slice(0, first + 1));
    entry();
    run(e);
    run(b.slice(first + 1, second + 1));
    entry();
    run(e);
    run(b.slice(second + 1));
    run(runOps.slice(runOps.indexOf(INVOKEVIRTUAL) + 1));
    const { events } = attributeInterpreted(universe, s);
    const named = new Map<string, number>();
    for (let i = 0; i < events.length; i++) {
      if (events.kind[i] !== BYTECODE || events.method[i] < 0) continue;
      const m = model.methods.get(events.method[i])!;
      const key = `${m.className}.${m.name}`;
      named.set(key, (named.get(key) ?? 0) + 1);
    }
    expect(named.get('S.map')).toBeUndefined();
    expect(named.get('B.map')).toBe(b.length);
  });
});
