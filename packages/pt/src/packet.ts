/**
 * Intel PT packets (Intel SDM vol. 3C, "Intel Processor Trace", packet formats). One mutable Packet is
 * filled per decode: the hot loop allocates nothing.
 */
export enum PacketKind {
  Pad, Psb, PsbEnd, Tnt8, Tnt64, Tip, TipPge, TipPgd, Fup, ModeExec, ModeTsx, Tsc, Mtc, Cyc, Cbr, Tma, Ovf, Pip,
  Vmcs, Stop, Ptw, Mnt, Exstop, Mwait, Pwre, Pwrx, Bbp, Bip, Bep,
}

export const PACKET_NAMES = [
  'pad', 'psb', 'psbend', 'tnt8', 'tnt64', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'mode.exec', 'mode.tsx', 'tsc', 'mtc',
  'cyc', 'cbr', 'tma', 'ovf', 'pip', 'vmcs', 'stop', 'ptw', 'mnt', 'exstop', 'mwait', 'pwre', 'pwrx', 'bbp', 'bip', 'bep',
] as const;

/**
 * The fields a packet kind uses; the others keep stale values. IP packets carry the raw payload and its
 * compression (`ipc`, the IPBytes field); reconstructing the full IP from the last IP is the query layer's job.
 */
export class Packet {
  kind: PacketKind = PacketKind.Pad;
  offset = 0;
  size = 0;
  /** TNT: number of bits; IP packets: IPBytes (0 suppressed, 1, 2, 3 sign-extended 48, 4, 6). */
  bits = 0;
  ipc = 0;
  /**
   * Raw payload, split so the hot loop needs no bigint: `lo` holds bits 0..31 (unsigned), `hi` bits 32..63
   * (unsigned). TNT bits (oldest highest), IP payload, TSC, CYC count, PTW/MNT payload, CR3, VMCS base.
   */
  lo = 0;
  hi = 0;
  /** The payload as one number (exact below 2^53: every IP payload, TSC below 2^53, TNT, CYC). */
  get value(): number {
    return this.hi * 0x100000000 + this.lo;
  }
  /** The payload as a bigint (exact for every width; allocates). */
  get payload(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }
  /** Small fields: MTC/TMA ctc, TMA fc, CBR ratio, mode bits, BBP/BIP ids... */
  a = 0;
  b = 0;
  c = 0;
  d = 0;
  e = 0;
}
