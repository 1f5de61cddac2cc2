/**
 * Cutting a stream at PSBs from a file, reading only around the cuts (a stream may be past the 2 GiB one buffer
 * holds), must cut exactly where cutting the bytes in memory does.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TimingConfig } from '@jportal/pt';
import { splitAtPsb, splitFileAtPsb } from '../src';

const TIMING: TimingConfig = { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 };
const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
const PSBEND = [0x02, 0x23];

/** PSB+ (PSB, a FUP naming `ip` with a 6-byte payload, PSBEND) at `at`. */
function putPsbPlus(bytes: Uint8Array, at: number, ip: number): void {
  bytes.set(PSB, at);
  const fup = [0x1d | (3 << 5)];
  for (let k = 0; k < 6; k++) fup.push(Math.floor(ip / 2 ** (8 * k)) & 0xff);
  bytes.set(fup, at + PSB.length);
  bytes.set(PSBEND, at + PSB.length + fup.length);
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
});
