// Small shared pieces of the agent: timestamps, logging, and the payload builder.
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <new>
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
  Payload() = default;
  Payload(const Payload& o) { *this = o; }
  Payload& operator=(const Payload& o) {
    if (this != &o) {
      n_ = 0;
      put(o.p_, o.n_);
    }
    return *this;
  }
  ~Payload() {
    if (p_ != inline_) free(p_);
  }
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
    size_t at = n_;
    u32(0);
    return at;
  }
  void endArray(size_t at, uint32_t count) { memcpy(p_ + at, &count, 4); }
  const uint8_t* data() const { return p_; }
  size_t size() const { return n_; }
  void clear() { n_ = 0; }
  // Room for `n` bytes in all without growing again (a record whose size is known up front).
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }

 private:
  // (records are mostly small: a class name, a thread; those need no heap block)
  static constexpr size_t kInline = 256;
  void put(const void* b, size_t n) {
    if (n > cap_ - n_) grow(n_ + n);
    memcpy(p_ + n_, b, n);
    n_ += n;
  }
  void grow(size_t need) {
    size_t cap = cap_ * 2 > need ? cap_ * 2 : need;
    uint8_t* q = (uint8_t*)malloc(cap);
    if (!q) throw std::bad_alloc();  // (JVMTI callbacks and the agent's threads catch everything)
    memcpy(q, p_, n_);
    if (p_ != inline_) free(p_);
    p_ = q;
    cap_ = cap;
  }
  uint8_t inline_[kInline];
  uint8_t* p_ = inline_;
  size_t n_ = 0, cap_ = kInline;
};

}  // namespace jportal
