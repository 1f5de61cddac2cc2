/**
 * Completion of compiled frames (complete.ts) on a real class file: javac's loop `h = h * 31 + (i ^ seed)`, whose
 * compiled code (C1's OSR code, say) leaves PcDescs only at the loop test and the back branch.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { completeCompiled, EventKind, EventSource, EventStream, MethodUniverse } from '../src';
import { completion } from '../src/complete';
import { COMPILED_CONTEXT } from '../src/events';
import type { JvmModel } from '../src';
import { addImmediates, loopSteps } from '../src/load';

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
  static long sumAt(int[] a, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += a[i & 7];
    return s;
  }
  static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
  int v;
  int getV() { return v; }
  static int twice(Loop h) { return h.getV() * 2; }
  static final class Node { int value; Node left, right; }
  static long sum(Node n) {
    if (n == null) return 0;
    return n.value + sum(n.left) + sum(n.right);
  }
  int hash;
  boolean hashIsZero;
  byte[] value;
  int hashOf() {
    int h = hash;
    if (h == 0 && !hashIsZero) {
      h = value.length * 31 + value[0];
      if (h == 0) hashIsZero = true; else hash = h;
    }
    return h;
  }
  static int word(String s) {
    switch (s) {
      case "alpha": return 1; case "beta": return 2; case "gamma": return 3; case "delta": return 4;
      default: return 0;
    }
  }
}
`;

const javac = spawnSync('javac', ['-version'], { encoding: 'utf8' });
const maybe = javac.status === 0 ? describe : describe.skip;
if (javac.status !== 0) console.warn('SKIP completion tests: no javac');

maybe('completion of compiled frames', () => {
  let universe: MethodUniverse;
  let code: (name: string) => { id: number; code: Uint8Array };
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-complete-'));
    fs.writeFileSync(path.join(dir, 'Loop.java'), SOURCE);
    const r = spawnSync('javac', ['-d', dir, path.join(dir, 'Loop.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Loop.class')));
    // one inlining context: sum's own PcDescs (at ifnonnull, the getfields and the ladds), as C2 compiles it
    const model = { methods: new Map(), classes: new Map([['0:Loop', bytes]]), image: { pcContexts: [new Set([1, 10, 12, 18, 20, 26])] } } as unknown as JvmModel;
    universe = new MethodUniverse(model);
    code = (name) => {
      const m = universe.methods.find((x) => model.methods.get(x.id)?.name === name)!;
      return { id: m.id, code: m.code! };
    };
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Completes a compiled frame of `name` whose events are at `bcis` (then its exit when `exit`); returns the bcis
   * of the output. */
  const complete = (name: string, bcis: number[], exit = false): number[] => {
    const { id, code: c } = code(name);
    const input = new EventStream(bcis.length + 2);
    input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
    for (const b of bcis) input.push(EventKind.Bytecode, EventSource.Compiled, id, b, c[b], 2);
    if (exit) input.push(EventKind.Exit, EventSource.Compiled, id, -1, -1, 3);
    const { events } = completeCompiled(universe, input);
    const out: number[] = [];
    for (let i = 0; i < events.length; i++) if (events.kind[i] === EventKind.Bytecode) out.push(events.bci[i]);
    return out;
  };
  /** A compiled activation of `name`: entry, events at `bcis`, exit. */
  const activation = (name: string, bcis: number[]): number[] => complete(name, bcis, true);

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

  test("one pass of an unrolled loop is k iterations: the iinc's PcDesc is an add of k times its constant", () => {
    const { id, code: c } = code('work');
    const test = [...c.keys()].find((b) => c[b] === 0xa2)!; // if_icmpge
    const step = [...c.keys()].find((b) => c[b] === 0x84)!; // iinc i 1
    const back = [...c.keys()].find((b) => c[b] === 0xa7)!; // goto
    // C2's code unrolled 16 times: PcDescs at the back branch, the test, and the step (add $16); 3 passes
    const input = new EventStream(16);
    input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
    for (let pass = 0; pass < 3; pass++) {
      input.push(EventKind.Bytecode, EventSource.Compiled, id, back, -1, 2);
      input.push(EventKind.Bytecode, EventSource.Compiled, id, test, -1, 2);
      input.push(EventKind.Bytecode, EventSource.Compiled, id, step, -1, 2, 16);
    }
    const { events, stats } = completeCompiled(universe, input);
    let steps = 0;
    let tests = 0;
    for (let i = 0; i < events.length; i++) {
      if (events.kind[i] !== EventKind.Bytecode) continue;
      if (events.bci[i] === step) steps++;
      if (events.bci[i] === test) tests++;
      expect(events.aux[i] === 0 || events.aux[i] === 1).toBe(true); // the add's immediate is not kept
    }
    expect(steps).toBe(3 * 16);
    expect(tests).toBe(3 * 16);
    expect(stats.unrolled).toBe(3 * 15);
    // an add that is not a multiple of the iinc's constant, or a bytecode that is no iinc: no iterations added
    const other = new EventStream(4);
    other.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
    other.push(EventKind.Bytecode, EventSource.Compiled, id, test, -1, 2, 16);
    other.push(EventKind.Bytecode, EventSource.Compiled, id, step, -1, 2, 1);
    expect(completeCompiled(universe, other).stats.unrolled).toBe(0);
  });

  test("javac's string switch: the second switch takes the arm of the constant its local was given", () => {
    const { code: c } = code('word');
    const at = (op: number, from = 0) => [...c.keys()].find((b) => b >= from && c[b] === op)!;
    const lookup = at(0xab);
    const table = at(0xaa);
    const load = table - 1; // iload_2
    expect(c[load]).toBe(0x1c);
    // case "alpha": iconst_0; istore_2; goto LOAD. Compiled code folds both switches: the equals test is the
    // last event, then the method returns; the arm of case 0 (iconst_1; ireturn) is the way out
    const alphaStore = at(0x3d, at(0x03, lookup)); // istore_2 after iconst_0
    const out = activation('word', [lookup, alphaStore]);
    expect(out.slice(out.indexOf(alphaStore) + 1).map((b) => c[b])).toEqual([0xa7 /* goto */, 0x1c /* iload_2 */, 0xaa, 0x04 /* iconst_1 */, 0xac /* ireturn */]);
    // case "delta": the events are its equals test, the second switch and the arm's return (of case 3): the
    // store of 3 ran between them, though the test's taken branch leads to the load directly
    const deltaStore = [...c.keys()].filter((b) => c[b] === 0x3d).pop()!; // the last istore_2 (iconst_3 before it)
    expect(c[deltaStore - 1]).toBe(0x06); // iconst_3
    const deltaTest = deltaStore - 4; // ifeq
    expect(c[deltaTest]).toBe(0x99);
    const arm3Return = at(0xac, at(0x07, table)); // ireturn after iconst_4
    const out2 = activation('word', [lookup, deltaTest, load, table, arm3Return]);
    expect(out2.slice(out2.indexOf(deltaTest) + 1, out2.indexOf(load))).toEqual([deltaStore - 1, deltaStore]);
    // with the local unknown (the frame's first event after the stores), nothing is guessed at the second switch
    const out3 = activation('word', [alphaStore + 1]);
    expect(out3.slice(out3.indexOf(alphaStore + 1) + 1)).toEqual([]);
  });

  test('an event the next one cannot follow, though the bytecode before it can, ran ahead of its place: taken back', () => {
    const { code: c } = code('pick');
    // pick: iload_0 istore_1 iload_0 ifle ELSE; THEN: r = r * 3 + 1 ...; goto END; ELSE: r = r * 5 + 1 ...; END: return
    const branch = [...c.keys()].find((b) => c[b] === 0x9e)!; // ifle
    const muls = [...c.keys()].filter((b) => c[b] === 0x68); // imul: two in the then-arm, two in the else-arm
    const thenMul = muls[0];
    const elseMul = muls[2];
    // C2 hoisted an instruction of the else-arm above the branch: its PcDesc comes first, then the then-arm ran
    const out = complete('pick', [branch, elseMul, thenMul]);
    expect(out).not.toContain(elseMul);
    // and the then-arm's way from the branch is filled as if the hoisted event had not been there
    expect(out.slice(out.indexOf(branch) + 1, out.indexOf(thenMul))).toEqual(complete('pick', [branch, thenMul]).slice(out.indexOf(branch) + 1, out.indexOf(thenMul)));
    // an event the next one can follow stays
    expect(complete('pick', [branch, thenMul, muls[1]])).toContain(thenMul);
  });

  test("an echo of the last iteration after the back branch (a bytecode just passed, reached again only around the loop, with the next event a short way ahead) is dropped", () => {
    const { code: c } = code('work');
    const lmul = [...c.keys()].find((b) => c[b] === 0x69)!;
    const ladd = [...c.keys()].find((b) => c[b] === 0x61)!;
    const step = [...c.keys()].find((b) => c[b] === 0x84)!; // iinc
    // one iteration's lmul .. iinc, then the ladd of that iteration scheduled after the back branch, then the
    // next iteration's lmul
    const out = complete('work', [lmul, ladd, step, ladd, lmul]);
    const after = out.slice(out.indexOf(step) + 1);
    expect(after.map((b) => c[b])).toEqual([0xa7 /* goto */, 0x15 /* iload */, 0x1b /* iload_1 */, 0xa2 /* if_icmpge */, 0x20 /* lload_2 */, 0x14 /* ldc2_w */, 0x69 /* lmul */]);
  });

  test("a `goto` the frame cannot reach shortly, whose target it can, labels the code where two ways join: dropped", () => {
    const { code: c } = code('hashOf');
    // hashOf (String.hashCode's shape): ... iload_1; ifne JOIN; ...; putfield hashIsZero; goto JOIN; ...; JOIN: iload_1; ireturn
    const cached = [...c.keys()].find((b) => c[b] === 0x9a)!; // the first ifne (h != 0)
    const join = cached + ((c[cached + 1] << 24) >> 16 | c[cached + 2]);
    const label = [...c.keys()].find((b) => c[b] === 0xa7)!; // goto JOIN
    expect(label + ((c[label + 1] << 24) >> 16 | c[label + 2])).toBe(join);
    // C2 ran the cached way (ifne taken) into the join's code, which carries the goto's PcDesc
    const out = activation('hashOf', [1, cached, label]);
    expect(out).not.toContain(label);
    expect(out.slice(out.indexOf(cached) + 1)).toEqual([join, join + 1]);
    // where the frame can reach the goto shortly (it stored hashIsZero), the goto stays
    const store = [...c.keys()].find((b) => c[b] === 0xb5)!; // putfield hashIsZero
    expect(activation('hashOf', [store, label])).toContain(label);
  });

  test('no long fill where two ways lead on (the arms of an if, each longer than a short path): nothing is guessed', () => {
    const { code: c } = code('pick');
    const branch = [...c.keys()].find((b) => c[b] === 0x9e)!; // ifle
    const ret = [...c.keys()].find((b) => c[b] === 0xac)!; // ireturn
    const out = complete('pick', [branch, ret]);
    expect(out.slice(out.indexOf(branch) + 1, out.indexOf(ret))).toEqual([]);
  });

  test("an unrolled round's events out of program order (i + 1's index before i's sum) are one round each", () => {
    const { id, code: c } = code('sumAt');
    const at = (op: number) => [...c.keys()].find((b) => c[b] === op)!;
    const [test, iand, iaload, ladd, iinc] = [at(0xa2), at(0x7e), at(0x2e), at(0x61), at(0x84)];
    // C2's pass of 4 rounds as jit-hot's run has it: each round a[i & 7], i + k, (i + k) & 7, then s += a[..] of
    // the round before; the last round's i + 4 is the step (an add of 4: aux 4), then the loop test. Returns how
    // many a[i & 7] the completion has.
    const loads = (passes: number): number => {
      const input = new EventStream(64);
      input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
      const ev = (b: number, aux = 0) => input.push(EventKind.Bytecode, EventSource.Compiled, id, b, c[b], 2, aux);
      ev(test);
      ev(iand);
      for (let p = 0; p < passes; p++) {
        for (let r = 0; r < 3; r++) [iaload, iinc, iand, ladd].forEach((b) => ev(b));
        ev(iaload);
        ev(ladd);
        ev(iinc, 4);
        ev(iand);
        ev(test);
      }
      const { events } = completeCompiled(universe, input);
      let n = 0;
      for (let i = 0; i < events.length; i++) if (events.kind[i] === EventKind.Bytecode && events.bci[i] === iaload) n++;
      return n;
    };
    // (the first pass is counted from the frame's last few bytecodes only, and can come out high: passes after it)
    expect(loads(5) - loads(2)).toBe(4 * 3);
  });

  test("a frame's first events, computed ahead of the test that decides them (fib's n - 2, n - 1 - 1), start it again at its entry", () => {
    const { code: c } = code('fib');
    const at = (op: number, from = 0) => [...c.keys()].find((b) => b >= from && c[b] === op)!;
    const test = at(0xa2); // if_icmpge: n < 2
    const first = at(0x64); // isub: n - 1
    const second = at(0x64, first + 1); // isub: n - 2
    const call = at(0xb8); // invokestatic fib(n - 1)
    // the test false: on to the first call
    expect(complete('fib', [second, first, test, call])).toEqual([0, 1, test, first - 2, first - 1, first, call]);
    // the test true: n is returned, the subtractions never ran
    const ret = at(0xac); // ireturn
    expect(activation('fib', [second, first, test])).toEqual([0, 1, test, test + 3, test + 4, ret]);
  });

  test('fed in parts of any size and flushed after each, the events made are those of one whole feed', () => {
    // (sunflow short's Thread-0 came to 184.22 or 184.28 M events as the decoder's takes cut it: a hoisted event or a
    // restart could not take back what a flush had handed on, and a part's last events were read without the next)
    const at = (c: Uint8Array, op: number, from = 0) => [...c.keys()].find((b) => b >= from && c[b] === op)!;
    const pick = code('pick');
    const work = code('work');
    const fib = code('fib');
    const hash = code('hashOf');
    const muls = [...pick.code.keys()].filter((b) => pick.code[b] === 0x68);
    const fibFirst = at(fib.code, 0x64);
    const cached = at(hash.code, 0x9a);
    const scenes: [{ id: number; code: Uint8Array }, number[]][] = [
      [pick, [at(pick.code, 0x9e), muls[2], muls[0]]], // a hoisted event taken back
      [work, [at(work.code, 0x69), at(work.code, 0x61), at(work.code, 0x84), at(work.code, 0x61), at(work.code, 0x69)]], // a late echo
      [fib, [at(fib.code, 0x64, fibFirst + 1), fibFirst, at(fib.code, 0xa2), at(fib.code, 0xb8)]], // a restart at the entry
      [hash, [1, cached, at(hash.code, 0xa7)]], // a join label
    ];
    const input = new EventStream(1024);
    let t = 0;
    for (let r = 0; r < 12; r++)
      for (const [{ id, code: c }, bcis] of scenes) {
        input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, ++t);
        for (const b of bcis) input.push(EventKind.Bytecode, EventSource.Compiled, id, b, c[b], ++t);
        input.push(EventKind.Exit, EventSource.Compiled, id, -1, -1, ++t);
      }
    const whole = completeCompiled(universe, input);
    expect(whole.stats.hoisted).toBeGreaterThanOrEqual(12);
    expect(whole.stats.restarts).toBeGreaterThanOrEqual(12);
    expect(whole.stats.echoes).toBeGreaterThanOrEqual(12);
    const cols = (e: EventStream) => [...e.kind.subarray(0, e.length)].map((k, i) => `${k}:${e.method[i]}:${e.bci[i]}`);
    for (const cut of [1, 2, 3, 5, 9, 17, 100]) {
      const c = completion(universe, 16);
      const got = new EventStream(16);
      for (let a = 0; a < input.length; a += cut) {
        c.feed(input.view(a, Math.min(input.length, a + cut)));
        c.flush((e) => got.appendStream(e));
      }
      const rest = c.finish();
      got.appendStream(rest.events);
      expect(rest.stats).toEqual(whole.stats);
      expect(cols(got)).toEqual(cols(whole.events));
    }
  });

  test("a frame's first fill passing an invoke inserts the callee (nothing was output since the frame began)", () => {
    const twice = code('twice');
    const getV = code('getV');
    const input = new EventStream(8);
    input.push(EventKind.Entry, EventSource.Compiled, twice.id, -1, -1, 1);
    input.push(EventKind.Bytecode, EventSource.Compiled, twice.id, 5, twice.code[5], 2); // imul, after the invoke at 1
    input.push(EventKind.Exit, EventSource.Compiled, twice.id, -1, -1, 3);
    const { events } = completeCompiled(universe, input);
    const seq: string[] = [];
    for (let i = 0; i < events.length; i++) {
      const who = events.method[i] === getV.id ? 'getV' : 'twice';
      if (events.kind[i] === EventKind.Bytecode) seq.push(`${who} ${events.bci[i]}`);
      else if (events.kind[i] === EventKind.Entry) seq.push(`${who} entry`);
    }
    expect(seq).toEqual(['twice entry', 'twice 0', 'twice 1', 'getV entry', 'getV 0', 'getV 1', 'getV 4', 'twice 4', 'twice 5', 'twice 6']);
  });

  describe('an inlined callee entered and left just before its caller returns', () => {
    /** sum's activation: its own events at `outer` (context 0), then sum inlined at call site 15 with one event at
     * bci 1, its exit and the caller's; the output as "bci" and "inlined bci" strings. */
    const run = (outer: number[]): string[] => {
      const { id, code: c } = code('sum');
      const input = new EventStream(16);
      input.push(EventKind.Entry, EventSource.Compiled, id, -1, -1, 1);
      for (const b of outer) input.push(EventKind.Bytecode, EventSource.Compiled, id, b, c[b], 2, COMPILED_CONTEXT);
      input.push(EventKind.Entry, EventSource.Inlined, id, -1, -1, 3, 16);
      input.push(EventKind.Bytecode, EventSource.Inlined, id, 1, c[1], 3, COMPILED_CONTEXT * 2);
      input.push(EventKind.Exit, EventSource.Inlined, id, -1, -1, 4);
      input.push(EventKind.Exit, EventSource.Compiled, id, -1, -1, 4);
      const { events, stats } = completeCompiled(universe, input);
      const out: string[] = [];
      for (let i = 0; i < events.length; i++) {
        const inl = events.source[i] === EventSource.Inlined ? 'inlined ' : '';
        if (events.kind[i] === EventKind.Bytecode) out.push(`${inl}${events.bci[i]}`);
        else if (events.kind[i] === EventKind.Entry && inl) out.push('inlined entry');
      }
      out.push(`sharedTails ${stats.sharedTails}`);
      return out;
    };

    test('at a call site the caller cannot reach without unseen PcDescs (10, 12): a label of shared code, dropped', () => {
      // C2's `return 0` of a null node, labeled with the inlined callee's `lconst_0`: the caller returns 0
      expect(run([1])).toEqual(['0', '1', '4', '5', 'sharedTails 1']);
    });

    test('when the caller was at those bytecodes, the callee is kept', () => {
      const out = run([1, 12, 10]);
      expect(out).toContain('inlined entry');
      expect(out[out.length - 1]).toBe('sharedTails 0');
    });
  });
});

describe('loop steps in compiled code', () => {
  test('the add that ends at a PcDesc, and of several with one bci only the largest (the step, not i + j)', () => {
    // at 0x10: add $0xf,%r11d (41 83 c3 0f), ends 0x14; at 0x20: add $0x10,%r8d (41 83 c0 10), ends 0x24;
    // at 0x30: add $0x100,%eax (81 c0 00 01 00 00), ends 0x36; at 0x40: add %rdi,%r11 (49 01 fb), ends 0x43
    const code = new Uint8Array(0x50).fill(0x90);
    code.set([0x41, 0x83, 0xc3, 0x0f], 0x10);
    code.set([0x41, 0x83, 0xc0, 0x10], 0x20);
    code.set([0x81, 0xc0, 0x00, 0x01, 0x00, 0x00], 0x30);
    code.set([0x49, 0x01, 0xfb], 0x40);
    const base = 0x1000;
    const pcs = Float64Array.from([0x14, 0x24, 0x36, 0x43].map((x) => base + x));
    expect([...addImmediates(code, base, pcs)!]).toEqual([15, 16, 256, 0]);
    // PcDescs 0 and 1 at method 7 bci 24, PcDesc 2 at bci 30, 3 at bci 24
    const frameStart = Uint32Array.from([0, 1, 2, 3, 4]);
    const frames = Int32Array.from([7, 24, 7, 24, 7, 30, 7, 24]);
    expect([...loopSteps(addImmediates(code, base, pcs), frameStart, frames)!]).toEqual([0, 16, 256, 0]);
    expect(addImmediates(new Uint8Array(8).fill(0x90), base, Float64Array.from([base + 4]))).toBeUndefined();
  });

});
