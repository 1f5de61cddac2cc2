/**
 * Everything `inspect` shows, built in one pass over a trace directory's metadata stream.
 * The only module of the CLI that walks records; commands format what it collects.
 */
import * as fs from 'fs';
import * as path from 'path';
import { openMeta, readPt, TraceRecord } from './format-adapter';
import type { PtSideband } from '@jportal/format';

export interface MethodInfo {
  id: number;
  className: string;
  name: string;
  signature: string;
}

export interface NmethodInfo {
  method: number;
  codeBegin: number;
  codeSize: number;
  level: number;
  osrBci: number;
  compileId: number;
  pcs: number;
  inlinedMethods: Set<number>;
  loadTsc: bigint;
  unloadTsc?: bigint;
  patches: number;
}

export interface PatchInfo {
  codeBegin: number;
  address: number;
  length: number;
  tsc: bigint;
}

export interface CodeletInfo {
  begin: number;
  end: number;
  bytecode: number;
  kind: number;
  description: string;
}

export interface ThreadInfo {
  osTid: number;
  javaTid: number;
  name: string;
  daemon: boolean;
  ended: boolean;
}

export interface TraceModel {
  dir: string;
  metaFile: string;
  fileBytes: number;
  records: number;
  countsByType: Map<string, number>;
  vm?: { javaVersion: string; vmVersion: string; vendor: string; vmName: string; flags: Map<string, string> };
  codelets: CodeletInfo[];
  dispatchTables: { table: number; source: number; entries: number }[];
  blobs: number;
  methods: Map<number, MethodInfo>;
  nmethods: NmethodInfo[];
  patches: PatchInfo[];
  unloads: number;
  classes: { total: number; reconstructed: number; redefined: number; fromImage: number; fromClassPath: number; bytes: number };
  /** By Java thread id (an OS tid can be reused, e.g. main -> DestroyJavaVM). */
  threads: Map<number, ThreadInfo>;
  logs: { level: number; component: string; message: string }[];
  end?: { stalls: number; stallNs: number; dropped: number; droppedBytes: number; errors: number };
  droppedRecords: number;
  gaps: number;
  problems: string[];
  complete: boolean;
  firstTsc?: bigint;
  lastTsc?: bigint;
  calibrations: { tsc: bigint; monoNs: number }[];
  /** PT streams and sideband, when the run was traced (pt/ in the directory). */
  pt?: PtSideband;
}

export function methodName(m: MethodInfo | undefined): string {
  if (!m) return '?';
  return `${m.className.replace(/\//g, '.')}.${m.name}${m.signature}`;
}

/** Reads DIR/meta.jpt (or a meta file given directly). Throws the format's typed errors on corruption. */
export function loadTraceModel(dirOrFile: string): TraceModel {
  const metaFile = fs.statSync(dirOrFile).isDirectory() ? path.join(dirOrFile, 'meta.jpt') : dirOrFile;
  const model: TraceModel = {
    dir: path.dirname(metaFile),
    metaFile,
    fileBytes: fs.statSync(metaFile).size,
    records: 0,
    countsByType: new Map(),
    codelets: [],
    dispatchTables: [],
    blobs: 0,
    methods: new Map(),
    nmethods: [],
    patches: [],
    unloads: 0,
    classes: { total: 0, reconstructed: 0, redefined: 0, fromImage: 0, fromClassPath: 0, bytes: 0 },
    threads: new Map(),
    logs: [],
    droppedRecords: 0,
    gaps: 0,
    problems: [],
    complete: false,
    calibrations: [],
  };
  const live = new Map<number, NmethodInfo>();
  const meta = openMeta(metaFile);
  for (const r of meta.records()) visit(model, live, r);
  model.pt = readPt(model.dir);
  for (const p of meta.problems()) {
    model.problems.push(p.message);
    if (p.code === 'seq-gap') model.gaps += p.missing ?? 1;
  }
  return model;
}

function visit(model: TraceModel, live: Map<number, NmethodInfo>, r: TraceRecord): void {
  model.records++;
  model.countsByType.set(r.typeName, (model.countsByType.get(r.typeName) ?? 0) + 1);
  if (model.firstTsc === undefined) model.firstTsc = r.tsc;
  model.lastTsc = r.tsc;
  const p = r.payload as Record<string, any>;
  switch (r.typeName) {
    case 'CALIBRATION':
      model.calibrations.push({ tsc: r.tsc, monoNs: Number(p.mono_ns) });
      break;
    case 'VM_INFO':
      model.vm = {
        javaVersion: p.java_version,
        vmVersion: p.vm_version,
        vendor: p.vm_vendor,
        vmName: p.vm_name,
        flags: new Map((p.flags as { name: string; value: string }[]).map((f) => [f.name, f.value])),
      };
      break;
    case 'CODELET':
      model.codelets.push({ begin: p.begin, end: p.end, bytecode: p.bytecode, kind: p.kind, description: p.description });
      break;
    case 'DISPATCH_TABLE':
      model.dispatchTables.push({ table: p.table, source: p.source, entries: p.entries.length });
      break;
    case 'CODE_BLOB':
      model.blobs++;
      break;
    case 'METHOD':
      model.methods.set(p.method, { id: p.method, className: p.class_name, name: p.name, signature: p.signature });
      break;
    case 'NMETHOD_LOAD': {
      const inlined = new Set<number>();
      for (const pc of p.pcs as { frames: { method: number }[] }[])
        for (let i = 0; i < pc.frames.length - 1; i++) inlined.add(pc.frames[i].method);
      const nm: NmethodInfo = {
        method: p.method,
        codeBegin: p.code_begin,
        codeSize: p.code_size,
        level: p.level,
        osrBci: p.osr_bci,
        compileId: p.compile_id,
        pcs: p.pcs.length,
        inlinedMethods: inlined,
        loadTsc: r.tsc,
        patches: 0,
      };
      model.nmethods.push(nm);
      live.set(nm.codeBegin, nm);
      break;
    }
    case 'NMETHOD_UNLOAD': {
      model.unloads++;
      const nm = live.get(p.code_begin);
      if (nm) {
        nm.unloadTsc = p.last_seen ? (p.last_seen as bigint) : r.tsc;
        live.delete(p.code_begin);
      }
      break;
    }
    case 'CODE_PATCH': {
      model.patches.push({ codeBegin: p.code_begin, address: p.address, length: p.bytes.length, tsc: r.tsc });
      const nm = live.get(p.code_begin);
      if (nm) nm.patches++;
      break;
    }
    case 'CLASS':
      model.classes.total++;
      if (p.source === 1) model.classes.reconstructed++;
      if (p.source === 2) model.classes.redefined++;
      if (p.source === 3) model.classes.fromImage++;
      if (p.source === 4) model.classes.fromClassPath++;
      model.classes.bytes += p.bytes.length;
      break;
    case 'THREAD_START':
      model.threads.set(p.java_tid, { osTid: p.os_tid, javaTid: p.java_tid, name: p.name, daemon: p.daemon !== 0, ended: false });
      break;
    case 'THREAD_END': {
      const t = model.threads.get(p.java_tid);
      if (t) t.ended = true;
      break;
    }
    case 'AGENT_LOG':
      model.logs.push({ level: p.level, component: p.component, message: p.message });
      break;
    case 'DROPPED':
      model.droppedRecords += p.count;
      break;
    case 'VM_END':
      model.complete = true;
      model.end = { stalls: p.stalls, stallNs: p.stall_ns, dropped: p.dropped, droppedBytes: p.dropped_bytes, errors: p.errors };
      break;
  }
}

/** TSC ticks per nanosecond from the first and last CALIBRATION records, if there are two. */
export function tscPerNs(model: TraceModel): number | undefined {
  const c = model.calibrations;
  if (c.length < 2) return undefined;
  const a = c[0];
  const b = c[c.length - 1];
  const dns = b.monoNs - a.monoNs;
  if (dns <= 0) return undefined;
  return Number(b.tsc - a.tsc) / dns;
}
