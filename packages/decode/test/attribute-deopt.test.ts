/**
 * Attribution after a deoptimization inside inlined code: the VM resumes every frame of the inlining chain in the
 * interpreter (the innermost at the bci it stopped at, each caller at its call site into the next), so when the
 * innermost returns, its caller goes on from its call site, and so on. Before, only the innermost frame was
 * resumed: its caller's bytecodes were unnamed, and the interpreted frame below them was lost (luindex: the
 * static initializer calling zzUnpackAttribute after String.charAt deoptimized named its twin zzUnpackAction).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forEachInstruction } from '@jportal/classfile';
import { attributeInterpreted, EventStream, JvmModel, MethodUniverse } from '../src';

const SOURCE = `class T {
  static int inner(int x) { return x + 1; }
  static int outer(int x) { int v = inner(x); return v * 2; }
  static int a(int x) { int y = x * 7; return y ^ 3; }
  static int b(int x) { int y = x * 7; return y ^ 3; }
  static int top(int x) { int r = outer(x); r += b(r); return r; }
}
`;
const haveJavac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).status === 0;
if (!haveJavac) console.warn('SKIP attribute-deopt test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const DEOPT = 4;
const INTERPRETER = 0;
const COMPILED = 1;
const INLINED = 2;
const OTHER = 3;

(haveJavac ? describe : describe.skip)('a deoptimization inside inlined code', () => {
  test('each caller of the inlining chain goes on from its call site; the interpreted frame below keeps its place', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-deopt-'));
    fs.writeFileSync(path.join(dir, 'T.java'), SOURCE);
    const r = spawnSync('javac', ['--release', '17', '-d', dir, path.join(dir, 'T.java')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const bytes = fs.readFileSync(path.join(dir, 'T.class'));
    fs.rmSync(dir, { recursive: true, force: true });
    const model = { methods: new Map(), classes: new Map([['0:T', new Uint8Array(bytes)]]) } as unknown as JvmModel;
    const universe = new MethodUniverse(model);
    const idOf = (name: string) => [...model.methods].find(([, m]) => m.name === name)![0];
    const code = (name: string) => universe.byId.get(idOf(name))!.code!;
    const insns = (name: string) => {
      const out: [number, number][] = [];
      forEachInstruction(code(name), (bci) => void out.push([bci, code(name)[bci]]));
      return out;
    };
    const INVOKESTATIC = 0xb8;
    const s = new EventStream();
    let t = 0;
    const interp = (op: number) => s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t);
    // top, interpreted, up to its call of outer
    const top = insns('top');
    const callOuter = top.findIndex(([, op]) => op === INVOKESTATIC);
    s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
    for (const [, op] of top.slice(0, callOuter + 1)) interp(op);
    // outer compiled with inner inlined, up to inner's first bytecode, where it deoptimizes
    const outer = insns('outer');
    const callInner = outer.findIndex(([, op]) => op === INVOKESTATIC);
    s.push(ENTRY, COMPILED, idOf('outer'), -1, -1, ++t);
    for (const [bci, op] of outer.slice(0, callInner + 1)) s.push(BYTECODE, COMPILED, idOf('outer'), bci, op, ++t);
    s.push(ENTRY, INLINED, idOf('inner'), -1, -1, ++t, outer[callInner][0] + 1);
    const inner = insns('inner');
    s.push(BYTECODE, INLINED, idOf('inner'), inner[0][0], inner[0][1], ++t);
    s.push(DEOPT, OTHER, -1, -1, -1, ++t);
    // the interpreter resumes: the rest of inner, then outer after its call, then top after its call, which calls b
    for (const [, op] of inner.slice(1)) interp(op);
    for (const [, op] of outer.slice(callInner + 1)) interp(op);
    const callB = top.findIndex(([, op], k) => k > callOuter && op === INVOKESTATIC);
    for (const [, op] of top.slice(callOuter + 1, callB + 1)) interp(op);
    s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, 0);
    for (const [, op] of insns('b')) interp(op);
    for (const [, op] of top.slice(callB + 1)) interp(op);

    const { events } = attributeInterpreted(universe, s);
    const named: string[] = [];
    for (let i = 0; i < events.length; i++)
      if (events.kind[i] === BYTECODE && events.source[i] === INTERPRETER) named.push(`${events.method[i] >= 0 ? model.methods.get(events.method[i])!.name : '?'}@${events.bci[i]}`);
    const want = [
      ...top.slice(0, callOuter + 1).map(([bci]) => `top@${bci}`),
      ...inner.slice(1).map(([bci]) => `inner@${bci}`),
      ...outer.slice(callInner + 1).map(([bci]) => `outer@${bci}`),
      ...top.slice(callOuter + 1, callB + 1).map(([bci]) => `top@${bci}`),
      ...insns('b').map(([bci]) => `b@${bci}`), // not its twin a: the call site tells
      ...top.slice(callB + 1).map(([bci]) => `top@${bci}`),
    ];
    expect(named).toEqual(want);
  });
});
