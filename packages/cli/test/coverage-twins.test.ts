/**
 * Lines the two coverage reports disagree on, sorted by their bytecode: compiled with javac into a real jar, two
 * switch arms that differ only in a constant are twins of each other; a line with other bytecode is not.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { lineShapes, twinLines } from '../src/coverage-twins';

const haveJdk = spawnSync('sh', ['-c', 'command -v javac && command -v jar'], { encoding: 'utf8' }).status === 0;
if (!haveJdk) console.warn('SKIP coverage-twins test: no javac/jar on PATH (install openjdk-17-jdk-headless)');

const SOURCE = `package p;
public class Quotes {
  static int skip(String s, int i) {
    switch (s.charAt(i)) {
      case '\\'':
        i++;
        while (s.charAt(i) != '\\'') i++;
        return i;
      case '"':
        i++;
        while (s.charAt(i) != '"') i++;
        return i;
      default:
        return i + s.length() * 2;
    }
  }
}
`;

(haveJdk ? describe : describe.skip)('twin lines of a real jar', () => {
  let dir = '';
  let jar = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-twins-'));
    fs.mkdirSync(path.join(dir, 'p'));
    fs.writeFileSync(path.join(dir, 'p', 'Quotes.java'), SOURCE);
    expect(spawnSync('javac', ['--release', '17', '-d', path.join(dir, 'classes'), path.join(dir, 'p', 'Quotes.java')]).status).toBe(0);
    jar = path.join(dir, 'q.jar');
    expect(spawnSync('jar', ['cf', jar, '-C', path.join(dir, 'classes'), '.']).status).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the arms of a switch that differ in a constant are twins; other code is not', () => {
    const shapes = lineShapes([jar]);
    // lines 5-8: the single-quote arm; 9-12: the double-quote arm; 14: the default arm
    expect(shapes.get('p/Quotes.java:7')).toBeDefined();
    expect(shapes.get('p/Quotes.java:7')).toBe(shapes.get('p/Quotes.java:11'));
    expect(shapes.get('p/Quotes.java:14')).not.toBe(shapes.get('p/Quotes.java:7'));
    // (line 6, i++, is one iinc: too common to call a twin)
    expect(shapes.get('p/Quotes.java:6')).toBeUndefined();
    const t = twinLines(['p/Quotes.java:6', 'p/Quotes.java:7', 'p/Quotes.java:8', 'p/Quotes.java:14'], ['p/Quotes.java:10', 'p/Quotes.java:11', 'p/Quotes.java:12'], shapes);
    expect(t.onlyFirst).toBe(2);
    expect(t.onlySecond).toBe(2);
    expect(t.sample).toContain('p/Quotes.java:7 ~ p/Quotes.java:11');
  });

  test('a jar that is no zip is passed over', () => {
    const bad = path.join(dir, 'bad.jar');
    fs.writeFileSync(bad, 'not a zip');
    expect(lineShapes([bad]).size).toBe(0);
  });
});
