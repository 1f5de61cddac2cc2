/**
 * From blocks to Java: turns the flow of one thread into bytecode-level events.
 *
 * - Interpreter: every bytecode starts with the dispatch jump (`jmp *(table,bytecode,8)`, a TIP) into its
 *   template; a block that begins at a dispatch-table target after an indirect jump is one executed bytecode.
 *   HotSpot's rewritten "fast" bytecodes are mapped back to the Java bytecodes they stand for (some stand for
 *   two: fast_iaccess_0 = aload_0 + getfield). Method entries are the method-entry table's targets.
 * - Compiled code: each PcDesc (JVMTI PCStackInfo, dense with non-safepoint debug info) inside a block that ran
 *   gives the inlining chain there; changes of the chain are entries/exits of inlined frames, and its innermost
 *   frame is the bytecode event. Entry at the (verified) entry point, OSR entry, return, deoptimization and
 *   exception blobs are events of their own.
 */
import { FlowSink, GapReason } from './flow';
import { CodeImage, NmethodInfo, SectionKind } from './image';
import { BytecodeForm, COMPILED_CONTEXT, EventKind, EventSource, EventStream, RESOLVED_PATH, SLOW_PATH, SWITCH_BINARY, SWITCH_DEFAULT, SWITCH_DETAIL, SWITCH_TOLD } from './events';
import { JvmModel } from './load';
import { BlockEnd } from './x86';

/** HotSpot's rewritten bytecodes (by template name) -> the Java bytecodes they execute. */
const FAST_BYTECODES: Record<string, number[]> = {
  fast_agetfield: [180], fast_bgetfield: [180], fast_cgetfield: [180], fast_dgetfield: [180], fast_fgetfield: [180],
  fast_igetfield: [180], fast_lgetfield: [180], fast_sgetfield: [180], nofast_getfield: [180],
  fast_aputfield: [181], fast_bputfield: [181], fast_zputfield: [181], fast_cputfield: [181], fast_dputfield: [181],
  fast_fputfield: [181], fast_iputfield: [181], fast_lputfield: [181], fast_sputfield: [181], nofast_putfield: [181],
  fast_aload_0: [42], nofast_aload_0: [42],
  fast_iaccess_0: [42, 180], fast_aaccess_0: [42, 180], fast_faccess_0: [42, 180],
  fast_iload: [21], nofast_iload: [21], fast_iload2: [21, 21], fast_icaload: [21, 52],
  fast_invokevfinal: [182], invokehandle: [182],
  fast_linearswitch: [171], fast_binaryswitch: [171],
  fast_aldc: [18], fast_aldc_w: [19],
  return_register_finalizer: [177],
};

/**
 * The Java bytecodes whose class-file form the interpreter rewrites the first time it runs them at a bci (HotSpot's
 * templates patch_bytecode): getfield, aload_0 (unless a getfield follows: it waits for that one), iload (unless an
 * iload follows). putfield is not among them: a putfield of a final field stays as it is (its cpCache entry gets no
 * put bytecode), so its form tells nothing.
 */
const REWRITTEN_WHEN_RUN = new Set([180, 42, 21]);

/** The rewritten forms above, by template name (what the interpreter runs at a bci that ran before). */
const RUNTIME_REWRITES = /^fast_([abcdfilsz](get|put)field|aload_0|[iaf]access_0|iload2?|icaload|invokevfinal)$/;

/**
 * The templates that look up a constant-pool (cache) entry the interpreter resolves the first time it is used:
 * Java bytecodes ldc, ldc_w, get/put field/static, invoke*, checkcast, instanceof, and by template name the forms
 * the class's linking rewrote some of them to. Their slow path calls InterpreterRuntime (a call out of the traced
 * range) within the first blocks of the template; their fast path calls nothing. (new, anewarray, multianewarray,
 * newarray and monitorenter call the VM for other reasons too: allocation, contention. new is read otherwise: its
 * template's first jump, the test of its class entry's tag, goes to the slow path when the entry is unresolved.)
 */
const RESOLVING_BYTECODES = new Set([18, 19, 178, 179, 180, 181, 182, 183, 184, 185, 186, 192, 193]);
/**
 * Of those, the ones whose template may go on without testing the entry: checkcast and instanceof of null (the
 * template tests for null first). Their fast path tells nothing (no RESOLVED_PATH); their slow path does.
 */
const NULL_FIRST = new Set([192, 193]);
const RESOLVING_TEMPLATES = new Set(['fast_aldc', 'fast_aldc_w', 'invokehandle', 'nofast_getfield', 'nofast_putfield']);
/** How many blocks of a resolving template (from its dispatch target on) may come before its call into the VM. */
const SLOW_PATH_BLOCKS = 8;

const TABLESWITCH = 170;
const NEW = 187;

const EXCEPTION_BLOB = /^(ExceptionBlob|forward exception|catch_exception|unwind_exception|handle_exception|forward_exception|throw_|.* throw_exception)/;
const DEOPT_BLOB = /^(DeoptimizationBlob|UncommonTrapBlob|deoptimize)/;
const UNKNOWN_EVENT = -2;

/** A block's memo entry not computed yet. */
const UNKNOWN = -0x7fffffff;
/** An interpreter block that is no dispatch or method-entry target (blockTargetOf). */
const NO_TARGET = -1;
/** Calls out of compiled code whose chains are kept for the return (see JavaEventBuilder.savedNm). */
const CALL_RING = 1024;
const MAX_SAVED_DEPTH = 32;
/** How many of the newest saved calls a return is matched against. */
const RESTORE_REACH = 16;

/** How many caller events an inlined frame's exit waits behind (JavaEventBuilder.heldCount). */
const MAX_HELD = 4;

/** blockTargetOf of a method entry of class c: METHOD_ENTRY - c. */
const METHOD_ENTRY = -2;

/**
 * A number per decoded block, computed once: CodeImage's blocks are only ever added, and a block's address and
 * section never change, so what follows from them holds for good (and Maps keyed by 64-bit addresses stay out of
 * the per-block path).
 */
class BlockMemo {
  private values = new Int32Array(0);

  get(b: number): number {
    return b < this.values.length ? this.values[b] : UNKNOWN;
  }

  set(b: number, value: number, blocks: number): number {
    if (b >= this.values.length) {
      const grown = new Int32Array(Math.max(b + 1, blocks, this.values.length * 2));
      grown.set(this.values);
      grown.fill(UNKNOWN, this.values.length);
      this.values = grown;
    }
    return (this.values[b] = value);
  }
}

/**
 * What an interpreted method entry starts (the `aux` of an interpreter `entry` event): bytecodes (zerolocals,
 * synchronized, and Reference.get, which falls back to them), a native method, an intrinsic that runs no
 * bytecodes (java.lang.Math, CRC32, ...), or an abstract method (AbstractMethodError).
 */
export const enum EntryClass {
  Bytecode = 0,
  Native = 1,
  Intrinsic = 2,
  Abstract = 3,
}

/**
 * Added to an interpreter `entry` event's EntryClass when the VM itself made the call: the entry was reached from
 * the call stub (JavaCalls: class loading and initialization, reflection, thread start, ...), not from an invoke
 * of the code that ran before it.
 */
export const ENTRY_FROM_VM = 8;
/** The EntryClass of an interpreter `entry` event's aux. */
export const ENTRY_CLASS_MASK = 7;

/**
 * Added to an interpreter `entry` event's aux when the flow went through the entry codelet to its dispatch of the
 * method's first bytecode and the codelet tells whether the method had its invocation counters
 * (HotSpot's MethodCounters, made the first time the interpreter enters a method: generate_counter_incr calls
 * InterpreterRuntime::build_method_counters, a call out of the traced range before the dispatch). Plain entries
 * only (a synchronized entry's lock may call the VM as well), and only once the thread's decoding saw that entry
 * codelet build counters: -Xint's entries count nothing. (A VM that calls out of every entry, with JVMTI's
 * interpreter-only mode or DTraceMethodProbes, would be read as building counters each time.)
 */
export const COUNTERS_TOLD = 16;
/** With COUNTERS_TOLD: the entry built the method's counters (no interpreted entry of it had run before). */
export const COUNTERS_BUILT = 32;
/**
 * Added when the entry codelet's loop that clears the method's locals beyond its parameters was seen through
 * (`push 0; dec; jg` once per local): aux / LOCALS_UNIT, rounded down, is how many rounds it made, max_locals
 * less the parameters' slots (0 when the method has none beyond them).
 */
export const LOCALS_TOLD = 64;
export const LOCALS_UNIT = 128;

/** How many blocks of an entry codelet, its locals loop's rounds not counted, the entry watch follows. */
const ENTRY_WATCH_BLOCKS = 64;
/** How many blocks from a method entry the search for its locals loop visits. */
const LOCALS_LOOP_SEARCH = 16;

/** The interpreter's switch templates (by name) whose blocks tell which way the switch went (java.ts: SwitchShape). */
const enum SwitchTemplate {
  /** tableswitch: two bounds checks jump to the default case, else an indexed jump */
  Table = 1,
  /** fast_linearswitch (a lookupswitch of few pairs): compares the pairs from the last down, the rounds tell which */
  Linear = 2,
  /** fast_binaryswitch: a binary search by cmov, its rounds (which depend on the key) and a last compare */
  Binary = 3,
}
const SWITCH_TEMPLATES: Record<string, SwitchTemplate> = { tableswitch: SwitchTemplate.Table, fast_linearswitch: SwitchTemplate.Linear, fast_binaryswitch: SwitchTemplate.Binary };
/**
 * Where a switch template's way shows, found once by decoding it (switchShapeOf): `a` and `b` are block starts whose
 * runs are counted. Table: `a` the default case. Linear: `a` the compare, `b` the loop's decrement (equal counts:
 * a pair matched, at index pairs - compares; one decrement more: none did). Binary: `a` the search's round, `b` the
 * default case.
 */
interface SwitchShape {
  template: SwitchTemplate;
  a: number;
  b: number;
}
/** How many blocks a switch template may run before its dispatch (a binary search's rounds included). */
const SWITCH_WATCH_BLOCKS = 96;

function entryClassOf(kind: string): EntryClass {
  if (kind === '' || kind.startsWith('zerolocals') || kind === 'java_lang_ref_reference_get') return EntryClass.Bytecode;
  if (kind.startsWith('native')) return EntryClass.Native;
  if (kind === 'abstract') return EntryClass.Abstract;
  return EntryClass.Intrinsic;
}

/** ifeq..if_acmpne, ifnull, ifnonnull: the conditional branches whose template has one deciding jump. */
const isIf = (op: number): boolean => (op >= 153 && op <= 166) || op === 198 || op === 199;

/** Index of the codelet holding `addr` (codelets sorted by begin), or -1. */
function codeletAt(c: JvmModel['codelets'], addr: number): number {
  let lo = 0;
  let hi = c.begin.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (c.begin[mid] <= addr) lo = mid + 1;
    else hi = mid;
  }
  const k = lo - 1;
  return k >= 0 && addr < c.end[k] ? k : -1;
}

export interface JavaDecodeStats {
  bytecodes: number;
  interpreted: number;
  compiled: number;
  entries: number;
  gaps: number;
  /** PcDescs of inlined callees taken back as code C2 placed among the caller's (JavaEventBuilder.retractHoisted) */
  hoisted: number;
}

export class JavaEventBuilder implements FlowSink {
  events = new EventStream();

  /** The events so far, handed over: the builder starts a new stream (so the old one can be freed by its taker). */
  takeEvents(): EventStream {
    this.releaseHeld();
    this.branchEvent = -1;
    this.slowEvent = -1;
    this.entryEvent = -1;
    this.switchEvent = -1;
    this.hoistEv = -1;
    const e = this.events;
    this.events = new EventStream(16);
    return e;
  }

  /**
   * The events made so far, except those a later block may still change (a conditional branch whose outcome is
   * not known yet): they stay, and the next take gives them. `spare`: a stream taken before that the caller no
   * longer reads (nor holds views of), reused for the events from here on.
   */
  takeSettledEvents(spare?: EventStream): EventStream {
    const e = this.events;
    let keep = this.branchEvent >= 0 ? this.branchEvent : e.length;
    if (this.slowEvent >= 0 && this.slowEvent < keep) keep = this.slowEvent;
    if (this.entryEvent >= 0 && this.entryEvent < keep) keep = this.entryEvent;
    if (this.switchEvent >= 0 && this.switchEvent < keep) keep = this.switchEvent;
    if (this.hoistEv >= 0 && this.hoistEv < keep) keep = this.hoistEv;
    // (a spare the caller has done with, of the size the last take grew to, saves growing a new one again:
    // doubling from 4096 to millions of events copied each column ~20 times over per take)
    if (spare && spare !== e && spare.kind.length >= e.length - keep) {
      spare.length = 0;
      this.events = spare;
    } else this.events = new EventStream(Math.max(4096, e.length - keep));
    if (keep < e.length) {
      this.events.appendStream(e.view(keep, e.length));
      if (this.branchEvent >= 0) this.branchEvent -= keep;
      if (this.slowEvent >= 0) this.slowEvent -= keep;
      if (this.entryEvent >= 0) this.entryEvent -= keep;
      if (this.switchEvent >= 0) this.switchEvent -= keep;
      if (this.hoistEv >= 0) {
        this.hoistEv -= keep;
        this.hoistEnd -= keep;
      }
    }
    e.length = keep;
    return e;
  }
  readonly stats: JavaDecodeStats = { bytecodes: 0, interpreted: 0, compiled: 0, entries: 0, gaps: 0, hoisted: 0 };
  private readonly image: CodeImage;
  /** dispatch target -> Java opcodes it executes (one or two) */
  private readonly dispatchOps = new Map<number, number[]>();
  /** dispatch target -> the BytecodeForm of what it executes */
  private readonly dispatchForms = new Map<number, BytecodeForm>();
  /** the opcode lists of dispatchOps, indexed by blockTargetOf */
  private readonly opsLists: number[][] = [];
  /** the BytecodeForm of each of opsLists */
  private readonly opsForms: BytecodeForm[] = [];
  /** dispatch targets whose template resolves a constant-pool entry on first use (RESOLVING_BYTECODES) */
  private readonly resolvingTargets = new Set<number>();
  /** whether each of opsLists is such a template's */
  private readonly opsResolve: boolean[] = [];
  /** whether each of opsLists is one whose fast path tells the entry was resolved (not checkcast, instanceof) */
  private readonly opsResolvedTells: boolean[] = [];
  /** whether each of opsLists is a switch template's (switchTargets) */
  private readonly opsSwitch: boolean[] = [];
  /** dispatch target -> the switch template it starts */
  private readonly switchTargets = new Map<number, SwitchTemplate>();
  /** dispatch target -> where its template's way shows (null: not read) */
  private readonly switchShapes = new Map<number, SwitchShape | null>();
  /** The interpreted switch event being watched (-1: none), its shape, the runs of its blocks a and b, blocks so far. */
  private switchEvent = -1;
  private switchShape: SwitchShape | null = null;
  private switchRunsA = 0;
  private switchRunsB = 0;
  private switchBlocks = 0;
  /** The interpreted bytecode event whose resolving template may still call the VM (-1: none), and its blocks so far. */
  private slowEvent = -1;
  private slowBlocks = 0;
  private readonly opsIndex = new Map<number[], number>();
  private readonly blockTargets = new BlockMemo();
  private readonly blockSpecials = new BlockMemo();
  private readonly blockFirstPcs = new BlockMemo();
  private readonly methodEntries: Map<number, number>;
  private readonly entryClass = new Map<number, EntryClass>();
  /** method entries whose codelet is read (entries of methods with bytecode: zerolocals, synchronized or not; not
   * Reference.get's, which returns at once for a live reference) */
  private readonly watchedEntries = new Set<number>();
  /** of those, the ones whose counters test is read (not synchronized) */
  private readonly countersEntries = new Set<number>();
  /**
   * Of those, the ones seen calling the VM before their dispatch: a VM that counts invocations (not -Xint, whose
   * entries have no counters code), so that an entry making no such call tells the counters were there.
   */
  private readonly countersSeen = new Set<number>();
  /** by method entry: the start of its locals loop's block (-1: none found), once asked (localsLoopOf) */
  private readonly localsLoops = new Map<number, number>();
  /**
   * The interpreter entry event being watched (-1: none): the entry's locals loop and its rounds, the lowest
   * address it called the VM from, the entry if its counters test is read (else -1), and the blocks so far.
   */
  private entryEvent = -1;
  private entryLoop = -1;
  private entryRounds = 0;
  private entryVmCall = -1;
  private entryCounters = -1;
  private entryBlocks = 0;
  /** [begin, end, EventKind] of the interpreter codelets that mean an exception or a deoptimization */
  private readonly specialRanges: number[] = [];
  private inSpecial = -1;
  /** by section: the event entering it means (blobEvent), UNKNOWN_EVENT until asked */
  private blobEvents = new Int8Array(0);
  private prevKind = BlockEnd.Next;
  private prevSection = -1;
  /** The inlining chain (method ids, innermost first) at the last compiled PcDesc of the current activation. */
  private chain: number[] = [];
  private chainBcis: number[] = [];
  private chainNm = -1;
  /**
   * The chains of compiled activations that made a call, newest last (a ring of CALL_RING): by entry, the
   * nmethod, the call's return address and the chain (methods and bcis, at most MAX_SAVED_DEPTH frames) as it
   * was. A return into that nmethod at that address gets its chain back: the callee, another nmethod, replaced
   * the current chain, and without it the caller's return would end no frame.
   */
  private readonly savedNm = new Int32Array(CALL_RING);
  private readonly savedRet = new Float64Array(CALL_RING);
  private readonly savedDepth = new Int32Array(CALL_RING);
  private readonly savedChain = new Int32Array(CALL_RING * MAX_SAVED_DEPTH);
  private readonly savedBcis = new Int32Array(CALL_RING * MAX_SAVED_DEPTH);
  /** entries in the ring: the newest is at (nsaved - 1) % CALL_RING; at most CALL_RING are kept */
  private nsaved = 0;
  private savedFloor = 0;
  /**
   * Caller PcDescs held back, each of which would end inlined frames (the chain's frames below heldCommon) while
   * the caller is not past their call site (its bci <= the call site's). C2 schedules the code of a caller and
   * of its inlined callee into each other (with DebugNonSafepoints every instruction has its PcDesc), so the chain
   * goes callee, caller, callee at one call site: one activation, not two. If the next chain re-enters the same
   * call site the held events are dropped (they stood for the caller's bytecodes before the call, which
   * completion fills in); anything else lets them go out as they came.
   */
  private readonly heldNm: NmethodInfo[] = [];
  private readonly heldPc = new Int32Array(MAX_HELD);
  private readonly heldTsc = new Float64Array(MAX_HELD);
  private heldCount = 0;
  private heldCommon = 0;
  /**
   * The events of the last PcDesc that entered inlined frames and left none (from hoistEv to hoistEnd: entries, then
   * its bytecode; -1: none, or something came after), how many frames it kept (hoistCommon) and their bcis before.
   */
  private hoistEv = -1;
  private hoistEnd = 0;
  private hoistCommon = 0;
  private readonly hoistBcis: number[] = [];
  /** the pc of the first held PcDesc: a jump back to it or before it (a loop's next round) ends the wait */
  private heldPc0 = 0;
  /**
   * if* and new templates: dispatch target -> [address of the template's first conditional jump, its target, its
   * fall-through], found by decoding the template (null: none within a few blocks).
   */
  private readonly decisions = new Map<number, [number, number, number] | null>();
  /** The if* (or new) bytecode event whose outcome the next blocks tell (-1: none), and where its decision lies. */
  private branchEvent = -1;
  private branchJcc = 0;
  private branchNotTaken = 0;
  private branchTaken = 0;
  private pastJcc = false;
  private branchBlocks = 0;
  /** whether branchEvent is a `new`, whose template's first jump tells its class entry's resolution, not an if* */
  private branchIsNew = false;

  constructor(model: JvmModel) {
    this.image = model.image;
    this.methodEntries = model.methodEntries;
    const c = model.codelets;
    for (let k = 0; k < c.begin.length; k++) {
      const d = c.description[k];
      const kind = d === 'exception handling' || d === 'throw exception entrypoints' ? EventKind.Exception : d === 'deoptimization entry points' ? EventKind.Deopt : -1;
      if (kind >= 0) this.specialRanges.push(c.begin[k], c.end[k], kind);
    }
    // what kind of method each method-entry codelet starts, from its description ("method entry point (kind = native)")
    for (const target of model.methodEntries.keys()) {
      const k = codeletAt(c, target);
      const kind = k >= 0 ? /kind = (\w+)/.exec(c.description[k])?.[1] ?? '' : '';
      this.entryClass.set(target, entryClassOf(kind));
      if (kind.startsWith('zerolocals')) this.watchedEntries.add(target);
      if (kind === 'zerolocals') this.countersEntries.add(target);
    }
    for (const [target, bc] of model.dispatch) {
      if (bc < 202) {
        this.dispatchOps.set(target, [bc]);
        if (REWRITTEN_WHEN_RUN.has(bc)) this.dispatchForms.set(target, BytecodeForm.Original);
        if (RESOLVING_BYTECODES.has(bc)) this.resolvingTargets.add(target);
        if (bc === TABLESWITCH) this.switchTargets.set(target, SwitchTemplate.Table);
        continue;
      }
      // a rewritten bytecode: the codelet holding the target names it
      const k = codeletAt(c, target);
      if (k >= 0) {
        const ops = FAST_BYTECODES[c.description[k]];
        if (ops) this.dispatchOps.set(target, ops);
        if (ops && RUNTIME_REWRITES.test(c.description[k])) this.dispatchForms.set(target, BytecodeForm.Rewritten);
        if (ops && RESOLVING_TEMPLATES.has(c.description[k])) this.resolvingTargets.add(target);
        if (ops && SWITCH_TEMPLATES[c.description[k]]) this.switchTargets.set(target, SWITCH_TEMPLATES[c.description[k]]);
      }
    }
  }

  /** Whether section `sec` is the call stub (the VM's way into Java code), by name, memoized. */
  private isCallStub(sec: number): boolean {
    let v = this.callStubs.get(sec);
    if (v === undefined) this.callStubs.set(sec, (v = this.image.sections[sec].name === 'call_stub'));
    return v;
  }
  private readonly callStubs = new Map<number, boolean>();

  /** EventKind.Exception / Deopt when entering section `sec` (a blob or stub) means one, else -1 (by name, memoized). */
  private blobEvent(sec: number): number {
    if (sec >= this.blobEvents.length) {
      const grown = new Int8Array(Math.max(sec + 1, this.image.sections.length));
      grown.set(this.blobEvents);
      grown.fill(UNKNOWN_EVENT, this.blobEvents.length);
      this.blobEvents = grown;
    }
    let kind = this.blobEvents[sec];
    if (kind === UNKNOWN_EVENT) {
      const name = this.image.sections[sec].name;
      kind = this.blobEvents[sec] = EXCEPTION_BLOB.test(name) ? EventKind.Exception : DEOPT_BLOB.test(name) ? EventKind.Deopt : -1;
    }
    return kind;
  }

  /**
   * What interpreter block b, at `start`, begins when a dispatch or method-entry jump lands on it: the index of its
   * opcodes in opsLists (a dispatch target), METHOD_ENTRY - its EntryClass (a method entry), or NO_TARGET.
   */
  private blockTargetOf(b: number, start: number): number {
    const v = this.blockTargets.get(b);
    if (v !== UNKNOWN) return v;
    const ops = this.dispatchOps.get(start);
    let target = NO_TARGET;
    if (ops) {
      let k = this.opsIndex.get(ops);
      if (k === undefined) {
        this.opsIndex.set(ops, (k = this.opsLists.length));
        this.opsLists.push(ops);
        this.opsForms.push(this.dispatchForms.get(start) ?? BytecodeForm.Unknown);
        this.opsResolve.push(this.resolvingTargets.has(start));
        this.opsResolvedTells.push(this.resolvingTargets.has(start) && !(ops.length === 1 && NULL_FIRST.has(ops[0])));
        this.opsSwitch.push(this.switchTargets.has(start));
      }
      target = k;
    } else if (this.methodEntries.has(start)) target = METHOD_ENTRY - (this.entryClass.get(start) ?? EntryClass.Bytecode);
    return this.blockTargets.set(b, target, this.image.blocks.count);
  }

  /** specialAt of interpreter block b, at `start`. */
  private blockSpecialOf(b: number, start: number): number {
    const v = this.blockSpecials.get(b);
    return v !== UNKNOWN ? v : this.blockSpecials.set(b, this.specialAt(start), this.image.blocks.count);
  }

  /** EventKind.Exception / Deopt when `addr` is in the interpreter's exception or deoptimization codelets, else -1. */
  private specialAt(addr: number): number {
    const r = this.specialRanges;
    for (let i = 0; i < r.length; i += 3) if (addr >= r[i] && addr < r[i + 1]) return r[i + 2];
    return -1;
  }

  block(b: number, tsc: number): void {
    const image = this.image;
    const B = image.blocks;
    const sec = B.section[b];
    const start = B.start[b];
    const s = image.sections[sec];
    const viaBranch = this.prevKind !== BlockEnd.Next && this.prevKind !== BlockEnd.Cond;
    if (this.branchEvent >= 0) this.branchOutcome(b, start);
    // held caller events wait only while the flow goes forward inside the nmethod's own code
    if (this.heldCount > 0 && (sec !== this.prevSection || (this.prevKind > BlockEnd.Jump && this.prevKind !== BlockEnd.Next) || start < this.heldPc0)) this.releaseHeld(true);
    if (sec !== this.prevSection) this.hoistEv = -1;
    if (s.kind === SectionKind.Interpreter) {
      // entering the interpreter's exception or deoptimization codelets (once per visit)
      const special = this.blockSpecialOf(b, start);
      if (special !== this.inSpecial) {
        if (special === EventKind.Exception || special === EventKind.Deopt) this.events.push(special, EventSource.Interpreter, -1, -1, -1, tsc);
        this.inSpecial = special;
      }
      if (this.prevKind === BlockEnd.IndirectJump || this.prevKind === BlockEnd.IndirectCall) {
        const target = this.blockTargetOf(b, start);
        if (target >= 0) {
          const ops = this.opsLists[target];
          const resolving = this.opsResolve[target];
          const form = this.opsForms[target] + (this.opsResolvedTells[target] ? RESOLVED_PATH : 0);
          for (let i = 0; i < ops.length; i++) this.events.push(EventKind.Bytecode, EventSource.Interpreter, -1, -1, ops[i], tsc, form);
          this.slowEvent = resolving ? this.events.length - 1 : -1;
          this.slowBlocks = 0;
          this.stats.bytecodes += ops.length;
          this.stats.interpreted += ops.length;
          if (ops.length === 1 && isIf(ops[0])) this.awaitBranch(sec, start, b, false);
          else if (ops.length === 1 && ops[0] === NEW) this.awaitBranch(sec, start, b, true);
          else if (this.opsSwitch[target]) this.awaitSwitch(sec, start);
        } else if (target <= METHOD_ENTRY) {
          const fromVm = this.prevSection >= 0 && this.isCallStub(this.prevSection);
          this.events.push(EventKind.Entry, EventSource.Interpreter, -1, -1, -1, tsc, METHOD_ENTRY - target + (fromVm ? ENTRY_FROM_VM : 0));
          this.stats.entries++;
          if (this.watchedEntries.has(start)) this.watchEntry(sec, start);
        }
      }
    } else if (s.kind === SectionKind.Nmethod) {
      const nm = image.nmethods[s.nmethod];
      // back from a call this nmethod made (a return, or from a stub): the chain as it was at the call
      if (viaBranch && this.nsaved > this.savedFloor) this.restoreChain(s.nmethod, start);
      if (this.chainNm !== s.nmethod) {
        this.chain.length = 0;
        this.chainBcis.length = 0;
        this.chainNm = s.nmethod;
      }
      if (viaBranch || this.prevSection !== sec) {
        if (start === nm.verifiedEntry || start === nm.entry) {
          this.chain.length = 0;
          this.chainBcis.length = 0;
          this.events.push(EventKind.Entry, EventSource.Compiled, nm.method, -1, -1, tsc);
          this.stats.entries++;
          this.chain.push(nm.method);
          this.chainBcis.push(-1);
        } else if (start === nm.osrEntry && nm.osrBci >= 0) {
          this.events.push(EventKind.OsrEntry, EventSource.Compiled, nm.method, nm.osrBci, -1, tsc);
          this.chain.length = 0;
          this.chainBcis.length = 0;
          this.chain.push(nm.method);
          this.chainBcis.push(nm.osrBci);
        }
      }
      // a PcDesc that stands for the code at its pc (not the conditional jump that ends there): its code runs now
      if (nm.fallThrough) {
        const k = this.image.pcDescAt(nm, start);
        if (k >= 0 && nm.pcs[k] === start && nm.fallThrough[k]) this.pcDescEvents(nm, k, tsc);
      }
      this.compiledBlock(nm, b, start, B.end[b], tsc);
      const kind = B.kind[b];
      if (kind === BlockEnd.Call || kind === BlockEnd.IndirectCall || kind === BlockEnd.Return) {
        this.releaseHeld(true);
        this.hoistEv = -1;
      }
      if ((kind === BlockEnd.Call || kind === BlockEnd.IndirectCall) && this.chain.length > 0 && this.chain.length <= MAX_SAVED_DEPTH) this.saveChain(s.nmethod, B.end[b]);
      if (kind === BlockEnd.Return) {
        for (let i = 0; i < this.chain.length; i++) this.events.push(EventKind.Exit, i === this.chain.length - 1 ? EventSource.Compiled : EventSource.Inlined, this.chain[i], -1, -1, tsc);
        this.chain.length = 0;
        this.chainBcis.length = 0;
      }
    } else if (this.prevSection !== sec) {
      const kind = this.blobEvent(sec);
      if (kind >= 0) this.events.push(kind, EventSource.Other, -1, -1, -1, tsc);
    }
    if (this.slowEvent >= 0) this.watchSlowPath(b, s.kind);
    else if (this.entryEvent >= 0) this.entryBlock(b, s.kind);
    else if (this.switchEvent >= 0) this.switchBlock(b, s.kind);
    this.prevKind = B.kind[b];
    this.prevSection = sec;
  }

  private saveChain(nm: number, ret: number): void {
    const k = this.nsaved++ % CALL_RING;
    if (this.nsaved - this.savedFloor > CALL_RING) this.savedFloor = this.nsaved - CALL_RING;
    this.savedNm[k] = nm;
    this.savedRet[k] = ret;
    const n = this.chain.length;
    this.savedDepth[k] = n;
    for (let i = 0; i < n; i++) {
      this.savedChain[k * MAX_SAVED_DEPTH + i] = this.chain[i];
      this.savedBcis[k * MAX_SAVED_DEPTH + i] = this.chainBcis[i];
    }
  }

  /**
   * If one of the newest saved calls (RESTORE_REACH) was made by nmethod `nm` with return address `at`, its chain
   * becomes the current one and it and the calls saved after it (returned from, or unwound) are dropped.
   */
  private restoreChain(nm: number, at: number): void {
    for (let j = this.nsaved - 1; j >= this.savedFloor && j >= this.nsaved - RESTORE_REACH; j--) {
      const k = j % CALL_RING;
      if (this.savedRet[k] !== at || this.savedNm[k] !== nm) continue;
      const n = this.savedDepth[k];
      this.chain.length = n;
      this.chainBcis.length = n;
      for (let i = 0; i < n; i++) {
        this.chain[i] = this.savedChain[k * MAX_SAVED_DEPTH + i];
        this.chainBcis[i] = this.savedBcis[k * MAX_SAVED_DEPTH + i];
      }
      this.chainNm = nm;
      this.nsaved = j;
      return;
    }
  }

  /** Events for the PcDescs of compiled code in (start, end]; one at `end` that stands for the code after its
   * conditional jump has its event when a block starts there (block). */
  private compiledBlock(nm: NmethodInfo, b: number, start: number, end: number, tsc: number): void {
    const pcs = nm.pcs;
    let i = this.blockFirstPcs.get(b);
    if (i === UNKNOWN) i = this.blockFirstPcs.set(b, this.image.pcDescAt(nm, start + 1), this.image.blocks.count);
    if (i < 0) return;
    for (; i < pcs.length && pcs[i] <= end; i++) {
      if (nm.fallThrough && nm.fallThrough[i] && pcs[i] === end) continue;
      this.pcDescEvents(nm, i, tsc);
    }
  }

  /**
   * The held caller events (heldNm) go out as they came. `flowGoesOn`: the wait ended with the flow going on
   * elsewhere (not at a gap or the end): then a callee entered by one PcDesc just before the held events, which the
   * caller went on before the call site after and the callee did not go on from, was callee code C2 placed among
   * the caller's (a load hoisted and shared: DebugNonSafepoints names the scope of one node of several), not a call
   * made then: it is taken back (retractHoisted), and the caller's events go out in its frame.
   */
  private releaseHeld(flowGoesOn = false): void {
    const n = this.heldCount;
    if (n === 0) return;
    if (flowGoesOn && this.hoistEv >= 0 && this.heldCommon === this.hoistCommon) this.retractHoisted();
    this.heldCount = 0;
    for (let k = 0; k < n; k++) this.pcDescEvents(this.heldNm[k], this.heldPc[k], this.heldTsc[k], false);
  }

  /** How many frames of the chain, from the root, PcDesc `i` of `nm` continues (same methods, same call sites). */
  private commonFrames(nm: NmethodInfo, i: number): number {
    const f1 = nm.frameStart[i + 1];
    const depth = f1 - nm.frameStart[i];
    const chain = this.chain;
    const bcis = this.chainBcis;
    let common = 0;
    while (common < depth && common < chain.length) {
      const fi = f1 - 1 - common; // frame index from the root
      const ci = chain.length - 1 - common;
      if (chain[ci] !== nm.frames[fi * 2]) break;
      // a caller frame must also be at the same call site to be the same activation
      if (common < depth - 1 && ci > 0 && bcis[ci] !== nm.frames[fi * 2 + 1]) return common + 1;
      common++;
    }
    return common;
  }

  /**
   * The events of PcDesc `i` of `nm`: exits and entries of inlined frames as the chain changes, its bytecode.
   * `hold`: a caller PcDesc that would end inlined frames before the caller is past their call site waits
   * (heldNm).
   */
  private pcDescEvents(nm: NmethodInfo, i: number, tsc: number, hold = true): void {
    const f0 = nm.frameStart[i];
    const f1 = nm.frameStart[i + 1];
    const depth = f1 - f0;
    if (depth === 0) return;
    const chain = this.chain;
    const bcis = this.chainBcis;
    // common part with the current chain, from the root (last frame) inwards
    const common = this.commonFrames(nm, i);
    if (this.heldCount > 0 && common > this.heldCommon) {
      // the callee goes on at the same call site: the held caller events were out of order
      this.heldCount = 0;
    }
    // back in a caller (no new frames): it must be past the call site to have left the callee
    const b = nm.frames[f0 * 2 + 1];
    const early = depth === common && common > 0 && chain.length > common && b >= 0 && b <= bcis[chain.length - common];
    if (hold && early && this.heldCount < MAX_HELD && (this.heldCount === 0 || common === this.heldCommon)) {
      this.heldNm[this.heldCount] = nm;
      this.heldPc[this.heldCount] = i;
      this.heldTsc[this.heldCount] = tsc;
      if (this.heldCount++ === 0) this.heldPc0 = nm.pcs[i];
      this.heldCommon = common;
      return;
    }
    if (this.heldCount > 0) {
      this.releaseHeld(true);
      this.pcDescEvents(nm, i, tsc, hold);
      return;
    }
    // a callee entered by one PcDesc just before, left by this one for another callee the caller calls at an
    // earlier bci: the caller never got past the first call site, so that PcDesc was callee code C2 placed among
    // the caller's (the hoisted load of retractHoisted; h2's Value.convertTo: a klass load at its start carries
    // convertToDate@125's scope, and the next PcDesc is convertToNumeric's, called at convertTo@336 < 359)
    if (this.hoistEv >= 0 && common > 0 && common === this.hoistCommon && depth > common && chain.length > common && nm.frames[(f1 - common) * 2 + 1] < bcis[chain.length - common]) {
      this.retractHoisted();
    }
    this.hoistEv = -1;
    const oldLength = chain.length;
    const firstEv = this.events.length;
    if (oldLength === common && depth > common && nm.frames[f0 * 2 + 1] >= 0) {
      this.hoistBcis.length = 0;
      for (let k = 0; k < common; k++) this.hoistBcis.push(bcis[k]);
    }
    // exits for frames of the old chain deeper than the common part
    while (chain.length > common) {
      const m = chain.shift()!;
      bcis.shift();
      this.events.push(EventKind.Exit, EventSource.Inlined, m, -1, -1, tsc);
    }
    // entries for the new inner frames
    for (let k = depth - common - 1; k >= 0; k--) {
      const m = nm.frames[(f0 + k) * 2];
      chain.unshift(m);
      bcis.unshift(nm.frames[(f0 + k) * 2 + 1]);
      if (common > 0 || k < depth - 1) {
        // aux: the caller's call-site bci + 1 (the caller is the next frame out)
        this.events.push(EventKind.Entry, EventSource.Inlined, m, -1, -1, tsc, nm.frames[(f0 + k + 1) * 2 + 1] + 1);
        this.stats.entries++;
      }
    }
    // caller bcis move with the chain
    for (let k = 0; k < depth; k++) bcis[k] = nm.frames[(f0 + k) * 2 + 1];
    // bci -1 (HotSpot's InvocationEntryBci): code of the frame's entry, before its first bytecode
    if (nm.frames[f0 * 2 + 1] < 0) return;
    // aux (read by complete.ts): the immediate of an `add` at this PcDesc (an unrolled loop's step) or 0, plus
    // COMPILED_CONTEXT times 1 + the PcDesc's context (CodeImage.pcContexts)
    const imm = nm.addImm ? nm.addImm[i] : 0;
    const ctx = nm.ctx ? nm.ctx[i] : -1;
    this.events.push(EventKind.Bytecode, depth > 1 ? EventSource.Inlined : EventSource.Compiled, nm.frames[f0 * 2], nm.frames[f0 * 2 + 1], -1, tsc, (imm > 0 && imm < COMPILED_CONTEXT ? imm : 0) + COMPILED_CONTEXT * (ctx + 1));
    this.stats.bytecodes++;
    this.stats.compiled++;
    // a callee entered by this one PcDesc (no frame left): taken back if the caller goes on before the call site
    if (oldLength === common && depth > common) {
      this.hoistEv = firstEv;
      this.hoistEnd = this.events.length;
      this.hoistCommon = common;
    }
  }

  /**
   * Takes back the events of the callee entered by one PcDesc (hoistEv..hoistEnd: its entries and its bytecode), and
   * the chain goes back to what it was.
   */
  private retractHoisted(): void {
    if (this.hoistEv < 0 || this.events.length !== this.hoistEnd) return;
    const entries = this.hoistEnd - this.hoistEv - 1;
    this.events.length = this.hoistEv;
    // (inner frames first: the callee's frames are the first ones)
    this.chain.splice(0, this.chain.length - this.hoistCommon);
    this.chainBcis.splice(0, this.chainBcis.length - this.hoistCommon);
    for (let k = 0; k < this.hoistCommon; k++) this.chainBcis[k] = this.hoistBcis[k];
    this.stats.entries -= entries;
    this.stats.bytecodes--;
    this.stats.compiled--;
    this.stats.hoisted++;
    this.hoistEv = -1;
  }

  /**
   * An if* template was dispatched to (its event is the last one): its outcome is the way its first conditional
   * jump goes. HotSpot's x86 template (TemplateTable::if_0cmp and kin) tests the operands and jumps on the
   * negated condition to its not-taken path, so the jump taken = the Java branch not taken, the fall-through =
   * the branch taken (then the template's `branch` code). The jump is found by decoding the template from the
   * dispatch target; outcomes go into the event's aux (1 taken, -1 not taken, 0 unknown).
   */
  private awaitBranch(sec: number, target: number, b: number, isNew: boolean): void {
    let d = this.decisions.get(target);
    if (d === undefined) {
      d = null;
      const B = this.image.blocks;
      const s = this.image.sections[sec];
      let k = b;
      for (let n = 0; n < 6 && k >= 0; n++) {
        const kind = B.kind[k];
        if (kind === BlockEnd.Cond) {
          d = [B.last[k], B.target[k], B.end[k]];
          break;
        }
        const next = kind === BlockEnd.Next ? B.end[k] : kind === BlockEnd.Jump ? B.target[k] : -1;
        k = next >= s.begin && next < s.end ? this.image.block(sec, next) : -1;
      }
      this.decisions.set(target, d);
    }
    if (!d) return;
    this.branchEvent = this.events.length - 1;
    this.branchIsNew = isNew;
    [this.branchJcc, this.branchNotTaken, this.branchTaken] = d;
    this.pastJcc = false;
    this.branchBlocks = 0;
    // the dispatch block itself may end at the deciding jump
    if (this.image.blocks.last[b] === this.branchJcc) this.pastJcc = true;
  }

  /** Starts watching the switch event just pushed (its template starts at dispatch target `start`, in section `sec`). */
  private awaitSwitch(sec: number, start: number): void {
    let shape = this.switchShapes.get(start);
    if (shape === undefined) this.switchShapes.set(start, (shape = this.switchShapeOf(sec, start, this.switchTargets.get(start)!)));
    if (!shape) return;
    this.switchEvent = this.events.length - 1;
    this.switchShape = shape;
    this.switchRunsA = 0;
    this.switchRunsB = 0;
    this.switchBlocks = 0;
  }

  /**
   * Where switch template `template`, starting at `start`, shows its way (SwitchShape), from its first blocks; null
   * when they are not as expected (another release's template: the switch is then not read).
   */
  private switchShapeOf(sec: number, start: number, template: SwitchTemplate): SwitchShape | null {
    const B = this.image.blocks;
    const s = this.image.sections[sec];
    const inside = (a: number) => a >= s.begin && a < s.end;
    const blockAt = (a: number) => (inside(a) ? this.image.block(sec, a) : -1);
    // the template's conditional jumps in the order it runs them on its straight path (a jump followed, a
    // conditional one not taken), at most 8 blocks
    const conds: number[] = [];
    for (let k = blockAt(start), n = 0; k >= 0 && n < 8 && conds.length < 3; n++) {
      const kind = B.kind[k];
      if (kind === BlockEnd.Cond) conds.push(k);
      const next = kind === BlockEnd.Cond || kind === BlockEnd.Next ? B.end[k] : kind === BlockEnd.Jump ? B.target[k] : -1;
      k = blockAt(next);
    }
    if (conds.length === 0) return null;
    const c0 = conds[0];
    if (template === SwitchTemplate.Table) {
      // cmp low; jl default; cmp high; jg default
      return conds.length >= 2 && B.target[conds[1]] === B.target[c0] && B.target[c0] > B.last[conds[1]] ? { template, a: B.target[c0], b: -1 } : null;
    }
    // the loop: a conditional jump back into the template
    if (!(B.target[c0] < B.start[c0] && B.target[c0] >= start)) return null;
    if (template === SwitchTemplate.Linear) {
      // jmp entry; loop: cmp key, pair; je found; entry: dec; jge loop
      const compare = blockAt(B.target[c0]);
      return compare >= 0 && B.kind[compare] === BlockEnd.Cond && B.end[compare] === B.start[c0] ? { template, a: B.target[c0], b: B.start[c0] } : null;
    }
    // jmp entry; round: ... cmov ...; entry: cmp; jl round; (the last compare) jne default
    const last = blockAt(B.end[c0]);
    return last >= 0 && B.kind[last] === BlockEnd.Cond && B.target[last] > B.last[last] ? { template, a: B.target[c0], b: B.target[last] } : null;
  }

  /**
   * Block b ran while an interpreted switch's event (switchEvent) is the newest: the runs of its shape's blocks are
   * counted until the template dispatches the case's first bytecode (an indirect jump), which writes the way the
   * switch went into the event's aux (SWITCH_TOLD, events.ts). Leaving the interpreter, another event or lost data
   * end the watch with nothing told.
   */
  private switchBlock(b: number, kind: SectionKind): void {
    const B = this.image.blocks;
    if (kind !== SectionKind.Interpreter || this.events.length - 1 !== this.switchEvent) {
      this.switchEvent = -1;
      return;
    }
    const shape = this.switchShape!;
    const start = B.start[b];
    if (start === shape.a) this.switchRunsA++;
    else if (start === shape.b) this.switchRunsB++;
    if (B.kind[b] === BlockEnd.IndirectJump) {
      let told = SWITCH_TOLD;
      if (shape.template === SwitchTemplate.Table) told += this.switchRunsA > 0 ? SWITCH_DEFAULT : 0;
      else if (shape.template === SwitchTemplate.Linear) {
        // a pair matched: as many compares as decrements; none did: one decrement more; else not told
        const [compares, decrements] = [this.switchRunsA, this.switchRunsB];
        told = compares === decrements ? told + compares * SWITCH_DETAIL : decrements === compares + 1 ? told + SWITCH_DEFAULT : 0;
      } else told += SWITCH_BINARY + this.switchRunsA * SWITCH_DETAIL + (this.switchRunsB > 0 ? SWITCH_DEFAULT : 0);
      this.events.aux[this.switchEvent] += told;
      this.switchEvent = -1;
    } else if (++this.switchBlocks > SWITCH_WATCH_BLOCKS) this.switchEvent = -1;
  }

  /** Starts watching the entry event just pushed (a bytecode method's entry at `start`, in section `sec`). */
  private watchEntry(sec: number, start: number): void {
    this.entryEvent = this.events.length - 1;
    this.entryLoop = this.localsLoopOf(sec, start);
    this.entryRounds = 0;
    this.entryVmCall = -1;
    this.entryCounters = this.countersEntries.has(start) ? start : -1;
    this.entryBlocks = 0;
  }

  /**
   * The start of the block of method entry `start`'s locals loop (`push 0; dec; jg` back to itself), found once
   * among the first blocks the entry may run; -1 when there is none (the loop's rounds are then not told).
   */
  private localsLoopOf(sec: number, start: number): number {
    let loop = this.localsLoops.get(start);
    if (loop !== undefined) return loop;
    loop = -1;
    const s = this.image.sections[sec];
    const B = this.image.blocks;
    const queue = [start];
    const seen = new Set<number>([start]);
    for (let q = 0; q < queue.length && q < LOCALS_LOOP_SEARCH && loop < 0; q++) {
      const b = this.image.block(sec, queue[q]);
      if (b < 0) continue;
      const kind = B.kind[b];
      if (kind === BlockEnd.Cond && B.target[b] === B.start[b]) loop = B.start[b];
      const next: number[] = [];
      if (kind === BlockEnd.Cond || kind === BlockEnd.Next) next.push(B.end[b]);
      if (kind === BlockEnd.Cond || kind === BlockEnd.Jump) next.push(B.target[b]);
      for (const a of next) {
        if (a >= s.begin && a < s.end && !seen.has(a)) {
          seen.add(a);
          queue.push(a);
        }
      }
    }
    this.localsLoops.set(start, loop);
    return loop;
  }

  /**
   * Block b ran while an interpreted entry's event (entryEvent) is the newest: the rounds of its locals loop and its
   * calls into the VM are counted until the codelet dispatches the method's first bytecode (an indirect jump), which
   * writes what they tell into the entry's aux. Leaving the interpreter, another event or lost data end the watch
   * with nothing told.
   */
  private entryBlock(b: number, kind: SectionKind): void {
    const B = this.image.blocks;
    if (kind !== SectionKind.Interpreter || this.events.length - 1 !== this.entryEvent) {
      this.entryEvent = -1;
      return;
    }
    const k = B.kind[b];
    if (B.start[b] === this.entryLoop) this.entryRounds++;
    else if (k === BlockEnd.Call && !this.image.inRange(B.target[b])) {
      if (this.entryVmCall < 0 || B.last[b] < this.entryVmCall) this.entryVmCall = B.last[b];
    } else if (k === BlockEnd.IndirectJump) {
      let told = 0;
      if (this.entryLoop >= 0) told += LOCALS_TOLD + this.entryRounds * LOCALS_UNIT;
      if (this.entryCounters >= 0) {
        // (the counter overflow's call into the VM comes after the dispatch in the codelet: out of line)
        const built = this.entryVmCall >= 0 && this.entryVmCall < B.last[b];
        if (built) this.countersSeen.add(this.entryCounters);
        if (this.countersSeen.has(this.entryCounters)) told += COUNTERS_TOLD + (built ? COUNTERS_BUILT : 0);
      }
      this.events.aux[this.entryEvent] += told;
      this.entryEvent = -1;
    } else if (++this.entryBlocks > ENTRY_WATCH_BLOCKS) this.entryEvent = -1;
  }

  /**
   * Block b ran while a resolving template's event (slowEvent) is the newest: a direct call out of the traced range
   * from the template's first blocks is its call into the VM (SLOW_PATH); leaving the interpreter, another event or
   * SLOW_PATH_BLOCKS blocks without one end the watch (the event keeps RESOLVED_PATH).
   */
  private watchSlowPath(b: number, kind: SectionKind): void {
    const B = this.image.blocks;
    if (kind !== SectionKind.Interpreter || this.events.length - 1 !== this.slowEvent) this.slowEvent = -1;
    else if (B.kind[b] === BlockEnd.Call && !this.image.inRange(B.target[b])) {
      const aux = this.events.aux[this.slowEvent];
      this.events.aux[this.slowEvent] = aux - (aux & RESOLVED_PATH) + SLOW_PATH;
      this.slowEvent = -1;
    } else if (++this.slowBlocks > SLOW_PATH_BLOCKS) this.slowEvent = -1;
  }

  /** Block `b` (starting at `start`) ran while an if* outcome is pending. */
  private branchOutcome(b: number, start: number): void {
    if (this.pastJcc) {
      const outcome = start === this.branchNotTaken ? -1 : start === this.branchTaken ? 1 : 0;
      // new: the template's first jump goes to its slow path when the class's constant-pool entry is unresolved (an
      // if*'s template jumps on the negated condition: its jump going is the bytecode's not taken, -1)
      if (this.branchIsNew) this.events.aux[this.branchEvent] += outcome < 0 ? SLOW_PATH : outcome > 0 ? RESOLVED_PATH : 0;
      else this.events.aux[this.branchEvent] = outcome;
      this.branchEvent = -1;
    } else if (this.image.blocks.last[b] === this.branchJcc) this.pastJcc = true;
    else if (++this.branchBlocks > 6) this.branchEvent = -1;
  }

  partial(b: number, insns: number, tsc: number): void {
    this.branchEvent = -1;
    this.slowEvent = -1;
    this.entryEvent = -1;
    this.switchEvent = -1;
    this.hoistEv = -1;
    if (insns > 0) this.prevKind = BlockEnd.Next;
    this.prevSection = this.image.blocks.section[b];
    void tsc;
  }

  enable(ip: number, tsc: number): void {
    this.branchEvent = -1;
    this.prevKind = BlockEnd.IndirectJump; // entering traced code is a branch
    this.prevSection = -1;
    void ip;
    void tsc;
  }

  disable(tsc: number): void {
    // (held caller events wait on: tracing stops for a safepoint poll's trap or a call into the VM and goes on where
    // it stopped, and the first block after it says how the flow went on; in h2's Value.convertTo, releasing them
    // here kept a hoisted callee PcDesc the caller's next PcDescs would have taken back, 69 times)
    this.branchEvent = -1;
    this.prevKind = BlockEnd.IndirectJump;
    void tsc;
  }

  gap(reason: GapReason, fromOffset: number, toOffset: number, tscBegin: number, tscEnd: number): void {
    this.releaseHeld();
    this.hoistEv = -1;
    this.events.push(EventKind.Gap, EventSource.Other, -1, reason, -1, tscBegin, tscEnd);
    this.stats.gaps++;
    this.branchEvent = -1;
    this.slowEvent = -1;
    this.entryEvent = -1;
    this.switchEvent = -1;
    this.chain.length = 0;
    this.chainBcis.length = 0;
    this.savedFloor = this.nsaved;
    this.prevKind = BlockEnd.IndirectJump;
    this.prevSection = -1;
    void fromOffset;
    void toOffset;
  }
}
