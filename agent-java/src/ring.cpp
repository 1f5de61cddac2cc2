#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "common.h"
#include "crc32.h"
#include "records.h"

namespace jportal {

// Layout of the ring file's first bytes (docs/trace-format.md §5). Counters are accessed with
// __atomic builtins because another process maps the same memory.
struct Ring::Header {
  char magic[8];
  uint32_t version;
  uint32_t dataOffset;
  uint64_t capacity;
  uint64_t head;
  uint64_t tail;
  uint32_t consumerPid;
  uint32_t state;
  uint32_t agentPid;
  uint32_t fileHeaderSize;
};
static_assert(offsetof(Ring::Header, head) == 24, "ring layout");
static_assert(offsetof(Ring::Header, tail) == 32, "ring layout");
static_assert(offsetof(Ring::Header, consumerPid) == 40, "ring layout");
static_assert(offsetof(Ring::Header, fileHeaderSize) == 52, "ring layout");
static_assert(sizeof(Ring::Header) == 56, "ring layout");

namespace {
constexpr uint32_t kRingVersion = 1;

bool mkdirs(const std::string& dir) {
  if (dir.empty()) return false;
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    cur = dir.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool writeAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= (size_t)w;
  }
  return true;
}
}  // namespace

Ring::~Ring() {
  // finish() is the orderly path; this only makes sure the thread does not outlive the object
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(wakeMu_);
      stopWriter_ = true;
    }
    wake_.notify_all();
    writer_.join();
  }
}

bool Ring::start(const Options& opts) {
  opts_ = opts;
  self_ = getpid();
  fileHeader_ = encodeFileHeader();
  size_t cap = 1u << 16;
  while (cap < opts.capacity && cap < ((size_t)1 << 40)) cap <<= 1;
  size_t dataOffset = 4096;
  while (sizeof(Header) + fileHeader_.size() > dataOffset) dataOffset += 4096;
  mapSize_ = dataOffset + cap;

  path_ = "/dev/shm/jportal-" + std::to_string(self_) + ".ring";
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    // left behind by an earlier process with our pid: that process is gone, the name is ours now
    struct stat st;
    if (lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid()) {
      unlink(path_.c_str());
      fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
  }
  void* mem = MAP_FAILED;
  if (fd >= 0) {
    // The file's pages are allocated (and zeroed) here, in one call, rather than at the first write to each: a
    // full /dev/shm then fails now (private memory below) instead of raising SIGBUS in a producer later, and the
    // producers (ClassFileLoadHook runs on the application's threads) take no allocating page fault per 4 KiB of
    // records (measured on fop's start-up: such faults on a 64 MiB ring cost more than the hook's own work).
    // Mapping them into our page tables is left to the writer thread (writerLoop), off the JVM's start-up;
    // a producer that gets to a page first takes a minor fault. Without fallocate (ftruncate only), MAP_POPULATE
    // allocates them here instead.
    bool allocated = fallocate(fd, 0, 0, (off_t)mapSize_) == 0;
    bool sized = allocated || ((errno == EOPNOTSUPP || errno == ENOSYS) && ftruncate(fd, (off_t)mapSize_) == 0);
    if (sized) mem = mmap(nullptr, mapSize_, PROT_READ | PROT_WRITE, MAP_SHARED | (allocated ? 0 : MAP_POPULATE), fd, 0);
    populateLater_ = allocated;
    ::close(fd);
  }
  if (mem == MAP_FAILED) {
    int e = errno;
    if (fd >= 0) unlink(path_.c_str());
    if (opts.collector != 0) {
      log(LogLevel::Error, "ring", "cannot create %s (%s); the collector cannot attach, the agent writes the trace itself", path_.c_str(), strerror(e));
      opts_.collector = 0;
    } else {
      log(LogLevel::Warning, "ring", "cannot create %s (%s); using private memory", path_.c_str(), strerror(e));
    }
    path_.clear();
    mem = mmap(nullptr, mapSize_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) {
      log(LogLevel::Error, "ring", "cannot allocate %zu bytes for the ring: recording disabled", mapSize_);
      return false;
    }
  }
  hdr_ = (Header*)mem;
  data_ = (uint8_t*)mem + dataOffset;
  hdr_->version = kRingVersion;
  hdr_->dataOffset = (uint32_t)dataOffset;
  hdr_->capacity = cap;
  hdr_->head = 0;
  hdr_->tail = 0;
  hdr_->consumerPid = opts_.collector != 0 ? (uint32_t)opts_.collector : (uint32_t)self_;
  hdr_->state = 0;
  hdr_->agentPid = (uint32_t)self_;
  hdr_->fileHeaderSize = (uint32_t)fileHeader_.size();
  memcpy((uint8_t*)mem + sizeof(Header), fileHeader_.data(), fileHeader_.size());
  // the magic goes last: a collector that sees it sees a complete header
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy(hdr_->magic, "JPRING\0\0", 8);

  if (opts_.collector == 0) openOutput(0);
  writer_ = std::thread([this] {
    nameThisThread("jportal-write");
    writerLoop();
  });
  started_.store(true, std::memory_order_release);
  return true;
}

bool Ring::openOutput(uint64_t tail) {
  if (!mkdirs(opts_.outDir)) {
    int e = errno;
    outBroken_ = true;  // before logging (the log line is a record the writer may drain)
    log(LogLevel::Error, "ring", "cannot create the trace directory %s (%s): records are discarded", opts_.outDir.c_str(), strerror(e));
    return false;
  }
  std::string file = opts_.outDir + "/meta.jpt";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    outBroken_ = true;
    log(LogLevel::Error, "ring", "cannot open %s (%s): records are discarded", file.c_str(), strerror(e));
    return false;
  }
  // the file holds the header plus exactly the consumed bytes; anything past that came from a consumer
  // that died between writing and publishing its tail, and is written again from the ring
  struct stat st;
  fstat(fd, &st);
  uint64_t want = fileHeader_.size() + tail;
  bool ok;
  if ((uint64_t)st.st_size < want || tail == 0) {
    ok = ftruncate(fd, 0) == 0 && writeAll(fd, fileHeader_.data(), fileHeader_.size());
    if (ok && tail != 0) {
      log(LogLevel::Error, "ring", "%s is shorter than the %llu bytes already consumed; earlier records are lost", file.c_str(), (unsigned long long)tail);
    }
  } else {
    ok = ftruncate(fd, (off_t)want) == 0 && lseek(fd, 0, SEEK_END) == (off_t)want;
  }
  if (!ok) {
    int e = errno;
    ::close(fd);
    outBroken_ = true;
    log(LogLevel::Error, "ring", "cannot write %s (%s): records are discarded", file.c_str(), strerror(e));
    return false;
  }
  outFd_ = fd;
  return true;
}

bool Ring::waitForSpaceLocked(size_t need, uint32_t waitMs) {
  uint64_t cap = hdr_->capacity;
  auto freeBytes = [&] { return cap - (__atomic_load_n(&hdr_->head, __ATOMIC_RELAXED) - __atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE)); };
  if (freeBytes() >= need) return true;
  stats_.stalls++;
  uint64_t t0 = monotonicNs();
  uint64_t limit = (uint64_t)waitMs * 1000000ull;
  while (freeBytes() < need) {
    uint64_t waited = monotonicNs() - t0;
    if (waited >= limit) {
      stats_.stallNs += waited;
      return false;
    }
    wake_.notify_one();
    usleep(1000);  // 1 ms steps, bounded by wait_ms in total
  }
  stats_.stallNs += monotonicNs() - t0;
  return true;
}

bool Ring::writeLocked(uint16_t type, uint16_t flags, const uint8_t* payload, size_t len) {
  uint8_t h[RECORD_HEADER_SIZE];
  uint32_t size = (uint32_t)(RECORD_HEADER_SIZE + len);
  uint64_t seq = seq_++;
  uint64_t tsc = rdtsc();
  uint32_t zero = 0;
  memcpy(h + 0, &size, 4);
  memcpy(h + 4, &type, 2);
  memcpy(h + 6, &flags, 2);
  memcpy(h + 8, &seq, 8);
  memcpy(h + 16, &tsc, 8);
  memcpy(h + 24, &zero, 4);
  uint32_t c = crc32(0, h, RECORD_HEADER_SIZE);
  if (len) c = crc32(c, payload, len);
  memcpy(h + 24, &c, 4);
  uint64_t head = __atomic_load_n(&hdr_->head, __ATOMIC_RELAXED);
  uint64_t cap = hdr_->capacity;
  auto put = [&](uint64_t at, const uint8_t* src, size_t n) {
    size_t pos = (size_t)(at & (cap - 1));
    size_t first = n < cap - pos ? n : (size_t)(cap - pos);
    memcpy(data_ + pos, src, first);
    if (n > first) memcpy(data_, src + first, n - first);
  };
  put(head, h, RECORD_HEADER_SIZE);
  if (len) put(head + RECORD_HEADER_SIZE, payload, len);
  __atomic_store_n(&hdr_->head, head + size, __ATOMIC_RELEASE);
  stats_.records++;
  stats_.bytes += size;
  return true;
}

namespace {
// The writer thread (the consumer) never blocks on the producers' lock: a producer holding it may be waiting
// for the very space the writer frees. When the writer itself writes a record (a log line), it keeps draining
// while it waits for the lock.
thread_local bool tWriter = false;
thread_local bool tDraining = false;
// Set while this thread holds the ring lock: anything that would re-enter commit() from there (a log line
// becoming an AGENT_LOG record) must not, or the thread deadlocks on its own lock.
thread_local bool tInRing = false;
struct InRing {
  InRing() { tInRing = true; }
  ~InRing() { tInRing = false; }
};
}  // namespace

bool Ring::lockForCommit(std::unique_lock<std::mutex>& lk) {
  if (!tWriter) {
    lk.lock();
    return true;
  }
  for (uint64_t t0 = monotonicNs(); !lk.try_lock();) {
    if (!tDraining && __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE) == (uint32_t)self_) drainToFile();
    if (monotonicNs() - t0 > 2000000000ull) return false;
    usleep(200);
  }
  return true;
}

bool Ring::commit(uint16_t type, uint16_t flags, const Payload& payload, uint32_t minWaitMs) {
  if (tInRing || !started_.load(std::memory_order_acquire)) return false;
  size_t need = RECORD_HEADER_SIZE + payload.size();
  bool dropped = false;
  bool wakeWriter = false;
  {
    std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
    if (!lockForCommit(lk)) {
      late_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    InRing guard;
    if (closed_.load(std::memory_order_relaxed) || !hdr_) {
      late_.fetch_add(1, std::memory_order_relaxed);  // after VM_END: nothing may follow it
      return false;
    }
    const size_t droppedRecordSize = RECORD_HEADER_SIZE + 24;
    size_t extra = pendingDropCount_ ? droppedRecordSize : 0;
    uint64_t cap = hdr_->capacity;
    uint64_t tail = __atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE);
    uint64_t freeNow = cap - (__atomic_load_n(&hdr_->head, __ATOMIC_RELAXED) - tail);
    // while already dropping and the consumer has not moved since, do not wait again: a stuck consumer
    // costs each producer at most one wait_ms, not one per record
    bool stuck = pendingDropCount_ && tail == dropTailMark_ && freeNow < need + extra && minWaitMs == 0;
    uint32_t waitMs = opts_.waitMs > minWaitMs ? opts_.waitMs : minWaitMs;
    if (need + droppedRecordSize > cap || stuck || !waitForSpaceLocked(need + extra, waitMs)) {
      if (!pendingDropCount_) pendingDropFirstSeq_ = seq_;
      pendingDropCount_++;
      pendingDropBytes_ += need;
      stats_.dropped++;
      stats_.droppedBytes += need;
      dropTailMark_ = __atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE);
      dropped = true;
    } else {
      writePendingDroppedLocked();
      writeLocked(type, flags, payload.data(), payload.size());
      // the writer drains every 20 ms anyway; waking it for every record cost a futex call and a small
      // write(2) per record (thousands per second at start-up): only when an eighth of the ring is in use
      wakeWriter = cap - (freeNow - need - extra) >= cap / 8;
    }
  }
  if (dropped) {
    // logged after the lock is released: the log line itself becomes a record
    warnOnce("ring-drop", "ring", "ring full for %u ms or record larger than the ring: dropping records (counted in DROPPED records; raise ring_mb or wait_ms)", opts_.waitMs);
    return false;
  }
  if (wakeWriter) wake_.notify_one();
  return true;
}

// The DROPPED record for records dropped since the last write; it precedes the next record that fits.
void Ring::writePendingDroppedLocked() {
  if (!pendingDropCount_) return;
  Payload d;
  d.u64(pendingDropCount_);
  d.u64(pendingDropBytes_);
  d.u64(pendingDropFirstSeq_);
  writeLocked(DROPPED, 0, d.data(), d.size());
  pendingDropCount_ = pendingDropBytes_ = 0;
}

bool Ring::commitLast(uint16_t type, void (*build)(const RingStats&, Payload&, void*), void* ctx, uint32_t minWaitMs) {
  if (tInRing || !started_.load(std::memory_order_acquire)) return false;
  bool written = false;
  {
    std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
    if (!lockForCommit(lk)) return false;
    InRing guard;
    if (closed_.load(std::memory_order_relaxed) || !hdr_) return false;
    const size_t droppedRecordSize = RECORD_HEADER_SIZE + 24;
    Payload probe;
    build(stats_, probe, ctx);  // the payload's size does not depend on the numbers
    size_t need = RECORD_HEADER_SIZE + probe.size() + (pendingDropCount_ ? droppedRecordSize : 0);
    uint32_t waitMs = opts_.waitMs > minWaitMs ? opts_.waitMs : minWaitMs;
    if (need <= hdr_->capacity && waitForSpaceLocked(need, waitMs)) {
      writePendingDroppedLocked();
      RingStats final = stats_;
      final.records += 1;
      final.bytes += RECORD_HEADER_SIZE + probe.size();
      Payload p;
      build(final, p, ctx);
      writeLocked(type, 0, p.data(), p.size());
      written = true;
    } else {
      stats_.dropped++;
      stats_.droppedBytes += RECORD_HEADER_SIZE + probe.size();
    }
    closed_.store(true, std::memory_order_release);
    __atomic_store_n(&hdr_->state, 1u, __ATOMIC_RELEASE);
  }
  wake_.notify_one();
  if (!written) log(LogLevel::Error, "ring", "no ring space for the final record within %u ms: the trace ends without it", minWaitMs);
  return written;
}

bool Ring::consumerAlive(pid_t pid) const {
  if (pid == self_) return true;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  // a collector that exited but was not yet reaped by its parent (a zombie) is gone too
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // no /proc: trust kill()
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char* close = strrchr(buf, ')');  // "pid (comm) S ..."; comm may contain spaces and parentheses
  return !(close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
}

void Ring::takeOver(uint32_t from) {
  uint32_t expected = from;
  if (!__atomic_compare_exchange_n(&hdr_->consumerPid, &expected, (uint32_t)self_, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  uint64_t tail = __atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE);
  openOutput(tail);
  log(LogLevel::Warning, "ring", "the collector (pid %u) is gone; the agent writes the rest of the trace itself", from);
}

void Ring::drainToFile() {
  if (outFd_ < 0 && !outBroken_) return;  // output not open yet (a takeover in progress)
  struct Guard {
    Guard() { tDraining = true; }
    ~Guard() { tDraining = false; }
  } guard;
  uint64_t head = __atomic_load_n(&hdr_->head, __ATOMIC_ACQUIRE);
  uint64_t tail = __atomic_load_n(&hdr_->tail, __ATOMIC_RELAXED);
  if (head == tail) return;
  uint64_t cap = hdr_->capacity;
  uint64_t n = head - tail;
  size_t pos = (size_t)(tail & (cap - 1));
  size_t first = n < cap - pos ? (size_t)n : (size_t)(cap - pos);
  if (outFd_ >= 0 && !outBroken_) {
    bool ok = writeAll(outFd_, data_ + pos, first) && (n == first || writeAll(outFd_, data_, (size_t)(n - first)));
    if (!ok) {
      outBroken_ = true;  // before logging: the log line is a record the writer drains
      log(LogLevel::Error, "ring", "writing %s/meta.jpt failed (%s): later records are discarded", opts_.outDir.c_str(), strerror(errno));
    }
  }
  if (outFd_ < 0 || outBroken_) stats_.lostToFile += n;
  __atomic_store_n(&hdr_->tail, head, __ATOMIC_RELEASE);
}

void Ring::writerLoop() {
  tWriter = true;
  if (populateLater_) {
    // the ring's pages into our page tables ahead of the producers (a hint: on a kernel without
    // MADV_POPULATE_WRITE, 5.14+, producers fault them in as they go)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    (void)madvise((void*)hdr_, mapSize_, MADV_POPULATE_WRITE);
  }
  try {
    writerLoopBody();
  } catch (...) {
    // nothing may escape a thread of ours (it would terminate the JVM); records are no longer drained
    warnOnce("writer", "ring", "internal error in the writer thread: the rest of the trace is lost");
  }
}

void Ring::writerLoopBody() {
  for (;;) {
    uint32_t consumer = __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE);
    if (consumer != (uint32_t)self_ && !consumerAlive((pid_t)consumer)) {
      takeOver(consumer);
      consumer = __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE);
    }
    if (consumer == (uint32_t)self_) drainToFile();
    bool stop;
    {
      std::unique_lock<std::mutex> lk(wakeMu_);
      if (!stopWriter_) wake_.wait_for(lk, std::chrono::milliseconds(consumer == (uint32_t)self_ ? 20 : 100));
      stop = stopWriter_;
    }
    if (stop) {
      consumer = __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE);
      if (consumer != (uint32_t)self_ && !consumerAlive((pid_t)consumer)) takeOver(consumer);
      if (__atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE) == (uint32_t)self_) drainToFile();
      return;
    }
  }
}

void Ring::finish() {
  if (!hdr_) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (finished_) return;
    finished_ = true;
    closed_.store(true, std::memory_order_release);
    __atomic_store_n(&hdr_->state, 1u, __ATOMIC_RELEASE);
  }
  // a collector gets a bounded time (5 s) to drain everything; if it dies meanwhile, the writer takes over
  uint64_t deadline = monotonicNs() + 5ull * 1000000000ull;
  while (monotonicNs() < deadline) {
    uint32_t consumer = __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE);
    if (consumer == (uint32_t)self_) break;
    if (__atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&hdr_->head, __ATOMIC_ACQUIRE)) break;
    wake_.notify_one();
    usleep(2000);
  }
  {
    std::lock_guard<std::mutex> lk(wakeMu_);
    stopWriter_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  bool selfConsumer = __atomic_load_n(&hdr_->consumerPid, __ATOMIC_ACQUIRE) == (uint32_t)self_;
  if (!selfConsumer && __atomic_load_n(&hdr_->tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&hdr_->head, __ATOMIC_ACQUIRE))
    log(LogLevel::Error, "ring", "the collector did not drain the ring within 5 s of VM death; it keeps the ring file for later");
  if (outFd_ >= 0) {
    // no fsync: what write() gave the kernel outlives this process (a reader sees it at once); waiting for the
    // disk would only guard against the machine going down, at VM exit's expense (fop full: 8 ms)
    ::close(outFd_);
    outFd_ = -1;
  }
  // the consumer removes the ring: the agent when it drained it, otherwise the collector
  if (selfConsumer && !path_.empty()) unlink(path_.c_str());
  std::lock_guard<std::mutex> lk(mu_);  // a late commit() sees closed_ (and hdr_ == nullptr) under this lock
  munmap(hdr_, mapSize_);
  hdr_ = nullptr;
  data_ = nullptr;
}

uint64_t Ring::writerCpuNs() {
  if (!writer_.joinable()) return 0;
  clockid_t id;
  return pthread_getcpuclockid(writer_.native_handle(), &id) == 0 ? clockNs(id) : 0;
}

RingStats Ring::stats() {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace jportal
