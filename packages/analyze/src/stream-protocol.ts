/** What the two threads of a streamed analysis (stream.ts, stream-worker.ts) say to each other. */
import type { DecodedThread } from '@jportal/decode';
import type { ThreadFacts, ThreadWho, TraceLoadOptions } from './load';
import type { MessagePort } from 'worker_threads';
import type { ThreadEvents } from './model';

/** Windows the decoding thread may be ahead of the walk (posted, not walked yet). */
export const IN_FLIGHT = 2;

/**
 * Slots of the shared Int32Array between the threads. Walked: windows the walk has taken (the analysing thread
 * adds, and notifies). Cancel: non-zero when the analysis was called off (the decoding thread stops at its next window).
 */
export const StreamControl = { Walked: 0, Cancel: 1 } as const;

export interface StreamWorkerData {
  dir: string;
  /** decodeInWindows' options that cross threads (no callbacks, no reference recording) */
  opts: Pick<TraceLoadOptions, 'tids' | 'span' | 'workers' | 'recover' | 'reconstruct' | 'classpath' | 'fromVmStart'> & { windowEvents: number };
  /** a SharedArrayBuffer of StreamControl slots */
  control: SharedArrayBuffer;
  /** where the analysing thread hands back the buffers of windows it has walked (WindowBuffers), to be filled again */
  recycle: MessagePort;
}

/** Windows' buffers the decoding thread keeps for reuse, at most (more are let go). */
export const RECYCLED_MAX = 2;

/** A method as the trace names it: the analysing thread makes its AnalysisMethod from the class bytes again. */
export interface MethodKey {
  className: string;
  name: string;
  signature: string;
  loader?: number;
}

/** A window's columns, as ThreadEvents has them. */
export type WindowColumns = Pick<ThreadEvents, 'kind' | 'method' | 'bci' | 'opcode' | 'tsc' | 'endTsc' | 'origin' | 'tier'>;

export type StreamMessage =
  /** the model is loaded: the threads to come (in this order), the class bytes, the problems of loading */
  | { type: 'start'; threads: ThreadWho[]; classes: Map<string, Uint8Array> | undefined; problems: string[]; tscPerNs: number; startTsc?: number }
  /** the next window of thread k; `methods`: the methods given ids since the last window (ids in order) */
  | { type: 'window'; k: number; methods: MethodKey[]; length: number; columns: WindowColumns }
  /** thread k is done: its name as the decoder has it, what refinement did, the decoder's statistics */
  | { type: 'done'; k: number; name: string; javaTid: number; facts: ThreadFacts; decoded: Omit<DecodedThread, 'events'> }
  | { type: 'end' }
  /** the decoding thread failed: the error's class name, message, stack and own fields (code, file, offset, exitCode, ...) */
  | { type: 'error'; name: string; message: string; stack?: string; props: Record<string, string | number | boolean> };
