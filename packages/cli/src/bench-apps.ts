/**
 * The real-application suite of `jportal bench apps` (issue 8): Debian's packages of the programs behind the
 * DaCapo benchmarks batik, fop, h2, jython, luindex and sunflow, each with a short, a medium and a full workload
 * (medium: a few times short's work, still analyzable whole here; the growth of analyze is measured short -> medium)
 * over the
 * inputs bench/apps/setup.sh prepares (bench/apps/inputs). Classpaths name the jars Debian installs (found with
 * `dpkg -L`); the Debian launcher scripts are bypassed so that the JVM is started directly (the emulator needs the
 * java binary itself).
 */
import * as fs from 'fs';
import * as path from 'path';

export type AppSize = 'short' | 'medium' | 'full';
export const APP_SIZES: readonly AppSize[] = ['short', 'medium', 'full'];

export interface AppContext {
  /** bench/apps/inputs */
  inputs: string;
  /** a directory of this run the program may write into (emptied before every run) */
  scratch: string;
}

export interface AppDef {
  name: string;
  /** what it does, and its DaCapo namesake */
  what: string;
  /** Debian packages that provide it */
  packages: string[];
  /** classpath: jars (absolute) and, from the context, directories */
  classpath: (c: AppContext) => string[];
  /** jars whose classes count for coverage (JaCoCo's report, and ours restricted to the same source files) */
  coverageJars: string[];
  /** the main class, or per size */
  main: string | ((size: AppSize) => string);
  /** JVM options (system properties) the Debian launcher would pass */
  jvmArgs: string[];
  /** program arguments per size */
  args: (size: AppSize, c: AppContext) => string[];
  /** program arguments of a run that starts the application and does (almost) no work: start-up cost */
  startupArgs: (c: AppContext) => string[];
  /** files under inputs that must exist (setup.sh made them) */
  inputs: string[];
}

const J = (jar: string) => path.join('/usr/share/java', jar);

export const APPS: AppDef[] = [
  {
    name: 'batik',
    what: 'SVG rasterizer (Apache Batik 1.16): renders SVG files to PNG (DaCapo batik)',
    packages: ['libbatik-java'],
    classpath: () => [J('batik-all.jar'), J('xml-apis-ext.jar'), J('xmlgraphics-commons.jar'), J('commons-logging.jar'), J('commons-io.jar')],
    coverageJars: [J('batik-all.jar')],
    main: 'org.apache.batik.apps.rasterizer.Main',
    jvmArgs: ['-Djava.awt.headless=true'],
    args: (size, c) => [
      '-scriptSecurityOff', '-d', c.scratch,
      ...(size === 'full' ? ['-w', '4000'] : size === 'medium' ? ['-w', '1200'] : []),
      ...['shapes.svg', 'chart.svg', 'tiles.svg'].map((f) => path.join(c.inputs, 'batik', f)),
    ],
    startupArgs: (c) => ['-scriptSecurityOff', '-d', c.scratch, '-w', '16', path.join(c.inputs, 'batik', 'chart.svg')],
    inputs: ['batik/shapes.svg', 'batik/chart.svg', 'batik/tiles.svg'],
  },
  {
    name: 'fop',
    what: 'XSL-FO to PDF (Apache FOP 2.8): lays out a generated document (DaCapo fop)',
    packages: ['fop'],
    classpath: () => ['fop.jar', 'batik-all.jar', 'xmlgraphics-commons.jar', 'commons-logging.jar', 'commons-io.jar', 'xml-apis-ext.jar', 'fontbox2.jar'].map(J),
    coverageJars: [J('fop.jar')],
    main: 'org.apache.fop.cli.Main',
    jvmArgs: ['-Djava.awt.headless=true', '-Dorg.apache.commons.logging.Log=org.apache.commons.logging.impl.NoOpLog'],
    args: (size, c) => ['-q', '-fo', path.join(c.inputs, 'fop', `${size}.fo`), '-pdf', path.join(c.scratch, 'out.pdf')],
    startupArgs: () => ['-version'],
    inputs: ['fop/short.fo', 'fop/medium.fo', 'fop/full.fo'],
  },
  {
    name: 'h2',
    what: 'SQL database (H2 2.1.214, in memory): runs a generated script, indexed joins, aggregates, updates (DaCapo h2)',
    packages: ['libh2-java'],
    classpath: () => [J('h2.jar')],
    coverageJars: [J('h2.jar')],
    main: 'org.h2.tools.RunScript',
    jvmArgs: [],
    args: (size, c) => ['-url', 'jdbc:h2:mem:bench', '-user', 'sa', '-script', path.join(c.inputs, 'h2', `${size}.sql`)],
    startupArgs: (c) => ['-url', 'jdbc:h2:mem:bench', '-user', 'sa', '-script', path.join(c.inputs, 'h2', 'startup.sql')],
    inputs: ['h2/short.sql', 'h2/medium.sql', 'h2/full.sql', 'h2/startup.sql'],
  },
  {
    name: 'jython',
    what: 'Python interpreter (Jython 2.7.3): a mixed script of objects, dicts, strings, sorting (DaCapo jython)',
    packages: ['jython'],
    classpath: () => [J('jython.jar')],
    coverageJars: [J('jython.jar')],
    main: 'org.python.util.jython',
    // no site import (2 s of start-up that runs no benchmark code); no package cache written
    jvmArgs: ['-Dpython.home=/usr/share/jython', '-Dpython.cachedir.skip=true', '-Dpython.import.site=false'],
    args: (size, c) => [path.join(c.inputs, 'jython', 'bench.py'), size === 'full' ? '80' : size === 'medium' ? '3' : '1'],
    startupArgs: (c) => [path.join(c.inputs, 'jython', 'bench.py'), '0'],
    inputs: ['jython/bench.py'],
  },
  {
    name: 'luindex',
    what: "text indexing (Lucene 8.7 demo IndexFiles): indexes a generated corpus (DaCapo luindex)",
    packages: ['liblucene8-java'],
    classpath: () => ['lucene-demo-8.7.0.jar', 'lucene-core-8.7.0.jar', 'lucene-analyzers-common-8.7.0.jar', 'lucene-queryparser-8.7.0.jar'].map(J),
    coverageJars: ['lucene-demo-8.7.0.jar', 'lucene-core-8.7.0.jar', 'lucene-analyzers-common-8.7.0.jar'].map(J),
    main: 'org.apache.lucene.demo.IndexFiles',
    jvmArgs: [],
    args: (size, c) => ['-index', path.join(c.scratch, 'index'), '-docs', path.join(c.inputs, 'luindex', size)],
    startupArgs: (c) => ['-index', path.join(c.scratch, 'index'), '-docs', path.join(c.inputs, 'luindex', 'startup')],
    inputs: ['luindex/short', 'luindex/medium', 'luindex/full', 'luindex/startup'],
  },
  {
    name: 'sunflow',
    what:
      'ray tracer (Sunflow 0.07.2): full, its built-in benchmark scene at 256x256, checked against a reference image; short and medium, a smaller scene of the same kinds of objects at 32x32 and 48x48 (bench/apps/sunflow/RenderScene.java) (DaCapo sunflow)',
    packages: ['libsunflow-java'],
    // the reference images (golden_*.png) and RenderScene.class, made by setup.sh, are found on the classpath
    classpath: (c) => [J('sunflow.jar'), J('janino.jar'), path.join(c.inputs, 'sunflow')],
    coverageJars: [J('sunflow.jar')],
    // (the benchmark's smallest image, 32x32, is 2.4 G bytecodes: too long for a short size)
    main: (size) => (size === 'full' ? 'org.sunflow.Benchmark' : 'RenderScene'),
    jvmArgs: ['-Djava.awt.headless=true'],
    args: (size, c) => (size === 'full' ? ['-bench', '1', '256'] : [size === 'medium' ? '48' : '32', path.join(c.scratch, 'scene.png')]),
    startupArgs: () => ['-help'],
    inputs: ['sunflow/resources/golden_0100.png', 'sunflow/RenderScene.class'],
  },
];

/** The repository root (packages/cli/dist/.. -> ../..). */
export function repoRoot(): string {
  return path.resolve(__dirname, '..', '..', '..');
}

export function appInputs(): string {
  return path.join(repoRoot(), 'bench', 'apps', 'inputs');
}

/** What is missing to run this application (jars, inputs), as one-line reasons; empty when it can run. */
export function appMissing(app: AppDef, c: AppContext): string[] {
  const out: string[] = [];
  for (const j of [...app.classpath(c), ...app.coverageJars]) if (!fs.existsSync(j)) out.push(j);
  for (const i of app.inputs) if (!fs.existsSync(path.join(c.inputs, i))) out.push(path.join(c.inputs, i));
  return [...new Set(out)];
}

/** The java command line (after the java binary) of an application run of that size. */
export function appCommand(app: AppDef, c: AppContext, size: AppSize, args: string[]): string[] {
  return [...app.jvmArgs, '-cp', app.classpath(c).join(':'), typeof app.main === 'string' ? app.main : app.main(size), ...args];
}
