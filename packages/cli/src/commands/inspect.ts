import { CodeletInfo, loadTraceModel, methodName, NmethodInfo, TraceModel, tscPerNs } from '../trace-model';

export const CODELET_KINDS = ['other', 'bytecode', 'method-entry', 'return-entry', 'exception', 'deopt', 'native-support', 'error-exit'];
const TABLE_NAMES = ['active', 'normal', 'safepoint', 'method-entry'];

export interface InspectOptions {
  dir: string;
  codelets?: boolean;
  method?: string;
  patches?: boolean;
  json?: boolean;
}

export interface InspectSummary {
  dir: string;
  complete: boolean;
  fileBytes: number;
  records: number;
  jdk?: { javaVersion: string; vmVersion: string; vendor: string; vmName: string };
  durationMs?: number;
  codelets: number;
  codeletsByKind: Record<string, number>;
  dispatchTables: string[];
  blobs: number;
  nmethods: number;
  nmethodsByTier: Record<string, number>;
  osr: number;
  patches: number;
  patchedNmethods: number;
  unloads: number;
  classes: number;
  reconstructedClasses: number;
  /** classes named only, their bytes in the JDK's runtime image */
  imageClasses: number;
  /** app-loader classes named only, their bytes on the recorded class path */
  classPathClasses: number;
  redefinedClasses: number;
  classBytes: number;
  threads: number;
  stalls: number;
  dropped: number;
  gaps: number;
  warnings: number;
  problems: string[];
  countsByType: Record<string, number>;
  pt?: {
    source: string;
    bytes: number;
    lossModel?: { buffer: number; rate: number; seed: number };
    lostInsns: number;
    tracedInsns: number;
    cpus: { cpu: number; bytes: number; segments: number; threads: number }[];
    threads: { tid: number; comm: string; bytes: number; insns?: number; faults?: number; lostInsns?: number; packets: Record<string, number> }[];
  };
}

export function summarize(m: TraceModel): InspectSummary {
  const byKind: Record<string, number> = {};
  for (const c of m.codelets) {
    const k = CODELET_KINDS[c.kind] ?? `kind${c.kind}`;
    byKind[k] = (byKind[k] ?? 0) + 1;
  }
  const byTier: Record<string, number> = {};
  for (const n of m.nmethods) {
    const k = n.level === 0 ? 'native' : n.level < 0 ? 'unknown' : `tier${n.level}`;
    byTier[k] = (byTier[k] ?? 0) + 1;
  }
  const rate = tscPerNs(m);
  const durationMs =
    rate && m.firstTsc !== undefined && m.lastTsc !== undefined ? Number(m.lastTsc - m.firstTsc) / rate / 1e6 : undefined;
  return {
    dir: m.dir,
    complete: m.complete,
    fileBytes: m.fileBytes,
    records: m.records,
    jdk: m.vm && { javaVersion: m.vm.javaVersion, vmVersion: m.vm.vmVersion, vendor: m.vm.vendor, vmName: m.vm.vmName },
    durationMs,
    codelets: m.codelets.length,
    codeletsByKind: byKind,
    dispatchTables: m.dispatchTables.map((t) => `${TABLE_NAMES[t.table] ?? t.table}${t.source === 1 ? '(parsed)' : ''}`),
    blobs: m.blobs,
    nmethods: m.nmethods.length,
    nmethodsByTier: byTier,
    osr: m.nmethods.filter((n) => n.osrBci >= 0).length,
    patches: m.patches.length,
    patchedNmethods: new Set(m.patches.map((p) => p.codeBegin)).size,
    unloads: m.unloads,
    classes: m.classes.total,
    reconstructedClasses: m.classes.reconstructed,
    redefinedClasses: m.classes.redefined,
    imageClasses: m.classes.fromImage,
    classPathClasses: m.classes.fromClassPath,
    classBytes: m.classes.bytes,
    threads: m.threads.size,
    stalls: m.end?.stalls ?? 0,
    dropped: m.droppedRecords,
    gaps: m.gaps,
    warnings: m.logs.filter((l) => l.level >= 1).length,
    problems: m.problems,
    countsByType: Object.fromEntries(m.countsByType),
    pt: m.pt && {
      source: m.pt.source,
      bytes: m.pt.threads.reduce((s, t) => s + t.bytes, 0),
      lossModel: m.pt.lossModel,
      lostInsns: m.pt.threads.reduce((s, t) => s + (t.lostInsns ?? 0), 0),
      tracedInsns: m.pt.threads.reduce((s, t) => s + (t.insns ?? 0), 0),
      cpus: m.pt.cpus.map((c) => ({ cpu: c.cpu, bytes: c.bytes, segments: c.segments, threads: c.threads })),
      // name each stream by the Java thread the agent saw on that OS tid, else by the OS thread name
      threads: m.pt.threads.map((t) => ({
        tid: t.tid,
        comm: [...m.threads.values()].find((j) => j.osTid === t.tid)?.name ?? t.comm,
        bytes: t.bytes,
        insns: t.insns,
        faults: t.faults,
        lostInsns: t.lostInsns,
        packets: t.packets,
      })),
    },
  };
}

const hex = (n: number) => '0x' + n.toString(16);
const kv = (o: Record<string, number>) =>
  Object.entries(o)
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatSummary(s: InspectSummary, m: TraceModel): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(12)} ${v}`);
  row('trace', `${s.dir} (${formatBytes(s.fileBytes)}, ${s.records} records, ${s.complete ? 'complete' : 'INCOMPLETE: no VM_END record'})`);
  if (s.jdk) row('jdk', `${s.jdk.javaVersion} (${s.jdk.vmName} ${s.jdk.vmVersion}, ${s.jdk.vendor})`);
  if (s.durationMs !== undefined) row('duration', `${(s.durationMs / 1000).toFixed(3)} s (TSC, calibrated)`);
  row('codelets', `${s.codelets} (${kv(s.codeletsByKind)})`);
  row('dispatch', s.dispatchTables.length ? s.dispatchTables.join(', ') : 'none');
  row('code blobs', `${s.blobs}`);
  row('nmethods', `${s.nmethods} (${kv(s.nmethodsByTier) || 'none'}), OSR ${s.osr}, unloaded ${s.unloads}`);
  row('patches', `${s.patches} in ${s.patchedNmethods} nmethods`);
  row(
    'classes',
    `${s.classes} (${formatBytes(s.classBytes)}; ${s.reconstructedClasses} reconstructed, ${s.redefinedClasses} redefined, ${s.imageClasses} from the runtime image, ${s.classPathClasses} from the class path)`,
  );
  const names = [...m.threads.values()].map((t) => t.name);
  row('threads', `${s.threads}${names.length ? ': ' + names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '') : ''}`);
  row('transport', `stalls ${s.stalls}, dropped ${s.dropped} records, seq gaps ${s.gaps}`);
  if (s.pt) {
    if (s.pt.cpus.length) {
      row('pt', `${formatBytes(s.pt.cpus.reduce((a, c) => a + c.bytes, 0))} in ${s.pt.cpus.length} CPU streams, ${s.pt.threads.length} threads (${s.pt.source}, per-CPU)`);
      for (const c of s.pt.cpus) lines.push(`${''.padEnd(12)}   cpu ${c.cpu}: ${formatBytes(c.bytes)}, ${c.segments} stretches of ${c.threads} threads`);
    } else row('pt', `${formatBytes(s.pt.bytes)} in ${s.pt.threads.length} thread streams (${s.pt.source})`);
    if (s.pt.lossModel || s.pt.lostInsns)
      row(
        'pt loss',
        `${((100 * s.pt.lostInsns) / Math.max(1, s.pt.tracedInsns)).toFixed(2)}% of traced instructions lost` +
          (s.pt.lossModel ? ` (model: ${s.pt.lossModel.buffer} B buffer drained at ${s.pt.lossModel.rate} B/s, seed ${s.pt.lossModel.seed})` : ''),
      );
    for (const t of [...s.pt.threads].sort((a, b) => b.bytes - a.bytes).slice(0, 8)) {
      const pk = Object.entries(t.packets).map(([k, v]) => `${k} ${v}`).join(', ');
      const ins = t.insns !== undefined ? `, ${t.insns} insns (${(t.bytes / Math.max(1, t.insns)).toFixed(3)} B/insn)` : '';
      lines.push(`${''.padEnd(12)}   tid ${t.tid} ${t.comm}: ${formatBytes(t.bytes)}${ins}${pk ? '; ' + pk : ''}${t.faults ? `; ${t.faults} faults` : ''}${t.lostInsns ? `; ${t.lostInsns} insns lost` : ''}`);
    }
  } else {
    row('pt', 'none (metadata only)');
  }
  if (s.warnings) row('agent log', `${s.warnings} warnings/errors (degraded record kinds): ${m.logs.filter((l) => l.level >= 1).map((l) => `${l.component}: ${l.message}`).slice(0, 3).join('; ')}`);
  for (const p of s.problems) row('problem', p);
  return lines.join('\n');
}

export function formatCodelets(codelets: CodeletInfo[]): string {
  return codelets
    .map(
      (c) =>
        `${hex(c.begin)} ${hex(c.end)} ${String(c.end - c.begin).padStart(6)} ${(CODELET_KINDS[c.kind] ?? String(c.kind)).padEnd(14)} ${String(c.bytecode).padStart(4)}  ${c.description}`,
    )
    .join('\n');
}

function describeNmethod(m: TraceModel, n: NmethodInfo): string {
  const tier = n.level === 0 ? 'native' : `tier ${n.level}`;
  const osr = n.osrBci >= 0 ? ` OSR@${n.osrBci}` : '';
  const life = n.unloadTsc !== undefined ? ` unloaded at tsc ${n.unloadTsc}` : '';
  const inl = [...n.inlinedMethods].map((id) => methodName(m.methods.get(id)));
  return (
    `  compile ${n.compileId} ${tier}${osr} [${hex(n.codeBegin)}, ${hex(n.codeBegin + n.codeSize)}) ${n.pcs} pcs, ${n.patches} patches, loaded at tsc ${n.loadTsc}${life}` +
    (inl.length ? `\n    inlines: ${inl.join(', ')}` : '')
  );
}

export function formatMethod(m: TraceModel, query: string): { text: string; matched: number } {
  const matches = [...m.methods.values()].filter((x) => methodName(x).includes(query) || `${x.className}.${x.name}`.includes(query));
  const out: string[] = [];
  for (const meth of matches) {
    const compiles = m.nmethods.filter((n) => n.method === meth.id);
    const inlinedInto = m.nmethods.filter((n) => n.inlinedMethods.has(meth.id)).length;
    out.push(`${methodName(meth)}: ${compiles.length} compiles, inlined into ${inlinedInto} nmethods`);
    for (const n of compiles) out.push(describeNmethod(m, n));
  }
  return { text: out.join('\n'), matched: matches.length };
}

export function formatPatches(m: TraceModel): string {
  const owner = new Map<number, NmethodInfo>();
  for (const n of m.nmethods) owner.set(n.codeBegin, n);
  return m.patches
    .map((p) => {
      const n = owner.get(p.codeBegin);
      return `tsc ${p.tsc} ${hex(p.address)} +${p.address - p.codeBegin} ${p.length} bytes  ${n ? methodName(m.methods.get(n.method)) : '?'}`;
    })
    .join('\n');
}

export function runInspect(opts: InspectOptions): number {
  const model = loadTraceModel(opts.dir);
  const summary = summarize(model);
  if (opts.json) {
    const extra: Record<string, unknown> = {};
    if (opts.codelets) extra.codeletList = model.codelets;
    if (opts.method) extra.methodQuery = formatMethod(model, opts.method).matched;
    process.stdout.write(JSON.stringify({ ...summary, ...extra }, null, 2) + '\n');
    return 0;
  }
  const parts = [formatSummary(summary, model)];
  if (opts.codelets) parts.push('\ncodelets:\n' + formatCodelets(model.codelets));
  if (opts.method) {
    const r = formatMethod(model, opts.method);
    parts.push(r.matched ? '\n' + r.text : `\nno method matches "${opts.method}"`);
  }
  if (opts.patches) parts.push('\npatches:\n' + formatPatches(model));
  process.stdout.write(parts.join('\n') + '\n');
  return 0;
}
