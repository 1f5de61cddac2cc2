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
parentPort.postMessage({ ready: true });
parentPort.on('message', (part) => {
  // the part and the 64 KiB the walk may read ahead (a stream may be larger than one buffer can hold)
  const bytes = readRange(part.file, part.begin, part.end + (64 << 10));
  let blocks = 0;
  const sink = { block() { blocks++; }, partial() {}, enable() {}, disable() {}, gap() {} };
  const flow = new dec.FlowDecoder(model.image, sink, callees);
  const st = flow.decode(bytes, { retcomp: sb.returnCompression, timing: sb.timing, begin: 0, end: part.end - part.begin, endIp: part.endIp, lookahead: 64 << 10, file: path.basename(part.file), streamOffset: part.begin });
  parentPort.postMessage({ blocks, insns: st.insns, gaps: st.gaps });
});

/** Bytes [begin, end) of a file (fewer at its end). */
function readRange(file, begin, end) {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = new Uint8Array(Math.max(0, Math.min(end, fs.fstatSync(fd).size) - begin));
    for (let done = 0; done < buf.length; ) {
      const n = fs.readSync(fd, buf, done, buf.length - done, begin + done);
      if (n <= 0) return buf.subarray(0, done);
      done += n;
    }
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}
