// libjportal.so: the JVMTI agent's entry points and lifecycle.
#include "agent.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oracle.h"
#include "records.h"

namespace jportal {

Agent* gAgent = nullptr;
thread_local bool tReplaying = false;

namespace {

void logSink(LogLevel level, const char* component, const char* message) {
  if (!gAgent || !gAgent->ring.running()) return;
  Payload p;
  p.u8((uint8_t)level);
  p.str(component);
  p.str(message);
  gAgent->ring.commit(AGENT_LOG, 0, p);
}

// Records that end the file get a longer wait for ring space than wait_ms (time for a collector, or the
// agent taking over from a dead one, to drain), so that a full ring at exit still ends with VM_END.
constexpr uint32_t kFinalWaitMs = 5000;

void recordCalibration(Agent& a, uint32_t minWaitMs = 0) {
  Payload p;
  p.u64(monotonicNs());
  p.u64(realtimeNs());
  a.ring.commit(CALIBRATION, 0, p, minWaitMs);
}

std::string property(jvmtiEnv* j, const char* name) {
  char* v = nullptr;
  if (j->GetSystemProperty(name, &v) != JVMTI_ERROR_NONE || !v) return "";
  std::string s(v);
  j->Deallocate((unsigned char*)v);
  return s;
}

// java.version is not a VM property. Asking java.lang.System would run Java code on the thread of the VMInit
// callback (JNI FindClass from native code goes through the system class loader: ClassLoader.loadClass, then
// System.getProperty), which the traced program does not do on its own: the JDK's `release` file names it, and
// failing that java.vm.version up to its build number ("17.0.15+6-Debian-1deb12u1" -> "17.0.15") does.
std::string javaVersion(jvmtiEnv* j) {
  std::string home = property(j, "java.home");
  if (!home.empty()) {
    if (FILE* f = fopen((home + "/release").c_str(), "r")) {
      char line[512];
      std::string out;
      while (fgets(line, sizeof line, f)) {
        const char* key = "JAVA_VERSION=\"";
        if (strncmp(line, key, strlen(key)) != 0) continue;
        const char* v = line + strlen(key);
        const char* end = strchr(v, '"');
        if (end) out.assign(v, end);
        break;
      }
      fclose(f);
      if (!out.empty()) return out;
    }
  }
  std::string vm = property(j, "java.vm.version");
  return vm.substr(0, vm.find('+'));
}

void recordVmInfo(Agent& a) {
  Payload p;
  p.u32((uint32_t)getpid());
  std::string version = property(a.jvmti, "java.version");  // usually not a VM property: see javaVersion
  p.str(version.empty() ? javaVersion(a.jvmti) : version);
  p.str(property(a.jvmti, "java.vm.version"));
  p.str(property(a.jvmti, "java.vm.vendor"));
  p.str(property(a.jvmti, "java.vm.name"));
  p.str(property(a.jvmti, "java.home"));
  p.str(JPORTAL_VERSION);
  uintptr_t low = 0, high = 0;
  if (a.layoutOk) a.layout.codeBounds(&low, &high);
  p.u64(low);
  p.u64(high);
  static const char* kFlags[] = {"CodeEntryAlignment", "OptoLoopAlignment", "InteriorEntryAlignment", "UseCompressedOops",
                                 "UseCompressedClassPointers", "SegmentedCodeCache", "TieredCompilation", "TieredStopAtLevel",
                                 "ReservedCodeCacheSize", "UseAVX", "UseCodeCacheFlushing", "UseSerialGC", "UseG1GC",
                                 "UseParallelGC", "UseZGC", "UseShenandoahGC", "UseCountedLoopSafepoints", "BackgroundCompilation",
                                 "UseSharedSpaces", "UseCompiler", "DebugNonSafepoints"};
  size_t at = p.beginArray();
  uint32_t n = 0;
  for (const char* f : kFlags) {
    std::string v = a.vms.ok() ? a.layout.flag(f) : "";
    if (v.empty()) continue;
    p.str(f);
    p.str(v);
    n++;
  }
  if (a.opts.classes && !a.opts.classesEarly) {
    // the boot classes loaded before ClassFileLoadHook was on are read from this file at analysis (CLASS
    // source 3): its size and modification time tell the reader whether it is still the file the JVM ran on
    std::string image = property(a.jvmti, "java.home") + "/lib/modules";
    struct stat st{};
    if (stat(image.c_str(), &st) == 0) {
      p.str("jportal.runtime_image");
      p.str(image);
      p.str("jportal.runtime_image_size");
      p.str(std::to_string((unsigned long long)st.st_size));
      p.str("jportal.runtime_image_mtime");
      p.str(std::to_string((long long)st.st_mtime));
      n += 3;
    } else {
      warnOnce("runtime-image", "classes", "no runtime image at %s: start-up classes will have no bytes", image.c_str());
    }
  }
  if (a.opts.classes && !a.opts.classesHook) {
    // classes=path: the app loader's classes are read from this class path at analysis (CLASS source 4); relative
    // entries are relative to the JVM's working directory; each entry's size and modification time ("size:mtime",
    // empty when the entry is missing, joined by '\n') tell the reader whether it is still what the JVM ran on
    std::string cp = property(a.jvmti, "java.class.path");
    char cwd[4096];
    std::string dir = getcwd(cwd, sizeof cwd) ? cwd : "";
    std::string stamps;
    size_t from = 0;
    for (bool first = true; from <= cp.size(); first = false) {
      size_t colon = cp.find(':', from);
      std::string entry = cp.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
      from = colon == std::string::npos ? cp.size() + 1 : colon + 1;
      std::string full = entry.empty() || entry[0] == '/' ? entry : dir + "/" + entry;
      struct stat st{};
      if (!first) stamps += "\n";
      if (!entry.empty() && stat(full.c_str(), &st) == 0)
        stamps += std::to_string((unsigned long long)st.st_size) + ":" + std::to_string((long long)st.st_mtime);
    }
    p.str("jportal.class_path");
    p.str(cp);
    p.str("jportal.class_path_stamps");
    p.str(stamps);
    p.str("jportal.working_dir");
    p.str(dir);
    n += 3;
  }
  p.endArray(at, n);
  std::vector<CodeHeapRange> heaps = a.layoutOk ? a.layout.codeHeaps() : std::vector<CodeHeapRange>();
  at = p.beginArray();
  for (const CodeHeapRange& h : heaps) {
    p.u64(h.low);
    p.u64(h.high);
    p.u64(h.committedHigh);
    p.str(a.layout.heapName(h));
  }
  p.endArray(at, (uint32_t)heaps.size());
  a.ring.commit(VM_INFO, 0, p);
}

void JNICALL onVMInit(jvmtiEnv* jvmti, JNIEnv* jni, jthread) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::VmInit);
  Agent& a = *gAgent;
  a.live = true;
  recordVmInfo(a);
  a.ring.commit(VM_START, 0, Payload());
  // before the replay below: compiled methods of start-up classes must find them named
  if (a.opts.classes && !a.opts.classesEarly) recordImageClasses(a, jni);
  if (a.layoutOk) recordInterpreter(a);
  recordExistingThreads(a, jni);
  // what happened before we could see it (code blobs are also reported from Agent_OnLoad on); the replayed
  // events arrive on this thread, inside GenerateEvents
  tReplaying = true;
  if (jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED) != JVMTI_ERROR_NONE)
    warnOnce("replay-dcg", "blobs", "GenerateEvents(DynamicCodeGenerated) failed");
  if (a.scanNmethods) scanNmethods(a);
  else if (jvmti->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD) != JVMTI_ERROR_NONE)
    warnOnce("replay-cml", "nmethods", "GenerateEvents(CompiledMethodLoad) failed");
  tReplaying = false;
  startPatchWatcher(a);
  CALLBACK_GUARD_END("VMInit")
}

void JNICALL onVMDeath(jvmtiEnv*, JNIEnv* jni) {
  CALLBACK_GUARD_BEGIN
  Agent& a = *gAgent;
  if (a.dead.exchange(true)) return;
  stopPatchWatcher(a);
  {
    CostScope cost(Cost::DeathScans);
    if (a.opts.patchIntervalMs != 0 || a.scanNmethods) scanPatches(a);  // what changed since the last scan
    scanNmethods(a);  // and what was compiled since (nmethods=scan)
    if (a.opts.snapshot) recordSnapshots(a);
  }
  {
    CostScope cost(Cost::DeathRuns);
    recordMethodRuns(a, jni);
  }
  // (the final drain is not in the report: it is written as part of it)
  if (a.opts.stats)
    reportCosts({a.scanNmethods, a.watcherCpuNs.load(std::memory_order_relaxed), a.walkCpuNs.load(std::memory_order_relaxed), a.scansWithNew.load(std::memory_order_relaxed),
                 a.pageSyscalls.load(std::memory_order_relaxed)},
                a.ring.writerCpuNs());
  recordCalibration(a, kFinalWaitMs);
  if (a.opts.nmethods == "check")
    fprintf(stderr, "[jportal] nmethods=check: %llu nmethods compared (%llu unreadable), %llu pcs, %llu frames: %llu differ; %llu methods named: %llu differ\n",
            (unsigned long long)a.checkNmethods, (unsigned long long)a.checkUnreadable, (unsigned long long)a.checkPcs, (unsigned long long)a.checkFrames,
            (unsigned long long)a.checkDiffer, (unsigned long long)a.checkMethods, (unsigned long long)a.checkNamesDiffer);
  struct End {
    uint64_t patchScans;
    uint32_t errors;
  } end{a.patchScans, errorCount()};
  // VM_END's numbers are taken under the ring lock as it is written, and nothing can follow it
  a.ring.commitLast(
      VM_END,
      [](const RingStats& s, Payload& p, void* ctx) {
        const End& e = *(const End*)ctx;
        p.u64(s.records);  // records in the file, this one included
        p.u64(s.bytes);    // their bytes (the file's size minus its header)
        p.u64(s.stalls);
        p.u64(s.stallNs);
        p.u64(s.dropped);
        p.u64(s.droppedBytes);
        p.u64(e.patchScans);
        p.u32(e.errors);
      },
      &end, kFinalWaitMs);
  RingStats s = a.ring.stats();
  setLogSink(nullptr);
  a.ring.finish();
  if (debugEnabled())
    log(LogLevel::Info, "agent", "done: %llu records, %llu bytes, %llu dropped", (unsigned long long)s.records, (unsigned long long)s.bytes,
        (unsigned long long)s.dropped);
  CALLBACK_GUARD_END("VMDeath")
}

jint start(JavaVM* vm, char* optionText) {
  Options opts;
  std::string error;
  if (!parseOptions(optionText, &opts, &error)) {
    fprintf(stderr, "[jportal] %s; the agent is disabled, the JVM runs on\n", error.c_str());
    return JNI_OK;
  }
  if (opts.help) {
    printHelp();
    return JNI_OK;
  }
  setVerbosity(opts.log == "quiet" ? Verbosity::Quiet : opts.log == "debug" ? Verbosity::Debug : Verbosity::Info);
  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv((void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
    fprintf(stderr, "[jportal] this JVM offers no JVMTI 1.2 environment; the agent is disabled\n");
    return JNI_OK;
  }
  if (opts.oracle) return startOracle(vm, jvmti, opts);
  CostScope cost(Cost::OnLoad);
  Agent* a = new Agent();  // lives until the process exits: callbacks may run late
  gAgent = a;
  a->jvmti = jvmti;
  a->vm = vm;
  a->opts = opts;
  Ring::Options ro;
  ro.capacity = (size_t)opts.ringKb << 10;
  ro.waitMs = opts.waitMs;
  ro.outDir = opts.out;
  ro.collector = opts.collector;
  if (!a->ring.start(ro)) return JNI_OK;
  setLogSink(logSink);
  recordCalibration(*a);

  if (a->vms.init((void*)jvmti->functions->GetVersionNumber)) a->layoutOk = a->layout.resolve(a->vms);
  else warnOnce("vmstructs", "vmstructs", "libjvm exports no VMStructs: no codelets, tiers, OSR or patches are recorded");

  // nmethods=scan where the VMStructs allow it: then no CompiledMethodLoad events (the VM's compile info for each
  // is most of what the agent costs a JIT-heavy run), the patch watcher finds new nmethods instead
  a->scanNmethods = opts.nmethods == "scan" && a->layoutOk && a->layout.nmethodScanKnown();
  // JVMTI's CompiledMethodLoad makes the compilers record debug info at every instruction that can be mapped
  // to a bytecode, not only at safepoints (DebugInformationRecorder::recording_non_safepoints()); without the
  // events that takes the VM's DebugNonSafepoints flag, set here before the first compilation. Without it,
  // the PcDescs are too few to map compiled code to bytecodes: no scanning then
  if (a->scanNmethods && a->layout.flag("DebugNonSafepoints") != "true" && !a->layout.setBoolFlag("DebugNonSafepoints", true)) {
    a->scanNmethods = false;
    warnOnce("debug-non-safepoints", "nmethods", "cannot set DebugNonSafepoints: compiled methods come from JVMTI events");
  }
  if (opts.nmethods == "scan" && !a->scanNmethods)
    if (debugEnabled()) log(LogLevel::Info, "nmethods", "this JVM's VMStructs lack what nmethods=scan reads: compiled methods come from JVMTI events");

  jvmtiCapabilities want{};
  want.can_generate_compiled_method_load_events = a->scanNmethods ? 0 : 1;  // nmethods=scan: no events
  want.can_get_bytecodes = 1;
  want.can_get_constant_pool = 1;
  want.can_tag_objects = 1;
  if (opts.classesHook) {
    want.can_generate_all_class_hook_events = 1;
    // the early hook turns class-data sharing off (HotSpot's filemap.cpp: the classes resolved at start-up
    // must not be replaced), which costs start-up time and changes which code runs: only on request
    want.can_generate_early_class_hook_events = opts.classesEarly ? 1 : 0;
  }
  jvmtiCapabilities potential{};
  jvmti->GetPotentialCapabilities(&potential);
  jvmtiCapabilities caps{};
  caps.can_generate_compiled_method_load_events = want.can_generate_compiled_method_load_events & potential.can_generate_compiled_method_load_events;
  caps.can_get_bytecodes = potential.can_get_bytecodes;
  caps.can_get_constant_pool = potential.can_get_constant_pool;
  caps.can_tag_objects = potential.can_tag_objects;
  caps.can_generate_all_class_hook_events = want.can_generate_all_class_hook_events & potential.can_generate_all_class_hook_events;
  caps.can_generate_early_class_hook_events = want.can_generate_early_class_hook_events & potential.can_generate_early_class_hook_events;
  if (jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) warnOnce("caps", "agent", "some JVMTI capabilities are unavailable: records degrade");
  if (opts.classesEarly && !caps.can_generate_early_class_hook_events)
    warnOnce("early-hook", "classes", "no early ClassFileLoadHook: classes loaded during start-up are missing");

  jvmtiEventCallbacks cb{};
  cb.VMInit = onVMInit;
  cb.VMDeath = onVMDeath;
  cb.CompiledMethodLoad = onCompiledMethodLoad;
  cb.CompiledMethodUnload = onCompiledMethodUnload;
  cb.DynamicCodeGenerated = onDynamicCodeGenerated;
  cb.ClassFileLoadHook = onClassFileLoadHook;
  cb.ClassPrepare = onClassPrepare;
  cb.ThreadStart = onThreadStart;
  cb.ThreadEnd = onThreadEnd;
  jvmti->SetEventCallbacks(&cb, sizeof cb);
  jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                         JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END};
  for (jvmtiEvent e : events)
    if ((e == JVMTI_EVENT_COMPILED_METHOD_LOAD || e == JVMTI_EVENT_COMPILED_METHOD_UNLOAD) && a->scanNmethods) continue;
    else if (jvmti->SetEventNotificationMode(JVMTI_ENABLE, e, nullptr) != JVMTI_ERROR_NONE) warnOnce("event", "agent", "cannot enable JVMTI event %d", (int)e);
  if (opts.classesHook && jvmti->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, nullptr) != JVMTI_ERROR_NONE)
    warnOnce("cflh", "classes", "cannot enable ClassFileLoadHook: no CLASS records");
  if (opts.classes && jvmti->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, nullptr) != JVMTI_ERROR_NONE)
    warnOnce("prepare", "classes", "cannot enable ClassPrepare: classes are recorded only when compiled code uses them");
  return JNI_OK;
}

}  // namespace
}  // namespace jportal

extern "C" JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  try {
    return jportal::start(vm, options);
  } catch (...) {
    fprintf(stderr, "[jportal] internal error while starting; the agent is disabled, the JVM runs on\n");
    return JNI_OK;
  }
}

extern "C" JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {
  // VMDeath normally finished the trace; if it never came (e.g. the VM failed to start), close the ring
  if (jportal::gAgent && !jportal::gAgent->dead.exchange(true)) {
    jportal::stopPatchWatcher(*jportal::gAgent);
    jportal::gAgent->ring.finish();
  }
}
