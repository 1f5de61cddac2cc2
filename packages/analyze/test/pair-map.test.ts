/** PairMap against a Map on random keys: through rehashes, with colliding and negative keys. */
import { PairMap } from '../src/pair-map';

describe('PairMap', () => {
  test('agrees with a Map over 200k random pairs, through rehashes; absent pairs give -1', () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const m = new PairMap();
    const ref = new Map<string, number>();
    for (let i = 0; i < 200000; i++) {
      // small ranges make repeats (updates) and clustered hashes; -1 keys are allowed
      const x = rand(5000) - 1;
      const y = rand(i % 2 ? 3 : 70000) - 1;
      const v = rand(1 << 30);
      m.set(x, y, v);
      ref.set(`${x},${y}`, v);
    }
    expect(m.size).toBe(ref.size);
    const wrong: string[] = [];
    for (const [k, v] of ref) {
      const [x, y] = k.split(',').map(Number);
      if (m.get(x, y) !== v) wrong.push(k);
    }
    expect(wrong).toEqual([]);
    let absent = 0;
    for (let i = 0; i < 20000; i++) {
      const x = 5000 + rand(1000);
      const y = rand(100);
      if (m.get(x, y) === -1) absent++;
    }
    expect(absent).toBe(20000);
    expect(() => m.set(-2147483648, 0, 1)).toThrow(/reserved/);
  });
});
