/**
 * x86-64 instruction decoding for the flow layer, through iced-x86 (Rust compiled to WebAssembly; instruction
 * boundaries agree with objdump on all of libjvm's .text, see the field notes). Code is decoded once per code
 * version into basic blocks: the hot loop then follows blocks, never single instructions.
 */
import { Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic } from 'iced-x86';

/** How a basic block ends. */
export const enum BlockEnd {
  /** jcc / loop / jrcxz: one TNT bit */
  Cond = 0,
  /** jmp rel: no packet */
  Jump = 1,
  /** call rel: no packet; pushes the return address */
  Call = 2,
  /** jmp r/m: TIP */
  IndirectJump = 3,
  /** call r/m: TIP; pushes the return address */
  IndirectCall = 4,
  /** ret: TIP, or a TNT bit with return compression */
  Return = 5,
  /** the code section ends (or the next instruction starts a new block): continue at `fallthrough` */
  Next = 6,
  /** ud2, hlt, int3, invalid bytes, syscall, iret...: the flow cannot go on statically */
  Stop = 7,
  /** the last instruction runs past the end of the known bytes */
  Truncated = 8,
}

export const BLOCK_END_NAMES = ['cond', 'jump', 'call', 'indirect-jump', 'indirect-call', 'return', 'next', 'stop', 'truncated'];

/** One decoded block; the caller copies the fields into its typed arrays (no object kept per block). */
export interface DecodedBlock {
  /** Address of the first instruction. */
  start: number;
  /** Address just past the last instruction (the fall-through of a jcc, the return address of a call). */
  end: number;
  /** Address of the last instruction (the branch). */
  last: number;
  insns: number;
  kind: BlockEnd;
  /** Direct branch target (Cond, Jump, Call), else -1. */
  target: number;
}

const MAX_BLOCK_INSNS = 4096;

/**
 * Decodes basic blocks out of one code buffer mapped at `base`. Reuses one iced Decoder and Instruction.
 */
export class BlockDecoder {
  private readonly decoder: Decoder;
  private readonly insn = new Instruction();

  constructor(
    readonly bytes: Uint8Array,
    readonly base: number,
  ) {
    this.decoder = new Decoder(64, bytes, DecoderOptions.None);
  }

  /** Frees the WebAssembly-side objects. */
  free(): void {
    this.decoder.free();
    this.insn.free();
  }

  /**
   * Decodes the block starting at address `start` into `out`. A block ends at the first branch, at the end
   * of the buffer, or before `stopAt` (an address where another block must begin; -1 none).
   */
  decodeBlock(start: number, out: DecodedBlock, stopAt = -1): void {
    const d = this.decoder;
    const insn = this.insn;
    const end = this.base + this.bytes.length;
    out.start = start;
    out.target = -1;
    out.insns = 0;
    let pos = start - this.base;
    d.position = pos;
    d.ip = BigInt(start);
    for (;;) {
      if (pos >= this.bytes.length) {
        out.kind = BlockEnd.Next;
        out.end = out.last = end;
        return;
      }
      d.decodeOut(insn);
      const len = insn.length;
      const at = this.base + pos;
      if (insn.isInvalid) {
        // iced reports running out of bytes as an invalid instruction too
        out.kind = pos + 15 > this.bytes.length && this.truncatedAt(pos) ? BlockEnd.Truncated : BlockEnd.Stop;
        out.last = at;
        out.end = at;
        return;
      }
      out.insns++;
      pos += len;
      out.last = at;
      out.end = at + len;
      const fc = insn.flowControl;
      switch (fc) {
        case FlowControl.Next:
        case FlowControl.XbeginXabortXend:
          break;
        case FlowControl.ConditionalBranch:
          out.kind = BlockEnd.Cond;
          out.target = Number(insn.nearBranch64);
          return;
        case FlowControl.UnconditionalBranch:
          if (insn.isJmpShortOrNear) {
            out.kind = BlockEnd.Jump;
            out.target = Number(insn.nearBranch64);
          } else out.kind = BlockEnd.Stop; // far jmp
          return;
        case FlowControl.IndirectBranch:
          out.kind = BlockEnd.IndirectJump;
          return;
        case FlowControl.Call:
          if (insn.isCallNear) {
            out.kind = BlockEnd.Call;
            out.target = Number(insn.nearBranch64);
          } else out.kind = BlockEnd.Stop; // far call
          return;
        case FlowControl.IndirectCall:
          out.kind = BlockEnd.IndirectCall;
          return;
        case FlowControl.Return:
          // near ret only; iret/retf leave user code as we know it
          out.kind = insn.mnemonic === Mnemonic.Ret ? BlockEnd.Return : BlockEnd.Stop;
          return;
        default:
          // Interrupt (int, int3, syscall...), Exception (ud2, invalid): the flow goes on only through packets
          out.kind = BlockEnd.Stop;
          return;
      }
      if (out.insns >= MAX_BLOCK_INSNS || this.base + pos === stopAt) {
        out.kind = BlockEnd.Next;
        return;
      }
    }
  }

  /**
   * Addresses of the instructions of `[start, endAddr)`, in order (for stopping inside a block at a FUP, and for
   * per-instruction maps). Slow path: decodes again.
   */
  instructionAddresses(start: number, endAddr: number): number[] {
    const out: number[] = [];
    const d = this.decoder;
    let pos = start - this.base;
    d.position = pos;
    d.ip = BigInt(start);
    while (this.base + pos < endAddr && pos < this.bytes.length) {
      d.decodeOut(this.insn);
      if (this.insn.isInvalid) break;
      out.push(this.base + pos);
      pos += this.insn.length;
    }
    return out;
  }

  /** True when the instruction at `pos` would be valid given more bytes (it is cut by the end of the buffer). */
  private truncatedAt(pos: number): boolean {
    const padded = new Uint8Array(16);
    padded.set(this.bytes.subarray(pos, Math.min(pos + 16, this.bytes.length)));
    const d = new Decoder(64, padded, DecoderOptions.None);
    const i = d.decode();
    const r = !i.isInvalid && i.length > this.bytes.length - pos;
    i.free();
    d.free();
    return r;
  }
}
