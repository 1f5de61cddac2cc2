/** @jportal/analyze: profiles and reports from decoded (and recovered) per-thread bytecode events. */
export { Kind, Origin, Tier, TIER_NAMES, ORIGIN_NAMES, methodLabel, methodKeyOf, windowsOf, forEachWindow } from './model';
export type { Analysis, AnalysisMethod, ThreadEvents, ThreadInfo, EventWindow, WindowedAnalysis, Profiled, PartResult } from './model';
export { loadTraceAnalysis, loadTraceWindows, analyzeWindowEvents, loadOracleAnalysis, refineDecoded, createRefiner, addReports } from './load';
export type { TraceLoadOptions, TraceAnalysis, WindowedLoadOptions, WindowedTraceAnalysis, OracleLoadOptions, RefineOptions, RefineReport, RefineTimes, ThreadRefiner } from './load';
export { walkStacks, walkThread, walkWindows, StackWalker, runPasses, runPass, PassRunner } from './walk';
export type { StackVisitor, WalkStats, WalkPass, ThreadWalk } from './walk';
// every part from one read of the events
export { writeProfiles, profilePasses, PROFILE_PARTS } from './profiles';
export { TraceStream } from './stream';
export type { StreamedTraceAnalysis, StreamLoadOptions } from './stream';
export type { WriteProfilesOptions, WrittenProfiles, ProfilePart } from './profiles';
// coverage (issue 7)
export { computeCoverage, writeCoverage, reportCounters as coverageCounters, formatLcov, formatJacocoXml, javaSpans, classSourceMap, Hit as CoverageHit } from './coverage';
export type { Coverage, CoverageOptions, ClassCoverage, MethodCoverage, BranchCoverage, WriteCoverageOptions, ReportCounters as CoverageReport, LineCounts as CoverageLine } from './coverage';
// calling-context tree, context ids, Ball-Larus paths (issue 7)
export { Cct, buildCct, writeCct, formatCct, addThreadToCct, matchMethods, contextKeyOf } from './cct';
export type { CctOptions, CctResult, WriteCctOptions } from './cct';
export { ContextNumbering, buildContextNumbering, numberGraph, contextIds, contextIdWindows, writeContexts, readContextIds, readContextRuns, ROOT as CONTEXT_ROOT, EdgeKind as ContextEdgeKind, EDGE_KIND_NAMES as CONTEXT_EDGE_KIND_NAMES } from './contexts';
export type { ContextEdge, ContextFrame, ContextIdHeader } from './contexts';
export { PathNumbering, profilePaths, writePaths, pathTotal, blockRange } from './ball-larus';
export type { BlPath, MethodPaths } from './ball-larus';
// timelines, collapsed stacks, report.html (issue 7)
export { writeTimeline, ChunkWriter, threadIds } from './timeline';
export type { TimelineOptions } from './timeline';
export { sliceAnalysis, chooseClock, eventTimes, gapName, SliceKind } from './timeslices';
export type { Clock, ClockKind, Slices, SliceSet, ThreadSlices, CollectStats } from './timeslices';
export { writeCollapsed, buildStackTree, childrenOf } from './collapsed';
export type { StackTree, CollapsedResult } from './collapsed';
export { writeReport, reportSummary, hotMethods, flameData, coverageData } from './report';
export type { ReportOptions } from './report';
// hot methods, pprof profile, latency histograms (docs/profiles.md)
export { computeHotMethods, writeHotMethods, TIER_CLASS_NAMES, tierClassOf, IntervalClock, formatNs } from './hot';
export type { HotMethods, ThreadHot, MethodHot } from './hot';
export { buildPprof, writePprof, readPprof } from './pprof';
export type { PprofSummary } from './pprof';
export { computeLatency, writeLatency, timeResolution, bucketIndex, bucketBounds, percentile } from './latency';
export type { Latency, LatencyOptions, LatencyKind, Histogram, Bucket, TimeResolution } from './latency';
