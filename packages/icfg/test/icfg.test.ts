/**
 * ClassHierarchy and Icfg on compiled fixtures: static/special/virtual/interface/default/private calls resolved by
 * the class hierarchy, invokedynamic left open, observed calls narrowing and extending; classpath loading from
 * directories and jars (made with the JDK's jar tool), malformed classes and archives as typed errors.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readZip, ZipError } from '@jportal/classfile';
import { CallKind, ClassLoadError, hierarchyOf, Icfg, loadClasspath, loadKeyedClasses, type MethodNode } from '../src';
import { compile, findJdkTools, tempDir, type JdkTools } from './lib/jdk';

const SHAPES = `
interface Shape { double area(); default String describe() { return "shape " + area(); } static Shape unit() { return new Square(1); } }
abstract class Base implements Shape { public String toString() { return describe(); } abstract int sides(); }
class Square extends Base { final double side; Square(double s) { side = s; } public double area() { return side * side; } int sides() { return 4; } }
class Circle implements Shape { public double area() { return 3.14; } public String describe() { return "circle"; } private int secret() { return 1; } int callSecret() { return secret(); } }
class Calls {
  static double all(Shape s, Base b, Square q, Circle c) {
    double r = s.area();
    String d = s.describe();
    int n = b.sides();
    r += q.area();
    Shape u = Shape.unit();
    String t = b.toString();
    Runnable k = () -> {};
    k.run();
    return r + n + d.length() + t.length() + c.callSecret() + u.area();
  }
}
`;

const tools = findJdkTools();
const jdk: JdkTools | undefined = 'missing' in tools ? undefined : tools;
if (!jdk) console.warn(`SKIP ICFG fixtures: ${(tools as { missing: string }).missing}`);

const names = (ms: readonly MethodNode[]) => ms.map((m) => `${m.cls.cf.name}.${m.info.name}`).sort();

(jdk ? describe : describe.skip)('ICFG over compiled classes', () => {
  let dir = '';
  beforeAll(() => {
    dir = compile(jdk!, { 'Shapes.java': SHAPES });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const build = () => {
    const loaded = loadClasspath([dir], 1);
    expect(loaded.errors).toEqual([]);
    const h = hierarchyOf(loaded);
    return { h, icfg: new Icfg(h), all: h.method('1:Calls.all(LShape;LBase;LSquare;LCircle;)D')! };
  };

  test('call sites resolved by the class hierarchy', () => {
    const { icfg, all } = build();
    expect(all).toBeDefined();
    const sites = icfg.callSites(all).map((s) => ({ ref: s.ref, kind: s.kind, targets: names(s.staticTargets) }));
    const by = (ref: string) => sites.filter((s) => s.ref === ref);
    // s.area() and u.area()
    expect(by('Shape.area()D')).toEqual([1, 2].map(() => ({ ref: 'Shape.area()D', kind: CallKind.Interface, targets: ['Circle.area', 'Square.area'] })));
    // Square inherits the default method, Circle overrides it
    expect(by('Shape.describe()Ljava/lang/String;')[0].targets).toEqual(['Circle.describe', 'Shape.describe']);
    expect(by('Base.sides()I')[0]).toEqual({ ref: 'Base.sides()I', kind: CallKind.Virtual, targets: ['Square.sides'] });
    expect(by('Square.area()D')[0].targets).toEqual(['Square.area']);
    expect(by('Shape.unit()LShape;')[0]).toEqual({ ref: 'Shape.unit()LShape;', kind: CallKind.Static, targets: ['Shape.unit'] });
    expect(by('Base.toString()Ljava/lang/String;')[0].targets).toEqual(['Base.toString']);
    expect(sites.filter((s) => s.kind === CallKind.Dynamic)).toEqual([{ ref: '', kind: CallKind.Dynamic, targets: [] }]);
    // java/lang/String is not recorded: no targets rather than a guess
    expect(by('java/lang/String.length()I')[0].targets).toEqual([]);
    // a private method is called exactly; a constructor through invokespecial
    const callSecret = icfg.hierarchy.method('1:Circle.callSecret()I')!;
    expect(names(icfg.callSites(callSecret)[0].staticTargets)).toEqual(['Circle.secret']);
    const square = icfg.hierarchy.method('1:Square.<init>(D)V')!;
    expect(icfg.callSites(square).map((s) => [s.kind, s.ref, s.staticTargets.length])).toEqual([[CallKind.Special, 'Base.<init>()V', 1]]);
  });

  test('observed calls narrow the hierarchy\'s targets, fill invokedynamic, and may extend', () => {
    const { h, icfg, all } = build();
    const area = icfg.callSites(all).find((s) => s.ref === 'Shape.area()D')!;
    const circleArea = h.method('1:Circle.area()D')!;
    const fromAll = (m: MethodNode) => icfg.callers(m).filter((s) => s.caller === all).map((s) => s.bci);
    expect(fromAll(circleArea)).toContain(area.bci);
    icfg.observeCall(all, area.bci, circleArea);
    expect(names(icfg.targets(area))).toEqual(['Circle.area']);
    expect(icfg.extendsHierarchy(area)).toBe(false);
    // Square.area is still a static target but no longer a target: it lost this caller
    expect(fromAll(h.method('1:Square.area()D')!)).not.toContain(area.bci);
    expect(fromAll(h.method('1:Square.area()D')!).length).toBeGreaterThan(0); // (the other area() call and q.area())
    // the lambda: its body is the synthetic lambda$all$0 in Calls
    const indy = icfg.callSites(all).find((s) => s.kind === CallKind.Dynamic)!;
    const lambda = h.classNamed('Calls', 1)!.methods.find((m) => m.info.name.startsWith('lambda$'))!;
    icfg.observeCall(all, indy.bci, lambda);
    expect(icfg.targets(indy)).toEqual([lambda]);
    expect(icfg.extendsHierarchy(indy)).toBe(true);
    expect(icfg.callers(lambda)).toEqual([indy]);
    expect(() => icfg.observeCall(all, 0, lambda)).toThrow(/no invoke at bci 0/);
    // adding a class re-resolves static targets and keeps what was observed
    const extra = compile(jdk!, { 'Tri.java': 'class Tri implements Shape { public double area() { return 0.5; } }' }, ['-cp', dir]);
    try {
      h.add(loadClasspath([extra], 1).classes[0].cf, 1, 'Tri');
      const again = icfg.callSites(all).find((s) => s.ref === 'Shape.area()D')!;
      expect(names(again.staticTargets)).toEqual(['Circle.area', 'Square.area', 'Tri.area']);
      expect(names(icfg.targets(again))).toEqual(['Circle.area']);
    } finally {
      fs.rmSync(extra, { recursive: true, force: true });
    }
  });

  test('loaders: a class per loader, lookups prefer the caller\'s loader, then the boot loader', () => {
    const bytes = (n: string) => new Uint8Array(fs.readFileSync(path.join(dir, `${n}.class`)));
    const keyed = loadKeyedClasses([['0:Shape', bytes('Shape')], ['3:Shape', bytes('Shape')], ['3:Circle', bytes('Circle')], ['0:Square', bytes('Square')], ['bad', bytes('Square')]]);
    expect(keyed.errors.map((e) => e.source)).toEqual(['bad']);
    const h = hierarchyOf(keyed);
    const circle = h.classNamed('Circle', 3)!;
    expect(h.interfaces(circle)[0].loader).toBe(3);
    const square = h.classNamed('Square', 0)!;
    expect(h.classNamed('Shape', 7)!.loader).toBe(0);
    expect(h.method('3:Shape.describe()Ljava/lang/String;')).toBeDefined();
    h.add(circle.cf, 3, 'again');
    expect(h.duplicates).toEqual([{ loader: 3, name: 'Circle', source: 'again' }]);
    expect(h.isSubtype(square, h.classNamed('Shape', 0)!)).toBe(false); // Base is not recorded: the chain ends
  });

  test('jar files: the same classes as the directory; malformed classes and archives are typed errors naming where', () => {
    const out = tempDir('jar');
    try {
      const jar = path.join(out, 'shapes.jar');
      const r = spawnSync(jdk!.jar, ['cf', jar, '-C', dir, '.'], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      const fromJar = loadClasspath([jar]);
      const fromDir = loadClasspath([dir]);
      expect(fromJar.errors).toEqual([]);
      expect(fromJar.classes.map((c) => c.cf.name).sort()).toEqual(fromDir.classes.map((c) => c.cf.name).sort());
      expect(fromJar.classes[0].source).toMatch(/shapes\.jar!\/.*\.class$/);
      expect(readZip(new Uint8Array(fs.readFileSync(jar))).some((e) => e.name === 'META-INF/MANIFEST.MF')).toBe(true);
      // a stored (uncompressed) jar reads the same
      const stored = path.join(out, 'stored.jar');
      expect(spawnSync(jdk!.jar, ['cf0', stored, '-C', dir, '.']).status).toBe(0);
      expect(loadClasspath([stored]).classes.length).toBe(fromDir.classes.length);
      // a corrupt class among good ones: one error with file, class and offset; the rest load
      const mixed = path.join(out, 'mixed');
      fs.cpSync(dir, mixed, { recursive: true });
      const circle = fs.readFileSync(path.join(mixed, 'Circle.class'));
      fs.writeFileSync(path.join(mixed, 'Circle.class'), circle.subarray(0, 100));
      const loaded = loadClasspath([mixed, path.join(out, 'missing.jar')]);
      expect(loaded.classes.length).toBe(fromDir.classes.length - 1);
      expect(loaded.errors.length).toBe(2);
      const e = loaded.errors[0];
      expect(e).toBeInstanceOf(ClassLoadError);
      expect([e.className, e.offset > 0 && e.offset <= 100]).toEqual(['Circle', true]);
      expect(e.message).toMatch(/Circle\.class \(Circle\): byte \d+: truncated/);
      expect(loaded.errors[1].source).toMatch(/missing\.jar$/);
      // not a zip
      const notZip = path.join(out, 'x.jar');
      fs.writeFileSync(notZip, 'hello');
      expect(loadClasspath([notZip]).errors[0].message).toMatch(/no end of central directory/);
      expect(() => readZip(new Uint8Array(10))).toThrow(ZipError);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
