/**
 * Reads a ground-truth directory written by the agent's oracle mode (docs/oracle-format.md).
 */
import * as fs from 'fs';
import * as path from 'path';

export class OracleFormatError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    detail: string,
  ) {
    super(`${file}: byte ${offset}: ${detail}`);
    this.name = 'OracleFormatError';
  }
}

export const ORACLE_MAGIC = 'JPORACLE';
export const ORACLE_VERSION = 1;
const RECORD = 8;
const HEADER = 16;

/** Record kinds of the oracle's thread files. */
export enum OracleKind {
  Bytecode = 0,
  Entry = 1,
  Exit = 2,
  ExitByException = 3,
  Throw = 4,
  Catch = 5,
}

export interface OracleMethod {
  id: number;
  className: string;
  name: string;
  signature: string;
  codeLength: number;
}

export interface OracleThread {
  tid: number;
  name: string;
  file: string;
  records: number;
  complete: boolean;
}

export interface OracleDir {
  dir: string;
  /** false when oracle.json is missing (the JVM did not reach VM death): threads come from the file names */
  complete: boolean;
  vmVersion: string;
  methods: OracleMethod[];
  threads: OracleThread[];
}

/** One thread's records, column-wise. */
export interface OracleEvents {
  length: number;
  kind: Uint8Array;
  opcode: Int16Array;
  bci: Int32Array;
  method: Int32Array;
}

export function readOracle(dir: string): OracleDir {
  const methodsFile = path.join(dir, 'methods.jsonl');
  if (!fs.existsSync(methodsFile)) throw new OracleFormatError(methodsFile, 0, 'missing: not an oracle directory (jportal oracle --out DIR -- java ...)');
  const methods: OracleMethod[] = [];
  let offset = 0;
  for (const line of fs.readFileSync(methodsFile, 'utf8').split('\n')) {
    if (line.trim()) {
      let m: { id: number; class: string; name: string; sig: string; code_length: number };
      try {
        m = JSON.parse(line);
      } catch {
        // the last line of a file cut by a killed JVM may be partial: keep what came before
        break;
      }
      if (m.id !== methods.length) throw new OracleFormatError(methodsFile, offset, `method id ${m.id} out of order (expected ${methods.length})`);
      methods.push({ id: m.id, className: m.class, name: m.name, signature: m.sig, codeLength: m.code_length });
    }
    offset += Buffer.byteLength(line) + 1;
  }
  const summaryFile = path.join(dir, 'oracle.json');
  if (fs.existsSync(summaryFile)) {
    let s: { format: string; version: number; vm_version: string; threads: { tid: number; name: string; file: string; records: number; complete: boolean }[] };
    try {
      s = JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
    } catch (e) {
      throw new OracleFormatError(summaryFile, 0, `not JSON (${(e as Error).message})`);
    }
    if (s.format !== 'jportal-oracle') throw new OracleFormatError(summaryFile, 0, `format is ${s.format}, not jportal-oracle`);
    if (s.version !== ORACLE_VERSION) throw new OracleFormatError(summaryFile, 0, `version ${s.version} (this reader knows ${ORACLE_VERSION})`);
    return { dir, complete: true, vmVersion: s.vm_version, methods, threads: s.threads.map((t) => ({ ...t })) };
  }
  // no summary: the thread files as they are
  const tdir = path.join(dir, 'threads');
  const threads: OracleThread[] = [];
  for (const f of fs.existsSync(tdir) ? fs.readdirSync(tdir) : []) {
    const m = /^(\d+)-(\d+)\.jpo$/.exec(f);
    if (!m) continue;
    const size = fs.statSync(path.join(tdir, f)).size;
    threads.push({ tid: Number(m[2]), name: `tid ${m[2]}`, file: `threads/${f}`, records: Math.max(0, Math.floor((size - HEADER) / RECORD)), complete: false });
  }
  threads.sort((a, b) => Number(a.file.split(/[/-]/)[1]) - Number(b.file.split(/[/-]/)[1]));
  return { dir, complete: false, vmVersion: '', methods, threads };
}

/** Reads one thread's records. A trailing partial record (a killed JVM) is ignored; anything else malformed throws. */
export function readOracleThread(o: OracleDir, t: OracleThread): OracleEvents {
  const file = path.join(o.dir, t.file);
  if (!fs.existsSync(file)) throw new OracleFormatError(file, 0, 'missing (named by oracle.json)');
  const b = fs.readFileSync(file);
  if (b.length < HEADER) throw new OracleFormatError(file, b.length, `truncated header (${b.length} of ${HEADER} bytes)`);
  if (b.toString('latin1', 0, 8) !== ORACLE_MAGIC) throw new OracleFormatError(file, 0, 'bad magic (not a jportal oracle thread file)');
  const version = b.readUInt32LE(8);
  if (version !== ORACLE_VERSION) throw new OracleFormatError(file, 8, `version ${version} (this reader knows ${ORACLE_VERSION})`);
  const size = b.readUInt32LE(12);
  if (size !== RECORD) throw new OracleFormatError(file, 12, `record size ${size} (version 1 has ${RECORD})`);
  const n = Math.floor((b.length - HEADER) / RECORD);
  if (o.complete && t.complete && n !== t.records)
    throw new OracleFormatError(file, HEADER + n * RECORD, `holds ${n} records, oracle.json says ${t.records} (truncated?)`);
  const ev: OracleEvents = { length: n, kind: new Uint8Array(n), opcode: new Int16Array(n), bci: new Int32Array(n), method: new Int32Array(n) };
  const methods = o.methods.length;
  for (let i = 0, p = HEADER; i < n; i++, p += RECORD) {
    const kind = b[p];
    if (kind > OracleKind.Catch) throw new OracleFormatError(file, p, `unknown record kind ${kind}`);
    const method = b.readUInt32LE(p + 4);
    if (method >= methods && o.complete) throw new OracleFormatError(file, p + 4, `method id ${method} not in methods.jsonl (${methods} methods)`);
    const bci = b.readUInt16LE(p + 2);
    ev.kind[i] = kind;
    ev.opcode[i] = kind === OracleKind.Bytecode ? b[p + 1] : -1;
    ev.bci[i] = bci === 0xffff ? -1 : bci;
    ev.method[i] = method;
  }
  return ev;
}
