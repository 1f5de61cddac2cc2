/**
 * The fuzz tests' shared harness (packages/pt and packages/decode): seeded randomness, and a case runner that
 * names the failing seed, writes its input to a file and can rerun one case.
 *   JPORTAL_FUZZ_SEED=N     base seed            JPORTAL_FUZZ_SCALE=X  iterations x X
 *   JPORTAL_FUZZ_CASE=s:N   only that case       JPORTAL_FUZZ_ALL=1    report every failing seed (up to 20)
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as v8 from 'v8';
import * as vm from 'vm';

export const BASE_SEED = Number(process.env.JPORTAL_FUZZ_SEED ?? 0x5eed) >>> 0;
export const SCALE = Number(process.env.JPORTAL_FUZZ_SCALE ?? 1);
const ONLY = process.env.JPORTAL_FUZZ_CASE; // "suite:seed"
const ALL = !!process.env.JPORTAL_FUZZ_ALL;

// globals are slow to reach from test code (jest runs it in a vm context): hot paths use local copies
const imul = Math.imul;

export class Rng {
  constructor(private s: number) {}
  /** mulberry32 */
  u32(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) | 0);
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  int(n: number): number {
    return n <= 1 ? 0 : this.u32() % n;
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  bool(p = 0.5): boolean {
    return this.u32() / 2 ** 32 < p;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)];
  }
  bytes(n: number): Uint8Array {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
  /** A random unsigned value of `bits` bits (bits <= 64) as a bigint. */
  big(bits: number): bigint {
    let v = 0n;
    for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(this.u32());
    return bits >= 64 ? v & ((1n << 64n) - 1n) : v & ((1n << BigInt(bits)) - 1n);
  }
}

export function hash(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) {
    h = imul(h ^ (x >>> 0), 0x01000193) >>> 0;
    h = imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
  }
  return h >>> 0;
}
export const strHash = (s: string) => hash(...Array.from(s, (c) => c.charCodeAt(0)));

export const hex = (b: Uint8Array, max = 256) => Buffer.from(b.subarray(0, max)).toString('hex') + (b.length > max ? `... (${b.length} bytes)` : '');

/** What the current case works on (shown when it fails; the input is also written to a file). */
export const current: { input?: Uint8Array; note?: string } = {};

/** Starts describing a case: its input and a note. */
export function setCase(input?: Uint8Array, note?: string): void {
  current.input = input;
  current.note = note;
}

/**
 * Runs `iterations` cases of a suite, each with its own seed derived from the base seed, the suite and the
 * index (after the suite's regression seeds). A failure names the seed and the input. Returns the number of
 * cases run.
 */
export function fuzz(suite: string, iterations: number, body: (r: Rng, i: number) => void, regressions: Record<string, number[]> = {}): number {
  const cases: number[] = [];
  if (ONLY) {
    const [s, seed] = ONLY.split(':');
    if (s !== suite) return 0;
    cases.push(Number(seed) >>> 0);
  } else {
    cases.push(...(regressions[suite] ?? []));
    for (let i = 0; i < Math.ceil(iterations * SCALE); i++) cases.push(hash(BASE_SEED, strHash(suite), i));
  }
  const failed: Error[] = [];
  cases.forEach((seed, i) => {
    if (failed.length >= 20) return;
    setCase();
    try {
      body(new Rng(seed), i);
    } catch (e) {
      const err = e as Error;
      let input = '';
      if (current.input) {
        const file = path.join(os.tmpdir(), `jportal-fuzz-${suite}-${seed}.bin`);
        fs.writeFileSync(file, current.input);
        input = `\ninput (${file}): ${hex(current.input)}`;
      }
      const note = current.note ? `\ncase: ${current.note}` : '';
      err.message = `fuzz case failed: suite ${suite}, seed ${seed} (rerun: JPORTAL_FUZZ_CASE=${suite}:${seed})${note}${input}\n${err.message}`;
      if (!ALL) throw err;
      failed.push(err);
    }
  });
  if (failed.length) throw new Error(`${failed.length} failing cases:\n\n${failed.map((e) => e.message.slice(0, 2000)).join('\n\n')}`);
  return cases.length;
}

/** Throws unless `cond`; cheaper than expect() in hot fuzz loops. */
export function check(cond: boolean, what: () => string): void {
  if (!cond) throw new Error(what());
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
