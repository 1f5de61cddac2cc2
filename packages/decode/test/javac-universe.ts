/** Test helper: Java sources compiled with javac into a MethodUniverse over a model that holds only their classes. */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forEachInstruction } from '@jportal/classfile';
import { JvmModel, MethodUniverse } from '../src';

export const haveJavac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).status === 0;

/**
 * `sources`: file name -> source; `classes`: the classes to load (by name); `javaFeature`: the traced JVM's release
 * the model names (0: unknown). insns(cls, name): the method's opcodes.
 */
export function compileUniverse(sources: Record<string, string>, classes: string[], javaFeature = 0) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-javac-'));
  for (const [f, src] of Object.entries(sources)) fs.writeFileSync(path.join(dir, f), src);
  const r = spawnSync('javac', ['--release', '17', '-d', dir, ...Object.keys(sources).map((f) => path.join(dir, f))], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  const bytes = new Map<string, Uint8Array>();
  for (const c of classes) bytes.set(`0:${c}`, new Uint8Array(fs.readFileSync(path.join(dir, `${c}.class`))));
  fs.rmSync(dir, { recursive: true, force: true });
  const model = { methods: new Map(), classes: bytes, javaFeature } as unknown as JvmModel;
  const universe = new MethodUniverse(model);
  const insns = (cls: string, name: string) => {
    const id = [...model.methods].find(([, m]) => m.className === cls && m.name === name)![0];
    const code = universe.byId.get(id)!.code!;
    const out: number[] = [];
    forEachInstruction(code, (bci) => void out.push(code[bci]));
    return out;
  };
  return { model, universe, insns };
}
