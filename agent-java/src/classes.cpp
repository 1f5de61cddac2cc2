// Classes (CLASS records, with reconstruction of hidden classes) and method identities (METHOD records).
#include <string.h>

#include "agent.h"
#include "records.h"

namespace jportal {

namespace {

JNIEnv* currentJni(Agent& a) {
  JNIEnv* env = nullptr;
  if (!a.vm || a.vm->GetEnv((void**)&env, JNI_VERSION_1_6) != JNI_OK) return nullptr;
  return env;
}


// `replay`: the class was loaded before this record, at a time the agent cannot know (listed at VMInit).
void writeClassRecord(Agent& a, uint32_t classId, uint32_t loader, uint8_t source, const std::string& name, const uint8_t* bytes, size_t len, bool replay = false) {
  Payload p;
  p.u32(classId);
  p.u32(loader);
  p.u8(source);
  p.str(name);
  p.bytes(bytes, len);
  a.ring.commit(CLASS, replay ? FLAG_REPLAY : 0, p);
}

// CLASS.source values (docs/trace-format.md)
constexpr uint8_t kSourceHook = 0, kSourceRebuilt = 1, kSourceRedefined = 2, kSourceImage = 3, kSourceClassPath = 4;

// A class named only (CLASS source 3 or 4, no bytes): the reader takes its class file from the JDK's runtime image

// A class id given to (loader, name) (caller holds classMu).
void noteClassLocked(Agent& a, uint32_t loader, const std::string& name, uint32_t id) {
  a.classIds[{loader, name}] = id;
  a.classesByName[name].emplace_back(loader, id);
}

// (3) or from the recorded class path, then the runtime image (4). Caller holds classMu. Returns its class id.
uint32_t nameClassLocked(Agent& a, uint32_t loader, uint8_t source, const std::string& name, bool replay) {
  static const uint8_t kNoBytes[1] = {0};
  uint32_t id = a.nextClassId++;
  noteClassLocked(a, loader, name, id);
  writeClassRecord(a, id, loader, source, name, kNoBytes, 0, replay);
  return id;
}

// Class-file writer for reconstructed classes: the class's own constant pool (from GetConstantPool) with
// entries appended for what the reconstruction adds.
class ClassFileBuilder {
 public:
  // New entries are numbered after the `cpCount` slots of the class's own constant pool.
  explicit ClassFileBuilder(uint16_t cpCount) : next_(cpCount) { extra_.reserve(256); }
  uint16_t utf8(const std::string& s) {
    extra_.push_back(1);
    u16(extra_, (uint16_t)s.size());
    extra_.insert(extra_.end(), s.begin(), s.end());
    return next_++;
  }
  uint16_t classRef(const std::string& name) {
    uint16_t n = utf8(name);
    extra_.push_back(7);
    u16(extra_, n);
    return next_++;
  }
  uint32_t count() const { return next_; }  // > 0xFFFF: the class would not fit a constant pool
  const std::vector<uint8_t>& extra() const { return extra_; }
  static void u16(std::vector<uint8_t>& v, uint16_t x) {
    v.push_back((uint8_t)(x >> 8));
    v.push_back((uint8_t)x);
  }
  static void u32(std::vector<uint8_t>& v, uint32_t x) {
    u16(v, (uint16_t)(x >> 16));
    u16(v, (uint16_t)x);
  }

 private:
  uint32_t next_;
  std::vector<uint8_t> extra_;
};

// The Method* a HotSpot jmethodID points at (its slot holds it), or 0. Each address is checked (system calls) and
// the Method*'s max_locals and code length compared with JVMTI's until one jmethodID has passed; then trusted.
uintptr_t methodOfId(Agent& a, jmethodID id, jint maxLocals, jint codeLen) {
  if (a.methodIdsChecked.load(std::memory_order_acquire)) return *(const uintptr_t*)id;
  if (!readable(id, sizeof(uintptr_t))) return 0;
  uintptr_t m = *(const uintptr_t*)id;
  size_t len = 0;
  if (a.layout.maxLocals(m) != maxLocals || !a.layout.currentBytecodes(m, &len) || len != (size_t)codeLen) return 0;
  a.methodIdsChecked.store(true, std::memory_order_release);
  return m;
}

// Rebuilds a class file for a class that never reached ClassFileLoadHook (hidden classes): constant pool,
// superclass and interfaces, and every method with its bytecode, max_stack and max_locals. Not included:
// fields, exception tables and other attributes (JVMTI does not expose them).
bool reconstructClass(Agent& a, JNIEnv* jni, jclass cls, const std::string& name, std::vector<uint8_t>* out) {
  jvmtiEnv* j = a.jvmti;
  jint minor = 0, major = 0;
  if (j->GetClassVersionNumbers(cls, &minor, &major) != JVMTI_ERROR_NONE) return false;
  jint cpCount = 0, cpLen = 0;
  JvmtiPtr<unsigned char> cp(j);
  if (j->GetConstantPool(cls, &cpCount, &cpLen, &cp.p) != JVMTI_ERROR_NONE || cpCount <= 0) return false;
  jint mods = 0;
  j->GetClassModifiers(cls, &mods);
  ClassFileBuilder b((uint16_t)cpCount);
  uint16_t thisIdx = b.classRef(name);
  uint16_t superIdx = 0;
  if (jclass sup = jni->GetSuperclass(cls)) {
    LocalRef r{jni, sup};
    JvmtiPtr<char> sig(j);
    if (j->GetClassSignature(sup, &sig.p, nullptr) == JVMTI_ERROR_NONE) superIdx = b.classRef(internalName(sig.p));
  }
  std::vector<uint16_t> ifaces;
  {
    jint n = 0;
    JvmtiPtr<jclass> arr(j);
    if (j->GetImplementedInterfaces(cls, &n, &arr.p) == JVMTI_ERROR_NONE)
      for (jint i = 0; i < n; i++) {
        LocalRef r{jni, arr.p[i]};
        JvmtiPtr<char> sig(j);
        if (j->GetClassSignature(arr.p[i], &sig.p, nullptr) == JVMTI_ERROR_NONE) ifaces.push_back(b.classRef(internalName(sig.p)));
      }
  }
  uint16_t codeIdx = b.utf8("Code");
  std::vector<uint8_t> methods;
  uint16_t methodCount = 0;
  {
    jint n = 0;
    JvmtiPtr<jmethodID> ms(j);
    if (j->GetClassMethods(cls, &n, &ms.p) != JVMTI_ERROR_NONE) return false;
    for (jint i = 0; i < n; i++) {
      JvmtiPtr<char> mname(j), msig(j);
      if (j->GetMethodName(ms.p[i], &mname.p, &msig.p, nullptr) != JVMTI_ERROR_NONE) continue;
      jint mmods = 0;
      j->GetMethodModifiers(ms.p[i], &mmods);
      ClassFileBuilder::u16(methods, (uint16_t)(mmods & 0xFFFF));
      ClassFileBuilder::u16(methods, b.utf8(mname.p));
      ClassFileBuilder::u16(methods, b.utf8(msig.p));
      jint codeLen = 0;
      JvmtiPtr<unsigned char> code(j);
      bool hasCode = !(mmods & (0x0100 | 0x0400)) && j->GetBytecodes(ms.p[i], &codeLen, &code.p) == JVMTI_ERROR_NONE && codeLen > 0;
      ClassFileBuilder::u16(methods, hasCode ? 1 : 0);
      if (hasCode) {
        jint maxLocals = 0;
        j->GetMaxLocals(ms.p[i], &maxLocals);
        uintptr_t methodPtr = a.layoutOk ? methodOfId(a, ms.p[i], maxLocals, codeLen) : 0;
        int maxStack = methodPtr ? a.layout.maxStack(methodPtr, false) : -1;
        // without ConstMethod::_max_stack: no instruction pushes more than 2 slots, and verifiable code has one
        // stack depth per instruction, so 2 * code length bounds the depth (conservative, always valid)
        if (maxStack < 0) maxStack = codeLen >= 0x7FFF ? 0xFFFF : 2 * codeLen;
        ClassFileBuilder::u16(methods, codeIdx);
        ClassFileBuilder::u32(methods, (uint32_t)(12 + codeLen));
        ClassFileBuilder::u16(methods, (uint16_t)maxStack);
        ClassFileBuilder::u16(methods, (uint16_t)maxLocals);
        ClassFileBuilder::u32(methods, (uint32_t)codeLen);
        methods.insert(methods.end(), code.p, code.p + codeLen);
        ClassFileBuilder::u16(methods, 0);  // exception table: not available through JVMTI
        ClassFileBuilder::u16(methods, 0);  // attributes
      }
      methodCount++;
    }
  }
  std::vector<uint8_t>& o = *out;
  ClassFileBuilder::u32(o, 0xCAFEBABE);
  ClassFileBuilder::u16(o, (uint16_t)minor);
  ClassFileBuilder::u16(o, (uint16_t)major);
  if (b.count() > 0xFFFF) return false;
  ClassFileBuilder::u16(o, (uint16_t)b.count());
  o.insert(o.end(), cp.p, cp.p + cpLen);
  o.insert(o.end(), b.extra().begin(), b.extra().end());
  uint16_t access = (uint16_t)(mods & 0x7631);  // class-file access flags only
  if (!(access & 0x0200)) access |= 0x0020;      // ACC_SUPER for classes
  ClassFileBuilder::u16(o, access);
  ClassFileBuilder::u16(o, thisIdx);
  ClassFileBuilder::u16(o, superIdx);
  ClassFileBuilder::u16(o, (uint16_t)ifaces.size());
  for (uint16_t x : ifaces) ClassFileBuilder::u16(o, x);
  ClassFileBuilder::u16(o, 0);  // fields
  ClassFileBuilder::u16(o, methodCount);
  o.insert(o.end(), methods.begin(), methods.end());
  ClassFileBuilder::u16(o, 0);  // attributes
  return true;
}

}  // namespace

uint32_t loaderId(Agent& a, JNIEnv* jni, jobject loader) {
  if (!loader) return 0;  // the boot loader
  // loaderMu is a small table lock: it is only ever taken by threads running our callbacks (in native state,
  // so a safepoint never waits for them), never by a VM-internal thread
  std::lock_guard<std::mutex> lk(a.loaderMu);
  jlong tag = 0;
  bool tagging = a.jvmti->GetTag(loader, &tag) == JVMTI_ERROR_NONE;
  if (tagging && tag > 0 && tag < 0xFFFFFFFFll) return (uint32_t)tag;
  // untagged so far, or tagging unavailable in this phase: loaders met before are remembered by weak reference
  uint32_t id = 0;
  if (jni)
    for (const auto& e : a.untaggedLoaders)
      if (jni->IsSameObject(e.first, loader)) {
        id = e.second;
        break;
      }
  if (id == 0) {
    if (!tagging && !jni) {
      warnOnce("loader-id", "classes", "a class loader could be neither tagged nor remembered: its classes get loader id 0xFFFFFFFF");
      return 0xFFFFFFFF;
    }
    id = a.nextLoaderId++;
    if (!tagging) {
      jweak w = jni->NewWeakGlobalRef(loader);
      if (w) a.untaggedLoaders.emplace_back(w, id);
    }
  }
  if (tagging && a.jvmti->SetTag(loader, id) != JVMTI_ERROR_NONE)
    warnOnce("loader-tag", "classes", "SetTag failed on a class loader: loader ids may repeat for it");
  return id;
}

void JNICALL onClassFileLoadHook(jvmtiEnv* jvmti, JNIEnv* jni, jclass redefined, jobject loader, const char* name, jobject, jint len,
                                 const unsigned char* data, jint*, unsigned char**) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::ClassFileLoadHook);
  Agent& a = *gAgent;
  if (!data || len <= 0) return;
  jvmtiPhase phase = JVMTI_PHASE_DEAD;
  jvmti->GetPhase(&phase);
  // primordial phase: only the boot loader loads classes, and no JVMTI object functions may be called
  uint32_t lid = !loader ? 0 : phase == JVMTI_PHASE_PRIMORDIAL ? 0xFFFFFFFF : loaderId(a, jni, loader);
  std::string n = name ? name : "";
  std::lock_guard<std::mutex> lk(a.classMu);
  uint32_t id = a.nextClassId++;
  if (!n.empty()) noteClassLocked(a, lid, n, id);
  writeClassRecord(a, id, lid, redefined ? kSourceRedefined : kSourceHook, n, data, (size_t)len);
  CALLBACK_GUARD_END("ClassFileLoadHook")
}

namespace {
enum LoaderKind : uint8_t { kLoaderBoot, kLoaderPlatform, kLoaderApp, kLoaderOther };

bool isHiddenName(const std::string& name) { return name.find(".0x") != std::string::npos; }

// What a class loader is, from its object's class, found once per loader id. The built-in loaders are the JDK's
// ClassLoaders$PlatformClassLoader and $AppClassLoader; a -Djava.system.class.loader replaces only what
// getSystemClassLoader() returns, and its classes count as another loader's.
LoaderKind loaderKind(Agent& a, JNIEnv* jni, jobject loader, uint32_t lid) {
  if (!loader || lid == 0) return kLoaderBoot;
  {
    std::lock_guard<std::mutex> lk(a.loaderMu);
    auto it = a.loaderKinds.find(lid);
    if (it != a.loaderKinds.end()) return (LoaderKind)it->second;
  }
  LoaderKind kind = kLoaderOther;
  if (jni) {
    LocalRef c{jni, jni->GetObjectClass(loader)};
    JvmtiPtr<char> sig(a.jvmti);
    if (c.obj && a.jvmti->GetClassSignature((jclass)c.obj, &sig.p, nullptr) == JVMTI_ERROR_NONE && sig.p) {
      if (!strcmp(sig.p, "Ljdk/internal/loader/ClassLoaders$AppClassLoader;")) kind = kLoaderApp;
      else if (!strcmp(sig.p, "Ljdk/internal/loader/ClassLoaders$PlatformClassLoader;")) kind = kLoaderPlatform;
    }
  }
  std::lock_guard<std::mutex> lk(a.loaderMu);
  a.loaderKinds[lid] = kind;
  return kind;
}

// Where the class file of a class that did not reach ClassFileLoadHook is. classes=path: the runtime image for
// the boot and platform loaders' classes, the class path (then the image: some JDK modules are defined to the app
// loader) for the app loader's; rebuilt from JVMTI for other loaders and for generated classes (hidden classes,
// java.lang.reflect.Proxy's $ProxyN). classes=hook: only the boot classes of the primordial phase are named.
uint8_t originOf(Agent& a, JNIEnv* jni, jobject loader, uint32_t lid, const std::string& name) {
  if (isHiddenName(name)) return kSourceRebuilt;
  if (a.opts.classesHook) return !a.opts.classesEarly && lid == 0 ? kSourceImage : kSourceRebuilt;
  size_t slash = name.rfind('/');
  if (name.compare(slash == std::string::npos ? 0 : slash + 1, 6, "$Proxy") == 0) return kSourceRebuilt;
  switch (loaderKind(a, jni, loader, lid)) {
    case kLoaderBoot:
    case kLoaderPlatform:
      return kSourceImage;
    case kLoaderApp:
      return kSourceClassPath;
    default:
      return kSourceRebuilt;
  }
}

constexpr uint32_t kNoClass = 0xFFFFFFFF;

// The CLASS record of a class that has none yet: named by where its bytes are, or rebuilt from JVMTI once.
// Returns its class id, or kNoClass when another thread is rebuilding it or it cannot be rebuilt. `replay`: the
// class was loaded earlier, at an unknown time (recordImageClasses).
uint32_t recordClass(Agent& a, JNIEnv* jni, jclass cls, jobject loader, uint32_t lid, const std::string& name, bool replay = false) {
  uint8_t source = originOf(a, jni, loader, lid, name);
  {
    std::lock_guard<std::mutex> lk(a.classMu);
    auto it = a.classIds.find({lid, name});
    if (it != a.classIds.end()) return it->second;
    if (source != kSourceRebuilt) return nameClassLocked(a, lid, source, name, replay);
    if (!a.reconstructing.insert({lid, name}).second) return kNoClass;
  }
  std::vector<uint8_t> bytes;
  if (!jni || !reconstructClass(a, jni, cls, name, &bytes)) {
    warnOnce("reconstruct", "classes", "could not reconstruct some generated classes (e.g. %s): their methods have no bytecode in the trace", name.c_str());
    return kNoClass;
  }
  std::lock_guard<std::mutex> lk(a.classMu);
  uint32_t id = a.nextClassId++;
  noteClassLocked(a, lid, name, id);
  writeClassRecord(a, id, lid, kSourceRebuilt, name, bytes.data(), bytes.size(), replay);
  return id;
}
}  // namespace

// Classes loaded before VMInit never reached ClassPrepare (or, with classes=hook, the boot classes of the
// primordial phase never reached ClassFileLoadHook): each is named as recordClass says (with classes=hook only the
// boot loader's, source 3). Runs once, in VMInit, before compiled methods are replayed (which would otherwise
// rebuild these classes from JVMTI, without their exception tables). Hidden classes are rebuilt when prepared or
// used.
void recordImageClasses(Agent& a, JNIEnv* jni) {
  jvmtiEnv* j = a.jvmti;
  jint n = 0;
  JvmtiPtr<jclass> all(j);
  if (!jni || j->GetLoadedClasses(&n, &all.p) != JVMTI_ERROR_NONE) {
    warnOnce("loaded-classes", "classes", "GetLoadedClasses failed: start-up classes are rebuilt from JVMTI when compiled code uses them");
    return;
  }
  for (jint i = 0; i < n; i++) {
    LocalRef cls{jni, all.p[i]};
    jobject loader = nullptr;
    if (j->GetClassLoader(all.p[i], &loader) != JVMTI_ERROR_NONE) continue;
    LocalRef loaderRef{jni, loader};
    if (loader && a.opts.classesHook) continue;  // only the boot loader loads classes in the primordial phase
    JvmtiPtr<char> sig(j);
    if (j->GetClassSignature(all.p[i], &sig.p, nullptr) != JVMTI_ERROR_NONE || !sig.p || sig.p[0] != 'L') continue;  // arrays, primitives
    std::string name = internalName(sig.p);
    if (name.empty() || isHiddenName(name)) continue;
    recordClass(a, jni, all.p[i], loader, loaderId(a, jni, loader), name, true);
  }
}

// nmethods=scan names a compiled method's class by (loader, name): the first class prepared for each loader id
// ties that loader's ClassLoaderData to it (through one of its methods' Method*), so that a ClassLoaderData freed
// with its loader and reused by a new one is not taken for the old loader. Once per loader id (GetClassMethods on
// one class); a class without methods leaves it to the next. Not for a hidden class's own ClassLoaderData.
static void learnLoaderData(Agent& a, JNIEnv* jni, jclass cls, jobject loader, uint32_t lid) {
  if (lid == 0xFFFFFFFF) return;
  {
    std::lock_guard<std::mutex> lk(a.classMu);
    if (a.loadersWithData.count(lid)) return;
  }
  jint n = 0;
  JvmtiPtr<jmethodID> ms(a.jvmti);
  if (a.jvmti->GetClassMethods(cls, &n, &ms.p) != JVMTI_ERROR_NONE || n <= 0 || !ms.p[0]) return;
  PageCheck pages;
  bool own = false;
  uintptr_t cld = a.layout.loaderDataOf(*(const uintptr_t*)ms.p[0], pages, &own);
  if (!cld || own) return;
  // the boot, platform and app loaders live as long as the VM (a -Djava.system.class.loader is another kind)
  LoaderKind kind = loaderKind(a, jni, loader, lid);
  std::lock_guard<std::mutex> lk(a.classMu);
  a.loaderDataIds[cld] = lid;
  a.loadersWithData.insert(lid);
  if (kind == kLoaderBoot || kind == kLoaderPlatform || kind == kLoaderApp) a.permanentLoaderData.insert(cld);
}

// Every class is recorded once it is prepared (classes=path), or with classes=hook the hidden classes
// (LambdaForms, lambdas' proxies), which never reach ClassFileLoadHook: interpreted code runs in them all the
// same, so they must not wait until compiled code inlines them.
void JNICALL onClassPrepare(jvmtiEnv* j, JNIEnv* jni, jthread, jclass cls) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::ClassPrepare);
  Agent& a = *gAgent;
  if (!a.opts.classes || !cls || !jni) return;
  JvmtiPtr<char> csig(j);
  if (j->GetClassSignature(cls, &csig.p, nullptr) != JVMTI_ERROR_NONE || !csig.p) return;
  std::string className = internalName(csig.p);
  // a hidden class's name carries its address ("java/lang/invoke/LambdaForm$MH.0x0000000800c01000")
  if (className.empty() || className[0] == '[' || (a.opts.classesHook && !isHiddenName(className))) return;
  jobject loader = nullptr;
  j->GetClassLoader(cls, &loader);
  LocalRef loaderRef{jni, loader};
  uint32_t lid = loaderId(a, jni, loader);
  recordClass(a, jni, cls, loader, lid, className);
  if (a.scanNmethods) learnLoaderData(a, jni, cls, loader, lid);
  CALLBACK_GUARD_END("ClassPrepare")
}

namespace {
// Writes a METHOD record (caller holds methodMu); if the ring drops it, it is kept to be sent again.
void sendMethodLocked(Agent& a, uint32_t id, const Payload& p) {
  if (a.ring.commit(METHOD, 0, p)) a.unsentMethods.erase(id);
  else if (a.ring.running()) a.unsentMethods[id].assign(p.data(), p.data() + p.size());
}

// The METHOD record of a method given id `id` just now (caller holds methodMu).
void sendNewMethodLocked(Agent& a, uint32_t id, uint32_t classId, uint32_t lid, const std::string& className, const std::string& name,
                         const std::string& signature, uint32_t modifiers) {
  Payload p;
  p.u32(id);
  p.u32(classId);
  p.u32(lid);
  p.str(className);
  p.str(name);
  p.str(signature);
  p.u32(modifiers);
  sendMethodLocked(a, id, p);
}

uint32_t knownMethodLocked(Agent& a, uint32_t id) {
  auto u = a.unsentMethods.find(id);
  if (u != a.unsentMethods.end()) {
    Payload p;
    p.raw(u->second.data(), u->second.size());
    sendMethodLocked(a, id, p);
  }
  return id;
}
}  // namespace

uint32_t methodId(Agent& a, jmethodID m) {
  {
    std::lock_guard<std::mutex> lk(a.methodMu);
    auto it = a.methodIds.find(m);
    if (it != a.methodIds.end()) return knownMethodLocked(a, it->second);
  }
  jvmtiEnv* j = a.jvmti;
  JNIEnv* jni = currentJni(a);
  JvmtiPtr<char> name(j), sig(j), csig(j);
  j->GetMethodName(m, &name.p, &sig.p, nullptr);
  jint mods = 0;
  j->GetMethodModifiers(m, &mods);
  jclass cls = nullptr;
  j->GetMethodDeclaringClass(m, &cls);
  LocalRef clsRef{jni, cls};
  uint32_t lid = 0;
  std::string className;
  LocalRef loaderRef{jni, nullptr};
  if (cls) {
    j->GetClassSignature(cls, &csig.p, nullptr);
    className = internalName(csig.p);
    j->GetClassLoader(cls, &loaderRef.obj);
    lid = loaderId(a, jni, loaderRef.obj);
  }
  uint32_t classId = kNoClass;
  {
    std::lock_guard<std::mutex> lk(a.classMu);
    auto it = a.classIds.find({lid, className});
    if (it != a.classIds.end()) classId = it->second;
  }
  // a class with no CLASS record yet (compiled methods can be reported before VMInit names the start-up classes,
  // and a hidden class is rebuilt when first used): named or rebuilt now; it was loaded earlier (REPLAY)
  if (classId == kNoClass && cls && a.opts.classes && !className.empty() && className[0] != '[')
    classId = recordClass(a, jni, cls, loaderRef.obj, lid, className, true);
  std::lock_guard<std::mutex> lk(a.methodMu);
  auto it = a.methodIds.find(m);
  if (it != a.methodIds.end()) return knownMethodLocked(a, it->second);
  uint32_t id = a.nextMethodId++;
  a.methodIds[m] = id;
  sendNewMethodLocked(a, id, classId, lid, className, name.p ? name.p : "", sig.p ? sig.p : "", (uint32_t)mods);
  return id;
}

uint32_t methodIdOfPtr(Agent& a, uintptr_t method, PageCheck& pages) {
  {
    std::lock_guard<std::mutex> lk(a.methodMu);
    auto it = a.methodPtrIds.find(method);
    // the nmethod naming this Method* is live, so its class is: the ConstMethod read is safe
    if (it != a.methodPtrIds.end() && it->second.second == a.layout.constMethodOf(method)) return knownMethodLocked(a, it->second.first);
  }
  MethodNaming n;
  const size_t mark = pages.mark();
  if (!a.layout.methodNaming(method, pages, &n)) return kNoMethod;
  uint32_t lid = 0xFFFFFFFF, classId = kNoClass;
  {
    std::lock_guard<std::mutex> lk(a.classMu);
    // the pages just read held a live method (its class lists it) of a loader that never unloads: they stay
    // readable for good (a Method* read while its nmethod died could lead anywhere: then its class lacks it)
    if (!n.ownLoaderData && a.permanentLoaderData.count(n.loaderData) && a.layout.klassHasMethod(n.holder, method, pages)) pages.makePermanent(mark);
    auto ld = a.loaderDataIds.find(n.loaderData);
    if (ld != a.loaderDataIds.end()) {
      lid = ld->second;
      auto it = a.classIds.find({lid, n.className});
      if (it != a.classIds.end()) classId = it->second;
    } else {
      // a class name recorded for one loader only names the class; its ClassLoaderData then names that loader
      // for the classes after it (not a hidden class's own ClassLoaderData)
      auto byName = a.classesByName.find(n.className);
      if (byName != a.classesByName.end() && byName->second.size() == 1) {
        lid = byName->second[0].first;
        classId = byName->second[0].second;
        if (!n.ownLoaderData) a.loaderDataIds[n.loaderData] = lid;
      }
    }
  }
  if (classId == kNoClass && a.opts.classes)
    warnOnce("scan-class", "nmethods", "a compiled method's class (e.g. %s) has no CLASS record or several loaders name it: its METHOD record has no class", n.className.c_str());
  std::lock_guard<std::mutex> lk(a.methodMu);
  auto it = a.methodPtrIds.find(method);
  if (it != a.methodPtrIds.end() && it->second.second == n.constMethod) return knownMethodLocked(a, it->second.first);
  uint32_t id = a.nextMethodId++;
  a.methodPtrIds[method] = {id, n.constMethod};
  sendNewMethodLocked(a, id, classId, lid, n.className, n.name, n.signature, n.modifiers);
  return id;
}

}  // namespace jportal
