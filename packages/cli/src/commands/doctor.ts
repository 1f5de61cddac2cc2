/**
 * `jportal doctor`: what this machine can do. CPU, Intel PT and its capabilities, perf_event_paranoid, kernel,
 * JDKs, qemu-user and the emulator plugin, and the mode `record` would use. Exit 0 when real capture is
 * possible, 3 when it is not.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { allowedValues, PerfEnvironment, probePerfEnvironment } from '@jportal/capture';
import { findExecutable, locateAgent, locateEmulatorPlugin } from '../agent-path';
import { ExitCode } from '../exit';

export interface DoctorOptions {
  json?: boolean;
  /** roots of sysfs and procfs (tests point them at fixture trees) */
  sysfsRoot?: string;
  procRoot?: string;
}

export interface JdkInfo {
  home: string;
  version: string;
  feature: number;
}

export interface DoctorReport {
  cpu: { vendor: string; model: string; family?: number; modelNumber?: number; stepping?: number; ptFlag: boolean };
  kernel: string;
  pt: {
    present: boolean;
    type?: number;
    caps?: Record<string, number>;
    /** readable capabilities: MTC periods, PSB periods, IP filter ranges, ... */
    summary?: string[];
    problem?: string;
  };
  perf: { paranoid: number | null; allows: string; privileged: boolean; addon: boolean };
  realCapture: { possible: boolean; obstacle?: string };
  jdks: JdkInfo[];
  agent: { built: boolean; path?: string };
  emulator: { qemu?: string; plugin?: string; available: boolean; problem?: string };
  /** what `jportal record` does with --pt=auto, and with --pt=emulate */
  record: { auto: 'perf' | 'metadata-only'; emulate: 'available' | 'unavailable' };
}

function parseCpuinfo(procRoot: string): DoctorReport['cpu'] {
  let text = '';
  try {
    text = fs.readFileSync(path.join(procRoot, 'cpuinfo'), 'utf8');
  } catch {
    // no /proc/cpuinfo: fields stay unknown
  }
  const first = text.split(/\n\s*\n/)[0] ?? '';
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim();
  const num = (name: string) => {
    const v = field(name);
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  return {
    vendor: field('vendor_id') ?? 'unknown',
    model: field('model name') ?? 'unknown',
    family: num('cpu family'),
    modelNumber: num('model'),
    stepping: num('stepping'),
    ptFlag: /\bintel_pt\b/.test(field('flags') ?? ''),
  };
}

/** JDKs under /usr/lib/jvm and $JAVA_HOME, from their `release` files (no JVM is started). */
export function findJdks(roots = ['/usr/lib/jvm']): JdkInfo[] {
  const homes = new Set<string>();
  for (const root of roots) {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync(root);
    } catch {
      continue;
    }
    for (const e of entries) {
      const home = path.join(root, e);
      try {
        if (!fs.lstatSync(home).isSymbolicLink() && fs.existsSync(path.join(home, 'bin', 'java'))) homes.add(fs.realpathSync(home));
      } catch {
        // unreadable entry
      }
    }
  }
  if (process.env.JAVA_HOME && fs.existsSync(path.join(process.env.JAVA_HOME, 'bin', 'java'))) homes.add(fs.realpathSync(process.env.JAVA_HOME));
  const out: JdkInfo[] = [];
  for (const home of [...homes].sort()) {
    let version = '?';
    try {
      version = /^JAVA_VERSION="([^"]+)"/m.exec(fs.readFileSync(path.join(home, 'release'), 'utf8'))?.[1] ?? '?';
    } catch {
      // no release file
    }
    const m = /^(1\.)?(\d+)/.exec(version);
    out.push({ home, version, feature: m ? Number(m[2]) : 0 });
  }
  return out;
}

function ptSummary(env: PerfEnvironment): string[] {
  const caps = env.pmu?.caps ?? {};
  const list = (mask: number | undefined) => (mask === undefined ? '?' : allowedValues(mask).join(',') || 'none');
  return [
    `MTC ${caps.mtc ? `yes (periods ${list(caps.mtc_periods)})` : 'no'}`,
    `CYC/PSB period ${caps.psb_cyc ? `yes (PSB periods ${list(caps.psb_periods)}, CYC thresholds ${list(caps.cycle_thresholds)})` : 'no'}`,
    `IP filtering ${caps.ip_filtering ? `yes (${caps.num_address_ranges ?? '?'} ranges)` : 'no'}`,
    `output ${caps.topa_multiple_entries ? 'ToPA (multiple entries)' : caps.topa_output ? 'ToPA (single entry)' : caps.single_range_output ? 'single range' : '?'}`,
    `PTWRITE ${caps.ptwrite ? 'yes' : 'no'}`,
  ];
}

export function doctorReport(o: DoctorOptions = {}): DoctorReport {
  const procRoot = o.procRoot ?? '/proc';
  const env = probePerfEnvironment({ sysfsRoot: o.sysfsRoot, procRoot });
  let agent: DoctorReport['agent'] = { built: false };
  try {
    agent = { built: true, path: locateAgent() };
  } catch {
    // reported as not built
  }
  const qemu = findExecutable('qemu-x86_64');
  let plugin: string | undefined;
  let pluginProblem: string | undefined;
  try {
    plugin = locateEmulatorPlugin();
  } catch (e) {
    pluginProblem = (e as Error).message;
  }
  const emulatorOk = !!qemu && !!plugin;
  return {
    cpu: parseCpuinfo(procRoot),
    kernel: `${os.type()} ${os.release()}`,
    pt: env.pmu
      ? { present: true, type: env.pmu.type, caps: env.pmu.caps, summary: ptSummary(env) }
      : { present: false, problem: env.pmuProblem },
    perf: { paranoid: env.paranoid ?? null, allows: env.paranoidAllows, privileged: env.privileged, addon: env.addon },
    realCapture: { possible: env.usable, obstacle: env.obstacle?.message },
    jdks: findJdks(),
    agent,
    emulator: {
      qemu,
      plugin,
      available: emulatorOk,
      problem: !qemu ? 'qemu-x86_64 not found (Debian: apt-get install qemu-user)' : pluginProblem,
    },
    record: { auto: env.usable ? 'perf' : 'metadata-only', emulate: emulatorOk ? 'available' : 'unavailable' },
  };
}

function text(r: DoctorReport): string {
  const rows: [string, string][] = [
    ['cpu', `${r.cpu.vendor} ${r.cpu.model}${r.cpu.family !== undefined ? ` (family ${r.cpu.family}, model ${r.cpu.modelNumber}, stepping ${r.cpu.stepping})` : ''}`],
    ['kernel', r.kernel],
    ['intel pt', r.pt.present ? `present (perf type ${r.pt.type})` : `ABSENT${r.cpu.ptFlag ? ' (the CPU flags list intel_pt, but the kernel has no intel_pt PMU)' : ' (the CPU flags do not list intel_pt)'}`],
    ...(r.pt.summary ?? []).map((s): [string, string] => ['', s]),
    ['perf_event_paranoid', r.perf.paranoid === null ? 'absent' : `${r.perf.paranoid}: allows ${r.perf.allows}${r.perf.privileged ? ' (this process has CAP_PERFMON/CAP_SYS_ADMIN: not limited by it)' : ''}`],
    ['capture addon', r.perf.addon ? 'built' : 'NOT BUILT (run ./setup.sh)'],
    ['real capture', r.realCapture.possible ? 'possible' : `not possible: ${r.realCapture.obstacle}`],
    ['jdks', r.jdks.length ? r.jdks.map((j) => `${j.version} (${j.home})`).join('; ') : 'none found under /usr/lib/jvm or $JAVA_HOME'],
    ['agent', r.agent.built ? r.agent.path! : 'NOT BUILT (run ./setup.sh)'],
    ['qemu-x86_64', r.emulator.qemu ?? 'not found (Debian: apt-get install qemu-user)'],
    ['emulator plugin', r.emulator.plugin ?? `not built (${r.emulator.problem})`],
    ['emulator', r.emulator.available ? 'available (--pt=emulate)' : `unavailable: ${r.emulator.problem}`],
    [
      'record would use',
      r.record.auto === 'perf'
        ? 'real Intel PT through perf (--pt=auto); --pt=emulate for the emulator'
        : `metadata only with --pt=auto (no real PT); --pt=emulate: ${r.record.emulate === 'available' ? 'the emulator (available)' : 'unavailable'}`,
    ],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n';
}

export function runDoctor(o: DoctorOptions = {}): number {
  const r = doctorReport(o);
  process.stdout.write(o.json ? JSON.stringify(r, null, 2) + '\n' : text(r));
  return r.realCapture.possible ? ExitCode.Ok : ExitCode.Unsupported;
}
