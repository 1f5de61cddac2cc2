/**
 * Cutting a stream at PSBs from a file, reading only around the cuts (a stream may be past the 2 GiB one buffer
 * holds), must cut exactly where cutting the bytes in memory does.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TimingConfig } from '@jportal/pt';
import { fileRangeAtTime, splitAtPsb, splitFileAtPsb, UntimedStreamError } from '../src';

const TIMING: TimingConfig = { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 };
const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
const PSBEND = [0x02, 0x23];

/** PSB+ (PSB, a TSC packet when `tsc` is given, a FUP naming `ip` with a 6-byte payload, PSBEND) at `at`. */
function putPsbPlus(bytes: Uint8Array, at: number, ip: number, tsc?: number): void {
  bytes.set(PSB, at);
  let p = at + PSB.length;
  if (tsc !== undefined) {
    const t = [0x19];
    for (let k = 0; k < 7; k++) t.push(Math.floor(tsc / 2 ** (8 * k)) & 0xff);
    bytes.set(t, p);
    p += t.length;
  }
  const fup = [0x1d | (3 << 5)];
  for (let k = 0; k < 6; k++) fup.push(Math.floor(ip / 2 ** (8 * k)) & 0xff);
  bytes.set(fup, p);
  bytes.set(PSBEND, p + fup.length);
}

describe('splitFileAtPsb', () => {
  let dir = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-split-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('cuts a file where splitAtPsb cuts its bytes, also at a PSB across a read step and past a long stretch without one', () => {
    const target = 300_000;
    const step = 1 << 20; // the search's read step (SEARCH_BYTES)
    // PSB+ at the stream start, one 8 bytes before the end of the first search's first read step (its 16 bytes
    // span two steps), one found only in a third step, and a few close together (cuts at most one per target)
    const at = [0, target + step - 8];
    at.push(at[1] + target + 2 * step + 1234);
    at.push(at[2] + target + 10, at[2] + target + 40, at[2] + 2 * target + 77);
    const bytes = new Uint8Array(at[at.length - 1] + 200_000); // PAD (0x00) elsewhere
    at.forEach((a, i) => putPsbPlus(bytes, a, 0x7f0000001000 + i * 0x40));
    const file = path.join(dir, 'stream.pt');
    fs.writeFileSync(file, bytes);

    const inMemory = splitAtPsb(bytes, target, TIMING);
    const fromFile = splitFileAtPsb(file, target, TIMING);
    expect(fromFile).toEqual(inMemory);
    // (and the cuts are the PSBs meant: every part after the first starts at one, its predecessor ends there and
    // names the IP of that PSB's FUP)
    // (at[4] is within a target of at[3]: no cut there)
    expect(fromFile.map((p) => p.begin)).toEqual([0, at[1], at[2], at[3], at[5]]);
    for (let i = 1; i < fromFile.length; i++) {
      expect(fromFile[i - 1].end).toBe(fromFile[i].begin);
      expect(fromFile[i - 1].endIp).toBe(0x7f0000001000 + at.indexOf(fromFile[i].begin) * 0x40);
    }
    expect(fromFile[fromFile.length - 1].end).toBe(bytes.length);
  });

  test('fileRangeAtTime finds the PSBs around a span as a scan of every PSB would, and splitFileAtPsb cuts within it', () => {
    // PSB+s at irregular distances (a few KiB, and stretches longer than a search step), TSC rising with them
    const at: number[] = [];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let p = 100; at.length < 400; p += at.length % 97 === 50 ? 1_300_000 : 2000 + Math.floor(rand() * 9000)) at.push(p);
    const bytes = new Uint8Array(at[at.length - 1] + 5000);
    const tscOf = (i: number) => 1_000_000 + i * 1000 + (i % 3);
    const ipOf = (i: number) => 0x7f0000002000 + i * 0x10;
    at.forEach((a, i) => putPsbPlus(bytes, a, ipOf(i), tscOf(i)));
    const file = path.join(dir, 'timed.pt');
    fs.writeFileSync(file, bytes);

    /** the span by a scan of every PSB */
    const expected = (from: number, to: number) => {
      let b = -1;
      for (let i = 0; i < at.length; i++) if (tscOf(i) <= from) b = i;
      let l = -1;
      for (let i = 0; i < at.length; i++) if (tscOf(i) <= to) l = i;
      if (l < 0) return { begin: 0, end: 0, endIp: -1 };
      const begin = from === -Infinity || b < 0 ? 0 : at[b];
      return l + 1 < at.length ? { begin, end: at[l + 1], endIp: ipOf(l + 1) } : { begin, end: bytes.length, endIp: -1 };
    };
    const spans: [number, number][] = [
      [-Infinity, Infinity],
      [0, 500],
      [0, tscOf(0)],
      [tscOf(10), tscOf(20)],
      [tscOf(10) + 1, tscOf(20) - 1],
      [tscOf(49), tscOf(52)],
      [tscOf(398), Infinity],
      [tscOf(399) + 5, Infinity],
      [-Infinity, tscOf(200) + 500],
    ];
    for (let k = 0; k < 40; k++) {
      const a = Math.floor(rand() * 400_000) + 999_000;
      spans.push([a, a + Math.floor(rand() * 100_000)]);
    }
    for (const [from, to] of spans) expect([from, to, fileRangeAtTime(file, { from, to }, TIMING)]).toEqual([from, to, expected(from, to)]);

    // a split of the span: parts within it, joined end to begin, the last naming the span's endIp
    const span = fileRangeAtTime(file, { from: tscOf(40), to: tscOf(300) }, TIMING);
    const parts = splitFileAtPsb(file, 100_000, TIMING, span);
    expect(parts[0].begin).toBe(span.begin);
    expect(parts[parts.length - 1]).toMatchObject({ end: span.end, endIp: span.endIp });
    for (let i = 1; i < parts.length; i++) {
      expect(parts[i - 1].end).toBe(parts[i].begin);
      expect(at).toContain(parts[i].begin);
      expect(parts[i - 1].endIp).toBe(ipOf(at.indexOf(parts[i].begin)));
    }
  });

  test('fileRangeAtTime refuses a stream whose PSB+ names no time, naming the file and offset', () => {
    const bytes = new Uint8Array(20_000);
    putPsbPlus(bytes, 64, 0x7f0000001000);
    putPsbPlus(bytes, 9000, 0x7f0000001040);
    const file = path.join(dir, 'untimed.pt');
    fs.writeFileSync(file, bytes);
    expect(() => fileRangeAtTime(file, { from: 5, to: 10 }, TIMING)).toThrow(UntimedStreamError);
    expect(() => fileRangeAtTime(file, { from: 5, to: 10 }, TIMING)).toThrow(`${file}: the PSB+ at offset 64 carries no TSC`);
    // (the whole stream needs no time)
    expect(fileRangeAtTime(file, { from: -Infinity, to: Infinity }, TIMING)).toEqual({ begin: 0, end: bytes.length, endIp: -1 });
  });
});
