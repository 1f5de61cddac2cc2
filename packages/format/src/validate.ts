/**
 * Checks a trace file beyond framing: the facts a decoder will rely on that need no JVM to verify.
 * Problems are returned as data; only unreadable files throw (the reader's TraceFormatError).
 */
import * as fs from 'fs';
import * as path from 'path';
import { MetaReader } from './reader';
import { Codelet, DispatchTable, NmethodLoad } from './records';

export interface ValidationReport {
  file: string;
  records: number;
  bytes: number;
  countsByType: Record<string, number>;
  firstTsc?: bigint;
  lastTsc?: bigint;
  complete: boolean;
  dropped: number;
  seqGaps: number;
  /** Framing problems (truncation, gaps) and semantic inconsistencies, one line each. */
  problems: string[];
}

export function metaPath(dirOrFile: string): string {
  return fs.statSync(dirOrFile).isDirectory() ? path.join(dirOrFile, 'meta.jpt') : dirOrFile;
}

export function validateTrace(dirOrFile: string): ValidationReport {
  const file = metaPath(dirOrFile);
  const reader = MetaReader.open(file);
  const report: ValidationReport = { file, records: 0, bytes: fs.statSync(file).size, countsByType: {}, complete: false, dropped: 0, seqGaps: 0, problems: [] };
  const codelets: Codelet[] = [];
  const blobs: { begin: number; end: number }[] = [];
  const tables: { rec: DispatchTable; offset: number }[] = [];
  let interp: { base: number; end: number } | undefined;
  const methods = new Set<number>();
  const live = new Map<number, NmethodLoad>();
  const problem = (offset: number, msg: string) => {
    if (report.problems.length < 1000) report.problems.push(`${file}: byte ${offset}: ${msg}`);
  };
  let prevTsc = -1n;
  for (const r of reader.records()) {
    report.records++;
    report.countsByType[r.typeName] = (report.countsByType[r.typeName] ?? 0) + 1;
    report.firstTsc ??= r.tsc;
    report.lastTsc = r.tsc;
    if (r.tsc < prevTsc) problem(r.offset, `tsc goes backwards (${r.tsc} after ${prevTsc})`);
    prevTsc = r.tsc;
    const p = r.payload as any;
    switch (r.typeName) {
      case 'INTERP_CODE':
        interp = { base: p.base, end: p.base + p.code.length };
        break;
      case 'CODELET':
        if (p.end <= p.begin) problem(r.offset, `codelet "${p.description}" has an empty range`);
        if (interp && (p.begin < interp.base || p.end > interp.end)) problem(r.offset, `codelet "${p.description}" lies outside the interpreter code`);
        codelets.push(p);
        break;
      case 'DISPATCH_TABLE':
        tables.push({ rec: p, offset: r.offset });
        break;
      case 'METHOD':
        methods.add(p.method);
        break;
      case 'CODE_BLOB':
        blobs.push({ begin: p.address, end: p.address + p.size });
        break;
      case 'NMETHOD_LOAD': {
        if (!methods.has(p.method)) problem(r.offset, `nmethod refers to method ${p.method} before its METHOD record`);
        if (p.code.length !== p.code_size) problem(r.offset, `nmethod code has ${p.code.length} bytes, code_size says ${p.code_size}`);
        for (const pc of p.pcs) {
          if (pc.pc < p.code_begin || pc.pc >= p.code_begin + p.code_size) problem(r.offset, `pc 0x${pc.pc.toString(16)} outside its nmethod [0x${p.code_begin.toString(16)}, +${p.code_size})`);
          for (const f of pc.frames) if (!methods.has(f.method)) problem(r.offset, `inlining frame refers to undefined method ${f.method}`);
        }
        live.set(p.code_begin, p);
        break;
      }
      case 'NMETHOD_UNLOAD':
        live.delete(p.code_begin);
        break;
      case 'CODE_PATCH': {
        const nm = live.get(p.code_begin);
        if (!nm) problem(r.offset, `patch of unknown nmethod 0x${p.code_begin.toString(16)}`);
        else if (p.address < nm.code_begin || p.address + p.bytes.length > nm.code_begin + nm.code_size)
          problem(r.offset, `patch [0x${p.address.toString(16)}, +${p.bytes.length}) outside its nmethod`);
        break;
      }
      case 'DROPPED':
        report.dropped += p.count;
        break;
      case 'VM_END':
        report.complete = true;
        break;
    }
  }
  for (const pr of reader.problems) {
    report.problems.push(pr.message);
    if (pr.code === 'seq-gap') report.seqGaps += pr.missing ?? 0;
  }
  // codelets: sorted, non-overlapping
  const sorted = [...codelets].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i].begin < sorted[i - 1].end) problem(0, `codelets "${sorted[i - 1].description}" and "${sorted[i].description}" overlap`);
  const inCodelet = (a: number) => {
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (a < sorted[mid].begin) hi = mid - 1;
      else if (a >= sorted[mid].end) lo = mid + 1;
      else return true;
    }
    return false;
  };
  // bytecode dispatch lands in codelets; method entries may also land in other recorded code (the
  // method-handle intrinsics' adapters)
  const inBlob = (a: number) => blobs.some((b) => a >= b.begin && a < b.end);
  for (const t of tables) {
    let outside = 0;
    for (const e of t.rec.entries) if (e.target !== 0 && !inCodelet(e.target) && !(t.rec.table === 3 && inBlob(e.target))) outside++;
    if (outside) problem(t.offset, `dispatch table ${t.rec.table}: ${outside} entries point outside every codelet${t.rec.table === 3 ? ' and code blob' : ''}`);
  }
  return report;
}
