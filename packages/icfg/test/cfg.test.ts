/**
 * MethodCfg on fixtures compiled here (if/else, loops, both switches, try/catch/finally, nested handlers,
 * synchronized, throw, lambdas) and on a hand-written jsr/ret class: blocks, edges and handler edges against javap
 * and against @jportal/classfile's successors(); the control view; shortest paths.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseClass, type ClassFile } from '@jportal/classfile';
import { CfgError, EdgeKind, InsnKind, MethodCfg, ShortestPaths } from '../src';
import { checkAgainstJavap, checkCfg } from './lib/check';
import { writeClass } from './lib/classwriter';
import { compile, findJdkTools, javap, tempDir, type JdkTools } from './lib/jdk';

export const FLOW = `
import java.util.function.*;
public class Flow {
  static int ifElse(int x) { if (x > 0) return 1; else if (x < -5) return -1; return 0; }
  static int loops(int n) { int s = 0; for (int i = 0; i < n; i++) { if (i % 3 == 0) continue; s += i; } while (s > 100) s /= 2; do { s++; } while (s < 3); return s; }
  static int table(int x) { switch (x) { case 1: return 10; case 2: return 20; case 3: case 4: return 30; default: return -1; } }
  static int lookup(int x) { switch (x) { case -100000: return 1; case 7: return 2; case 900000: return 3; default: return 0; } }
  static String tryCatch(Object o) { try { return o.toString(); } catch (NullPointerException e) { return "npe"; } catch (RuntimeException e) { return "rt"; } finally { System.out.print(""); } }
  static int nested(int[] a) { int r = 0; try { try { r = a[0]; } catch (ArrayIndexOutOfBoundsException e) { r = -1; } r += a[1]; } catch (Exception e) { r = -2; } return r; }
  synchronized void syncMethod() { System.out.println(); }
  void syncBlock(Object lock) { synchronized (lock) { System.out.println(lock); } }
  static void thrower(int x) { if (x < 0) throw new IllegalArgumentException(); }
  static Supplier<String> lambda(String s) { return () -> s + "!"; }
}
`;

const tools = findJdkTools();
const jdk: JdkTools | undefined = 'missing' in tools ? undefined : tools;
if (!jdk) console.warn(`SKIP javac fixtures: ${(tools as { missing: string }).missing}`);

const bciOf = (cfg: MethodCfg, i: number) => cfg.insns.bci[i];
const edgesOf = (cfg: MethodCfg, bci: number) => {
  const i = cfg.insnAt(bci);
  const out: { to: number; kind: number; key: number; type?: string }[] = [];
  for (let e = cfg.graph.start[i]; e < cfg.graph.start[i + 1]; e++) out.push({ to: bciOf(cfg, cfg.graph.target[e]), kind: cfg.graph.kind[e], key: cfg.graph.key[e], type: cfg.catchType(e) });
  return out;
};
const cfgOf = (cf: ClassFile, name: string) => {
  const m = cf.methods.find((x) => x.name === name)!;
  return MethodCfg.build(m.code!, m.handlers, `${cf.name}.${name}`);
};

(jdk ? describe : describe.skip)('javac fixtures', () => {
  let dir = '';
  let flow: ClassFile;
  beforeAll(() => {
    dir = compile(jdk!, { 'Flow.java': FLOW });
    flow = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Flow.class'))));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('every method: blocks, successors and handler edges agree with javap and successors()', () => {
    const listing = javap(jdk!, ['-cp', dir, 'Flow']).get('Flow')!;
    expect(listing.length).toBe(flow.methods.length);
    let insns = 0;
    flow.methods.forEach((m, k) => {
      expect(listing[k].descriptor).toBe(m.descriptor);
      const cfg = MethodCfg.build(m.code!, m.handlers, m.name);
      expect({ method: m.name, errors: checkCfg(cfg, m.code!, m.handlers) }).toEqual({ method: m.name, errors: [] });
      expect({ method: m.name, errors: checkAgainstJavap(cfg, listing[k]) }).toEqual({ method: m.name, errors: [] });
      insns += cfg.insns.count;
    });
    expect(insns).toBeGreaterThan(100);
  });

  test('if/else: taken and not-taken edges, blocks end at branches and returns', () => {
    const cfg = cfgOf(flow, 'ifElse');
    // 0: iload_0 1: ifle 6 4: iconst_1 5: ireturn 6: iload_0 7: bipush -5 9: if_icmpge 14 12: iconst_m1 13: ireturn 14: iconst_0 15: ireturn
    expect(edgesOf(cfg, 1)).toEqual([
      { to: 4, kind: EdgeKind.BranchNotTaken, key: 0, type: undefined },
      { to: 6, kind: EdgeKind.BranchTaken, key: 0, type: undefined },
    ]);
    expect(Array.from(cfg.blockFirst, (i) => (i < cfg.insns.count ? bciOf(cfg, i) : -1))).toEqual([0, 4, 6, 12, 14, -1]);
    expect(cfg.blockSuccessors(0)).toEqual([1, 2]);
    expect(cfg.blockSuccessors(1)).toEqual([]);
    expect(Array.from(cfg.insns.kind.subarray(0, 3))).toEqual([InsnKind.Other, InsnKind.Branch, InsnKind.Other]);
  });

  test('tableswitch and lookupswitch: default edge and one edge per case with its key', () => {
    const table = cfgOf(flow, 'table');
    const sw = table.insns.bci[table.insns.opcode.indexOf(0xaa)];
    const e = edgesOf(table, sw);
    expect(e[0].kind).toBe(EdgeKind.SwitchDefault);
    expect(e.slice(1).map((x) => [x.kind, x.key])).toEqual([1, 2, 3, 4].map((k) => [EdgeKind.SwitchCase, k]));
    expect(e[3].to).toBe(e[4].to); // case 3 and case 4 share their target
    const lookup = cfgOf(flow, 'lookup');
    const ls = lookup.insns.bci[lookup.insns.opcode.indexOf(0xab)];
    expect(edgesOf(lookup, ls).slice(1).map((x) => x.key)).toEqual([-100000, 7, 900000]);
    // the control view: from the switch straight to each arm's return
    const cv = lookup.control;
    const node = cv.nodeOfInsn[lookup.insnAt(ls)];
    const arms = [];
    for (let x = cv.start[node]; x < cv.start[node + 1]; x++) arms.push(lookup.insns.opcode[cv.insn[cv.target[x]]]);
    expect(arms).toEqual([0xac, 0xac, 0xac, 0xac]);
  });

  test('try/catch/finally: exception edges in table order with catch types, up to the first catch-any', () => {
    const cfg = cfgOf(flow, 'tryCatch');
    const m = flow.method('tryCatch', '(Ljava/lang/Object;)Ljava/lang/String;')!;
    const call = edgesOf(cfg, 1); // aload_0 at 0, invokevirtual toString at 1
    expect(cfg.insns.kind[cfg.insnAt(1)]).toBe(InsnKind.Call);
    expect(call.filter((x) => x.kind === EdgeKind.Exception).map((x) => x.type)).toEqual(['java/lang/NullPointerException', 'java/lang/RuntimeException', undefined]);
    // inside the NPE handler only the catch-any (finally) handler applies
    const npe = m.handlers[0].handlerPc;
    expect(edgesOf(cfg, npe).filter((x) => x.kind === EdgeKind.Exception).map((x) => x.type)).toEqual([undefined]);
    // handler starts are block leaders, and every handler entry is reachable in the control view
    for (const h of m.handlers) expect(cfg.insns.bci[cfg.blockFirst[cfg.blockOfInsn[cfg.insnAt(h.handlerPc)]]]).toBe(h.handlerPc);
    expect(Array.from(cfg.control.handlerEntry).every((c) => c >= 0)).toBe(true);
  });

  test('nested handlers: the inner handler first, then the outer', () => {
    const cfg = cfgOf(flow, 'nested');
    const m = flow.method('nested', '([I)I')!;
    const inner = m.handlers.find((h) => h.catchType === 'java/lang/ArrayIndexOutOfBoundsException')!;
    expect(edgesOf(cfg, inner.startPc).filter((x) => x.kind === EdgeKind.Exception).map((x) => x.type)).toEqual(['java/lang/ArrayIndexOutOfBoundsException', 'java/lang/Exception']);
    expect(edgesOf(cfg, inner.handlerPc).filter((x) => x.kind === EdgeKind.Exception).map((x) => x.type)).toEqual(['java/lang/Exception']);
  });

  test('synchronized block: monitorexit paths through the catch-any handler; throw has only handler edges', () => {
    const cfg = cfgOf(flow, 'syncBlock');
    const athrow = cfg.insns.bci[cfg.insns.opcode.lastIndexOf(0xbf)];
    expect(edgesOf(cfg, athrow).every((x) => x.kind === EdgeKind.Exception)).toBe(true);
    const thrower = cfgOf(flow, 'thrower');
    const t = thrower.insns.bci[thrower.insns.opcode.indexOf(0xbf)];
    expect(edgesOf(thrower, t)).toEqual([]);
    expect(thrower.insns.kind[thrower.insnAt(t)]).toBe(InsnKind.Throw);
  });

  test('invokedynamic is a call in the control view', () => {
    const cfg = cfgOf(flow, 'lambda');
    const i = cfg.insns.opcode.indexOf(0xba);
    expect(cfg.insns.kind[i]).toBe(InsnKind.Call);
    const cv = cfg.control;
    expect(cv.insn[cv.entry]).toBe(i);
    const next = cv.target[cv.start[cv.entry]];
    expect(cfg.insns.opcode[cv.insn[next]]).toBe(0xb0); // areturn
  });

  test('shortest paths: distances, unique paths, bounds; several switch arms to one target are one path', () => {
    const cfg = cfgOf(flow, 'table');
    const sp = new ShortestPaths(cfg.graph);
    const sw = cfg.insns.opcode.indexOf(0xaa);
    sp.run(0);
    expect(sp.distance(sw)).toBe(sw); // straight line to the switch
    expect(Array.from(sp.uniquePath(sw)!)).toEqual(Array.from({ length: sw + 1 }, (_, k) => k));
    sp.run(sw);
    const shared = cfg.graph.target[cfg.graph.start[sw] + 3];
    expect(sp.distance(shared)).toBe(1);
    expect(sp.pathCount(shared)).toBe(1);
    sp.run(0, { bound: 1 });
    expect(sp.distance(1)).toBe(1);
    expect(sp.distance(2)).toBe(-1);
  });
});

/** jsr/ret: old javac output. 0: iload_0 1: ifeq 9 4: jsr 14 7: iconst_1 8: ireturn 9: jsr 14 12: iconst_2
 * 13: ireturn 14: astore_1 15: iload_0 16: ifne 22 19: jsr 24 22: ret 1 24: astore_2 25: wide ret 2 29: athrow;
 * Exception handler [4, 8) -> 29. */
const JSR_CODE = [0x1a, 0x99, 0, 8, 0xa8, 0, 10, 0x04, 0xac, 0xa8, 0, 5, 0x05, 0xac, 0x4c, 0x1a, 0x9a, 0, 6, 0xa8, 0, 5, 0xa9, 1, 0x4d, 0xc4, 0xa9, 0, 2, 0xbf];
const jsrClass = () =>
  writeClass('Jsr', 49, [{ name: 'f', descriptor: '(I)I', maxStack: 2, maxLocals: 3, code: JSR_CODE, handlers: [{ start: 4, end: 8, handler: 29, catchType: 'java/lang/Exception' }] }]);

describe('jsr/ret (hand-written class file, version 49)', () => {
  const cf = parseClass(jsrClass());
  const m = cf.methods[0];
  const cfg = MethodCfg.build(m.code!, m.handlers, 'Jsr.f');
  const at = (bci: number) => cfg.insnAt(bci);

  test('subroutines: entries, callers, members without nested subroutines, rets', () => {
    const subs = cfg.subroutines.map((s) => ({
      entry: bciOf(cfg, s.entry),
      callers: Array.from(s.callers, (i) => bciOf(cfg, i)),
      members: Array.from(s.members, (i) => bciOf(cfg, i)),
      rets: Array.from(s.rets, (i) => bciOf(cfg, i)),
    }));
    expect(subs).toEqual([
      { entry: 14, callers: [4, 9], members: [14, 15, 16, 19, 22], rets: [22] },
      { entry: 24, callers: [19], members: [24, 25], rets: [25] },
    ]);
  });

  test('ret goes to every return site of its subroutine; jsr only to the subroutine', () => {
    expect(edgesOf(cfg, 22).map((x) => [x.to, x.kind])).toEqual([[7, EdgeKind.Ret], [12, EdgeKind.Ret]]);
    expect(edgesOf(cfg, 25).map((x) => [x.to, x.kind])).toEqual([[22, EdgeKind.Ret]]);
    expect(edgesOf(cfg, 4).map((x) => [x.to, x.kind])).toEqual([[14, EdgeKind.Jsr], [29, EdgeKind.Exception]]);
    expect(cfg.insns.kind[at(25)]).toBe(InsnKind.Jump);
    expect(checkCfg(cfg, m.code!, m.handlers)).toEqual([]);
    // leaders: 0, after branches/jsr/ret/returns, targets, the handler and its range
    expect(Array.from(cfg.blockFirst.subarray(0, cfg.blockCount), (i) => bciOf(cfg, i))).toEqual([0, 4, 7, 8, 9, 12, 14, 19, 22, 24, 29]);
  });

  test('shortest paths through ret: two equally short paths to each return site; exceptions can be left out', () => {
    const sp = new ShortestPaths(cfg.graph);
    sp.run(0);
    expect(sp.distance(at(8))).toBe(8); // 0 1 4|9 14 15 16 22 7 8
    expect(sp.pathCount(at(8))).toBe(2);
    expect(sp.uniquePath(at(8))).toBeUndefined();
    expect(Array.from(sp.path(at(29))!, (i) => bciOf(cfg, i))).toEqual([0, 1, 4, 29]);
    expect(sp.pathCount(at(29))).toBe(1);
    sp.run(0, { exceptions: false });
    expect(sp.distance(at(29))).toBe(-1);
    sp.run(at(24));
    expect(Array.from(sp.uniquePath(at(7))!, (i) => bciOf(cfg, i))).toEqual([24, 25, 22, 7]);
  });

  (jdk ? test : test.skip)('the class verifies and runs in the JVM, and javap agrees', () => {
    const dir = tempDir('jsr');
    try {
      fs.writeFileSync(path.join(dir, 'Jsr.class'), jsrClass());
      fs.writeFileSync(path.join(dir, 'Main.java'), 'public class Main { public static void main(String[] a) { System.out.println(Jsr.f(0) + "," + Jsr.f(1)); } }');
      const c = spawnSync(jdk!.javac, ['-cp', dir, '-d', dir, path.join(dir, 'Main.java')], { encoding: 'utf8' });
      expect(c.stderr).toBe('');
      const r = spawnSync(path.join(jdk!.home, 'bin', 'java'), ['-Xverify:all', '-cp', dir, 'Main'], { encoding: 'utf8' });
      expect(r.stdout.trim()).toBe('2,1');
      const listing = javap(jdk!, ['-cp', dir, 'Jsr']).get('Jsr')!;
      expect(checkAgainstJavap(cfg, listing[0])).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('a catch-any handler hides the handlers after it in the table (javac puts it last; others need not)', () => {
  // 0: nop 1: return 2: athrow 3: athrow; [0,2) any -> 2, [0,2) Exception -> 3, [1,2) Error -> 3
  const handlers = [{ startPc: 0, endPc: 2, handlerPc: 2 }, { startPc: 0, endPc: 2, handlerPc: 3, catchType: 'java/lang/Exception' }];
  const cfg = MethodCfg.build(Uint8Array.from([0x00, 0xb1, 0xbf, 0xbf]), handlers, 'M.m');
  expect(edgesOf(cfg, 0)).toEqual([{ to: 1, kind: EdgeKind.Fallthrough, key: 0, type: undefined }, { to: 2, kind: EdgeKind.Exception, key: 0, type: undefined }]);
  const reordered = MethodCfg.build(Uint8Array.from([0x00, 0xb1, 0xbf, 0xbf]), [handlers[1], handlers[0]], 'M.m');
  expect(edgesOf(reordered, 0).map((x) => x.type)).toEqual([undefined, 'java/lang/Exception', undefined]);
  expect(checkCfg(cfg, cfg.code, handlers)).toEqual([]);
});

describe('malformed code', () => {
  test('a branch into the middle of an instruction, a bad opcode, code falling off its end: CfgError with the bci', () => {
    expect(() => MethodCfg.build(Uint8Array.from([0x10, 5, 0xa7, 0xff, 0xff]), [], 'M.m')).toThrow(/M.m: bci 2: jump target 1 is not an instruction/);
    expect(() => MethodCfg.build(Uint8Array.from([0x00, 0xcb]), [], 'M.m')).toThrow(CfgError);
    expect(() => MethodCfg.build(Uint8Array.from([0x00, 0x04]), [], 'M.m')).toThrow(/bci 1: control falls off the end/);
    expect(() => MethodCfg.build(Uint8Array.from([0xb1]), [{ startPc: 0, endPc: 1, handlerPc: 3 }], 'M.m')).toThrow(/handler 3 is not an instruction/);
    const e = (() => {
      try {
        MethodCfg.build(Uint8Array.from([0x00, 0xcb]), [], 'M.m');
      } catch (x) {
        return x as CfgError;
      }
    })()!;
    expect([e.method, e.bci]).toEqual(['M.m', 1]);
  });
});
