#include "ptenc.h"

#include <stdlib.h>
#include <string.h>

const char *const pt_enc_kind_names[PTE_KINDS] = {"psb", "psbend", "tnt8", "tnt64", "tip", "tip.pge", "tip.pgd", "fup", "mode.exec",
                                                   "tsc", "ovf", "pad", "mtc", "tma", "cyc", "cbr"};

void pt_enc_init(pt_encoder *e) { memset(e, 0, sizeof *e); }

void pt_enc_set_timing(pt_encoder *e, uint64_t (*now)(void), unsigned ctc_ratio, unsigned mtc_freq, int cyc, unsigned nom_freq) {
  e->now = now;
  e->ctc_ratio = ctc_ratio ? ctc_ratio : 1;
  e->mtc_freq = mtc_freq;
  e->cyc = cyc;
  e->nom_freq = nom_freq ? nom_freq : 1;
}
void pt_enc_free(pt_encoder *e) {
  free(e->buf);
  memset(e, 0, sizeof *e);
}

static void put(pt_encoder *e, const void *p, size_t n) {
  e->produced += n;
  e->bytes_since_psb += n;
  if (e->dropping) return;
  e->emitted += n;
  if (e->len + n > e->cap) {
    size_t cap = e->cap ? e->cap : 4096;
    while (cap < e->len + n) cap *= 2;
    uint8_t *nb = realloc(e->buf, cap);
    if (!nb) abort(); /* out of memory in the emulator: nothing sensible to degrade to */
    e->buf = nb;
    e->cap = cap;
  }
  memcpy(e->buf + e->len, p, n);
  e->len += n;
}
static void put8(pt_encoder *e, uint8_t b) { put(e, &b, 1); }

/* MTC when the CTC has crossed into a new 2^mtc_freq period since the last one (real hardware sends them
 * as they happen; sending the due one before the next packet is what a decoder can observe anyway). */
void pt_enc_tsc(pt_encoder *e, uint64_t tsc);

static void emit_cyc(pt_encoder *e, uint64_t cycles) {
  uint8_t p[10];
  size_t n = 0;
  p[n++] = (uint8_t)(0x03 | ((cycles & 0x1f) << 3) | (cycles > 0x1f ? 0x04 : 0));
  cycles >>= 5;
  while (cycles && n < sizeof p) {
    p[n++] = (uint8_t)(((cycles & 0x7f) << 1) | (cycles > 0x7f ? 1 : 0));
    cycles >>= 7;
  }
  put(e, p, n);
  if (!e->dropping) e->counts[PTE_CYC]++;
}

/* MTC when the CTC has crossed into a new 2^mtc_freq period since the last one. Real hardware sends it at the
 * edge with a CYC for the cycles up to the edge; here it is sent before the next packet, preceded by that CYC,
 * so a decoder sees the same time line. */
static void timing_before_packet(pt_encoder *e, int cyc_eligible) {
  if (!e->now || !e->timing_started) return;
  uint64_t before = e->produced;
  uint64_t tsc = e->now();
  uint64_t period = (tsc / e->ctc_ratio) >> e->mtc_freq;
  if (period - e->last_mtc > 255) {
    /* so long without a packet (the host descheduled the thread) that an 8-bit MTC payload would wrap:
     * re-anchor time with a TSC packet instead, as the return from a real descheduling would */
    pt_enc_tsc(e, tsc);
    e->last_mtc = period;
  } else if (period != e->last_mtc) {
    uint64_t edge = (period << e->mtc_freq) * e->ctc_ratio;
    if (e->cyc && edge > e->last_cyc_tsc) {
      emit_cyc(e, edge - e->last_cyc_tsc);
      e->last_cyc_tsc = edge;
    }
    e->last_mtc = period;
    uint8_t p[2] = {0x59, (uint8_t)period}; /* MTC: CTC[mtc_freq+7:mtc_freq] */
    put(e, p, 2);
    if (!e->dropping) e->counts[PTE_MTC]++;
  }
  if (e->cyc && cyc_eligible) {
    emit_cyc(e, tsc - e->last_cyc_tsc); /* core clock modeled as the TSC: CBR == nominal ratio */
    e->last_cyc_tsc = tsc;
  }
  e->timing_produced += e->produced - before;
}

static void emit_tnt(pt_encoder *e, uint64_t bits, unsigned n) {
  /* payload: a stop bit above the n TNT bits, oldest TNT bit highest */
  uint64_t payload = (1ull << n) | bits;
  if (n <= 6) {
    put8(e, (uint8_t)(payload << 1)); /* short TNT: bit 0 is 0 */
    if (!e->dropping) e->counts[PTE_TNT8]++;
  } else {
    uint8_t p[8] = {0x02, 0xa3};
    for (int i = 0; i < 6; i++) p[2 + i] = (uint8_t)(payload >> (8 * i));
    put(e, p, 8);
    if (!e->dropping) e->counts[PTE_TNT64]++;
  }
}

void pt_enc_flush_tnt(pt_encoder *e) {
  if (!e->tnt_count) return;
  timing_before_packet(e, 1);
  emit_tnt(e, e->tnt_bits, e->tnt_count);
  e->tnt_bits = 0;
  e->tnt_count = 0;
}

void pt_enc_tnt(pt_encoder *e, int taken) {
  e->tnt_bits = (e->tnt_bits << 1) | (taken ? 1 : 0);
  if (++e->tnt_count == 47) pt_enc_flush_tnt(e);
}

/* IP compression against the last IP (SDM: IPBytes 001 = 16 bits, 010 = 32, 011 = 48 sign-extended,
 * 100 = 48 with the upper 16 from the last IP, 110 = 64). */
static void emit_ip_packet(pt_encoder *e, uint8_t opcode, uint64_t ip, int valid, enum pt_enc_kind kind) {
  pt_enc_flush_tnt(e);
  timing_before_packet(e, 1);
  uint8_t p[9];
  size_t n;
  unsigned ipc;
  if (!valid) {
    ipc = 0;
    n = 0;
  } else if ((ip >> 16) == (e->last_ip >> 16)) {
    ipc = 1;
    n = 2;
  } else if ((ip >> 32) == (e->last_ip >> 32)) {
    ipc = 2;
    n = 4;
  } else if ((uint64_t)((int64_t)(ip << 16) >> 16) == ip) {
    ipc = 3;
    n = 6;
  } else {
    ipc = 6;
    n = 8;
  }
  p[0] = (uint8_t)(opcode | (ipc << 5));
  for (size_t i = 0; i < n; i++) p[1 + i] = (uint8_t)(ip >> (8 * i));
  put(e, p, 1 + n);
  if (valid) e->last_ip = ip;
  if (!e->dropping) e->counts[kind]++;
}

void pt_enc_tip(pt_encoder *e, uint64_t ip) { emit_ip_packet(e, 0x0d, ip, 1, PTE_TIP); }
void pt_enc_tip_pge(pt_encoder *e, uint64_t ip) { emit_ip_packet(e, 0x11, ip, 1, PTE_PGE); }
void pt_enc_tip_pgd(pt_encoder *e, uint64_t ip, int ip_valid) { emit_ip_packet(e, 0x01, ip, ip_valid, PTE_PGD); }
void pt_enc_fup(pt_encoder *e, uint64_t ip) { emit_ip_packet(e, 0x1d, ip, 1, PTE_FUP); }

void pt_enc_mode_exec64(pt_encoder *e) {
  uint8_t p[2] = {0x99, 0x01}; /* MODE leaf 000 (Exec), CS.L = 1: 64-bit */
  put(e, p, 2);
  if (!e->dropping) e->counts[PTE_MODE]++;
}

void pt_enc_tsc(pt_encoder *e, uint64_t tsc) {
  e->last_cyc_tsc = tsc; /* cycle counts restart at a TSC packet */
  uint8_t p[8] = {0x19};
  for (int i = 0; i < 7; i++) p[1 + i] = (uint8_t)(tsc >> (8 * i));
  put(e, p, 8);
  if (!e->dropping) e->counts[PTE_TSC]++;
}

void pt_enc_ovf(pt_encoder *e) {
  uint8_t p[2] = {0x02, 0xf3};
  put(e, p, 2);
  if (!e->dropping) e->counts[PTE_OVF]++;
}

/* TMA: the CTC value and the fast-counter remainder at `tsc`, so MTC packets count on from this TSC */
static void emit_tma(pt_encoder *e, uint64_t tsc) {
  uint64_t ctc = tsc / e->ctc_ratio;
  uint64_t fc = tsc % e->ctc_ratio;
  uint8_t tma[7] = {0x02, 0x73, (uint8_t)ctc, (uint8_t)(ctc >> 8), 0, (uint8_t)fc, (uint8_t)((fc >> 8) & 1)};
  put(e, tma, 7);
  if (!e->dropping) e->counts[PTE_TMA]++;
}

void pt_enc_psb_plus(pt_encoder *e, uint64_t tsc, int enabled, uint64_t ip) {
  pt_enc_flush_tnt(e);
  uint8_t psb[16];
  for (int i = 0; i < 16; i += 2) {
    psb[i] = 0x02;
    psb[i + 1] = 0x82;
  }
  put(e, psb, 16);
  if (!e->dropping) e->counts[PTE_PSB]++;
  e->bytes_since_psb = 16;
  e->last_ip = 0;
  pt_enc_tsc(e, tsc);
  if (e->now) {
    emit_tma(e, tsc);
    if (e->cyc) {
      uint8_t cbr[4] = {0x02, 0x03, (uint8_t)e->nom_freq, 0};
      put(e, cbr, 4);
      if (!e->dropping) e->counts[PTE_CBR]++;
    }
    e->last_mtc = (tsc / e->ctc_ratio) >> e->mtc_freq;
    e->last_cyc_tsc = tsc;
    e->timing_started = 1;
  }
  pt_enc_mode_exec64(e);
  if (enabled) {
    int started = e->timing_started;
    e->timing_started = 0; /* no timing packets inside PSB+ */
    emit_ip_packet(e, 0x1d, ip, 1, PTE_FUP);
    e->timing_started = started;
  }
  uint8_t end[2] = {0x02, 0x23};
  put(e, end, 2);
  if (!e->dropping) e->counts[PTE_PSBEND]++;
}

void pt_enc_resume_after_loss(pt_encoder *e, uint64_t ip) {
  e->tnt_bits = 0;
  e->tnt_count = 0;
  pt_enc_ovf(e);
  if (e->now && e->timing_started) {
    /* timing packets stopped with the rest during the overflow, and an 8-bit MTC cannot say how many periods
     * passed: re-anchor with TSC (+ TMA), as the SDM has a PT unit do after anything that stops its timing
     * packets — this is what gives a decoder the time span of the lost stretch */
    uint64_t tsc = e->now();
    pt_enc_tsc(e, tsc);
    emit_tma(e, tsc);
    e->last_mtc = (tsc / e->ctc_ratio) >> e->mtc_freq;
    e->timing_produced += 15;
  }
  e->last_ip = 0; /* with no base the FUP's IP is sent absolute (sign-extended 48 bits) */
  pt_enc_fup(e, ip);
}
