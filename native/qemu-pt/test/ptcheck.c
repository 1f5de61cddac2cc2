/* ptcheck: decodes one emulated PT stream with libipt (Intel's reference decoder) and checks that the
 * instruction flow it reconstructs equals the emulator's exact execution log, instruction for instruction.
 * Code bytes come from the log itself (each logged instruction carries the bytes QEMU executed), so the
 * check covers the encoding, not the agent's metadata.
 *   ptcheck THREAD.pt THREAD.log insns.bin      -> exit 0 and one summary line, or 1 with the first mismatches
 *   ptcheck --cpu CPU.pt K sideband.jsonl EXACTDIR
 *       per-CPU mode: the stream of emulated CPU K; each traced stretch (TIP.PGE .. TIP.PGD) is matched
 *       against the part of its thread's log the sideband's `switch` record names */
#include <fcntl.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_LEAVE 0xFFFFFFFFu
#define LOG_RESYNC 0xFFFFFFFEu
#define LOG_LOST_TAIL 0xFFFFFFFDu
#define IS_MARK(x) ((x) >= LOG_LOST_TAIL)

typedef struct {
  uint64_t va;
  uint32_t off;
  uint8_t len;
} desc;

static desc *D;
static uint8_t *BYTES;
static size_t ND;

typedef struct {
  const uint32_t *log;
  size_t n, cursor;
} ctx_t;

/* per-CPU mode: the switch records of one CPU, and each thread's log split at its range exits */
typedef struct {
  int tid;
  uint64_t segment, offset, bytes;
} seg_t;
typedef struct {
  int tid;
  const uint32_t *log;
  size_t n;
  size_t *seg_begin; /* log index where segment j starts */
  size_t nseg;
} tlog_t;
static seg_t *SEGS;
static size_t NSEGS;
static tlog_t *TLOGS;
static size_t NTLOGS;

static const void *map_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror(path);
    exit(2);
  }
  struct stat st;
  fstat(fd, &st);
  *len = (size_t)st.st_size;
  if (!*len) {
    close(fd);
    return "";
  }
  void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    perror(path);
    exit(2);
  }
  return p;
}

static void load_descs(const char *path) {
  size_t len;
  const uint8_t *p = map_file(path, &len), *end = p + len;
  size_t cap = 1 << 16;
  D = calloc(cap, sizeof *D);
  BYTES = malloc(len);
  size_t boff = 0;
  while (p + 13 <= end) {
    uint32_t id;
    memcpy(&id, p, 4);
    desc d;
    memcpy(&d.va, p + 4, 8);
    d.len = p[12];
    p += 13;
    if (p + d.len > end) break;
    memcpy(BYTES + boff, p, d.len);
    d.off = (uint32_t)boff;
    boff += d.len;
    p += d.len;
    while (id >= cap) {
      D = realloc(D, 2 * cap * sizeof *D);
      memset(D + cap, 0, cap * sizeof *D);
      cap *= 2;
    }
    D[id] = d;
    if (id + 1 > ND) ND = id + 1;
  }
}

/* libipt asks for the bytes of the instruction it is about to decode: serve those of the next logged one */
static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *context) {
  (void)asid;
  ctx_t *c = context;
  size_t k = c->cursor;
  while (k < c->n && IS_MARK(c->log[k])) k++;
  if (k >= c->n || c->log[k] >= ND || D[c->log[k]].va != ip) return -pte_nomap;
  const desc *d = &D[c->log[k]];
  size_t n = d->len < size ? d->len : size;
  memcpy(buf, BYTES + d->off, n);
  return (int)n;
}

static tlog_t *tlog_for(const char *dir, int tid) {
  for (size_t i = 0; i < NTLOGS; i++)
    if (TLOGS[i].tid == tid) return &TLOGS[i];
  TLOGS = realloc(TLOGS, (NTLOGS + 1) * sizeof *TLOGS);
  tlog_t *t = &TLOGS[NTLOGS++];
  char p[1100];
  snprintf(p, sizeof p, "%s/%d.log", dir, tid);
  size_t len;
  t->tid = tid;
  t->log = map_file(p, &len);
  t->n = len / 4;
  t->seg_begin = malloc((t->n + 1) * sizeof *t->seg_begin);
  t->nseg = 0;
  t->seg_begin[t->nseg++] = 0;
  for (size_t i = 0; i < t->n; i++)
    if (t->log[i] == LOG_LEAVE) t->seg_begin[t->nseg++] = i + 1;
  return t;
}

static int by_offset(const void *a, const void *b) {
  const seg_t *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void load_switches(const char *sideband, int cpu, const char *dir) {
  FILE *f = fopen(sideband, "r");
  if (!f) {
    perror(sideband);
    exit(2);
  }
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    int k, tid;
    unsigned long long segment, offset, bytes;
    if (sscanf(line, "{\"type\":\"switch\",\"cpu\":%d,\"tid\":%d,\"segment\":%llu,\"offset\":%llu,\"bytes\":%llu", &k, &tid, &segment, &offset,
               &bytes) != 5 ||
        k != cpu)
      continue;
    SEGS = realloc(SEGS, (NSEGS + 1) * sizeof *SEGS);
    SEGS[NSEGS++] = (seg_t){tid, segment, offset, bytes};
    tlog_for(dir, tid);
  }
  fclose(f);
  qsort(SEGS, NSEGS, sizeof *SEGS, by_offset); /* do not rely on the sideband's line order */
}

/* The switch record whose bytes contain stream offset `off`. */
static const seg_t *seg_at(uint64_t off) {
  size_t lo = 0, hi = NSEGS;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (SEGS[mid].offset + SEGS[mid].bytes <= off) lo = mid + 1;
    else hi = mid;
  }
  return lo < NSEGS && SEGS[lo].offset <= off ? &SEGS[lo] : NULL;
}

int main(int argc, char **argv) {
  int cpuMode = argc == 6 && !strcmp(argv[1], "--cpu");
  if (argc != 4 && !cpuMode) {
    fprintf(stderr, "usage: ptcheck THREAD.pt THREAD.log insns.bin | ptcheck --cpu CPU.pt K sideband.jsonl EXACTDIR\n");
    return 2;
  }
  if (cpuMode) {
    argv[1] = argv[2];
    load_switches(argv[4], atoi(argv[3]), argv[5]);
  }
  size_t ptlen, loglen = 0;
  const uint8_t *pt = map_file(argv[1], &ptlen);
  ctx_t c = {cpuMode ? NULL : map_file(argv[2], &loglen), 0, 0};
  c.n = loglen / 4;
  if (cpuMode) {
    char p[1100];
    snprintf(p, sizeof p, "%s/insns.bin", argv[5]);
    load_descs(p);
  } else {
    load_descs(argv[3]);
  }
  size_t segmentsChecked = 0;
  size_t expected = 0, leaves = 0;
  for (size_t i = 0; i < c.n; i++) c.log[i] == LOG_LEAVE ? leaves++ : IS_MARK(c.log[i]) ? 0 : expected++;
  if (cpuMode)
    for (size_t i = 0; i < NSEGS; i++) {
      tlog_t *t = tlog_for(argv[5], SEGS[i].tid);
      if (SEGS[i].segment >= t->nseg) continue;
      for (size_t k = t->seg_begin[SEGS[i].segment]; k < t->n && t->log[k] != LOG_LEAVE; k++)
        if (!IS_MARK(t->log[k])) expected++;
      leaves++;
    }
  size_t gap = 0, overflows = 0;
  if (!ptlen) {
    printf("%s: empty stream, %zu logged instructions\n", argv[1], expected);
    return expected ? 1 : 0;
  }

  struct pt_config cfg;
  pt_config_init(&cfg);
  cfg.begin = (uint8_t *)pt;
  cfg.end = (uint8_t *)pt + ptlen;
  /* PTCHECK_TIMING=CTC_RATIO,MTC_FREQ,NOM_FREQ (from the sideband header): decode time as well */
  const char *timing = getenv("PTCHECK_TIMING");
  unsigned ratio = 0, mtcFreq = 0, nomFreq = 0;
  if (timing && sscanf(timing, "%u,%u,%u", &ratio, &mtcFreq, &nomFreq) == 3) {
    cfg.cpuid_0x15_eax = 1;
    cfg.cpuid_0x15_ebx = ratio;
    cfg.mtc_freq = (uint8_t)mtcFreq;
    cfg.nom_freq = (uint8_t)nomFreq;
  }
  uint64_t lastTime = 0, distinctTimes = 0, backwards = 0, maxBack = 0;
  uint32_t lostMtc = 0, lostCyc = 0;
  struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&cfg);
  struct pt_image *img = pt_insn_get_image(dec);
  pt_image_set_callback(img, read_mem, &c);

  size_t matched = 0, mismatches = 0, disables = 0, errors = 0;
  int status = pt_insn_sync_forward(dec);
  if (status < 0) {
    fprintf(stderr, "%s: no PSB to sync on: %s\n", argv[1], pt_errstr(pt_errcode(status)));
    return 1;
  }
  for (;;) {
    while (status & pts_event_pending) {
      struct pt_event ev;
      status = pt_insn_event(dec, &ev, sizeof ev);
      if (status < 0) break;
      if (cpuMode && ev.type == ptev_enabled) {
        /* a new stretch: whose is it? the switch record covering the packets just read says */
        uint64_t off = 0;
        pt_insn_get_offset(dec, &off);
        const seg_t *sg = seg_at(off ? off - 1 : 0);
        tlog_t *t = sg ? tlog_for(argv[5], sg->tid) : NULL;
        if (!t || sg->segment >= t->nseg) {
          if (mismatches++ < 5) fprintf(stderr, "%s: no switch record covers offset %llu\n", argv[1], (unsigned long long)off);
          c.log = NULL, c.n = c.cursor = 0;
        } else {
          c.log = t->log;
          c.n = t->n;
          c.cursor = t->seg_begin[sg->segment];
          segmentsChecked++;
        }
        continue;
      }
      if (ev.type == ptev_overflow) {
        /* lost data: the log says where tracing resumed; what lies between was not reconstructed */
        overflows++;
        while (c.cursor < c.n && c.log[c.cursor] != LOG_RESYNC) {
          if (!IS_MARK(c.log[c.cursor])) gap++;
          c.cursor++;
        }
        if (c.cursor < c.n) c.cursor++;
        size_t k = c.cursor;
        while (k < c.n && IS_MARK(c.log[k])) k++;
        if (k < c.n && !ev.ip_suppressed && D[c.log[k]].va != ev.variant.overflow.ip && mismatches++ < 5)
          fprintf(stderr, "%s: overflow resumes at %llx, the log at %llx\n", argv[1], (unsigned long long)ev.variant.overflow.ip,
                  (unsigned long long)D[c.log[k]].va);
        continue;
      }
      if (ev.type == ptev_disabled || ev.type == ptev_async_disabled) {
        disables++;
        if (c.cursor < c.n && c.log[c.cursor] == LOG_LEAVE) c.cursor++;
        else if (mismatches++ < 5) fprintf(stderr, "%s: disable event where the log has instruction #%zu\n", argv[1], c.cursor);
      }
    }
    if (status < 0) {
      if (status == -pte_eos) break;
      uint64_t off = 0;
      pt_insn_get_offset(dec, &off);
      if (errors++ < 5) fprintf(stderr, "%s: decode error at offset %llu: %s\n", argv[1], (unsigned long long)off, pt_errstr(pt_errcode(status)));
      status = pt_insn_sync_forward(dec);
      if (status < 0) break;
      continue;
    }
    if (status & pts_eos) break;
    struct pt_insn insn;
    status = pt_insn_next(dec, &insn, sizeof insn);
    if (status < 0) continue;
    while (c.cursor < c.n && c.log[c.cursor] == LOG_RESYNC) c.cursor++;
    while (c.cursor < c.n && c.log[c.cursor] == LOG_LEAVE) {
      if (mismatches++ < 5) fprintf(stderr, "%s: log leaves the range at #%zu but libipt goes on at %llx\n", argv[1], c.cursor, (unsigned long long)insn.ip);
      c.cursor++;
    }
    if (c.cursor >= c.n) {
      if (mismatches++ < 5) fprintf(stderr, "%s: libipt decodes %llx past the end of the log\n", argv[1], (unsigned long long)insn.ip);
      break;
    }
    if (ratio) {
      uint64_t tm = 0;
      uint32_t lm = 0, lc = 0;
      if (pt_insn_time(dec, &tm, &lm, &lc) >= 0) {
        if (tm < lastTime) {
          backwards++;
          if (lastTime - tm > maxBack) maxBack = lastTime - tm;
        }
        else if (tm != lastTime) distinctTimes++;
        lastTime = tm;
        if (lm > lostMtc) lostMtc = lm;
        if (lc > lostCyc) lostCyc = lc;
      }
    }
    const desc *d = &D[c.log[c.cursor]];
    if (insn.ip != d->va || insn.size != d->len) {
      if (mismatches++ < 5)
        fprintf(stderr, "%s: instruction #%zu: libipt %llx (%u bytes), log %llx (%u bytes)\n", argv[1], c.cursor, (unsigned long long)insn.ip,
                insn.size, (unsigned long long)d->va, d->len);
    } else {
      matched++;
    }
    c.cursor++;
  }
  if (cpuMode) c.cursor = c.n; /* per segment: ends are checked at each disable */
  while (c.cursor < c.n && c.log[c.cursor] == LOG_LEAVE) c.cursor++;
  if (c.n && c.log[c.n - 1] == LOG_LOST_TAIL) {
    /* the thread ended while its data was being lost: the rest was never in the stream */
    for (; c.cursor < c.n; c.cursor++)
      if (!IS_MARK(c.log[c.cursor])) gap++;
  }
  size_t missing = 0;
  for (size_t k = c.cursor; k < c.n; k++)
    if (!IS_MARK(c.log[k])) missing++;
  pt_insn_free_decoder(dec);
  if (cpuMode && segmentsChecked != NSEGS && mismatches++ < 5)
    fprintf(stderr, "%s: %zu of %zu switch records' stretches were decoded\n", argv[1], segmentsChecked, NSEGS);
  if (ratio)
    printf("%s: time: %llu distinct timestamps, %llu backwards (at most %llu TSC ticks), last %llu, lost mtc %u, lost cyc %u\n", argv[1],
           (unsigned long long)distinctTimes, (unsigned long long)backwards, (unsigned long long)maxBack, (unsigned long long)lastTime, lostMtc,
           lostCyc);
  int ok = mismatches == 0 && errors == 0 && missing == 0 && matched + gap == expected;
  printf("%s: %s: %zu/%zu instructions matched, %zu range exits (%zu logged), %zu decode errors, %zu unmatched log entries, "
         "%zu overflows, %zu instructions in gaps (%.2f%%)\n",
         argv[1], ok ? "OK" : "MISMATCH", matched, expected - gap, disables, leaves, errors, missing, overflows, gap,
         expected ? 100.0 * gap / expected : 0.0);
  return ok ? 0 : 1;
}
