/** writeCoverage: coverage/lcov.info, coverage/jacoco.xml and, given source roots, the HTML source view. */
import * as fs from 'fs';
import * as path from 'path';
import { PartResult, Profiled } from '../model';
import { computeCoverage, Coverage, CoverageOptions } from './compute';
import { Counters, COUNTER_TYPES, reportCounters, ReportCounters } from './counters';
import { writeHtml } from './html';
import { formatJacocoXml } from './jacoco';
import { formatLcov } from './lcov';

export interface WriteCoverageOptions extends CoverageOptions {
  /** source roots (e.g. examples/switches): enables the HTML view and real paths in lcov's SF: */
  sources?: string[];
  /** the report's name (JaCoCo report name, lcov TN); default the analysed directory's base name */
  name?: string;
  /** coverage already computed (by a pass shared with other profiles) */
  coverage?: Coverage;
}

/** JSON-able counters: {INSTRUCTION: {missed, covered}, ..., recovered: {...}} */
export function countersSummary(c: Counters): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of COUNTER_TYPES) out[t] = { ...c[t] };
  out.recoveredOnly = { instructions: c.recoveredInstructions, branches: c.recoveredBranches, lines: c.recoveredLines };
  return out;
}

export function coverageSummary(cov: Coverage, r: ReportCounters): Record<string, unknown> {
  return {
    ...countersSummary(r.counters),
    classCount: r.packages.reduce((n, p) => n + p.classes.length, 0),
    // per class, for report.html's coverage chart
    classes: r.packages.flatMap((p) =>
      p.classes.map((c) => ({
        name: c.cls.name,
        lines: c.counters.LINE.covered + c.counters.LINE.missed,
        linesCovered: c.counters.LINE.covered,
        linesRecoveredOnly: c.counters.recoveredLines,
      })),
    ),
    events: cov.stats.events,
    eventsWithoutClassBytes: cov.stats.eventsWithoutBytes,
    classesWithoutBytes: cov.stats.classesWithoutBytes,
    badBci: cov.stats.badBci,
    unexpectedBranchSuccessors: cov.stats.unexpectedSuccessors,
    notes: [
      'lcov.info counts recovered-only instructions and branches as executed (recoveredOnly says how many)',
      'jacoco.xml counts recovered-only instructions and branches as covered (recoveredOnly says how many)',
    ],
  };
}

export function writeCoverage(a: Profiled, outDir: string, opts: WriteCoverageOptions = {}): PartResult {
  const cov = opts.coverage ?? computeCoverage(a, opts);
  const r = reportCounters(cov);
  const name = opts.name ?? path.basename(path.resolve(a.source.dir));
  const dir = path.join(outDir, 'coverage');
  fs.mkdirSync(dir, { recursive: true });
  const files = ['coverage/lcov.info', 'coverage/jacoco.xml'];
  fs.writeFileSync(path.join(outDir, files[0]), formatLcov(r, { testName: name, sources: opts.sources }));
  fs.writeFileSync(path.join(outDir, files[1]), formatJacocoXml(r, name));
  const summary = coverageSummary(cov, r);
  if (opts.sources?.length) {
    const html = writeHtml(r, path.join(dir, 'html'), { sources: opts.sources, title: name });
    files.push(...html.files.map((f) => `coverage/html/${f}`));
    summary.htmlMissingSources = html.missing;
  }
  return { files, summary };
}
