/** @jportal/format: the jportal trace directory — reader, writer, validator and ring reader. */
export { TraceFormatError, isTraceFormatError } from './errors';
export type { TraceErrorCode } from './errors';
export { crc32 } from './crc32';
export { parseLayout, formatLayout } from './layout';
export type { LayoutField, ScalarType } from './layout';
export { FORMAT_MAJOR, FORMAT_MINOR, RECORD_HEADER_SIZE, canonicalTypeTable, encodeFileHeader, decodeFileHeader } from './header';
export type { FileHeader, TypeEntry } from './header';
export * from './records';
export { MetaReader, readMetaFile, MAX_RECORD_SIZE } from './reader';
export type { TraceRecord, KnownRecord, ReadProblem, ReaderOptions } from './reader';
export { MetaWriter } from './writer';
export { RingReader, RING_MAGIC, RING_VERSION } from './ring';
export type { RingInfo } from './ring';
export { validateTrace, metaPath } from './validate';
export type { ValidationReport } from './validate';
export { readPtSideband } from './sideband';
export type { PtSideband, PtThread } from './sideband';
