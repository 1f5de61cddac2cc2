/**
 * Class bytes of the application class loader, read from the class path the JVM ran with. The agent's default
 * (`classes=path`) does not turn ClassFileLoadHook on (that is what its run-time overhead came from): it names
 * every class the app loader prepares by a CLASS record of source 4 without bytes, and VM_INFO carries
 * `jportal.class_path` (java.class.path), `jportal.working_dir` (relative entries are relative to it) and
 * `jportal.class_path_stamps` (each entry's "size:mtime", one per line, so that a changed file is noticed).
 * Directories and jars are searched in order, with the jars' manifest Class-Path entries after each jar, and
 * multi-release jars' versioned entries for the recording JVM's version first. A class not found on the class
 * path is looked up in the runtime image (some JDK modules are defined to the app loader).
 */
import { readZip, ZipError, type ZipEntry } from '@jportal/classfile';
import * as fs from 'fs';
import * as path from 'path';
import { readImageClasses, runtimeImageOf } from './runtime-image';

/** CLASS.source of an app-loader class named only: its bytes are on the class path (else in the runtime image). */
export const CLASS_PATH_SOURCE = 4;

export interface ClassPathFacts {
  /** entries as java.class.path lists them, made absolute against the working directory */
  entries: string[];
  /** "size:mtime" per entry at recording ('' when it did not exist then), when VM_INFO has them */
  stamps?: string[];
  /** the recording JVM's feature version (17, 25), for multi-release jars */
  javaFeature: number;
}

/** The class path a VM_INFO record names, or undefined when it names none (not recorded with classes=path). */
export function classPathOf(flags: { name: string; value: string }[], javaVersion: string): ClassPathFacts | undefined {
  const flag = (n: string) => flags.find((f) => f.name === n)?.value;
  const cp = flag('jportal.class_path');
  if (cp === undefined) return undefined;
  const dir = flag('jportal.working_dir') ?? '';
  const entries = cp.split(':').map((e) => (e === '' || path.isAbsolute(e) ? e : path.join(dir, e)));
  const stamps = flag('jportal.class_path_stamps')?.split('\n');
  return { entries, stamps: stamps && stamps.length === entries.length ? stamps : undefined, javaFeature: featureOf(javaVersion) };
}

/** The feature release of a java.version string: 17 of "17.0.9", 8 of "1.8.0_392" (0: not one). */
export function featureOf(version: string): number {
  const m = /^(?:1\.)?(\d+)/.exec(version);
  return m ? Number(m[1]) : 0;
}

/** One class-path entry opened for lookups: a directory, or a jar's entries by name. */
interface OpenEntry {
  find(name: string): Uint8Array | undefined;
}

const MANIFEST = 'META-INF/MANIFEST.MF';

/** Main attributes of a manifest (continuation lines joined). */
function manifestAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let last = '';
  for (const line of lines) {
    if (line === '') break; // the main section ends at the first blank line
    if (line.startsWith(' ') && last) attrs.set(last, attrs.get(last)! + line.slice(1));
    else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      last = line.slice(0, colon).trim();
      attrs.set(last, line.slice(colon + 1).trim());
    }
  }
  return attrs;
}

class JarEntry implements OpenEntry {
  private readonly byName = new Map<string, ZipEntry>();
  readonly classPath: string[] = [];
  private readonly versions: number[] = [];

  constructor(
    readonly file: string,
    javaFeature: number,
  ) {
    for (const e of readZip(new Uint8Array(fs.readFileSync(file)))) this.byName.set(e.name, e);
    const mf = this.byName.get(MANIFEST);
    if (!mf) return;
    const attrs = manifestAttributes(new TextDecoder('utf-8').decode(mf.read()));
    for (const url of (attrs.get('Class-Path') ?? '').split(/\s+/)) {
      if (!url || /^[a-z][a-z0-9+.-]*:/i.test(url)) continue; // only relative (file) URLs
      this.classPath.push(path.resolve(path.dirname(file), decodeURIComponent(url)));
    }
    if ((attrs.get('Multi-Release') ?? '').toLowerCase() !== 'true') return;
    // the versions the jar has entries for, up to the JVM's, newest first (one pass over the names)
    const present = new Set<number>();
    for (const k of this.byName.keys()) {
      const m = /^META-INF\/versions\/(\d+)\//.exec(k);
      if (m) present.add(Number(m[1]));
    }
    this.versions.push(...[...present].filter((v) => v >= 9 && v <= javaFeature).sort((x, y) => y - x));
  }

  find(name: string): Uint8Array | undefined {
    for (const v of this.versions) {
      const e = this.byName.get(`META-INF/versions/${v}/${name}.class`);
      if (e) return e.read();
    }
    return this.byName.get(`${name}.class`)?.read();
  }
}

class DirEntry implements OpenEntry {
  constructor(readonly dir: string) {}
  find(name: string): Uint8Array | undefined {
    try {
      return new Uint8Array(fs.readFileSync(path.join(this.dir, ...name.split('/')) + '.class'));
    } catch {
      return undefined;
    }
  }
}

/**
 * Reads the named classes ("loader:name" keys, internal names) from the class path into `classes`. Those not on
 * the class path are returned (key -> name) for the runtime image. What cannot be read is one line each in
 * `problems`. `override` replaces the recorded class path.
 */
export function readClassPathClasses(names: Map<string, string>, facts: ClassPathFacts | undefined, override: readonly string[] | undefined, classes: Map<string, Uint8Array>, problems: string[]): Map<string, string> {
  const left = new Map<string, string>();
  if (names.size === 0) return left;
  if (!facts && !override) {
    problems.push(`${names.size} application classes are named without bytes, but the trace's VM_INFO records no class path: they are looked up in the runtime image only`);
    return new Map(names);
  }
  // entries with their stamps at recording (undefined: not known; '' : missing then); manifest entries follow their jar
  const recorded = override ?? facts!.entries;
  const queue = recorded.map((entry, i) => ({ entry, stamp: override ? undefined : facts!.stamps?.[i] }));
  const seen = new Set<string>();
  const open: OpenEntry[] = [];
  for (let i = 0; i < queue.length; i++) {
    const { entry, stamp } = queue[i];
    if (entry === '' || seen.has(entry)) continue;
    seen.add(entry);
    let st: fs.Stats;
    try {
      st = fs.statSync(entry);
    } catch {
      // an entry missing at recording was missing for the JVM too: nothing lost
      if (stamp !== '') problems.push(`class path entry ${entry} not found: classes the JVM loaded from it have no bytes`);
      continue;
    }
    if (stamp && !st.isDirectory() && stamp !== `${st.size}:${Math.floor(st.mtimeMs / 1000)}`)
      problems.push(`class path entry ${entry} changed since the recording (size or modification time differ): its classes may not be the ones that ran`);
    if (st.isDirectory()) open.push(new DirEntry(entry));
    else
      try {
        const jar = new JarEntry(entry, facts?.javaFeature ?? 0);
        open.push(jar);
        queue.splice(i + 1, 0, ...jar.classPath.map((e) => ({ entry: e, stamp: '' }))); // the JVM skips missing ones too
      } catch (e) {
        if (!(e instanceof ZipError)) throw e;
        problems.push(`class path entry ${entry}: ${e.message}`);
      }
  }
  for (const [key, name] of names) {
    let bytes: Uint8Array | undefined;
    for (const o of open) {
      try {
        bytes = o.find(name);
      } catch (e) {
        if (!(e instanceof ZipError)) throw e;
        problems.push(`class ${name}: ${e.message}`);
      }
      if (bytes) break;
    }
    if (bytes) classes.set(key, bytes);
    else left.set(key, name);
  }
  return left;
}

/** What VM_INFO says about where named classes are. */
export interface VmClassSources {
  java_home: string;
  java_version: string;
  flags: { name: string; value: string }[];
}

/**
 * Reads the bytes of the classes CLASS records only name: source 4 (app loader) from the class path, then the
 * runtime image; source 3 from the runtime image. `vm` is the trace's VM_INFO payload (undefined when it has none).
 */
export function readNamedClasses(
  imageNames: Map<string, string>,
  pathNames: Map<string, string>,
  vm: VmClassSources | undefined,
  opts: { runtimeImage?: string; classPath?: string[] },
  classes: Map<string, Uint8Array>,
  problems: string[],
): void {
  const facts = vm && classPathOf(vm.flags, vm.java_version);
  const fromImage = new Map(imageNames);
  for (const [key, name] of readClassPathClasses(pathNames, facts, opts.classPath, classes, problems)) fromImage.set(key, name);
  if (fromImage.size === 0) return;
  if (vm || opts.runtimeImage) readImageClasses(fromImage, vm ? runtimeImageOf(vm.java_home, vm.flags) : { path: '' }, opts.runtimeImage, classes, problems);
  else problems.push(`${fromImage.size} classes have no bytes: the trace has no VM_INFO naming the JDK's runtime image`);
}
