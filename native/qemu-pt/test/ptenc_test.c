/* The encoder's packets, read back by libipt's own packet decoder (the oracle): every packet kind, every
 * IP compression, short and long TNT. */
#include <intel-pt.h>
#include <stdio.h>
#include <string.h>

#include "../src/ptenc.h"

static int failures;
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      fprintf(stderr, "ptenc_test: FAILED %s (line %d)\n", #c, __LINE__); \
      failures++;                                                  \
    }                                                              \
  } while (0)

int main(void) {
  pt_encoder e;
  pt_enc_init(&e);
  pt_enc_psb_plus(&e, 0x123456789abcull, 1, 0x7f0000001000ull);
  pt_enc_tip_pge(&e, 0x7f0000001000ull);     /* same upper 48 bits as the FUP: 2 bytes */
  for (int i = 0; i < 5; i++) pt_enc_tnt(&e, i & 1);
  pt_enc_tip(&e, 0x7f0000ab1234ull);         /* 4 bytes */
  for (int i = 0; i < 40; i++) pt_enc_tnt(&e, (i % 3) == 0);
  pt_enc_tip(&e, 0x7f1100000000ull);         /* 6 bytes, sign-extended */
  pt_enc_fup(&e, 0xffff800000001000ull);     /* 6 bytes, sign-extended, kernel half */
  pt_enc_tip_pgd(&e, 0, 0);                  /* suppressed */
  pt_enc_tip_pge(&e, 0x0000123400005678ull);
  pt_enc_ovf(&e);
  pt_enc_tsc(&e, 42);

  struct pt_config cfg;
  pt_config_init(&cfg);
  cfg.begin = e.buf;
  cfg.end = e.buf + e.len;
  struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&cfg);
  CHECK(d != NULL);
  CHECK(pt_pkt_sync_forward(d) >= 0);
  enum pt_packet_type want[] = {ppt_psb, ppt_tsc, ppt_mode, ppt_fup, ppt_psbend, ppt_tip_pge, ppt_tnt_8, ppt_tip,
                                ppt_tnt_64, ppt_tip, ppt_fup, ppt_tip_pgd, ppt_tip_pge, ppt_ovf, ppt_tsc};
  size_t nwant = sizeof want / sizeof want[0];
  struct pt_packet p;
  size_t k = 0;
  uint64_t ips[8];
  size_t nips = 0;
  int ret;
  while ((ret = pt_pkt_next(d, &p, sizeof p)) > 0) {
    CHECK(k < nwant && p.type == want[k]);
    if (p.type == ppt_tsc && k == 1) CHECK(p.payload.tsc.tsc == 0x123456789abcull);
    if (p.type == ppt_mode) CHECK(p.payload.mode.leaf == pt_mol_exec && p.payload.mode.bits.exec.csl);
    if (p.type == ppt_tnt_8) {
      CHECK(p.payload.tnt.bit_size == 5);
      CHECK(p.payload.tnt.payload == 0x0a); /* 0,1,0,1,0 oldest first */
    }
    if (p.type == ppt_tnt_64) CHECK(p.payload.tnt.bit_size == 40);
    if (p.type == ppt_tip || p.type == ppt_fup || p.type == ppt_tip_pge || p.type == ppt_tip_pgd) {
      if (p.type == ppt_tip_pgd) CHECK(p.payload.ip.ipc == pt_ipc_suppressed);
      else if (nips < 8) ips[nips++] = p.payload.ip.ip;
    }
    k++;
  }
  CHECK(ret == -pte_eos);
  CHECK(k == nwant);
  /* compressed payloads: the low bytes as sent */
  CHECK(nips >= 6);
  if (nips >= 6) {
    CHECK(ips[0] == 0x7f0000001000ull);        /* FUP in PSB+: sent whole (last IP reset) */
    CHECK((ips[1] & 0xffff) == 0x1000);         /* PGE: 2 bytes */
    CHECK((ips[2] & 0xffffffff) == 0x00ab1234); /* 4 bytes */
  }
  pt_pkt_free_decoder(d);
  pt_enc_free(&e);
  if (failures) return 1;
  printf("ptenc_test: %zu packets round-trip through libipt's packet decoder\n", nwant);
  return 0;
}
