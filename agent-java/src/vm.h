// HotSpot internals read through the exported VMStructs tables (offsets at run time, never hard-coded)
// and libjvm's symbol table. Every JDK 17 vs 25 difference is resolved in VmLayout::resolve().
#pragma once
#include <atomic>
#include <stdint.h>

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

namespace jportal {

class VMStructs {
 public:
  bool init(void* anyAddressInLibjvm);
  bool ok() const { return ok_; }
  // Offset of a non-static field, or -1.
  long off(const char* typeAndField) const;
  // Address of a static field, or nullptr.
  void* staticAddr(const char* typeAndField) const;
  // Declared type string of a field ("" if unknown).
  std::string fieldType(const char* typeAndField) const;
  long typeSize(const char* type) const;
  bool intConstant(const char* name, long* out) const;
  const std::string& libjvmPath() const { return libjvmPath_; }

 private:
  struct Field {
    bool isStatic;
    uint64_t offset;
    void* address;
    std::string type;
  };
  std::map<std::string, Field> fields_;
  std::map<std::string, long> typeSizes_;
  std::map<std::string, long> intConstants_;
  std::string libjvmPath_;
  bool ok_ = false;
};

// Symbols from libjvm's .symtab (local symbols such as the interpreter's dispatch tables).
struct ElfSymbol {
  uintptr_t address = 0;
  size_t size = 0;
};
std::map<std::string, ElfSymbol> lookupLibjvmSymbols(const std::string& libjvmPath, const std::vector<std::string>& names);

struct CodeHeapRange {
  uintptr_t heap;  // the CodeHeap object
  uintptr_t low, high, committedHigh;
  const uint8_t* segmap;
  int log2Segment;
};

struct NmethodFacts {
  uintptr_t blob = 0, instsBegin = 0, stubBegin = 0, entry = 0, verifiedEntry = 0, osrEntry = 0, method = 0;
  // the constants section (before the instructions: C2's jump tables, floating-point constants); 0 unknown
  uintptr_t constsBegin = 0;
  int compileId = -1, level = -1, entryBci = -1;
};

// One nmethod's debug info as HotSpot keeps it: for each PcDesc with a scope, its pc and the chain of inlined
// frames (innermost first) as Method* and bci (-1: the method's entry) -- what JVMTI's CompiledMethodLoad
// compile info gives, read from the nmethod itself.
struct NmethodScopes {
  std::vector<uintptr_t> pcs;
  std::vector<uint32_t> frameCounts;  // per pc
  std::vector<uintptr_t> methods;     // flat, per frame
  std::vector<int32_t> bcis;
};

// A Method* named from its ConstMethod's constant pool (Symbols) and its holder class.
struct MethodNaming {
  uintptr_t constMethod = 0, holder = 0, loaderData = 0;
  bool ownLoaderData = false;  // the holder is a hidden class with a ClassLoaderData of its own
  std::string className, name, signature;  // className as JVMTI prints it (hidden: "Foo$$Lambda.0x...")
  uint32_t modifiers = 0;
};

// Readability of VM memory that may be freed while we read it (metadata of classes being unloaded), checked once
// per page for as long as one instance lives (one scan): a page found readable is trusted until then.
// Pages that stay readable as long as the VM lives, so that no system call need check them again: the class-data
// sharing archive (mapped once, never unmapped), and pages that held the metadata of a class whose loader never
// unloads (the boot, platform and app loaders). Such a class's Method, ConstMethod, constant pool and Klass are never
// freed (a redefined class's old methods go back to its own loader's metaspace, still committed), metaspace uncommits
// only whole granules with nothing live in them, and the Symbols its constant pool names live as long as it does
// (the boot loader's are permanent). Used by one thread at a time (the one scanning nmethods).
class PermanentPages {
 public:
  void setShared(uintptr_t low, uintptr_t high) { sharedLow_ = low, sharedHigh_ = high; }
  // inside the archive's range: permanent once found readable (a page at a time: the range might have gaps)
  bool inShared(uintptr_t page) const { return page >= sharedLow_ && page < sharedHigh_; }
  // the whole range was found readable (checked once, off the JVM's threads)
  void trustShared() { sharedTrusted_ = true; }
  bool contains(uintptr_t page) const { return (sharedTrusted_ && inShared(page)) || pages_.count(page) != 0; }
  void add(uintptr_t page) {
    if (pages_.size() < kMaxPages) pages_.insert(page);
  }

 private:
  static constexpr size_t kMaxPages = 1u << 18;  // 1 GB of metadata
  uintptr_t sharedLow_ = 0, sharedHigh_ = 0;
  bool sharedTrusted_ = false;
  std::unordered_set<uintptr_t> pages_;
};

// Whether memory the agent follows pointers into is readable, page by page, each page checked (a system call)
// once per PageCheck unless `permanent` knows it.
class PageCheck {
 public:
  explicit PageCheck(PermanentPages* permanent = nullptr) : permanent_(permanent) {}
  bool ok(uintptr_t p, size_t n);
  // From now on every non-null address counts as readable: for reads that follow the VM's own pointers of
  // objects kept alive (a loaded class held by a reference), once the same reads checked out page by page.
  void trust() { trusted_ = true; }
  bool trusted() const { return trusted_; }
  // Pages checked by system call from `mark()` on become permanent (the caller knows what they held is).
  size_t mark() const { return good_.size(); }
  void makePermanent(size_t mark);
  uint64_t syscalls() const { return syscalls_; }

 private:
  std::vector<uintptr_t> good_;
  PermanentPages* permanent_;
  uint64_t syscalls_ = 0;
  bool trusted_ = false;
};

struct Codelet {
  uintptr_t begin, end;
  int bytecode;
  const char* description;
};

// Resolved offsets of everything the agent reads; -1 means "not available on this JVM".
class VmLayout {
 public:
  bool resolve(const VMStructs& vms);
  const VMStructs& vms() const { return *vms_; }

  // Code cache
  std::vector<CodeHeapRange> codeHeaps() const;
  // The heap's name as the JVM prints it ("CodeHeap 'non-nmethods'"), or "" (CodeHeap::_name is not in
  // VMStructs: found by looking for a pointer to such a string in the CodeHeap object).
  std::string heapName(const CodeHeapRange& h) const;
  void codeBounds(uintptr_t* low, uintptr_t* high) const;
  // Whether [p, p+n) lies inside one code heap's committed memory (so reading it is safe).
  bool inCommittedCode(uintptr_t p, size_t n) const;
  // Start of the CodeBlob containing pc, or 0.
  uintptr_t findBlob(uintptr_t pc, const std::vector<CodeHeapRange>& heaps) const;
  bool isNmethod(uintptr_t blob) const;
  // The used flag of the code heap block a blob begins (its header sits right before the blob).
  bool blockHeaderKnown() const { return hbUsed_ >= 0 && heapBlockSize_ > 0 && nmCompileId_ >= 0; }
  bool blockInUse(uintptr_t blob) const;
  bool nmethodFacts(uintptr_t blob, NmethodFacts* out) const;

  // Finding nmethods without JVMTI's CompiledMethodLoad (nmethods=scan): every used block of the code heaps
  // that holds an nmethod, and what each holds. Only where VMStructs has every field these read (JDK 17; not 25,
  // whose metadata offset it lacks).
  bool nmethodScanKnown() const;
  // The nmethod blobs in the heaps' used blocks, in address order (read while the VM changes them: callers check
  // each blob again before trusting it).
  void nmethodBlobs(const std::vector<CodeHeapRange>& heaps, std::vector<uintptr_t>* out) const;
  // nmethod::_state: -1 not installed yet, 0 in use, 1 not used, 2 not entrant, above: dead; -100 unknown.
  int nmethodState(uintptr_t blob) const;
  int nmethodCompileId(uintptr_t blob) const;
  // Asks for the cache line of an nmethod's compile id (no fault: a hint), for walks that read many in a row.
  void prefetchCompileId(uintptr_t blob) const {
    if (nmCompileId_ >= 0) __builtin_prefetch((const void*)(blob + nmCompileId_));
  }
  // The nmethod's PcDescs with scopes and their inlined frames (false if anything does not add up).
  bool nmethodScopes(uintptr_t blob, uintptr_t instsBegin, NmethodScopes* out) const;
  bool methodNaming(uintptr_t method, PageCheck& pages, MethodNaming* out) const;
  uintptr_t constMethodOf(uintptr_t method) const;
  // Whether the InstanceKlass's methods array holds `method` (a Method* of the class as it is now).
  bool klassHasMethod(uintptr_t klass, uintptr_t method, PageCheck& pages) const;
  // The InstanceKlass's methods array (`_methods`: *count Method*s at *data), its pages checked.
  bool klassMethodArray(uintptr_t klass, PageCheck& pages, const uintptr_t** data, int* count) const;
  // The class-data sharing archive's metadata range [*low, *high) (MetaspaceObj::_shared_metaspace_base/_top), or false.
  bool sharedMetaspace(uintptr_t* low, uintptr_t* high) const;
  // The ClassLoaderData of a Method*'s class (0 if unreadable); *own: a hidden class's own
  uintptr_t loaderDataOf(uintptr_t method, PageCheck& pages, bool* own) const;
  // CodeBlob::_code_end (17), 0 unknown
  uintptr_t codeEnd(uintptr_t blob) const;

  // Interpreter
  bool codelets(std::vector<Codelet>* out, uintptr_t* bufferBegin, size_t* usedBytes) const;

  // Threads: OS tid of a JavaThread*, or 0.
  int osThreadId(uintptr_t javaThread) const;

  // Method*: max_stack of its ConstMethod, or -1 (`check`: the ConstMethod is checked to be readable, a system call).
  int maxStack(uintptr_t method, bool check = true) const;
  // Method*: max_locals of its ConstMethod, or -1 (checks that a jmethodID's slot holds a Method*).
  int maxLocals(uintptr_t method) const;

  // What the VM kept of a method's runs (Method::_method_counters, _method_data, _code). HotSpot makes a
  // method's MethodCounters the first time the interpreter enters it (when it counts invocations: UseCompiler),
  // unless the method already has a MethodData (a C1 compilation that inlined it made one): the interpreter
  // counts each entry in the MethodData's invocation counter if there is one, else in the MethodCounters'.
  struct MethodRunFacts {
    bool counters = false, methodData = false, code = false;
    // entries counted in both (InvocationCounter: count << 1 | carry): every interpreted entry, and those of
    // tier-2/3 compiled code; compiled code of tier 1 and 4 counts nothing
    uint32_t invocations = 0;
  };
  bool methodRunsKnown() const {
    return methodCounters_ >= 0 && methodData_ >= 0 && methodCode_ >= 0 && mcInvocation_ >= 0 && icCounter_ >= 0 && mdoInvocation_ >= 0;
  }
  bool methodRun(uintptr_t method, MethodRunFacts* out) const;
  // Starts the loads methodRun, currentBytecodes and methodNameAndSignature make for each of `methods`, so that
  // their cache misses overlap (two passes: the Method, then what it points to).
  void prefetchMethodRuns(const std::vector<uintptr_t>& methods) const;
  // Method*: its bytecodes as they are now (the interpreter rewrites some in place the first time it runs them:
  // getfield -> fast_agetfield, ...), right after the ConstMethod; nullptr (and *length 0) when unknown.
  const uint8_t* currentBytecodes(uintptr_t method, size_t* length) const;
  // A loaded class's methods without JVMTI (GetClassMethods makes a jmethodID for every method, which METHOD_RUNS
  // at VM death does not need): the Klass* of a java.lang.Class mirror (the object a jclass handle holds), and
  // its InstanceKlass::_methods, checked to name that class as their constant pool's holder (every method until
  // `pages` is trusted, then the first). False when a field is unknown or anything does not add up.
  bool classMethodsKnown() const { return mirrorKlassOffsetAddr_ && ikMethods_ >= 0 && arrayMethodData_ >= 0 && arrayLength_ >= 0 && cmConstants_ >= 0 && cpPoolHolder_ >= 0; }
  bool classMethods(const void* classHandle, PageCheck& pages, std::vector<uintptr_t>* methods) const;
  // A Method*'s name and signature through its constant pool (false if unreadable).
  bool methodNameAndSignature(uintptr_t method, PageCheck& pages, std::string* name, std::string* signature) const;

  // A VM flag's value printed as text ("" if unknown).
  std::string flag(const char* name) const;
  // Sets a bool VM flag (only before anything reads it: Agent_OnLoad); false if not found or not a bool.
  bool setBoolFlag(const char* name, bool value) const;

 private:
  const VMStructs* vms_ = nullptr;
  // code heap
  void* heapsAddr_ = nullptr;
  void* lowBoundAddr_ = nullptr;
  void* highBoundAddr_ = nullptr;
  long gaLen_ = -1, gaData_ = -1, heapMemory_ = -1, heapSegmap_ = -1, heapLog2_ = -1, vsLow_ = -1, vsHigh_ = -1, vsHighBoundary_ = -1;
  long hbLength_ = -1, hbLengthSize_ = 0, hbUsed_ = -1, heapBlockSize_ = -1;
  // code blob
  long blobName_ = -1, blobSize_ = -1, blobCodeBegin_ = -1, blobCodeOffset_ = -1, blobKind_ = -1;
  long blobContentBegin_ = -1, blobContentOffset_ = -1, blobCodeEnd_ = -1;
  // blob name pointers already checked, an open-addressed table (0: a free slot) of the pointer with its verdict in
  // the top bit (user-space addresses leave it clear): every RuntimeStub, adapter and buffer names itself, so the
  // non-nmethod heap alone shows a few hundred pointers, each of which would otherwise cost a system call per scan
  static constexpr size_t kNameSlots = 2048;
  static constexpr uintptr_t kNmethodName = (uintptr_t)1 << 63;
  mutable std::atomic<uintptr_t> nameVerdicts_[kNameSlots] = {};
  long nmethodKind_ = -1;
  // nmethod
  long nmCompLevel_ = -1, nmCompLevelSize_ = 4, nmEntryBci_ = -1, nmCompileId_ = -1, nmStubOffset_ = -1, nmOsrEntry_ = -1;
  long nmEntryPoint_ = -1, nmVerifiedEntryPoint_ = -1, nmEntryOffset_ = -1, nmVerifiedEntryOffset_ = -1, nmMethod_ = -1;
  // interpreter
  void* interpCodeAddr_ = nullptr;
  long sqStubBuffer_ = -1, sqQueueBegin_ = -1, sqQueueEnd_ = -1, icSize_ = -1, icDescription_ = -1, icBytecode_ = -1, icHeaderSize_ = -1;
  // threads, methods
  long threadOsThread_ = -1, osThreadId_ = -1, methodConstMethod_ = -1, constMethodMaxStack_ = -1, constMethodMaxLocals_ = -1;
  // method runs
  long constMethodCodeSize_ = -1, constMethodSize_ = -1;
  // nmethod scanning (nmethods=scan)
  long nmState_ = -1, nmScopesDataBegin_ = -1, nmMetadataOffset_ = -1, nmScopesPcsOffset_ = -1, nmDependenciesOffset_ = -1;
  long pcDescSize_ = -1, pcPcOffset_ = -1, pcScopeOffset_ = -1;
  long cmConstants_ = -1, cmNameIndex_ = -1, cmSignatureIndex_ = -1, methodAccessFlags_ = -1;
  long cpPoolHolder_ = -1, cpTags_ = -1, cpLength_ = -1, cpSize_ = -1, arrayU1Data_ = -1;
  long klassName_ = -1, klassLoaderData_ = -1, cldMirrorHolder_ = -1, symLength_ = -1, symBody_ = -1;
  long invocationEntryBci_ = -1;
  bool symbolText(uintptr_t symbol, PageCheck& pages, std::string* out) const;
  bool cpSymbol(uintptr_t cp, int index, PageCheck& pages, std::string* out) const;
  long methodCounters_ = -1, methodData_ = -1, methodCode_ = -1, mcInvocation_ = -1, icCounter_ = -1, mdoInvocation_ = -1;
  // class methods
  void* sharedBaseAddr_ = nullptr;  // MetaspaceObj::_shared_metaspace_base, _top: static void*
  void* sharedTopAddr_ = nullptr;
  void* mirrorKlassOffsetAddr_ = nullptr;  // java_lang_Class::_klass_offset: a static int, the offset in the mirror
  long ikMethods_ = -1, arrayMethodData_ = -1, arrayLength_ = -1;
  // flags
  void* flagsAddr_ = nullptr;
  void* numFlagsAddr_ = nullptr;
  long flagName_ = -1, flagAddr_ = -1, flagType_ = -1, flagSize_ = -1;
  bool flagTypesKnown_ = false;  // JVMFlag::_type numbering checked against flags of known type
  uintptr_t findFlag(const char* name) const;
};

// Safe reads of VM memory: false instead of a crash when the address is not readable.
bool readable(const void* p, size_t n);

}  // namespace jportal
