/**
 * The TypeScript packet layer against libipt's packet decoder, packet for packet, on streams the emulator
 * writes from a real JVM (with loss, CYC and return compression, so OVF, CYC, CBR, TMA and MTC all occur).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { dumpPackets } from '@jportal/pt';
import { findJdks } from '../lib/jdks';
import { cleanup, EXAMPLES, REPO, tmpDir } from '../lib/run';

const PLUGIN = path.join(REPO, 'native', 'qemu-pt', 'build', 'libjportal-qemu-pt.so');
const PTDUMP = path.join(REPO, 'native', 'qemu-pt', 'build', 'ptdump');
const qemu = spawnSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).stdout.trim();
const jdk17 = findJdks().available.find((j) => j.feature === 17);
const missing = [!qemu && 'qemu-x86_64', !fs.existsSync(PLUGIN) && 'the emulator plugin', !fs.existsSync(PTDUMP) && 'ptdump (libipt-dev)', !jdk17 && 'JDK 17'].filter(Boolean);
if (missing.length) console.warn(`SKIP packet cross-check: missing ${missing.join(', ')}`);


(missing.length ? describe.skip : describe)('packet layer vs libipt on emulated JVM streams', () => {
  test('every stream of a JIT-heavy run, packet for packet', () => {
    const trace = tmpDir('pkt');
    try {
      const r = spawnSync(
        qemu,
        ['-plugin', `${PLUGIN},out=${trace},loss=65536:200000000,seed=5,cyc=1,retcomp=1`, jdk17!.java, '-XX:+UseSerialGC', '-Xbatch', '-cp', path.join(EXAMPLES, 'switches', 'classes'), 'Switches', '5000'],
        { encoding: 'utf8', timeout: 600_000 },
      );
      expect(r.status).toBe(0);
      const files = fs.readdirSync(path.join(trace, 'pt')).filter((f) => f.endsWith('.pt'));
      expect(files.length).toBeGreaterThan(2);
      const kinds = new Set<string>();
      let packets = 0;
      for (const f of files) {
        const file = path.join(trace, 'pt', f);
        const oracle = spawnSync(PTDUMP, [file], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout.trim().split('\n');
        const ours = dumpPackets(fs.readFileSync(file));
        expect(ours.length).toBe(oracle.length);
        for (let i = 0; i < ours.length; i++) if (ours[i] !== oracle[i]) throw new Error(`${f} packet ${i}: ours "${ours[i]}", libipt "${oracle[i]}"`);
        for (const l of ours) kinds.add(l.split(' ')[1]);
        packets += ours.length;
      }
      expect(packets).toBeGreaterThan(100_000);
      for (const k of ['psb', 'psbend', 'tsc', 'tma', 'cbr', 'mtc', 'cyc', 'tnt8', 'tnt64', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'mode.exec', 'ovf']) expect(kinds).toContain(k);
    } finally {
      cleanup(trace);
    }
  });
});
