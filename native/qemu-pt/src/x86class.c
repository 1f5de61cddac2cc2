#include "x86class.h"

#include <string.h>

static int is_legacy_prefix(uint8_t b) {
  return b == 0x66 || b == 0x67 || b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 ||
         b == 0x64 || b == 0x65 || b == 0xF0;
}

insn_class x86_classify(const uint8_t *b, unsigned len, uint64_t va) {
  insn_class c = {IK_NONE, 0, 0};
  unsigned i = 0, repPrefix = 0;
  while (i < len && is_legacy_prefix(b[i])) {
    if (b[i] == 0xF2 || b[i] == 0xF3) repPrefix = 1;
    i++;
  }
  if (i < len && (b[i] & 0xF0) == 0x40) i++; /* REX */
  if (i >= len) return c;
  uint64_t next = va + len;
  uint8_t op = b[i];
  int32_t rel32;
  if (op >= 0x70 && op <= 0x7F && i + 1 < len) {
    c.kind = IK_JCC;
    c.target = next + (int8_t)b[i + 1];
  } else if (op >= 0xE0 && op <= 0xE3 && i + 1 < len) {
    c.kind = IK_JCC; /* loopne, loope, loop, jrcxz */
    c.target = next + (int8_t)b[i + 1];
  } else if (op == 0x0F && i + 1 < len) {
    uint8_t op2 = b[i + 1];
    if (op2 >= 0x80 && op2 <= 0x8F && i + 6 <= len) {
      memcpy(&rel32, b + i + 2, 4);
      c.kind = IK_JCC;
      c.target = next + rel32;
    } else if (op2 == 0x05 || op2 == 0x34 || op2 == 0x35 || op2 == 0x07 || op2 == 0x0B || op2 == 0xFF || op2 == 0xB9) {
      c.kind = IK_FAR; /* syscall, sysenter, sysexit, sysret, ud2, ud0, ud1 */
    }
  } else if (op == 0xEB && i + 1 < len) {
    c.kind = IK_JMP;
    c.target = next + (int8_t)b[i + 1];
  } else if (op == 0xE9 && i + 5 <= len) {
    memcpy(&rel32, b + i + 1, 4);
    c.kind = IK_JMP;
    c.target = next + rel32;
  } else if (op == 0xE8 && i + 5 <= len) {
    memcpy(&rel32, b + i + 1, 4);
    c.kind = IK_CALL;
    c.target = next + rel32;
  } else if (op == 0xC3 || op == 0xC2) {
    c.kind = IK_RET;
  } else if (op == 0xFF && i + 1 < len) {
    unsigned reg = (b[i + 1] >> 3) & 7;
    if (reg == 2) c.kind = IK_ICALL;
    else if (reg == 4) c.kind = IK_IJMP;
    else if (reg == 3 || reg == 5) c.kind = IK_FAR;
  } else if (op == 0xCA || op == 0xCB || op == 0xCC || op == 0xCD || op == 0xCE || op == 0xCF || op == 0xF4 || op == 0x9A ||
             op == 0xEA || op == 0xF1) {
    c.kind = IK_FAR;
  } else if (repPrefix && ((op >= 0xA4 && op <= 0xA7) || (op >= 0xAA && op <= 0xAF) || (op >= 0x6C && op <= 0x6F))) {
    c.rep = 1;
  }
  return c;
}
