export { OPCODE_NAMES, opcodeName } from '@jportal/classfile';
