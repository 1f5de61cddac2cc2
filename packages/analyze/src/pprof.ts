/**
 * The profile as pprof (profile.pb.gz): one sample per distinct (thread, tier class, stack of (method, line)), with
 * the bytecodes executed, the calls made and the PT time spent there. Stacks are the walker's frames; the leaf is
 * at the line of the event's bci, each caller at the line of its last bytecode (its current call site). Formats
 * and definitions in docs/profiles.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { lineOf } from '@jportal/classfile';
import { Label, Profile, Sample, StringTable, ValueType, type FunctionInput, type LocationInput } from 'pprof-format';
import { Kind, PartResult, Profiled, ThreadEvents, ThreadInfo } from './model';
import { IntervalClock, methodDisplay, TIER_CLASS_NAMES, TIER_CLASSES, tierClassOf, UNKNOWN_ROW } from './hot';
import { PairMap } from './pair-map';
import { withRoom } from './typed';
import { runPass, StackWalker, ThreadWalk, WalkPass } from './walk';

/** The root of the stack trie (no frame). */
const ROOT = 0;

/** Lines per (method row, bci), from the LineNumberTables; 0 where unknown. */
class LineTable {
  private readonly byRow: (Int32Array | null | undefined)[] = [];
  constructor(private readonly a: Profiled) {}

  /** the line of `bci` (-1: the method's first line, for a frame that has run no bytecode yet) */
  line(row: number, bci: number): number {
    if (row === UNKNOWN_ROW) return 0;
    let t = this.byRow[row];
    if (t === undefined) {
      const info = this.a.methods[row]?.info;
      t = null;
      if (info?.code && info.lineNumbers.length) {
        t = new Int32Array(info.code.length);
        for (let b = 0; b < t.length; b++) t[b] = Math.max(0, lineOf(info, b));
      }
      this.byRow[row] = t;
    }
    if (!t) return 0;
    const b = bci < 0 ? 0 : bci;
    return b < t.length ? t[b] : 0;
  }

  /** the end of the events from..to-1 (bcis `bci`) that are at line `line` of `row`, from `from` on */
  sameLine(row: number, line: number, bci: Int32Array, from: number, to: number): number {
    if (row === UNKNOWN_ROW) return to;
    this.line(row, 0);
    const t = this.byRow[row];
    if (!t) return line === 0 ? to : from;
    let j = from;
    for (; j < to; j++) {
      const b = bci[j] < 0 ? 0 : bci[j];
      if ((b < t.length ? t[b] : 0) !== line) break;
    }
    return j;
  }
}

/** Interned (method row, line) locations and the trie of stacks over them. */
class StackTrie {
  private readonly locIds = new PairMap();
  locRow = new Int32Array(1024);
  locLine = new Int32Array(1024);
  locations = 0;
  private readonly children = new PairMap();
  parent = new Int32Array(1024);
  loc = new Int32Array(1024);
  nodes = 1; // node 0 is the root

  location(row: number, line: number): number {
    let id = this.locIds.get(row, line);
    if (id < 0) {
      id = this.locations++;
      this.locRow = withRoom(this.locRow, id + 1);
      this.locLine = withRoom(this.locLine, id + 1);
      this.locRow[id] = row;
      this.locLine[id] = line;
      this.locIds.set(row, line, id);
    }
    return id;
  }

  private noFrame = -1;

  /** the node of bytecodes that ran with no frame: the unknown method at line 0, made when first needed */
  noFrameNode(unknownRow: number): number {
    if (this.noFrame < 0) this.noFrame = this.child(ROOT, this.location(unknownRow, 0));
    return this.noFrame;
  }

  child(parent: number, loc: number): number {
    let id = this.children.get(parent, loc);
    if (id < 0) {
      id = this.nodes++;
      this.parent = withRoom(this.parent, id + 1);
      this.loc = withRoom(this.loc, id + 1);
      this.parent[id] = parent;
      this.loc[id] = loc;
      this.children.set(parent, loc, id);
    }
    return id;
  }
}

/**
 * The slot of each (stack node, tier class) in the sums of the thread being summed (threads are summed one at a
 * time): one entry per pair, stamped with the thread's serial (an entry of another thread's stamp is unset). Two
 * array reads per lookup where a hash map probed, and grown as the trie grows, not rehashed.
 */
class SlotIndex {
  slot = new Int32Array(0);
  stamp = new Int32Array(0);
  private serial = 0;

  /** a new thread's serial (its entries are those stamped with it) */
  begin(): number {
    return ++this.serial;
  }

  /** makes room for key k */
  room(k: number): void {
    if (k < this.stamp.length) return;
    const n = Math.max(k + 1, this.stamp.length * 2, 1024);
    this.slot = withRoom(this.slot, n);
    this.stamp = withRoom(this.stamp, n);
  }
}

/** Sums per (stack node, tier class) of one thread: bytecodes, calls, time in TSC ticks. */
class SampleSums {
  private readonly serial: number;
  node = new Int32Array(256);
  tier = new Int32Array(256);
  bytecodes = new Float64Array(256);
  calls = new Float64Array(256);
  ticks = new Float64Array(256);
  length = 0;

  constructor(private readonly index: SlotIndex) {
    this.serial = index.begin();
  }

  /** adds to the sums of (node, tier class) */
  add(node: number, tierClass: number, bytecodes: number, calls: number, ticks: number): void {
    const s = this.slot(node, tierClass);
    this.bytecodes[s] += bytecodes;
    this.calls[s] += calls;
    this.ticks[s] += ticks;
  }

  private lastNode = -1;
  private lastTier = -1;
  private lastSlot = -1;

  private slot(node: number, tierClass: number): number {
    if (node === this.lastNode && tierClass === this.lastTier) return this.lastSlot;
    const k = node * TIER_CLASSES + tierClass;
    const index = this.index;
    index.room(k);
    let s: number;
    if (index.stamp[k] === this.serial) s = index.slot[k];
    else {
      s = this.length++;
      if (s === this.node.length) {
        const n = s * 2;
        this.node = withRoom(this.node, n);
        this.tier = withRoom(this.tier, n);
        this.bytecodes = withRoom(this.bytecodes, n);
        this.calls = withRoom(this.calls, n);
        this.ticks = withRoom(this.ticks, n);
      }
      this.node[s] = node;
      this.tier[s] = tierClass;
      index.stamp[k] = this.serial;
      index.slot[k] = s;
    }
    this.lastNode = node;
    this.lastTier = tierClass;
    this.lastSlot = s;
    return s;
  }
}

/**
 * The stack node of each open frame, with the frame's current line: a frame's line changes only when it runs a
 * bytecode (it is then on top), so nodes below the top stay valid until a frame at or below them changes.
 */
class FrameLines {
  /** the line each open frame is at (its last bytecode's; the method's first line before its first bytecode) */
  private lineAt = new Int32Array(256);
  private nodeAt = new Int32Array(256);
  /** nodes of depths 0..valid are current */
  private valid = -1;
  constructor(private readonly trie: StackTrie, private readonly lines: LineTable, private readonly unknown: number) {}

  private rowAt(w: StackWalker, d: number): number {
    const m = w.stack[d];
    return m < 0 ? this.unknown : m;
  }

  pushed(w: StackWalker): void {
    this.lineAt = withRoom(this.lineAt, w.depth + 1);
    this.nodeAt = withRoom(this.nodeAt, w.depth + 1);
    this.lineAt[w.depth] = this.lines.line(this.rowAt(w, w.depth), -1);
    if (this.valid >= w.depth) this.valid = w.depth - 1;
  }

  popped(newDepth: number): void {
    if (this.valid > newDepth) this.valid = newDepth;
  }

  ranBytecode(w: StackWalker, bci: number): void {
    const line = this.lines.line(this.rowAt(w, w.depth), bci);
    if (this.lineAt[w.depth] === line) return;
    this.lineAt[w.depth] = line;
    if (this.valid >= w.depth) this.valid = w.depth - 1;
  }

  /** the end of the top frame's events from..to-1 at its current line, from `from` on (they leave its node as it is) */
  sameLine(w: StackWalker, from: number, to: number): number {
    return this.lines.sameLine(this.rowAt(w, w.depth), this.lineAt[w.depth], w.t.bci, from, to);
  }

  /** the node of the stack up to `depth` (ROOT when the stack is empty) */
  node(w: StackWalker, depth: number): number {
    for (let d = this.valid + 1; d <= depth; d++) {
      const loc = this.trie.location(this.rowAt(w, d), this.lineAt[d]);
      this.nodeAt[d] = this.trie.child(d > 0 ? this.nodeAt[d - 1] : ROOT, loc);
    }
    if (depth > this.valid) this.valid = depth;
    return depth >= 0 ? this.nodeAt[depth] : ROOT;
  }
}

interface ThreadSums {
  sums: SampleSums;
  lostTicks: number;
  noFrameTicks: number;
  first: number;
  last: number;
}

/** A walk of one thread that sums its samples (to `done`). Bytecodes that ran with no frame go to the trie's no-frame node. */
function sumThread(trie: StackTrie, lines: LineTable, slots: SlotIndex, done: (r: ThreadSums) => void): ThreadWalk {
  const sums = new SampleSums(slots);
  const frames = new FrameLines(trie, lines, UNKNOWN_ROW);
  const clock = new IntervalClock();
  let t: ThreadEvents | undefined;
  let first = NaN;
  let last = NaN;
  let topNode = -1; // node the pending intervals belong to: -1 no frame, -2 not resolved yet
  let walker: StackWalker | undefined;
  let topDepth = -1;
  let lostTicks = 0;
  let noFrameTicks = 0;
  const resolveTop = () => {
    if (topNode === -2) topNode = topDepth >= 0 ? frames.node(walker!, topDepth) : -1;
    return topNode;
  };
  const interval = (src: ThreadEvents, j: number, dt: number) => {
    if (dt === 0) return;
    const n = resolveTop();
    if (n < 0) noFrameTicks += dt;
    else sums.add(n, tierClassOf(src, j), 0, 0, dt);
  };
  const lost = (dt: number) => {
    lostTicks += dt;
  };
  const event = (src: ThreadEvents, j: number) => {
    if (topDepth < 0 && src.kind[j] === Kind.Bytecode) sums.add(trie.noFrameNode(UNKNOWN_ROW), tierClassOf(src, j), 1, 0, 0);
  };
  /** hands out the intervals before event i to the stack up to `depth` */
  const flush = (w: StackWalker, i: number, depth: number) => {
    walker = w;
    topDepth = depth;
    topNode = -2;
    clock.advance(i, interval, lost, event);
  };
  const visitor = {
    enter(w: StackWalker, i: number) {
      flush(w, i, w.depth - 1);
      frames.pushed(w);
      sums.add(frames.node(w, w.depth), tierClassOf(w.t, i), 0, 1, 0);
    },
    exit(w: StackWalker, i: number) {
      flush(w, i, w.depth);
      frames.popped(w.depth - 1);
    },
    bytecodes(w: StackWalker, from: number, to: number) {
      // a run in the top frame, taken a line at a time: what each event would do on its own (flush the intervals
      // before it, move the frame to its line, count it) happens once per line, for the events at that line
      const t = w.t;
      for (let i = from; i < to; ) {
        flush(w, i, w.depth);
        frames.ranBytecode(w, t.bci[i]);
        const node = frames.node(w, w.depth);
        const end = frames.sameLine(w, i + 1, to);
        let tier = tierClassOf(t, i);
        let n = 1;
        for (let j = i + 1; j < end; j++) {
          const c = tierClassOf(t, j);
          if (c === tier) n++;
          else {
            sums.add(node, tier, n, 0, 0);
            tier = c;
            n = 1;
          }
        }
        sums.add(node, tier, n, 0, 0);
        i = end;
      }
    },
    gap(w: StackWalker, i: number) {
      flush(w, i, w.depth);
    },
  };
  return {
    visitor,
    window: (w) => {
      if (!t) first = w.tsc[0];
      clock.window(w, w.base);
      t = w;
      last = w.tsc[w.length - 1];
    },
    done: () => {
      topDepth = -1;
      topNode = -1;
      clock.advance(t ? t.length : 0, interval, lost, event);
      done({ sums, lostTicks, noFrameTicks, first, last });
    },
  };
}

/** The pprof file name of a class: its package path and SourceFile attribute (e.g. java/lang/String.java). */
function sourcePath(a: Profiled, row: number): string {
  const m = a.methods[row];
  const file = m?.classFile?.sourceFile;
  if (!m || !file) return '';
  const slash = m.className.lastIndexOf('/');
  return slash >= 0 ? `${m.className.slice(0, slash + 1)}${file}` : file;
}

export interface PprofSummary {
  samples: number;
  locations: number;
  functions: number;
  bytecodes: number;
  calls: number;
  timeNs: number;
  lostNs: number;
  noFrameNs: number;
  /** locations without a line (methods without a LineNumberTable, the unknown method) */
  locationsWithoutLine: number;
}

export interface BuiltPprof {
  /** the Profile message, uncompressed */
  encode(): Uint8Array;
  /** the same bytes as gzip members, in order (their concatenation is a valid profile.pb.gz) */
  gzipMembers(): Uint8Array[];
  summary: PprofSummary;
}

/**
 * Encoded samples, kept deflated a chunk at a time as they are made. A Profile's samples each list their whole
 * stack, and a program with deep recursion has millions of distinct stacks: jython short makes 8.1 M samples,
 * 1.2 GB encoded, which held as two small arrays per sample took the analysis to 10 GB; deflated in 16 MiB chunks
 * they are about 60 MB. Each chunk is a gzip member of profile.pb.gz (readers of gzip take concatenated members).
 */
class SampleSink {
  private static readonly CHUNK = 16 << 20;
  private buf = new Uint8Array(SampleSink.CHUNK);
  private used = 0;
  private readonly members: Uint8Array[] = [];

  /** adds encoded bytes (copied: `bytes` may be reused afterwards) */
  add(bytes: Uint8Array): void {
    const n = bytes.length;
    if (this.used + n > this.buf.length) this.seal();
    if (n > this.buf.length) {
      this.members.push(zlib.gzipSync(bytes));
      return;
    }
    this.buf.set(bytes, this.used);
    this.used += n;
  }

  /** the gzip members of every sample added, in order */
  finish(): Uint8Array[] {
    this.seal();
    this.buf = new Uint8Array(0);
    return this.members;
  }

  private seal(): void {
    if (!this.used) return;
    this.members.push(zlib.gzipSync(this.buf.subarray(0, this.used)));
    this.used = 0;
  }
}

/** Bytes of the protobuf varint of a non-negative integer (exact up to 2^53). */
function varintSize(x: number): number {
  let n = 1;
  for (; x >= 128; n++) x = Math.floor(x / 128);
  return n;
}

/** Writes the protobuf varint of a non-negative integer at `at`; returns the offset after it. */
function putVarint(buf: Uint8Array, at: number, x: number): number {
  for (; x >= 4294967296; x = Math.floor(x / 128)) buf[at++] = (x % 128) | 128;
  for (; x > 127; x >>>= 7) buf[at++] = (x & 127) | 128;
  buf[at++] = x;
  return at;
}

/**
 * Encodes Profile.sample fields (number 2) straight into one reused buffer, as pprof-format's Sample would
 * (packed location ids when there are any, the packed values always, then each label), with no objects per sample:
 * a thread with millions of distinct stacks makes millions of samples.
 */
class SampleEncoder {
  private buf = new Uint8Array(1024);

  /**
   * one sample: the locations (ids, leaf first) from `locations[0..count)`, the values, then `labels` (encoded label
   * fields); a value that is no non-negative safe integer (never made here) goes through pprof-format's Sample
   */
  encode(locations: Int32Array, count: number, values: readonly number[], labels: Uint8Array): Uint8Array {
    for (const v of values) if (!(v >= 0 && Number.isSafeInteger(v))) return this.slow(locations, count, values, labels);
    let locBytes = 0;
    for (let i = 0; i < count; i++) locBytes += varintSize(locations[i]);
    let valBytes = 0;
    for (const v of values) valBytes += varintSize(v);
    const body = (count ? 1 + varintSize(locBytes) + locBytes : 0) + (values.length ? 1 + varintSize(valBytes) + valBytes : 0) + labels.length;
    const total = 1 + varintSize(body) + body;
    if (this.buf.length < total) this.buf = new Uint8Array(Math.max(total, 2 * this.buf.length));
    const b = this.buf;
    let at = 0;
    b[at++] = (2 << 3) | 2; // Profile.sample, length-delimited
    at = putVarint(b, at, body);
    if (count) {
      b[at++] = (1 << 3) | 2; // Sample.location_id, packed
      at = putVarint(b, at, locBytes);
      for (let i = 0; i < count; i++) at = putVarint(b, at, locations[i]);
    }
    if (values.length) {
      b[at++] = (2 << 3) | 2; // Sample.value, packed
      at = putVarint(b, at, valBytes);
      for (const v of values) at = putVarint(b, at, v);
    }
    b.set(labels, at);
    return b.subarray(0, at + labels.length);
  }

  private slow(locations: Int32Array, count: number, values: readonly number[], labels: Uint8Array): Uint8Array {
    const sample = new Sample({ locationId: Array.from(locations.subarray(0, count)), value: [...values] }).encode();
    return Buffer.concat([fieldHeader(2, sample.length + labels.length), sample, labels]);
  }
}

/** Sample.label fields (number 3), encoded by pprof-format's Label (once per thread and tier class). */
function encodeLabels(labels: { key: number; str?: number; num?: number }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const l of labels) {
    const body = new Label(l).encode();
    parts.push(fieldHeader(3, body.length), body);
  }
  return Buffer.concat(parts);
}

/** Builds the pprof Profile of all threads. */
export function buildPprof(a: Profiled): BuiltPprof {
  return runPass(a, pprofPass(a));
}

/** buildPprof as a pass that can share its walk with others (runPasses). */
export function pprofPass(a: Profiled): WalkPass<BuiltPprof> {
  const trie = new StackTrie();
  const lines = new LineTable(a);
  const slots = new SlotIndex();
  const unknown = UNKNOWN_ROW;
  const st = new StringTable();
  const s = (x: string) => st.dedup(x);
  const ns = (ticks: number) => (a.tscPerNs > 0 ? Math.round(ticks / a.tscPerNs) : 0);
  // each sample is encoded as it is made (a Profile's sample field, number 2, repeated) and kept deflated: the
  // samples of a thread with millions of distinct stacks would not fit as objects, nor as arrays of their own
  const samples = new SampleSink();
  const encoder = new SampleEncoder();
  let stack = new Int32Array(256);
  let sampleCount = 0;
  const summary: PprofSummary = { samples: 0, locations: 0, functions: 0, bytecodes: 0, calls: 0, timeNs: 0, lostNs: 0, noFrameNs: 0, locationsWithoutLine: 0 };
  const tierKeys = TIER_CLASS_NAMES.map((x) => s(x));
  const [threadKey, tidKey, tierKey] = [s('thread'), s('tid'), s('tier')];
  let lostTicks = 0;
  let noFrameTicks = 0;
  let tmin = Infinity;
  let tmax = -Infinity;
  const thread = (k: number): ThreadWalk | undefined => {
    const t = a.threads[k];
    return sumThread(trie, lines, slots, (r) => addThread(t, r));
  };
  const addThread = (t: ThreadInfo, r: ThreadSums) => {
    // (a thread without events has no samples and no labels; its length is known once it is read: a streamed
    // trace's threads grow as they are decoded)
    if (!t.length) return;
    lostTicks += r.lostTicks;
    noFrameTicks += r.noFrameTicks;
    if (r.first < tmin) tmin = r.first;
    if (r.last > tmax) tmax = r.last;
    const labels = [{ key: threadKey, str: s(t.name) }, { key: tidKey, num: t.tid }];
    // the thread's labels with each tier class's, encoded once
    const labelBytes = tierKeys.map((str) => encodeLabels([...labels, { key: tierKey, str }]));
    const { sums } = r;
    const value = [0, 0, 0];
    for (let k = 0; k < sums.length; k++) {
      let depth = 0;
      for (let n = sums.node[k]; n !== ROOT; n = trie.parent[n]) {
        stack = withRoom(stack, depth + 1);
        stack[depth++] = trie.loc[n] + 1;
      }
      value[0] = sums.bytecodes[k];
      value[1] = sums.calls[k];
      value[2] = ns(sums.ticks[k]);
      summary.bytecodes += value[0];
      summary.calls += value[1];
      summary.timeNs += value[2];
      samples.add(encoder.encode(stack, depth, value, labelBytes[sums.tier[k]]));
      sampleCount++;
    }
  };
  return { thread, finish: () => finishProfile() };
  function finishProfile(): BuiltPprof {
    // functions: one per method row used; locations: one per (method, line)
    const functionOf = new Map<number, number>();
    const functions: FunctionInput[] = [];
    const locations: LocationInput[] = [];
    for (let l = 0; l < trie.locations; l++) {
      const row = trie.locRow[l];
      let fid = functionOf.get(row);
      if (fid === undefined) {
        fid = functions.length + 1;
        functionOf.set(row, fid);
        const m = a.methods[row];
        const name = m ? `${m.className.replace(/\//g, '.')}.${m.name}` : '(unknown)';
        const system = m ? `${m.className}.${m.name}${m.signature}` : '(unknown)';
        functions.push({ id: fid, name: s(name), systemName: s(system), filename: s(sourcePath(a, row)), startLine: lines.line(row, -1) });
      }
      if (!trie.locLine[l]) summary.locationsWithoutLine++;
      locations.push({ id: l + 1, line: [{ functionId: fid, line: trie.locLine[l] }] });
    }
    summary.samples = sampleCount;
    summary.locations = locations.length;
    summary.functions = functions.length;
    summary.lostNs = ns(lostTicks);
    summary.noFrameNs = ns(noFrameTicks);
    const comment = [
      `jportal analyze: ${a.source.kind} ${a.source.dir}`,
      a.tscPerNs > 0 ? `time: PT timestamps (TSC ${a.tscPerNs.toFixed(4)} ticks/ns); lost in gaps ${summary.lostNs} ns; with no frame ${summary.noFrameNs} ns` : 'time: none (ground truth)',
      `${methodDisplay(a, unknown)}: frames of unattributed interpreter entries, and bytecodes that ran with no frame`,
    ];
    const sampleType = [
      { type: s('bytecodes'), unit: s('count') },
      { type: s('calls'), unit: s('count') },
      { type: s('time'), unit: s('nanoseconds') },
    ];
    // the fields in number order: sample_type (1), the samples (2), the rest (3 and up)
    const head = Buffer.concat(sampleType.flatMap((t) => {
      const b = new ValueType(t).encode();
      return [fieldHeader(1, b.length), b];
    }));
    const rest = new Profile({
      sampleType: [],
      location: locations,
      function: functions,
      stringTable: st,
      periodType: { type: s('bytecodes'), unit: s('count') },
      period: 1,
      durationNanos: a.tscPerNs > 0 && tmax > tmin ? Math.round((tmax - tmin) / a.tscPerNs) : 0,
      comment: comment.map(s),
      defaultSampleType: s('bytecodes'),
    }).encode();
    const members = [zlib.gzipSync(head), ...samples.finish(), zlib.gzipSync(rest)];
    return { encode: () => Buffer.concat(members.map((m) => zlib.gunzipSync(m))), gzipMembers: () => members, summary };
  }
}

/** The key of a length-delimited protobuf field and the length that follows it. */
function fieldHeader(field: number, length: number): Uint8Array {
  const out = new Uint8Array(1 + varintSize(length));
  out[0] = (field << 3) | 2;
  putVarint(out, 1, length);
  return out;
}

/** profile.pb.gz in `outDir`. */
export function writePprof(a: Profiled, outDir: string, built?: BuiltPprof): PartResult {
  const { gzipMembers, summary } = built ?? buildPprof(a);
  fs.mkdirSync(outDir, { recursive: true });
  const fd = fs.openSync(path.join(outDir, 'profile.pb.gz'), 'w');
  try {
    for (const m of gzipMembers()) fs.writeSync(fd, m);
  } finally {
    fs.closeSync(fd);
  }
  return { files: ['profile.pb.gz'], summary: { ...summary } };
}

/** Reads a profile.pb.gz (gzip or plain). */
export function readPprof(file: string): Profile {
  let bytes: Uint8Array = fs.readFileSync(file);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes);
  return Profile.decode(bytes);
}
