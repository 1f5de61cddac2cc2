import { decodePacket, findPsb } from './decode';
import { PtDecodeError } from './errors';
import { Packet, PacketKind } from './packet';

/**
 * Walks a PT byte stream packet by packet. Decoding starts at a PSB (`syncForward`); after an error the
 * caller resyncs at the next PSB, as every PT decoder does, and the bytes in between are lost.
 */
export class PacketDecoder {
  private pos = 0;
  private inBlock = false;
  private bipBytes = 8;

  constructor(
    readonly bytes: Uint8Array,
    readonly file?: string,
  ) {}

  /** Offset of the next packet. */
  get offset(): number {
    return this.pos;
  }

  /**
   * Moves to the next PSB at or after the current offset (past `skip` bytes); false when there is none. With
   * `skip` > 0 (a resync after an error) the search starts, as libipt's, up to 15 bytes back: a PSB whose first
   * bytes were misread as part of the packets before it is still found.
   */
  syncForward(skip = 0): boolean {
    let at = findPsb(this.bytes, skip > 0 ? Math.max(0, this.pos - 15) : this.pos, this.bytes.length);
    if (at >= this.pos && at < this.pos + skip) at = findPsb(this.bytes, this.pos + skip, this.bytes.length);
    this.inBlock = false;
    if (at < 0) {
      this.pos = this.bytes.length;
      return false;
    }
    this.pos = at;
    return true;
  }

  /** Decodes the next packet into `p`; false at the end of the stream. Throws PtDecodeError with the offset. */
  next(p: Packet): boolean {
    if (this.pos >= this.bytes.length) return false;
    let n: number;
    try {
      n = decodePacket(this.bytes, this.pos, this.bytes.length, p, this.inBlock, this.bipBytes);
    } catch (e) {
      if (e instanceof PtDecodeError && this.file) throw new PtDecodeError(e.code, e.offset, e.message.replace(/^byte \d+: /, ''), this.file);
      throw e;
    }
    switch (p.kind) {
      case PacketKind.Bbp:
        this.inBlock = true;
        this.bipBytes = p.b ? 4 : 8;
        break;
      case PacketKind.Bep:
      case PacketKind.Psb:
        this.inBlock = false;
        break;
    }
    this.pos += n;
    return true;
  }
}
