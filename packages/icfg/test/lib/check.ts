/**
 * Independent checks of a MethodCfg: against @jportal/classfile's successors() and the exception table, and
 * against javap's listing. Each returns the mismatches found (empty when the CFG agrees).
 */
import { forEachInstruction, instructionLength, successors, type ExceptionHandler } from '@jportal/classfile';
import { EdgeKind, type MethodCfg } from '../../src';
import type { JavapMethod } from './jdk';

const sameSet = (a: Iterable<number>, b: Iterable<number>) => {
  const x = [...new Set(a)].sort((p, q) => p - q).join(',');
  const y = [...new Set(b)].sort((p, q) => p - q).join(',');
  return x === y ? '' : `${x} != ${y}`;
};

/** handlers an exception at `bci` can go to, in table order, up to the first catch-any */
export function expectedHandlers(handlers: readonly ExceptionHandler[], bci: number): string[] {
  const out: string[] = [];
  for (const h of handlers) {
    if (bci < h.startPc || bci >= h.endPc) continue;
    out.push(`${h.handlerPc}:${h.catchType ?? 'any'}`);
    if (h.catchType === undefined) break;
  }
  return out;
}

/** the leader rule, derived from successors() and the exception table (bcis) */
export function expectedLeaders(code: Uint8Array, handlers: readonly ExceptionHandler[]): Set<number> {
  const leaders = new Set<number>([0]);
  forEachInstruction(code, (bci, op) => {
    const next = bci + instructionLength(code, bci);
    const transfers = (op >= 0x99 && op <= 0xb1) || op === 0xbf || op === 0xc6 || op === 0xc7 || op === 0xc8 || op === 0xc9 ||
      (op === 0xc4 && code[bci + 1] === 0xa9);
    if (!transfers) return;
    for (const t of successors(code, bci)) leaders.add(t);
    if (next < code.length) leaders.add(next);
  });
  for (const h of handlers) {
    leaders.add(h.startPc).add(h.handlerPc);
    if (h.endPc < code.length) leaders.add(h.endPc);
  }
  return leaders;
}

/** Structural invariants and agreement with successors() and the exception table. */
export function checkCfg(cfg: MethodCfg, code: Uint8Array, handlers: readonly ExceptionHandler[]): string[] {
  const errs: string[] = [];
  const { insns, graph } = cfg;
  const n = insns.count;
  // every instruction in exactly one block, blocks contiguous and in order
  if (cfg.blockFirst[0] !== 0 || cfg.blockFirst[cfg.blockCount] !== n) errs.push('blocks do not span the code');
  for (let b = 0; b < cfg.blockCount; b++) {
    if (cfg.blockFirst[b] >= cfg.blockFirst[b + 1]) errs.push(`block ${b} is empty`);
    for (let i = cfg.blockFirst[b]; i < cfg.blockFirst[b + 1]; i++) if (cfg.blockOfInsn[i] !== b) errs.push(`insn ${i} not in block ${b}`);
  }
  const leaders = expectedLeaders(code, handlers);
  const starts = new Set(Array.from(cfg.blockFirst.subarray(0, cfg.blockCount), (i) => insns.bci[i]));
  const d = sameSet(starts, leaders);
  if (d) errs.push(`leaders ${d}`);
  for (let i = 0; i < n; i++) {
    const bci = insns.bci[i];
    const normal: number[] = [];
    const exc: string[] = [];
    for (let e = graph.start[i]; e < graph.start[i + 1]; e++) {
      const t = graph.target[e];
      if (t < 0 || t >= n) {
        errs.push(`bci ${bci}: edge to instruction ${t}`);
        continue;
      }
      if (graph.kind[e] === EdgeKind.Exception) exc.push(`${insns.bci[t]}:${cfg.catchType(e) ?? 'any'}`);
      else if (graph.kind[e] !== EdgeKind.Ret) normal.push(insns.bci[t]);
    }
    const want = successors(code, bci);
    const s = sameSet(normal, want);
    if (s) errs.push(`bci ${bci}: successors ${s}`);
    const wantExc = expectedHandlers(handlers, bci).join(' ');
    if (exc.join(' ') !== wantExc) errs.push(`bci ${bci}: handlers ${exc.join(' ')} != ${wantExc}`);
    // same handlers throughout a block: a block's edges are its last instruction's
    const last = cfg.blockLast(cfg.blockOfInsn[i]);
    if (expectedHandlers(handlers, insns.bci[last]).join(' ') !== wantExc) errs.push(`bci ${bci}: handlers differ within its block`);
  }
  // the control view re-targets the instruction graph's edges
  const cv = cfg.control;
  for (let c = 0; c < cv.nodeCount; c++) {
    const i = cv.insn[c];
    if (cv.nodeOfInsn[i] !== c || insns.kind[i] === 0) errs.push(`control node ${c} is not a control instruction`);
    if (cv.start[c + 1] - cv.start[c] !== graph.start[i + 1] - graph.start[i]) errs.push(`control node ${c}: edge count`);
    for (let e = 0; e < cv.start[c + 1] - cv.start[c]; e++) {
      const t = cv.target[cv.start[c] + e];
      const via = graph.target[graph.start[i] + e];
      let j = via;
      while (j < n && insns.kind[j] === 0) j++;
      if (t < 0 || cv.insn[t] !== j) errs.push(`control node ${c} edge ${e}: goes to ${t < 0 ? -1 : insns.bci[cv.insn[t]]}, want ${insns.bci[j]}`);
    }
  }
  return errs;
}

/** Agreement with javap: instruction offsets, jump targets, successors, handler edges and catch types. */
export function checkAgainstJavap(cfg: MethodCfg, jm: JavapMethod): string[] {
  const errs: string[] = [];
  const { insns, graph } = cfg;
  const bcis = Array.from(insns.bci.subarray(0, insns.count));
  if (bcis.join(',') !== jm.insns.map((x) => x.bci).join(',')) return [`instruction offsets differ from javap's`];
  const codeLength = insns.bci[insns.count];
  const leaders = new Set<number>([0]);
  for (const h of jm.handlers) {
    leaders.add(h.start).add(h.handler);
    if (h.end < codeLength) leaders.add(h.end);
  }
  jm.insns.forEach((x, k) => {
    const next = k + 1 < jm.insns.length ? jm.insns[k + 1].bci : codeLength;
    const mn = x.mnemonic;
    let want: number[];
    let ends = true;
    if (/^if/.test(mn)) want = [next, ...x.targets];
    else if (/^(goto|jsr)/.test(mn) || /switch$/.test(mn)) want = x.targets;
    else if (/return$/.test(mn) || mn === 'athrow' || /^ret/.test(mn)) want = [];
    else {
      want = [next];
      ends = false;
    }
    for (const t of x.targets) leaders.add(t);
    if (ends && next < codeLength) leaders.add(next);
    const got: number[] = [];
    const exc: string[] = [];
    for (let e = graph.start[k]; e < graph.start[k + 1]; e++) {
      if (graph.kind[e] === EdgeKind.Exception) exc.push(`${insns.bci[graph.target[e]]}:${cfg.catchType(e) ?? 'any'}`);
      else if (graph.kind[e] !== EdgeKind.Ret) got.push(insns.bci[graph.target[e]]);
    }
    const s = sameSet(got, want);
    if (s) errs.push(`bci ${x.bci} ${mn}: successors ${s}`);
    const wantExc: string[] = [];
    for (const h of jm.handlers) {
      if (x.bci < h.start || x.bci >= h.end) continue;
      wantExc.push(`${h.handler}:${h.type ?? 'any'}`);
      if (!h.type) break;
    }
    if (exc.join(' ') !== wantExc.join(' ')) errs.push(`bci ${x.bci}: handlers ${exc.join(' ')} != javap ${wantExc.join(' ')}`);
  });
  const starts = new Set(Array.from(cfg.blockFirst.subarray(0, cfg.blockCount), (i) => insns.bci[i]));
  const d = sameSet(starts, leaders);
  if (d) errs.push(`leaders ${d} (javap)`);
  return errs;
}
