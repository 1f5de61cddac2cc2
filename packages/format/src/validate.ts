/**
 * Checks a trace beyond framing: counts, completeness, and the facts a decoder relies on that need no JVM
 * to verify. Everything is returned as data; only an unreadable path (ENOENT, ...) throws. Corruption that
 * stops the reader ends up in `error` and `issues`, with the counts of everything read before it.
 */
import * as fs from 'fs';
import { TraceFormatError } from './errors';
import { MetaReader } from './reader';
import { Codelet, DispatchTable, FLAG_REPLAY, isRecord, MethodRec, NmethodLoad } from './records';
import { metaPath } from './trace';

export { metaPath };

export interface ValidationIssue {
  /** 'error': the trace is damaged or inconsistent; 'warning': suspicious but decodable. */
  severity: 'error' | 'warning';
  /** Reader codes ('record-crc', 'truncated', 'seq-gap', ...) or semantic ones ('codelet-overlap', ...). */
  code: string;
  /** Byte offset in meta.jpt of the record concerned. */
  offset: number;
  message: string;
}

export interface ValidationReport {
  file: string;
  records: number;
  bytes: number;
  countsByType: Record<string, number>;
  firstTsc?: bigint;
  lastTsc?: bigint;
  /** VM_END present, nothing truncated, no corruption: the run ended normally and the file is whole. */
  complete: boolean;
  hasVmEnd: boolean;
  truncated: boolean;
  /** Records lost according to DROPPED records (sum of `count`), and their bytes. */
  dropped: number;
  droppedBytes: number;
  /** Records missing according to seq gaps. */
  seqGaps: number;
  /** The corruption that stopped reading, if any. */
  error?: TraceFormatError;
  issues: ValidationIssue[];
  /** `issues` as one-line messages. */
  problems: string[];
}

const MAX_ISSUES = 1000;

export function validateTrace(dirOrFile: string): ValidationReport {
  const file = metaPath(dirOrFile);
  const report: ValidationReport = {
    file, records: 0, bytes: fs.statSync(file).size, countsByType: {}, complete: false, hasVmEnd: false, truncated: false,
    dropped: 0, droppedBytes: 0, seqGaps: 0, issues: [], problems: [],
  };
  const issue = (severity: ValidationIssue['severity'], code: string, offset: number, msg: string) => {
    if (report.issues.length >= MAX_ISSUES) return;
    const message = `${file}: record at byte ${offset}: ${msg}`;
    report.issues.push({ severity, code, offset, message });
  };
  const hex = (n: number) => `0x${n.toString(16)}`;

  const interp: { begin: number; end: number; offset: number }[] = [];
  const codelets: (Codelet & { offset: number })[] = [];
  const blobs: { begin: number; end: number }[] = [];
  const tables: { rec: DispatchTable; offset: number }[] = [];
  const methods = new Map<number, MethodRec>();
  const classIds = new Set<number>();
  const live = new Map<number, NmethodLoad>();
  let prevTsc = -1n;
  let vmEndOffset = -1;

  const reader = MetaReader.open(file, { throwOnCorruption: false });
  try {
    for (const r of reader.records()) {
      report.records++;
      report.countsByType[r.typeName] = (report.countsByType[r.typeName] ?? 0) + 1;
      report.firstTsc ??= r.tsc;
      report.lastTsc = r.tsc;
      if (r.tsc < prevTsc) issue('error', 'tsc-backwards', r.offset, `tsc goes backwards (${r.tsc} after ${prevTsc})`);
      prevTsc = r.tsc;
      if (r.flags & ~FLAG_REPLAY) issue('warning', 'unknown-flags', r.offset, `unknown flag bits 0x${r.flags.toString(16)}`);
      if (vmEndOffset >= 0 && report.records > 0) {
        issue('error', 'after-vm-end', r.offset, `${r.typeName} record after VM_END (byte ${vmEndOffset})`);
        vmEndOffset = -2; // report once
      }
      if (isRecord(r, 'INTERP_CODE')) {
        interp.push({ begin: r.payload.base, end: r.payload.base + r.payload.code.length, offset: r.offset });
      } else if (isRecord(r, 'CODELET')) {
        const p = r.payload;
        if (p.end <= p.begin) issue('error', 'codelet-empty', r.offset, `codelet "${p.description}" has an empty range [${hex(p.begin)}, ${hex(p.end)})`);
        codelets.push({ ...p, offset: r.offset });
      } else if (isRecord(r, 'DISPATCH_TABLE')) {
        const p = r.payload;
        if (p.entries.length !== p.states * p.per_state)
          issue('error', 'dispatch-size', r.offset, `dispatch table ${p.table} has ${p.entries.length} entries, states*per_state = ${p.states * p.per_state}`);
        tables.push({ rec: p, offset: r.offset });
      } else if (isRecord(r, 'METHOD')) {
        const p = r.payload;
        const prev = methods.get(p.method);
        if (prev && (prev.class_name !== p.class_name || prev.name !== p.name || prev.signature !== p.signature || prev.loader !== p.loader))
          issue('error', 'method-redefined', r.offset, `method id ${p.method} redefined (${prev.class_name}.${prev.name}${prev.signature} -> ${p.class_name}.${p.name}${p.signature})`);
        methods.set(p.method, p);
      } else if (isRecord(r, 'CODE_BLOB')) {
        blobs.push({ begin: r.payload.address, end: r.payload.address + r.payload.size });
      } else if (isRecord(r, 'NMETHOD_LOAD')) {
        const p = r.payload;
        const end = p.code_begin + p.code_size;
        if (!methods.has(p.method)) issue('error', 'undefined-method', r.offset, `nmethod at ${hex(p.code_begin)} refers to method ${p.method} before its METHOD record`);
        if (p.code.length !== p.code_size) issue('error', 'nmethod-code-size', r.offset, `nmethod code has ${p.code.length} bytes, code_size says ${p.code_size}`);
        let badPcs = 0;
        const undefinedFrames = new Set<number>();
        for (const pc of p.pcs) {
          if (pc.pc < p.code_begin || pc.pc >= end) {
            if (badPcs++ === 0) issue('error', 'pc-outside-nmethod', r.offset, `pc ${hex(pc.pc)} outside its nmethod [${hex(p.code_begin)}, ${hex(end)})`);
          }
          for (const f of pc.frames) if (!methods.has(f.method)) undefinedFrames.add(f.method);
        }
        if (badPcs > 1) issue('error', 'pc-outside-nmethod', r.offset, `${badPcs - 1} more pcs outside the nmethod at ${hex(p.code_begin)}`);
        if (undefinedFrames.size)
          issue('error', 'undefined-method', r.offset, `inlining frames refer to methods without an earlier METHOD record: ${[...undefinedFrames].slice(0, 10).join(', ')}`);
        if (live.has(p.code_begin)) issue('warning', 'nmethod-reloaded', r.offset, `nmethod at ${hex(p.code_begin)} loaded again without an NMETHOD_UNLOAD`);
        live.set(p.code_begin, p);
      } else if (isRecord(r, 'NMETHOD_UNLOAD')) {
        if (!live.delete(r.payload.code_begin)) issue('warning', 'unload-unknown', r.offset, `unload of unknown nmethod ${hex(r.payload.code_begin)}`);
      } else if (isRecord(r, 'CODE_PATCH')) {
        const p = r.payload;
        const nm = live.get(p.code_begin);
        const blob = nm ? undefined : blobs.find((b) => b.begin === p.code_begin);
        if (blob) {
          // a watched buffer blob (signature handlers, inline-cache stubs)
          if (p.address < blob.begin || p.address + p.bytes.length > blob.end)
            issue('error', 'patch-outside-nmethod', r.offset, `patch [${hex(p.address)}, ${hex(p.address + p.bytes.length)}) outside its code blob [${hex(blob.begin)}, ${hex(blob.end)})`);
        } else if (!nm) issue('error', 'patch-unknown-nmethod', r.offset, `patch of unknown nmethod or code blob ${hex(p.code_begin)}`);
        else if (p.address < nm.code_begin || p.address + p.bytes.length > nm.code_begin + nm.code_size)
          issue('error', 'patch-outside-nmethod', r.offset, `patch [${hex(p.address)}, ${hex(p.address + p.bytes.length)}) outside its nmethod [${hex(nm.code_begin)}, ${hex(nm.code_begin + nm.code_size)})`);
      } else if (isRecord(r, 'CLASS')) {
        classIds.add(r.payload.class_id);
      } else if (isRecord(r, 'METHOD_RUNS')) {
        const unknown = r.payload.classes.filter((c) => !classIds.has(c.class_id)).map((c) => c.class_id);
        if (unknown.length)
          issue('error', 'undefined-class', r.offset, `METHOD_RUNS names class ids without an earlier CLASS record: ${unknown.slice(0, 10).join(', ')}`);
      } else if (isRecord(r, 'CODE_SNAPSHOT')) {
        const nm = live.get(r.payload.code_begin);
        if (!nm) issue('warning', 'snapshot-unknown-nmethod', r.offset, `snapshot of unknown nmethod ${hex(r.payload.code_begin)}`);
        else if (r.payload.code.length !== nm.code_size)
          issue('error', 'snapshot-size', r.offset, `snapshot has ${r.payload.code.length} bytes, the nmethod ${nm.code_size}`);
      } else if (isRecord(r, 'DROPPED')) {
        report.dropped += r.payload.count;
        report.droppedBytes += r.payload.bytes;
      } else if (isRecord(r, 'VM_END')) {
        report.hasVmEnd = true;
        if (vmEndOffset === -1) vmEndOffset = r.offset;
      }
    }
  } catch (e) {
    // header damage (the reader has nothing before it to give)
    if (!(e instanceof TraceFormatError)) throw e;
    report.error = e;
  }
  if (reader.error) report.error = reader.error;
  for (const pr of reader.problems) {
    if (pr.code === 'seq-gap') {
      report.seqGaps += pr.missing ?? 0;
      report.issues.push({ severity: 'error', code: 'seq-gap', offset: pr.offset, message: pr.message });
    } else {
      report.truncated = true;
      report.issues.push({ severity: 'error', code: 'truncated', offset: pr.offset, message: pr.message });
    }
  }
  if (report.error) report.issues.push({ severity: 'error', code: report.error.code, offset: report.error.offset, message: report.error.message });

  // codelets: inside the interpreter's code, pairwise disjoint
  if (codelets.length && !interp.length) issue('error', 'codelet-no-interp', codelets[0].offset, `${codelets.length} codelets but no INTERP_CODE record`);
  else
    for (const c of codelets)
      if (!interp.some((i) => c.begin >= i.begin && c.end <= i.end))
        issue('error', 'codelet-outside-interp', c.offset, `codelet "${c.description}" [${hex(c.begin)}, ${hex(c.end)}) lies outside the interpreter code`);
  const sorted = [...codelets].sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i].begin < sorted[i - 1].end)
      issue('error', 'codelet-overlap', sorted[i].offset, `codelets "${sorted[i - 1].description}" [${hex(sorted[i - 1].begin)}, ${hex(sorted[i - 1].end)}) and "${sorted[i].description}" [${hex(sorted[i].begin)}, ${hex(sorted[i].end)}) overlap`);
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
  // method-handle intrinsics' adapters). A 0 entry is an unused slot.
  const inBlob = (a: number) => blobs.some((b) => a >= b.begin && a < b.end);
  for (const t of tables) {
    let outside = 0;
    let first = 0;
    for (const e of t.rec.entries)
      if (e.target !== 0 && !inCodelet(e.target) && !(t.rec.table === 3 && inBlob(e.target))) if (outside++ === 0) first = e.target;
    if (outside)
      issue('error', 'dispatch-outside-codelets', t.offset, `dispatch table ${t.rec.table}: ${outside} entries point outside every codelet${t.rec.table === 3 ? ' and code blob' : ''} (first ${hex(first)})`);
  }
  report.complete = report.hasVmEnd && !report.truncated && !report.error;
  report.problems = report.issues.map((i) => i.message);
  return report;
}
