/**
 * Reconstruction (@jportal/reconstruct) on loss-free emulated traces with ground truth (test/lib/analyze-fixture.ts):
 * the main thread's decoded events are checked against the recorded classes' CFGs; contradictions are counted
 * and classified, the repaired stream keeps every decoded event in order, and the sequence accuracy against the
 * oracle (measured as `jportal compare` does: packages/cli/src/thread-pairs.ts) does not drop. Both accuracies
 * are printed.
 */
import { decodeTrace, EventStream } from '@jportal/decode';
import { decodedSequence, maskUnseen, MethodSpace, oracleSequence, readOracle, readOracleThread, sequenceAccuracy } from '@jportal/oracle';
import { cfgFromModel, checkAndRepair, CONTRADICTION_NAMES, RECONSTRUCTED_SOURCE } from '@jportal/reconstruct';
import { analyzeFixture, analyzeFixtureMissing, AnalyzeExample } from '../lib/analyze-fixture';

const missing = analyzeFixtureMissing();
if (missing) console.warn(`SKIP reconstruct: ${missing}`);

/** Whether `out` is `input` with events of source RECONSTRUCTED inserted (every column of every input event equal, in order). */
function keepsEveryEvent(input: EventStream, out: EventStream): boolean {
  let j = 0;
  for (let i = 0; i < out.length; i++) {
    if (out.source[i] === RECONSTRUCTED_SOURCE) continue;
    if (
      j >= input.length ||
      out.kind[i] !== input.kind[j] || out.source[i] !== input.source[j] || out.method[i] !== input.method[j] || out.bci[i] !== input.bci[j] ||
      out.opcode[i] !== input.opcode[j] || !Object.is(out.tsc[i], input.tsc[j]) || !Object.is(out.aux[i], input.aux[j])
    )
      return false;
    j++;
  }
  return j === input.length;
}

(missing ? describe.skip : describe)('reconstruction against the ICFG', () => {
  it.each(['switches', 'exceptions'] as AnalyzeExample[])('%s: contradictions classified, nothing dropped, accuracy not lower', (name) => {
    const fx = analyzeFixture(name);
    const decoded = decodeTrace(fx.trace);
    const t = decoded.threads.find((x) => x.name === 'main')!;
    expect(t).toBeDefined();
    const cfgOf = cfgFromModel(decoded.model);
    const t0 = Date.now();
    const { events, report } = checkAndRepair(t.events, cfgOf);
    const ms = Date.now() - t0;

    // counted and classified: every checked pair is an edge or in exactly one class
    const classified = CONTRADICTION_NAMES.reduce((s, c) => s + report.byClass[c], 0);
    expect(report.pairs).toBeGreaterThan(100_000);
    expect(report.consistent + classified).toBe(report.pairs);
    expect(report.contradictions).toBe(classified - report.byClass.acrossGap);
    expect(report.bySource.interpreted + report.bySource.compiled + report.bySource.other).toBe(report.contradictions);
    let perMethod = 0;
    for (const c of report.byMethod.values()) perMethod += CONTRADICTION_NAMES.reduce((s, k) => s + c[k], 0);
    expect(perMethod).toBe(classified);
    expect(report.segments).toBe(report.gaps + 1);
    expect(report.repair.unique + report.repair.ambiguous + report.repair.tooLong + report.repair.exceptionOnly + report.repair.compiledLeft).toBe(report.byClass.path);
    for (const x of report.examples) expect(x.event).toBeLessThan(t.events.length);

    // the repaired stream keeps every decoded event
    expect(events.length).toBe(t.events.length + report.repair.inserted);
    expect(keepsEveryEvent(t.events, events)).toBe(true);

    // sequence accuracy before and after, as `jportal compare` measures it
    const oracle = readOracle(fx.oracle);
    const space = new MethodSpace();
    const withCode = new Set<number>();
    for (const m of oracle.methods) if (m.codeLength > 0) withCode.add(space.id(m.className, m.name, m.signature));
    const ot = oracle.threads.find((x) => x.name === 'main')!;
    const truth = oracleSequence(oracle, readOracleThread(oracle, ot), space);
    const measure = (ev: EventStream) => {
      const all = decodedSequence(decoded.model, { ...t, events: ev }, space, { fromTsc: decoded.model.vmStartTsc });
      const { decoded: visible } = maskUnseen(truth, all, (m) => withCode.has(m));
      return { all: sequenceAccuracy(truth, all), visible: sequenceAccuracy(truth, visible) };
    };
    const before = measure(t.events);
    const after = measure(events);
    const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
    const nameOf = (m: number) => {
      const i = decoded.model.methods.get(m);
      return i ? `${i.className}.${i.name}` : `#${m}`;
    };
    const top = [...report.byMethod]
      .sort((a, b) => b[1].path + b[1].noPath - (a[1].path + a[1].noPath))
      .slice(0, 5)
      .map(([m, c]) => `${nameOf(m)} path ${c.path} noPath ${c.noPath}`);
    console.log(
      `reconstruct ${name} main: ${t.events.length} events, ${report.segments} segments, ${report.pairs} pairs checked in ${ms} ms (${cfgOf.built()} CFGs); ` +
        `contradictions ${report.contradictions} (${CONTRADICTION_NAMES.map((c) => `${c} ${report.byClass[c]}`).join(', ')}; ` +
        `interpreted ${report.bySource.interpreted}, compiled ${report.bySource.compiled}); opcode mismatches ${report.opcodeMismatches}; ` +
        `repaired ${report.repair.unique} unique + ${report.repair.ambiguous} ambiguous, ${report.repair.tooLong} too long, ${report.repair.exceptionOnly} exception-only, ${report.repair.compiledLeft} compiled left; ` +
        `${report.repair.inserted} bytecodes inserted\n` +
        `  sequence accuracy before ${pct(before.all.accuracy)} (${before.all.matched}/${before.all.truthLength}), after ${pct(after.all.accuracy)} (${after.all.matched}/${after.all.truthLength}); ` +
        `without unseen activations: before ${pct(before.visible.accuracy)}, after ${pct(after.visible.accuracy)}\n` +
        `  most contradicted: ${top.join('; ')}`,
    );
    expect(after.all.accuracy).toBeGreaterThanOrEqual(before.all.accuracy);
  });
});
