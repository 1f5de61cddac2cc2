/**
 * Coverage from bytecode events: which instructions of which methods ran (observed, or only recovered into a
 * gap), and which successor edges of each conditional branch were taken. Computed over every thread; exact
 * per bytecode (no probes). See packages/analyze/docs/coverage.md.
 */
import { ClassFile, forEachInstruction, lineOf, MethodInfo, successors } from '@jportal/classfile';
import { Origin, Profiled } from '../model';
import { runPass, StackWalker, WalkPass } from '../walk';
import { jacocoFilter } from './filters';

/** How an instruction or an edge is known to have run (bits). */
export const enum Hit {
  None = 0,
  /** an observed (decoded, oracle) or inferred (completion of compiled frames) event */
  Observed = 1,
  /** an event recovery copied into a gap */
  Recovered = 2,
}

/** A conditional branch (if*, ifnull, ifnonnull, tableswitch, lookupswitch) and its distinct successor edges. */
export interface BranchCoverage {
  /** index of the branch instruction in MethodCoverage.insns */
  insn: number;
  bci: number;
  /** successor bcis: if* [fall-through, target]; switches: distinct targets, default first */
  targets: Int32Array;
  /** Hit bits per target */
  hits: Uint8Array;
  /** times each edge was taken */
  counts: Float64Array;
}

export interface MethodCoverage {
  name: string;
  descriptor: string;
  access: number;
  info: MethodInfo;
  /** index into Analysis.methods; -1 when no event names the method */
  id: number;
  /** bcis of the instructions, in code order */
  insns: Int32Array;
  /** per instruction: its source line by the LineNumberTable (-1: none) */
  lines: Int32Array;
  /** per instruction: Hit bits */
  hits: Uint8Array;
  /** per instruction: times executed */
  counts: Float64Array;
  /** bci -> index into insns (-1: not an instruction start) */
  insnAt: Int32Array;
  /** per instruction: index into `branches` (-1: not a conditional branch) */
  branchOf: Int32Array;
  branches: BranchCoverage[];
  /** why JaCoCo would leave the method out of its counters (we do the same), or undefined */
  filtered?: string;
}

export interface ClassCoverage {
  /** internal name, e.g. a/b/C */
  name: string;
  /** internal package name ("" for the default package) */
  packageName: string;
  /** the SourceFile attribute */
  sourceFile?: string;
  classFile: ClassFile;
  /** every method with code, in class-file order (filtered ones included, marked) */
  methods: MethodCoverage[];
}

export interface CoverageStats {
  /** bytecode events looked at (method and bci known, class included) */
  events: number;
  /** bytecode events of methods whose class bytes are unknown (their classes cannot be counted) */
  eventsWithoutBytes: number;
  /** bytecode events at a bci that is not an instruction start of the method's code */
  badBci: number;
  /** branch edges seen whose successor is not a successor of the branch (decoding error) */
  unexpectedSuccessors: number;
  /** classes with executed methods but no class bytes */
  classesWithoutBytes: string[];
}

export interface Coverage {
  /** included classes, sorted by name */
  classes: ClassCoverage[];
  stats: CoverageStats;
}

export interface CoverageOptions {
  /** which classes to report (internal names); default: all but the JDK's (java/, javax/, jdk/, sun/, com/sun/) */
  include?: (className: string) => boolean;
}

const JDK_PREFIXES = ['java/', 'javax/', 'jdk/', 'sun/', 'com/sun/'];
export const notJdk = (className: string): boolean => !JDK_PREFIXES.some((p) => className.startsWith(p));

const isConditional = (op: number): boolean => (op >= 0x99 && op <= 0xa6) || op === 0xc6 || op === 0xc7 || op === 0xaa || op === 0xab;

function methodCoverage(cf: ClassFile, info: MethodInfo, code: Uint8Array): MethodCoverage {
  const bcis: number[] = [];
  forEachInstruction(code, (bci) => bcis.push(bci));
  const n = bcis.length;
  const insns = Int32Array.from(bcis);
  const lines = new Int32Array(n);
  const insnAt = new Int32Array(code.length).fill(-1);
  const branchOf = new Int32Array(n).fill(-1);
  const branches: BranchCoverage[] = [];
  for (let k = 0; k < n; k++) {
    const bci = insns[k];
    insnAt[bci] = k;
    lines[k] = lineOf(info, bci);
    if (isConditional(code[bci])) {
      const targets = Int32Array.from(successors(code, bci));
      branchOf[k] = branches.length;
      branches.push({ insn: k, bci, targets, hits: new Uint8Array(targets.length), counts: new Float64Array(targets.length) });
    }
  }
  return {
    name: info.name, descriptor: info.descriptor, access: info.access, info, id: -1, insns, lines,
    hits: new Uint8Array(n), counts: new Float64Array(n), insnAt, branchOf, branches, filtered: jacocoFilter(cf, info, code),
  };
}

function classCoverage(cf: ClassFile): ClassCoverage {
  const slash = cf.name.lastIndexOf('/');
  const methods: MethodCoverage[] = [];
  for (const m of cf.methods) if (m.code && m.code.length > 0) methods.push(methodCoverage(cf, m, m.code));
  return { name: cf.name, packageName: slash < 0 ? '' : cf.name.slice(0, slash), sourceFile: cf.sourceFile, classFile: cf, methods };
}

/** Resolves Analysis method ids to MethodCoverage, creating class entries on first use. */
class CoverageIndex {
  readonly classes = new Map<string, ClassCoverage>();
  /** per Analysis method id: its coverage, null when excluded or without code, undefined before first use */
  private readonly byId: (MethodCoverage | null | undefined)[];
  readonly withoutBytes = new Set<string>();

  constructor(
    private readonly a: Profiled,
    private readonly include: (c: string) => boolean,
  ) {
    this.byId = new Array(a.methods.length);
  }

  get(id: number): MethodCoverage | null {
    let mc = this.byId[id];
    if (mc !== undefined) return mc;
    mc = null;
    const m = this.a.methods[id];
    if (this.include(m.className)) {
      let cc = this.classes.get(m.className);
      if (!cc && m.classFile) {
        cc = classCoverage(m.classFile);
        this.classes.set(m.className, cc);
      }
      if (!cc) this.withoutBytes.add(m.className);
      else {
        mc = cc.methods.find((x) => x.name === m.name && x.descriptor === m.signature) ?? null;
        if (mc) mc.id = id;
      }
    }
    this.byId[id] = mc;
    return mc;
  }
}

/** Per-frame state while walking one thread: the branch instruction a frame executed last, if any. */
class PendingBranches {
  method = new Int32Array(256).fill(-1);
  branch = new Int32Array(256).fill(-1);
  at = new Float64Array(256);
  recovered = new Uint8Array(256);

  ensure(depth: number): void {
    if (depth < this.method.length) return;
    const n = Math.max(depth + 1, this.method.length * 2);
    const grow = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.method = grow(this.method, (k) => new Int32Array(k));
    this.branch = grow(this.branch, (k) => new Int32Array(k).fill(-1));
    this.at = grow(this.at, (k) => new Float64Array(k));
    this.recovered = grow(this.recovered, (k) => new Uint8Array(k));
  }
}

export function computeCoverage(a: Profiled, opts: CoverageOptions = {}): Coverage {
  return runPass(a, coveragePass(a, opts));
}

/** computeCoverage as a pass that can share its walk with others (runPasses). */
export function coveragePass(a: Profiled, opts: CoverageOptions = {}): WalkPass<Coverage> {
  const index = new CoverageIndex(a, opts.include ?? notJdk);
  const stats: CoverageStats = { events: 0, eventsWithoutBytes: 0, badBci: 0, unexpectedSuccessors: 0, classesWithoutBytes: [] };
  const thread = () => {
    const pend = new PendingBranches();
    // (indexes within the thread: window base + index)
    let lastGap = -1;
    // the last method's coverage: runs of one method are the rule, and calling index.get per event from the
    // walk's loop (compiled on stack replacement) made V8 allocate on each call (3.8 GB over luindex short)
    let lastMethod = -2;
    let lastCoverage: MethodCoverage | null = null;
    const clear = (d: number) => {
      if (d >= 0 && d < pend.branch.length) pend.branch[d] = -1;
    };
    return {
      visitor: {
        enter: (w: StackWalker) => clear(w.depth),
        exit: (w: StackWalker) => clear(w.depth),
        gap: (w: StackWalker, i: number) => {
          lastGap = w.base + i;
        },
        bytecodes: (w: StackWalker, from: number, to: number) => {
          // (a run in the top frame: each event in turn)
          const t = w.t;
          const d = w.depth;
          pend.ensure(d);
          for (let i = from; i < to; i++) {
            const m = t.method[i];
            const bci = t.bci[i];
            let mc: MethodCoverage | null = null;
            if (m >= 0 && bci >= 0) {
              if (m !== lastMethod) {
                lastMethod = m;
                lastCoverage = index.get(m);
              }
              mc = lastCoverage;
            }
            if (!mc) {
              if (m >= 0 && bci >= 0 && index.withoutBytes.has(a.methods[m].className)) stats.eventsWithoutBytes++;
              pend.branch[d] = -1;
              continue;
            }
            const k = bci < mc.insnAt.length ? mc.insnAt[bci] : -1;
            if (k < 0) {
              stats.badBci++;
              pend.branch[d] = -1;
              continue;
            }
            stats.events++;
            const rec = t.origin[i] === Origin.Recovered;
            mc.hits[k] |= rec ? Hit.Recovered : Hit.Observed;
            mc.counts[k]++;
            const pb = pend.branch[d];
            if (pb >= 0 && pend.method[d] === m && pend.at[d] > lastGap) {
              const b = mc.branches[pb];
              let j = 0;
              while (j < b.targets.length && b.targets[j] !== bci) j++;
              if (j < b.targets.length) {
                b.hits[j] |= rec || pend.recovered[d] ? Hit.Recovered : Hit.Observed;
                b.counts[j]++;
              } else stats.unexpectedSuccessors++;
            }
            const nb = mc.branchOf[k];
            pend.branch[d] = nb;
            if (nb >= 0) {
              pend.method[d] = m;
              pend.at[d] = w.base + i;
              pend.recovered[d] = rec ? 1 : 0;
            }
          }
        },
      },
    };
  };
  const finish = (): Coverage => {
    stats.classesWithoutBytes = [...index.withoutBytes].sort();
    const classes = [...index.classes.values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    return { classes, stats };
  };
  return { thread, finish };
}
