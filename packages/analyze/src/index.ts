/** @jportal/analyze: profiles and reports from decoded (and recovered) per-thread bytecode events. */
export { Kind, Origin, Tier, TIER_NAMES, ORIGIN_NAMES, methodLabel, methodKeyOf } from './model';
export type { Analysis, AnalysisMethod, ThreadEvents, PartResult } from './model';
export { loadTraceAnalysis, loadOracleAnalysis } from './load';
export type { TraceLoadOptions, TraceAnalysis, OracleLoadOptions } from './load';
export { walkStacks, StackWalker } from './walk';
export type { StackVisitor, WalkStats } from './walk';
