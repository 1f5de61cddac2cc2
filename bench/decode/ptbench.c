/* libipt on a jportal trace, for bench/decode/run.js: the packet decoder or the block decoder over one PT
 * stream, with the code image (the latest bytes of every code-cache section, exported by run.js) served from
 * memory. Prints one JSON line: mode, seconds, bytes, packets or blocks/instructions, errors.
 *   ptbench pkt|blk STREAM.pt IMAGE.bin CTC_RATIO MTC_FREQ NOM_FREQ */
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* blocks walked at one packet offset before a walk is declared runaway (see the block loop) */
#define RUNAWAY_BLOCKS 4096

typedef struct { uint64_t begin; uint32_t len; const uint8_t *bytes; } sec_t;
static sec_t *S;
static size_t NS;

static int cmp(const void *a, const void *b) {
  const sec_t *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
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
  size_t n = s->begin + s->len - ip;
  if (n > size) n = size;
  memcpy(buf, s->bytes + (ip - s->begin), n);
  return (int)n;
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
  if (argc < 7) { fprintf(stderr, "usage: ptbench pkt|blk STREAM IMAGE CTC_RATIO MTC_FREQ NOM_FREQ\n"); return 2; }
  size_t ptlen, imglen;
  uint8_t *pt = slurp(argv[2], &ptlen);
  uint8_t *img = slurp(argv[3], &imglen);
  size_t cap = 1024;
  S = malloc(cap * sizeof *S);
  for (size_t p = 0; p + 12 <= imglen;) {
    if (NS == cap) S = realloc(S, (cap *= 2) * sizeof *S);
    memcpy(&S[NS].begin, img + p, 8);
    memcpy(&S[NS].len, img + p + 8, 4);
    S[NS].bytes = img + p + 12;
    p += 12 + S[NS].len;
    NS++;
  }
  qsort(S, NS, sizeof *S, cmp);
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
    pt_image_set_callback(pt_blk_get_image(d), read_mem, NULL);
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
