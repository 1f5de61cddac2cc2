/**
 * attributeOrphans on synthetic event streams over a class compiled here. The streams are made by walking the
 * methods' CFGs (calls expanded, a loop run a fixed number of times), then losing a frame the way the decoder
 * loses one: a `gap`, after which the frame's own bytecodes have method and bci -1 (opcodes kept) and its `exit`
 * names no method. The pass must give them back exactly, leave an ambiguous frame alone, and change nothing else.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseClass, type ClassFile } from '@jportal/classfile';
import { EventStream } from '@jportal/decode';
import { EdgeKind, InsnKind } from '@jportal/icfg';
import { attributeOrphans, cfgFromModel, OrphanContext } from '../src';

const SOURCE = `public class Orph {
  static int leaf(int x) { return x * 3 + 1; }
  static int other(int x) { return x - 7; }
  static int chain(int x) { int a = leaf(x); int b = other(a); int c = leaf(b + a); return a + b + c; }
  static int twinA(int x) { int y = x + 1; return leaf(y) + 2; }
  static int twinB(int x) { int y = x + 1; return leaf(y) + 2; }
  static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(i) ^ other(i); return s; }
  static int pickA(int x) { int a = leaf(x); return leaf(a) + 1; }
  static int pickB(int x) { int a = leaf(x); return other(a) + 1; }
  static int o1(int x) { return other(x) * 2; }
  static int o2(int x) { return other(x) * 3; }
  static int o3(int x) { return other(x) * 4; }
  static int o4(int x) { return other(x) * 5; }
  static int leaf2(int x) { return x * 3 + 1; }
  static int leaf3(int x) { return x + 5; }
  static int store(int[] a, int i) { int x = leaf3(i); try { a[x] = 1; return 0; } catch (RuntimeException e) { return 1; } }
}
class Boom extends RuntimeException {}
`;

const javac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' });
const haveJdk = javac.status === 0;
if (!haveJdk) console.warn('SKIP orphan tests: no javac on PATH (install openjdk-17-jdk-headless)');

// EventKind / EventSource values of @jportal/decode (const enums)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const INTERPRETER = 0;
const COMPILED = 1;

/** One generated event, with the activation it belongs to (bytecodes, and the entry/exit of that activation). */
interface Ev {
  kind: number;
  source: number;
  method: number;
  bci: number;
  opcode: number;
  aux: number;
  act: number;
}

(haveJdk ? describe : describe.skip)('attributeOrphans', () => {
  let dir = '';
  let cf: ClassFile;
  let model: { methods: Map<number, { className: string; name: string; signature: string; classId: number; loader: number }>; classes: Map<string, Uint8Array> };
  let ctx: OrphanContext;
  const ids = new Map<string, number>();
  const id = (name: string) => {
    const x = [...ids].find(([k]) => k.startsWith(`${name}(`));
    if (!x) throw new Error(name);
    return x[1];
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-orphans-'));
    fs.writeFileSync(path.join(dir, 'Orph.java'), SOURCE);
    const r = spawnSync('javac', ['-g:none', '-d', dir, path.join(dir, 'Orph.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Orph.class')));
    cf = parseClass(bytes);
    const boom = new Uint8Array(fs.readFileSync(path.join(dir, 'Boom.class')));
    model = { methods: new Map(), classes: new Map([['0:Orph', bytes], ['0:Boom', boom]]) };
    cf.methods.forEach((m, k) => {
      ids.set(m.name + m.descriptor, 10 + k);
      model.methods.set(10 + k, { className: 'Orph', name: m.name, signature: m.descriptor, classId: 1, loader: 0 });
    });
    ids.set('Boom.<init>()V', 100);
    model.methods.set(100, { className: 'Boom', name: '<init>', signature: '()V', classId: 2, loader: 0 });
    ctx = new OrphanContext(model);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * The events of a call of `method`: its bytecodes by its CFG (a branch is taken once it has been reached more
   * than `iterations` times in the activation: the loop runs that often), each invokestatic of an Orph method
   * expanded into entry, the callee's events, exit. `source(method)` gives the source of a method's events.
   */
  const simulate = (method: number, iterations: number, source: (m: number) => number, out: Ev[] = [], counter = { act: 0 }): Ev[] => {
    const cfgOf = cfgFromModel(model);
    const act = counter.act++;
    const src = source(method);
    out.push({ kind: ENTRY, source: src, method, bci: -1, opcode: -1, aux: 0, act });
    const g = cfgOf(method)!;
    const visits = new Map<number, number>();
    let i = 0;
    for (;;) {
      const bci = g.insns.bci[i];
      const op = g.insns.opcode[i];
      const kind = g.insns.kind[i];
      let next = -1;
      let aux = 0;
      if (kind === InsnKind.Branch) {
        const v = (visits.get(i) ?? 0) + 1;
        visits.set(i, v);
        const taken = v > iterations;
        aux = taken ? 1 : -1;
        for (let e = g.graph.start[i]; e < g.graph.start[i + 1]; e++) if (g.graph.kind[e] === (taken ? EdgeKind.BranchTaken : EdgeKind.BranchNotTaken)) next = g.graph.target[e];
      } else {
        for (let e = g.graph.start[i]; e < g.graph.start[i + 1]; e++) if (g.graph.kind[e] === EdgeKind.Fallthrough || g.graph.kind[e] === EdgeKind.Goto) next = g.graph.target[e];
      }
      out.push({ kind: BYTECODE, source: src, method, bci, opcode: op, aux, act });
      if (kind === InsnKind.Call) {
        const ref = cf.methodRef((g.code[bci + 1] << 8) | g.code[bci + 2])!;
        simulate(ids.get(ref.name + ref.descriptor)!, iterations, source, out, counter);
      }
      if (kind === InsnKind.Return) break;
      i = next;
    }
    out.push({ kind: EXIT, source: src, method, bci: -1, opcode: -1, aux: 0, act });
    return out;
  };

  /**
   * Loses activation `act` at a gap put before event `at`: from there its bytecodes have method and bci -1 and its
   * exit names no method (what the decoder emits for a frame it lost). Returns the stream and the indices (in the
   * stream) of the events made orphans, with their true method and bci.
   */
  const lose = (evs: Ev[], act: number, at: number) => {
    const s = new EventStream();
    const truth: { index: number; method: number; bci: number }[] = [];
    evs.forEach((e, k) => {
      if (k === at) s.push(GAP as never, 3 as never, -1, 0, -1, 1000 + k, 1000 + k);
      const lost = k >= at && e.act === act && e.kind !== ENTRY;
      if (lost && e.kind === BYTECODE) truth.push({ index: s.length, method: e.method, bci: e.bci });
      s.push(e.kind as never, e.source as never, lost ? -1 : e.method, lost ? -1 : e.bci, e.opcode, 1000 + k, e.aux);
    });
    return { stream: s, truth };
  };
  const rows = (s: EventStream, from = 0, to = s.length) => Array.from({ length: to - from }, (_, k) => [s.kind[from + k], s.source[from + k], s.method[from + k], s.bci[from + k], s.opcode[from + k], s.tsc[from + k], s.aux[from + k]].join(':'));
  /** the index of the n-th (from 1) event matching */
  const nth = (evs: Ev[], n: number, f: (e: Ev) => boolean) => {
    for (let k = 0, c = 0; k < evs.length; k++) if (f(evs[k]) && ++c === n) return k;
    throw new Error('not found');
  };

  it('maps the trace method ids to ICFG methods and finds callers through the class hierarchy', () => {
    expect(ctx.cand(id('chain'))).toBeDefined();
    const callers = ctx.callerSites(id('leaf')).map((s) => s.id);
    expect(new Set(callers)).toEqual(new Set(['chain', 'twinA', 'twinB', 'loop', 'pickA', 'pickB'].map(id)));
    expect(new Set(ctx.callerSites(id('other')).map((s) => s.id))).toEqual(new Set(['chain', 'loop', 'pickB', 'o1', 'o2', 'o3', 'o4'].map(id)));
    expect(ctx.callerSites(id('leaf2'))).toEqual([]);
  });

  it('attributes a caller frame lost in a gap with its method and bcis, across several returns into it', () => {
    // chain(5) interpreted, callees compiled; the gap falls inside the first call of leaf
    const evs = simulate(id('chain'), 0, (m) => (m === id('chain') ? INTERPRETER : COMPILED));
    const at = nth(evs, 3, (e) => e.kind === BYTECODE && e.method === id('leaf'));
    const { stream, truth } = lose(evs, 0, at);
    expect(truth.length).toBeGreaterThan(8);
    const before = rows(stream);
    const { events, report } = attributeOrphans(stream, ctx);
    for (const t of truth) {
      expect(events.method[t.index]).toBe(t.method);
      expect(events.bci[t.index]).toBe(t.bci);
    }
    expect(report).toMatchObject({ orphans: truth.length, frames: 1, attributedFrames: 1, attributedBytecodes: truth.length, ambiguous: 0, remaining: 0 });
    // the input is untouched; the output differs from it only in the orphans' method and bci
    expect(rows(stream)).toEqual(before);
    const orphan = new Set(truth.map((t) => t.index));
    for (let k = 0; k < stream.length; k++) {
      if (orphan.has(k)) continue;
      expect(rows(events, k, k + 1)).toEqual(rows(stream, k, k + 1));
    }
    for (const t of truth) {
      expect([events.kind[t.index], events.source[t.index], events.opcode[t.index], events.tsc[t.index], events.aux[t.index]]).toEqual([
        stream.kind[t.index], stream.source[t.index], stream.opcode[t.index], stream.tsc[t.index], stream.aux[t.index],
      ]);
    }
  });

  it('pops a compiled callee whose exit was not seen when interpreted orphans come (they are its caller\'s)', () => {
    const evs = simulate(id('chain'), 0, (m) => (m === id('chain') ? INTERPRETER : COMPILED));
    const at = nth(evs, 3, (e) => e.kind === BYTECODE && e.method === id('leaf'));
    // drop the exit of every compiled callee after the gap
    const kept = evs.filter((e, k) => !(k > at && e.kind === EXIT && e.source === COMPILED));
    const { stream, truth } = lose(kept, 0, at);
    const { events, report } = attributeOrphans(stream, ctx);
    expect(report.attributedFrames).toBe(1);
    expect(truth.every((t) => events.method[t.index] === t.method && events.bci[t.index] === t.bci)).toBe(true);
  });

  it('follows a loop frame through its branch outcomes and every return into it (interpreted callees too)', () => {
    for (const calleeSource of [COMPILED, INTERPRETER]) {
      const evs = simulate(id('loop'), 4, (m) => (m === id('loop') ? INTERPRETER : calleeSource));
      const at = nth(evs, 2, (e) => e.kind === BYTECODE && e.method === id('leaf'));
      const { stream, truth } = lose(evs, 0, at);
      const { events, report } = attributeOrphans(stream, ctx, { details: true });
      expect(report.attributedFrames).toBe(1);
      expect(report.details![0]).toMatchObject({ outcome: 'unique', method: id('loop'), start: 'unknown' });
      expect(truth.map((t) => `${events.method[t.index]}@${events.bci[t.index]}`)).toEqual(truth.map((t) => `${t.method}@${t.bci}`));
    }
  });

  it('leaves a frame two methods of the same shape explain unattributed, and counts it ambiguous', () => {
    const evs = simulate(id('twinA'), 0, (m) => (m === id('twinA') ? INTERPRETER : COMPILED));
    const at = nth(evs, 2, (e) => e.kind === BYTECODE && e.method === id('leaf'));
    const { stream, truth } = lose(evs, 0, at);
    expect(truth.length).toBe(3); // iconst_2 iadd ireturn after the return from leaf
    const { events, report } = attributeOrphans(stream, ctx, { details: true });
    expect(report).toMatchObject({ frames: 1, ambiguous: 1, attributedFrames: 0, attributedBytecodes: 0, remaining: 3 });
    expect(report.details![0].outcome).toBe('ambiguous');
    expect(rows(events)).toEqual(rows(stream));
    // with `partial`, a bytecode is written only where every surviving path agrees: here they never do
    expect(attributeOrphans(stream, ctx, { partial: true }).report.partialBytecodes).toBe(0);
  });

  it('tells two methods of the same shape apart by the callee their call reaches', () => {
    // pickA and pickB differ only in the second call (leaf, other); the candidates come from leaf's callers
    // (fewer than other's), so only the call constraint can tell them apart
    for (const [name, twin] of [['pickB', 'pickA'], ['pickA', 'pickB']]) {
      const evs = simulate(id(name), 0, (m) => (m === id(name) ? INTERPRETER : COMPILED));
      const { stream, truth } = lose(evs, 0, nth(evs, 2, (e) => e.kind === BYTECODE && e.method === id('leaf')));
      const { events, report } = attributeOrphans(stream, ctx, { details: true });
      expect(report.details![0]).toMatchObject({ outcome: 'unique', method: id(name) });
      expect(report.details![0].candidates).toBeGreaterThan(1);
      expect(truth.every((t) => events.method[t.index] === t.method && events.bci[t.index] === t.bci)).toBe(true);
      expect(truth.some((t) => events.method[t.index] === id(twin))).toBe(false);
    }
  });

  it('takes an interpreted callee as any method of the same code (the decoder may have named its twin)', () => {
    // leaf runs interpreted but the events name leaf2, whose code is the same: no invoke reaches leaf2
    const evs = simulate(id('chain'), 0, (m) => (m === id('chain') || m === id('leaf') ? INTERPRETER : COMPILED));
    for (const e of evs) if (e.method === id('leaf')) e.method = id('leaf2');
    const { stream, truth } = lose(evs, 0, nth(evs, 3, (e) => e.kind === BYTECODE && e.method === id('leaf2')));
    const { events, report } = attributeOrphans(stream, ctx);
    expect(report.attributedFrames).toBe(1);
    expect(truth.every((t) => events.method[t.index] === t.method && events.bci[t.index] === t.bci)).toBe(true);
  });

  it('lets an instruction that raises an exception itself make the VM construct it (an upcall), then go to the handler', () => {
    // store(a, i): leaf3 returns into the frame lost in a gap; a[x] = 1 fails, the VM constructs the exception
    // (an entry of Boom.<init> right after iastore), the handler returns 1
    const S = id('store');
    const s = new EventStream();
    const EXCEPTION = 5;
    s.push(ENTRY as never, INTERPRETER as never, S, -1, -1, 0, 0);
    s.push(BYTECODE as never, INTERPRETER as never, S, 0, 0x1b, 1, 0); // iload_1
    s.push(BYTECODE as never, INTERPRETER as never, S, 1, 0xb8, 2, 0); // invokestatic leaf3
    s.push(GAP as never, 3 as never, -1, 0, -1, 3, 3);
    s.push(ENTRY as never, COMPILED as never, id('leaf3'), -1, -1, 4, 0);
    s.push(EXIT as never, COMPILED as never, id('leaf3'), -1, -1, 5, 0);
    const truth: [number, number][] = [];
    const own = (bci: number, op: number) => {
      truth.push([s.length, bci]);
      s.push(BYTECODE as never, INTERPRETER as never, -1, -1, op, 6 + s.length, 0);
    };
    own(4, 0x3d); // istore_2
    own(5, 0x2a); // aload_0
    own(6, 0x1c); // iload_2
    own(7, 0x04); // iconst_1
    own(8, 0x4f); // iastore
    s.push(ENTRY as never, COMPILED as never, 100, -1, -1, 20, 0); // the VM calls Boom.<init>
    s.push(EXIT as never, COMPILED as never, 100, -1, -1, 21, 0);
    s.push(EXCEPTION as never, INTERPRETER as never, -1, -1, -1, 22, 0);
    own(11, 0x4e); // astore_3: the handler
    own(12, 0x04); // iconst_1
    own(13, 0xac); // ireturn
    s.push(EXIT as never, INTERPRETER as never, -1, -1, -1, 30, 0);
    const { events, report } = attributeOrphans(s, ctx);
    expect(report).toMatchObject({ frames: 1, attributedFrames: 1, remaining: 0 });
    expect(truth.map(([k]) => `${events.method[k]}@${events.bci[k]}`)).toEqual(truth.map(([, bci]) => `${S}@${bci}`));
  });

  it('attributes a frame entered by an entry of a known method from bci 0', () => {
    const evs = simulate(id('leaf'), 0, () => INTERPRETER);
    const s = new EventStream();
    const truth: number[] = [];
    for (const e of evs) {
      if (e.kind === BYTECODE) truth.push(s.length);
      const lost = e.kind !== ENTRY;
      s.push(e.kind as never, e.source as never, lost ? -1 : e.method, lost ? -1 : e.bci, e.opcode, 0, e.aux);
    }
    const { events, report } = attributeOrphans(s, ctx);
    expect(report).toMatchObject({ frames: 1, attributedFrames: 1, byStart: { entry: 1, state: 0, unknown: 0 } });
    expect(truth.map((k) => events.bci[k])).toEqual(evs.filter((e) => e.kind === BYTECODE).map((e) => e.bci));
    expect(truth.every((k) => events.method[k] === id('leaf'))).toBe(true);
  });

  it('counts a frame with no callee and no known entry as without candidate', () => {
    // leaf itself lost after a gap: no call, no return into it, its entry before the gap
    const evs = simulate(id('chain'), 0, (m) => (m === id('leaf') ? INTERPRETER : COMPILED));
    const at = nth(evs, 2, (e) => e.kind === BYTECODE && e.method === id('leaf'));
    const leafAct = evs[at].act;
    const { stream } = lose(evs, leafAct, at);
    const { events, report } = attributeOrphans(stream, ctx);
    expect(report).toMatchObject({ frames: 1, noCandidate: 1, attributedBytecodes: 0 });
    expect(rows(events)).toEqual(rows(stream));
  });

  it('bounds the work per frame and counts the frames it gives up', () => {
    const evs = simulate(id('loop'), 4, (m) => (m === id('loop') ? INTERPRETER : COMPILED));
    const { stream } = lose(evs, 0, nth(evs, 2, (e) => e.kind === BYTECODE && e.method === id('leaf')));
    const { events, report } = attributeOrphans(stream, ctx, { maxWork: 5 });
    expect(report).toMatchObject({ frames: 1, gaveUp: 1, attributedBytecodes: 0 });
    expect(rows(events)).toEqual(rows(stream));
  });

  it('writes into the input with inPlace, and a second pass finds nothing left', () => {
    const evs = simulate(id('chain'), 0, (m) => (m === id('chain') ? INTERPRETER : COMPILED));
    const { stream, truth } = lose(evs, 0, nth(evs, 3, (e) => e.kind === BYTECODE && e.method === id('leaf')));
    const { events } = attributeOrphans(stream, model, { inPlace: true });
    expect(events).toBe(stream);
    expect(truth.every((t) => stream.method[t.index] === t.method && stream.bci[t.index] === t.bci)).toBe(true);
    const again = attributeOrphans(stream, ctx);
    expect(again.report).toMatchObject({ orphans: 0, frames: 0, attributedBytecodes: 0 });
    expect(rows(again.events)).toEqual(rows(stream));
  });
});
