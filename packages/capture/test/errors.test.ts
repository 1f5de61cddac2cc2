/**
 * Missing PMU, paranoid refusal and bad configuration: each a distinct error kind, message and exit code.
 * The errno values come from real perf_event_open calls through the addon wherever this VM can produce them.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { addonAvailable, CaptureError, captureErrorFromErrno, emptyAttr, loadAddon, openPerfEvent, PerfType, PERF_COUNT_SW_DUMMY, ReadFormat } from '../src';

const hasAddon = addonAvailable();
if (!hasAddon) console.warn('SKIP real perf_event_open errno tests: the capture addon is not built (npm run build -w @jportal/capture-native)');
const withAddon = hasAddon ? test : test.skip;

function catchError(f: () => unknown): CaptureError {
  try {
    f();
  } catch (e) {
    if (e instanceof CaptureError) return e;
    throw e;
  }
  throw new Error('no error thrown');
}

describe('errno mapping', () => {
  const cases: [string, string, string, number, RegExp][] = [
    ['ENOENT', 'perf_event_open', 'no-pmu', 3, /no intel_pt PMU.*--pt=emulate/],
    ['ENODEV', 'perf_event_open', 'no-pmu', 3, /no intel_pt PMU/],
    ['EACCES', 'perf_event_open', 'permission', 3, /refused with EACCES \(kernel\.perf_event_paranoid is 3\).*sudo sysctl kernel\.perf_event_paranoid=2/],
    ['EPERM', 'perf_event_open', 'permission', 3, /refused with EPERM/],
    ['EINVAL', 'perf_event_open', 'bad-config', 2, /rejected the configuration with EINVAL \(intel_pt config=0x1\).*jportal doctor/],
    ['EOPNOTSUPP', 'ioctl(PERF_EVENT_IOC_SET_FILTER)', 'bad-config', 2, /EOPNOTSUPP/],
    ['EBUSY', 'perf_event_open', 'busy', 1, /in use by another tracer/],
    ['EPERM', 'mmap', 'mlock-limit', 3, /perf_event_mlock_kb/],
    ['EIO', 'perf_event_open', 'system', 1, /perf_event_open failed/],
  ];
  test.each(cases)('%s from %s -> %s, exit %d', (code, syscall, kind, exit, message) => {
    const e = captureErrorFromErrno(Object.assign(new Error(`${syscall}: (${code})`), { code }), { syscall, paranoid: 3, config: 'intel_pt config=0x1' });
    expect(e.kind).toBe(kind);
    expect(e.exitCode).toBe(exit);
    expect(e.errnoCode).toBe(code);
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('\n');
  });

  test('the three acceptance cases have three distinct messages and kinds; bad config has its own exit code', () => {
    const m = (code: string) => captureErrorFromErrno({ code }, { syscall: 'perf_event_open' });
    const [pmu, perm, cfg] = [m('ENOENT'), m('EACCES'), m('EINVAL')];
    expect(new Set([pmu.kind, perm.kind, cfg.kind]).size).toBe(3);
    expect(new Set([pmu.message, perm.message, cfg.message]).size).toBe(3);
    expect([pmu.exitCode, perm.exitCode, cfg.exitCode]).toEqual([3, 3, 2]);
  });
});

describe('real system calls on this VM', () => {
  withAddon('a PMU type the kernel does not have: the real ENOENT becomes no-pmu', () => {
    const attr = emptyAttr();
    attr.type = 0xfffff;
    const e = catchError(() => openPerfEvent(loadAddon(), attr, 0, -1));
    expect(e.errnoCode).toBe('ENOENT');
    expect(e.kind).toBe('no-pmu');
    expect(e.exitCode).toBe(3);
  });

  withAddon('a configuration the kernel rejects: the real EINVAL becomes bad-config', () => {
    const attr = emptyAttr();
    attr.type = PerfType.SOFTWARE;
    attr.config = BigInt(PERF_COUNT_SW_DUMMY);
    attr.readFormat = ReadFormat.ID | (1n << 40n); // a read_format bit no kernel defines
    const e = catchError(() => openPerfEvent(loadAddon(), attr, 0, -1, 'software dummy with a bad read_format'));
    expect(e.errnoCode).toBe('EINVAL');
    expect(e.kind).toBe('bad-config');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('(software dummy with a bad read_format)');
  });

  test('an unprivileged user under perf_event_paranoid >= 2 asking for kernel events: the real EACCES becomes permission', () => {
    const setpriv = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout.trim();
    if (!hasAddon || process.getuid?.() !== 0 || !setpriv) {
      console.warn('SKIP real EACCES: needs the addon, root (to drop to nobody) and setpriv');
      return;
    }
    const addonPath = path.resolve(__dirname, '../../../native/capture/index.js');
    // cpu-clock with kernel counting (exclude_kernel = 0), on itself, as nobody without capabilities
    const script = `const a=require(${JSON.stringify(addonPath)});const b=Buffer.alloc(136);b.writeUInt32LE(1,0);b.writeUInt32LE(136,4);
      try{a.perfEventOpen(b,0,-1,-1,a.PERF_FLAG_FD_CLOEXEC);console.log('{"opened":true}')}catch(e){console.log(JSON.stringify({code:e.code,message:e.message}))}`;
    const r = spawnSync(setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', process.execPath, '-e', script], { encoding: 'utf8' });
    const paranoid = Number(require('fs').readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
    const out = JSON.parse(r.stdout.trim());
    if (paranoid < 2) {
      console.warn(`SKIP real EACCES: kernel.perf_event_paranoid is ${paranoid}, which allows this`);
      return;
    }
    expect(out.code).toBe('EACCES');
    const e = captureErrorFromErrno(out, { syscall: 'perf_event_open', paranoid });
    expect(e.kind).toBe('permission');
    expect(e.exitCode).toBe(3);
    expect(e.message).toContain(`kernel.perf_event_paranoid is ${paranoid}`);
  });
});
