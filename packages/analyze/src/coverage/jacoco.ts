/**
 * JaCoCo's XML report (DTD "-//JACOCO//DTD Report 1.1//EN", report.dtd), element for element as JaCoCo's
 * XMLFormatter writes it: report > package > (class > method > counter*, counter*)*, (sourcefile > line*,
 * counter*)*, counter*. Counters are written only when they count something (missed + covered > 0), in the
 * order INSTRUCTION, BRANCH, LINE, COMPLEXITY, METHOD, CLASS. No sessioninfo (there is no JaCoCo session; the
 * DTD allows none). Recovered-only instructions and branches count as covered.
 */
import { COUNTER_TYPES, Counters, LineCounts, ReportCounters } from './counters';

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function counters(c: Counters): string {
  let s = '';
  for (const t of COUNTER_TYPES) {
    const { missed, covered } = c[t];
    if (missed + covered > 0) s += `<counter type="${t}" missed="${missed}" covered="${covered}"/>`;
  }
  return s;
}

function lines(map: Map<number, LineCounts>): string {
  let s = '';
  for (const nr of [...map.keys()].sort((x, y) => x - y)) {
    const l = map.get(nr)!;
    if (l.mi + l.ci + l.mb + l.cb === 0) continue;
    s += `<line nr="${nr}" mi="${l.mi}" ci="${l.ci}" mb="${l.mb}" cb="${l.cb}"/>`;
  }
  return s;
}

export const JACOCO_HEADER =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">';

export function formatJacocoXml(r: ReportCounters, reportName: string): string {
  let s = `${JACOCO_HEADER}<report name="${esc(reportName)}">`;
  for (const p of r.packages) {
    s += `<package name="${esc(p.name)}">`;
    for (const cc of p.classes) {
      const src = cc.cls.sourceFile ? ` sourcefilename="${esc(cc.cls.sourceFile)}"` : '';
      s += `<class name="${esc(cc.cls.name)}"${src}>`;
      for (const { mc, node } of cc.methods) {
        const line = node.firstLine >= 0 ? ` line="${node.firstLine}"` : '';
        s += `<method name="${esc(mc.name)}" desc="${esc(mc.descriptor)}"${line}>${counters(node.counters)}</method>`;
      }
      s += `${counters(cc.counters)}</class>`;
    }
    for (const f of p.sourceFiles) s += `<sourcefile name="${esc(f.name)}">${lines(f.lines)}${counters(f.counters)}</sourcefile>`;
    s += `${counters(p.counters)}</package>`;
  }
  return `${s}${counters(r.counters)}</report>`;
}
