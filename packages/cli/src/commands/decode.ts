/**
 * `jportal decode DIR`: PT + metadata -> per-thread Java event streams in DIR/decoded/<tid>.jpe
 * (docs/decoded-format.md), a summary, and with --dump every event in readable form on stdout.
 */
import * as fs from 'fs';
import * as path from 'path';
import { AttributionStats, JvmModel, TimeSpan, decodeTrace, decodeTraceParallel, DecodeError, DecodedThread, EVENT_NAMES, EventSink, EventsFileWriter, GAP_REASONS, opcodeName, writeEvents } from '@jportal/decode';
import { CliError, ExitCode } from '../exit';
import { stderrLogger } from '../log';
import { spanJson } from '../time-span';

export interface DecodeCommandOptions {
  dir: string;
  dump?: boolean;
  tid?: number[];
  json?: boolean;
  noWrite?: boolean;
  /** list where the walks failed (gap sites), most frequent first */
  gaps?: boolean;
  /** worker threads (1: decode in this thread) */
  workers?: number;
  /** only this span of the run (seconds since the capture started) */
  span?: TimeSpan;
}

export interface ThreadSummary {
  tid: number;
  name: string;
  ptBytes: number;
  insns: number;
  expectedInsns?: number;
  events: number;
  bytecodes: number;
  interpreted: number;
  compiled: number;
  /** PcDescs of inlined callees taken back as code C2 placed among the caller's (hoisted), not calls */
  hoisted: number;
  gaps: number;
  gapReasons: Record<string, number>;
  skippedBytes: number;
  /** where the flow walk failed, most gaps first (at most 20): code and offset, reason, why */
  gapSites: { count: number; reason: string; where: string; why: string }[];
  decodeMs: number;
  /** the most Java events (before attribution) held at once: what decoding the thread needed in memory */
  peakJavaEvents: number;
  /** interpreted bytecodes attributed to methods and bcis */
  attribution?: AttributionStats;
  file?: string;
}

export async function runDecode(o: DecodeCommandOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  if (!fs.existsSync(o.dir) || !fs.statSync(o.dir).isDirectory()) throw new CliError(`decode: ${o.dir}: not a trace directory`, ExitCode.BadInput);
  const tty = process.stderr.isTTY && !process.env.CI && !o.json;
  if (!o.noWrite) removeStaleParts(path.join(o.dir, 'decoded'), log);
  let result;
  const t0 = Date.now();
  // each thread's events stream into its file as they are made (bounded memory: a thread of any length), unless
  // --dump needs them in memory; with --no-write they are only counted
  const summaries: ThreadSummary[] = [];
  const writers = new Map<number, { writer?: EventsFileWriter; synthetic: Set<number> }>();
  const streaming = !o.dump;
  const sinkFor = (tid: number, model: JvmModel): EventSink => {
    const w = { writer: o.noWrite ? undefined : new EventsFileWriter(path.join(o.dir, 'decoded', `${tid}.jpe`)), synthetic: new Set<number>() };
    writers.set(tid, w);
    const from = model.firstSyntheticMethod;
    return (e) => {
      w.writer?.sink(e);
      if (from !== undefined) for (let i = 0; i < e.length; i++) if (e.method[i] >= from) w.synthetic.add(e.method[i]);
    };
  };
  const take = (model: JvmModel, t: DecodedThread): void => {
    let file: string | undefined;
    const head = () => ({ tid: t.tid, name: t.name, javaTid: t.javaTid, stats: { flow: t.flow, java: t.java, attribution: t.attribution } });
    const w = writers.get(t.tid);
    if (w?.writer) {
      file = path.join(o.dir, 'decoded', `${t.tid}.jpe`);
      w.writer.close({ ...head(), methods: namesOf(model, w.synthetic) });
    } else if (!o.noWrite) {
      file = path.join(o.dir, 'decoded', `${t.tid}.jpe`);
      writeEvents(file, { ...head(), methods: syntheticMethods(model, t) }, t.events);
    }
    summaries.push(summarizeThread(model, t, file));
  };
  const common = { tids: o.tid, span: o.span, release: !o.dump, sinkFor: streaming ? sinkFor : undefined };
  try {
    if ((o.workers ?? 1) > 1) {
      if (tty) process.stderr.write(`jportal: decoding with ${o.workers} worker threads...`);
      result = await decodeTraceParallel(o.dir, { ...common, workers: o.workers, onThread: (t, _done, _total, model) => take(model, t) });
    } else {
      result = decodeTrace(o.dir, {
        ...common,
        onThread: (t, done, total, model) => {
          take(model, t);
          if (tty) process.stderr.write(`\rjportal: decoded ${done}/${total} threads (${t.name}: ${(t.flow.bytes / 1e6).toFixed(1)} MB of PT in ${t.decodeMs} ms)\x1b[K`);
        },
      });
    }
  } catch (e) {
    // (the threads written before stay; the one that failed leaves no partial file)
    for (const w of writers.values()) w.writer?.abort();
    if (e instanceof DecodeError) throw new CliError(`decode: ${e.message}`, e.exitCode as ExitCode);
    throw e;
  }
  const wallMs = Date.now() - t0;
  if (tty) process.stderr.write('\n');
  const { model, threads } = result;
  if (o.dump) dump(threads, model.methods);
  const total = summaries.reduce((a, s) => ({ bytes: a.bytes + s.ptBytes, ms: a.ms + s.decodeMs, gaps: a.gaps + s.gaps }), { bytes: 0, ms: 0, gaps: 0 });
  if (o.json) {
    process.stdout.write(JSON.stringify({ dir: o.dir, ...(o.span ? { span: spanJson(o.span) } : {}), threads: summaries, ptBytes: total.bytes, decodeMs: total.ms, wallMs, workers: o.workers ?? 1, imageTimeFallbacks: model.image.timeFallbacks, problems: model.problems }, null, 2) + '\n');
  } else {
    for (const s of summaries) {
      const gaps = s.gaps ? ` gaps ${s.gaps} (${Object.entries(s.gapReasons).map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
      const a = s.attribution;
      const attributed = a && a.interpreted ? `; method known for ${((100 * a.withMethod) / a.interpreted).toFixed(1)}% of interpreted bytecodes, bci for ${((100 * a.withBci) / a.interpreted).toFixed(1)}%` : '';
      log.info(`${s.tid} ${s.name}: ${s.bytecodes} bytecodes (${s.interpreted} interpreted, ${s.compiled} compiled), ${s.insns} instructions from ${s.ptBytes} bytes of PT${gaps}${attributed}`);
      if (o.gaps) for (const g of s.gapSites) log.info(`  ${String(g.count).padStart(8)}  ${g.reason.padEnd(10)} ${g.where}: ${g.why}`);
    }
    log.info(`decoded ${threads.length} threads, ${(total.bytes / 1e6).toFixed(1)} MB of PT in ${wallMs} ms (${(total.bytes / 1e3 / Math.max(1, wallMs)).toFixed(1)} MB/s, ${o.workers ?? 1} worker${(o.workers ?? 1) > 1 ? 's' : ''})${o.noWrite ? '' : `; events in ${path.join(o.dir, 'decoded')}/`}`);
  }
  return ExitCode.Ok;
}

/** Names of the method ids given (those the attribution added, not in meta.jpt). */
function namesOf(model: JvmModel, ids: Set<number>): Record<string, [string, string, string]> | undefined {
  if (model.firstSyntheticMethod === undefined) return undefined;
  const out: Record<string, [string, string, string]> = {};
  for (const id of [...ids].sort((a, b) => a - b)) {
    const info = model.methods.get(id);
    if (info) out[id] = [info.className, info.name, info.signature];
  }
  return out;
}

/** Names of the methods the attribution added (not in meta.jpt) that this thread's events use. */
function syntheticMethods(model: JvmModel, t: DecodedThread): Record<string, [string, string, string]> | undefined {
  const from = model.firstSyntheticMethod;
  const ids = new Set<number>();
  if (from !== undefined) for (let i = 0; i < t.events.length; i++) if (t.events.method[i] >= from) ids.add(t.events.method[i]);
  return namesOf(model, ids);
}

/** A thread's gap sites named by the code at their IP (section and offset), most gaps first. */
function gapSitesOf(model: JvmModel, t: DecodedThread, top: number): ThreadSummary['gapSites'] {
  const image = model.image;
  return [...t.flow.gapSites]
    .sort((a, b) => b.count - a.count)
    .slice(0, top)
    .map((g) => {
      const sec = g.ip >= 0 ? image.find(g.ip, g.firstTsc) : -1;
      const s = sec >= 0 ? image.sections[sec] : undefined;
      const where = g.ip < 0 ? '-' : s ? `${s.name}+0x${(g.ip - s.begin).toString(16)}` : `0x${g.ip.toString(16)}`;
      return { count: g.count, reason: GAP_REASONS[g.reason] ?? String(g.reason), where, why: g.why };
    });
}

function summarizeThread(model: JvmModel, t: DecodedThread, file?: string): ThreadSummary {
  const gapReasons: Record<string, number> = {};
  t.flow.gapReasons.forEach((n, i) => {
    if (n) gapReasons[GAP_REASONS[i]] = n;
  });
  return {
    tid: t.tid,
    name: t.name,
    ptBytes: t.flow.bytes,
    insns: t.flow.insns,
    expectedInsns: t.expectedInsns,
    events: t.eventCount,
    bytecodes: t.java.bytecodes,
    interpreted: t.java.interpreted,
    compiled: t.java.compiled,
    hoisted: t.java.hoisted,
    gaps: t.flow.gaps,
    gapReasons,
    skippedBytes: t.flow.skippedBytes,
    gapSites: gapSitesOf(model, t, 20),
    decodeMs: t.decodeMs,
    peakJavaEvents: t.peakJavaEvents,
    attribution: t.attribution,
    file,
  };
}

function dump(threads: DecodedThread[], methods: Map<number, { className: string; name: string; signature: string }>): void {
  const name = (id: number) => {
    if (id < 0) return '?';
    const m = methods.get(id);
    return m ? `${m.className.replace(/\//g, '.')}.${m.name}${m.signature}` : `method#${id}`;
  };
  const out: string[] = [];
  const flush = () => {
    if (out.length) process.stdout.write(out.join('\n') + '\n');
    out.length = 0;
  };
  for (const t of threads) {
    out.push(`# thread ${t.tid} ${t.name}: ${t.events.length} events`);
    const e = t.events;
    for (let i = 0; i < e.length; i++) {
      const k = e.kind[i];
      const head = `${t.tid} ${e.tsc[i]} ${EVENT_NAMES[k]}`;
      if (k === 0) out.push(`${head} ${opcodeName(e.opcode[i])} ${name(e.method[i])}${e.bci[i] >= 0 ? `@${e.bci[i]}` : ''}`);
      else if (k === 3) out.push(`${head} ${GAP_REASONS[e.bci[i]]} until ${e.aux[i]}`);
      else out.push(`${head} ${name(e.method[i])}${e.bci[i] >= 0 ? `@${e.bci[i]}` : ''}`);
      if (out.length >= 8192) flush();
    }
  }
  flush();
}

/** Column files (`*.part`) a decode that was killed left behind: a thread's events are many GiB of them. */
function removeStaleParts(dir: string, log: { info(m: string): void }): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.part'));
  } catch {
    return; // no decoded/ yet
  }
  let bytes = 0;
  for (const n of names) {
    const f = path.join(dir, n);
    bytes += fs.statSync(f).size;
    fs.rmSync(f, { force: true });
  }
  if (names.length) log.info(`removed ${names.length} column files an interrupted decode left in ${dir} (${(bytes / 1e9).toFixed(1)} GB)`);
}
