/**
 * A killed analysis cannot remove its spill directory (gigabytes at a full size); the next analysis into the same
 * report directory removes those whose process is gone, and leaves a live one's and everything else alone.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { removeStaleSpills } from '../src/commands/analyze';

test('spill directories of processes that are gone are removed; a live process\'s and other files stay', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-stale-'));
  try {
    // a process that has exited: its pid is free (not reused this quickly)
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const dead = path.join(out, `.events-${gone}-abc123`);
    const live = path.join(out, `.events-${process.pid}-def456`);
    for (const d of [dead, live]) {
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, '0.events'), 'x');
    }
    fs.writeFileSync(path.join(out, 'hot-methods.txt'), 'kept');
    fs.mkdirSync(path.join(out, '.events-old-style'));
    const logged: string[] = [];
    expect(removeStaleSpills(out, { info: (m) => logged.push(m) })).toBe(1);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    expect(fs.readdirSync(out).sort()).toEqual([`.events-${process.pid}-def456`, '.events-old-style', 'hot-methods.txt'].sort());
    expect(logged).toEqual([expect.stringContaining(`process ${gone}`)]);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
