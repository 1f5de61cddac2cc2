/* jportal's Intel PT emulator: a QEMU 7.2 user-mode TCG plugin that behaves like a PT unit with IP
 * filtering on the JVM's code cache and user-mode tracing, writing one PT packet stream per guest thread.
 *
 * Arguments (-plugin libjportal-qemu-pt.so,arg=...):
 *   out=DIR            trace directory: writes DIR/pt/<tid>.pt and DIR/pt/sideband.jsonl
 *   exact=DIR          optional exact side output for tests (what really executed), kept out of the trace:
 *                      DIR/insns.bin (instruction descriptors) and DIR/<tid>.log (executed instruction ids)
 *   psb_period=BYTES   PSB+ distance (default 4096)
 *   range=LO-HI        extra filter range (hex); code-cache ranges are found automatically
 *   loss=B:R           data-loss model: a per-thread buffer of B bytes drained at R bytes per second of
 *                      emulated run time (the thread's instructions, traced or not, at a nominal 1e9 per
 *                      second), jittered; it fills
 *                      with control-flow packets only (timing packets follow the host's speed, see loss_step)
 *   seed=N             seed of the drain jitter (default 1), per thread by its vCPU index (creation order): the
 *                      same run loses the same data
 *   retcomp=1          return compression: a return to the address its call pushed is a TNT bit, not a TIP
 *   cpus=N             per-CPU mode: N emulated CPUs, one stream each (pt/cpu<k>.pt); each thread's stretch of
 *                      traced execution (TIP.PGE .. TIP.PGD) runs on one CPU, and sideband `switch` records
 *                      say which thread each stretch belongs to, like perf's per-CPU capture
 *   mtc=0|1, cyc=0|1   timing packets besides TSC: MTC (default on; TMA in PSB+) from a crystal clock modeled as
 *                      TSC/64 with mtc_freq=3, and CYC (default off; CBR in PSB+) counting core cycles modeled
 *                      as TSC ticks; the sideband header gives decoders the ratios (CPUID 0x15, nominal ratio)
 *   quantum=BYTES      per-CPU mode: a thread inside the range this long is preempted (FUP + TIP.PGD, then
 *                      TIP.PGE again), as a timer interrupt would (default 262144)
 *
 * Model: the plugin sees every in-range instruction just before it executes (per-instruction callbacks) and
 * every out-of-range translation block (to see tracing leave the range). From each pair of consecutive
 * instructions it derives what the PT unit would emit for the first one: a TNT bit for a conditional branch,
 * TIP for indirect branches and returns, TIP.PGD/TIP.PGE when control leaves/enters the filter range, and
 * FUP + TIP.PGD when an instruction is interrupted (a fault such as an implicit null check or a safepoint
 * poll: the next thing that runs is the out-of-range signal handler, so the interrupted instruction did not
 * retire). Quirks handled: an instruction crossing a page boundary is reported at the end of one block and
 * executed at the start of the next (counted once); rep string instructions re-enter once per iteration
 * (counted once); vCPU indexes are reused (state is per host thread, keyed by tid). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptenc.h"
#include "qemu_abi.h"
#include "x86class.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

#define MAX_RANGES 64
#define MAX_VCPUS 8192
#define FLUSH_BYTES (1u << 20)
#define LOG_LEAVE 0xFFFFFFFFu
#define LOG_RESYNC 0xFFFFFFFEu /* exact log: tracing resumes here after lost data */
#define LOG_LOST_TAIL 0xFFFFFFFDu /* exact log: the thread ended while its data was being lost */
#define NOMINAL_INSNS_PER_SECOND 1e9

typedef struct insn_desc {
  uint64_t va;
  uint64_t target;
  uint32_t id;
  uint8_t len, kind, rep, last_in_tb;
} insn_desc;

typedef struct thr {
  int tid;
  unsigned vcpu;
  pt_encoder enc;
  int fd;
  int inside;
  const insn_desc *prev;
  uint64_t insns, faults, rep_reentries, phantoms, unexpected;
  uint64_t first_tsc, last_tsc;
  /* exact side output */
  int log_fd;
  uint32_t *log;
  size_t log_len;
  uint32_t pending; /* id of the previous instruction, written once its successor shows it retired */
  int has_pending;
  /* loss model */
  double fill, jitter;
  uint64_t produced_seen, jitter_left, rng;
  uint64_t loss_begin_insns, loss_begin_offset, loss_begin_tsc, loss_begin_produced, loss_begin_outside;
  uint64_t lost_insns, lost_bytes, loss_events;
  /* instructions run out of the filter range since the last loss step (they drain the buffer too: a PT unit's
   * output drains in time, whatever the CPU runs), and in all */
  uint64_t outside_pending, outside_insns;
  /* return compression: the calls this stretch of trace has seen (64 deep, oldest dropped, like libipt's
   * and the hardware's stacks); cleared at PSB, PGE and OVF so it is always a suffix of a decoder's stack */
  uint64_t rs[64];
  unsigned rs_top, rs_n;
  uint64_t compressed_rets;
  /* per-CPU mode: where the current segment started in the thread's buffer, and its start time */
  size_t seg_start;
  uint64_t seg_tsc, segments;
  int last_cpu;
  /* off-CPU accounting: wall clock against the thread's CPU clock, sampled every SCHED_PERIOD instructions */
  uint64_t sched_tsc, sched_mono, sched_cpu, sched_left, offcpu_ticks, offcpu_records;
  int finished;
  struct thr *next_all;
} thr;

static struct {
  char out[1024];
  char exact[1024];
  uint64_t psb_period;
  pthread_mutex_t mu;
  struct {
    uint64_t lo, hi;
  } ranges[MAX_RANGES];
  int nranges;
  uint32_t next_insn_id;
  FILE *insns;    /* exact: descriptors */
  FILE *sideband; /* pt/sideband.jsonl */
  thr *all;
  thr *by_vcpu[MAX_VCPUS];
  uint64_t translated_in_range;
  double loss_capacity, loss_drain_per_insn;
  uint64_t seed;
  int retcomp;
  int ncpus;
  uint64_t quantum;
  int mtc, cyc;
  struct cpu {
    int fd;
    uint64_t bytes, last_end_tsc, segments;
    pthread_mutex_t mu;
  } *cpus;
  uint64_t oversubscribed;
} G = {.psb_period = 4096, .mu = PTHREAD_MUTEX_INITIALIZER, .seed = 1, .mtc = 1};

#define CTC_RATIO 64 /* TSC ticks per crystal-clock tick (CPUID 0x15: EBX/EAX = 64/1) */
#define MTC_FREQ 3   /* an MTC every 2^3 CTC ticks */
#define NOM_FREQ 32  /* CBR = nominal ratio: core cycles run at the TSC rate */

static __thread thr *T;
static void end_segment(thr *t);
static void sched_sample(thr *t);

static inline uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

static void sideband(const char *fmt, ...) {
  if (!G.sideband) return;
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&G.mu);
  vfprintf(G.sideband, fmt, ap);
  fputc('\n', G.sideband);
  fflush(G.sideband);
  pthread_mutex_unlock(&G.mu);
  va_end(ap);
}

static int in_range(uint64_t a) {
  int n = __atomic_load_n(&G.nranges, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (a >= G.ranges[i].lo && a < G.ranges[i].hi) return 1;
  return 0;
}

static void add_range(uint64_t lo, uint64_t hi, const char *why) {
  pthread_mutex_lock(&G.mu);
  int merged = 0;
  for (int i = 0; i < G.nranges; i++)
    if (lo <= G.ranges[i].hi && hi >= G.ranges[i].lo) {
      if (lo < G.ranges[i].lo) G.ranges[i].lo = lo;
      if (hi > G.ranges[i].hi) G.ranges[i].hi = hi;
      merged = 1;
      break;
    }
  if (!merged && G.nranges < MAX_RANGES) {
    G.ranges[G.nranges].lo = lo;
    G.ranges[G.nranges].hi = hi;
    __atomic_store_n(&G.nranges, G.nranges + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&G.mu);
  sideband("{\"type\":\"filter_range\",\"lo\":%llu,\"hi\":%llu,\"why\":\"%s\",\"tsc\":%llu}", (unsigned long long)lo,
           (unsigned long long)hi, why, (unsigned long long)rdtsc());
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

static void flush_thr(thr *t) {
  if (G.ncpus) { /* per-CPU mode: the open segment stays in the buffer until it ends */
    if (t->log_len && t->log_fd >= 0) write_all(t->log_fd, t->log, t->log_len * 4);
    t->log_len = 0;
    return;
  }
  if (t->enc.len && t->fd >= 0) write_all(t->fd, t->enc.buf, t->enc.len);
  t->enc.len = 0;
  if (t->log_len && t->log_fd >= 0) write_all(t->log_fd, t->log, t->log_len * 4);
  t->log_len = 0;
}

static void log_id(thr *t, uint32_t id) {
  if (t->log_fd < 0) return;
  t->log[t->log_len++] = id;
  if (t->log_len == FLUSH_BYTES / 4) {
    write_all(t->log_fd, t->log, t->log_len * 4);
    t->log_len = 0;
  }
}

static void commit_pending(thr *t) {
  if (t->has_pending) log_id(t, t->pending);
  t->has_pending = 0;
}

static thr *thr_new(unsigned vcpu) {
  thr *t = calloc(1, sizeof *t);
  if (!t) abort();
  t->tid = (int)syscall(SYS_gettid);
  t->vcpu = vcpu;
  pt_enc_init(&t->enc);
  char p[1200];
  snprintf(p, sizeof p, "%s/pt/%d.pt", G.out, t->tid);
  /* per-CPU mode: the thread's packets go to CPU streams, not to a file of its own */
  t->fd = G.ncpus ? -1 : open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (G.mtc || G.cyc) pt_enc_set_timing(&t->enc, rdtsc, CTC_RATIO, MTC_FREQ, G.cyc, NOM_FREQ);
  t->log_fd = -1;
  /* the jitter's sequence follows the thread's vCPU index (the order threads were created in), not its tid: tids
   * differ from run to run, so seeding by tid gave every run of the same seed different jitter */
  t->rng = G.seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)vcpu + 1) * 0xBF58476D1CE4E5B9ull;
  if (!t->rng) t->rng = 1; /* (xorshift stays at zero) */
  t->last_cpu = -1;
  if (G.exact[0]) {
    snprintf(p, sizeof p, "%s/%d.log", G.exact, t->tid);
    t->log_fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    t->log = malloc(FLUSH_BYTES);
    if (!t->log) abort();
  }
  pthread_mutex_lock(&G.mu);
  t->next_all = G.all;
  G.all = t;
  if (vcpu < MAX_VCPUS) G.by_vcpu[vcpu] = t;
  pthread_mutex_unlock(&G.mu);
  sched_sample(t);
  char comm[64] = "?";
  snprintf(p, sizeof p, "/proc/self/task/%d/comm", t->tid);
  FILE *f = fopen(p, "r");
  if (f) {
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n\"\\")] = 0;
    fclose(f);
  }
  if (G.ncpus)
    sideband("{\"type\":\"thread_start\",\"tid\":%d,\"file\":null,\"comm\":\"%s\",\"tsc\":%llu}", t->tid, comm, (unsigned long long)rdtsc());
  else
    sideband("{\"type\":\"thread_start\",\"tid\":%d,\"file\":\"pt/%d.pt\",\"comm\":\"%s\",\"tsc\":%llu}", t->tid, t->tid, comm,
             (unsigned long long)rdtsc());
  return t;
}

static void thr_finish(thr *t, const char *why) {
  if (t->finished) return;
  t->finished = 1;
  if (t->enc.dropping) {
    uint64_t lostInsns = t->insns - t->loss_begin_insns, lostBytes = t->enc.produced - t->loss_begin_produced;
    t->lost_insns += lostInsns;
    t->lost_bytes += lostBytes;
    t->loss_events++;
    if (t->log_fd >= 0) log_id(t, LOG_LOST_TAIL);
    sideband("{\"type\":\"loss\",\"tid\":%d,\"offset\":%llu,\"lost_bytes\":%llu,\"lost_insns\":%llu,\"tsc_begin\":%llu,\"tsc_end\":%llu,\"unresumed\":true}",
             t->tid, (unsigned long long)t->loss_begin_offset, (unsigned long long)lostBytes, (unsigned long long)lostInsns,
             (unsigned long long)t->loss_begin_tsc, (unsigned long long)rdtsc());
    t->inside = 0; /* nothing more reaches the stream */
  }
  if (t->inside) {
    /* the thread stops inside the range (e.g. exit_group from another thread): like an interrupt before the
     * instruction it was about to run, so a decoder stops exactly there */
    if (t->has_pending) t->insns--;
    t->has_pending = 0;
    if (t->prev) pt_enc_fup(&t->enc, t->prev->va);
    pt_enc_tip_pgd(&t->enc, 0, 0);
    if (t->log_fd >= 0) log_id(t, LOG_LEAVE);
    t->inside = 0;
  }
  end_segment(t);
  flush_thr(t);
  if (t == T) sched_sample(t); /* (its CPU clock is readable only on the thread itself) */
  sideband("{\"type\":\"thread_end\",\"tid\":%d,\"why\":\"%s\",\"insns\":%llu,\"faults\":%llu,\"unexpected\":%llu,\"bytes\":%lld,"
           "\"psb\":%llu,\"tnt\":%llu,\"tip\":%llu,\"pge\":%llu,\"pgd\":%llu,\"fup\":%llu,\"ovf\":%llu,\"compressed_rets\":%llu,\"lost_insns\":%llu,\"lost_bytes\":%llu,\"untraced_insns\":%llu,\"tsc\":%llu}",
           t->tid, why, (unsigned long long)t->insns, (unsigned long long)t->faults, (unsigned long long)t->unexpected,
           t->fd >= 0 ? (long long)lseek(t->fd, 0, SEEK_CUR) : -1LL, (unsigned long long)t->enc.counts[PTE_PSB],
           (unsigned long long)(t->enc.counts[PTE_TNT8] + t->enc.counts[PTE_TNT64]), (unsigned long long)t->enc.counts[PTE_TIP],
           (unsigned long long)t->enc.counts[PTE_PGE], (unsigned long long)t->enc.counts[PTE_PGD],
           (unsigned long long)t->enc.counts[PTE_FUP], (unsigned long long)t->enc.counts[PTE_OVF], (unsigned long long)t->compressed_rets, (unsigned long long)t->lost_insns,
           (unsigned long long)t->lost_bytes, (unsigned long long)t->outside_insns, (unsigned long long)rdtsc());
}

static inline thr *current(unsigned vcpu) {
  thr *t = T;
  if (__builtin_expect(t == NULL, 0)) t = T = thr_new(vcpu);
  return t;
}

/* Per-CPU mode: the thread's segment [seg_start, len) has ended; put it on a CPU. Prefer the thread's last CPU,
 * then any CPU idle since the segment began (so one CPU never runs two threads at once), else the CPU idle
 * longest (counted as oversubscribed). A CPU stream that is still empty starts with a PSB+ of its own. */
static void end_segment(thr *t) {
  if (!G.ncpus) return;
  size_t n = t->enc.len - t->seg_start;
  if (n) {
    uint64_t end = rdtsc();
    int c = -1;
    if (t->last_cpu >= 0 && __atomic_load_n(&G.cpus[t->last_cpu].last_end_tsc, __ATOMIC_RELAXED) <= t->seg_tsc) c = t->last_cpu;
    for (int k = 0; c < 0 && k < G.ncpus; k++)
      if (__atomic_load_n(&G.cpus[k].last_end_tsc, __ATOMIC_RELAXED) <= t->seg_tsc) c = k;
    if (c < 0) {
      c = 0;
      for (int k = 1; k < G.ncpus; k++)
        if (G.cpus[k].last_end_tsc < G.cpus[c].last_end_tsc) c = k;
      __atomic_fetch_add(&G.oversubscribed, 1, __ATOMIC_RELAXED);
    }
    struct cpu *cpu = &G.cpus[c];
    pthread_mutex_lock(&cpu->mu);
    if (cpu->bytes == 0) {
      pt_encoder head;
      pt_enc_init(&head);
      pt_enc_psb_plus(&head, t->seg_tsc, 0, 0);
      write_all(cpu->fd, head.buf, head.len);
      cpu->bytes += head.len;
      pt_enc_free(&head);
    }
    uint64_t offset = cpu->bytes;
    write_all(cpu->fd, t->enc.buf + t->seg_start, n);
    cpu->bytes += n;
    cpu->segments++;
    if (end > cpu->last_end_tsc) cpu->last_end_tsc = end;
    /* written under the CPU's lock, so each CPU's switch records are in stream order */
    sideband("{\"type\":\"switch\",\"cpu\":%d,\"tid\":%d,\"segment\":%llu,\"offset\":%llu,\"bytes\":%zu,\"tsc_begin\":%llu,\"tsc_end\":%llu}", c,
             t->tid, (unsigned long long)t->segments, (unsigned long long)offset, n, (unsigned long long)t->seg_tsc, (unsigned long long)end);
    pthread_mutex_unlock(&cpu->mu);
    t->last_cpu = c;
  }
  t->segments++;
  t->enc.len = 0;
  t->seg_start = 0;
}

static inline void rs_push(thr *t, uint64_t ret) {
  t->rs[t->rs_top] = ret;
  t->rs_top = (t->rs_top + 1) & 63;
  if (t->rs_n < 64) t->rs_n++;
}

static void enter(thr *t, const insn_desc *cur) {
  t->rs_n = 0;
  uint64_t tsc = rdtsc();
  if (G.ncpus) {
    /* a segment may follow another thread's on its CPU: its first IP must not depend on earlier packets */
    t->seg_start = t->enc.len;
    t->seg_tsc = tsc;
    t->enc.last_ip = 0;
  }
  if (!t->first_tsc) {
    t->first_tsc = tsc;
    pt_enc_psb_plus(&t->enc, tsc, 0, 0); /* the stream starts with a PSB so decoders can sync */
  } else {
    pt_enc_tsc(&t->enc, tsc);
  }
  pt_enc_mode_exec64(&t->enc);
  pt_enc_tip_pge(&t->enc, cur->va);
  t->inside = 1;
}

/* Control leaves the filter range: `pc` is the first out-of-range instruction about to run. */
static void leave(thr *t, uint64_t pc) {
  const insn_desc *p = t->prev;
  int sync = 0;
  if (p) {
    uint64_t fall = p->va + p->len;
    switch (p->kind) {
      case IK_IJMP:
      case IK_ICALL:
      case IK_RET:
        sync = 1;
        break;
      case IK_JMP:
      case IK_CALL:
        sync = p->target == pc;
        break;
      case IK_JCC:
        if (pc == p->target || pc == fall) {
          pt_enc_tnt(&t->enc, pc == p->target);
          sync = 1;
        }
        break;
      case IK_NONE:
        sync = p->last_in_tb && pc == fall; /* fell off the end of the range */
        break;
      default:
        break;
    }
  }
  if (sync) {
    commit_pending(t);
    pt_enc_tip_pgd(&t->enc, pc, 1);
  } else {
    /* interrupted: the previous instruction faulted (QEMU runs the signal handler, out of range), so it did
     * not retire: FUP at it, then the disable with no IP (the transfer goes to the kernel) */
    t->faults++;
    if (t->has_pending) t->insns--; /* counted when its callback ran, but it did not retire */
    t->has_pending = 0;
    if (p) pt_enc_fup(&t->enc, p->va);
    pt_enc_tip_pgd(&t->enc, 0, 0);
  }
  if (t->log_fd >= 0) log_id(t, LOG_LEAVE);
  t->inside = 0;
  t->prev = NULL;
  t->last_tsc = rdtsc();
  end_segment(t);
  if (t->enc.len >= FLUSH_BYTES) flush_thr(t);
}

static double rand01(uint64_t *s) {
  *s ^= *s << 13; /* xorshift64 */
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* Off-CPU time, as a real capture's context-switch records give it (perf's PERF_RECORD_SWITCH): every
 * SCHED_PERIOD traced instructions (and at the thread's start and end) the thread's CPU clock is read beside the
 * wall clock; where the wall clock ran OFFCPU_MIN_NS or more ahead, the thread was off the CPU (preempted on a busy
 * host, or blocked) for that long within the interval, and an `offcpu` record says so: `ticks` of TSC within
 * [tsc_begin, tsc_end). The emulation's TSC is the host's, so a decoder that sizes a stretch of lost data by its
 * time needs this as much as one on hardware does. */
#define SCHED_PERIOD 4096
#define OFFCPU_MIN_NS 50000

static inline uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sched_sample(thr *t) {
  t->sched_left = SCHED_PERIOD;
  uint64_t tsc = rdtsc(), mono = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  if (t->sched_tsc && mono > t->sched_mono && tsc > t->sched_tsc) {
    uint64_t wall = mono - t->sched_mono, ran = cpu - t->sched_cpu;
    if (wall > ran && wall - ran >= OFFCPU_MIN_NS) {
      uint64_t ticks = (uint64_t)((double)(wall - ran) / (double)wall * (double)(tsc - t->sched_tsc));
      t->offcpu_ticks += ticks;
      t->offcpu_records++;
      sideband("{\"type\":\"offcpu\",\"tid\":%d,\"tsc_begin\":%llu,\"tsc_end\":%llu,\"ticks\":%llu}", t->tid,
               (unsigned long long)t->sched_tsc, (unsigned long long)tsc, (unsigned long long)ticks);
    }
  }
  t->sched_tsc = tsc;
  t->sched_mono = mono;
  t->sched_cpu = cpu;
}

/* The loss model, once per traced instruction (`cur` is about to execute): the buffer fills with what the
 * encoder produced and drains at the configured rate; when it is full, packets are dropped until it has
 * drained to half, then the stream resumes with OVF + FUP(cur), as a PT unit does after an overflow. */
static void loss_step(thr *t, const insn_desc *cur) {
  uint64_t produced = t->enc.produced;
  /* the fill counts the bytes the program's control flow produces: timing packets follow the emulation's
   * wall-clock speed (tens of times slower than hardware, and slower still on a loaded host), so counting
   * them would make the lost share depend on the machine rather than on the buffer, rate and seed */
  uint64_t flow = produced - t->enc.timing_produced;
  double added = (double)(flow - t->produced_seen);
  t->produced_seen = flow;
  if (t->jitter_left == 0) {
    t->jitter = 0.75 + 0.5 * rand01(&t->rng);
    t->jitter_left = 65536;
  }
  t->jitter_left--;
  /* this instruction's time, and that of the untraced code run since the last step (the VM's own code: class
   * loading, the compilers' calls, GC), when the buffer drained with nothing new to write */
  t->fill -= G.loss_drain_per_insn * t->jitter * (1.0 + (double)t->outside_pending);
  t->outside_pending = 0;
  if (t->fill < 0) t->fill = 0;
  if (!t->enc.dropping) {
    t->fill += added;
    if (t->fill > G.loss_capacity) {
      t->enc.dropping = 1;
      t->fill = G.loss_capacity;
      t->loss_begin_insns = t->insns;
      t->loss_begin_offset = t->enc.emitted;
      t->loss_begin_tsc = rdtsc();
      t->loss_begin_produced = produced;
      t->loss_begin_outside = t->outside_insns;
    }
  } else if (t->fill <= G.loss_capacity / 2) {
    t->enc.dropping = 0;
    uint64_t lostInsns = t->insns - t->loss_begin_insns, lostBytes = produced - t->loss_begin_produced;
    t->lost_insns += lostInsns;
    t->lost_bytes += lostBytes;
    t->loss_events++;
    pt_enc_resume_after_loss(&t->enc, cur->va);
    t->rs_n = 0;
    t->produced_seen = t->enc.produced - t->enc.timing_produced;
    if (t->log_fd >= 0) log_id(t, LOG_RESYNC);
    sideband("{\"type\":\"loss\",\"tid\":%d,\"offset\":%llu,\"lost_bytes\":%llu,\"lost_insns\":%llu,\"untraced_insns\":%llu,\"tsc_begin\":%llu,\"tsc_end\":%llu}",
             t->tid, (unsigned long long)t->loss_begin_offset, (unsigned long long)lostBytes, (unsigned long long)lostInsns,
             (unsigned long long)(t->outside_insns - t->loss_begin_outside), (unsigned long long)t->loss_begin_tsc, (unsigned long long)rdtsc());
  }
}

static void on_insn(unsigned vcpu, void *ud) {
  thr *t = current(vcpu);
  const insn_desc *cur = ud;
  if (!t->inside) {
    enter(t, cur);
  } else {
    const insn_desc *p = t->prev;
    if (cur->va == p->va) {
      if (p->rep) { /* rep string instruction, next iteration */
        t->rep_reentries++;
        t->prev = cur;
        t->pending = cur->id;
        return;
      }
      if (p->last_in_tb) { /* page-crossing instruction reported at the end of the previous block */
        t->phantoms++;
        t->insns--;
        t->prev = cur;
        t->pending = cur->id; /* the re-executed copy has the complete bytes */
        return;
      }
    }
    uint64_t fall = p->va + p->len;
    switch (p->kind) {
      case IK_JCC:
        if (cur->va == p->target && cur->va != fall) pt_enc_tnt(&t->enc, 1);
        else if (cur->va == fall) pt_enc_tnt(&t->enc, cur->va == p->target); /* jcc to the next insn */
        else goto unexpected;
        break;
      case IK_JMP:
        if (cur->va != p->target) goto unexpected;
        break;
      case IK_CALL:
        if (cur->va != p->target) goto unexpected;
        if (G.retcomp && p->target != fall) rs_push(t, fall); /* call +0 (get-pc idiom) pushes nothing */
        break;
      case IK_IJMP:
        pt_enc_tip(&t->enc, cur->va);
        break;
      case IK_ICALL:
        pt_enc_tip(&t->enc, cur->va);
        if (G.retcomp) rs_push(t, fall);
        break;
      case IK_RET:
        if (G.retcomp && t->rs_n && t->rs[(t->rs_top + 63) & 63] == cur->va) {
          t->rs_top = (t->rs_top + 63) & 63;
          t->rs_n--;
          pt_enc_tnt(&t->enc, 1); /* compressed return */
          t->compressed_rets++;
        } else {
          pt_enc_tip(&t->enc, cur->va); /* no pop: a decoder does not pop on an uncompressed return either */
        }
        break;
      case IK_FAR:
        /* a far transfer that came back into the range (e.g. a syscall): disabled, then enabled again */
        pt_enc_tip_pgd(&t->enc, 0, 0);
        commit_pending(t);
        if (t->log_fd >= 0) log_id(t, LOG_LEAVE);
        t->inside = 0;
        end_segment(t);
        enter(t, cur);
        goto done;
      default:
        if (cur->va != fall) goto unexpected;
        break;
    }
    commit_pending(t);
    goto done;
  unexpected:
    /* an in-range transfer the instruction cannot make: an asynchronous branch (FUP + TIP) */
    t->unexpected++;
    commit_pending(t);
    pt_enc_fup(&t->enc, fall);
    pt_enc_tip(&t->enc, cur->va);
  }
done:
  if (t->enc.bytes_since_psb >= G.psb_period) {
    pt_enc_psb_plus(&t->enc, rdtsc(), 1, cur->va);
    t->rs_n = 0;
  }
  if (G.loss_capacity > 0) loss_step(t, cur);
  if (--t->sched_left == 0) sched_sample(t);
  if (G.ncpus && t->enc.len - t->seg_start >= G.quantum && !t->enc.dropping) {
    /* preempted before `cur` runs, as by a timer interrupt: disabled at cur, enabled again at cur */
    pt_enc_fup(&t->enc, cur->va);
    pt_enc_tip_pgd(&t->enc, 0, 0);
    if (t->log_fd >= 0) log_id(t, LOG_LEAVE);
    t->inside = 0;
    end_segment(t);
    enter(t, cur);
  }
  t->prev = cur;
  t->pending = cur->id;
  t->has_pending = 1;
  t->insns++;
  if (t->enc.len >= FLUSH_BYTES) flush_thr(t);
}

/* userdata of an out-of-range block: its address, and its instruction count above OUTSIDE_N_SHIFT (user-mode
 * x86-64 addresses have 47 bits; a block has at most 512 instructions) */
#define OUTSIDE_N_SHIFT 52
#define OUTSIDE_VA_MASK ((1ull << OUTSIDE_N_SHIFT) - 1)

static void on_outside_tb(unsigned vcpu, void *ud) {
  thr *t = T;
  (void)vcpu;
  if (!t) return;
  uint64_t packed = (uint64_t)(uintptr_t)ud;
  t->outside_pending += packed >> OUTSIDE_N_SHIFT;
  t->outside_insns += packed >> OUTSIDE_N_SHIFT;
  if (t->inside) leave(t, packed & OUTSIDE_VA_MASK);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  uint64_t va = qemu_plugin_tb_vaddr(tb);
  size_t n = qemu_plugin_tb_n_insns(tb);
  if (!in_range(va)) {
    uint64_t packed = (va & OUTSIDE_VA_MASK) | ((uint64_t)(n < 4095 ? n : 4095) << OUTSIDE_N_SHIFT);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_outside_tb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)packed);
    return;
  }
  insn_desc *d = calloc(n ? n : 1, sizeof *d); /* lives as long as the translation may run: never freed */
  if (!d) abort();
  pthread_mutex_lock(&G.mu);
  uint32_t first = G.next_insn_id;
  G.next_insn_id += (uint32_t)n;
  G.translated_in_range += n;
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
    const uint8_t *bytes = qemu_plugin_insn_data(in);
    unsigned len = (unsigned)qemu_plugin_insn_size(in);
    insn_class c = x86_classify(bytes, len, qemu_plugin_insn_vaddr(in));
    d[i].va = qemu_plugin_insn_vaddr(in);
    d[i].len = (uint8_t)len;
    d[i].kind = c.kind;
    d[i].rep = c.rep;
    d[i].target = c.target;
    d[i].id = first + (uint32_t)i;
    d[i].last_in_tb = i + 1 == n;
    if (G.insns) { /* exact side output: id, va, len, bytes */
      fwrite(&d[i].id, 4, 1, G.insns);
      fwrite(&d[i].va, 8, 1, G.insns);
      fwrite(&d[i].len, 1, 1, G.insns);
      fwrite(bytes, 1, len, G.insns);
    }
  }
  pthread_mutex_unlock(&G.mu);
  for (size_t i = 0; i < n; i++)
    qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, i), on_insn, QEMU_PLUGIN_CB_NO_REGS, &d[i]);
}

/* The code cache is anonymous executable memory: watch mmap/mprotect for it. */
static __thread struct {
  int64_t num;
  uint64_t addr, len, prot, flags;
} pending_sc;

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                       uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
  (void)id, (void)vcpu, (void)a5, (void)a6, (void)a7, (void)a8;
  pending_sc.num = num;
  pending_sc.addr = a1;
  pending_sc.len = a2;
  pending_sc.prot = a3;
  pending_sc.flags = a4;
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret) {
  (void)id, (void)vcpu;
  const uint64_t PROT_EXEC_ = 4, MAP_ANONYMOUS_ = 0x20;
  if (num != pending_sc.num) return;
  if (num == 9 /* mmap */ && (pending_sc.prot & PROT_EXEC_) && (pending_sc.flags & MAP_ANONYMOUS_) && ret > 0 &&
      (uint64_t)ret < (uint64_t)-4096)
    add_range((uint64_t)ret, (uint64_t)ret + pending_sc.len, "mmap");
  /* mprotect(PROT_EXEC) is how file-backed code (libraries) becomes executable: not the code cache */
}

static void on_vcpu_exit(qemu_plugin_id_t id, unsigned vcpu) {
  (void)id;
  thr *t = vcpu < MAX_VCPUS ? G.by_vcpu[vcpu] : NULL;
  if (!t) return;
  G.by_vcpu[vcpu] = NULL;
  thr_finish(t, "exit");
  if (t->fd >= 0) close(t->fd);
  if (t->log_fd >= 0) close(t->log_fd);
  t->fd = t->log_fd = -1;
  if (T == t) T = NULL;
}

static void on_exit_all(qemu_plugin_id_t id, void *ud) {
  (void)id, (void)ud;
  for (thr *t = G.all; t; t = t->next_all) thr_finish(t, "process-exit");
  if (G.insns) fflush(G.insns);
  sideband("{\"type\":\"end\",\"translated_in_range\":%llu,\"oversubscribed\":%llu,\"tsc\":%llu}", (unsigned long long)G.translated_in_range,
           (unsigned long long)G.oversubscribed, (unsigned long long)rdtsc());
}

static int mkdir_p(const char *dir) {
  char p[1200];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(p, 0755);
      *s = '/';
    }
  return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  if (info && info->system_emulation) {
    fprintf(stderr, "jportal-qemu-pt: only user-mode emulation (qemu-x86_64) is supported\n");
    return 1;
  }
  snprintf(G.out, sizeof G.out, ".");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "out=", 4)) snprintf(G.out, sizeof G.out, "%s", a + 4);
    else if (!strncmp(a, "exact=", 6)) snprintf(G.exact, sizeof G.exact, "%s", a + 6);
    else if (!strncmp(a, "psb_period=", 11)) G.psb_period = strtoull(a + 11, NULL, 0);
    else if (!strncmp(a, "seed=", 5)) G.seed = strtoull(a + 5, NULL, 0) | 1;
    else if (!strncmp(a, "retcomp=", 8)) G.retcomp = atoi(a + 8) != 0;
    else if (!strncmp(a, "cpus=", 5)) G.ncpus = atoi(a + 5);
    else if (!strncmp(a, "quantum=", 8)) G.quantum = strtoull(a + 8, NULL, 0);
    else if (!strncmp(a, "mtc=", 4)) G.mtc = atoi(a + 4) != 0;
    else if (!strncmp(a, "cyc=", 4)) G.cyc = atoi(a + 4) != 0;
    else if (!strncmp(a, "loss=", 5)) {
      char *e;
      double cap = strtod(a + 5, &e), rate = *e == ':' ? strtod(e + 1, NULL) : -1;
      if (cap < 64 || rate < 0) {
        fprintf(stderr, "jportal-qemu-pt: bad loss '%s' (want loss=BYTES:BYTES_PER_SECOND, buffer of at least 64 bytes)\n", a + 5);
        return 1;
      }
      G.loss_capacity = cap;
      G.loss_drain_per_insn = rate / NOMINAL_INSNS_PER_SECOND;
    }
    else if (!strncmp(a, "range=", 6)) {
      char *e;
      uint64_t lo = strtoull(a + 6, &e, 16), hi = *e == '-' ? strtoull(e + 1, NULL, 16) : 0;
      if (hi <= lo) {
        fprintf(stderr, "jportal-qemu-pt: bad range '%s' (want range=LO-HI in hex)\n", a + 6);
        return 1;
      }
      add_range(lo, hi, "argument");
    } else {
      fprintf(stderr, "jportal-qemu-pt: unknown argument '%s' (out=DIR exact=DIR psb_period=N range=LO-HI loss=B:R seed=N retcomp=0|1 cpus=N quantum=BYTES mtc=0|1 cyc=0|1)\n", a);
      return 1;
    }
  }
  if (G.psb_period < 256) G.psb_period = 256;
  if (G.ncpus < 0 || G.ncpus > 1024) {
    fprintf(stderr, "jportal-qemu-pt: cpus must be 0..1024\n");
    return 1;
  }
  if (G.quantum == 0) G.quantum = 262144;
  if (G.ncpus && G.loss_capacity > 0) {
    fprintf(stderr, "jportal-qemu-pt: the loss model works per thread; it cannot be combined with cpus=N yet\n");
    return 1;
  }
  char p[1200];
  snprintf(p, sizeof p, "%s/pt", G.out);
  if (mkdir_p(p) != 0) {
    fprintf(stderr, "jportal-qemu-pt: cannot create %s: %s\n", p, strerror(errno));
    return 1;
  }
  snprintf(p, sizeof p, "%s/pt/sideband.jsonl", G.out);
  G.sideband = fopen(p, "w");
  if (!G.sideband) {
    fprintf(stderr, "jportal-qemu-pt: cannot write %s: %s\n", p, strerror(errno));
    return 1;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  fprintf(G.sideband,
          "{\"type\":\"header\",\"format\":\"jportal-pt-sideband\",\"version\":1,\"source\":\"qemu-pt-emulator\","
          "\"psb_period\":%llu,\"ip_filtering\":true,\"user_only\":true,\"return_compression\":%s,\"loss_buffer\":%.0f,\"loss_rate\":%.0f,\"loss_drain\":\"all_insns\",\"seed\":%llu,\"cpus\":%d,\"mtc\":%s,\"cyc\":%s,\"ctc_ratio\":%d,\"mtc_freq\":%d,\"nom_freq\":%d,\"tsc\":%llu,\"mono_ns\":%llu}\n",
          (unsigned long long)G.psb_period, G.retcomp ? "true" : "false", G.loss_capacity, G.loss_drain_per_insn * NOMINAL_INSNS_PER_SECOND, (unsigned long long)G.seed, G.ncpus, G.mtc ? "true" : "false", G.cyc ? "true" : "false", CTC_RATIO, MTC_FREQ, NOM_FREQ, (unsigned long long)rdtsc(), (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
  fflush(G.sideband);
  if (G.ncpus) {
    G.cpus = calloc((size_t)G.ncpus, sizeof *G.cpus);
    for (int k = 0; k < G.ncpus; k++) {
      snprintf(p, sizeof p, "%s/pt/cpu%d.pt", G.out, k);
      G.cpus[k].fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      pthread_mutex_init(&G.cpus[k].mu, NULL);
      if (G.cpus[k].fd < 0) {
        fprintf(stderr, "jportal-qemu-pt: cannot write %s: %s\n", p, strerror(errno));
        return 1;
      }
    }
  }
  if (G.exact[0]) {
    if (mkdir_p(G.exact) != 0) {
      fprintf(stderr, "jportal-qemu-pt: cannot create %s: %s\n", G.exact, strerror(errno));
      return 1;
    }
    snprintf(p, sizeof p, "%s/insns.bin", G.exact);
    G.insns = fopen(p, "w");
    if (!G.insns) return 1;
    setvbuf(G.insns, NULL, _IOFBF, 1 << 20);
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
  qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
  qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
  qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
  qemu_plugin_register_atexit_cb(id, on_exit_all, NULL);
  return 0;
}
