/**
 * Static initializers the VM runs for an instruction that initializes a class (JVMS 5.5): the class's superclasses
 * are initialized first, each once. With the same bytecode in every <clinit> of the chain, attribution named the
 * same one each time (fop: AbstractBaseLayoutManager.<clinit> eight times, its subclasses' never).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forEachInstruction } from '@jportal/classfile';
import { attributeInterpreted, EventStream, JvmModel, MethodUniverse } from '../src';

const SOURCES: Record<string, string> = {
  'A.java': 'class A { static int o = 7; }',
  'B.java': 'class B extends A { static int o = 7; }',
  'C.java': 'class C extends B { static int o = 7; static int v; }',
  'U.java': 'class U { static int use() { return C.v; } }',
};
const haveJavac = spawnSync('sh', ['-c', 'command -v javac'], { encoding: 'utf8' }).status === 0;
if (!haveJavac) console.warn('SKIP attribute-clinit test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
/** EntryClass.Bytecode + ENTRY_FROM_VM (java.ts): a call the VM made */
const FROM_VM = 8;

function load() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jportal-clinit-'));
  for (const [f, src] of Object.entries(SOURCES)) fs.writeFileSync(path.join(dir, f), src);
  const r = spawnSync('javac', ['--release', '17', '-d', dir, ...Object.keys(SOURCES).map((f) => path.join(dir, f))], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  const classes = new Map<string, Uint8Array>();
  for (const c of ['A', 'B', 'C', 'U']) classes.set(`0:${c}`, new Uint8Array(fs.readFileSync(path.join(dir, `${c}.class`))));
  fs.rmSync(dir, { recursive: true, force: true });
  const model = { methods: new Map(), classes } as unknown as JvmModel;
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

(haveJavac ? describe : describe.skip)('static initializers the VM runs', () => {
  test('a getstatic that initializes a class runs its superclasses\' <clinit> first, each once', () => {
    const { model, universe, insns } = load();
    const s = new EventStream();
    let t = 0;
    const run = (ops: number[]) => {
      for (const op of ops) s.push(BYTECODE, INTERPRETER, -1, -1, op, ++t, 0);
    };
    const use = insns('U', 'use');
    const clinit = insns('C', '<clinit>');
    expect(insns('A', '<clinit>')).toEqual(clinit); // the same bytecode: only the VM's rules tell them apart
    s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, FROM_VM);
    run(use.slice(0, 1)); // getstatic C.v: the VM initializes A, B, then C
    for (let k = 0; k < 3; k++) {
      s.push(ENTRY, INTERPRETER, -1, -1, -1, ++t, FROM_VM);
      run(clinit);
    }
    run(use.slice(1));
    const { events } = attributeInterpreted(universe, s);
    const ran: string[] = [];
    for (let i = 0; i < events.length; i++) {
      if (events.kind[i] !== ENTRY) continue;
      const m = model.methods.get(events.method[i]);
      if (m?.name === '<clinit>') ran.push(m.className);
    }
    expect(ran).toEqual(['A', 'B', 'C']);
  });
});
