/** @jportal/icfg: per-method control-flow graphs and the interprocedural CFG over class files. */
export { MethodCfg } from './cfg';
export type { EdgeList, ControlView, Subroutine } from './cfg';
export type { InstructionTable } from './instructions';
export { InsnKind, EdgeKind, INSN_KIND_NAMES, EDGE_KIND_NAMES } from './kinds';
export { ShortestPaths } from './paths';
export type { SearchOptions } from './paths';
export { ClassHierarchy, methodKey } from './hierarchy';
export type { ClassNode, MethodNode } from './hierarchy';
export { Icfg, CallKind, CALL_KIND_NAMES } from './icfg';
export type { CallSite } from './icfg';
export { loadClasspath, loadKeyedClasses, hierarchyOf } from './classpath';
export type { LoadedClass, LoadResult } from './classpath';
export { CfgError, ClassLoadError } from './errors';
