/**
 * The jimage reader against the installed JDKs' own lib/modules: class bytes equal what the JDK's `jimage extract`
 * writes, they parse with parseClass, every entry is found again by its name, corrupt and truncated copies throw
 * JImageError, and (where the JDK has jmods for jlink) images jlink compressed with string sharing ("compact-cp")
 * and with zip give the same class bytes as the uncompressed image. Opening and reading times are printed.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { JImage, JImageError, parseClass } from '../src';

/** The default `java`'s home (the JDK 17 here), then Temurin 25: each tested if it has lib/modules and bin/jimage. */
function defaultJavaHome(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? path.dirname(path.dirname(fs.realpathSync(r.stdout.trim()))) : undefined;
}

interface Jdk {
  label: string;
  home: string;
  modules: string;
  jimage: string;
}

const JDKS: { label: string; jdk?: Jdk; missing?: string }[] = [];
for (const [label, home] of [['default java', defaultJavaHome()], ['Temurin 25', '/usr/lib/jvm/temurin-25-jdk-amd64']] as const) {
  const modules = home && path.join(home, 'lib', 'modules');
  const jimage = home && path.join(home, 'bin', 'jimage');
  if (!home || !modules || !jimage) JDKS.push({ label, missing: 'no java on PATH' });
  else if (JDKS.some((j) => j.jdk?.home === home)) continue;
  else if (!fs.existsSync(modules) || !fs.existsSync(jimage)) JDKS.push({ label, missing: `no ${modules} or ${jimage}` });
  else JDKS.push({ label, jdk: { label: `${label} (${home})`, home, modules, jimage } });
}
for (const j of JDKS) if (j.missing) console.warn(`SKIP jimage tests on ${j.label}: ${j.missing}`);

const NAMED = [
  'java/lang/String', 'java/lang/Object', 'java/util/HashMap', 'java/util/concurrent/ConcurrentHashMap',
  'java/sql/Connection', 'javax/swing/JFrame',
];
/** jimage extract --include patterns: the named classes and all of java.util.concurrent (about 250 classes). */
const INCLUDE = [
  'regex:/java\\.base/java/util/concurrent/[^/]*\\.class',
  ...NAMED.map((c) => `regex:/[a-z.]+/${c.replace(/\./g, '\\.')}\\.class`),
].join(',');

function tempDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `jportal-jimage-${tag}-`));
}

/** module/internal-name pairs of the .class files under an extracted image directory. */
function extractedClasses(dir: string): { module: string; internalName: string; file: string }[] {
  const out: { module: string; internalName: string; file: string }[] = [];
  for (const module of fs.readdirSync(dir)) {
    const walk = (sub: string) => {
      for (const e of fs.readdirSync(path.join(dir, module, sub), { withFileTypes: true })) {
        const rel = sub ? `${sub}/${e.name}` : e.name;
        if (e.isDirectory()) walk(rel);
        else if (e.name.endsWith('.class')) out.push({ module, internalName: rel.slice(0, -'.class'.length), file: path.join(dir, module, rel) });
      }
    };
    walk('');
  }
  return out;
}

function ms(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

for (const { label, jdk } of JDKS) {
  (jdk ? describe : describe.skip)(`jimage of ${jdk?.label ?? label}`, () => {
    let image: JImage;
    let dir = '';
    beforeAll(() => {
      image = JImage.open(jdk!.modules);
      dir = tempDir('extract');
      const r = spawnSync(jdk!.jimage, ['extract', '--include', INCLUDE, '--dir', dir, jdk!.modules], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`jimage extract failed: ${r.stderr}${r.stdout}`);
    }, 60_000);
    afterAll(() => {
      image?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('class bytes equal what jimage extract writes', () => {
      const extracted = extractedClasses(dir);
      const names = new Set(extracted.map((c) => c.internalName));
      expect(extracted.length).toBeGreaterThan(100);
      for (const n of ['java/lang/String', 'java/util/HashMap', 'java/util/concurrent/ConcurrentHashMap']) expect(names).toContain(n);
      // a class from a module other than java.base
      expect(names.has('java/sql/Connection') || names.has('javax/swing/JFrame')).toBe(true);
      const differing: string[] = [];
      for (const c of extracted) {
        const ours = image.classBytes(c.internalName);
        if (!ours || !Buffer.from(ours.buffer, ours.byteOffset, ours.byteLength).equals(fs.readFileSync(c.file))) differing.push(c.internalName);
        if (image.moduleOf(c.internalName) !== c.module) differing.push(`${c.internalName} (module ${image.moduleOf(c.internalName)}, not ${c.module})`);
      }
      expect(differing).toEqual([]);
      // the named classes jimage did not extract (a module this JDK lacks) are missing for us too
      for (const n of NAMED) if (!names.has(n)) expect(image.classBytes(n)).toBeUndefined();
    });

    test('a missing class, package or name is undefined', () => {
      for (const n of ['java/lang/NoSuchClassHere', 'no/such/pkg/Foo', 'String', '', '/', 'java/lang/', 'java/lang/String.class']) {
        expect(image.classBytes(n)).toBeUndefined();
        expect(image.moduleOf(n)).toBeUndefined();
      }
      expect(image.find('/java.base/java/lang/NoSuchClassHere.class')).toBeUndefined();
      expect(image.find('/java.sql/java/lang/String.class')).toBeUndefined(); // right file, wrong module
      expect(image.resource('/java.base/java/lang/String')).toBeUndefined();
      expect(image.modulesOfPackage('no.such.pkg')).toEqual([]);
    });

    test('class bytes parse with parseClass', () => {
      const string = parseClass(image.classBytes('java/lang/String')!, 'String.class');
      expect(string.name).toBe('java/lang/String');
      expect(string.method('length', '()I')?.code?.length).toBeGreaterThan(0);
      const chm = parseClass(image.classBytes('java/util/concurrent/ConcurrentHashMap')!);
      expect(chm.methods.filter((m) => m.name === 'putVal').length).toBe(1);
      expect(parseClass(image.classBytes('java/util/HashMap')!).superName).toBe('java/util/AbstractMap');
    });

    test('every entry is found again by its name; the count is the header\'s; modules of packages', () => {
      const t0 = process.hrtime.bigint();
      const entries = [...image.entries()];
      expect(entries.length).toBe(image.header.resourceCount);
      expect(new Set(entries.map((e) => e.name)).size).toBe(entries.length);
      const lost = entries.filter((e) => image.find(e.name)?.contentOffset !== e.contentOffset).map((e) => e.name);
      expect(lost).toEqual([]);
      const compressed = entries.filter((e) => e.compressedSize !== 0).length;
      console.log(`${jdk!.label}: jimage ${image.header.majorVersion}.${image.header.minorVersion}, ${entries.length} entries, ` +
        `${compressed} compressed, ${image.classNames().length} classes; every entry found again in ${ms(t0).toFixed(0)} ms`);
      expect(image.moduleOf('java/lang/Object')).toBe('java.base');
      expect(image.modulesOfPackage('java.lang')).toContain('java.base');
      if (image.find('/java.sql/java/sql/Connection.class')) expect(image.moduleOf('java/sql/Connection')).toBe('java.sql');
      expect(image.classNames('java.base')).toContain('java/lang/Object');
    });

    test('opening and reading every class of java.base once is fast', () => {
      let t0 = process.hrtime.bigint();
      const fresh = JImage.open(jdk!.modules);
      const openMs = ms(t0);
      try {
        const names = fresh.classNames('java.base');
        t0 = process.hrtime.bigint();
        let first1000 = 0;
        let bytes = 0;
        names.forEach((n, i) => {
          bytes += fresh.classBytes(n)!.length;
          if (i === 999) first1000 = ms(t0);
        });
        const allMs = ms(t0);
        console.log(`${jdk!.label}: open ${openMs.toFixed(1)} ms; ${names.length} java.base classes (${(bytes / 1e6).toFixed(1)} MB) ` +
          `read in ${allMs.toFixed(0)} ms (the first 1000 in ${first1000.toFixed(0)} ms)`);
        expect(names.length).toBeGreaterThan(5000);
        expect(openMs + first1000).toBeLessThan(3000); // (generous: the suite runs packages side by side)
      } finally {
        fresh.close();
      }
    });
  });
}

const anyJdk = JDKS.find((j) => j.jdk)?.jdk;
(anyJdk ? describe : describe.skip)('corrupt images', () => {
  let dir = '';
  let index: Buffer;
  let indexSize = 0;
  let tableLength = 0;
  beforeAll(() => {
    dir = tempDir('corrupt');
    const image = JImage.open(anyJdk!.modules);
    indexSize = image.header.indexSize;
    tableLength = image.header.tableLength;
    image.close();
    const fd = fs.openSync(anyJdk!.modules, 'r');
    index = Buffer.alloc(indexSize);
    fs.readSync(fd, index, 0, indexSize, 0);
    fs.closeSync(fd);
  });
  afterAll(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  /** The JImageError that opening (and then `then`) throws, checked to name the file and an offset. */
  function errorOf(name: string, bytes: Uint8Array, then?: (image: JImage) => unknown): JImageError {
    const file = path.join(dir, name);
    fs.writeFileSync(file, bytes);
    let image: JImage | undefined;
    try {
      image = JImage.open(file);
      then?.(image);
    } catch (e) {
      expect(e).toBeInstanceOf(JImageError);
      const err = e as JImageError;
      expect(err.file).toBe(file);
      expect(err.message.startsWith(`${file}: byte ${err.offset}: `)).toBe(true);
      expect(err.message).not.toContain('\n');
      return err;
    } finally {
      image?.close();
    }
    throw new Error(`${name}: no JImageError`);
  }

  test('bad magic', () => {
    const bad = Buffer.from(index);
    bad[0] ^= 0xff;
    const err = errorOf('magic', bad);
    expect(err.offset).toBe(0);
    expect(err.message).toMatch(/bad magic 0x/);
    expect(errorOf('a-class-file', Buffer.from([0xca, 0xfe, 0xba, 0xbe, ...new Array(40).fill(0)])).message).toMatch(/bad magic 0xcafebabe/);
  });

  test('unsupported version', () => {
    const bad = Buffer.from(index);
    bad.writeUInt16LE(2, 6); // major version 2
    const err = errorOf('version', bad);
    expect(err.offset).toBe(4);
    expect(err.message).toMatch(/unsupported jimage version 2\.0/);
  });

  test('truncated copies', () => {
    expect(errorOf('empty', new Uint8Array(0)).message).toMatch(/truncated header/);
    expect(errorOf('header', index.subarray(0, 20)).offset).toBe(20);
    const inRedirect = errorOf('redirect', index.subarray(0, 1000));
    expect([inRedirect.offset, inRedirect.message]).toEqual([28, expect.stringMatching(/truncated redirect table/)]);
    const inOffsets = errorOf('offsets', index.subarray(0, 28 + 4 * tableLength + 100));
    expect([inOffsets.offset, inOffsets.message]).toEqual([28 + 4 * tableLength, expect.stringMatching(/truncated offsets table/)]);
    expect(errorOf('strings', index.subarray(0, indexSize - 1)).message).toMatch(/truncated strings/);
    // the index whole, the resources cut off: opening works, reading a class names where its content was
    const noResources = errorOf('resources', index, (image) => image.classBytes('java/lang/Object'));
    expect(noResources.offset).toBeGreaterThanOrEqual(indexSize);
    expect(noResources.message).toMatch(/\/packages\/java\.lang: truncated resource/);
  });

  test('reading after close', () => {
    const image = JImage.open(anyJdk!.modules);
    const loc = image.find('/java.base/java/lang/Object.class')!;
    image.close();
    expect(() => image.read(loc)).toThrow(JImageError);
    image.close();
  });
});

/** JDKs with jmods, whose jlink can write compressed images: --compress=1 (string sharing) and 2 (zip). */
const jlinkable = JDKS.map((j) => j.jdk).filter((j): j is Jdk => !!j && fs.existsSync(path.join(j.home, 'jmods', 'java.base.jmod')));
if (!jlinkable.length) console.warn('SKIP compressed jimage tests: no JDK with jmods (openjdk-17-jmods) for jlink');
const COMPARED = ['java/lang/String', 'java/lang/Object', 'java/util/HashMap', 'java/util/concurrent/ConcurrentHashMap', 'java/lang/invoke/MethodHandles$Lookup'];

for (const jdk of jlinkable) {
  describe(`compressed images of ${jdk.label}`, () => {
    test.each([
      ['compact-cp', '1'],
      ['zip', '2'],
    ])('%s (jlink --compress=%s) gives the uncompressed image\'s class bytes', (_name, level) => {
      const out = path.join(tempDir('jlink'), 'image');
      try {
        const jlink = path.join(jdk.home, 'bin', 'jlink');
        const r = spawnSync(jlink, ['--add-modules', 'java.base', `--compress=${level}`, '--output', out], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`jlink failed: ${r.stderr}${r.stdout}`);
        const plain = JImage.open(jdk.modules);
        const packed = JImage.open(path.join(out, 'lib', 'modules'));
        try {
          const compressed = [...packed.entries()].filter((e) => e.compressedSize !== 0).length;
          expect(compressed).toBeGreaterThan(1000);
          const names = packed.classNames('java.base');
          expect(names.length).toBeGreaterThan(5000);
          // the reference: what the JDK's own jimage extract decompresses (jlink generates some classes anew,
          // jdk/internal/module/SystemModules*, so those differ from the installed image's)
          const extracted = path.join(path.dirname(out), 'extract');
          const x = spawnSync(jdk.jimage, ['extract', '--include', 'regex:/java\\.base/.*\\.class', '--dir', extracted, path.join(out, 'lib', 'modules')], { encoding: 'utf8' });
          if (x.status !== 0) throw new Error(`jimage extract failed: ${x.stderr}${x.stdout}`);
          const theirs = extractedClasses(extracted).filter((c) => c.internalName !== 'module-info');
          expect(theirs.map((c) => c.internalName).sort()).toEqual([...names].sort());
          const t0 = process.hrtime.bigint();
          const differing = theirs.filter((c) => !Buffer.from(packed.classBytes(c.internalName)!).equals(fs.readFileSync(c.file))).map((c) => c.internalName);
          console.log(`${jdk.label}: jlink --compress=${level}: ${compressed} of ${packed.header.resourceCount} entries compressed; ` +
            `${names.length} java.base classes read and compared in ${ms(t0).toFixed(0)} ms`);
          expect(differing).toEqual([]);
          for (const n of COMPARED) expect(Buffer.from(packed.classBytes(n)!).equals(Buffer.from(plain.classBytes(n)!))).toBe(true);
        } finally {
          plain.close();
          packed.close();
        }
      } finally {
        fs.rmSync(path.dirname(out), { recursive: true, force: true });
      }
    }, 180_000);
  });
}
