import { PacketDecoder } from './decoder';
import { PtDecodeError } from './errors';
import { Packet, PacketKind as K, PACKET_NAMES } from './packet';

/** One line per packet in the canonical form the libipt cross-check (native/qemu-pt/build/ptdump) prints. */
export function formatPacket(p: Packet): string {
  const head = `${p.offset} ${PACKET_NAMES[p.kind]}`;
  switch (p.kind) {
    case K.Tip:
    case K.TipPge:
    case K.TipPgd:
    case K.Fup:
      return `${head} ipc=${p.ipc} ip=${p.payload}`;
    case K.Tnt8:
    case K.Tnt64:
      return `${head} bits=${p.bits} payload=${p.payload}`;
    case K.ModeExec:
      return `${head} csl=${p.a} csd=${p.b}`;
    case K.ModeTsx:
      return `${head} intx=${p.a} abrt=${p.b}`;
    case K.Pip:
      return `${head} cr3=${p.payload} nr=${p.a}`;
    case K.Vmcs:
      return `${head} base=${p.payload}`;
    case K.Cbr:
      return `${head} ratio=${p.a}`;
    case K.Tsc:
      return `${head} tsc=${p.payload}`;
    case K.Tma:
      return `${head} ctc=${p.a} fc=${p.b}`;
    case K.Mtc:
      return `${head} ctc=${p.a}`;
    case K.Cyc:
      return `${head} value=${p.payload}`;
    case K.Mnt:
      return `${head} payload=${p.payload}`;
    case K.Exstop:
      return `${head} ip=${p.a}`;
    case K.Mwait:
      return `${head} hints=${p.a} ext=${p.b}`;
    case K.Pwre:
      return `${head} state=${p.a} sub=${p.b} hw=${p.c}`;
    case K.Pwrx:
      return `${head} last=${p.a} deepest=${p.b} interrupt=${p.c} store=${p.d} autonomous=${p.e}`;
    case K.Ptw:
      return `${head} size=${p.a} ip=${p.b} payload=${p.payload}`;
    case K.Bbp:
      return `${head} type=${p.a} sz=${p.b}`;
    case K.Bip:
      return `${head} id=${p.a} payload=${p.payload}`;
    case K.Bep:
      return `${head} ip=${p.a}`;
    default:
      return head;
  }
}

/**
 * Every packet of a stream in the canonical form, syncing at the first PSB and, after an error, noting
 * "OFFSET error" and resyncing at the next PSB — what ptdump prints for libipt, for packet-for-packet checks.
 */
export function dumpPackets(bytes: Uint8Array): string[] {
  const d = new PacketDecoder(bytes);
  const p = new Packet();
  const out: string[] = [];
  if (!d.syncForward()) return ['error nosync'];
  for (;;) {
    try {
      if (!d.next(p)) break;
      out.push(formatPacket(p));
    } catch (e) {
      if (!(e instanceof PtDecodeError)) throw e;
      out.push(`${e.offset} error`);
      if (!d.syncForward(1)) break;
    }
  }
  return out;
}
