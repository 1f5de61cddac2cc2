/**
 * Splitting one PT stream at PSB boundaries, so parts decode independently (in worker threads) and join
 * exactly: each part but the first starts at a PSB; the part before it walks on to the IP its PSB+ names.
 */
import { findPsb, Item, QueryDecoder, TimingConfig } from '@jportal/pt';

export interface StreamPart {
  begin: number;
  end: number;
  /** Where execution is at `end` (the next part's PSB+ FUP); -1 when tracing was off there or at the stream end. */
  endIp: number;
}

/** Cuts `bytes` into parts of about `target` bytes, each (but the first) starting at a PSB. */
export function splitAtPsb(bytes: Uint8Array, target: number, timing: TimingConfig): StreamPart[] {
  const cuts: number[] = [0];
  let at = target;
  while (at < bytes.length) {
    const psb = findPsb(bytes, at, bytes.length);
    if (psb < 0) break;
    if (psb > cuts[cuts.length - 1]) cuts.push(psb);
    at = psb + target;
  }
  const parts: StreamPart[] = [];
  for (let i = 0; i < cuts.length; i++) {
    const end = i + 1 < cuts.length ? cuts[i + 1] : bytes.length;
    let endIp = -1;
    if (i + 1 < cuts.length) {
      // the PSB+ at `end`: its FUP (if tracing is on there) says where execution is
      const q = new QueryDecoder(bytes, timing, undefined, end, Math.min(bytes.length, end + 256), true);
      for (let n = 0; n < 16; n++) {
        const k = q.peek();
        if (k === Item.FupStatus) {
          endIp = q.ip;
          break;
        }
        if (k !== Item.End && k !== Item.BadPacket) break;
        if (k === Item.End) break;
        q.consume();
      }
    }
    parts.push({ begin: cuts[i], end, endIp });
  }
  return parts;
}
