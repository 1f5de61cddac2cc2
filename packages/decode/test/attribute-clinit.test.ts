/**
 * Static initializers the VM runs for an instruction that initializes a class (JVMS 5.5): the class's superclasses
 * are initialized first, each once. With the same bytecode in every <clinit> of the chain, attribution named the
 * same one each time (fop: AbstractBaseLayoutManager.<clinit> eight times, its subclasses' never).
 */
import { attributeInterpreted, EventStream } from '../src';
import { compileUniverse, haveJavac } from './javac-universe';

const SOURCES: Record<string, string> = {
  'A.java': 'class A { static int o = 7; }',
  'B.java': 'class B extends A { static int o = 7; }',
  'C.java': 'class C extends B { static int o = 7; static int v; }',
  'U.java': 'class U { static int use() { return C.v; } }',
};
if (!haveJavac) console.warn('SKIP attribute-clinit test: no javac on PATH (install openjdk-17-jdk-headless)');

const BYTECODE = 0;
const ENTRY = 1;
const INTERPRETER = 0;
/** EntryClass.Bytecode + ENTRY_FROM_VM (java.ts): a call the VM made */
const FROM_VM = 8;

const load = () => compileUniverse(SOURCES, ['A', 'B', 'C', 'U']);

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
