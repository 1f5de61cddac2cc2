/**
 * Activations the oracle cannot see. HotSpot hides single-stepping while the VM runs Java code on its own behalf
 * (class loading during resolution, static initializers, method-handle linkage: JvmtiHideSingleStepping): the
 * oracle then has the method's entry and exit but none of its bytecodes, while a PT decode has them all. Such an
 * activation is an entry of a method with bytecode that is not followed by that method's bci 0.
 *
 * `maskUnseen` aligns the two call sequences and drops, from the decoded side, everything inside each decoded
 * activation paired with a hidden one (its entry and exit stay), so that counts and hot methods compare what
 * both sides could see. It reports how much it dropped.
 */
import { callSequenceAccuracy, EventKind, EventSeq, Origin, SequenceOptions } from './compare';

/**
 * A decoded sequence keeps @jportal/decode's event kinds: 3 is a gap, its bci the reason, 0 an overflow (data the
 * PT unit lost). The decoder's own gaps (a mismatch with the code image) keep the frames it knows.
 */
const DECODED_GAP = 3;
const OVERFLOW = 0;

export interface UnseenMask {
  /** the decoded sequence without the events inside activations the oracle could not see */
  decoded: EventSeq;
  /** truth activations with no bytecodes though their method has some */
  hiddenActivations: number;
  /** of which were paired with a decoded activation */
  paired: number;
  /** recovery's fills left out: they copied calls the oracle could not see into, and are longer than the truth
   * there (maskFillsOverHidden) */
  hiddenFills: number;
  /** decoded events dropped */
  droppedEvents: number;
  /** per event of the decoded sequence given: 1 if `decoded` keeps it */
  keep: Uint8Array;
}

/** Truth entries whose activation the oracle saw no bytecode of. `hasCode(method)`: the method has bytecode. */
export function hiddenEntries(truth: EventSeq, hasCode: (method: number) => boolean): Uint8Array {
  const hidden = new Uint8Array(truth.length);
  for (let i = 0; i < truth.length; i++) {
    if (truth.kind[i] !== EventKind.Entry || !hasCode(truth.method[i])) continue;
    const n = i + 1;
    if (!(n < truth.length && truth.kind[n] === EventKind.Bytecode && truth.method[n] === truth.method[i] && truth.bci[n] === 0)) hidden[i] = 1;
  }
  return hidden;
}

export function maskUnseen(truth: EventSeq, decoded: EventSeq, hasCode: (method: number) => boolean, opts: SequenceOptions = {}): UnseenMask {
  const hidden = hiddenEntries(truth, hasCode);
  let hiddenActivations = 0;
  for (let i = 0; i < hidden.length; i++) hiddenActivations += hidden[i];
  const keep = new Uint8Array(decoded.length).fill(1);
  let paired = 0;
  let hiddenFills = 0;
  if (hiddenActivations > 0) {
    const calls = callSequenceAccuracy(truth, decoded, { ...opts, pairs: true });
    const pt = calls.pairs!.truth;
    const pd = calls.pairs!.decoded;
    // truth index -> the decoded event the call alignment paired with it
    const pairedWith = new Map<number, number>();
    for (let k = 0; k < pt.length; k++) pairedWith.set(pt[k], pd[k]);
    const exits = exitsOf(truth);
    let coveredTo = -1; // decoded events up to here are already inside a dropped activation
    for (let k = 0; k < pt.length; k++) {
      const ti = pt[k];
      const di = pd[k];
      if (!hidden[ti] || decoded.kind[di] !== EventKind.Entry || di <= coveredTo) continue;
      // the decoded activation: to its matching exit (depth over entries and exits)
      let depth = 0;
      let end = -1;
      let lost = false;
      for (let j = di; j < decoded.length; j++) {
        const kd = decoded.kind[j];
        if (kd === EventKind.Entry) depth++;
        else if (kd === EventKind.Exit && --depth === 0) {
          end = j;
          break;
        } else if (kd === DECODED_GAP && decoded.bci[j] === OVERFLOW) {
          lost = true; // the stack is not known across lost data
          break;
        }
      }
      // the decoded exit the call alignment paired with the truth's exit, when it closes this method after the entry
      const te = exits[ti];
      const pairedExit = te >= 0 ? pairedWith.get(te) : undefined;
      const de = pairedExit !== undefined && pairedExit > di && decoded.kind[pairedExit] === EventKind.Exit && decoded.method[pairedExit] === decoded.method[di] ? pairedExit : -1;
      // an exit the decoder missed inside it (a misnamed callee: the depth then closes at a caller's exit, of
      // another method, or later than both sides agree it ended): it ends as with lost data
      if (!lost && end >= 0 && (decoded.method[end] !== decoded.method[di] || (de >= 0 && de < end))) lost = true;
      if (lost) {
        // lost data inside it: it ends where the decoded exit the alignment paired with the truth's exit is
        // (both sides agree on it), if there is one; else before the first decoded call the alignment paired
        // with a truth call after that exit (the activation had ended by then: what is between is the rest of
        // it, lost or recovered, and the caller's bytecodes up to that call)
        end = -1;
        if (de >= 0) end = de;
        else if (te >= 0) {
          const after = firstAbove(pt, te);
          if (after < pt.length && pd[after] > di) end = pd[after];
        }
      }
      if (end < 0) continue; // never closed (end of stream, or lost data and no paired exit): keep it
      paired++;
      for (let j = di + 1; j < end; j++) keep[j] = 0;
      coveredTo = end;
    }
    paired += maskLostEntries(truth, decoded, hidden, exits, pt, pd, pairedWith, keep);
    hiddenFills = maskFillsOverHidden(truth, decoded, hidden, pt, pd, keep);
  }
  let n = 0;
  for (let i = 0; i < keep.length; i++) n += keep[i];
  const out: EventSeq = { length: n, kind: new Uint8Array(n), method: new Int32Array(n), bci: new Int32Array(n), opcode: new Int16Array(n) };
  if (decoded.origin) out.origin = new Uint8Array(n);
  for (let i = 0, o = 0; i < decoded.length; i++) {
    if (!keep[i]) continue;
    if (out.origin) out.origin[o] = decoded.origin![i];
    out.kind[o] = decoded.kind[i];
    out.method[o] = decoded.method[i];
    out.bci[o] = decoded.bci[i];
    out.opcode[o++] = decoded.opcode[i];
  }
  return { decoded: out, hiddenActivations, paired, hiddenFills, droppedEvents: decoded.length - n, keep };
}

/**
 * Hidden activations whose decoded entry fell into lost data (the call alignment paired nothing with the truth's
 * entry): what the decoded side has of them runs from an overflow gap to the decoded exit paired with the truth's
 * exit (else to the first decoded call paired with a truth call after that exit). The gap must come after the
 * decoded call paired with the last truth call before the entry. Everything strictly between the gap and that end
 * is dropped: the rest of the activation, and what recovery put in the gap (some of it may be the caller's, before
 * the call: left out, not counted wrong). Returns how many such activations were found.
 */
function maskLostEntries(truth: EventSeq, decoded: EventSeq, hidden: Uint8Array, exits: Int32Array, pt: Int32Array, pd: Int32Array, pairedWith: Map<number, number>, keep: Uint8Array): number {
  const gaps: number[] = [];
  for (let j = 0; j < decoded.length; j++) if (decoded.kind[j] === DECODED_GAP && decoded.bci[j] === OVERFLOW) gaps.push(j);
  if (gaps.length === 0) return 0;
  let found = 0;
  let truthCoveredTo = -1; // (activations nested in one handled here are inside its span already)
  for (let ti = 0; ti < truth.length; ti++) {
    if (!hidden[ti] || ti <= truthCoveredTo || pairedWith.has(ti)) continue;
    const te = exits[ti];
    if (te < 0) continue;
    let end = pairedWith.get(te) ?? -1;
    if (end < 0 || decoded.kind[end] !== EventKind.Exit || decoded.method[end] !== truth.method[te]) {
      const after = firstAbove(pt, te);
      end = after < pt.length ? pd[after] : -1;
    }
    if (end < 0) continue;
    const before = firstAbove(pt, ti) - 1;
    const lo = before >= 0 ? pd[before] : -1;
    const g = gaps[firstAbove(gaps, end - 1) - 1];
    if (g === undefined || g <= lo || g >= end) continue;
    found++;
    truthCoveredTo = te;
    for (let j = g + 1; j < end; j++) keep[j] = 0;
  }
  return found;
}

/**
 * Fills of lost data (recovered events, origin 2, right after an overflow gap) that copied work the oracle cannot
 * see: the fill's own calls include one the call alignment paired with a hidden entry, and the truth between the
 * calls paired around the gap has fewer bytecodes than the fill. What ran in such activations the truth does not
 * have, so the fill is neither right nor wrong against it: it is left out, as the decoded events inside them are
 * (examples/switches -Xint at 25% loss: the string concatenation's bootstrap at the end, 1,106 hidden activations
 * of class loading and linkage, lay in one gap, and its 12.7 k recovered events had counted as wrong). Where the
 * truth has as many bytecodes there as the fill, it judges the fill. A copy that calls nothing the truth hides is
 * visible code and is judged too, whatever the gap spans (switches -Xint at 25% loss, seed 2: a start-up fill of
 * 12.5 k bytecodes over 6.6 k visible ones and 118 hidden entries, class initializations its copy of URL parsing
 * did not hold, had been left out before this rule, and String.startsWith with it lost its place among the ten
 * hottest methods). The fill's bytecodes already left out (inside its own activations paired with hidden ones) do
 * not count. Returns how many fills it left out.
 */
function maskFillsOverHidden(truth: EventSeq, decoded: EventSeq, hidden: Uint8Array, pt: Int32Array, pd: Int32Array, keep: Uint8Array): number {
  const origin = decoded.origin;
  if (!origin) return 0;
  // truth bytecodes before each truth index (prefix sums)
  const bytecodes = new Int32Array(truth.length + 1);
  for (let i = 0; i < truth.length; i++) bytecodes[i + 1] = bytecodes[i] + (truth.kind[i] === EventKind.Bytecode ? 1 : 0);
  let found = 0;
  for (let g = 0; g < decoded.length; g++) {
    if (decoded.kind[g] !== DECODED_GAP || decoded.bci[g] !== OVERFLOW) continue;
    let end = g + 1;
    while (end < decoded.length && origin[end] === Origin.Recovered) end++;
    if (end === g + 1) continue;
    // the truth between the calls paired before the gap and after its fill (the fill's own calls may be paired)
    const k0 = firstAbove(pd, g) - 1;
    const k1 = firstAbove(pd, end - 1);
    const t0 = k0 >= 0 ? pt[k0] + 1 : 0;
    const t1 = k1 < pt.length ? pt[k1] : truth.length;
    let filled = 0;
    for (let j = g + 1; j < end; j++) if (keep[j] && decoded.kind[j] === EventKind.Bytecode) filled++;
    // a call of the fill the call alignment paired with a hidden one (pairs k0+1..k1-1 are those inside the fill):
    // the copy holds such work
    let copiesHidden = false;
    for (let k = k0 + 1; k < k1 && !copiesHidden; k++) if (hidden[pt[k]]) copiesHidden = true;
    // (only where the truth there has fewer bytecodes than the fill: what it has, it can judge the fill by)
    if (copiesHidden && bytecodes[t1] - bytecodes[t0] < filled) {
      found++;
      for (let j = g + 1; j < end; j++) keep[j] = 0;
    }
    g = end - 1;
  }
  return found;
}

/** For each entry of `s`, the index of the exit that closes it (-1 if none; -1 for other events). */
function exitsOf(s: EventSeq): Int32Array {
  const exits = new Int32Array(s.length).fill(-1);
  const open: number[] = [];
  for (let j = 0; j < s.length; j++) {
    if (s.kind[j] === EventKind.Entry) open.push(j);
    else if (s.kind[j] === EventKind.Exit && open.length) exits[open.pop()!] = j;
  }
  return exits;
}

/** The first index of the ascending `xs` whose value is above `x` (xs.length if none). */
function firstAbove(xs: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

