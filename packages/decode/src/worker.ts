/** Worker thread of decodeTraceParallel: loads the code image once, then decodes the parts it is sent. */
import * as fs from 'fs';
import * as path from 'path';
import { parentPort, workerData } from 'worker_threads';
import { FlowDecoder } from './flow';
import { MethodUniverse } from './attribute';
import { invokeCallees } from './callees';
import { JavaEventBuilder } from './java';
import { loadTrace } from './load';
import type { PartResult, PartTask } from './parallel';

const { dir, patchLead } = workerData as { dir: string; patchLead?: number };
const model = loadTrace(dir, patchLead === undefined ? {} : { patchLead });
const files = new Map<string, Uint8Array>();
// what call sites in compiled code can reach (the class files, parsed once per worker)
const callees = invokeCallees(model.image, new MethodUniverse(model));

parentPort!.on('message', (t: PartTask) => {
  try {
    let bytes = files.get(t.file);
    if (!bytes) files.set(t.file, (bytes = new Uint8Array(fs.readFileSync(path.join(dir, t.file)))));
    const t0 = Date.now();
    const java = new JavaEventBuilder(model);
    const flow = new FlowDecoder(model.image, java, callees);
    const sb = model.sideband!;
    flow.decode(bytes, { retcomp: sb.returnCompression, timing: sb.timing, begin: t.begin, end: t.end, endIp: t.endIp, noSync: t.noSync, lookahead: t.lookahead, file: t.file });
    const columns: Record<string, ArrayBuffer> = {};
    const transfer: ArrayBuffer[] = [];
    // each column is its own buffer (from offset 0, with room past the length): handed over, not copied
    for (const c of java.events.columns()) {
      const buffer = c.data.buffer as ArrayBuffer;
      columns[c.name] = buffer;
      transfer.push(buffer);
    }
    const r: PartResult = { id: t.id, columns, length: java.events.length, flow: flow.stats, java: java.stats, ms: Date.now() - t0 };
    parentPort!.postMessage(r, transfer);
  } catch (e) {
    parentPort!.postMessage({ id: t.id, error: `${t.file} [${t.begin}, ${t.end}): ${(e as Error).stack ?? e}` });
  }
});
