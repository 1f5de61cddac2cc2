/**
 * Can this machine capture real Intel PT, and if not, why not: the PMU, perf_event_paranoid, privileges and
 * the addon, each read from a root directory parameter (tests use fixture trees).
 */
import * as fs from 'fs';
import * as path from 'path';
import { addonAvailable, loadAddon, readParanoid } from './addon';
import { CaptureError, CaptureErrorKind } from './errors';
import { discoverPtPmu, PtPmu } from './pmu';

export const CAP_SYS_ADMIN = 21;
export const CAP_PERFMON = 38;

export interface PerfEnvironment {
  pmu?: PtPmu;
  /** why there is no usable PMU */
  pmuProblem?: string;
  paranoid?: number;
  /** what the paranoid level allows an unprivileged user */
  paranoidAllows: string;
  /** CAP_PERFMON or CAP_SYS_ADMIN in the effective set: paranoid does not apply */
  privileged: boolean;
  addon: boolean;
  /** real capture possible: PMU, permission and addon */
  usable: boolean;
  /** the first obstacle, as a CaptureError kind and message */
  obstacle?: { kind: CaptureErrorKind; message: string };
}

/** What kernel.perf_event_paranoid allows an unprivileged user (kernel/events/core.c, Debian's level 3 patch). */
export function describeParanoid(level: number | undefined): string {
  if (level === undefined) return 'perf events are not available in this kernel (no /proc/sys/kernel/perf_event_paranoid)';
  if (level <= -1) return 'everything: CPU-wide and kernel tracing, raw tracepoints';
  if (level === 0) return 'per-process and CPU-wide tracing, kernel included (no raw tracepoints)';
  if (level === 1) return 'per-process tracing, user and kernel (no CPU-wide events)';
  if (level === 2) return 'per-process tracing of user space only (what jportal needs)';
  return 'nothing for unprivileged users (Debian/Ubuntu level 3+: perf_event_open is refused)';
}

/** Effective capabilities of this process from /proc/self/status (CapEff), as a bigint mask. */
export function effectiveCaps(procRoot = '/proc'): bigint {
  try {
    const m = /^CapEff:\s*([0-9a-fA-F]+)/m.exec(fs.readFileSync(path.join(procRoot, 'self', 'status'), 'utf8'));
    return m ? BigInt('0x' + m[1]) : 0n;
  } catch {
    return 0n;
  }
}

export function probePerfEnvironment(o: { sysfsRoot?: string; procRoot?: string; checkAddon?: boolean } = {}): PerfEnvironment {
  const paranoid = readParanoid(o.procRoot);
  const caps = effectiveCaps(o.procRoot);
  const privileged = !!((caps >> BigInt(CAP_PERFMON)) & 1n) || !!((caps >> BigInt(CAP_SYS_ADMIN)) & 1n);
  const env: PerfEnvironment = { paranoid, paranoidAllows: describeParanoid(paranoid), privileged, addon: false, usable: false };
  try {
    env.pmu = discoverPtPmu(o.sysfsRoot);
  } catch (e) {
    if (!(e instanceof CaptureError)) throw e;
    env.pmuProblem = e.message;
    env.obstacle = { kind: e.kind, message: e.message };
  }
  env.addon = o.checkAddon === false ? true : addonAvailable();
  if (!env.obstacle && paranoid === undefined) env.obstacle = { kind: 'no-pmu', message: 'this kernel has no perf events (no /proc/sys/kernel/perf_event_paranoid)' };
  if (!env.obstacle && !privileged && paranoid !== undefined && paranoid > 2)
    env.obstacle = {
      kind: 'permission',
      message: `kernel.perf_event_paranoid is ${paranoid}, which refuses perf_event_open to unprivileged users; fix with \`sudo sysctl kernel.perf_event_paranoid=2\` (or run with CAP_PERFMON)`,
    };
  if (!env.obstacle && !env.addon) {
    try {
      loadAddon();
    } catch (e) {
      env.obstacle = { kind: 'addon-missing', message: (e as Error).message };
    }
  }
  env.usable = !env.obstacle;
  return env;
}
