/** Reading a trace directory in the end-to-end tests, through @jportal/format. */
import * as path from 'path';
import { readMetaFile, ReadProblem, TraceRecord } from '@jportal/format';
import { ClassFile, parseClass } from '@jportal/classfile';
import { CLASS_PATH_SOURCE, IMAGE_CLASS_SOURCE, readNamedClasses } from '@jportal/decode';

export class Trace {
  readonly records: TraceRecord<any>[];
  readonly problems: string[];
  private readonly byTypeCache = new Map<string, TraceRecord<any>[]>();
  private readonly methods = new Map<number, any>();

  constructor(dir: string) {
    const r = readMetaFile(path.join(dir, 'meta.jpt'));
    this.records = r.records as TraceRecord<any>[];
    this.problems = r.problems.map((p: ReadProblem) => p.message);
    for (const rec of this.records) {
      const list = this.byTypeCache.get(rec.typeName) ?? [];
      list.push(rec);
      this.byTypeCache.set(rec.typeName, list);
      if (rec.typeName === 'METHOD') this.methods.set(rec.payload.method, rec.payload);
    }
  }

  byType(name: string): TraceRecord<any>[] {
    return this.byTypeCache.get(name) ?? [];
  }

  method(id: number): any {
    const m = this.methods.get(id);
    if (!m) throw new Error(`no METHOD record for id ${id}`);
    return m;
  }

  methodName(id: number): string {
    const m = this.method(id);
    return `${m.class_name.replace(/\//g, '.')}.${m.name}${m.signature}`;
  }
}

export function readTrace(dir: string): Trace {
  return new Trace(dir);
}

/** Classes recorded in a trace, parsed lazily, found by (loader, name). */
export class ClassIndex {
  private readonly raw = new Map<string, Uint8Array>();
  private readonly parsed = new Map<string, ClassFile>();

  /** what could not be read (named classes whose runtime image or class path entry is missing) */
  readonly problems: string[] = [];

  constructor(trace: Trace) {
    // classes named only (CLASS source 3: runtime image; 4: class path, then runtime image) are read as @jportal/decode reads them
    const image = new Map<string, string>();
    const classPath = new Map<string, string>();
    for (const r of trace.byType('CLASS')) {
      const key = `${r.payload.loader}:${r.payload.name}`;
      if (r.payload.bytes.length === 0 && r.payload.source === IMAGE_CLASS_SOURCE) image.set(key, r.payload.name);
      else if (r.payload.bytes.length === 0 && r.payload.source === CLASS_PATH_SOURCE) classPath.set(key, r.payload.name);
      else this.raw.set(key, r.payload.bytes);
    }
    readNamedClasses(image, classPath, trace.byType('VM_INFO')[0]?.payload, {}, this.raw, this.problems);
  }

  private get(loader: number, name: string): ClassFile | undefined {
    const key = `${loader}:${name}`;
    let c = this.parsed.get(key);
    if (!c) {
      const bytes = this.raw.get(key);
      if (!bytes) return undefined;
      c = parseClass(bytes, `CLASS ${name}`);
      this.parsed.set(key, c);
    }
    return c;
  }

  byName(name: string): ClassFile | undefined {
    for (const key of this.raw.keys()) if (key.endsWith(`:${name}`)) return this.get(Number(key.split(':')[0]), name);
    return undefined;
  }

  /** Bytecode of a METHOD record's method, from the recorded class bytes. */
  bytecode(m: { loader: number; class_name: string; name: string; signature: string }): Uint8Array | undefined {
    return this.get(m.loader, m.class_name)?.method(m.name, m.signature)?.code;
  }
}
