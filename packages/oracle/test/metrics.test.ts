import { alignmentBound, compareThread, countError, hotMethodOverlap, lossAccuracy, Origin } from '../src';
import { Ev, seqOf } from './gen';

const at = (method: number, bci: number, times: number, opcode = 1): Ev[] => Array.from({ length: times }, () => ({ method, bci, opcode }));

describe('countError', () => {
  test('per-(method, bci) counts: absolute and relative error, coverage, attributed events', () => {
    const truth = seqOf([...at(1, 0, 3), ...at(1, 1, 2), ...at(2, 0, 1), { kind: 1, method: 1, bci: -1, opcode: -1 }]);
    const decoded = seqOf([...at(1, 0, 2), ...at(1, 1, 2), ...at(3, 5, 1), ...at(-1, -1, 4), ...at(1, -1, 2), { kind: 2, method: 1, bci: 0, opcode: -1 }]);
    expect(countError(truth, decoded)).toEqual({
      keys: 4, // (1,0) (1,1) (2,0) (3,5)
      truthTotal: 6,
      attributedDecoded: 5, // interpreted events and those without a bci are not attributed; the exit is no bytecode
      absError: 3, // |3-2| + |2-2| + |1-0| + |0-1|
      relError: 0.5,
      coverage: 5 / 6, // (2,0) never decoded
    });
  });

  test('identical sequences have no error; an empty truth is covered', () => {
    const t = seqOf([...at(1, 0, 3), ...at(4, 7, 2)]);
    expect(countError(t, t)).toMatchObject({ absError: 0, relError: 0, coverage: 1, keys: 2 });
    expect(countError(seqOf([]), t)).toMatchObject({ truthTotal: 0, absError: 5, relError: 0, coverage: 1 });
  });
});

describe('hotMethodOverlap', () => {
  const truth = seqOf([...at(1, 0, 50), ...at(2, 0, 30), ...at(3, 0, 20), ...at(4, 0, 10), ...at(5, 0, 5)]);
  const decoded = seqOf([...at(1, 3, 45), ...at(3, 0, 25), ...at(2, 0, 20), ...at(-1, -1, 100), ...at(6, 0, 8)]);

  test('top-k by bytecode events; unknown methods do not count', () => {
    const h = hotMethodOverlap(truth, decoded, 3);
    expect(h.truth).toEqual([
      { method: 1, count: 50 },
      { method: 2, count: 30 },
      { method: 3, count: 20 },
    ]);
    expect(h.decoded).toEqual([
      { method: 1, count: 45 },
      { method: 3, count: 25 },
      { method: 2, count: 20 },
    ]);
    expect(h).toMatchObject({ k: 3, shared: 3, overlap: 1, identical: true });
  });

  test('partial overlap, and fewer methods than k', () => {
    expect(hotMethodOverlap(truth, decoded, 4)).toMatchObject({ shared: 3, overlap: 0.75, identical: false });
    const h = hotMethodOverlap(truth, decoded);
    expect(h.k).toBe(10);
    expect(h.truth).toHaveLength(5);
    expect(h.decoded).toHaveLength(4);
    expect(h).toMatchObject({ shared: 3, overlap: 3 / 5, identical: false });
  });

  test('ties rank by method id', () => {
    const t = seqOf([...at(9, 0, 2), ...at(3, 0, 2), ...at(5, 0, 1)]);
    expect(hotMethodOverlap(t, t, 2).truth.map((x) => x.method)).toEqual([3, 9]);
  });
});

describe('compareThread', () => {
  test('bundles the four metrics', () => {
    const truth = seqOf([
      { kind: 1, method: 1, bci: -1, opcode: -1 },
      ...at(1, 0, 1, 10),
      ...at(1, 1, 1, 11),
      { kind: 1, method: 2, bci: -1, opcode: -1 },
      ...at(2, 0, 1, 12),
      { kind: 2, method: 2, bci: -1, opcode: -1 },
      ...at(1, 2, 1, 13),
      { kind: 2, method: 1, bci: -1, opcode: -1 },
    ]);
    const decoded = seqOf([
      { kind: 1, method: -1, bci: -1, opcode: -1 },
      ...at(-1, -1, 1, 10),
      ...at(-1, -1, 1, 11),
      { kind: 1, method: 2, bci: -1, opcode: -1 },
      { method: 2, bci: 0, opcode: -1 },
      { kind: 2, method: 2, bci: -1, opcode: -1 },
      { kind: 3, method: -1, bci: 0, opcode: -1 }, // a gap: ignored
      { kind: 2, method: 1, bci: -1, opcode: -1 },
    ]);
    const c = compareThread(truth, decoded);
    expect(c.sequence).toMatchObject({ truthLength: 4, decodedLength: 3, matched: 3, accuracy: 0.75, unknownFieldsMatched: 3, exact: true });
    expect(c.calls).toMatchObject({ truthLength: 4, decodedLength: 4, matched: 4, accuracy: 1, unknownFieldsMatched: 1 });
    expect(c.counts).toMatchObject({ truthTotal: 4, attributedDecoded: 1, absError: 3, coverage: 0.25 });
    expect(c.hot).toMatchObject({ shared: 1, identical: false });
    expect(c.hot.truth[0]).toEqual({ method: 1, count: 3 });
  });
});

describe('lossAccuracy', () => {
  test('decoded, inferred and recovered events: PD, DA, PR, RA, overall and the bag bound', () => {
    const truth = seqOf([...at(1, 0, 1, 10), ...at(1, 1, 1, 11), ...at(1, 2, 1, 12), ...at(1, 3, 1, 13)]);
    const decoded = seqOf([...at(1, 0, 1, 10), ...at(9, 9, 1, 99), ...at(1, 2, 1, 12), ...at(1, 3, 1, 13)]);
    decoded.origin = Uint8Array.from([Origin.Observed, Origin.Observed, Origin.Recovered, Origin.Inferred]);
    const r = lossAccuracy(truth, decoded);
    expect(r).toMatchObject({ truthLength: 4, decoded: 3, decodedMatched: 2, recovered: 1, recoveredMatched: 1 });
    expect(r.pd).toBeCloseTo(3 / 4);
    expect(r.da).toBeCloseTo(2 / 3);
    expect(r.pr).toBeCloseTo(1 / 4);
    expect(r.ra).toBe(1);
    expect(r.overall).toBeCloseTo(3 / 4);
    expect(r.bound).toBeCloseTo(3 / 4); // (1,1) never decoded, (9,9) never ran
    // nothing recovered: RA is undefined (NaN), not 0 or 1
    decoded.origin = undefined;
    expect(Number.isNaN(lossAccuracy(truth, decoded).ra)).toBe(true);
  });
});

describe('counts over many keys', () => {
  test('the per-(method, bci) table keeps every count while it grows: the bound of a sequence against itself is its length', () => {
    const evs: Ev[] = [];
    for (let m = 0; m < 300; m++) for (let b = 0; b < 20; b++) evs.push({ method: m, bci: b, opcode: (m + b) % 200 });
    const s = seqOf(evs);
    expect(alignmentBound(s, s)).toBe(s.length);
    expect(countError(s, s).absError).toBe(0);
    expect(countError(s, s).attributedDecoded).toBe(s.length);
  });
});
