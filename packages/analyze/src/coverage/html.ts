/**
 * The HTML source view: index.html (per source file: line, branch, instruction and method coverage) and one
 * self-contained page per source file (inline CSS, no scripts, no network), every line coloured: covered,
 * recovered-only (ran, but known only from events recovery copied into a gap), partly covered branches,
 * missed, no code. On lines with branches the branch constructs (java-parser spans) are underlined in the
 * line's branch state. Next to each page, one source map per class (`<class>.map.json`, see sourcemap.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { Counter, LineCounts, ReportCounters, SourceFileCounters } from './counters';
import { classSourceMap } from './sourcemap';
import { locateSource } from './sources';
import { javaSpans, SourceSpan } from './spans';

export interface HtmlOptions {
  sources: readonly string[];
  title: string;
}

export interface HtmlResult {
  /** files written, relative to the html directory */
  files: string[];
  /** source files not found under any root (package-relative paths) */
  missing: string[];
  /** source files java-parser could not parse (shown without spans) */
  unparsed: string[];
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const CSS = `body{font:13px/1.35 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
pre{font:12px/1.4 ui-monospace,monospace;margin:0}.src{border:1px solid #ccc}
.l{display:block;white-space:pre}.n{display:inline-block;width:4em;color:#999;text-align:right;padding-right:1em;user-select:none}
.fc{background:#d6f5d6}.rc{background:#dcd6f7}.pc{background:#fff1b8}.nc{background:#fbd4d4}
.bc{text-decoration:underline 2px #2a8a2a}.bp{text-decoration:underline wavy 2px #c08a00}.bm{text-decoration:underline wavy 2px #c22}
.legend span{padding:1px 8px;margin-right:6px}`;

const LEGEND =
  '<p class="legend"><span class="fc">covered</span><span class="rc">recovered only</span><span class="pc">branches partly covered</span>' +
  '<span class="nc">missed</span><span>no code</span></p>';

/** The line's CSS class and title. */
function lineState(l: LineCounts | undefined): { cls: string; title: string } {
  if (!l || l.mi + l.ci === 0) return { cls: '', title: '' };
  const parts = [`${l.ci} of ${l.mi + l.ci} instructions`];
  if (l.mb + l.cb) parts.push(`${l.cb} of ${l.mb + l.cb} branches`);
  if (l.ri) parts.push(`${l.ri} instructions recovered only`);
  if (l.ci) parts.push(`ran ${l.hits} times`);
  let cls = 'nc';
  if (l.ci > 0) cls = l.ri === l.ci ? 'rc' : l.mb > 0 ? 'pc' : 'fc'; // recovered-only first: how it is known matters most
  return { cls, title: parts.join(', ') };
}

const branchClass = (l: LineCounts): string => (l.cb === 0 ? 'bm' : l.mb > 0 ? 'bp' : 'bc');

/** One line's text with the branch spans starting on it underlined (spans clipped to the line). */
function renderLine(text: string, nr: number, l: LineCounts | undefined, spans: SourceSpan[]): string {
  const marks = l && l.mb + l.cb > 0 ? spans.filter((s) => s.kind === 'branch' && s.line === nr) : [];
  if (!marks.length) return esc(text);
  const cls = branchClass(l!);
  const title = `${l!.cb} of ${l!.mb + l!.cb} branches taken`;
  // CST spans are nested or disjoint; clipped to the line they stay so: open/close with a stack
  const ranges = marks
    .map((s) => ({ from: s.column, to: s.endLine === nr ? s.endColumn : text.length }))
    .sort((x, y) => x.from - y.from || y.to - x.to);
  let out = '';
  let at = 0;
  const open: number[] = [];
  const closeUpTo = (pos: number) => {
    while (open.length && open[open.length - 1] <= pos) {
      const end = open.pop()!;
      out += esc(text.slice(at, end)) + '</span>';
      at = end;
    }
  };
  for (const r of ranges) {
    closeUpTo(r.from);
    out += esc(text.slice(at, r.from)) + `<span class="${cls}" title="${title}">`;
    at = r.from;
    open.push(r.to);
  }
  closeUpTo(text.length);
  return out + esc(text.slice(at));
}

const pct = (c: Counter): string => {
  const t = c.missed + c.covered;
  return t ? `${c.covered}/${t} (${((100 * c.covered) / t).toFixed(1)}%)` : '-';
};

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${esc(title)}</title><style>${CSS}</style></head><body>${body}</body></html>\n`;
}

const pageName = (relative: string) => `${relative.replace(/\//g, '.')}.html`;

function filePage(f: SourceFileCounters, text: string, spans: SourceSpan[], title: string, maps: string[]): string {
  const c = f.counters;
  let body = `<h1>${esc(f.packageName ? `${f.packageName}/${f.name}` : f.name)}</h1><p><a href="index.html">${esc(title)}</a></p>${LEGEND}`;
  body += `<table><tr><th>lines</th><th>branches</th><th>instructions</th><th>methods</th><th>recovered only (lines / instructions / branches)</th></tr>`;
  body += `<tr><td>${pct(c.LINE)}</td><td>${pct(c.BRANCH)}</td><td>${pct(c.INSTRUCTION)}</td><td>${pct(c.METHOD)}</td>`;
  body += `<td>${c.recoveredLines} / ${c.recoveredInstructions} / ${c.recoveredBranches}</td></tr></table>`;
  body += `<p>source maps: ${maps.map((m) => `<a href="${esc(m)}">${esc(m)}</a>`).join(' ')}</p><pre class="src">`;
  const lines = text.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((t, i) => {
    const nr = i + 1;
    const l = f.lines.get(nr);
    const st = lineState(l);
    const attrs = st.cls ? ` ${st.cls}" title="${st.title}` : '';
    body += `<span class="l${attrs}" id="L${nr}"><span class="n">${nr}</span>${renderLine(t, nr, l, spans)}</span>`;
  });
  return page(`${f.name} - ${title}`, body + '</pre>');
}

export function writeHtml(r: ReportCounters, dir: string, opts: HtmlOptions): HtmlResult {
  fs.mkdirSync(dir, { recursive: true });
  const res: HtmlResult = { files: [], missing: [], unparsed: [] };
  let rows = '';
  for (const p of r.packages)
    for (const f of p.sourceFiles) {
      const loc = locateSource(f.packageName, f.name, opts.sources);
      const c = f.counters;
      const cells = `<td>${pct(c.LINE)}</td><td>${pct(c.BRANCH)}</td><td>${pct(c.INSTRUCTION)}</td><td>${pct(c.METHOD)}</td><td>${c.recoveredLines}</td>`;
      if (!loc.file) {
        res.missing.push(loc.relative);
        rows += `<tr><td>${esc(loc.relative)} (source not found)</td>${cells}</tr>`;
        continue;
      }
      const text = fs.readFileSync(loc.file, 'utf8');
      let spans: SourceSpan[] = [];
      try {
        spans = javaSpans(text, loc.file);
      } catch {
        res.unparsed.push(loc.relative);
      }
      const maps: string[] = [];
      for (const cc of f.classes) {
        const mapName = `${cc.cls.name.replace(/\//g, '.')}.map.json`;
        fs.writeFileSync(path.join(dir, mapName), JSON.stringify(classSourceMap(cc.cls, path.relative(dir, loc.file))));
        maps.push(mapName);
      }
      const name = pageName(loc.relative);
      fs.writeFileSync(path.join(dir, name), filePage(f, text, spans, opts.title, maps));
      res.files.push(name, ...maps);
      rows += `<tr><td><a href="${esc(name)}">${esc(loc.relative)}</a></td>${cells}</tr>`;
    }
  const c = r.counters;
  let body = `<h1>Coverage: ${esc(opts.title)}</h1>${LEGEND}<table><tr><th>source file</th><th>lines</th><th>branches</th><th>instructions</th><th>methods</th><th>lines recovered only</th></tr>`;
  body += `${rows}<tr><th>total</th><th>${pct(c.LINE)}</th><th>${pct(c.BRANCH)}</th><th>${pct(c.INSTRUCTION)}</th><th>${pct(c.METHOD)}</th><th>${c.recoveredLines}</th></tr></table>`;
  fs.writeFileSync(path.join(dir, 'index.html'), page(`Coverage: ${opts.title}`, body));
  res.files.unshift('index.html');
  return res;
}
