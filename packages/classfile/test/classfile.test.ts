/**
 * The class-file reader and the bytecode length decoder against javap (the JDK's own disassembler) on classes
 * compiled here: every method's instruction offsets and mnemonics must equal javap's.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ClassFormatError, forEachInstruction, lineOf, opcodeName, parseClass, successors, switchTable } from '../src';

const SOURCE = `
import java.util.*;
public class Sample {
  static int table(int x) { switch (x) { case 1: return 10; case 2: return 20; case 3: return 30; default: return -1; } }
  static int lookup(int x) { switch (x) { case -100000: return 1; case 7: return 2; case 900000: return 3; default: return 0; } }
  static long wide() { int a0=0,a1=1,a2=2,a3=3,a4=4,a5=5,a6=6,a7=7,a8=8,a9=9; long big = 0; double[] d = new double[300];
    int v256 = 0; for (int i = 0; i < 300; i++) { v256 += i; d[i] = i; } int[][] m = new int[3][4]; m[1][2] = 5;
    Object o = d; if (o instanceof double[]) big += (long) ((double[]) o)[299]; return big + v256 + a9 + m[1][2]; }
  static String str(Object o) { try { return o.toString(); } catch (NullPointerException e) { return "null"; } finally { System.out.print(""); } }
  static Runnable lambda() { return () -> System.out.println("x"); }
  synchronized void sync() { Iterator<String> it = List.of("a").iterator(); while (it.hasNext()) it.next(); }
  native void nat();
  static int loops(int n) { int s = 0; for (int i = 0; i < n; i++) { if (i % 3 == 0) s += i; else if (i > 100) break;
    while (s > 1000) s /= 2; do { s++; } while (s < 0); } Object o = n > 3 ? null : "x"; if (o == null) s--; return s > 5 ? s : -s; }
  public static void main(String[] a) { System.out.println(table(2) + lookup(7) + wide() + str(null)); lambda().run(); }
}
abstract class Abs implements Runnable { abstract int f(); }
`;

const javac = spawnSync('sh', ['-c', 'command -v javac && command -v javap'], { encoding: 'utf8' });
const haveJdk = javac.status === 0;
if (!haveJdk) console.warn('SKIP javap comparison: no javac/javap on PATH (install openjdk-17-jdk-headless)');

(haveJdk ? describe : describe.skip)('against javap', () => {
  let dir = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-classfile-'));
    fs.writeFileSync(path.join(dir, 'Sample.java'), SOURCE);
    const r = spawnSync('javac', ['-d', dir, path.join(dir, 'Sample.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** javap -c -p: method header lines, then "  N: mnemonic" lines. Returns "name:bci:mnemonic" per instruction. */
  function javapInstructions(cls: string): string[] {
    const r = spawnSync('javap', ['-c', '-p', '-cp', dir, cls], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const out: string[] = [];
    let method = '';
    for (const line of r.stdout.split('\n')) {
      if (/^  static \{\};$/.test(line)) method = '<clinit>';
      else if (/^  \S.*\(.*\).*;$/.test(line)) {
        const name = /([\w$]+)\(/.exec(line)![1];
        method = name === cls ? '<init>' : name;
      }
      // (switch cases print as "  N: target": mnemonics start with a letter)
      const insn = /^\s+(\d+): ([a-z]\w*)/.exec(line);
      if (insn) out.push(`${method}:${insn[1]}:${insn[2]}`);
    }
    return out;
  }

  test.each(['Sample', 'Abs'])('%s: every method decodes to javap\'s instructions', (cls) => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, `${cls}.class`)));
    const cf = parseClass(bytes, `${cls}.class`);
    expect(cf.name).toBe(cls);
    const ours: string[] = [];
    for (const m of cf.methods) {
      if (!m.code) continue;
      expect(forEachInstruction(m.code, (bci, op) => ours.push(`${m.name}:${bci}:${opcodeName(op)}`))).toBe(true);
    }
    const theirs = javapInstructions(cls);
    expect(theirs.length).toBeGreaterThan(cls === 'Sample' ? 150 : 2);
    expect(ours).toEqual(theirs);
  });

  test('branch and switch targets equal javap\'s', () => {
    const r = spawnSync('javap', ['-c', '-p', '-cp', dir, 'Sample'], { encoding: 'utf8' });
    // javap: "  12: ifeq 30", "  5: goto 2", and switch bodies "   1: 28" / "   default: 40" under "N: tableswitch"
    const theirs = new Map<string, Set<number>>();
    let method = '';
    let sw = -1;
    for (const line of r.stdout.split('\n')) {
      if (/^  static \{\};$/.test(line)) method = '<clinit>';
      else if (/^  \S.*\(.*\).*;$/.test(line)) method = /([\w$]+)\(/.exec(line)![1].replace(/^Sample$/, '<init>');
      const insn = /^\s+(\d+): ([a-z]\w*)\s*(-?\d+)?/.exec(line);
      if (insn) {
        sw = /switch/.test(insn[2]) ? Number(insn[1]) : -1;
        if (insn[3] !== undefined && /^(if|goto|jsr)/.test(insn[2])) theirs.set(`${method}:${insn[1]}`, new Set([Number(insn[3])]));
      }
      const arm = /^\s+(-?\d+|default): (\d+)$/.exec(line);
      if (arm && sw >= 0) {
        const k = `${method}:${sw}`;
        theirs.set(k, (theirs.get(k) ?? new Set()).add(Number(arm[2])));
      }
    }
    const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Sample.class'))));
    let checked = 0;
    for (const m of cf.methods) {
      if (!m.code) continue;
      const code = m.code;
      forEachInstruction(code, (bci, op) => {
        const want = theirs.get(`${m.name}:${bci}`);
        if (!want) return;
        const next = bci + (op >= 0x99 && op <= 0xa6 || op === 0xc6 || op === 0xc7 ? 3 : -1e9);
        const got = successors(code, bci).filter((t) => t !== next);
        expect(new Set(got)).toEqual(want);
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(10);
  });

  test('methods, handlers and names', () => {
    const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Sample.class'))));
    expect(cf.superName).toBe('java/lang/Object');
    expect(cf.method('nat', '()V')!.code).toBeUndefined();
    const str = cf.method('str', '(Ljava/lang/Object;)Ljava/lang/String;')!;
    expect(str.handlers.map((h) => h.catchType)).toContain('java/lang/NullPointerException');
    expect(str.handlers.some((h) => h.catchType === undefined)).toBe(true); // finally
    // invoke operands name their targets through the constant pool
    const main = cf.method('main', '([Ljava/lang/String;)V')!;
    const targets: string[] = [];
    forEachInstruction(main.code!, (bci, op) => {
      if (op >= 0xb6 && op <= 0xb9) {
        const r = cf.methodRef((main.code![bci + 1] << 8) | main.code![bci + 2])!;
        targets.push(`${r.className}.${r.name}${r.descriptor}`);
      }
    });
    expect(targets).toEqual(expect.arrayContaining(['Sample.table(I)I', 'Sample.lookup(I)I', 'java/io/PrintStream.println(Ljava/lang/String;)V', 'java/lang/Runnable.run()V']));
    expect(cf.methodRef(1_000_000)).toBeUndefined();
    // and the classes that getstatic and invokestatic make the VM initialize
    const initialized: string[] = [];
    forEachInstruction(main.code!, (bci, op) => {
      if (op === 0xb2 || op === 0xb8) initialized.push(`${op === 0xb2 ? 'getstatic' : 'invokestatic'} ${cf.classRef((main.code![bci + 1] << 8) | main.code![bci + 2])}`);
    });
    expect(new Set(initialized)).toEqual(new Set(['getstatic java/lang/System', 'invokestatic Sample']));
    expect(cf.classRef(0)).toBeUndefined();
    expect(cf.classRef(1_000_000)).toBeUndefined();
    const abs = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Abs.class'))));
    expect(abs.interfaces).toEqual(['java/lang/Runnable']);
  });

  test('line numbers and source file equal javap -l\'s LineNumberTable', () => {
    const r = spawnSync('javap', ['-l', '-p', '-cp', dir, 'Sample'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    // "  static int table(int);" ... "    LineNumberTable:" "      line 4: 0"
    const theirs = new Map<string, [number, number][]>();
    let method = '';
    for (const line of r.stdout.split('\n')) {
      if (/^  static \{\};$/.test(line)) method = '<clinit>';
      else if (/^  \S.*\(.*\).*;$/.test(line)) method = /([\w$]+)\(/.exec(line)![1].replace(/^Sample$/, '<init>');
      const ln = /^\s+line (\d+): (\d+)$/.exec(line);
      if (ln) theirs.set(method, [...(theirs.get(method) ?? []), [Number(ln[2]), Number(ln[1])]]);
    }
    const cf = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'Sample.class'))));
    expect(cf.sourceFile).toBe('Sample.java');
    let checked = 0;
    for (const m of cf.methods) {
      const want = theirs.get(m.name);
      if (!m.code || !want || m.name.startsWith('lambda$')) continue;
      const ours: [number, number][] = [];
      for (let i = 0; i < m.lineNumbers.length; i += 2) ours.push([m.lineNumbers[i], m.lineNumbers[i + 1]]);
      expect(ours).toEqual([...want].sort((a, b) => a[0] - b[0]));
      for (const [bci, line] of want) expect(lineOf(m, bci)).toBe(line);
      checked++;
    }
    expect(checked).toBeGreaterThan(8);
    // the source lines javac gives: table() is on line 4 of SOURCE (which starts with a newline)
    expect(lineOf(cf.method('table', '(I)I')!, 0)).toBe(4);
    const none = spawnSync('javac', ['-g:none', '-d', path.join(dir, 'nolines'), path.join(dir, 'Sample.java')], { encoding: 'utf8' });
    expect(none.status).toBe(0);
    const bare = parseClass(new Uint8Array(fs.readFileSync(path.join(dir, 'nolines', 'Sample.class'))));
    expect(bare.sourceFile).toBeUndefined();
    expect(bare.method('table', '(I)I')!.lineNumbers.length).toBe(0);
    expect(lineOf(bare.method('table', '(I)I')!, 0)).toBe(-1);
  });

  test('a truncated or corrupt class file is a ClassFormatError naming the offset', () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'Sample.class')));
    for (let cut = 0; cut < bytes.length; cut += 7) {
      expect(() => parseClass(bytes.subarray(0, cut), 'Sample.class')).toThrow(ClassFormatError);
    }
    const bad = Uint8Array.from(bytes);
    bad[10] = 99; // first constant pool tag
    expect(() => parseClass(bad, 'Sample.class')).toThrow(/Sample.class: byte 10: bad constant pool tag 99/);
  });
});

describe('switchTable', () => {
  const be32 = (x: number) => [(x >>> 24) & 0xff, (x >>> 16) & 0xff, (x >>> 8) & 0xff, x & 0xff];
  test('tableswitch and lookupswitch operands, padded from the start of the code; cut-short operands are undefined', () => {
    // bci 1: tableswitch (2 pad bytes), default +40, keys -1..1 -> +20, +24, +28
    const table = Uint8Array.from([0x00, 0xaa, 0, 0, ...be32(40), ...be32(-1), ...be32(1), ...be32(20), ...be32(24), ...be32(28)]);
    const t = switchTable(table, 1)!;
    expect(t.defaultTarget).toBe(41);
    expect(Array.from(t.keys)).toEqual([-1, 0, 1]);
    expect(Array.from(t.targets)).toEqual([21, 25, 29]);
    // bci 0: lookupswitch (3 pad bytes), default +12, keys 7 -> +30, 1000 -> +36
    const lookup = Uint8Array.from([0xab, 0, 0, 0, ...be32(12), ...be32(2), ...be32(7), ...be32(30), ...be32(1000), ...be32(36)]);
    const l = switchTable(lookup, 0)!;
    expect(l.defaultTarget).toBe(12);
    expect(Array.from(l.keys)).toEqual([7, 1000]);
    expect(Array.from(l.targets)).toEqual([30, 36]);
    expect(successors(lookup, 0).sort((a, b) => a - b)).toEqual([12, 30, 36]);
    expect(switchTable(table.subarray(0, table.length - 1), 1)).toBeUndefined();
    expect(switchTable(lookup.subarray(0, 20), 0)).toBeUndefined();
    expect(successors(lookup.subarray(0, 20), 0)).toEqual([]);
    expect(switchTable(table, 0)).toBeUndefined(); // a nop
  });
});
