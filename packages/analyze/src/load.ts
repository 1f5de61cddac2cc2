/**
 * Builds an Analysis: from a trace directory (decode every thread, then fill PT-loss gaps with @jportal/recover),
 * or from a ground-truth directory (@jportal/oracle), with class files from the trace's CLASS records and
 * an optional classpath (directories, jars).
 */
import { ClassFile, parseClass } from '@jportal/classfile';
import { decodeTrace, decodeTraceParallel, javaThreadNames, DecodedThread, DecodedTrace, EVENT_BYTES, EventStream, heldStreamByteBudget, JvmModel, TimeSpan } from '@jportal/decode';
import { loadClasspath } from '@jportal/icfg';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { recoverGaps, RecoveryStats } from '@jportal/recover';
import { attributeOrphans, cfgFromModel, checkAndRepair, OrphanContext, shortestPathBetween, OrphanReport, ReconstructReport } from '@jportal/reconstruct';
import { Analysis, AnalysisMethod, Kind, Origin, ThreadEvents, Tier, WindowedAnalysis } from './model';
import { EventSpill } from './spill';
import { referenceEvents, referenceSlice, referenceThreadOf } from './reference';

export interface TraceLoadOptions {
  /** OS tids to analyze (default all) */
  tids?: number[];
  /** only this span of the run, seconds since the capture started (DecodeOptions.span; default all of it) */
  span?: TimeSpan;
  /** worker threads for decoding (default 1) */
  workers?: number;
  /** fill gaps PT lost with @jportal/recover (default true) */
  recover?: boolean;
  /**
   * check every decoded segment against the methods' CFGs and insert the bytecodes a contradiction proves missing
   * (@jportal/reconstruct; default true): inserted events count as inferred
   */
  reconstruct?: boolean;
  /** extra class files: directories and jars (classes the trace has no bytes of, e.g. with agent classes=0) */
  classpath?: string[];
  /** leave out events before the JVM's live phase (VMInit), as ground truth cannot see them (default false) */
  fromVmStart?: boolean;
  /**
   * another recording of the same program, decoded and refined without recovery: recovery may copy from its
   * thread of the same name too (./reference.ts)
   */
  reference?: DecodedTrace;
  /** progress callback per decoded thread */
  onThread?: (name: string, done: number, total: number) => void;
}

/** What loading a trace tells besides the events, per thread in the order of `threads`. */
interface TraceFacts {
  /** per thread (same order): what recovery did; undefined when it did not run */
  recovery: (RecoveryStats | undefined)[];
  /** per thread (same order): contradictions with the CFG and repairs; undefined when it did not run */
  reconstruction: (ReconstructReport | undefined)[];
  /** per thread (same order): frames the decoder could not name, projected onto the ICFG; undefined: none or not run */
  orphans: (OrphanReport | undefined)[];
  /** the decoder's model of the JVM (code image, methods, classes) */
  model: JvmModel;
  /** per thread: the decoder's statistics (their `events` are let go once converted into `threads`) */
  decoded: DecodedThread[];
}

export interface TraceAnalysis extends Analysis, TraceFacts {}

/** Class files by internal name, first from the classpath given, then the trace's recorded bytes. */
export class ClassIndex {
  private readonly parsed = new Map<string, ClassFile | null>();
  private readonly fromPath = new Map<string, ClassFile>();
  constructor(
    private readonly recorded: Map<string, Uint8Array> | undefined,
    classpath: string[] | undefined,
    private readonly problems: string[],
  ) {
    if (classpath?.length) {
      const r = loadClasspath(classpath);
      for (const c of r.classes) if (!this.fromPath.has(c.cf.name)) this.fromPath.set(c.cf.name, c.cf);
      for (const e of r.errors) problems.push(e.message);
    }
  }

  get(className: string, loader = -1): ClassFile | undefined {
    const key = `${loader}:${className}`;
    let cf = this.parsed.get(key);
    if (cf !== undefined) return cf ?? undefined;
    cf = this.fromPath.get(className) ?? null;
    if (!cf && this.recorded) {
      let bytes = loader >= 0 ? this.recorded.get(key) : undefined;
      if (!bytes) for (const [k, b] of this.recorded) if (k.endsWith(`:${className}`)) { bytes = b; break; }
      if (bytes)
        try {
          cf = parseClass(bytes, className);
        } catch (e) {
          this.problems.push(`class ${className}: ${(e as Error).message}`);
        }
    }
    this.parsed.set(key, cf);
    return cf ?? undefined;
  }
}

function methodOf(classes: ClassIndex, className: string, name: string, signature: string, loader?: number): AnalysisMethod {
  const classFile = classes.get(className, loader);
  const m: AnalysisMethod = { className, name, signature, classFile, info: classFile?.method(name, signature) };
  if (loader !== undefined) m.loader = loader;
  return m;
}

/** An AnalysisMethod made again from what the trace says of it (the class bytes: `classes`), e.g. in another thread. */
export function remakeMethod(classes: ClassIndex, m: { className: string; name: string; signature: string; loader?: number }): AnalysisMethod {
  return methodOf(classes, m.className, m.name, m.signature, m.loader);
}

function emptyThread(name: string, tid: number, javaTid: number, n: number): ThreadEvents {
  return {
    name, tid, javaTid, length: n,
    kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n),
    tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN), origin: new Uint8Array(n), tier: new Uint8Array(n),
  };
}

export interface RefineOptions {
  /** check against the CFGs and repair (default true) */
  reconstruct?: boolean;
  /** fill PT-loss gaps (default true) */
  recover?: boolean;
  /**
   * another recording of the same program, decoded and refined with `recover: false`: gaps may be filled from its
   * thread of the same name as well (@jportal/recover's `reference`; ./reference.ts). Methods only the reference
   * names are added to the decoded trace's model (new ids), so that the profiles can name what was copied from it.
   */
  reference?: DecodedTrace;
  /** when given, the wall time of each step is added to it (`jportal bench apps`' stage rows) */
  times?: RefineTimes;
}

/** Milliseconds the steps after decoding took, summed over the streams refined. */
export interface RefineTimes {
  /** @jportal/reconstruct: orphan frames projected onto the ICFG, steps checked against the CFGs and repaired */
  reconstructMs: number;
  /** @jportal/recover: PT-loss gaps filled */
  recoverMs: number;
}

/** What the steps after decoding did, per thread of the decoded trace (same order); undefined: step not run. */
export interface RefineReport {
  /** frames the decoder could not name (returns into callers lost in a gap) projected onto the ICFG */
  orphans: (OrphanReport | undefined)[];
  reconstruction: (ReconstructReport | undefined)[];
  recovery: (RecoveryStats | undefined)[];
}

/** Whether a thread has bytecodes of unknown method or bci (frames lost in a gap). */
function hasOrphans(e: EventStream): boolean {
  for (let i = 0; i < e.length; i++) if (e.kind[i] === Kind.Bytecode && (e.method[i] < 0 || e.bci[i] < 0)) return true;
  return false;
}

/**
 * The steps after decoding, on every thread of a decoded trace (its `events` are replaced): reconstruction
 * (@jportal/reconstruct: frames the decoder could not name are projected onto the ICFG, then each frame's steps
 * are checked against the method's CFG and proven-missing bytecodes inserted), then recovery of what PT lost (@jportal/recover). Shared by `jportal analyze` and `jportal accuracy`, so the
 * accuracy table measures what a user's profiles are made of.
 */
export function refineDecoded(decoded: DecodedTrace, opts: RefineOptions = {}): RefineReport {
  const out: RefineReport = { orphans: [], reconstruction: [], recovery: [] };
  const refiner = new ThreadRefiner(decoded.model, opts);
  for (const t of decoded.threads) refiner.refine(t, out);
  return out;
}

/**
 * refineDecoded's steps for one stream of events at a time (a thread, or a window of one as `jportal analyze` takes
 * them): `refineEvents(events, thread)`.
 */
export function createRefiner(model: JvmModel, opts: RefineOptions = {}): ThreadRefiner {
  return new ThreadRefiner(model, opts);
}

/** refineDecoded's steps for one thread at a time (its `events` are replaced); the report rows are appended. */
export class ThreadRefiner {
  private readonly cfgOf: ReturnType<typeof cfgFromModel> | undefined;
  private orphanContext: OrphanContext | undefined;
  private fallback: ReturnType<typeof shortestPathBetween> | undefined;
  /** when the VM loaded classes and installed compiled methods, ascending: recover's vmWork */
  private vmWork: Float64Array | undefined;
  constructor(
    private readonly model: JvmModel,
    private readonly opts: RefineOptions,
  ) {
    this.cfgOf = opts.reconstruct === false ? undefined : cfgFromModel(model);
  }

  /**
   * the reference recording's events of the thread's namesake, in this model's method ids (mapped once per thread),
   * the stretch of them that ran when this window did (referenceSlice: a long thread's windows each take their part)
   */
  private referenceFor(window: EventStream, thread?: { name: string; tid?: number }): EventStream | undefined {
    const ref = this.opts.reference;
    if (!ref || !thread) return undefined;
    const key = `${thread.name}\u0000${thread.tid ?? ''}`;
    if (!this.references.has(key)) {
      const rt = referenceThreadOf(ref, this.model, thread);
      const startOf = (m: JvmModel, tid?: number): number => (tid === undefined ? NaN : m.threads.find((t) => t.osTid === tid)?.startTsc ?? NaN);
      this.references.set(key, rt ? { events: referenceEvents(ref, rt, this.model, this.referenceIds), start: startOf(ref.model, rt.tid), ownStart: startOf(this.model, thread.tid) } : undefined);
    }
    const r = this.references.get(key);
    if (!r) return undefined;
    const [from, to] = referenceSlice(r.events, r.start, window, r.ownStart);
    return from === 0 && to === r.events.length ? r.events : r.events.view(from, to);
  }
  private readonly references = new Map<string, { events: EventStream; start: number; ownStart: number } | undefined>();
  private readonly referenceIds = new Map<number, number>();

  /** the model's class initializers (recover's onceOnly), again when the model has grown (a reference's methods) */
  private initializers(): ReadonlySet<number> {
    if (this.clinits?.size !== this.model.methods.size) {
      const ids = new Set<number>();
      for (const [id, m] of this.model.methods) if (m.name === '<clinit>') ids.add(id);
      this.clinits = { size: this.model.methods.size, ids };
    }
    return this.clinits.ids;
  }
  private clinits: { size: number; ids: Set<number> } | undefined;

  refine(t: DecodedThread, out: RefineReport): void {
    const r = this.refineEvents(t.events, t);
    t.events = r.events;
    out.orphans.push(r.orphans);
    out.reconstruction.push(r.reconstruction);
    out.recovery.push(r.recovery);
  }

  /** The steps on a stream of events (in place: they are the caller's own; a copy of 100 M events is gigabytes). */
  refineEvents(events: EventStream, thread?: { name: string; tid?: number }): { events: EventStream; orphans?: OrphanReport; reconstruction?: ReconstructReport; recovery?: RecoveryStats } {
    const { cfgOf, opts } = this;
    const out: { events: EventStream; orphans?: OrphanReport; reconstruction?: ReconstructReport; recovery?: RecoveryStats } = { events };
    const times = opts.times;
    let t0 = times ? performance.now() : 0;
    if (cfgOf && hasOrphans(out.events)) {
      this.orphanContext ??= new OrphanContext(this.model);
      const r = attributeOrphans(out.events, this.orphanContext, { inPlace: true });
      out.events = r.events;
      out.orphans = r.report;
    }
    if (cfgOf) {
      const r = checkAndRepair(out.events, cfgOf, { inPlace: true });
      out.events = r.events;
      out.reconstruction = r.report;
    }
    if (times) {
      const t1 = performance.now();
      times.reconstructMs += t1 - t0;
      t0 = t1;
    }
    if (opts.recover !== false) {
      // (a gap no context fills gets a shortest path of its method's CFG, where one method's frame spans it)
      this.fallback ??= cfgOf ? shortestPathBetween(cfgOf) : undefined;
      // the JVM's main thread ran the agent's VMInit work, no Java code, from VM_START to the last record it wrote
      const { vmStartTsc, vmInitEndTsc } = this.model;
      const pauses = thread?.name === 'main' && vmInitEndTsc > vmStartTsc ? [vmStartTsc, vmInitEndTsc] : [];
      // and the stretches the capture saw the thread off the CPU (a gap's time is the thread's own time only)
      if (thread?.tid !== undefined) pauses.push(...offCpuOf(this.model, thread.tid));
      this.vmWork ??= vmWorkOf(this.model);
      const reference = this.referenceFor(out.events, thread);
      const r = recoverGaps(out.events, { inPlace: true, fallback: this.fallback, pauses, vmWork: this.vmWork, reference, onceOnly: this.initializers() });
      out.events = r.events;
      out.recovery = r.stats;
    }
    if (times) times.recoverMs += performance.now() - t0;
    return out;
  }
}

/** The [from, to) TSC stretches pt/sideband.jsonl's `offcpu` records put the thread off the CPU in. */
function offCpuOf(model: JvmModel, tid: number): number[] {
  const out: number[] = [];
  for (const o of model.sideband?.offCpu ?? []) if (o.tid === tid) out.push(o.tscEnd - o.ticks, o.tscEnd);
  return out;
}

/**
 * The VM's work the trace records, which a thread may have waited on (recover's vmWork): classes loaded and compiled
 * methods installed, their TSCs ascending.
 */
function vmWorkOf(model: JvmModel): Float64Array {
  const at: number[] = [...model.classLoadTsc.values()];
  for (const nm of model.image.nmethods) at.push(nm.loadTsc);
  return Float64Array.from(at.filter(Number.isFinite)).sort();
}

/**
 * The sum of two reports of the same shape (numbers add up, maps and records merge key by key, lists concatenate
 * up to 1000 entries): what a thread's windows' reports add up to.
 */
export function addReports<T>(a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (typeof a === 'number' && typeof b === 'number') return (a + b) as T;
  if (a instanceof Map && b instanceof Map) {
    const m = new Map(a);
    for (const [k, v] of b) m.set(k, addReports(m.get(k), v));
    return m as T;
  }
  if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b].slice(0, Math.max(1000, a.length)) as T;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const o: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b as Record<string, unknown>)) o[k] = addReports(o[k], v);
    return o as T;
  }
  return b;
}

export async function loadTraceAnalysis(dir: string, opts: TraceLoadOptions = {}): Promise<TraceAnalysis> {
  const report: RefineReport = { orphans: [], reconstruction: [], recovery: [] };
  const threads: ThreadEvents[] = [];
  const problems: string[] = [];
  const methods: AnalysisMethod[] = [];
  let convert: ((t: DecodedThread) => ThreadEvents) | undefined;
  let refiner: ThreadRefiner | undefined;
  // one thread at a time: decoded, refined, converted, and its decoded events let go before the next one's
  const onThread = (t: DecodedThread, done: number, total: number, model: JvmModel): void => {
    if (!convert) {
      problems.push(...model.problems);
      convert = converter(model, new ClassIndex(model.classes, opts.classpath, problems), methods, opts);
      refiner = new ThreadRefiner(model, opts);
    }
    refiner!.refine(t, report);
    threads.push(convert(t));
    opts.onThread?.(t.name, done, total);
  };
  // the decoder streams each thread (bounded memory) into one stream kept here: the only copy of its events
  const kept = new Map<number, EventStream>();
  const sinkFor = (tid: number): ((e: EventStream) => void) => {
    const acc = EventStream.held();
    kept.set(tid, acc);
    return (e) => acc.appendStream(e);
  };
  const onDecoded = (t: DecodedThread, done: number, total: number, model: JvmModel): void => {
    const acc = kept.get(t.tid);
    kept.delete(t.tid);
    if (acc) {
      acc.trim();
      t.events = acc;
    }
    onThread(t, done, total, model);
  };
  const decoded =
    (opts.workers ?? 1) > 1
      ? await decodeTraceParallel(dir, { tids: opts.tids, span: opts.span, workers: opts.workers, onThread: onDecoded, release: true, sinkFor })
      : decodeTrace(dir, { tids: opts.tids, span: opts.span, onThread: onDecoded, release: true, sinkFor });
  const { model } = decoded;
  if (!convert) problems.push(...model.problems);
  return { source: { kind: 'trace', dir }, methods, threads, tscPerNs: model.tscPerNs, startTsc: model.sideband?.clock?.tsc, problems, ...report, model, decoded: decoded.threads };
}

/** Turns a decoded thread's events into a ThreadEvents (method ids into `methods`, which it extends). */
function converter(model: JvmModel, classes: ClassIndex, methods: AnalysisMethod[], opts: TraceLoadOptions): (t: DecodedThread) => ThreadEvents {
  const convert = streamConverter(model, classes, methods, opts);
  return (t) => convert(t.events, t, false);
}

/**
 * Turns decoded events into ThreadEvents, in place: the columns are views of the stream's own (only `origin` is
 * new); the stream must not be used afterwards. `started`: an earlier window of the thread was converted (events
 * before VMInit are only looked for before that).
 */
function streamConverter(model: JvmModel, classes: ClassIndex, methods: AnalysisMethod[], opts: TraceLoadOptions): (events: EventStream, who: { name: string; tid: number; javaTid: number }, started: boolean, originRoom?: Uint8Array) => ThreadEvents {
  const index = new Map<number, number>();
  const byKey = new Map<string, number>();
  // (runs of events in one method are the rule: the last answer saves most lookups)
  let lastM = -1;
  let lastI = -1;
  const idOf = (m: number): number => {
    if (m < 0) return -1;
    if (m === lastM) return lastI;
    let i = index.get(m);
    if (i === undefined) {
      const info = model.methods.get(m);
      if (!info) i = -1;
      else {
        const key = `${info.className}.${info.name}${info.signature}`;
        i = byKey.get(key);
        if (i === undefined) {
          i = methods.length;
          methods.push(methodOf(classes, info.className, info.name, info.signature, info.loader));
          byKey.set(key, i);
        }
      }
      index.set(m, i);
    }
    lastM = m;
    lastI = i;
    return i;
  };
  return (events, t, started, originRoom) => {
    let first = 0;
    if (opts.fromVmStart && model.vmStartTsc && !started) while (first < events.length && !(events.tsc[first] >= model.vmStartTsc)) first++;
    const n = events.length - first;
    const end = first + n;
    // in place: the ThreadEvents' columns are views of the decoded stream's own (a second copy of a thread's
    // 100 M events would be gigabytes); only `origin` is new. The stream must not be used afterwards.
    const kind = events.kind.subarray(first, end);
    const method = events.method.subarray(first, end);
    const bci = events.bci.subarray(first, end);
    const opcode = events.opcode.subarray(first, end);
    const tsc = events.tsc.subarray(first, end);
    const endTsc = events.aux.subarray(first, end);
    const tier = events.source.subarray(first, end);
    // (a recycled window's origin column, when it has room: cleared, as a new one would be)
    const origin = originRoom && originRoom.length >= n ? originRoom.subarray(0, n).fill(0) : new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const k = kind[i];
      const src = tier[i];
      const m = (method[i] = idOf(method[i]));
      if (src === 4) origin[i] = Origin.Recovered;
      // inserted by completion (aux 1) or by reconstruction (source 5: the CFG proves them run)
      else if (k === Kind.Bytecode && (src === 5 || (src !== 0 && endTsc[i] === 1))) origin[i] = Origin.Inferred;
      if (k !== Kind.Gap) endTsc[i] = NaN;
      // (source 5 stays as a mark for the pass below: the tier of the event it precedes)
      tier[i] = src <= 3 || src === 5 ? src : Tier.Unknown;
      if (k === Kind.Bytecode && opcode[i] < 0 && m >= 0 && bci[i] >= 0) {
        const code = methods[m].info?.code;
        if (code && bci[i] < code.length) opcode[i] = code[bci[i]];
      }
    }
    // reconstructed bytecodes run in the frame of the event they precede: its tier
    let next: number = Tier.Unknown;
    for (let i = n - 1; i >= 0; i--) {
      if (tier[i] === 5) tier[i] = next;
      else if (kind[i] === Kind.Bytecode) next = tier[i];
    }
    return { name: t.name, tid: t.tid, javaTid: t.javaTid, length: n, kind, method, bci, opcode, tsc, endTsc, origin, tier };
  };
}

export interface WindowedLoadOptions extends TraceLoadOptions {
  /** a directory of its own for the spill files (created, and removed by `close()`) */
  spillDir: string;
  /** events per window (default JPORTAL_ANALYZE_WINDOW, else 2^24) */
  windowEvents?: number;
}

/** A trace analysis whose events are on disk, read back window by window; `close()` removes the spill files. */
export interface WindowedTraceAnalysis extends WindowedAnalysis, TraceFacts {
  /** windows per thread (same order) */
  windowCounts: number[];
  /** bytes of the spill files */
  spillBytes: number;
  /** bytes of the windows the spill kept in memory instead (spillMemoryBudget) */
  heldBytes: number;
  close(): void;
}

/**
 * Events per window of a windowed analysis: JPORTAL_ANALYZE_WINDOW, else 2^24 (about 0.5 GB while decoding); at
 * most what half the kept stream's budget holds (heldStreamByteBudget: the other half is room for what repair and
 * recovery insert), so a thread of any length fits.
 */
export function analyzeWindowEvents(): number {
  const env = Number(process.env.JPORTAL_ANALYZE_WINDOW);
  const fit = Math.max(1024, Math.floor(heldStreamByteBudget() / EVENT_BYTES / 2));
  return Math.min(Number.isInteger(env) && env > 0 ? env : 1 << 24, fit);
}

/** A thread as the windowing names it: as the decoder will (the first Java thread the metadata puts on it). */
export interface ThreadWho {
  name: string;
  tid: number;
  javaTid: number;
}

/** What refinement did to a thread's windows, summed (addReports), and how many windows it had. */
export interface ThreadFacts {
  windows: number;
  orphans?: OrphanReport;
  reconstruction?: ReconstructReport;
  recovery?: RecoveryStats;
}

/** Where decodeInWindows hands what it makes, thread by thread in the decoder's order. */
export interface WindowSink {
  /** a thread starts; returns its key */
  open(who: ThreadWho): number;
  /**
   * a window of thread `k`, converted: with `reuse`, its columns are overwritten by the next window once this
   * returns (copy what is kept); without, they are the sink's
   */
  window(k: number, t: ThreadEvents): void;
  /** thread `k` is done (the decoder's name and Java tid for it) */
  done(k: number, t: DecodedThread, facts: ThreadFacts): void;
  /** the model is loaded: called once, before the first thread opens (or after decoding, when there is none) */
  model?(model: JvmModel): void;
  /**
   * The columns of a window the sink is done with (without `reuse`: handed back), to fill again instead of new
   * ones; undefined when there are none. Memory this process touches for the first time is dear here (a page
   * fault per 4 KiB: a new window's 0.5 GB cost more than a second), so windows go round.
   */
  recycled?(): WindowBuffers | undefined;
}

/** The buffers of a window's columns, named as ThreadEvents names them (see recycledStream). */
export type WindowBuffers = Record<'kind' | 'method' | 'bci' | 'opcode' | 'tsc' | 'endTsc' | 'origin' | 'tier', ArrayBuffer>;

/**
 * The buffers under a window's columns (the columns are views of whole buffers, convert()): for the sink to hand
 * back (WindowSink.recycled); undefined when two columns share one.
 */
export function windowBuffers(t: Pick<ThreadEvents, keyof WindowBuffers>): WindowBuffers | undefined {
  const b = { kind: t.kind.buffer, method: t.method.buffer, bci: t.bci.buffer, opcode: t.opcode.buffer, tsc: t.tsc.buffer, endTsc: t.endTsc.buffer, origin: t.origin.buffer, tier: t.tier.buffer } as WindowBuffers;
  return new Set(Object.values(b)).size === 8 ? b : undefined;
}

/**
 * An empty stream over a recycled window's buffers (the decoder's columns: tier is `source`, endTsc is `aux`),
 * and its origin column; undefined when the buffers do not make one (columns of unequal room, or detached).
 */
function recycledStream(b: WindowBuffers): { stream: EventStream; origin: Uint8Array } | undefined {
  const n = b.kind.byteLength;
  if (n < 16 || b.tier.byteLength !== n || b.method.byteLength !== 4 * n || b.bci.byteLength !== 4 * n || b.opcode.byteLength !== 2 * n || b.tsc.byteLength !== 8 * n || b.endTsc.byteLength !== 8 * n) return undefined;
  const e = new EventStream(0);
  e.kind = new Uint8Array(b.kind);
  e.source = new Uint8Array(b.tier);
  e.method = new Int32Array(b.method);
  e.bci = new Int32Array(b.bci);
  e.opcode = new Int16Array(b.opcode);
  e.tsc = new Float64Array(b.tsc);
  e.aux = new Float64Array(b.endTsc);
  e.budgetBytes = heldStreamByteBudget();
  return { stream: e, origin: new Uint8Array(b.origin) };
}

/**
 * The windowing of loadTraceWindows (see there) with its windows handed to `sink`: each thread decoded as a
 * stream, a window of `windowEvents` events at a time through reconstruction, recovery and conversion. Method ids
 * go into `methods` (extended as methods are met), load problems into `problems`. `reuse`: the windows' columns
 * are reused (the sink copies); otherwise each window gets columns of its own, handed over.
 */
export async function decodeInWindows(dir: string, opts: TraceLoadOptions & { windowEvents: number; reuse: boolean }, sink: WindowSink, methods: AnalysisMethod[], problems: string[]): Promise<DecodedTrace> {
  const windowEvents = Math.max(1, opts.windowEvents);
  let convert: ReturnType<typeof streamConverter> | undefined;
  let refiner: ThreadRefiner | undefined;
  interface Pending extends ThreadFacts {
    k: number;
    /** the window being filled (undefined: its columns went to the sink; the next comes with the next events) */
    window: EventStream | undefined;
    /** the origin column of the recycled window being filled */
    origin?: Uint8Array;
    reached: boolean;
  }
  const pending = new Map<number, Pending>();
  const setup = (model: JvmModel) => {
    if (convert) return;
    problems.push(...model.problems);
    sink.model?.(model);
    convert = streamConverter(model, new ClassIndex(model.classes, opts.classpath, problems), methods, opts);
    refiner = new ThreadRefiner(model, opts);
  };
  const flush = (p: Pending, who: ThreadWho) => {
    if (!p.window?.length) return;
    const r = refiner!.refineEvents(p.window, who);
    p.orphans = addReports(p.orphans, r.orphans);
    p.reconstruction = addReports(p.reconstruction, r.reconstruction);
    p.recovery = addReports(p.recovery, r.recovery);
    const t = convert!(r.events, who, p.reached, p.origin);
    p.origin = undefined;
    if (t.length) p.reached = true;
    sink.window(p.k, t);
    p.windows++;
    if (opts.reuse) {
      // (the sink has its copy: the stream's columns take the next window)
      p.window = r.events;
      p.window.length = 0;
    } else p.window = undefined;
  };
  /** a window for p to fill: recycled (the sink's, handed back), else new with room for a whole window */
  const fresh = (p: Pending): EventStream => {
    const b = opts.reuse ? undefined : sink.recycled?.();
    const r = b && recycledStream(b);
    if (!r) return windowStream(windowEvents);
    p.origin = r.origin;
    return r.stream;
  };
  const open = (who: ThreadWho): Pending => {
    const p: Pending = { k: sink.open(who), window: undefined, reached: false, windows: 0 };
    p.window = fresh(p);
    pending.set(who.tid, p);
    return p;
  };
  /** appends decoded events to the thread's window, taking each full window through flush */
  const feed = (p: Pending, who: ThreadWho, e: EventStream) => {
    for (let from = 0; from < e.length; ) {
      const w = (p.window ??= fresh(p));
      const take = Math.min(e.length - from, windowEvents - w.length);
      w.appendStream(from === 0 && take === e.length ? e : e.view(from, from + take));
      from += take;
      if (w.length >= windowEvents) flush(p, who);
    }
  };
  const sinkFor = (tid: number, model: JvmModel): ((e: EventStream) => void) => {
    setup(model);
    // named as the decoder will name it (the first Java thread the metadata puts on that OS thread): refinement reads
    // the name (the main thread's start-up pause, a reference's namesake) in every window, not only the last
    const t = javaThreadNames(model).get(tid);
    const who = { name: t?.name ?? `tid ${tid}`, tid, javaTid: t?.javaTid ?? -1 };
    const p = open(who);
    return (e) => feed(p, who, e);
  };
  const onDecoded = (t: DecodedThread, done: number, total: number, model: JvmModel): void => {
    setup(model);
    const who = { name: t.name, tid: t.tid, javaTid: t.javaTid };
    let p = pending.get(t.tid);
    if (!p) {
      // (a thread the decoder did not stream: its events came whole)
      p = open(who);
      feed(p, who, t.events);
    }
    pending.delete(t.tid);
    flush(p, who);
    sink.done(p.k, t, { windows: p.windows, orphans: p.orphans, reconstruction: p.reconstruction, recovery: p.recovery });
    opts.onThread?.(t.name, done, total);
  };
  const decoded =
    (opts.workers ?? 1) > 1
      ? await decodeTraceParallel(dir, { tids: opts.tids, span: opts.span, workers: opts.workers, onThread: onDecoded, release: true, sinkFor })
      : decodeTrace(dir, { tids: opts.tids, span: opts.span, onThread: onDecoded, release: true, sinkFor });
  if (!convert) {
    problems.push(...decoded.model.problems);
    sink.model?.(decoded.model);
  }
  return decoded;
}

/**
 * loadTraceAnalysis for traces of any length: each thread is decoded as a stream and taken a window at a time
 * (`windowEvents` events) through reconstruction, recovery and conversion into a spill file, so memory holds a
 * window per thread, not the thread. Reconstruction and recovery then see one window at a time: a gap is filled
 * from the segments of its own window, and a window boundary cuts the frames open there as a trace start would.
 * A thread shorter than a window is processed exactly as loadTraceAnalysis does.
 */
export async function loadTraceWindows(dir: string, opts: WindowedLoadOptions): Promise<WindowedTraceAnalysis> {
  const spill = new EventSpill(opts.spillDir);
  const problems: string[] = [];
  const methods: AnalysisMethod[] = [];
  const report: RefineReport = { orphans: [], reconstruction: [], recovery: [] };
  const order: number[] = [];
  const windowCounts: number[] = [];
  const sink: WindowSink = {
    open: (who) => spill.open(who),
    window: (k, t) => spill.append(k, t),
    done: (k, t, facts) => {
      spill.rename(k, t.name, t.javaTid);
      order.push(k);
      windowCounts.push(facts.windows);
      report.orphans.push(facts.orphans);
      report.reconstruction.push(facts.reconstruction);
      report.recovery.push(facts.recovery);
    },
  };
  let decoded: DecodedTrace;
  try {
    decoded = await decodeInWindows(dir, { ...opts, windowEvents: opts.windowEvents ?? analyzeWindowEvents(), reuse: true }, sink, methods, problems);
  } catch (e) {
    spill.close();
    throw e;
  }
  const { model } = decoded;
  const infos = spill.infos;
  return {
    source: { kind: 'trace', dir },
    methods,
    threads: order.map((k) => infos[k]),
    windows: (k: number) => spill.windows(order[k]),
    tscPerNs: model.tscPerNs,
    startTsc: model.sideband?.clock?.tsc,
    problems,
    ...report,
    model,
    decoded: decoded.threads,
    windowCounts,
    spillBytes: spill.bytes,
    heldBytes: spill.heldBytes,
    close: () => spill.close(),
  };
}

/**
 * A stream for one window: room for the whole window from the start, within the kept stream's budget. Room not yet
 * written costs no memory (the pages are untouched), where growing from less copied every column into new pages.
 */
function windowStream(events: number): EventStream {
  const e = new EventStream(events);
  e.budgetBytes = heldStreamByteBudget();
  return e;
}

export interface OracleLoadOptions {
  /** class files: directories and jars (the oracle directory holds no class bytes) */
  classpath?: string[];
  /** class bytes recorded by a trace of the same program ("loader:name" -> bytes, JvmModel.classes) */
  recordedClasses?: Map<string, Uint8Array>;
}

/** Ground truth as an Analysis: kinds mapped onto the decoder's (throw -> exception, catch dropped), no time. */
export function loadOracleAnalysis(dir: string, opts: OracleLoadOptions = {}): Analysis {
  const o = readOracle(dir);
  const problems: string[] = [];
  const classes = new ClassIndex(opts.recordedClasses, opts.classpath, problems);
  const methods: AnalysisMethod[] = [];
  const byKey = new Map<string, number>();
  const map = new Int32Array(o.methods.length).fill(-1);
  for (const m of o.methods) {
    const key = `${m.className}.${m.name}${m.signature}`;
    let i = byKey.get(key);
    if (i === undefined) {
      i = methods.length;
      methods.push(methodOf(classes, m.className, m.name, m.signature));
      byKey.set(key, i);
    }
    map[m.id] = i;
  }
  const threads: ThreadEvents[] = [];
  for (const t of o.threads) {
    const ev = readOracleThread(o, t);
    let n = 0;
    for (let i = 0; i < ev.length; i++) if (ev.kind[i] !== OracleKind.Catch) n++;
    const out = emptyThread(t.name, t.tid, t.tid, n);
    out.tsc.fill(NaN);
    out.tier.fill(Tier.Unknown);
    let k = 0;
    for (let i = 0; i < ev.length; i++) {
      const kind = ev.kind[i];
      if (kind === OracleKind.Catch) continue;
      out.kind[k] = kind === OracleKind.Bytecode ? Kind.Bytecode : kind === OracleKind.Entry ? Kind.Entry : kind === OracleKind.Throw ? Kind.Exception : Kind.Exit;
      out.method[k] = ev.method[i] < map.length ? map[ev.method[i]] : -1;
      out.bci[k] = ev.bci[i];
      out.opcode[k] = ev.opcode[i];
      k++;
    }
    threads.push(out);
  }
  return { source: { kind: 'oracle', dir }, methods, threads, tscPerNs: 0, problems };
}
