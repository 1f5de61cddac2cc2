import * as fs from 'fs';
import * as path from 'path';
import { ClassFormatError, parseClass, type ClassFile } from '@jportal/classfile';
import { ClassLoadError } from './errors';
import { ClassHierarchy } from './hierarchy';
import { readZip, ZipError } from '@jportal/classfile';

export interface LoadedClass {
  readonly cf: ClassFile;
  readonly loader: number;
  /** file, `jar!/entry`, or trace key */
  readonly source: string;
}

export interface LoadResult {
  classes: LoadedClass[];
  /** classes (or whole archives) that could not be read; the rest loaded */
  errors: ClassLoadError[];
}

function parseOne(bytes: Uint8Array, source: string, className: string, loader: number, out: LoadResult) {
  try {
    out.classes.push({ cf: parseClass(bytes, source), loader, source });
  } catch (e) {
    if (e instanceof ClassFormatError) out.errors.push(new ClassLoadError(source, className, e.offset, e.message.replace(/^.*?byte \d+: /, '')));
    else throw e;
  }
}

const isClassEntry = (name: string) => name.endsWith('.class') && !name.startsWith('META-INF/') && !/(^|\/)module-info\.class$/.test(name);

/**
 * Reads every class of a classpath: directories (recursively) and jar/zip files, in order, all as `loader`.
 * Multi-release and module-info entries are skipped. Unreadable entries become ClassLoadErrors.
 */
export function loadClasspath(entries: readonly string[], loader = 0): LoadResult {
  const out: LoadResult = { classes: [], errors: [] };
  for (const entry of entries) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(entry);
    } catch (e) {
      out.errors.push(new ClassLoadError(entry, '', -1, (e as Error).message));
      continue;
    }
    if (stat.isDirectory()) {
      const walk = (dir: string) => {
        for (const d of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
          const p = path.join(dir, d.name);
          if (d.isDirectory()) walk(p);
          else if (isClassEntry(path.relative(entry, p).split(path.sep).join('/'))) {
            parseOne(new Uint8Array(fs.readFileSync(p)), p, path.relative(entry, p).split(path.sep).join('/').slice(0, -6), loader, out);
          }
        }
      };
      walk(entry);
    } else {
      let zipEntries;
      try {
        zipEntries = readZip(new Uint8Array(fs.readFileSync(entry)));
      } catch (e) {
        if (!(e instanceof ZipError)) throw e;
        out.errors.push(new ClassLoadError(entry, '', e.offset, e.message.replace(/^byte \d+: /, '')));
        continue;
      }
      for (const z of zipEntries) {
        if (!isClassEntry(z.name)) continue;
        const source = `${entry}!/${z.name}`;
        let bytes: Uint8Array;
        try {
          bytes = z.read();
        } catch (e) {
          if (!(e instanceof ZipError)) throw e;
          out.errors.push(new ClassLoadError(source, z.name.slice(0, -6), e.offset, e.message.replace(/^byte \d+: /, '')));
          continue;
        }
        parseOne(bytes, source, z.name.slice(0, -6), loader, out);
      }
    }
  }
  return out;
}

/** Reads classes keyed as a trace keys them, `loader:name` (e.g. the agent's CLASS records, hidden classes included). */
export function loadKeyedClasses(classes: Iterable<readonly [string, Uint8Array]>): LoadResult {
  const out: LoadResult = { classes: [], errors: [] };
  for (const [key, bytes] of classes) {
    const colon = key.indexOf(':');
    const loader = Number(key.slice(0, colon));
    if (colon < 0 || !Number.isInteger(loader) || loader < 0) {
      out.errors.push(new ClassLoadError(key, '', -1, 'key is not loader:name'));
      continue;
    }
    parseOne(bytes, key, key.slice(colon + 1), loader, out);
  }
  return out;
}

/** A hierarchy of the loaded classes, in order (the first class of a loader and name wins). */
export function hierarchyOf(...results: LoadResult[]): ClassHierarchy {
  const h = new ClassHierarchy();
  for (const r of results) for (const c of r.classes) h.add(c.cf, c.loader, c.source);
  return h;
}
