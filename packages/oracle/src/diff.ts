/**
 * A readable account of where a decoded sequence and the truth part: which methods lose the most bytecodes on
 * either side, and the first regions where the alignment has gaps, each with a little matched context.
 */
import { OPCODE_NAMES } from '@jportal/classfile';
import { EventKind, EventSeq } from './compare';

export interface DiffOptions {
  /** method names by shared id */
  names: readonly string[];
  /** regions printed in full (default 200) */
  regions?: number;
  /** matched events shown before and after each region (default 2) */
  context?: number;
  /** lines per side of a region before it is cut (default 40) */
  regionLines?: number;
  /** per decoded event: a short tag printed after it (e.g. interpreted/compiled/inferred) */
  decodedTag?: (i: number) => string;
}

/** Bytecode events unmatched on each side, by method. */
export interface MethodMisses {
  method: number;
  /** truth events with no partner */
  missed: number;
  /** decoded events with no partner */
  extra: number;
}

export function missesByMethod(truth: EventSeq, decoded: EventSeq, pairs: { truth: Int32Array; decoded: Int32Array }): MethodMisses[] {
  const rows = new Map<number, MethodMisses>();
  const row = (m: number) => {
    let r = rows.get(m);
    if (!r) rows.set(m, (r = { method: m, missed: 0, extra: 0 }));
    return r;
  };
  const tm = new Uint8Array(truth.length);
  const dm = new Uint8Array(decoded.length);
  for (let k = 0; k < pairs.truth.length; k++) {
    tm[pairs.truth[k]] = 1;
    dm[pairs.decoded[k]] = 1;
  }
  for (let i = 0; i < truth.length; i++) if (truth.kind[i] === EventKind.Bytecode && !tm[i]) row(truth.method[i]).missed++;
  for (let i = 0; i < decoded.length; i++) if (decoded.kind[i] === EventKind.Bytecode && !dm[i]) row(decoded.method[i]).extra++;
  return [...rows.values()].sort((a, b) => b.missed + b.extra - (a.missed + a.extra) || a.method - b.method);
}

/** The report as text (bytecode events only; `pairs` from sequenceAccuracy(..., { pairs: true })). */
export function formatDiff(truth: EventSeq, decoded: EventSeq, pairs: { truth: Int32Array; decoded: Int32Array }, o: DiffOptions): string {
  const maxRegions = o.regions ?? 200;
  const context = o.context ?? 2;
  const regionLines = o.regionLines ?? 40;
  const name = (m: number) => (m >= 0 && m < o.names.length ? o.names[m] : m < 0 ? '?' : `#${m}`);
  const op = (x: number) => (x >= 0 && x < OPCODE_NAMES.length ? OPCODE_NAMES[x] : '?');
  const line = (s: EventSeq, i: number) => `${name(s.method[i])} @${s.bci[i]} ${op(s.opcode[i])}`;
  const bytecodes = (s: EventSeq, lo: number, hi: number) => {
    const out: number[] = [];
    for (let i = lo; i < hi; i++) if (s.kind[i] === EventKind.Bytecode) out.push(i);
    return out;
  };
  const out: string[] = [];
  const misses = missesByMethod(truth, decoded, pairs);
  const totalMissed = misses.reduce((a, r) => a + r.missed, 0);
  const totalExtra = misses.reduce((a, r) => a + r.extra, 0);
  out.push(`# unmatched bytecode events: ${totalMissed} of the truth (missed), ${totalExtra} of the decoded side (extra)`);
  out.push('# by method (missed, extra):');
  const row = (r: MethodMisses) => `${String(r.missed).padStart(10)} ${String(r.extra).padStart(10)}  ${name(r.method)}`;
  for (const r of misses.slice(0, 40)) out.push(row(r));
  // the truth's misses alone: the list above is led by extras when the decoded side has code the oracle cannot see
  const mostMissed = misses.filter((r) => r.missed > 0).sort((a, b) => b.missed - a.missed || a.method - b.method);
  out.push('');
  out.push('# by method, most missed (missed, extra):');
  for (const r of mostMissed.slice(0, 40)) out.push(row(r));
  out.push('');
  out.push(`# regions where the sequences part ('-' truth only, '+' decoded only, ' ' matched context)`);
  let regions = 0;
  const n = pairs.truth.length;
  // gap k lies between pair k-1 and pair k (k = 0: before the first pair, k = n: after the last)
  for (let k = 0; k <= n && regions < maxRegions; k++) {
    const t0 = k === 0 ? 0 : pairs.truth[k - 1] + 1;
    const t1 = k === n ? truth.length : pairs.truth[k];
    const d0 = k === 0 ? 0 : pairs.decoded[k - 1] + 1;
    const d1 = k === n ? decoded.length : pairs.decoded[k];
    const tGap = bytecodes(truth, t0, t1);
    const dGap = bytecodes(decoded, d0, d1);
    if (!tGap.length && !dGap.length) continue;
    regions++;
    out.push(`@@ truth ${t0}..${t1}, decoded ${d0}..${d1}`);
    for (let c = Math.max(0, k - context); c < k; c++) out.push(`  ${line(truth, pairs.truth[c])}`);
    const side = (mark: string, s: EventSeq, idx: number[], tag?: (i: number) => string) => {
      for (const i of idx.slice(0, regionLines)) out.push(`${mark} ${line(s, i)}${tag ? ` ${tag(i)}` : ''}`);
      if (idx.length > regionLines) out.push(`${mark} ... ${idx.length - regionLines} more`);
    };
    side('-', truth, tGap);
    side('+', decoded, dGap, o.decodedTag);
    for (let c = k; c < Math.min(n, k + context); c++) out.push(`  ${line(truth, pairs.truth[c])}`);
  }
  return out.join('\n') + '\n';
}
