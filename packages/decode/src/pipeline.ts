/**
 * One thread's events from its Java events, read part by part in stream order: attribution of interpreted code,
 * then completion of compiled frames. Two ways to end:
 * - streaming to a sink: attribution hands on what it has settled after each part, completion goes on from
 *   there and hands its output to the sink, so only a window of the thread is ever held (bounded memory for a
 *   thread of any length);
 * - gathering: attribution reads every part, then completion runs over its whole output into one stream of the
 *   thread's events (two of the thread's streams are held at the end, sized to fit).
 */
import { Attribution, attributedCapacity, AttributionStats, MethodUniverse } from './attribute';
import { completeCompiled, completion, Completion, CompletionStats } from './complete';
import { EventStream } from './events';

/** Receives a thread's events in stream order, in pieces; it reads each piece before it returns. */
export type EventSink = (events: EventStream) => void;

/** Events completion reads at a time when streaming (what it makes from them is handed on after each). */
const COMPLETION_STEP = 1 << 20;

export class ThreadPipeline {
  private attribution: Attribution | undefined;
  private readonly completion: Completion | undefined;
  /** gathering: the Java events of the only part, when one part is all (read at finish, sized exactly) */
  private only: EventStream | undefined;
  private parts = 0;
  /** events made (handed to the sink, or gathered) */
  count = 0;

  /**
   * `universe` undefined: no attribution (the Java events are the thread's events). `sink` undefined: gather;
   * `grow` then projects how many events attribution's output will need (from what was read so far).
   */
  constructor(
    private readonly universe: MethodUniverse | undefined,
    private readonly sink: EventSink | undefined,
    private readonly grow?: (made: number) => number,
  ) {
    if (universe && sink) {
      this.attribution = new Attribution(universe, 1 << 16);
      this.completion = completion(universe, 1 << 16);
    }
  }

  /** The next part of the thread's Java events. */
  feed(part: EventStream): void {
    if (this.sink) {
      if (!this.attribution) this.emit(part);
      else {
        this.attribution.feed(part);
        this.attribution.flushSettled((e) => this.complete(e));
      }
      return;
    }
    // gathering: the first part waits (a thread of one part is attributed into a stream of its exact size)
    if (this.parts++ === 0) {
      this.only = part;
      return;
    }
    if (this.only) this.gather(this.only);
    this.only = undefined;
    this.gather(part);
  }

  /** Ends the thread: the events (gathering; else an empty stream) and the statistics. */
  finish(): { events: EventStream; attribution?: AttributionStats; completion?: CompletionStats } {
    if (this.sink) {
      if (!this.attribution) return { events: new EventStream(0) };
      const r = this.attribution.finish();
      this.complete(r.events);
      const c = this.completion!.finish(); // (the events it kept back, and those it read last)
      if (c.events.length) this.emit(c.events);
      return { events: new EventStream(0), attribution: r.stats, completion: c.stats };
    }
    if (this.only) this.gather(this.only);
    this.only = undefined;
    if (!this.universe) {
      const events = this.stitched ?? new EventStream(0);
      this.count = events.length;
      return { events };
    }
    const r = (this.attribution ?? new Attribution(this.universe, 16)).finish();
    r.events.growHint = undefined;
    r.events.trim();
    const c = completeCompiled(this.universe, r.events);
    this.count = c.events.length;
    return { events: c.events, attribution: r.stats, completion: c.stats };
  }

  /** gathering without attribution: the parts in one stream */
  private stitched: EventStream | undefined;

  private gather(part: EventStream): void {
    if (!this.universe) {
      if (!this.stitched && this.parts === 1) this.stitched = part;
      else (this.stitched ??= new EventStream(part.length)).appendStream(part);
      return;
    }
    if (!this.attribution) {
      const a = (this.attribution = new Attribution(this.universe, attributedCapacity([part])));
      const grow = this.grow;
      if (grow) a.out.growHint = () => grow(a.out.length);
    }
    this.attribution.feed(part);
  }

  private complete(e: EventStream): void {
    const c = this.completion!;
    for (let at = 0; at < e.length; at += COMPLETION_STEP) {
      c.feed(at === 0 && e.length <= COMPLETION_STEP ? e : e.view(at, Math.min(e.length, at + COMPLETION_STEP)));
      c.flush((x) => this.emit(x));
    }
  }

  private emit(e: EventStream): void {
    this.count += e.length;
    this.sink!(e);
  }
}
