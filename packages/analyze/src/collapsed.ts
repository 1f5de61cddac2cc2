/**
 * Collapsed ("folded") stacks for flame graphs, Brendan Gregg's format: one line per distinct stack,
 * `thread;outer.method;...;inner.method COUNT`, COUNT = bytecodes executed with that stack on top. One file over
 * all threads, the thread name as the root frame. Frames are `package.Class.method` (overloads merge), built
 * with the shared stack rules (walk.ts); bytecodes that ran outside any known frame count under `[no frame]`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { EventWindow, Kind, methodLabel, PartResult, Profiled } from './model';
import { PairMap } from './pair-map';
import { ChunkWriter } from './timeline';
import { runPass, StackWalker, ThreadWalk, WalkPass } from './walk';

/** A calling-context tree keyed by frame name. Node 0 is the root; a node's parent has a smaller index. */
export interface StackTree {
  /** frame names; `name[node]` indexes it */
  names: string[];
  count: number;
  parent: Int32Array;
  name: Int32Array;
  /** bytecodes with this node on top */
  self: Float64Array;
  /** self + all descendants */
  total: Float64Array;
}

const sanitize = (s: string): string => s.replace(/;/g, ':').replace(/[\r\n]/g, ' ');

class TreeBuilder {
  names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  /** (parent, name) -> child */
  private readonly children = new PairMap();
  count = 1;
  parent = new Int32Array(1024).fill(-1);
  name = new Int32Array(1024).fill(-1);
  self = new Float64Array(1024);

  nameId(s: string): number {
    let id = this.nameIds.get(s);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(sanitize(s));
      this.nameIds.set(s, id);
    }
    return id;
  }

  child(parent: number, name: number): number {
    let c = this.children.get(parent, name);
    if (c < 0) {
      if (this.count === this.parent.length) this.grow();
      c = this.count++;
      this.parent[c] = parent;
      this.name[c] = name;
      this.children.set(parent, name, c);
    }
    return c;
  }

  private grow(): void {
    const n = this.parent.length * 2;
    const p = new Int32Array(n);
    p.set(this.parent);
    this.parent = p;
    const m = new Int32Array(n);
    m.set(this.name);
    this.name = m;
    const s = new Float64Array(n);
    s.set(this.self);
    this.self = s;
  }

  finish(): StackTree {
    const n = this.count;
    const total = new Float64Array(n);
    for (let i = n - 1; i >= 0; i--) {
      total[i] += this.self[i];
      if (i > 0) total[this.parent[i]] += total[i];
    }
    return { names: this.names, count: n, parent: this.parent.subarray(0, n), name: this.name.subarray(0, n), self: this.self.subarray(0, n), total };
  }
}

/** The stack tree of every thread (roots: thread names), counting bytecodes. */
export function buildStackTree(a: Profiled): StackTree {
  return runPass(a, stackTreePass(a));
}

/** buildStackTree as a pass that can share its walk with others (runPasses). */
export function stackTreePass(a: Profiled): WalkPass<StackTree> {
  const b = new TreeBuilder();
  // (the names of methods the table gets later, while a trace is streamed, are added when first met)
  const methodName: number[] = a.methods.map((m) => b.nameId(methodLabel(m)));
  const unknown = b.nameId('[unknown]');
  const noFrame = b.nameId('[no frame]');
  const nameOf = (m: number): number => {
    if (m < 0 || m >= a.methods.length) return unknown;
    while (methodName.length <= m) methodName.push(b.nameId(methodLabel(a.methods[methodName.length])));
    return methodName[m];
  };
  const thread = (k: number): ThreadWalk => {
    const t = a.threads[k];
    const root = b.child(0, b.nameId(t.name || `tid ${t.tid}`));
    let nodeAt = new Int32Array(256);
    let counted = 0;
    let all = 0;
    const visitor = {
      enter(w: StackWalker) {
        const d = w.depth;
        if (d >= nodeAt.length) {
          const x = new Int32Array(nodeAt.length * 2);
          x.set(nodeAt);
          nodeAt = x;
        }
        nodeAt[d] = b.child(d > 0 ? nodeAt[d - 1] : root, nameOf(w.stack[d]));
      },
      bytecodes(w: StackWalker, from: number, to: number) {
        b.self[nodeAt[w.depth]] += to - from;
        counted += to - from;
      },
    };
    return {
      visitor,
      window: (w: EventWindow) => {
        for (let i = 0; i < w.length; i++) if (w.kind[i] === Kind.Bytecode) all++;
      },
      done: () => {
        if (all > counted) b.self[b.child(root, noFrame)] += all - counted;
      },
    };
  };
  return { thread, finish: () => b.finish() };
}

/** Children of every node, in name order (the flame graph's convention). */
export function childrenOf(tree: StackTree): { first: Int32Array; list: Int32Array } {
  const n = tree.count;
  const first = new Int32Array(n + 1);
  for (let i = 1; i < n; i++) first[tree.parent[i] + 1]++;
  for (let i = 0; i < n; i++) first[i + 1] += first[i];
  const fill = first.slice(0, n);
  const list = new Int32Array(Math.max(0, n - 1));
  for (let i = 1; i < n; i++) list[fill[tree.parent[i]]++] = i;
  for (let i = 0; i < n; i++) {
    const part = Array.from(list.subarray(first[i], first[i + 1]));
    if (part.length > 1) {
      part.sort((x, y) => (tree.names[tree.name[x]] < tree.names[tree.name[y]] ? -1 : tree.names[tree.name[x]] > tree.names[tree.name[y]] ? 1 : 0));
      list.set(part, first[i]);
    }
  }
  return { first, list };
}

export interface CollapsedResult extends PartResult {
  /** the tree the lines were written from (report.html draws its flame graph from it) */
  tree: StackTree;
}

/** Writes stacks.collapsed into outDir. */
export function writeCollapsed(a: Profiled, outDir: string, tree: StackTree = buildStackTree(a)): CollapsedResult {
  fs.mkdirSync(outDir, { recursive: true });
  const file = 'stacks.collapsed';
  const w = new ChunkWriter(path.join(outDir, file));
  const { first, list } = childrenOf(tree);
  const prefix: string[] = [];
  let lines = 0;
  // depth-first from the root, the path of names as prefix (iterative: stacks can be deep)
  const nodes: number[] = [];
  const cursor: number[] = [];
  const open = (node: number) => {
    nodes.push(node);
    cursor.push(first[node]);
    prefix.push(tree.names[tree.name[node]]);
    if (tree.self[node] > 0) {
      w.write(`${prefix.join(';')} ${tree.self[node]}\n`);
      lines++;
    }
  };
  for (let k = first[0]; k < first[1]; k++) {
    open(list[k]);
    while (nodes.length) {
      const top = nodes.length - 1;
      const node = nodes[top];
      if (cursor[top] < first[node + 1]) open(list[cursor[top]++]);
      else {
        nodes.pop();
        cursor.pop();
        prefix.pop();
      }
    }
  }
  w.close();
  return { files: [file], summary: { stacks: lines, nodes: tree.count - 1, bytecodes: tree.total[0] }, tree };
}
