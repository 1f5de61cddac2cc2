/**
 * The real agent in real JVMs (JDK 17 and, where installed, Temurin 25): what it records is checked
 * against the JVM's own diagnostic output and against the class bytes it recorded.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findJdks, Jdk } from '../lib/jdks';
import { AGENT, cleanup, EXAMPLES, runWithAgent } from '../lib/run';
import { validateTrace } from '@jportal/format';
import { loadTrace } from '@jportal/decode';
import { ClassIndex, readTrace, Trace } from '../lib/trace';
import { INVOKE_OPCODES } from '@jportal/classfile';

const { available, missing } = findJdks();
for (const m of missing) console.warn(`SKIP agent tests on ${m}`);

const ACC_NATIVE = 0x100;

interface PrintedCodelet {
  begin: number;
  end: number;
  description: string;
  bytecode: number;
}

/** Parses -XX:+PrintInterpreter output: `description  [0xbegin, 0xend]  N bytes`. */
function parsePrintInterpreter(stdout: string): PrintedCodelet[] {
  const out: PrintedCodelet[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^(.*?)\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\]\s+(\d+) bytes/.exec(line);
    if (!m) continue;
    // bytecode templates print as "iadd  96 iadd": description, bytecode number, name
    const t = /^(\S+)\s+(\d+)\s+\S+$/.exec(m[1].trim());
    out.push({ description: t ? t[1] : m[1].trim(), bytecode: t ? Number(t[2]) : -1, begin: parseInt(m[2], 16), end: parseInt(m[3], 16) });
  }
  return out;
}

describe.each(available.map((j) => [j.label, j] as [string, Jdk]))('agent on %s', (_label, jdk) => {
  let jit: { dir: string; stdout: string; trace: Trace; classes: ClassIndex };

  beforeAll(() => {
    const run = runWithAgent(jdk.java, `jit-${jdk.label}`, 'snapshot=1,patch_interval_ms=20', [
      '-XX:+UnlockDiagnosticVMOptions',
      '-XX:+PrintInterpreter',
      '-cp',
      path.join(EXAMPLES, 'jit-hot', 'classes'),
      'JitHot',
    ]);
    expect(run.result.status).toBe(0);
    const trace = readTrace(run.dir);
    jit = { dir: run.dir, stdout: run.result.stdout, trace, classes: new ClassIndex(trace) };
  });
  afterAll(() => jit && cleanup(jit.dir));

  test('the file is complete and intact', () => {
    expect(jit.trace.problems).toEqual([]);
    expect(jit.trace.byType('VM_END')).toHaveLength(1);
    expect(jit.trace.byType('CALIBRATION').length).toBeGreaterThanOrEqual(2);
    expect(jit.trace.byType('DROPPED')).toHaveLength(0);
    const info = jit.trace.byType('VM_INFO')[0].payload;
    expect(String(info.java_version).startsWith(String(jdk.feature))).toBe(true);
    expect(info.flags.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['CodeEntryAlignment', 'UseCompressedOops']));
    // the validator's semantic checks (codelets inside the interpreter code and disjoint, pcs inside their
    // nmethods, methods defined before use, patches inside live nmethods, tsc never going backwards)
    const v = validateTrace(jit.dir);
    expect(v.problems).toEqual([]);
    expect(v.complete).toBe(true);
  });

  test('the dispatch-table fallback (parsing interpreter code) finds the same active table as .symtab', () => {
    const run = runWithAgent(jdk.java, `parse-${jdk.label}`, 'dispatch=parse,classes=0', ['-version']);
    try {
      expect(run.result.status).toBe(0);
      const parsed = readTrace(run.dir).byType('DISPATCH_TABLE').map((r) => r.payload);
      expect(parsed).toHaveLength(1);
      expect(parsed[0].source).toBe(1);
      const symtab = jit.trace.byType('DISPATCH_TABLE').find((r) => r.payload.table === 0)!.payload;
      expect(symtab.source).toBe(0);
      // another process (its interpreter may be laid out differently): compare each entry as the codelet
      // it lands in and the offset inside it
      const where = (t: Trace, a: number) => {
        const c = t.byType('CODELET').find((r) => a >= r.payload.begin && a < r.payload.end)?.payload;
        return c ? `${c.description}+${a - c.begin}` : `outside:${a}`;
      };
      const mine = readTrace(run.dir);
      expect(parsed[0].states).toBe(symtab.states);
      const a = parsed[0].entries.map((e: { target: number }) => where(mine, e.target));
      const b = symtab.entries.map((e: { target: number }) => where(jit.trace, e.target));
      expect(a).toEqual(b);
      expect(a.filter((x: string) => x.startsWith('outside'))).toEqual([]);
    } finally {
      cleanup(run.dir);
    }
  });

  test('an unwritable trace directory costs one error line; the JVM runs on', () => {
    const r = spawnSync(jdk.java, [`-agentpath:${AGENT}=out=/proc/jportal-cannot-write`, '-cp', path.join(EXAMPLES, 'compute', 'classes'), 'Compute', '10'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('iterations=10');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('[jportal]'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/cannot create the trace directory \/proc\/jportal-cannot-write/);
  });

  test('codelet ranges and descriptions equal -XX:+PrintInterpreter in the same run', () => {
    const printed = parsePrintInterpreter(jit.stdout);
    const recorded = jit.trace.byType('CODELET').map((r) => r.payload);
    expect(printed.length).toBeGreaterThan(200);
    expect(recorded.map((c) => [c.begin, c.end])).toEqual(printed.map((c) => [c.begin, c.end]));
    expect(recorded.map((c) => c.description)).toEqual(printed.map((c) => c.description));
    expect(recorded.map((c) => c.bytecode)).toEqual(printed.map((c) => c.bytecode));
    const kinds = new Set(recorded.map((c) => c.kind));
    expect(kinds.has(1)).toBe(true); // bytecode templates
    expect(kinds.has(2)).toBe(true); // method entries
    const code = jit.trace.byType('INTERP_CODE')[0].payload;
    for (const c of recorded) {
      expect(c.begin).toBeGreaterThanOrEqual(code.base);
      expect(c.end).toBeLessThanOrEqual(code.base + code.code.length);
    }
  });

  test('every dispatch-table entry lands inside a codelet (method handle intrinsics: in their recorded adapter blob)', () => {
    const codelets = jit.trace.byType('CODELET').map((r) => r.payload);
    const inside = (a: number) => codelets.some((c) => a >= c.begin && a < c.end);
    const blobs = jit.trace.byType('CODE_BLOB').map((r) => r.payload);
    const blobOf = (a: number) => blobs.find((b) => a >= b.address && a < b.address + b.size);
    const tables = jit.trace.byType('DISPATCH_TABLE').map((r) => r.payload);
    expect(tables.map((t) => t.table).sort()).toEqual([0, 1, 2, 3]);
    for (const t of tables) {
      const entries = (t.entries as { target: number }[]).map((e) => e.target).filter((a) => a !== 0);
      expect(entries.length).toBeGreaterThan(t.table === 3 ? 5 : 2000);
      const outside = entries.filter((a) => !inside(a));
      if (t.table !== 3) expect(outside).toEqual([]);
      // the method-entry table's invokeBasic/linkTo* entries are MethodHandle adapter blobs of their own
      else for (const a of outside) expect(blobOf(a)?.name).toMatch(/^_(invokeBasic|linkToVirtual|linkToStatic|linkToSpecial|linkToInterface|linkToNative)$/);
    }
    // bytecode templates in the normal table point at the codelet of their own bytecode
    const normal = tables.find((t) => t.table === 1)!;
    const vtos = 9;
    const iadd = normal.entries[vtos * 256 + 0x60].target as number;
    const c = codelets.find((x) => iadd >= x.begin && iadd < x.end)!;
    expect(c.description).toBe('iadd');
  });

  test('compiled methods: pcs inside their code, caller bcis at invokes, bytecode for every frame', () => {
    const loads = jit.trace.byType('NMETHOD_LOAD');
    expect(loads.length).toBeGreaterThan(20);
    let callerFrames = 0;
    let frames = 0;
    for (const r of loads) {
      const nm = r.payload;
      expect(nm.code.length).toBe(nm.code_size);
      for (const pc of nm.pcs) {
        expect(pc.pc).toBeGreaterThanOrEqual(nm.code_begin);
        expect(pc.pc).toBeLessThan(nm.code_begin + nm.code_size);
        expect(pc.frames[pc.frames.length - 1].method).toBe(nm.method);
        pc.frames.forEach((f: { method: number; bci: number }, i: number) => {
          frames++;
          const m = jit.trace.method(f.method);
          if (m.modifiers & ACC_NATIVE) return;
          const code = jit.classes.bytecode(m);
          if (!code) throw new Error(`no bytecode for ${m.class_name}.${m.name}${m.signature} (frame of ${jit.trace.methodName(nm.method)})`);
          if (i > 0) {
            callerFrames++;
            expect(INVOKE_OPCODES.has(code[f.bci])).toBe(true);
          } else if (f.bci >= 0) {
            expect(f.bci).toBeLessThan(code.length);
          }
        });
      }
    }
    expect(callerFrames).toBeGreaterThan(100);
    expect(frames).toBeGreaterThan(callerFrames);
  });

  test('tiers, OSR and inlining of the JIT-heavy example', () => {
    const loads = jit.trace.byType('NMETHOD_LOAD').map((r) => r.payload);
    const levels = new Set(loads.map((n) => n.level));
    expect([...levels].every((l) => l >= 0 && l <= 4)).toBe(true);
    expect(levels.has(4)).toBe(true);
    const main = loads.filter((n) => jit.trace.methodName(n.method).startsWith('JitHot.main'));
    expect(main.some((n) => n.osr_bci >= 0 && n.osr_entry !== 0)).toBe(true);
    expect(loads.some((n) => jit.trace.methodName(n.method).startsWith('JitHot.run') && n.level === 4)).toBe(true);
    const run = loads.filter((n) => jit.trace.methodName(n.method).startsWith('JitHot.run'));
    const chains = run.flatMap((n) => n.pcs.map((pc: { frames: { method: number }[] }) => pc.frames.map((f) => jit.trace.method(f.method).name).join('<')));
    expect(chains).toContain('getV<twice<run');
    // the constants section lies between the blob's start and its instructions, and is recorded whole
    for (const n of loads) {
      if (n.consts_begin === 0) continue;
      expect(n.consts_begin).toBeGreaterThan(n.blob_begin);
      expect(n.consts_begin + n.consts.length).toBe(n.insts_begin);
    }
    expect(loads.filter((n) => n.level === 4 && n.consts_begin !== 0).length).toBeGreaterThan(0);
  });

  test('classes include Object, String and HashMap with their bytes', () => {
    for (const name of ['java/lang/Object', 'java/lang/String', 'java/util/HashMap', 'JitHot']) {
      const cls = jit.classes.byName(name);
      expect(cls).toBeDefined();
      expect(cls!.methods.length).toBeGreaterThan(0);
    }
    expect(jit.classes.problems).toEqual([]);
  });

  /** JitHot run with the agent's `classes` mode: its trace, VM_INFO and a flag reader (the run is removed after). */
  const withClassesRun = (mode: string, check: (run: { dir: string }, trace: ReturnType<typeof readTrace>, vm: any, flag: (n: string) => any, classDir: string) => void) => {
    const classDir = path.join(EXAMPLES, 'jit-hot', 'classes');
    const run = runWithAgent(jdk.java, `${mode}-${jdk.label}`, `classes=${mode}`, ['-cp', classDir, 'JitHot']);
    try {
      expect(run.result.status).toBe(0);
      const trace = readTrace(run.dir);
      const vm = trace.byType('VM_INFO')[0].payload;
      check(run, trace, vm, (n) => vm.flags.find((f: { name: string }) => f.name === n)?.value, classDir);
    } finally {
      cleanup(run.dir);
    }
  };

  test('classes=path (the default): no ClassFileLoadHook; classes are named, their bytes read from the runtime image and the class path', () => {
    withClassesRun('path', (run, trace, vm, flag, classDir) => {
      expect(flag('jportal.runtime_image')).toBe(path.join(vm.java_home, 'lib', 'modules'));
      expect(flag('jportal.class_path')).toBe(classDir);
      expect(flag('jportal.working_dir')).toBe(process.cwd());
      const classes = trace.byType('CLASS');
      // nothing came through the hook; boot classes are named as runtime-image classes, the application's as class-path ones
      expect(classes.filter((r) => r.payload.source === 0)).toEqual([]);
      const image = classes.filter((r) => r.payload.source === 3);
      expect(image.length).toBeGreaterThan(300);
      expect(image.every((r) => r.payload.bytes.length === 0)).toBe(true);
      for (const n of ['java/lang/Object', 'java/util/HashMap']) expect(image.some((r) => r.payload.name === n && r.payload.loader === 0)).toBe(true);
      const app = classes.filter((r) => r.payload.source === 4);
      expect(app.map((r) => r.payload.name)).toEqual(expect.arrayContaining(['JitHot', 'JitHot$Square']));
      expect(app.every((r) => r.payload.loader !== 0 && r.payload.bytes.length === 0)).toBe(true);
      // the bytes read back are the class files the JVM loaded
      const onDisk = new Uint8Array(fs.readFileSync(path.join(classDir, 'JitHot.class')));
      const model = loadTrace(run.dir);
      const key = `${app.find((r) => r.payload.name === 'JitHot')!.payload.loader}:JitHot`;
      expect(Buffer.from(model.classes.get(key)!).equals(Buffer.from(onDisk))).toBe(true);
      expect(model.problems.filter((p) => /class/.test(p))).toEqual([]);
    });
  });

  test('classes=hook: class bytes come through ClassFileLoadHook, keeping class-data sharing', () => {
    withClassesRun('hook', (_run, trace, vm, flag) => {
      // (JDK 25 no longer has the flag in its flag table: there the named classes below are the evidence)
      if (flag('UseSharedSpaces') !== undefined || jdk.feature === 17) expect(flag('UseSharedSpaces')).toBe('true');
      expect(flag('jportal.runtime_image')).toBe(path.join(vm.java_home, 'lib', 'modules'));
      expect(Number(flag('jportal.runtime_image_size'))).toBe(fs.statSync(flag('jportal.runtime_image')).size);
      const classes = trace.byType('CLASS');
      expect(classes.some((r) => r.payload.name === 'JitHot' && r.payload.source === 0 && r.payload.bytes.length > 0)).toBe(true);
      expect(classes.filter((r) => r.payload.source === 4)).toEqual([]);
      // the primordial phase's boot classes (java.lang.Object among them) are named, listed at VMInit (REPLAY: loaded
      // at an unknown earlier time); none carries bytes
      const named = classes.filter((r) => r.payload.source === 3);
      expect(named.filter((r) => (r.flags & 1) === 1).length).toBeGreaterThan(100);
      expect(named.every((r) => r.payload.loader === 0 && r.payload.bytes.length === 0)).toBe(true);
      expect(named.some((r) => r.payload.name === 'java/lang/Object' && (r.flags & 1) === 1)).toBe(true);
    });
  });

  test('hidden classes in inlining chains are reconstructed into class files javap accepts', () => {
    const hidden = jit.trace.byType('CLASS').filter((r) => r.payload.source === 1);
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.some((r) => String(r.payload.name).includes('$$Lambda'))).toBe(true);
    const javap = path.join(path.dirname(jdk.java), 'javap');
    const tmp = fs.mkdtempSync(path.join(jit.dir, 'hidden-'));
    for (const r of hidden.slice(0, 5)) {
      const file = path.join(tmp, `c${r.payload.class_id}.class`);
      fs.writeFileSync(file, r.payload.bytes);
      const out = spawnSync(javap, ['-v', '-p', file], { encoding: 'utf8' });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      expect(out.stdout).toContain('Code:');
    }
  });

  test('code patches replayed over the load bytes give the memory at VM death', () => {
    const patches = jit.trace.byType('CODE_PATCH');
    expect(patches.length).toBeGreaterThan(0);
    const snapshots = jit.trace.byType('CODE_SNAPSHOT');
    expect(snapshots.length).toBeGreaterThan(0);
    // current bytes of every live nmethod, replayed in seq order
    const live = new Map<number, Uint8Array>();
    let patchedAndChecked = 0;
    const patchedBegins = new Set<number>();
    for (const r of jit.trace.records) {
      const p = r.payload;
      if (r.typeName === 'NMETHOD_LOAD') live.set(p.code_begin, Uint8Array.from(p.code));
      // watched buffer blobs (signature handlers, inline-cache stubs) are patched too
      else if (r.typeName === 'CODE_BLOB' && !live.has(p.address)) live.set(p.address, Uint8Array.from(p.code));
      else if (r.typeName === 'NMETHOD_UNLOAD') live.delete(p.code_begin);
      else if (r.typeName === 'CODE_PATCH') {
        const cur = live.get(p.code_begin)!;
        expect(cur).toBeDefined();
        cur.set(p.bytes, p.address - p.code_begin);
        patchedBegins.add(p.code_begin);
      } else if (r.typeName === 'CODE_SNAPSHOT') {
        const cur = live.get(p.code_begin);
        expect(cur).toBeDefined();
        expect(Buffer.from(cur!).equals(Buffer.from(p.code))).toBe(true);
        if (patchedBegins.has(p.code_begin)) patchedAndChecked++;
      }
    }
    expect(patchedAndChecked).toBeGreaterThan(0);
  });

  test("the decoder's code image keeps every version's own bytes (load bytes, then one patch more each)", () => {
    // (Node Buffers' slice() is a view: versions built by slicing and patching all ended up with the last bytes)
    const image = loadTrace(jit.dir).image;
    const loads = new Map<number, Uint8Array>();
    const patches = new Map<number, { address: number; bytes: Uint8Array; seq: bigint }[]>();
    for (const r of jit.trace.records) {
      if (r.typeName === 'NMETHOD_LOAD' && !loads.has(r.payload.code_begin)) loads.set(r.payload.code_begin, Uint8Array.from(r.payload.code));
      else if (r.typeName === 'CODE_PATCH' && loads.has(r.payload.code_begin)) {
        const l = patches.get(r.payload.code_begin) ?? [];
        l.push({ address: r.payload.address, bytes: Uint8Array.from(r.payload.bytes), seq: r.tsc });
        patches.set(r.payload.code_begin, l);
      }
    }
    let checked = 0;
    for (const [begin, ps] of patches) {
      // the first nmethod at this address (later ones may reuse it)
      const versions = image.sections.filter((s) => s.begin === begin && s.nmethod >= 0 && s.nmethod === image.sections.find((x) => x.begin === begin && x.nmethod >= 0)!.nmethod);
      if (versions.length !== ps.length + 1) continue;
      const expected = Uint8Array.from(loads.get(begin)!);
      ps.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
      versions.sort((a, b) => a.version - b.version);
      expect(Buffer.from(versions[0].bytes).equals(Buffer.from(expected))).toBe(true);
      ps.forEach((p, k) => {
        expected.set(p.bytes, p.address - begin);
        expect(Buffer.from(versions[k + 1].bytes).equals(Buffer.from(expected))).toBe(true);
      });
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  test('a class-unloading run records unloads, and reused code addresses are kept apart by time', () => {
    const run = runWithAgent(jdk.java, `unload-${jdk.label}`, '', [
      '-cp',
      path.join(EXAMPLES, 'unload', 'classes'),
      'Unload',
      path.join(EXAMPLES, 'unload', 'gen', 'classes'),
      '120', // JDK 17's sweeper frees unloaded code late: enough rounds for freed addresses to be reused
    ]);
    try {
      expect(run.result.status).toBe(0);
      const trace = readTrace(run.dir);
      expect(trace.problems).toEqual([]);
      const unloads = trace.byType('NMETHOD_UNLOAD');
      expect(unloads.length).toBeGreaterThan(0);
      // per code address: load/unload alternate in seq (and tsc) order, so each address names at most one
      // method at any time
      const state = new Map<number, { method: number; tsc: bigint }>();
      let reused = 0;
      for (const r of trace.records) {
        if (r.typeName === 'NMETHOD_LOAD') {
          expect(state.has(r.payload.code_begin)).toBe(false);
          state.set(r.payload.code_begin, { method: r.payload.method, tsc: r.tsc });
        } else if (r.typeName === 'NMETHOD_UNLOAD') {
          const cur = state.get(r.payload.code_begin);
          if (!cur) continue; // unload of code loaded before the agent could see it
          expect(cur.method).toBe(r.payload.method);
          expect(r.tsc >= cur.tsc).toBe(true);
          // nmethods=scan (the default where VMStructs allow): the unload says when a scan last saw it alive,
          // after its load and before the unload was written
          const seen = r.payload.last_seen ?? 0n;
          if (seen > 0n) {
            expect(seen >= cur.tsc).toBe(true);
            expect(seen <= r.tsc).toBe(true);
          }
          state.delete(r.payload.code_begin);
        }
      }
      const loadsAt = new Map<number, number>();
      for (const r of trace.byType('NMETHOD_LOAD')) loadsAt.set(r.payload.code_begin, (loadsAt.get(r.payload.code_begin) ?? 0) + 1);
      for (const n of loadsAt.values()) if (n > 1) reused++;
      expect(reused).toBeGreaterThan(0);
      // Gen loaded 120 times through fresh loaders: 120 CLASS records with distinct loaders
      const gens = trace.byType('CLASS').filter((r) => r.payload.name === 'Gen');
      expect(new Set(gens.map((g) => g.payload.loader)).size).toBe(120);
    } finally {
      cleanup(run.dir);
    }
  });

  test('nmethods=check: the debug info and method names a scan reads from each nmethod equal what JVMTI gives', () => {
    const run = runWithAgent(jdk.java, `check-${jdk.label}`, 'nmethods=check', ['-cp', path.join(EXAMPLES, 'jit-hot', 'classes'), 'JitHot']);
    try {
      expect(run.result.status).toBe(0);
      const m = /nmethods=check: (\d+) nmethods compared \((\d+) unreadable\), (\d+) pcs, (\d+) frames: (\d+) differ; (\d+) methods named: (\d+) differ/.exec(run.result.stderr);
      expect(m).not.toBeNull();
      const [compared, unreadable, pcs, frames, differ, named, namesDiffer] = m!.slice(1).map(Number);
      if (compared === 0) {
        // this JVM's VMStructs lack a field the scan reads (JDK 25: the metadata offset): it uses events
        console.warn(`SKIP nmethods=check comparison on ${jdk.label}: the scan cannot read its nmethods (${unreadable} unreadable)`);
        expect(unreadable).toBeGreaterThan(0);
        return;
      }
      expect(unreadable).toBe(0);
      expect(compared).toBeGreaterThan(20);
      expect(pcs).toBeGreaterThan(compared);
      expect(frames).toBeGreaterThanOrEqual(pcs);
      expect(differ).toBe(0);
      expect(named).toBeGreaterThan(20);
      expect(namesDiffer).toBe(0);
    } finally {
      cleanup(run.dir);
    }
  });

  test('nmethods=scan: compiled methods found in the code heaps, with non-safepoint debug info and named methods', () => {
    const run = runWithAgent(jdk.java, `scan-${jdk.label}`, 'nmethods=scan,stats=1', ['-cp', path.join(EXAMPLES, 'jit-hot', 'classes'), 'JitHot']);
    try {
      expect(run.result.status).toBe(0);
      const trace = readTrace(run.dir);
      expect(trace.problems).toEqual([]);
      const flags = new Map(trace.byType('VM_INFO')[0].payload.flags.map((f: { name: string; value: string }) => [f.name, f.value]));
      const loads = trace.byType('NMETHOD_LOAD');
      expect(loads.length).toBeGreaterThan(20);
      if (flags.get('DebugNonSafepoints') !== 'true') {
        console.warn(`SKIP nmethods=scan on ${jdk.label}: its VMStructs lack what the scan reads; the agent used events`);
        return;
      }
      // the scan found them: no REPLAY loads from a GenerateEvents, and the methods they name have classes
      const methods = new Map(trace.byType('METHOD').map((m) => [m.payload.method, m.payload]));
      const named = [...methods.values()];
      expect(named.filter((m) => m.class_id === 0xffffffff)).toEqual([]);
      // DebugNonSafepoints: C2 code carries PcDescs between its safepoints (as JVMTI's events would have it)
      const c2 = loads.filter((l) => l.payload.level === 4);
      expect(c2.length).toBeGreaterThan(0);
      const pcsPerC2 = c2.reduce((n, l) => n + l.payload.pcs.length, 0) / c2.length;
      expect(pcsPerC2).toBeGreaterThan(10);
      for (const l of loads) for (const pc of l.payload.pcs) for (const f of pc.frames) expect(methods.has(f.method)).toBe(true);
      // naming a method follows pointers through a few metadata pages, each checked readable by a system call
      // unless known for good (the class-data sharing archive, pages of live classes of loaders that never unload):
      // fewer checks than methods named (each page checked once per scan, as before, made several per method)
      const pageChecks = /(\d+) metadata pages checked by system call/.exec(run.result.stderr);
      expect(pageChecks).not.toBeNull();
      expect(Number(pageChecks![1])).toBeLessThan(named.length);
      const v = validateTrace(run.dir);
      expect(v.problems).toEqual([]);
      expect(v.complete).toBe(true);
    } finally {
      cleanup(run.dir);
    }
  });

  test('a multi-threaded run maps every Java thread to its OS tid', () => {
    const run = runWithAgent(jdk.java, `threads-${jdk.label}`, '', ['-cp', path.join(EXAMPLES, 'threads', 'classes'), 'Threads', '4']);
    try {
      expect(run.result.status).toBe(0);
      const trace = readTrace(run.dir);
      const starts = trace.byType('THREAD_START').map((r) => r.payload);
      const byName = new Map(starts.map((t) => [t.name, t]));
      for (const name of ['main', 'worker-0', 'worker-1', 'worker-2', 'worker-3']) {
        const t = byName.get(name);
        expect(t).toBeDefined();
        expect(t!.os_tid).toBeGreaterThan(0);
        expect(t!.java_tid).toBeGreaterThan(0);
      }
      // an OS tid belongs to one Java thread at a time (the launcher's main thread becomes DestroyJavaVM)
      const liveByTid = new Map<number, number>();
      for (const r of trace.records) {
        if (r.typeName === 'THREAD_START') {
          expect(liveByTid.has(r.payload.os_tid)).toBe(false);
          liveByTid.set(r.payload.os_tid, r.payload.java_tid);
        } else if (r.typeName === 'THREAD_END') {
          expect(liveByTid.get(r.payload.os_tid)).toBe(r.payload.java_tid);
          liveByTid.delete(r.payload.os_tid);
        }
      }
      const ends = new Set(trace.byType('THREAD_END').map((r) => r.payload.java_tid));
      for (let i = 0; i < 4; i++) expect(ends.has(byName.get(`worker-${i}`)!.java_tid)).toBe(true);
    } finally {
      cleanup(run.dir);
    }
  });
});

if (available.length === 0) {
  test.skip('agent tests: no JDK 17 or 25 found', () => undefined);
}
