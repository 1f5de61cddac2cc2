/**
 * `jportal compare TRACE_DIR ORACLE_DIR`: decodes a trace and measures it against ground truth recorded by
 * `jportal oracle` from a separate run of the same program, thread by thread (threads are paired by name).
 */
import * as fs from 'fs';
import * as path from 'path';
import { refineDecoded } from '@jportal/analyze';
import { decodeTrace, DecodeError } from '@jportal/decode';
import { callSequenceAccuracy, countError, formatDiff, hotMethodOverlap, MethodSpace, readOracle, sequenceAccuracy, ThreadComparison, UnseenMask } from '@jportal/oracle';
import { threadPairs } from '../thread-pairs';
import { CliError, ExitCode } from '../exit';
import { stderrLogger } from '../log';

export interface CompareCommandOptions {
  trace: string;
  oracle: string;
  json?: boolean;
  /** only threads with these names */
  thread?: string[];
  /** exit 1 when a compared thread's sequence accuracy is below this (0..1) */
  minAccuracy?: number;
  /** write a readable diff per thread (where decoded and truth part) into this directory */
  diff?: string;
  /** measure what analyze works on: reconstruction and recovery after decoding (as `jportal accuracy` does) */
  refine?: boolean;
}

export interface ThreadReport {
  name: string;
  traceTid: number;
  oracleTid: number;
  comparison: ThreadComparison;
  /** what was left out of the decoded side: activations the oracle could not see into */
  unseen: Omit<UnseenMask, 'decoded' | 'keep'>;
}

export async function runCompare(o: CompareCommandOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  for (const d of [o.trace, o.oracle]) if (!fs.existsSync(d) || !fs.statSync(d).isDirectory()) throw new CliError(`compare: ${d}: not a directory`, ExitCode.BadInput);
  const oracle = readOracle(o.oracle);
  if (!oracle.complete) log.warn(`${o.oracle}: no oracle.json (the JVM did not reach VM death): comparing what was flushed`);
  let decoded;
  try {
    decoded = decodeTrace(o.trace);
  } catch (e) {
    if (e instanceof DecodeError) throw new CliError(`compare: ${e.message}`, e.exitCode as 2 | 3);
    throw e;
  }
  if (o.refine) refineDecoded(decoded);
  const space = new MethodSpace();
  const reports: ThreadReport[] = [];
  const unmatched: string[] = [];
  for (const pair of threadPairs(decoded, oracle, space, o.thread, unmatched)) {
    const { truth, all: dec, visible, visibleKeep, unseen, decoded: t, oracle: ot } = pair;
    // bytecodes are aligned over what both sides could see: the events inside activations the oracle could not
    // see have no partner in the truth (it has none of their bytecodes), and a stretch of millions of them (a
    // lambda's class spun at a call site) would only lead the windowed alignment astray. Calls are aligned as
    // they are (the truth has the entries and exits inside those activations); counts and hot methods, like
    // the bytecodes, over what both sides could see.
    const sequence = sequenceAccuracy(truth, visible, { pairs: o.diff !== undefined });
    if (o.diff && sequence.pairs) {
      fs.mkdirSync(o.diff, { recursive: true });
      const ev = t.events;
      const first = ev.length - dec.length; // decodedSequence drops the events before VMInit
      // visible index -> index in the thread's events
      const at = new Int32Array(visible.length);
      for (let i = 0, v = 0; i < visibleKeep.length; i++) if (visibleKeep[i]) at[v++] = first + i;
      const SOURCES = ['interpreted', 'compiled', 'inlined', 'other'];
      const file = path.join(o.diff, `${ot.name.replace(/[^A-Za-z0-9._-]+/g, '_')}-${t.tid}.diff.txt`);
      fs.writeFileSync(
        file,
        formatDiff(truth, visible, sequence.pairs, {
          names: space.names,
          decodedTag: (i) => `[${SOURCES[ev.source[at[i]]] ?? '?'}${ev.source[at[i]] !== 0 && ev.aux[at[i]] === 1 ? ', inferred' : ''}]`,
        }),
      );
      delete sequence.pairs;
      log.info(`${ot.name}: diff written to ${file}`);
      if (sequence.fills?.length) {
        // each region of recovered events against the hole the decoded events around it left in the truth,
        // farthest off first (positions: the thread's event indices and the oracle's)
        const rows = [...sequence.fills].sort((a, b) => Math.abs(b.fillBytecodes - b.holeBytecodes) - Math.abs(a.fillBytecodes - a.holeBytecodes));
        const lines = ['fill bytecodes	hole bytecodes	fill/hole	matched	events (trace)	truth (oracle)'];
        for (const f of rows)
          lines.push(`${f.fillBytecodes}	${f.holeBytecodes}	${f.holeBytecodes ? (f.fillBytecodes / f.holeBytecodes).toFixed(2) : '-'}	${f.matched}	${at[f.decodedFrom]}..${at[f.decodedTo - 1] + 1}	${f.truthFrom}..${f.truthTo}`);
        const fillFile = file.replace(/\.diff\.txt$/, '.fills.tsv');
        fs.writeFileSync(fillFile, lines.join('\n') + '\n');
        log.info(`${ot.name}: ${rows.length} fills measured against their holes in ${fillFile}`);
      }
    }
    reports.push({ name: ot.name, traceTid: t.tid, oracleTid: ot.tid, comparison: { sequence, calls: callSequenceAccuracy(truth, dec), counts: countError(truth, visible), hot: hotMethodOverlap(truth, visible) }, unseen });
  }
  if (reports.length === 0) throw new CliError(`compare: no thread of ${o.oracle} has a namesake in ${o.trace}${o.thread ? ` (asked for ${o.thread.join(', ')})` : ''}`, ExitCode.BadInput);
  const below = o.minAccuracy === undefined ? [] : reports.filter((r) => r.comparison.sequence.accuracy < o.minAccuracy!);
  if (o.json) {
    const hot = (r: ThreadReport) => ({
      ...r.comparison.hot,
      truth: r.comparison.hot.truth.map((x) => ({ method: space.names[x.method], count: x.count })),
      decoded: r.comparison.hot.decoded.map((x) => ({ method: space.names[x.method], count: x.count })),
    });
    process.stdout.write(JSON.stringify({ trace: o.trace, oracle: o.oracle, threads: reports.map((r) => ({ ...r, comparison: { ...r.comparison, hot: hot(r) } })), unmatched, below: below.map((r) => r.name) }, null, 2) + '\n');
  } else {
    for (const r of reports) {
      const c = r.comparison;
      const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
      log.info(
        `${r.name} (trace tid ${r.traceTid}, oracle tid ${r.oracleTid}): sequence ${pct(c.sequence.accuracy)} of ${c.sequence.truthLength} bytecodes ` +
          `(${c.sequence.matched} matched, ${c.sequence.unknownFieldsMatched} of them on the opcode alone; ${c.sequence.decodedLength} decoded); ` +
          `counts: error ${pct(c.counts.relError)}, coverage ${pct(c.counts.coverage)}; hot methods: ${Math.round(c.hot.overlap * c.hot.truth.length)}/${c.hot.truth.length} shared${c.hot.identical ? ' (identical)' : ''}; ` +
          `calls: ${pct(c.calls.accuracy)} of ${c.calls.truthLength}` +
          (r.unseen.droppedEvents ? `; left out ${r.unseen.droppedEvents} decoded events inside ${r.unseen.paired} of the ${r.unseen.hiddenActivations} activations the oracle cannot see (VM upcalls)${r.unseen.hiddenFills ? `, and ${r.unseen.hiddenFills} recovered fills over them` : ''}` : ''),
      );
    }
    if (unmatched.length) log.info(`oracle threads with no namesake in the trace: ${unmatched.join(', ')}`);
  }
  if (below.length) {
    log.warn(`sequence accuracy below ${o.minAccuracy} for ${below.map((r) => r.name).join(', ')}`);
    return ExitCode.Failed;
  }
  return ExitCode.Ok;
}
