/** Test helpers: event sequences from arrays, a seeded PRNG, trace-like generators, and a reference DP. */
import type { EventSeq } from '../src';

export interface Ev {
  kind?: number;
  method: number;
  bci: number;
  opcode: number;
}

export function seqOf(events: Ev[]): EventSeq {
  const n = events.length;
  const s: EventSeq = { length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n) };
  events.forEach((e, i) => {
    s.kind[i] = e.kind ?? 0;
    s.method[i] = e.method;
    s.bci[i] = e.bci;
    s.opcode[i] = e.opcode;
  });
  return s;
}

/** Growable columns for building large sequences without an object per event. */
export class Builder {
  kind = new Uint8Array(1024);
  method = new Int32Array(1024);
  bci = new Int32Array(1024);
  opcode = new Int16Array(1024);
  length = 0;

  push(kind: number, method: number, bci: number, opcode: number): void {
    if (this.length === this.kind.length) {
      const grow = <T extends Uint8Array | Int32Array | Int16Array>(a: T): T => {
        const g = new (a.constructor as new (n: number) => T)(a.length * 2);
        g.set(a);
        return g;
      };
      this.kind = grow(this.kind);
      this.method = grow(this.method);
      this.bci = grow(this.bci);
      this.opcode = grow(this.opcode);
    }
    const i = this.length++;
    this.kind[i] = kind;
    this.method[i] = method;
    this.bci[i] = bci;
    this.opcode[i] = opcode;
  }

  seq(): EventSeq {
    const n = this.length;
    return { length: n, kind: this.kind.slice(0, n), method: this.method.slice(0, n), bci: this.bci.slice(0, n), opcode: this.opcode.slice(0, n) };
  }
}

/** mulberry32 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The bytecode predicate, written independently of the library: fields known on both sides agree, and there is one. */
export function bytecodeMatch(a: EventSeq, i: number, b: EventSeq, j: number): boolean {
  let known = 0;
  let agree = true;
  for (const [x, y] of [
    [a.opcode[i], b.opcode[j]],
    [a.method[i], b.method[j]],
    [a.bci[i], b.bci[j]],
  ])
    if (x >= 0 && y >= 0) {
      known++;
      agree &&= x === y;
    }
  return agree && known > 0;
}

/** Reference: the largest monotone alignment of the bytecode events, by O(N*M) dynamic programming. */
export function dpMatched(a: EventSeq, b: EventSeq): number {
  const ia = [...Array(a.length).keys()].filter((i) => a.kind[i] === 0);
  const ib = [...Array(b.length).keys()].filter((j) => b.kind[j] === 0);
  // the predicate as a table over distinct events, so that the O(N*M) loop only reads it
  const classes = (s: EventSeq, idx: number[]) => {
    const ids = new Map<string, number>();
    const first: number[] = [];
    const cls = Int32Array.from(idx, (i) => {
      const key = `${s.opcode[i]},${s.method[i]},${s.bci[i]}`;
      if (!ids.has(key)) {
        ids.set(key, first.length);
        first.push(i);
      }
      return ids.get(key)!;
    });
    return { cls, first };
  };
  const A = classes(a, ia);
  const B = classes(b, ib);
  const w = B.first.length;
  const table = new Uint8Array(A.first.length * w);
  A.first.forEach((i, x) => B.first.forEach((j, y) => (table[x * w + y] = bytecodeMatch(a, i, b, j) ? 1 : 0)));
  const ca = A.cls;
  const cb = B.cls;
  let prev = new Int32Array(ib.length + 1);
  let cur = new Int32Array(ib.length + 1);
  for (let p = 0; p < ia.length; p++) {
    const row = ca[p] * w;
    for (let q = 1; q <= ib.length; q++) cur[q] = table[row + cb[q - 1]] ? prev[q - 1] + 1 : prev[q] > cur[q - 1] ? prev[q] : cur[q - 1];
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[ib.length];
}

/**
 * A trace-like program: `blocks` straight-line blocks of 4..40 bytecodes (each a fixed run of (method, bci,
 * opcode)), executed in a random order in which some blocks repeat as loops.
 */
export function program(r: () => number, blocks: number, opcodes = 202): Ev[][] {
  const out: Ev[][] = [];
  for (let b = 0; b < blocks; b++) {
    const method = Math.floor(r() * (blocks / 4 + 1));
    const len = 4 + Math.floor(r() * 37);
    const start = Math.floor(r() * 500);
    const block: Ev[] = [];
    for (let t = 0; t < len; t++) block.push({ method, bci: start + t, opcode: Math.floor(r() * opcodes) });
    out.push(block);
  }
  return out;
}

/**
 * A trace-like truth of n bytecode events: blocks of `program(r, blocks)`, each followed by itself (a loop)
 * with probability `loop`, else by a random block.
 */
export function traceLike(r: () => number, n: number, blocks: number, loop = 0.6): EventSeq {
  const prog = program(r, blocks);
  const out = new Builder();
  let b = 0;
  while (out.length < n) {
    for (const e of prog[b]) if (out.length < n) out.push(0, e.method, e.bci, e.opcode);
    if (r() >= loop) b = Math.floor(r() * blocks);
  }
  return out.seq();
}

export interface Corruption {
  /** per truth event: deleted, substituted by junk or preceded by inserted junk, each with rate/3 */
  rate: number;
  /** truth ranges [start, length) the decoded side lacks */
  gaps?: [number, number][];
  /** [truth position, length]: junk events inserted before that truth event */
  junk?: [number, number][];
}

/**
 * The decoded side of a truth: corrupted as told, junk that matches nothing (method 1e6, opcode 250), and its
 * fields hidden in stretches as a decoder would (interpreted: opcode only; compiled: method and bci).
 * `kept` is the number of truth events left intact and in order: the exact maximum alignment, since junk
 * matches nothing.
 */
export function corrupt(r: () => number, t: EventSeq, c: Corruption): { decoded: EventSeq; kept: number } {
  const out = new Builder();
  let mode = 2;
  const emit = (m: number, b: number, o: number) => {
    if (r() < 0.0005) mode = Math.floor(r() * 3);
    if (mode === 0) out.push(0, -1, -1, o);
    else if (mode === 1) out.push(0, m, b, -1);
    else out.push(0, m, b, o);
  };
  const junk = () => emit(1_000_000 + Math.floor(r() * 1000), 0, 250);
  const inGap = new Uint8Array(t.length);
  for (const [s, len] of c.gaps ?? []) inGap.fill(1, s, s + len);
  const junkAt = new Map((c.junk ?? []).map(([at, len]) => [at, len]));
  let kept = 0;
  for (let i = 0; i < t.length; i++) {
    for (let q = junkAt.get(i) ?? 0; q > 0; q--) junk();
    if (inGap[i]) continue;
    const u = r();
    if (u < c.rate / 3) continue;
    if (u < (2 * c.rate) / 3) junk();
    if (u < c.rate && u >= (2 * c.rate) / 3) {
      junk();
      continue;
    }
    emit(t.method[i], t.bci[i], t.opcode[i]);
    kept++;
  }
  return { decoded: out.seq(), kept };
}
