/** @jportal/pt: the Intel PT packet layer (libipt's lowest layer, in TypeScript). */
export { Packet, PacketKind, PACKET_NAMES } from './packet';
export { decodePacket, findPsb } from './decode';
export { PacketDecoder } from './decoder';
export { dumpPackets, formatPacket } from './format';
export { PtDecodeError } from './errors';
