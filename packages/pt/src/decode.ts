import { PtDecodeError } from './errors';
import { Packet, PacketKind as K } from './packet';

/** Bytes of the IP payload for each IPBytes value (-1: reserved). */
const IP_PAYLOAD = [0, 2, 4, 6, 6, -1, 8, -1];
const PSB_PATTERN = [0x02, 0x82];

/** Reads an n-byte (n <= 8) little-endian payload into p.lo / p.hi. */
function le(bytes: Uint8Array, pos: number, n: number, p: Packet): void {
  let lo = 0;
  let hi = 0;
  const nlo = n < 4 ? n : 4;
  for (let i = nlo - 1; i >= 0; i--) lo = lo * 256 + bytes[pos + i];
  for (let i = n - 1; i >= 4; i--) hi = hi * 256 + bytes[pos + i];
  p.lo = lo;
  p.hi = hi;
}

function need(pos: number, n: number, end: number, what: string): void {
  if (pos + n > end) throw new PtDecodeError('truncated', pos, `${what} packet needs ${n} bytes, ${end - pos} left`);
}

/**
 * Decodes the packet at `pos` into `p`; returns its size. `inBlock` says whether a BBP opened a block (its
 * BIPs have headers that would otherwise read as other packets); `bipBytes` is the BIP payload size it set.
 * Throws PtDecodeError (with the offset) for truncated or invalid packets.
 */
export function decodePacket(bytes: Uint8Array, pos: number, end: number, p: Packet, inBlock = false, bipBytes = 8): number {
  p.offset = pos;
  const b0 = bytes[pos];
  if (inBlock && (b0 & 0x07) === 0x04) {
    need(pos, 1 + bipBytes, end, 'BIP');
    p.kind = K.Bip;
    p.a = b0 >> 3;
    le(bytes, pos + 1, bipBytes, p);
    return (p.size = 1 + bipBytes);
  }
  if (b0 === 0x00) {
    p.kind = K.Pad;
    return (p.size = 1);
  }
  if (b0 === 0x02) return decodeExtended(bytes, pos, end, p);
  if ((b0 & 0x01) === 0) {
    // short TNT: a stop bit above 1..6 TNT bits, in bits 7..1
    const v = b0 >> 1;
    const n = 31 - Math.clz32(v);
    p.kind = K.Tnt8;
    p.bits = n;
    p.lo = v & ((1 << n) - 1);
    p.hi = 0;
    return (p.size = 1);
  }
  if ((b0 & 0x03) === 0x03) {
    // CYC: bits 7..3 are the low count bits; bit 2 says more bytes follow (bit 0 of each says the same).
    // As in libipt, a count wider than 64 bits (a 9th continuation byte) is a bad packet.
    let value = b0 >> 3;
    let n = 1;
    let more = (b0 & 0x04) !== 0;
    let scale = 32;
    while (more) {
      need(pos, n + 1, end, 'CYC');
      if (n > 8) throw new PtDecodeError('bad-packet', pos, 'CYC payload wider than 64 bits');
      const x = bytes[pos + n++];
      value += (x >> 1) * scale;
      scale *= 128;
      more = (x & 0x01) !== 0;
    }
    p.kind = K.Cyc;
    if (value > Number.MAX_SAFE_INTEGER) {
      // wider than 53 bits (no real CYC gets there): the exact 64-bit payload, as libipt has it
      let v = BigInt(b0 >> 3);
      for (let i = 1; i < n; i++) v |= BigInt(bytes[pos + i] >> 1) << BigInt(7 * i - 2);
      p.lo = Number(v & 0xffffffffn);
      p.hi = Number(v >> 32n);
    } else {
      p.lo = value % 0x100000000;
      p.hi = Math.floor(value / 0x100000000);
    }
    return (p.size = n);
  }
  const low5 = b0 & 0x1f;
  if (low5 === 0x0d || low5 === 0x11 || low5 === 0x01 || low5 === 0x1d) {
    const ipc = b0 >> 5;
    const n = IP_PAYLOAD[ipc];
    if (n < 0) throw new PtDecodeError('bad-packet', pos, `reserved IPBytes ${ipc}`);
    need(pos, 1 + n, end, 'IP');
    p.kind = low5 === 0x0d ? K.Tip : low5 === 0x11 ? K.TipPge : low5 === 0x01 ? K.TipPgd : K.Fup;
    p.ipc = ipc;
    if (n) le(bytes, pos + 1, n, p);
    else p.lo = p.hi = 0;
    return (p.size = 1 + n);
  }
  switch (b0) {
    case 0x99: {
      need(pos, 2, end, 'MODE');
      const x = bytes[pos + 1];
      const leaf = x >> 5;
      if (leaf === 0) {
        p.kind = K.ModeExec;
        p.a = x & 1; // CS.L
        p.b = (x >> 1) & 1; // CS.D
      } else if (leaf === 1) {
        p.kind = K.ModeTsx;
        p.a = x & 1; // InTX
        p.b = (x >> 1) & 1; // TXAbort
      } else throw new PtDecodeError('bad-packet', pos, `unknown MODE leaf ${leaf}`);
      return (p.size = 2);
    }
    case 0x19:
      need(pos, 8, end, 'TSC');
      p.kind = K.Tsc;
      le(bytes, pos + 1, 7, p);
      return (p.size = 8);
    case 0x59:
      need(pos, 2, end, 'MTC');
      p.kind = K.Mtc;
      p.a = bytes[pos + 1];
      return (p.size = 2);
  }
  throw new PtDecodeError('bad-opcode', pos, `unknown packet opcode 0x${b0.toString(16)}`);
}

function decodeExtended(bytes: Uint8Array, pos: number, end: number, p: Packet): number {
  need(pos, 2, end, 'extended');
  const b1 = bytes[pos + 1];
  switch (b1) {
    case 0x82:
      need(pos, 16, end, 'PSB');
      for (let i = 2; i < 16; i++)
        if (bytes[pos + i] !== PSB_PATTERN[i & 1]) throw new PtDecodeError('bad-packet', pos, 'broken PSB pattern');
      p.kind = K.Psb;
      return (p.size = 16);
    case 0x23:
      p.kind = K.PsbEnd;
      return (p.size = 2);
    case 0xa3: {
      need(pos, 8, end, 'TNT-64');
      le(bytes, pos + 2, 6, p);
      // the stop bit is the highest set bit of the 48-bit payload
      let n: number;
      if (p.hi !== 0) {
        n = 32 + 31 - Math.clz32(p.hi);
        p.hi = p.hi & ((1 << (n - 32)) - 1);
      } else if (p.lo !== 0) {
        n = 31 - Math.clz32(p.lo);
        p.lo = n === 0 ? 0 : (p.lo & (2 ** n - 1)) >>> 0;
      } else throw new PtDecodeError('bad-packet', pos, 'TNT-64 without a stop bit');
      p.kind = K.Tnt64;
      p.bits = n;
      return (p.size = 8);
    }
    case 0x43: {
      need(pos, 8, end, 'PIP');
      le(bytes, pos + 2, 6, p);
      p.kind = K.Pip;
      p.a = p.lo & 1; // NR
      // CR3 = payload[47:1] << 5, i.e. (payload & ~1) << 4
      const cr3 = (p.hi * 0x100000000 + (p.lo - p.a)) * 16;
      p.lo = cr3 % 0x100000000;
      p.hi = Math.floor(cr3 / 0x100000000);
      return (p.size = 8);
    }
    case 0xc8:
      need(pos, 7, end, 'VMCS');
      p.kind = K.Vmcs;
      le(bytes, pos + 2, 5, p);
      {
        const base = (p.hi * 0x100000000 + p.lo) * 4096;
        p.lo = base % 0x100000000;
        p.hi = Math.floor(base / 0x100000000);
      }
      return (p.size = 7);
    case 0x03:
      need(pos, 4, end, 'CBR');
      p.kind = K.Cbr;
      p.a = bytes[pos + 2];
      return (p.size = 4);
    case 0x73:
      need(pos, 7, end, 'TMA');
      // as libipt: byte 4 and the bits above the 9-bit fast counter are reserved (set only in corrupt data)
      if (bytes[pos + 4] !== 0 || bytes[pos + 6] & 0xfe) throw new PtDecodeError('bad-packet', pos, 'TMA with reserved bits set');
      p.kind = K.Tma;
      p.a = bytes[pos + 2] | (bytes[pos + 3] << 8); // CTC[15:0]
      p.b = bytes[pos + 5] | ((bytes[pos + 6] & 1) << 8); // fast counter
      return (p.size = 7);
    case 0xf3:
      p.kind = K.Ovf;
      return (p.size = 2);
    case 0x83:
      p.kind = K.Stop;
      return (p.size = 2);
    case 0xc3:
      need(pos, 11, end, 'MNT');
      if (bytes[pos + 2] !== 0x88) throw new PtDecodeError('bad-packet', pos, 'MNT without its 0x88 byte');
      p.kind = K.Mnt;
      le(bytes, pos + 3, 8, p);
      return (p.size = 11);
    case 0x62:
    case 0xe2:
      p.kind = K.Exstop;
      p.a = b1 >> 7; // IP bit
      return (p.size = 2);
    case 0xc2:
      need(pos, 10, end, 'MWAIT');
      p.kind = K.Mwait;
      p.a = (bytes[pos + 2] | (bytes[pos + 3] << 8) | (bytes[pos + 4] << 16) | (bytes[pos + 5] << 24)) >>> 0; // hints
      p.b = (bytes[pos + 6] | (bytes[pos + 7] << 8) | (bytes[pos + 8] << 16) | (bytes[pos + 9] << 24)) >>> 0; // extensions (EXT[1:0]; the rest reserved, kept as libipt keeps it)
      return (p.size = 10);
    case 0x22:
      need(pos, 4, end, 'PWRE');
      p.kind = K.Pwre;
      p.a = bytes[pos + 3] >> 4; // resolved C-state
      p.b = bytes[pos + 3] & 0x0f; // sub-state
      p.c = (bytes[pos + 2] >> 3) & 1; // hardware-initiated
      return (p.size = 4);
    case 0xa2:
      need(pos, 7, end, 'PWRX');
      p.kind = K.Pwrx;
      p.a = bytes[pos + 2] >> 4; // last core C-state
      p.b = bytes[pos + 2] & 0x0f; // deepest
      p.c = bytes[pos + 3] & 1; // wake: interrupt
      p.d = (bytes[pos + 3] >> 2) & 1; // store to monitored address (bit 1 is the timer deadline)
      p.e = (bytes[pos + 3] >> 3) & 1; // autonomous
      return (p.size = 7);
    case 0x63:
      need(pos, 3, end, 'BBP');
      p.kind = K.Bbp;
      p.a = bytes[pos + 2] & 0x1f; // block type
      p.b = bytes[pos + 2] >> 7; // SZ: 1 = 4-byte BIP payloads
      return (p.size = 3);
    case 0x33:
    case 0xb3:
      p.kind = K.Bep;
      p.a = b1 >> 7; // IP bit
      return (p.size = 2);
  }
  if ((b1 & 0x1f) === 0x12) {
    const n = ((b1 >> 5) & 3) === 0 ? 4 : ((b1 >> 5) & 3) === 1 ? 8 : -1;
    if (n < 0) throw new PtDecodeError('bad-packet', pos, 'reserved PTW payload size');
    need(pos, 2 + n, end, 'PTW');
    p.kind = K.Ptw;
    p.a = n;
    p.b = b1 >> 7; // IP bit
    le(bytes, pos + 2, n, p);
    return (p.size = 2 + n);
  }
  throw new PtDecodeError('bad-opcode', pos, `unknown extended opcode 0x02 0x${b1.toString(16)}`);
}

/**
 * Offset of the first PSB at or after `from`, or -1. In a run of more than 16 bytes of the PSB pattern (only in
 * corrupt data) it is the last PSB of the run, as libipt syncs.
 */
export function findPsb(bytes: Uint8Array, from: number, end: number): number {
  outer: for (let i = from; i + 16 <= end; i++) {
    if (bytes[i] !== 0x02) continue;
    for (let k = 1; k < 16; k++) if (bytes[i + k] !== PSB_PATTERN[k & 1]) continue outer;
    while (i + 18 <= end && bytes[i + 16] === 0x02 && bytes[i + 17] === 0x82) i += 2;
    return i;
  }
  return -1;
}
