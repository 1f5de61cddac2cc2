/** @jportal/recover: fills the gaps PT loss leaves in a thread's decoded events. */
export { recoverGaps, RECOVERED_SOURCE } from './gaps';
export type { RecoveryOptions, RecoveryStats, GapFill } from './gaps';
