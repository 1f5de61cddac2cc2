import type { ExceptionHandler } from '@jportal/classfile';
import { CfgError } from './errors';
import { decodeInstructions, endsFlow, jumpTargets, type InstructionTable } from './instructions';
import { EdgeKind, InsnKind, isJsr, isRet } from './kinds';

/** A jsr subroutine: its entry, the jsrs calling it, what it runs and the rets that leave it (instruction indices). */
export interface Subroutine {
  entry: number;
  callers: Int32Array;
  /** instructions reachable from the entry on normal edges without entering a nested subroutine or passing a ret */
  members: Int32Array;
  rets: Int32Array;
}

/**
 * A successor graph on typed arrays (CSR): the edges of node n are `start[n] .. start[n+1]-1`, each with its
 * target node, EdgeKind, switch key (SwitchCase edges, else 0) and handler (index into the exception table for
 * Exception edges, else -1).
 */
export interface EdgeList {
  readonly nodeCount: number;
  readonly start: Int32Array;
  readonly target: Int32Array;
  readonly kind: Uint8Array;
  readonly key: Int32Array;
  readonly handler: Int32Array;
}

/**
 * The control-structure view: only control-flow instructions (call, return, branch, jump, switch, throw), each
 * with edges to the control-flow instructions reached next (through runs of other instructions). Edges are those
 * of the instruction graph re-targeted; exceptions raised implicitly by other instructions are not edges here
 * (a handler's first control-flow instruction is `handlerEntry`).
 */
export interface ControlView extends EdgeList {
  /** control node -> instruction index */
  readonly insn: Int32Array;
  /** instruction index -> control node, -1 for other instructions */
  readonly nodeOfInsn: Int32Array;
  /** instruction index -> the first control-flow instruction at or after it on the fallthrough path */
  readonly nextControl: Int32Array;
  /** the control node first reached from bci 0 */
  readonly entry: number;
  /** per exception-table entry: the control node first reached from its handler */
  readonly handlerEntry: Int32Array;
}

/**
 * One method's control-flow graph. Nodes of `graph` are instructions (the NFA of the paper: an edge for every
 * possible next instruction); blocks group instructions between leaders, and a block's edges are exactly the
 * edges of its last instruction (handler ranges' starts and ends are leaders too, so every instruction of a block
 * is covered by the same handlers).
 */
export class MethodCfg {
  /** instruction graph: nodes are instruction indices */
  readonly graph: EdgeList;
  readonly blockCount: number;
  /** block -> its first instruction; `blockFirst[blockCount]` = instruction count */
  readonly blockFirst: Int32Array;
  readonly blockOfInsn: Int32Array;
  readonly control: ControlView;

  private constructor(
    readonly code: Uint8Array,
    readonly handlers: readonly ExceptionHandler[],
    readonly insns: InstructionTable,
    graph: EdgeList,
    blockFirst: Int32Array,
    readonly subroutines: readonly Subroutine[],
  ) {
    this.graph = graph;
    this.blockFirst = blockFirst;
    this.blockCount = blockFirst.length - 1;
    this.blockOfInsn = new Int32Array(insns.count);
    for (let b = 0; b < this.blockCount; b++) this.blockOfInsn.fill(b, blockFirst[b], blockFirst[b + 1]);
    this.control = buildControlView(insns, graph, handlers);
  }

  /** Builds the CFG of `code` with its exception table; `method` names it in errors. Throws CfgError. */
  static build(code: Uint8Array, handlers: readonly ExceptionHandler[], method = ''): MethodCfg {
    const insns = decodeInstructions(code, method);
    const n = insns.count;
    const at = (bci: number, what: string, from: number): number => {
      const i = bci >= 0 && bci < code.length ? insns.indexOfBci[bci] : -1;
      if (i < 0) throw new CfgError(method, from, `${what} ${bci} is not an instruction`);
      return i;
    };
    // jump targets (instruction indices) and switch keys of the instructions that jump
    const jumps = new Map<number, { targets: number[]; keys: number[] }>();
    for (let i = 0; i < n; i++) {
      const bci = insns.bci[i];
      const k = insns.kind[i];
      if (k === InsnKind.Branch || k === InsnKind.Switch || (k === InsnKind.Jump && !isRet(code, bci))) {
        const keys: number[] = [];
        const targets = jumpTargets(code, bci, keys).map((t) => at(t, 'jump target', bci));
        jumps.set(i, { targets, keys });
      }
      if ((!endsFlow(k) || k === InsnKind.Branch) && i + 1 >= n) throw new CfgError(method, bci, 'control falls off the end of the code');
    }
    const hs = handlers.map((h) => {
      const start = at(h.startPc, 'handler range start', h.startPc);
      const end = h.endPc === code.length ? n : at(h.endPc, 'handler range end', h.endPc);
      if (end <= start) throw new CfgError(method, h.startPc, `empty handler range ${h.startPc}..${h.endPc}`);
      return { start, end, handler: at(h.handlerPc, 'handler', h.handlerPc), any: h.catchType === undefined };
    });
    const subroutines = findSubroutines(code, insns, jumps);
    const retTargets = new Map<number, Set<number>>();
    for (const s of subroutines) {
      for (const r of s.rets) {
        let set = retTargets.get(r);
        if (!set) retTargets.set(r, (set = new Set()));
        for (const j of s.callers) if (j + 1 < n) set.add(j + 1);
      }
    }

    // edges, two passes: count, then fill
    const start = new Int32Array(n + 1);
    const visit = (fill: boolean, cursor: Int32Array, target: Int32Array, kind: Uint8Array, key: Int32Array, handler: Int32Array) => {
      const add = (i: number, t: number, k: number, ky: number, h: number) => {
        if (fill) {
          const e = cursor[i]++;
          target[e] = t;
          kind[e] = k;
          key[e] = ky;
          handler[e] = h;
        } else start[i + 1]++;
      };
      for (let i = 0; i < n; i++) {
        const k = insns.kind[i];
        const j = jumps.get(i);
        if (k === InsnKind.Branch) {
          add(i, i + 1, EdgeKind.BranchNotTaken, 0, -1);
          add(i, j!.targets[0], EdgeKind.BranchTaken, 0, -1);
        } else if (k === InsnKind.Switch) {
          add(i, j!.targets[0], EdgeKind.SwitchDefault, 0, -1);
          for (let a = 1; a < j!.targets.length; a++) add(i, j!.targets[a], EdgeKind.SwitchCase, j!.keys[a - 1], -1);
        } else if (k === InsnKind.Jump) {
          if (j) add(i, j.targets[0], isJsr(insns.opcode[i]) ? EdgeKind.Jsr : EdgeKind.Goto, 0, -1);
          else for (const t of retTargets.get(i) ?? []) add(i, t, EdgeKind.Ret, 0, -1);
        } else if (k !== InsnKind.Return && k !== InsnKind.Throw) add(i, i + 1, EdgeKind.Fallthrough, 0, -1);
        // handlers in table order: the first catch-any one hides the rest
        for (let h = 0; h < hs.length; h++) {
          if (i < hs[h].start || i >= hs[h].end) continue;
          add(i, hs[h].handler, EdgeKind.Exception, 0, h);
          if (hs[h].any) break;
        }
      }
    };
    const none = new Int32Array(0);
    visit(false, none, none, new Uint8Array(0), none, none);
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const m = start[n];
    const graph: EdgeList = {
      nodeCount: n, start, target: new Int32Array(m), kind: new Uint8Array(m), key: new Int32Array(m), handler: new Int32Array(m),
    };
    visit(true, start.slice(0, n), graph.target as Int32Array, graph.kind as Uint8Array, graph.key as Int32Array, graph.handler as Int32Array);

    // leaders
    const leader = new Uint8Array(n + 1);
    leader[0] = 1;
    leader[n] = 1;
    for (const j of jumps.values()) for (const t of j.targets) leader[t] = 1;
    for (let i = 0; i < n; i++) if (insns.kind[i] !== InsnKind.Other && insns.kind[i] !== InsnKind.Call) leader[i + 1] = 1;
    for (const h of hs) leader[h.start] = leader[h.end] = leader[h.handler] = 1;
    const firsts: number[] = [];
    for (let i = 0; i <= n; i++) if (leader[i]) firsts.push(i);
    return new MethodCfg(code, handlers, insns, graph, Int32Array.from(firsts), subroutines);
  }

  /** instruction index of `bci`, -1 when no instruction starts there */
  insnAt(bci: number): number {
    return bci >= 0 && bci < this.code.length ? this.insns.indexOfBci[bci] : -1;
  }

  blockLast(b: number): number {
    return this.blockFirst[b + 1] - 1;
  }

  /** the block's edges as a range of `graph` edges (those of its last instruction); targets via blockOfInsn */
  blockEdgeStart(b: number): number {
    return this.graph.start[this.blockFirst[b + 1] - 1];
  }

  blockEdgeEnd(b: number): number {
    return this.graph.start[this.blockFirst[b + 1]];
  }

  /** the blocks `b` can continue in (one per edge, so a block reached by several switch arms repeats) */
  blockSuccessors(b: number): number[] {
    const out: number[] = [];
    for (let e = this.blockEdgeStart(b); e < this.blockEdgeEnd(b); e++) out.push(this.blockOfInsn[this.graph.target[e]]);
    return out;
  }

  /** the catch type of an Exception edge (undefined: catch any), or undefined for other edges */
  catchType(edge: number): string | undefined {
    const h = this.graph.handler[edge];
    return h >= 0 ? this.handlers[h].catchType : undefined;
  }
}

/**
 * Subroutine membership: from each jsr target, the instructions reachable on normal edges where a nested jsr
 * continues at its return site and a ret ends the path (the ret then belongs to the subroutine).
 */
function findSubroutines(code: Uint8Array, insns: InstructionTable, jumps: Map<number, { targets: number[] }>): Subroutine[] {
  const callersOf = new Map<number, number[]>();
  for (const [i, j] of jumps) {
    if (!isJsr(insns.opcode[i])) continue;
    const list = callersOf.get(j.targets[0]);
    if (list) list.push(i);
    else callersOf.set(j.targets[0], [i]);
  }
  if (callersOf.size === 0) return [];
  const n = insns.count;
  const seen = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  const out: Subroutine[] = [];
  for (const [entry, callers] of [...callersOf].sort((a, b) => a[0] - b[0])) {
    const mark = out.length;
    const members: number[] = [];
    const rets: number[] = [];
    let head = 0;
    let tail = 0;
    const push = (i: number) => {
      if (i < n && seen[i] !== mark) {
        seen[i] = mark;
        queue[tail++] = i;
      }
    };
    push(entry);
    while (head < tail) {
      const i = queue[head++];
      members.push(i);
      const k = insns.kind[i];
      const j = jumps.get(i);
      if (isRet(code, insns.bci[i])) rets.push(i);
      else if (isJsr(insns.opcode[i])) push(i + 1);
      else if (k === InsnKind.Branch) {
        push(i + 1);
        push(j!.targets[0]);
      } else if (j) for (const t of j.targets) push(t);
      else if (!endsFlow(k)) push(i + 1);
    }
    out.push({
      entry,
      callers: Int32Array.from(callers),
      members: Int32Array.from(members).sort(),
      rets: Int32Array.from(rets).sort(),
    });
  }
  return out;
}

function buildControlView(insns: InstructionTable, g: EdgeList, handlers: readonly ExceptionHandler[]): ControlView {
  const n = insns.count;
  const nextControl = new Int32Array(n);
  const nodeOfInsn = new Int32Array(n).fill(-1);
  let count = 0;
  for (let i = n - 1; i >= 0; i--) nextControl[i] = insns.kind[i] !== InsnKind.Other ? i : i + 1 < n ? nextControl[i + 1] : -1;
  for (let i = 0; i < n; i++) if (insns.kind[i] !== InsnKind.Other) nodeOfInsn[i] = count++;
  const insn = new Int32Array(count);
  const start = new Int32Array(count + 1);
  for (let i = 0; i < n; i++) {
    const c = nodeOfInsn[i];
    if (c < 0) continue;
    insn[c] = i;
    start[c + 1] = start[c] + (g.start[i + 1] - g.start[i]);
  }
  const m = start[count];
  const target = new Int32Array(m);
  const kind = new Uint8Array(m);
  const key = new Int32Array(m);
  const handler = new Int32Array(m);
  for (let c = 0; c < count; c++) {
    const i = insn[c];
    for (let e = g.start[i], o = start[c]; e < g.start[i + 1]; e++, o++) {
      const nc = nextControl[g.target[e]];
      target[o] = nc < 0 ? -1 : nodeOfInsn[nc];
      kind[o] = g.kind[e];
      key[o] = g.key[e];
      handler[o] = g.handler[e];
    }
  }
  const entryOf = (i: number) => (nextControl[i] < 0 ? -1 : nodeOfInsn[nextControl[i]]);
  const handlerEntry = Int32Array.from(handlers, (h) => entryOf(insns.indexOfBci[h.handlerPc]));
  return { nodeCount: count, start, target, kind, key, handler, insn, nodeOfInsn, nextControl, entry: entryOf(0), handlerEntry };
}
