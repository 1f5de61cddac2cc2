/**
 * report.html: one self-contained page (inline CSS, script and data; no network) with the summary (threads,
 * bytecodes, observed/inferred/recovered shares, gaps and lost time, hot methods), a flame graph, a timeline per
 * thread, per-class line coverage (when the coverage part ran) and links to every file the parts wrote. The
 * embedded data is bounded: flame graph nodes under 0.1% of all bytecodes and timeline frames beyond a budget
 * (the shortest) are left out.
 */
import * as fs from 'fs';
import * as path from 'path';
import { buildStackTree, childrenOf, StackTree } from './collapsed';
import { EventWindow, Kind, methodLabel, Origin, PartResult, Profiled } from './model';
import { ERROR_HOOK_JS, REPORT_JS } from './report/client';
import { REPORT_CSS } from './report/style';
import { gapName, sliceAnalysis, SliceKind, SliceOptions, SliceSet } from './timeslices';
import { withRoom } from './typed';
import { runPass, ThreadWalk, WalkPass } from './walk';
import { threadIds } from './timeline';
import { GAP_REASONS } from '@jportal/decode';

export interface ReportOptions {
  title?: string;
  /** flame graph nodes below this share of all bytecodes are left out (default 0.001) */
  minFlameShare?: number;
  /** at most this many flame graph nodes (default 4000) */
  maxFlameNodes?: number;
  /** at most this many timeline frames over all threads (default 30000) */
  maxTimelineFrames?: number;
  /** the stack tree, when the caller built it already (writeCollapsed's) */
  tree?: StackTree;
  /** what a shared walk computed already (runPasses): reportSummaryPass, hotMethodsListPass(a, REPORT_HOT_METHODS), slicePasses(a, reportSliceOptions()) */
  summary?: ReportSummary;
  hot?: { name: string; self: number }[];
  slices?: SliceSet;
}

/** how many hot methods report.html lists */
export const REPORT_HOT_METHODS = 15;

interface ThreadSummary {
  name: string;
  tid: number;
  events: number;
  bytecodes: number;
  gaps: number;
  lostNs: number | null;
}

/** Counts for the summary: bytecodes by origin, gaps and the time they lost, per thread. */
export function reportSummary(a: Profiled): ReportSummary {
  return runPass(a, reportSummaryPass(a));
}

export type ReportSummary = ReturnType<ReturnType<typeof reportSummaryPass>['finish']>;

/** reportSummary as a pass that can share its read with others (runPasses). */
export function reportSummaryPass(a: Profiled) {
  const origins = [0, 0, 0];
  const timed = a.tscPerNs > 0;
  const threads: ThreadSummary[] = [];
  // the earliest and latest TSC seen ([0], [1]): a typed array, since the loop below runs once per window, so V8
  // compiles it on stack replacement, and there a double local assigned under a condition is boxed anew each time
  const bounds = new Float64Array([Infinity, -Infinity]);
  for (const t of a.threads) threads.push({ name: t.name, tid: t.tid, events: 0, bytecodes: 0, gaps: 0, lostNs: timed ? 0 : null });
  const window = (t: EventWindow, k: number) => {
    const s = threads[k];
    const lohi = bounds;
    for (let i = 0; i < t.length; i++) {
      const k = t.kind[i];
      if (k === Kind.Bytecode) {
        s.bytecodes++;
        const o = t.origin[i];
        if (o <= Origin.Recovered) origins[o]++;
      } else if (k === Kind.Gap) {
        s.gaps++;
        const lost = t.endTsc[i] - t.tsc[i];
        if (s.lostNs !== null && lost > 0) s.lostNs += lost / a.tscPerNs;
      }
      const x = t.tsc[i];
      if (x < lohi[0]) lohi[0] = x;
      if (x > lohi[1]) lohi[1] = x;
    }
  };
  const sum = (f: (s: ThreadSummary) => number) => threads.reduce((n, s) => n + f(s), 0);
  // (the threads' lengths are known once they are read: a streamed trace's grow as they are decoded)
  const finish = () => {
    a.threads.forEach((t, k) => (threads[k].events = t.length));
    return summaryOf();
  };
  const summaryOf = () => ({
    threads,
    threadsWithEvents: threads.filter((s) => s.events > 0).length,
    events: sum((s) => s.events),
    bytecodes: sum((s) => s.bytecodes),
    origins,
    gaps: sum((s) => s.gaps),
    lostNs: timed ? Math.round(sum((s) => s.lostNs ?? 0)) : null,
    durationNs: timed && bounds[1] > bounds[0] ? Math.round((bounds[1] - bounds[0]) / a.tscPerNs) : null,
    methods: a.methods.length,
    frames: 0,
  });
  return { thread: (k: number): ThreadWalk => ({ visitor: {}, window: (w) => window(w, k) }), finish };
}

/** Methods by bytecodes executed in them (self), the top n. */
export function hotMethods(a: Profiled, n: number): { name: string; self: number }[] {
  return runPass(a, hotMethodsListPass(a, n));
}

/** hotMethods as a pass that can share its read with others (runPasses). */
export function hotMethodsListPass(a: Profiled, n: number): WalkPass<{ name: string; self: number }[]> {
  let self = new Float64Array(a.methods.length);
  const window = (t: EventWindow) => {
    // (the window's methods are in the table, which grows while a trace is streamed)
    self = withRoom(self, a.methods.length);
    for (let i = 0; i < t.length; i++) if (t.kind[i] === Kind.Bytecode && t.method[i] >= 0) self[t.method[i]]++;
  };
  return { thread: () => ({ visitor: {}, window }), finish: () => topByName(a, self, n) };
}

function topByName(a: Profiled, self: Float64Array, n: number): { name: string; self: number }[] {
  const byName = new Map<string, number>();
  self.forEach((v, m) => {
    if (v > 0) {
      const k = methodLabel(a.methods[m]);
      byName.set(k, (byName.get(k) ?? 0) + v);
    }
  });
  return [...byName].map(([name, v]) => ({ name, self: v })).sort((x, y) => y.self - x.self).slice(0, n);
}

/** The flame graph's nodes: pre-order, children by name, nodes under minShare of the root (and beyond max) cut. */
export function flameData(tree: StackTree, minShare: number, maxNodes: number) {
  const { first, list } = childrenOf(tree);
  const minValue = tree.total[0] * minShare;
  const names: string[] = [];
  const nameIds = new Map<number, number>();
  const out = { names, parent: [] as number[], name: [] as number[], value: [] as number[], self: [] as number[], cut: 0 };
  const add = (node: number, parent: number): number => {
    let nm = nameIds.get(tree.name[node]);
    if (nm === undefined) {
      nm = names.length;
      names.push(node === 0 ? 'all' : tree.names[tree.name[node]]);
      nameIds.set(tree.name[node], nm);
    }
    out.parent.push(parent);
    out.name.push(nm);
    out.value.push(tree.total[node]);
    out.self.push(tree.self[node]);
    return out.parent.length - 1;
  };
  // breadth-first choice of the kept nodes (the biggest contexts first), then pre-order emission
  const keep = new Uint8Array(tree.count);
  keep[0] = 1;
  let kept = 1;
  const queue = [0];
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q];
    for (let k = first[node]; k < first[node + 1]; k++) {
      const c = list[k];
      if (tree.total[c] >= minValue && tree.total[c] > 0 && kept < maxNodes) {
        keep[c] = 1;
        kept++;
        queue.push(c);
      } else out.cut++;
    }
  }
  const stack: [number, number][] = [[0, -1]];
  while (stack.length) {
    const [node, parent] = stack.pop()!;
    const id = add(node, parent);
    for (let k = first[node + 1] - 1; k >= first[node]; k--) if (keep[list[k]]) stack.push([list[k], id]);
  }
  return out;
}

/** The timeline's slices, column-wise per thread, at most maxFrames frames (the longest). */
/** The report's timeline slicing (for slicePasses when the slices are made by a shared walk). */
export function reportSliceOptions(opts: ReportOptions = {}): SliceOptions {
  const maxFrames = opts.maxTimelineFrames ?? 30000;
  return { maxFrames, maxGaps: Math.max(1, Math.floor(maxFrames / 5)) };
}

function timelineData(a: Profiled, set: SliceSet) {
  const tids = threadIds(a);
  const names: string[] = [];
  const nameIds = new Map<number, number>();
  const threads = set.threads.map((ts, k) => {
    const s = ts.slices;
    const t = { name: ts.thread.name, tid: tids[k], endTime: ts.endTime, cut: ts.stats.framesKept < ts.stats.frames, start: [] as number[], end: [] as number[], depth: [] as number[], id: [] as number[], gap: [] as number[] };
    for (let i = 0; i < s.count; i++) {
      const gap = s.kind[i] === SliceKind.Gap;
      let id = s.id[i];
      if (!gap) {
        let n = nameIds.get(id);
        if (n === undefined) {
          n = names.length;
          names.push(id >= 0 && id < a.methods.length ? methodLabel(a.methods[id]) : '[unknown]');
          nameIds.set(id, n);
        }
        id = n;
      }
      t.start.push(s.start[i]);
      t.end.push(s.end[i]);
      t.depth.push(s.depth[i]);
      t.id.push(id);
      t.gap.push(gap ? 1 : 0);
    }
    return t;
  });
  return {
    data: { unit: set.clock.kind === 'tsc-ns' ? 'ns' : 'events', minDuration: set.threshold, names, gapNames: GAP_REASONS.map((_, r) => gapName(r)), threads },
    frames: set.frames,
  };
}

interface CoverageClass {
  name: string;
  lines: number;
  linesCovered: number;
  linesRecoveredOnly?: number;
}

/** Per-class line coverage from the coverage part's summary, when it has the expected shape. */
export function coverageData(part: PartResult | undefined, max = 80) {
  const raw = (part?.summary as { classes?: unknown } | undefined)?.classes;
  if (!Array.isArray(raw)) return null;
  const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
  const classes: CoverageClass[] = [];
  for (const c of raw) {
    if (!c || typeof c !== 'object') continue;
    const o = c as Record<string, unknown>;
    if (typeof o.name !== 'string') continue;
    const lines = num(o.lines);
    if (lines <= 0) continue;
    const covered = Math.min(lines, num(o.linesCovered));
    classes.push({ name: o.name.replace(/\//g, '.'), lines, linesCovered: covered, linesRecoveredOnly: Math.min(covered, num(o.linesRecoveredOnly)) });
  }
  if (!classes.length) return null;
  const total = classes.reduce((t, c) => ({ lines: t.lines + c.lines, linesCovered: t.linesCovered + c.linesCovered, linesRecoveredOnly: t.linesRecoveredOnly + (c.linesRecoveredOnly ?? 0) }), { lines: 0, linesCovered: 0, linesRecoveredOnly: 0 });
  classes.sort((x, y) => y.lines - x.lines || (x.name < y.name ? -1 : 1));
  return { total, classes: classes.slice(0, max), cut: Math.max(0, classes.length - max) };
}

/** A part's files (relative, safe as links) and its scalar summary entries. */
function partData(name: string, p: PartResult) {
  const files = (Array.isArray(p.files) ? p.files : []).filter((f): f is string => typeof f === 'string' && !path.isAbsolute(f) && !f.split(/[\\/]/).includes('..'));
  const summary: [string, string | number][] = [];
  for (const [k, v] of Object.entries(p.summary ?? {}))
    if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') summary.push([k, typeof v === 'boolean' ? String(v) : v]);
  return { name, files: files.map((f) => f.split(path.sep).join('/')), summary: summary.slice(0, 40) };
}

const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
/** script text that is safe inside a <script> element (no "</script") */
const scriptSafe = (s: string): string => s.replace(/<\//g, '<\\/');
/** JSON that is safe inside a <script> element: every "<" escaped */
const jsonSafe = (s: string): string => s.replace(/</g, '\\u003c');

/** Writes report.html into outDir. */
export function writeReport(a: Profiled, outDir: string, parts: Record<string, PartResult>, opts: ReportOptions = {}): PartResult {
  fs.mkdirSync(outDir, { recursive: true });
  const title = opts.title ?? `jportal report: ${path.basename(path.resolve(a.source.dir))}`;
  const summary = opts.summary ?? reportSummary(a);
  const tree = opts.tree ?? buildStackTree(a);
  const flame = flameData(tree, opts.minFlameShare ?? 0.001, opts.maxFlameNodes ?? 4000);
  const timeline = timelineData(a, opts.slices ?? sliceAnalysis(a, reportSliceOptions(opts)));
  summary.frames = timeline.frames;
  const data = {
    title,
    source: a.source,
    generated: new Date().toISOString(),
    summary,
    hot: opts.hot ?? hotMethods(a, REPORT_HOT_METHODS),
    flame,
    timeline: timeline.data,
    coverage: coverageData(parts.coverage),
    parts: Object.entries(parts).map(([k, p]) => partData(k, p)),
    problems: a.problems.slice(0, 50),
  };
  const json = jsonSafe(JSON.stringify(data));
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${REPORT_CSS}</style>
<script>${scriptSafe(ERROR_HOOK_JS)}</script>
</head>
<body>
<header><h1>${escapeHtml(title)}</h1><div class="sub">${escapeHtml(`${a.source.kind} ${a.source.dir}`)} · generated ${escapeHtml(data.generated)} by jportal analyze</div></header>
<main>
<div id="errors"></div>
<section id="summary-section"><h2>Summary</h2>
<div class="cards" id="cards"></div>
<div class="cols" style="margin-top:10px">
<div><h3 style="font-size:13px;margin:4px 0">How the bytecodes are known</h3><div class="bar" id="origin-bar"></div><div class="legend" id="origin-legend" style="margin-top:4px"></div>
<h3 style="font-size:13px;margin:10px 0 4px">Threads</h3><table><thead><tr><th>thread</th><th>tid</th><th>bytecodes</th><th>gaps</th><th>lost</th></tr></thead><tbody id="threads-table"></tbody></table></div>
<div><h3 style="font-size:13px;margin:4px 0">Hot methods (self bytecodes)</h3><table><thead><tr><th>method</th><th>bytecodes</th><th>share</th><th></th></tr></thead><tbody id="hot-table"></tbody></table></div>
</div></section>
<section id="flame-section"><h2>Flame graph<span class="hint">bytecodes per calling context, all threads; click a frame to zoom, click it again to zoom out; contexts under ${((opts.minFlameShare ?? 0.001) * 100).toFixed(1)}% not shown</span></h2>
<div class="toolbar"><button id="flame-reset">reset zoom</button><span id="flame-zoom" class="hint"></span></div>
<svg id="flame" xmlns="http://www.w3.org/2000/svg"></svg></section>
<section id="timeline-section"><h2>Timeline<span class="hint">method frames by depth per thread, gaps in red; wheel to zoom, drag to pan, double-click to reset</span></h2>
<div class="toolbar"><button id="tl-reset">reset</button><span id="tl-range" class="hint"></span></div>
<div id="timelines"></div></section>
<section id="coverage-section"><h2>Line coverage<span class="hint" id="coverage-total"></span></h2>
<div class="legend" style="margin-bottom:4px"><span><i style="background:#3a8f5c"></i>covered</span><span><i style="background:#8e5bd6"></i>covered only by recovered events</span><span><i style="background:#e8ebf0"></i>not covered</span></div>
<div id="coverage"></div></section>
<section id="parts-section"><h2>Files</h2><div id="parts"></div></section>
<section id="problems"><h2>Problems while loading</h2><ul></ul></section>
</main>
<div id="tip"></div>
<script type="application/json" id="report-data">${json}</script>
<script>${scriptSafe(REPORT_JS)}</script>
</body>
</html>
`;
  const file = 'report.html';
  fs.writeFileSync(path.join(outDir, file), html);
  return {
    files: [file],
    summary: { bytes: Buffer.byteLength(html), flameNodes: flame.parent.length, flameNodesCut: flame.cut, timelineSlices: timeline.data.threads.reduce((n, t) => n + t.start.length, 0) },
  };
}
