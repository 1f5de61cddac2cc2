/**
 * report.html on synthetic analyses: self-contained (no network), the embedded data (summary, hot methods, flame
 * graph cut, timeline, coverage when present and well-formed), links to every part's files, safe embedding.
 * Rendering is checked in headless Chromium by test/e2e/analyze-report.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Analysis, Kind, Origin, ThreadEvents, Tier } from '../src/model';
import { buildStackTree } from '../src/collapsed';
import { coverageData, flameData, writeReport } from '../src/report';

type Ev = [Kind, number, number, Origin?, number?];

function thread(name: string, tid: number, evs: Ev[]): ThreadEvents {
  const n = evs.length;
  const t: ThreadEvents = {
    name, tid, javaTid: tid, length: n,
    kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n).fill(-1),
    tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN), origin: new Uint8Array(n), tier: new Uint8Array(n).fill(Tier.Interpreted),
  };
  evs.forEach(([k, m, tsc, origin, end], i) => {
    t.kind[i] = k;
    t.method[i] = m;
    t.tsc[i] = tsc;
    t.origin[i] = origin ?? Origin.Observed;
    if (end !== undefined) t.endTsc[i] = end;
  });
  return t;
}

const E = Kind.Entry, X = Kind.Exit, B = Kind.Bytecode, G = Kind.Gap;

/** main: A calls B (4 bytecodes: 2 observed, 1 inferred, 1 recovered in B) and has a gap of 2000 ticks (1000 ns) */
function sample(threadName = 'main'): Analysis {
  const main = thread(threadName, 11, [
    [E, 0, 0], [B, 0, 10], [E, 1, 20], [B, 1, 30], [B, 1, 40, Origin.Inferred], [B, 1, 50, Origin.Recovered], [X, 1, 60],
    [G, -1, 100, undefined, 2100], [B, 0, 2200], [B, 0, 2300], [X, 0, 4000],
  ]);
  const idle = thread('idle', 12, []);
  return {
    source: { kind: 'trace', dir: '/x/trace' },
    methods: [{ className: 'app/Main', name: 'run', signature: '()V' }, { className: 'app/Main', name: 'work', signature: '(I)I' }],
    threads: [main, idle],
    tscPerNs: 2,
    problems: ['class Foo: truncated'],
  };
}

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'report-test-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** the JSON embedded in report.html */
function embedded(html: string) {
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]);
}

describe('writeReport', () => {
  it('writes one self-contained page: inline style and scripts, no external resources', () => {
    const r = writeReport(sample(), dir, {});
    expect(r.files).toEqual(['report.html']);
    const html = fs.readFileSync(path.join(dir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/<script[^>]*\bsrc=/i);
    expect(html).not.toMatch(/@import|url\(|@font-face/i);
    // the only URL is the SVG namespace (an identifier, never fetched)
    expect(html.match(/https?:\/\/[^\s"'<)]+/g)).toEqual(['http://www.w3.org/2000/svg', 'http://www.w3.org/2000/svg']);
    expect(r.summary.bytes).toBe(Buffer.byteLength(html));
  });

  it('embeds the summary: threads, bytecodes by origin, gaps and lost time, hot methods', () => {
    const d = embedded(fs.readFileSync(path.join(dir, writeReport(sample(), dir, {}).files[0]), 'utf8'));
    expect(d.summary).toMatchObject({ threadsWithEvents: 1, events: 11, bytecodes: 6, origins: [4, 1, 1], gaps: 1, lostNs: 1000, durationNs: 2000, methods: 2 });
    expect(d.summary.threads.map((t: { name: string; bytecodes: number }) => [t.name, t.bytecodes])).toEqual([['main', 6], ['idle', 0]]);
    expect(d.hot).toEqual([{ name: 'app.Main.run', self: 3 }, { name: 'app.Main.work', self: 3 }]);
    expect(d.problems).toEqual(['class Foo: truncated']);
  });

  it('embeds the flame graph (all > thread > frames, values inclusive) and the timeline slices', () => {
    const d = embedded(fs.readFileSync(path.join(dir, writeReport(sample(), dir, {}).files[0]), 'utf8'));
    const f = d.flame;
    const rows = f.parent.map((p: number, i: number) => [p, f.names[f.name[i]], f.value[i], f.self[i]]);
    expect(rows).toEqual([[-1, 'all', 6, 0], [0, 'main', 6, 0], [1, 'app.Main.run', 6, 3], [2, 'app.Main.work', 3, 3]]);
    const t = d.timeline;
    expect(t.unit).toBe('ns');
    const main = t.threads[0];
    // ns = tsc / 2: run [0, 2000], work [10, 30], gap [50, 1050]
    expect(main.start.map((s: number, i: number) => [main.gap[i] ? t.gapNames[main.id[i]] : t.names[main.id[i]], s, main.end[i], main.depth[i]])).toEqual([
      ['app.Main.run', 0, 2000, 0],
      ['app.Main.work', 10, 30, 1],
      ['gap: overflow', 50, 1050, 1],
    ]);
    expect(t.threads[1].start).toEqual([]);
  });

  it('cuts flame graph nodes under the minimum share', () => {
    // one thread: A with 10000 bytecodes, A>B with 5 (0.05%), A>C with 20 (0.2%)
    const evs: Ev[] = [[E, 0, 0]];
    for (let i = 0; i < 10000; i++) evs.push([B, 0, 1]);
    evs.push([E, 1, 2]);
    for (let i = 0; i < 5; i++) evs.push([B, 1, 3]);
    evs.push([X, 1, 4], [E, 2, 5]);
    for (let i = 0; i < 20; i++) evs.push([B, 2, 6]);
    evs.push([X, 2, 7], [X, 0, 8]);
    const a: Analysis = { ...sample(), threads: [thread('t', 1, evs)], methods: ['A', 'B', 'C'].map((n) => ({ className: 'K', name: n, signature: '()V' })) };
    const f = flameData(buildStackTree(a), 0.001, 100);
    expect(f.parent.map((_: number, i: number) => f.names[f.name[i]])).toEqual(['all', 't', 'K.A', 'K.C']);
    expect(f.cut).toBe(1);
    expect(flameData(buildStackTree(a), 0, 3).parent.length).toBe(3);
  });

  it('links every file of every part (relative) and shows their scalar summaries', () => {
    const parts = {
      timeline: { files: ['timeline.trace.json', 'timeline.speedscope.json'], summary: { frames: 12, clock: 'tsc-ns' } },
      coverage: { files: ['coverage/lcov.info', 'coverage/jacoco.xml', '/etc/passwd', '../up.txt'], summary: { linesCovered: 3, nested: { x: 1 } } },
    };
    const html = fs.readFileSync(path.join(dir, writeReport(sample(), dir, parts).files[0]), 'utf8');
    const d = embedded(html);
    expect(d.parts).toEqual([
      { name: 'timeline', files: ['timeline.trace.json', 'timeline.speedscope.json'], summary: [['frames', 12], ['clock', 'tsc-ns']] },
      { name: 'coverage', files: ['coverage/lcov.info', 'coverage/jacoco.xml'], summary: [['linesCovered', 3]] },
    ]);
  });

  it('draws coverage only from a well-formed summary.classes', () => {
    expect(coverageData(undefined)).toBeNull();
    expect(coverageData({ files: [], summary: { classes: 'nope' } })).toBeNull();
    expect(coverageData({ files: [], summary: { classes: [{ name: 'a/B', lines: 0 }, null, { lines: 3 }] } })).toBeNull();
    const c = coverageData({ files: [], summary: { classes: [{ name: 'a/B', lines: 10, linesCovered: 4 }, { name: 'a/C', lines: 20, linesCovered: 25, linesRecoveredOnly: 2 }, { name: 'a/D', lines: 5, linesCovered: 'x' }] } }, 2);
    expect(c).toEqual({
      total: { lines: 35, linesCovered: 24, linesRecoveredOnly: 2 },
      classes: [{ name: 'a.C', lines: 20, linesCovered: 20, linesRecoveredOnly: 2 }, { name: 'a.B', lines: 10, linesCovered: 4, linesRecoveredOnly: 0 }],
      cut: 1,
    });
  });

  it('embeds names safely: no "</script>" or markup from thread or method names escapes', () => {
    const a = sample('</script><img src=x onerror=alert(1)>');
    const html = fs.readFileSync(path.join(dir, writeReport(a, dir, {}, { title: '<b>t</b>' }).files[0]), 'utf8');
    expect(html).not.toContain('<img');
    expect(html).toContain('<title>&lt;b&gt;t&lt;/b&gt;</title>');
    expect((html.match(/<\/script>/g) ?? []).length).toBe(3);
    expect(embedded(html).summary.threads[0].name).toBe('</script><img src=x onerror=alert(1)>');
  });

  it('shows no time for ground truth (no TSC)', () => {
    const a = sample();
    a.tscPerNs = 0;
    for (const t of a.threads) t.tsc.fill(NaN);
    const d = embedded(fs.readFileSync(path.join(dir, writeReport(a, dir, {}).files[0]), 'utf8'));
    expect(d.summary.lostNs).toBeNull();
    expect(d.summary.durationNs).toBeNull();
    expect(d.timeline.unit).toBe('events');
  });
});
