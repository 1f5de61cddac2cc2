import { Item, LastIp, Packet, PacketDecoder, QueryDecoder, TimeTracker } from '../src';

const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
const PSBEND = [0x02, 0x23];
/** An IP packet: header low 5 bits + IPBytes, payload little-endian. */
function ipPacket(low5: number, ipc: number, value: bigint, bytes: number): number[] {
  const out = [low5 | (ipc << 5)];
  for (let i = 0; i < bytes; i++) out.push(Number((value >> BigInt(8 * i)) & 0xffn));
  return out;
}
const TIP = 0x0d, PGE = 0x11, PGD = 0x01, FUP = 0x1d;
/** Short TNT with bits oldest-first. */
function tnt(bits: number[]): number[] {
  let v = 1;
  for (const b of bits) v = (v << 1) | b;
  return [v << 1];
}
function tsc(v: bigint): number[] {
  const out = [0x19];
  for (let i = 0; i < 7; i++) out.push(Number((v >> BigInt(8 * i)) & 0xffn));
  return out;
}

function packets(bytes: number[]): Packet[] {
  const d = new PacketDecoder(Uint8Array.from(bytes));
  const out: Packet[] = [];
  d.syncForward();
  for (;;) {
    const p = new Packet();
    if (!d.next(p)) break;
    out.push(p);
  }
  return out;
}

describe('last-IP reconstruction', () => {
  test('every IPBytes form updates the bytes it carries, on top of the last IP', () => {
    const ps = packets([
      ...PSB,
      ...ipPacket(TIP, 6, 0x00007f1234567890n, 8), // full
      ...ipPacket(TIP, 1, 0xbeefn, 2), // low 16 bits
      ...ipPacket(TIP, 2, 0xcafe0000n, 4), // low 32 bits
      ...ipPacket(TIP, 4, 0x00004321_00000001n, 6), // low 48 bits, upper 16 from last
      ...ipPacket(TIP, 3, 0x0000ffff_80000000n, 6), // 48 bits, sign-extended from bit 47
      ...ipPacket(TIP, 0, 0n, 0), // suppressed
    ]);
    const last = new LastIp();
    const got = ps.slice(1).map((p) => last.update(p));
    expect(got[0]).toBe(0x7f1234567890);
    expect(got[1]).toBe(0x7f123456beef);
    expect(got[2]).toBe(0x7f12cafe0000);
    expect(got[3]).toBe(0x432100000001);
    expect(got[4]).toBeLessThan(0); // kernel half: never user code
    expect(got[5]).toBe(-1);
  });

  test('a compressed IP before any full IP is unknown', () => {
    const last = new LastIp();
    expect(last.update(packets([...PSB, ...ipPacket(TIP, 2, 0x1234n, 4)])[1])).toBe(-1);
  });
});

describe('time', () => {
  test('MTC advances the time to the CTC edges it marks, counted from the TMA anchor', () => {
    const ratio = 64, mtcFreq = 3;
    const t0 = 1_000_000n * 64n + 10n; // 10 ticks past a CTC edge
    const ctc0 = Number(t0 / 64n);
    const tma = [0x02, 0x73, ctc0 & 0xff, (ctc0 >> 8) & 0xff, 0, 10, 0];
    // the next MTC edges: periods of 2^3 CTC ticks
    const period0 = Math.floor(ctc0 / 8);
    const bytes = [...PSB, ...tsc(t0), ...tma, ...PSBEND, 0x59, (period0 + 1) & 0xff, 0x59, (period0 + 2) & 0xff];
    const time = new TimeTracker({ ctcRatio: ratio, mtcFreq, nomFreq: 0 });
    const seen: number[] = [];
    for (const p of packets(bytes)) if (time.update(p)) seen.push(time.tsc);
    expect(seen[0]).toBe(Number(t0));
    const edge1 = (period0 + 1) * 8 * ratio;
    expect(seen[2]).toBe(edge1);
    expect(seen[3]).toBe(edge1 + 8 * ratio);
    expect(time.lostMtc).toBe(0);
  });
});

describe('query layer', () => {
  const stream = Uint8Array.from([
    ...PSB,
    ...tsc(5000n),
    ...PSBEND,
    ...ipPacket(PGE, 6, 0x1000n, 8),
    ...tnt([1, 0, 1]),
    ...ipPacket(TIP, 1, 0x2000n, 2),
    ...ipPacket(FUP, 1, 0x2004n, 2),
    ...ipPacket(PGD, 0, 0n, 0),
    0x02, 0xf3, // OVF
    ...ipPacket(FUP, 6, 0x3000n, 8),
    ...ipPacket(PGD, 1, 0x4000n, 2),
  ]);

  test('packets become the items a flow decoder asks for, with full IPs', () => {
    const q = new QueryDecoder(stream, { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 });
    const items: string[] = [];
    for (;;) {
      const k = q.peek();
      if (k === Item.End) break;
      items.push(k === Item.Tnt ? `tnt${q.bit}` : `${Item[k]}${q.ip >= 0 ? ':' + q.ip.toString(16) : ''}`);
      q.consume();
    }
    expect(items).toEqual(['Pge:1000', 'tnt1', 'tnt0', 'tnt1', 'Tip:2000', 'FupAsync:2004', 'Pgd', 'Ovf', 'FupStatus:3000', 'Pgd:4000']);
    expect(q.tsc).toBe(5000);
  });

  test('save and restore come back to exactly the same place', () => {
    const q = new QueryDecoder(stream, { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 });
    q.consume(); // PGE
    q.consume(); // first TNT bit
    const s = q.save();
    const ahead: string[] = [];
    for (let i = 0; i < 5; i++) {
      ahead.push(`${q.peek()}:${q.bit}:${q.ip}`);
      q.consume();
    }
    q.restore(s);
    const again: string[] = [];
    for (let i = 0; i < 5; i++) {
      again.push(`${q.peek()}:${q.bit}:${q.ip}`);
      q.consume();
    }
    expect(again).toEqual(ahead);
  });

  test('bytes that do not decode become one BadPacket item and decoding goes on at the next PSB', () => {
    const bad = Uint8Array.from([...PSB, ...PSBEND, 0x02, 0xff, 0x77, ...PSB, ...PSBEND, ...ipPacket(PGE, 6, 0x1000n, 8)]);
    const q = new QueryDecoder(bad, { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 });
    expect(q.peek()).toBe(Item.BadPacket);
    expect(q.offset).toBe(18);
    q.consume();
    expect(q.peek()).toBe(Item.Pge);
    expect(q.ip).toBe(0x1000);
  });

  test('random bytes never throw and always end', () => {
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let round = 0; round < 200; round++) {
      const b = new Uint8Array(2048);
      for (let i = 0; i < b.length; i++) b[i] = rnd();
      if (round % 2) b.set(PSB, rnd() * 4); // sometimes with a PSB to sync on
      const q = new QueryDecoder(b, { ctcRatio: 64, mtcFreq: 3, nomFreq: 32 }, undefined, 0, b.length, round % 3 === 0);
      let n = 0;
      while (q.peek() !== Item.End && n < 100_000) {
        q.consume();
        n++;
      }
      expect(n).toBeLessThan(100_000);
    }
  });
});
