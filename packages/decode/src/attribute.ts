/**
 * Interpreted frames: which method and bci each interpreted bytecode event belongs to.
 *
 * PT shows the interpreter's dispatches (opcodes) and its method entries, not which method runs. This pass keeps
 * a stack of interpreted frames and, for each, the set of (method, bci) states consistent with the opcodes seen
 * so far (an NFA over the methods' bytecode, JVMS successors, from @jportal/classfile):
 * - an entry right after an invoke in a known frame (or in compiled code, a c2i call) starts a frame whose
 *   candidates are the invoke's resolved target (static/special) or every method with that name and descriptor
 *   (virtual/interface); an entry with no known call site (thread start, an upcall from the VM) starts a
 *   frame whose candidates are all methods, narrowed by their first opcodes;
 * - each opcode advances every state to the successors holding that opcode; when the states of a frame agree,
 *   the pending events of that frame get their method and bci through back-pointers (ambiguity is resolved
 *   by what follows, never guessed); an opcode no state allows is an exception: the handler that covers a
 *   state of this frame or a caller and starts with that opcode; otherwise the frame is lost (left -1);
 * - a return opcode ends the frame (an `exit` event is added), native and intrinsic entries are entered and
 *   left at once, gaps forget the stack, OSR migration ends the interpreted frame.
 * Method ids of methods that no METHOD record named are added to the model (after the largest recorded id).
 *
 * The pass runs once per event of long streams, so it allocates nothing per event: states are indices into
 * typed arrays (state-pool.ts, compacted between events), frames are reused by depth, successors and call sites
 * are memoized per method (successor-table.ts, MethodUniverse.callSite), and the thousands of states of a search
 * frame's first opcodes are computed once per opcode sequence (search-trie.ts).
 */
import { ClassFile, ExceptionHandler, parseClass } from '@jportal/classfile';
import type { MethodRun } from '@jportal/format';
import { BytecodeForm, EventKind, EventSource, EventStream, FORM_MASK } from './events';
import { ENTRY_CLASS_MASK, ENTRY_FROM_VM, EntryClass } from './java';
import { EnteredMethods, extraLocals, parameterLetters } from './method-entry';
import { PartReader } from './part-reader';
import { JvmModel } from './load';
import { SuccessorTable } from './successor-table';
import { KeySet, StatePool, StateRoots } from './state-pool';
import { edgeKey, SearchNode, switchEdgeKey } from './search-trie';
import { collectOpcodes, FitWalk, isIfOpcode, isReturn, isSwitchOpcode, LOOKAHEAD_MAX, LOOKAHEAD_SPAN, outcomeAllows } from './lookahead';
import { endFormSaysNeverRan, RanBytecodes, STRONG } from './rewrites';
import { ResolvedEntries } from './resolution';

const ACC_STATIC = 0x0008;
const ACC_NATIVE = 0x0100;
const ACC_INTERFACE = 0x0200;
const NEW = 187;
const ACC_ABSTRACT = 0x0400;
/** more live states than this in one frame: the frame is given up (pathological ambiguity) */
const MAX_STATES = 50_000;
/** How many events of a candidate's chain chainEvidence reads back. */
const CHAIN_EVIDENCE_MAX = 4096;

/** rankOf of a static initializer the VM is running for the caller's instruction: below it, the ranks of those (the
 * VM's own rules: an implicit exception's constructors rank -Infinity). */
const INITIALIZING_RANK = -1e303;
/** rankOf of an instance method of a class with no object made in this thread yet: after every other known rank. */
const UNCONSTRUCTED_RANK = 5e298;
/** Past this many candidates, a frame's ambiguous end is chosen without chainEvidence. */
const CHAIN_EVIDENCE_CANDIDATES = 64;
/** deepest inlining chain of compiled code kept (deeper inlined frames are not resumed as callers at a deopt) */
const MAX_CHAIN = 64;
/** a frame started from a call site's candidates is read again by search only within its first opcodes */
const REPLAY_MAX = 32;
/**
 * Events attribution holds unsettled, per thread, before flushSettled releases the frame below the top that pins
 * them (EVENT_BYTES, 28, each; up to twice that with the stream's growth: 120-240 MB).
 */
const HELD_MAX = 1 << 22;
/** after lost data, frames at most this far below the top may be the one that goes on (resumeChoice) */
const RESUME_DEPTH = 8;
/** of a frame with several states, the first this many are tried as going on after lost data */
const RESUME_STATES = 64;
/** a frame we could not follow is taken up again only by a reading that runs at least this many opcodes to come */
const RESUME_MIN = 4;
/** how many methods taken for the outermost frame (and returned) are remembered */
const OUTERMOST_KEPT = 4;
/** a frame no stack reading takes up again may be found among all methods: by at least this many opcodes to come, */
const GLOBAL_MIN = 8;
/** searching at most this many methods (those holding the rarest of the opcodes), */
const GLOBAL_SCAN = 4096;
/** and taken when at most this many methods run them all */
const GLOBAL_METHODS = 8;
/** tries of that search after each resume before they thin out to one in 64 */
const GLOBAL_EAGER = 16;
/** a search frame keeps to the shared trie (search-trie.ts) while it has more states than this */
const OWN_STATES_AT = 32;
/** at most this many states are kept in a thread's search trie (beyond, new nodes serve one frame only) */
const TRIE_BUDGET = 1 << 23;

/** A method of a recorded class. */
export interface Method {
  id: number;
  /** position in MethodUniverse.methods: tells Method objects apart in typed arrays (ids could repeat) */
  index: number;
  code: Uint8Array | null;
  handlers: ExceptionHandler[];
  native: boolean;
  cf: ClassFile;
  loader: number;
  /** the successors of its instructions, once asked for (MethodUniverse.successors) */
  succ: SuccessorTable | null;
  /** TSC of its class's CLASS record (-Infinity: unknown) */
  loadTsc: number;
  /** whether it is a static initializer (runs once per class) */
  clinit: boolean;
  /** the VM said at its death that the interpreter never entered it (METHOD_RUNS: counted no entry of it) */
  neverRan: boolean;
  /**
   * How many entries of it the VM counted in the whole run, in all threads (METHOD_RUNS: every interpreted entry,
   * and those of profiling compiled code; 0 when its class is listed and it is not); -1 when not known. No thread's
   * trace holds more interpreted entries of it.
   */
  vmEntries: number;
  /** its bytecodes as the VM had them at its death (METHOD_RUNS; rewritten where the interpreter ran them), or null */
  endCode: Uint8Array | null;
  /** whether it is a constructor */
  init: boolean;
  /** its descriptor, e.g. `(J[BI)J` */
  descriptor: string;
  /** whether it is static */
  isStatic: boolean;
  /** the locals the interpreter clears when it enters it: max_locals beyond its parameters' slots */
  extraLocals: number;
}

/** What an interpreted entry right after an invoke may start (MethodUniverse.callSite). */
export interface CallSite {
  /** the methods the invoke may call, distinct, in the order of invokeTargets */
  targets: readonly Method[];
  /**
   * the candidates of the frame the entry starts: the targets, then (for an invokestatic) the static
   * initializers the VM may run first. Targets come first: an ambiguous end takes the first state.
   */
  candidates: readonly Method[];
}

export interface AttributionStats {
  /** interpreted bytecode events */
  interpreted: number;
  /** of which the method is known */
  withMethod: number;
  /** of which method and bci are known */
  withBci: number;
  /** frames started by a search over all methods (no known call site) */
  searched: number;
  /** frames given up (no method fits the opcodes) */
  lostFrames: number;
  /** frames ended while more than one state was still possible (the first was taken) */
  ambiguousEnds: number;
  /** opcodes explained by an exception handler */
  handlers: number;
  /** frames picked up again after events went missing (a caller went on, or the method at another bci) */
  resynced: number;
  /**
   * frames that held more than the held-events budget unsettled (a bottom frame whose method stays ambiguous
   * while its callees run the whole program): their events from before were handed on as they stood, the frame's
   * own bytecodes among them without a method unless all its candidates agreed (Attribution.flushSettled)
   */
  released: number;
}

/** Method.vmEntries from its class's METHOD_RUNS map and its own entry there (-1 when the class is not listed). */
function vmEntriesOf(runs: ReadonlyMap<string, MethodRun> | undefined, run: MethodRun | undefined): number {
  if (!runs) return -1;
  return run?.invocations ?? 0;
}

/** Method.endCode: METHOD_RUNS' bytecodes when they are as long as the class file's (else null). */
function endCodeOf(run: MethodRun | undefined, code: Uint8Array | undefined): Uint8Array | null {
  return run && code && run.bytecodes && run.bytecodes.length === code.length ? run.bytecodes : null;
}

/** Every method of every recorded class, indexed for resolution and search. Built once per trace. */
export class MethodUniverse {
  readonly byId = new Map<number, Method>();
  /** every method, by Method.index */
  readonly methods: Method[] = [];
  private readonly byNameDesc = new Map<string, Method[]>();
  private readonly classes = new Map<string, { cf: ClassFile; loader: number }[]>();
  private readonly byFirstOpcode: Method[][] = Array.from({ length: 256 }, () => []);
  private readonly targetCache = new Map<number, Method[] | undefined>();
  private readonly calleeCache = new Map<Method, readonly Method[]>();
  private byOpcode: Method[][] | null = null;
  private readonly siteCache = new Map<number, CallSite | undefined>();
  private readonly specificCache = new Map<number, Method | null>();
  private readonly superCache = new Map<string, Set<string>>();
  private readonly reachCache = new Map<string, Set<string>>();
  /** each class's static initializer */
  private readonly clinits = new Map<ClassFile, Method>();
  /** each class's initializers that may run before a static method of it (below), by class */
  private readonly initCache = new Map<ClassFile, Method[]>();
  /** classes (by ClassFile) that declare a non-abstract instance method: an interface's default method */
  private readonly hasDefaults = new Set<ClassFile>();
  /** the first method id not named by a METHOD record */
  readonly firstSynthetic: number;
  /** compiled code's inlining contexts: the bcis each names in PcDescs (CodeImage.pcContexts) */
  readonly pcContexts: readonly ReadonlySet<number>[];
  /** the traced JVM's feature release (0: unknown): how it shares resolved constant-pool entries (resolution.ts) */
  readonly javaFeature: number;

  constructor(model: JvmModel) {
    const known = new Map<string, number>();
    let maxId = -1;
    for (const [id, m] of model.methods) {
      known.set(`${m.loader}:${m.className}.${m.name}${m.signature}`, id);
      if (id > maxId) maxId = id;
    }
    this.firstSynthetic = maxId + 1;
    this.javaFeature = model.javaFeature ?? 0;
    this.pcContexts = model.image?.pcContexts ?? [];
    model.firstSyntheticMethod = this.firstSynthetic;
    let next = maxId + 1;
    for (const [key, bytes] of model.classes) {
      const loader = Number(key.slice(0, key.indexOf(':')));
      let cf: ClassFile;
      try {
        cf = parseClass(bytes);
      } catch {
        continue; // a class we cannot read: its methods stay unattributed
      }
      const runs = model.methodRuns?.get(key);
      let list = this.classes.get(cf.name);
      if (!list) this.classes.set(cf.name, (list = []));
      list.push({ cf, loader });
      for (const mi of cf.methods) {
        const k = `${loader}:${cf.name}.${mi.name}${mi.descriptor}`;
        let id = known.get(k);
        if (id === undefined) {
          id = next++;
          known.set(k, id);
          model.methods.set(id, { className: cf.name, name: mi.name, signature: mi.descriptor, classId: 0xffffffff, loader });
        }
        const run = runs?.get(mi.name + mi.descriptor);
        const vmEntries = vmEntriesOf(runs, run);
        const m: Method = {
          id, index: this.methods.length, code: mi.code ?? null, handlers: mi.handlers, native: (mi.access & ACC_NATIVE) !== 0, cf, loader, succ: null,
          loadTsc: model.classLoadTsc?.get(key) ?? -Infinity, clinit: mi.name === '<clinit>', init: mi.name === '<init>', descriptor: mi.descriptor,
          neverRan: vmEntries === 0,
          vmEntries,
          endCode: endCodeOf(run, mi.code),
          isStatic: (mi.access & ACC_STATIC) !== 0, extraLocals: extraLocals(mi.maxLocals, mi.descriptor, (mi.access & ACC_STATIC) !== 0),
        };
        this.methods.push(m);
        this.byId.set(id, m);
        const nd = mi.name + mi.descriptor;
        let l = this.byNameDesc.get(nd);
        if (!l) this.byNameDesc.set(nd, (l = []));
        l.push(m);
        if (m.code && m.code.length > 0 && !(mi.access & ACC_ABSTRACT)) this.byFirstOpcode[m.code[0]].push(m);
        if (mi.name === '<clinit>' && m.code && m.code.length > 0) this.clinits.set(cf, m);
        else if (m.code && !(mi.access & (ACC_STATIC | ACC_ABSTRACT)) && mi.name !== '<init>') this.hasDefaults.add(cf);
      }
    }
  }

  /** The superclass of the recorded class of that name (of the first loader's), or null. */
  superclassOf(name: string): string | null {
    return this.classes.get(name)?.[0]?.cf.superName ?? null;
  }

  /** Methods whose code starts with `op` (the candidates of a frame found by search). */
  startingWith(op: number): Method[] {
    return this.byFirstOpcode[op];
  }

  /** Methods whose code holds `op` somewhere (an index made on first use). */
  holding(op: number): readonly Method[] {
    if (!this.byOpcode) {
      const lists: Method[][] = Array.from({ length: 256 }, () => []);
      const seen = new Uint8Array(256);
      for (const m of this.methods) {
        if (!m.code || m.code.length === 0) continue;
        seen.fill(0);
        const bcis = this.successors(m).instructions();
        for (let k = 0; k < bcis.length; k++) {
          const op = m.code[bcis[k]];
          if (!seen[op]) {
            seen[op] = 1;
            lists[op].push(m);
          }
        }
      }
      this.byOpcode = lists;
    }
    return this.byOpcode[op & 0xff];
  }

  /** The target(s) of the invoke at `bci` of `m`: exact for static/special, by name and descriptor otherwise. */
  invokeTargets(m: Method, bci: number): Method[] | undefined {
    const key = m.id * 65536 + bci;
    if (this.targetCache.has(key)) return this.targetCache.get(key);
    const t = this.resolveInvoke(m, bci);
    this.targetCache.set(key, t);
    return t;
  }

  /** Every method with bytecode an invoke of `m` can call (by invokeTargets), each once. */
  calleesOf(m: Method): readonly Method[] {
    let out = this.calleeCache.get(m);
    if (out) return out;
    const seen = new Set<Method>();
    const code = m.code;
    if (code) {
      const bcis = this.successors(m).instructions();
      for (let k = 0; k < bcis.length; k++) {
        const op = code[bcis[k]];
        if (op < 0xb6 || op > 0xba) continue;
        for (const t of this.invokeTargets(m, bcis[k]) ?? []) if (t.code && t.code.length > 0) seen.add(t);
      }
    }
    out = [...seen];
    this.calleeCache.set(m, out);
    return out;
  }

  /** What an entry after the invoke at `bci` of `m` may start; undefined when invokeTargets knows no target. */
  callSite(m: Method, bci: number): CallSite | undefined {
    if (bci < 0 || bci > 0xffff) return this.resolveCallSite(m, bci); // (not a bci of any code: no key)
    const key = m.index * 65536 + bci;
    let site = this.siteCache.get(key);
    if (site === undefined && !this.siteCache.has(key)) {
      site = this.resolveCallSite(m, bci);
      this.siteCache.set(key, site);
    }
    return site;
  }

  /** The successor table of a method with code. */
  successors(m: Method): SuccessorTable {
    return (m.succ ??= new SuccessorTable(m.code!));
  }

  private resolveCallSite(m: Method, bci: number): CallSite | undefined {
    const t = bci >= 0 ? this.invokeTargets(m, bci) : undefined;
    if (!t) return undefined;
    const seen = new Set<Method>(t);
    const targets = [...seen];
    const candidates = [...targets];
    if (m.code![bci] === 0xb8) {
      // invokestatic: the first call of a static method initializes its class
      for (const x of t) for (const c of this.initializers(x)) if (!seen.has(c)) {
        seen.add(c);
        candidates.push(c);
      }
    }
    return { targets, candidates };
  }

  /**
   * The one method the invoke at `bci` of `m` runs when that follows from the class hierarchy alone: its targets
   * less those every other target overrides (declared in a supertype of another target's class); undefined when
   * more than one is left.
   */
  mostSpecificTarget(m: Method, bci: number): Method | undefined {
    // a function of invokeTargets' answer, which is memoized under the same key
    const key = m.id * 65536 + bci;
    let r = this.specificCache.get(key);
    if (r === undefined) this.specificCache.set(key, (r = this.findMostSpecific(this.invokeTargets(m, bci)) ?? null));
    return r ?? undefined;
  }

  private findMostSpecific(t: Method[] | undefined): Method | undefined {
    if (!t || t.length === 0) return undefined;
    if (t.length === 1) return t[0];
    const left = t.filter((x) => !t.some((y) => y !== x && y.cf.name !== x.cf.name && this.supertypes(y.cf.name).has(x.cf.name)));
    return left.length === 1 ? left[0] : undefined;
  }

  private resolveInvoke(m: Method, bci: number): Method[] | undefined {
    const code = m.code;
    if (!code || bci + 2 >= code.length) return undefined;
    const op = code[bci];
    if (op < 0xb6 || op > 0xb9) return undefined; // not invokevirtual/special/static/interface (invokedynamic: no ref)
    const ref = m.cf.methodRef((code[bci + 1] << 8) | code[bci + 2]);
    if (!ref) return undefined;
    const nd = ref.name + ref.descriptor;
    if (op === 0xb7 || op === 0xb8) {
      const d = this.declared(ref.className, nd, m.loader);
      if (d) return [d];
    }
    // virtual: a method of a class that some subtype of the named class is or extends (an override in a
    // subtype, what the named class inherits, or what a subtype inherits from a class outside the named type:
    // HashMap$HashIterator.hasNext for Iterator.hasNext); signature-polymorphic MethodHandle calls go through
    // adapters (no match)
    const all = this.byNameDesc.get(nd);
    if (!all) return undefined;
    const reach = this.reachable(ref.className);
    const typed = all.filter((x) => reach.has(x.cf.name));
    return typed.length ? typed : all;
  }

  /**
   * The static initializers the VM may run when an invokestatic calls `m`, before `m` is entered: the first call
   * of a static method initializes its class, after the class's superclasses and the superinterfaces that
   * declare default methods (JVMS 5.5), each of which runs its `<clinit>` as an upcall (the caller is the VM).
   */
  initializers(m: Method): Method[] {
    let list = this.initCache.get(m.cf);
    if (list) return list;
    list = [];
    const seen = new Set<ClassFile>();
    const visit = (cf: ClassFile, loader: number, depth: number, asInterface: boolean) => {
      if (seen.has(cf) || depth > 64) return;
      seen.add(cf);
      const isInterface = (cf.access & ACC_INTERFACE) !== 0;
      // a superinterface is initialized with its implementor only when it declares default methods
      if (!asInterface || this.hasDefaults.has(cf)) {
        const c = this.clinits.get(cf);
        if (c) list!.push(c);
      }
      // an interface whose static method is called is initialized alone; a class, after its superclass and
      // (direct or indirect) superinterfaces
      if (isInterface && !asInterface) return;
      const sup = cf.superName && !isInterface ? this.classOf(cf.superName, loader) : undefined;
      if (sup) visit(sup.cf, sup.loader, depth + 1, false);
      for (const i of cf.interfaces) {
        const x = this.classOf(i, loader);
        if (x) visit(x.cf, x.loader, depth + 1, true);
      }
    };
    visit(m.cf, m.loader, 0, false);
    this.initCache.set(m.cf, list);
    return list;
  }

  /**
   * The classes whose static initializers the instruction at `bci` of `m` may run when the VM initializes the class
   * it names (JVMS 5.5: new, getstatic, putstatic, invokestatic): that class and its supertypes, by name; else
   * undefined.
   */
  initializedBy(m: Method, bci: number): Set<string> | undefined {
    const code = m.code;
    if (!code || bci < 0 || bci + 2 >= code.length) return undefined;
    const op = code[bci];
    if (op !== 0xb2 && op !== 0xb3 && op !== 0xb8 && op !== 0xbb) return undefined;
    const name = m.cf.classRef((code[bci + 1] << 8) | code[bci + 2]);
    return name === undefined ? undefined : this.supertypes(name);
  }

  /** The classes whose methods a virtual call on `className` may run: the supertypes of each of its subtypes (itself included). */
  private reachable(className: string): Set<string> {
    let set = this.reachCache.get(className);
    if (set) return set;
    set = new Set(this.supertypes(className));
    for (const name of this.classes.keys()) {
      const sup = this.supertypes(name);
      if (sup.has(className)) for (const x of sup) set.add(x);
    }
    this.reachCache.set(className, set);
    return set;
  }

  /** The recorded class of that name, preferring the given loader. */
  private classOf(className: string, loader: number): { cf: ClassFile; loader: number } | undefined {
    const list = this.classes.get(className);
    return list ? (list.find((x) => x.loader === loader) ?? list[0]) : undefined;
  }

  /** The class and its superclasses, by name, the class first (classes the trace has no bytes of end it). */
  superclasses(className: string): readonly string[] {
    let list = this.superclassCache.get(className);
    if (list) return list;
    list = [];
    const seen = new Set<string>();
    for (let c: string | undefined = className; c !== undefined && !seen.has(c); c = this.classes.get(c)?.[0].cf.superName) {
      seen.add(c);
      list.push(c);
    }
    this.superclassCache.set(className, list);
    return list;
  }
  private readonly superclassCache = new Map<string, string[]>();

  /** How many classes and interfaces `className` is (supertypes: itself included). */
  supertypeCount(className: string): number {
    return this.supertypes(className).size;
  }

  /** The class and all its superclasses and superinterfaces, by name (classes the trace has no bytes of end it). */
  private supertypes(className: string): Set<string> {
    let set = this.superCache.get(className);
    if (set) return set;
    set = new Set([className]);
    this.superCache.set(className, set); // (a cycle in corrupt input ends here)
    const cf = this.classes.get(className)?.[0].cf;
    if (cf) for (const s of [cf.superName, ...cf.interfaces]) if (s) for (const x of this.supertypes(s)) set.add(x);
    return set;
  }

  /** The method `nd` as the class (or a superclass) declares it, preferring the caller's loader. */
  private declared(className: string, nd: string, loader: number): Method | undefined {
    for (let depth = 0, c: string | undefined = className; c && depth < 64; depth++) {
      const list = this.classes.get(c);
      if (!list) return undefined;
      const entry = list.find((x) => x.loader === loader) ?? list[0];
      const mi = entry.cf.method(nd.slice(0, nd.indexOf('(')), nd.slice(nd.indexOf('(')));
      if (mi) return this.byNameDesc.get(nd)?.find((x) => x.cf === entry.cf);
      c = entry.cf.superName;
    }
    return undefined;
  }
}

/** How the trace goes on after lost data (resumeChoice). */
const enum Resume {
  Next = 0,
  Anywhere = 1,
  InCallee = 2,
  Outermost = 3,
}

/**
 * An interpreted frame on the attribution stack. Frames are reused by depth (no object per entry).
 * Its states are either its own, in `states`, or while it follows the search trie (pathLen > 0), the entries of
 * the last node of `path`.
 */
class Frame implements StateRoots {
  /** the NFA states the frame may be in (StatePool indices), the first `n` (unless pathLen > 0) */
  states: Int32Array = new Int32Array(8);
  /** how many states the frame may be in */
  n = 0;
  /** the search-trie nodes the frame went through since its search began, the first `pathLen` */
  readonly path: SearchNode[] = [];
  /** the output events of the opcodes that led to each node of `path` */
  pathEvs: Int32Array = new Int32Array(8);
  pathLen = 0;
  /** output index of the entry event that started the frame (-1 when there was none) */
  entryEv = -1;
  /** no state is left: the frame's events stay unattributed, only its depth is tracked */
  lost = false;
  /** all methods are candidates and no opcode has narrowed them yet */
  search = false;
  /** the frame was re-created by a deoptimization: any bci of this method (Method.index; -1: none) may come next */
  anyBci = -1;
  /**
   * Output indices of the frame's own bytecodes (the first `ownLen` of `own`), while it started from a call
   * site's candidates, has made no call and has run at most REPLAY_MAX opcodes; else ownLen is -1. If its
   * opcodes stop fitting those candidates, it can be read again as a frame of unknown method (an upcall from
   * the VM, see `replay`).
   */
  readonly own = new Int32Array(REPLAY_MAX);
  ownLen = -1;
  /** the invoke the frame is at has made its call (an entry came since its last opcode) */
  called = false;
  /**
   * For a call the VM made while the caller was at an instruction that initializes a class (new, getstatic,
   * putstatic, invokestatic): the classes whose `<clinit>` that may run (rankOf); else null.
   */
  initializing: Set<string> | null = null;
  /** for a frame entered from a method-handle linker (MethodHandle.linkTo*): the parameter types the linker passes
   * on to the target (one letter each, references as 'L'); else null */
  linkerArgs: string | null = null;
  /** the class whose constructor this frame runs, when a caller's is known to (an implicit NullPointerException's
   * chain of constructors: each calls its superclass's); else null */
  constructing: string | null = null;
  /** for a frame whose caller was ambiguous: the targets of the invoke of the caller's state ranked first (a
   * callee's choice follows its caller's); else null */
  /** the input aux of the interpreted entry that started it (what its entry codelet told: method-entry.ts); 0: none */
  entryAux = 0;
  preferred: readonly Method[] | null = null;
  /** whether it began with an interpreted entry (entryEv may have been handed on by flushSettled since) */
  entered = false;
  /**
   * Events of the frame from before this one (counted from the thread's first: Attribution.flushed + output
   * index) pin nothing: the frame was released for holding too many (flushSettled). 0: all its events pin.
   */
  pinFrom = 0;
  /**
   * The aux of the event the frame's states came by (an if*'s outcome, which its next step reads), kept when that
   * event was handed on: the top frame was released (flushSettled). 0 otherwise.
   */
  heldAux = 0;
  /** its method, known for good, has narrowed its caller's states (narrowCaller) */
  toldCaller = false;

  /** How many of `states` hold the frame's states (StateRoots): none while it follows the trie. */
  get stored(): number {
    return this.pathLen > 0 ? 0 : this.n;
  }

  /** The trie node the frame is at (pathLen > 0). */
  get node(): SearchNode {
    return this.path[this.pathLen - 1];
  }

  reset(entryEv: number, lost: boolean, anyBci: number): void {
    this.n = 0;
    this.pathLen = 0;
    this.entryEv = entryEv;
    this.entered = entryEv >= 0;
    this.lost = lost;
    this.search = false;
    this.anyBci = anyBci;
    this.ownLen = -1;
    this.called = false;
    this.initializing = null;
    this.linkerArgs = null;
    this.constructing = null;
    this.entryAux = 0;
    this.preferred = null;
    this.pinFrom = 0;
    this.heldAux = 0;
    this.toldCaller = false;
  }

  addState(s: number): void {
    if (this.n === this.states.length) this.states = grownInt32(this.states, this.n + 1);
    this.states[this.n++] = s;
  }

  setStates(from: Int32Array, n: number): void {
    if (n > this.states.length) this.states = new Int32Array(Math.max(n, this.states.length * 2));
    this.states.set(from.subarray(0, n));
    this.n = n;
    this.pathLen = 0;
  }

  /** Goes on to trie node `node` by the opcode of output event `ev`; its entries are the frame's states. */
  enterNode(node: SearchNode, ev: number): void {
    if (this.pathLen === this.pathEvs.length) this.pathEvs = grownInt32(this.pathEvs, this.pathLen + 1);
    this.path[this.pathLen] = node;
    this.pathEvs[this.pathLen++] = ev;
    this.n = node.count;
  }
}

const EMPTY = new Int32Array(0);

/** A copy of `a` with room for at least `need` entries. */
const EMPTY_STREAM = new EventStream(0);

function grownInt32(a: Int32Array, need: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

/**
 * Rewrites one thread's events with interpreted frames attributed: the same events in the same order, interpreted
 * bytecodes and entries with method (and bci) where the opcodes determine them, plus an `exit` after each
 * interpreted return.
 */
export function attributeInterpreted(universe: MethodUniverse, input: EventStream | EventStream[]): { events: EventStream; stats: AttributionStats } {
  // (parts: a stream decoded in pieces, read in order as one, with no stitched copy; each entry of the array is
  // let go once read)
  const parts = Array.isArray(input) ? input : [input];
  const a = new Attribution(universe, attributedCapacity(parts));
  return a.run(parts);
}

/** Room for the input's events and an exit per interpreted entry (most frames end with one): grown once at most. */
export function attributedCapacity(parts: EventStream[]): number {
  let n = 0;
  for (const input of parts) {
    n += input.length;
    for (let i = 0; i < input.length; i++) if (input.kind[i] === EventKind.Entry && input.source[i] === EventSource.Interpreter) n++;
  }
  return n + 1024;
}

/** Attribution of one thread's stream, read part by part (feed) and ended (finish); attributeInterpreted reads a whole one. */
export class Attribution {
  readonly out: EventStream;
  readonly stats: AttributionStats = { interpreted: 0, withMethod: 0, withBci: 0, searched: 0, lostFrames: 0, ambiguousEnds: 0, handlers: 0, resynced: 0, released: 0 };
  private readonly methods: Method[];
  /** Method.index -> method id */
  private readonly ids: Int32Array;
  /** by Method.index: static initializers this thread has run (a class is initialized once) */
  private readonly ranClinit: Uint8Array;
  /** entries of each method this thread's frames were named (endFrame): against Method.vmEntries */
  private readonly entries: Int32Array;
  /**
   * per class name: when this thread last allocated or constructed an object of it or of a subclass (an interpreted
   * `new`, a constructor that ran): its instance methods have a receiver only from then on
   */
  private readonly constructedAt = new Map<string, number>();
  /** the interpreted bytecodes this thread has been attributed (what the interpreter's rewriting is read against) */
  private readonly ran: RanBytecodes;
  /** the constant-pool entries this thread's interpreted bytecodes have run with (what resolution is read against) */
  private readonly resolved: ResolvedEntries;
  /** the methods this thread entered, and when first (what an interpreted entry's counters are read against), by
   * output event counted from the thread's first (flushed + the index in `out`: events handed over leave `out`) */
  private readonly entered: EnteredMethods;
  private readonly pool = new StatePool();
  /** the stack: frames[0..depth); frames beyond are kept for reuse */
  private readonly frames: Frame[] = [];
  private depth = 0;
  /** the states a step makes, before they become a frame's (StatePool indices) */
  private scratch: Int32Array = new Int32Array(64);
  private scratchN = 0;
  /** (method id, bci) of the states in `scratch`: a state reached two ways is one */
  private readonly seen = new KeySet();
  /** a frame's states while `replay` tries another reading */
  private saved = new Int32Array(64);
  /** the successors a state goes on to (nextBcis) */
  private next: Int32Array = new Int32Array(16);
  /** the search trie's first level, by opcode, and how many states the trie holds */
  private readonly trieRoots = new Map<number, SearchNode>();
  private trieSize = 0;
  // making the states of a frame on the trie (beginMaking, stateOfNode): by path level (offset in madeGen and
  // madeState) and entry, the state made, valid where madeGen holds makingGen; `chain`: entries on the way down
  private madeAt = new Int32Array(8);
  private madeGen = new Uint32Array(0);
  private madeState = new Int32Array(0);
  private makingGen = 0;
  private chain: Int32Array = new Int32Array(16);
  /** the call site of a caller with several states: their targets merged (see callersSite) */
  private readonly merged = { targets: [] as Method[], candidates: [] as Method[], set: new Set<Method>() };
  /** (Method.index, bci) of the states of a caller with several (callersSite) */
  private siteMethod = new Int32Array(16);
  private siteBci = new Int32Array(16);
  /** resuming after lost data (resumeChoice): the opcodes that come next, their aux, a walk's starts */
  private readonly lookOps = new Int32Array(LOOKAHEAD_MAX);
  private readonly lookAux = new Int32Array(LOOKAHEAD_MAX);
  private startBcis: Int32Array = new Int32Array(16);
  private readonly walk = new FitWalk();
  private readonly resumeCallees: Method[] = [];
  /** the methods last taken for the thread's outermost frame when they returned, the latest first */
  private readonly outermost: Method[] = [];
  /** searches over all methods tried since the last frame was taken up again (globalTurn) */
  private globalTries = 0;
  /** how many opcodes resumeChoice last looked ahead (in lookOps), and how many of them its reading runs */
  private lookLen = 0;
  private choiceLen = 0;

  constructor(
    private readonly universe: MethodUniverse,
    capacity: number,
    options: {
      heldMax?: number;
      /**
       * events a part's end is held back for the opcodes after lost data to be looked at (default LOOKAHEAD_SPAN,
       * what resumeChoice reads at most; less only for streams short enough to have no lost data, as in tests:
       * what is made may then depend on where the stream is cut)
       */
      lookAhead?: number;
    } = {},
  ) {
    this.heldMax = options.heldMax ?? HELD_MAX;
    this.parts = new PartReader(Math.max(0, options.lookAhead ?? LOOKAHEAD_SPAN), (input, from, end) => this.read(input, from, end));
    this.checkEvery = Math.max(1, Math.min(1 << 16, this.heldMax >> 3));
    this.out = new EventStream(capacity);
    this.methods = universe.methods;
    this.ids = Int32Array.from(this.methods, (m) => m.id);
    this.ranClinit = new Uint8Array(this.methods.length);
    this.entries = new Int32Array(this.methods.length);
    this.ran = new RanBytecodes(this.methods.length, (mi) => this.methods[mi].code?.length ?? 0);
    this.resolved = new ResolvedEntries(this.methods, universe.javaFeature);
    this.entered = new EnteredMethods(this.methods.length);
  }

  /**
   * How much what the interpreter showed of interpreted bytecode `op` (event aux: its rewritten form, its
   * constant-pool entry's resolution) speaks against attributing it to (method mi, bci): rewrites.ts, resolution.ts;
   * and the method's bytecodes at VM death (a getfield never rewritten never ran).
   */
  private evidenceAgainst(aux: number, mi: number, bci: number, op: number): number {
    const m = this.methods[mi];
    return this.ran.against(aux & FORM_MASK, mi, bci, m.code!, op) + this.resolved.against(aux, mi, bci) + (endFormSaysNeverRan(m.endCode, bci, op) ? STRONG : 0);
  }

  /** The whole input, part after part (each let go once read). */
  run(parts: EventStream[]): { events: EventStream; stats: AttributionStats } {
    for (let p = 0; p < parts.length; p++) {
      const input = parts[p];
      parts[p] = EMPTY_STREAM;
      this.feed(input);
    }
    return this.finish();
  }

  // the reading's state between two parts (feed keeps it in locals while it runs)
  private lastCompiledMethod = -1;
  private lastCompiledBci = -1;
  private lastWasCompiled = false;
  /** kind and opcode of the last event read (-1: none yet) */
  private prevKind = -1;
  private prevOpcode = -1;
  /** an exception was thrown since the last interpreted bytecode: that bytecode may be a handler's */
  private exceptionPending = false;
  /** the compiled method that was deoptimized: its frame continues in the interpreter without an entry */
  private deoptHint = -1;
  /**
   * The inlining chain of the compiled code that ran last (outermost first): each frame's method and the bci it
   * is at (for a caller, its call site into the next; -1: not known). A deoptimization resumes each of these
   * frames in the interpreter, the innermost first: its callers go on from their call sites when it returns.
   */
  private readonly chainMethod = new Int32Array(MAX_CHAIN);
  private readonly chainBci = new Int32Array(MAX_CHAIN);
  private chainLen = 0;
  /** the callers of the innermost frame at the last deoptimization (chainMethod/chainBci's first deoptOuter) */
  private readonly deoptMethod = new Int32Array(MAX_CHAIN);
  private readonly deoptBci = new Int32Array(MAX_CHAIN);
  private deoptOuter = 0;
  /** output index of the last gap */
  private lastGapEv = -1;
  /** native/intrinsic entries whose method depends on the caller's invoke: [invoke event, entry event, exit event] */
  private readonly pendingNatives: number[] = [];
  /**
   * Frames an exception or a resync showed ended, found out at a bytecode of a caller: [that bytecode's event,
   * how many exits follow it]. Their exits are written after it as they are found and moved before it when the
   * events are handed over (an exit of an unnamed frame after a caller's bytecode would close the caller).
   */
  private readonly unwound: number[] = [];

  /**
   * Reads the next part of the input stream (parts in stream order; then finish()). A part's last LOOKAHEAD_SPAN
   * events are read with the next part's first (or by finish()): after lost data the opcodes that come next are
   * looked at (resumeChoice), and they must be the same however the stream was cut into parts.
   */
  feed(input: EventStream): void {
    this.parts.feed(input);
  }
  /** reads the parts (a part's last `lookAhead` events with the next part's first: resumeChoice reads that far) */
  private readonly parts: PartReader;

  /** Reads input[from..end) (looking ahead past `end`); returns `end`. */
  private read(input: EventStream, from: number, end: number): number {
    const { out, stats, universe, pendingNatives } = this;
    let lastCompiledMethod = this.lastCompiledMethod;
    let lastCompiledBci = this.lastCompiledBci;
    let lastWasCompiled = this.lastWasCompiled;
    let exceptionPending = this.exceptionPending;
    let deoptHint = this.deoptHint;
    let lastGapEv = this.lastGapEv;
    let prevKind = this.prevKind;
    let prevOpcode = this.prevOpcode;
    for (let i = from; i < end; i++) {
      // the held-events budget is checked every `checkEvery` events counted from the stream's first, so where a frame
      // is released does not depend on how the stream was cut into parts (flushSettled only hands on)
      if (this.consumed++ % this.checkEvery === 0) this.releaseOverBudget();
      if (this.pool.full) this.pool.compact(this.frames, this.depth);
      // (the event before this one, in this part or the last)
      const pk = prevKind;
      const po = prevOpcode;
      prevKind = input.kind[i];
      prevOpcode = input.opcode[i];
      const kind = input.kind[i];
      const source = input.source[i];
      const tsc = input.tsc[i];
      const ev = out.length;
      out.push(kind, source, input.method[i], input.bci[i], input.opcode[i], tsc, input.aux[i]);

      if (source !== EventSource.Interpreter) {
        const compiled = source === EventSource.Compiled || source === EventSource.Inlined;
        // compiled code ran: the invoke of the interpreted frame on top (if at one) has made its call
        if ((kind === EventKind.Bytecode || kind === EventKind.Entry) && compiled && this.depth) {
          const top = this.frames[this.depth - 1];
          top.called = true;
          top.ownLen = -1;
        }
        if (compiled) this.followChain(kind, source, input.method[i], input.bci[i], input.aux[i]);
        // compiled code entered a constructor (or one inlined): an object of its class is being made
        if (kind === EventKind.Entry && compiled && input.method[i] >= 0) {
          const m = universe.byId.get(input.method[i]);
          if (m?.init) this.markConstructed(m.cf.name, tsc);
          // (a method compiled on its own had its counters; one inlined need not have)
          if (m && source === EventSource.Compiled) this.entered.mark(m.index, this.flushed + ev);
        }
        if (kind === EventKind.Bytecode && compiled) {
          lastCompiledMethod = input.method[i];
          lastCompiledBci = input.bci[i];
          lastWasCompiled = true;
        } else if (kind === EventKind.Gap) {
          // the stack is kept: what comes next either continues a frame (checked opcode by opcode) or not
          lastWasCompiled = false;
          lastGapEv = ev;
          this.chainLen = 0;
        } else if (kind === EventKind.OsrEntry) {
          // the interpreted activation moves into compiled code: the frame ends here, the method goes on
          if (this.depth) this.endFrame(this.pop(), tsc, false);
        } else if (kind === EventKind.Exception) {
          exceptionPending = true;
        } else if (kind === EventKind.Deopt) {
          deoptHint = lastCompiledMethod;
          this.noteDeopt(deoptHint);
          lastWasCompiled = false;
        }
        continue;
      }
      if (kind === EventKind.Exception) {
        exceptionPending = true;
        continue;
      }
      if (kind === EventKind.Deopt) {
        deoptHint = lastCompiledMethod;
        this.noteDeopt(deoptHint);
        continue;
      }

      if (kind === EventKind.Entry) {
        const afterDeopt = deoptHint >= 0;
        if (afterDeopt) {
          // the deoptimized activation is below what is called now (the VM's upcall as the interpreter resumes it:
          // the exception its bytecode raises, a class it loads)
          this.pushDeoptimized(deoptHint);
          deoptHint = -1;
        }
        // who called: the invoke of the interpreted frame on top (unless that invoke already made its call: what
        // enters now is an upcall), else the compiled code that just ran
        let site: CallSite | undefined;
        let preferred: readonly Method[] | null = null;
        const top = this.depth ? this.frames[this.depth - 1] : undefined;
        // the VM made this call (through the call stub): no invoke of the code before it did, and the invoke that
        // code may be at (resolving it loads and initializes classes) makes its call after this one returns
        const fromVm = (input.aux[i] & ENTRY_FROM_VM) !== 0;
        if (top) top.ownLen = -1; // a frame that made a call is not read again (its callee followed its candidates)
        if (fromVm) {
          // (no site: found by search)
        } else if (top && !top.lost && !top.search && top.n > 0 && !lastWasCompiled) {
          if (!top.called) {
            this.neverRanCallsLast(top);
            site = this.callersSite(top);
            if (site && (top.pathLen || top.n > 1)) preferred = this.chosenTargets(top, tsc);
          }
          top.called = true;
        } else if (lastWasCompiled && lastCompiledMethod >= 0 && lastCompiledBci >= 0) {
          const caller = universe.byId.get(lastCompiledMethod);
          if (caller) site = universe.callSite(caller, lastCompiledBci);
        }
        // an implicit NullPointerException: the VM constructs it right after a dereference faulted
        // (after a deoptimization: the bytecode the compiled code stopped at is run again and raised it)
        const raisesNpe =
          fromVm && (afterDeopt || lastWasCompiled ? this.dereferences(lastCompiledMethod, lastCompiledBci) : top !== undefined && !top.lost && this.dereferencesAt(top));
        lastWasCompiled = false;
        const cls = (input.aux[i] & ENTRY_CLASS_MASK) as EntryClass;
        if (cls !== EntryClass.Bytecode) {
          // native, intrinsic or abstract: no bytecodes run in this activation
          const only = site ? onlyTarget(site.targets, cls === EntryClass.Native) : undefined;
          if (only) out.method[ev] = only.id;
          // (the caller's invoke is the event before, unless the caller was released before it: then it may have been
          // handed on already, as the stream happened to be cut, and it is left alone either way)
          else if (!fromVm && top && !top.lost && ev > 0 && ev - 1 >= this.writableFrom(top) && out.kind[ev - 1] === EventKind.Bytecode) pendingNatives.push(ev - 1, ev, out.length);
          out.aux[ev] = 0;
          out.push(EventKind.Exit, EventSource.Interpreter, out.method[ev], -1, -1, tsc);
          continue;
        }
        out.aux[ev] = 0;
        const initializing = fromVm && top && !top.lost ? this.initializingAt(top) : null;
        this.startFrame(site?.candidates, ev);
        this.frames[this.depth - 1].entryAux = input.aux[i];
        this.frames[this.depth - 1].initializing = initializing;
        this.frames[this.depth - 1].preferred = preferred;
        this.frames[this.depth - 1].linkerArgs = !fromVm && top && !top.lost ? this.linkerArgsAt(top) : null;
        // the VM constructs the exception: its constructor calls its superclass's, and so on up to Throwable's
        this.frames[this.depth - 1].constructing = raisesNpe ? 'java/lang/NullPointerException' : !fromVm && top?.constructing ? universe.superclassOf(top.constructing) : null;
        continue;
      }

      if (kind !== EventKind.Bytecode) continue;
      stats.interpreted++;
      lastWasCompiled = false;
      const op = input.opcode[i];
      let f: Frame | undefined = this.depth ? this.frames[this.depth - 1] : undefined;
      if (deoptHint >= 0) {
        // a deoptimized activation resumes here, at some bci of the method that was compiled
        f = this.pushDeoptimized(deoptHint);
        deoptHint = -1;
      }
      let stepped = false;
      if ((!f || f.lost) && op >= 0 && !exceptionPending && (pk !== EventKind.Bytecode || isReturn(po))) {
        // no frame we can follow (after a gap, at the stream's start, after the frame we took for the outermost
        // returned): the opcodes that come next may tell a frame on the stack, or one that seemed to end, goes on
        const g = this.resume(op, ev, tsc, input, i, true);
        if (g) {
          f = g;
          stepped = true;
          stats.resynced++;
          this.globalTries = 0;
        }
      }
      // bytecodes with no frame we saw begin (after a gap or at the stream's start)
      if (!f) f = this.pushFrame(-1, true, -1);
      let handled = false;
      if (exceptionPending && op >= 0) {
        // the next bytecode after a throw is a handler's, in this frame or a caller
        const d = this.handlerFor(op, ev, lastGapEv);
        if (d >= 0) {
          stats.handlers++;
          this.unwindTo(d, ev, tsc);
          f = this.frames[d];
          handled = true;
        }
      }
      exceptionPending = false;
      if (handled) f.ownLen = -1;
      if (!stepped && !f.lost && op >= 0 && !handled && pk === EventKind.Gap) {
        // the first bytecode after lost data: the frame's next instruction may hold its opcode by chance (in a loop
        // of twin bytecodes, an iload where another iload ran rounds later), so the plain step is taken only when no
        // other reading runs more of the opcodes that come next
        const choice = this.resumeChoice(input, i, false);
        const n = this.lookLen;
        const own = n > 1 ? this.continuationFit(f, n) : n;
        if (own < n && choice >= 0 && this.choiceLen > own) {
          const g = this.takeReading(choice, op, ev, tsc);
          if (g) {
            f = g;
            stepped = true;
            stats.resynced++;
          }
        }
      }
      if (!stepped && !f.lost && op >= 0 && !handled && !this.step(f, op, ev)) {
        // a young frame with no gap since its entry: an entry that ran no bytecode (an intrinsic) whose caller
        // goes on, else an upcall the VM made before the call (replay)
        const young = f.ownLen >= 0 && f.entryEv > lastGapEv;
        let d = young && f.ownLen === 0 ? this.callerStep(op, ev, 1) : -1;
        if (d < 0 && young && this.replay(f, op, ev)) f.ownLen = -1;
        else {
          // events went missing (a gap, code we could not follow): a caller may have the control again, a frame
          // may go on at another bci, or be in a call it made; the reading that runs most of the opcodes that come
          // next is taken (resumeChoice), else the frame is lost
          const g = d >= 0 ? undefined : this.resume(op, ev, tsc, input, i, false);
          if (d >= 0) {
            this.unwindTo(d, ev, tsc);
            f = this.frames[d];
            stats.resynced++;
          } else if (g) {
            f = g;
            stats.resynced++;
          } else {
            // no frame on the stack runs them: a call made in the lost data (the VM's, say: an exception's
            // constructors) whose method we do not know; the frames below stay as they were
            f = this.pushFrame(-1, true, -1);
            stats.lostFrames++;
          }
        }
      }
      if (op >= 0) {
        f.called = false;
        if (f.ownLen >= 0) {
          if (f.ownLen < REPLAY_MAX) f.own[f.ownLen++] = ev;
          else f.ownLen = -1;
        }
      }
      if (!f.lost && op >= 0 && f.n > 0) {
        if (f.n === 1) this.settle(f, f.states[0]);
        else {
          const id = this.agreedId(f);
          if (id !== undefined) {
            if (out.method[ev] < 0) stats.withMethod++;
            out.method[ev] = id;
          }
        }
        this.resolveEntry(f);
        // a callee whose method is known for good tells its caller which invoke made the call now, not at its
        // return: a caller below a call that runs for the rest of the thread would otherwise stay ambiguous (and
        // pin its events) to the end (h2: RunScript.main's frame, 22 candidates at the same opcodes)
        if (!f.toldCaller && f.ownLen < 0 && this.depth > 1 && this.frames[this.depth - 2].n > 1) {
          const m = this.agreedMethod(f);
          if (m) {
            f.toldCaller = true;
            this.narrowCaller(this.frames[this.depth - 2], m);
          }
        }
      }
      if (isReturn(op)) {
        this.pop(); // (f is the top frame)
        const m = !f.lost && f.n > 0 ? this.agreedMethod(f) : undefined;
        // the exit goes after the return bytecode; it is the last event of the frame
        this.endFrame(f, tsc, true);
        if (m) this.narrowCaller(this.depth ? this.frames[this.depth - 1] : undefined, m);
        if (m && this.depth === 0) this.noteOutermost(m);
      }
    }
    this.lastCompiledMethod = lastCompiledMethod;
    this.lastCompiledBci = lastCompiledBci;
    this.lastWasCompiled = lastWasCompiled;
    this.exceptionPending = exceptionPending;
    this.deoptHint = deoptHint;
    this.lastGapEv = lastGapEv;
    this.prevKind = prevKind;
    this.prevOpcode = prevOpcode;
    return end;
  }

  /**
   * Hands the events no later step can change any more to `sink`, in stream order, and drops them from `out`
   * (so a long stream is attributed in bounded memory); the output indices held are renumbered. What pins an
   * event: a frame's entry while its method is unknown or it may still be read again, the events of its search
   * path and own opcodes, the events of live states (their chains are settled later), pending native calls.
   * A frame that pins more than `heldMax` events is released (its events so far pin nothing more:
   * stats.released; checked by feed every `checkEvery` events, releaseOverBudget): a bottom frame whose method stays ambiguous while its callees run for the rest of the
   * thread would otherwise hold the whole thread (h2: 22 candidates, 100 M events); so would the top interpreted
   * frame while the compiled code it called runs on without returning to it (batik medium: a PNG encoder's frame,
   * 300 M events after its last). What it costs: the frame's own bytecodes handed on before it settles keep no
   * method unless all its candidates agreed, its entry too; the top frame keeps the outcome of its last if*
   * (heldAux), which its next step reads.
   * `sink` reads the events before it returns. Returns how many were handed over.
   */
  flushSettled(sink: (events: EventStream) => void): number {
    const { out, pool, pendingNatives, unwound } = this;
    let u = this.settledEnd();
    // a bytecode goes together with the exits to be moved before it
    for (let k = 0; k < unwound.length; k += 2) if (unwound[k] < u && u <= unwound[k] + unwound[k + 1]) u = unwound[k];
    // native calls whose invoke no later step can change: resolved now, as finish() would (the rest pin theirs)
    let kept = 0;
    for (let k = 0; k < pendingNatives.length; k += 3) {
      if (pendingNatives[k] < u) {
        this.resolveNative(pendingNatives[k], pendingNatives[k + 1], pendingNatives[k + 2]);
        continue;
      }
      pendingNatives[kept++] = pendingNatives[k];
      pendingNatives[kept++] = pendingNatives[k + 1];
      pendingNatives[kept++] = pendingNatives[k + 2];
    }
    pendingNatives.length = kept;
    if (u <= 0) return 0;
    kept = 0;
    for (let k = 0; k < unwound.length; k += 2) {
      if (unwound[k] < u) out.moveAfter(unwound[k], unwound[k + 1]);
      else {
        unwound[kept++] = unwound[k] - u;
        unwound[kept++] = unwound[k + 1];
      }
    }
    unwound.length = kept;
    sink(out.view(0, u));
    out.dropFront(u);
    // renumber: what was at u is at 0 (indices of events handed over become negative: nothing reads them)
    const shift = (x: number) => (x >= 0 ? x - u : x);
    for (let d = 0; d < this.depth; d++) {
      const f = this.frames[d];
      f.entryEv = shift(f.entryEv);
      for (let k = 0; k < f.pathLen; k++) f.pathEvs[k] = shift(f.pathEvs[k]);
      for (let k = 0; k < f.ownLen; k++) f.own[k] = shift(f.own[k]);
    }
    if (pool.length) pool.compact(this.frames, this.depth); // (only live states are left: renumbered below)
    for (let s = 0; s < pool.length; s++) pool.ev[s] = shift(pool.ev[s]);
    for (let k = 0; k < pendingNatives.length; k++) pendingNatives[k] = shift(pendingNatives[k]);
    this.lastGapEv = shift(this.lastGapEv);
    this.flushed += u;
    return u;
  }
  /**
   * Releases the frames that pin more than `heldMax` events (see flushSettled), the first pinner first, until what is
   * held fits. Called from feed at fixed event counts.
   */
  private releaseOverBudget(): void {
    const out = this.out;
    let u = this.settledEnd();
    while (out.length - u > this.heldMax && this.pinner >= 0) {
      const f = this.frames[this.pinner];
      if (this.pinner === this.depth - 1) {
        this.ownStates(f); // (a frame on the trie: its path's events would be read again by its next step)
        const e = f.n > 0 ? this.pool.ev[f.states[0]] : -1; // (every state of a frame came by the same event)
        f.heldAux = e >= 0 ? out.aux[e] : f.heldAux;
      }
      f.pinFrom = this.flushed + out.length;
      f.ownLen = -1; // (its opcodes cannot be read again: some are handed on)
      this.stats.released++;
      u = this.settledEnd();
    }
  }

  /**
   * The first event some frame still pins (out.length when none does); `pinner` is then the depth of that frame
   * (-1 when none pins).
   */
  private settledEnd(): number {
    const { out, pool } = this;
    let u = out.length;
    this.pinner = -1;
    for (let d = 0; d < this.depth; d++) {
      const f = this.frames[d];
      const before = u;
      // events from before pinFrom pin nothing (the frame was released)
      const rel = Math.max(0, f.pinFrom - this.flushed);
      const resolved = !f.lost && !f.search && f.pathLen === 0 && f.n === 1;
      if (f.entryEv >= rel && f.entryEv < u && (f.ownLen >= 0 || !resolved || out.method[f.entryEv] < 0)) u = f.entryEv;
      for (let k = 0; k < f.pathLen; k++) if (f.pathEvs[k] >= rel && f.pathEvs[k] < u) u = f.pathEvs[k];
      for (let k = 0; k < f.ownLen; k++) if (f.own[k] >= rel && f.own[k] < u) u = f.own[k];
      if (!f.lost && f.pathLen === 0) {
        if (resolved) {
          // a resolved frame's events are written (settled at each step); the top frame's next step reads the
          // branch outcome (aux) of its last event. A caller stands at the call it made: nothing of its event is read
          const e = pool.ev[f.states[0]];
          if (d === this.depth - 1 && e >= rel && e < u) u = e;
        } else {
          // the states of an unresolved frame, and the chains that settling them will write
          for (let k = 0; k < f.n; k++)
            for (let x = f.states[k]; x >= 0; x = pool.prev[x]) {
              const e = pool.ev[x];
              if (e >= rel && e < u) u = e;
            }
        }
      }
      if (u < before) this.pinner = d;
    }
    return u;
  }
  /** the frame settledEnd found pins first, else -1 */
  private pinner = -1;
  /** events held unsettled beyond which the frame that pins them is released (releaseOverBudget) */
  private readonly heldMax: number;
  /** input events between two checks of the budget (fed so far: consumed) */
  private readonly checkEvery: number;
  private consumed = 0;

  /** A native (or intrinsic) entry and exit get the method the caller's invoke can only call, when there is one. */
  private resolveNative(inv: number, entry: number, exit: number): void {
    const { out, universe } = this;
    const caller = out.method[inv] >= 0 && out.bci[inv] >= 0 ? universe.byId.get(out.method[inv]) : undefined;
    const t = caller ? universe.invokeTargets(caller, out.bci[inv]) : undefined;
    const only = t ? onlyTarget(t, true) : undefined;
    if (only) out.method[entry] = out.method[exit] = only.id;
  }

  /** Events handed over by flushSettled so far. */
  flushed = 0;

  /** Ends the reading (the frames still open end with the stream): the attributed events. */
  finish(): { events: EventStream; stats: AttributionStats } {
    this.parts.finish();
    const { out, pendingNatives } = this;
    while (this.depth) this.endFrame(this.pop(), out.length ? out.tsc[out.length - 1] : 0, false);
    // native calls made while the caller was still ambiguous: its invoke is known now
    for (let k = 0; k < pendingNatives.length; k += 3) this.resolveNative(pendingNatives[k], pendingNatives[k + 1], pendingNatives[k + 2]);
    for (let k = 0; k < this.unwound.length; k += 2) out.moveAfter(this.unwound[k], this.unwound[k + 1]);
    this.unwound.length = 0;
    return { events: out, stats: this.stats };
  }

  /**
   * Follows the inlining chain of compiled code through one compiled event: a root entry starts it, an inlined
   * entry adds a frame (its aux, the caller's call-site bci + 1, puts the caller at its call site), an exit ends
   * the top frame, a bytecode puts its frame at its bci (a frame below the top has the control again; a method not
   * in the chain starts it anew: its entry was not seen).
   */
  private followChain(kind: number, source: number, method: number, bci: number, aux: number): void {
    const { chainMethod, chainBci } = this;
    if (kind === EventKind.Entry) {
      if (source === EventSource.Compiled) this.chainLen = 0;
      else if (this.chainLen > 0 && aux > 0) chainBci[this.chainLen - 1] = aux - 1;
      if (this.chainLen < MAX_CHAIN) {
        chainMethod[this.chainLen] = method;
        chainBci[this.chainLen++] = -1;
      }
    } else if (kind === EventKind.Exit) {
      if (this.chainLen > 0 && chainMethod[this.chainLen - 1] === method) this.chainLen--;
    } else if (kind === EventKind.Bytecode) {
      let k = this.chainLen - 1;
      while (k >= 0 && chainMethod[k] !== method) k--;
      if (k < 0) {
        k = 0;
        chainMethod[0] = method;
      }
      chainBci[k] = bci;
      this.chainLen = k + 1;
    }
  }

  /** A deoptimization of the compiled code whose innermost frame is `method`: its callers in the chain are kept. */
  private noteDeopt(method: number): void {
    const n = this.chainLen;
    this.deoptOuter = 0;
    if (n < 2 || this.chainMethod[n - 1] !== method) return;
    this.deoptMethod.set(this.chainMethod.subarray(0, n - 1));
    this.deoptBci.set(this.chainBci.subarray(0, n - 1));
    this.deoptOuter = n - 1;
  }

  /**
   * The interpreted frames a deoptimization of `method`'s compiled code resumes: its callers in the inlining chain
   * first, each at its call site into the next (it goes on from there when the frame above returns; a caller whose
   * call site is not known is read from any bci), then the innermost, at some bci of `method`. Returns the innermost.
   */
  private pushDeoptimized(method: number): Frame {
    const { universe } = this;
    for (let k = 0; k < this.deoptOuter; k++) {
      const c = universe.byId.get(this.deoptMethod[k]);
      const bci = this.deoptBci[k];
      if (c?.code && bci >= 0 && bci < c.code.length) {
        const f = this.pushFrame(-1, false, -1);
        f.addState(this.pool.add(c.index, bci, -1, -1));
        f.called = true;
      } else this.pushFrame(-1, !c?.code, c?.code ? c.index : -1);
    }
    this.deoptOuter = 0;
    const m = universe.byId.get(method);
    return this.pushFrame(-1, !m?.code, m?.code ? m.index : -1);
  }

  private pushFrame(entryEv: number, lost: boolean, anyBci: number): Frame {
    if (this.depth === this.frames.length) this.frames.push(new Frame());
    const f = this.frames[this.depth++];
    f.reset(entryEv, lost, anyBci);
    return f;
  }

  /** Ends the frames above frame `d`, found gone at event `ev` (the last so far); their exits go before it. */
  private unwindTo(d: number, ev: number, tsc: number): void {
    const before = this.out.length;
    while (this.depth - 1 > d) this.endFrame(this.pop(), tsc, true);
    const k = this.out.length - before;
    if (k > 0 && ev === before - 1) this.unwound.push(ev, k);
  }

  /** Takes the top frame off the stack; it stays valid until the next push. */
  private pop(): Frame {
    return this.frames[--this.depth];
  }

  /** The method id all the frame's states agree on (n > 0), else undefined. */
  private agreedId(f: Frame): number | undefined {
    if (f.pathLen) return f.node.agreedId;
    const { ids, pool } = this;
    const id = ids[pool.method[f.states[0]]];
    for (let k = 1; k < f.n; k++) if (ids[pool.method[f.states[k]]] !== id) return undefined;
    return id;
  }

  /** The method all the frame's states are in (n > 0), else undefined. */
  private agreedMethod(f: Frame): Method | undefined {
    if (f.pathLen) return f.node.agreedMethod >= 0 ? this.methods[f.node.agreedMethod] : undefined;
    const pool = this.pool;
    const m = pool.method[f.states[0]];
    for (let k = 1; k < f.n; k++) if (pool.method[f.states[k]] !== m) return undefined;
    return this.methods[m];
  }

  /**
   * The classes the VM may be initializing for frame f (the caller of a call the VM made): the union over f's
   * states of what the instruction each is at initializes (MethodUniverse.initializedBy); null when f follows the
   * search trie (no states kept) or no state is at such an instruction.
   */
  private initializingAt(f: Frame): Set<string> | null {
    if (f.pathLen || f.n === 0) return null;
    const pool = this.pool;
    let out: Set<string> | null = null;
    for (let k = 0; k < f.n; k++) {
      const s = f.states[k];
      const set = this.universe.initializedBy(this.methods[pool.method[s]], pool.bci[s]);
      if (!set) continue;
      if (!out) out = set;
      else {
        if (out === set) continue;
        out = new Set([...out, ...set]);
      }
    }
    return out;
  }

  /**
   * When frame f (not on the trie) is at an invoke of a method-handle linker (`MethodHandle.linkTo*`, whose last
   * argument is the target's MemberName; for all but linkToStatic the first is the receiver): the types it
   * passes to the target's parameters, one letter each (references 'L'); else null.
   */
  private linkerArgsAt(f: Frame): string | null {
    if (f.pathLen || f.n === 0) return null;
    const m = this.methods[this.pool.method[f.states[0]]];
    const bci = this.pool.bci[f.states[0]];
    const code = m.code;
    if (!code || bci < 0 || bci + 2 >= code.length || (code[bci] !== 0xb8 && code[bci] !== 0xb6)) return null;
    const ref = m.cf.methodRef((code[bci + 1] << 8) | code[bci + 2]);
    if (!ref || ref.className !== 'java/lang/invoke/MethodHandle' || !ref.name.startsWith('linkTo')) return null;
    const types = parameterLetters(ref.descriptor);
    return types.slice(ref.name === 'linkToStatic' ? 0 : 1, types.length - 1);
  }

  /** Whether every state of frame f (not on the trie) is at a bytecode that dereferences a reference. */
  private dereferencesAt(f: Frame): boolean {
    if (f.pathLen || f.n === 0) return false;
    for (let k = 0; k < f.n; k++) {
      const m = this.methods[this.pool.method[f.states[k]]];
      const bci = this.pool.bci[f.states[k]];
      if (!m.code || bci < 0 || bci >= m.code.length || !isDereference(m.code[bci])) return false;
    }
    return true;
  }

  /** Whether the bytecode at `bci` of the method with that id dereferences a reference. */
  private dereferences(id: number, bci: number): boolean {
    const code = this.universe.byId.get(id)?.code;
    return !!code && bci >= 0 && bci < code.length && isDereference(code[bci]);
  }

  /** The states in scratch become frame f's (the buffers trade places: no copy). */
  private giveScratch(f: Frame): void {
    const taken = f.states;
    f.states = this.scratch;
    f.n = this.scratchN;
    f.pathLen = 0;
    this.scratch = taken;
    this.scratchN = 0;
  }

  private pushScratch(s: number): void {
    if (this.scratchN === this.scratch.length) this.scratch = grownInt32(this.scratch, this.scratchN + 1);
    this.scratch[this.scratchN++] = s;
  }

  /**
   * Gives the events of a resolved chain of states of frame f their method and bci, then cuts the chain. Of a frame
   * that was released, only the events from the release on are written: those before it may have been handed on
   * already or may not, as the stream happened to be cut, and what is written (and marked run) must not depend on that.
   */
  private settle(f: Frame, s: number): void {
    const { out, stats, pool, ids } = this;
    const from = this.writableFrom(f);
    for (let x = s; x >= 0 && pool.ev[x] >= from; x = pool.prev[x]) {
      const e = pool.ev[x];
      if (out.method[e] < 0) stats.withMethod++;
      if (out.bci[e] < 0) stats.withBci++;
      out.method[e] = ids[pool.method[x]];
      out.bci[e] = pool.bci[x];
      this.ran.mark(pool.method[x], pool.bci[x]);
      if (out.kind[e] === EventKind.Bytecode && pool.bci[x] >= 0 && !isIfOpcode(out.opcode[e])) {
        this.resolved.mark(pool.method[x], pool.bci[x], out.aux[e]);
        if (out.opcode[e] === NEW) this.madeObject(pool.method[x], pool.bci[x], out.tsc[e]);
      }
      const p = pool.prev[x];
      if (p < 0 || pool.ev[p] < from) break;
    }
    pool.prev[s] = -1;
  }

  /** The first output event held that frame f's settling may write: its release (pinFrom), else the first held. */
  private writableFrom(f: Frame): number {
    return Math.max(0, f.pinFrom - this.flushed);
  }

  /** The `new` at (method mi, bci) ran at `tsc`. */
  private madeObject(mi: number, bci: number, tsc: number): void {
    const code = this.methods[mi].code!;
    const cls = this.methods[mi].cf.classRef((code[bci + 1] << 8) | code[bci + 2]);
    if (cls !== undefined) this.markConstructed(cls, tsc);
  }

  /**
   * An object of class `className` was made at `tsc`: of it and of each of its superclasses (their constructors ran).
   * A superclass is marked a tick earlier per level, so that of a method and its override the class made is the more
   * recent (rankOf): the receiver is an object of it.
   */
  private markConstructed(className: string, tsc: number): void {
    const supers = this.universe.superclasses(className);
    for (let k = 0; k < supers.length; k++) {
      const at = tsc - k;
      const was = this.constructedAt.get(supers[k]);
      if (was === undefined || was < at) this.constructedAt.set(supers[k], at);
    }
  }

  private resolveEntry(f: Frame): void {
    if (f.entryEv >= this.writableFrom(f) && f.n > 0) {
      const id = this.agreedId(f);
      if (id !== undefined) this.out.method[f.entryEv] = id;
    }
  }

  private endFrame(f: Frame, tsc: number, emitExit: boolean): void {
    const out = this.out;
    let id = -1;
    if (!f.lost && f.n > 0) {
      if (f.n > 1) this.stats.ambiguousEnds++;
      // (the other states of a frame on the trie die with it: only the chosen one is made)
      const s = f.pathLen ? this.chosenStateOfNode(f, tsc) : f.states[this.chosenState(f, tsc)];
      this.settle(f, s);
      const mi = this.pool.method[s];
      const m = this.methods[mi];
      if (m.clinit) this.ranClinit[mi] = 1;
      else if (m.init) this.markConstructed(m.cf.name, tsc);
      id = this.ids[mi];
      if (f.entryEv >= this.writableFrom(f) && out.method[f.entryEv] < 0) out.method[f.entryEv] = id;
      // (an entry handed on already has a negative index, and it still counts: flushed + entryEv is where it was)
      if (f.entered) this.entered.mark(mi, this.flushed + f.entryEv);
      // (counted however the reading was windowed: flushSettled may have handed the entry event on already)
      if (f.entered) this.entries[mi]++;
    } else if (!f.lost && f.anyBci >= 0) id = this.ids[f.anyBci]; // (a deoptimized activation that ran no bytecode)
    if (emitExit) out.push(EventKind.Exit, EventSource.Interpreter, id, -1, -1, tsc);
  }

  /**
   * A callee that returned is known to be `callee`: of the caller's states (each at the invoke that made the call),
   * only those whose invoke can reach it remain. Methods with the same bytecode (constructor chains, say) are told
   * apart this way.
   */
  private narrowCaller(caller: Frame | undefined, callee: Method): void {
    if (!caller || caller.lost || caller.search || caller.anyBci >= 0 || caller.n < 2) return;
    this.ownStates(caller);
    const pool = this.pool;
    this.scratchN = 0;
    for (let k = 0; k < caller.n; k++) {
      const s = caller.states[k];
      const bci = pool.bci[s];
      if (bci < 0) continue;
      const m = this.methods[pool.method[s]];
      const targets = this.universe.invokeTargets(m, bci);
      if (targets ? targets.includes(callee) : linkerReaches(m, bci, callee)) this.pushScratch(s);
    }
    if (this.scratchN === 0 || this.scratchN === caller.n) return;
    this.giveScratch(caller);
    if (caller.n === 1) this.settle(caller, caller.states[0]);
    this.resolveEntry(caller);
  }

  /** Advances frame f by opcode `op` explained by output event `ev`; false (f as it was) when no state allows it. */
  private step(f: Frame, op: number, ev: number): boolean {
    const { pool, methods } = this;
    if (f.search) {
      f.search = false;
      return this.stepInTrie(f, this.searchRoot(op), ev);
    }
    if (f.pathLen) return this.stepInTrie(f, this.searchChild(f.node, f.pathEvs[f.pathLen - 1], op), ev);
    this.scratchN = 0;
    if (f.anyBci >= 0) {
      const m = methods[f.anyBci];
      const code = m.code!;
      const bcis = this.universe.successors(m).instructions();
      for (let k = 0; k < bcis.length; k++) if (code[bcis[k]] === op) this.pushScratch(pool.add(m.index, bcis[k], -1, ev));
      f.anyBci = -1;
    } else {
      this.seen.clear();
      for (let k = 0; k < f.n; k++) this.successorStates(f.states[k], op, ev, f.heldAux);
    }
    if (this.scratchN === 0 || this.scratchN > MAX_STATES) return false;
    f.heldAux = 0;
    if (this.scratchN > 1 && this.out.aux[ev] !== BytecodeForm.Unknown && !isIfOpcode(op) && !isSwitchOpcode(op)) this.orderByForm(ev, op);
    this.giveScratch(f);
    return true;
  }

  /**
   * The states in scratch (explaining interpreted bytecode `op`, output event `ev`) ordered by what the interpreter
   * showed (rewrites.ts, resolution.ts): those it fits first, then those it speaks weakly against, then those it
   * says cannot be (when two states meet later, the first one's chain is kept). None is dropped: that evidence is
   * read against this thread's earlier attributions, which may have named a twin, and dropping the state that is
   * right leaves a frame only a wrong method fits (h2 short: 35 lines jportal alone covered, SimpleCase.mapColumns
   * among them, came from that). The opcodes that follow decide; at an ambiguous end chainEvidence does.
   */
  private orderByForm(ev: number, op: number): void {
    const pool = this.pool;
    const aux = this.out.aux[ev];
    const n = this.scratchN;
    let fits = 0;
    let weak = 0;
    const score = this.formScore.length < n ? (this.formScore = new Int32Array(n * 2)) : this.formScore;
    for (let k = 0; k < n; k++) {
      const s = this.scratch[k];
      const mi = pool.method[s];
      score[k] = this.evidenceAgainst(aux, mi, pool.bci[s], op);
      if (score[k] === 0) fits++;
      else if (score[k] < STRONG) weak++;
    }
    if (fits === n) return;
    const keep = n;
    const order = this.formOrder.length < n ? (this.formOrder = new Int32Array(n * 2)) : this.formOrder;
    let a = 0;
    let b = fits;
    let c = fits + weak;
    for (let k = 0; k < n; k++) {
      if (score[k] === 0) order[a++] = this.scratch[k];
      else if (score[k] < STRONG) order[b++] = this.scratch[k];
      else order[c++] = this.scratch[k];
    }
    this.scratch.set(order.subarray(0, keep));
    this.scratchN = keep;
  }
  private formScore = new Int32Array(16);
  private formOrder = new Int32Array(16);

  /** The states after state `s` that hold opcode `op` (explained by output event `ev`), into scratch. */
  /** (`heldAux`: the aux of the state's event when that event was handed on, Frame.heldAux) */
  private successorStates(s: number, op: number, ev: number, heldAux: number): void {
    const pool = this.pool;
    const mi = pool.method[s];
    const bci = pool.bci[s];
    if (bci < 0) {
      const code = this.methods[mi].code!;
      if (code.length > 0 && code[0] === op) this.pushScratch(pool.add(mi, 0, s, ev));
      return;
    }
    const sev = pool.ev[s];
    const n = this.nextBcis(mi, bci, op, sev >= 0 ? this.out.aux[sev] : heldAux);
    for (let k = 0; k < n; k++) this.pushScratch(pool.add(mi, this.next[k], s, ev));
  }

  /**
   * The successors of `bci` in method `mi` that hold `op`, into `next` (their number), less those `seen` has
   * (which gets them): a state reached two ways is one. `aux`: the aux of the event `bci` explained (an if*'s
   * outcome, as the template's conditional jump told it: 1 taken, -1 not taken; java.ts).
   */
  private nextBcis(mi: number, bci: number, op: number, aux: number): number {
    const m = this.methods[mi];
    const code = m.code!;
    const table = this.universe.successors(m);
    const o = table.of(bci);
    const list = table.list;
    const keyBase = m.id * 65536;
    let n = 0;
    for (let k = o + 1, end = o + 1 + list[o]; k < end; k++) {
      const t = list[k];
      if (code[t] !== op || !outcomeAllows(code, bci, t, aux)) continue;
      if (!this.seen.add(keyBase + t)) continue;
      if (n === this.next.length) this.next = grownInt32(this.next, n + 1);
      this.next[n++] = t;
    }
    return n;
  }

  /** The search step of frame f to trie node `node` by output event `ev`; false (f as it was) when no state is left. */
  private stepInTrie(f: Frame, node: SearchNode, ev: number): boolean {
    if (node.count === 0 || node.count > MAX_STATES) return false;
    f.enterNode(node, ev);
    if (node.count <= OWN_STATES_AT) this.ownStates(f);
    return true;
  }

  /** The first trie level: every method that starts with `op`. */
  private searchRoot(op: number): SearchNode {
    let node = this.trieRoots.get(op);
    if (!node) {
      const ms = this.universe.startingWith(op);
      const method = new Int32Array(ms.length);
      for (let k = 0; k < ms.length; k++) method[k] = ms[k].index;
      node = this.makeNode(op, method, new Int32Array(ms.length), new Int32Array(ms.length).fill(-1), ms.length);
      this.trieRoots.set(op, node);
    }
    return node;
  }

  /** The child of `node` by opcode `op` (`ev`: the event that led to `node`, whose aux tells an if*'s outcome). */
  private searchChild(node: SearchNode, ev: number, op: number): SearchNode {
    const branch = isIfOpcode(node.op);
    const aux = branch || isSwitchOpcode(node.op) ? this.out.aux[ev] : 0;
    const key = branch || aux === 0 ? edgeKey(op, aux > 0 ? 1 : aux < 0 ? -1 : 0) : switchEdgeKey(op, aux);
    let child = node.children.get(key);
    if (child) return child;
    // the NFA step of every entry, in order (as `step` would make the states)
    this.seen.clear();
    let count = 0;
    let method = new Int32Array(64);
    let bci = new Int32Array(64);
    let parent = new Int32Array(64);
    for (let j = 0; j < node.count; j++) {
      const n = this.nextBcis(node.method[j], node.bci[j], op, aux);
      for (let k = 0; k < n; k++) {
        if (count === method.length) {
          method = grownInt32(method, count + 1);
          bci = grownInt32(bci, count + 1);
          parent = grownInt32(parent, count + 1);
        }
        method[count] = node.method[j];
        bci[count] = this.next[k];
        parent[count++] = j;
      }
    }
    child = this.makeNode(op, method, bci, parent, count);
    if (this.trieSize + count <= TRIE_BUDGET) {
      this.trieSize += count;
      node.children.set(key, child);
    }
    return child;
  }

  private makeNode(op: number, method: Int32Array, bci: Int32Array, parent: Int32Array, count: number): SearchNode {
    if (count === 0 || count > MAX_STATES) return new SearchNode(op, EMPTY, EMPTY, EMPTY, count, undefined, -1);
    let agreedId: number | undefined = this.ids[method[0]];
    let agreedMethod = method[0];
    for (let k = 1; k < count; k++) {
      if (this.ids[method[k]] !== agreedId) agreedId = undefined;
      if (method[k] !== agreedMethod) agreedMethod = -1;
    }
    return new SearchNode(op, method.slice(0, count), bci.slice(0, count), parent.slice(0, count), count, agreedId, agreedMethod);
  }

  /**
   * A frame on the trie gets its states as its own (StatePool), each with its chain back to the search's first
   * opcode; no-op for others.
   */
  private ownStates(f: Frame): void {
    if (!f.pathLen) return;
    this.beginMaking(f);
    const last = f.pathLen - 1;
    const node = f.node;
    this.scratchN = 0;
    for (let j = 0; j < node.count; j++) this.pushScratch(this.stateOfNode(f, last, j));
    this.giveScratch(f);
  }

  /**
   * Which of the methods an ambiguous frame ended in (PT cannot tell methods with the same bytecode apart) is
   * taken: not a static initializer this thread has run (a class is initialized once); a static initializer of the
   * class the caller's instruction made the VM initialize or of a supertype, the most general first (the VM
   * initializes a class's superclasses before it); else one whose class was loaded by `tsc` (before: no object of
   * it could run); of those, the class used last: loaded, or an
   * object of it constructed in this thread (a service is loaded and instantiated before the next, an object is
   * mostly used right after it is made); of those, a target of the invoke the caller's chosen state is at (when
   * the caller was ambiguous: the callee follows the choice the caller's own end will make); then the first.
   * Returns a rank: lower is better.
   */
  private rankOf(method: number, tsc: number, initializing: Set<string> | null, constructing: string | null = null, preferred: readonly Method[] | null = null): number {
    const m = this.methods[method];
    // the VM constructs the NullPointerException of a dereference that faulted (and its constructor the
    // superclass's part of it)
    if (constructing && m.init && m.cf.name === constructing) return -Infinity;
    if (m.clinit && this.ranClinit[method]) return 2e300;
    // the instruction that made the VM initialize a class names it: its <clinit> (or a supertype's) runs now, the
    // class with the fewest supertypes first
    if (initializing && m.clinit && initializing.has(m.cf.name)) return INITIALIZING_RANK - (1000 - Math.min(999, this.universe.supertypeCount(m.cf.name))) * 1e300;
    if (m.loadTsc > tsc) return 1e300;
    if (preferred && preferred.includes(m)) return -1e300;
    const constructed = this.constructedAt.get(m.cf.name);
    // an instance method of a class no object of which this thread has seen made: after every method whose class
    // had one (objects made by other threads, or by the VM without a constructor, are rarer)
    if (constructed === undefined && !m.isStatic && !m.init && !m.clinit && (m.cf.access & ACC_INTERFACE) === 0) return UNCONSTRUCTED_RANK;
    const used = Math.max(m.loadTsc, constructed ?? -Infinity);
    return used === -Infinity ? 1e299 : -used;
  }

  /** The index into f.states of the state chosen at f's ambiguous end (choose). */
  private chosenState(f: Frame, tsc: number): number {
    if (f.n === 1) return 0;
    return this.choose(f, tsc, f.n, (k) => this.pool.method[f.states[k]]);
  }

  /** The targets of the invoke at which the state an ambiguous frame would end in now (choose) stands; null when unknown. */
  private chosenTargets(f: Frame, tsc: number): readonly Method[] | null {
    let method: number;
    let bci: number;
    if (f.pathLen) {
      const node = f.node;
      const j = this.choose(f, tsc, Math.min(node.count, node.method.length), (k) => node.method[k]);
      [method, bci] = [node.method[j], node.bci[j]];
    } else {
      const s = f.states[this.chosenState(f, tsc)];
      [method, bci] = [this.pool.method[s], this.pool.bci[s]];
    }
    return this.universe.callSite(this.methods[method], bci)?.targets ?? null;
  }

  /** The state chosen at the ambiguous end of a frame on the trie (choose). */
  private chosenStateOfNode(f: Frame, tsc: number): number {
    this.beginMaking(f);
    const node = f.path[f.pathLen - 1];
    const best = this.choose(f, tsc, Math.min(node.count, node.method.length), (j) => node.method[j]);
    return this.stateOfNode(f, f.pathLen - 1, best);
  }

  /** Of frame f's `n` candidate methods (`methodAt`), the index of the first of best rank (rankOf); of equal
   * ranks, the method whose primitive parameters a linker passes exactly (linkerFit). */
  private choose(f: Frame, tsc: number, n: number, methodAt: (k: number) => number): number {
    // what the VM said at its death first (a method the interpreter never entered is not it; nor, after the others,
    // one this thread has already entered as often as the VM counted in all threads), then what the interpreter's
    // rewriting says (a bytecode run in its class-file form had not run), then the VM's own rules
    // (rankOf's -Infinity and impossible ranks), then a rewritten bytecode that had not run here, then the rank, then
    // the linker's fit
    const evidence = n > 1 && n <= CHAIN_EVIDENCE_CANDIDATES;
    let best = 0;
    let bNever = 3;
    let bStrong = Infinity;
    let bTier = Infinity;
    let bWeak = Infinity;
    let bRank = Infinity;
    let bFit = -1;
    for (let k = 0; k < n; k++) {
      const mi = methodAt(k);
      const m = this.methods[mi];
      const never = m.neverRan ? 2 : m.vmEntries >= 0 && this.entries[mi] >= m.vmEntries ? 1 : 0;
      if (never > bNever) continue;
      if (never < bNever) [bStrong, bTier, bWeak, bRank, bFit] = [Infinity, Infinity, Infinity, Infinity, -1];
      bNever = never;
      const r = this.rankOf(mi, tsc, f.initializing, f.constructing, f.preferred);
      const against = (evidence ? this.chainEvidence(f, k) : 0) + (f.entryAux ? this.entered.against(f.entryAux, mi, this.methods[mi].extraLocals, this.flushed + f.entryEv) : 0);
      const strong = Math.floor(against / STRONG);
      const tier = r <= INITIALIZING_RANK ? 0 : r >= 1e300 ? 2 : 1;
      const weak = against - strong * STRONG;
      if (strong > bStrong || (strong === bStrong && (tier > bTier || (tier === bTier && (weak > bWeak || (weak === bWeak && r > bRank)))))) continue;
      const fit = f.linkerArgs ? linkerFit(this.methods[mi].descriptor, f.linkerArgs) : -1;
      if (strong === bStrong && tier === bTier && weak === bWeak && r === bRank && fit <= bFit) continue;
      [best, bStrong, bTier, bWeak, bRank, bFit] = [k, strong, tier, weak, r, fit];
    }
    return best;
  }

  /**
   * How much the interpreter's rewriting speaks against candidate k of frame f (as choose numbers them: an entry of
   * the trie node it is at, or one of its states): RanBytecodes.against summed over the events of the candidate's
   * chain, back to the last settled event (at most CHAIN_EVIDENCE_MAX).
   */
  private chainEvidence(f: Frame, k: number): number {
    const out = this.out;
    let sum = 0;
    if (f.pathLen) {
      let j = k;
      for (let l = f.pathLen - 1; l >= 0 && j >= 0 && f.pathLen - l <= CHAIN_EVIDENCE_MAX; l--) {
        const node = f.path[l];
        const aux = out.aux[f.pathEvs[l]];
        if (aux > 0 && !isIfOpcode(node.op)) sum += this.evidenceAgainst(aux, node.method[j], node.bci[j], node.op);
        j = node.parent[j];
      }
      return sum;
    }
    const pool = this.pool;
    let steps = 0;
    for (let x = f.states[k]; x >= 0 && pool.ev[x] >= 0 && steps < CHAIN_EVIDENCE_MAX; x = pool.prev[x], steps++) {
      const ev = pool.ev[x];
      const aux = out.aux[ev];
      const op = out.opcode[ev];
      if (aux > 0 && out.kind[ev] === EventKind.Bytecode && pool.bci[x] >= 0 && !isIfOpcode(op)) sum += this.evidenceAgainst(aux, pool.method[x], pool.bci[x], op);
    }
    return sum;
  }

  /** Starts making the states of frame f's trie path: none is made yet. */
  private beginMaking(f: Frame): void {
    if (this.madeAt.length < f.pathLen) this.madeAt = new Int32Array(f.pathLen * 2);
    let total = 0;
    for (let l = 0; l < f.pathLen; l++) {
      this.madeAt[l] = total;
      total += f.path[l].count;
    }
    if (this.madeGen.length < total) {
      this.madeGen = new Uint32Array(total * 2);
      this.madeState = new Int32Array(total * 2);
      this.makingGen = 0;
    }
    if (++this.makingGen === 0xffffffff) {
      this.madeGen.fill(0);
      this.makingGen = 1;
    }
  }

  /**
   * The state of entry j of the frame's trie node at path level `level`, made with the states before it that
   * are not made yet (since beginMaking: entries share the states of the entries they came from).
   */
  private stateOfNode(f: Frame, level: number, j: number): number {
    const { madeAt, madeGen, madeState, makingGen: gen } = this;
    // climb to a made entry or above the first level, then make the entries on the way down
    let k = 0;
    let l = level;
    let e = j;
    for (; l >= 0 && madeGen[madeAt[l] + e] !== gen; l--) {
      if (k === this.chain.length) this.chain = grownInt32(this.chain, k + 1);
      this.chain[k++] = e;
      e = f.path[l].parent[e];
    }
    let prev = l >= 0 ? madeState[madeAt[l] + e] : -1;
    for (l++; k > 0; l++) {
      const x = this.chain[--k];
      const node = f.path[l];
      prev = this.pool.add(node.method[x], node.bci[x], prev, f.pathEvs[l]);
      madeGen[madeAt[l] + x] = gen;
      madeState[madeAt[l] + x] = prev;
    }
    return prev;
  }

  /**
   * The first opcode after an exception: the handler of this frame or a caller that starts with it, whose range
   * holds the frame's bci (any of the method's handlers for a state from before the last gap, `lastGapEv`).
   */
  private handlerFor(op: number, ev: number, lastGapEv: number): number {
    const pool = this.pool;
    for (let d = this.depth - 1; d >= 0; d--) {
      const f = this.frames[d];
      if (f.lost) continue;
      this.ownStates(f);
      this.scratchN = 0;
      for (let k = 0; k < f.n; k++) {
        const s = f.states[k];
        const mi = pool.method[s];
        const m = this.methods[mi];
        const code = m.code!;
        const bci = pool.bci[s];
        // (a state from before a gap is stale: the frame went on in the gap, any of its method's handlers may catch)
        const stale = pool.ev[s] < lastGapEv;
        for (const h of m.handlers) if ((stale || (bci >= h.startPc && bci < h.endPc)) && code[h.handlerPc] === op && !this.scratchHas(mi, h.handlerPc)) this.pushScratch(pool.add(mi, h.handlerPc, s, ev));
      }
      if (this.scratchN) {
        this.giveScratch(f);
        return d;
      }
    }
    return -1;
  }

  /** A state of method `mi` (Method.index) at `bci` is in scratch. */
  private scratchHas(mi: number, bci: number): boolean {
    const pool = this.pool;
    for (let k = 0; k < this.scratchN; k++) {
      const x = this.scratch[k];
      if (pool.method[x] === mi && pool.bci[x] === bci) return true;
    }
    return false;
  }

  /** A caller frame (below the top, at most `depth` down) that `op` continues: the frames above it returned unseen. Its index or -1. */
  private callerStep(op: number, ev: number, depth: number): number {
    for (let d = this.depth - 2; d >= 0 && d >= this.depth - 1 - depth; d--) {
      const c = this.frames[d];
      if (c.lost || c.search || c.anyBci >= 0 || c.n === 0) continue;
      if (this.step(c, op, ev)) return d; // (a step that fails leaves the frame as it was)
    }
    return -1;
  }

  /**
   * After lost data, the frame that goes on (resumeChoice), made so and stepped by `op` (event `ev`); undefined
   * (nothing changed) when no reading runs the first opcode or, with `whole`, when none runs all of at least
   * RESUME_MIN opcodes looked ahead.
   */
  private resume(op: number, ev: number, tsc: number, input: EventStream, i: number, whole: boolean): Frame | undefined {
    const choice = this.resumeChoice(input, i, whole);
    return choice < 0 ? undefined : this.takeReading(choice, op, ev, tsc);
  }

  /** The frame reading `choice` (of resumeChoice) names, made so and stepped by `op`; undefined when it cannot. */
  private takeReading(choice: number, op: number, ev: number, tsc: number): Frame | undefined {
    const d = choice >> 2;
    switch ((choice & 3) as Resume) {
      case Resume.Next: {
        if (!this.step(this.frames[d], op, ev)) return undefined;
        this.unwindTo(d, ev, tsc);
        return this.frames[d];
      }
      case Resume.Anywhere: {
        if (!this.reanchor(this.frames[d], op, ev)) return undefined;
        this.unwindTo(d, ev, tsc);
        const f = this.frames[d];
        f.ownLen = -1;
        return f;
      }
      case Resume.InCallee:
        return this.resumeInCallee(d, this.resumeCallees, op, ev, tsc) ? this.frames[this.depth - 1] : undefined;
      case Resume.Outermost: {
        // the frames from d up are lost ones: their opcodes are of the methods in resumeCallees
        if (!this.anywhereStates(this.resumeCallees, op, ev)) return undefined;
        const [states, n] = this.takeScratch();
        this.unwindTo(d - 1, ev, tsc);
        return this.pushWithStates(states, n);
      }
    }
  }

  /**
   * After lost data, how the trace goes on, judged by the opcodes that come next (input from event `i`;
   * collectOpcodes). The readings, for each frame d with a method at most RESUME_DEPTH below the top (the frames
   * above d returned unseen):
   * - Next: a caller d at an instruction after its state's;
   * - Anywhere: d's method (its states agree on it) at any instruction holding the first opcode (d went on in the gap);
   * - InCallee: d made a call in the gap, and a method d's method can call runs at any of its instructions (the
   *   callees that run most are kept in `resumeCallees`);
   * - Outermost: when the frames on top are lost ones (or there are none), a method taken for the thread's outermost
   *   that returned (noteOutermost) goes on at any instruction (in resumeCallees[0]); d is the first lost frame.
   * The reading that runs most of the opcodes wins; ties go in that order, then to the frame nearest the top.
   * Returns d * 4 + the reading, or -1 when none runs the first opcode or, with `whole`, when none runs all of at
   * least RESUME_MIN.
   */
  private resumeChoice(input: EventStream, i: number, whole: boolean): number {
    const n = (this.lookLen = collectOpcodes(input, i, this.lookOps, this.lookAux));
    this.choiceLen = 0;
    if (n === 0 || (whole && n < RESUME_MIN)) return -1;
    let top = this.depth - 1;
    while (top >= 0 && this.frames[top].lost) top--;
    const low = Math.max(0, top - RESUME_DEPTH);
    let best = -1;
    let bestLen = 0;
    for (let d = (top === this.depth - 1 ? top - 1 : top); d >= low; d--) {
      const c = this.frames[d];
      if (c.lost || c.search || c.anyBci >= 0 || c.n === 0) continue;
      const len = this.continuationFit(c, n);
      if (len > bestLen) {
        best = d * 4 + Resume.Next;
        bestLen = len;
      }
    }
    for (let d = top; d >= low && bestLen < n; d--) {
      const m = this.resumableMethod(d);
      if (!m) continue;
      const len = this.anywhereFit(m, n);
      if (len > bestLen) {
        best = d * 4 + Resume.Anywhere;
        bestLen = len;
      }
    }
    const callees = this.resumeCallees;
    callees.length = 0;
    for (let d = top; d >= low && bestLen < n && !whole; d--) {
      const m = this.resumableMethod(d);
      if (!m) continue;
      let dBest = 0;
      const first = callees.length;
      for (const c of this.universe.calleesOf(m)) {
        const len = this.anywhereFit(c, n);
        if (len === 0 || len < dBest || len <= bestLen) continue;
        if (len > dBest) {
          callees.length = first;
          dBest = len;
        }
        callees.push(c);
      }
      if (dBest > bestLen) {
        callees.copyWithin(0, first);
        callees.length -= first;
        best = d * 4 + Resume.InCallee;
        bestLen = dBest;
      } else callees.length = first;
    }
    if (top < this.depth - 1 || this.depth === 0) {
      for (const m of this.outermost) {
        if (bestLen >= n) break;
        const len = this.anywhereFit(m, n);
        if (len > bestLen) {
          callees.length = 0;
          callees.push(m);
          best = (top + 1) * 4 + Resume.Outermost;
          bestLen = len;
        }
      }
    }
    if ((top < this.depth - 1 || this.depth === 0) && whole && bestLen < n && n >= GLOBAL_MIN && this.globalTurn()) {
      // any method that runs them all, from the methods holding the rarest of the opcodes
      let rare = this.universe.holding(this.lookOps[0]);
      for (let k = 1; k < n; k++) {
        const l = this.universe.holding(this.lookOps[k]);
        if (l.length < rare.length) rare = l;
      }
      if (rare.length <= GLOBAL_SCAN) {
        callees.length = 0;
        for (const m of rare) if (this.anywhereFit(m, n) === n) callees.push(m);
        if (callees.length > 0 && callees.length <= GLOBAL_METHODS) {
          best = (top + 1) * 4 + Resume.Outermost;
          bestLen = n;
        }
      }
    }
    this.choiceLen = bestLen;
    if (whole) return bestLen < n ? -1 : best;
    // a reading is taken on enough evidence: RESUME_MIN opcodes, or all there are up to a call or a gap (one
    // that ends at a return would end a frame on the strength of a few opcodes another frame also holds)
    return bestLen >= RESUME_MIN || (bestLen === n && !isReturn(this.lookOps[n - 1])) ? best : -1;
  }

  /** Whether a search over all methods may run now: the first GLOBAL_EAGER tries since the last resume, then one in 64. */
  private globalTurn(): boolean {
    this.globalTries++;
    return this.globalTries <= GLOBAL_EAGER || (this.globalTries & 63) === 0;
  }

  /** A method taken for the thread's outermost returned: remembered (the last few) in case its opcodes go on. */
  private noteOutermost(m: Method): void {
    if (!m.code) return;
    const k = this.outermost.indexOf(m);
    if (k >= 0) this.outermost.splice(k, 1);
    this.outermost.unshift(m);
    if (this.outermost.length > OUTERMOST_KEPT) this.outermost.length = OUTERMOST_KEPT;
  }

  /** The method frame d's states agree on, when the frame has states and code: what it may resume in. */
  private resumableMethod(d: number): Method | undefined {
    const c = this.frames[d];
    if (c.lost || c.search || c.n === 0) return undefined;
    const m = this.agreedMethod(c);
    return m?.code ? m : undefined;
  }

  /** How many of the looked-ahead opcodes (the first n) method m runs from any of its instructions. */
  private anywhereFit(m: Method, n: number): number {
    if (!m.code || m.code.length === 0) return 0;
    const table = this.universe.successors(m);
    const starts = table.instructions();
    return this.walk.fit(m.code, table, starts, starts.length, this.lookOps, this.lookAux, n);
  }

  /** Into scratch: a state at every instruction holding `op` of the methods (explained by event `ev`); false (scratch empty) when none or too many. */
  private anywhereStates(methods: readonly Method[], op: number, ev: number): boolean {
    const pool = this.pool;
    this.scratchN = 0;
    for (const m of methods) {
      const code = m.code!;
      const bcis = this.universe.successors(m).instructions();
      for (let k = 0; k < bcis.length; k++) if (code[bcis[k]] === op) this.pushScratch(pool.add(m.index, bcis[k], -1, ev));
    }
    if (this.scratchN > 0 && this.scratchN <= MAX_STATES) return true;
    this.scratchN = 0;
    return false;
  }

  /** The states in scratch, handed over (scratch starts anew): they wait while the stack changes. */
  private takeScratch(): [Int32Array, number] {
    const taken: [Int32Array, number] = [this.scratch, this.scratchN];
    this.scratch = new Int32Array(64);
    this.scratchN = 0;
    return taken;
  }

  /** A frame pushed with the states taken from scratch (takeScratch), whose buffer scratch gets back. */
  private pushWithStates(states: Int32Array, n: number): Frame {
    const f = this.pushFrame(-1, false, -1);
    f.setStates(states, n);
    this.scratch = states; // (its states were copied: the larger buffer is reused)
    return f;
  }

  /**
   * Frame d made a call in lost data and `callees` may be what runs now (Resume.InCallee): the frames above d end,
   * d goes on at any instruction once the callee returns, and a frame on top of it begins at every instruction of
   * the callees holding `op` (explained by event `ev`). False (nothing changed) when that makes no state or too many.
   */
  private resumeInCallee(d: number, callees: readonly Method[], op: number, ev: number, tsc: number): boolean {
    if (!this.anywhereStates(callees, op, ev)) return false;
    const [states, n] = this.takeScratch();
    const caller = this.frames[d];
    const m = this.agreedMethod(caller)!;
    this.ownStates(caller);
    if (caller.n > 1) this.stats.ambiguousEnds++;
    this.settle(caller, caller.states[0]);
    caller.anyBci = m.index;
    caller.called = true;
    this.unwindTo(d, ev, tsc);
    this.pushWithStates(states, n);
    return true;
  }

  /** How many of the looked-ahead opcodes (the first n) frame c runs from the instructions after its states'. */
  private continuationFit(c: Frame, n: number): number {
    const { pool, methods, out } = this;
    const onTrie = c.pathLen > 0;
    const count = onTrie ? c.node.count : c.n;
    let best = 0;
    for (let k = 0; k < count && k < RESUME_STATES && best < n; k++) {
      const mi = onTrie ? c.node.method[k] : pool.method[c.states[k]];
      const bci = onTrie ? c.node.bci[k] : pool.bci[c.states[k]];
      const sev = onTrie ? c.pathEvs[c.pathLen - 1] : pool.ev[c.states[k]];
      const m = methods[mi];
      const code = m.code!;
      const table = this.universe.successors(m);
      let starts = 0;
      if (bci < 0) this.startBcis[starts++] = 0;
      else {
        const aux = sev >= 0 ? out.aux[sev] : c.heldAux;
        const o = table.of(bci);
        const list = table.list;
        for (let x = o + 1, end = o + 1 + list[o]; x < end; x++) {
          const t = list[x];
          if (!outcomeAllows(code, bci, t, aux)) continue;
          if (starts === this.startBcis.length) this.startBcis = grownInt32(this.startBcis, starts + 1);
          this.startBcis[starts++] = t;
        }
      }
      const len = this.walk.fit(code, table, this.startBcis, starts, this.lookOps, this.lookAux, n);
      if (len > best) best = len;
    }
    return best;
  }

  /**
   * A young frame's opcodes stop fitting the methods its call site can call, and nothing went missing since its
   * entry: the entry was not that call's but an upcall the VM made first (resolving the invoke: class loading,
   * a class initializer, call-site linkage), whose caller is the VM. The frame is read again from its entry as a
   * search over all methods, its opcodes so far and then `op`; false (the frame unchanged) when no method fits.
   */
  private replay(f: Frame, op: number, ev: number): boolean {
    const { out, stats } = this;
    this.ownStates(f);
    if (this.saved.length < f.n) this.saved = new Int32Array(f.n);
    this.saved.set(f.states.subarray(0, f.n));
    const savedN = f.n;
    f.search = true;
    let ok = true;
    for (let k = 0; ok && k < f.ownLen; k++) ok = this.step(f, out.opcode[f.own[k]], f.own[k]);
    if (ok) ok = this.step(f, op, ev);
    if (!ok) {
      f.search = false;
      f.setStates(this.saved, savedN);
      return false;
    }
    stats.searched++;
    // what the call site's candidates explained is explained again by the new states
    for (let k = 0; k < f.ownLen; k++) {
      const e = f.own[k];
      if (out.method[e] >= 0) stats.withMethod--;
      if (out.bci[e] >= 0) stats.withBci--;
      out.method[e] = out.bci[e] = -1;
    }
    if (f.entryEv >= 0) out.method[f.entryEv] = -1;
    return true;
  }

  /** The frame's method, if its states agree on one, goes on at any bci holding `op`. */
  private reanchor(f: Frame, op: number, ev: number): boolean {
    if (f.n === 0) return false;
    const m = this.agreedMethod(f);
    if (!m) return false;
    this.ownStates(f);
    // what was known before the break stays (the first state, if several were still possible)
    if (f.n > 1) this.stats.ambiguousEnds++;
    this.settle(f, f.states[0]);
    f.anyBci = m.index;
    return this.step(f, op, ev); // (a step that fails leaves the states as they were)
  }

  /**
   * Frame f (not on the trie) calls now from one of several states: those at an invoke all of whose targets the VM
   * says the interpreter never entered (METHOD_RUNS) go after the others, so that the states that go on, and the
   * callee's choice that follows the caller's (chosenTargets), are of a call that can have been made: the cases of
   * a switch that differ only in which twin they call (ANTLR lexers' `mTokens`) are told apart by their callees.
   */
  private neverRanCallsLast(f: Frame): void {
    if (f.pathLen || f.n < 2) return;
    const { pool, universe, methods } = this;
    let never = 0;
    const mark = this.neverMark.length < f.n ? (this.neverMark = new Uint8Array(f.n * 2)) : this.neverMark;
    for (let k = 0; k < f.n; k++) {
      const s = f.states[k];
      const targets = pool.bci[s] >= 0 ? universe.callSite(methods[pool.method[s]], pool.bci[s])?.targets : undefined;
      mark[k] = targets && targets.length > 0 && targets.every((t) => t.neverRan) ? 1 : 0;
      never += mark[k];
    }
    if (never === 0 || never === f.n) return;
    const order = this.formOrder.length < f.n ? (this.formOrder = new Int32Array(f.n * 2)) : this.formOrder;
    let a = 0;
    for (let k = 0; k < f.n; k++) if (!mark[k]) order[a++] = f.states[k];
    for (let k = 0; k < f.n; k++) if (mark[k]) order[a++] = f.states[k];
    f.states.set(order.subarray(0, f.n));
  }
  private neverMark = new Uint8Array(16);

  /**
   * What an entry after the invoke the frame is at may start: the call site of its state, or with several
   * states, their call sites merged (mergedSites). Undefined when a state is at no invoke with a known target.
   */
  private callersSite(f: Frame): CallSite | undefined {
    const { pool, universe, methods } = this;
    if (f.pathLen) {
      // the same for every frame at that node
      const node = f.node;
      if (node.site === undefined) {
        const site = this.mergedSites(node.method, node.bci, node.count);
        node.site = site ? { targets: [...site.targets], candidates: [...site.candidates] } : null;
      }
      return node.site ?? undefined;
    }
    if (f.n === 1) return universe.callSite(methods[pool.method[f.states[0]]], pool.bci[f.states[0]]);
    if (this.siteMethod.length < f.n) {
      this.siteMethod = new Int32Array(f.n * 2);
      this.siteBci = new Int32Array(f.n * 2);
    }
    for (let k = 0; k < f.n; k++) {
      this.siteMethod[k] = pool.method[f.states[k]];
      this.siteBci[k] = pool.bci[f.states[k]];
    }
    return this.mergedSites(this.siteMethod, this.siteBci, f.n);
  }

  /**
   * The call sites of the invokes at (method[k], bci[k]) for k < n merged (into `merged`, reused): their targets
   * in order, then their initializers; undefined when one has no known target.
   */
  private mergedSites(method: Int32Array, bci: Int32Array, n: number): CallSite | undefined {
    const { universe, methods } = this;
    const { targets, candidates, set } = this.merged;
    targets.length = candidates.length = 0;
    set.clear();
    for (let k = 0; k < n; k++) {
      const site = universe.callSite(methods[method[k]], bci[k]);
      if (!site) return undefined;
      for (const m of site.targets) if (!set.has(m)) {
        set.add(m);
        targets.push(m);
      }
    }
    candidates.push(...targets);
    for (let k = 0; k < n; k++) {
      const site = universe.callSite(methods[method[k]], bci[k])!;
      for (let j = site.targets.length; j < site.candidates.length; j++) {
        const c = site.candidates[j];
        if (!set.has(c)) {
          set.add(c);
          candidates.push(c);
        }
      }
    }
    return this.merged;
  }

  private startFrame(candidates: readonly Method[] | undefined, entryEv: number): void {
    const f = this.pushFrame(entryEv, false, -1);
    if (candidates) {
      for (const m of candidates) if (m.code && m.code.length > 0) f.addState(this.pool.add(m.index, -1, -1, -1));
      if (f.n > 0) f.ownLen = 0;
    }
    if (f.n === 0) {
      // no call site known, or it names no method with bytecode (a signature-polymorphic linker,
      // MethodHandle.linkTo* or invokeBasic, that jumps to its target): found by search
      f.search = true;
      this.stats.searched++;
    }
  }
}

/** Whether the invoke at `bci` of `m` is a method-handle linker that can call `callee`: linkToStatic a static
 * method, the other linkTo* an instance method (DirectMethodHandle$Holder's invokeStatic and invokeSpecial have
 * the same bytecode but for that call). */
function linkerReaches(m: Method, bci: number, callee: Method): boolean {
  const code = m.code;
  if (!code || bci + 2 >= code.length || (code[bci] !== 0xb8 && code[bci] !== 0xb6)) return false;
  const ref = m.cf.methodRef((code[bci + 1] << 8) | code[bci + 2]);
  if (!ref || ref.className !== 'java/lang/invoke/MethodHandle' || !ref.name.startsWith('linkTo')) return false;
  return (ref.name === 'linkToStatic') === callee.isStatic;
}


/** How many of a target's primitive parameters have exactly the type a linker passes (`args` from
 * linkerArgsAt): of overloads with the same bytecode (`prepend(J[BI...)` and `prepend(J[BB...)`), the one the
 * linker's descriptor names, where the other's parameter is only widened to it (the receiver is not among
 * the linker's `args`: parameters and arguments line up). */
function linkerFit(descriptor: string, args: string): number {
  const p = parameterLetters(descriptor);
  let fit = 0;
  for (let k = 0; k < p.length && k < args.length; k++) if (p[k] === args[k] && p[k] !== 'L') fit++;
  return fit;
}

/** Bytecodes that dereference a reference from the stack (a null one makes the VM throw a NullPointerException):
 * field access, invokes with a receiver, array access and length, athrow, monitors. */
function isDereference(op: number): boolean {
  return op === 0xb4 || op === 0xb5 || op === 0xb6 || op === 0xb7 || op === 0xb9 || op === 0xbe || op === 0xbf || op === 0xc2 || op === 0xc3 || (op >= 0x2e && op <= 0x35) || (op >= 0x4f && op <= 0x56);
}

/** The one target an entry of that class can be (natives only: a native method), else undefined. */
function onlyTarget(targets: readonly Method[], nativeOnly: boolean): Method | undefined {
  let only: Method | undefined;
  let count = 0;
  for (const m of targets)
    if (!nativeOnly || m.native) {
      only = m;
      count++;
    }
  return count === 1 ? only : undefined;
}
