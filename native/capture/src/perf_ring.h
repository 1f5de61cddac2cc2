// A perf event's mmap: the control page, the data ring and (optionally) the AUX area. RAII: the destructor
// unmaps. Only the kernel's documented protocol (include/uapi/linux/perf_event.h, struct perf_event_mmap_page):
// read data_head/aux_head with acquire semantics, copy, then publish data_tail/aux_tail with release semantics.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace jportal {

struct TimeConv {
  bool capUserTime = false;      // cap_user_time: time_shift/time_mult/time_offset valid
  bool capUserTimeZero = false;  // cap_user_time_zero: time_zero valid (TSC <-> perf time)
  bool capUserTimeShort = false; // cap_user_time_short: time_cycles/time_mask valid
  uint16_t timeShift = 0;
  uint32_t timeMult = 0;
  uint64_t timeZero = 0;
  uint64_t timeCycles = 0;
  uint64_t timeMask = 0;
};

class PerfRing {
 public:
  // Maps 1 + dataPages pages at offset 0 of fd; if auxPages > 0 also the AUX area (read-write = full mode,
  // read-only = overwrite/snapshot mode). Throws SysError on failure (everything mapped so far is unmapped).
  PerfRing(int fd, size_t dataPages, size_t auxPages, bool auxWritable);
  ~PerfRing();
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;

  void unmap();
  bool mapped() const { return base_ != nullptr; }
  size_t dataSize() const { return dataSize_; }
  size_t auxSize() const { return auxSize_; }
  uint64_t dataHead() const;
  uint64_t dataTail() const;
  void setDataTail(uint64_t tail);
  uint64_t auxHead() const;
  uint64_t auxTail() const;
  void setAuxTail(uint64_t tail);
  // Copies len bytes starting at pos (< size) of the data ring / AUX area into dst; the copy wraps.
  void copyData(uint64_t pos, size_t len, uint8_t* dst) const;
  void copyAux(uint64_t pos, size_t len, uint8_t* dst) const;
  TimeConv timeConv() const;

 private:
  void* base_ = nullptr;
  size_t baseLen_ = 0;
  void* aux_ = nullptr;
  size_t auxLen_ = 0;
  size_t pageSize_ = 0;
  size_t dataSize_ = 0;
  size_t auxSize_ = 0;
  const uint8_t* data_ = nullptr;
};

// An error from a system call, carrying errno (converted to a JavaScript error with code/errno/syscall).
struct SysError {
  int err;
  std::string syscall;
};

}  // namespace jportal
