/**
 * Switches keyed by a local variable that holds a constant: javac compiles `switch (string)` into a lookupswitch
 * on the hash that stores the matching case's index into a local (`iconst_k; istore n`, `iconst_m1` before it)
 * and a second switch on that local (`iload n; tableswitch`). Compiled code folds the second switch into the
 * first and leaves no PcDesc that says which arm ran. Knowing the local's constant along a path does: this module
 * finds such switches in a method and searches paths that carry the local's value, so that completion draws the
 * arm the constant selects and not just any shortest one.
 */
import { instructionLength, successors, switchTable } from '@jportal/classfile';
import type { SwitchTable } from '@jportal/classfile';

/** The local's value is not a known constant. */
export const UNKNOWN = 0x100000000;
/** The longest path searched (as completion's MAX_FILL). */
const MAX_STEPS = 8;
/** How much longer than the first path found a path that passes fewer avoided bytecodes may be. */
const AVOID_SLACK = 4;

/** One answer of SwitchKeys.path, with its arguments, and the next entry of the same hash. */
interface MemoEntry {
  from: number;
  to: number;
  value: number;
  needAt: number;
  need: number;
  avoidId: number;
  result: Int32Array | null;
  next: MemoEntry | null;
}

/** What one method's code says about its keyed switches; `of()` gives null for methods with none. */
export class SwitchKeys {
  /** path()'s answers, by a hash of its arguments (chains of entries: a string key per call was a quarter of the
   * decode's time on compiled code) */
  private readonly memo = new Map<number, MemoEntry>();
  /** the operands of the keyed switches asked about (null: malformed) */
  private readonly tables = new Map<number, SwitchTable | null>();

  private constructor(
    readonly code: Uint8Array,
    /** the local variable tracked (the key of the method's first keyed switch) */
    readonly local: number,
    /** bci of each switch keyed by `local` -> bci of its `iload` */
    readonly loads: Map<number, number>,
  ) {}

  /** The keyed switches of a method, or null when it has none (or its code does not decode). */
  static of(code: Uint8Array): SwitchKeys | null {
    const jumpTargets = new Set<number>();
    const starts: number[] = [];
    for (let b = 0; b < code.length; ) {
      const n = instructionLength(code, b);
      if (n <= 0) return null;
      starts.push(b);
      for (const s of successors(code, b)) if (s !== b + n) jumpTargets.add(s);
      b += n;
    }
    let local = -1;
    const loads = new Map<number, number>();
    for (let k = 1; k < starts.length; k++) {
      const s = starts[k];
      if ((code[s] !== 0xaa && code[s] !== 0xab) || jumpTargets.has(s)) continue;
      const n = loadedLocal(code, starts[k - 1]);
      if (n < 0 || (local >= 0 && n !== local)) continue;
      local = n;
      loads.set(s, starts[k - 1]);
    }
    return local < 0 ? null : new SwitchKeys(code, local, loads);
  }

  /** A method's paths with no keyed switch (path() then only searches with `avoid`). */
  static plain(code: Uint8Array): SwitchKeys {
    return new SwitchKeys(code, -1, new Map());
  }

  /** The local's value after the bytecode at `bci` ran, `before` being its value before and `prev` the bytecode
   * that ran just before (-1: none known). */
  after(prev: number, bci: number, before: number): number {
    const code = this.code;
    const op = code[bci];
    if (op === 0x84 && code[bci + 1] === this.local) return before === UNKNOWN ? UNKNOWN : (before + ((code[bci + 2] << 24) >> 24)) | 0; // iinc
    // wide istore or iinc
    if (op === 0xc4) return (code[bci + 1] === 0x36 || code[bci + 1] === 0x84) && ((code[bci + 2] << 8) | code[bci + 3]) === this.local ? UNKNOWN : before;
    if (storedLocal(code, bci) !== this.local) return before;
    return prev >= 0 && prev + instructionLength(code, prev) === bci ? constantPushed(code, prev) : UNKNOWN;
  }

  /** The successor a keyed switch at `bci` takes for `value` (UNKNOWN: -1). */
  target(bci: number, value: number): number {
    if (value === UNKNOWN) return -1;
    let table = this.tables.get(bci);
    if (table === undefined) this.tables.set(bci, (table = switchTable(this.code, bci) ?? null));
    if (!table) return -1;
    for (let k = 0; k < table.keys.length; k++) if (table.keys[k] === value) return table.targets[k];
    return table.defaultTarget;
  }

  /** The keyed switch that `bci` is (or loads the key of), or -1. */
  switchAt(bci: number): number {
    if (this.loads.has(bci)) return bci;
    for (const [s, load] of this.loads) if (load === bci) return s;
    return -1;
  }

  /** The successor of the keyed switch at `s` that leads to `bci` (it, or a chain of bytecodes with one successor
   * each from it), or -1 when none or several do. */
  armTo(s: number, bci: number): number {
    let arm = -1;
    for (const t of successors(this.code, s)) {
      let b = t;
      for (let k = 0; k < MAX_STEPS && b !== bci; k++) {
        const next = successors(this.code, b);
        if (next.length !== 1) break;
        b = next[0];
      }
      if (b !== bci) continue;
      if (arm >= 0) return -1;
      arm = t;
    }
    return arm;
  }

  /**
   * The bcis strictly between `from` (-1: the method's entry, bci 0 included) and `to` (-1: the nearest return,
   * included) on the unique shortest path when the local starts as `value` (after `from` ran) and keyed switches
   * go where the local's constant sends them; `need` (when >= 0) is the successor the keyed switch `needAt`
   * must take when the path ends at it or at its load, which rules out paths leaving the local at another
   * constant (`need` <= -2: the successor -2 - need it must not take). Null when there is no such path within
   * MAX_STEPS or two differ.
   *
   * `avoid` (identified by `avoidId` for the memo): bytecodes that have a PcDesc in the compiled code the frame
   * runs, none of which was seen between `from` and `to`. When the shortest path passes some, a path up to
   * AVOID_SLACK longer that passes fewer is taken instead (the fewest, then the shortest; null if two tie): C2
   * gives a constant arm no PcDesc, so the way through no PcDesc is the way the code went.
   */
  path(from: number, to: number, value: number, needAt = -1, need = -1, avoid: ReadonlySet<number> | null = null, avoidId = -1): Int32Array | null {
    const avoidKey = avoid ? avoidId : -1;
    let h = Math.imul(from ^ 0x5bd1e995, 0x9e3779b1) ^ to;
    h = Math.imul(h ^ value, 0x85ebca6b) ^ needAt;
    h = Math.imul(h ^ need, 0xc2b2ae35) ^ avoidKey;
    const first = this.memo.get(h);
    for (let e: MemoEntry | null | undefined = first; e; e = e.next) if (e.from === from && e.to === to && e.value === value && e.needAt === needAt && e.need === need && e.avoidId === avoidKey) return e.result;
    const result = this.search(from, to, value, needAt, need, avoid);
    this.memo.set(h, { from, to, value, needAt, need, avoidId: avoidKey, result, next: first ?? null });
    return result;
  }

  private search(from: number, to: number, value: number, needAt: number, need: number, avoid: ReadonlySet<number> | null): Int32Array | null {
    const code = this.code;
    const isReturn = (b: number) => code[b] >= 0xac && code[b] <= 0xb1;
    if (to === -1 && from >= 0 && isReturn(from)) return new Int32Array(0);
    // states: bci, the local's value after it and the avoided bytecodes passed; prev: state -> previous state ('' the
    // start, '!' two ways)
    const sk = (b: number, v: number, c = 0) => `${b}:${v}:${c}`;
    const costOf = (b: number) => (avoid && b !== to && b !== from && avoid.has(b) ? 1 : 0);
    const prev = new Map<string, string>();
    const depth = new Map<string, number>();
    const accepts = (b: number, v: number) => {
      if (to === -1 ? !isReturn(b) || b === from : b !== to) return false;
      if (need === -1 || v === UNKNOWN) return true;
      return need >= 0 ? this.target(needAt, v) === need : this.target(needAt, v) !== -2 - need;
    };
    let frontier: [number, number, number][] = [];
    const visit = (b: number, v: number, c: number, p: string, d: number, next: [number, number, number][]) => {
      const k = sk(b, v, c);
      const seen = depth.get(k);
      if (seen === undefined) {
        depth.set(k, d);
        prev.set(k, p);
        next.push([b, v, c]);
      } else if (seen === d && prev.get(k) !== p) prev.set(k, '!');
    };
    if (from === -1) visit(0, this.after(-1, 0, value), costOf(0), '', 1, frontier);
    else visit(from, value, 0, '', 0, frontier);
    // the best end: fewest avoided bytecodes, then shallowest; null when two differ at the best
    let found: string | null = null;
    let foundCost = Infinity;
    let foundDepth = Infinity;
    let ambiguous = false;
    let lastDepth = MAX_STEPS;
    for (let d = from === -1 ? 1 : 0; frontier.length && d <= lastDepth; d++) {
      const next: [number, number, number][] = [];
      for (const [b, v, c] of frontier) {
        if (c > foundCost || (c === foundCost && d > foundDepth)) continue; // (no better end is reached through it)
        if (d > 0 && accepts(b, v)) {
          const k = sk(b, v, c);
          if (found === null || c < foundCost) [found, foundCost, foundDepth, ambiguous] = [k, c, d, false];
          else if (found !== k) ambiguous = true; // two ends as good
          continue;
        }
        const keyed = this.loads.has(b) && v !== UNKNOWN ? this.target(b, v) : -1;
        for (const s of successors(code, b)) {
          if (keyed >= 0 && s !== keyed) continue;
          visit(s, this.after(b, s, v), c + costOf(s), sk(b, v, c), d + 1, next);
        }
      }
      frontier = next;
      // the first end found: look on only while it passed avoided bytecodes, at most AVOID_SLACK deeper
      if (found !== null && lastDepth === MAX_STEPS) lastDepth = foundCost === 0 ? d : Math.min(MAX_STEPS + AVOID_SLACK, d + AVOID_SLACK);
    }
    if (found === null || ambiguous) return null;
    const bcis: number[] = [];
    for (let k = found; ; ) {
      const p = prev.get(k)!;
      if (p === '!') return null;
      const b = Number(k.slice(0, k.indexOf(':')));
      if (b !== to && !(from >= 0 && p === '')) bcis.push(b);
      if (p === '') break;
      k = p;
    }
    return Int32Array.from(bcis.reverse());
  }
}

/** The local an `iload` at `bci` reads, or -1. */
function loadedLocal(code: Uint8Array, bci: number): number {
  const op = code[bci];
  if (op === 0x15) return code[bci + 1];
  if (op >= 0x1a && op <= 0x1d) return op - 0x1a;
  return -1;
}

/** The local an `istore` at `bci` writes, or -1. */
function storedLocal(code: Uint8Array, bci: number): number {
  const op = code[bci];
  if (op === 0x36) return code[bci + 1];
  if (op >= 0x3b && op <= 0x3e) return op - 0x3b;
  return -1;
}

/** The int constant the bytecode at `bci` pushes (iconst_*, bipush, sipush), or UNKNOWN. */
function constantPushed(code: Uint8Array, bci: number): number {
  const op = code[bci];
  if (op >= 0x02 && op <= 0x08) return op - 0x03;
  if (op === 0x10) return (code[bci + 1] << 24) >> 24;
  if (op === 0x11) return (((code[bci + 1] << 8) | code[bci + 2]) << 16) >> 16;
  return UNKNOWN;
}
