/**
 * A source map (v3, @jridgewell/gen-mapping) per class from bytecode to source. Generated coordinates: line =
 * the method's index among the class's methods with code, in class-file order (0-based, as source maps count;
 * `x_jportal_methods[line]` names it, "name+descriptor"), column = bci. Each instruction maps to (its source
 * line, column 0); an instruction without a line number is not mapped. The first instruction carries the
 * method's name.
 */
import { addSegment, GenMapping, toEncodedMap } from '@jridgewell/gen-mapping';
import { ClassCoverage } from './compute';

export interface ClassSourceMap {
  version: 3;
  file: string;
  sources: (string | null)[];
  names: string[];
  mappings: string;
  x_jportal_methods: string[];
  x_jportal_coordinates: string;
}

/** `source`: how the map names the .java file (e.g. a path relative to the map). */
export function classSourceMap(cls: ClassCoverage, source: string): ClassSourceMap {
  const map = new GenMapping({ file: `${cls.name.slice(cls.name.lastIndexOf('/') + 1)}.class` });
  cls.methods.forEach((mc, line) => {
    for (let k = 0; k < mc.insns.length; k++) {
      const nr = mc.lines[k];
      if (nr < 0) continue;
      if (k === 0) addSegment(map, line, mc.insns[k], source, nr - 1, 0, mc.name);
      else addSegment(map, line, mc.insns[k], source, nr - 1, 0);
    }
  });
  const enc = toEncodedMap(map);
  return {
    version: 3, file: enc.file ?? '', sources: [...enc.sources], names: [...enc.names], mappings: enc.mappings,
    x_jportal_methods: cls.methods.map((m) => m.name + m.descriptor),
    x_jportal_coordinates: 'generated line = method index (class-file order, methods with code), generated column = bci',
  };
}
