/** Finding a class's .java file: package directory + SourceFile attribute, under one of the source roots. */
import * as fs from 'fs';
import * as path from 'path';

export interface SourceLocation {
  /** package dir + SourceFile, '/'-separated, e.g. a/b/C.java */
  relative: string;
  /** the file found under a source root (absolute), if any */
  file?: string;
}

/** Looks for `pkg/name` under each root, then `name` directly under each root (sources kept flat). */
export function locateSource(packageName: string, sourceFile: string, roots: readonly string[] = []): SourceLocation {
  const relative = packageName ? `${packageName}/${sourceFile}` : sourceFile;
  for (const candidate of [relative, sourceFile])
    for (const root of roots) {
      const f = path.resolve(root, candidate);
      if (fs.existsSync(f) && fs.statSync(f).isFile()) return { relative, file: f };
    }
  return { relative };
}
