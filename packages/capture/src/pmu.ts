/**
 * Intel PT PMU discovery from sysfs (bus/event_source/devices/intel_pt): its perf type, its capabilities
 * (caps/*, hexadecimal as the kernel prints them) and its config fields (format/*). The sysfs root is a
 * parameter so tests read fixture copies of real machines.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CaptureError } from './errors';
import { FormatField, parseFormatField } from './format-field';

export const PT_PMU_NAME = 'intel_pt';

export interface PtPmu {
  /** the PMU's sysfs directory */
  dir: string;
  /** perf_event_attr.type for this PMU */
  type: number;
  /** caps/<name> -> numeric value (the kernel prints every PT cap in hexadecimal) */
  caps: Record<string, number>;
  /** format/<name> -> where the term's bits lie in config/config1/config2 */
  format: Record<string, FormatField>;
  /** max_nonturbo_ratio (the CBR of nominal frequency), when the kernel exports it */
  maxNonturboRatio?: number;
  /** tsc_art_ratio "num:den", when exported */
  tscArtRatio?: string;
}

export function eventSourceDir(sysfsRoot: string): string {
  return path.join(sysfsRoot, 'bus', 'event_source', 'devices');
}

/** The perf event sources the kernel registered (names of event_source/devices/*), or [] when none. */
export function listEventSources(sysfsRoot = '/sys'): string[] {
  try {
    return fs.readdirSync(eventSourceDir(sysfsRoot)).sort();
  } catch {
    return [];
  }
}

function readTrimmed(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Reads the intel_pt PMU; throws CaptureError('no-pmu') naming what was found instead. */
export function discoverPtPmu(sysfsRoot = '/sys'): PtPmu {
  const dir = path.join(eventSourceDir(sysfsRoot), PT_PMU_NAME);
  const typeText = readTrimmed(path.join(dir, 'type'));
  if (typeText === undefined) {
    const found = listEventSources(sysfsRoot);
    throw new CaptureError(
      'no-pmu',
      `no Intel PT: ${dir} does not exist (event sources here: ${found.join(', ') || 'none'}); this CPU or VM has no Intel PT (AMD, a VM without PT passthrough, or a kernel without CONFIG_PERF_EVENTS_INTEL_PT); use --pt=emulate`,
    );
  }
  const type = Number(typeText);
  if (!Number.isInteger(type) || type < 0) throw new CaptureError('no-pmu', `${path.join(dir, 'type')}: not a PMU type number (${typeText})`);
  const caps: Record<string, number> = {};
  for (const name of safeList(path.join(dir, 'caps'))) {
    const v = readTrimmed(path.join(dir, 'caps', name));
    if (v !== undefined && /^[0-9a-fA-F]+$/.test(v)) caps[name] = parseInt(v, 16);
  }
  const format: Record<string, FormatField> = {};
  for (const name of safeList(path.join(dir, 'format'))) {
    const v = readTrimmed(path.join(dir, 'format', name));
    if (v !== undefined) format[name] = parseFormatField(name, v);
  }
  const ratio = readTrimmed(path.join(dir, 'max_nonturbo_ratio'));
  const art = readTrimmed(path.join(dir, 'tsc_art_ratio'));
  return {
    dir,
    type,
    caps,
    format,
    maxNonturboRatio: ratio !== undefined && /^\d+$/.test(ratio) ? Number(ratio) : undefined,
    tscArtRatio: art,
  };
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** The allowed values of a "periods" cap (mtc_periods, psb_periods, cycle_thresholds): bit n set = value n valid. */
export function allowedValues(mask: number | undefined): number[] {
  const out: number[] = [];
  if (mask === undefined) return out;
  for (let bit = 0; bit < 32; bit++) if ((mask >>> bit) & 1) out.push(bit);
  return out;
}
