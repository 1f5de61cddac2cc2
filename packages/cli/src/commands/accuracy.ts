/**
 * `jportal accuracy [--loss L,...] -- java ARGS...`: how right jportal's per-thread bytecode paths are when PT
 * loses data. Records the program under the PT emulator once per loss setting, and its ground truth once with
 * `jportal oracle`; decodes each trace and reports per thread the rows of the JPortal paper's accuracy table:
 *
 * - PMD: share of the thread's traced instructions the PT unit lost (the emulator's own account); PDC = 1 - PMD;
 * - PD: decoded bytecode events (observed or inferred) over the truth's bytecodes; DA: the share of them that
 *   align with the truth;
 * - PR: events recovery copied into gaps (@jportal/recover) over the truth's bytecodes; RA: the share of them that
 *   align;
 * - overall: truth bytecodes aligned with any decoded event; (bound): what no alignment can exceed (per (method,
 *   bci) the smaller count), so an overall far below it is the alignment failing, not the decoder; top-10 hot
 *   methods shared.
 *
 * The decoded events go through what `jportal analyze` does after decoding (reconstruction, then recovery).
 * Alignment is `jportal compare`'s (sequence accuracy); the decoded side leaves out the activations the oracle
 * cannot see (VM upcalls) for PD/DA/PR/RA and hot methods, as compare does for counts.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { decodeTrace, DecodeError } from '@jportal/decode';
import { hotMethodOverlap, lossAccuracy, LossAccuracy, MethodSpace, readOracle } from '@jportal/oracle';
import { CliError, ExitCode } from '../exit';
import { stderrLogger } from '../log';
import { refineDecoded } from '@jportal/analyze';
import { threadPairs } from '../thread-pairs';

/**
 * Named loss settings: emulator buffer:rate pairs calibrated on examples/switches (docs/emulator.md); what a
 * program really loses depends on its code, and is measured (PMD), not assumed.
 */
export const LOSS_PRESETS: Record<string, string | undefined> = {
  '0': undefined,
  '10': '65536:300000000',
  '25': '65536:230000000',
  '50': '65536:150000000',
};

export interface AccuracyOptions {
  command: string[];
  /** preset names (0, 10, 25, 50) or BUFFER:RATE settings */
  loss: string[];
  seed: number;
  /** working directory (kept); default: a temporary one, removed at the end */
  out?: string;
  /** only threads with these names */
  thread?: string[];
  /** threads whose truth has fewer bytecodes are left out of the table (default 1000) */
  minBytecodes?: number;
  /** write the table as markdown here */
  md?: string;
  json?: boolean;
  /** fill gaps with @jportal/recover (default true) */
  recover?: boolean;
}

export interface AccuracyRow extends Omit<LossAccuracy, 'overall'> {
  loss: string;
  setting: string | null;
  thread: string;
  pmd: number;
  pdc: number;
  overall: number;
  hotShared: number;
  hotOf: number;
}

interface ThreadEndRecord {
  type: string;
  tid: number;
  insns: number;
  lost_insns: number;
}

/** Lost share of each thread's traced instructions, from the emulator's thread_end records. */
function lostShareByTid(trace: string): Map<number, number> {
  const file = path.join(trace, 'pt', 'sideband.jsonl');
  const out = new Map<number, number>();
  if (!fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"thread_end"')) continue;
    const e = JSON.parse(line) as ThreadEndRecord;
    if (e.insns > 0) out.set(e.tid, e.lost_insns / e.insns);
  }
  return out;
}

function cli(args: string[]): { status: number | null; stderr: string } {
  const bin = path.join(__dirname, '..', 'bin.js');
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'ignore', 'pipe'] });
  return { status: r.status, stderr: r.stderr ?? '' };
}

const pct = (x: number) => (Number.isNaN(x) ? '—' : `${(100 * x).toFixed(1)}%`);

export function accuracyMarkdown(rows: AccuracyRow[], command: string): string {
  const lines = [
    `Made by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores).`,
    '',
    '| loss | thread | PMD | PDC | PD | DA | PR | RA | overall | (bound) | top-10 hot |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.loss} | ${r.thread} | ${pct(r.pmd)} | ${pct(r.pdc)} | ${pct(r.pd)} | ${pct(r.da)} | ${pct(r.pr)} | ${pct(r.ra)} | ${pct(r.overall)} | ${pct(r.bound)} | ${r.hotShared}/${r.hotOf} |`),
  ];
  return lines.join('\n') + '\n';
}

export async function runAccuracy(o: AccuracyOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  if (o.command.length === 0) throw new CliError('accuracy: no command given (usage: jportal accuracy [--loss 0,10,25,50] -- java ARGS...)', ExitCode.BadInput);
  const settings = o.loss.map((l) => {
    if (l in LOSS_PRESETS) return { loss: `${l}%`, setting: LOSS_PRESETS[l] ?? null };
    if (/^\d+:\d+$/.test(l)) return { loss: l, setting: l };
    throw new CliError(`accuracy: --loss wants presets ${Object.keys(LOSS_PRESETS).join(', ')} or BUFFER:RATE (got ${l})`, ExitCode.BadInput);
  });
  const work = path.resolve(o.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-accuracy-')));
  fs.mkdirSync(work, { recursive: true });
  const rows: AccuracyRow[] = [];
  try {
    const oracleDir = path.join(work, 'oracle');
    log.info(`accuracy: ground truth (single-stepping) -> ${oracleDir}`);
    const or = cli(['oracle', '--deterministic', '--force', '--out', oracleDir, '--', ...o.command]);
    if (or.status !== 0) throw new CliError(`accuracy: the oracle run failed (exit ${or.status}): ${or.stderr.trim().split('\n').pop()}`, ExitCode.Failed);
    const oracle = readOracle(oracleDir);
    for (const { loss, setting } of settings) {
      const trace = path.join(work, `trace-${loss.replace(/[^0-9A-Za-z]+/g, '_')}`);
      log.info(`accuracy: loss ${loss}${setting ? ` (emulator loss=${setting}, seed ${o.seed})` : ''}: recording -> ${trace}`);
      const args = ['record', '--pt=emulate', '--deterministic', '--force', '--out', trace];
      if (setting) args.push('--loss', setting, '--seed', String(o.seed));
      const rr = cli([...args, '--', ...o.command]);
      if (rr.status !== 0) throw new CliError(`accuracy: recording at loss ${loss} failed (exit ${rr.status}): ${rr.stderr.trim().split('\n').pop()}`, ExitCode.Failed);
      let decoded;
      try {
        decoded = decodeTrace(trace);
      } catch (e) {
        if (e instanceof DecodeError) throw new CliError(`accuracy: ${e.message}`, e.exitCode as 2 | 3);
        throw e;
      }
      // what `jportal analyze` does after decoding: reconstruction, then recovery
      const refined = refineDecoded(decoded, { recover: o.recover !== false });
      decoded.threads.forEach((t, i) => {
        const r = refined.recovery[i];
        if (r?.gaps) log.info(`accuracy: loss ${loss}, ${t.name}: ${r.recovered} of ${r.gaps} gaps recovered (${r.bytecodes} bytecodes of ${r.expected} expected from PT time; ${r.noContext} without context, ${r.noCandidate} without a fitting walk, ${r.composed} composed, ${r.ambiguous} ambiguous)`);
      });
      const lost = lostShareByTid(trace);
      const space = new MethodSpace();
      const unmatched: string[] = [];
      for (const p of threadPairs(decoded, oracle, space, o.thread, unmatched)) {
        if (p.truth.length < (o.minBytecodes ?? 1000)) continue;
        const la = lossAccuracy(p.truth, p.visible);
        const hot = hotMethodOverlap(p.truth, p.visible);
        const pmd = lost.get(p.decoded.tid) ?? 0;
        rows.push({
          ...la,
          loss,
          setting,
          thread: p.name,
          pmd,
          pdc: 1 - pmd,
          hotShared: hot.shared,
          hotOf: Math.max(hot.truth.length, hot.decoded.length),
        });
        const r = rows[rows.length - 1];
        log.info(`accuracy: loss ${loss}, ${p.name}: PMD ${pct(r.pmd)} PD ${pct(r.pd)} DA ${pct(r.da)} PR ${pct(r.pr)} overall ${pct(r.overall)} hot ${r.hotShared}/${r.hotOf}`);
      }
      if (unmatched.length) log.info(`accuracy: oracle threads with no namesake in the trace at loss ${loss}: ${unmatched.join(', ')}`);
    }
  } finally {
    if (!o.out) fs.rmSync(work, { recursive: true, force: true });
  }
  const command = `jportal accuracy --loss ${o.loss.join(',')} --seed ${o.seed}${o.recover === false ? ' --no-recover' : ''} -- ${o.command.join(' ')}`;
  const md = accuracyMarkdown(rows, command);
  if (o.md) fs.writeFileSync(o.md, md);
  if (o.json) process.stdout.write(JSON.stringify({ command, rows }, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2) + '\n');
  else process.stdout.write(md);
  return rows.length ? ExitCode.Ok : ExitCode.Failed;
}
