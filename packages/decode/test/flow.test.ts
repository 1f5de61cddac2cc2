import { CodeImage, FlowDecoder, FlowSink, GAP_REASONS, SectionKind } from '../src';

const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
const PSBEND = [0x02, 0x23];
const ip8 = (low5: number, v: number) => {
  const out = [low5 | (6 << 5)];
  for (let i = 0; i < 8; i++) out.push(Math.floor(v / 2 ** (8 * i)) & 0xff);
  return out;
};
const TIP = 0x0d, PGE = 0x11, FUP = 0x1d;
const PGD_NOIP = [0x01];
const tnt = (bits: number[]) => {
  let v = 1;
  for (const b of bits) v = (v << 1) | b;
  return [v << 1];
};

/*
 * 0x1000: cmp $0,%eax        83 f8 00
 * 0x1003: je 0x100a          74 05
 * 0x1005: call 0x1010        e8 06 00 00 00
 * 0x100a: jmp *%rax          ff e0
 * 0x100c: nop x4             90 90 90 90
 * 0x1010: inc %ecx           ff c1
 * 0x1012: ret                c3
 */
const CODE = [0x83, 0xf8, 0x00, 0x74, 0x05, 0xe8, 0x06, 0x00, 0x00, 0x00, 0xff, 0xe0, 0x90, 0x90, 0x90, 0x90, 0xff, 0xc1, 0xc3];

function image(): CodeImage {
  const img = new CodeImage();
  img.addSection({ kind: SectionKind.Blob, begin: 0x1000, end: 0x1000 + CODE.length, bytes: Uint8Array.from(CODE), name: 'test', validFrom: 0, validTo: Infinity, nmethod: -1, version: 0 });
  img.ranges = [{ lo: 0x1000, hi: 0x2000 }];
  return img;
}

class Recorder implements FlowSink {
  insns: number[] = [];
  events: string[] = [];
  constructor(private img: CodeImage) {}
  block(b: number): void {
    this.insns.push(...this.img.blockInstructions(b));
  }
  partial(b: number, n: number): void {
    this.insns.push(...this.img.blockInstructions(b).slice(0, n));
  }
  enable(ip: number): void {
    this.events.push(`enable ${ip.toString(16)}`);
  }
  disable(): void {
    this.events.push('disable');
  }
  gap(reason: number, from: number, to: number): void {
    this.events.push(`gap ${GAP_REASONS[reason]} ${from}-${to}`);
  }
}

const TIMING = { ctcRatio: 0, mtcFreq: 0, nomFreq: 0 };

describe('flow layer on a hand-made code image', () => {
  test('TNT bits, direct calls, returns and indirect jumps give exactly the instructions that ran', () => {
    const img = image();
    const rec = new Recorder(img);
    // not taken -> call 0x1010 -> ret (TIP back to 0x100a) -> jmp *rax (TIP 0x1000) -> taken -> jmp *rax -> leaves (PGD)
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...tnt([0]), ...ip8(TIP, 0x100a), ...ip8(TIP, 0x1000), ...tnt([1]), ...PGD_NOIP]);
    const st = new FlowDecoder(img, rec).decode(stream, { retcomp: false, timing: TIMING });
    expect(rec.insns.map((a) => a.toString(16))).toEqual(['1000', '1003', '1005', '1010', '1012', '100a', '1000', '1003', '100a']);
    expect(rec.events).toEqual(['enable 1000', 'disable']);
    expect(st.gaps).toBe(0);
    expect(st.insns).toBe(9);
  });

  test('with return compression a taken TNT bit returns to the call site', () => {
    const img = image();
    const rec = new Recorder(img);
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...tnt([0, 1]), ...PGD_NOIP]);
    new FlowDecoder(img, rec).decode(stream, { retcomp: true, timing: TIMING });
    expect(rec.insns.map((a) => a.toString(16))).toEqual(['1000', '1003', '1005', '1010', '1012', '100a']);
  });

  test('an interrupt (FUP) stops inside a block before the named instruction', () => {
    const img = image();
    const rec = new Recorder(img);
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...tnt([0]), ...ip8(FUP, 0x1012), ...PGD_NOIP]);
    const st = new FlowDecoder(img, rec).decode(stream, { retcomp: false, timing: TIMING });
    expect(rec.insns.map((a) => a.toString(16))).toEqual(['1000', '1003', '1005', '1010']);
    expect(st.gaps).toBe(0);
  });

  test('an OVF where the code needs a packet is lost data (an overflow gap), not a mismatch', () => {
    const img = image();
    const rec = new Recorder(img);
    // the je at 0x1003 needs a TNT bit, but the PT unit overflowed: OVF, then FUP at the resume point
    const OVF = [0x02, 0xf3];
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...OVF, ...ip8(FUP, 0x1010), ...ip8(TIP, 0x100a), ...PGD_NOIP]);
    const st = new FlowDecoder(img, rec).decode(stream, { retcomp: false, timing: TIMING });
    expect(st.gaps).toBe(1);
    expect(rec.events.filter((e) => e.startsWith('gap overflow')).length).toBe(1);
    // the block that ended at the lost branch is not emitted; the flow resumes at the FUP
    expect(rec.insns.map((a) => a.toString(16))).toEqual(['1010', '1012', '100a']);
  });

  test('packets that do not fit the code become a gap, and decoding resumes at the next full IP', () => {
    const img = image();
    const rec = new Recorder(img);
    // a TIP where the code needs a TNT bit: mismatch; the TIP's own target resumes the flow
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...ip8(TIP, 0x1010), ...ip8(TIP, 0x100a), ...ip8(TIP, 0x1000), ...tnt([1]), ...PGD_NOIP]);
    const st = new FlowDecoder(img, rec).decode(stream, { retcomp: false, timing: TIMING });
    expect(st.gaps).toBe(1);
    expect(rec.events.filter((e) => e.startsWith('gap mismatch')).length).toBe(1);
    // after the gap: 0x1010 inc, ret -> 0x100a, jmp* -> 0x1000, cmp, je taken -> 0x100a jmp* -> PGD
    expect(rec.insns.map((a) => a.toString(16))).toEqual(['1010', '1012', '100a', '1000', '1003', '100a']);
  });

  test('random and bit-flipped streams never throw, always end and account their gaps', () => {
    const img = image();
    const good = [...PSB, ...PSBEND, ...ip8(PGE, 0x1000), ...tnt([0]), ...ip8(TIP, 0x100a), ...ip8(TIP, 0x1000), ...tnt([1]), ...PGD_NOIP];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0x7fff;
    for (let round = 0; round < 500; round++) {
      let bytes: Uint8Array;
      if (round % 2) {
        bytes = Uint8Array.from([...good, ...good, ...good]);
        for (let k = 0; k < 1 + (round % 5); k++) bytes[rnd() % bytes.length] ^= 1 << rnd() % 8;
      } else {
        bytes = new Uint8Array(512 + (rnd() % 512));
        for (let i = 0; i < bytes.length; i++) bytes[i] = rnd() & 0xff;
        bytes.set(PSB, rnd() % 256);
      }
      const rec = new Recorder(img);
      const st = new FlowDecoder(img, rec).decode(bytes, { retcomp: !!(round % 3), timing: { ctcRatio: 64, mtcFreq: 3, nomFreq: 32 } });
      expect(st.bytes).toBe(bytes.length);
      expect(st.gaps).toBe(rec.events.filter((e) => e.startsWith('gap')).length);
    }
  });
});

describe('call sites the image holds unresolved', () => {
  /*
   * A recursive compiled method f at 0x4000 whose call site still calls the static-call resolution stub in the
   * image (its patch was polled late, or never: cleaned back once the method's code went not-entrant), while it
   * ran resolved to f itself:
   * 0x4000: test %esi,%esi     85 f6
   * 0x4002: je 0x400c          74 08
   * 0x4004: dec %esi           ff ce
   * 0x4006: call 0x5000        e8 f5 0f 00 00   (the resolution stub)
   * 0x400b: nop                90
   * 0x400c: ret                c3
   * 0x5000: call 0x9000        e8 fb 3f 00 00   (into the VM: outside the traced range)
   */
  const F = [0x85, 0xf6, 0x74, 0x08, 0xff, 0xce, 0xe8, 0xf5, 0x0f, 0x00, 0x00, 0x90, 0xc3];
  const STUB = [0xe8, 0xfb, 0x3f, 0x00, 0x00];
  function recursiveImage(): CodeImage {
    const img = new CodeImage();
    img.nmethods.push({ method: 1, codeBegin: 0x4000, codeEnd: 0x4000 + F.length, entry: 0x4000, verifiedEntry: 0x4000, osrEntry: -1, osrBci: -1, stubBegin: 0x4000 + F.length, level: 4, compileId: 1, loadTsc: 0, unloadTsc: Infinity, pcs: new Float64Array(0), frameStart: new Uint32Array(1), frames: new Int32Array(0) });
    img.addSection({ kind: SectionKind.Nmethod, begin: 0x4000, end: 0x4000 + F.length, bytes: Uint8Array.from(F), name: 'f', validFrom: 0, validTo: Infinity, nmethod: 0, version: 0 });
    img.addSection({ kind: SectionKind.Blob, begin: 0x5000, end: 0x5000 + STUB.length, bytes: Uint8Array.from(STUB), name: 'resolve_static_call', validFrom: 0, validTo: Infinity, nmethod: -1, version: 0 });
    img.resolveStubs.add(0x5000);
    img.ranges = [{ lo: 0x4000, hi: 0x6000 }];
    return img;
  }

  test('a recursive method read ahead takes its own call site as the search assumes it: f(2) -> f(1) -> f(0) decode whole', () => {
    const img = recursiveImage();
    const rec = new Recorder(img);
    // f(2): not taken, call; f(1): not taken, call; f(0): taken, ret (TIP 0x400b); f(1) ret (TIP 0x400b); f(2) ret leaves (PGD)
    const stream = Uint8Array.from([...PSB, ...PSBEND, ...ip8(PGE, 0x4000), ...tnt([0, 0, 1]), ...ip8(TIP, 0x400b), ...ip8(TIP, 0x400b), ...PGD_NOIP]);
    const st = new FlowDecoder(img, rec, () => [0x4000]).decode(stream, { retcomp: false, timing: TIMING });
    const round = ['4000', '4002', '4004', '4006'];
    expect(rec.insns.map((a) => a.toString(16))).toEqual([...round, ...round, '4000', '4002', '400c', '400b', '400c', '400b', '400c']);
    expect(rec.events).toEqual(['enable 4000', 'disable']);
    expect(st.gaps).toBe(0);
  });
});
