/**
 * lcov tracefile (geninfo's .info format): per source file TN, SF, FN/FNDA/FNF/FNH, BRDA/BRF/BRH, DA/LF/LH,
 * end_of_record. lcov has no notion of "recovered": instructions and edges known only from recovery count as
 * executed (the summary reports how many).
 */
import { ReportCounters, SourceFileCounters } from './counters';
import { locateSource } from './sources';

export interface LcovOptions {
  /** test name (TN:) */
  testName?: string;
  /** source roots: SF: is the real file when found under one, else the package-relative path */
  sources?: readonly string[];
}

const fnName = (className: string, name: string, desc: string) => `${className.replace(/\//g, '.')}.${name}${desc}`;

function fileRecord(f: SourceFileCounters, tn: string, roots: readonly string[]): string {
  const loc = locateSource(f.packageName, f.name, roots);
  const out: string[] = [`TN:${tn}`, `SF:${loc.file ?? loc.relative}`];
  let fnf = 0;
  let fnh = 0;
  const fnda: string[] = [];
  for (const cc of f.classes)
    for (const { mc, node } of cc.methods) {
      const name = fnName(cc.cls.name, mc.name, mc.descriptor);
      out.push(`FN:${Math.max(node.firstLine, 0)},${name}`);
      // executions of the method's first instruction: its invocations (and any loop back to bci 0)
      fnda.push(`FNDA:${mc.counts.length ? mc.counts[0] : 0},${name}`);
      fnf++;
      if (node.counters.METHOD.covered) fnh++;
    }
  out.push(...fnda, `FNF:${fnf}`, `FNH:${fnh}`);
  // branches: per line, a block per branch instruction (numbered within the line), a branch per successor edge
  let brf = 0;
  let brh = 0;
  const brda: { line: number; text: string[] }[] = [];
  const blocksOnLine = new Map<number, number>();
  for (const cc of f.classes)
    for (const { mc } of cc.methods)
      for (const b of mc.branches) {
        const line = mc.lines[b.insn];
        if (line < 0 || b.targets.length < 2) continue;
        const block = blocksOnLine.get(line) ?? 0;
        blocksOnLine.set(line, block + 1);
        const ran = mc.hits[b.insn] !== 0;
        const text: string[] = [];
        for (let j = 0; j < b.targets.length; j++) {
          text.push(`BRDA:${line},${block},${j},${ran ? b.counts[j] : '-'}`);
          brf++;
          if (b.hits[j]) brh++;
        }
        brda.push({ line, text });
      }
  brda.sort((x, y) => x.line - y.line);
  for (const b of brda) out.push(...b.text);
  out.push(`BRF:${brf}`, `BRH:${brh}`);
  let lf = 0;
  let lh = 0;
  for (const nr of [...f.lines.keys()].sort((x, y) => x - y)) {
    const l = f.lines.get(nr)!;
    if (l.mi + l.ci === 0) continue;
    out.push(`DA:${nr},${l.ci > 0 ? l.hits : 0}`);
    lf++;
    if (l.ci > 0) lh++;
  }
  out.push(`LF:${lf}`, `LH:${lh}`, 'end_of_record');
  return out.join('\n') + '\n';
}

/** The tracefile text for every source file of the report (classes without a SourceFile are left out). */
export function formatLcov(r: ReportCounters, opts: LcovOptions = {}): string {
  const tn = (opts.testName ?? 'jportal').replace(/[^\w]/g, '_');
  let s = '';
  for (const p of r.packages) for (const f of p.sourceFiles) s += fileRecord(f, tn, opts.sources ?? []);
  return s;
}
