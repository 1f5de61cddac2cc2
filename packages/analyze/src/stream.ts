/**
 * A trace analysed while it is decoded, on two threads: a worker decodes, refines and converts the events a window
 * at a time (stream-worker.ts: what loadTraceWindows does), and this thread walks each window through the passes
 * of the read as it comes (PassRunner), instead of spilling every window to disk and reading it all back after.
 * On two cores the decoding and the walk overlap; nothing goes to disk; memory holds a few windows.
 *
 * What the passes see differs from a spilled analysis only in time: when they are made, the method table is
 * empty and every thread has 0 events; the table grows as windows name new methods, and a thread's length as its
 * windows come (profiles.ts' passes take both). The threads come in order, each walked once; the clock's time 0
 * must be known before the first event (the capture's start: `startTsc`). A window is walked as it comes (no pass
 * needs to know whether it is its thread's last: the thread's end comes after it), and its buffers go back to the
 * worker once the next one has been walked, to be filled again (fresh memory costs a page fault per 4 KiB here).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as v8 from 'v8';
import { MessageChannel, Worker } from 'worker_threads';
import { DecodeError, DecodedThread } from '@jportal/decode';
import { TraceErrorCode, TraceFormatError } from '@jportal/format';
import type { OrphanReport, ReconstructReport } from '@jportal/reconstruct';
import type { RecoveryStats } from '@jportal/recover';
import { analyzeWindowEvents, ClassIndex, remakeMethod, TraceLoadOptions, windowBuffers } from './load';
import { EventWindow, ThreadInfo, WindowedAnalysis } from './model';
import { StreamControl, StreamMessage, StreamWorkerData } from './stream-protocol';
import { PassRunner, WalkPass } from './walk';

export interface StreamLoadOptions extends Omit<TraceLoadOptions, 'reference'> {
  /** events per window (default analyzeWindowEvents()) */
  windowEvents?: number;
}

/** A streamed analysis: its threads and methods grow as the read goes; the facts of decoding are there after it. */
export interface StreamedTraceAnalysis extends WindowedAnalysis {
  /** per thread (same order), as loadTraceWindows has them */
  orphans: (OrphanReport | undefined)[];
  reconstruction: (ReconstructReport | undefined)[];
  recovery: (RecoveryStats | undefined)[];
  /** the decoder's statistics per thread (without events) */
  decoded: Omit<DecodedThread, 'events'>[];
  /** windows per thread */
  windowCounts: number[];
}

/** The worker's script: the compiled one next to this module (from sources run by ts-jest, the package's dist/). */
function workerScript(): string {
  const here = path.join(__dirname, 'stream-worker.js');
  return fs.existsSync(here) ? here : path.join(__dirname, '..', 'dist', 'stream-worker.js');
}

/**
 * The error a worker's `error` message stands for: of the same class where the CLI tells errors apart by class
 * (DecodeError, TraceFormatError), else an Error of the same name; the fields and the stack as they were.
 */
function errorOf(m: Extract<StreamMessage, { type: 'error' }>): Error {
  const p = m.props;
  const e =
    m.name === 'DecodeError' ? new DecodeError(m.message, Number(p.exitCode))
    : m.name === 'TraceFormatError' ? new TraceFormatError(p.code as TraceErrorCode, String(p.file), Number(p.offset), String(p.detail))
    : new Error(m.message);
  Object.assign(e, p);
  e.name = m.name;
  e.message = m.message;
  if (m.stack) e.stack = m.stack;
  return e;
}

export class TraceStream {
  private readonly control = new Int32Array(new SharedArrayBuffer(4 * 2));
  private readonly worker: Worker;
  /** this thread's end of the channel that hands walked windows' buffers back to the worker */
  private readonly recycle: MessageChannel['port1'];
  private readonly queue: StreamMessage[] = [];
  private classes: ClassIndex | undefined;
  private runner: PassRunner | undefined;
  /** the thread being walked (-1: none) */
  private current = -1;
  /** the window walked last: the passes may read it until the next one has been walked (or the thread ends) */
  private walked: EventWindow | undefined;
  private ended = false;
  /** the worker sent `end` (its exit follows, perhaps before the read has taken every message) */
  private endSent = false;
  private failed: Error | undefined;
  private onStart: ((a: StreamedTraceAnalysis) => void) | undefined;
  private onEnd: ((results: unknown[]) => void) | undefined;
  private onFail: ((e: Error) => void) | undefined;
  analysis: StreamedTraceAnalysis | undefined;

  private constructor(
    private readonly dir: string,
    private readonly opts: StreamLoadOptions,
  ) {
    const channel = new MessageChannel();
    this.recycle = channel.port1;
    const data: StreamWorkerData = {
      dir,
      opts: { tids: opts.tids, span: opts.span, workers: opts.workers, recover: opts.recover, reconstruct: opts.reconstruct, classpath: opts.classpath, fromVmStart: opts.fromVmStart, windowEvents: opts.windowEvents ?? analyzeWindowEvents() },
      control: this.control.buffer as SharedArrayBuffer,
      recycle: channel.port2,
    };
    // (as much heap as this thread may have: the decoder's model and a window or two)
    const heapMb = Math.floor(v8.getHeapStatistics().heap_size_limit / 2 ** 20);
    this.worker = new Worker(workerScript(), { workerData: data, transferList: [channel.port2], resourceLimits: { maxOldGenerationSizeMb: heapMb } });
    this.worker.on('message', (m: StreamMessage) => this.receive(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => {
      if (!this.ended && !this.endSent) this.fail(new Error(`analyze: the decoding thread exited (code ${code}) before the end of the trace`));
    });
  }

  /** Starts decoding `dir` in a worker; resolves once the model is loaded (the analysis' threads are known). */
  static open(dir: string, opts: StreamLoadOptions = {}): Promise<TraceStream> {
    const s = new TraceStream(dir, opts);
    return new Promise((resolve, reject) => {
      s.onStart = () => resolve(s);
      s.onFail = reject;
    });
  }

  /**
   * Walks every window through `passes` as it is decoded; resolves with their results (PassRunner.finish) once
   * the last thread is done. On failure (decoding or a pass) the passes are aborted and the worker stopped.
   */
  read(passes: WalkPass<unknown>[]): Promise<unknown[]> {
    if (this.runner) throw new Error('analyze: a streamed trace is read once');
    this.runner = new PassRunner(passes);
    return new Promise((resolve, reject) => {
      this.onEnd = resolve;
      this.onFail = reject;
      if (this.failed) return reject(this.failed);
      // (what came before the read began)
      for (const m of this.queue.splice(0)) if (!this.failed) this.handle(m);
    });
  }

  /** Stops the worker (when the caller gives up before the end). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    Atomics.store(this.control, StreamControl.Cancel, 1);
    Atomics.notify(this.control, StreamControl.Walked);
    this.recycle.close();
    void this.worker.terminate();
  }

  private receive(m: StreamMessage): void {
    if (this.failed) return;
    if (m.type === 'end') this.endSent = true;
    if (m.type === 'start' || m.type === 'error' || this.runner) this.handle(m);
    else this.queue.push(m);
  }

  private handle(m: StreamMessage): void {
    try {
      switch (m.type) {
        case 'start':
          return this.start(m);
        case 'window':
          return this.window(m);
        case 'done':
          return this.done(m);
        case 'end':
          return this.end();
        case 'error':
          return this.fail(errorOf(m));
      }
    } catch (e) {
      this.fail(e as Error);
    }
  }

  private start(m: Extract<StreamMessage, { type: 'start' }>): void {
    const problems = [...m.problems];
    this.classes = new ClassIndex(m.classes, this.opts.classpath, problems);
    const threads: ThreadInfo[] = m.threads.map((t) => ({ ...t, length: 0 }));
    this.analysis = {
      source: { kind: 'trace', dir: this.dir },
      methods: [],
      threads,
      tscPerNs: m.tscPerNs,
      startTsc: m.startTsc,
      problems,
      windows: () => {
        throw new Error('analyze: a streamed trace is read once, as it is decoded');
      },
      orphans: [], reconstruction: [], recovery: [], decoded: [], windowCounts: [],
    };
    this.onStart?.(this.analysis);
  }

  /** begins thread k when it is the next one */
  private enter(k: number): void {
    if (this.current === k) return;
    const a = this.analysis!;
    if (this.current !== -1 || k !== a.windowCounts.length) throw new Error(`analyze: the decoding thread sent thread ${k} out of order`);
    this.current = k;
    this.runner!.beginThread(k);
  }

  private window(m: Extract<StreamMessage, { type: 'window' }>): void {
    const a = this.analysis!;
    for (const key of m.methods) a.methods.push(remakeMethod(this.classes!, key));
    this.enter(m.k);
    const info = a.threads[m.k];
    const w: EventWindow = { name: info.name, tid: info.tid, javaTid: info.javaTid, length: m.length, base: info.length, ...m.columns };
    info.length += m.length;
    this.walk(w);
  }

  private walk(w: EventWindow): void {
    this.runner!.window(w);
    // (the window before is let go: a pass reads the previous window only in its window() callback)
    this.handBack();
    this.walked = w;
    Atomics.add(this.control, StreamControl.Walked, 1);
    Atomics.notify(this.control, StreamControl.Walked);
  }

  /** hands the window walked last back to the worker, to be filled again (its columns here are detached) */
  private handBack(): void {
    const w = this.walked;
    this.walked = undefined;
    const b = w && windowBuffers(w);
    if (b) this.recycle.postMessage(b, Object.values(b));
  }

  private done(m: Extract<StreamMessage, { type: 'done' }>): void {
    const a = this.analysis!;
    this.enter(m.k);
    const info = a.threads[m.k];
    info.name = m.name;
    info.javaTid = m.javaTid;
    this.runner!.endThread();
    this.handBack();
    this.current = -1;
    a.windowCounts.push(m.facts.windows);
    a.orphans.push(m.facts.orphans);
    a.reconstruction.push(m.facts.reconstruction);
    a.recovery.push(m.facts.recovery);
    a.decoded.push(m.decoded);
    this.opts.onThread?.(m.name, a.windowCounts.length, a.threads.length);
  }

  private end(): void {
    const a = this.analysis!;
    if (a.windowCounts.length !== a.threads.length) throw new Error(`analyze: the decoding thread ended after ${a.windowCounts.length} of ${a.threads.length} threads`);
    this.ended = true;
    this.recycle.close();
    this.onEnd?.(this.runner!.finish());
  }

  private fail(e: Error): void {
    if (this.failed) return;
    this.failed = e;
    try {
      this.runner?.abort();
    } finally {
      this.close();
      this.onFail?.(e);
    }
  }
}
