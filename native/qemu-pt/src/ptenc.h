/* Intel PT packet encoder (Intel SDM vol. 3C, chapter "Intel Processor Trace", packet formats).
 * Pure: appends packets to a growable byte buffer; the caller decides when each packet is due. */
#ifndef JPORTAL_PTENC_H
#define JPORTAL_PTENC_H
#include <stddef.h>
#include <stdint.h>

typedef struct pt_encoder {
  uint8_t *buf;
  size_t len, cap;
  uint64_t last_ip;        /* for IP compression; reset by PSB */
  uint64_t tnt_bits;       /* pending TNT bits, oldest in the highest position */
  unsigned tnt_count;
  uint64_t bytes_since_psb;
  /* timing beyond TSC (0 = off): a crystal clock CTC = TSC / ctc_ratio; MTC packets when
   * CTC[mtc_freq+7:mtc_freq] changes (checked before each packet); CYC packets (core cycles = TSC ticks)
   * before each TNT and IP packet. `now` reads the TSC. */
  unsigned ctc_ratio, mtc_freq, cyc, nom_freq;
  uint64_t (*now)(void);
  uint64_t last_mtc, last_cyc_tsc;
  int timing_started;
  /* loss model: while `dropping`, packets are produced (counted) but not stored */
  int dropping;
  uint64_t produced, emitted;
  /* of `produced`, the bytes of timing packets sent because wall-clock time passed (MTC, CYC, re-anchoring
   * TSC): under emulation their rate per instruction follows the host's speed and load, not the program */
  uint64_t timing_produced;
  uint64_t counts[16];     /* packets written, by enum pt_enc_kind */
} pt_encoder;

enum pt_enc_kind { PTE_PSB, PTE_PSBEND, PTE_TNT8, PTE_TNT64, PTE_TIP, PTE_PGE, PTE_PGD, PTE_FUP, PTE_MODE, PTE_TSC, PTE_OVF, PTE_PAD, PTE_MTC, PTE_TMA, PTE_CYC, PTE_CBR, PTE_KINDS };
extern const char *const pt_enc_kind_names[PTE_KINDS];

void pt_enc_init(pt_encoder *e);
/* Turns on MTC (with TMA in PSB+) and optionally CYC (with CBR in PSB+). */
void pt_enc_set_timing(pt_encoder *e, uint64_t (*now)(void), unsigned ctc_ratio, unsigned mtc_freq, int cyc, unsigned nom_freq);
void pt_enc_free(pt_encoder *e);

/* TNT bits are buffered; they are flushed (as long or short TNT) when 47 are pending or before any packet
 * that must follow them in order (every IP packet and PSB). */
void pt_enc_tnt(pt_encoder *e, int taken);
void pt_enc_flush_tnt(pt_encoder *e);

/* IP packets. `ip_valid` = 0 sends the packet with a suppressed IP (IPBytes 000). */
void pt_enc_tip(pt_encoder *e, uint64_t ip);
void pt_enc_tip_pge(pt_encoder *e, uint64_t ip);
void pt_enc_tip_pgd(pt_encoder *e, uint64_t ip, int ip_valid);
void pt_enc_fup(pt_encoder *e, uint64_t ip);

void pt_enc_mode_exec64(pt_encoder *e);
void pt_enc_tsc(pt_encoder *e, uint64_t tsc);
void pt_enc_ovf(pt_encoder *e);
/* After a loss: OVF, then FUP with an absolute IP (tracing resumes at `ip`); discards pending TNT bits,
 * which belong to the lost stretch. */
void pt_enc_resume_after_loss(pt_encoder *e, uint64_t ip);
/* PSB+: PSB, TSC, MODE.Exec, FUP(ip) when tracing is enabled (`enabled`), PSBEND. Resets IP compression. */
void pt_enc_psb_plus(pt_encoder *e, uint64_t tsc, int enabled, uint64_t ip);

#endif
