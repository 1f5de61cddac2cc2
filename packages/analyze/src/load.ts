/**
 * Builds an Analysis: from a trace directory (decode every thread, then fill PT-loss gaps with @jportal/recover),
 * or from a ground-truth directory (@jportal/oracle), with class files from the trace's CLASS records and
 * an optional classpath (directories, jars).
 */
import { ClassFile, parseClass } from '@jportal/classfile';
import { decodeTrace, decodeTraceParallel, DecodedThread, DecodedTrace, EventStream, JvmModel } from '@jportal/decode';
import { loadClasspath } from '@jportal/icfg';
import { OracleKind, readOracle, readOracleThread } from '@jportal/oracle';
import { recoverGaps, RecoveryStats } from '@jportal/recover';
import { attributeOrphans, cfgFromModel, checkAndRepair, OrphanContext, OrphanReport, ReconstructReport } from '@jportal/reconstruct';
import { Analysis, AnalysisMethod, Kind, Origin, ThreadEvents, Tier } from './model';

export interface TraceLoadOptions {
  /** OS tids to analyze (default all) */
  tids?: number[];
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
  /** progress callback per decoded thread */
  onThread?: (name: string, done: number, total: number) => void;
}

export interface TraceAnalysis extends Analysis {
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

/** Class files by internal name, first from the classpath given, then the trace's recorded bytes. */
class ClassIndex {
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
  return { className, name, signature, classFile, info: classFile?.method(name, signature) };
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

/** refineDecoded's steps for one thread at a time (its `events` are replaced); the report rows are appended. */
class ThreadRefiner {
  private readonly cfgOf: ReturnType<typeof cfgFromModel> | undefined;
  private orphanContext: OrphanContext | undefined;
  constructor(
    private readonly model: JvmModel,
    private readonly opts: RefineOptions,
  ) {
    this.cfgOf = opts.reconstruct === false ? undefined : cfgFromModel(model);
  }

  refine(t: DecodedThread, out: RefineReport): void {
    const { cfgOf, opts } = this;
    if (cfgOf && hasOrphans(t.events)) {
      this.orphanContext ??= new OrphanContext(this.model);
      // (in place: the decoded events are this thread's own, and a copy of 100 M events is gigabytes)
      const r = attributeOrphans(t.events, this.orphanContext, { inPlace: true });
      t.events = r.events;
      out.orphans.push(r.report);
    } else out.orphans.push(undefined);
    if (cfgOf) {
      const r = checkAndRepair(t.events, cfgOf, { inPlace: true });
      t.events = r.events;
      out.reconstruction.push(r.report);
    } else out.reconstruction.push(undefined);
    if (opts.recover !== false) {
      const r = recoverGaps(t.events, { inPlace: true });
      t.events = r.events;
      out.recovery.push(r.stats);
    } else out.recovery.push(undefined);
  }
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
      ? await decodeTraceParallel(dir, { tids: opts.tids, workers: opts.workers, onThread: onDecoded, release: true, sinkFor })
      : decodeTrace(dir, { tids: opts.tids, onThread: onDecoded, release: true, sinkFor });
  const { model } = decoded;
  if (!convert) problems.push(...model.problems);
  return { source: { kind: 'trace', dir }, methods, threads, tscPerNs: model.tscPerNs, problems, ...report, model, decoded: decoded.threads };
}

/** Turns a decoded thread's events into a ThreadEvents (method ids into `methods`, which it extends). */
function converter(model: JvmModel, classes: ClassIndex, methods: AnalysisMethod[], opts: TraceLoadOptions): (t: DecodedThread) => ThreadEvents {
  const index = new Map<number, number>();
  const byKey = new Map<string, number>();
  const idOf = (m: number): number => {
    if (m < 0) return -1;
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
    return i;
  };
  return (t) => {
    const events = t.events;
    let first = 0;
    if (opts.fromVmStart && model.vmStartTsc) while (first < events.length && !(events.tsc[first] >= model.vmStartTsc)) first++;
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
    const origin = new Uint8Array(n);
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
