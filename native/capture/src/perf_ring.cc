#include "perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace jportal {

namespace {
perf_event_mmap_page* page(void* base) { return static_cast<perf_event_mmap_page*>(base); }

void copyWrapped(const uint8_t* area, size_t size, uint64_t pos, size_t len, uint8_t* dst) {
  size_t at = static_cast<size_t>(pos % size);
  size_t first = len < size - at ? len : size - at;
  memcpy(dst, area + at, first);
  if (first < len) memcpy(dst + first, area, len - first);
}
}  // namespace

PerfRing::PerfRing(int fd, size_t dataPages, size_t auxPages, bool auxWritable) {
  pageSize_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // the kernel wants a power-of-two number of data pages (and of AUX pages)
  if (dataPages == 0 || (dataPages & (dataPages - 1)) != 0) throw SysError{EINVAL, "mmap(data pages not a power of two)"};
  if (auxPages != 0 && (auxPages & (auxPages - 1)) != 0) throw SysError{EINVAL, "mmap(aux pages not a power of two)"};
  baseLen_ = (1 + dataPages) * pageSize_;
  void* base = mmap(nullptr, baseLen_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) throw SysError{errno, "mmap"};
  base_ = base;
  dataSize_ = dataPages * pageSize_;
  data_ = static_cast<const uint8_t*>(base_) + pageSize_;
  if (auxPages == 0) return;
  auxSize_ = auxPages * pageSize_;
  auxLen_ = auxSize_;
  perf_event_mmap_page* pg = page(base_);
  pg->aux_offset = baseLen_;
  pg->aux_size = auxSize_;
  void* aux = mmap(nullptr, auxLen_, auxWritable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
                   static_cast<off_t>(baseLen_));
  if (aux == MAP_FAILED) {
    int e = errno;
    unmap();
    throw SysError{e, "mmap(aux)"};
  }
  aux_ = aux;
}

PerfRing::~PerfRing() { unmap(); }

void PerfRing::unmap() {
  if (aux_) munmap(aux_, auxLen_);
  if (base_) munmap(base_, baseLen_);
  aux_ = nullptr;
  base_ = nullptr;
  data_ = nullptr;
}

uint64_t PerfRing::dataHead() const { return __atomic_load_n(&page(base_)->data_head, __ATOMIC_ACQUIRE); }
uint64_t PerfRing::dataTail() const { return __atomic_load_n(&page(base_)->data_tail, __ATOMIC_RELAXED); }
// the copy-out before this store must be complete before the kernel may overwrite the space: release
void PerfRing::setDataTail(uint64_t tail) { __atomic_store_n(&page(base_)->data_tail, tail, __ATOMIC_RELEASE); }
uint64_t PerfRing::auxHead() const { return __atomic_load_n(&page(base_)->aux_head, __ATOMIC_ACQUIRE); }
uint64_t PerfRing::auxTail() const { return __atomic_load_n(&page(base_)->aux_tail, __ATOMIC_RELAXED); }
void PerfRing::setAuxTail(uint64_t tail) { __atomic_store_n(&page(base_)->aux_tail, tail, __ATOMIC_RELEASE); }

void PerfRing::copyData(uint64_t pos, size_t len, uint8_t* dst) const { copyWrapped(data_, dataSize_, pos, len, dst); }
void PerfRing::copyAux(uint64_t pos, size_t len, uint8_t* dst) const {
  copyWrapped(static_cast<const uint8_t*>(aux_), auxSize_, pos, len, dst);
}

TimeConv PerfRing::timeConv() const {
  const volatile perf_event_mmap_page* pg = page(base_);
  TimeConv t;
  uint32_t seq;
  // seqlock: the kernel bumps `lock` around updates; retry until a stable, even read
  do {
    seq = __atomic_load_n(&page(base_)->lock, __ATOMIC_ACQUIRE);
    uint64_t caps = pg->capabilities;
    t.capUserTime = (caps >> 3) & 1;
    t.capUserTimeZero = (caps >> 4) & 1;
    t.capUserTimeShort = (caps >> 5) & 1;
    t.timeShift = pg->time_shift;
    t.timeMult = pg->time_mult;
    t.timeZero = pg->time_zero;
    t.timeCycles = pg->time_cycles;
    t.timeMask = pg->time_mask;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } while (__atomic_load_n(&page(base_)->lock, __ATOMIC_RELAXED) != seq || (seq & 1));
  return t;
}

}  // namespace jportal
