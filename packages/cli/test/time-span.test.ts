/** `--time FROM,TO`: seconds since the capture started, with units and open ends; anything else is bad usage (exit 2). */
import { parseTimeSpan, spanJson } from '../src/time-span';
import { CliError, ExitCode } from '../src/exit';

describe('parseTimeSpan', () => {
  test('reads both ends, with units, and open ends', () => {
    expect(parseTimeSpan('1.5,2', 'analyze')).toEqual({ from: 1.5, to: 2 });
    expect(parseTimeSpan('500ms,2s', 'analyze')).toEqual({ from: 0.5, to: 2 });
    expect(parseTimeSpan('250us,.75', 'analyze')).toEqual({ from: 0.00025, to: 0.75 });
    expect(parseTimeSpan('3,', 'decode')).toEqual({ from: 3, to: Infinity });
    expect(parseTimeSpan(',1', 'decode')).toEqual({ from: -Infinity, to: 1 });
    expect(parseTimeSpan(undefined, 'decode')).toBeUndefined();
    expect(spanJson({ from: 3, to: Infinity })).toEqual({ fromSeconds: 3, toSeconds: null });
  });

  test('refuses what is not a span, as bad usage naming the command and the text', () => {
    for (const bad of ['1', '1,2,3', 'a,2', '-1,2', '2,1', ',', '1h,2', '1e3,2']) {
      let err: unknown;
      try {
        parseTimeSpan(bad, 'analyze');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(ExitCode.BadInput);
      expect((err as CliError).message).toContain(`analyze: --time ${bad}:`);
    }
  });
});
