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
 */
import { ClassFile, ExceptionHandler, forEachInstruction, parseClass, successors } from '@jportal/classfile';
import { EventKind, EventSource, EventStream } from './events';
import { EntryClass } from './java';
import { JvmModel } from './load';

const ACC_STATIC = 0x0008;
const ACC_NATIVE = 0x0100;
const ACC_INTERFACE = 0x0200;
const ACC_ABSTRACT = 0x0400;
/** more live states than this in one frame: the frame is given up (pathological ambiguity) */
const MAX_STATES = 50_000;
/** a frame started from a call site's candidates is read again by search only within its first opcodes */
const REPLAY_MAX = 32;

interface Method {
  id: number;
  code: Uint8Array | null;
  handlers: ExceptionHandler[];
  native: boolean;
  cf: ClassFile;
  loader: number;
}

interface State {
  m: Method;
  bci: number;
  prev: State | null;
  /** index of the event (in the output stream) this state explains */
  ev: number;
}

interface Frame {
  states: State[];
  /** output index of the entry event that started the frame (-1 when there was none) */
  entryEv: number;
  /** no state is left: the frame's events stay unattributed, only its depth is tracked */
  lost: boolean;
  /** all methods are candidates and no opcode has narrowed them yet */
  search: boolean;
  /** the frame was re-created by a deoptimization: any bci of `anyBci` may come next */
  anyBci: Method | null;
  /**
   * Output indices of the frame's own bytecodes, while it started from a call site's candidates, has made no
   * call and has run at most REPLAY_MAX opcodes; else null. If its opcodes stop fitting those candidates, it can
   * be read again as a frame of unknown method (an upcall from the VM, see `replay`).
   */
  own: number[] | null;
  /** the invoke the frame is at has made its call (an entry came since its last opcode) */
  called: boolean;
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
}

/** Every method of every recorded class, indexed for resolution and search. Built once per trace. */
export class MethodUniverse {
  readonly byId = new Map<number, Method>();
  private readonly byNameDesc = new Map<string, Method[]>();
  private readonly classes = new Map<string, { cf: ClassFile; loader: number }[]>();
  private readonly byFirstOpcode: Method[][] = Array.from({ length: 256 }, () => []);
  private readonly targetCache = new Map<number, Method[] | undefined>();
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

  constructor(model: JvmModel) {
    const known = new Map<string, number>();
    let maxId = -1;
    for (const [id, m] of model.methods) {
      known.set(`${m.loader}:${m.className}.${m.name}${m.signature}`, id);
      if (id > maxId) maxId = id;
    }
    this.firstSynthetic = maxId + 1;
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
        const m: Method = { id, code: mi.code ?? null, handlers: mi.handlers, native: (mi.access & ACC_NATIVE) !== 0, cf, loader };
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

  /** Methods whose code starts with `op` (the candidates of a frame found by search). */
  startingWith(op: number): Method[] {
    return this.byFirstOpcode[op];
  }

  /** The target(s) of the invoke at `bci` of `m`: exact for static/special, by name and descriptor otherwise. */
  invokeTargets(m: Method, bci: number): Method[] | undefined {
    const key = m.id * 65536 + bci;
    if (this.targetCache.has(key)) return this.targetCache.get(key);
    const t = this.resolveInvoke(m, bci);
    this.targetCache.set(key, t);
    return t;
  }

  /**
   * The one method the invoke at `bci` of `m` runs when that follows from the class hierarchy alone: its targets
   * less those every other target overrides (declared in a supertype of another target's class); undefined when
   * more than one is left.
   */
  mostSpecificTarget(m: Method, bci: number): Method | undefined {
    const t = this.invokeTargets(m, bci);
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

const isReturn = (op: number) => op >= 0xac && op <= 0xb1;
const isIfOpcode = (op: number) => (op >= 153 && op <= 166) || op === 198 || op === 199;

/**
 * Rewrites one thread's events with interpreted frames attributed: the same events in the same order, interpreted
 * bytecodes and entries with method (and bci) where the opcodes determine them, plus an `exit` after each
 * interpreted return.
 */
export function attributeInterpreted(universe: MethodUniverse, input: EventStream): { events: EventStream; stats: AttributionStats } {
  const out = new EventStream();
  const stats: AttributionStats = { interpreted: 0, withMethod: 0, withBci: 0, searched: 0, lostFrames: 0, ambiguousEnds: 0, handlers: 0, resynced: 0 };
  const stack: Frame[] = [];
  let lastCompiledMethod = -1;
  let lastCompiledBci = -1;
  let lastWasCompiled = false;
  /** an exception was thrown since the last interpreted bytecode: that bytecode may be a handler's */
  let exceptionPending = false;
  /** the compiled method that was deoptimized: its frame continues in the interpreter without an entry */
  let deoptHint = -1;
  /** output index of the last gap */
  let lastGapEv = -1;
  /** native/intrinsic entries whose method depends on the caller's invoke: [invoke event, entry event, exit event] */
  const pendingNatives: number[] = [];
  const scratch: State[] = [];
  const seen = new Set<number>();

  /** Gives the events of a resolved chain of states their method and bci, then cuts the chain. */
  const settle = (s: State) => {
    for (let x: State | null = s; x && x.ev >= 0; x = x.prev) {
      if (out.method[x.ev] < 0) stats.withMethod++;
      if (out.bci[x.ev] < 0) stats.withBci++;
      out.method[x.ev] = x.m.id;
      out.bci[x.ev] = x.bci;
      if (!x.prev || x.prev.ev < 0) break;
    }
    s.prev = null;
  };

  const resolveEntry = (f: Frame) => {
    if (f.entryEv >= 0 && f.states.length > 0) {
      const id = f.states[0].m.id;
      if (f.states.every((s) => s.m.id === id)) out.method[f.entryEv] = id;
    }
  };

  const endFrame = (f: Frame, tsc: number, emitExit: boolean) => {
    let id = -1;
    if (!f.lost && f.states.length > 0) {
      if (f.states.length > 1) stats.ambiguousEnds++;
      const s = f.states[0];
      settle(s);
      id = s.m.id;
      if (f.entryEv >= 0 && out.method[f.entryEv] < 0) out.method[f.entryEv] = id;
    }
    if (emitExit) out.push(EventKind.Exit, EventSource.Interpreter, id, -1, -1, tsc);
  };

  /**
   * A callee that returned is known to be `callee`: of the caller's states (each at the invoke that made the call),
   * only those whose invoke can reach it remain. Methods with the same bytecode (constructor chains, say) are told
   * apart this way.
   */
  const narrowCaller = (caller: Frame | undefined, callee: Method) => {
    if (!caller || caller.lost || caller.search || caller.anyBci || caller.states.length < 2) return;
    const keep = caller.states.filter((x) => x.bci >= 0 && universe.invokeTargets(x.m, x.bci)?.includes(callee));
    if (keep.length === 0 || keep.length === caller.states.length) return;
    caller.states = keep;
    if (keep.length === 1) settle(keep[0]);
    resolveEntry(caller);
  };

  /** Advances frame f by opcode `op` explained by output event `ev`; false when no state allows it. */
  const step = (f: Frame, op: number, ev: number): boolean => {
    scratch.length = 0;
    seen.clear();
    if (f.search) {
      for (const m of universe.startingWith(op)) scratch.push({ m, bci: 0, prev: null, ev });
      f.search = false;
    } else if (f.anyBci) {
      const m = f.anyBci;
      forEachInstruction(m.code!, (b, o) => {
        if (o === op) scratch.push({ m, bci: b, prev: null, ev });
      });
      f.anyBci = null;
    } else {
      for (const s of f.states) {
        const code = s.m.code!;
        if (s.bci < 0) {
          if (code.length > 0 && code[0] === op) scratch.push({ m: s.m, bci: 0, prev: s, ev });
          continue;
        }
        // an if* whose outcome the template's conditional jump told (aux 1 taken, -1 not taken; java.ts)
        const outcome = s.ev >= 0 && isIfOpcode(code[s.bci]) ? out.aux[s.ev] : 0;
        const taken = outcome > 0 ? s.bci + (((code[s.bci + 1] << 24) >> 16) | code[s.bci + 2]) : -1;
        for (const t of successors(code, s.bci)) {
          if (code[t] !== op) continue;
          if ((outcome > 0 && t !== taken) || (outcome < 0 && t !== s.bci + 3)) continue;
          const key = s.m.id * 65536 + t;
          if (seen.has(key)) continue;
          seen.add(key);
          scratch.push({ m: s.m, bci: t, prev: s, ev });
        }
      }
    }
    if (scratch.length === 0 || scratch.length > MAX_STATES) return false;
    f.states = scratch.slice();
    return true;
  };

  /** An opcode no state allowed: the handler of this frame or a caller that starts with it (an exception). */
  const handlerFor = (op: number, ev: number): number => {
    for (let d = stack.length - 1; d >= 0; d--) {
      const f = stack[d];
      if (f.lost) continue;
      const next: State[] = [];
      for (const s of f.states) {
        const code = s.m.code!;
        for (const h of s.m.handlers) if (s.bci >= h.startPc && s.bci < h.endPc && code[h.handlerPc] === op && !next.some((x) => x.m === s.m && x.bci === h.handlerPc)) next.push({ m: s.m, bci: h.handlerPc, prev: s, ev });
      }
      if (next.length) {
        f.states = next;
        return d;
      }
    }
    return -1;
  };

  /** A caller frame (below the top, at most `depth` down) that `op` continues: the frames above it returned unseen. Its index or -1. */
  const callerStep = (op: number, ev: number, depth: number): number => {
    for (let d = stack.length - 2; d >= 0 && d >= stack.length - 1 - depth; d--) {
      const c = stack[d];
      if (c.lost || c.search || c.anyBci || c.states.length === 0) continue;
      const saved = c.states;
      if (step(c, op, ev)) return d;
      c.states = saved;
    }
    return -1;
  };

  /**
   * A young frame's opcodes stop fitting the methods its call site can call, and nothing went missing since its
   * entry: the entry was not that call's but an upcall the VM made first (resolving the invoke: class loading,
   * a class initializer, call-site linkage), whose caller is the VM. The frame is read again from its entry as a
   * search over all methods, its opcodes so far and then `op`; false (the frame unchanged) when no method fits.
   */
  const replay = (f: Frame, op: number, ev: number): boolean => {
    const own = f.own!;
    const saved = f.states;
    f.search = true;
    let ok = true;
    for (let k = 0; ok && k < own.length; k++) ok = step(f, out.opcode[own[k]], own[k]);
    if (ok) ok = step(f, op, ev);
    if (!ok) {
      f.search = false;
      f.states = saved;
      return false;
    }
    stats.searched++;
    // what the call site's candidates explained is explained again by the new states
    for (const e of own) {
      if (out.method[e] >= 0) stats.withMethod--;
      if (out.bci[e] >= 0) stats.withBci--;
      out.method[e] = out.bci[e] = -1;
    }
    if (f.entryEv >= 0) out.method[f.entryEv] = -1;
    return true;
  };

  /** The frame's method, if its states agree on one, goes on at any bci holding `op`. */
  const reanchor = (f: Frame, op: number, ev: number): boolean => {
    if (f.states.length === 0) return false;
    const m = f.states[0].m;
    if (!f.states.every((x) => x.m === m)) return false;
    const saved = f.states;
    // what was known before the break stays (the first state, if several were still possible)
    if (saved.length > 1) stats.ambiguousEnds++;
    settle(saved[0]);
    f.anyBci = m;
    if (step(f, op, ev)) return true;
    f.states = saved;
    return false;
  };

  /**
   * The methods an entry after the invokes of `callers` may start: their targets, then (for an invokestatic)
   * the static initializers the VM may run first. Targets come first: an ambiguous end takes the first state.
   */
  const withInitializers = (callers: State[], targets: Set<Method>): Method[] => {
    const list = [...targets];
    targets = new Set(targets);
    for (const s of callers) {
      if (s.bci < 0 || s.m.code![s.bci] !== 0xb8) continue; // invokestatic
      for (const t of universe.invokeTargets(s.m, s.bci) ?? []) for (const c of universe.initializers(t)) if (!targets.has(c)) {
        targets.add(c);
        list.push(c);
      }
    }
    return list;
  };

  const startFrame = (candidates: Method[] | undefined, entryEv: number): Frame => {
    const f: Frame = { states: [], entryEv, lost: false, search: false, anyBci: null, own: null, called: false };
    if (!candidates) {
      f.search = true;
      stats.searched++;
    } else {
      for (const m of candidates) if (m.code && m.code.length > 0) f.states.push({ m, bci: -1, prev: null, ev: -1 });
      if (f.states.length > 0) f.own = [];
      if (f.states.length === 0) {
        // bytecodes follow, but the call site names no method with bytecode: a signature-polymorphic linker
        // (MethodHandle.linkTo*, invokeBasic) that jumps to its target: found by search
        f.search = true;
        stats.searched++;
      }
    }
    return f;
  };

  for (let i = 0; i < input.length; i++) {
    const kind = input.kind[i];
    const source = input.source[i];
    const tsc = input.tsc[i];
    const ev = out.length;
    out.push(kind, source, input.method[i], input.bci[i], input.opcode[i], tsc, input.aux[i]);

    if (source !== EventSource.Interpreter) {
      // compiled code ran: the invoke of the interpreted frame on top (if at one) has made its call
      if ((kind === EventKind.Bytecode || kind === EventKind.Entry) && (source === EventSource.Compiled || source === EventSource.Inlined) && stack.length) {
        stack[stack.length - 1].called = true;
        stack[stack.length - 1].own = null;
      }
      if (kind === EventKind.Bytecode && (source === EventSource.Compiled || source === EventSource.Inlined)) {
        lastCompiledMethod = input.method[i];
        lastCompiledBci = input.bci[i];
        lastWasCompiled = true;
      } else if (kind === EventKind.Gap) {
        // the stack is kept: what comes next either continues a frame (checked opcode by opcode) or not
        lastWasCompiled = false;
        lastGapEv = ev;
      } else if (kind === EventKind.OsrEntry) {
        // the interpreted activation moves into compiled code: the frame ends here, the method goes on
        if (stack.length) endFrame(stack.pop()!, tsc, false);
      } else if (kind === EventKind.Exception) {
        exceptionPending = true;
      } else if (kind === EventKind.Deopt) {
        deoptHint = lastCompiledMethod;
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
      continue;
    }

    if (kind === EventKind.Entry) {
      // who called: the invoke of the interpreted frame on top (unless that invoke already made its call: what
      // enters now is an upcall), else the compiled code that just ran
      let targets: Set<Method> | undefined;
      let callers: State[] = [];
      const top = stack[stack.length - 1];
      if (top) top.own = null; // a frame that made a call is not read again (its callee followed its candidates)
      if (top && !top.lost && !top.search && top.states.length > 0 && !lastWasCompiled) {
        if (!top.called) {
          const set = new Set<Method>();
          let all = true;
          for (const s of top.states) {
            const t = s.bci >= 0 ? universe.invokeTargets(s.m, s.bci) : undefined;
            if (!t) {
              all = false;
              break;
            }
            for (const m of t) set.add(m);
          }
          if (all) {
            targets = set;
            callers = top.states;
          }
        }
        top.called = true;
      } else if (lastWasCompiled && lastCompiledMethod >= 0 && lastCompiledBci >= 0) {
        const caller = universe.byId.get(lastCompiledMethod);
        const t = caller ? universe.invokeTargets(caller, lastCompiledBci) : undefined;
        if (caller && t) {
          targets = new Set(t);
          callers = [{ m: caller, bci: lastCompiledBci, prev: null, ev: -1 }];
        }
      }
      lastWasCompiled = false;
      const cls = input.aux[i] as EntryClass;
      if (cls !== EntryClass.Bytecode) {
        // native, intrinsic or abstract: no bytecodes run in this activation
        const natives = targets && [...targets].filter((m) => cls !== EntryClass.Native || m.native);
        if (natives && natives.length === 1) out.method[ev] = natives[0].id;
        else if (top && !top.lost && ev > 0 && out.kind[ev - 1] === EventKind.Bytecode) pendingNatives.push(ev - 1, ev, out.length);
        out.aux[ev] = 0;
        out.push(EventKind.Exit, EventSource.Interpreter, out.method[ev], -1, -1, tsc);
        continue;
      }
      out.aux[ev] = 0;
      stack.push(startFrame(targets && withInitializers(callers, targets), ev));
      continue;
    }

    if (kind !== EventKind.Bytecode) continue;
    stats.interpreted++;
    lastWasCompiled = false;
    const op = input.opcode[i];
    let f = stack[stack.length - 1];
    if (deoptHint >= 0) {
      // a deoptimized activation resumes here, at some bci of the method that was compiled
      const m = universe.byId.get(deoptHint);
      f = { states: [], entryEv: -1, lost: !m?.code, search: false, anyBci: m?.code ? m : null, own: null, called: false };
      stack.push(f);
      deoptHint = -1;
    }
    if (!f) {
      // bytecodes with no frame we saw begin (after a gap or at the stream's start)
      f = { states: [], entryEv: -1, lost: true, search: false, anyBci: null, own: null, called: false };
      stack.push(f);
    }
    let handled = false;
    if (exceptionPending && op >= 0) {
      // the next bytecode after a throw is a handler's, in this frame or a caller
      const d = handlerFor(op, ev);
      if (d >= 0) {
        stats.handlers++;
        while (stack.length - 1 > d) endFrame(stack.pop()!, tsc, true);
        f = stack[d];
        handled = true;
      }
    }
    exceptionPending = false;
    if (handled) f.own = null;
    if (!f.lost && op >= 0 && !handled && !step(f, op, ev)) {
      // a young frame with no gap since its entry: an entry that ran no bytecode (an intrinsic) whose caller
      // goes on, else an upcall the VM made before the call (replay)
      const young = f.own !== null && f.entryEv > lastGapEv;
      let d = young && f.own!.length === 0 ? callerStep(op, ev, 1) : -1;
      if (d < 0 && young && replay(f, op, ev)) f.own = null;
      else {
        // events went missing (a gap, code we could not follow): a caller may have the control again, or the
        // same method goes on at another bci; else the frame is lost
        if (d < 0) d = callerStep(op, ev, 8);
        if (d >= 0) {
          while (stack.length - 1 > d) endFrame(stack.pop()!, tsc, true);
          f = stack[d];
          stats.resynced++;
        } else if (reanchor(f, op, ev)) {
          stats.resynced++;
          f.own = null;
        } else {
          f.lost = true;
          f.states = [];
          stats.lostFrames++;
        }
      }
    }
    if (op >= 0) {
      f.called = false;
      if (f.own) {
        if (f.own.length < REPLAY_MAX) f.own.push(ev);
        else f.own = null;
      }
    }
    if (!f.lost && op >= 0) {
      if (f.states.length === 1) settle(f.states[0]);
      else {
        const id = f.states[0].m.id;
        if (f.states.every((s) => s.m.id === id)) {
          if (out.method[ev] < 0) stats.withMethod++;
          out.method[ev] = id;
        }
      }
      resolveEntry(f);
    }
    if (isReturn(op)) {
      stack.pop();
      const unique = !f.lost && f.states.length > 0 && f.states.every((x) => x.m === f.states[0].m);
      // the exit goes after the return bytecode; it is the last event of the frame
      endFrame(f, tsc, true);
      if (unique) narrowCaller(stack[stack.length - 1], f.states[0].m);
    }
  }
  while (stack.length) endFrame(stack.pop()!, out.length ? out.tsc[out.length - 1] : 0, false);
  // native calls made while the caller was still ambiguous: its invoke is known now
  for (let k = 0; k < pendingNatives.length; k += 3) {
    const [inv, entry, exit] = [pendingNatives[k], pendingNatives[k + 1], pendingNatives[k + 2]];
    const caller = out.method[inv] >= 0 && out.bci[inv] >= 0 ? universe.byId.get(out.method[inv]) : undefined;
    const t = caller ? universe.invokeTargets(caller, out.bci[inv])?.filter((m) => m.native) : undefined;
    if (t && t.length === 1) out.method[entry] = out.method[exit] = t[0].id;
  }
  return { events: out, stats };
}
