/**
 * The JaCoCo 0.8.6 filters that remove whole methods from its counters, applied the same way so that our
 * counters can be compared with JaCoCo's. Filters that remove parts of a method (duplicated finally blocks,
 * the hashCode dispatch of a string switch, monitorexit handlers of synchronized blocks, try-with-resources
 * bodies, ...) are not applied: we count every bytecode instruction (docs/coverage.md lists the differences).
 */
import type { ClassFile, MethodInfo } from '@jportal/classfile';

const ACC_PRIVATE = 0x0002;
const ACC_SYNTHETIC = 0x1000;
const ACC_ENUM = 0x4000;

/** aload_0; invokespecial #n; return: a constructor that only calls super() (or with the enum's two arguments). */
function onlyCallsSuper(cf: ClassFile, code: Uint8Array, loads: number[]): boolean {
  const n = loads.length;
  if (code.length !== n + 4) return false;
  for (let i = 0; i < n; i++) if (code[i] !== loads[i]) return false;
  if (code[n] !== 0xb7 || code[n + 3] !== 0xb1) return false;
  const ref = cf.methodRef((code[n + 1] << 8) | code[n + 2]);
  return !!ref && ref.name === '<init>' && ref.className === cf.superName;
}

/** Why JaCoCo 0.8.6 leaves the method out of every counter, or undefined when it counts it. */
export function jacocoFilter(cf: ClassFile, m: MethodInfo, code: Uint8Array): string | undefined {
  // SyntheticFilter: synthetic methods (bridges, accessors, ...), but not lambda bodies
  if (m.access & ACC_SYNTHETIC && !m.name.startsWith('lambda$')) return 'synthetic';
  if (cf.access & ACC_ENUM) {
    // EnumFilter: the compiler-generated values() and valueOf(String)
    if (m.name === 'values' && m.descriptor === `()[L${cf.name};`) return 'enum values()';
    if (m.name === 'valueOf' && m.descriptor === `(Ljava/lang/String;)L${cf.name};`) return 'enum valueOf()';
    // EnumEmptyConstructorFilter: the private (String, int) constructor that only calls Enum's
    if (m.name === '<init>' && m.descriptor === '(Ljava/lang/String;I)V' && onlyCallsSuper(cf, code, [0x2a, 0x2b, 0x1c])) return 'empty enum constructor';
  }
  // PrivateEmptyNoArgConstructorFilter
  if (m.name === '<init>' && m.descriptor === '()V' && m.access & ACC_PRIVATE && onlyCallsSuper(cf, code, [0x2a])) return 'private empty constructor';
  return undefined;
}
