// The shared-memory ring between the agent (producers: JVMTI callbacks, the patch watcher) and one
// consumer (the `jportal record` collector, or the agent's own writer thread), per docs/trace-format.md §5.
#pragma once
#include <stdint.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

namespace jportal {

struct RingStats {
  uint64_t records = 0, bytes = 0, stalls = 0, stallNs = 0, dropped = 0, droppedBytes = 0, lostToFile = 0;
};

class Ring {
 public:
  struct Options {
    size_t capacity = 64u << 20;
    uint32_t waitMs = 2000;
    std::string outDir;
    pid_t collector = 0;  // 0: the agent drains the ring itself
  };

  ~Ring();
  // Creates the ring and starts the writer thread. Never fatal: on failure it logs and returns false.
  bool start(const Options& opts);
  // Appends one record (thread-safe). Returns false if it was dropped (counted, later reported).
  // `minWaitMs` raises the wait bound for records that must not be lost (the final CALIBRATION and VM_END).
  bool commit(uint16_t type, uint16_t flags, const Payload& payload, uint32_t minWaitMs = 0);
  // Writes the file's last record and closes the ring to producers in one step, so nothing can follow it.
  // `build` fills the payload from the stats as they will be once this record is written (its own record
  // and bytes included); it runs under the ring lock and must only format numbers.
  bool commitLast(uint16_t type, void (*build)(const RingStats& final, Payload& out, void* ctx), void* ctx, uint32_t minWaitMs);
  // Called once after the last record: marks the ring closed, makes sure everything reaches the file
  // (draining itself, or waiting a bounded time for the collector), and releases the ring.
  void finish();
  RingStats stats();
  // CPU time of the writer thread so far (0 once it has stopped, or if it cannot be read)
  uint64_t writerCpuNs();
  bool running() const { return started_.load(std::memory_order_acquire) && !closed_.load(std::memory_order_acquire); }
  // Records offered after finish() (late callbacks at VM exit): dropped silently, only counted.
  uint64_t lateRecords() const { return late_.load(std::memory_order_relaxed); }
  // Bytes a record of this payload size takes (for callers that estimate).
  static size_t recordSize(size_t payload) { return 28 + payload; }

 // Layout of the ring file's first 56 bytes (defined in ring.cpp).
  struct Header;

 private:
  bool lockForCommit(std::unique_lock<std::mutex>& lk);
  void writePendingDroppedLocked();
  bool writeLocked(uint16_t type, uint16_t flags, const uint8_t* payload, size_t len);
  bool waitForSpaceLocked(size_t need, uint32_t waitMs);
  void writerLoop();
  void writerLoopBody();
  bool openOutput(uint64_t tail);
  void drainToFile();
  bool consumerAlive(pid_t pid) const;
  void takeOver(uint32_t from);

  Options opts_;
  std::string path_;
  Header* hdr_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t mapSize_ = 0;
  bool populateLater_ = false;  // the writer maps the ring's (allocated) pages in
  std::vector<uint8_t> fileHeader_;
  std::mutex mu_;  // producers
  uint64_t seq_ = 0;
  std::atomic<bool> started_{false};
  std::atomic<bool> closed_{false};  // no more records (after VM_END)
  bool finished_ = false;             // finish() ran
  std::atomic<uint64_t> late_{0};
  uint64_t dropTailMark_ = 0;  // tail when the last record was dropped: no new wait until the consumer moves
  RingStats stats_;
  uint64_t pendingDropCount_ = 0, pendingDropBytes_ = 0, pendingDropFirstSeq_ = 0;
  // consumer side (writer thread only, and finish() after the thread stopped)
  int outFd_ = -1;
  bool outBroken_ = false;
  std::thread writer_;
  std::mutex wakeMu_;
  std::condition_variable wake_;
  bool stopWriter_ = false;
  pid_t self_ = 0;
};

}  // namespace jportal
