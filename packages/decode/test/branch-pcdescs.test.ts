/**
 * PcDescs on a conditional jump labeled with the code after it (branch-pcdescs.ts), on hand-assembled x86-64.
 */
import { fallThroughPcDescs } from '../src/branch-pcdescs';

// 0 iload_0; 1 ifeq 6; 4 iconst_1; 5 ireturn; 6 iconst_0; 7 ireturn
const BYTECODE = new Uint8Array([0x1a, 0x99, 0, 5, 0x04, 0xac, 0x03, 0xac]);
const M = 3;
const BEGIN = 0x4000;
// 0 test esi, esi; 2 je 9; 4 mov eax, 1; 9 jl 0xd; 0xb xor eax, eax; 0xd ret
const CODE = new Uint8Array([0x85, 0xf6, 0x74, 0x05, 0xb8, 1, 0, 0, 0, 0x7c, 0x02, 0x31, 0xc0, 0xc3]);

function pcDescs(list: [number, number][]) {
  return {
    codeBegin: BEGIN,
    code: CODE,
    pcs: Float64Array.from(list, ([pc]) => BEGIN + pc),
    frameStart: Uint32Array.from({ length: list.length + 1 }, (_, i) => i),
    frames: Int32Array.from(list.flatMap(([, bci]) => [M, bci])),
  };
}
const codeOf = (id: number) => (id === M ? BYTECODE : undefined);

describe('PcDescs that stand for the code after their jump', () => {
  test('a jump labeled with a constant arm is flagged; a branch bytecode on a jump, or an arm on a move, is not', () => {
    // je (ends 4) as ifeq; mov (ends 9) as iconst_1; jl (ends 0xb) as iconst_0 of `iconst_0; ireturn`
    expect(Array.from(fallThroughPcDescs(pcDescs([[4, 1], [9, 4], [0xb, 6]]), codeOf, true) ?? [])).toEqual([0, 0, 1]);
  });

  test('a label whose bytecodes can branch before the return is trusted', () => {
    // the jl labeled iload_0, whose block ends in ifeq (a loop head's test, say)
    expect(fallThroughPcDescs(pcDescs([[4, 1], [0xb, 0]]), codeOf, true)).toBeUndefined();
  });

  test('without the bytecode nothing is flagged', () => {
    expect(fallThroughPcDescs(pcDescs([[0xb, 6]]), () => undefined, true)).toBeUndefined();
  });

  test('C1 code: nothing is flagged', () => {
    expect(fallThroughPcDescs(pcDescs([[4, 1], [9, 4], [0xb, 6]]), codeOf, false)).toBeUndefined();
  });

  test('a PcDesc at the end of a ret or a jmp (an exception handler starting there) is flagged, whatever its bytecode', () => {
    // 0 ret; 1 mov rsi, rax; 4 jmp short 0; 6 ret
    const code = new Uint8Array([0xc3, 0x48, 0x89, 0xc6, 0xeb, 0xfa, 0xc3]);
    const nm = { ...pcDescs([[1, 1], [4, 0], [6, 1]]), code };
    expect(Array.from(fallThroughPcDescs(nm, codeOf, true) ?? [])).toEqual([1, 0, 1]);
    expect(fallThroughPcDescs(nm, codeOf, false)).toBeUndefined();
  });
});
