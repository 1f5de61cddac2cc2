// Ground-truth mode (oracle=1): the exact per-thread bytecode sequence through JVMTI, for measuring decoders.
//
// SingleStep gives every bytecode a thread executes (it forces the thread into the interpreter), MethodEntry/
// MethodExit the calls and returns, Exception/ExceptionCatch the throws and the handlers. Each thread appends
// fixed 8-byte records to its own buffer and file; methods get small ids and one line each in methods.jsonl.
// Format: docs/oracle-format.md. Nothing here runs with the metadata recorder: it is a separate, slow run.
#include "oracle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent.h"
#include "common.h"

namespace jportal {
namespace {

constexpr uint32_t kOracleVersion = 1;
constexpr size_t kFlushBytes = 256 << 10;

enum OracleKind : uint8_t { kBytecode = 0, kEntry = 1, kExit = 2, kExitByException = 3, kThrow = 4, kCatch = 5 };

#pragma pack(push, 1)
struct OracleRecord {
  uint8_t kind;
  uint8_t opcode;  // kBytecode: the Java opcode at bci; else 0
  uint16_t bci;    // 0xFFFF when not applicable
  uint32_t method;
};
#pragma pack(pop)
static_assert(sizeof(OracleRecord) == 8, "oracle records are 8 bytes");

// Writes everything or reports the errno; retries short writes and EINTR.
bool writeAll(int fd, const void* p, size_t n) {
  const uint8_t* b = (const uint8_t*)p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    b += w;
    n -= (size_t)w;
  }
  return true;
}

std::string jsonString(const char* s) {
  std::string out = "\"";
  for (const unsigned char* c = (const unsigned char*)(s ? s : ""); *c; c++) {
    if (*c == '"' || *c == '\\') out += '\\', out += (char)*c;
    else if (*c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", *c);
      out += buf;
    } else out += (char)*c;
  }
  return out + "\"";
}

// One Java thread's record stream. Only its own thread appends; VMDeath flushes under the same lock.
struct ThreadLog {
  std::mutex mu;
  int fd = -1;
  pid_t tid = 0;
  std::string name;
  std::string file;  // relative to the oracle directory
  uint64_t records = 0;
  bool failed = false;
  bool closed = false;
  bool ended = false;  // the first Java thread on this OS thread has ended
  std::vector<OracleRecord> buf;

  void flushLocked() {
    if (fd < 0 || buf.empty()) return;
    if (!failed && !writeAll(fd, buf.data(), buf.size() * sizeof(OracleRecord))) {
      failed = true;
      warnOnce("oracle-write", "oracle", "cannot write %s: %s; this thread's ground truth stops here", file.c_str(), strerror(errno));
    }
    buf.clear();
  }
};

// A method as the oracle knows it: its id and its (unrewritten) bytecodes.
struct MethodEntry {
  uint32_t id;
  std::vector<uint8_t> code;
};

struct Oracle {
  jvmtiEnv* jvmti = nullptr;
  std::string dir;
  std::atomic<bool> dead{false};
  std::mutex mu;  // threads, methods, methodsFd
  std::vector<std::unique_ptr<ThreadLog>> threads;
  std::unordered_map<jmethodID, std::unique_ptr<MethodEntry>> methods;
  uint32_t nextMethod = 0;
  int methodsFd = -1;
  std::string javaVersion;
};

Oracle* gOracle = nullptr;
thread_local ThreadLog* tLog = nullptr;
thread_local std::unordered_map<jmethodID, const MethodEntry*>* tMethods = nullptr;

std::string threadName(jvmtiEnv* j, jthread thread) {
  jvmtiThreadInfo info{};
  if (!thread || j->GetThreadInfo(thread, &info) != JVMTI_ERROR_NONE) return "";
  std::string s = info.name ? info.name : "";
  if (info.name) j->Deallocate((unsigned char*)info.name);
  return s;
}

ThreadLog* threadLog(Oracle& o, jthread thread) {
  if (tLog) return tLog;
  auto owned = std::make_unique<ThreadLog>();
  ThreadLog* t = owned.get();
  t->tid = (pid_t)syscall(SYS_gettid);
  t->name = threadName(o.jvmti, thread);
  {
    // numbered in order of first event: an OS tid can come back after its thread ended
    std::lock_guard<std::mutex> lk(o.mu);
    t->file = "threads/" + std::to_string(o.threads.size()) + "-" + std::to_string(t->tid) + ".jpo";
    o.threads.push_back(std::move(owned));
  }
  std::string path = o.dir + "/" + t->file;
  std::lock_guard<std::mutex> lk(t->mu);
  t->fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  uint8_t header[16] = {'J', 'P', 'O', 'R', 'A', 'C', 'L', 'E'};
  uint32_t v = kOracleVersion, size = sizeof(OracleRecord);
  memcpy(header + 8, &v, 4);
  memcpy(header + 12, &size, 4);
  if (t->fd < 0 || !writeAll(t->fd, header, sizeof header)) {
    t->failed = true;
    warnOnce("oracle-open", "oracle", "cannot write %s: %s; that thread has no ground truth", path.c_str(), strerror(errno));
  }
  t->buf.reserve(kFlushBytes / sizeof(OracleRecord));
  return tLog = t;
}

// The method's entry, created (and written to methods.jsonl) on first sight. JVMTI is called outside the lock.
const MethodEntry* method(Oracle& o, jmethodID m) {
  if (!tMethods) tMethods = new std::unordered_map<jmethodID, const MethodEntry*>();  // per thread, lives on
  auto hit = tMethods->find(m);
  if (hit != tMethods->end()) return hit->second;
  {
    std::lock_guard<std::mutex> lk(o.mu);
    auto it = o.methods.find(m);
    if (it != o.methods.end()) return (*tMethods)[m] = it->second.get();
  }
  jvmtiEnv* j = o.jvmti;
  JvmtiPtr<char> name(j), sig(j), csig(j);
  JvmtiPtr<unsigned char> code(j);
  j->GetMethodName(m, &name.p, &sig.p, nullptr);
  jclass cls = nullptr;
  if (j->GetMethodDeclaringClass(m, &cls) == JVMTI_ERROR_NONE && cls) j->GetClassSignature(cls, &csig.p, nullptr);
  jint len = 0;
  if (j->GetBytecodes(m, &len, &code.p) != JVMTI_ERROR_NONE) len = 0;
  std::string className = csig.p ? csig.p : "";
  if (className.size() >= 2 && className[0] == 'L' && className.back() == ';') className = className.substr(1, className.size() - 2);
  std::lock_guard<std::mutex> lk(o.mu);
  auto it = o.methods.find(m);
  if (it == o.methods.end()) {
    auto e = std::make_unique<MethodEntry>();
    e->id = o.nextMethod++;
    if (len > 0 && code.p) e->code.assign(code.p, code.p + len);
    std::string line = "{\"id\":" + std::to_string(e->id) + ",\"class\":" + jsonString(className.c_str()) + ",\"name\":" + jsonString(name.p) +
                       ",\"sig\":" + jsonString(sig.p) + ",\"code_length\":" + std::to_string(len) + "}\n";
    if (o.methodsFd >= 0 && !writeAll(o.methodsFd, line.data(), line.size())) warnOnce("oracle-methods", "oracle", "cannot write methods.jsonl: %s", strerror(errno));
    it = o.methods.emplace(m, std::move(e)).first;
  }
  return (*tMethods)[m] = it->second.get();
}

void append(jthread thread, OracleKind kind, jmethodID m, jlocation loc) {
  Oracle& o = *gOracle;
  if (o.dead.load(std::memory_order_relaxed)) return;
  ThreadLog* t = threadLog(o, thread);
  const MethodEntry* e = method(o, m);
  OracleRecord r;
  r.kind = kind;
  r.opcode = 0;
  r.bci = 0xFFFF;
  r.method = e->id;
  if (loc >= 0 && loc < 0xFFFF) {
    r.bci = (uint16_t)loc;
    if (kind == kBytecode && (size_t)loc < e->code.size()) r.opcode = e->code[(size_t)loc];
  }
  std::lock_guard<std::mutex> lk(t->mu);
  if (t->closed || t->failed) return;
  t->buf.push_back(r);
  t->records++;
  if (t->buf.size() * sizeof(OracleRecord) >= kFlushBytes) t->flushLocked();
}

void JNICALL onSingleStep(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID m, jlocation loc) {
  CALLBACK_GUARD_BEGIN
  append(thread, kBytecode, m, loc);
  CALLBACK_GUARD_END("SingleStep")
}

void JNICALL onMethodEntry(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID m) {
  CALLBACK_GUARD_BEGIN
  append(thread, kEntry, m, -1);
  CALLBACK_GUARD_END("MethodEntry")
}

void JNICALL onMethodExit(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID m, jboolean byException, jvalue) {
  CALLBACK_GUARD_BEGIN
  append(thread, byException ? kExitByException : kExit, m, -1);
  CALLBACK_GUARD_END("MethodExit")
}

void JNICALL onException(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID m, jlocation loc, jobject, jmethodID, jlocation) {
  CALLBACK_GUARD_BEGIN
  append(thread, kThrow, m, loc);
  CALLBACK_GUARD_END("Exception")
}

void JNICALL onExceptionCatch(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID m, jlocation loc, jobject) {
  CALLBACK_GUARD_BEGIN
  append(thread, kCatch, m, loc);
  CALLBACK_GUARD_END("ExceptionCatch")
}

void JNICALL onOracleThreadEnd(jvmtiEnv* j, JNIEnv*, jthread thread) {
  CALLBACK_GUARD_BEGIN
  if (!tLog) return;
  // a thread may have been renamed after its first event; an OS thread can carry a second Java thread later
  // (main, then DestroyJavaVM): like the decoder, the first Java thread names the OS thread
  std::string name = threadName(j, thread);
  std::lock_guard<std::mutex> lk(tLog->mu);
  if (!tLog->ended && !name.empty()) tLog->name = name;
  tLog->ended = true;
  tLog->flushLocked();
  CALLBACK_GUARD_END("ThreadEnd")
}

// Keeps the ClassFileLoadHook enabled as the recording agent does with the same `classes` option (none by
// default, from the start phase on with classes=hook, the early hook with classes=early), so that class-data sharing
// is on or off, and class loading takes the same paths,
// exactly as in the run it is compared with: the bytecodes a program runs at start-up depend on it.
void JNICALL onClassFileLoad(jvmtiEnv*, JNIEnv*, jclass, jobject, const char*, jobject, jint, const unsigned char*, jint*, unsigned char**) {}

void JNICALL onVMInit(jvmtiEnv* j, JNIEnv*, jthread) {
  CALLBACK_GUARD_BEGIN
  jvmtiEvent events[] = {JVMTI_EVENT_SINGLE_STEP, JVMTI_EVENT_METHOD_ENTRY, JVMTI_EVENT_METHOD_EXIT, JVMTI_EVENT_EXCEPTION,
                         JVMTI_EVENT_EXCEPTION_CATCH, JVMTI_EVENT_THREAD_END};
  for (jvmtiEvent e : events)
    if (j->SetEventNotificationMode(JVMTI_ENABLE, e, nullptr) != JVMTI_ERROR_NONE)
      warnOnce("oracle-event", "oracle", "cannot enable JVMTI event %d: the ground truth is incomplete", (int)e);
  char* v = nullptr;
  if (j->GetSystemProperty("java.vm.version", &v) == JVMTI_ERROR_NONE && v) {
    gOracle->javaVersion = v;
    j->Deallocate((unsigned char*)v);
  }
  CALLBACK_GUARD_END("VMInit")
}

void writeSummary(Oracle& o) {
  std::string s = "{\"format\":\"jportal-oracle\",\"version\":" + std::to_string(kOracleVersion) + ",\"vm_version\":" + jsonString(o.javaVersion.c_str()) +
                  ",\"pid\":" + std::to_string(getpid()) + ",\"methods\":" + std::to_string(o.nextMethod) + ",\"threads\":[";
  for (size_t i = 0; i < o.threads.size(); i++) {
    ThreadLog& t = *o.threads[i];
    s += (i ? "," : "") + std::string("{\"tid\":") + std::to_string(t.tid) + ",\"name\":" + jsonString(t.name.c_str()) + ",\"file\":" + jsonString(t.file.c_str()) +
         ",\"records\":" + std::to_string(t.records) + ",\"complete\":" + (t.failed ? "false" : "true") + "}";
  }
  s += "],\"complete\":true}\n";
  std::string tmp = o.dir + "/oracle.json.tmp", path = o.dir + "/oracle.json";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || !writeAll(fd, s.data(), s.size()) || close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0)
    log(LogLevel::Error, "oracle", "cannot write %s: %s", path.c_str(), strerror(errno));
}

void JNICALL onVMDeath(jvmtiEnv* j, JNIEnv*) {
  CALLBACK_GUARD_BEGIN
  Oracle& o = *gOracle;
  if (o.dead.exchange(true)) return;
  jvmtiEvent events[] = {JVMTI_EVENT_SINGLE_STEP, JVMTI_EVENT_METHOD_ENTRY, JVMTI_EVENT_METHOD_EXIT, JVMTI_EVENT_EXCEPTION, JVMTI_EVENT_EXCEPTION_CATCH};
  for (jvmtiEvent e : events) j->SetEventNotificationMode(JVMTI_DISABLE, e, nullptr);
  std::lock_guard<std::mutex> lk(o.mu);
  uint64_t total = 0;
  for (auto& t : o.threads) {
    std::lock_guard<std::mutex> tl(t->mu);
    t->flushLocked();
    t->closed = true;
    total += t->records;
    if (t->fd >= 0) close(t->fd), t->fd = -1;
  }
  if (o.methodsFd >= 0) close(o.methodsFd), o.methodsFd = -1;
  writeSummary(o);
  log(LogLevel::Info, "oracle", "ground truth: %llu records in %zu threads, %u methods -> %s", (unsigned long long)total, o.threads.size(), o.nextMethod,
      o.dir.c_str());
  CALLBACK_GUARD_END("VMDeath")
}

bool makeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return true;
  return false;
}

}  // namespace

jint startOracle(JavaVM*, jvmtiEnv* j, const Options& opts) {
  std::string dir = opts.out;
  if (!makeDir(dir) || !makeDir(dir + "/threads")) {
    log(LogLevel::Error, "oracle", "cannot create %s: %s; the agent is disabled, the JVM runs on", dir.c_str(), strerror(errno));
    return JNI_OK;
  }
  Oracle* o = new Oracle();  // lives until the process exits: callbacks may run late
  o->jvmti = j;
  o->dir = dir;
  std::string methods = dir + "/methods.jsonl";
  o->methodsFd = open(methods.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (o->methodsFd < 0) {
    log(LogLevel::Error, "oracle", "cannot create %s: %s; the agent is disabled, the JVM runs on", methods.c_str(), strerror(errno));
    delete o;
    return JNI_OK;
  }
  gOracle = o;

  jvmtiCapabilities potential{}, caps{};
  j->GetPotentialCapabilities(&potential);
  caps.can_generate_single_step_events = 1;
  caps.can_generate_method_entry_events = 1;
  caps.can_generate_method_exit_events = 1;
  caps.can_generate_exception_events = 1;
  caps.can_get_bytecodes = 1;
  // HotSpot fuses frequent pairs (aload_0 + getfield -> fast_iaccess_0, iload + iload -> fast_iload2, ...) into
  // one template: single-stepping would see one location for two bytecodes. Holding the breakpoint capability
  // turns RewriteFrequentPairs off, so every bytecode gets its own event.
  caps.can_generate_breakpoint_events = potential.can_generate_breakpoint_events;
  if (!caps.can_generate_breakpoint_events) warnOnce("oracle-pairs", "oracle", "no breakpoint capability: fused bytecode pairs show as one event");
  if (opts.classesHook) {
    caps.can_generate_all_class_hook_events = potential.can_generate_all_class_hook_events;
    if (opts.classesEarly) caps.can_generate_early_class_hook_events = potential.can_generate_early_class_hook_events;
  }
  if (j->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
    log(LogLevel::Error, "oracle", "this JVM cannot single-step through JVMTI; the agent is disabled, the JVM runs on");
    gOracle = nullptr;
    return JNI_OK;
  }
  jvmtiEventCallbacks cb{};
  cb.VMInit = onVMInit;
  cb.VMDeath = onVMDeath;
  cb.SingleStep = onSingleStep;
  cb.MethodEntry = onMethodEntry;
  cb.MethodExit = onMethodExit;
  cb.Exception = onException;
  cb.ExceptionCatch = onExceptionCatch;
  cb.ThreadEnd = onOracleThreadEnd;
  cb.ClassFileLoadHook = onClassFileLoad;
  j->SetEventCallbacks(&cb, sizeof cb);
  j->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, nullptr);
  j->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, nullptr);
  if (opts.classesHook) j->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, nullptr);
  return JNI_OK;
}

}  // namespace jportal
