/**
 * The addon's mmap, barriers and poll against the real kernel, with a software event (no PMU needed): the data
 * ring of a dummy event that records this process's context switches, drained by the same DataRingReader.
 */
import * as fs from 'fs';
import { addonAvailable, DataRingReader, emptyAttr, loadAddon, openPerfEvent, PerfType, PERF_COUNT_SW_DUMMY, perfTimeToTsc, Sample } from '../src';

const maybe = addonAvailable() ? describe : describe.skip;
if (!addonAvailable()) console.warn('SKIP addon ring tests: the capture addon is not built');

maybe('real data ring of a software event', () => {
  const SAMPLE = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
  function openSwitchEvent(): number {
    const attr = emptyAttr();
    attr.type = PerfType.SOFTWARE;
    attr.config = BigInt(PERF_COUNT_SW_DUMMY);
    attr.sampleType = SAMPLE;
    attr.flags = { exclude_kernel: true, exclude_hv: true, sample_id_all: true, context_switch: true, watermark: true };
    attr.wakeup = 1; // wakeup_watermark: poll() says POLLIN once a byte is there
    return openPerfEvent(loadAddon(), attr, 0, -1);
  }

  test('context-switch records of this thread come out of the ring, parsed, with TSC-convertible times', async () => {
    const addon = loadAddon();
    const fd = openSwitchEvent();
    const ring = new addon.Ring(fd, 8, 0, false);
    try {
      expect(ring.dataSize).toBe(8 * addon.pageSize());
      const before = addon.rdtsc();
      // sleeping switches this thread out and back in
      await new Promise((r) => setTimeout(r, 30));
      const revents = await addon.pollAsync([fd], 1000);
      expect(revents[0] & 1).toBe(1); // POLLIN
      const after = addon.rdtsc();
      const reader = new DataRingReader(ring, SAMPLE);
      const headBefore = ring.dataHead();
      const records = reader.drain();
      const switches = records.filter((r) => r.kind === 'switch');
      expect(switches.length).toBeGreaterThan(0);
      // the tail went back to the kernel, at least as far as the head seen before the drain; the head may have moved
      // on since (this thread can be switched out again, and the kernel appends a record)
      expect(ring.dataTail()).toBe(reader.consumed);
      expect(reader.consumed).toBeGreaterThanOrEqual(headBefore);
      expect(ring.dataHead()).toBeGreaterThanOrEqual(reader.consumed);
      const mine = switches.every((r) => r.kind === 'switch' && r.sample.pid === process.pid);
      expect(mine).toBe(true);
      expect(switches.some((r) => r.kind === 'switch' && r.out)).toBe(true);
      const conv = ring.timeConv();
      if (conv.capUserTimeZero) {
        for (const r of switches) {
          const tsc = perfTimeToTsc(r.kind === 'switch' ? r.sample.time! : 0n, conv);
          expect(tsc).toBeGreaterThanOrEqual(before - 1_000_000n);
          expect(tsc).toBeLessThanOrEqual(after + 1_000_000n);
        }
      } else console.warn('SKIP TSC conversion check: this kernel does not set cap_user_time_zero on this clock');
    } finally {
      ring.unmap();
      fs.closeSync(fd);
    }
  });

  test('an AUX area on a PMU without one is refused by the kernel, and the error names the syscall', () => {
    const addon = loadAddon();
    const fd = openSwitchEvent();
    try {
      let err: (Error & { code?: string }) | undefined;
      try {
        new addon.Ring(fd, 8, 4, true);
      } catch (e) {
        err = e as Error & { code?: string };
      }
      expect(err).toBeDefined();
      expect(err!.message).toMatch(/^mmap\(aux\)/);
      expect(['EOPNOTSUPP', 'EINVAL', 'ENOTSUP']).toContain(err!.code);
      expect(() => new addon.Ring(fd, 3, 0, true)).toThrow(/power of two/);
    } finally {
      fs.closeSync(fd);
    }
  });
});
