/**
 * Coverage on classes compiled here with javac and synthetic event streams that follow the real bytecode:
 * instruction, line and branch coverage (observed vs recovered-only), JaCoCo's counters and method filters,
 * branch edges only within a frame and never across a gap, lcov read back, jacoco.xml against JaCoCo's DTD
 * (when xmllint and libjacoco-java are installed), the HTML view and the per-class source map.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { allMappings, fromMap } from '@jridgewell/gen-mapping';
import { ClassFile, parseClass, successors } from '@jportal/classfile';
import { readZip } from '@jportal/classfile';
import { Analysis, AnalysisMethod, Kind, Origin, ThreadEvents } from '../src';
import { computeCoverage, Coverage, formatJacocoXml, formatLcov, Hit, javaSpans, MethodCoverage, reportCounters, writeCoverage } from '../src/coverage';

const SOURCE = `import java.util.function.IntSupplier;
public class Cov {
  private Cov() {}
  static int sign(int x) {
    if (x > 0)
      return 1;
    else if (x < 0)
      return -1;
    return 0; // ZERO
  }
  static int pick(int x) {
    switch (x) {
      case 1: return 10;
      case 2: return 20;
      default: return 0;
    }
  }
  static int tern(int x) { return x > 5 ? x : -x; }
  static int never(int x) { return x * 2; }
  static IntSupplier lam(int x) { return () -> x + 1; }
}
class CovCmp implements java.util.Comparator<String> {
  public int compare(String a, String b) { return 0; }
}
`;

/** 1-based line of the first source line containing `text` */
const lineOf = (text: string) => SOURCE.split('\n').findIndex((l) => l.includes(text)) + 1;

const haveJavac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).status === 0;
if (!haveJavac) console.warn('SKIP coverage unit tests: no javac on PATH (install openjdk-17-jdk-headless)');
const haveXmllint = spawnSync('sh', ['-c', 'command -v xmllint'], { encoding: 'utf8' }).status === 0;
const REPORT_JAR = '/usr/share/java/org.jacoco.report.jar';
if (!haveXmllint || !fs.existsSync(REPORT_JAR))
  console.warn(`SKIP jacoco.xml DTD validation: ${!haveXmllint ? 'xmllint (libxml2-utils)' : 'libjacoco-java'} not installed`);

/** Events of one thread, appended call by call. */
class ThreadBuilder {
  kind: number[] = [];
  method: number[] = [];
  bci: number[] = [];
  origin: number[] = [];
  constructor(private readonly a: Analysis) {}

  event(kind: Kind, method: number, bci: number, origin = Origin.Observed): this {
    this.kind.push(kind);
    this.method.push(method);
    this.bci.push(bci);
    this.origin.push(origin);
    return this;
  }

  /**
   * Runs method `id` from bci 0 to a return, taking at each conditional branch the successor `choices[k]`
   * (index into successors(): if* 0 = fall through, 1 = jump; switches: 0 = default, then the distinct cases).
   */
  call(id: number, choices: number[], origin = Origin.Observed, gapAfterFirstBranch = false): this {
    const code = this.a.methods[id].info!.code!;
    this.event(Kind.Entry, id, -1);
    let bci = 0;
    let branch = 0;
    for (let steps = 0; steps < 1000; steps++) {
      this.event(Kind.Bytecode, id, bci, origin);
      const next = successors(code, bci);
      if (next.length === 0) break;
      const op = code[bci];
      const conditional = (op >= 0x99 && op <= 0xa6) || op === 0xc6 || op === 0xc7 || op === 0xaa || op === 0xab;
      if (conditional) {
        if (gapAfterFirstBranch && branch === 0) this.event(Kind.Gap, -1, 0);
        bci = next[choices[branch++]];
      } else bci = next[0];
    }
    return this.event(Kind.Exit, id, -1);
  }

  build(name: string): ThreadEvents {
    const n = this.kind.length;
    return {
      name, tid: 1, javaTid: 1, length: n, kind: Uint8Array.from(this.kind), method: Int32Array.from(this.method),
      bci: Int32Array.from(this.bci), opcode: new Int16Array(n).fill(-1), tsc: new Float64Array(n).fill(NaN),
      endTsc: new Float64Array(n).fill(NaN), origin: Uint8Array.from(this.origin), tier: new Uint8Array(n),
    };
  }
}

(haveJavac ? describe : describe.skip)('coverage', () => {
  let dir = '';
  let classes: ClassFile[] = [];
  let base: Analysis;
  const ids = new Map<string, number>();
  const id = (key: string) => {
    const i = ids.get(key);
    if (i === undefined) throw new Error(`no method ${key}`);
    return i;
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-coverage-'));
    fs.writeFileSync(path.join(dir, 'Cov.java'), SOURCE);
    const r = spawnSync('javac', ['-d', dir, path.join(dir, 'Cov.java')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    classes = ['Cov', 'CovCmp'].map((c) => parseClass(fs.readFileSync(path.join(dir, `${c}.class`)), c));
    const methods: AnalysisMethod[] = [];
    for (const cf of classes)
      for (const info of cf.methods) {
        ids.set(`${cf.name}.${info.name}`, methods.length);
        methods.push({ className: cf.name, name: info.name, signature: info.descriptor, classFile: cf, info });
      }
    // a JDK method: left out by default
    const objectInit = new Uint8Array([0xb1]);
    ids.set('java/lang/Object.<init>', methods.length);
    methods.push({ className: 'java/lang/Object', name: '<init>', signature: '()V', info: { access: 1, name: '<init>', descriptor: '()V', code: objectInit, maxStack: 0, maxLocals: 1, handlers: [], lineNumbers: new Uint32Array(0) } });
    base = { source: { kind: 'oracle', dir }, methods, threads: [], tscPerNs: 0, problems: [] };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** thread A: sign(5), sign(-3), pick(2), lam(3), Object.<init>; thread B: tern(9) recovered only, the lambda body */
  function analysis(): Analysis {
    const lambda = [...ids.keys()].find((k) => k.startsWith('Cov.lambda$'))!;
    const a = new ThreadBuilder(base)
      .call(id('Cov.sign'), [0])
      .call(id('Cov.sign'), [1, 0])
      .call(id('Cov.pick'), [2])
      .call(id('Cov.lam'), [])
      .call(id('java/lang/Object.<init>'), []);
    const b = new ThreadBuilder(base).call(id('Cov.tern'), [0], Origin.Recovered).call(id(lambda), []);
    return { ...base, threads: [a.build('A'), b.build('B')] };
  }

  const method = (cov: Coverage, cls: string, name: string): MethodCoverage => cov.classes.find((c) => c.name === cls)!.methods.find((m) => m.name === name)!;
  const lineHit = (m: MethodCoverage, line: number) => {
    let h = 0;
    for (let k = 0; k < m.insns.length; k++) if (m.lines[k] === line) h |= m.hits[k];
    return h;
  };

  test('instructions, lines and branch edges; observed vs recovered-only; JDK left out', () => {
    const cov = computeCoverage(analysis());
    expect(cov.classes.map((c) => c.name)).toEqual(['Cov']);
    expect(cov.stats).toMatchObject({ badBci: 0, unexpectedSuccessors: 0, eventsWithoutBytes: 0 });
    const sign = method(cov, 'Cov', 'sign');
    expect(lineHit(sign, lineOf('if (x > 0)'))).toBe(Hit.Observed);
    expect(lineHit(sign, lineOf('return -1'))).toBe(Hit.Observed);
    expect(lineHit(sign, lineOf('ZERO'))).toBe(Hit.None);
    // ifle: both edges; ifge: fall-through only
    expect(sign.branches.map((b) => Array.from(b.hits))).toEqual([[1, 1], [1, 0]]);
    expect(sign.branches.map((b) => Array.from(b.counts))).toEqual([[1, 1], [1, 0]]);
    const pick = method(cov, 'Cov', 'pick');
    expect(pick.branches).toHaveLength(1);
    expect(pick.branches[0].targets).toHaveLength(3); // default, case 1, case 2
    expect(Array.from(pick.branches[0].hits)).toEqual([0, 0, 1]);
    const tern = method(cov, 'Cov', 'tern');
    expect(lineHit(tern, lineOf('static int tern'))).toBe(Hit.Recovered);
    expect(Array.from(tern.branches[0].hits)).toEqual([Hit.Recovered, 0]);
    expect(method(cov, 'Cov', 'never').hits.every((h) => h === 0)).toBe(true);
    // include: everything
    const all = computeCoverage(analysis(), { include: () => true });
    expect(all.classes.map((c) => c.name)).toEqual(['Cov']);
    expect(all.stats.classesWithoutBytes).toEqual(['java/lang/Object']);
    expect(all.stats.eventsWithoutBytes).toBe(1);
  });

  test('JaCoCo filters: private empty constructor and bridge left out, the lambda body kept', () => {
    const cov = computeCoverage(analysis(), { include: () => true });
    const cov2 = computeCoverage({ ...analysis(), threads: [new ThreadBuilder(base).call(id('CovCmp.compare'), []).build('C')] });
    const cmp = cov2.classes.find((c) => c.name === 'CovCmp')!;
    const filtered = Object.fromEntries(cmp.methods.map((m) => [`${m.name}${m.descriptor}`, m.filtered ?? '']));
    expect(filtered).toEqual({ '<init>()V': '', 'compare(Ljava/lang/String;Ljava/lang/String;)I': '', 'compare(Ljava/lang/Object;Ljava/lang/Object;)I': 'synthetic' });
    const c = cov.classes.find((x) => x.name === 'Cov')!;
    expect(c.methods.find((m) => m.name === '<init>')!.filtered).toBe('private empty constructor');
    expect(c.methods.find((m) => m.name.startsWith('lambda$'))!.filtered).toBeUndefined();
  });

  test("JaCoCo's counters", () => {
    const r = reportCounters(computeCoverage(analysis()));
    const cls = r.packages[0].classes[0];
    const sign = cls.methods.find((m) => m.mc.name === 'sign')!.node.counters;
    expect(sign.BRANCH).toEqual({ missed: 1, covered: 3 });
    expect(sign.LINE).toEqual({ missed: 1, covered: 4 });
    // per branch instruction: covered' = max(0, covered - 1), missed = total - covered' - 1; +1 for the method
    expect(sign.COMPLEXITY).toEqual({ missed: 1, covered: 2 });
    expect(sign.METHOD).toEqual({ missed: 0, covered: 1 });
    // methods: sign pick tern never lam lambda (the private constructor is filtered)
    expect(cls.counters.METHOD).toEqual({ missed: 1, covered: 5 });
    expect(cls.counters.CLASS).toEqual({ missed: 0, covered: 1 });
    expect(cls.counters.recoveredLines).toBe(1);
    expect(cls.counters.recoveredBranches).toBe(1);
    // class lines merge per line: lam and its lambda body share a line
    const lamLine = lineOf('static IntSupplier lam');
    expect(cls.lines.get(lamLine)!.ci).toBeGreaterThan(0);
    expect(r.counters.LINE.covered + r.counters.LINE.missed).toBe(cls.lines.size);
  });

  test('branch edges only within a frame, never across a gap; unexpected successors counted', () => {
    const sign = id('Cov.sign');
    const gap = computeCoverage({ ...base, threads: [new ThreadBuilder(base).call(sign, [1, 0], Origin.Observed, true).build('G')] });
    expect(Array.from(method(gap, 'Cov', 'sign').branches[0].hits)).toEqual([0, 0]);
    expect(Array.from(method(gap, 'Cov', 'sign').branches[1].hits)).toEqual([1, 0]);
    // a callee between a branch and its successor (not possible in real code) does not disturb the caller's frame
    const t = new ThreadBuilder(base).event(Kind.Entry, sign, -1).event(Kind.Bytecode, sign, 0).event(Kind.Bytecode, sign, 1);
    t.call(id('Cov.never'), []);
    const code = base.methods[sign].info!.code!;
    t.event(Kind.Bytecode, sign, successors(code, 1)[1]).event(Kind.Exit, sign, -1);
    const nested = method(computeCoverage({ ...base, threads: [t.build('N')] }), 'Cov', 'sign');
    expect(Array.from(nested.branches[0].hits)).toEqual([0, 1]);
    // a successor that is none
    const bad = new ThreadBuilder(base).event(Kind.Entry, sign, -1).event(Kind.Bytecode, sign, 0).event(Kind.Bytecode, sign, 1).event(Kind.Bytecode, sign, 0);
    expect(computeCoverage({ ...base, threads: [bad.build('B')] }).stats.unexpectedSuccessors).toBe(1);
  });

  test('lcov.info reads back', () => {
    const r = reportCounters(computeCoverage(analysis()));
    const lcov = formatLcov(r, { testName: 't', sources: [dir] });
    const records = lcov.split('end_of_record\n').filter(Boolean);
    expect(records).toHaveLength(1);
    const rec = records[0];
    expect(rec).toContain(`SF:${path.join(dir, 'Cov.java')}\n`);
    const da = new Map([...rec.matchAll(/^DA:(\d+),(\d+)$/gm)].map((m) => [+m[1], +m[2]]));
    expect(da.get(lineOf('if (x > 0)'))).toBe(2);
    expect(da.get(lineOf('ZERO'))).toBe(0);
    expect(+/^LH:(\d+)$/m.exec(rec)![1]).toBe([...da.values()].filter((v) => v > 0).length);
    expect(+/^LF:(\d+)$/m.exec(rec)![1]).toBe(da.size);
    const brda = [...rec.matchAll(/^BRDA:(\d+),(\d+),(\d+),(-|\d+)$/gm)];
    expect(+/^BRF:(\d+)$/m.exec(rec)![1]).toBe(brda.length);
    expect(+/^BRH:(\d+)$/m.exec(rec)![1]).toBe(brda.filter((b) => b[4] !== '-' && +b[4] > 0).length);
    expect(brda.filter((b) => +b[1] === lineOf('never'))).toHaveLength(0);
    expect(rec).toMatch(/^FNDA:0,Cov\.never\(I\)I$/m);
    expect(rec).toMatch(/^FNDA:2,Cov\.sign\(I\)I$/m);
    expect(+/^FNF:(\d+)$/m.exec(rec)![1]).toBe(6);
    expect(+/^FNH:(\d+)$/m.exec(rec)![1]).toBe(5);
  });

  test("jacoco.xml: JaCoCo's structure, valid against its DTD", () => {
    const xml = formatJacocoXml(reportCounters(computeCoverage(analysis())), 'unit');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="unit"><package name=""><class name="Cov" sourcefilename="Cov.java">')).toBe(true);
    expect(xml).toContain(`<method name="sign" desc="(I)I" line="${lineOf('if (x > 0)')}"><counter type="INSTRUCTION" missed="2" covered="`);
    expect(xml).toContain(`<line nr="${lineOf('ZERO')}" mi="2" ci="0" mb="0" cb="0"/>`);
    expect(xml).not.toContain('&lt;init&gt;"'.replace('"', '" desc="()V"')); // the private constructor is filtered
    if (!haveXmllint || !fs.existsSync(REPORT_JAR)) return;
    const dtd = readZip(fs.readFileSync(REPORT_JAR)).find((e) => e.name === 'org/jacoco/report/xml/report.dtd')!;
    fs.writeFileSync(path.join(dir, 'report.dtd'), dtd.read());
    fs.writeFileSync(path.join(dir, 'jacoco.xml'), xml);
    const v = spawnSync('xmllint', ['--noout', '--nonet', '--dtdvalid', path.join(dir, 'report.dtd'), path.join(dir, 'jacoco.xml')], { encoding: 'utf8' });
    expect(v.stderr).toBe('');
    expect(v.status).toBe(0);
  });

  test('writeCoverage: files, HTML line states and branch spans, source map', () => {
    const out = path.join(dir, 'report');
    const res = writeCoverage(analysis(), out, { sources: [dir], name: 'unit' });
    expect(res.files).toEqual(['coverage/lcov.info', 'coverage/jacoco.xml', 'coverage/html/index.html', 'coverage/html/Cov.java.html', 'coverage/html/Cov.map.json']);
    expect(res.summary).toMatchObject({ LINE: { missed: 4, covered: expect.any(Number) }, recoveredOnly: { lines: 1, branches: 1 } });
    const page = fs.readFileSync(path.join(out, 'coverage/html/Cov.java.html'), 'utf8');
    const state = (line: number) => new RegExp(`<span class="l ?([a-z]*)"[^>]*id="L${line}"`).exec(page)![1];
    expect(state(lineOf('return 1;'))).toBe('fc');
    expect(state(lineOf('else if'))).toBe('pc'); // ifge: one of two edges
    expect(state(lineOf('ZERO'))).toBe('nc');
    expect(state(lineOf('static int tern'))).toBe('rc');
    expect(state(lineOf('never'))).toBe('nc');
    expect(state(lineOf('public class Cov'))).toBe('');
    // the branch spans: the if condition fully taken, the else-if condition partly, the ternary recovered (covered)
    expect(page).toContain('if (<span class="bc" title="2 of 2 branches taken">x &gt; 0</span>)');
    expect(page).toContain('else if (<span class="bp" title="1 of 2 branches taken">x &lt; 0</span>)');
    expect(page).toContain('return <span class="bp" title="1 of 2 branches taken">x &gt; 5 ? x : -x</span>;');
    expect(page).not.toMatch(/<(script|link)\b/);
    // source map: generated line = method index, column = bci
    const map = JSON.parse(fs.readFileSync(path.join(out, 'coverage/html/Cov.map.json'), 'utf8'));
    const cov = classes[0].methods.filter((m) => m.code && m.code.length);
    const signIndex = cov.findIndex((m) => m.name === 'sign');
    expect(map.x_jportal_methods[signIndex]).toBe('sign(I)I');
    const mappings = allMappings(fromMap(map));
    const at0 = mappings.find((m) => m.generated.line === signIndex + 1 && m.generated.column === 0)!;
    expect(at0.original!.line).toBe(lineOf('if (x > 0)'));
    expect(at0.name).toBe('sign');
  });

  test('java-parser spans: statements and branch constructs', () => {
    const spans = javaSpans(SOURCE);
    const branches = spans.filter((s) => s.kind === 'branch').map((s) => `${s.construct}@${s.line}:${s.column}`);
    expect(branches).toEqual([
      `ifStatement@${lineOf('if (x > 0)')}:8`,
      `ifStatement@${lineOf('else if')}:13`,
      `switchStatement@${lineOf('switch (x)')}:12`,
      `conditionalExpression@${lineOf('static int tern')}:34`,
    ]);
    expect(spans.filter((s) => s.kind === 'statement').length).toBeGreaterThan(8);
  });
});
