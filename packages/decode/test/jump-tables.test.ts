/**
 * Arms of C2 jump tables (jump-tables.ts) on hand-assembled x86-64 dispatches of the shape C2 emits
 * (`cmp idx, n; jae default; mov r11, table; jmp [r11 + r10*8]`), against a hand-assembled tableswitch.
 */
import { jumpTableArms, switchCases } from '../src/jump-tables';

// static int f(int x) { switch (x) { case 0: return 7; case 1: return x + 1; case 2: return 5; default: return 9; } }
//  0 iload_0; 1 tableswitch (pad 2-3; default @4, low @8, high @12, offsets @16..27)
// 28 bipush 7; 30 ireturn | 31 iload_0; 32 iconst_1; 33 iadd; 34 ireturn | 35 iconst_5; 36 ireturn | 37 bipush 9; 39 ireturn
const be = (v: number) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
const BYTECODE = new Uint8Array([0x1a, 0xaa, 0, 0, ...be(37 - 1), ...be(0), ...be(2), ...be(28 - 1), ...be(31 - 1), ...be(35 - 1), 0x10, 7, 0xac, 0x1a, 0x04, 0x60, 0xac, 0x08, 0xac, 0x10, 9, 0xac]);
const METHOD = 5;
const CODE_BEGIN = 0x10000;
const CONSTS_BEGIN = 0xff00;

const u64le = (v: number) => Array.from({ length: 8 }, (_, i) => Math.floor(v / 2 ** (8 * i)) & 255);

/** The nmethod: `pieces` laid out in order; `pcAfter` names the pieces whose end carries a PcDesc (bci). */
function assemble(entries: (addrs: Map<string, number>) => number[]) {
  const pieces: [string, number[]][] = [
    ['cmp', [0x41, 0x83, 0xfa, 0x03]], // cmp r10d, 3
    ['jae', [0x73, 0x00]], // jae default (patched)
    ['mov', [0x49, 0xbb, ...u64le(CONSTS_BEGIN)]], // mov r11, table
    ['jmp', [0x43, 0xff, 0x24, 0xd3]], // jmp [r11 + r10*8]
    ['arm0', [0xb8, 7, 0, 0, 0]], // mov eax, 7
    ['ret0', [0xc3]],
    ['arm1', [0x89, 0xf0]], // mov eax, esi
    ['inc', [0xff, 0xc0]], // inc eax (PcDesc: iadd)
    ['ret1', [0xc3]],
    ['arm2', [0xb8, 5, 0, 0, 0]], // mov eax, 5
    ['ret2', [0xc3]],
    ['dflt', [0xb8, 9, 0, 0, 0]], // mov eax, 9
    ['ret3', [0xc3]],
  ];
  const addrs = new Map<string, number>();
  const ends = new Map<string, number>();
  let at = CODE_BEGIN;
  for (const [name, bytes] of pieces) {
    addrs.set(name, at);
    at += bytes.length;
    ends.set(name, at);
  }
  const code = new Uint8Array(pieces.flatMap(([, b]) => b));
  code[addrs.get('jae')! - CODE_BEGIN + 1] = addrs.get('dflt')! - ends.get('jae')!;
  const pcList: [number, number][] = [
    [ends.get('jmp')!, 1],
    [ends.get('inc')!, 33],
  ];
  const frameStart = new Uint32Array(pcList.length + 1);
  const frames = new Int32Array(pcList.length * 2);
  pcList.forEach(([, bci], i) => {
    frameStart[i] = i;
    frames[2 * i] = METHOD;
    frames[2 * i + 1] = bci;
  });
  frameStart[pcList.length] = pcList.length;
  const consts = new Uint8Array(entries(addrs).flatMap(u64le));
  return {
    addrs,
    ends,
    input: { codeBegin: CODE_BEGIN, stubBegin: at, code, consts: { begin: CONSTS_BEGIN, bytes: consts }, pcs: Float64Array.from(pcList, (p) => p[0]), frameStart, frames },
  };
}

const codeOf = (id: number) => (id === METHOD ? BYTECODE : undefined);
const armsOf = (input: Parameters<typeof jumpTableArms>[0]) => new Map(jumpTableArms(input, codeOf).map((a) => [a.pc, a.frames]));

describe('jump-table arms', () => {
  test('switchCases reads a tableswitch', () => {
    const c = switchCases(BYTECODE, 1)!;
    expect([c.targetOf(0), c.targetOf(1), c.targetOf(2), c.targetOf(3), c.targetOf(-1)]).toEqual([28, 31, 35, 37, 37]);
    expect(c.targets).toEqual([28, 31, 35]);
    expect(switchCases(BYTECODE, 0)).toBeUndefined();
  });

  test('each entry gets its case, and the range check the default', () => {
    const { input, ends } = assemble((a) => [a.get('arm0')!, a.get('arm1')!, a.get('arm2')!]);
    const arms = armsOf(input);
    expect(arms.get(ends.get('arm0')!)).toEqual([METHOD, 28]);
    expect(arms.get(ends.get('arm1')!)).toEqual([METHOD, 31]);
    expect(arms.get(ends.get('arm2')!)).toEqual([METHOD, 35]);
    expect(arms.get(ends.get('dflt')!)).toEqual([METHOD, 37]);
    expect(arms.size).toBe(4);
  });

  test('a table that starts at another key is placed by the arm whose code has a PcDesc', () => {
    // C2 left key 0 to a compare: the table holds keys 1 and 2 (iadd's PcDesc places entry 0 at key 1)
    const { input, ends } = assemble((a) => [a.get('arm1')!, a.get('arm2')!]);
    const arms = armsOf(input);
    expect(arms.get(ends.get('arm1')!)).toEqual([METHOD, 31]);
    expect(arms.get(ends.get('arm2')!)).toEqual([METHOD, 35]);
    expect(arms.has(ends.get('arm0')!)).toBe(false);
  });

  test('one block for two arms (merged by C2) gets nothing; nor does a table with no anchor', () => {
    const merged = assemble((a) => [a.get('arm0')!, a.get('arm1')!, a.get('arm0')!]);
    const arms = armsOf(merged.input);
    expect(arms.has(merged.ends.get('arm0')!)).toBe(false);
    expect(arms.get(merged.ends.get('arm1')!)).toEqual([METHOD, 31]);
    // no entry reaches a PcDesc: which key the table starts at is unknown
    const blind = assemble((a) => [a.get('arm0')!, a.get('arm2')!]);
    expect(armsOf(blind.input).size).toBe(0);
  });

  test('without the switch\'s bytecode or constants nothing is added', () => {
    const { input } = assemble((a) => [a.get('arm0')!, a.get('arm1')!, a.get('arm2')!]);
    expect(jumpTableArms(input, () => undefined)).toEqual([]);
    expect(jumpTableArms({ ...input, consts: { begin: 0, bytes: new Uint8Array(0) } }, codeOf)).toEqual([]);
  });
});
