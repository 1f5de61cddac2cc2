/**
 * `--time FROM,TO`: a span of the run in seconds since the capture started, either end left out for open
 * (`2.5,` from 2.5 s to the end, `,1` the first second). Each end may carry a unit: s (the default), ms, us.
 */
import type { TimeSpan } from '@jportal/decode';
import { CliError, ExitCode } from './exit';

const UNITS: Record<string, number> = { '': 1, s: 1, ms: 1e-3, us: 1e-6 };

export function parseTimeSpan(text: string | undefined, command: string): TimeSpan | undefined {
  if (text === undefined) return undefined;
  const bad = (why: string) => new CliError(`${command}: --time ${text}: ${why} (FROM,TO in seconds since the capture started, e.g. 1.5,2 or 500ms, or ,1)`, ExitCode.BadInput);
  const ends = text.split(',');
  if (ends.length !== 2) throw bad('wants two ends separated by a comma');
  const [from, to] = ends.map((e, k) => {
    const t = e.trim();
    if (t === '') return k === 0 ? -Infinity : Infinity;
    const m = /^(\d+(?:\.\d*)?|\.\d+)(s|ms|us)?$/.exec(t);
    if (!m) throw bad(`"${t}" is not a time`);
    return Number(m[1]) * UNITS[m[2] ?? ''];
  });
  if (from === -Infinity && to === Infinity) throw bad('both ends are open: leave --time out for the whole run');
  if (from > to) throw bad('its start is after its end');
  return { from, to };
}

/** The span as the JSON summaries give it (open ends as null). */
export function spanJson(span: TimeSpan | undefined): { fromSeconds: number | null; toSeconds: number | null } | undefined {
  return span && { fromSeconds: Number.isFinite(span.from) ? span.from : null, toSeconds: Number.isFinite(span.to) ? span.to : null };
}
