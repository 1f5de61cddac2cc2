// jportal capture addon: the system calls of a perf Intel PT capture and nothing else. Every decision (which
// PMU, which config bits, which records mean what, where bytes go) is made in TypeScript (@jportal/capture).
// C++ errors never escape into N-API unconverted: SysError becomes a JavaScript Error with code/errno/syscall.
#include <cpuid.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <memory>
#include <napi.h>
#include <string>
#include <vector>

#include "perf_ring.h"

namespace jportal {
namespace {

Napi::Error errnoError(Napi::Env env, int err, const std::string& syscall) {
  const char* name = strerrorname_np(err);
  std::string code = name ? name : ("E" + std::to_string(err));
  Napi::Error e = Napi::Error::New(env, syscall + ": " + strerror(err) + " (" + code + ")");
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  return e;
}

int32_t intArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + ": a number expected");
  return info[i].As<Napi::Number>().Int32Value();
}

uint64_t bigArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsBigInt()) throw Napi::TypeError::New(info.Env(), std::string(what) + ": a bigint expected");
  bool lossless = false;
  uint64_t v = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless) throw Napi::RangeError::New(info.Env(), std::string(what) + ": out of u64 range");
  return v;
}

// perfEventOpen(attr: Buffer, pid, cpu, groupFd, flags): fd. attr is the serialized struct perf_event_attr; its
// size field must equal the buffer length (the kernel reads exactly that many bytes).
Napi::Value PerfEventOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBuffer()) throw Napi::TypeError::New(env, "perfEventOpen: attr Buffer expected");
  auto attr = info[0].As<Napi::Buffer<uint8_t>>();
  if (attr.Length() < PERF_ATTR_SIZE_VER0) throw Napi::RangeError::New(env, "perfEventOpen: attr shorter than PERF_ATTR_SIZE_VER0");
  uint32_t size;
  memcpy(&size, attr.Data() + 4, 4);
  if (size != attr.Length()) throw Napi::RangeError::New(env, "perfEventOpen: attr.size differs from the buffer length");
  // the kernel may write back attr.size on E2BIG: give it a private copy
  std::vector<uint8_t> copy(attr.Data(), attr.Data() + attr.Length());
  int pid = intArg(info, 1, "pid"), cpu = intArg(info, 2, "cpu"), group = intArg(info, 3, "groupFd");
  unsigned long flags = static_cast<unsigned long>(intArg(info, 4, "flags"));
  long fd = syscall(SYS_perf_event_open, copy.data(), pid, cpu, group, flags);
  if (fd < 0) throw errnoError(env, errno, "perf_event_open");
  return Napi::Number::New(env, static_cast<double>(fd));
}

Napi::Value Ioctl(const Napi::CallbackInfo& info, unsigned long request, const char* name, bool withArg) {
  int fd = intArg(info, 0, "fd");
  unsigned long arg = withArg ? static_cast<unsigned long>(intArg(info, 1, "arg")) : 0;
  if (ioctl(fd, request, arg) < 0) throw errnoError(info.Env(), errno, name);
  return info.Env().Undefined();
}
Napi::Value Enable(const Napi::CallbackInfo& info) { return Ioctl(info, PERF_EVENT_IOC_ENABLE, "ioctl(PERF_EVENT_IOC_ENABLE)", false); }
Napi::Value Disable(const Napi::CallbackInfo& info) { return Ioctl(info, PERF_EVENT_IOC_DISABLE, "ioctl(PERF_EVENT_IOC_DISABLE)", false); }
Napi::Value SetOutput(const Napi::CallbackInfo& info) { return Ioctl(info, PERF_EVENT_IOC_SET_OUTPUT, "ioctl(PERF_EVENT_IOC_SET_OUTPUT)", true); }

// setFilter(fd, "filter START/SIZE@FILE ..."): perf's address filter string (kernel: perf_event_parse_addr_filter)
Napi::Value SetFilter(const Napi::CallbackInfo& info) {
  int fd = intArg(info, 0, "fd");
  if (info.Length() < 2 || !info[1].IsString()) throw Napi::TypeError::New(info.Env(), "setFilter: string expected");
  std::string filter = info[1].As<Napi::String>().Utf8Value();
  if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter.c_str()) < 0) throw errnoError(info.Env(), errno, "ioctl(PERF_EVENT_IOC_SET_FILTER)");
  return info.Env().Undefined();
}

// pollAsync(fds, timeoutMs): Promise<number[]> of revents, waiting in a worker thread (the event loop stays free).
class PollWorker : public Napi::AsyncWorker {
 public:
  PollWorker(Napi::Env env, std::vector<int> fds, int timeoutMs)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), timeoutMs_(timeoutMs) {
    for (int fd : fds) pfds_.push_back(pollfd{fd, POLLIN, 0});
  }
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    int r;
    do r = poll(pfds_.data(), pfds_.size(), timeoutMs_);
    while (r < 0 && errno == EINTR);
    if (r < 0) err_ = errno;
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (err_) {
      deferred_.Reject(errnoError(env, err_, "poll").Value());
      return;
    }
    Napi::Array out = Napi::Array::New(env, pfds_.size());
    for (size_t i = 0; i < pfds_.size(); i++) out.Set(static_cast<uint32_t>(i), Napi::Number::New(env, pfds_[i].revents));
    deferred_.Resolve(out);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::vector<pollfd> pfds_;
  int timeoutMs_;
  int err_ = 0;
};

Napi::Value PollAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "pollAsync: fd array expected");
  auto arr = info[0].As<Napi::Array>();
  std::vector<int> fds;
  for (uint32_t i = 0; i < arr.Length(); i++) fds.push_back(arr.Get(i).As<Napi::Number>().Int32Value());
  auto* w = new PollWorker(env, std::move(fds), intArg(info, 1, "timeoutMs"));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

Napi::Value Rdtsc(const Napi::CallbackInfo& info) { return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(__rdtsc())); }

// clockPair(): { tsc, monoNs } read back to back (relates PT's TSC to CLOCK_MONOTONIC, as the emulator's header)
Napi::Value ClockPair(const Napi::CallbackInfo& info) {
  timespec ts;
  uint64_t tsc = __rdtsc();
  clock_gettime(CLOCK_MONOTONIC, &ts);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("tsc", Napi::BigInt::New(info.Env(), tsc));
  o.Set("monoNs", Napi::BigInt::New(info.Env(), static_cast<uint64_t>(static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec))));
  return o;
}

// cpuid(leaf, subleaf): [eax, ebx, ecx, edx], or null when the leaf is above the maximum
Napi::Value Cpuid(const Napi::CallbackInfo& info) {
  unsigned leaf = static_cast<unsigned>(intArg(info, 0, "leaf")), sub = static_cast<unsigned>(intArg(info, 1, "subleaf"));
  unsigned a, b, c, d;
  if (!__get_cpuid_count(leaf, sub, &a, &b, &c, &d)) return info.Env().Null();
  Napi::Array out = Napi::Array::New(info.Env(), 4);
  unsigned regs[4] = {a, b, c, d};
  for (uint32_t i = 0; i < 4; i++) out.Set(i, Napi::Number::New(info.Env(), regs[i]));
  return out;
}

Napi::Value PageSize(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(sysconf(_SC_PAGESIZE))); }

// Ring: new Ring(fd, dataPages, auxPages, auxWritable). Methods mirror PerfRing; positions are bigint (u64).
class Ring : public Napi::ObjectWrap<Ring> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Ring",
                       {InstanceMethod("dataHead", &Ring::DataHead), InstanceMethod("dataTail", &Ring::DataTail),
                        InstanceMethod("setDataTail", &Ring::SetDataTail), InstanceMethod("auxHead", &Ring::AuxHead),
                        InstanceMethod("auxTail", &Ring::AuxTail), InstanceMethod("setAuxTail", &Ring::SetAuxTail),
                        InstanceMethod("readData", &Ring::ReadData), InstanceMethod("readAux", &Ring::ReadAux),
                        InstanceMethod("timeConv", &Ring::TimeConvJs), InstanceMethod("unmap", &Ring::Unmap),
                        InstanceAccessor("dataSize", &Ring::DataSize, nullptr), InstanceAccessor("auxSize", &Ring::AuxSize, nullptr)});
  }
  explicit Ring(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Ring>(info) {
    int fd = intArg(info, 0, "fd");
    int dataPages = intArg(info, 1, "dataPages"), auxPages = intArg(info, 2, "auxPages");
    bool writable = info.Length() > 3 && info[3].ToBoolean().Value();
    if (dataPages <= 0 || auxPages < 0) throw Napi::RangeError::New(info.Env(), "Ring: page counts must be positive");
    try {
      ring_ = std::make_unique<PerfRing>(fd, static_cast<size_t>(dataPages), static_cast<size_t>(auxPages), writable);
    } catch (const SysError& e) {
      throw errnoError(info.Env(), e.err, e.syscall);
    }
  }

 private:
  PerfRing& ring(const Napi::CallbackInfo& info) {
    if (!ring_ || !ring_->mapped()) throw Napi::Error::New(info.Env(), "Ring: already unmapped");
    return *ring_;
  }
  Napi::Value DataHead(const Napi::CallbackInfo& info) { return Napi::BigInt::New(info.Env(), ring(info).dataHead()); }
  Napi::Value DataTail(const Napi::CallbackInfo& info) { return Napi::BigInt::New(info.Env(), ring(info).dataTail()); }
  Napi::Value AuxHead(const Napi::CallbackInfo& info) { return Napi::BigInt::New(info.Env(), ring(info).auxHead()); }
  Napi::Value AuxTail(const Napi::CallbackInfo& info) { return Napi::BigInt::New(info.Env(), ring(info).auxTail()); }
  Napi::Value SetDataTail(const Napi::CallbackInfo& info) {
    ring(info).setDataTail(bigArg(info, 0, "tail"));
    return info.Env().Undefined();
  }
  Napi::Value SetAuxTail(const Napi::CallbackInfo& info) {
    ring(info).setAuxTail(bigArg(info, 0, "tail"));
    return info.Env().Undefined();
  }
  Napi::Value Read(const Napi::CallbackInfo& info, bool aux) {
    PerfRing& r = ring(info);
    uint64_t pos = bigArg(info, 0, "pos");
    int len = intArg(info, 1, "len");
    size_t size = aux ? r.auxSize() : r.dataSize();
    if (len < 0 || static_cast<size_t>(len) > size) throw Napi::RangeError::New(info.Env(), "Ring.read: length exceeds the area");
    auto out = Napi::Buffer<uint8_t>::New(info.Env(), static_cast<size_t>(len));
    if (len > 0) {
      if (aux) r.copyAux(pos, static_cast<size_t>(len), out.Data());
      else r.copyData(pos, static_cast<size_t>(len), out.Data());
    }
    return out;
  }
  Napi::Value ReadData(const Napi::CallbackInfo& info) { return Read(info, false); }
  Napi::Value ReadAux(const Napi::CallbackInfo& info) { return Read(info, true); }
  Napi::Value TimeConvJs(const Napi::CallbackInfo& info) {
    TimeConv t = ring(info).timeConv();
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("capUserTime", Napi::Boolean::New(env, t.capUserTime));
    o.Set("capUserTimeZero", Napi::Boolean::New(env, t.capUserTimeZero));
    o.Set("capUserTimeShort", Napi::Boolean::New(env, t.capUserTimeShort));
    o.Set("timeShift", Napi::Number::New(env, t.timeShift));
    o.Set("timeMult", Napi::Number::New(env, t.timeMult));
    o.Set("timeZero", Napi::BigInt::New(env, t.timeZero));
    o.Set("timeCycles", Napi::BigInt::New(env, t.timeCycles));
    o.Set("timeMask", Napi::BigInt::New(env, t.timeMask));
    return o;
  }
  Napi::Value Unmap(const Napi::CallbackInfo& info) {
    if (ring_) ring_->unmap();
    return info.Env().Undefined();
  }
  Napi::Value DataSize(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), ring_ ? static_cast<double>(ring_->dataSize()) : 0); }
  Napi::Value AuxSize(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), ring_ ? static_cast<double>(ring_->auxSize()) : 0); }

  std::unique_ptr<PerfRing> ring_;
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("perfEventOpen", Napi::Function::New(env, PerfEventOpen));
  exports.Set("enable", Napi::Function::New(env, Enable));
  exports.Set("disable", Napi::Function::New(env, Disable));
  exports.Set("setOutput", Napi::Function::New(env, SetOutput));
  exports.Set("setFilter", Napi::Function::New(env, SetFilter));
  exports.Set("pollAsync", Napi::Function::New(env, PollAsync));
  exports.Set("rdtsc", Napi::Function::New(env, Rdtsc));
  exports.Set("clockPair", Napi::Function::New(env, ClockPair));
  exports.Set("cpuid", Napi::Function::New(env, Cpuid));
  exports.Set("pageSize", Napi::Function::New(env, PageSize));
  exports.Set("Ring", Ring::Define(env));
  exports.Set("PERF_FLAG_FD_CLOEXEC", Napi::Number::New(env, PERF_FLAG_FD_CLOEXEC));
  return exports;
}

}  // namespace
}  // namespace jportal

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return jportal::Init(env, exports); }
NODE_API_MODULE(jportal_capture, InitAddon)
