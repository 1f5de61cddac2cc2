/**
 * The time-indexed code image: every piece of code the traced JVM ran in its code cache, with the time span in
 * which it was there — the interpreter's codelets, stubs and adapters (CODE_BLOB), compiled methods as
 * installed (NMETHOD_LOAD), as patched (CODE_PATCH) and until unloaded (NMETHOD_UNLOAD). Built once from
 * meta.jpt; `find(ip, tsc)` answers "which bytes were at this address at this time".
 */
import { grown } from './typed';
import { BlockDecoder, BlockEnd, DecodedBlock } from './x86';

export const enum SectionKind {
  Interpreter = 0,
  Blob = 1,
  Nmethod = 2,
}

/** One version of one piece of code: fixed bytes over a time span. */
export interface CodeSection {
  id: number;
  kind: SectionKind;
  begin: number;
  end: number;
  bytes: Uint8Array;
  name: string;
  /** TSC span in which these bytes were the code at [begin, end): [validFrom, validTo). */
  validFrom: number;
  validTo: number;
  /** Index into CodeImage.nmethods for Nmethod sections, else -1. */
  nmethod: number;
  /** 0 for the bytes as loaded, k after the k-th patch. */
  version: number;
  /**
   * From when these bytes are surely the code (the CODE_PATCH record that showed them): before that, from
   * validFrom on, the previous version may still have run (patches are found by polling). validFrom if certain.
   */
  settledFrom: number;
  /**
   * A not-entrant nmethod: its verified entry was overwritten with `jmp wrong_method_stub` at a time no record
   * gives (the agent may only see the method after it happened). At `skipAt` the flow may instead run the
   * original first instruction and go on at `skipTo`; the decoder takes that path unless the trace leaves the
   * range there. -1 when not applicable.
   */
  skipAt?: number;
  skipTo?: number;
}

/** A compiled method as installed: the debug info that maps pcs to inlined (method, bci) frames. */
export interface NmethodInfo {
  method: number;
  codeBegin: number;
  codeEnd: number;
  entry: number;
  verifiedEntry: number;
  osrEntry: number;
  osrBci: number;
  /** Start of the stub section (static stubs to the interpreter, exception/deopt handlers). */
  stubBegin: number;
  level: number;
  compileId: number;
  loadTsc: number;
  unloadTsc: number;
  /** PcDescs sorted by pc: pc addresses, and for each the frames (innermost first) as flat (method, bci) pairs. */
  pcs: Float64Array;
  frameStart: Uint32Array;
  frames: Int32Array;
  /**
   * Per PcDesc: the immediate of the 32-bit `add reg, imm` (imm >= 2) that ends at its pc, else 0. C2 unrolls a
   * counted loop k times and steps its induction variable by k times the `iinc` in one instruction, which has the
   * iinc's PcDesc: one pass of such code is k iterations (complete.ts). Absent: none known.
   */
  addImm?: Int32Array;
  /** Per PcDesc: its innermost frame's context (CodeImage.pcContexts) */
  ctx?: Int32Array;
  /** Per PcDesc, 1 when it stands for the code at its pc, not the jump or return that ends there: its event
   * when a block starts at the pc (branch-pcdescs.ts); absent when none does */
  fallThrough?: Uint8Array;
  /** PcDescs added at the arms of C2's jump tables (jump-tables.ts; not the VM's): how many */
  jumpTableArms?: number;
}

const PAGE_SHIFT = 12;
const TARGET_CACHE_BITS = 14;
const TARGET_CACHE_MASK = (1 << TARGET_CACHE_BITS) - 1;
const PAGE = 2 ** PAGE_SHIFT;

/** Growable typed-array table of decoded blocks, shared by every section. */
class BlockTable {
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  last = new Float64Array(1024);
  target = new Float64Array(1024);
  insns = new Uint32Array(1024);
  kind = new Uint8Array(1024);
  section = new Uint32Array(1024);
  /** Successor caches (block index + 1, 0: not known yet): the block at `end`, and the block at `target`. */
  nextBlock = new Int32Array(1024);
  targetBlock = new Int32Array(1024);
  count = 0;

  add(b: DecodedBlock, section: number): number {
    if (this.count === this.start.length) this.grow();
    const i = this.count++;
    this.start[i] = b.start;
    this.end[i] = b.end;
    this.last[i] = b.last;
    this.target[i] = b.target;
    this.insns[i] = b.insns;
    this.kind[i] = b.kind;
    this.section[i] = section;
    return i;
  }

  private grow(): void {
    this.start = grown(this.start);
    this.end = grown(this.end);
    this.last = grown(this.last);
    this.target = grown(this.target);
    this.insns = grown(this.insns);
    this.kind = grown(this.kind);
    this.section = grown(this.section);
    this.nextBlock = grown(this.nextBlock);
    this.targetBlock = grown(this.targetBlock);
  }
}

export class CodeImage {
  readonly sections: CodeSection[] = [];
  readonly nmethods: NmethodInfo[] = [];
  /**
   * Inlining contexts of compiled code (NmethodInfo.ctx): per context (an nmethod's frames of one method at one
   * chain of call sites), the bcis its PcDescs name. A bytecode in the set leaves an event when its PcDesc runs.
   */
  readonly pcContexts: ReadonlySet<number>[] = [];
  /** Page number -> ids of the sections overlapping that page (every version, every time). */
  private readonly pages = new Map<number, number[]>();
  readonly blocks = new BlockTable();
  /** Per section: block start address -> block index. */
  private readonly blockIndex: Map<number, number>[] = [];
  private readonly decoders: (BlockDecoder | undefined)[] = [];
  private readonly scratch: DecodedBlock = { start: 0, end: 0, last: 0, insns: 0, kind: BlockEnd.Stop, target: -1 };
  /** Lookups that found code at the address only outside its recorded time span (taken anyway). */
  timeFallbacks = 0;
  private lastSection = -1;
  /** Per section id: the time span of its bytes (validFrom, validTo), flat, for the successor caches. */
  private spans: number[] = [];
  /**
   * Out-of-range call targets of the call-resolution stubs (resolve_*_call, ic_miss, wrong_method): VM entry
   * address -> the stub's start. A call site may still have pointed at such a stub when it ran, even though the
   * bytes the agent saw already held the resolved target.
   */
  readonly resolveExits = new Map<number, number>();
  /** Start addresses of those stubs: a call to one leaves the range (TIP.PGD) unless the site was resolved since. */
  readonly resolveStubs = new Set<number>();
  /**
   * The unverified c2i entries of the I2C/C2I adapters (where a monomorphic inline cache to an interpreted method
   * points): the instruction after the i2c part's closing indirect jump, found by decoding each adapter blob.
   */
  readonly c2iUnverifiedEntries: number[] = [];
  /**
   * Start addresses of the vtable and itable stubs. A call site that points at one is a megamorphic inline cache;
   * the agent may have copied it after the transition, so before that it went to one callee (or its adapter).
   */
  readonly dispatchStubs = new Set<number>();
  /** Filter ranges of the capture: code outside them is never traced. */
  ranges: { lo: number; hi: number }[] = [];

  addSection(s: Omit<CodeSection, 'id' | 'settledFrom'> & { settledFrom?: number }): CodeSection {
    const sec: CodeSection = { ...s, settledFrom: s.settledFrom ?? s.validFrom, id: this.sections.length };
    this.sections.push(sec);
    this.spans.push(sec.validFrom, sec.validTo);
    this.blockIndex.push(new Map());
    this.decoders.push(undefined);
    for (let p = Math.floor(sec.begin / PAGE); p <= Math.floor((sec.end - 1) / PAGE); p++) {
      let l = this.pages.get(p);
      if (!l) this.pages.set(p, (l = []));
      l.push(sec.id);
    }
    return sec;
  }

  /** True when `ip` lies inside a filter range (or no ranges are known). */
  inRange(ip: number): boolean {
    const r = this.ranges;
    if (r.length === 0) return true;
    for (let i = 0; i < r.length; i++) if (ip >= r[i].lo && ip < r[i].hi) return true;
    return false;
  }

  /**
   * The section holding `ip` at time `tsc`, or -1. When several versions held the address, the one whose span
   * contains `tsc` wins; failing that the one closest in time (counted in `timeFallbacks`).
   */
  find(ip: number, tsc: number): number {
    const last = this.lastSection;
    if (last >= 0) {
      const s = this.sections[last];
      if (ip >= s.begin && ip < s.end && tsc >= s.validFrom && tsc < s.validTo) return last;
    }
    const l = this.pages.get(Math.floor(ip / PAGE));
    if (!l) return -1;
    let best = -1;
    let bestDist = Infinity;
    for (let i = 0; i < l.length; i++) {
      const s = this.sections[l[i]];
      if (ip < s.begin || ip >= s.end) continue;
      if (tsc >= s.validFrom && tsc < s.validTo) {
        this.lastSection = s.id;
        return s.id;
      }
      const dist = tsc < s.validFrom ? s.validFrom - tsc : tsc - s.validTo;
      if (dist < bestDist) {
        bestDist = dist;
        best = s.id;
      }
    }
    if (best >= 0) this.timeFallbacks++;
    return best;
  }

  /**
   * The block that runs after block `b` at time `tsc`: the one at its end (`taken` false) or at its direct target
   * (`taken` true); -1 when no code is there. What find() + block() would answer, cached per block while the
   * cached block's section holds its bytes at `tsc`.
   */
  blockAfter(b: number, taken: boolean, tsc: number): number {
    const B = this.blocks;
    const cached = (taken ? B.targetBlock[b] : B.nextBlock[b]) - 1;
    if (cached >= 0 && this.blockValidAt(cached, tsc)) return cached;
    const nb = this.lookUpBlock(taken ? B.target[b] : B.end[b], tsc);
    if (nb >= 0 && this.lookedUpInSpan) {
      if (taken) B.targetBlock[b] = nb + 1;
      else B.nextBlock[b] = nb + 1;
    }
    return nb;
  }

  /**
   * The block at `ip` at time `tsc` (find() + block()), or -1 when no code is there. Looked up in a direct-mapped
   * cache first: the targets of indirect branches (the interpreter's dispatch above all) are a few thousand
   * addresses.
   */
  blockAt(ip: number, tsc: number): number {
    const slot = (ip ^ (ip >>> TARGET_CACHE_BITS)) & TARGET_CACHE_MASK;
    const cached = this.targetCacheBlock[slot] - 1;
    if (cached >= 0 && this.targetCacheIp[slot] === ip && this.blockValidAt(cached, tsc)) return cached;
    const b = this.lookUpBlock(ip, tsc);
    if (b >= 0 && this.lookedUpInSpan) {
      this.targetCacheIp[slot] = ip;
      this.targetCacheBlock[slot] = b + 1;
    }
    return b;
  }
  private readonly targetCacheIp = new Float64Array(1 << TARGET_CACHE_BITS);
  private readonly targetCacheBlock = new Int32Array(1 << TARGET_CACHE_BITS);

  /**
   * find() + block(), uncached. `lookedUpInSpan` then tells whether the section found holds its bytes at `tsc`:
   * only such answers may be cached (a time fallback is looked up again next time).
   */
  private lookUpBlock(ip: number, tsc: number): number {
    const sec = this.find(ip, tsc);
    if (sec < 0) return -1;
    this.lookedUpInSpan = this.sectionValidAt(sec, tsc);
    return this.block(sec, ip);
  }
  private lookedUpInSpan = false;

  /** Whether section `sec`'s bytes are the code at time `tsc`. */
  private sectionValidAt(sec: number, tsc: number): boolean {
    return tsc >= this.spans[sec * 2] && tsc < this.spans[sec * 2 + 1];
  }

  /** Whether the bytes of block `b`'s section are the code at time `tsc`. */
  blockValidAt(b: number, tsc: number): boolean {
    return this.sectionValidAt(this.blocks.section[b], tsc);
  }

  /** The block of section `sec` starting at `ip` (decoded on first use); -1 if the bytes do not decode. */
  block(sec: number, ip: number): number {
    const idx = this.blockIndex[sec];
    const hit = idx.get(ip);
    if (hit !== undefined) return hit;
    const s = this.sections[sec];
    let d = this.decoders[sec];
    if (!d) this.decoders[sec] = d = new BlockDecoder(s.bytes, s.begin);
    d.decodeBlock(ip, this.scratch);
    const b = this.blocks.add(this.scratch, sec);
    idx.set(ip, b);
    return b;
  }

  /** Addresses of the instructions of a block (slow path, for stopping mid-block). */
  blockInstructions(b: number): number[] {
    const sec = this.blocks.section[b];
    const s = this.sections[sec];
    let d = this.decoders[sec];
    if (!d) this.decoders[sec] = d = new BlockDecoder(s.bytes, s.begin);
    return d.instructionAddresses(this.blocks.start[b], this.blocks.end[b]);
  }

  /** Releases the WebAssembly decoders. */
  dispose(): void {
    for (const d of this.decoders) d?.free();
    this.decoders.fill(undefined);
  }

  /** Every compilation of a method (by method id), in load order. */
  nmethodsOf(method: number): NmethodInfo[] {
    if (!this.byMethod) {
      this.byMethod = new Map();
      for (const nm of this.nmethods) {
        let l = this.byMethod.get(nm.method);
        if (!l) this.byMethod.set(nm.method, (l = []));
        l.push(nm);
      }
    }
    return this.byMethod.get(method) ?? [];
  }
  private byMethod?: Map<number, NmethodInfo[]>;

  /** Index of the nmethod's PcDesc that describes `pc` (the first PcDesc at or after it), or -1. */
  pcDescAt(nm: NmethodInfo, pc: number): number {
    const pcs = nm.pcs;
    let lo = 0;
    let hi = pcs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pcs[mid] < pc) lo = mid + 1;
      else hi = mid;
    }
    return lo < pcs.length ? lo : -1;
  }
}
