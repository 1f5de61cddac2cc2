/**
 * Decoded threads and oracle threads side by side: paired by name (in order of appearance when a name repeats),
 * each as comparable event sequences in one method-id space. Shared by `compare` and `accuracy`.
 */
import type { DecodedThread, DecodedTrace } from '@jportal/decode';
import { decodedSequence, EventSeq, maskUnseen, MethodSpace, OracleDir, OracleThread, oracleSequence, readOracleThread, UnseenMask } from '@jportal/oracle';

export interface ThreadPair {
  name: string;
  decoded: DecodedThread;
  oracle: OracleThread;
  truth: EventSeq;
  /** the decoded events of the live phase (after VMInit: the oracle cannot see the start-up code) */
  all: EventSeq;
  /** `all` without the events inside activations the oracle could not see (VM upcalls) */
  visible: EventSeq;
  /** per event of `all`: 1 if `visible` keeps it */
  visibleKeep: Uint8Array;
  unseen: Omit<UnseenMask, 'decoded' | 'keep'>;
}

/** Method ids of the oracle's methods with bytecode, in `space`. */
function methodsWithCode(oracle: OracleDir, space: MethodSpace): Set<number> {
  const withCode = new Set<number>();
  for (const m of oracle.methods) if (m.codeLength > 0) withCode.add(space.id(m.className, m.name, m.signature));
  return withCode;
}

/**
 * Yields one pair at a time (an oracle thread is read whole: one at a time keeps memory to the largest thread).
 * `unmatched` receives the oracle threads with no namesake in the trace.
 */
export function* threadPairs(decoded: DecodedTrace, oracle: OracleDir, space: MethodSpace, only: string[] | undefined, unmatched: string[]): Generator<ThreadPair> {
  const withCode = methodsWithCode(oracle, space);
  const byName = new Map<string, DecodedThread[]>();
  for (const t of decoded.threads) {
    const list = byName.get(t.name) ?? [];
    list.push(t);
    byName.set(t.name, list);
  }
  for (const ot of oracle.threads) {
    if (only && !only.includes(ot.name)) continue;
    const t = byName.get(ot.name)?.shift();
    if (!t) {
      unmatched.push(ot.name);
      continue;
    }
    const truth = oracleSequence(oracle, readOracleThread(oracle, ot), space);
    const all = decodedSequence(decoded.model, t, space, { fromTsc: decoded.model.vmStartTsc });
    const { decoded: visible, keep: visibleKeep, ...unseen } = maskUnseen(truth, all, (m) => withCode.has(m));
    yield { name: ot.name, decoded: t, oracle: ot, truth, all, visible, visibleKeep, unseen };
  }
}
