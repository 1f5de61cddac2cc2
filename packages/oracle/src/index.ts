/** @jportal/oracle: ground truth, and measuring a decoder's events against it. */
export { EventKind, Origin, sequenceAccuracy, callSequenceAccuracy, countError, hotMethodOverlap, compareThread, lossAccuracy, alignmentBound } from './compare';
export type { FillMeasure, LossAccuracy, EventSeq, SequenceOptions, SequenceAccuracy, CountError, MethodCount, HotMethods, ThreadComparison } from './compare';
export { align, alignmentPairs } from './align';
export type { AlignOptions, Alignment, Matcher } from './align';
// the oracle directory reader and the decoded/oracle -> EventSeq bridge
export * from './read';
export * from './bridge';
export { maskUnseen, hiddenEntries } from './unseen';
export type { UnseenMask } from './unseen';
export { formatDiff, missesByMethod } from './diff';
export type { DiffOptions, MethodMisses } from './diff';
