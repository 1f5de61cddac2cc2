import { Packet } from './packet';

/**
 * Last-IP reconstruction (SDM "IP compression"): every TIP, TIP.PGE, TIP.PGD and FUP carries only the bytes of
 * its IP that differ from the last IP sent. IPs are held as numbers: exact for user-space addresses (< 2^47);
 * a sign-extended kernel address (IPBytes 3 or 6 with bit 47 set) comes out as a negative number so it never
 * matches user code.
 */
export class LastIp {
  /** Low 32 bits and bits 32..63 of the last IP; `valid` false until a full IP (IPBytes 3, 4 or 6) was seen. */
  private lo = 0;
  private hi = 0;
  valid = false;

  save(out: Float64Array, at: number): void {
    out[at] = this.lo;
    out[at + 1] = this.hi;
    out[at + 2] = this.valid ? 1 : 0;
  }

  restore(s: Float64Array, at: number): void {
    this.lo = s[at];
    this.hi = s[at + 1];
    this.valid = s[at + 2] === 1;
  }

  reset(): void {
    this.lo = 0;
    this.hi = 0;
    this.valid = false;
  }

  /**
   * Applies an IP packet's payload; returns the full IP, or -1 when the IP is suppressed (IPBytes 0) or not
   * yet known (compressed against an unknown last IP). Suppressed IPs leave the last IP unchanged.
   */
  update(p: Packet): number {
    switch (p.ipc) {
      case 0:
        return -1;
      case 1:
        this.lo = ((this.lo & 0xffff0000) | (p.lo & 0xffff)) >>> 0;
        break;
      case 2:
        this.lo = p.lo;
        break;
      case 3: {
        // 48 bits, sign-extended from bit 47
        this.lo = p.lo;
        const h = p.hi & 0xffff;
        this.hi = h & 0x8000 ? (0xffff0000 | h) >>> 0 : h;
        this.valid = true;
        break;
      }
      case 4:
        this.lo = p.lo;
        this.hi = ((this.hi & 0xffff0000) | (p.hi & 0xffff)) >>> 0;
        this.valid = true;
        break;
      case 6:
        this.lo = p.lo;
        this.hi = p.hi;
        this.valid = true;
        break;
      default:
        return -1;
    }
    return this.valid ? this.ip : -1;
  }

  /** The last IP as a number (negative for kernel-half addresses). */
  get ip(): number {
    if (this.hi >= 0x80000000) return -((0x100000000 - this.hi) * 0x100000000 - this.lo);
    return this.hi * 0x100000000 + this.lo;
  }
}
