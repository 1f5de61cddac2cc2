/**
 * A live Intel PT capture of one process (cannot run without the PMU; everything it decides is in the modules it
 * calls, which are tested on their own): per-CPU events bound to the process with inherit (new threads and
 * children are followed; the kernel refuses to mmap an inherited per-thread event), each with its data ring and
 * AUX area, drained by PerfCaptureCore whenever poll() says a watermark was crossed.
 */
import * as fs from 'fs';
import { CaptureAddon, loadAddon, NativeRing, openPerfEvent, POLLERR, POLLHUP, readParanoid } from './addon';
import { PT_SAMPLE_TYPE, ptEventAttr } from './attr';
import { CaptureLayout, CaptureMode, CaptureStats, PerfCaptureCore } from './capture-core';
import { CaptureError, captureErrorFromErrno } from './errors';
import { discoverPtPmu, PtPmu } from './pmu';
import { buildPtConfig, describeTerms, PtConfigOptions } from './pt-config';

export interface PerfSessionOptions {
  /** the trace directory (pt/ is written inside) */
  dir: string;
  /** the process to trace (stopped before exec when enableOnExec) */
  pid: number;
  pt?: PtConfigOptions;
  mode?: CaptureMode;
  /** AUX area per CPU in MiB (power of two; default 4) */
  auxMb?: number;
  /** data ring per CPU in KiB (power of two; default 512) */
  dataKb?: number;
  /** start tracing when the process execs (default true) */
  enableOnExec?: boolean;
  /** perf address filter "filter START/SIZE@FILE", for a file-backed code cache */
  filter?: string;
  sysfsRoot?: string;
  /** CPUs to open events on (default: /sys/devices/system/cpu/online) */
  cpus?: number[];
}

/** "0-3,5,7-8" -> [0,1,2,3,5,7,8] */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

export function onlineCpus(sysfsRoot = '/sys'): number[] {
  return parseCpuList(fs.readFileSync(`${sysfsRoot}/devices/system/cpu/online`, 'utf8'));
}

/** TSC ticks per CTC tick from CPUID leaf 0x15 (EBX/EAX), 0 when not enumerated. */
export function ctcRatioFromCpuid(leaf15: [number, number, number, number] | null): number {
  if (!leaf15 || !leaf15[0] || !leaf15[1]) return 0;
  return leaf15[1] / leaf15[0];
}

function pow2Pages(bytes: number, pageSize: number, what: string): number {
  const pages = Math.max(1, Math.round(bytes / pageSize));
  if (pages & (pages - 1)) throw new CaptureError('bad-config', `${what}: ${bytes} bytes is not a power-of-two number of pages`);
  return pages;
}

export class PerfSession {
  private readonly events: { cpu: number; fd: number; ring: NativeRing }[] = [];
  private core?: PerfCaptureCore;
  private stopped = false;

  private constructor(
    private readonly addon: CaptureAddon,
    readonly pmu: PtPmu,
    readonly configText: string,
  ) {}

  /** Opens and maps one event per CPU; throws CaptureError (no-pmu, permission, bad-config, mlock-limit, ...). */
  static open(o: PerfSessionOptions): PerfSession {
    const pmu = discoverPtPmu(o.sysfsRoot);
    const addon = loadAddon();
    const cfg = buildPtConfig(pmu, o.pt);
    const mode = o.mode ?? 'full';
    const page = addon.pageSize();
    const auxPages = pow2Pages((o.auxMb ?? 4) << 20, page, '--aux-mb');
    const dataPages = pow2Pages((o.dataKb ?? 512) << 10, page, 'data ring');
    const attr = ptEventAttr(pmu, cfg, {
      mode,
      auxWatermark: (auxPages * page) / 4,
      wakeupWatermark: (dataPages * page) / 4,
      enableOnExec: o.enableOnExec ?? true,
      inherit: true,
    });
    const session = new PerfSession(addon, pmu, describeTerms(cfg.terms));
    const cpus = o.cpus ?? onlineCpus(o.sysfsRoot);
    try {
      for (const cpu of cpus) {
        const fd = openPerfEvent(addon, attr, o.pid, cpu, `intel_pt/${session.configText}/u config=0x${cfg.config.toString(16)}`);
        let ring: NativeRing;
        try {
          ring = new addon.Ring(fd, dataPages, auxPages, mode === 'full');
        } catch (e) {
          fs.closeSync(fd);
          throw (e as { code?: string }).code ? captureErrorFromErrno(e, { syscall: 'mmap', paranoid: readParanoid() }) : e;
        }
        session.events.push({ cpu, fd, ring });
        if (o.filter) {
          try {
            addon.setFilter(fd, o.filter);
          } catch (e) {
            throw captureErrorFromErrno(e, { syscall: 'ioctl(PERF_EVENT_IOC_SET_FILTER)', config: o.filter });
          }
        }
      }
    } catch (e) {
      session.close();
      throw e;
    }
    const clock = addon.clockPair();
    const psb = cfg.terms.psb_period;
    session.core = new PerfCaptureCore(
      {
        dir: o.dir,
        layout: 'per-cpu' as CaptureLayout,
        mode,
        cpus: Math.max(...cpus) + 1,
        sampleType: PT_SAMPLE_TYPE,
        header: {
          psbPeriodBytes: 2 ** ((psb ?? 0) + 11),
          ipFiltering: !!o.filter,
          returnCompression: !cfg.terms.noretcomp,
          mtc: !!cfg.terms.mtc,
          cyc: !!cfg.terms.cyc,
          ctcRatio: ctcRatioFromCpuid(addon.cpuid(0x15, 0)),
          mtcFreq: cfg.terms.mtc_period ?? 0,
          nomFreq: pmu.maxNonturboRatio ?? 0,
          tsc: clock.tsc,
          monoNs: clock.monoNs,
          pmuType: pmu.type,
          config: cfg.config,
          filter: o.filter,
        },
      },
      session.events.map((e) => ({ key: e.cpu, view: e.ring })),
    );
    return session;
  }

  /** Enables the events now (instead of at exec). */
  enable(): void {
    for (const e of this.events) this.addon.enable(e.fd);
  }

  /** Drains until `done()` says so; waits in poll() (wakeup watermarks), never spins. */
  async pump(done: () => boolean, pollMs = 100): Promise<void> {
    let fds = this.events.map((e) => e.fd);
    while (!done() && !this.stopped) {
      const revents = fds.length ? await this.addon.pollAsync(fds, pollMs) : (await new Promise((r) => setTimeout(r, pollMs)), []);
      // an event whose task has exited reports POLLHUP forever: stop waiting on it (its ring is still drained)
      fds = fds.filter((_fd, i) => !(revents[i] & (POLLHUP | POLLERR)));
      this.core!.drainRound(this.addon.rdtsc());
    }
  }

  /** Disables the events, drains what is left, writes the end of the sideband and closes everything. */
  stop(): CaptureStats {
    this.stopped = true;
    for (const e of this.events) {
      try {
        this.addon.disable(e.fd);
      } catch {
        // the task is gone: nothing more will be written anyway
      }
    }
    const stats = this.core!.finish(this.addon.rdtsc());
    this.close();
    return stats;
  }

  private close(): void {
    for (const e of this.events.splice(0)) {
      e.ring.unmap();
      fs.closeSync(e.fd);
    }
  }
}
