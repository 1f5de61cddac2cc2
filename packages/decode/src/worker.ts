/** Worker thread of decodeTraceParallel: loads the code image once, then decodes the parts it is sent. */
import * as path from 'path';
import { parentPort, workerData } from 'worker_threads';
import { FlowDecoder } from './flow';
import { MethodUniverse } from './attribute';
import { invokeCallees } from './callees';
import { EventBudgetError } from './events';
import { JavaEventBuilder } from './java';
import { loadTrace } from './load';
import type { PartResult, PartTask } from './parallel';
import { readFileRange } from './split';

const { dir, patchLead } = workerData as { dir: string; patchLead?: number };
const model = loadTrace(dir, patchLead === undefined ? {} : { patchLead });
// what call sites in compiled code can reach (the class files, parsed once per worker)
const callees = invokeCallees(model.image, new MethodUniverse(model));

parentPort!.on('message', (t: PartTask) => {
  try {
    // only the part and its look-ahead are read: a trace's streams together can be larger than memory
    const bytes = readFileRange(path.join(dir, t.file), t.begin, t.end + t.lookahead);
    const t0 = Date.now();
    const java = new JavaEventBuilder(model);
    const flow = new FlowDecoder(model.image, java, callees);
    const sb = model.sideband!;
    const end = t.end - t.begin;
    flow.decode(bytes, { retcomp: sb.returnCompression, timing: sb.timing, begin: 0, end, endIp: t.endIp, noSync: t.noSync, lookahead: bytes.length - end, streamOffset: t.begin, file: t.file });
    const columns: Record<string, ArrayBuffer> = {};
    const transfer: ArrayBuffer[] = [];
    // each column cut to the length (the room past it would wait in the parent until the thread is stitched),
    // then handed over, not copied
    for (const c of java.events.columns()) {
      const buffer = new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength).slice().buffer;
      columns[c.name] = buffer;
      transfer.push(buffer);
    }
    const r: PartResult = { id: t.id, columns, length: java.events.length, flow: flow.stats, java: java.stats, ms: Date.now() - t0 };
    parentPort!.postMessage(r, transfer);
  } catch (e) {
    const tooLarge = e instanceof EventBudgetError ? e.message : undefined;
    parentPort!.postMessage({ id: t.id, error: `${t.file} [${t.begin}, ${t.end}): ${(e as Error).stack ?? e}`, tooLarge });
  }
});
