/** Test helpers: the JDK tools (javac, javap, jimage), compiling fixtures and reading javap's output. */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export interface JdkTools {
  home: string;
  javac: string;
  javap: string;
  jimage: string;
  jar: string;
}

/** JAVA_HOME, then the Debian JDK 17 and Temurin 25 locations, then PATH: the first with javac, javap, jimage and jar. */
export function findJdkTools(): JdkTools | { missing: string } {
  const homes = [process.env.JAVA_HOME, '/usr/lib/jvm/java-17-openjdk-amd64', '/usr/lib/jvm/temurin-25-jdk-amd64'].filter((h): h is string => !!h);
  for (const home of homes) {
    const tool = (t: string) => path.join(home, 'bin', t);
    if (['javac', 'javap', 'jimage', 'jar'].every((t) => fs.existsSync(tool(t))) && fs.existsSync(path.join(home, 'lib', 'modules'))) {
      return { home, javac: tool('javac'), javap: tool('javap'), jimage: tool('jimage'), jar: tool('jar') };
    }
  }
  return { missing: `no JDK with javac, javap, jimage and jar (looked in ${homes.join(', ')}; install openjdk-17-jdk-headless)` };
}

export function tempDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `jportal-icfg-${tag}-`));
}

/** Compiles `sources` (file name -> text) into a new directory; returns it. */
export function compile(tools: JdkTools, sources: Record<string, string>, args: string[] = []): string {
  const dir = tempDir('javac');
  const files = Object.entries(sources).map(([name, text]) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  });
  const r = spawnSync(tools.javac, ['-d', dir, ...args, ...files], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`javac failed: ${r.stderr}`);
  return dir;
}

/** One method as javap -c -p -s prints it. */
export interface JavapMethod {
  descriptor: string;
  /** instructions in order: bci, mnemonic, jump targets (if/goto/jsr: one; switch: default then arms, absolute bcis) */
  insns: { bci: number; mnemonic: string; targets: number[] }[];
  handlers: { start: number; end: number; handler: number; type?: string }[];
}

/** javap's methods per class (in class-file order, as javap prints them), for classes in `files` (or names with -cp). */
export function javap(tools: JdkTools, args: string[]): Map<string, JavapMethod[]> {
  const r = spawnSync(tools.javap, ['-c', '-p', '-s', ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`javap failed: ${r.stderr}`);
  const out = new Map<string, JavapMethod[]>();
  let methods: JavapMethod[] = [];
  let m: JavapMethod | undefined;
  let sw: { bci: number; mnemonic: string; targets: number[] } | undefined;
  let swDefault = -1;
  for (const line of r.stdout.split('\n')) {
    const cls = /^(?:[\w ]*?)(?:class|interface|enum|record) ([\w.$]+)/.exec(line);
    if (cls && !line.startsWith(' ')) {
      methods = [];
      out.set(cls[1].replace(/\./g, '/'), methods);
      m = undefined;
      continue;
    }
    const desc = /^    descriptor: (\(.*)$/.exec(line);
    if (desc) {
      m = { descriptor: desc[1], insns: [], handlers: [] };
      methods.push(m);
      continue;
    }
    if (!m) continue;
    if (sw) {
      const arm = /^\s+(-?\d+|default): (\d+)$/.exec(line);
      if (arm) {
        if (arm[1] === 'default') swDefault = Number(arm[2]);
        else sw.targets.push(Number(arm[2]));
        continue;
      }
      if (/^\s+}$/.test(line)) {
        sw.targets.unshift(swDefault);
        sw = undefined;
        continue;
      }
    }
    const insn = /^\s+(\d+): ([a-z][a-z_0-9]*)\s*(.*)$/s.exec(line); // (s: string constants may hold U+2028)
    if (insn) {
      const x = { bci: Number(insn[1]), mnemonic: insn[2], targets: [] as number[] };
      if (/^(if|goto|jsr)/.test(x.mnemonic)) x.targets.push(Number(/^(-?\d+)/.exec(insn[3])![1]));
      if (/switch$/.test(x.mnemonic)) {
        sw = x;
        swDefault = -1;
      }
      m.insns.push(x);
      continue;
    }
    const h = /^\s+(\d+)\s+(\d+)\s+(\d+)\s+(?:Class (\S+)|any)$/.exec(line);
    if (h) m.handlers.push({ start: Number(h[1]), end: Number(h[2]), handler: Number(h[3]), type: h[4]?.replace(/\./g, '/') });
  }
  return out;
}
