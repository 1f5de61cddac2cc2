/** @jportal/reconstruct: decoded events checked against the ICFG, contradictions reported, missing bytecodes inserted. */
export { checkAndRepair, shortestPathBetween, RECONSTRUCTED_SOURCE, Contradiction, CONTRADICTION_NAMES, Repair } from './check';
export type { CheckOptions, PathBetween, ReconstructReport, ContradictionExample, ContradictionClass, ContradictionName, RepairKind } from './check';
export { cfgFromModel } from './model';
export type { CfgSource } from './model';
export { attributeOrphans, OrphanContext } from './orphans';
export type { OrphanOptions, OrphanReport, OrphanFrameDetail } from './orphans';
