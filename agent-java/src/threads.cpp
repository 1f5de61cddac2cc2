// Java threads and their OS thread ids.
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "records.h"

namespace jportal {

namespace {

// A long field of java.lang.Thread (`tid`, or the private `eetop` = its JavaThread*), or 0. The class is the
// thread object's own (fields of java.lang.Thread are found from a subclass): JNI FindClass from a native callback
// would load through the system class loader, running Java code the traced program does not run.
jlong threadLongField(JNIEnv* jni, jthread t, const char* field) {
  if (!jni || !t) return 0;
  jclass c = jni->GetObjectClass(t);
  if (!c) {
    jni->ExceptionClear();
    return 0;
  }
  jfieldID f = jni->GetFieldID(c, field, "J");
  jlong v = 0;
  if (f) v = jni->GetLongField(t, f);
  else jni->ExceptionClear();
  jni->DeleteLocalRef(c);
  return v;
}

jlong javaTid(JNIEnv* jni, jthread t) { return threadLongField(jni, t, "tid"); }
uintptr_t javaThreadOf(JNIEnv* jni, jthread t) { return (uintptr_t)threadLongField(jni, t, "eetop"); }

void writeThreadStart(Agent& a, uint32_t osTid, jlong tid, bool daemon, const char* name, uint16_t flags) {
  {
    std::lock_guard<std::mutex> lk(a.threadMu);
    if (!a.threadsSeen.insert((uint64_t)tid).second) return;
  }
  Payload p;
  p.u32(osTid);
  p.u64((uint64_t)tid);
  p.u8(daemon ? 1 : 0);
  p.str(name ? name : "");
  a.ring.commit(THREAD_START, flags, p);
}

}  // namespace

void JNICALL onThreadStart(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::ThreadStart);
  Agent& a = *gAgent;
  jvmtiThreadInfo info{};
  jvmti->GetThreadInfo(thread, &info);
  writeThreadStart(a, (uint32_t)syscall(SYS_gettid), javaTid(jni, thread), info.is_daemon, info.name, 0);
  if (info.name) jvmti->Deallocate((unsigned char*)info.name);
  if (info.thread_group) jni->DeleteLocalRef(info.thread_group);
  if (info.context_class_loader) jni->DeleteLocalRef(info.context_class_loader);
  CALLBACK_GUARD_END("ThreadStart")
}

void JNICALL onThreadEnd(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::ThreadEnd);
  Agent& a = *gAgent;
  Payload p;
  p.u32((uint32_t)syscall(SYS_gettid));
  p.u64((uint64_t)javaTid(jni, thread));
  a.ring.commit(THREAD_END, 0, p);
  CALLBACK_GUARD_END("ThreadEnd")
}

void recordExistingThreads(Agent& a, JNIEnv* jni) {
  jint n = 0;
  JvmtiPtr<jthread> threads(a.jvmti);
  if (a.jvmti->GetAllThreads(&n, &threads.p) != JVMTI_ERROR_NONE) return;
  uint32_t self = (uint32_t)syscall(SYS_gettid);
  for (jint i = 0; i < n; i++) {
    jthread t = threads.p[i];
    jvmtiThreadInfo info{};
    a.jvmti->GetThreadInfo(t, &info);
    uint32_t os = (uint32_t)a.layout.osThreadId(javaThreadOf(jni, t));
    jthread current = nullptr;
    a.jvmti->GetCurrentThread(&current);
    if (current && jni->IsSameObject(current, t)) os = self;  // no VMStructs needed for ourselves
    if (current) jni->DeleteLocalRef(current);
    if (os == 0) warnOnce("thread-tid", "threads", "OS tid unknown for thread '%s' (started before the agent)", info.name ? info.name : "?");
    writeThreadStart(a, os, javaTid(jni, t), info.is_daemon, info.name, FLAG_REPLAY);
    if (info.name) a.jvmti->Deallocate((unsigned char*)info.name);
    if (info.thread_group) jni->DeleteLocalRef(info.thread_group);
    if (info.context_class_loader) jni->DeleteLocalRef(info.context_class_loader);
    jni->DeleteLocalRef(t);
  }
}

}  // namespace jportal
