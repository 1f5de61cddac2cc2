/**
 * Class bytes the agent did not record. With class-data sharing kept on (the agent's default), the boot classes
 * the JVM loads before ClassFileLoadHook is on are named by CLASS records of source 3 without bytes: their class
 * files are those of the JDK's runtime image, `lib/modules` of the recording JVM, which VM_INFO names
 * (`jportal.runtime_image`, with its size and modification time so that a changed file is noticed).
 */
import { JImage, JImageError } from '@jportal/classfile';
import * as fs from 'fs';
import * as path from 'path';

/** CLASS.source of a class named only: its bytes are in the runtime image. */
export const IMAGE_CLASS_SOURCE = 3;

export interface RuntimeImageFacts {
  /** the file VM_INFO names (or lib/modules under its java_home) */
  path: string;
  /** size and modification time (seconds) at recording, when VM_INFO has them */
  size?: number;
  mtime?: number;
}

/**
 * Reads the named classes ("loader:name" keys, internal names) from the runtime image into `classes`. What cannot
 * be read is one line in `problems` (how many classes, and why); returns how many were read.
 */
export function readImageClasses(names: Map<string, string>, facts: RuntimeImageFacts, override: string | undefined, classes: Map<string, Uint8Array>, problems: string[]): number {
  if (names.size === 0) return 0;
  const file = override ?? facts.path;
  const lacking = (why: string) => problems.push(`${names.size} start-up classes have no bytes: ${why} (the recording kept class-data sharing on; record with the agent's classes=early, or give the JDK's lib/modules)`);
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    lacking(`runtime image ${file} not found`);
    return 0;
  }
  if (override === undefined && ((facts.size !== undefined && st.size !== facts.size) || (facts.mtime !== undefined && Math.floor(st.mtimeMs / 1000) !== facts.mtime)))
    problems.push(`runtime image ${file} changed since the recording (size or modification time differ): its start-up classes may not be the ones that ran`);
  let image: JImage;
  try {
    image = JImage.open(file);
  } catch (e) {
    lacking(e instanceof JImageError ? e.message : `${file}: ${e instanceof Error ? e.message : String(e)}`);
    return 0;
  }
  let read = 0;
  const missing: string[] = [];
  try {
    for (const [key, name] of names) {
      const bytes = image.classBytes(name);
      if (bytes) {
        classes.set(key, bytes);
        read++;
      } else missing.push(name);
    }
  } catch (e) {
    problems.push(e instanceof JImageError ? e.message : `${file}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    image.close();
  }
  if (missing.length) problems.push(`${missing.length} start-up classes are not in runtime image ${file} (e.g. ${missing[0]}): they have no bytes`);
  return read;
}

/** The runtime image a VM_INFO record names: its `jportal.runtime_image*` flags, else lib/modules under java_home. */
export function runtimeImageOf(javaHome: string, flags: { name: string; value: string }[]): RuntimeImageFacts {
  const flag = (n: string) => flags.find((f) => f.name === n)?.value;
  const num = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
  return { path: flag('jportal.runtime_image') ?? path.join(javaHome, 'lib', 'modules'), size: num(flag('jportal.runtime_image_size')), mtime: num(flag('jportal.runtime_image_mtime')) };
}
