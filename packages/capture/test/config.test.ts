/**
 * PMU discovery and the config/attr builder, from a fixture copy of a PT machine's sysfs: the attr must be the
 * one `perf record -e intel_pt//u` is documented to use (perf evlist -v: "type: 8, config: 0x300e601,
 * { sample_period, sample_freq }: 1, sample_type: IP|TID|TIME|CPU|IDENTIFIER, read_format: ID, disabled: 1,
 * inherit: 1, exclude_kernel: 1, exclude_hv: 1, sample_id_all: 1").
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  buildPtConfig,
  CaptureError,
  decodeField,
  describeTerms,
  discoverPtPmu,
  encodeField,
  parseAttr,
  parseFormatField,
  PERF_DEFAULT_TERMS,
  ptEventAttr,
  ReadFormat,
  Sample,
  serializeAttr,
} from '../src';

const SKYLAKE = path.join(__dirname, 'fixtures', 'sysfs-skylake');
const NO_PT = path.join(__dirname, 'fixtures', 'sysfs-no-pt');

describe('PMU discovery', () => {
  test('reads type, hexadecimal caps and format fields', () => {
    const pmu = discoverPtPmu(SKYLAKE);
    expect(pmu.type).toBe(8);
    expect(pmu.caps).toMatchObject({ mtc: 1, psb_cyc: 1, ip_filtering: 1, num_address_ranges: 2, mtc_periods: 0x249, psb_periods: 0x3f, cycle_thresholds: 0x3fff });
    expect(pmu.format.mtc_period).toEqual({ name: 'mtc_period', word: 'config', ranges: [{ lo: 14, hi: 17 }], width: 4 });
    expect(pmu.format.tsc.ranges).toEqual([{ lo: 10, hi: 10 }]);
    expect(pmu.maxNonturboRatio).toBe(24);
  });

  test('a machine without intel_pt: a no-pmu error naming the event sources found (exit 3)', () => {
    let err: unknown;
    try {
      discoverPtPmu(NO_PT);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CaptureError);
    expect((err as CaptureError).kind).toBe('no-pmu');
    expect((err as CaptureError).exitCode).toBe(3);
    expect((err as CaptureError).message).toMatch(/intel_pt does not exist \(event sources here: breakpoint, cpu, msr, software, tracepoint, uprobe\).*--pt=emulate/);
  });
});

describe('format fields', () => {
  test('single bits, ranges and split ranges encode and decode', () => {
    expect(encodeField(parseFormatField('tsc', 'config:10'), 1)).toBe(1n << 10n);
    expect(encodeField(parseFormatField('mtc_period', 'config:14-17'), 3)).toBe(3n << 14n);
    const split = parseFormatField('x', 'config1:0-3,32-35');
    expect(split.width).toBe(8);
    expect(encodeField(split, 0xa5)).toBe(0x5n | (0xan << 32n));
    expect(decodeField(split, 0x5n | (0xan << 32n))).toBe(0xa5n);
  });
  test('a value wider than its field, or an unreadable format, is a bad-config error', () => {
    expect(() => encodeField(parseFormatField('mtc_period', 'config:14-17'), 16)).toThrow(/does not fit in its 4 bit/);
    expect(() => parseFormatField('odd', 'config:banana')).toThrow(CaptureError);
  });
});

describe('config builder', () => {
  test("perf's default terms give perf's documented config 0x300e601", () => {
    const cfg = buildPtConfig(discoverPtPmu(SKYLAKE), PERF_DEFAULT_TERMS);
    expect(cfg.config).toBe(0x300e601n);
    expect(cfg.config1).toBe(0n);
    expect(cfg.config2).toBe(0n);
    expect(describeTerms(cfg.terms)).toBe('tsc,mtc,mtc_period=3,psb_period=3,pt,branch');
  });

  test("jportal's default adds noretcomp (bit 11, read from format/noretcomp)", () => {
    expect(buildPtConfig(discoverPtPmu(SKYLAKE)).config).toBe(0x300e601n | (1n << 11n));
  });

  test('bit positions come from format/, not from the code', () => {
    const shifted = fs.mkdtempSync(path.join(os.tmpdir(), 'sysfs-shifted-'));
    try {
      fs.cpSync(SKYLAKE, shifted, { recursive: true });
      const fmt = path.join(shifted, 'bus/event_source/devices/intel_pt/format');
      fs.writeFileSync(path.join(fmt, 'tsc'), 'config:40\n');
      fs.writeFileSync(path.join(fmt, 'mtc_period'), 'config:44-47\n');
      fs.writeFileSync(path.join(fmt, 'noretcomp'), 'config1:3\n');
      const cfg = buildPtConfig(discoverPtPmu(shifted));
      expect(cfg.config).toBe(0x300e601n - (1n << 10n) - (3n << 14n) + (1n << 40n) + (3n << 44n));
      expect(cfg.config1).toBe(1n << 3n);
    } finally {
      fs.rmSync(shifted, { recursive: true, force: true });
    }
  });

  test('values are checked against caps/ like perf does', () => {
    const pmu = discoverPtPmu(SKYLAKE);
    expect(() => buildPtConfig(pmu, { mtcPeriod: 15 })).toThrow('invalid mtc_period=15 for intel_pt: valid values are 0,3,6,9 (caps/mtc_periods)');
    expect(buildPtConfig(pmu, { mtcPeriod: 6 }).terms.mtc_period).toBe(6);
    expect(() => buildPtConfig(pmu, { cycThresh: 2 })).toThrow(/cyc_thresh needs cyc/);
    const cyc = buildPtConfig(pmu, { cyc: true, cycThresh: 2 });
    expect(cyc.config & (1n << 1n)).toBe(1n << 1n);
    expect((cyc.config >> 19n) & 0xfn).toBe(2n);
    // a CPU whose MTC periods stop below 3 gets the nearest lower one
    expect(buildPtConfig({ ...pmu, caps: { ...pmu.caps, mtc_periods: 0b11 } }, PERF_DEFAULT_TERMS).terms.mtc_period).toBe(1);
    // no MTC: no mtc term and no psb_period either (perf's rule)
    expect(describeTerms(buildPtConfig({ ...pmu, caps: { ...pmu.caps, mtc: 0 } }, PERF_DEFAULT_TERMS).terms)).toBe('tsc,pt,branch');
  });
});

describe('perf_event_attr', () => {
  const pmu = discoverPtPmu(SKYLAKE);
  const attr = ptEventAttr(pmu, buildPtConfig(pmu, PERF_DEFAULT_TERMS), { mode: 'full', auxWatermark: 1 << 20, wakeupWatermark: 1 << 17, enableOnExec: true, inherit: true });
  const bytes = serializeAttr(attr);

  test("field by field what `perf record -e intel_pt//u` uses, plus the sideband perf puts on its tracking event", () => {
    const back = parseAttr(bytes);
    expect(back.type).toBe(8);
    expect(back.config).toBe(0x300e601n);
    expect(back.samplePeriod).toBe(1n);
    expect(back.sampleType).toBe(Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER);
    expect(back.readFormat).toBe(ReadFormat.ID);
    expect(back.flags).toEqual({
      // perf's PT event
      disabled: true,
      inherit: true,
      exclude_kernel: true,
      exclude_hv: true,
      sample_id_all: true,
      // perf starts a workload it launched at exec
      enable_on_exec: true,
      // perf's tracking (dummy) event carries these; here the PT event does, so one ring holds all sideband
      comm: true,
      comm_exec: true,
      task: true,
      context_switch: true,
      // wake the reader by bytes, not per record
      watermark: true,
    });
    expect(back.wakeup).toBe(1 << 17);
    expect(back.auxWatermark).toBe(1 << 20);
    expect(back.preciseIp).toBe(0);
    expect(back.config1).toBe(0n);
    expect(back.config2).toBe(0n);
  });

  test('exact bytes of the layout (include/uapi/linux/perf_event.h, PERF_ATTR_SIZE_VER8)', () => {
    expect(bytes.length).toBe(136);
    expect(bytes.readUInt32LE(0)).toBe(8); // type
    expect(bytes.readUInt32LE(4)).toBe(136); // size
    expect(bytes.readBigUInt64LE(8)).toBe(0x300e601n); // config
    expect(bytes.readBigUInt64LE(16)).toBe(1n); // sample_period
    expect(bytes.readBigUInt64LE(24)).toBe(0x10087n); // sample_type
    expect(bytes.readBigUInt64LE(32)).toBe(4n); // read_format
    // flag word: disabled(0) inherit(1) exclude_kernel(5) exclude_hv(6) comm(9) enable_on_exec(12) task(13)
    // watermark(14) sample_id_all(18) comm_exec(24) context_switch(26)
    expect(bytes.readBigUInt64LE(40)).toBe([0, 1, 5, 6, 9, 12, 13, 14, 18, 24, 26].reduce((a, b) => a | (1n << BigInt(b)), 0n));
    expect(bytes.readUInt32LE(48)).toBe(1 << 17); // wakeup_watermark
    expect(bytes.readUInt32LE(104)).toBe(1 << 20); // aux_watermark
    expect(bytes.subarray(108).every((b) => b === 0)).toBe(true);
  });

  test('snapshot mode sets no AUX watermark (the area overwrites; it is read once)', () => {
    expect(ptEventAttr(pmu, buildPtConfig(pmu), { mode: 'snapshot', auxWatermark: 4096, wakeupWatermark: 4096, enableOnExec: false, inherit: true }).auxWatermark).toBe(0);
  });
});
