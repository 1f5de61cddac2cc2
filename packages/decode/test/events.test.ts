import { EventStream } from '../src';

/** A stream of `n` events whose columns all hold values derived from the event index. */
function numbered(n: number): EventStream {
  const e = new EventStream(n);
  for (let i = 0; i < n; i++) e.push(i % 7, i % 3, i * 10, i, i % 200, 1000 + i, i / 2);
  return e;
}

const rows = (e: EventStream): number[][] =>
  Array.from({ length: e.length }, (_, i) => [e.kind[i], e.source[i], e.method[i], e.bci[i], e.opcode[i], e.tsc[i], e.aux[i]]);

describe('EventStream.splice', () => {
  test('inserts each group before its event, values from the old columns, in place', () => {
    const e = numbered(10);
    const before = rows(e);
    // group 0: two events before event 0; group 1: one before event 4; group 2: none before 4; group 3: appended
    const at = [0, 4, 4, 10];
    const first = [0, 2, 3, 3, 5];
    const from = [9, 8, 1, 2, 3]; // inserted event q copies old event from[q] (tsc: q)
    const kindCol = e.kind;
    e.splice(at, first, 4, {
      kind: (_g, q, old) => old[from[q]],
      source: () => 5,
      method: (g) => 100 + g,
      bci: (_g, q, old) => old[from[q]],
      opcode: (_g, q, old) => old[from[q]],
      tsc: (_g, q) => q,
      aux: (_g, q, old) => old[from[q]],
    });
    expect(e.length).toBe(15);
    expect(e.kind).not.toBe(kindCol); // widened: a new column
    const ins = (g: number, q: number) => [before[from[q]][0], 5, 100 + g, before[from[q]][3], before[from[q]][4], q, before[from[q]][6]];
    expect(rows(e)).toEqual([ins(0, 0), ins(0, 1), ...before.slice(0, 4), ins(1, 2), ...before.slice(4), ins(3, 3), ins(3, 4)]);
  });

  test('nothing to insert leaves the columns as they are', () => {
    const e = numbered(5);
    const kind = e.kind;
    const zero = () => 0;
    e.splice([2], [0, 0], 1, { kind: zero, source: zero, method: zero, bci: zero, opcode: zero, tsc: zero, aux: zero });
    expect(e.kind).toBe(kind);
    expect(e.length).toBe(5);
  });
});
