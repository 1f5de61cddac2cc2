// What the agent itself costs, measured in the agent (`stats=1` prints it at VM death, see README.md): wall time
// inside each kind of JVMTI callback and each phase of start-up and VM death, and the CPU time of the agent's own
// threads. Counting is always on (two monotonic clock reads per callback, a few tens of ns); only the report is
// optional.
#pragma once
#include <stdint.h>

#include <atomic>

namespace jportal {

enum class Cost : uint8_t {
  OnLoad,            // Agent_OnLoad: ring, VMStructs, capabilities
  VmInit,            // VMInit: VM info, interpreter, classes and nmethods so far, threads
  ClassPrepare,      // ClassPrepare callbacks (classes=path)
  ClassFileLoadHook, // ClassFileLoadHook callbacks (classes=hook|early)
  ThreadStart,
  ThreadEnd,
  DynamicCode,       // DynamicCodeGenerated
  CompiledLoad,      // CompiledMethodLoad (nmethods=events|check)
  CompiledUnload,
  WatcherNmethods,   // the watcher's scans for new nmethods (nmethods=scan)
  WatcherPatches,    // the watcher's patch scans
  DeathScans,        // VM death: the final patch and nmethod scans (and snapshots)
  DeathRuns,         // VM death: METHOD_RUNS
  Count
};

struct CostCounter {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> ns{0};
};

extern CostCounter gCosts[(int)Cost::Count];

// Adds the time from construction to destruction to one counter.
class CostScope {
 public:
  explicit CostScope(Cost c);
  ~CostScope();
  CostScope(const CostScope&) = delete;
  CostScope& operator=(const CostScope&) = delete;

 private:
  Cost c_;
  uint64_t t0_;
  bool outer_;  // a scope inside another (events replayed inside VMInit) counts in the outer one only
};

// CPU time of the calling thread, in ns (CLOCK_THREAD_CPUTIME_ID).
uint64_t threadCpuNs();
// CPU time of the whole process so far, in ns (CLOCK_PROCESS_CPUTIME_ID).
uint64_t processCpuNs();

// What the watcher reports of itself (stats=1).
struct WatcherFacts {
  bool scanning;          // nmethods=scan in effect: the facts below are reported even if no watcher scan ran
  uint64_t cpuNs;         // the watcher thread's CPU time
  uint64_t walkCpuNs;     // the nmethod scans' walks of the code heaps (the watcher's, and those at VMInit and VM death)
  uint64_t scansWithNew;  // nmethod scans that found a new nmethod
  uint64_t pageSyscalls;  // metadata pages checked by system call
};
// One line: each counter with calls, plus the agent threads' CPU (watcher, writer) and the watcher's facts.
void reportCosts(const WatcherFacts& watcher, uint64_t writerCpuNs);

}  // namespace jportal
