// METHOD_RUNS: at VM death, which methods of the recorded classes the VM itself says ran (docs/trace-format.md).
//
// PT shows which opcodes the interpreter ran, not which method they belong to: methods with the same bytecode
// (getters, plug-ins, generated parsers) look the same in the trace. The VM keeps what tells them apart: with a
// compiler (UseCompiler) the interpreter counts every entry of a method, in its MethodCounters or, once it has one,
// its MethodData; and it rewrites some bytecodes in place the first time it runs them. A method with no counted
// entry never ran interpreted; the decoder then names its twins instead.
#include <jvmti.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "agent.h"
#include "common.h"
#include "records.h"

namespace jportal {

namespace {
constexpr uint8_t kRanCounters = 1, kRanMethodData = 2, kRanCode = 4;
constexpr size_t kRecordLimit = 256 * 1024;  // a record is written once its payload would pass this

struct MethodRun {
  std::string name, signature;
  uint8_t state;
  uint32_t invocations;
  // as they are at VM death: the ConstMethod's own bytes (the class is held by a local reference until written)
  const uint8_t* bytecodes;
  size_t length;
};

// Collects classes into METHOD_RUNS records of at most kRecordLimit bytes each.
class RunsWriter {
 public:
  explicit RunsWriter(Agent& a) : a_(a) { begin(); }
  ~RunsWriter() { flush(); }
  RunsWriter(const RunsWriter&) = delete;
  RunsWriter& operator=(const RunsWriter&) = delete;

  // One class: its id and the methods that ran (every other method of it did not).
  void add(uint32_t classId, const std::vector<MethodRun>& ran) {
    if (p_.size() >= kRecordLimit) {
      flush();
      begin();
    }
    p_.u32(classId);
    size_t at = p_.beginArray();
    for (const MethodRun& m : ran) {
      p_.str(m.name);
      p_.str(m.signature);
      p_.u8(m.state);
      p_.u32(m.invocations);
      p_.bytes(m.bytecodes, m.length);
    }
    p_.endArray(at, (uint32_t)ran.size());
    classes_++;
  }

 private:
  void begin() {
    p_ = Payload();
    classesAt_ = p_.beginArray();
    classes_ = 0;
  }
  void flush() {
    if (!classes_) return;
    p_.endArray(classesAt_, classes_);
    a_.ring.commit(METHOD_RUNS, 0, p_);
    classes_ = 0;
  }
  Agent& a_;
  Payload p_;
  size_t classesAt_ = 0;
  uint32_t classes_ = 0;
};

// What the VM kept of a method's runs, as METHOD_RUNS states it (0: never ran); false when unreadable.
bool runState(Agent& a, uintptr_t m, uint8_t* state, uint32_t* invocations) {
  VmLayout::MethodRunFacts f;
  if (!a.layout.methodRun(m, &f)) return false;
  *state = (f.counters ? kRanCounters : 0) | (f.methodData ? kRanMethodData : 0) | (f.code ? kRanCode : 0);
  *invocations = f.invocations;
  return true;
}

void addRan(Agent& a, uintptr_t m, const char* name, const char* sig, uint8_t state, uint32_t invocations, std::vector<MethodRun>* ran) {
  size_t len = 0;
  const uint8_t* now = a.layout.currentBytecodes(m, &len);
  ran->push_back({name, sig, state, invocations, now, now ? len : 0});
}

// The methods of a class that ran, through JVMTI (GetClassMethods: a jmethodID for every method). `checked`:
// whether a jmethodID was already found to lead to its Method*; a mismatch sets `broken`.
bool methodsThatRanJvmti(Agent& a, jclass cls, std::vector<MethodRun>* ran, bool* checked, bool* broken) {
  jvmtiEnv* j = a.jvmti;
  jint n = 0;
  JvmtiPtr<jmethodID> ms(j);
  if (j->GetClassMethods(cls, &n, &ms.p) != JVMTI_ERROR_NONE) return false;
  ran->clear();
  for (jint k = 0; k < n; k++) {
    // a HotSpot jmethodID points at a slot holding the Method*; checked once against JVMTI's max_locals (no
    // check per method: readable() is a system call, and tens of thousands of them cost 0.1 s at VM death)
    uintptr_t m = *checked || readable(ms.p[k], sizeof(uintptr_t)) ? *(const uintptr_t*)ms.p[k] : 0;
    if (!*checked) {
      // the layout, once: max_locals as JVMTI says, and the bytecodes' length (JVMTI hands out a copy with the
      // interpreter's rewrites undone: the length is what can be compared)
      jint locals = -1, codeLen = 0;
      JvmtiPtr<unsigned char> code(j);
      if (j->GetMaxLocals(ms.p[k], &locals) == JVMTI_ERROR_NONE && j->GetBytecodes(ms.p[k], &codeLen, &code.p) == JVMTI_ERROR_NONE &&
          codeLen > 0) {  // native and abstract methods have neither
        size_t len = 0;
        const uint8_t* now = a.layout.currentBytecodes(m, &len);
        if (a.layout.maxLocals(m) != locals || !now || len != (size_t)codeLen || !readable(now, len)) {
          *broken = true;
          return false;
        }
        *checked = true;
      }
    }
    uint8_t state = 0;
    uint32_t invocations = 0;
    if (!runState(a, m, &state, &invocations)) return false;
    if (!state) continue;  // never ran: left out of the list
    JvmtiPtr<char> name(j), sig(j);
    if (j->GetMethodName(ms.p[k], &name.p, &sig.p, nullptr) != JVMTI_ERROR_NONE || !name.p || !sig.p) return false;
    addRan(a, m, name.p, sig.p, state, invocations, ran);
  }
  return true;
}

// The same through VMStructs (the class's InstanceKlass::_methods, names from its constant pool): no jmethodIDs.
// `pages` checks every read until the first class with methods has been compared with what JVMTI lists for it
// (every jmethodID's Method* among ours, and as many as ours but for the VM's overpass methods, which JVMTI
// leaves out); from then on it trusts the VM's pointers. False when this class cannot be read this way.
class VmStructsRuns {
 public:
  explicit VmStructsRuns(Agent& a) : a_(a), usable_(a.layout.classMethodsKnown()) {}
  bool methodsThatRan(jclass cls, std::vector<MethodRun>* ran) {
    ran->clear();
    if (!usable_ || !a_.layout.classMethods(cls, pages_, &methods_)) return false;
    if (!verified_ && !methods_.empty() && !(verified_ = agreesWithJvmti(cls))) {
      usable_ = false;
      warnOnce("runs-vmstructs", "runs", "a class's methods read through VMStructs differ from JVMTI's: METHOD_RUNS lists methods through JVMTI");
      return false;
    }
    if (verified_) pages_.trust();
    // (only once the reads are trusted: a prefetch never faults, but the second pass reads what the first loaded)
    if (verified_) a_.layout.prefetchMethodRuns(methods_);
    for (uintptr_t m : methods_) {
      uint8_t state = 0;
      uint32_t invocations = 0;
      if (!runState(a_, m, &state, &invocations)) return false;
      if (!state) continue;  // never ran: left out of the list
      if (!a_.layout.methodNameAndSignature(m, pages_, &name_, &sig_)) return false;
      addRan(a_, m, name_.c_str(), sig_.c_str(), state, invocations, ran);
    }
    return true;
  }

 private:
  bool agreesWithJvmti(jclass cls) {
    jint n = 0;
    JvmtiPtr<jmethodID> ms(a_.jvmti);
    if (a_.jvmti->GetClassMethods(cls, &n, &ms.p) != JVMTI_ERROR_NONE || n <= 0 || (size_t)n > methods_.size()) return false;
    for (jint k = 0; k < n; k++) {
      if (!readable(ms.p[k], sizeof(uintptr_t))) return false;
      uintptr_t m = *(const uintptr_t*)ms.p[k];
      bool found = false;
      for (uintptr_t x : methods_) found = found || x == m;
      if (!found) return false;
    }
    return true;
  }
  Agent& a_;
  bool usable_, verified_ = false;
  PageCheck pages_;
  std::vector<uintptr_t> methods_;
  std::string name_, sig_;
};
}  // namespace

void recordMethodRuns(Agent& a, JNIEnv* jni) {
  if (!a.opts.runs || !a.opts.classes || !jni) return;
  if (!a.layoutOk || !a.layout.methodRunsKnown()) {
    warnOnce("runs-layout", "runs", "Method/MethodCounters fields missing: no METHOD_RUNS (methods with the same bytecode are told apart without the VM's counters)");
    return;
  }
  // without a compiler the interpreter counts nothing (-Xint): no counters would then be no evidence
  if (a.layout.flag("UseCompiler") != "true") {
    log(LogLevel::Info, "runs", "UseCompiler is off: the interpreter keeps no counters, no METHOD_RUNS written");
    return;
  }
  jvmtiEnv* j = a.jvmti;
  jint n = 0;
  JvmtiPtr<jclass> all(j);
  if (j->GetLoadedClasses(&n, &all.p) != JVMTI_ERROR_NONE) {
    warnOnce("runs-classes", "runs", "GetLoadedClasses failed at VM death: no METHOD_RUNS");
    return;
  }
  const uint64_t wall0 = monotonicNs(), cpu0 = threadCpuNs();
  RunsWriter w(a);
  std::vector<MethodRun> ran;
  bool checked = false, broken = false;
  size_t listed = 0, methods = 0, throughJvmti = 0;
  VmStructsRuns vmstructs(a);
  for (jint i = 0; i < n; i++) {
    LocalRef cls{jni, all.p[i]};
    jint status = 0;
    // a class not yet linked has run nothing, but its methods cannot be listed: left out (no evidence)
    if (j->GetClassStatus(all.p[i], &status) != JVMTI_ERROR_NONE || !(status & JVMTI_CLASS_STATUS_PREPARED) ||
        (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)))
      continue;
    JvmtiPtr<char> sig(j);
    if (j->GetClassSignature(all.p[i], &sig.p, nullptr) != JVMTI_ERROR_NONE || !sig.p || sig.p[0] != 'L') continue;
    std::string name = internalName(sig.p);
    jobject loader = nullptr;
    if (j->GetClassLoader(all.p[i], &loader) != JVMTI_ERROR_NONE) continue;
    LocalRef loaderRef{jni, loader};
    uint32_t lid = loaderId(a, jni, loader);
    uint32_t classId;
    {
      std::lock_guard<std::mutex> lk(a.classMu);
      auto it = a.classIds.find({lid, name});
      if (it == a.classIds.end()) continue;  // not recorded: nothing to tell apart
      classId = it->second;
    }
    bool read = vmstructs.methodsThatRan(all.p[i], &ran);
    if (!read) {
      throughJvmti++;
      read = methodsThatRanJvmti(a, all.p[i], &ran, &checked, &broken);
    }
    if (read) {
      w.add(classId, ran);
      listed++;
      methods += ran.size();
    }
    if (broken) {
      warnOnce("runs-method", "runs", "a jmethodID does not lead to its Method* (max_locals or code length differ): METHOD_RUNS stops");
      return;
    }
  }
  if (debugEnabled())
    log(LogLevel::Info, "runs", "METHOD_RUNS: %zu of %d loaded classes (%zu through JVMTI), %zu methods that ran, in %.1f ms (%.1f ms CPU)", listed, (int)n, throughJvmti,
        methods, (monotonicNs() - wall0) / 1e6, (threadCpuNs() - cpu0) / 1e6);
}

}  // namespace jportal
