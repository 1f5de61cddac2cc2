// Small shared pieces of the agent: timestamps, logging, and the payload builder.
#pragma once
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <string>
#include <vector>

namespace jportal {

inline uint64_t rdtsc() {
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

// A clock in ns (clock_gettime); 0 if it cannot be read (e.g. a CPU clock of a thread that has ended).
uint64_t clockNs(clockid_t id);
uint64_t monotonicNs();
// Names the calling thread (as top, perf and /proc/PID/task/*/comm show it; at most 15 characters)
void nameThisThread(const char* name);
uint64_t realtimeNs();

enum class LogLevel : uint8_t { Info = 0, Warning = 1, Error = 2 };

// Verbosity of stderr output (records are written regardless).
enum class Verbosity { Quiet, Info, Debug };
void setVerbosity(Verbosity v);
bool debugEnabled();

// Logs to stderr ("[jportal] component: message") and, once the recorder runs, as an AGENT_LOG record.
void log(LogLevel level, const char* component, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
// Logs a warning only the first time `key` is seen: how a failing record kind degrades without noise.
void warnOnce(const char* key, const char* component, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
uint32_t errorCount();
// Where log lines go besides stderr (the recorder installs one that writes AGENT_LOG records).
void setLogSink(void (*sink)(LogLevel level, const char* component, const char* message));

// Little-endian payload builder for the record layouts of docs/trace-format.md.
class Payload {
 public:
  Payload() { buf_.reserve(256); }
  void u8(uint8_t v) { put(&v, 1); }
  void i8(int8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put(&v, 2); }
  void u32(uint32_t v) { put(&v, 4); }
  void i32(int32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void str(const char* s) { str(s, s ? strlen(s) : 0); }
  void str(const std::string& s) { str(s.data(), s.size()); }
  void str(const char* s, size_t n) {
    u32((uint32_t)n);
    if (n) put(s, n);
  }
  // Appends bytes as they are (no length prefix), e.g. a nested payload built separately.
  void raw(const void* p, size_t n) {
    if (n) put(p, n);
  }
  void bytes(const void* p, size_t n) {
    u32((uint32_t)n);
    if (n) put(p, n);
  }
  // Arrays: beginArray() reserves the count, endArray() fills it in.
  size_t beginArray() {
    size_t at = buf_.size();
    u32(0);
    return at;
  }
  void endArray(size_t at, uint32_t count) { memcpy(&buf_[at], &count, 4); }
  const uint8_t* data() const { return buf_.data(); }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  void put(const void* p, size_t n) {
    const uint8_t* b = (const uint8_t*)p;
    buf_.insert(buf_.end(), b, b + n);
  }
  std::vector<uint8_t> buf_;
};

}  // namespace jportal
