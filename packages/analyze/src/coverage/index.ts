/** Coverage (issue 7): exact per-bytecode line, branch and instruction coverage; lcov, JaCoCo XML, HTML. */
export { computeCoverage, coveragePass, notJdk, Hit } from './compute';
export type { Coverage, CoverageOptions, CoverageStats, ClassCoverage, MethodCoverage, BranchCoverage } from './compute';
export { reportCounters, classCounters, methodCounters, COUNTER_TYPES } from './counters';
export type { Counter, Counters, CounterType, LineCounts, NodeCounters, ReportCounters, ClassCounters, PackageCounters, SourceFileCounters } from './counters';
export { formatLcov } from './lcov';
export { formatJacocoXml } from './jacoco';
export { writeHtml } from './html';
export { javaSpans, JavaParseError } from './spans';
export type { SourceSpan } from './spans';
export { classSourceMap } from './sourcemap';
export { jacocoFilter } from './filters';
export { writeCoverage, coverageSummary } from './write';
export type { WriteCoverageOptions } from './write';
