import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { dumpPackets, Packet, PacketDecoder, PacketKind } from '../src';

const PTDUMP = path.resolve(__dirname, '..', '..', '..', 'native', 'qemu-pt', 'build', 'ptdump');
const haveOracle = fs.existsSync(PTDUMP);
if (!haveOracle) console.warn(`SKIP libipt cross-check: ${PTDUMP} not built (needs libipt-dev; run ./setup.sh)`);


describe('packet layer', () => {
  (haveOracle ? test : test.skip)('every packet type libipt can encode decodes as libipt decodes it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jppt-'));
    const file = path.join(dir, 'fixture.pt');
    let oracle: string[];
    let ours: string[];
    try {
      expect(spawnSync(PTDUMP, ['--fixture', file]).status).toBe(0);
      oracle = spawnSync(PTDUMP, [file], { encoding: 'utf8' }).stdout.trim().split('\n');
      ours = dumpPackets(fs.readFileSync(file));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(ours).toEqual(oracle);
    // the fixture really covers the packet zoo
    const kinds = new Set(ours.map((l) => l.split(' ')[1]));
    for (const k of ['psb', 'tsc', 'tma', 'cbr', 'mode.exec', 'mode.tsx', 'pip', 'vmcs', 'fup', 'psbend', 'pad', 'tip.pge', 'tnt8', 'tnt64', 'tip', 'mtc', 'cyc', 'ovf', 'tip.pgd', 'mnt', 'exstop', 'mwait', 'pwre', 'pwrx', 'ptw', 'stop'])
      expect(kinds).toContain(k);
  });

  test('BBP, BIP and BEP (block packets libipt 2.0 lacks), built from the SDM layouts', () => {
    const bytes = Uint8Array.from([
      ...[0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82],
      0x02, 0x63, 0x84, // BBP: SZ=1 (4-byte BIPs), type 4
      0x0c, 0x78, 0x56, 0x34, 0x12, // BIP id 1 (a TNT-looking byte inside a block)
      0x14, 0xef, 0xbe, 0xad, 0xde, // BIP id 2
      0x02, 0xb3, // BEP with IP
      0x0c, // outside the block the same byte is a short TNT
    ]);
    expect(dumpPackets(bytes)).toEqual([
      '0 psb',
      '16 bbp type=4 sz=1',
      '19 bip id=1 payload=305419896',
      '24 bip id=2 payload=3735928559',
      '29 bep ip=1',
      '31 tnt8 bits=2 payload=2',
    ]);
  });

  test('truncated and invalid packets are typed errors naming the offset; decoding resyncs at the next PSB', () => {
    const psb = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];
    const d = new PacketDecoder(Uint8Array.from([...psb, 0x19, 1, 2]), 'x.pt');
    const p = new Packet();
    d.syncForward();
    expect(d.next(p)).toBe(true);
    expect(p.kind).toBe(PacketKind.Psb);
    expect(() => d.next(p)).toThrow(/^x\.pt: byte 16: TSC packet needs 8 bytes, 3 left$/);
    const bad = dumpPackets(Uint8Array.from([...psb, 0xad, 0x00, 0x00, 0x00, ...psb, 0x00]));
    expect(bad).toEqual(['0 psb', '16 error', '20 psb', '36 pad']); // IPBytes 5 is reserved
  });
});
