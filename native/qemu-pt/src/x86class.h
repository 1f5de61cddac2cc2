/* Control-flow class of one x86-64 instruction, from its bytes: what an Intel PT encoder must know. */
#ifndef JPORTAL_X86CLASS_H
#define JPORTAL_X86CLASS_H
#include <stdint.h>

enum insn_kind {
  IK_NONE,   /* falls through */
  IK_JCC,    /* conditional near branch (incl. jrcxz, loop): one TNT bit */
  IK_JMP,    /* direct near jump: no packet */
  IK_CALL,   /* direct near call: no packet */
  IK_IJMP,   /* indirect near jump: TIP */
  IK_ICALL,  /* indirect near call: TIP */
  IK_RET,    /* near return: TIP (no return compression) */
  IK_FAR,    /* far transfers and traps: syscall, int, ud2, hlt, far jmp/call/ret, iret */
};

typedef struct insn_class {
  uint8_t kind;
  uint8_t rep; /* a rep-prefixed string instruction: QEMU re-enters it once per iteration */
  uint64_t target; /* direct branch target */
} insn_class;

insn_class x86_classify(const uint8_t *bytes, unsigned len, uint64_t va);
#endif
