#include "cost.h"

#include <stdio.h>

#include <string>

#include "common.h"

namespace jportal {

CostCounter gCosts[(int)Cost::Count];

namespace {
const char* const kNames[(int)Cost::Count] = {"onload",       "vminit",        "class-prepare", "class-file-load-hook", "thread-start",
                                              "thread-end",   "dynamic-code",  "compiled-load", "compiled-unload",      "watcher-nmethods",
                                              "watcher-patches", "death-scans", "death-runs"};
thread_local int tDepth = 0;  // open CostScopes on this thread
}  // namespace

CostScope::CostScope(Cost c) : c_(c), t0_(0), outer_(tDepth++ == 0) {
  if (outer_) t0_ = monotonicNs();
}

CostScope::~CostScope() {
  tDepth--;
  if (!outer_) return;
  CostCounter& k = gCosts[(int)c_];
  k.calls.fetch_add(1, std::memory_order_relaxed);
  k.ns.fetch_add(monotonicNs() - t0_, std::memory_order_relaxed);
}

uint64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }
uint64_t processCpuNs() { return clockNs(CLOCK_PROCESS_CPUTIME_ID); }

void reportCosts(const WatcherFacts& watcher, uint64_t writerCpuNs) {
  std::string line;
  char buf[192];
  uint64_t total = 0;
  bool factsShown = false;
  for (int i = 0; i < (int)Cost::Count; i++) {
    uint64_t calls = gCosts[i].calls.load(std::memory_order_relaxed), ns = gCosts[i].ns.load(std::memory_order_relaxed);
    if (calls == 0) continue;
    // the watcher's scans run on its own thread: its CPU is reported below, not added to the callbacks' wall time
    if (i != (int)Cost::WatcherNmethods && i != (int)Cost::WatcherPatches) total += ns;
    snprintf(buf, sizeof buf, "%s%s %llu x %.1f ms", line.empty() ? "" : ", ", kNames[i], (unsigned long long)calls, ns / 1e6);
    line += buf;
    if (i == (int)Cost::WatcherNmethods && watcher.scanning) {
      // (how many scans a cheaper test for "nothing compiled since" could have skipped; the count includes the
      // scans at VMInit and VM death, which are not watcher scans)
      snprintf(buf, sizeof buf, " (walks %.1f ms CPU; %llu found new nmethods; %llu metadata pages checked by system call)", watcher.walkCpuNs / 1e6,
               (unsigned long long)watcher.scansWithNew, (unsigned long long)watcher.pageSyscalls);
      line += buf;
      factsShown = true;
    }
  }
  // a short run can end before the watcher's first scan: the scans at VMInit and VM death still have facts
  if (watcher.scanning && !factsShown) {
    snprintf(buf, sizeof buf, "%snmethod scans at VM start and death (walks %.1f ms CPU; %llu found new nmethods; %llu metadata pages checked by system call)",
             line.empty() ? "" : ", ", watcher.walkCpuNs / 1e6, (unsigned long long)watcher.scansWithNew, (unsigned long long)watcher.pageSyscalls);
    line += buf;
  }
  snprintf(buf, sizeof buf, "; in JVM threads %.1f ms wall; watcher %.1f ms CPU, writer %.1f ms CPU; process %.1f ms CPU", total / 1e6,
           watcher.cpuNs / 1e6, writerCpuNs / 1e6, processCpuNs() / 1e6);
  line += buf;
  log(LogLevel::Info, "stats", "%s", line.c_str());
}

}  // namespace jportal
