import type { EdgeList } from './cfg';
import { EdgeKind } from './kinds';

export interface SearchOptions {
  /** stop at this many edges: nodes farther away stay unreached (default: no bound) */
  bound?: number;
  /** follow Exception edges (default true) */
  exceptions?: boolean;
  /** stop once every node at the distance of `to` is settled (distances beyond it are then incomplete) */
  to?: number;
}

/**
 * Breadth-first search over an EdgeList (a method's instruction graph or its control view) with every array
 * allocated once per graph: distances, the number of shortest paths (saturating at 2, so "unique" is a test) and
 * one shortest path. Results are valid until the next `run`.
 */
export class ShortestPaths {
  private readonly dist: Int32Array;
  private readonly paths: Uint8Array;
  private readonly parent: Int32Array;
  /** the last node whose paths were added to this one (several edges u -> v count once) */
  private readonly via: Int32Array;
  private readonly stamp: Int32Array;
  private readonly queue: Int32Array;
  private generation = 0;
  private source = -1;

  constructor(private readonly graph: EdgeList) {
    const n = graph.nodeCount;
    this.dist = new Int32Array(n);
    this.paths = new Uint8Array(n);
    this.parent = new Int32Array(n);
    this.via = new Int32Array(n);
    this.stamp = new Int32Array(n);
    this.queue = new Int32Array(n);
  }

  /** Searches from `from`; returns how many nodes were reached (including `from`). */
  run(from: number, options: SearchOptions = {}): number {
    const { start, target, kind } = this.graph;
    const bound = options.bound ?? 0x7fffffff;
    const exceptions = options.exceptions ?? true;
    const to = options.to ?? -1;
    const { dist, paths, parent, via, stamp, queue } = this;
    const gen = ++this.generation;
    this.source = from;
    stamp[from] = gen;
    dist[from] = 0;
    paths[from] = 1;
    parent[from] = -1;
    let head = 0;
    let tail = 0;
    queue[tail++] = from;
    while (head < tail) {
      const u = queue[head++];
      const du = dist[u];
      if (du >= bound) break;
      if (to >= 0 && stamp[to] === gen && du >= dist[to]) break;
      for (let e = start[u], end = start[u + 1]; e < end; e++) {
        if (!exceptions && kind[e] === EdgeKind.Exception) continue;
        const v = target[e];
        if (stamp[v] !== gen) {
          stamp[v] = gen;
          dist[v] = du + 1;
          paths[v] = paths[u];
          parent[v] = u;
          via[v] = u;
          queue[tail++] = v;
        } else if (dist[v] === du + 1 && via[v] !== u) {
          // (several edges u -> v, e.g. switch arms to one target, are one path between the same nodes)
          paths[v] = Math.min(2, paths[v] + paths[u]);
          via[v] = u;
        }
      }
    }
    return tail;
  }

  /** edges on a shortest path from the last run's source to `node`, -1 when not reached */
  distance(node: number): number {
    return this.stamp[node] === this.generation ? this.dist[node] : -1;
  }

  /** 0 when unreached, 1 when exactly one shortest path, 2 when several */
  pathCount(node: number): number {
    return this.stamp[node] === this.generation ? this.paths[node] : 0;
  }

  /** one shortest path, source first and `node` last; undefined when not reached */
  path(node: number): Int32Array | undefined {
    const d = this.distance(node);
    if (d < 0) return undefined;
    const out = new Int32Array(d + 1);
    for (let x = node, k = d; k >= 0; k--, x = this.parent[x]) out[k] = x;
    return out;
  }

  /** the shortest path when it is the only one, else undefined */
  uniquePath(node: number): Int32Array | undefined {
    return this.pathCount(node) === 1 ? this.path(node) : undefined;
  }

  get lastSource(): number {
    return this.source;
  }
}
