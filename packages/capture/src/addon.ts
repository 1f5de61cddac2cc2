/**
 * The native addon (native/capture, @jportal/capture-native): system calls only. Loaded lazily so that
 * everything else in this package works (and is tested) without it.
 */
import * as fs from 'fs';
import { PerfEventAttr, serializeAttr } from './attr';
import { CaptureError, captureErrorFromErrno } from './errors';
import type { PerfMmapView } from './ring';

export interface NativeRing extends PerfMmapView {
  dataTail(): bigint;
  auxTail(): bigint;
  unmap(): void;
}

export interface CaptureAddon {
  perfEventOpen(attr: Buffer, pid: number, cpu: number, groupFd: number, flags: number): number;
  enable(fd: number): void;
  disable(fd: number): void;
  setOutput(fd: number, target: number): void;
  setFilter(fd: number, filter: string): void;
  /** revents per fd, after waiting in a worker thread (POLLIN = 1, POLLHUP = 16) */
  pollAsync(fds: number[], timeoutMs: number): Promise<number[]>;
  rdtsc(): bigint;
  clockPair(): { tsc: bigint; monoNs: bigint };
  cpuid(leaf: number, subleaf: number): [number, number, number, number] | null;
  pageSize(): number;
  Ring: new (fd: number, dataPages: number, auxPages: number, auxWritable: boolean) => NativeRing;
  PERF_FLAG_FD_CLOEXEC: number;
}

export const POLLIN = 0x1;
export const POLLERR = 0x8;
export const POLLHUP = 0x10;

let cached: CaptureAddon | undefined;
let loadError: string | undefined;

/** The addon, or a CaptureError('addon-missing') that says how to build it. */
export function loadAddon(): CaptureAddon {
  if (cached) return cached;
  try {
    cached = require('@jportal/capture-native') as CaptureAddon;
    return cached;
  } catch (e) {
    loadError = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new CaptureError('addon-missing', `the capture addon is not built (${loadError}); run ./setup.sh or \`npm run build -w @jportal/capture-native\``);
  }
}

/** True when the addon loads. */
export function addonAvailable(): boolean {
  try {
    loadAddon();
    return true;
  } catch {
    return false;
  }
}

/** kernel.perf_event_paranoid, or undefined when perf events are absent from the kernel. */
export function readParanoid(procRoot = '/proc'): number | undefined {
  try {
    const v = Number(fs.readFileSync(`${procRoot}/sys/kernel/perf_event_paranoid`, 'utf8').trim());
    return Number.isInteger(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** perf_event_open through the addon, with errno turned into a CaptureError whose message names the fix. */
export function openPerfEvent(addon: CaptureAddon, attr: PerfEventAttr, pid: number, cpu: number, describe?: string): number {
  try {
    return addon.perfEventOpen(serializeAttr(attr), pid, cpu, -1, addon.PERF_FLAG_FD_CLOEXEC);
  } catch (e) {
    if (!(e as { code?: string }).code) throw e;
    throw captureErrorFromErrno(e, { syscall: 'perf_event_open', paranoid: readParanoid(), config: describe ?? `type=${attr.type} config=0x${attr.config.toString(16)}` });
  }
}
