/**
 * Builds what decoding needs from a trace directory's meta.jpt: the code image (with patch versions and
 * lifetimes), the interpreter's codelets and dispatch targets, methods, classes and threads.
 */
import { FLAG_REPLAY, isRecord, MetaReader, PtSideband, readPtSideband, TraceRecord, unloadTime, type MethodRun, type MethodRunsRecord } from '@jportal/format';
import * as path from 'path';
import { CodeImage, CodeSection, NmethodInfo, SectionKind } from './image';
import { CLASS_PATH_SOURCE, featureOf, readNamedClasses, type VmClassSources } from './class-path';
import { IMAGE_CLASS_SOURCE } from './runtime-image';
import { BlockEnd } from './x86';
import { jumpTableArms, type AddedPcDesc } from './jump-tables';
import { fallThroughPcDescs } from './branch-pcdescs';
import { parseClass, type ClassFile } from '@jportal/classfile';

export interface MethodInfo {
  className: string;
  name: string;
  signature: string;
  classId: number;
  loader: number;
}

export interface JvmModel {
  image: CodeImage;
  methods: Map<number, MethodInfo>;
  /** CLASS bytes by loader + name ("loader:name"), the latest version. */
  classes: Map<string, Uint8Array>;
  /** when each class was loaded (TSC of its CLASS record; -Infinity when unknown, REPLAY), by "loader:name" */
  classLoadTsc: Map<string, number>;
  /**
   * What the VM said at its death about which methods ran (METHOD_RUNS), by class ("loader:name"), then by name and
   * descriptor (`name(desc)ret`): a method of a listed class that is not in its map, or is with no invocations, was
   * never entered by the interpreter; `invocations` bounds its interpreted entries (all threads). Classes not listed (or no METHOD_RUNS at all: -Xint, older traces) are unknown.
   */
  methodRuns: Map<string, Map<string, MethodRun>>;
  /** Interpreter codelets sorted by begin. */
  codelets: { begin: Float64Array; end: Float64Array; bytecode: Int16Array; kind: Uint8Array; description: string[] };
  /** Dispatch-table targets that name exactly one bytecode: address -> bytecode. */
  dispatch: Map<number, number>;
  /** Method-entry table targets: address -> method kind. */
  methodEntries: Map<number, number>;
  threads: { osTid: number; javaTid: number; name: string; startTsc: number; endTsc: number }[];
  sideband?: PtSideband;
  /** TSC ticks per nanosecond (from the CALIBRATION records), 0 when unknown. */
  tscPerNs: number;
  /**
   * Method ids from here on were not named by METHOD records: the attribution of interpreted code added them
   * (methods found in CLASS records). Undefined until then.
   */
  firstSyntheticMethod?: number;
  /** TSC of the VM_START record (JVMTI VMInit: the live phase begins), 0 when absent. */
  vmStartTsc: number;
  /**
   * TSC of the last record of the run of REPLAY records that follows VM_START: the agent's VMInit callback writes
   * them (the classes, threads, code blobs and compiled methods that existed before it) on the thread that ran
   * VMInit, the JVM's main thread, which runs no Java code meanwhile. vmStartTsc when there are none.
   */
  vmInitEndTsc: number;
  /** the traced JVM's Java feature release (17 for 17.0.9), from VM_INFO; 0 when unknown */
  javaFeature?: number;
  problems: string[];
}

export interface LoadOptions {
  /**
   * How long before a CODE_PATCH record's tsc the new bytes are taken to be in effect (ticks). Patches are
   * found by polling, so the change happened at some point in the interval before the record.
   */
  patchLead?: number;
  /** the JDK runtime image (lib/modules) to read start-up classes from, instead of the one the trace names */
  runtimeImage?: string;
  /** the class path to read the app loader's named classes from, instead of the one the trace names */
  classPath?: string[];
}

const toNum = (b: bigint): number => Number(b);

/** A CODE_PATCH as the image needs it: `since` is when the scan before the one that saw it began (format 1.1). */
interface PatchSeen {
  tsc: number;
  address: number;
  bytes: Uint8Array;
  since?: number;
}

export function loadTrace(dir: string, opts: LoadOptions = {}): JvmModel {
  const image = new CodeImage();
  const methods = new Map<number, MethodInfo>();
  const classes = new Map<string, Uint8Array>();
  const classLoadTsc = new Map<string, number>();
  const classKeys = new Map<number, string>();
  const runLists: MethodRunsRecord['payload'][] = [];
  /** CLASS records naming runtime-image classes: key -> internal name */
  const imageClasses = new Map<string, string>();
  /** CLASS records naming class-path classes: key -> internal name */
  const pathClasses = new Map<string, string>();
  let vmInfo: VmClassSources | undefined;
  const codeletList: { begin: number; end: number; bytecode: number; kind: number; description: string }[] = [];
  const dispatchCount = new Map<number, Set<number>>();
  const methodEntries = new Map<number, number>();
  const threads: JvmModel['threads'] = [];
  const problems: string[] = [];
  const calibrations: { tsc: number; ns: number }[] = [];
  let vmStartTsc = 0;
  let vmInitEndTsc = 0;
  /** in the run of REPLAY records after VM_START (vmInitEndTsc) */
  let inVmInit = false;
  let interp: { base: number; code: Uint8Array } | undefined;
  const blobs: { address: number; code: Uint8Array; name: string; tsc: number }[] = [];
  const loads: { nm: NmethodInfo; code: Uint8Array; consts?: { begin: number; bytes: Uint8Array } }[] = [];
  const patches = new Map<number, PatchSeen[]>();
  const unloads: { codeBegin: number; tsc: number; method: number }[] = [];
  let patchInterval = 50;

  const meta = MetaReader.open(path.join(dir, 'meta.jpt'));
  try {
    for (const r of meta.records() as Iterable<TraceRecord>) {
      const tsc = toNum(r.tsc);
      if (inVmInit) {
        if (r.flags & FLAG_REPLAY) vmInitEndTsc = tsc;
        else inVmInit = false;
      }
      if (isRecord(r, 'CALIBRATION')) calibrations.push({ tsc, ns: toNum(r.payload.mono_ns) });
      else if (isRecord(r, 'INTERP_CODE')) interp = { base: r.payload.base, code: r.payload.code };
      else if (isRecord(r, 'CODELET')) codeletList.push(r.payload);
      else if (isRecord(r, 'DISPATCH_TABLE')) {
        const t = r.payload;
        if (t.table === 3) t.entries.forEach((e, i) => methodEntries.set(e.target, i));
        else
          t.entries.forEach((e, i) => {
            let s = dispatchCount.get(e.target);
            if (!s) dispatchCount.set(e.target, (s = new Set()));
            s.add(i % t.per_state);
          });
      } else if (isRecord(r, 'CODE_BLOB')) blobs.push({ address: r.payload.address, code: r.payload.code, name: r.payload.name, tsc });
      else if (isRecord(r, 'NMETHOD_LOAD')) {
        const p = r.payload;
        const { pcs, frameStart, frames } = pcDescArrays(p.pcs.map((d) => ({ pc: d.pc, frames: d.frames.flatMap((f) => [f.method, f.bci]) })));
        const addImm = loopSteps(addImmediates(p.code, p.code_begin, pcs), frameStart, frames);
        loads.push({
          nm: {
            method: p.method,
            codeBegin: p.code_begin,
            codeEnd: p.code_begin + p.code_size,
            entry: p.entry,
            verifiedEntry: p.verified_entry,
            osrEntry: p.osr_entry,
            osrBci: p.osr_bci,
            stubBegin: p.stub_begin || p.code_begin + p.code_size,
            level: p.level,
            compileId: p.compile_id,
            loadTsc: tsc,
            unloadTsc: Infinity,
            pcs,
            frameStart,
            frames,
            addImm,
          },
          code: p.code,
          consts: p.consts && p.consts.length && p.consts_begin ? { begin: p.consts_begin, bytes: p.consts } : undefined,
        });
      } else if (isRecord(r, 'CODE_PATCH')) {
        let l = patches.get(r.payload.code_begin);
        if (!l) patches.set(r.payload.code_begin, (l = []));
        l.push({ tsc, address: r.payload.address, bytes: r.payload.bytes, since: r.payload.since === undefined ? undefined : Number(r.payload.since) });
      } else if (isRecord(r, 'NMETHOD_UNLOAD')) unloads.push({ codeBegin: r.payload.code_begin, tsc: unloadTime(r.payload, tsc), method: r.payload.method });
      else if (isRecord(r, 'METHOD_RUNS')) runLists.push(r.payload);
      else if (isRecord(r, 'METHOD'))
        methods.set(r.payload.method, { className: r.payload.class_name, name: r.payload.name, signature: r.payload.signature, classId: r.payload.class_id, loader: r.payload.loader });
      else if (isRecord(r, 'CLASS')) {
        const key = `${r.payload.loader}:${r.payload.name}`;
        classKeys.set(r.payload.class_id, key);
        // a class listed at VMInit (REPLAY) was loaded at some earlier time: not known when
        if (!classLoadTsc.has(key)) classLoadTsc.set(key, r.flags & FLAG_REPLAY ? -Infinity : tsc);
        if (r.payload.source === IMAGE_CLASS_SOURCE && r.payload.bytes.length === 0) imageClasses.set(key, r.payload.name);
        else if (r.payload.source === CLASS_PATH_SOURCE && r.payload.bytes.length === 0) pathClasses.set(key, r.payload.name);
        else {
          classes.set(key, r.payload.bytes);
          imageClasses.delete(key);
          pathClasses.delete(key);
        }
      }
      else if (r.typeName === 'VM_START') {
        vmStartTsc = vmInitEndTsc = tsc;
        inVmInit = true;
      }
      else if (isRecord(r, 'THREAD_START')) threads.push({ osTid: r.payload.os_tid, javaTid: Number(r.payload.java_tid), name: r.payload.name, startTsc: tsc, endTsc: Infinity });
      else if (isRecord(r, 'THREAD_END')) {
        const t = threads.find((x) => x.javaTid === Number(r.payload.java_tid) && x.endTsc === Infinity);
        if (t) t.endTsc = tsc;
      } else if (isRecord(r, 'VM_INFO')) {
        vmInfo = r.payload;
        const f = r.payload.flags.find((x) => x.name === 'jportal.patch_interval_ms');
        if (f) patchInterval = Number(f.value) || patchInterval;
      }
    }
    for (const p of meta.problems) problems.push(p.message);
  } finally {
    meta.close();
  }
  readNamedClasses(imageClasses, pathClasses, vmInfo, opts, classes, problems);
  const methodRuns = new Map<string, Map<string, MethodRun>>();
  for (const list of runLists)
    for (const c of list.classes) {
      const key = classKeys.get(c.class_id);
      if (key === undefined) {
        problems.push(`METHOD_RUNS names class id ${c.class_id}, which no CLASS record has: its methods' runs are unknown`);
        continue;
      }
      methodRuns.set(key, new Map(c.methods.map((m) => [m.name + m.signature, m])));
    }
  const codeOf = bytecodeOf(methods, classes);
  addJumpTableArms(loads, codeOf);

  let tscPerNs = 0;
  if (calibrations.length >= 2) {
    const a = calibrations[0];
    const b = calibrations[calibrations.length - 1];
    if (b.ns > a.ns) tscPerNs = (b.tsc - a.tsc) / (b.ns - a.ns);
  }
  const patchLead = opts.patchLead ?? (tscPerNs ? Math.round(patchInterval * 1e6 * tscPerNs) : 0);

  // the interpreter first, then blobs that are not the interpreter
  if (interp) {
    image.addSection({ kind: SectionKind.Interpreter, begin: interp.base, end: interp.base + interp.code.length, bytes: interp.code, name: 'Interpreter', validFrom: 0, validTo: Infinity, nmethod: -1, version: 0 });
  }
  // nmethod lifetimes: an nmethod lives until its unload; it may have run before its (late-posted) load
  // record, but not before the previous occupant of its addresses was unloaded
  const byBegin = new Map<number, { nm: NmethodInfo; code: Uint8Array }[]>();
  for (const l of loads) {
    let a = byBegin.get(l.nm.codeBegin);
    if (!a) byBegin.set(l.nm.codeBegin, (a = []));
    a.push(l);
  }
  for (const u of unloads) {
    const cands = byBegin.get(u.codeBegin);
    if (!cands) continue;
    // the latest load of this method at this address before the unload that is still live
    let best: NmethodInfo | undefined;
    for (const c of cands) if (c.nm.method === u.method && c.nm.unloadTsc === Infinity && c.nm.loadTsc <= u.tsc && (!best || c.nm.loadTsc > best.loadTsc)) best = c.nm;
    if (best) best.unloadTsc = u.tsc;
  }
  const unloadedRanges = loads
    .filter((l) => l.nm.unloadTsc !== Infinity)
    .map((l) => ({ lo: l.nm.codeBegin, hi: l.nm.codeEnd, t: l.nm.unloadTsc }))
    .sort((a, b) => a.t - b.t);
  /** when the last nmethod that held any of [lo, hi) before `tsc` was unloaded (0: none): what lives there now began after it */
  const freedBefore = (lo: number, hi: number, tsc: number): number => {
    let from = 0;
    for (const u of unloadedRanges) {
      if (u.t > tsc) break;
      if (u.lo < hi && u.hi > lo) from = u.t;
    }
    return from;
  };
  for (const b of blobs) {
    const end = b.address + b.code.length;
    if (interp && b.address < interp.base + interp.code.length && end > interp.base) continue;
    if (b.code.length === 0) continue;
    // a blob lives from before its record (those made before the agent started are recorded at its start) to the
    // end of the run (the VM does not free adapters and stubs), but not from before an nmethod that held its
    // addresses was unloaded: a long run makes new adapters in space freed by flushed nmethods, and the two must
    // not both be the code there while the nmethod lived
    const validFrom = freedBefore(b.address, end, b.tsc);
    // buffers the agent watches (signature handlers, inline-cache stubs) get CODE_PATCH versions too
    addVersions(image, { kind: SectionKind.Blob, begin: b.address, end, bytes: b.code, name: b.name, validFrom, validTo: Infinity, nmethod: -1, version: 0 }, patches.get(b.address) ?? [], patchLead, problems);
  }
  for (const l of loads) {
    const nm = l.nm;
    const from = freedBefore(nm.codeBegin, nm.codeEnd, nm.loadTsc);
    const idx = image.nmethods.length;
    image.nmethods.push(nm);
    nm.ctx = pcContextsOf(nm, image.pcContexts as Set<number>[]);
    nm.fallThrough = fallThroughPcDescs({ codeBegin: nm.codeBegin, code: l.code, pcs: nm.pcs, frameStart: nm.frameStart, frames: nm.frames }, codeOf, nm.level === 4);
    const ps = (patches.get(nm.codeBegin) ?? []).filter((p) => p.tsc >= nm.loadTsc && p.tsc < nm.unloadTsc);
    const name = methods.get(nm.method);
    const label = name ? `${name.className}.${name.name}${name.signature}` : `method#${nm.method}`;
    addVersions(image, { kind: SectionKind.Nmethod, begin: nm.codeBegin, end: nm.codeEnd, bytes: l.code, name: label, validFrom: from, validTo: nm.unloadTsc, nmethod: idx, version: 0 }, ps, patchLead, problems);
  }

  markNotEntrant(image);
  findResolveExits(image);
  findAdapterEntries(image);

  codeletList.sort((a, b) => a.begin - b.begin);
  const codelets = {
    begin: Float64Array.from(codeletList, (c) => c.begin),
    end: Float64Array.from(codeletList, (c) => c.end),
    bytecode: Int16Array.from(codeletList, (c) => c.bytecode),
    kind: Uint8Array.from(codeletList, (c) => c.kind),
    description: codeletList.map((c) => c.description),
  };
  const dispatch = new Map<number, number>();
  for (const [target, bcs] of dispatchCount) if (bcs.size === 1) dispatch.set(target, [...bcs][0]);

  const sideband = readPtSideband(dir);
  if (sideband) image.ranges = sideband.ranges;
  const javaFeature = vmInfo ? featureOf(vmInfo.java_version) : 0;
  return { image, methods, classes, classLoadTsc, methodRuns, codelets, dispatch, methodEntries, threads, sideband, tscPerNs, vmStartTsc, vmInitEndTsc, javaFeature, problems };
}

/** Length of the first instruction of a C1/C2 verified entry: a stack bang `mov %eax,-N(%rsp)` or `sub $N,%rsp`. */
const ENTRY_INSN_LENGTH = 7;

/**
 * Finds nmethod versions whose verified entry holds the not-entrant jump (e9 rel32 into the wrong-method stub)
 * and marks where the original entry instruction would resume (see CodeSection.skipAt).
 */
function markNotEntrant(image: CodeImage): void {
  const stubs = image.sections.filter((s) => s.kind === SectionKind.Blob && /wrong_method/.test(s.name));
  if (stubs.length === 0) return;
  for (const s of image.sections) {
    if (s.kind !== SectionKind.Nmethod) continue;
    const nm = image.nmethods[s.nmethod];
    if (nm.level < 1) continue;
    const off = nm.verifiedEntry - s.begin;
    if (off < 0 || off + ENTRY_INSN_LENGTH > s.bytes.length || s.bytes[off] !== 0xe9) continue;
    const rel = s.bytes[off + 1] | (s.bytes[off + 2] << 8) | (s.bytes[off + 3] << 16) | (s.bytes[off + 4] << 24);
    const target = nm.verifiedEntry + 5 + rel;
    if (!stubs.some((b) => target >= b.begin && target < b.end)) continue;
    s.skipAt = nm.verifiedEntry;
    s.skipTo = nm.verifiedEntry + ENTRY_INSN_LENGTH;
  }
}

/** Fills image.resolveExits: follows each call-resolution stub straight to its first call out of the range. */
function findResolveExits(image: CodeImage): void {
  for (const s of image.sections) {
    if (s.kind !== SectionKind.Blob || !/^(resolve_\w*call|ic_miss_stub|wrong_method_stub)/.test(s.name)) continue;
    let ip = s.begin;
    for (let n = 0; n < 16; n++) {
      const b = image.block(s.id, ip);
      const B = image.blocks;
      if (B.kind[b] === BlockEnd.Call || B.kind[b] === BlockEnd.Jump) {
        const t = B.target[b];
        if (t < s.begin || t >= s.end) {
          if (B.kind[b] === BlockEnd.Call) {
            image.resolveExits.set(t, s.begin);
            image.resolveStubs.add(s.begin);
          }
          break;
        }
        ip = t;
      } else if (B.kind[b] === BlockEnd.Next) ip = B.end[b];
      else break;
    }
  }
}

/**
 * Fills image.dispatchStubs and image.c2iUnverifiedEntries. HotSpot generates each adapter as the i2c part (ending in an indirect jump to
 * the callee's compiled entry), then the c2i part, whose first instruction is the unverified entry: the receiver's
 * klass check of an inline cache that points at an interpreted method. Which adapter a call site used is not
 * recorded (it follows from the callee's signature), so the decoder tries them where a call's recorded target
 * does not fit.
 */
function findAdapterEntries(image: CodeImage): void {
  const seen = new Set<number>();
  for (const s of image.sections) {
    if (s.kind === SectionKind.Blob && (s.name === 'vtable stub' || s.name === 'itable stub')) image.dispatchStubs.add(s.begin);
    if (s.kind !== SectionKind.Blob || !s.name.startsWith('I2C/C2I adapters') || seen.has(s.begin)) continue;
    seen.add(s.begin);
    const B = image.blocks;
    let ip = s.begin;
    for (let n = 0; n < 64 && ip < s.end; n++) {
      const b = image.block(s.id, ip);
      if (B.kind[b] === BlockEnd.IndirectJump) {
        if (B.end[b] < s.end) image.c2iUnverifiedEntries.push(B.end[b]);
        break;
      }
      if (B.kind[b] === BlockEnd.Stop || B.kind[b] === BlockEnd.Truncated || B.end[b] <= ip) break;
      ip = B.end[b]; // straight through the i2c part's own branches: its indirect jump ends it
    }
  }
}

/**
 * Adds a piece of code and one more version per CODE_PATCH. Patches are found by polling, so the change happened
 * after the previous scan began: version k+1 takes over there (the record's `since`, format 1.1; the watcher's
 * pause grows with the code it compares), or, in 1.0 traces, `patchLead` ticks before the k-th patch record.
 */
function addVersions(image: CodeImage, first: Omit<CodeSection, 'id' | 'settledFrom'>, patches: PatchSeen[], patchLead: number, problems: string[]): void {
  const ps = [...patches].sort((a, b) => a.tsc - b.tsc);
  let bytes = first.bytes;
  let start = first.validFrom;
  let settled = first.validFrom;
  let version = 0;
  for (const p of ps) {
    const switchAt = Math.max(start, p.since ?? p.tsc - patchLead);
    image.addSection({ ...first, bytes, validFrom: start, validTo: switchAt, version, settledFrom: Math.min(settled, switchAt) });
    // a copy: the record's bytes may be a Node Buffer, whose slice() is a view (patching it would rewrite every
    // earlier version too)
    const next = new Uint8Array(bytes);
    const off = p.address - first.begin;
    if (off >= 0 && off + p.bytes.length <= next.length) next.set(p.bytes, off);
    else problems.push(`CODE_PATCH at 0x${p.address.toString(16)} lies outside its code at 0x${first.begin.toString(16)}`);
    bytes = next;
    start = switchAt;
    settled = Math.max(switchAt, p.tsc);
    version++;
  }
  image.addSection({ ...first, bytes, validFrom: start, version, settledFrom: settled });
}

/**
 * The context of each of an nmethod's PcDescs: its innermost method and the (method, bci) frames around it; the
 * bcis of each context's PcDescs go into `contexts` (one per context of this nmethod).
 */
function pcContextsOf(nm: NmethodInfo, contexts: Set<number>[]): Int32Array {
  const ids = new Map<string, number>();
  const ctx = new Int32Array(nm.pcs.length);
  for (let k = 0; k < nm.pcs.length; k++) {
    const f0 = nm.frameStart[k];
    const f1 = nm.frameStart[k + 1];
    if (f1 <= f0) {
      ctx[k] = -1;
      continue;
    }
    const key = `${nm.frames[f0 * 2]}|${Array.from(nm.frames.subarray(f0 * 2 + 2, f1 * 2)).join(',')}`;
    let id = ids.get(key);
    if (id === undefined) {
      ids.set(key, (id = contexts.length));
      contexts.push(new Set());
    }
    ctx[k] = id;
    const bci = nm.frames[f0 * 2 + 1];
    if (bci >= 0) contexts[id].add(bci);
  }
  return ctx;
}

/** PcDescs as NmethodInfo holds them (sorted by pc, frames flat), from records of (pc, flat frames). */
function pcDescArrays(list: AddedPcDesc[]): { pcs: Float64Array; frameStart: Uint32Array; frames: Int32Array } {
  const sorted = list.slice().sort((a, b) => a.pc - b.pc);
  const pcs = new Float64Array(sorted.length);
  const frameStart = new Uint32Array(sorted.length + 1);
  let nf = 0;
  for (const d of sorted) nf += d.frames.length;
  const frames = new Int32Array(nf);
  let k = 0;
  sorted.forEach((d, i) => {
    pcs[i] = d.pc;
    frameStart[i] = k / 2;
    frames.set(d.frames, k);
    k += d.frames.length;
  });
  frameStart[sorted.length] = k / 2;
  return { pcs, frameStart, frames };
}

/** A method's bytecode by method id, from the recorded classes (each parsed once, when first asked). */
function bytecodeOf(methods: Map<number, MethodInfo>, classes: Map<string, Uint8Array>): (method: number) => Uint8Array | undefined {
  const parsed = new Map<string, ClassFile | null>();
  return (id) => {
    const m = methods.get(id);
    if (!m) return undefined;
    const key = `${m.loader}:${m.className}`;
    let cf = parsed.get(key);
    if (cf === undefined) {
      const bytes = classes.get(key);
      try {
        cf = bytes ? parseClass(bytes) : null;
      } catch {
        cf = null; // (a class we cannot read: its switches stay as they were)
      }
      parsed.set(key, cf);
    }
    return cf?.method(m.name, m.signature)?.code ?? undefined;
  };
}

/**
 * Gives the arms of C2's jump tables PcDescs (jump-tables.ts), for nmethods whose constants section was recorded;
 * the switch's method is read from its class (parsed once per class).
 */
function addJumpTableArms(loads: { nm: NmethodInfo; code: Uint8Array; consts?: { begin: number; bytes: Uint8Array } }[], codeOf: (method: number) => Uint8Array | undefined): void {
  for (const l of loads) {
    if (!l.consts) continue;
    const nm = l.nm;
    const arms = jumpTableArms({ codeBegin: nm.codeBegin, stubBegin: nm.stubBegin, code: l.code, consts: l.consts, pcs: nm.pcs, frameStart: nm.frameStart, frames: nm.frames }, codeOf);
    if (!arms.length) continue;
    const all: AddedPcDesc[] = arms.slice();
    for (let k = 0; k < nm.pcs.length; k++) all.push({ pc: nm.pcs[k], frames: Array.from(nm.frames.subarray(nm.frameStart[k] * 2, nm.frameStart[k + 1] * 2)) });
    Object.assign(nm, pcDescArrays(all));
    nm.addImm = loopSteps(addImmediates(l.code, nm.codeBegin, nm.pcs), nm.frameStart, nm.frames);
    nm.jumpTableArms = arms.length;
  }
}

/**
 * For each PcDesc pc: the immediate of a 32-bit `add r32, imm8/imm32` instruction that ends exactly at the pc
 * (PcDescs of compiled code mark the address after their instruction), when it is at least 2; else 0. Undefined
 * when no PcDesc has one. The encodings: [REX.B 41] 83 /0 ib and [REX.B 41] 81 /0 id with a register operand.
 */
export function addImmediates(code: Uint8Array, begin: number, pcs: Float64Array): Int32Array | undefined {
  let out: Int32Array | undefined;
  const modrmAdd = (at: number) => at >= 0 && (code[at] & 0xf8) === 0xc0; // mod 11, reg /0 (add)
  const rexOk = (at: number) => at < 0 || code[at] === 0x41 || !isRexByte(code[at]);
  for (let i = 0; i < pcs.length; i++) {
    const end = pcs[i] - begin;
    let imm = 0;
    if (end >= 3 && end <= code.length && code[end - 3] === 0x83 && modrmAdd(end - 2) && rexOk(end - 4)) imm = (code[end - 1] << 24) >> 24;
    else if (end >= 6 && end <= code.length && code[end - 6] === 0x81 && modrmAdd(end - 5) && rexOk(end - 7))
      imm = code[end - 4] | (code[end - 3] << 8) | (code[end - 2] << 16) | (code[end - 1] << 24);
    if (imm >= 2) (out ??= new Int32Array(pcs.length))[i] = imm;
  }
  return out;
}

/**
 * Of the adds found at PcDescs (addImmediates), only the step of each unrolled loop: C2 also computes the
 * unrolled copies' `i + j` (j < k) with adds that carry the iinc's bci, and steps by the largest, k. Keeps, per
 * (method, bci) of the innermost frame, the PcDescs with the largest immediate.
 */
export function loopSteps(imm: Int32Array | undefined, frameStart: Uint32Array, frames: Int32Array): Int32Array | undefined {
  if (!imm) return undefined;
  const largest = new Map<string, number>();
  const keyOf = (i: number) => `${frames[frameStart[i] * 2]}:${frames[frameStart[i] * 2 + 1]}`;
  for (let i = 0; i < imm.length; i++) if (imm[i] && frameStart[i + 1] > frameStart[i]) largest.set(keyOf(i), Math.max(largest.get(keyOf(i)) ?? 0, imm[i]));
  for (let i = 0; i < imm.length; i++) if (imm[i] && (frameStart[i + 1] <= frameStart[i] || imm[i] < largest.get(keyOf(i))!)) imm[i] = 0;
  return imm;
}

/** A REX prefix byte (0x40-0x4f): one other than REX.B alone (0x41) makes the add 64-bit or names other registers. */
const isRexByte = (b: number) => b >= 0x40 && b <= 0x4f;
