/** @jportal/classfile: Java class files as the decoder and the reconstruction need them. */
export { parseClass, ClassFormatError, lineOf } from './parse';
export type { ClassFile, MethodInfo, MethodRef, ExceptionHandler } from './parse';
export { instructionLength, forEachInstruction, successors, switchTable, INVOKE_OPCODES, OPCODE_NAMES, opcodeName } from './bytecode';
export type { SwitchTable } from './bytecode';
export { JImage, JImageError, JImageDecompressorError, jimageHash } from './jimage';
export type { JImageHeader, JImageLocation } from './jimage';
export { readZip, ZipError } from './zip';
export type { ZipEntry } from './zip';
