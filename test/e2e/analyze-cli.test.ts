/**
 * `jportal analyze` as a user runs it: a loss-free emulated trace of an example in, a report directory out with
 * every part the issue names, a --json summary whose numbers agree with the files, and bad input refused with
 * exit 2 and a message naming what is wrong.
 */
import * as fs from 'fs';
import * as path from 'path';
import { decodeTrace, fileRangeAtTime, loadTrace, ptBytesInSpan } from '@jportal/decode';
import { QueryDecoder } from '@jportal/pt';
import { analyzeFixture, analyzeFixtureMissing } from '../lib/analyze-fixture';
import { cleanup, runCli, tmpDir } from '../lib/run';

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP analyze CLI tests: ${missing}`);
const maybe = missing ? describe.skip : describe;

/** Files under d, relative, sorted. */
const list = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? list(path.join(d, e.name)).map((f) => path.join(e.name, f)) : [e.name])).sort();

/** Every file of report directory `a` but summary.json is in `b` with the same content, but for when and where it was written. */
function expectSameReports(a: string, b: string): void {
  expect(list(b)).toEqual(list(a));
  const same = (f: string) => fs.readFileSync(f, 'utf8').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '(when)').split(a).join('(out)').split(b).join('(out)');
  for (const f of list(a).filter((x) => x !== 'summary.json')) expect({ f, same: same(path.join(b, f)) === same(path.join(a, f)) }).toEqual({ f, same: true });
}

maybe('jportal analyze', () => {
  test('writes every report part and a summary that agrees with them', () => {
    const fx = analyzeFixture('switches');
    const out = tmpDir('analyze-cli');
    try {
      const r = runCli(['analyze', fx.trace, '--out', out, '--sources', fx.sources, '--json'], 900_000);
      expect(r.status).toBe(0);
      const s = JSON.parse(r.stdout);
      for (const f of [
        'report.html', 'summary.json', 'coverage/lcov.info', 'coverage/jacoco.xml', 'coverage/html/index.html', 'hot-methods.txt',
        'hot-methods.json', 'profile.pb.gz', 'cct.json', 'cct.txt', 'contexts.json', 'paths.json', 'paths.txt', 'timeline.trace.json',
        'timeline.speedscope.json', 'stacks.collapsed', 'latency.json', 'latency.txt',
      ])
        expect(fs.existsSync(path.join(out, f))).toBe(true);
      // every file a part names exists, relative to the report directory
      for (const p of Object.values(s.parts) as { files: string[] }[]) for (const f of p.files) expect(fs.existsSync(path.join(out, f))).toBe(true);
      // the bytecodes of the summary are those the hot-method table and the collapsed stacks count
      expect(s.bytecodes).toBeGreaterThan(100_000);
      expect(s.observed + s.inferred + s.recovered).toBe(s.bytecodes);
      expect(s.parts.hot.summary.bytecodes).toBe(s.bytecodes);
      let folded = 0;
      for (const line of fs.readFileSync(path.join(out, 'stacks.collapsed'), 'utf8').split('\n')) {
        const m = / (\d+)$/.exec(line);
        if (m) folded += Number(m[1]);
      }
      expect(folded).toBe(s.bytecodes);
      // the example's own source is shown: its HTML page exists
      expect(fs.readdirSync(path.join(out, 'coverage', 'html')).some((f) => /Switches/.test(f))).toBe(true);
      // main is the busiest thread and Switches methods are in its hot list
      expect(s.threads[0].name).toBe('main');
      expect(fs.readFileSync(path.join(out, 'hot-methods.txt'), 'utf8')).toMatch(/Switches\.(dense|sparse|word)/);
    } finally {
      cleanup(out);
    }
  });

  test('--only limits the parts; --extent narrows the calling-context tree to a method', () => {
    const fx = analyzeFixture('switches');
    const out = tmpDir('analyze-only');
    try {
      const r = runCli(['analyze', fx.trace, '--out', out, '--only', 'cct', '--extent', 'Switches.main', '--json'], 600_000);
      expect(r.status).toBe(0);
      const s = JSON.parse(r.stdout);
      expect(Object.keys(s.parts).sort()).toEqual(['cct', 'report']);
      expect(fs.existsSync(path.join(out, 'profile.pb.gz'))).toBe(false);
      const cct = fs.readFileSync(path.join(out, 'cct.txt'), 'utf8');
      expect(cct).toMatch(/Switches\.main/);
      expect(cct).not.toMatch(/java\.lang\.System\.initPhase1/);
    } finally {
      cleanup(out);
    }
  });

  test('a thread taken in windows of 5,000 events (spilled: the first few kept in memory, the rest on disk; streamed: walked as decoded) gives the same report as taken whole, and leaves no scratch files', () => {
    const fx = analyzeFixture('switches');
    const whole = tmpDir('analyze-whole');
    const windowed = tmpDir('analyze-windows');
    const streamed = tmpDir('analyze-streamed');
    try {
      // (reconstruction and recovery see one window at a time, so they are left out of the comparison)
      const args = (out: string) => ['analyze', fx.trace, '--out', out, '--no-recover', '--no-reconstruct', '--json'];
      const a = runCli(args(whole), 900_000, { JPORTAL_ANALYZE_STREAM: '0' });
      // room in memory for about three windows (29 bytes an event): both ways of the spill in one run
      const b = runCli(args(windowed), 900_000, { JPORTAL_ANALYZE_STREAM: '0', JPORTAL_ANALYZE_WINDOW: '5000', JPORTAL_SPILL_MEMORY_BYTES: String(3 * 5000 * 29) });
      const c = runCli(args(streamed), 900_000, { JPORTAL_ANALYZE_WINDOW: '5000' });
      expect([a.status, b.status, c.status]).toEqual([0, 0, 0]);
      const sa = JSON.parse(a.stdout);
      expect(sa.bytecodes).toBeGreaterThan(100_000);
      // the spill directory (.events-*) is gone; every other file is the same, but for when and where it was written
      for (const other of [windowed, streamed]) {
        expect(list(other).filter((f) => f.startsWith('.events'))).toEqual([]);
        expectSameReports(whole, other);
      }
      const sb = JSON.parse(b.stdout);
      expect(sb.windows.maxEvents).toBe(5000);
      expect(sb.windows.count).toBeGreaterThan(sb.bytecodes / 5000);
      expect(sb.windows.heldBytes).toBeGreaterThan(0);
      expect(sb.windows.heldBytes).toBeLessThanOrEqual(3 * 5000 * 29);
      expect(sb.windows.spillBytes).toBeGreaterThan(0);
      const sc = JSON.parse(c.stdout);
      expect(sc.windows).toMatchObject({ maxEvents: 5000, count: sb.windows.count, spillBytes: 0, heldBytes: 0, streamed: true });
      expect(sa.windows.streamed).toBe(false);
      for (const s of [sa, sb, sc]) {
        delete s.timingsMs;
        delete s.report;
        delete s.windows;
      }
      expect(sb).toEqual(sa);
      expect(sc).toEqual(sa);
    } finally {
      cleanup(whole);
      cleanup(windowed);
      cleanup(streamed);
    }
  });

  test('streamed (the default) and spilled give the same report with reconstruction and recovery; a trace the worker cannot decode is exit 2, the file named', () => {
    const fx = analyzeFixture('switches');
    const spilled = tmpDir('analyze-spilled');
    const streamed = tmpDir('analyze-stream');
    const broken = tmpDir('analyze-broken');
    try {
      const a = runCli(['analyze', fx.trace, '--out', spilled, '--json'], 900_000, { JPORTAL_ANALYZE_STREAM: '0' });
      const b = runCli(['analyze', fx.trace, '--out', streamed, '--json'], 900_000);
      expect([a.status, b.status]).toEqual([0, 0]);
      const [sa, sb] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
      expect([sa.windows.streamed, sb.windows.streamed]).toEqual([false, true]);
      expectSameReports(spilled, streamed);
      for (const s of [sa, sb]) {
        delete s.timingsMs;
        delete s.report;
        delete s.windows;
      }
      expect(sb).toEqual(sa);

      // the decoding thread fails (a PT file the sideband names is gone): the error comes through, no hang
      fs.cpSync(fx.trace, broken, { recursive: true });
      const pt = fs.readdirSync(path.join(broken, 'pt')).filter((f) => f.endsWith('.pt')).sort((x, y) => fs.statSync(path.join(broken, 'pt', y)).size - fs.statSync(path.join(broken, 'pt', x)).size)[0];
      fs.rmSync(path.join(broken, 'pt', pt));
      const c = runCli(['analyze', broken, '--out', path.join(broken, 'report')], 300_000);
      expect(c.status).toBe(2);
      expect(c.stderr).toContain(`${pt}: missing`);
      expect(c.stderr).not.toMatch(/\n\s+at /);
    } finally {
      cleanup(spilled);
      cleanup(streamed);
      cleanup(broken);
    }
  });

  test('--time: a span of the run, cut at the PSBs around it: its events lie between those PSBs, two spans that meet make the whole, bad spans are exit 2', () => {
    const fx = analyzeFixture('switches');
    const model = loadTrace(fx.trace);
    const sb = model.sideband!;
    const start = sb.clock!.tsc;
    const main = sb.threads.filter((t) => t.file).sort((a, b) => b.bytes - a.bytes)[0];
    const whole = decodeTrace(fx.trace, { tids: [main.tid] }).threads[0];
    const times = whole.events.tsc.slice(0, whole.events.length).filter((t) => t > 0);
    const at = (q: number) => times[Math.floor(q * (times.length - 1))];
    const seconds = (tsc: number) => (tsc - start) / model.tscPerNs / 1e9;
    const tscOf = (s: number) => start + s * 1e9 * model.tscPerNs;
    /** the TSC the PSB+ at `offset` of the main thread's stream names */
    const file = path.join(fx.trace, main.file!);
    const psbTsc = (offset: number) => {
      const fd = fs.openSync(file, 'r');
      const head = Buffer.alloc(256);
      fs.readSync(fd, head, 0, 256, offset);
      fs.closeSync(fd);
      const q = new QueryDecoder(head, sb.timing, undefined, 0, head.length, true);
      q.peek();
      return q.tsc;
    };
    const counted = (ev: { tsc: Float64Array; length: number }, from: number, to: number) => {
      let n = 0;
      for (let i = 0; i < ev.length; i++) if (ev.tsc[i] >= from && ev.tsc[i] <= to) n++;
      return n;
    };

    // the second quarter of the main thread's events, by their time
    const span = { from: seconds(at(0.25)), to: seconds(at(0.5)) };
    const range = fileRangeAtTime(file, { from: tscOf(span.from), to: tscOf(span.to) }, sb.timing);
    expect(range.begin).toBeGreaterThan(0);
    expect(range.end).toBeLessThan(main.bytes);
    const part = decodeTrace(fx.trace, { tids: [main.tid], span }).threads[0];
    expect(part.flow.bytes).toBeLessThanOrEqual(range.end - range.begin + 65536);
    expect(part.events.length).toBeGreaterThan(0);
    expect(part.events.length).toBeLessThan(whole.events.length / 2);
    // the PT bytes the span's decode reads: each thread's file cut at its PSBs around the span; no span, every byte
    const files = sb.threads.filter((t) => t.file).map((t) => path.join(fx.trace, t.file!));
    const cutBytes = files.map((f) => fileRangeAtTime(f, { from: tscOf(span.from), to: tscOf(span.to) }, sb.timing)).reduce((n, r) => n + r.end - r.begin, 0);
    expect(ptBytesInSpan(fx.trace, span, model)).toBe(cutBytes);
    expect(cutBytes).toBeGreaterThanOrEqual(range.end - range.begin);
    expect(ptBytesInSpan(fx.trace, undefined, model)).toBe(files.reduce((n, f) => n + fs.statSync(f).size, 0));
    expect(cutBytes).toBeLessThan(ptBytesInSpan(fx.trace, undefined, model) / 2);
    // its events lie between the PSBs around the span (events before the part's first timing packet carry none)
    const lo = psbTsc(range.begin);
    const hi = psbTsc(range.end);
    expect(lo).toBeLessThanOrEqual(tscOf(span.from));
    expect(hi).toBeGreaterThan(tscOf(span.to));
    const stamped = part.events.tsc.slice(0, part.events.length).filter((t) => t > 0);
    expect(stamped.reduce((a, b) => Math.min(a, b), Infinity)).toBeGreaterThanOrEqual(lo);
    expect(stamped.reduce((a, b) => Math.max(a, b), -Infinity)).toBeLessThanOrEqual(hi);
    // within the span itself the part has the whole decode's events (but for a frame or two the part starts in
    // without knowing its callers)
    const inWhole = counted(whole.events, tscOf(span.from), tscOf(span.to));
    expect(Math.abs(counted(part.events, tscOf(span.from), tscOf(span.to)) - inWhole)).toBeLessThanOrEqual(inWhole * 0.01);

    // two spans that meet: together the whole thread, and no more than the PSB period around the cut twice
    const cut = seconds(at(0.6));
    const first = decodeTrace(fx.trace, { tids: [main.tid], span: { from: -Infinity, to: cut } }).threads[0];
    const second = decodeTrace(fx.trace, { tids: [main.tid], span: { from: cut, to: Infinity } }).threads[0];
    const both = first.events.length + second.events.length;
    expect(both).toBeGreaterThanOrEqual(whole.events.length * 0.999);
    expect(both).toBeLessThanOrEqual(whole.events.length * 1.02);
    expect(first.flow.bytes + second.flow.bytes).toBeGreaterThanOrEqual(whole.flow.bytes);

    // analyze --time: the span in the summary, fewer bytecodes than the whole run; spans that name no time are exit 2
    const out = tmpDir('analyze-time');
    try {
      const r = runCli(['analyze', fx.trace, '--out', out, '--json', '--only', 'hot', '--time', `${span.from},${span.to}`], 900_000);
      expect(r.status).toBe(0);
      const s = JSON.parse(r.stdout);
      expect(s.span).toEqual({ fromSeconds: span.from, toSeconds: span.to });
      expect(s.bytecodes).toBeGreaterThan(0);
      expect(s.threads[0].bytecodes).toBeLessThan(whole.eventCount);
      for (const [bad, why] of [['2,1', /start is after its end/], ['abc,', /"abc" is not a time/], ['1', /two ends/], [',', /both ends are open/]] as const) {
        const b = runCli(['analyze', fx.trace, '--out', out, '--time', bad]);
        expect({ bad, status: b.status }).toEqual({ bad, status: 2 });
        expect(b.stderr).toMatch(why);
      }
    } finally {
      cleanup(out);
    }
  });

  test('bad input: exit 2 with the file or option named', () => {
    const dir = tmpDir('analyze-bad');
    try {
      const a = runCli(['analyze', path.join(dir, 'nope')]);
      expect(a.status).toBe(2);
      expect(a.stderr).toMatch(/nope: not a trace directory/);
      const b = runCli(['analyze', dir]);
      expect(b.status).toBe(2);
      expect(b.stderr).toMatch(/meta\.jpt: missing/);
      fs.writeFileSync(path.join(dir, 'meta.jpt'), Buffer.from('JPORTAL\0garbage that is not a trace'));
      const c = runCli(['analyze', dir]);
      expect(c.status).toBe(2);
      expect(c.stderr).toMatch(/meta\.jpt/);
      expect(c.stderr).not.toMatch(/\n\s+at /); // no stack trace
      const fx = analyzeFixture('switches');
      const d = runCli(['analyze', fx.trace, '--only', 'flames']);
      expect(d.status).toBe(2);
      expect(d.stderr).toMatch(/unknown part flames/);
    } finally {
      cleanup(dir);
    }
  });
});
