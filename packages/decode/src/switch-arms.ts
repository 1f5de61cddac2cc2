/**
 * Which cases of an interpreted switch the way its template went allows (java.ts reads it into the event's aux,
 * events.ts SWITCH_TOLD): the default case alone, any case (a tableswitch in range), the one pair HotSpot's linear
 * search stopped at, or the pairs whose key its binary search finds in that many rounds.
 */
import { switchTable } from '@jportal/classfile';
import { SWITCH_BINARY, SWITCH_DEFAULT, SWITCH_DETAIL, SWITCH_TOLD } from './events';

const TABLESWITCH = 0xaa;

/**
 * How many rounds HotSpot's fast_binaryswitch makes looking up `key` among sorted `keys` (Dijkstra and Feijen's
 * search, as templateTable_x86.cpp writes it: i = 0, j = n; while i + 1 < j, h = (i + j) >> 1 and i or j becomes h).
 */
export function binarySearchRounds(keys: Int32Array, key: number): number {
  let i = 0;
  let j = keys.length;
  let rounds = 0;
  while (i + 1 < j) {
    const h = (i + j) >> 1;
    if (key < keys[h]) j = h;
    else i = h;
    rounds++;
  }
  return rounds;
}

// the successors the last switch asked about allows (one entry: a frame's states ask about one switch in turn)
let lastCode: Uint8Array | null = null;
let lastBci = -1;
let lastAux = 0;
let allowed: Set<number> | null = null;

/** The successors the switch at `bci` may go on to, given its event's aux; null: any. */
function allowedTargets(code: Uint8Array, bci: number, aux: number): Set<number> | null {
  const table = switchTable(code, bci);
  if (!table) return null;
  if (aux & SWITCH_DEFAULT) return new Set([table.defaultTarget]);
  const detail = Math.floor(aux / SWITCH_DETAIL);
  const n = table.targets.length;
  if (code[bci] === TABLESWITCH || detail === 0) return new Set(table.targets);
  if (aux & SWITCH_BINARY) {
    const out = new Set<number>();
    for (let k = 0; k < n; k++) if (binarySearchRounds(table.keys, table.keys[k]) === detail) out.add(table.targets[k]);
    return out;
  }
  // the linear search compares pair n-1 first: `detail` compares stop at pair n - detail
  const k = n - detail;
  return k >= 0 && k < n ? new Set([table.targets[k]]) : new Set();
}

/** Whether the switch at `bci` of `code` may go on to successor `t`, given its event's aux (SWITCH_TOLD). */
export function switchAllows(code: Uint8Array, bci: number, t: number, aux: number): boolean {
  if ((aux & SWITCH_TOLD) === 0) return true;
  if (code !== lastCode || bci !== lastBci || aux !== lastAux) {
    allowed = allowedTargets(code, bci, aux);
    lastCode = code;
    lastBci = bci;
    lastAux = aux;
  }
  return allowed === null || allowed.has(t);
}
