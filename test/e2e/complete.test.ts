/**
 * Completion of compiled frames (packages/decode/src/complete.ts) on a real class file compiled here: the events
 * C2 code gives (sparse PcDescs, out of order where instructions were scheduled apart, inlined callees whose code
 * comes before their caller's, intrinsics that leave no event) become the bytecode sequence the method ran.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { forEachInstruction, parseClass } from '@jportal/classfile';
import { completeCompiled, EventStream, JvmModel, MethodUniverse } from '@jportal/decode';
import { findJdks } from '../lib/jdks';
import { cleanup, tmpDir } from '../lib/run';

const jdk = findJdks().available.find((j) => j.feature === 17) ?? findJdks().available[0];
const javac = jdk && path.join(path.dirname(jdk.java), 'javac');
const missing = !javac || !fs.existsSync(javac) ? 'javac (a JDK)' : '';
if (missing) console.warn(`SKIP completion tests: missing ${missing}`);
const maybe = missing ? describe.skip : describe;

// EventKind and EventSource values (const enums in @jportal/decode, which isolated modules cannot read)
const EventKind = { Bytecode: 0, Entry: 1, Exit: 2 } as const;
const COMPILED = 1;
const INLINED = 2;

const SOURCE = `public class Fix {
  static int helper(int x) { return x + 1; }
  static int f(int a) {
    int b = a * 3;
    int c = helper(b);
    int d = c ^ a;
    return d;
  }
}
`;

maybe('completion of compiled frames', () => {
  let dir = '';
  let model: JvmModel;
  let universe: MethodUniverse;
  /** bcis and opcodes of f and helper, from the class file */
  const code: Record<'f' | 'helper', { bci: number; op: number }[]> = { f: [], helper: [] };
  const F = 1;
  const HELPER = 2;

  beforeAll(() => {
    dir = tmpDir('complete');
    fs.writeFileSync(path.join(dir, 'Fix.java'), SOURCE);
    const r = spawnSync(javac!, ['-g:none', '-d', dir, path.join(dir, 'Fix.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`javac failed: ${r.stderr}`);
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Fix.class')));
    const cf = parseClass(bytes);
    for (const name of ['f', 'helper'] as const) {
      const m = cf.methods.find((x) => x.name === name)!;
      forEachInstruction(m.code!, (bci, op) => void code[name].push({ bci, op }));
    }
    model = {
      methods: new Map([
        [F, { className: 'Fix', name: 'f', signature: '(I)I', classId: 1, loader: 0 }],
        [HELPER, { className: 'Fix', name: 'helper', signature: '(I)I', classId: 1, loader: 0 }],
      ]),
      classes: new Map([['0:Fix', bytes]]),
    } as unknown as JvmModel;
    universe = new MethodUniverse(model);
  });
  afterAll(() => cleanup(dir));

  /** What f(a) runs: its straight-line code, with helper's body after the invokestatic. */
  function truth(): string[] {
    const out: string[] = [];
    for (const { bci, op } of code.f) {
      out.push(`f@${bci}`);
      if (op === 0xb8) for (const h of code.helper) out.push(`helper@${h.bci}`);
    }
    return out;
  }
  const bciOf = (name: 'f' | 'helper', op: number, nth = 0) => code[name].filter((x) => x.op === op)[nth].bci;
  const bytecodes = (s: EventStream) => {
    const out: string[] = [];
    for (let i = 0; i < s.length; i++) if (s.kind[i] === EventKind.Bytecode) out.push(`${s.method[i] === F ? 'f' : 'helper'}@${s.bci[i]}`);
    return out;
  };
  const calls = (s: EventStream) => {
    const out: string[] = [];
    for (let i = 0; i < s.length; i++)
      if (s.kind[i] === EventKind.Entry || s.kind[i] === EventKind.Exit) out.push(`${s.kind[i] === EventKind.Entry ? '>' : '<'}${s.method[i] === F ? 'f' : 'helper'}`);
    return out;
  };

  test('sparse PcDescs, an intrinsic-like callee with no event, and a scheduling echo: the full sequence', () => {
    const imul = bciOf('f', 0x68);
    const ixor = bciOf('f', 0x82);
    const input = new EventStream();
    input.push(EventKind.Entry, COMPILED, F, -1, -1, 1);
    input.push(EventKind.Bytecode, COMPILED, F, imul, -1, 2);
    input.push(EventKind.Bytecode, COMPILED, F, ixor, -1, 3);
    input.push(EventKind.Bytecode, COMPILED, F, imul, -1, 4); // the multiply's second instruction, scheduled late
    input.push(EventKind.Exit, COMPILED, F, -1, -1, 5);
    const { events, stats } = completeCompiled(universe, input);
    expect(bytecodes(events)).toEqual(truth());
    expect(calls(events)).toEqual(['>f', '>helper', '<helper', '<f']);
    expect(stats.echoes).toBe(1);
    expect(stats.silentCallees).toBe(1);
  });

  test('an inlined callee whose code comes before its caller\'s: the caller reaches the call site first', () => {
    const imul = bciOf('f', 0x68);
    const ixor = bciOf('f', 0x82);
    const site = bciOf('f', 0xb8);
    const iadd = bciOf('helper', 0x60);
    const input = new EventStream();
    input.push(EventKind.Entry, COMPILED, F, -1, -1, 1);
    input.push(EventKind.Entry, INLINED, HELPER, -1, -1, 2, site + 1); // aux: call-site bci + 1
    input.push(EventKind.Bytecode, INLINED, HELPER, iadd, -1, 3);
    input.push(EventKind.Exit, INLINED, HELPER, -1, -1, 4);
    input.push(EventKind.Bytecode, COMPILED, F, imul, -1, 5); // the caller's own code, after the callee's
    input.push(EventKind.Bytecode, COMPILED, F, ixor, -1, 6);
    input.push(EventKind.Exit, COMPILED, F, -1, -1, 7);
    const { events, stats } = completeCompiled(universe, input);
    expect(bytecodes(events)).toEqual(truth());
    expect(calls(events)).toEqual(['>f', '>helper', '<helper', '<f']);
    expect(stats.callSites).toBe(1);
    expect(stats.silentCallees).toBe(0); // the callee left events: nothing is inserted for it
  });

  test('a backward sample the frame has not visited is kept as observed (not an echo)', () => {
    // f has no loop: a backward sample is an echo; the same sample with no earlier visit is kept as observed
    const ixor = bciOf('f', 0x82);
    const imul = bciOf('f', 0x68);
    const input = new EventStream();
    input.push(EventKind.Bytecode, COMPILED, F, ixor, -1, 1); // frame seen from the middle: position unknown before
    input.push(EventKind.Bytecode, COMPILED, F, imul, -1, 2); // not visited in this frame: kept
    const { events, stats } = completeCompiled(universe, input);
    expect(bytecodes(events)).toEqual([`f@${ixor}`, `f@${imul}`]);
    expect(stats.echoes).toBe(0);
  });
});
