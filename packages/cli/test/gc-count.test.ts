/**
 * bench apps matches the garbage collections of its JaCoCo run to those of the plain run (finalizers run only after
 * a collection), counting them in a real JVM's -Xlog:gc output: a program that asks for 3 full collections, with a
 * young generation too large for its allocations to fill, collects exactly 3 times; without the requests, never.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { gcCount } from '../src/commands/bench';

const java = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' }).stdout.trim();
if (!java) console.warn('SKIP gcCount test: no java on PATH');
const maybe = java ? test : test.skip;

maybe('gcCount counts the collections a JVM logs with -Xlog:gc', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-gc-'));
  try {
    const src = path.join(dir, 'Collect.java');
    fs.writeFileSync(src, 'public class Collect { public static void main(String[] a) { for (int i = 0; i < Integer.parseInt(a[0]); i++) System.gc(); } }\n');
    const run = (n: number): string => {
      const log = path.join(dir, `gc-${n}.log`);
      const r = spawnSync(java, ['-XX:+UseSerialGC', '-Xmn256m', '-Xmx1g', `-Xlog:gc:file=${log}`, src, String(n)], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      return fs.readFileSync(log, 'utf8');
    };
    const three = run(3);
    expect(three).toContain('Pause Full (System.gc())');
    expect(gcCount(three)).toBe(3);
    expect(gcCount(run(0))).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
