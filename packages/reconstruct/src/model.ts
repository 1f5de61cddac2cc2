/**
 * `cfgOf` for a decoded trace: a method id of the trace's JvmModel -> its MethodCfg, built from the recorded
 * class bytes on first use and cached (per class: the parsed class file; per method: the CFG or its absence).
 */
import { parseClass, type ClassFile } from '@jportal/classfile';
import type { JvmModel } from '@jportal/decode';
import { MethodCfg } from '@jportal/icfg';

export interface CfgSource {
  (method: number): MethodCfg | undefined;
  /** why methods have no CFG: counts by reason (noInfo, noClass, badClass, noMethod, noCode, badCode) */
  readonly misses: Record<'noInfo' | 'noClass' | 'badClass' | 'noMethod' | 'noCode' | 'badCode', number>;
  /** CFGs built */
  readonly built: () => number;
}

/** Builds `cfgOf` over `model.methods` and `model.classes` ("loader:name" -> bytes). */
export function cfgFromModel(model: Pick<JvmModel, 'methods' | 'classes'>): CfgSource {
  const classes = new Map<string, ClassFile | null>();
  const cfgs = new Map<number, MethodCfg | null>();
  const misses = { noInfo: 0, noClass: 0, badClass: 0, noMethod: 0, noCode: 0, badCode: 0 };
  let built = 0;
  const miss = (method: number, why: keyof typeof misses): undefined => {
    misses[why]++;
    cfgs.set(method, null);
    return undefined;
  };
  const cfgOf = (method: number): MethodCfg | undefined => {
    const hit = cfgs.get(method);
    if (hit !== undefined) return hit ?? undefined;
    const info = model.methods.get(method);
    if (!info) return miss(method, 'noInfo');
    const key = `${info.loader}:${info.className}`;
    let cf = classes.get(key);
    if (cf === undefined) {
      const bytes = model.classes.get(key);
      cf = null;
      if (bytes)
        try {
          cf = parseClass(bytes, info.className);
        } catch {
          cf = null;
        }
      classes.set(key, cf);
      if (!cf) return miss(method, bytes ? 'badClass' : 'noClass');
    }
    if (!cf) return miss(method, model.classes.has(key) ? 'badClass' : 'noClass');
    const mi = cf.method(info.name, info.signature);
    if (!mi) return miss(method, 'noMethod');
    if (!mi.code) return miss(method, 'noCode');
    let c: MethodCfg;
    try {
      c = MethodCfg.build(mi.code, mi.handlers, `${info.className}.${info.name}${info.signature}`);
    } catch {
      return miss(method, 'badCode');
    }
    built++;
    cfgs.set(method, c);
    return c;
  };
  return Object.assign(cfgOf, { misses, built: () => built });
}
