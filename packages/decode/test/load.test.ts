/**
 * What loadTrace makes of CLASS records' times: a class recorded when it was loaded (or prepared) was loaded at
 * the record's tsc; one listed at VMInit (REPLAY) at some unknown earlier time, which the twin ranking must not
 * take for "not loaded yet" (attribute.ts rankOf).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FLAG_REPLAY, MetaWriter } from '@jportal/format';
import { loadTrace } from '../src';

describe('class load times', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-load-'));
    const w = MetaWriter.toFile(path.join(dir, 'meta.jpt'));
    const bytes = new Uint8Array([0xca, 0xfe, 0xba, 0xbe]);
    w.write('VM_START', {}, 100n);
    w.write('CLASS', { class_id: 0, loader: 0, source: 0, name: 'Early', bytes }, 500n, FLAG_REPLAY);
    w.write('CLASS', { class_id: 1, loader: 7, source: 0, name: 'Late', bytes }, 600n);
    // a second record of a class (a redefinition) does not move its load time
    w.write('CLASS', { class_id: 1, loader: 7, source: 2, name: 'Late', bytes }, 900n);
    // at VM death: of Early, only run() ran; of Late, nothing; class id 9 has no CLASS record
    w.write('METHOD_RUNS', { classes: [{ class_id: 0, methods: [{ name: 'run', signature: '()V', state: 1, invocations: 4, bytecodes: new Uint8Array([0xb1]) }] }, { class_id: 1, methods: [] }, { class_id: 9, methods: [] }] }, 1000n);
    w.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('REPLAY classes have no known load time; others the first record\'s tsc', () => {
    const model = loadTrace(dir);
    expect(model.classLoadTsc.get('0:Early')).toBe(-Infinity);
    expect(model.classLoadTsc.get('7:Late')).toBe(600);
    expect(model.classes.size).toBe(2);
  });

  test('METHOD_RUNS: the methods the VM says ran, by class key and name + descriptor', () => {
    const model = loadTrace(dir);
    expect([...model.methodRuns.keys()].sort()).toEqual(['0:Early', '7:Late']);
    expect(model.methodRuns.get('0:Early')?.get('run()V')).toMatchObject({ state: 1, invocations: 4 });
    expect(model.methodRuns.get('7:Late')?.size).toBe(0);
    expect(model.problems).toContainEqual(expect.stringContaining('class id 9'));
  });
});

/**
 * A long run makes new adapters in space freed by flushed nmethods (luindex full: 25 I2C/C2I adapters recorded at
 * 374 s where nmethods had lived from 21 s to 226 s). A blob is taken to have lived from the start of the run
 * (those made before the agent started are recorded at its start), but not from before an nmethod that held its
 * addresses was unloaded: else both are the code there while the nmethod lived, and the decoder reads the wrong one.
 */
describe('code lifetimes: a blob made where an nmethod was', () => {
  let dir: string;
  const nmBegin = 0x7f0000002000;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-lifetimes-'));
    const w = MetaWriter.toFile(path.join(dir, 'meta.jpt'));
    w.write('VM_START', {}, 100n);
    w.write('CODE_BLOB', { address: 0x7f0000001000, size: 4, name: 'StubRoutines (1)', code: new Uint8Array([0x90, 0x90, 0xc3, 0xcc]) }, 150n, FLAG_REPLAY);
    w.write('METHOD', { method: 0, class_id: 0xffffffff, loader: 0, class_name: 'Hot', name: 'run', signature: '()V', modifiers: 9 }, 160n);
    w.write('NMETHOD_LOAD', {
      method: 0, code_begin: nmBegin, code_size: 64, blob_begin: nmBegin - 0x80, insts_begin: nmBegin, stub_begin: nmBegin + 48,
      entry: nmBegin, verified_entry: nmBegin + 16, osr_entry: 0, compile_id: 7, level: 4, osr_bci: -1,
      code: new Uint8Array(64).fill(0x90), pcs: [], consts_begin: 0, consts: new Uint8Array(0),
    }, 200n);
    w.write('NMETHOD_UNLOAD', { method: 0, code_begin: nmBegin, last_seen: 0n }, 300n);
    // the adapter begins before the nmethod's code (where its header was) and ends inside it
    w.write('CODE_BLOB', { address: nmBegin - 0x40, size: 0x80, name: 'I2C/C2I adapters(0xbb)', code: new Uint8Array(0x80).fill(0xcc) }, 400n);
    w.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the blob is the code there from the unload on, the nmethod before it; a blob with no such past from the start', () => {
    const { image } = loadTrace(dir);
    const adapter = image.sections.find((s) => s.name.startsWith('I2C/C2I adapters'))!;
    const nm = image.sections.find((s) => s.name.startsWith('Hot.run'))!;
    expect([adapter.validFrom, adapter.validTo]).toEqual([300, Infinity]);
    expect([nm.validFrom, nm.validTo]).toEqual([0, 300]);
    // an address both held: the nmethod while it lived (before its load record too), the adapter after, even
    // before the adapter's own record
    expect(image.find(nmBegin + 8, 250)).toBe(nm.id);
    expect(image.find(nmBegin + 8, 150)).toBe(nm.id);
    expect(image.find(nmBegin + 8, 350)).toBe(adapter.id);
    expect(image.find(nmBegin + 8, 500)).toBe(adapter.id);
    expect(image.sections.find((s) => s.name === 'StubRoutines (1)')!.validFrom).toBe(0);
  });
});
