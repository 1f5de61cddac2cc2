/**
 * checkAndRepair on synthetic event streams over classes compiled here: correct sequences are consistent,
 * removed bytecodes come back exactly when the shortest path is unique, ambiguous repairs are marked, gaps split
 * segments, unknown methods and bcis are reported and left alone, and no event is ever dropped.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forEachInstruction, parseClass } from '@jportal/classfile';
import { EventStream } from '@jportal/decode';
import { EdgeKind, MethodCfg } from '@jportal/icfg';
import { cfgFromModel, checkAndRepair, RECONSTRUCTED_SOURCE, shortestPathBetween } from '../src';

const SOURCE = `public class Fix {
  static int lin(int a, int b) { int c = a * b + 3; int d = c - a; return d * 2 + b; }
  static int sw(int a) {
    int s = a;
    switch (a) { case 1: s += 5; break; case 2: s += 6; break; default: s += 7; s *= 3; }
    return s;
  }
  static int caller(int a) { int x = a + 1; int y = lin(x, a); return y - x; }
  static void spin() { for (;;) ; }
}
`;

const javac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' });
const haveJdk = javac.status === 0;
if (!haveJdk) console.warn('SKIP reconstruct tests: no javac on PATH (install openjdk-17-jdk-headless)');

// EventKind values of @jportal/decode (const enums, which isolated modules cannot read)
const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;
const INTERPRETER = 0;
const COMPILED = 1;

const LIN = 1;
const SW = 2;
const CALLER = 3;
const SPIN = 4;
const UNKNOWN = 99;

type Ev = { kind: number; method: number; bci: number; source?: number };

(haveJdk ? describe : describe.skip)('checkAndRepair', () => {
  let dir = '';
  let code: Map<number, Uint8Array>;
  let cfgOf: ReturnType<typeof cfgFromModel>;
  /** every bci of a method, in order */
  const bcis = (m: number): number[] => {
    const out: number[] = [];
    forEachInstruction(code.get(m)!, (bci) => void out.push(bci));
    return out;
  };
  const stream = (evs: Ev[]): EventStream => {
    const s = new EventStream();
    evs.forEach((e, i) => {
      const c = code.get(e.method);
      const op = e.kind === BYTECODE && c && e.bci >= 0 && e.bci < c.length ? c[e.bci] : -1;
      s.push(e.kind as never, (e.source ?? INTERPRETER) as never, e.method, e.bci, op, 1000 + i, 0);
    });
    return s;
  };
  const bc = (method: number, bci: number, source = INTERPRETER): Ev => ({ kind: BYTECODE, method, bci, source });
  const rows = (s: EventStream) => Array.from({ length: s.length }, (_, i) => [s.kind[i], s.method[i], s.bci[i], s.opcode[i]].join(':'));
  /** the true run of sw(1): bcis from 0 to the tableswitch, the case-1 arm, then the join to the return */
  let swCase1: number[] = [];
  let swCase2: number[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-reconstruct-'));
    fs.writeFileSync(path.join(dir, 'Fix.java'), SOURCE);
    const r = spawnSync('javac', ['-g:none', '-d', dir, path.join(dir, 'Fix.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Fix.class')));
    const cf = parseClass(bytes);
    code = new Map();
    const methods = new Map<number, { className: string; name: string; signature: string; classId: number; loader: number }>();
    for (const [id, name, sig] of [
      [LIN, 'lin', '(II)I'],
      [SW, 'sw', '(I)I'],
      [CALLER, 'caller', '(I)I'],
      [SPIN, 'spin', '()V'],
    ] as const) {
      code.set(id, cf.method(name, sig)!.code!);
      methods.set(id, { className: 'Fix', name, signature: sig, classId: 1, loader: 0 });
    }
    cfgOf = cfgFromModel({ methods, classes: new Map([['0:Fix', bytes]]) });
    // the switch's runs, from its CFG: follow fallthroughs, take the case edge at the switch, gotos at jumps
    const g = cfgOf(SW)!;
    const run = (key: number): number[] => {
      const out: number[] = [];
      let i = 0;
      for (;;) {
        out.push(g.insns.bci[i]);
        const s = g.graph.start[i];
        const e = g.graph.start[i + 1];
        if (e === s) return out; // the return
        let next = -1;
        for (let x = s; x < e; x++) {
          const k = g.graph.kind[x];
          if (k === EdgeKind.SwitchCase && g.graph.key[x] === key) next = g.graph.target[x];
          else if (k === EdgeKind.Fallthrough || k === EdgeKind.Goto) next = g.graph.target[x];
        }
        i = next;
      }
    };
    swCase1 = run(1);
    swCase2 = run(2);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('builds CFGs lazily from the model and caches them', () => {
    expect(cfgOf(LIN)).toBeInstanceOf(MethodCfg);
    expect(cfgOf(LIN)).toBe(cfgOf(LIN));
    expect(cfgOf(UNKNOWN)).toBeUndefined();
    expect(cfgOf.misses.noInfo).toBe(1);
  });

  it('finds no contradiction in correct sequences, across calls and returns', () => {
    const lin = bcis(LIN);
    const caller = bcis(CALLER);
    const invoke = caller.findIndex((b) => code.get(CALLER)![b] === 0xb8);
    const evs: Ev[] = [
      { kind: ENTRY, method: CALLER, bci: -1 },
      ...caller.slice(0, invoke + 1).map((b) => bc(CALLER, b)),
      { kind: ENTRY, method: LIN, bci: -1 },
      ...lin.map((b) => bc(LIN, b)),
      { kind: EXIT, method: LIN, bci: -1 },
      ...caller.slice(invoke + 1).map((b) => bc(CALLER, b)),
      { kind: EXIT, method: CALLER, bci: -1 },
      ...swCase1.map((b) => bc(SW, b, COMPILED)),
      { kind: EXIT, method: SW, bci: -1 },
      { kind: ENTRY, method: SW, bci: -1 },
      ...swCase2.map((b) => bc(SW, b, COMPILED)),
    ];
    const input = stream(evs);
    const { events, report } = checkAndRepair(input, cfgOf);
    expect(report.contradictions).toBe(0);
    expect(report.byClass).toEqual({ path: 0, noPath: 0, unknownMethod: 0, unknownBci: 0, acrossGap: 0 });
    expect(report.pairs).toBe(report.consistent);
    // every bytecode but each frame's first is checked against the one before it
    expect(report.pairs).toBe(caller.length - 1 + lin.length - 1 + swCase1.length - 1 + swCase2.length - 1);
    expect(rows(events)).toEqual(rows(input));
    expect(report.opcodeMismatches).toBe(0);
  });

  it('repairs removed bytecodes exactly to the original when the shortest path is unique', () => {
    const lin = bcis(LIN);
    const full = [...lin.map((b) => bc(LIN, b)), { kind: EXIT, method: LIN, bci: -1 }, ...swCase1.map((b) => bc(SW, b))];
    // keep the first and last of each method and every third bytecode in between
    const kept = full.filter((e, i) => e.kind !== BYTECODE || i === 0 || i === full.length - 1 || (e.method === LIN ? e.bci === lin[lin.length - 1] : e.bci === 0) || i % 3 === 0);
    expect(kept.length).toBeLessThan(full.length);
    const { events, report } = checkAndRepair(stream(kept), cfgOf);
    expect(rows(events)).toEqual(rows(stream(full)));
    expect(report.byClass.path).toBeGreaterThan(0);
    expect(report.repair.unique).toBe(report.byClass.path);
    expect(report.repair.ambiguous).toBe(0);
    expect(report.repair.inserted).toBe(full.length - kept.length);
    // inserted events: source RECONSTRUCTED, the later event's time, aux = 1 shortest path
    let observed = 0;
    for (let i = 0; i < events.length; i++) {
      if (events.source[i] === RECONSTRUCTED_SOURCE) {
        expect(events.aux[i]).toBe(1);
        // the next observed event follows (possibly after more inserted ones) and has the same tsc
        let n = i + 1;
        while (events.source[n] === RECONSTRUCTED_SOURCE) n++;
        expect(events.tsc[i]).toBe(events.tsc[n]);
      } else observed++;
    }
    expect(observed).toBe(kept.length);
    // repair: false reports the same and inserts nothing
    const dry = checkAndRepair(stream(kept), cfgOf, { repair: false });
    expect(dry.report.byClass).toEqual(report.byClass);
    expect(dry.events.length).toBe(kept.length);
    // the same pairs in compiled frames are reported, not repaired, unless asked to
    const asCompiled = (evs: Ev[]) => stream(evs.map((e) => (e.kind === BYTECODE ? { ...e, source: COMPILED } : e)));
    const compiled = checkAndRepair(asCompiled(kept), cfgOf);
    expect(compiled.report.byClass).toEqual(report.byClass);
    expect(compiled.report.repair.compiledLeft).toBe(report.byClass.path);
    expect(compiled.report.repair.inserted).toBe(0);
    expect(compiled.events.length).toBe(kept.length);
    const forced = checkAndRepair(asCompiled(kept), cfgOf, { repairCompiled: true });
    expect(forced.report.repair.inserted).toBe(full.length - kept.length);
  });

  it('marks an ambiguous repair and counts the shortest paths', () => {
    const sw = swCase1.find((b) => code.get(SW)![b] === 0xaa || code.get(SW)![b] === 0xab)!; // table- or lookupswitch
    expect(sw).toBeDefined();
    // the join after the switch: the first bci after the case-1 arm's goto
    const join = swCase1[swCase1.indexOf(sw) + 3];
    // sw -> join: two shortest paths (case 1 and case 2 arms, two bytecodes each; the default arm is longer)
    const input = () => stream([bc(SW, 0), ...swCase1.slice(1, swCase1.indexOf(sw) + 1).map((b) => bc(SW, b)), bc(SW, join)]);
    // by default only what every path passes through is inserted: the two arms share nothing
    const certain = checkAndRepair(input(), cfgOf);
    expect(certain.report.repair.ambiguous).toBe(1);
    expect(certain.report.repair.inserted).toBe(0);
    expect(certain.events.length).toBe(input().length);
    // mustPass: false takes one of the shortest paths whole
    const { events, report } = checkAndRepair(input(), cfgOf, { mustPass: false });
    expect(report.byClass.path).toBe(1);
    expect(report.repair.ambiguous).toBe(1);
    expect(report.repair.maxPaths).toBe(2);
    const inserted = Array.from({ length: events.length }, (_, i) => i).filter((i) => events.source[i] === RECONSTRUCTED_SOURCE);
    expect(inserted.length).toBe(2);
    for (const i of inserted) expect(events.aux[i]).toBe(2);
    const arm = inserted.map((i) => events.bci[i]);
    const arms = [swCase1, swCase2].map((r) => r.slice(r.indexOf(sw) + 1, r.indexOf(sw) + 3));
    expect(arms).toContainEqual(arm);
    // deterministic
    const again = checkAndRepair(input(), cfgOf, { mustPass: false });
    expect(rows(again.events)).toEqual(rows(events));
    expect(report.examples.find((x) => x.cls === 'path')).toMatchObject({ method: SW, fromBci: sw, toBci: join, missing: 2, repair: 'ambiguous' });
  });

  it('treats a gap as a segment boundary: never a contradiction, never repaired', () => {
    const lin = bcis(LIN);
    const evs: Ev[] = [bc(LIN, lin[0]), bc(LIN, lin[1]), { kind: GAP, method: -1, bci: 0 }, bc(LIN, lin[5]), bc(LIN, lin[6]), bc(LIN, lin[9])];
    const input = stream(evs);
    const { events, report } = checkAndRepair(input, cfgOf);
    expect(report.segments).toBe(2);
    expect(report.gaps).toBe(1);
    expect(report.byClass.acrossGap).toBe(1);
    // lin[6] -> lin[9] is in the second segment: a real contradiction, repaired
    expect(report.byClass.path).toBe(1);
    expect(report.contradictions).toBe(1);
    expect(report.repair.inserted).toBe(2);
    expect(rows(events).filter((_, i) => events.source[i] !== RECONSTRUCTED_SOURCE)).toEqual(rows(input));
    expect(events.bci.slice(0, events.length)).toEqual(Int32Array.from([lin[0], lin[1], 0, lin[5], lin[6], lin[7], lin[8], lin[9]]));
  });

  it('reports unknown methods and bcis and impossible orders without repairing them', () => {
    const lin = bcis(LIN);
    const invoke = bcis(CALLER).find((b) => code.get(CALLER)![b] === 0xb8)!;
    const evs: Ev[] = [
      bc(UNKNOWN, 0, COMPILED),
      bc(UNKNOWN, 7, COMPILED),
      bc(UNKNOWN, 3, COMPILED),
      { kind: EXIT, method: UNKNOWN, bci: -1 },
      bc(LIN, lin[3]),
      bc(LIN, lin[2]), // backwards in straight-line code: no path
      bc(LIN, lin[2]), // the same bytecode twice, no loop of one instruction: no path
      bc(CALLER, 0),
      bc(CALLER, invoke + 1), // inside an instruction (an operand byte of invokestatic)
    ];
    const input = stream(evs);
    const { events, report } = checkAndRepair(input, cfgOf);
    expect(report.byClass.unknownMethod).toBe(2);
    expect(report.byClass.noPath).toBe(2);
    expect(report.byClass.unknownBci).toBe(1);
    expect(report.contradictions).toBe(5);
    expect(report.byMethod.get(UNKNOWN)!.unknownMethod).toBe(2);
    expect(report.byMethod.get(LIN)!.noPath).toBe(2);
    expect(report.repair.inserted).toBe(0);
    expect(rows(events)).toEqual(rows(input));
    expect(report.bySource).toEqual({ interpreted: 3, compiled: 2, other: 0 });
    const ex = report.examples.filter((x) => x.cls === 'unknownMethod');
    expect(ex.map((x) => [x.method, x.fromBci, x.toBci, x.event])).toEqual([
      [UNKNOWN, 0, 7, 1],
      [UNKNOWN, 7, 3, 2],
    ]);
  });

  it('accepts the same bytecode twice only in a loop of one instruction', () => {
    expect(bcis(SPIN)).toEqual([0]); // goto 0
    const { report } = checkAndRepair(stream([bc(SPIN, 0), bc(SPIN, 0), bc(SPIN, 0)]), cfgOf);
    expect(report.pairs).toBe(2);
    expect(report.consistent).toBe(2);
    expect(report.contradictions).toBe(0);
  });

  it('leaves paths longer than maxInsert and counts them', () => {
    const lin = bcis(LIN);
    const { events, report } = checkAndRepair(stream([bc(LIN, lin[0]), bc(LIN, lin[lin.length - 1])]), cfgOf, { maxInsert: 3 });
    expect(report.byClass.path).toBe(1);
    expect(report.repair.tooLong).toBe(1);
    expect(events.length).toBe(2);
    expect(report.examples[0].missing).toBe(lin.length - 2);
  });

  it('shortestPathBetween: what recovery falls back to across a gap', () => {
    const between = shortestPathBetween(cfgOf);
    const lin = bcis(LIN);
    const straight = between(LIN, lin[1], lin[5])!;
    expect(Array.from(straight.bcis)).toEqual(lin.slice(2, 5));
    expect(Array.from(straight.opcodes)).toEqual(lin.slice(2, 5).map((b) => code.get(LIN)![b]));
    expect(straight.paths).toBe(1);
    expect(between(LIN, lin[5], lin[1])).toBeUndefined(); // backwards in straight-line code
    expect(between(UNKNOWN, 0, 3)).toBeUndefined();
    const invoke = bcis(CALLER).find((b) => code.get(CALLER)![b] === 0xb8)!;
    expect(between(CALLER, 0, invoke + 1)).toBeUndefined(); // an operand byte of invokestatic
    // the spin loop's one instruction to itself: a round of the loop, nothing between
    expect(Array.from(between(SPIN, 0, 0)!.bcis)).toEqual([]);
    // cached: the same object for the same question
    expect(between(LIN, lin[1], lin[5])).toBe(straight);
  });
});
