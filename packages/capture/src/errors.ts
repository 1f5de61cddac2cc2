/**
 * Typed errors of a perf capture, each with the exit code of the CLI's convention (0 ok, 1 failed, 2 bad usage
 * or input, 3 unsupported environment) and a one-line message that names the fix.
 */

export type CaptureErrorKind =
  /** No intel_pt PMU: not an Intel CPU with PT, a VM without PT passthrough, or a kernel without PT support. */
  | 'no-pmu'
  /** perf_event_open refused by kernel.perf_event_paranoid (or missing CAP_PERFMON). */
  | 'permission'
  /** The AUX/data mmap exceeds the locked-memory allowance (kernel.perf_event_mlock_kb / RLIMIT_MEMLOCK). */
  | 'mlock-limit'
  /** The kernel rejected the configuration (EINVAL, EOPNOTSUPP): a config value the PMU does not support. */
  | 'bad-config'
  /** The PMU is in use (EBUSY): another Intel PT session, or a hypervisor, holds it. */
  | 'busy'
  /** The capture addon (native/capture) is not built. */
  | 'addon-missing'
  /** Anything else from a system call. */
  | 'system';

export const CAPTURE_EXIT_CODES: Record<CaptureErrorKind, 1 | 2 | 3> = {
  'no-pmu': 3,
  permission: 3,
  'mlock-limit': 3,
  'bad-config': 2,
  busy: 1,
  'addon-missing': 3,
  system: 1,
};

export class CaptureError extends Error {
  readonly exitCode: 1 | 2 | 3;
  constructor(
    readonly kind: CaptureErrorKind,
    message: string,
    /** errno name of the system call that failed, when one did (ENOENT, EACCES, ...) */
    readonly errnoCode?: string,
  ) {
    super(message);
    this.name = 'CaptureError';
    this.exitCode = CAPTURE_EXIT_CODES[kind];
  }
}

/** A trace directory or ring the capture cannot make sense of (bounds, sizes): the producer broke the protocol. */
export class PerfProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PerfProtocolError';
  }
}

/** What the failing call was about, to make the message specific. */
export interface ErrnoContext {
  /** perf_event_open, mmap, ioctl(...) */
  syscall: string;
  /** kernel.perf_event_paranoid when known */
  paranoid?: number;
  /** a readable description of the attr (e.g. "intel_pt config=0x300e601"), for EINVAL */
  config?: string;
}

/** Maps an errno from the addon (err.code) to a CaptureError; anything unrecognized becomes kind 'system'. */
export function captureErrorFromErrno(err: unknown, ctx: ErrnoContext): CaptureError {
  const code = (err as { code?: string })?.code ?? '';
  const detail = err instanceof Error ? err.message : String(err);
  const paranoid = ctx.paranoid === undefined ? '' : ` (kernel.perf_event_paranoid is ${ctx.paranoid})`;
  if (ctx.syscall.startsWith('mmap') && (code === 'EPERM' || code === 'ENOMEM'))
    return new CaptureError(
      'mlock-limit',
      `${ctx.syscall} of the perf buffers failed with ${code}: they exceed the locked-memory allowance; raise it with \`sudo sysctl kernel.perf_event_mlock_kb=<KiB>\` (or ulimit -l) or ask for smaller buffers (--aux-mb)`,
      code,
    );
  switch (code) {
    case 'ENOENT':
    case 'ENODEV':
      return new CaptureError(
        'no-pmu',
        `${ctx.syscall} failed with ${code}: the kernel has no intel_pt PMU (no Intel PT on this CPU or VM, or a kernel without CONFIG_PERF_EVENTS_INTEL_PT); use --pt=emulate`,
        code,
      );
    case 'EACCES':
    case 'EPERM':
      return new CaptureError(
        'permission',
        `${ctx.syscall} was refused with ${code}${paranoid}: user-space tracing of your own processes needs kernel.perf_event_paranoid <= 2; fix with \`sudo sysctl kernel.perf_event_paranoid=2\` (or run with CAP_PERFMON)`,
        code,
      );
    case 'EINVAL':
    case 'EOPNOTSUPP':
      return new CaptureError(
        'bad-config',
        `${ctx.syscall} rejected the configuration with ${code}${ctx.config ? ` (${ctx.config})` : ''}: a value this PMU does not support; see \`jportal doctor\` for the supported caps and drop or change the option`,
        code,
      );
    case 'EBUSY':
      return new CaptureError('busy', `${ctx.syscall} failed with EBUSY: Intel PT is in use by another tracer (another perf session or a hypervisor); stop it and retry`, code);
    default:
      return new CaptureError('system', `${ctx.syscall} failed: ${detail}`, code || undefined);
  }
}
