import { EventSeq, maskUnseen, hiddenEntries, compareThread } from '../src';

/** Builds a sequence from [kind, method, bci] triples (opcode = bci here, so the fields stay consistent). */
function seq(events: [number, number, number][]): EventSeq {
  const n = events.length;
  const s: EventSeq = { length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n) };
  events.forEach(([k, m, b], i) => {
    s.kind[i] = k;
    s.method[i] = m;
    s.bci[i] = k === 0 || k === 3 ? b : -1; // (a gap's bci is its reason)
    s.opcode[i] = k === 0 ? b : -1;
  });
  return s;
}
const E = (m: number): [number, number, number] => [1, m, -1];
const X = (m: number): [number, number, number] => [2, m, -1];
const B = (m: number, b: number): [number, number, number] => [0, m, b];

test('an activation the oracle saw no bytecode of is left out of the decoded side, nothing else', () => {
  // method 1 runs, calls 2 (hidden in the truth: entry, a nested visible call of 3, exit), then goes on
  const truth = seq([E(1), B(1, 0), B(1, 1), E(2), E(3), B(3, 0), X(3), X(2), B(1, 2), X(1)]);
  const decoded = seq([E(1), B(1, 0), B(1, 1), E(2), B(2, 0), B(2, 4), E(3), B(3, 0), X(3), B(2, 7), X(2), B(1, 2), X(1)]);
  const hasCode = () => true;
  expect(Array.from(hiddenEntries(truth, hasCode))).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const m = maskUnseen(truth, decoded, hasCode);
  expect(m.hiddenActivations).toBe(1);
  expect(m.paired).toBe(1);
  expect(m.droppedEvents).toBe(6); // everything strictly between E(2) and X(2)
  expect(Array.from(m.keep)).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1]); // which of `decoded` it keeps
  const before = compareThread(truth, decoded);
  const after = compareThread(truth, m.decoded);
  expect(before.counts.relError).toBeGreaterThan(0);
  // the visible call of 3 inside the hidden activation is dropped too: the truth has it, so one bytecode is missing
  expect(after.sequence.matched).toBe(3);
  expect(after.counts.absError).toBe(1);
});

test('methods without bytecode (native) are never hidden activations', () => {
  const truth = seq([E(1), B(1, 0), E(9), X(9), B(1, 1), X(1)]);
  expect(Array.from(hiddenEntries(truth, (m) => m !== 9))).toEqual([0, 0, 0, 0, 0, 0]);
  const m = maskUnseen(truth, truth, (x) => x !== 9);
  expect(m.droppedEvents).toBe(0);
  expect(m.decoded.length).toBe(truth.length);
});

test('a hidden activation with lost data inside ends at the decoded exit paired with the truth exit', () => {
  const G: [number, number, number] = [3, -1, 0]; // an overflow gap (decoded kind 3, reason 0)
  const truth = seq([E(1), B(1, 0), E(2), X(2), B(1, 1), X(1)]);
  const decoded = seq([E(1), B(1, 0), E(2), B(2, 0), G, B(2, 5), B(2, 6), X(2), B(1, 1), X(1)]);
  const m = maskUnseen(truth, decoded, () => true);
  expect(m.paired).toBe(1);
  expect(m.droppedEvents).toBe(4); // B(2,0), the gap, B(2,5), B(2,6)
  expect(compareThread(truth, m.decoded).sequence.accuracy).toBe(1);
  // no exit on the decoded side to pair with: kept as it is
  const open = seq([E(1), B(1, 0), E(2), B(2, 0), G, B(2, 5)]);
  expect(maskUnseen(truth, open, () => true).droppedEvents).toBe(0);
});

test('a hidden activation whose exit was lost ends before the first decoded call paired with a truth call after it', () => {
  const G: [number, number, number] = [3, -1, 0];
  // truth: 1 calls hidden 2, then calls visible 4; decoded: 2's exit fell into the gap (recovery filled it with
  // more of 2), then 1 goes on and calls 4
  const truth = seq([E(1), B(1, 0), E(2), X(2), B(1, 1), E(4), B(4, 0), X(4), X(1)]);
  const decoded = seq([E(1), B(1, 0), E(2), B(2, 0), G, B(2, 5), B(2, 6), B(1, 1), E(4), B(4, 0), X(4), X(1)]);
  const m = maskUnseen(truth, decoded, () => true);
  expect(m.paired).toBe(1);
  // B(2,0), the gap, B(2,5), B(2,6) and the caller's B(1,1) before the call of 4
  expect(m.droppedEvents).toBe(5);
  expect(compareThread(truth, m.decoded).counts.absError).toBe(1); // B(1,1), dropped with the rest
  // no paired call after it either: kept as it is
  const open = seq([E(1), B(1, 0), E(2), B(2, 0), G, B(2, 5), B(1, 1)]);
  expect(maskUnseen(truth, open, () => true).droppedEvents).toBe(0);
});

test('a hidden activation with an exit missing inside (a misnamed callee) ends at the decoded exit paired with the truth exit', () => {
  // truth: 1 calls hidden 2 (inside it, hidden 5), then visible 4. Decoded: inside 2 the decoder named a callee 6
  // and never closed it, so counting depth closes 2 only at 1's exit: without the paired exit, everything after
  // the call of 2 (4's bytecodes and 1's) would be left out
  const truth = seq([E(1), B(1, 0), E(2), E(5), X(5), X(2), B(1, 1), E(4), B(4, 0), X(4), B(1, 2), X(1)]);
  const decoded = seq([E(1), B(1, 0), E(2), B(2, 0), E(6), B(6, 0), B(2, 3), X(2), B(1, 1), E(4), B(4, 0), X(4), B(1, 2), X(1)]);
  const m = maskUnseen(truth, decoded, () => true);
  expect(m.paired).toBe(1);
  expect(m.droppedEvents).toBe(4); // B(2,0), E(6), B(6,0), B(2,3)
  const seen = compareThread(truth, m.decoded);
  expect(seen.counts.absError).toBe(0);
  expect(seen.sequence.accuracy).toBe(1);
});

test('a fill whose gap spans an activation the oracle could not see, and that copies such a call, is left out; one over visible code is kept', () => {
  // truth: 1 runs, calls 2 (hidden: entry, exit, no bytecodes), goes on, calls 4, goes on
  const truth = seq([E(1), B(1, 0), E(2), X(2), B(1, 1), B(1, 2), E(4), B(4, 0), X(4), B(1, 3), X(1)]);
  // decoded: lost data over the call of 2 (its fill: a call of 5 and one of 2, copied from elsewhere; the truth
  // cannot judge them, and its hidden entry pairs with the copy's), then lost data over part of 4 (its fill: 4's
  // bci 0, which the truth has)
  const gap = (): [number, number, number] => [3, -1, 0];
  const decoded = seq([E(1), B(1, 0), gap(), E(5), B(5, 0), B(5, 1), B(5, 2), B(5, 3), X(5), E(2), B(2, 0), X(2), B(1, 1), B(1, 2), E(4), gap(), B(4, 0), X(4), B(1, 3), X(1)]);
  decoded.origin = Uint8Array.from([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0]);
  const m = maskUnseen(truth, decoded, () => true);
  expect(m.hiddenFills).toBe(1);
  expect(Array.from(m.keep)).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  // a fill no longer than what the truth has there (its 3 bytecodes between the calls around the gap) is judged
  const short = seq([E(1), B(1, 0), gap(), E(5), B(5, 0), X(5), E(2), B(2, 0), X(2), B(1, 1), B(1, 2), E(4), B(4, 0), X(4), B(1, 3), X(1)]);
  short.origin = Uint8Array.from([0, 0, 0, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0]);
  expect(maskUnseen(truth, short, () => true).hiddenFills).toBe(0);
  // without a hidden activation nothing is left out
  const plain = seq([E(1), B(1, 0), B(1, 1), B(1, 2), E(4), B(4, 0), X(4), B(1, 3), X(1)]);
  expect(maskUnseen(plain, decoded, () => true).hiddenFills).toBe(0);
  // a copy that holds no call of what the truth hides is visible code, judged by the truth though it is longer than
  // what the truth has there. Truth: 1 calls 6, then hidden 2, goes on; the fill has the call of 6 and a call of 5
  // (which the truth does not have there) and 1's bytecodes
  const truth6 = seq([E(1), B(1, 0), E(6), B(6, 0), X(6), E(2), X(2), B(1, 1), B(1, 2), E(4), B(4, 0), X(4), B(1, 3), X(1)]);
  const visibleCopy = seq([E(1), B(1, 0), gap(), E(6), B(6, 0), X(6), E(5), B(5, 0), B(5, 1), B(5, 2), B(5, 3), X(5), B(1, 1), B(1, 2), E(4), B(4, 0), X(4), B(1, 3), X(1)]);
  visibleCopy.origin = Uint8Array.from([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0]);
  const v = maskUnseen(truth6, visibleCopy, () => true);
  expect(v.hiddenFills).toBe(0);
  expect(v.droppedEvents).toBe(0);
});

test("a fill's own activations paired with hidden ones do not count against the truth there", () => {
  // truth: 1 runs, calls 2 (hidden), goes on. Decoded: lost data right after 1's first bytecode; the fill holds the
  // call of 2 with three bytecodes inside (left out: the truth cannot see them), then 1's two bytecodes
  const truth = seq([E(1), B(1, 0), E(2), X(2), B(1, 1), B(1, 2), X(1)]);
  const gap: [number, number, number] = [3, -1, 0];
  const decoded = seq([E(1), B(1, 0), gap, E(2), B(2, 0), B(2, 1), B(2, 2), X(2), B(1, 1), B(1, 2), X(1)]);
  decoded.origin = Uint8Array.from([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 0]);
  const m = maskUnseen(truth, decoded, () => true);
  // the fill's two bytecodes of 1 are no more than the truth's three between the calls around it: judged, kept
  expect(m.hiddenFills).toBe(0);
  expect(Array.from(m.keep)).toEqual([1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]);
  expect(compareThread(truth, m.decoded).sequence.matched).toBe(3);
});
