/**
 * The PT emulator's exact side output (native/qemu-pt `exact=DIR`): what really executed, per thread, for
 * checking a decoder instruction by instruction. DIR/insns.bin holds descriptors (id:u32 va:u64 len:u8
 * bytes[len]); DIR/<tid>.log holds the executed descriptor ids (u32) with marker values for "left the traced
 * range", "resumed after lost data" and "ended while losing data".
 */
import * as fs from 'fs';
import * as path from 'path';

export const LOG_LEAVE = 0xffffffff;
export const LOG_RESYNC = 0xfffffffe;
export const LOG_LOST_TAIL = 0xfffffffd;

export interface ExactLog {
  /** descriptor id -> instruction address */
  va: Float64Array;
  /** Executed instruction addresses of a thread, with -1 where the flow left the traced range, -2 at a resync. */
  thread(tid: number): Float64Array;
}

export function readExactLog(dir: string): ExactLog {
  const buf = fs.readFileSync(path.join(dir, 'insns.bin'));
  const vas: number[] = [];
  let pos = 0;
  while (pos + 13 <= buf.length) {
    const id = buf.readUInt32LE(pos);
    const va = Number(buf.readBigUInt64LE(pos + 4));
    const len = buf[pos + 12];
    vas[id] = va;
    pos += 13 + len;
  }
  const va = Float64Array.from(vas, (x) => (x === undefined ? NaN : x));
  return {
    va,
    thread(tid: number): Float64Array {
      const b = fs.readFileSync(path.join(dir, `${tid}.log`));
      const ids = new Uint32Array(b.buffer, b.byteOffset, b.length >> 2);
      const out = new Float64Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        out[i] = id === LOG_LEAVE ? -1 : id === LOG_RESYNC || id === LOG_LOST_TAIL ? -2 : va[id];
      }
      return out;
    },
  };
}
