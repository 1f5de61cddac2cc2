/**
 * compareCoverage on JaCoCo XML reports: lines where the classes have line-number tables; where they have none (Debian's
 * sunflow.jar), the methods each tool saw run (a method element whose INSTRUCTION counter covers some).
 */
import { compareCoverage } from '../src/commands/bench';

/** A JaCoCo XML report of one class compiled without line numbers: method elements and their counters only. */
function report(covered: Record<string, number>): string {
  const methods = Object.entries(covered)
    .map(([m, c]) => {
      const [name, desc] = m.split(' ');
      return `<method name="${name.replace('<', '&lt;').replace('>', '&gt;')}" desc="${desc}"><counter type="INSTRUCTION" missed="${10 - c}" covered="${c}"/><counter type="METHOD" missed="${c ? 0 : 1}" covered="${c ? 1 : 0}"/></method>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><report name="x"><package name="org/sunflow/math"><class name="org/sunflow/math/Point3" sourcefilename="Point3.java">${methods}<counter type="INSTRUCTION" missed="1" covered="1"/></class><sourcefile name="Point3.java"><counter type="INSTRUCTION" missed="1" covered="1"/></sourcefile></package></report>`;
}

test('a jar without line numbers is compared by the methods each tool saw run', () => {
  const jacoco = report({ '<init> ()V': 4, 'dot (Lorg/sunflow/math/Point3;)F': 10, 'mid ()V': 3, 'never ()V': 0, 'cold ()V': 0 });
  const ours = report({ '<init> ()V': 10, 'dot (Lorg/sunflow/math/Point3;)F': 7, 'mid ()V': 0, 'never ()V': 0, 'cold ()V': 2 });
  const c = compareCoverage(jacoco, ours);
  expect(c.unit).toBe('method');
  expect([c.jacocoCovered, c.oursCovered, c.both, c.onlyJacoco, c.onlyOurs]).toEqual([3, 3, 2, 1, 1]);
  expect(c.agreement).toBeCloseTo(2 / 4);
  expect(c.onlyJacocoSample).toEqual(['org/sunflow/math/Point3.mid()V']);
  expect(c.onlyOursSample).toEqual(['org/sunflow/math/Point3.cold()V']);
  expect(c.byFile).toEqual([{ file: 'org/sunflow/math/Point3', onlyJacoco: 1, onlyOurs: 1 }]);
  expect(c.twins).toBeUndefined();
});

test('with line numbers the lines are compared, not the methods', () => {
  const lines = (ci: number[]) =>
    `<report name="x"><package name="p"><class name="p/A" sourcefilename="A.java"><method name="f" desc="()V" line="3"><counter type="INSTRUCTION" missed="0" covered="5"/></method></class><sourcefile name="A.java">${ci.map((c, i) => `<line nr="${i + 3}" mi="${c ? 0 : 2}" ci="${c}" mb="0" cb="0"/>`).join('')}</sourcefile></package></report>`;
  const c = compareCoverage(lines([2, 2, 0]), lines([2, 0, 1]));
  expect(c.unit).toBeUndefined();
  expect([c.jacocoCovered, c.oursCovered, c.both, c.onlyJacoco, c.onlyOurs]).toEqual([2, 2, 1, 1, 1]);
  expect(c.onlyJacocoSample).toEqual(['p/A.java:4']);
});
