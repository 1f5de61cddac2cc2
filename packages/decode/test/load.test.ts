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
