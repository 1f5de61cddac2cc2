/**
 * Sorts the lines two coverage reports disagree on by what their bytecode says. PT shows the interpreter's
 * dispatches (which opcodes ran), not which method or which switch case they belong to; where two pieces of code
 * have the same opcodes (a getter in each of twenty classes, the arms of a switch that differ only in a constant)
 * and only one of them ran, the trace alone cannot tell which: the attribution picks one, and when it picks the other
 * the reports disagree on both lines. A line only one tool reports is a *twin* here when its bytecode (the opcodes
 * of every range of it, in order) is the same as that of a line only the other tool reports.
 */
import * as fs from 'fs';
import { forEachInstruction, parseClass, readZip } from '@jportal/classfile';

/** Opcode sequences of fewer instructions than this are too common to call a twin (`return`, `aload_0; areturn`). */
const MIN_OPCODES = 2;

/** "package/File.java:line" -> the opcodes of the line's bytecode ranges, one string, for every class of the jars. */
export function lineShapes(jars: readonly string[]): Map<string, string> {
  // per line: its ranges' opcodes, and how many opcodes in all
  const parts = new Map<string, { ranges: string[]; opcodes: number }>();
  for (const jar of jars) {
    let entries;
    try {
      entries = readZip(new Uint8Array(fs.readFileSync(jar)));
    } catch {
      continue; // (the JaCoCo report reads the same jars: a broken one shows there)
    }
    for (const e of entries) {
      if (!e.name.endsWith('.class') || e.name.startsWith('META-INF/')) continue;
      let cf;
      try {
        cf = parseClass(e.read(), `${jar}!${e.name}`);
      } catch {
        continue;
      }
      if (!cf.sourceFile) continue;
      const slash = cf.name.lastIndexOf('/');
      const file = `${slash >= 0 ? cf.name.slice(0, slash + 1) : ''}${cf.sourceFile}`;
      for (const m of cf.methods) {
        const code = m.code;
        const ln = m.lineNumbers;
        if (!code || ln.length === 0) continue;
        // line ranges: [start of pair k, start of pair k + 1) belongs to pair k's line
        let k = 0;
        let ops: number[] = [];
        const flush = () => {
          if (ops.length === 0) return;
          const key = `${file}:${ln[k + 1]}`;
          const p = parts.get(key) ?? { ranges: [], opcodes: 0 };
          p.ranges.push(ops.join(','));
          p.opcodes += ops.length;
          parts.set(key, p);
          ops = [];
        };
        forEachInstruction(code, (bci) => {
          while (k + 2 < ln.length && bci >= ln[k + 2]) {
            flush();
            k += 2;
          }
          if (bci >= ln[k]) ops.push(code[bci]);
        });
        flush();
      }
    }
  }
  const shapes = new Map<string, string>();
  for (const [key, p] of parts) if (p.opcodes >= MIN_OPCODES) shapes.set(key, p.ranges.join('|'));
  return shapes;
}

export interface TwinLines {
  /** lines only the first report covers whose bytecode is that of a line only the second covers */
  onlyFirst: number;
  /** and the other way round */
  onlySecond: number;
  /** a few of them: "File.java:line ~ File.java:line" */
  sample: string[];
}

/** Of the lines only one report covers (`onlyFirst`, `onlySecond`), those with a twin on the other side. */
export function twinLines(onlyFirst: readonly string[], onlySecond: readonly string[], shapes: ReadonlyMap<string, string>): TwinLines {
  const bySecond = new Map<string, string>();
  for (const k of onlySecond) {
    const s = shapes.get(k);
    if (s !== undefined && !bySecond.has(s)) bySecond.set(s, k);
  }
  const firstShapes = new Set<string>();
  let first = 0;
  const sample: string[] = [];
  for (const k of onlyFirst) {
    const s = shapes.get(k);
    if (s === undefined) continue;
    firstShapes.add(s);
    const twin = bySecond.get(s);
    if (twin === undefined) continue;
    first++;
    if (sample.length < 10) sample.push(`${k} ~ ${twin}`);
  }
  let second = 0;
  for (const k of onlySecond) {
    const s = shapes.get(k);
    if (s !== undefined && firstShapes.has(s)) second++;
  }
  return { onlyFirst: first, onlySecond: second, sample };
}
