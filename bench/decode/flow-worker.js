// Worker of bench/decode/run.js's flow-walk measurement: loads the trace's code image once (and what call sites can
// reach, as decodeTrace does), says "ready", then walks the stream parts it is sent with a sink that only counts
// blocks (@jportal/decode FlowDecoder: PT -> the blocks that ran, the analogue of libipt's pt_blk_next).
'use strict';
const fs = require('fs');
const path = require('path');
const { parentPort, workerData } = require('worker_threads');
const dec = require(workerData.decodeDist);

const model = dec.loadTrace(workerData.dir);
const sb = model.sideband;
const callees = dec.invokeCallees(model.image, new dec.MethodUniverse(model));
const files = new Map();
parentPort.postMessage({ ready: true });
parentPort.on('message', (part) => {
  let bytes = files.get(part.file);
  if (!bytes) files.set(part.file, (bytes = new Uint8Array(fs.readFileSync(part.file))));
  let blocks = 0;
  const sink = { block() { blocks++; }, partial() {}, enable() {}, disable() {}, gap() {} };
  const flow = new dec.FlowDecoder(model.image, sink, callees);
  const st = flow.decode(bytes, { retcomp: sb.returnCompression, timing: sb.timing, begin: part.begin, end: part.end, endIp: part.endIp, lookahead: 64 << 10, file: path.basename(part.file) });
  parentPort.postMessage({ blocks, insns: st.insns, gaps: st.gaps });
});
