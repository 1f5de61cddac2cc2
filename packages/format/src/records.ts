/** The record types of format 1.0 (docs/trace-format.md §4): ids, names, layouts, typed payloads. */
import { LayoutField, parseLayout } from './layout';

export const RecordType = {
  CALIBRATION: 1,
  VM_INFO: 2,
  VM_START: 3,
  VM_END: 4,
  AGENT_LOG: 5,
  DROPPED: 6,
  INTERP_CODE: 10,
  CODELET: 11,
  DISPATCH_TABLE: 12,
  CODE_BLOB: 20,
  NMETHOD_LOAD: 21,
  NMETHOD_UNLOAD: 22,
  CODE_PATCH: 23,
  CODE_SNAPSHOT: 24,
  CLASS: 30,
  METHOD: 31,
  METHOD_RUNS: 32,
  THREAD_START: 40,
  THREAD_END: 41,
} as const;
export type RecordTypeName = keyof typeof RecordType;

/** Canonical layouts, exactly as the agent writes them into the file header. */
export const CANONICAL_LAYOUTS: Record<RecordTypeName, string> = {
  CALIBRATION: 'mono_ns:w64 realtime_ns:w64',
  VM_INFO:
    'pid:u32 java_version:str vm_version:str vm_vendor:str vm_name:str java_home:str agent_version:str code_low:u64 code_high:u64 flags:[name:str value:str] heaps:[low:u64 high:u64 committed_high:u64 name:str]',
  VM_START: '',
  VM_END: 'records:u64 bytes:u64 stalls:u64 stall_ns:u64 dropped:u64 dropped_bytes:u64 patch_scans:u64 errors:u32',
  AGENT_LOG: 'level:u8 component:str message:str',
  DROPPED: 'count:u64 bytes:u64 first_seq:u64',
  INTERP_CODE: 'base:u64 code:bytes',
  CODELET: 'begin:u64 end:u64 bytecode:i32 kind:u8 description:str',
  DISPATCH_TABLE: 'table:u8 source:u8 address:u64 states:u16 per_state:u16 entries:[target:u64]',
  CODE_BLOB: 'address:u64 size:u32 name:str code:bytes',
  NMETHOD_LOAD:
    'method:u32 code_begin:u64 code_size:u32 blob_begin:u64 insts_begin:u64 stub_begin:u64 entry:u64 verified_entry:u64 osr_entry:u64 compile_id:i32 level:i8 osr_bci:i32 code:bytes pcs:[pc:u64 frames:[method:u32 bci:i32]] consts_begin:u64 consts:bytes',
  NMETHOD_UNLOAD: 'method:u32 code_begin:u64 last_seen:w64',
  CODE_PATCH: 'code_begin:u64 address:u64 bytes:bytes since:w64',
  CODE_SNAPSHOT: 'code_begin:u64 code:bytes',
  CLASS: 'class_id:u32 loader:u32 source:u8 name:str bytes:bytes',
  METHOD: 'method:u32 class_id:u32 loader:u32 class_name:str name:str signature:str modifiers:u32',
  METHOD_RUNS: 'classes:[class_id:u32 methods:[name:str signature:str state:u8 invocations:u32 bytecodes:bytes]]',
  THREAD_START: 'os_tid:u32 java_tid:u64 daemon:u8 name:str',
  THREAD_END: 'os_tid:u32 java_tid:u64',
};

/** The canonical layouts, parsed. */
export const CANONICAL_FIELDS: Record<RecordTypeName, LayoutField[]> = Object.fromEntries(
  (Object.keys(CANONICAL_LAYOUTS) as RecordTypeName[]).map((n) => [n, parseLayout(CANONICAL_LAYOUTS[n])]),
) as Record<RecordTypeName, LayoutField[]>;

/**
 * Fields appended to a canonical layout by a minor version, which files of an earlier minor version lack (their
 * payloads then have no such property): the number of trailing fields of each layout that a reader does not
 * require. 1.1 appended CODE_PATCH.since; 1.3 NMETHOD_LOAD.consts_begin and consts; 1.5 NMETHOD_UNLOAD.last_seen.
 */
export const APPENDED_FIELDS: Partial<Record<RecordTypeName, number>> = { CODE_PATCH: 1, NMETHOD_LOAD: 2, NMETHOD_UNLOAD: 1 };

/** The fields every file's layout of a type must start with (the canonical ones less those appended later). */
export const REQUIRED_FIELDS: Record<RecordTypeName, LayoutField[]> = Object.fromEntries(
  (Object.keys(CANONICAL_FIELDS) as RecordTypeName[]).map((n) => [n, CANONICAL_FIELDS[n].slice(0, CANONICAL_FIELDS[n].length - (APPENDED_FIELDS[n] ?? 0))]),
) as Record<RecordTypeName, LayoutField[]>;

export const RECORD_NAMES: ReadonlyMap<number, RecordTypeName> = new Map(
  (Object.entries(RecordType) as [RecordTypeName, number][]).map(([n, id]) => [id, n]),
);

/** Record flag bit 0: describes something that existed before the record's tsc. */
export const FLAG_REPLAY = 1;

export interface Calibration { mono_ns: bigint; realtime_ns: bigint }
export interface VmInfo {
  pid: number; java_version: string; vm_version: string; vm_vendor: string; vm_name: string; java_home: string;
  agent_version: string; code_low: number; code_high: number;
  flags: { name: string; value: string }[];
  heaps: { low: number; high: number; committed_high: number; name: string }[];
}
export interface VmEnd {
  records: number; bytes: number; stalls: number; stall_ns: number; dropped: number; dropped_bytes: number;
  patch_scans: number; errors: number;
}
export interface AgentLog { level: number; component: string; message: string }
export interface Dropped { count: number; bytes: number; first_seq: number }
export interface InterpCode { base: number; code: Uint8Array }
export interface Codelet { begin: number; end: number; bytecode: number; kind: number; description: string }
export interface DispatchTable { table: number; source: number; address: number; states: number; per_state: number; entries: { target: number }[] }
export interface CodeBlob { address: number; size: number; name: string; code: Uint8Array }
export interface PcStackFrame { method: number; bci: number }
export interface PcDesc { pc: number; frames: PcStackFrame[] }
export interface NmethodLoad {
  method: number; code_begin: number; code_size: number; blob_begin: number; insts_begin: number; stub_begin: number;
  entry: number; verified_entry: number; osr_entry: number; compile_id: number; level: number; osr_bci: number;
  code: Uint8Array; pcs: PcDesc[];
  /** since 1.3: the constants section's address (0 unknown) and bytes (C2's jump tables); absent in older files */
  consts_begin?: number; consts?: Uint8Array;
}
export interface NmethodUnload {
  method: number; code_begin: number;
  /** since 1.5: tsc of the last scan that found the nmethod alive when the agent found it dead by scanning (its
   * code may have been replaced from then on), 0 when reported as it happened; absent in earlier files */
  last_seen?: bigint;
}
export interface CodePatch { code_begin: number; address: number; bytes: Uint8Array; /** since 1.1: tsc when the scan before the one that saw the change began (absent in 1.0 files) */ since?: bigint }
export interface CodeSnapshot { code_begin: number; code: Uint8Array }
export interface ClassRec { class_id: number; loader: number; source: number; name: string; bytes: Uint8Array }
export interface MethodRec { method: number; class_id: number; loader: number; class_name: string; name: string; signature: string; modifiers: number }
/** METHOD_RUNS.state bits: what the VM had made for a method by VM death. */
export const MethodRunState = { COUNTERS: 1, METHOD_DATA: 2, CODE: 4 } as const;
export interface MethodRun {
  name: string; signature: string; state: number; invocations: number;
  /** its bytecodes as they were at VM death, with the interpreter's in-place rewrites (fast_agetfield, ...) */
  bytecodes: Uint8Array;
}
/** since 1.4: per recorded class, the methods the VM says ran (every other method of a listed class did not) */
export interface MethodRuns { classes: { class_id: number; methods: MethodRun[] }[] }
export interface ThreadStart { os_tid: number; java_tid: number; daemon: number; name: string }
export interface ThreadEnd { os_tid: number; java_tid: number }

/** Payload type of each known record type. */
export interface PayloadOf {
  CALIBRATION: Calibration; VM_INFO: VmInfo; VM_START: Record<string, never>; VM_END: VmEnd; AGENT_LOG: AgentLog;
  DROPPED: Dropped; INTERP_CODE: InterpCode; CODELET: Codelet; DISPATCH_TABLE: DispatchTable; CODE_BLOB: CodeBlob;
  NMETHOD_LOAD: NmethodLoad; NMETHOD_UNLOAD: NmethodUnload; CODE_PATCH: CodePatch; CODE_SNAPSHOT: CodeSnapshot;
  CLASS: ClassRec; METHOD: MethodRec; METHOD_RUNS: MethodRuns; THREAD_START: ThreadStart; THREAD_END: ThreadEnd;
}

/** CODELET.kind values. */
export const CodeletKind = ['other', 'bytecode', 'method-entry', 'return-entry', 'exception', 'deopt', 'native-support', 'error-exit'] as const;
/** DISPATCH_TABLE.table values. */
export const DispatchTableKind = ['active', 'normal', 'safepoint', 'method-entry'] as const;
/** CLASS.source values. */
export const ClassSource = ['class-file-load-hook', 'reconstructed', 'redefined'] as const;

/** One record as the reader yields it. `payload` is typed for §4's types (see `RecordOf` / `isRecord`). */
export interface TraceRecord<P = unknown> {
  seq: number;
  tsc: bigint;
  type: number;
  /** The name from the file's type table (`type<N>` for a type missing from the table). */
  typeName: string;
  flags: number;
  /** Byte offset of the record in the file. */
  offset: number;
  /** Total size including the 28-byte record header. */
  size: number;
  payload: P;
}

export type RecordOf<K extends RecordTypeName> = TraceRecord<PayloadOf[K]> & { typeName: K };
export type KnownRecord = { [K in RecordTypeName]: RecordOf<K> }[RecordTypeName];
/** A record of a type this library does not type: decoded generically by the file's layout. */
export type GenericRecord = TraceRecord<Record<string, unknown>>;

export type CalibrationRecord = RecordOf<'CALIBRATION'>;
export type VmInfoRecord = RecordOf<'VM_INFO'>;
export type VmStartRecord = RecordOf<'VM_START'>;
export type VmEndRecord = RecordOf<'VM_END'>;
export type AgentLogRecord = RecordOf<'AGENT_LOG'>;
export type DroppedRecord = RecordOf<'DROPPED'>;
export type InterpCodeRecord = RecordOf<'INTERP_CODE'>;
export type CodeletRecord = RecordOf<'CODELET'>;
export type DispatchTableRecord = RecordOf<'DISPATCH_TABLE'>;
export type CodeBlobRecord = RecordOf<'CODE_BLOB'>;
export type NmethodLoadRecord = RecordOf<'NMETHOD_LOAD'>;
export type NmethodUnloadRecord = RecordOf<'NMETHOD_UNLOAD'>;

/** When an nmethod's life ended as far as a reader can tell: NMETHOD_UNLOAD.last_seen if set, else the record's tsc. */
export function unloadTime(payload: NmethodUnload, recordTsc: number): number {
  return payload.last_seen ? Number(payload.last_seen) : recordTsc;
}
export type CodePatchRecord = RecordOf<'CODE_PATCH'>;
export type CodeSnapshotRecord = RecordOf<'CODE_SNAPSHOT'>;
export type ClassRecord = RecordOf<'CLASS'>;
export type MethodRecord = RecordOf<'METHOD'>;
export type MethodRunsRecord = RecordOf<'METHOD_RUNS'>;
export type ThreadStartRecord = RecordOf<'THREAD_START'>;
export type ThreadEndRecord = RecordOf<'THREAD_END'>;

/**
 * Narrows a record to a known type. True only when the file's type table gave `type` its canonical id and
 * name (the reader has then checked the layout carries every typed field).
 */
export function isRecord<K extends RecordTypeName>(r: TraceRecord, name: K): r is RecordOf<K> {
  return r.typeName === name && r.type === RecordType[name];
}
