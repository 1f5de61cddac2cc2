/** A trace directory (docs/trace-format.md): TRACE_DIR/meta.jpt and TRACE_DIR/pt/. */
import * as fs from 'fs';
import * as path from 'path';
import { FileHeader } from './header';
import { MetaReader, ReaderOptions } from './reader';
import { PtSideband, readPtSideband } from './sideband';

/** TRACE_DIR/meta.jpt for a directory; the path itself for a file. */
export function metaPath(dirOrFile: string): string {
  return fs.statSync(dirOrFile).isDirectory() ? path.join(dirOrFile, 'meta.jpt') : dirOrFile;
}

export interface TraceDir {
  dir: string;
  metaPath: string;
  /** The streaming reader of meta.jpt (iterate `meta.records()` once; then see `meta.problems`). */
  meta: MetaReader;
  header: FileHeader;
  /** pt/sideband.jsonl, or undefined when the run recorded no PT data. */
  sideband(): PtSideband | undefined;
}

/** Opens a trace directory: reads and checks meta.jpt's header (throws a TraceFormatError when damaged). */
export function openTrace(dir: string, opts: ReaderOptions = {}): TraceDir {
  const file = path.join(dir, 'meta.jpt');
  const meta = MetaReader.open(file, opts);
  let header: FileHeader;
  try {
    header = meta.header;
  } catch (e) {
    meta.close();
    throw e;
  }
  return { dir, metaPath: file, meta, header, sideband: () => readPtSideband(dir) };
}
