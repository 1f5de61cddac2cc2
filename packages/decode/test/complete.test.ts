/**
 * Completion of compiled frames (complete.ts) on a real class file: javac's loop `h = h * 31 + (i ^ seed)`, whose
 * compiled code (C1's OSR code, say) leaves PcDescs only at the loop test and the back branch.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { completeCompiled, EventKind, EventSource, EventStream, MethodUniverse } from '../src';
import type { JvmModel } from '../src';

const SOURCE = `
public class Loop {
  static long work(int seed, int n) {
    long h = seed;
    for (int i = 0; i < n; i++) h = h * 31 + (i ^ seed);
    return h;
  }
  static int pick(int x) {
    int r = x;
    if (x > 0) { r = r * 3 + 1; r = r * 3 + 2; } else { r = r * 5 + 1; r = r * 5 + 2; }
    return r;
  }
}
`;

const javac = spawnSync('javac', ['-version'], { encoding: 'utf8' });
const maybe = javac.status === 0 ? describe : describe.skip;
if (javac.status !== 0) console.warn('SKIP completion tests: no javac');

maybe('completion of compiled frames', () => {
  let universe: MethodUniverse;
  let code: (name: string) => { id: number; code: Uint8Array };

  beforeAll(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-complete-'));
    fs.writeFileSync(path.join(dir, 'Loop.java'), SOURCE);
    const r = spawnSync('javac', ['-d', dir, path.join(dir, 'Loop.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Loop.class')));
    const model = { methods: new Map(), classes: new Map([['0:Loop', bytes]]) } as unknown as JvmModel;
    universe = new MethodUniverse(model);
    code = (name) => {
      const m = universe.methods.find((x) => model.methods.get(x.id)?.name === name)!;
      return { id: m.id, code: m.code! };
    };
  });

  /** Completes a compiled frame of `name` whose events are at `bcis`; returns the bcis of the output. */
  const complete = (name: string, bcis: number[]): number[] => {
    const { id, code: c } = code(name);
    const input = new EventStream(bcis.length + 2);
    input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
    for (const b of bcis) input.push(EventKind.Bytecode, EventSource.Compiled, id, b, c[b], 2);
    const { events } = completeCompiled(universe, input);
    const out: number[] = [];
    for (let i = 0; i < events.length; i++) if (events.kind[i] === EventKind.Bytecode) out.push(events.bci[i]);
    return out;
  };

  test('a loop body between the loop test and the back branch is filled, however long (the way is forced)', () => {
    const { code: c } = code('work');
    // javac: iload i; iload n; if_icmpge EXIT; <body: 10 bytecodes>; iinc; goto TEST
    const test = [...c.keys()].find((b) => c[b] === 0xa2)!; // if_icmpge
    const back = [...c.keys()].find((b) => c[b] === 0xa7)!; // goto
    const out = complete('work', [test, back, test, back]);
    const body = out.slice(out.indexOf(test) + 1, out.indexOf(back));
    expect(body.length).toBeGreaterThan(8); // longer than the short-path limit
    expect(body.map((b) => c[b])).toEqual([0x20 /* lload_2 */, 0x14 /* ldc2_w */, 0x69 /* lmul */, 0x15 /* iload */, 0x1a /* iload_0 */, 0x82 /* ixor */, 0x85 /* i2l */, 0x61 /* ladd */, 0x41 /* lstore_2 */, 0x84 /* iinc */]);
    // and the second iteration the same way, through the loop test again
    expect(out.filter((b) => b === test)).toHaveLength(2);
    expect(out.filter((b) => c[b] === 0x69)).toHaveLength(2);
  });

  test('no long fill where two ways lead on (the arms of an if, each longer than a short path): nothing is guessed', () => {
    const { code: c } = code('pick');
    const branch = [...c.keys()].find((b) => c[b] === 0x9e)!; // ifle
    const ret = [...c.keys()].find((b) => c[b] === 0xac)!; // ireturn
    const out = complete('pick', [branch, ret]);
    expect(out.slice(out.indexOf(branch) + 1, out.indexOf(ret))).toEqual([]);
  });
});
