/**
 * Another recording of the same program as a source of fills (@jportal/recover's `reference`). Code that runs once
 * per run (the launcher's class-path work, each bootstrap method's first call, class initializers) has nothing to
 * be copied from in its own thread when PT loses it; a second recording loses other stretches, and its thread of
 * the same name ran the same start-up. Its events are put in this trace's method ids, by class (hidden classes'
 * run-specific address suffix left out), method name and descriptor; a method only the reference names gets an id
 * of its own in this trace's model.
 */
import { EventStream, type DecodedThread, type DecodedTrace, type JvmModel } from '@jportal/decode';
import { runIndependentClassName } from '@jportal/oracle';

const keyOf = (m: { className: string; name: string; signature: string }): string => `${runIndependentClassName(m.className)}.${m.name}${m.signature}`;

/** The reference's thread that pairs with this trace's thread: the same name, the same place among namesakes. */
export function referenceThreadOf(reference: DecodedTrace, model: JvmModel, thread: { name: string; tid?: number }): DecodedThread | undefined {
  const namesakes = reference.threads.filter((t) => t.name === thread.name);
  if (namesakes.length <= 1 || thread.tid === undefined) return namesakes[0];
  const own = model.threads.filter((t) => t.name === thread.name);
  const k = own.findIndex((t) => t.osTid === thread.tid);
  return namesakes[Math.max(0, k)];
}

/**
 * The reference thread's events with their methods in `model`'s ids (a copy; bytecodes of methods neither names
 * stay unnamed, -1). `ids` caches the mapping between calls for one reference and model.
 *
 * Side effect, on purpose: a method only the reference names is added to `model.methods` under a new id (after the
 * largest), so that what recovery copies from it can be named by the profiles. Refinement with a reference therefore
 * grows the model it is given; the ids the trace already used do not change.
 */
export function referenceEvents(reference: DecodedTrace, refThread: DecodedThread, model: JvmModel, ids = new Map<number, number>()): EventStream {
  let byKey: Map<string, number> | undefined;
  let next = 0;
  const idOf = (m: number): number => {
    if (m < 0) return m;
    let id = ids.get(m);
    if (id !== undefined) return id;
    const info = reference.model.methods.get(m);
    if (!info) id = -1;
    else {
      if (!byKey) {
        byKey = new Map();
        for (const [k, mi] of model.methods) {
          const key = keyOf(mi);
          if (!byKey.has(key)) byKey.set(key, k);
          next = Math.max(next, k + 1);
        }
      }
      const key = keyOf(info);
      id = byKey.get(key);
      if (id === undefined) {
        id = next++;
        model.methods.set(id, { ...info });
        byKey.set(key, id);
      }
    }
    ids.set(m, id);
    return id;
  };
  const e = refThread.events.clone();
  for (let i = 0; i < e.length; i++) e.method[i] = idOf(e.method[i]);
  return e;
}

/**
 * The stretch of a reference thread's events that may stand beside a window of this thread's: where the two runs
 * were at the same time since their threads started, with the window's duration more on each side (the runs'
 * paces differ; a whole thread's single window therefore takes a reference up to twice as long, whole). Windowed
 * analyze refines a long thread a window at a time, and the reference then costs each window its own part rather
 * than the whole other run. Returns event indexes [from, to) of `reference`; the whole of it when a start is not
 * known (NaN, infinite) or the window has no time.
 */
export function referenceSlice(reference: EventStream, referenceStart: number, window: EventStream, windowStart: number): [number, number] {
  const n = reference.length;
  if (!Number.isFinite(referenceStart) || !Number.isFinite(windowStart) || window.length === 0) return [0, n];
  let t0 = Infinity;
  let t1 = -Infinity;
  for (let i = 0; i < window.length; i++) {
    const t = window.tsc[i];
    if (!Number.isFinite(t) || t <= 0) continue;
    if (t < t0) t0 = t;
    if (t > t1) t1 = t;
  }
  if (!(t1 >= t0)) return [0, n];
  const margin = Math.max(t1 - t0, 1);
  const lo = referenceStart + (t0 - windowStart) - margin;
  const hi = referenceStart + (t1 - windowStart) + margin;
  let from = 0;
  while (from < n && !(reference.tsc[from] >= lo)) from++;
  let to = n;
  while (to > from && !(reference.tsc[to - 1] <= hi)) to--;
  return [from, to];
}
