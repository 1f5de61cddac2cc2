/**
 * Debian's JaCoCo 0.8.6 (libjacoco-java) as an independent coverage tool: its agent (the runtime jar nested in
 * org.jacoco.agent.jar, extracted), a small reporter on org.jacoco.core/report that writes JaCoCo's XML report,
 * and a reader of the XML's LINE counters and line elements. Used by `jportal bench apps` and the coverage e2e
 * test (test/e2e/analyze-coverage.test.ts).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readZip } from '@jportal/classfile';

export const JAVA_SHARE = '/usr/share/java';
/** Jars the reporter compiles and runs against. */
export const JACOCO_JARS = ['org.jacoco.core.jar', 'org.jacoco.report.jar', 'asm.jar', 'asm-commons.jar', 'asm-tree.jar', 'asm-analysis.jar'].map((j) => path.join(JAVA_SHARE, j));
/** The agent jar, which holds the runtime agent jacocoagent.jar. */
export const JACOCO_AGENT_JAR = path.join(JAVA_SHARE, 'org.jacoco.agent.jar');

/** JaCoCo files this machine lacks (empty: all there). */
export function jacocoMissing(): string[] {
  return [...JACOCO_JARS, JACOCO_AGENT_JAR, path.join(JAVA_SHARE, 'org.jacoco.agent.rt.jar')].filter((j) => !fs.existsSync(j));
}

/**
 * Reads an exec file and class directories or jars (a[1], ':'-separated) with JaCoCo's own API and writes its XML
 * report. A multi-release jar is read as the running JVM loads it (each class from the highest META-INF/versions/N
 * not above its version): JaCoCo matches execution data to classes by a hash of their bytes, so analysing the base
 * version of a class the JVM loaded from META-INF/versions/9 reports it as never run. Arguments: EXEC CLASSES XML_OUT BUNDLE_NAME SOURCE_DIR.
 */
export const JACOCO_REPORTER = `
import java.io.*;
import org.jacoco.core.analysis.*;
import org.jacoco.core.tools.ExecFileLoader;
import org.jacoco.report.*;
import org.jacoco.report.xml.XMLFormatter;
public class JacocoXml {
  public static void main(String[] a) throws Exception {
    ExecFileLoader loader = new ExecFileLoader();
    loader.load(new File(a[0]));
    CoverageBuilder builder = new CoverageBuilder();
    Analyzer analyzer = new Analyzer(loader.getExecutionDataStore(), builder);
    for (String f : a[1].split(File.pathSeparator)) {
      if (f.isEmpty()) continue;
      if (!f.endsWith(".jar")) { analyzer.analyzeAll(new File(f)); continue; }
      // a multi-release jar holds classes again under META-INF/versions/N: the version this JVM would load
      try (java.util.jar.JarFile z = new java.util.jar.JarFile(new File(f), true, java.util.zip.ZipFile.OPEN_READ, Runtime.version())) {
        for (java.util.jar.JarEntry e : (Iterable<java.util.jar.JarEntry>) z.versionedStream()::iterator)
          if (e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/"))
            try (InputStream in = z.getInputStream(e)) { analyzer.analyzeClass(in, f + "@" + e.getName()); }
      }
    }
    IReportVisitor v = new XMLFormatter().createVisitor(new FileOutputStream(a[2]));
    v.visitInfo(loader.getSessionInfoStore().getInfos(), loader.getExecutionDataStore().getContents());
    v.visitBundle(builder.getBundle(a[3]), new DirectorySourceFileLocator(new File(a[4]), "utf-8", 4));
    v.visitEnd();
  }
}
`;

/** Writes jacocoagent.jar (extracted from Debian's org.jacoco.agent.jar) into dir; returns its path. */
export function extractJacocoAgent(dir: string): string {
  const agent = path.join(dir, 'jacocoagent.jar');
  const entry = readZip(fs.readFileSync(JACOCO_AGENT_JAR)).find((e) => e.name === 'jacocoagent.jar');
  if (!entry) throw new Error(`${JACOCO_AGENT_JAR} holds no jacocoagent.jar`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(agent, entry.read());
  return agent;
}

/** The -javaagent option that records coverage into exec. */
export function jacocoAgentOption(agentJar: string, exec: string): string {
  return `-javaagent:${agentJar}=destfile=${exec}`;
}

/**
 * JaCoCo's XML report of exec over the given class directories or jars: compiles the reporter into dir (with the
 * javac next to java, else the one on PATH) and runs it; returns the XML text (also left in xmlOut).
 */
export function jacocoReportXml(java: string, exec: string, classes: string[], xmlOut: string, name: string, sources: string, dir: string): string {
  const src = path.join(dir, 'JacocoXml.java');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(src, JACOCO_REPORTER);
  const cp = JACOCO_JARS.join(':');
  const javac = path.join(path.dirname(java), 'javac');
  const c = spawnSync(fs.existsSync(javac) ? javac : 'javac', ['-cp', cp, '-d', dir, src], { encoding: 'utf8' });
  if (c.status !== 0) throw new Error(`javac JacocoXml: ${c.stderr || c.error?.message}`);
  fs.mkdirSync(sources, { recursive: true });
  const r = spawnSync(java, ['-cp', `${cp}:${dir}`, 'JacocoXml', exec, classes.join(':'), xmlOut, name, sources], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`JaCoCo report: ${r.stderr || r.error?.message}`);
  return fs.readFileSync(xmlOut, 'utf8');
}

export interface JacocoLines {
  /** per class: LINE counter */
  classLines: Map<string, { missed: number; covered: number }>;
  /** "package/File.java:line" -> covered (ci > 0), for the source files' line elements */
  lines: Map<string, boolean>;
  /** "package/Class.name(descriptor)" -> covered (its INSTRUCTION counter covers some), for every method element */
  methods: Map<string, boolean>;
}

/** LINE counters of classes, the line elements of source files and the methods run, from a JaCoCo XML report (JaCoCo's or ours). */
export function parseJacocoXml(xml: string): JacocoLines {
  const classLines = new Map<string, { missed: number; covered: number }>();
  const methods = new Map<string, boolean>();
  // (a class without code, an interface, is an empty element: <class .../>)
  for (const m of xml.matchAll(/<class name="([^"]+)"[^>]*?(?:\/>|>(.*?)<\/class>)/gs)) {
    for (const x of (m[2] ?? '').matchAll(/<method name="([^"]+)" desc="([^"]+)"[^>]*>(.*?)<\/method>/gs)) {
      const c = /<counter type="INSTRUCTION" missed="\d+" covered="(\d+)"\/>/.exec(x[3]);
      methods.set(`${m[1]}.${unescapeXml(x[1])}${unescapeXml(x[2])}`, !!c && +c[1] > 0);
    }
    const own = (m[2] ?? '').replace(/<method .*?<\/method>/gs, '');
    const c = /<counter type="LINE" missed="(\d+)" covered="(\d+)"\/>/.exec(own);
    classLines.set(m[1], c ? { missed: +c[1], covered: +c[2] } : { missed: 0, covered: 0 });
  }
  const lines = new Map<string, boolean>();
  for (const f of xml.matchAll(/<package name="([^"]*)">(.*?)<\/package>/gs))
    for (const s of f[2].matchAll(/<sourcefile name="([^"]+)">(.*?)<\/sourcefile>/gs))
      for (const l of s[2].matchAll(/<line nr="(\d+)" mi="(\d+)" ci="(\d+)"/g)) lines.set(`${f[1] ? f[1] + '/' : ''}${s[1]}:${l[1]}`, +l[3] > 0);
  return { classLines, lines, methods };
}

const unescapeXml = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
