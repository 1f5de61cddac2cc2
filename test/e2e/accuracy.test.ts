/**
 * `jportal accuracy`: a program recorded under the emulator without and with heavy loss, its ground truth once,
 * and the paper's table rows per thread, as a user runs it.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, runCli, tmpDir } from '../lib/run';

const jdk17 = findJdks().available.find((j) => j.feature === 17);
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const missing = [!jdk17 && 'JDK 17', !qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin (./setup.sh)'].filter(Boolean);
if (missing.length) console.warn(`SKIP accuracy e2e tests: missing ${missing.join(', ')}`);
const maybe = missing.length ? describe.skip : describe;

interface Row {
  loss: string;
  thread: string;
  pmd: number;
  pd: number;
  da: number;
  pr: number;
  ra: number | null;
  overall: number;
  bound: number;
  hotShared: number;
  hotOf: number;
  setting: string | null;
  attempts: number;
}

maybe('jportal accuracy', () => {
  test('no loss vs about half lost: PMD measured, less decoded, the table written as markdown', () => {
    const dir = tmpDir('accuracy');
    try {
      const md = path.join(dir, 'accuracy.md');
      const r = runCli(['accuracy', '--loss', '0,50', '--seed', '3', '--json', '--md', md, '--out', path.join(dir, 'work'), '--', jdk17!.java, '-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '3000'], 600_000);
      expect(r.status).toBe(0);
      const { rows } = JSON.parse(r.stdout) as { rows: Row[] };
      const main = (loss: string) => rows.find((x) => x.loss === loss && x.thread === 'main')!;
      const none = main('0%');
      const half = main('50%');
      expect(none.pmd).toBe(0);
      expect(half.pmd).toBeGreaterThan(0.2);
      // the preset is a target: re-recorded at other drain rates until main (the busiest thread) lost about half,
      // or the tries ran out (0.025: CALIBRATION_TOLERANCE, 4: CALIBRATION_ATTEMPTS)
      expect(Math.abs(half.pmd - 0.5) <= 0.025 || half.attempts === 4).toBe(true);
      expect(half.setting).toMatch(/^65536:\d+$/);
      expect(none.setting).toBeNull();
      // what was lost is not decoded: less of the truth is covered, and the overall accuracy drops with it
      expect(half.pd).toBeLessThan(none.pd);
      expect(half.overall).toBeLessThan(none.overall);
      // without loss the decoded events are nearly all right. At about half lost only ~10% of the truth is decoded,
      // in short stretches the global alignment places badly (DA measured anywhere from 0.19 to 0.78 for this seed
      // across machine loads; the bound column shows the alignment, not the decoder, is what fails there), so only
      // its range is checked below
      expect(none.da).toBeGreaterThan(0.9);
      for (const x of [none, half]) {
        expect(x.da).toBeGreaterThanOrEqual(0);
        expect(x.da).toBeLessThanOrEqual(1);
        expect(x.overall).toBeLessThanOrEqual(1);
        // no alignment matches more than the bound (per (method, bci) the smaller count, plus wildcards)
        expect(x.overall).toBeLessThanOrEqual(x.bound + 1e-9);
      }
      // recovery fills only what the PT unit lost: nothing without loss
      expect(none.pr).toBe(0);
      expect(none.ra).toBeNull();
      // with recovered events RA is defined (a share), without it is null; at this loss the comparison's alignment
      // is unreliable (see the bound), so its value is not asserted
      if (half.pr > 0) {
        expect(half.ra).not.toBeNull();
        expect(half.ra!).toBeGreaterThanOrEqual(0);
        expect(half.ra!).toBeLessThanOrEqual(1);
      } else expect(half.ra).toBeNull();
      const text = fs.readFileSync(md, 'utf8');
      expect(text).toContain('| loss | thread | PMD | PDC | PD | DA | PR | RA | overall | (bound) | top-10 hot |');
      expect(text).toContain('jportal accuracy --loss 0,50 --seed 3');
      // --out keeps what it measured
      expect(fs.existsSync(path.join(dir, 'work', 'oracle', 'oracle.json'))).toBe(true);
      expect(fs.readdirSync(path.join(dir, 'work')).filter((f) => f.startsWith('trace-')).length).toBe(2);
    } finally {
      cleanup(dir);
    }
  });

  test('bad usage: an unknown loss preset or no command is exit 2', () => {
    const a = runCli(['accuracy', '--loss', '7', '--', jdk17!.java, '-version']);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--loss wants presets/);
    const b = runCli(['accuracy']);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/no command given/);
  });
});
