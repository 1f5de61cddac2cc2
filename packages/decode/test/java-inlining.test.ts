/**
 * JavaEventBuilder on compiled code whose inlined frames C2 scheduled into each other (java.ts, heldNm): a
 * caller PcDesc between two PcDescs of the same inlined callee at the same call site is not an exit and a new
 * entry of the callee. And the reverse: one PcDesc of a callee among many of the caller before its call site is code
 * C2 moved up (its scope is one node's of several), not a call.
 */
import { CodeImage, EventKind, EventSource, JavaEventBuilder, SectionKind } from '../src';
import type { JvmModel, NmethodInfo } from '../src';

const BEGIN = 0x5000;
const FIB = 7;
/** straight-line code of 32 one-byte nops, a backward `jmp short` at 0x20 to 0x5004, and `ret` at 0x22 */
const CODE = new Uint8Array([...new Array(32).fill(0x90), 0xeb, 0xe2, 0xc3]);

/** An nmethod of FIB with PcDescs [pc offset, frames innermost first as [method, bci] pairs]. */
function model(pcs: [number, number[]][], code = CODE): JvmModel {
  const image = new CodeImage();
  const frames: number[] = [];
  const frameStart = [0];
  for (const [, f] of pcs) {
    frames.push(...f);
    frameStart.push(frames.length / 2);
  }
  const nm: NmethodInfo = {
    method: FIB, codeBegin: BEGIN, codeEnd: BEGIN + code.length, entry: BEGIN, verifiedEntry: BEGIN, osrEntry: -1, osrBci: -1,
    stubBegin: BEGIN + code.length, level: 4, compileId: 1, loadTsc: 0, unloadTsc: Infinity,
    pcs: Float64Array.from(pcs, ([pc]) => BEGIN + pc), frameStart: Uint32Array.from(frameStart), frames: Int32Array.from(frames),
  };
  image.nmethods.push(nm);
  image.addSection({ kind: SectionKind.Nmethod, begin: BEGIN, end: BEGIN + code.length, bytes: code, name: 'fib', validFrom: 0, validTo: Infinity, nmethod: 0, version: 0 });
  image.ranges = [{ lo: BEGIN, hi: BEGIN + 0x1000 }];
  const codelets = { begin: new Float64Array(0), end: new Float64Array(0), bytecode: new Int16Array(0), kind: new Uint8Array(0), description: [] };
  return { image, methods: new Map(), classes: new Map(), classLoadTsc: new Map(), methodRuns: new Map(), codelets, dispatch: new Map(), methodEntries: new Map(), threads: [], tscPerNs: 0, vmStartTsc: 0, vmInitEndTsc: 0, problems: [] };
}

/** Runs the blocks starting at the given offsets (each to its end) and lists the events. */
function run(m: JvmModel, starts: number[]): string[] {
  const java = new JavaEventBuilder(m);
  java.enable(BEGIN, 0);
  for (const s of starts) java.block(m.image.blockAt(BEGIN + s, 0), 0);
  const e = java.takeEvents();
  const out: string[] = [];
  for (let i = 0; i < e.length; i++) {
    const inl = e.source[i] === EventSource.Inlined ? 'inlined ' : '';
    if (e.kind[i] === EventKind.Bytecode) out.push(`${inl}bc ${e.bci[i]}`);
    else if (e.kind[i] === EventKind.Entry) out.push(`${inl}entry${e.source[i] === EventSource.Inlined ? ` @${e.aux[i] - 1}` : ''}`);
    else if (e.kind[i] === EventKind.Exit) out.push(`${inl}exit`);
  }
  return out;
}

// fib's own code at bci 2, its inlined copy at call site 12: [17 < 12], then fib@11, then [11 < 12] again
const INTERLEAVED: [number, number[]][] = [
  [2, [FIB, 2]],
  [4, [FIB, 17, FIB, 12]],
  [6, [FIB, 11]],
  [8, [FIB, 11, FIB, 12]],
  [10, [FIB, 2, FIB, 12]],
  [14, [FIB, 21]],
];

describe('inlined frames scheduled into their caller', () => {
  test('a caller PcDesc before the call site, between two of the callee at that site, is no exit and re-entry', () => {
    expect(run(model(INTERLEAVED), [0, 0x22])).toEqual([
      'entry', 'bc 2', 'inlined entry @12', 'inlined bc 17', 'inlined bc 11', 'inlined bc 2', 'inlined exit', 'bc 21', 'exit',
    ]);
  });

  test('a caller PcDesc past the call site ends the callee at once', () => {
    const pcs = INTERLEAVED.map(([pc, f]): [number, number[]] => [pc, pc === 6 ? [FIB, 15] : f]);
    expect(run(model(pcs), [0, 0x22])).toEqual([
      'entry', 'bc 2', 'inlined entry @12', 'inlined bc 17', 'inlined exit', 'bc 15', 'inlined entry @12', 'inlined bc 11', 'inlined bc 2', 'inlined exit', 'bc 21', 'exit',
    ]);
  });

  test('a jump back (a loop round) ends the wait: the callee is entered anew', () => {
    // [17 < 12] at 0x10, fib@11 at 0x12, the jump back to 0x04, [11 < 12] at 0x08 again
    const pcs: [number, number[]][] = [[8, [FIB, 11, FIB, 12]], [0x10, [FIB, 17, FIB, 12]], [0x12, [FIB, 11]]];
    expect(run(model(pcs), [0x0c, 0x04, 0x22])).toEqual([
      'inlined entry @12', 'inlined bc 17', 'inlined exit', 'bc 11', 'inlined entry @12', 'inlined bc 11', 'inlined bc 17', 'inlined exit', 'bc 11', 'exit',
    ]);
  });

  test('one callee PcDesc among many of the caller before the call site is hoisted code, not a call: taken back', () => {
    // fib@1, then one PcDesc of the callee inlined at call site 30 (a load C2 moved up), then the caller goes on
    // at bcis 3..10 (before 30), then past it at 31
    const pcs: [number, number[]][] = [[2, [FIB, 1]], [4, [FIB, 5, FIB, 30]], [6, [FIB, 3]], [8, [FIB, 4]], [10, [FIB, 6]], [12, [FIB, 8]], [14, [FIB, 10]], [16, [FIB, 31]]];
    expect(run(model(pcs), [0, 0x22])).toEqual(['entry', 'bc 1', 'bc 3', 'bc 4', 'bc 6', 'bc 8', 'bc 10', 'bc 31', 'exit']);
  });

  test('a callee with two PcDescs is a call: kept', () => {
    const pcs: [number, number[]][] = [[2, [FIB, 1]], [4, [FIB, 5, FIB, 30]], [5, [FIB, 6, FIB, 30]], [6, [FIB, 3]], [8, [FIB, 4]], [10, [FIB, 6]], [12, [FIB, 8]], [14, [FIB, 10]], [16, [FIB, 31]]];
    expect(run(model(pcs), [0, 0x22])).toContain('inlined entry @30');
  });

  test('one callee PcDesc between two of the caller before the call site, the callee not going on: taken back', () => {
    // Value.convertTo@42, convertToDate@125 inlined at call site 359 (a klass load C2 shared and moved up), @44,
    // then the flow leaves (the return)
    const pcs: [number, number[]][] = [[2, [FIB, 42]], [4, [FIB, 125, FIB, 359]], [6, [FIB, 44]]];
    expect(run(model(pcs), [0, 0x22])).toEqual(['entry', 'bc 42', 'bc 44', 'exit']);
  });

  test('tracing stopped and resumed (a safepoint trap) while caller events wait: the wait goes on, the callee is taken back', () => {
    // two blocks: 16 nops and a `jmp` to the next instruction at 0x10, then 14 nops and `ret` at 0x20
    const code = new Uint8Array([...new Array(16).fill(0x90), 0xeb, 0x00, ...new Array(14).fill(0x90), 0xc3]);
    // convertTo@42, the hoisted convertToDate@125 at call site 359, convertTo@44 twice (waiting), then after the
    // trap convertToNumeric@71 at call site 336
    const pcs: [number, number[]][] = [[2, [FIB, 42]], [4, [FIB, 125, FIB, 359]], [6, [FIB, 44]], [8, [FIB, 44]], [0x14, [FIB, 71, FIB, 336]], [0x16, [FIB, 340]]];
    const m = model(pcs, code);
    const java = new JavaEventBuilder(m);
    java.enable(BEGIN, 0);
    java.block(m.image.blockAt(BEGIN, 0), 0);
    java.disable(1);
    java.enable(BEGIN + 0x12, 2);
    java.block(m.image.blockAt(BEGIN + 0x12, 0), 2);
    const e = java.takeEvents();
    const out: string[] = [];
    for (let i = 0; i < e.length; i++) out.push(e.kind[i] === EventKind.Bytecode ? `bc ${e.bci[i]}` : e.kind[i] === EventKind.Entry ? 'entry' : e.kind[i] === EventKind.Exit ? 'exit' : `kind ${e.kind[i]}`);
    expect(out).toEqual(['entry', 'bc 42', 'bc 44', 'bc 44', 'entry', 'bc 71', 'exit', 'bc 340', 'exit']);
  });

  test('one callee PcDesc, then another callee called at an earlier bci of the caller: the first taken back', () => {
    // Value.convertTo@42, convertToDate@125 inlined at call site 359 (the hoisted klass load), then the NUMERIC
    // arm: convertToNumeric@71 inlined at call site 336 (< 359: the caller never reached 359)
    const pcs: [number, number[]][] = [[2, [FIB, 42]], [4, [FIB, 125, FIB, 359]], [6, [FIB, 71, FIB, 336]], [8, [FIB, 340]]];
    expect(run(model(pcs), [0, 0x22])).toEqual(['entry', 'bc 42', 'inlined entry @336', 'inlined bc 71', 'inlined exit', 'bc 340', 'exit']);
    // called at a later bci (the caller got past 359): a call, kept
    const later = pcs.map(([pc, f]): [number, number[]] => [pc, pc === 6 ? [FIB, 71, FIB, 400] : pc === 8 ? [FIB, 404] : f]);
    expect(run(model(later), [0, 0x22])).toEqual(['entry', 'bc 42', 'inlined entry @359', 'inlined bc 125', 'inlined exit', 'inlined entry @400', 'inlined bc 71', 'inlined exit', 'bc 404', 'exit']);
  });
});
