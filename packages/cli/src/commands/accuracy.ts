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
import { decodeTrace, DecodeError, type DecodedTrace } from '@jportal/decode';
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
  '10': '65536:200000000',
  '25': '65536:140000000',
  '50': '65536:95000000',
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
  /**
   * re-record a preset's trace until its busiest thread lost about the preset's share (default true; see
   * calibratedRate); BUFFER:RATE settings are taken as given
   */
  calibrate?: boolean;
  /**
   * also record each lossy setting a second time (seed + REFERENCE_SEED_OFFSET) and measure the first recording
   * again with the second as recovery's reference (rows "L +ref"; default false)
   */
  reference?: boolean;
}

export interface AccuracyRow extends Omit<LossAccuracy, 'overall'> {
  loss: string;
  /** the emulator's loss setting the row's trace was recorded with (after calibration), null for none */
  setting: string | null;
  /** recordings made for this loss setting (more than 1: calibrated) */
  attempts: number;
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

/** Each thread's traced and lost instructions, from the emulator's thread_end records. */
function threadLosses(trace: string): ThreadEndRecord[] {
  const file = path.join(trace, 'pt', 'sideband.jsonl');
  const out: ThreadEndRecord[] = [];
  if (!fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"thread_end"')) continue;
    const e = JSON.parse(line) as ThreadEndRecord;
    if (e.insns > 0) out.push(e);
  }
  return out;
}

/** Lost share of each thread's traced instructions. */
function lostShareByTid(trace: string): Map<number, number> {
  return new Map(threadLosses(trace).map((e) => [e.tid, e.lost_insns / e.insns]));
}

/** The lost share of the thread that ran the most traced instructions (the one the table is mostly about). */
function busiestThreadLoss(trace: string): number | undefined {
  let best: ThreadEndRecord | undefined;
  for (const e of threadLosses(trace)) if (!best || e.insns > best.insns) best = e;
  return best && best.lost_insns / best.insns;
}

/** How far a calibrated recording's lost share may be from its preset's (absolute). */
export const CALIBRATION_TOLERANCE = 0.025;
/** Recordings per preset at most, the first included. */
export const CALIBRATION_ATTEMPTS = 4;

/**
 * The next drain rate to try for a target lost share, from the rates tried so far and the shares they lost (same
 * order, at least one). The emulator's buffer drains at `rate` bytes per emulated second; where the code writes PT
 * faster than that, the kept share is about rate / production, so a step from one try scales its rate by the kept
 * shares' ratio. With tries on both sides of the target the next lies between the nearest two (regula falsi); with
 * two or more on one side, on the line through the nearest two, but at most twice as far from the nearest as the
 * scaling step (the loss curve bends: a line through two tries far from the target overshoots). The presets were
 * calibrated on one machine (examples/switches), and the code the JVM generates, so the PT it writes per
 * instruction, depends on the CPU (JDK 17's -Xint switches lost 27% at the 25% preset on an AMD EPYC, 14% on an
 * Intel Xeon): hence this.
 */
export function calibratedRate(target: number, rates: number[], lost: number[]): number {
  const tries = [...rates.keys()];
  const near = tries.sort((a, b) => Math.abs(lost[a] - target) - Math.abs(lost[b] - target));
  const n0 = near[0];
  const scaled = (rates[n0] * (1 - target)) / Math.max(0.05, 1 - lost[n0]);
  // the nearest try losing less than the target (drains too fast) and the nearest losing more
  const below = near.find((k) => lost[k] < target);
  const above = near.find((k) => lost[k] > target);
  const line = (a: number, b: number) => rates[a] + ((target - lost[a]) * (rates[b] - rates[a])) / (lost[b] - lost[a]);
  let next: number;
  if (lost[n0] === target) next = rates[n0];
  else if (below !== undefined && above !== undefined) next = line(below, above);
  else if (near.length >= 2 && lost[near[1]] !== lost[n0]) {
    const step = scaled - rates[n0];
    next = rates[n0] + Math.sign(step) * Math.min(Math.abs(line(n0, near[1]) - rates[n0]), 2 * Math.abs(step));
  } else next = scaled;
  // stay within a factor of 3 of the first try, and positive
  return Math.round(Math.min(3 * rates[0], Math.max(rates[0] / 3, next)));
}

/** decodeTrace with its errors as the CLI's. */
function decodeOrFail(trace: string): DecodedTrace {
  try {
    return decodeTrace(trace);
  } catch (e) {
    if (e instanceof DecodeError) throw new CliError(`accuracy: ${e.message}`, e.exitCode as 2 | 3);
    throw e;
  }
}

/** The reference recording's seed is the row's plus this (another place for the emulator's losses to fall). */
export const REFERENCE_SEED_OFFSET = 1000;

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
  // the emulator settings the traces were recorded with, where calibration moved a preset's
  const moved = new Map<string, string>();
  for (const r of rows) if (r.setting && r.attempts > 1) moved.set(r.loss, `${r.loss}: loss=${r.setting} (${r.attempts} recordings)`);
  if (moved.size) lines.push('', `Calibrated settings (the preset re-recorded until the busiest thread lost within ${pct(CALIBRATION_TOLERANCE)} of it): ${[...moved.values()].join('; ')}.`);
  return lines.join('\n') + '\n';
}

export async function runAccuracy(o: AccuracyOptions): Promise<number> {
  const log = stderrLogger(!!o.json);
  if (o.command.length === 0) throw new CliError('accuracy: no command given (usage: jportal accuracy [--loss 0,10,25,50] -- java ARGS...)', ExitCode.BadInput);
  const settings = o.loss.map((l) => {
    if (l in LOSS_PRESETS) return { loss: `${l}%`, setting: LOSS_PRESETS[l] ?? null, target: LOSS_PRESETS[l] ? Number(l) / 100 : undefined };
    if (/^\d+:\d+$/.test(l)) return { loss: l, setting: l, target: undefined };
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
    /** The rows of one recording, refined as analyze does (with a reference recording's threads, if given). */
    const measure = (trace: string, loss: string, setting: string | null, attempts: number, reference: DecodedTrace | undefined): void => {
      const decoded = decodeOrFail(trace);
      const refined = refineDecoded(decoded, { recover: o.recover !== false, reference });
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
          attempts,
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
    };
    for (const { loss, setting: preset, target } of settings) {
      const trace = path.join(work, `trace-${loss.replace(/[^0-9A-Za-z]+/g, '_')}`);
      // a preset is re-recorded at another drain rate until the busiest thread lost about its share
      let setting = preset;
      const rates: number[] = [];
      const lostShares: number[] = [];
      for (;;) {
        log.info(`accuracy: loss ${loss}${setting ? ` (emulator loss=${setting}, seed ${o.seed})` : ''}: recording -> ${trace}`);
        const args = ['record', '--pt=emulate', '--deterministic', '--force', '--out', trace];
        if (setting) args.push('--loss', setting, '--seed', String(o.seed));
        const rr = cli([...args, '--', ...o.command]);
        if (rr.status !== 0) throw new CliError(`accuracy: recording at loss ${loss} failed (exit ${rr.status}): ${rr.stderr.trim().split('\n').pop()}`, ExitCode.Failed);
        if (!setting || target === undefined || o.calibrate === false) break;
        const lost = busiestThreadLoss(trace);
        if (lost === undefined) break;
        const [buffer, rate] = setting.split(':').map(Number);
        rates.push(rate);
        lostShares.push(lost);
        if (Math.abs(lost - target) <= CALIBRATION_TOLERANCE) break;
        if (rates.length >= CALIBRATION_ATTEMPTS) {
          log.warn(`accuracy: loss ${loss}: ${rates.length} recordings lost ${lostShares.map(pct).join(', ')} of the busiest thread's instructions, none within ${pct(CALIBRATION_TOLERANCE)} of ${pct(target)}; the last is measured`);
          break;
        }
        setting = `${buffer}:${calibratedRate(target, rates, lostShares)}`;
        log.info(`accuracy: loss ${loss}: the busiest thread lost ${pct(lost)} at ${rates[rates.length - 1]} bytes/s; again at ${setting}`);
      }
      const attempts = Math.max(1, rates.length);
      // what `jportal analyze` does after decoding: reconstruction, then recovery
      measure(trace, loss, setting, attempts, undefined);
      if (o.reference && setting && o.recover !== false) {
        // a second recording at the same setting, another seed: it loses other stretches, and the same trace is
        // refined again with it as the reference (rows labelled "+ref")
        const refTrace = `${trace}-reference`;
        const refSeed = o.seed + REFERENCE_SEED_OFFSET;
        log.info(`accuracy: loss ${loss}: reference recording (emulator loss=${setting}, seed ${refSeed}) -> ${refTrace}`);
        const rr = cli(['record', '--pt=emulate', '--deterministic', '--force', '--out', refTrace, '--loss', setting, '--seed', String(refSeed), '--', ...o.command]);
        if (rr.status !== 0) throw new CliError(`accuracy: the reference recording at loss ${loss} failed (exit ${rr.status}): ${rr.stderr.trim().split('\n').pop()}`, ExitCode.Failed);
        const reference = decodeOrFail(refTrace);
        refineDecoded(reference, { recover: false });
        measure(trace, `${loss} +ref`, setting, attempts, reference);
      }
    }
  } finally {
    if (!o.out) fs.rmSync(work, { recursive: true, force: true });
  }
  const command = `jportal accuracy --loss ${o.loss.join(',')} --seed ${o.seed}${o.recover === false ? ' --no-recover' : ''}${o.calibrate === false ? ' --no-calibrate' : ''}${o.reference ? ' --reference' : ''} -- ${o.command.join(' ')}`;
  const md = accuracyMarkdown(rows, command);
  if (o.md) fs.writeFileSync(o.md, md);
  if (o.json) process.stdout.write(JSON.stringify({ command, rows }, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2) + '\n');
  else process.stdout.write(md);
  return rows.length ? ExitCode.Ok : ExitCode.Failed;
}
