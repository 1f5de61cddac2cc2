/**
 * The spill files give back, window by window, exactly the columns written (compressed on disk), for times of any
 * bits: whole ticks, times spread over a gap (fractions), and values no arithmetic delta would survive.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EventSpill, SPILL_EVENT_BYTES } from '../src/spill';
import { ThreadEvents } from '../src';
import { rng } from './synthetic';

const COLUMNS = ['kind', 'origin', 'tier', 'opcode', 'method', 'bci', 'tsc', 'endTsc'] as const;

/** A window of n events like a decoded thread's: a loop's methods and bcis, time rising by a few ticks. */
function window(seed: number, n: number, t0: number): ThreadEvents {
  const r = rng(seed);
  const t: ThreadEvents = {
    name: '', tid: 1, javaTid: 1, length: n, kind: new Uint8Array(n), origin: new Uint8Array(n), tier: new Uint8Array(n), opcode: new Int16Array(n),
    method: new Int32Array(n), bci: new Int32Array(n), tsc: new Float64Array(n), endTsc: new Float64Array(n),
  };
  let tsc = t0;
  for (let i = 0; i < n; i++) {
    t.kind[i] = r() < 0.9 ? 0 : 1 + Math.floor(r() * 3);
    t.origin[i] = r() < 0.95 ? 0 : 2;
    t.tier[i] = Math.floor(r() * 3);
    t.opcode[i] = i % 7 === 0 ? -1 : Math.floor(r() * 202);
    t.method[i] = 100 + ((i >> 4) % 9);
    t.bci[i] = i % 40;
    tsc += Math.floor(r() * 600);
    // (recovered events' times are spread over a gap: fractions; and a few values of every kind of bits)
    t.tsc[i] = t.origin[i] === 2 ? tsc + r() : i === 5 ? Number.POSITIVE_INFINITY : i === 6 ? Number.NaN : i === 7 ? -0 : tsc;
    t.endTsc[i] = t.kind[i] === 3 ? tsc + 5000.25 : Math.floor(r() * 4);
  }
  return t;
}

describe('EventSpill', () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-spill-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Every window of thread k as written, bit for bit, with its base. */
  const expectWindows = (spill: EventSpill, k: number, list: ThreadEvents[]) => {
    let i = 0;
    let base = 0;
    for (const w of spill.windows(k)) {
      const want = list[i++];
      expect(w.length).toBe(want.length);
      expect(w.base).toBe(base);
      for (const c of COLUMNS) {
        const got = Buffer.from(w[c].buffer, w[c].byteOffset, w[c].byteLength);
        const exp = Buffer.from(want[c].buffer, want[c].byteOffset, want[c].byteLength);
        expect(got.equals(exp)).toBe(true);
      }
      base += w.length;
    }
    expect(i).toBe(list.length);
  };

  test('windows read back bit for bit, per thread, in order; compressed well below the raw columns', () => {
    const spill = new EventSpill(path.join(dir, 'spill'), 0);
    const a = spill.open({ name: 'a', tid: 1, javaTid: 1 });
    const b = spill.open({ name: 'b', tid: 2, javaTid: 2 });
    const written: ThreadEvents[][] = [[], []];
    const sizes = [50_000, 1, 70_000, 33_333];
    sizes.forEach((n, i) => {
      const w = window(i + 1, n, 1e13 + i * 1e9);
      spill.append(i % 2 ? b : a, w);
      written[i % 2].push(w);
    });
    for (const [k, list] of [a, b].map((k, j) => [k, written[j]] as const)) expectWindows(spill, k, list);
    const raw = sizes.reduce((s, n) => s + n, 0) * SPILL_EVENT_BYTES;
    expect(spill.bytes).toBeLessThan(raw / 2);
    expect(spill.heldBytes).toBe(0);
    spill.close();
    expect(fs.existsSync(path.join(dir, 'spill'))).toBe(false);
  });

  test('windows within the memory budget are kept as written (copies), those after it go to disk; both read back alike', () => {
    const sizes = [40_000, 25_000, 60_000, 10_000];
    // room for the first two windows only
    const spill = new EventSpill(path.join(dir, 'spill'), (sizes[0] + sizes[1]) * SPILL_EVENT_BYTES);
    const k = spill.open({ name: 'main', tid: 7, javaTid: 1 });
    const written = sizes.map((n, i) => window(10 + i, n, 1e12 + i * 1e9));
    for (const w of written) {
      spill.append(k, w);
      // (the caller reuses its columns for the next window: the spill must hold its own copy)
      w.method.fill(-5);
    }
    const again = sizes.map((n, i) => window(10 + i, n, 1e12 + i * 1e9));
    expectWindows(spill, k, again);
    expectWindows(spill, k, again);
    expect(spill.heldBytes).toBe((sizes[0] + sizes[1]) * SPILL_EVENT_BYTES);
    expect(spill.bytes).toBeGreaterThan(0);
    expect(spill.bytes).toBeLessThan((sizes[2] + sizes[3]) * SPILL_EVENT_BYTES);
    expect(spill.infos[0].length).toBe(sizes.reduce((s, n) => s + n, 0));
    spill.close();
    expect(spill.heldBytes).toBe(0);
  });
});
