/**
 * Reading the app loader's named classes (CLASS source 4) back from the recorded class path: directories, jars with
 * a manifest Class-Path, multi-release jars, stamps of changed files, the runtime-image fallback. Class files and
 * jars are made by the JDK's javac and jar tools.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { classPathOf, readClassPathClasses, readNamedClasses } from '../src';

const JAVA_HOME = path.dirname(path.dirname(fs.realpathSync(spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).stdout.trim())));
const tool = (name: string) => path.join(JAVA_HOME, 'bin', name);

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
}

describe('class-path classes', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-cp-'));
    const src = path.join(dir, 'src');
    fs.mkdirSync(path.join(src, 'p'), { recursive: true });
    fs.writeFileSync(path.join(src, 'p', 'A.java'), 'package p; public class A { public static int f() { return 1; } }');
    fs.writeFileSync(path.join(src, 'B.java'), 'public class B { static int g() { return 2; } }');
    fs.writeFileSync(path.join(src, 'C.java'), 'public class C { static int h() { return 3; } }');
    run(tool('javac'), ['--release', '8', '-d', path.join(dir, 'classes'), 'p/A.java', 'B.java', 'C.java'], src);
    // lib/c.jar holds C; main.jar holds p/A and names lib/c.jar in its manifest Class-Path
    fs.mkdirSync(path.join(dir, 'lib'));
    run(tool('jar'), ['cf', path.join(dir, 'lib', 'c.jar'), 'C.class'], path.join(dir, 'classes'));
    fs.writeFileSync(path.join(dir, 'manifest.txt'), 'Class-Path: lib/c.jar lib/missing.jar\n');
    run(tool('jar'), ['cfm', path.join(dir, 'main.jar'), path.join(dir, 'manifest.txt'), 'p/A.class'], path.join(dir, 'classes'));
    fs.renameSync(path.join(dir, 'classes', 'C.class'), path.join(dir, 'C.class')); // reachable only through the manifest
    // a multi-release jar whose version-11 B differs from its base B
    fs.mkdirSync(path.join(dir, 'mr', 'base'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'mr', 'v11'), { recursive: true });
    fs.copyFileSync(path.join(dir, 'classes', 'B.class'), path.join(dir, 'mr', 'base', 'B.class'));
    fs.writeFileSync(path.join(src, 'B.java'), 'public class B { static int g() { return 22; } }');
    run(tool('javac'), ['--release', '11', '-d', path.join(dir, 'mr', 'v11'), 'B.java'], src);
    run(tool('jar'), ['cf', path.join(dir, 'mr.jar'), '-C', path.join(dir, 'mr', 'base'), 'B.class', '--release', '11', '-C', path.join(dir, 'mr', 'v11'), 'B.class'], dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const stamp = (f: string) => {
    const st = fs.statSync(f);
    return `${st.size}:${Math.floor(st.mtimeMs / 1000)}`;
  };

  test('relative entries, manifest Class-Path and directories, in order', () => {
    const facts = classPathOf(
      [
        { name: 'jportal.class_path', value: 'main.jar:classes:nothing-here' },
        { name: 'jportal.working_dir', value: dir },
        { name: 'jportal.class_path_stamps', value: `${stamp(path.join(dir, 'main.jar'))}\n\n` },
      ],
      '17.0.9',
    )!;
    expect(facts.entries).toEqual([path.join(dir, 'main.jar'), path.join(dir, 'classes'), path.join(dir, 'nothing-here')]);
    expect(facts.javaFeature).toBe(17);
    const names = new Map([
      ['1:p/A', 'p/A'],
      ['1:C', 'C'],
      ['1:B', 'B'],
      ['1:java/lang/Object', 'java/lang/Object'],
    ]);
    const classes = new Map<string, Uint8Array>();
    const problems: string[] = [];
    const left = readClassPathClasses(names, facts, undefined, classes, problems);
    // C comes from lib/c.jar, named by main.jar's manifest
    expect([...classes.keys()].sort()).toEqual(['1:B', '1:C', '1:p/A']);
    expect(Buffer.from(classes.get('1:C')!).equals(fs.readFileSync(path.join(dir, 'C.class')))).toBe(true);
    expect([...left.values()]).toEqual(['java/lang/Object']);
    // entries missing at recording (stamp '') and missing manifest entries are not problems: the JVM lacked them too
    expect(problems).toEqual([]);
  });

  test('a changed or vanished entry is one problem line naming it', () => {
    const facts = classPathOf(
      [
        { name: 'jportal.class_path', value: `${path.join(dir, 'main.jar')}:${path.join(dir, 'gone.jar')}` },
        { name: 'jportal.class_path_stamps', value: '1:2\n3:4' },
      ],
      '17',
    );
    const problems: string[] = [];
    readClassPathClasses(new Map([['1:p/A', 'p/A']]), facts, undefined, new Map(), problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain(`${path.join(dir, 'main.jar')} changed since the recording`);
    expect(problems[1]).toContain(`${path.join(dir, 'gone.jar')} not found`);
  });

  test("multi-release jars give the recording JVM's version of a class", () => {
    const base = fs.readFileSync(path.join(dir, 'mr', 'base', 'B.class'));
    const v11 = fs.readFileSync(path.join(dir, 'mr', 'v11', 'B.class'));
    const read = (version: string) => {
      const classes = new Map<string, Uint8Array>();
      readClassPathClasses(new Map([['1:B', 'B']]), classPathOf([{ name: 'jportal.class_path', value: path.join(dir, 'mr.jar') }], version), undefined, classes, []);
      return Buffer.from(classes.get('1:B')!);
    };
    expect(read('17.0.1').equals(v11)).toBe(true);
    expect(read('10.0.2').equals(base)).toBe(true);
  });

  test('classes not on the class path come from the runtime image; no VM_INFO is one problem line', () => {
    const vm = { java_home: JAVA_HOME, java_version: '17', flags: [{ name: 'jportal.class_path', value: path.join(dir, 'classes') }] };
    const classes = new Map<string, Uint8Array>();
    const problems: string[] = [];
    readNamedClasses(new Map([['0:java/lang/String', 'java/lang/String']]), new Map([['1:B', 'B'], ['1:com/sun/tools/javac/Main', 'com/sun/tools/javac/Main']]), vm, {}, classes, problems);
    expect(problems).toEqual([]);
    expect([...classes.keys()].sort()).toEqual(['0:java/lang/String', '1:B', '1:com/sun/tools/javac/Main']);
    const none: string[] = [];
    readNamedClasses(new Map(), new Map([['1:B', 'B']]), undefined, {}, new Map(), none);
    expect(none).toHaveLength(2);
    expect(none[0]).toContain('records no class path');
  });
});
