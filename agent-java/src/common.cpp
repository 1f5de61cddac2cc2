#include "common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace jportal {

namespace {
std::atomic<int> gVerbosity{(int)Verbosity::Info};
std::atomic<uint32_t> gErrors{0};
std::mutex gLogMu;
std::set<std::string>* gWarned = nullptr;
void (*gSink)(LogLevel, const char*, const char*) = nullptr;

void vlog(LogLevel level, const char* component, const char* fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (level != LogLevel::Info) gErrors++;
  if (level != LogLevel::Info || gVerbosity.load() != (int)Verbosity::Quiet)
    fprintf(stderr, "[jportal] %s: %s\n", component, msg);
  if (gSink) gSink(level, component, msg);
}
}  // namespace

void setLogSink(void (*sink)(LogLevel, const char*, const char*)) { gSink = sink; }

uint64_t clockNs(clockid_t id) {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t monotonicNs() { return clockNs(CLOCK_MONOTONIC); }

void nameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

uint64_t realtimeNs() { return clockNs(CLOCK_REALTIME); }

void setVerbosity(Verbosity v) { gVerbosity = (int)v; }
bool debugEnabled() { return gVerbosity.load() == (int)Verbosity::Debug; }
uint32_t errorCount() { return gErrors.load(); }

void log(LogLevel level, const char* component, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, component, fmt, ap);
  va_end(ap);
}

void warnOnce(const char* key, const char* component, const char* fmt, ...) {
  {
    std::lock_guard<std::mutex> lk(gLogMu);
    if (!gWarned) gWarned = new std::set<std::string>();  // never freed: usable until process exit
    if (!gWarned->insert(key).second) return;
  }
  va_list ap;
  va_start(ap, fmt);
  vlog(LogLevel::Warning, component, fmt, ap);
  va_end(ap);
}

}  // namespace jportal
