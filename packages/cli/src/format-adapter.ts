/**
 * The CLI's only contact with @jportal/format: opening a metadata file for iteration and draining an
 * agent's ring. Kept in one module so the commands do not depend on the reader's internals.
 */
import { isTraceFormatError, MetaReader, PtSideband, readPtSideband, ReadProblem, RingReader, TraceRecord } from '@jportal/format';

export type { TraceRecord };

export interface MetaIteration {
  records(): Iterable<TraceRecord>;
  problems(): ReadProblem[];
}

export interface RingDrain {
  writeFileHeader(fd: number): void;
  drainOnce(fd: number): number;
  isClosed(): boolean;
  close(): void;
}

export function openMeta(path: string): MetaIteration {
  const reader = MetaReader.open(path);
  return { records: () => reader.records(), problems: () => reader.problems };
}

export function openRing(path: string, consumerPid: number): RingDrain {
  return RingReader.open(path, consumerPid);
}

export function isFormatError(e: unknown): boolean {
  return isTraceFormatError(e);
}

export function readPt(dir: string): PtSideband | undefined {
  return readPtSideband(dir);
}
