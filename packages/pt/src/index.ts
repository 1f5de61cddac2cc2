/** @jportal/pt: the Intel PT packet layer (libipt's lowest layer, in TypeScript). */
export { Packet, PacketKind, PACKET_NAMES } from './packet';
export { decodePacket, findPsb } from './decode';
export { PacketDecoder } from './decoder';
export { dumpPackets, formatPacket } from './format';
export { PtDecodeError } from './errors';
export { LastIp } from './ip';
export { TimeTracker } from './time';
export type { TimingConfig } from './time';
export { QueryDecoder, Item, ITEM_NAMES } from './query';
