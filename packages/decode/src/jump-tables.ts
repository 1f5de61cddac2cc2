/**
 * Switch arms reached through C2's jump tables. C2 compiles a dense switch into an indirect jump through a table
 * of absolute code addresses in the nmethod's constants section (`mov base, table; ...; jmp [base + index]`).
 * The arms often have no PcDesc of their own (`return 7` is `mov eax, 7; jmp`), so the flow layer saw the switch
 * and then nothing that said which arm ran. With the constants section recorded (format 1.3), each table entry
 * is matched to its case, and the entry's first instruction gets a PcDesc naming the case's target bci with the
 * switch's inlining chain: when the jump lands there, the flow layer emits the arm's event like any other.
 *
 * Which case an entry stands for: C2 indexes a table from the lowest key it covers, which its code may have moved
 * (ranges peeled off by profile, or handled by compares). So the offset is not read from the code but solved from
 * the entries whose code reaches a PcDesc of the switch's method (an arm that computes something has one): the
 * one key offset that puts every such entry in its arm. Entries several arms share (C2 merged identical arms),
 * and code other branches also reach, get nothing: a PcDesc there would claim more than the jump shows. A direct
 * branch of the dispatch to a block no table entry names is the switch's range check: the default arm.
 */
import { switchTable } from '@jportal/classfile';
import { Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register } from 'iced-x86';

/** A PcDesc to add: its pc, and its frames as (method, bci) pairs, innermost first. */
export interface AddedPcDesc {
  pc: number;
  frames: number[];
}

/** What jumpTableArms needs of an nmethod. */
export interface JumpTableInput {
  codeBegin: number;
  /** end of the instructions (the stub section begins) */
  stubBegin: number;
  code: Uint8Array;
  consts: { begin: number; bytes: Uint8Array };
  pcs: Float64Array;
  frameStart: Uint32Array;
  frames: Int32Array;
}

/** how far before the indirect jump its table's address and range check are looked for (instructions) */
const DISPATCH_WINDOW = 12;

/** A switch's cases: the target bci of a key, the default's, and the distinct case targets in order. */
export interface SwitchCases {
  targetOf(key: number): number;
  readonly defaultTarget: number;
  /** case targets (default excluded unless a case shares it), ascending */
  readonly targets: number[];
  /** keys per target */
  keysOf(target: number): number[];
}

/** The cases of the tableswitch or lookupswitch at `bci`, or undefined (another instruction, or cut short). */
export function switchCases(code: Uint8Array, bci: number): SwitchCases | undefined {
  const table = switchTable(code, bci);
  if (!table || table.keys.length > 0x10000) return undefined;
  const defaultTarget = table.defaultTarget;
  const byKey = new Map<number, number>();
  for (let k = 0; k < table.keys.length; k++) if (!byKey.has(table.keys[k])) byKey.set(table.keys[k], table.targets[k]);
  const keys = new Map<number, number[]>();
  for (const [k, t] of byKey) {
    let l = keys.get(t);
    if (!l) keys.set(t, (l = []));
    l.push(k);
  }
  return {
    targetOf: (key) => byKey.get(key) ?? defaultTarget,
    defaultTarget,
    targets: [...keys.keys()].sort((a, b) => a - b),
    keysOf: (t) => keys.get(t) ?? [],
  };
}

/** One instruction of the linear sweep. */
interface Insn {
  at: number;
  len: number;
  /** control never goes on to the next instruction (jmp, ret, hlt, ud2) */
  noFallThrough: boolean;
  /** direct branch target, else -1 */
  target: number;
  conditional: boolean;
  /** je/jne: a test for one value (C2 peeling a frequent case), not a range check */
  equality: boolean;
  /** indirect jmp through memory [base + index*scale]: the base register, else Register.None */
  jumpBase: Register;
  /** mov reg64, imm64: the register and value; else Register.None */
  movReg: Register;
  movImm: number;
  /** lea reg, [rip + d]: the register and address */
  leaReg: Register;
  leaAddr: number;
}

function sweep(code: Uint8Array, begin: number, end: number): Insn[] {
  const out: Insn[] = [];
  const d = new Decoder(64, code.subarray(0, end - begin), DecoderOptions.None);
  const insn = new Instruction();
  try {
    d.ip = BigInt(begin);
    while (d.canDecode) {
      d.decodeOut(insn);
      const at = Number(insn.ip);
      if (insn.isInvalid) {
        out.push({ at, len: insn.length || 1, noFallThrough: true, target: -1, conditional: false, equality: false, jumpBase: Register.None, movReg: Register.None, movImm: 0, leaReg: Register.None, leaAddr: 0 });
        continue;
      }
      const fc = insn.flowControl;
      const x: Insn = {
        at,
        len: insn.length,
        noFallThrough: fc === FlowControl.UnconditionalBranch || fc === FlowControl.IndirectBranch || fc === FlowControl.Return || fc === FlowControl.Exception || fc === FlowControl.Interrupt || insn.mnemonic === Mnemonic.Hlt,
        target: -1,
        conditional: fc === FlowControl.ConditionalBranch,
        equality: insn.mnemonic === Mnemonic.Je || insn.mnemonic === Mnemonic.Jne,
        jumpBase: Register.None,
        movReg: Register.None,
        movImm: 0,
        leaReg: Register.None,
        leaAddr: 0,
      };
      if ((fc === FlowControl.ConditionalBranch || fc === FlowControl.UnconditionalBranch) && (insn.isJccShortOrNear || insn.isJmpShortOrNear)) x.target = Number(insn.nearBranch64);
      if (fc === FlowControl.IndirectBranch && insn.op0Kind === OpKind.Memory && insn.memoryIndex !== Register.None) x.jumpBase = insn.memoryBase;
      if (insn.mnemonic === Mnemonic.Mov && insn.op0Kind === OpKind.Register && insn.op1Kind === OpKind.Immediate64) {
        x.movReg = insn.op0Register;
        x.movImm = Number(insn.immediate64);
      }
      if (insn.mnemonic === Mnemonic.Lea && insn.op0Kind === OpKind.Register && insn.isIpRelMemoryOperand) {
        x.leaReg = insn.op0Register;
        x.leaAddr = Number(insn.ipRelMemoryAddress);
      }
      out.push(x);
    }
  } finally {
    d.free();
    insn.free();
  }
  return out;
}

/**
 * The PcDescs to add to one nmethod for the arms of its jump tables (none when it has no constants section, no
 * table, or nothing certain). `codeOf(method id)` gives a method's bytecode.
 */
export function jumpTableArms(nm: JumpTableInput, codeOf: (method: number) => Uint8Array | undefined): AddedPcDesc[] {
  const { consts } = nm;
  if (consts.bytes.length < 8) return [];
  const insnEnd = Math.min(nm.stubBegin, nm.codeBegin + nm.code.length);
  const insns = sweep(nm.code, nm.codeBegin, insnEnd);
  const indexAt = new Map<number, number>();
  insns.forEach((x, i) => indexAt.set(x.at, i));
  const branchedTo = new Map<number, number[]>(); // target -> indices of the direct branches to it
  insns.forEach((x, i) => {
    if (x.target < 0) return;
    let l = branchedTo.get(x.target);
    if (!l) branchedTo.set(x.target, (l = []));
    l.push(i);
  });
  const pcIndex = new Map<number, number>();
  for (let k = 0; k < nm.pcs.length; k++) pcIndex.set(nm.pcs[k], k);
  const view = new DataView(consts.bytes.buffer, consts.bytes.byteOffset, consts.bytes.byteLength);
  const constsEnd = consts.begin + consts.bytes.length;
  const inCode = (a: number) => a >= nm.codeBegin && a < insnEnd && indexAt.has(a);

  // every table's start, so that one table's read stops where the next begins
  const jumps: { at: number; table: number }[] = [];
  insns.forEach((x, i) => {
    if (x.jumpBase === Register.None) return;
    for (let j = i - 1; j >= 0 && j >= i - DISPATCH_WINDOW; j--) {
      const y = insns[j];
      const a = y.movReg === x.jumpBase ? y.movImm : y.leaReg === x.jumpBase ? y.leaAddr : -1;
      if (a >= 0) {
        if (a >= consts.begin && a + 8 <= constsEnd) jumps.push({ at: i, table: a });
        return;
      }
      if (y.noFallThrough) return;
    }
  });
  const starts = jumps.map((j) => j.table).sort((a, b) => a - b);

  const added = new Map<number, AddedPcDesc | null>(); // pc -> what to add (null: claimed twice differently)
  const framesOf = (k: number) => Array.from(nm.frames.subarray(nm.frameStart[k] * 2, nm.frameStart[k + 1] * 2));
  const sameChain = (k: number, chain: number[]) => {
    const f = framesOf(k);
    if (f.length !== chain.length || f[0] !== chain[0]) return false;
    for (let q = 2; q < f.length; q++) if (f[q] !== chain[q]) return false;
    return true;
  };

  for (const { at: ji, table } of jumps) {
    // the switch: a PcDesc of the dispatch (the jump's own, or one just before it) at a tableswitch/lookupswitch
    let chain: number[] | undefined;
    let cases: SwitchCases | undefined;
    for (let j = ji; j >= 0 && j > ji - DISPATCH_WINDOW && !cases; j--) {
      const k = pcIndex.get(insns[j].at + insns[j].len);
      if (k === undefined || nm.frameStart[k + 1] <= nm.frameStart[k]) continue;
      const f = framesOf(k);
      const code = codeOf(f[0]);
      const c = code && f[1] >= 0 && f[1] < code.length ? switchCases(code, f[1]) : undefined;
      if (c) [chain, cases] = [f, c];
    }
    if (!chain || !cases) continue;
    const switchBci = chain[1];
    // the entries, up to the next table or the first value that is not an instruction of this code
    const next = starts.find((s) => s > table) ?? constsEnd;
    const entries: number[] = [];
    for (let a = table; a + 8 <= Math.min(next, constsEnd) && entries.length <= 0x10000; a += 8) {
      const v = Number(view.getBigUint64(a - consts.begin, true));
      if (!inCode(v)) break;
      entries.push(v);
    }
    if (entries.length === 0) continue;
    // the arm an entry's own code is in, where it reaches a PcDesc of the switch's frame before leaving
    const armOfBci = (b: number) => {
      let arm = -1;
      for (const t of cases!.targets) if (t > switchBci && t <= b) arm = t;
      if (cases!.defaultTarget > switchBci && cases!.defaultTarget <= b && cases!.defaultTarget > arm) arm = cases!.defaultTarget;
      return arm;
    };
    const anchorOf = (entry: number): number => {
      for (let i = indexAt.get(entry)!; i < insns.length; i++) {
        const x = insns[i];
        const k = pcIndex.get(x.at + x.len);
        if (k !== undefined && sameChain(k, chain!)) return armOfBci(nm.frames[nm.frameStart[k] * 2 + 1]);
        if (k !== undefined || x.noFallThrough || x.conditional) return -1;
      }
      return -1;
    };
    // the key offset that puts every anchored entry in its arm
    let offsets: Set<number> | undefined;
    entries.forEach((e, i) => {
      const arm = anchorOf(e);
      if (arm < 0 || (arm === cases!.defaultTarget && cases!.keysOf(arm).length === 0)) return;
      const here = new Set(cases!.keysOf(arm).map((key) => key - i));
      offsets = offsets ? new Set([...offsets].filter((o) => here.has(o))) : here;
    });
    if (!offsets || offsets.size !== 1) continue;
    const lo = [...offsets][0];
    const claim = (entry: number, target: number) => {
      const x = insns[indexAt.get(entry)!];
      const pc = x.at + x.len;
      if (pcIndex.has(pc)) return; // its own PcDesc says what it is
      const frames = chain!.slice();
      frames[1] = target;
      const prev = added.get(pc);
      if (prev === undefined) added.set(pc, { pc, frames });
      else if (prev && prev.frames[1] !== target) added.set(pc, null);
    };
    // the dispatch: the straight-line run of code that ends in the jump
    let dispatchFrom = ji;
    while (dispatchFrom > 0 && dispatchFrom > ji - DISPATCH_WINDOW && !insns[dispatchFrom - 1].noFallThrough) dispatchFrom--;
    // an entry's block must be reached only through the table (no fall-through into it, no branch to it but the
    // dispatch's own range check)
    const onlyByDispatch = (entry: number) => {
      const i = indexAt.get(entry)!;
      if (i > 0 && !insns[i - 1].noFallThrough) return false;
      return (branchedTo.get(entry) ?? []).every((b) => b >= dispatchFrom && b < ji);
    };
    const targetOfEntry = new Map<number, number>();
    let consistent = true;
    entries.forEach((e, i) => {
      const t = cases!.targetOf(lo + i);
      const seen = targetOfEntry.get(e);
      if (seen !== undefined && seen !== t) targetOfEntry.set(e, -1);
      else if (seen === undefined) targetOfEntry.set(e, t);
      const anchor = anchorOf(e);
      if (anchor >= 0 && anchor !== armOfBci(t)) consistent = false;
    });
    if (!consistent) continue;
    for (const [e, t] of targetOfEntry) if (t >= 0 && onlyByDispatch(e)) claim(e, t);
    // the range check: an inequality branch of the dispatch to a block no entry names goes to the default arm
    for (let j = dispatchFrom; j < ji; j++) {
      const x = insns[j];
      if (!x.conditional || x.equality || targetOfEntry.has(x.target) || !inCode(x.target)) continue;
      const anchor = anchorOf(x.target);
      if (anchor >= 0 && anchor !== armOfBci(cases.defaultTarget)) continue;
      if (onlyByDispatch(x.target)) claim(x.target, cases.defaultTarget);
    }
  }
  return [...added.values()].filter((a): a is AddedPcDesc => a !== null);
}
