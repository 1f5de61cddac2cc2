/**
 * Where a call out of compiled code may have gone, by the invoke it stands for (FlowDecoder's CallCandidates):
 * the PcDesc at the call's return address names the (method, bci) of the invoke; the class files name what the
 * invoke can reach (MethodUniverse.invokeTargets: the resolved method and its overrides); the compiled versions of
 * those methods alive at the time give the entry points (unverified entry for inline-cached virtual calls,
 * verified entry for static and optimized calls), older compilations first.
 */
import type { CallCandidates } from './flow';
import type { MethodUniverse } from './attribute';
import type { CodeImage } from './image';

const NONE: readonly number[] = [];

export function invokeCallees(image: CodeImage, universe: MethodUniverse): CallCandidates {
  // (nmethod, return address) -> the callee method ids
  const targets = new Map<string, readonly number[]>();
  const calleesOf = (nmIndex: number, ret: number): readonly number[] => {
    const key = `${nmIndex}:${ret}`;
    let t = targets.get(key);
    if (t) return t;
    t = NONE;
    const nm = image.nmethods[nmIndex];
    const lo = image.pcDescAt(nm, ret);
    if (lo >= 0 && nm.pcs[lo] === ret) {
      const f = nm.frameStart[lo]; // (frame index: frames holds (method, bci) pairs, innermost first)
      const caller = universe.byId.get(nm.frames[f * 2]);
      const bci = nm.frames[f * 2 + 1];
      const ms = caller && bci >= 0 ? universe.invokeTargets(caller, bci) : undefined;
      if (ms) t = ms.map((m) => m.id);
    }
    targets.set(key, t);
    return t;
  };
  return (nmIndex, ret, tsc) => {
    const ids = calleesOf(nmIndex, ret);
    if (!ids.length) return NONE;
    const out: number[] = [];
    for (const id of ids) {
      const versions = image.nmethodsOf(id).filter((o) => o.osrBci < 0 && o.unloadTsc > tsc);
      versions.sort((x, y) => x.loadTsc - y.loadTsc);
      for (const o of versions) {
        if (!out.includes(o.entry)) out.push(o.entry);
        if (!out.includes(o.verifiedEntry)) out.push(o.verifiedEntry);
      }
    }
    return out;
  };
}
