/** Typed errors of the CFG builder and the class loaders: each names where (method or file) and the byte offset. */

/** A method whose code cannot be made into a CFG: a bad instruction, a branch into the middle of one, code that runs off its end. */
export class CfgError extends Error {
  constructor(
    /** `Class.name(descriptor)` when known, else '' */
    readonly method: string,
    /** bytecode index the problem is at */
    readonly bci: number,
    detail: string,
  ) {
    super(`${method ? method + ': ' : ''}bci ${bci}: ${detail}`);
    this.name = 'CfgError';
  }
}

/** A class that could not be read from a directory, jar or trace; the other classes still load. */
export class ClassLoadError extends Error {
  constructor(
    /** where the bytes came from: a file, `jar!/entry`, or a trace's `loader:name` key */
    readonly source: string,
    /** internal class name as the source names it (from the entry's path or the trace key), '' when unknown */
    readonly className: string,
    /** byte offset in the class file (or the jar) where reading failed; -1 when not about a byte */
    readonly offset: number,
    detail: string,
  ) {
    super(`${source}${className ? ` (${className})` : ''}${offset >= 0 ? `: byte ${offset}` : ''}: ${detail}`);
    this.name = 'ClassLoadError';
  }
}
