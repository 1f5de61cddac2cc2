/**
 * Ball-Larus acyclic path profiles (Ball & Larus, "Efficient path profiling", MICRO 1996) per method, from the
 * bytecode sequence of every frame the stack walker replays.
 *
 * The graph of a method: its basic blocks (@jportal/icfg MethodCfg), parallel edges between two blocks merged
 * (an observed bci sequence cannot tell two switch arms to one block apart), a virtual ENTRY with an edge to
 * block 0, a virtual EXIT with a "leave" edge from every block (a frame ends in the block of its last bytecode:
 * by a return, an athrow, or an exception propagating out of any instruction), back edges of a DFS from block 0
 * removed and each replaced as Ball and Larus do: ENTRY -> head (one per loop head) and tail -> EXIT (one per back
 * edge). NumPaths and edge values as in the paper; a path's id is the sum of its edges' values, in
 * [0, numPaths). Definitions and files: docs/contexts.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import { lineOf } from '@jportal/classfile';
import { MethodCfg } from '@jportal/icfg';
import { AnalysisMethod, EventWindow, methodKeyOf, methodLabel, Origin, PartResult, Profiled } from './model';
import { runPass, StackWalker, ThreadWalk, WalkPass } from './walk';

/** A decoded path: how it starts, its blocks, how it ends. */
export interface BlPath {
  /** starts at a loop head after a back edge (else at the method's entry, block 0) */
  fromLoop: boolean;
  blocks: number[];
  /** ends by taking the back edge to this head; -1 when it leaves the method */
  toLoopHead: number;
}

/** The Ball-Larus numbering of one method's CFG. */
export class PathNumbering {
  /** acyclic paths from ENTRY to EXIT */
  readonly numPaths: number;
  /** per block: its merged successor blocks, CSR, ascending */
  readonly succStart: Int32Array;
  readonly succBlock: Int32Array;
  /** value of the edge (DAG edge), or of the tail -> EXIT dummy that replaces it (back edge) */
  readonly succValue: Float64Array;
  readonly succBack: Uint8Array;
  /** value of each block's leave edge */
  readonly leaveValue: Float64Array;
  /** value of ENTRY -> block (0 for block 0; the dummy for a loop head; NaN otherwise) */
  readonly headValue: Float64Array;
  /** paths from each block to EXIT */
  readonly blockPaths: Float64Array;
  /** the ENTRY -> block 0 dummy's value when block 0 is itself a loop head (NaN otherwise) */
  private loopHeadValue0 = NaN;

  private constructor(readonly cfg: MethodCfg, succStart: Int32Array, succBlock: Int32Array, succBack: Uint8Array) {
    const B = cfg.blockCount;
    this.succStart = succStart;
    this.succBlock = succBlock;
    this.succBack = succBack;
    this.succValue = new Float64Array(succBlock.length);
    this.leaveValue = new Float64Array(B);
    this.headValue = new Float64Array(B).fill(NaN);
    this.blockPaths = new Float64Array(B);
    // topological order of the DAG (non-back edges) by Kahn, then numPaths in reverse
    const indeg = new Int32Array(B);
    for (let e = 0; e < succBlock.length; e++) if (!succBack[e]) indeg[succBlock[e]]++;
    const order: number[] = [];
    for (let b = 0; b < B; b++) if (indeg[b] === 0) order.push(b);
    for (let k = 0; k < order.length; k++) {
      const v = order[k];
      for (let e = succStart[v]; e < succStart[v + 1]; e++) if (!succBack[e] && --indeg[succBlock[e]] === 0) order.push(succBlock[e]);
    }
    if (order.length !== B) throw new Error('Ball-Larus: the CFG is still cyclic after removing back edges');
    for (let k = B - 1; k >= 0; k--) {
      const v = order[k];
      // out-edge order: DAG successors (ascending), leave, back-edge dummies (ascending head)
      let sum = 0;
      for (let e = succStart[v]; e < succStart[v + 1]; e++)
        if (!succBack[e]) {
          this.succValue[e] = sum;
          sum += this.blockPaths[succBlock[e]];
        }
      this.leaveValue[v] = sum;
      sum += 1;
      for (let e = succStart[v]; e < succStart[v + 1]; e++)
        if (succBack[e]) {
          this.succValue[e] = sum;
          sum += 1;
        }
      this.blockPaths[v] = sum;
    }
    // ENTRY: block 0 first, then one dummy per loop head (ascending)
    let total = this.blockPaths[0];
    this.headValue[0] = 0;
    const heads = new Uint8Array(B);
    for (let e = 0; e < succBlock.length; e++) if (succBack[e]) heads[succBlock[e]] = 1;
    for (let w = 0; w < B; w++)
      if (heads[w]) {
        if (w === 0) {
          // block 0 as a loop head: its dummy is a separate ENTRY edge after the entry edge
          this.loopHeadValue0 = total;
        } else this.headValue[w] = total;
        total += this.blockPaths[w];
      }
    this.numPaths = total;
  }

  /** the value that starts a path at loop head `w` after a back edge */
  loopStart(w: number): number {
    return w === 0 ? this.loopHeadValue0 : this.headValue[w];
  }

  /** Builds the numbering of a method's CFG; undefined when it has more than 2^53 paths. */
  static build(cfg: MethodCfg): PathNumbering | undefined {
    const B = cfg.blockCount;
    const succStart = new Int32Array(B + 1);
    const lists: number[][] = [];
    for (let b = 0; b < B; b++) {
      const s = [...new Set(cfg.blockSuccessors(b))].sort((x, y) => x - y);
      lists.push(s);
      succStart[b + 1] = succStart[b] + s.length;
    }
    const succBlock = Int32Array.from(lists.flat());
    const succBack = new Uint8Array(succBlock.length);
    // DFS from block 0 (then from blocks it does not reach), successors ascending; back edge = to a block on the stack
    const state = new Uint8Array(B);
    const dfs = (start: number) => {
      const stack = [start];
      const pos = [succStart[start]];
      state[start] = 1;
      while (stack.length) {
        const top = stack.length - 1;
        const v = stack[top];
        if (pos[top] === succStart[v + 1]) {
          state[v] = 2;
          stack.pop();
          pos.pop();
          continue;
        }
        const e = pos[top]++;
        const w = succBlock[e];
        if (state[w] === 1) succBack[e] = 1;
        else if (state[w] === 0) {
          state[w] = 1;
          stack.push(w);
          pos.push(succStart[w]);
        }
      }
    };
    dfs(0);
    for (let b = 1; b < B; b++) if (!state[b]) dfs(b);
    const p = new PathNumbering(cfg, succStart, succBlock, succBack);
    return p.numPaths <= Number.MAX_SAFE_INTEGER ? p : undefined;
  }

  /** the slot of successor `to` of block `from` (-1: no such edge) */
  slot(from: number, to: number): number {
    for (let e = this.succStart[from]; e < this.succStart[from + 1]; e++) if (this.succBlock[e] === to) return e;
    return -1;
  }

  /** the id of a path (the inverse of decode); -1 when it is not a path of this graph */
  encode(p: BlPath): number {
    if (!p.blocks.length) return -1;
    const first = p.blocks[0];
    let r = p.fromLoop ? this.loopStart(first) : first === 0 ? 0 : NaN;
    if (Number.isNaN(r)) return -1;
    for (let k = 1; k < p.blocks.length; k++) {
      const e = this.slot(p.blocks[k - 1], p.blocks[k]);
      if (e < 0 || this.succBack[e]) return -1;
      r += this.succValue[e];
    }
    const last = p.blocks[p.blocks.length - 1];
    if (p.toLoopHead < 0) return r + this.leaveValue[last];
    const e = this.slot(last, p.toLoopHead);
    return e >= 0 && this.succBack[e] ? r + this.succValue[e] : -1;
  }

  /** the path of id `id` */
  decode(id: number): BlPath | undefined {
    if (!(id >= 0 && id < this.numPaths)) return undefined;
    // ENTRY's edges: block 0 (0), then loop heads ascending
    let start = 0;
    let fromLoop = false;
    let best = 0;
    for (let w = 0; w < this.cfg.blockCount; w++) {
      const v = this.loopStart(w);
      if (!Number.isNaN(v) && v <= id && v >= best && !(w === 0 && v === 0)) {
        best = v;
        start = w;
        fromLoop = true;
      }
    }
    let r = id - best;
    const blocks = [start];
    let v = start;
    for (;;) {
      // the out edge with the greatest value <= r
      let pick = -1;
      let pickValue = -1;
      let leave = false;
      for (let e = this.succStart[v]; e < this.succStart[v + 1]; e++)
        if (this.succValue[e] <= r && this.succValue[e] > pickValue) {
          pick = e;
          pickValue = this.succValue[e];
        }
      if (this.leaveValue[v] <= r && this.leaveValue[v] > pickValue) {
        pickValue = this.leaveValue[v];
        leave = true;
      }
      r -= pickValue;
      if (leave) return { fromLoop, blocks, toLoopHead: -1 };
      if (this.succBack[pick]) return { fromLoop, blocks, toLoopHead: this.succBlock[pick] };
      v = this.succBlock[pick];
      blocks.push(v);
    }
  }
}

export interface MethodPaths {
  method: number;
  numbering?: PathNumbering;
  /** why the method has no numbering (no bytecode, CFG error, too many paths) */
  skipped?: string;
  /** path id -> times taken */
  counts: Map<number, number>;
  /** frames that ran at least one bytecode */
  frames: number;
  /** paths that could not be numbered: the frame's sequence did not start at bci 0, crossed a gap or left the CFG */
  broken: number;
  /** of those, transitions between two bytecodes that are no CFG edge */
  invalidTransitions: number;
}

interface FrameState {
  p: MethodPaths | undefined;
  cur: number;
  r: number;
  broken: boolean;
  lastInsn: number;
  started: boolean;
}

/** Path profiles of every method that ran, over all threads of `a`. */
export function profilePaths(a: Profiled): Map<number, MethodPaths> {
  return runPass(a, pathsPass(a));
}

/** profilePaths as a pass that can share its walk with others (runPasses). */
export function pathsPass(a: Profiled): WalkPass<Map<number, MethodPaths>> {
  const byMethod = new Map<number, MethodPaths>();
  const get = (m: number): MethodPaths | undefined => {
    if (m < 0) return undefined;
    let p = byMethod.get(m);
    if (!p) {
      p = { method: m, counts: new Map(), frames: 0, broken: 0, invalidTransitions: 0 };
      const info = a.methods[m].info;
      if (!info?.code) p.skipped = 'no bytecode';
      else
        try {
          p.numbering = PathNumbering.build(MethodCfg.build(info.code, info.handlers, methodKeyOf(a.methods[m])));
          if (!p.numbering) p.skipped = 'more than 2^53 paths';
        } catch (e) {
          p.skipped = (e as Error).message;
        }
      byMethod.set(m, p);
    }
    return p;
  };
  return { thread: () => replayThread(get), finish: () => byMethod };
}

/** A walk of one thread that counts its paths (into get(method)). */
function replayThread(get: (m: number) => MethodPaths | undefined): ThreadWalk {
  const frames: FrameState[] = [];
  let t: EventWindow | undefined;
  /**
   * a gap ended the last window: the depth of its stack, until the next window tells whether recovery filled it
   * (or the thread ends: its frames are closed, and their paths broken)
   */
  let gapDepth = -1;
  const breakPaths = (depth: number) => {
    for (let d = 0; d <= depth; d++) if (frames[d].started) frames[d].broken = true;
  };
  const end = (f: FrameState) => {
    if (!f.started || !f.p) return;
    f.p.frames++;
    if (f.broken || f.cur < 0 || !f.p.numbering) f.p.broken++;
    else count(f.p, f.r + f.p.numbering.leaveValue[f.cur]);
  };
  const visitor = {
    enter(w: StackWalker) {
      const f = frames[w.depth] ?? (frames[w.depth] = { p: undefined, cur: -1, r: 0, broken: false, lastInsn: -1, started: false });
      f.p = get(w.stack[w.depth]);
      f.cur = -1;
      f.r = 0;
      f.broken = false;
      f.lastInsn = -1;
      f.started = false;
    },
    exit(w: StackWalker) {
      // (only the thread's end closes frames between a window's last event and the next window)
      if (gapDepth >= 0) {
        breakPaths(gapDepth);
        gapDepth = -1;
      }
      end(frames[w.depth]);
    },
    gap(w: StackWalker, i: number) {
      // a gap recovery filled (recovered events follow) keeps the paths; otherwise every open path is broken
      if (i + 1 < t!.length) {
        if (t!.origin[i + 1] !== Origin.Recovered) breakPaths(w.depth);
      } else gapDepth = w.depth;
    },
    bytecodes(w: StackWalker, from: number, to: number) {
      // (a run in one frame: each event in turn, the frame's state in locals)
      const f = frames[w.depth];
      const p = f.p?.numbering;
      if (!p) {
        f.started = true;
        return;
      }
      const cfg = p.cfg;
      const bci = w.t.bci;
      const blockOfInsn = cfg.blockOfInsn;
      let i = from;
      if (!f.started) {
        const yi = cfg.insnAt(bci[i]);
        f.started = true;
        f.cur = yi >= 0 ? blockOfInsn[yi] : -1;
        f.lastInsn = yi;
        if (yi !== 0) f.broken = true;
        i++;
      }
      let cur = f.cur;
      let lastInsn = f.lastInsn;
      for (; i < to; i++) {
        const yi = cfg.insnAt(bci[i]);
        const yb = yi >= 0 ? blockOfInsn[yi] : -1;
        if (yi >= 0 && yi === lastInsn + 1 && yb === cur) {
          lastInsn = yi;
          continue;
        }
        const e = cur >= 0 && yb >= 0 && cfg.blockFirst[yb] === yi ? p.slot(cur, yb) : -1;
        if (e < 0) {
          if (!f.broken) f.p!.invalidTransitions++;
          f.broken = true;
        } else if (p.succBack[e]) {
          if (f.broken) f.p!.broken++;
          else count(f.p!, f.r + p.succValue[e]);
          f.r = p.loopStart(yb);
          f.broken = false;
        } else f.r += p.succValue[e];
        cur = yb;
        lastInsn = yi;
      }
      f.cur = cur;
      f.lastInsn = lastInsn;
    },
  };
  return {
    visitor,
    window: (w: EventWindow) => {
      if (gapDepth >= 0 && w.origin[0] !== Origin.Recovered) breakPaths(gapDepth);
      gapDepth = -1;
      t = w;
    },
  };
}

function count(p: MethodPaths, id: number): void {
  p.counts.set(id, (p.counts.get(id) ?? 0) + 1);
}

/** total paths counted (not broken) of a method */
export function pathTotal(p: MethodPaths): number {
  let s = 0;
  for (const c of p.counts.values()) s += c;
  return s;
}

/** "startBci-lastBci" of a block */
export function blockRange(cfg: MethodCfg, b: number): [number, number] {
  return [cfg.insns.bci[cfg.blockFirst[b]], cfg.insns.bci[cfg.blockLast(b)]];
}

function describePath(m: AnalysisMethod, p: PathNumbering, path: BlPath): string {
  const parts = path.blocks.map((b) => {
    const [s, e] = blockRange(p.cfg, b);
    const l = m.info && m.info.lineNumbers.length ? lineOf(m.info, s) : -1;
    return `${s}-${e}${l >= 0 ? ` (l.${l})` : ''}`;
  });
  const head = path.fromLoop ? 'loop: ' : '';
  const tail = path.toLoopHead >= 0 ? ` -> back to ${blockRange(p.cfg, path.toLoopHead)[0]}` : ' -> leave';
  return head + parts.join(' -> ') + tail;
}

/** Writes paths.json (every method's path counts, the top paths decoded) and paths.txt (hot methods' top paths). */
export function writePaths(a: Profiled, outDir: string, opts: { top?: number; methods?: number; paths?: Map<number, MethodPaths> } = {}): PartResult {
  const top = opts.top ?? 10;
  const profiles = [...(opts.paths ?? profilePaths(a)).values()].map((p) => ({ p, total: pathTotal(p) }));
  profiles.sort((x, y) => y.total + y.p.broken - (x.total + x.p.broken) || x.p.method - y.p.method);
  fs.mkdirSync(outDir, { recursive: true });
  const methods = profiles.map(({ p, total }) => {
    const m = a.methods[p.method];
    const sorted = [...p.counts].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    const n = p.numbering;
    return {
      method: methodKeyOf(m),
      label: methodLabel(m),
      skipped: p.skipped ?? null,
      blocks: n ? n.cfg.blockCount : 0,
      numPaths: n ? n.numPaths : 0,
      frames: p.frames,
      paths: total,
      distinctPaths: p.counts.size,
      broken: p.broken,
      invalidTransitions: p.invalidTransitions,
      ids: sorted.map((s) => s[0]),
      counts: sorted.map((s) => s[1]),
      top: n
        ? sorted.slice(0, top).map(([id, c]) => {
            const d = n.decode(id)!;
            return {
              id,
              count: c,
              fromLoop: d.fromLoop,
              blocks: d.blocks.map((b) => blockRange(n.cfg, b)),
              toLoopHead: d.toLoopHead >= 0 ? blockRange(n.cfg, d.toLoopHead)[0] : -1,
              lines: m.info && m.info.lineNumbers.length ? d.blocks.map((b) => lineOf(m.info!, blockRange(n.cfg, b)[0])) : [],
            };
          })
        : [],
    };
  });
  fs.writeFileSync(path.join(outDir, 'paths.json'), JSON.stringify({ format: 'jportal-paths', version: 1, source: a.source, methods }));
  const lines: string[] = ['# Ball-Larus acyclic paths per method: id, count, blocks (bci ranges, source lines) (docs/contexts.md)'];
  for (const { p, total } of profiles.slice(0, opts.methods ?? 50)) {
    if (!p.numbering || total + p.broken === 0) continue;
    const m = a.methods[p.method];
    lines.push('', `${methodLabel(m)}${m.signature}: ${total} paths (${p.counts.size} distinct of ${p.numbering.numPaths}), ${p.broken} broken, ${p.frames} frames`);
    const sorted = [...p.counts].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    for (const [id, c] of sorted.slice(0, top)) lines.push(`  #${id}  ${c}  ${describePath(m, p.numbering, p.numbering.decode(id)!)}`);
  }
  fs.writeFileSync(path.join(outDir, 'paths.txt'), lines.join('\n') + '\n');
  let counted = 0;
  let broken = 0;
  for (const { p, total } of profiles) {
    counted += total;
    broken += p.broken;
  }
  return {
    files: ['paths.json', 'paths.txt'],
    summary: { methods: profiles.length, paths: counted, broken, distinctPaths: profiles.reduce((s, x) => s + x.p.counts.size, 0) },
  };
}
