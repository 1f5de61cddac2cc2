/**
 * Timelines (Chrome trace, speedscope) and collapsed stacks on synthetic threads, against expectations written
 * out by hand from the stack rules of walk.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Analysis, Kind, Origin, ThreadEvents, Tier } from '../src/model';
import { writeCollapsed } from '../src/collapsed';
import { writeTimeline } from '../src/timeline';
import { DurationHistogram, sliceAnalysis, SliceKind } from '../src/timeslices';

/** [kind, method, tsc, endTsc (gaps), bci (gap reason)] */
type Ev = [Kind, number, number, number?, number?];

export function thread(name: string, tid: number, evs: Ev[]): ThreadEvents {
  const n = evs.length;
  const t: ThreadEvents = {
    name, tid, javaTid: tid, length: n,
    kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n).fill(-1),
    tsc: new Float64Array(n), endTsc: new Float64Array(n).fill(NaN), origin: new Uint8Array(n).fill(Origin.Observed), tier: new Uint8Array(n).fill(Tier.Interpreted),
  };
  evs.forEach(([k, m, tsc, end, bci], i) => {
    t.kind[i] = k;
    t.method[i] = m;
    t.tsc[i] = tsc;
    if (end !== undefined) t.endTsc[i] = end;
    t.bci[i] = bci ?? 0;
  });
  return t;
}

export function analysis(threads: ThreadEvents[], tscPerNs = 1, names = ['A', 'B', 'C', 'D']): Analysis {
  return { source: { kind: 'trace', dir: '/synthetic' }, methods: names.map((n) => ({ className: 'p/K', name: n, signature: '()V' })), threads, tscPerNs, problems: [] };
}

const E = Kind.Entry, X = Kind.Exit, B = Kind.Bytecode, G = Kind.Gap;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-test-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

interface ChromeEvent { name: string; ph: string; ts: number; dur?: number; pid: number; tid: number; cat?: string; args?: Record<string, unknown> }
const readJson = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
const slicesOf = (trace: { traceEvents: ChromeEvent[] }, tid: number) =>
  trace.traceEvents.filter((e) => e.ph === 'X' && e.tid === tid).map((e) => [e.name, +(e.ts * 1000).toFixed(3), +(e.dur! * 1000).toFixed(3), e.cat]);

/** checks that the X slices of every thread nest (an independent interval check: sort by start, longer first) */
function assertNested(events: ChromeEvent[]): void {
  const byTid = new Map<number, ChromeEvent[]>();
  for (const e of events) if (e.ph === 'X') byTid.set(e.tid, [...(byTid.get(e.tid) ?? []), e]);
  for (const list of byTid.values()) {
    const sorted = [...list].sort((x, y) => x.ts - y.ts || y.dur! - x.dur!);
    const ends: number[] = [];
    for (const e of sorted) {
      while (ends.length && ends[ends.length - 1] <= e.ts + 1e-9) ends.pop();
      if (ends.length) expect(e.ts + e.dur!).toBeLessThanOrEqual(ends[ends.length - 1] + 1e-9);
      ends.push(e.ts + e.dur!);
    }
  }
}

describe('writeTimeline', () => {
  // A calls B; a gap (overflow) in A; C entered without an exit, closed by A's exit
  const t1 = thread('main', 42, [
    [E, 0, 1000], [B, 0, 1000], [E, 1, 1010], [B, 1, 1015], [X, 1, 1030], [B, 0, 1035],
    [G, -1, 1040, 1050, 0], [B, 0, 1060], [E, 2, 1062], [B, 2, 1063], [X, 0, 1070],
  ]);
  const t2 = thread('worker', 43, [[B, 3, 1100], [B, 3, 1120]]);

  it('writes frames and gaps as nested X events in µs from the first event, with thread names', () => {
    const r = writeTimeline(analysis([t1, t2], 2), dir);
    expect(r.files).toEqual(['timeline.trace.json', 'timeline.speedscope.json']);
    const trace = readJson('timeline.trace.json');
    expect(trace.displayTimeUnit).toBe('ns');
    // tscPerNs 2: ns = (tsc - 1000) / 2
    expect(slicesOf(trace, 42)).toEqual([
      ['p.K.A', 0, 35, 'frame'],
      ['p.K.B', 5, 10, 'frame'],
      ['gap: overflow', 20, 5, 'gap'],
      ['p.K.C', 31, 4, 'frame'],
    ]);
    // an implicit frame (no entry): from its first bytecode to the thread's last event
    expect(slicesOf(trace, 43)).toEqual([['p.K.D', 50, 10, 'frame']]);
    const names = trace.traceEvents.filter((e: ChromeEvent) => e.ph === 'M' && e.name === 'thread_name').map((e: ChromeEvent) => [e.tid, e.args!.name]);
    expect(names).toEqual([[42, 'main'], [43, 'worker']]);
    expect(trace.metadata.clock).toMatch(/^TSC in ns/);
    expect(r.summary).toMatchObject({ clock: 'tsc-ns', frames: 4, framesWritten: 4, gaps: 1, gapsWritten: 1, chromeEvents: 5 });
    assertNested(trace.traceEvents);
  });

  it('counts time from the capture\'s start when the analysis knows it, and says so', () => {
    const r = writeTimeline({ ...analysis([t1, t2], 2), startTsc: 900 }, dir);
    const trace = readJson('timeline.trace.json');
    // tscPerNs 2: ns = (tsc - 900) / 2, the same slices as from the first event, 50 ns later
    expect(slicesOf(trace, 42)).toEqual([
      ['p.K.A', 50, 35, 'frame'],
      ['p.K.B', 55, 10, 'frame'],
      ['gap: overflow', 70, 5, 'gap'],
      ['p.K.C', 81, 4, 'frame'],
    ]);
    expect(slicesOf(trace, 43)).toEqual([['p.K.D', 100, 10, 'frame']]);
    expect(trace.metadata.clock).toMatch(/^TSC in ns from the capture's start \(TSC 900,/);
    expect(r.summary).toMatchObject({ clock: 'tsc-ns' });
  });

  it('writes speedscope evented profiles with balanced O/C events over shared frames', () => {
    writeTimeline(analysis([t1, t2], 2), dir);
    const s = readJson('timeline.speedscope.json');
    expect(s.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    const frames = s.shared.frames.map((f: { name: string }) => f.name);
    const ev = (p: number) => s.profiles[p].events.map((e: { type: string; frame: number; at: number }) => `${e.type} ${frames[e.frame]} ${e.at}`);
    expect(s.profiles[0]).toMatchObject({ type: 'evented', unit: 'nanoseconds', startValue: 0, endValue: 35 });
    expect(ev(0)).toEqual(['O p.K.A 0', 'O p.K.B 5', 'C p.K.B 15', 'O gap: overflow 20', 'C gap: overflow 25', 'O p.K.C 31', 'C p.K.C 35', 'C p.K.A 35']);
    expect(ev(1)).toEqual(['O p.K.D 50', 'C p.K.D 60']);
  });

  it('clamps a gap to the next event and keeps time monotone', () => {
    const t = thread('t', 1, [[E, 0, 0], [G, -1, 10, 500, 5], [B, 0, 20], [B, 0, 15], [X, 0, 30]]);
    writeTimeline(analysis([t]), dir);
    expect(slicesOf(readJson('timeline.trace.json'), 1)).toEqual([['p.K.A', 0, 30, 'frame'], ['gap: unsynced', 10, 10, 'gap']]);
  });

  it('uses the event index as the clock when there is no time (ground truth), and says so', () => {
    const t = thread('t', 7, [[E, 0, NaN], [B, 0, NaN], [E, 1, NaN], [B, 1, NaN], [X, 1, NaN], [X, 0, NaN]]);
    const r = writeTimeline(analysis([t], 0), dir);
    const trace = readJson('timeline.trace.json');
    expect(r.summary.clock).toBe('event-index');
    expect(trace.metadata.clock).toMatch(/^event index/);
    // 1 "µs" per event
    expect(trace.traceEvents.filter((e: ChromeEvent) => e.ph === 'X').map((e: ChromeEvent) => [e.name, e.ts, e.dur])).toEqual([['p.K.A', 0, 5], ['p.K.B', 2, 2]]);
    expect(readJson('timeline.speedscope.json').profiles[0].unit).toBe('none');
  });

  it('drops frames shorter than minDurationNs, and the shortest beyond maxEvents, keeping nesting', () => {
    // A [0,1000] { B [0,100] { C [10,15] }, B [200,900] { C [300,301], D [400,800] } }
    const t = thread('t', 1, [
      [E, 0, 0], [E, 1, 0], [E, 2, 10], [X, 2, 15], [X, 1, 100], [E, 1, 200], [E, 2, 300], [X, 2, 301], [E, 3, 400], [X, 3, 800], [X, 1, 900], [X, 0, 1000],
    ]);
    const r1 = writeTimeline(analysis([t]), dir, { minDurationNs: 50 });
    expect(slicesOf(readJson('timeline.trace.json'), 1).map((s) => s[0])).toEqual(['p.K.A', 'p.K.B', 'p.K.B', 'p.K.D']);
    expect(r1.summary).toMatchObject({ frames: 6, framesWritten: 4 });
    const r2 = writeTimeline(analysis([t]), dir, { maxEvents: 3 });
    const kept = slicesOf(readJson('timeline.trace.json'), 1);
    expect(kept.map((s) => [s[0], s[2]])).toEqual([['p.K.A', 1000], ['p.K.B', 700], ['p.K.D', 400]]);
    expect(r2.summary).toMatchObject({ frames: 6, framesWritten: 3 });
    expect(readJson('timeline.trace.json').metadata.cut).toMatch(/^3 frames shorter than/);
  });

  it('keeps random deep call trees properly nested under every cut, and speedscope balanced', () => {
    let seed = 12345;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    const evs: Ev[] = [];
    const stack: number[] = [];
    let tsc = 0;
    for (let i = 0; i < 4000; i++) {
      tsc += rnd(3) === 0 ? 0 : rnd(50);
      const r = rnd(10);
      if (r < 3 && stack.length < 30) stack.push(rnd(4)), evs.push([E, stack[stack.length - 1], tsc]);
      else if (r < 6 && stack.length) evs.push([X, stack.pop()!, tsc]);
      else if (r === 6 && stack.length > 2) {
        // an exit below the top: implicit pops
        const d = rnd(stack.length);
        evs.push([X, stack[d], tsc]);
        stack.length = d;
      } else if (r === 7) evs.push([G, -1, tsc, tsc + rnd(100), rnd(6)]);
      else evs.push([B, stack.length ? stack[stack.length - 1] : rnd(4), tsc]);
    }
    for (const max of [1_000_000, 300, 20]) {
      const r = writeTimeline(analysis([thread('r', 5, evs)], 1.5), dir, { maxEvents: max });
      expect(r.summary.framesWritten as number).toBeLessThanOrEqual(max);
      const trace = readJson('timeline.trace.json');
      assertNested(trace.traceEvents);
      const s = readJson('timeline.speedscope.json');
      const open: number[] = [];
      let at = -Infinity;
      for (const e of s.profiles[0].events) {
        expect(e.at).toBeGreaterThanOrEqual(at);
        at = e.at;
        if (e.type === 'O') open.push(e.frame);
        else expect(open.pop()).toBe(e.frame);
      }
      expect(open).toEqual([]);
    }
  });
});

describe('writeCollapsed', () => {
  it('folds stacks per thread, bytecodes as counts, thread names as roots', () => {
    const t1 = thread('main;1', 1, [
      [E, 0, 0], [B, 0, 0], [B, 0, 0], [E, 1, 0], [B, 1, 0], [X, 1, 0], [E, 1, 0], [B, 1, 0], [B, 1, 0], [E, 2, 0], [B, 2, 0], [X, 0, 0], [B, -1, 0],
    ]);
    const t2 = thread('other thread', 2, [[B, 3, 0], [E, 0, 0], [B, -1, 0], [B, 3, 0]]);
    const r = writeCollapsed(analysis([t1, t2]), dir);
    expect(r.files).toEqual(['stacks.collapsed']);
    const lines = fs.readFileSync(path.join(dir, 'stacks.collapsed'), 'utf8').trim().split('\n');
    expect(lines).toEqual([
      'main:1;[no frame] 1',
      'main:1;p.K.A 2',
      'main:1;p.K.A;p.K.B 3',
      'main:1;p.K.A;p.K.B;p.K.C 1',
      'other thread;p.K.D 2',
      'other thread;p.K.D;p.K.A 1',
    ]);
    expect(r.summary).toMatchObject({ stacks: 6, bytecodes: 10 });
    expect(r.tree.total[0]).toBe(10);
  });
});

describe('sliceAnalysis in one read', () => {
  /** a thread of `frames` calls, nested up to 6 deep, durations spread over several octaves, gaps now and then */
  function deepThread(seed: number, tid: number, frames: number): ThreadEvents {
    let s = seed;
    const r = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const evs: Ev[] = [];
    let tsc = 1000;
    let open = 0;
    let made = 0;
    while (made < frames || open > 0) {
      if (made < frames && (open === 0 || (r() < 0.5 && open < 6))) {
        evs.push([E, Math.floor(r() * 4), (tsc += 1 + Math.floor(r() ** 3 * 5000))]);
        open++;
        made++;
      } else {
        evs.push([B, -1, (tsc += Math.floor(r() ** 4 * 20000))]);
        if (r() < 0.01) evs.push([G, -1, tsc, tsc + 300, 1]);
        evs.push([X, -1, (tsc += 1)]);
        open--;
      }
    }
    // (exits name no method: the walker pops the top frame; give them the top's)
    const stack: number[] = [];
    for (const e of evs) {
      if (e[0] === E) stack.push(e[1]);
      else if (e[0] === X) e[1] = stack.pop()!;
      else if (e[0] === B) e[1] = stack[stack.length - 1];
    }
    return thread(`t${tid}`, tid, evs);
  }

  it('keeps what a second read with the final threshold would: the frames at least that long, every gap', () => {
    // (more frames than the running threshold's update interval, and many times the budget: the walk drops frames early)
    const a = analysis([deepThread(1, 1, 30_000), deepThread(2, 2, 12_000)], 1);
    const all = sliceAnalysis(a, { maxFrames: 1e9, maxGaps: 1e9 });
    expect(all.threshold).toBe(0);
    const h = new DurationHistogram();
    for (const t of all.threads) for (let k = 0; k < t.slices.count; k++) if (t.slices.kind[k] === SliceKind.Frame) h.add(t.slices.end[k] - t.slices.start[k]);
    expect(h.total).toBe(42_000);
    for (const maxFrames of [50, 1000, 20_000]) {
      const cut = sliceAnalysis(a, { maxFrames, maxGaps: 1e9 });
      const want = h.threshold(maxFrames, 0);
      expect(cut.threshold).toBe(want);
      expect(cut.framesKept).toBeLessThanOrEqual(maxFrames);
      expect(cut.framesKept).toBeGreaterThan(0);
      expect(cut.frames).toBe(42_000);
      for (let j = 0; j < 2; j++) {
        const from = all.threads[j].slices;
        const keep: number[] = [];
        for (let k = 0; k < from.count; k++) if (from.kind[k] !== SliceKind.Frame || from.end[k] - from.start[k] >= want) keep.push(k);
        const got = cut.threads[j].slices;
        expect(got.count).toBe(keep.length);
        for (const col of ['kind', 'id', 'depth', 'pre', 'post', 'start', 'end'] as const) expect(Array.from(got[col])).toEqual(keep.map((k) => from[col][k]));
      }
    }
  });
});
