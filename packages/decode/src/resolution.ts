/**
 * What HotSpot's lazy resolution of constant-pool entries tells about interpreted code. The interpreter resolves
 * the constant-pool (cache) entry an invoke, field access, checkcast, instanceof or ldc names the first time one of
 * them runs with it: its template tests whether the entry is resolved and, if not, calls InterpreterRuntime first.
 * The flow layer sees that call (a call out of the traced range, java.ts) and marks the event SLOW_PATH, or
 * RESOLVED_PATH when the template went on at once. The entry is the class's, shared by every bytecode of the class
 * that names the same constant (JDK 8-21: one cache entry per constant-pool index, HotSpot's Rewriter), so the slow
 * path says no earlier bytecode of that class naming that constant had run, in any method: what tells apart
 * methods and switch cases whose bytecodes are the same but name different constants (keyword tables, ANTLR
 * lexer rules, enum lookups).
 *
 * The VM leaves some entries unresolved on purpose, and then the slow path runs again:
 * - a put of a final field (its cache entry gets no put bytecode): puts say nothing when they run slow again;
 * - a static field of a class being initialized (by this thread: its static initializer and what it calls):
 *   getstatic running slow again is only weak evidence (more at the bytecode that ran slow before, counted);
 * - resolution that threw (a NoSuchFieldError a switch map catches).
 * Seen resolved once, an entry stays resolved: a slow path after that is impossible (STRONG).
 *
 * For JDK releases this was not checked against (22 on moved field and method entries out of the constant-pool
 * cache), and when the release is unknown, the entry is taken to be the bytecode's own (method, bci): what holds
 * whatever the sharing.
 */
import type { ClassFile } from '@jportal/classfile';
import { RESOLVED_PATH, SLOW_PATH } from './events';
import { STRONG, WEAK } from './rewrites';

/** A slow path at an entry this thread ran before (and never saw resolved): outweighs any count of weak evidence. */
export const MEDIUM = 1 << 10;

/** The newest JDK feature release whose interpreter shares one resolved entry per constant-pool index. */
const SHARED_ENTRIES_UNTIL = 21;

const LDC = 18;
const LDC_W = 19;
const GETSTATIC = 178;
const PUTSTATIC = 179;
const GETFIELD = 180;
const PUTFIELD = 181;
const INVOKEDYNAMIC = 186;
const NEW = 187;
const ANEWARRAY = 189;
const CHECKCAST = 192;
const INSTANCEOF = 193;
const MULTIANEWARRAY = 197;

const TAG_CLASS = 7;
const TAG_INTEGER = 3;
const TAG_FLOAT = 4;

/** How the entries an event names were seen, per entry. */
const SEEN_SLOW = 1;
const SEEN_RESOLVED = 2;

/** No entry (the bytecode resolves nothing: an ldc of a number). */
const NONE = -1;
const NOT_YET = -2;

export interface ResolvingMethod {
  index: number;
  code: Uint8Array | null;
  cf: ClassFile;
  loader: number;
}

/** The constant-pool entries one thread has been attributed running interpreted bytecodes with, and how. */
export class ResolvedEntries {
  /** by Method.index: the entry id of each bci (NOT_YET until asked, NONE) */
  private readonly keyOf: (Int32Array | undefined)[] = [];
  private readonly ids = new Map<string, number>();
  private seen = new Uint8Array(1024);

  constructor(
    private readonly methods: readonly ResolvingMethod[],
    javaFeature: number,
  ) {
    this.shared = javaFeature >= 8 && javaFeature <= SHARED_ENTRIES_UNTIL;
  }
  private readonly shared: boolean;

  /** The entry id the bytecode at (method mi, bci) resolves, or NONE. */
  entryOf(mi: number, bci: number): number {
    let keys = this.keyOf[mi];
    if (!keys) {
      const n = this.methods[mi].code?.length ?? 0;
      keys = this.keyOf[mi] = new Int32Array(n).fill(NOT_YET);
    }
    if (bci < 0 || bci >= keys.length) return NONE;
    let k = keys[bci];
    if (k === NOT_YET) k = keys[bci] = this.computeEntry(mi, bci);
    return k;
  }

  private computeEntry(mi: number, bci: number): number {
    const m = this.methods[mi];
    const code = m.code!;
    const op = code[bci];
    const u2 = bci + 2 < code.length ? (code[bci + 1] << 8) | code[bci + 2] : -1;
    let cp: number;
    let kind: string;
    switch (op) {
      case LDC:
      case LDC_W: {
        cp = op === LDC ? code[bci + 1] : u2;
        const tag = m.cf.constantTag(cp);
        if (tag === 0 || tag === TAG_INTEGER || tag === TAG_FLOAT) return NONE;
        kind = tag === TAG_CLASS ? 'C' : 'R';
        break;
      }
      case CHECKCAST:
      case INSTANCEOF:
      case NEW:
      case ANEWARRAY:
      case MULTIANEWARRAY:
        cp = u2;
        kind = 'C';
        break;
      case GETSTATIC:
      case GETFIELD:
        cp = u2;
        kind = 'G';
        break;
      case PUTSTATIC:
      case PUTFIELD:
        cp = u2;
        kind = 'P';
        break;
      default:
        if (op < 182 || op > INVOKEDYNAMIC) return NONE;
        cp = u2;
        kind = String(op);
    }
    if (cp <= 0) return NONE;
    // invokedynamic: an entry per call site in every release
    const key = this.shared && op !== INVOKEDYNAMIC ? `${m.loader}:${m.cf.name}#${cp}${kind}` : `@${m.index}:${bci}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      this.ids.set(key, (id = this.ids.size));
      if (id >= this.seen.length) {
        const grown = new Uint8Array(this.seen.length * 2);
        grown.set(this.seen);
        this.seen = grown;
      }
    }
    return id;
  }

  /**
   * An interpreted bytecode with event aux `aux` was attributed to (method mi, bci). anewarray and multianewarray
   * resolve their class too (their slow path is not told: they always call the VM); so does a new whose template's
   * tag test was not read.
   */
  mark(mi: number, bci: number, aux: number): void {
    const path = aux >= RESOLVED_PATH ? aux & (RESOLVED_PATH | SLOW_PATH) : 0;
    const op = this.methods[mi].code?.[bci];
    if (path === 0) {
      if (op !== NEW && op !== ANEWARRAY && op !== MULTIANEWARRAY) return;
    }
    const k = this.entryOf(mi, bci);
    if (k >= 0) this.seen[k] |= path === RESOLVED_PATH ? SEEN_RESOLVED : SEEN_SLOW;
    if (op === GETSTATIC && path === SLOW_PATH) this.slowGets.set(mi * 65536 + bci, (this.slowGets.get(mi * 65536 + bci) ?? 0) + 1);
  }
  /** getstatic bytecodes (Method.index * 65536 + bci) this thread was attributed running the slow path at: how often */
  private readonly slowGets = new Map<number, number>();

  /**
   * How much the resolution the event tells (aux) speaks against attributing it to (method mi, bci): STRONG for a
   * slow path at an entry seen resolved; MEDIUM for one at an entry run before (for a getstatic: WEAK times the runs
   * it ran slow at this very bytecode; 0 for a put:
   * the VM keeps those unresolved at times); else 0.
   */
  against(aux: number, mi: number, bci: number): number {
    const path = aux >= RESOLVED_PATH ? aux & (RESOLVED_PATH | SLOW_PATH) : 0;
    if (path === 0) return 0;
    const k = this.entryOf(mi, bci);
    if (k < 0) return 0;
    const seen = this.seen[k];
    // (a resolved entry this thread never ran says little: another thread, compiled code's run or an earlier
    // attribution to a twin may have resolved it; taken as evidence it made jython's coverage worse)
    if (path === RESOLVED_PATH) return 0;
    if (seen & SEEN_RESOLVED) return STRONG;
    if (seen === 0) return 0;
    const op = this.methods[mi].code![bci];
    // a getstatic of a class being initialized runs slow every time: weak evidence, and more where this very
    // bytecode ran slow before, the more the more often (the entry is shared with the class's other getstatics of
    // the constant: its static initializer's, which run first, may have marked every case's entry); so of switch
    // cases that differ only in which constant they read, run during the class's initialization, those run least
    // go first (h2's IntervalQualifier.valueOf, called for each of its 13 constants twice from TypeInfo's
    // initializer while IntervalQualifier's runs: the first case had been named every time, 12 lines only JaCoCo
    // covered)
    if (op === GETSTATIC) return WEAK + Math.min(this.slowGets.get(mi * 65536 + bci) ?? 0, MEDIUM - 2) * WEAK;
    return op === PUTFIELD || op === PUTSTATIC ? 0 : MEDIUM;
  }
}
