import { MethodCfg } from './cfg';
import { CfgError } from './errors';
import { ACC_ABSTRACT, ACC_INTERFACE, ACC_NATIVE, ACC_PRIVATE, ACC_VARARGS, ClassHierarchy, type ClassNode, type MethodNode } from './hierarchy';
import { InsnKind } from './kinds';

export const CallKind = {
  Static: 0,
  Special: 1,
  Virtual: 2,
  Interface: 3,
  /** invokedynamic: targets only from observation */
  Dynamic: 4,
  /** MethodHandle.invoke*, VarHandle access modes (JVMS §2.9.3): targets only from observation */
  Polymorphic: 5,
} as const;
export type CallKind = (typeof CallKind)[keyof typeof CallKind];
export const CALL_KIND_NAMES: readonly string[] = ['static', 'special', 'virtual', 'interface', 'dynamic', 'polymorphic'];

/** An invoke instruction and where it can go. */
export interface CallSite {
  readonly caller: MethodNode;
  readonly bci: number;
  readonly opcode: number;
  readonly kind: CallKind;
  /** what the instruction names (`class.name(descriptor)`), '' for invokedynamic */
  readonly ref: string;
  /** targets from the class hierarchy: exact for static/special, every possible selection for virtual/interface */
  readonly staticTargets: readonly MethodNode[];
  /** targets the trace observed (in order of first observation) */
  readonly observed: readonly MethodNode[];
}

const POLYMORPHIC_CLASSES = new Set(['java/lang/invoke/MethodHandle', 'java/lang/invoke/VarHandle']);

/**
 * The interprocedural CFG over a ClassHierarchy: per-method CFGs (built on demand), call sites with targets from
 * the hierarchy, narrowed (and where the hierarchy misses them, extended) by observed calls. Classes added to the
 * hierarchy later re-resolve the static targets; observations stay.
 */
export class Icfg {
  private readonly cfgs = new Map<number, MethodCfg | CfgError | null>();
  private readonly sites = new Map<number, CallSite[]>();
  private readonly observations = new Map<string, MethodNode[]>();
  private readonly chaCache = new Map<string, MethodNode[]>();
  private classCount = -1;
  private callersIndex: Map<number, CallSite[]> | undefined;

  constructor(readonly hierarchy: ClassHierarchy) {}

  /** The method's CFG; undefined without code (abstract, native); throws CfgError when its code is malformed. */
  cfg(m: MethodNode): MethodCfg | undefined {
    let c = this.cfgs.get(m.id);
    if (c === undefined) {
      const code = m.info.code;
      if (!code || code.length === 0) c = null;
      else {
        try {
          c = MethodCfg.build(code, m.info.handlers, `${m.cls.cf.name}.${m.info.name}${m.info.descriptor}`);
        } catch (e) {
          if (!(e instanceof CfgError)) throw e;
          c = e;
        }
      }
      this.cfgs.set(m.id, c);
    }
    if (c instanceof CfgError) throw c;
    return c ?? undefined;
  }

  /** The method's invokes in bci order (none when it has no code or its code is malformed). */
  callSites(m: MethodNode): readonly CallSite[] {
    this.checkFresh();
    let list = this.sites.get(m.id);
    if (!list) {
      list = [];
      let cfg: MethodCfg | undefined;
      try {
        cfg = this.cfg(m);
      } catch {
        cfg = undefined;
      }
      if (cfg) {
        const { insns } = cfg;
        for (let i = 0; i < insns.count; i++) if (insns.kind[i] === InsnKind.Call) list.push(this.makeSite(m, insns.bci[i], insns.opcode[i], cfg.code));
      }
      this.sites.set(m.id, list);
    }
    return list;
  }

  callSite(m: MethodNode, bci: number): CallSite | undefined {
    const list = this.callSites(m);
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].bci === bci) return list[mid];
      if (list[mid].bci < bci) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Where the call can go: the observed targets once there are any, else the static ones. */
  targets(site: CallSite): readonly MethodNode[] {
    return site.observed.length > 0 ? site.observed : site.staticTargets;
  }

  /** Records that the invoke at `bci` of `caller` was seen to call `callee`; throws when `bci` is not an invoke. */
  observeCall(caller: MethodNode, bci: number, callee: MethodNode): CallSite {
    const site = this.callSite(caller, bci);
    if (!site) throw new RangeError(`${caller.key}: no invoke at bci ${bci}`);
    const observed = site.observed as MethodNode[];
    if (!observed.includes(callee)) {
      observed.push(callee);
      if (this.callersIndex) {
        const l = this.callersIndex.get(callee.id);
        if (!l) this.callersIndex.set(callee.id, [site]);
        else if (!l.includes(site)) l.push(site);
      }
    }
    return site;
  }

  /** true when an observed target is not among the hierarchy's (an extension rather than a narrowing) */
  extendsHierarchy(site: CallSite): boolean {
    return site.observed.some((m) => !site.staticTargets.includes(m));
  }

  /** The call sites that can reach `m` (by `targets`), over every method of the hierarchy. */
  callers(m: MethodNode): readonly CallSite[] {
    this.checkFresh();
    if (!this.callersIndex) {
      const index = new Map<number, CallSite[]>();
      for (const caller of this.hierarchy.methods) {
        for (const site of this.callSites(caller)) {
          for (const t of new Set([...site.staticTargets, ...site.observed])) {
            const l = index.get(t.id);
            if (l) l.push(site);
            else index.set(t.id, [site]);
          }
        }
      }
      this.callersIndex = index;
    }
    return (this.callersIndex.get(m.id) ?? []).filter((s) => this.targets(s).includes(m));
  }

  /** Builds every CFG and call site; returns counts and the methods whose code is malformed. */
  buildAll(): { methods: number; withCode: number; instructions: number; blocks: number; callSites: number; errors: CfgError[] } {
    const r = { methods: 0, withCode: 0, instructions: 0, blocks: 0, callSites: 0, errors: [] as CfgError[] };
    for (const m of this.hierarchy.methods) {
      r.methods++;
      try {
        const c = this.cfg(m);
        if (!c) continue;
        r.withCode++;
        r.instructions += c.insns.count;
        r.blocks += c.blockCount;
      } catch (e) {
        r.errors.push(e as CfgError);
        continue;
      }
      r.callSites += this.callSites(m).length;
    }
    return r;
  }

  private checkFresh() {
    if (this.classCount === this.hierarchy.classes.length) return;
    // classes were added: static targets change, observations are kept
    if (this.classCount >= 0) {
      for (const list of this.sites.values()) for (const s of list) if (s.observed.length) this.observations.set(`${s.caller.id}:${s.bci}`, s.observed as MethodNode[]);
    }
    this.sites.clear();
    this.chaCache.clear();
    this.callersIndex = undefined;
    this.classCount = this.hierarchy.classes.length;
  }

  private makeSite(caller: MethodNode, bci: number, opcode: number, code: Uint8Array): CallSite {
    const observed = this.observations.get(`${caller.id}:${bci}`) ?? [];
    if (opcode === 0xba) return { caller, bci, opcode, kind: CallKind.Dynamic, ref: '', staticTargets: [], observed };
    const ref = caller.cls.cf.methodRef((code[bci + 1] << 8) | code[bci + 2]);
    const kind = opcode === 0xb8 ? CallKind.Static : opcode === 0xb7 ? CallKind.Special : opcode === 0xb9 ? CallKind.Interface : CallKind.Virtual;
    if (!ref) return { caller, bci, opcode, kind, ref: '?', staticTargets: [], observed };
    const refText = `${ref.className}.${ref.name}${ref.descriptor}`;
    const named = this.hierarchy.classNamed(ref.className, caller.cls.loader);
    // (MethodHandle.invoke* are virtual, the linkTo* intrinsics static)
    if ((kind === CallKind.Virtual || kind === CallKind.Static) && POLYMORPHIC_CLASSES.has(ref.className) && isPolymorphic(named, ref.name)) {
      return { caller, bci, opcode, kind: CallKind.Polymorphic, ref: refText, staticTargets: [], observed };
    }
    let staticTargets: MethodNode[] = [];
    if (named) {
      const resolved = this.hierarchy.resolve(named, ref.name, ref.descriptor);
      if (kind === CallKind.Static || kind === CallKind.Special || (resolved && resolved.info.access & ACC_PRIVATE)) {
        staticTargets = resolved ? [resolved] : [];
      } else {
        staticTargets = this.virtualTargets(named, ref.name, ref.descriptor, resolved);
      }
    }
    return { caller, bci, opcode, kind, ref: refText, staticTargets, observed };
  }

  /** class-hierarchy analysis: the selection for every concrete recorded subtype of `named` */
  private virtualTargets(named: ClassNode, name: string, descriptor: string, resolved: MethodNode | undefined): MethodNode[] {
    const key = `${named.id}:${name}${descriptor}`;
    let out = this.chaCache.get(key);
    if (out) return out;
    const set = new Set<MethodNode>();
    for (const t of this.hierarchy.subtypes(named)) {
      if (t.cf.access & (ACC_INTERFACE | ACC_ABSTRACT)) continue;
      for (const m of this.hierarchy.select(t, name, descriptor)) set.add(m);
    }
    // no concrete subtype recorded: the resolved method, if it has a body
    if (set.size === 0 && resolved && !(resolved.info.access & ACC_ABSTRACT)) set.add(resolved);
    out = [...set];
    this.chaCache.set(key, out);
    return out;
  }
}

/** JVMS §2.9.3: declared in MethodHandle/VarHandle, native and varargs (unrecorded class: the invoke* names) */
function isPolymorphic(cls: ClassNode | undefined, name: string): boolean {
  if (!cls) return /^(invoke|invokeExact|invokeBasic|linkTo\w+)$/.test(name) || /^(get|set|compareAnd|weakCompare|getAnd)/.test(name);
  return cls.cf.methods.some((m) => m.name === name && (m.access & (ACC_NATIVE | ACC_VARARGS)) === (ACC_NATIVE | ACC_VARARGS));
}
