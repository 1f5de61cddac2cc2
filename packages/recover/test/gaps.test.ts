import { EventStream } from '@jportal/decode';
import { recoverGaps, RECOVERED_SOURCE } from '@jportal/recover';

const BYTECODE = 0;
const ENTRY = 1;
const EXIT = 2;
const GAP = 3;

/** A program's run as (method, bci) steps: `iterations` of a loop body that calls a helper, each step 10 ticks. */
function run(iterations: number, body = (i: number) => [[1, 0], [1, 2], [1, 5], ['call', 2], [2, 0], [2, 1], ['ret', 2], [1, 8], [1, 9 + (i % 1)]]) {
  const steps: (number | string)[][] = [];
  for (let i = 0; i < iterations; i++) steps.push(...body(i));
  return steps;
}

/** An opcode for each (method, bci): code's opcodes vary, so opcodes alone tell steps apart about as keys do. */
const opcodeOf = (method: number, bci: number) => 1 + ((method * 37 + bci * 11) % 200);

/** Events of the steps, with the steps in [lo, hi) replaced by one gap (time bounds of the lost steps). */
function stream(steps: (number | string)[][], holes: [number, number][] = []): EventStream {
  const s = new EventStream();
  let t = 0;
  for (let i = 0; i < steps.length; i++) {
    t += 10;
    const hole = holes.find(([lo, hi]) => i >= lo && i < hi);
    if (hole) {
      if (i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 10 * (hole[1] - hole[0]));
      continue;
    }
    const [a, b] = steps[i];
    if (a === 'call') s.push(ENTRY, 1, b as number, -1, -1, t);
    else if (a === 'ret') s.push(EXIT, 1, b as number, -1, -1, t);
    else s.push(BYTECODE, 1, a as number, b as number, opcodeOf(a as number, b as number), t);
  }
  return s;
}

const bytecodes = (s: EventStream) => {
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) if (s.kind[i] === BYTECODE) out.push(`${s.method[i]}@${s.bci[i]}`);
  return out;
};
const calls = (s: EventStream) => {
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) if (s.kind[i] === ENTRY || s.kind[i] === EXIT) out.push(`${s.kind[i] === ENTRY ? '>' : '<'}${s.method[i]}`);
  return out;
};

/** Per gap event, in order: the bytecodes recovery put after it. */
const fillsByGap = (s: EventStream) => {
  const out: string[][] = [];
  for (let i = 0; i < s.length; i++) {
    if (s.kind[i] === GAP) out.push([]);
    else if (s.source[i] === RECOVERED_SOURCE && s.kind[i] === BYTECODE && out.length) out[out.length - 1].push(`${s.method[i]}@${s.bci[i]}`);
  }
  return out;
};
/** The length of the longest common subsequence of a and b. */
const commonLength = (a: string[], b: string[]) => {
  let prev = new Int32Array(b.length + 1);
  let cur = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
};

describe('recovery of gaps from matching context', () => {
  test('a hole in a repeating loop is filled with exactly what ran there, calls included, marked recovered', () => {
    const steps = run(50);
    const whole = stream(steps);
    const holed = stream(steps, [[200, 230]]);
    const { events, stats, fills } = recoverGaps(holed, { context: 4 });
    expect(stats).toMatchObject({ gaps: 1, recovered: 1, noContext: 0, noCandidate: 0 });
    expect(bytecodes(events)).toEqual(bytecodes(whole));
    expect(calls(events)).toEqual(calls(whole));
    // what was copied is marked, lies inside the gap's time span, and the gap event is kept
    let recovered = 0;
    for (let i = 0; i < events.length; i++) {
      if (events.source[i] !== RECOVERED_SOURCE) continue;
      recovered++;
      expect(events.tsc[i]).toBeGreaterThan(2000);
      expect(events.tsc[i]).toBeLessThan(2010 + 300);
    }
    expect(recovered).toBe(30);
    expect(events.kind.subarray(0, events.length).filter((k) => k === GAP).length).toBe(1);
    // candidates near the end cannot run as long as the gap and end early: most agree all the same
    expect(fills[0].agreeing).toBeGreaterThan(fills[0].fitting / 2);
    // a gap whose call (or return) around it the decoder saw: the copy does not enter it again
    for (const [lo, hi] of [[200, 228], [201, 230], [202, 229]] as [number, number][]) {
      const r2 = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
      expect(bytecodes(r2.events)).toEqual(bytecodes(whole));
      expect(calls(r2.events)).toEqual(calls(whole));
    }
    // a decoder gap (reason 3: the packets did not fit the code) is left alone unless asked for
    for (let i = 0; i < holed.length; i++) if (holed.kind[i] === GAP) holed.bci[i] = 3;
    expect(recoverGaps(holed, { context: 4 }).stats.gaps).toBe(0);
    expect(recoverGaps(holed, { context: 4, reasons: [3] }).stats.recovered).toBe(1);
  });

  test('context the decoder named wrongly (seen nowhere else) is matched on opcodes alone, when enough of them match', () => {
    const steps = run(50);
    const whole = stream(steps);
    const holed = stream(steps, [[200, 230]]);
    // the two bytecodes before the gap got wrong bcis (a frame resumed at the wrong place after other lost data)
    const gap = holed.kind.subarray(0, holed.length).indexOf(GAP);
    let misnamed = 0;
    for (let i = gap - 1; i >= 0 && misnamed < 2; i--) if (holed.kind[i] === BYTECODE) holed.bci[i] = 900 + misnamed++;
    const r = recoverGaps(holed, { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, opcodesOnly: 1 });
    const want = bytecodes(whole);
    const got = bytecodes(r.events);
    expect(got.length).toBe(want.length);
    // what was copied is what ran (the two misnamed bytecodes stay as the decoder named them)
    const copied = got.filter((x, k) => x !== want[k]);
    expect(copied).toHaveLength(2);
    // their opcodes differ as well: nothing matches, no recovery
    for (let i = gap - 1, k = 0; i >= 0 && k < 2; i--) if (holed.kind[i] === BYTECODE) (holed.opcode[i] = 250), k++;
    expect(recoverGaps(holed, { context: 4 }).stats).toMatchObject({ recovered: 0, opcodesOnly: 0 });
  });

  test('a fill whose context matched little around it (a short motif amid code seen once) is a guess, not taken', () => {
    // 30 rounds of 6 bytecodes seen once each, then a 4-bytecode motif that recurs; the gap hides round 15's motif
    // from its third bytecode to round 16's second: other rounds match 2 bytecodes before and 2 after, no more
    const steps: (number | string)[][] = [];
    for (let r = 0; r < 30; r++) {
      for (let k = 0; k < 6; k++) steps.push([6, 1000 + r * 20 + k]);
      for (let k = 0; k < 4; k++) steps.push([5, k]);
    }
    // (and a tail seen once: an end near the trace's end would match up to it, which is no evidence either way)
    for (let k = 0; k < 300; k++) steps.push([7, k]);
    const at = 15 * 10 + 6 + 2;
    const r = recoverGaps(stream(steps, [[at, at + 10]]), { context: 2 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 0, weakContext: 1 });
    // the same gap in a loop (every round alike) matches far more and is filled
    const loop = run(50);
    expect(recoverGaps(stream(loop, [[200, 208]]), { context: 2 }).stats).toMatchObject({ recovered: 1, weakContext: 0 });
  });

  test('a long fill is copied only when both its sides match well', () => {
    // 5000 rounds of a loop (7 bytecodes each); a gap hides 24,000 steps (about 18,700 bytecodes, 187,000 ticks)
    const steps = run(5000);
    const lo = 9 * 1000 + 3;
    const hi = lo + 24_000;
    expect(recoverGaps(stream(steps, [[lo, hi]]), { context: 4 }).stats).toMatchObject({ recovered: 1, weakContext: 0 });
    // the same gap, but 3 rounds after it the loop is left for code seen once: the far side matches ~20 bytecodes
    const left = [...steps.slice(0, hi + 27), ...Array.from({ length: 400 }, (_, k) => [9, k])];
    expect(recoverGaps(stream(left, [[lo, hi]]), { context: 4 }).stats).toMatchObject({ recovered: 0, weakContext: 1 });
  });

  test('a long fill with one weak side is copied when the rest is strong: the same callers, one side matched in full, the length the time gives', () => {
    // rounds whose helper takes one of 5 arms by the counter; a gap hides 3,000 rounds (21,000 bytecodes), and 3
    // rounds after it the helper's code changes for good (a tier change): what follows the gap matches ~23
    // bytecodes of any copy's continuation, the past before it all that is compared
    const rounds = (change: number) => {
      const steps: (number | string)[][] = [];
      for (let i = 0; i < 8000; i++) {
        steps.push([1, 0], [1, 2], ['call', 2], [2, 0]);
        if (i < change) steps.push([2, 10 + 2 * (i % 5)], [2, 11 + 2 * (i % 5)]);
        else steps.push([2, 40 + (i % 5)]);
        steps.push(['ret', 2], [1, 5], [1, 8]);
      }
      return steps;
    };
    const steps = rounds(5003);
    const lo = 2000 * 9 + 4;
    const hi = 5000 * 9 + 1;
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, weakContext: 0, callersFar: 1 });
    const want = bytecodes(stream(steps));
    const got = bytecodes(r.events);
    // within 2% of what ran, and what was copied is what ran up to where its length runs out
    expect(Math.abs(got.length - want.length)).toBeLessThan(0.02 * 21_000);
    const firstDiff = got.findIndex((x, k) => x !== want[k]);
    const same = firstDiff < 0 ? Math.min(got.length, want.length) : firstDiff;
    expect(same).toBeGreaterThan((lo * 7) / 9 + 0.95 * 21_000);
    // the bytecode before the gap unnamed (the decoder returned into a frame it had lost): no calling context to
    // vouch for the copy, and a weak side keeps it out
    const unnamed = stream(steps, [[lo, hi]]);
    const g = unnamed.kind.subarray(0, unnamed.length).indexOf(GAP);
    for (let i = g - 1; i >= 0; i--) if (unnamed.kind[i] === BYTECODE) {
      unnamed.method[i] = -1;
      unnamed.bci[i] = -1;
      break;
    }
    expect(recoverGaps(unnamed, { context: 4 }).stats).toMatchObject({ recovered: 0, weakContext: 1, callersFar: 0 });
  });

  test('a long fill with one weak side is copied when its copy is the code the thread ran around the gap', () => {
    // 100 rounds of a loop (6 bytecodes, one by the round's phase of 7, 10 ticks a step), a gap hiding 3,000 rounds
    // (18 k bytecodes), one round, then 3,000 rounds that run the same bytecodes in another order, 15 ticks a step
    // (code compiled again, say), and code run once. What follows the gap matches one round of any copy's
    // continuation (a weak side), and the pace around the gap is not the copy's, so the length the gap's time gives
    // at that pace is not the copy's (the rule for a weak side with the same callers does not apply); no one side
    // holds the gap's time. The copy, composed of the first rounds, is the code the thread ran around the gap: its
    // mix of bytecodes is theirs. (examples/switches with C2 at 25% on a loaded host: three main-loop gaps of 12-16 M
    // ticks so left empty, overall 88.2%.)
    const run = (after: (p: number) => number[]) => {
      const s = new EventStream();
      let t = 0;
      const bc = (m: number, b: number, step: number) => s.push(BYTECODE, 1, m, b, opcodeOf(m, b), (t += step));
      for (let k = 0; k < 10; k++) bc(1, k, 10);
      s.push(ENTRY, 1, 5, -1, -1, (t += 10));
      for (let i = 0; i < 3101; i++) {
        if (i === 100) s.push(GAP, 3, -1, 0, -1, t, t + 60 * 3000);
        if (i >= 100 && i < 3100) {
          t += 60;
          continue;
        }
        for (const b of [0, 1, 2, 3, 100 + (i % 7), 9000]) bc(5, b, 10);
      }
      for (let i = 3101; i < 6100; i++) for (const b of after(i % 7)) bc(5, b, 15);
      s.push(EXIT, 1, 5, -1, -1, (t += 10));
      for (let k = 10; k < 400; k++) bc(1, k, 10);
      return recoverGaps(s, { context: 4 });
    };
    const r = run((p) => [1, 0, 2, 3, 100 + p, 9000]);
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, weakContext: 0, mixed: 1, oneSided: 0 });
    expect(r.fills[0].how).toBe('context');
    expect(Math.abs(r.fills[0].bytecodes - 18_000)).toBeLessThan(0.02 * 18_000);
    expect(Math.abs(r.fills[0].expected - 18_000)).toBeGreaterThan(0.1 * 18_000);
    // what ran after the gap is other code (its rounds take other bcis): the copy is not the code around the gap,
    // and stays out
    const other = run((p) => [1, 0, 2, 3, 200 + p, 9000]);
    expect(other.stats).toMatchObject({ gaps: 1, recovered: 0, weakContext: 1, mixed: 0 });
  });

  test('two continuations seen: the more frequent one is taken and the gap counted as ambiguous', () => {
    // every third iteration takes another branch at the end of the body
    const body = (i: number) => (i % 3 === 0 ? [[1, 0], [1, 2], [1, 20], [1, 21]] : [[1, 0], [1, 2], [1, 5], [1, 6]]);
    const steps = run(60, body);
    const holed = stream(steps, [[4 * 31 + 2, 4 * 31 + 4]]); // iteration 31 (31 % 3 = 1: the frequent branch)
    const { events, stats } = recoverGaps(holed, { context: 2 });
    expect(stats.recovered).toBe(1);
    expect(stats.ambiguous).toBe(1);
    expect(bytecodes(events)).toEqual(bytecodes(stream(steps)));
  });

  test('a fill longer in time than the gap allows is not used; no context at the start is no recovery', () => {
    // each iteration: a straight stretch of 20 bytecodes in method 3 between two bytecodes of method 1
    const body = () => [[1, 0], [1, 2], ...Array.from({ length: 20 }, (_, k) => [3, k]), [1, 8]];
    const steps = run(30, body);
    const holed = stream(steps, [[23 * 10 + 2, 23 * 10 + 22]]); // iteration 10's stretch
    // time passed far faster than the stretch takes: shift everything after the gap back
    let after = false;
    for (let i = 0; i < holed.length; i++) {
      if (holed.kind[i] === GAP) after = true;
      else if (after) holed.tsc[i] -= 190;
    }
    const r = recoverGaps(holed, { context: 2, timeFactor: 2 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 0, noCandidate: 1 });
    expect(bytecodes(r.events)).toEqual(bytecodes(holed));
    // with the true time it is recovered
    expect(recoverGaps(stream(steps, [[23 * 10 + 2, 23 * 10 + 22]]), { context: 2 }).stats.recovered).toBe(1);
    const start = recoverGaps(stream(steps, [[0, 5]]), { context: 4 });
    expect(start.stats).toMatchObject({ gaps: 1, recovered: 0, noContext: 1 });
  });

  test('a gap longer than any complete stretch in a loop is whole iterations, as many as its time takes', () => {
    // 40 iterations of 6 bytecodes (10 ticks each); a gap hides 100 steps: longer than the stretches between it
    // and the other gaps, which cut the loop into short segments
    const steps = run(40, () => [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]]);
    const holes: [number, number][] = [[30, 130], [150, 160], [175, 185], [200, 210], [225, 235]];
    const r = recoverGaps(stream(steps, holes), { context: 3 });
    const big = r.fills.find((f) => f.bytecodes >= 90)!;
    expect(big).toBeDefined();
    expect(r.stats.composed).toBeGreaterThan(0);
    // the recovered sequence around the big gap is exactly what ran (the loop repeats with no variation)
    const whole = bytecodes(stream(steps));
    expect(bytecodes(r.events).slice(0, 150)).toEqual(whole.slice(0, 150));
  });

  test('a fill is as long as its copy took where it ran, not the thread\'s average pace: a fast loop next to slow code', () => {
    // 1000 rounds of slow code (6 bytecodes, 100 ticks each), 200 rounds of a fast loop (10 ticks each), 1000 of
    // the slow code again; a gap hides 10 rounds in the middle of the fast loop, so the pace measured around it is
    // mostly the slow code's
    const fast = [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]];
    const slow = [[3, 0], [3, 3], [3, 4], [3, 7], [3, 9], [3, 12]];
    const steps: number[][] = [];
    for (let i = 0; i < 1000; i++) steps.push(...slow);
    for (let i = 0; i < 200; i++) steps.push(...fast);
    for (let i = 0; i < 1000; i++) steps.push(...slow);
    const hole = [6 * 1100 + 2, 6 * 1110 + 2];
    const s = new EventStream();
    const truth = new EventStream();
    let t = 0;
    for (let i = 0; i < steps.length; i++) {
      const [m, bci] = steps[i];
      t += m === 1 ? 10 : 100;
      truth.push(BYTECODE, 1, m, bci, opcodeOf(m, bci), t);
      if (i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 10 * (hole[1] - hole[0]));
      if (i < hole[0] || i >= hole[1]) s.push(BYTECODE, 1, m, bci, opcodeOf(m, bci), t);
    }
    const r = recoverGaps(s, { context: 3 });
    expect(r.fills).toHaveLength(1);
    // the pace around the gap would size it at a fraction of what ran
    expect(r.fills[0].expected).toBeLessThan(0.5 * (hole[1] - hole[0]));
    expect(r.fills[0].bytecodes).toBe(hole[1] - hole[0]);
    expect(bytecodes(r.events)).toEqual(bytecodes(truth));
  });

  test('time the thread ran no Java code in (a pause: the agent\'s VMInit work) does not count in a gap\'s time', () => {
    // a loop of 6 bytecodes, 10 ticks each; a gap hides 60 steps, and the thread was away 3000 ticks within it
    const steps = run(100, () => [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]]);
    const hole = [302, 362];
    const s = new EventStream();
    let t = 0;
    let pause: [number, number] = [0, 0];
    for (let i = 0; i < steps.length; i++) {
      t += 10;
      if (i === 330) {
        pause = [t, t + 3000];
        t += 3000;
      }
      if (i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 10 * (hole[1] - hole[0]) + 3000);
      if (i >= hole[0] && i < hole[1]) continue;
      const [m, bci] = steps[i] as number[];
      s.push(BYTECODE, 1, m, bci, opcodeOf(m, bci), t);
    }
    const away = recoverGaps(s.clone(), { context: 3, pauses: pause });
    expect(away.fills[0].bytecodes).toBe(hole[1] - hole[0]);
    expect(bytecodes(away.events)).toEqual(bytecodes(stream(steps)));
    // without it the time holds 360 steps
    const counted = recoverGaps(s, { context: 3 });
    expect(counted.fills[0].bytecodes).toBeGreaterThan(300);
  });

  test('off-CPU time anywhere (in the gap, around it, where the copy comes from) counts in no duration', () => {
    // a loop of 6 bytecodes, 10 ticks each; a gap hides 60 steps. The thread was preempted (offcpu records) for
    // 3000 ticks in the gap, 2000 once after it and 500 every 30 steps outside it (where the pace is measured and
    // the copy comes from): unaccounted, the first stretches the fill, the others shrink it
    const steps = run(200, () => [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]]);
    const hole = [902, 962];
    const s = new EventStream();
    let t = 0;
    const pauses: number[] = [];
    let inGap: number[] = [];
    const away = (ticks: number) => {
      pauses.push(t, t + ticks);
      t += ticks;
    };
    for (let i = 0; i < steps.length; i++) {
      t += 10;
      if (i === 930) {
        inGap = [t, t + 3000];
        away(3000);
      }
      if (i === 1000) away(2000);
      if (i % 30 === 7 && (i < hole[0] || i >= hole[1])) away(500);
      if (i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 10 * (hole[1] - hole[0]) + 3000);
      if (i >= hole[0] && i < hole[1]) continue;
      const [m, bci] = steps[i] as number[];
      s.push(BYTECODE, 1, m, bci, opcodeOf(m, bci), t);
    }
    const known = recoverGaps(s.clone(), { context: 3, pauses });
    expect(known.fills[0].bytecodes).toBe(hole[1] - hole[0]);
    expect(bytecodes(known.events)).toEqual(bytecodes(stream(steps)));
    // only the gap's own pause known: the pace and the copy's time still hold the others
    const gapOnly = recoverGaps(s, { context: 3, pauses: inGap });
    expect(gapOnly.fills[0].bytecodes).not.toBe(hole[1] - hole[0]);
  });

  test('a gap holding records of the VM\'s work (classes loaded, methods compiled) loses the thread\'s measured wait per record', () => {
    // a loop of 6 bytecodes, 10 ticks each. Where data is complete the thread waits 1000 ticks around each of four
    // records (two in one wait of 2000); the gap hides 60 steps and two records, so 2000 ticks of waiting
    const steps = run(100, () => [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]]);
    const hole = [302, 362];
    const waits = new Map([[100, 1], [200, 2], [500, 1], [320, 2]]); // step -> records in the wait before it
    const s = new EventStream();
    const work: number[] = [];
    const inGap: number[] = [];
    let t = 0;
    for (let i = 0; i < steps.length; i++) {
      t += 10;
      const k = waits.get(i) ?? 0;
      if (i === 320) inGap.push(t + 1, t + 2);
      for (let r = 0; r < k; r++) work.push(t + 1 + r);
      t += 1000 * k;
      if (i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 10 * (hole[1] - hole[0]) + 2000);
      if (i >= hole[0] && i < hole[1]) continue;
      const [m, bci] = steps[i] as number[];
      s.push(BYTECODE, 1, m, bci, opcodeOf(m, bci), t);
    }
    const waited = recoverGaps(s.clone(), { context: 3, vmWork: work });
    expect(waited.fills[0].bytecodes).toBe(hole[1] - hole[0]);
    expect(bytecodes(waited.events)).toEqual(bytecodes(stream(steps)));
    // without the records the wait counts as running time (copies of the loop with a wait in them take longer)
    expect(recoverGaps(s.clone(), { context: 3 }).fills[0].bytecodes).toBeGreaterThan(2 * (hole[1] - hole[0]));
    // records inside a pause are the pause's (the agent's replay at VMInit, whose time is left out as a whole)
    const paused = recoverGaps(s, { context: 3, vmWork: work, pauses: [inGap[0], inGap[1] + 1] });
    expect(paused.fills[0].bytecodes).toBeGreaterThan(2 * (hole[1] - hole[0]));
  });

  test('a gap in a method called from several places is filled from calls made from the same caller', () => {
    // helper 2 is called three times from 1 for every call from 3, and each caller goes on differently for as long;
    // then both go on in 5. The gap in 2 as called from 3 takes the return and 3's two bytecodes after it: the
    // bytecodes around it are the same as around 1's calls (more of them), only the callers differ
    const helper = (): (number | string)[][] => [['call', 2], [2, 0], [2, 1], [2, 2], [2, 3], [2, 4], [2, 5], ['ret', 2]];
    const x = (): (number | string)[][] => [[1, 0], ...helper(), [1, 3], [1, 4]];
    const y = (): (number | string)[][] => [[3, 0], ...helper(), [3, 3], [3, 4]];
    const z = (): (number | string)[][] => [[5, 0], [5, 1], [5, 2], [5, 3]];
    const steps = run(40, () => [...x(), ...z(), ...x(), ...z(), ...x(), ...z(), ...y(), ...z()]);
    const whole = stream(steps);
    // the 20th iteration's call from 3: the steps from its ret (after 2@5) to 3@4
    const at = 20 * 60 + 3 * 15 + 8;
    expect(steps[at]).toEqual(['ret', 2]);
    const holed = stream(steps, [[at, at + 3]]);
    const { events, stats } = recoverGaps(holed, { context: 4 });
    expect(stats).toMatchObject({ gaps: 1, recovered: 1, callersFar: 1 });
    expect(bytecodes(events)).toEqual(bytecodes(whole));
  });

  test('context bytecodes the decoder could not name match on their opcode', () => {
    const steps = run(50);
    const whole = stream(steps);
    const holed = stream(steps, [[200, 230]]);
    // the bytecodes right after the gap lost their method and bci (a frame entered before the loss)
    let seen = 0;
    for (let i = 0, after = false; i < holed.length && seen < 3; i++) {
      if (holed.kind[i] === GAP) after = true;
      else if (after && holed.kind[i] === BYTECODE) {
        holed.method[i] = -1;
        holed.bci[i] = -1;
        holed.opcode[i] = 20 + (holed.tsc[i] % 7); // opcodes tell the steps apart
        seen++;
      }
    }
    for (let i = 0; i < holed.length; i++) if (holed.kind[i] === BYTECODE && holed.method[i] >= 0) holed.opcode[i] = 20 + (holed.tsc[i] % 7);
    const { stats } = recoverGaps(holed, { context: 4 });
    expect(stats).toMatchObject({ gaps: 1, recovered: 1, noContext: 0 });
    expect(stats.bytecodes).toBe(bytecodes(whole).length - bytecodes(holed).length);
  });

  test('a post context seen nowhere else: the fill meets a shorter one, at the length the time gives', () => {
    // 40 iterations of 6 bytecodes; right after the gap, one bytecode the rest of the trace never shows
    const steps = run(40, () => [[1, 0], [1, 2], [1, 5], [1, 6], [1, 8], [1, 9]]);
    const holed = stream(steps, [[60, 90]]);
    for (let i = 0, after = false; i < holed.length; i++) {
      if (holed.kind[i] === GAP) after = true;
      else if (after && holed.kind[i] === BYTECODE && holed.bci[i] === 2) {
        holed.bci[i] = 3; // (method 1, bci 3) occurs only here
        break;
      }
    }
    const r = recoverGaps(holed, { context: 3 });
    expect(r.stats).toMatchObject({ recovered: 1, shortPost: 1 });
    expect(r.fills[0].bytecodes).toBe(30);
  });

  test('rounds that differ by the counter: the round whose past matches the gap\'s longest is the one taken', () => {
    // a switch on i % 5 in each round (arm bcis 10, 12, ..., 18): the 4 bytecodes of context before the gap are
    // the same in every round, the rounds before it tell which arm comes; every arm is equally frequent
    const body = (i: number) => [[1, 0], [1, 2], [1, 10 + 2 * (i % 5)], [1, 20], [1, 21], [1, 22]];
    const steps = run(100, body);
    const whole = stream(steps);
    const holed = stream(steps, [[6 * 47 + 1, 6 * 47 + 3]]); // round 47: 1@2 and its arm (1@14)
    const r = recoverGaps(holed, { context: 1 });
    expect(r.stats.recovered).toBe(1);
    expect(bytecodes(r.events)).toEqual(bytecodes(whole));
    const f = r.fills[0];
    expect(f.how).toBe('context');
    expect(f.context).toBeGreaterThan(100); // the rounds before and after matched far beyond the 1-bytecode lookup
    expect(f.score).toBeGreaterThan(0);
    expect(f.alternatives.length).toBeGreaterThan(0); // the other arms, ranked lower
    for (const alt of f.alternatives) expect(alt.context).toBeLessThan(f.context);
  });

  test('rounds with rare arms at random: the fill whose copy took the gap\'s time beats a shorter one more candidates agreed on', () => {
    // a loop of 2000 rounds, each taking one of 8 switch arms by the counter and, in about 1 round of 37 at
    // random, a rare extra bytecode (one of 3); 8 gaps at random places. Every copy of a long stretch holds the rare
    // arms at other rounds, so the walks that run as long as a gap are each a fill of their own, agreed on by one;
    // walks whose later ends met a rare arm in what follows stop at an early end, all at the same one, and agree.
    // (examples/switches -Xint at 25% loss, seed 2: 3,500 bytecodes in 1.48 M ticks, agreed on by three, had beaten
    // 8,677 in 3.68 M for a gap of 3.59 M whose hole was 8,677)
    let state = 9;
    const random = () => {
      state = (state * 1664525 + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    const steps: number[][] = [];
    for (let i = 0; i < 2000; i++) {
      steps.push([1, 0], [1, 2], [1, 10 + 2 * (i % 8)], [1, 40]);
      if (random() < 0.027) steps.push([1, 50 + 2 * Math.floor(random() * 3)]);
      steps.push([1, 60], [1, 62]);
    }
    const holes: [number, number][] = [[4, 806], [2506, 2706], [4845, 4899], [5437, 6819], [7718, 9778], [10385, 10623], [11042, 11143], [11978, 12058]];
    const r = recoverGaps(stream(steps, holes), { context: 4 });
    // what each gap was filled with against what ran there: the longest common subsequence
    const ran = holes.map(([lo, hi]) => steps.slice(lo, hi).map(([m, b]) => `${m}@${b}`));
    const filled = fillsByGap(r.events);
    let alike = 0;
    let hidden = 0;
    holes.forEach((_, k) => {
      alike += commonLength(filled[k], ran[k]);
      hidden += ran[k].length;
    });
    expect(alike / hidden).toBeGreaterThan(0.95);
    // the gap of 1382 bytecodes: more candidates agreed on 852 (ranked by agreement first: 87% of all that was
    // hidden was recovered)
    const f = r.fills.find((x) => x.expected > 1300 && x.expected < 1500)!;
    expect(Math.abs(f.bytecodes - 1382)).toBeLessThan(30);
    expect(f.alternatives.some((x) => x.agreeing > f.agreeing)).toBe(true);
  });

  test('start-up code run once into a loop: the gap is filled from the loop side, up to a frame the gap\'s stack holds', () => {
    // main (method 1) runs 100 bytecodes of start-up once, then 300 rounds of a loop calling a helper (method 2); a
    // gap hides the last 40 start-up bytecodes and the first 30 rounds. Nothing else ran after the start-up's
    // bytecodes: no copy matches both sides. What ran before the post context elsewhere (the loop's rounds) is
    // copied, back to a bytecode of main, as long as the gap's time.
    const steps: (number | string)[][] = [];
    for (let b = 0; b < 100; b++) steps.push([1, 1000 + b]);
    const round = [[1, 0], [1, 2], ['call', 2], [2, 0], [2, 1], ['ret', 2], [1, 5], [1, 8]];
    for (let i = 0; i < 300; i++) steps.push(...round);
    const lo = 60;
    const hi = 100 + 30 * round.length;
    const holed = stream(steps, [[lo, hi]]);
    const r = recoverGaps(holed, { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, noCandidate: 1, oneSided: 1 });
    const f = r.fills[0];
    expect(f.how).toBe('tail');
    expect(f.score).toBe(0.5); // one side's context
    // as long in time as the gap (every step takes 10 ticks): its 280 steps are 210 bytecodes of rounds (6 in 8
    // steps), all of them the loop's, the last ones what ran
    expect(Math.abs(f.bytecodes - ((hi - lo) * 6) / 8)).toBeLessThanOrEqual(6);
    const filled = fillsByGap(r.events)[0];
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number').map(([m, b]) => `${m}@${b}`);
    expect(filled.slice(-120)).toEqual(ran.slice(-120));
    expect(filled.every((x) => !x.startsWith('1@1'))).toBe(true); // no start-up bytecode was copied
    // the copy starts in main (a frame of the gap's stack): its calls are whole
    const balanced = (s: EventStream) => {
      const c = calls(s);
      return c.filter((x) => x.startsWith('>')).length - c.filter((x) => x.startsWith('<')).length;
    };
    expect(balanced(r.events)).toBe(0);
    // wherever the gap ends and starts, the copy starts with a bytecode of main, not with the return into it that
    // preceded it where it ran (nor a call of main's method the stack already holds)
    for (let start = lo; start < lo + round.length + 2; start++)
      for (let end = hi; end < hi + round.length; end++) {
        const rr = recoverGaps(stream(steps, [[start, end]]), { context: 4 });
        expect(rr.fills[0]?.how).toBe('tail');
        expect(balanced(rr.events)).toBe(0);
        const fill = fillsByGap(rr.events)[0];
        expect(fill[0].startsWith('1@')).toBe(true);
      }
    // no longer than maxFill: the gap's time takes 210 bytecodes of rounds
    expect(recoverGaps(holed, { context: 4, maxFill: 100 }).stats.oneSided).toBe(0);
  });

  test('a fill matched on one side only, found without the callers, gives way to a one-sided fill strong on its other side', () => {
    // start-up: main calls S (method 3, 60 bytecodes) once; then 300 rounds of main's loop (calling helper 2); then
    // method 6 calls S and the helper 40 times. A gap hides S's last 20 bytecodes at start-up, main's 20 after it
    // and 30 rounds. S's bytecodes before the gap ran again only under method 6 (other callers): copies from there
    // go on in method 6, where only the helper's 2 bytecodes follow as after the gap.
    const steps: (number | string)[][] = [];
    const S = Array.from({ length: 60 }, (_, k) => [3, k]);
    for (let k = 0; k < 20; k++) steps.push([1, 1000 + k]);
    steps.push(['call', 3], ...S, ['ret', 3]);
    for (let k = 0; k < 20; k++) steps.push([1, 1100 + k]);
    const round = [[1, 0], [1, 2], ['call', 2], [2, 0], [2, 1], ['ret', 2], [1, 5], [1, 8]];
    for (let i = 0; i < 300; i++) steps.push(...round);
    steps.push(['call', 6]);
    for (let i = 0; i < 40; i++) steps.push([6, 0], ['call', 3], ...S, ['ret', 3], ['call', 2], [2, 0], [2, 1], ['ret', 2], [6, 1]);
    steps.push(['ret', 6], [1, 1200], [1, 1201]);
    const lo = 20 + 1 + 40; // S's bci 40
    const hi = 20 + 62 + 20 + 30 * round.length + 3; // the helper's first bytecode in round 30
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, oneSided: 1 });
    expect(r.fills[0].how).toBe('tail');
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number').map(([m, b]) => `${m}@${b}`);
    const filled = fillsByGap(r.events)[0];
    expect(filled.slice(-120)).toEqual(ran.slice(-120));
    expect(filled.some((x) => x.startsWith('6@'))).toBe(false);
  });

  test('a two-sided fill matched on both sides less than one side matches in full gives way to a one-sided fill', () => {
    // a loop's first 5 rounds do first-time work (each word's hash, method 4: 20 x 3 bytecodes, computed once and
    // then cached); later rounds do not. A gap hides the last word's hash from its 50th bytecode and the next 55
    // rounds. The hash's past occurs only in the first rounds (matched ~155 back, to where the rounds differ); a copy
    // from there that meets what follows the gap is from another phase of the rounds: it matched little after it
    const steps: (number | string)[][] = [];
    for (let k = 0; k < 40; k++) steps.push([1, 1000 + k]);
    const roundAt: number[] = [];
    let lo = -1;
    for (let i = 0; i < 400; i++) {
      roundAt.push(steps.length);
      steps.push([1, 0], [1, 2], ['call', 3], [3, i % 16], [3, 40], ['ret', 3], [1, 5], ['call', 2], [2, 0]);
      if (i < 5) {
        steps.push(['call', 4], [4, 0]);
        for (let c = 0; c < (i === 1 ? 19 : 20) * 3; c++) {
          if (i === 4 && c === 50) lo = steps.length;
          steps.push([4, 3], [4, 5], [4, 7]);
        }
        steps.push([4, 9], ['ret', 4]);
      }
      steps.push([2, 10 + (i % 5)], [2, 1], ['ret', 2], [1, 8]);
    }
    const hi = roundAt[60] + 8;
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 6 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, oneSided: 1 });
    expect(r.fills[0].how).toBe('tail');
    // the rounds are copied in their phase: all but the rest of the hash (run once) is what ran
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number').map(([m, b]) => `${m}@${b}`);
    const filled = fillsByGap(r.events)[0];
    expect(commonLength(ran, filled)).toBeGreaterThan(0.9 * ran.length);
  });

  test('a loop into code run once: the gap is filled from the loop side, up to a bytecode of the frame after the gap', () => {
    // the mirror: 300 rounds, then 100 bytecodes of main run once; a gap hides the last 30 rounds and 40 of them
    const steps: (number | string)[][] = [];
    const round = [[1, 0], [1, 2], ['call', 2], [2, 0], [2, 1], ['ret', 2], [1, 5], [1, 8]];
    for (let i = 0; i < 300; i++) steps.push(...round);
    for (let b = 0; b < 100; b++) steps.push([1, 1000 + b]);
    const lo = 270 * round.length;
    const hi = 300 * round.length + 40;
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, oneSided: 1 });
    const f = r.fills[0];
    expect(f.how).toBe('head');
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number').map(([m, b]) => `${m}@${b}`);
    expect(Math.abs(f.bytecodes - ((hi - lo) * 6) / 8)).toBeLessThanOrEqual(6); // the gap's time in rounds
    const filled = fillsByGap(r.events)[0];
    expect(filled.slice(0, 120)).toEqual(ran.slice(0, 120));
    // the copy ends in main (the frame the thread is in after the gap), not in the helper, and without the calls
    // and returns that followed it where it ran; wherever the gap starts and ends
    for (let start = lo; start < lo + round.length; start++)
      for (let end = hi; end < hi + round.length; end++) {
        const rr = recoverGaps(stream(steps, [[start, end]]), { context: 4 });
        expect(rr.fills[0]?.how).toBe('head');
        const fill = fillsByGap(rr.events)[0];
        expect(fill[fill.length - 1].startsWith('1@')).toBe(true);
        const g = rr.events.kind.indexOf(GAP);
        let last = g;
        while (last + 1 < rr.events.length && rr.events.source[last + 1] === RECOVERED_SOURCE) last++;
        expect(rr.events.kind[last]).toBe(BYTECODE);
      }
  });

  test('a loop into code the decoder could not name: the gap is filled from the loop side, ending in the frame before the gap', () => {
    // 300 rounds, then 100 bytecodes run once in a frame the decoder could not place (no method: after lost data it
    // found no frame that runs them); a gap hides the last 30 rounds and 40 of them. Without a method after the gap
    // no copy can end in its frame: the copy of the rounds ends in main, the frame the gap began in, with its calls
    // whole. (examples/switches -Xint at 25%, seed 1: the main loop's last 400 rounds lost into the string
    // concatenation's bootstrap, left unfilled: overall 83.8%)
    const steps: (number | string)[][] = [];
    const round = [[1, 0], [1, 2], ['call', 2], [2, 0], [2, 1], ['ret', 2], [1, 5], [1, 8]];
    for (let i = 0; i < 300; i++) steps.push(...round);
    for (let b = 0; b < 100; b++) steps.push([-1, 1000 + b]);
    const lo = 270 * round.length;
    const hi = 300 * round.length + 40;
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, oneSided: 1 });
    expect(r.fills[0].how).toBe('head');
    // the gap's time in rounds (what ran after the rounds took some of it: time alone cannot tell)
    expect(Math.abs(r.fills[0].bytecodes - ((hi - lo) * 6) / 8)).toBeLessThanOrEqual(6);
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number' && m >= 0).map(([m, b]) => `${m}@${b}`);
    const filled = fillsByGap(r.events)[0];
    expect(filled.slice(0, ran.length)).toEqual(ran);
    expect(filled[filled.length - 1].startsWith('1@')).toBe(true);
    expect(calls(r.events).filter((x) => x === '>2').length).toBe(calls(r.events).filter((x) => x === '<2').length);
  });

  test('a long two-sided fill too weak to copy leaves the gap to a one-sided fill', () => {
    // a loop of 4,000 rounds (12 bytecodes, a call in each), 50 bytecodes run once, the loop again for 1,600 rounds,
    // then 20,000 bytecodes run once in a frame the decoder could not place, whose first two opcodes are those a
    // round starts with; a gap hides the second loop's last 1,500 rounds (18 k bytecodes). A two-sided copy meets
    // that shorter post context (2 bytecodes: a weak side), is long, and is not the mix of the code around the gap
    // (most of that is the unnamed code): not copied. What ran after the pre context in the first loop is: the head
    // fill of its rounds, as long as the gap's time. (examples/switches with C2 at 25% loss: a gap from the main
    // loop's last rounds into the string concatenation's bootstrap, whose two-sided copy matched 2 after it, had
    // been left to a shortest path; the head fill took overall 90.2% -> 91.3%, RA 88.5% -> 93.9%)
    const steps: (number | string)[][] = [];
    const round = [[1, 0], [1, 2], ['call', 2], ...Array.from({ length: 8 }, (_, k) => [2, k]), ['ret', 2], [1, 5], [1, 8]];
    for (let i = 0; i < 4000; i++) steps.push(...round);
    for (let b = 100; b < 150; b++) steps.push([1, b]);
    for (let i = 0; i < 1600; i++) steps.push(...round);
    // (opcodeOf(-1, 134) and opcodeOf(-1, 136) are opcodeOf(1, 0) and opcodeOf(1, 2))
    steps.push([-1, 134], [-1, 136]);
    for (let b = 2; b < 20_000; b++) steps.push([-1, 1000 + (b % 97)]);
    expect([opcodeOf(-1, 134), opcodeOf(-1, 136)]).toEqual([opcodeOf(1, 0), opcodeOf(1, 2)]);
    const lo = 4100 * round.length + 50;
    const hi = 5600 * round.length + 50;
    const r = recoverGaps(stream(steps, [[lo, hi]]), { context: 4 });
    expect(r.stats).toMatchObject({ gaps: 1, recovered: 1, weakContext: 1, mixed: 0, oneSided: 1 });
    expect(r.fills[0].how).toBe('head');
    const ran = steps.slice(lo, hi).filter(([m]) => typeof m === 'number').map(([m, b]) => `${m}@${b}`);
    const filled = fillsByGap(r.events)[0];
    expect(Math.abs(filled.length - ran.length)).toBeLessThan(0.02 * ran.length);
    expect(commonLength(filled.slice(0, 3000), ran.slice(0, 3000))).toBeGreaterThan(2950);
    expect(filled[filled.length - 1].startsWith('1@')).toBe(true);
  });

  test('a long fill found without the callers is copied only when its copy took about the gap\'s time', () => {
    // method 5 runs 3,600 rounds (6 bytecodes; one bci by the round) twice: first called from method 8,
    // `slow` ticks a step, then from method 7, 10 ticks a step, where a gap hides 3,000 rounds (18 k bytecodes). Its
    // context occurs under other callers only (level 3); the only copy that meets what follows the gap is the first
    // run's 3,000 rounds, matched 256 on both sides
    const run = (slow: number) => {
      const s = new EventStream();
      let t = 0;
      const bc = (m: number, b: number, step: number) => s.push(BYTECODE, 1, m, b, opcodeOf(m, b), (t += step));
      const call = (kind: number, m: number, step: number) => s.push(kind, 1, m, -1, -1, (t += step));
      const rounds = (step: number, hole?: [number, number]) => {
        for (let i = 0; i < 3600; i++) {
          if (hole && i === hole[0]) s.push(GAP, 3, -1, 0, -1, t, t + 60 * step * (hole[1] - hole[0]));
          if (hole && i >= hole[0] && i < hole[1]) {
            t += 6 * step;
            continue;
          }
          for (const b of [0, 1, 2, 3, 100 + i, 9000]) bc(5, b, step);
        }
      };
      for (let k = 0; k < 10; k++) bc(1, k, 10);
      call(ENTRY, 8, 10);
      bc(8, 0, 10);
      call(ENTRY, 5, 10);
      rounds(slow);
      call(EXIT, 5, 10);
      bc(8, 1, 10);
      call(EXIT, 8, 10);
      call(ENTRY, 7, 10);
      bc(7, 0, 10);
      call(ENTRY, 5, 10);
      rounds(10, [300, 3300]);
      call(EXIT, 5, 10);
      bc(7, 1, 10);
      call(EXIT, 7, 10);
      for (let k = 10; k < 20; k++) bc(1, k, 10);
      return recoverGaps(s, { context: 4 });
    };
    // the copy ran at the gap's pace: 18,000 bytecodes copied
    const same = run(10);
    expect(same.stats).toMatchObject({ gaps: 1, recovered: 1, weakContext: 0 });
    expect(same.fills[0].bytecodes).toBe(18_000);
    // it ran 3x slower than the gap's time allows for 18,000 bytecodes: a guess, not copied
    const slow = run(30);
    expect(slow.stats).toMatchObject({ gaps: 1, recovered: 0, weakContext: 1 });
  });

  test('a gap no context fills within one frame falls back to a shortest path of its CFG, scored 0', () => {
    // straight code run once: nothing before the gap occurs elsewhere
    const steps = Array.from({ length: 40 }, (_, k) => [7, 3 * k]);
    const holed = stream(steps, [[20, 25]]);
    const asked: number[][] = [];
    const fallback = (m: number, from: number, to: number) => {
      asked.push([m, from, to]);
      // the method's code: bcis 0, 3, 6, ... in a line; the shortest path from `from` to `to` is every bci between
      const bcis = Int32Array.from({ length: (to - from) / 3 - 1 }, (_, k) => from + 3 * (k + 1));
      return { bcis, opcodes: new Uint8Array(bcis.length).fill(0x60), paths: 1 };
    };
    expect(recoverGaps(holed, { context: 2 }).stats).toMatchObject({ recovered: 0, shortestPath: 0 });
    const r = recoverGaps(holed, { context: 2, fallback });
    expect(asked).toEqual([[7, 57, 75]]);
    expect(r.stats).toMatchObject({ recovered: 1, shortestPath: 1, bytecodes: 5 });
    expect(bytecodes(r.events)).toEqual(bytecodes(stream(steps)));
    expect(r.fills[0]).toMatchObject({ how: 'shortestPath', score: 0, bytecodes: 5 });
    for (let i = 0; i < r.events.length; i++)
      if (r.events.source[i] === RECOVERED_SOURCE) {
        expect(r.events.method[i]).toBe(7);
        expect(r.events.opcode[i]).toBe(0x60);
      }
    // another method after the gap (a call or a return was lost): no fallback
    const other = stream(steps.map(([m, b], k) => (k >= 25 ? [8, b] : [m, b])), [[20, 25]]);
    expect(recoverGaps(other, { context: 2, fallback }).stats.shortestPath).toBe(0);
  });

  test('linear in the trace: 40x the events take far less than 40x squared the time', () => {
    const small = stream(run(500), [[1000, 1040], [3000, 3020]]);
    const big = stream(run(20000), Array.from({ length: 80 }, (_, k) => [1000 + k * 2000, 1040 + k * 2000] as [number, number]));
    const t0 = process.hrtime.bigint();
    recoverGaps(small);
    const t1 = process.hrtime.bigint();
    const r = recoverGaps(big);
    const t2 = process.hrtime.bigint();
    expect(r.stats.recovered).toBe(80);
    // not a timing assertion on the machine's speed: the big run must not be quadratic (40^2 = 1600x)
    expect(Number(t2 - t1)).toBeLessThan(Number(t1 - t0) * 400);
  });
});

describe('recovery from another recording of the same program (reference)', () => {
  /** start-up: 600 steps of code run once (each (method, bci) unique), then a loop */
  const program = () => {
    const steps: (number | string)[][] = [];
    for (let b = 0; b < 600; b++) steps.push([5 + (b >> 7), b & 127]);
    steps.push(...run(40));
    return steps;
  };
  /** the same events as `stream`, with every tsc moved (another run's clock) */
  const later = (s: EventStream, dt: number) => {
    for (let i = 0; i < s.length; i++) {
      s.tsc[i] += dt;
      if (s.kind[i] === GAP) s.aux[i] += dt;
    }
    return s;
  };

  test('start-up lost in this run is filled from where the other run ran it; the reference adds nothing else and keeps its own gaps', () => {
    const steps = program();
    const whole = stream(steps);
    const holed = stream(steps, [[250, 300]]);
    // alone: start-up ran once, nothing to copy it from (at most a guess matched on opcodes alone, which is wrong)
    const alone = recoverGaps(holed.clone());
    expect(alone.stats.recovered).toBe(alone.stats.opcodesOnly);
    expect(bytecodes(alone.events)).not.toEqual(bytecodes(whole));
    // the other run lost part of its loop, not its start-up
    const reference = later(stream(steps, [[700, 760]]), 1e7);
    const { events, stats, fills } = recoverGaps(holed.clone(), { reference });
    expect(stats).toMatchObject({ gaps: 1, recovered: 1 });
    expect(fills[0].how).toBe('context');
    expect(bytecodes(events)).toEqual(bytecodes(whole));
    // only this thread's events and the fill: nothing of the reference is left behind, its gap is not filled
    expect(events.length).toBe(holed.length + stats.events);
    let gaps = 0;
    for (let i = 0; i < events.length; i++) {
      if (events.kind[i] === GAP) gaps++;
      expect(events.tsc[i]).toBeLessThan(1e7);
    }
    expect(gaps).toBe(1);
    // in place: the stream given holds the result
    const mine = holed.clone();
    const r = recoverGaps(mine, { reference, inPlace: true });
    expect(r.events).toBe(mine);
    expect(bytecodes(mine)).toEqual(bytecodes(whole));
  });

  test("this thread's own occurrences come first: a loop gap is filled from the same run", () => {
    const steps = program();
    const holed = stream(steps, [[900, 930]]);
    // a reference whose loop body differs in one bci: copies from it would show 1@7
    const other = program().map((x) => (x[0] === 1 && x[1] === 8 ? [1, 7] : x));
    const reference = later(stream(other), 1e7);
    const { events, stats } = recoverGaps(holed, { reference });
    expect(stats.recovered).toBe(1);
    expect(fillsByGap(events)[0]).not.toContain('1@7');
  });
});

describe('activations that run once per run (class initializers)', () => {
  // a prologue, then a loop body that calls 2; the first round's call of 2 initializes a class: 3 (its <clinit>),
  // which calls 4; an epilogue. The second round's call is lost.
  // (straight-line stretches of 24 bytecodes around the call: enough context on both sides to copy from)
  const stretch = (from: number) => Array.from({ length: 24 }, (_, k) => [1, from + k]);
  const body = (i: number) => [
    ...stretch(0), ['call', 2], [2, 0], [2, 1],
    ...(i === 0 ? [['call', 3], [3, 0], [3, 1], ['call', 4], [4, 0], [4, 1], ['ret', 4], [3, 2], ['ret', 3]] : []),
    [2, 2], ['ret', 2], ...stretch(24),
  ];
  const prologue = [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]];
  const epilogue = [[5, 0], [5, 1], [5, 2], [5, 3], [5, 4]];
  const steps = [...prologue, ...run(2, body), ...epilogue];
  // the second round's steps from its call of 2 to its return
  const second = prologue.length + body(0).length;
  const hole: [number, number] = [second + 24, second + 30];
  const recovered = (s: EventStream) => fillsByGap(s)[0];

  test('a copy whose source ran one leaves it and what it called out', () => {
    const whole = stream(steps);
    const plain = recoverGaps(stream(steps, [hole]), { context: 3 });
    // the only place with the gap's context is the first round: copied whole, the initializer ran twice
    expect(plain.stats.recovered).toBe(1);
    expect(recovered(plain.events)).toEqual(expect.arrayContaining(['3@0', '4@0']));
    const once = recoverGaps(stream(steps, [hole]), { context: 3, onceOnly: new Set([3]) });
    expect(once.stats.recovered).toBe(1);
    expect(recovered(once.events)).toEqual(['2@0', '2@1', '2@2', '1@24']);
    expect(bytecodes(once.events)).toEqual(bytecodes(whole));
    expect(calls(once.events)).toEqual(calls(whole));
  });

  test('from a reference recording, only where the thread ran the initializer itself', () => {
    // the thread lost its first round (the initializer's run) and nothing else shows it; the reference ran it whole
    const first = prologue.length;
    const own = stream(steps, [[first + 24, first + 39]]);
    const reference = stream(steps);
    const r = recoverGaps(own, { context: 3, onceOnly: new Set([3]), reference });
    expect(r.stats.recovered).toBe(1);
    expect(bytecodes(r.events)).toEqual(bytecodes(stream(steps)));
  });
});
