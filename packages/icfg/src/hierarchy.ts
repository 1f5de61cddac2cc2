import type { ClassFile, MethodInfo } from '@jportal/classfile';

export const ACC_PRIVATE = 0x0002;
export const ACC_STATIC = 0x0008;
export const ACC_NATIVE = 0x0100;
export const ACC_INTERFACE = 0x0200;
export const ACC_ABSTRACT = 0x0400;
export const ACC_VARARGS = 0x0080;

/** A class as one loader defined it. */
export interface ClassNode {
  readonly id: number;
  readonly loader: number;
  readonly cf: ClassFile;
  /** where the bytes came from (file, jar entry, trace key) */
  readonly source: string;
  readonly methods: readonly MethodNode[];
}

/** A method, identified by class name + name + descriptor + the class's loader (`key`). */
export interface MethodNode {
  readonly id: number;
  readonly cls: ClassNode;
  readonly info: MethodInfo;
  /** `loader:class.name(descriptor)`, as the trace's METHOD records name methods */
  readonly key: string;
}

export function methodKey(loader: number, className: string, name: string, descriptor: string): string {
  return `${loader}:${className}.${name}${descriptor}`;
}

/**
 * The classes of a program (possibly from several loaders) and the lookups the JVM does on them: method
 * resolution (JVMS §5.4.3.3-4) and selection (§5.4.6), and subtypes. A class named from a class of loader L is the
 * one L defined, else the boot loader's (0), else the lowest loader's: delegation is not recorded.
 */
export class ClassHierarchy {
  readonly classes: ClassNode[] = [];
  readonly methods: MethodNode[] = [];
  private readonly byName = new Map<string, ClassNode[]>();
  private readonly byMethodKey = new Map<string, MethodNode>();
  /** caches, dropped whenever a class is added */
  private superCache = new Map<number, ClassNode | null>();
  private interfacesCache = new Map<number, ClassNode[]>();
  private subtypesCache = new Map<number, ClassNode[]>();
  private directSubtypes: Map<number, ClassNode[]> | undefined;
  /** classes added again under the same loader and name (the first stays) */
  readonly duplicates: { loader: number; name: string; source: string }[] = [];

  /** Adds a class; a second class with the same loader and name is recorded in `duplicates` and ignored. */
  add(cf: ClassFile, loader: number, source = ''): ClassNode {
    const list = this.byName.get(cf.name);
    const existing = list?.find((c) => c.loader === loader);
    if (existing) {
      this.duplicates.push({ loader, name: cf.name, source });
      return existing;
    }
    const methods: MethodNode[] = [];
    const node: ClassNode = { id: this.classes.length, loader, cf, source, methods };
    for (const info of cf.methods) {
      const m: MethodNode = { id: this.methods.length, cls: node, info, key: methodKey(loader, cf.name, info.name, info.descriptor) };
      this.methods.push(m);
      methods.push(m);
      this.byMethodKey.set(m.key, m);
    }
    this.classes.push(node);
    if (list) list.push(node);
    else this.byName.set(cf.name, [node]);
    this.superCache = new Map();
    this.interfacesCache = new Map();
    this.subtypesCache = new Map();
    this.directSubtypes = undefined;
    return node;
  }

  /** the class `name` as seen from `loader` (see the class comment), undefined when not recorded */
  classNamed(name: string, loader: number): ClassNode | undefined {
    const list = this.byName.get(name);
    if (!list) return undefined;
    if (list.length === 1) return list[0];
    return list.find((c) => c.loader === loader) ?? list.find((c) => c.loader === 0) ?? list.reduce((a, b) => (b.loader < a.loader ? b : a));
  }

  /** every recorded class named `name` (one per loader) */
  classesNamed(name: string): readonly ClassNode[] {
    return this.byName.get(name) ?? [];
  }

  method(key: string): MethodNode | undefined {
    return this.byMethodKey.get(key);
  }

  /** the method `name descriptor` declared by the class itself */
  declared(c: ClassNode, name: string, descriptor: string): MethodNode | undefined {
    const info = c.cf.method(name, descriptor);
    return info && this.byMethodKey.get(methodKey(c.loader, c.cf.name, name, descriptor));
  }

  superclass(c: ClassNode): ClassNode | undefined {
    let s = this.superCache.get(c.id);
    if (s === undefined) {
      s = (c.cf.superName && this.classNamed(c.cf.superName, c.loader)) || null;
      this.superCache.set(c.id, s);
    }
    return s ?? undefined;
  }

  /** the recorded direct superinterfaces */
  interfaces(c: ClassNode): readonly ClassNode[] {
    let s = this.interfacesCache.get(c.id);
    if (!s) {
      s = [];
      for (const n of c.cf.interfaces) {
        const i = this.classNamed(n, c.loader);
        if (i) s.push(i);
      }
      this.interfacesCache.set(c.id, s);
    }
    return s;
  }

  isInterface(c: ClassNode): boolean {
    return (c.cf.access & ACC_INTERFACE) !== 0;
  }

  /** true when `sub` is `sup` or a recorded subclass or subinterface of it */
  isSubtype(sub: ClassNode, sup: ClassNode): boolean {
    const seen = new Set<number>();
    const walk = (c: ClassNode): boolean => {
      if (c === sup) return true;
      if (seen.has(c.id)) return false;
      seen.add(c.id);
      const s = this.superclass(c);
      if (s && walk(s)) return true;
      return this.interfaces(c).some(walk);
    };
    return walk(sub);
  }

  /** `c` and every recorded class or interface below it */
  subtypes(c: ClassNode): readonly ClassNode[] {
    let out = this.subtypesCache.get(c.id);
    if (out) return out;
    if (!this.directSubtypes) {
      const d = new Map<number, ClassNode[]>();
      const link = (sup: ClassNode | undefined, sub: ClassNode) => {
        if (!sup) return;
        const l = d.get(sup.id);
        if (l) l.push(sub);
        else d.set(sup.id, [sub]);
      };
      for (const x of this.classes) {
        link(this.superclass(x), x);
        for (const i of this.interfaces(x)) link(i, x);
      }
      this.directSubtypes = d;
    }
    const seen = new Set<number>([c.id]);
    out = [c];
    for (let k = 0; k < out.length; k++) {
      for (const s of this.directSubtypes.get(out[k].id) ?? []) {
        if (!seen.has(s.id)) {
          seen.add(s.id);
          out.push(s);
        }
      }
    }
    this.subtypesCache.set(c.id, out);
    return out;
  }

  /**
   * Method resolution (JVMS §5.4.3.3/§5.4.3.4): `c` and its superclasses (an interface's superclass is Object),
   * then the maximally specific superinterface methods (a non-abstract one preferred). Undefined when the
   * recorded classes do not declare it.
   */
  resolve(c: ClassNode, name: string, descriptor: string): MethodNode | undefined {
    for (let x: ClassNode | undefined = c, depth = 0; x && depth < 256; x = this.superclass(x), depth++) {
      const m = this.declared(x, name, descriptor);
      if (m) return m;
    }
    const candidates = this.maximallySpecific(c, name, descriptor, false);
    return candidates.find((m) => !(m.info.access & ACC_ABSTRACT)) ?? candidates[0];
  }

  /**
   * Method selection for invokevirtual/invokeinterface on a receiver of class `c` (JVMS §5.4.6): the first
   * non-static, non-private declaration in `c` and its superclasses, else the maximally specific default
   * methods of its superinterfaces (several when ambiguous). Abstract results are dropped.
   */
  select(c: ClassNode, name: string, descriptor: string): MethodNode[] {
    for (let x: ClassNode | undefined = c, depth = 0; x && depth < 256; x = this.superclass(x), depth++) {
      const m = this.declared(x, name, descriptor);
      if (m && !(m.info.access & (ACC_STATIC | ACC_PRIVATE))) return m.info.access & ACC_ABSTRACT ? [] : [m];
    }
    return this.maximallySpecific(c, name, descriptor, true);
  }

  /** the superinterface methods of `c` not overridden by another candidate's interface (JVMS §5.4.3.3) */
  private maximallySpecific(c: ClassNode, name: string, descriptor: string, concreteOnly: boolean): MethodNode[] {
    const found: MethodNode[] = [];
    const seen = new Set<number>();
    const visit = (x: ClassNode) => {
      for (const i of this.interfaces(x)) {
        if (seen.has(i.id)) continue;
        seen.add(i.id);
        const m = this.declared(i, name, descriptor);
        if (m && !(m.info.access & (ACC_STATIC | ACC_PRIVATE))) found.push(m);
        visit(i);
      }
      const s = this.superclass(x);
      if (s) visit(s);
    };
    visit(c);
    const specific = found.filter((m) => !found.some((o) => o !== m && o.cls !== m.cls && this.isSubtype(o.cls, m.cls)));
    return concreteOnly ? specific.filter((m) => !(m.info.access & ACC_ABSTRACT)) : specific;
  }
}
