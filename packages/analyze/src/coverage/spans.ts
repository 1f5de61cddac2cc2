/**
 * Statement and branch spans of a .java file from its concrete syntax tree (the `java-parser` package): where
 * each statement is, and where each construct that compiles to a conditional branch is (the condition of
 * if / while / do / for, the selector of switch, a whole ?: expression, an && / || expression).
 *
 * java-parser is an ES module. It is loaded synchronously with Node's require(esm) (Node >= 20.19); where that
 * fails (e.g. inside jest's module registry) the file is parsed by a child `node` process running the same
 * extraction, so the result is the same either way.
 */
import { spawnSync } from 'child_process';
import { createRequire } from 'module';
import type { CstNode } from 'java-parser' with { 'resolution-mode': 'import' };

export interface SourceSpan {
  /** 'statement' or 'branch' */
  kind: 'statement' | 'branch';
  /** the construct, e.g. ifStatement, switchStatement, conditionalExpression */
  construct: string;
  /** 1-based line and 0-based column of the first character */
  line: number;
  column: number;
  endLine: number;
  /** 0-based column after the last character (on endLine) */
  endColumn: number;
}

export class JavaParseError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'JavaParseError';
  }
}

/**
 * The spans of a CST. Self-contained (no outer references): its source text also runs in the child process.
 */
function extractSpans(cst: CstNode): SourceSpan[] {
  type Node = { name: string; children: Record<string, unknown[]>; location: CstNode['location'] };
  const isNode = (e: unknown): e is Node => typeof e === 'object' && e !== null && 'children' in e;
  const conditionOf: Record<string, string> = {
    ifStatement: 'expression', whileStatement: 'expression', doStatement: 'expression', basicForStatement: 'expression', switchStatement: 'expression',
  };
  const hasToken = (n: Node, names: string[]): boolean =>
    names.some((k) => (n.children[k]?.length ?? 0) > 0) ||
    Object.values(n.children).some((list) => list.some((e) => !isNode(e) && names.includes((e as { tokenType: { name: string } }).tokenType.name)));
  const spanOf = (kind: 'statement' | 'branch', construct: string, n: Node): SourceSpan => {
    const l = n.location;
    return { kind, construct, line: l.startLine, column: l.startColumn - 1, endLine: l.endLine, endColumn: l.endColumn };
  };
  const out: SourceSpan[] = [];
  const stack: Node[] = [cst as unknown as Node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.name === 'statement') out.push(spanOf('statement', 'statement', n));
    const cond = conditionOf[n.name];
    if (cond) {
      const c = n.children[cond]?.[0];
      if (isNode(c)) out.push(spanOf('branch', n.name, c));
    } else if (n.name === 'conditionalExpression' && hasToken(n, ['QuestionMark'])) out.push(spanOf('branch', n.name, n));
    else if (n.name === 'binaryExpression' && hasToken(n, ['AndAnd', 'OrOr'])) out.push(spanOf('branch', n.name, n));
    for (const list of Object.values(n.children)) for (const e of list) if (isNode(e)) stack.push(e);
  }
  return out.sort((x, y) => x.line - y.line || x.column - y.column);
}

type Parse = (text: string) => CstNode;
let inProcess: Parse | null | undefined;

function loadInProcess(): Parse | null {
  if (inProcess === undefined)
    try {
      inProcess = (createRequire(__filename)('java-parser') as { parse: Parse }).parse;
    } catch {
      inProcess = null;
    }
  return inProcess;
}

/** Parses in a child node process (the same extraction); the source comes on stdin. */
function spansInChild(text: string, file: string): SourceSpan[] {
  const script =
    `const { createRequire } = require('module');` +
    `const jp = createRequire(${JSON.stringify(__filename)})('java-parser');` +
    `const extract = ${extractSpans.toString()};` +
    `let s = ''; process.stdin.setEncoding('utf8'); process.stdin.on('data', (d) => (s += d));` +
    `process.stdin.on('end', () => { try { process.stdout.write(JSON.stringify(extract(jp.parse(s)))); }` +
    ` catch (e) { process.stderr.write(String(e.message).split('\\n')[0]); process.exit(1); } });`;
  const r = spawnSync(process.execPath, ['-e', script], { input: text, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new JavaParseError(file, r.stderr.trim() || `java-parser child process failed (${r.status ?? r.signal})`);
  return JSON.parse(r.stdout) as SourceSpan[];
}

/** Statement and branch spans of Java source `text`, sorted by position; JavaParseError when it does not parse. */
export function javaSpans(text: string, file = '<source>'): SourceSpan[] {
  const parse = loadInProcess();
  if (!parse) return spansInChild(text, file);
  let cst: CstNode;
  try {
    cst = parse(text);
  } catch (e) {
    throw new JavaParseError(file, (e as Error).message.split('\n')[0]);
  }
  return extractSpans(cst);
}
