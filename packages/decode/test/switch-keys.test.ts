/**
 * Paths that avoid bytecodes with an unseen PcDesc (SwitchKeys.path with `avoid`): C2 gives a constant arm no
 * PcDesc, so between two events the way through bytecodes whose PcDescs did not run is preferred.
 */
import { SwitchKeys, UNKNOWN } from '../src/switch-keys';

// 0 iload_0; 1 ifeq 8; 4 iconst_1; 5 istore_1; 6 iload_1; 7 ireturn; 8 iconst_2; 9 ireturn
const CODE = new Uint8Array([0x1a, 0x99, 0, 7, 0x04, 0x3c, 0x1b, 0xac, 0x05, 0xac]);

describe('paths that avoid unseen PcDescs', () => {
  const keys = SwitchKeys.plain(CODE);
  const path = (avoid: number[] | null, id: number) => Array.from(keys.path(1, -1, UNKNOWN, -1, -1, avoid && new Set(avoid), id) ?? []);

  test('without a set: the shortest way to a return', () => {
    expect(path(null, -1)).toEqual([8, 9]);
  });

  test('the shortest passes a bytecode whose PcDesc did not run: the longer way that does not is taken', () => {
    expect(path([8], 1)).toEqual([4, 5, 6, 7]);
  });

  test('both pass one: the shortest again; the endpoints do not count', () => {
    expect(path([8, 4], 2)).toEqual([8, 9]);
    expect(path([1], 3)).toEqual([8, 9]);
  });

  test('a way longer than the slack is not taken', () => {
    // 0 iload_0; 1 ifeq 14; 4..12 nine nops; 13 return; 14 iconst_0; 15 pop; 16 return
    const long = new Uint8Array([0x1a, 0x99, 0, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb1, 0x03, 0x57, 0xb1]);
    const k = SwitchKeys.plain(long);
    expect(Array.from(k.path(1, -1, UNKNOWN, -1, -1, new Set([14]), 4) ?? [])).toEqual([14, 15, 16]);
  });
});

describe('keyed switch arms ruled out', () => {
  // 0 iconst_m1; 1 istore_1; 2 iload_0; 3 ifeq 8; 6 iconst_0; 7 istore_1; 8 iload_1; 9 tableswitch {0: 28} default 30;
  // 28 iconst_1; 29 ireturn; 30 iconst_2; 31 ireturn
  const be = (v: number) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
  const CODE2 = new Uint8Array([0x02, 0x3c, 0x1a, 0x99, 0, 5, 0x03, 0x3c, 0x1b, 0xaa, 0, 0, ...be(21), ...be(0), ...be(0), ...be(19), 0x04, 0xac, 0x05, 0xac]);
  const keys = SwitchKeys.of(CODE2)!;

  test('the switch is keyed by local 1', () => {
    expect(keys.local).toBe(1);
    expect(keys.switchAt(9)).toBe(9);
  });

  test('an arm that must not be taken selects the path that leaves another constant', () => {
    expect(Array.from(keys.path(3, 9, -1, 9, -1) ?? [])).toEqual([8]);
    expect(Array.from(keys.path(3, 9, -1, 9, -2 - 30) ?? [])).toEqual([6, 7, 8]);
    expect(Array.from(keys.path(3, 9, -1, 9, 28) ?? [])).toEqual([6, 7, 8]);
  });
});
