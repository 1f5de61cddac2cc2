/**
 * `jportal doctor` and `record --pt=perf|auto` on this machine (no Intel PT): what they say and their exit codes.
 * With a fixture copy of a PT machine's sysfs, doctor reports PT present and perf as the mode record would use.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findJdks } from '../lib/jdks';
import { cleanup, REPO, runCli, tmpDir } from '../lib/run';

const hasPt = fs.existsSync('/sys/bus/event_source/devices/intel_pt/type');
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const plugin = fs.existsSync(path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so'));
const noPt = hasPt ? describe.skip : describe;
if (hasPt) console.warn('SKIP doctor-without-PT tests: this machine has Intel PT');

noPt('doctor and record on a machine without Intel PT', () => {
  test('doctor says PT is absent, names the emulator, and exits 3', () => {
    const r = runCli(['doctor']);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^intel pt\s+ABSENT/m);
    expect(r.stdout).toMatch(/^perf_event_paranoid\s+-?\d+: allows /m);
    expect(r.stdout).toMatch(/^kernel\s+Linux /m);
    expect(r.stdout).toMatch(/^record would use\s+metadata only with --pt=auto/m);
    if (qemu && plugin) expect(r.stdout).toMatch(/^emulator\s+available \(--pt=emulate\)/m);
    const j = JSON.parse(runCli(['doctor', '--json']).stdout);
    expect(j.pt.present).toBe(false);
    expect(j.realCapture.possible).toBe(false);
    expect(j.realCapture.obstacle).toMatch(/intel_pt does not exist/);
    expect(j.emulator.available).toBe(!!(qemu && plugin));
    expect(j.record).toEqual({ auto: 'metadata-only', emulate: qemu && plugin ? 'available' : 'unavailable' });
    expect(j.jdks.map((x: { feature: number }) => x.feature)).toEqual(expect.arrayContaining(findJdks().available.map((x) => x.feature)));
    expect(j.cpu.vendor).toMatch(/\w/);
  });

  test('doctor with a PT machine\'s sysfs (fixture) reports its capabilities and perf as the record mode', () => {
    const sysfs = path.join(REPO, 'packages', 'capture', 'test', 'fixtures', 'sysfs-skylake');
    const j = JSON.parse(runCli(['doctor', '--json', '--sysfs', sysfs]).stdout);
    expect(j.pt).toMatchObject({ present: true, type: 8 });
    expect(j.pt.summary).toContain('MTC yes (periods 0,3,6,9)');
    expect(j.pt.summary).toContain('IP filtering yes (2 ranges)');
    // the rest (paranoid, privileges, addon) is this machine's: perf is the mode exactly when nothing else blocks
    expect(j.record.auto).toBe(j.realCapture.possible ? 'perf' : 'metadata-only');
    expect(runCli(['doctor', '--sysfs', sysfs]).status).toBe(j.realCapture.possible ? 0 : 3);
  });

  test('record --pt=perf exits 3 with the reason and leaves no directory; --pt=auto falls back to metadata only and says why', () => {
    const dir = tmpDir('doctor');
    try {
      const r = runCli(['record', '--pt=perf', '--out', path.join(dir, 'perf'), '--', 'java', '-version']);
      expect(r.status).toBe(3);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/record --pt=perf: no Intel PT: .*intel_pt does not exist.*use --pt=emulate/);
      expect(fs.existsSync(path.join(dir, 'perf'))).toBe(false);
      expect(runCli(['record', '--aux-mb', '8', '--out', path.join(dir, 'x'), '--', 'java', '-version']).status).toBe(2);
      const jdk = findJdks().available[0];
      if (!jdk) return console.warn('SKIP record --pt=auto: no JDK');
      const auto = runCli(['record', '--json', '--out', path.join(dir, 'auto'), '--', jdk.java, '-version']);
      expect(auto.status).toBe(0);
      expect(auto.stderr).toMatch(/no real Intel PT capture: no Intel PT/);
      expect(auto.stderr).toContain('metadata only');
      expect(JSON.parse(auto.stdout).pt).toBe('none');
    } finally {
      cleanup(dir);
    }
  });
});
