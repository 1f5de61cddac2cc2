// State shared by the agent's JVMTI modules. One instance lives for the whole process.
#pragma once
#include <jvmti.h>

#include <string.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cost.h"
#include "options.h"
#include "ring.h"
#include "vm.h"

namespace jportal {

#define JPORTAL_VERSION "0.1.0"

// Catches anything thrown inside a JVMTI callback: nothing may unwind into the JVM.
#define CALLBACK_GUARD_BEGIN try {
#define CALLBACK_GUARD_END(name)                                                    \
  }                                                                                 \
  catch (...) {                                                                     \
    warnOnce("exception-" name, name, "internal error in the %s callback", name); \
  }

struct LiveNmethod {
  uint32_t method;
  uintptr_t blob;     // CodeBlob header (0: unknown, so the nmethod cannot be verified and is not watched)
  int compileId;      // -1 when unknown
  bool watched;       // false once the patch watcher found the memory no longer holds this nmethod
  std::vector<uint8_t> bytes;  // as last seen
  uint64_t seenTsc = 0;        // when a scan last found it alive (nmethods=scan), or when it was recorded
};

// True on the thread running GenerateEvents at VMInit: the events it receives are replays (REPLAY flag).
extern thread_local bool tReplaying;

struct Agent {
  jvmtiEnv* jvmti = nullptr;
  JavaVM* vm = nullptr;
  Options opts;
  Ring ring;
  VMStructs vms;
  VmLayout layout;
  bool layoutOk = false;
  std::atomic<bool> live{false};  // between VMInit and VMDeath
  std::atomic<bool> dead{false};

  // method ids (METHOD records), class ids (CLASS records) and loader ids
  std::mutex methodMu;
  std::unordered_map<jmethodID, uint32_t> methodIds;
  // METHOD records the ring dropped (full): sent again before the next record that refers to them
  std::unordered_map<uint32_t, std::vector<uint8_t>> unsentMethods;
  uint32_t nextMethodId = 0;
  // nmethods=scan: methods named from their Method* (id, and the ConstMethod it had: a Method* freed with its
  // class and reused is then not taken for the old method)
  std::unordered_map<uintptr_t, std::pair<uint32_t, uintptr_t>> methodPtrIds;
  std::mutex classMu;
  struct ClassKeyHash {
    size_t operator()(const std::pair<uint32_t, std::string>& k) const { return std::hash<std::string>()(k.second) ^ ((size_t)k.first * 0x9E3779B97F4A7C15ull); }
  };
  std::unordered_map<std::pair<uint32_t, std::string>, uint32_t, ClassKeyHash> classIds;  // (loader, internal name) -> class id
  std::set<std::pair<uint32_t, std::string>> reconstructing;
  // for naming Method*s: the loader ids and class ids of each class name, and the ClassLoaderData of each loader
  // id once a class name tied to one loader has shown it
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> classesByName;
  std::unordered_map<uintptr_t, uint32_t> loaderDataIds;
  std::set<uint32_t> loadersWithData;  // loader ids whose ClassLoaderData a prepared class showed
  uint32_t nextClassId = 0;
  // loader ids: JVMTI object tags; loaders met while tagging is unavailable are remembered by weak reference
  std::mutex loaderMu;
  uint32_t nextLoaderId = 1;
  std::vector<std::pair<jweak, uint32_t>> untaggedLoaders;
  // what each loader id is (LoaderKind), found once from the loader object's class
  std::unordered_map<uint32_t, uint8_t> loaderKinds;

  // compiled code: live nmethods by code begin (the patch watcher diffs these)
  std::mutex codeMu;
  std::map<uintptr_t, LiveNmethod> nmethods;
  std::set<std::string> blobsSeen;  // "addr:size:name" of CODE_BLOBs already written
  // buffers HotSpot fills after reporting them (signature handlers, inline-cache stubs): watched like nmethods,
  // their changes written as CODE_PATCH with code_begin = the blob's address
  std::map<uintptr_t, std::vector<uint8_t>> mutableBlobs;
  std::thread watcher;
  std::mutex watcherMu;
  std::condition_variable watcherWake;
  bool stopWatcher = false;
  uint64_t patchScans = 0;
  // a jmethodID's slot was found to hold its Method* (VMStructs' max_locals and code length equal JVMTI's, read
  // with system calls that check each address): from then on jmethodIDs are followed without those checks
  std::atomic<bool> methodIdsChecked{false};
  std::atomic<uint64_t> scansWithNew{0};  // nmethod scans that found an nmethod not recorded yet (stats=1)
  std::atomic<uint64_t> walkCpuNs{0};     // CPU time of the nmethod scans' walks of the code heaps (stats=1)
  std::atomic<uint64_t> watcherCpuNs{0};  // the watcher thread's CPU so far (stats=1)
  uint64_t lastScanTsc = 0;  // when the last patch scan began (under codeMu)
  bool scanNmethods = false;  // nmethods=scan in effect (VMStructs allow it): no CompiledMethodLoad events
  // nmethods=scan: the blobs the last scan found recorded, with their compile ids, in address order; only the
  // scanning thread uses it (VMInit's, then the watcher, then VMDeath's once the watcher stopped)
  std::vector<std::pair<uintptr_t, int>> scanKnown;
  // nmethods=scan: metadata pages that need no system call to check (used like scanKnown), and whether the class-data
  // sharing archive's range was looked at yet; the ClassLoaderData of the loaders that never unload (under classMu)
  PermanentPages permanentPages;
  bool sharedRangeKnown = false;
  std::set<uintptr_t> permanentLoaderData;
  std::atomic<uint64_t> pageSyscalls{0};  // page checks made by system call while naming compiled methods (stats=1)
  // nmethods=check: what the comparison found
  std::atomic<uint64_t> checkNmethods{0}, checkPcs{0}, checkFrames{0}, checkDiffer{0}, checkMethods{0}, checkNamesDiffer{0}, checkUnreadable{0};

  // threads already written (by java tid)
  std::mutex threadMu;
  std::set<uint64_t> threadsSeen;
};

extern Agent* gAgent;

// interp.cpp
void recordInterpreter(Agent& a);
// code.cpp
void JNICALL onDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length);
void JNICALL onCompiledMethodLoad(jvmtiEnv*, jmethodID, jint, const void*, jint, const jvmtiAddrLocationMap*, const void*);
void JNICALL onCompiledMethodUnload(jvmtiEnv*, jmethodID, const void*);
void startPatchWatcher(Agent& a);
void stopPatchWatcher(Agent& a);
void scanPatches(Agent& a);
void recordSnapshots(Agent& a);
// classes.cpp
void JNICALL onClassFileLoadHook(jvmtiEnv*, JNIEnv*, jclass, jobject, const char*, jobject, jint, const unsigned char*, jint*, unsigned char**);
uint32_t loaderId(Agent& a, JNIEnv* jni, jobject loader);
// Names the classes loaded before ClassFileLoadHook was on: with classes=hook the boot classes of the primordial
// phase (runtime-image classes); with classes=path every class loaded so far (see nameClass in classes.cpp).
void recordImageClasses(Agent& a, JNIEnv* jni);
// Id of a method, writing its METHOD record first if it is new (and reconstructing its class if unseen).
uint32_t methodId(Agent& a, jmethodID m);
constexpr uint32_t kNoMethod = 0xFFFFFFFF;
// The same for a Method* read from an nmethod (nmethods=scan), named through VMStructs; kNoMethod if it cannot be
// read.
uint32_t methodIdOfPtr(Agent& a, uintptr_t method, PageCheck& pages);
// code.cpp (nmethods=scan): records the nmethods in the code heaps not recorded yet
void scanNmethods(Agent& a);
// threads.cpp
void JNICALL onClassPrepare(jvmtiEnv*, JNIEnv*, jthread, jclass);
void JNICALL onThreadStart(jvmtiEnv*, JNIEnv*, jthread);
void JNICALL onThreadEnd(jvmtiEnv*, JNIEnv*, jthread);
void recordExistingThreads(Agent& a, JNIEnv* jni);

// runs.cpp
// METHOD_RUNS records: which methods of the recorded classes the VM says ran (at VM death, before VM_END).
void recordMethodRuns(Agent& a, JNIEnv* jni);

// A JNI local reference deleted at scope end.
struct LocalRef {
  JNIEnv* env;
  jobject obj;
  ~LocalRef() {
    if (env && obj) env->DeleteLocalRef(obj);
  }
};

// "Ljava/lang/String;" -> "java/lang/String"; array signatures stay as they are
inline std::string internalName(const char* sig) {
  if (!sig) return "";
  size_t n = strlen(sig);
  if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') return std::string(sig + 1, n - 2);
  return sig;
}

// RAII for memory JVMTI hands out.
template <class T>
struct JvmtiPtr {
  jvmtiEnv* env;
  T* p = nullptr;
  explicit JvmtiPtr(jvmtiEnv* e) : env(e) {}
  ~JvmtiPtr() {
    if (p) env->Deallocate((unsigned char*)p);
  }
  JvmtiPtr(const JvmtiPtr&) = delete;
  JvmtiPtr& operator=(const JvmtiPtr&) = delete;
};

}  // namespace jportal
