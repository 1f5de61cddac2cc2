/* libipt on a jportal trace, for bench/decode/run.js: the packet decoder or the block decoder over one PT
 * stream, with the code image exported by run.js served from memory through libipt's read-memory callback (as
 * perf's decoder does). Prints one JSON line: mode, seconds, bytes, packets or blocks/instructions, errors.
 *   ptbench pkt|blk|blkt STREAM.pt IMAGE.bin CTC_RATIO MTC_FREQ NOM_FREQ
 * blk: the latest bytes of every code section only (IMAGE: per section begin u64, len u32, bytes).
 * blkt: every version of every section with its time span (IMAGE: begin u64, len u32, validFrom u64, validTo u64,
 * bytes): a read at an address is served from the version whose span holds the decoder's current time
 * (pt_blk_time), i.e. the same time-indexed image our decoder walks; with none, the newest version begun by then,
 * else the oldest. */
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* blocks walked at one packet offset before a walk is declared runaway (see the block loop) */
#define RUNAWAY_BLOCKS 4096

typedef struct { uint64_t begin; uint32_t len; uint64_t from, to; const uint8_t *bytes; } sec_t;
static sec_t *S;
static size_t NS;
/* blkt: (page, section) pairs sorted by page, so a read finds every version overlapping its page */
typedef struct { uint64_t page; uint32_t sec; } pg_t;
static pg_t *P;
static size_t NP;
static int timed;
#define PAGE_SHIFT 12

static int cmp(const void *a, const void *b) {
  const sec_t *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int cmp_pg(const void *a, const void *b) {
  const pg_t *x = a, *y = b;
  return x->page < y->page ? -1 : x->page > y->page ? 1 : (x->sec > y->sec) - (x->sec < y->sec);
}

static int serve(uint8_t *buf, size_t size, const sec_t *s, uint64_t ip) {
  size_t n = s->begin + s->len - ip;
  if (n > size) n = size;
  memcpy(buf, s->bytes + (ip - s->begin), n);
  return (int)n;
}

/* blkt: the version of the code at ip when the decoder (ctx) is at its current time */
static int read_mem_timed(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx) {
  (void)asid;
  static const sec_t *last;
  uint64_t tsc = 0;
  uint32_t lost_mtc, lost_cyc;
  if (pt_blk_time((struct pt_block_decoder *)ctx, &tsc, &lost_mtc, &lost_cyc) < 0) tsc = 0;
  if (last && ip >= last->begin && ip < last->begin + last->len && tsc >= last->from && tsc < last->to) return serve(buf, size, last, ip);
  uint64_t page = ip >> PAGE_SHIFT;
  size_t lo = 0, hi = NP;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (P[mid].page < page) lo = mid + 1;
    else hi = mid;
  }
  const sec_t *hit = NULL, *begun = NULL, *oldest = NULL;
  for (size_t i = lo; i < NP && P[i].page == page; i++) {
    const sec_t *s = &S[P[i].sec];
    if (ip < s->begin || ip >= s->begin + s->len) continue;
    if (tsc >= s->from && tsc < s->to) { hit = s; break; }
    if (s->from <= tsc && (!begun || s->from > begun->from)) begun = s;
    if (!oldest || s->from < oldest->from) oldest = s;
  }
  if (!hit) hit = begun ? begun : oldest;
  if (!hit) return -pte_nomap;
  last = hit;
  return serve(buf, size, hit, ip);
}

static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx) {
  (void)asid, (void)ctx;
  size_t lo = 0, hi = NS;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (S[mid].begin <= ip) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return -pte_nomap;
  const sec_t *s = &S[lo - 1];
  if (ip >= s->begin + s->len) return -pte_nomap;
  return serve(buf, size, s, ip);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len ? *len : 1);
  if (fread(b, 1, *len, f) != *len) { perror(path); exit(2); }
  fclose(f);
  return b;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 7) { fprintf(stderr, "usage: ptbench pkt|blk|blkt STREAM IMAGE CTC_RATIO MTC_FREQ NOM_FREQ\n"); return 2; }
  timed = !strcmp(argv[1], "blkt");
  size_t ptlen, imglen;
  uint8_t *pt = slurp(argv[2], &ptlen);
  uint8_t *img = slurp(argv[3], &imglen);
  size_t cap = 1024;
  S = malloc(cap * sizeof *S);
  for (size_t p = 0; p + 12 <= imglen;) {
    if (NS == cap) S = realloc(S, (cap *= 2) * sizeof *S);
    memcpy(&S[NS].begin, img + p, 8);
    memcpy(&S[NS].len, img + p + 8, 4);
    size_t head = 12;
    S[NS].from = 0, S[NS].to = UINT64_MAX;
    if (timed) {
      memcpy(&S[NS].from, img + p + 12, 8);
      memcpy(&S[NS].to, img + p + 20, 8);
      head = 28;
    }
    S[NS].bytes = img + p + head;
    p += head + S[NS].len;
    NS++;
  }
  qsort(S, NS, sizeof *S, cmp);
  if (timed) {
    size_t cap_p = 1024;
    P = malloc(cap_p * sizeof *P);
    for (size_t i = 0; i < NS; i++) {
      if (!S[i].len) continue;
      for (uint64_t pg = S[i].begin >> PAGE_SHIFT; pg <= (S[i].begin + S[i].len - 1) >> PAGE_SHIFT; pg++) {
        if (NP == cap_p) P = realloc(P, (cap_p *= 2) * sizeof *P);
        P[NP].page = pg, P[NP].sec = (uint32_t)i, NP++;
      }
    }
    qsort(P, NP, sizeof *P, cmp_pg);
  }
  struct pt_config cfg;
  pt_config_init(&cfg);
  cfg.begin = pt;
  cfg.end = pt + ptlen;
  cfg.cpuid_0x15_eax = 1;
  cfg.cpuid_0x15_ebx = (uint32_t)atoi(argv[4]);
  cfg.mtc_freq = (uint8_t)atoi(argv[5]);
  cfg.nom_freq = (uint8_t)atoi(argv[6]);
  uint64_t items = 0, insns = 0, errors = 0;
  double t0 = now();
  if (!strcmp(argv[1], "pkt")) {
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&cfg);
    int st = pt_pkt_sync_forward(d);
    while (st >= 0) {
      struct pt_packet p;
      st = pt_pkt_next(d, &p, sizeof p);
      if (st == -pte_eos) break;
      if (st < 0) {
        errors++;
        st = pt_pkt_sync_forward(d);
        continue;
      }
      items++;
    }
    pt_pkt_free_decoder(d);
  } else {
    struct pt_block_decoder *d = pt_blk_alloc_decoder(&cfg);
    if (timed) pt_image_set_callback(pt_blk_get_image(d), read_mem_timed, d);
    else pt_image_set_callback(pt_blk_get_image(d), read_mem, NULL);
    int st = pt_blk_sync_forward(d);
    uint64_t last_off = (uint64_t)-1, same_off = 0;
    while (st >= 0 || st == -pte_nomap || st == -pte_bad_insn) {
      if (st < 0) goto resync;
      while (st & pts_event_pending) {
        struct pt_event ev;
        st = pt_blk_event(d, &ev, sizeof ev);
        if (st < 0) break;
      }
      if (st < 0) {
        if (st == -pte_eos) break;
        goto resync;
      }
      struct pt_block b;
      st = pt_blk_next(d, &b, sizeof b);
      if (b.ninsn) items++, insns += b.ninsn;
      // a cycle of direct branches reads no packet: libipt would follow it for ever (our decoder stops such a
      // walk too, as a runaway). After RUNAWAY_BLOCKS blocks at one packet offset: count an error and resync.
      // Real code passes a conditional or indirect branch (a packet) every few blocks, so 4096 cuts no real walk;
      // a larger bound only makes libipt slower where its latest-bytes image has a stale cycle (h2 short: 33.8 k
      // such cycles, 142 s at 10,000 blocks each, over 30 min at a million)
      uint64_t off = 0;
      if (pt_blk_get_offset(d, &off) >= 0) {
        if (off != last_off) last_off = off, same_off = 0;
        else if (++same_off > RUNAWAY_BLOCKS && st >= 0) {
          same_off = 0;
          goto resync;
        }
      }
      if (st >= 0 || st == -pte_eos) {
        if (st == -pte_eos) break;
        continue;
      }
    resync:
      errors++;
      st = pt_blk_sync_forward(d);
      if (st == -pte_eos) break;
    }
    pt_blk_free_decoder(d);
  }
  double dt = now() - t0;
  printf("{\"mode\":\"%s\",\"seconds\":%.6f,\"bytes\":%zu,\"items\":%llu,\"insns\":%llu,\"errors\":%llu}\n", argv[1], dt, ptlen,
         (unsigned long long)items, (unsigned long long)insns, (unsigned long long)errors);
  return 0;
}
