/**
 * JaCoCo's counters (INSTRUCTION, BRANCH, LINE, COMPLEXITY, METHOD, CLASS; each "missed" / "covered") over
 * our exact per-bytecode coverage, with JaCoCo's definitions: an instruction is covered when it ran; a branch
 * instruction (if*, switch) has one branch per distinct successor edge, covered when taken; a line is covered
 * when any instruction on it is, missed when it has instructions and none ran; complexity per branch instruction
 * is (total - covered') missed / covered' = max(0, covered - 1) covered, plus 1 per method; a method is covered
 * when any of its instructions is; a class when any of its methods is. Recovered-only counts as covered; the
 * `recovered*` fields say how much of "covered" is known only from recovery.
 */
import { ClassCoverage, Coverage, Hit, MethodCoverage } from './compute';

export interface Counter {
  missed: number;
  covered: number;
}

export const COUNTER_TYPES = ['INSTRUCTION', 'BRANCH', 'LINE', 'COMPLEXITY', 'METHOD', 'CLASS'] as const;
export type CounterType = (typeof COUNTER_TYPES)[number];

export interface Counters {
  INSTRUCTION: Counter;
  BRANCH: Counter;
  LINE: Counter;
  COMPLEXITY: Counter;
  METHOD: Counter;
  CLASS: Counter;
  /** instructions / branches / lines covered only by recovered events (included in "covered") */
  recoveredInstructions: number;
  recoveredBranches: number;
  recoveredLines: number;
}

/** One source line: instructions and branches on it (JaCoCo's mi, ci, mb, cb) plus recovered-only ones. */
export interface LineCounts {
  mi: number;
  ci: number;
  mb: number;
  cb: number;
  /** covered instructions known only from recovery */
  ri: number;
  /** covered branches known only from recovery */
  rb: number;
  /** the most times any instruction on the line ran */
  hits: number;
}

export interface NodeCounters {
  counters: Counters;
  /** per line number */
  lines: Map<number, LineCounts>;
  /** lowest line with code, -1 none */
  firstLine: number;
}

const counter = (): Counter => ({ missed: 0, covered: 0 });
export const emptyCounters = (): Counters => ({
  INSTRUCTION: counter(), BRANCH: counter(), LINE: counter(), COMPLEXITY: counter(), METHOD: counter(), CLASS: counter(),
  recoveredInstructions: 0, recoveredBranches: 0, recoveredLines: 0,
});

function addCounters(to: Counters, from: Counters, withLines: boolean): void {
  for (const t of COUNTER_TYPES) {
    if (t === 'LINE' && !withLines) continue;
    to[t].missed += from[t].missed;
    to[t].covered += from[t].covered;
  }
  to.recoveredInstructions += from.recoveredInstructions;
  to.recoveredBranches += from.recoveredBranches;
  if (withLines) to.recoveredLines += from.recoveredLines;
}

const lineCounts = (): LineCounts => ({ mi: 0, ci: 0, mb: 0, cb: 0, ri: 0, rb: 0, hits: 0 });

/** Merges `from`'s lines into `to` (JaCoCo's SourceNodeImpl.increment). */
function mergeLines(to: Map<number, LineCounts>, from: Map<number, LineCounts>): void {
  for (const [nr, l] of from) {
    let t = to.get(nr);
    if (!t) to.set(nr, (t = lineCounts()));
    t.mi += l.mi;
    t.ci += l.ci;
    t.mb += l.mb;
    t.cb += l.cb;
    t.ri += l.ri;
    t.rb += l.rb;
    if (l.hits > t.hits) t.hits = l.hits;
  }
}

/** LINE counter of a set of lines: covered when any instruction ran, missed otherwise. */
function countLines(c: Counters, lines: Map<number, LineCounts>): void {
  for (const l of lines.values()) {
    if (l.mi + l.ci === 0) continue;
    if (l.ci > 0) {
      c.LINE.covered++;
      if (l.ri === l.ci) c.recoveredLines++;
    } else c.LINE.missed++;
  }
}

function firstLineOf(lines: Map<number, LineCounts>): number {
  let first = -1;
  for (const nr of lines.keys()) if (first < 0 || nr < first) first = nr;
  return first;
}

export function methodCounters(mc: MethodCoverage): NodeCounters {
  const c = emptyCounters();
  const lines = new Map<number, LineCounts>();
  const lineOfInsn = (k: number): LineCounts | undefined => {
    const nr = mc.lines[k];
    if (nr < 0) return undefined;
    let l = lines.get(nr);
    if (!l) lines.set(nr, (l = lineCounts()));
    return l;
  };
  for (let k = 0; k < mc.insns.length; k++) {
    const h = mc.hits[k];
    const l = lineOfInsn(k);
    if (h) {
      c.INSTRUCTION.covered++;
      if (h === Hit.Recovered) c.recoveredInstructions++;
      if (l) {
        l.ci++;
        if (h === Hit.Recovered) l.ri++;
        if (mc.counts[k] > l.hits) l.hits = mc.counts[k];
      }
    } else {
      c.INSTRUCTION.missed++;
      if (l) l.mi++;
    }
  }
  for (const b of mc.branches) {
    const total = b.targets.length;
    if (total < 2) continue;
    let covered = 0;
    let recovered = 0;
    for (let j = 0; j < total; j++) {
      if (b.hits[j]) covered++;
      if (b.hits[j] === Hit.Recovered) recovered++;
    }
    c.BRANCH.covered += covered;
    c.BRANCH.missed += total - covered;
    c.recoveredBranches += recovered;
    const cc = Math.max(0, covered - 1);
    c.COMPLEXITY.covered += cc;
    c.COMPLEXITY.missed += Math.max(0, total - cc - 1);
    const l = lineOfInsn(b.insn);
    if (l) {
      l.cb += covered;
      l.mb += total - covered;
      l.rb += recovered;
    }
  }
  const ran = c.INSTRUCTION.covered > 0;
  c.METHOD[ran ? 'covered' : 'missed']++;
  c.COMPLEXITY[ran ? 'covered' : 'missed']++;
  countLines(c, lines);
  return { counters: c, lines, firstLine: firstLineOf(lines) };
}

export interface ClassCounters extends NodeCounters {
  cls: ClassCoverage;
  /** per counted method (not filtered), in class-file order */
  methods: { mc: MethodCoverage; node: NodeCounters }[];
}

export function classCounters(cls: ClassCoverage): ClassCounters {
  const c = emptyCounters();
  const lines = new Map<number, LineCounts>();
  const methods: { mc: MethodCoverage; node: NodeCounters }[] = [];
  for (const mc of cls.methods) {
    if (mc.filtered) continue;
    const node = methodCounters(mc);
    methods.push({ mc, node });
    addCounters(c, node.counters, false);
    mergeLines(lines, node.lines);
  }
  countLines(c, lines);
  c.CLASS[c.METHOD.covered > 0 ? 'covered' : 'missed']++;
  return { counters: c, lines, firstLine: firstLineOf(lines), cls, methods };
}

export interface SourceFileCounters extends NodeCounters {
  /** SourceFile attribute */
  name: string;
  packageName: string;
  classes: ClassCounters[];
}

export interface PackageCounters {
  name: string;
  counters: Counters;
  classes: ClassCounters[];
  sourceFiles: SourceFileCounters[];
}

export interface ReportCounters {
  counters: Counters;
  packages: PackageCounters[];
}

const byName = <T extends { name: string }>(x: T, y: T) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);

/**
 * The report tree as JaCoCo builds it: classes with code (at least one counted instruction), grouped by
 * package; per package the source files (lines merged over the classes compiled from one file); package
 * counters = the sum of its source files' (plus classes without a SourceFile); the report's = the packages'.
 */
export function reportCounters(cov: Coverage): ReportCounters {
  const packages = new Map<string, PackageCounters>();
  const files = new Map<string, SourceFileCounters>();
  for (const cls of cov.classes) {
    const cc = classCounters(cls);
    if (cc.counters.INSTRUCTION.missed + cc.counters.INSTRUCTION.covered === 0) continue;
    let p = packages.get(cls.packageName);
    if (!p) packages.set(cls.packageName, (p = { name: cls.packageName, counters: emptyCounters(), classes: [], sourceFiles: [] }));
    p.classes.push(cc);
    if (!cls.sourceFile) {
      addCounters(p.counters, cc.counters, true);
      continue;
    }
    const key = `${cls.packageName}/${cls.sourceFile}`;
    let f = files.get(key);
    if (!f) {
      files.set(key, (f = { name: cls.sourceFile, packageName: cls.packageName, classes: [], counters: emptyCounters(), lines: new Map(), firstLine: -1 }));
      p.sourceFiles.push(f);
    }
    f.classes.push(cc);
    addCounters(f.counters, cc.counters, false);
    mergeLines(f.lines, cc.lines);
  }
  for (const f of files.values()) {
    countLines(f.counters, f.lines);
    f.firstLine = firstLineOf(f.lines);
    addCounters(packages.get(f.packageName)!.counters, f.counters, true);
  }
  const total = emptyCounters();
  const list = [...packages.values()].sort(byName);
  for (const p of list) {
    p.classes.sort((x, y) => byName(x.cls, y.cls));
    p.sourceFiles.sort(byName);
    addCounters(total, p.counters, true);
  }
  return { counters: total, packages: list };
}
