/**
 * A reference recording's events put in this trace's method ids (src/reference.ts): methods meet by run-independent
 * class name, name and descriptor; a method only the reference names gets a new id in this model.
 */
import { EventStream, type DecodedThread, type DecodedTrace, type JvmModel, type MethodInfo } from '@jportal/decode';
import { referenceEvents, referenceSlice, referenceThreadOf } from '../src/reference';

const BYTECODE = 0;
const OBSERVED = 0;
const info = (className: string, name: string, signature: string): MethodInfo => ({ className, name, signature, classId: 0, loader: 0 });

function model(methods: [number, MethodInfo][], threads: { osTid: number; name: string }[] = []): JvmModel {
  return { methods: new Map(methods), threads: threads.map((t) => ({ ...t, javaTid: 0, startTsc: 0, endTsc: Infinity })) } as unknown as JvmModel;
}

function stream(methods: number[]): EventStream {
  const e = new EventStream(methods.length);
  methods.forEach((m, i) => e.push(BYTECODE, OBSERVED, m, i, 0x00, 100 + i));
  return e;
}

describe('referenceEvents', () => {
  const target = () =>
    model([
      [0, info('Main', 'run', '()V')],
      [1, info('Main$$Lambda$14.0x0000000800c01234', 'run', '()V')],
      [5, info('Util', 'f', '(I)I')],
    ]);
  const reference = {
    model: model([
      [10, info('Main', 'run', '()V')],
      [11, info('Main$$Lambda$14.0x0000000800c0abcd', 'run', '()V')], // the same hidden class, another run's address
      [12, info('Util', 'f', '(J)J')], // an overload the target never named
      [13, info('Boot', 'init', '()V')], // a method only the reference saw
    ]),
    threads: [],
  } as unknown as DecodedTrace;
  const refThread = (methods: number[]) => ({ name: 'main', tid: 1, events: stream(methods) }) as unknown as DecodedThread;

  it('maps methods by class (hidden suffix left out), name and descriptor; the reference stays as it was', () => {
    const m = target();
    const rt = refThread([10, 11, 12, 13, -1, 12, 99]);
    const e = referenceEvents(reference, rt, m);
    expect(Array.from(e.method.subarray(0, e.length))).toEqual([0, 1, 6, 7, -1, 6, -1]);
    // new ids after the model's largest, named as in the reference
    expect(m.methods.get(6)).toMatchObject({ className: 'Util', name: 'f', signature: '(J)J' });
    expect(m.methods.get(7)).toMatchObject({ className: 'Boot', name: 'init' });
    expect(m.methods.size).toBe(5);
    // a copy: the reference thread's own ids are untouched, and its other columns carried over
    expect(Array.from(rt.events.method.subarray(0, 4))).toEqual([10, 11, 12, 13]);
    expect(Array.from(e.bci.subarray(0, e.length))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(e.tsc[3]).toBe(103);
  });

  it('with the cache of a previous call, adds no method twice', () => {
    const m = target();
    const ids = new Map<number, number>();
    const a = referenceEvents(reference, refThread([13, 12]), m, ids);
    const b = referenceEvents(reference, refThread([12, 13, 10]), m, ids);
    expect(Array.from(a.method.subarray(0, a.length))).toEqual([6, 7]);
    expect(Array.from(b.method.subarray(0, b.length))).toEqual([7, 6, 0]);
    expect(m.methods.size).toBe(5);
  });
});

describe('referenceThreadOf', () => {
  const ref = (names: string[]) => ({ threads: names.map((name, i) => ({ name, tid: 100 + i })) }) as unknown as DecodedTrace;

  it('pairs a thread with the namesake at the same place among its namesakes', () => {
    const m = model([], [
      { osTid: 1, name: 'main' },
      { osTid: 2, name: 'worker' },
      { osTid: 3, name: 'worker' },
    ]);
    const r = ref(['worker', 'main', 'worker', 'worker']);
    expect(referenceThreadOf(r, m, { name: 'main', tid: 1 })?.tid).toBe(101);
    expect(referenceThreadOf(r, m, { name: 'worker', tid: 2 })?.tid).toBe(100);
    expect(referenceThreadOf(r, m, { name: 'worker', tid: 3 })?.tid).toBe(102);
    // a thread the model does not list: the first namesake; no namesake at all: none
    expect(referenceThreadOf(r, m, { name: 'worker', tid: 9 })?.tid).toBe(100);
    expect(referenceThreadOf(r, m, { name: 'gc' })).toBeUndefined();
  });
});

describe('referenceSlice', () => {
  /** events at these times */
  const at = (times: number[]) => {
    const e = new EventStream(times.length);
    times.forEach((t) => e.push(BYTECODE, OBSERVED, 0, 0, 0, t));
    return e;
  };
  // the reference thread started at 5,000 and has an event every 10 ticks for 2,000 ticks
  const reference = at(Array.from({ length: 200 }, (_, i) => 5000 + 10 * i));

  it('takes the stretch that ran at the same time since the thread started, a window\'s time more on each side', () => {
    // this thread started at 100,000; the window ran from 600 to 800 ticks after
    const [from, to] = referenceSlice(reference, 5000, at([100600, 100700, 100800]), 100000);
    // 400 .. 1000 ticks after the reference's start: events 40 .. 100
    expect([from, to]).toEqual([40, 101]);
    expect(reference.tsc[from]).toBe(5400);
    expect(reference.tsc[to - 1]).toBe(6000);
  });

  it('a window spanning the whole thread takes the whole reference; unknown starts too', () => {
    expect(referenceSlice(reference, 5000, at([100000, 102000]), 100000)).toEqual([0, 200]);
    expect(referenceSlice(reference, NaN, at([100600, 100800]), 100000)).toEqual([0, 200]);
    expect(referenceSlice(reference, 5000, at([100600, 100800]), Infinity)).toEqual([0, 200]);
    // a window past the reference's end: nothing
    const [from, to] = referenceSlice(reference, 5000, at([109000, 109100]), 100000);
    expect(to - from).toBe(0);
  });
});
