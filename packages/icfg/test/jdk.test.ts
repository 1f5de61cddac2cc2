/**
 * java.base of the installed JDK (jimage extract into a temp dir): every method's CFG checked for its invariants
 * and against successors() and the exception table; java/util and java/lang against javap; the ICFG of all of
 * java.base built and timed. The counts are printed (the package README quotes them).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CallKind, hierarchyOf, Icfg, InsnKind, loadClasspath, MethodCfg } from '../src';
import { checkAgainstJavap, checkCfg } from './lib/check';
import { findJdkTools, javap, tempDir, type JdkTools } from './lib/jdk';

const tools = findJdkTools();
const jdk: JdkTools | undefined = 'missing' in tools ? undefined : tools;
if (!jdk) console.warn(`SKIP java.base cross-check: ${(tools as { missing: string }).missing}`);

(jdk ? describe : describe.skip)('java.base', () => {
  let dir = '';
  let base = '';
  beforeAll(() => {
    dir = tempDir('jimage');
    const r = spawnSync(jdk!.jimage, ['extract', '--include', 'regex:/java.base/.*', '--dir', dir, path.join(jdk!.home, 'lib', 'modules')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`jimage extract failed: ${r.stderr}`);
    base = path.join(dir, 'java.base');
  }, 120_000);
  afterAll(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  test('every method with code: invariants, successors() and handler edges', () => {
    const loaded = loadClasspath([base]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.classes.length).toBeGreaterThan(5000);
    let methods = 0;
    let insns = 0;
    let withHandlers = 0;
    const bad: string[] = [];
    const t0 = process.hrtime.bigint();
    for (const c of loaded.classes) {
      for (const m of c.cf.methods) {
        if (!m.code) continue;
        const cfg = MethodCfg.build(m.code, m.handlers, `${c.cf.name}.${m.name}${m.descriptor}`);
        methods++;
        insns += cfg.insns.count;
        if (m.handlers.length) withHandlers++;
        const errs = checkCfg(cfg, m.code, m.handlers);
        if (errs.length && bad.length < 5) bad.push(`${c.cf.name}.${m.name}${m.descriptor}: ${errs.slice(0, 3).join('; ')}`);
      }
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    console.log(`java.base: ${loaded.classes.length} classes, ${methods} methods with code (${withHandlers} with handlers), ${insns} instructions checked in ${ms.toFixed(0)} ms`);
    expect(bad).toEqual([]);
    expect(methods).toBeGreaterThan(40000);
  }, 300_000);

  test('java/util and java/lang: blocks, successors and handler edges agree with javap', () => {
    const loaded = loadClasspath([path.join(base, 'java', 'util'), path.join(base, 'java', 'lang')]);
    const files = loaded.classes.map((c) => c.source).filter((f) => /java\/(util|lang)\/[^/]+\.class$/.test(f));
    const listing = javap(jdk!, files);
    let methods = 0;
    const bad: string[] = [];
    for (const c of loaded.classes) {
      const theirs = listing.get(c.cf.name);
      if (!theirs) continue;
      expect(theirs.map((m) => m.descriptor)).toEqual(c.cf.methods.map((m) => m.descriptor));
      c.cf.methods.forEach((m, k) => {
        if (!m.code) return;
        const errs = checkAgainstJavap(MethodCfg.build(m.code, m.handlers), theirs[k]);
        methods++;
        if (errs.length && bad.length < 5) bad.push(`${c.cf.name}.${m.name}${m.descriptor}: ${errs.slice(0, 3).join('; ')}`);
      });
    }
    console.log(`javap cross-check: ${listing.size} classes, ${methods} methods of java/util and java/lang`);
    expect(bad).toEqual([]);
    expect(methods).toBeGreaterThan(5000);
  }, 300_000);

  test('the ICFG of java.base: every CFG and call site, timed; class-hierarchy targets where they must be', () => {
    const t0 = process.hrtime.bigint();
    const h = hierarchyOf(loadClasspath([base]));
    const t1 = process.hrtime.bigint();
    const icfg = new Icfg(h);
    const r = icfg.buildAll();
    const t2 = process.hrtime.bigint();
    const kinds = new Array(6).fill(0);
    let resolved = 0;
    for (const m of h.methods) {
      for (const s of icfg.callSites(m)) {
        kinds[s.kind]++;
        if (s.staticTargets.length) resolved++;
      }
    }
    console.log(`java.base ICFG: load+parse ${(Number(t1 - t0) / 1e6).toFixed(0)} ms, ${r.withCode} CFGs (${r.instructions} instructions, ${r.blocks} blocks) + ${r.callSites} call sites resolved in ${(Number(t2 - t1) / 1e6).toFixed(0)} ms; ` +
      `static ${kinds[0]} special ${kinds[1]} virtual ${kinds[2]} interface ${kinds[3]} dynamic ${kinds[4]} polymorphic ${kinds[5]}; ${resolved} with static targets`);
    expect(r.errors).toEqual([]);
    // invokestatic/invokespecial within java.base always resolve (the JDK is closed over its own module)
    const unresolved: string[] = [];
    for (const m of h.methods) {
      for (const s of icfg.callSites(m)) {
        if ((s.kind === CallKind.Static || s.kind === CallKind.Special) && s.staticTargets.length !== 1) unresolved.push(`${m.key}@${s.bci}: ${s.ref}`);
      }
    }
    expect(unresolved).toEqual([]);
    expect(kinds[CallKind.Polymorphic]).toBeGreaterThan(0);
    expect(kinds[CallKind.Dynamic]).toBeGreaterThan(0);
    // ArrayList.size() is final-free but nothing in java.base overrides it outside ArrayList's subclasses
    const list = h.classNamed('java/util/List', 0)!;
    const sizes = icfg.hierarchy.subtypes(list).filter((c) => c.cf.method('size', '()I'));
    expect(sizes.length).toBeGreaterThan(10);
    const caller = h.methods.find((m) => m.cls.cf.name === 'java/util/Collections' && m.info.name === 'shuffle' && m.info.descriptor === '(Ljava/util/List;Ljava/util/Random;)V')!;
    const site = icfg.callSites(caller).find((s) => s.ref === 'java/util/List.size()I')!;
    expect(site.kind).toBe(CallKind.Interface);
    expect(site.staticTargets.map((t) => t.cls.cf.name)).toContain('java/util/ArrayList');
    expect(site.staticTargets.every((t) => !(t.info.access & 0x0400))).toBe(true);
    expect(icfg.cfg(caller)!.insns.kind.filter((k) => k === InsnKind.Call).length).toBe(icfg.callSites(caller).length);
  }, 300_000);
});
