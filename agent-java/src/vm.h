// HotSpot internals read through the exported VMStructs tables (offsets at run time, never hard-coded)
// and libjvm's symbol table. Every JDK 17 vs 25 difference is resolved in VmLayout::resolve().
#pragma once
#include <atomic>
#include <stdint.h>

#include <map>
#include <string>
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
  // Start of the CodeBlob containing pc, or 0.
  uintptr_t findBlob(uintptr_t pc, const std::vector<CodeHeapRange>& heaps) const;
  bool isNmethod(uintptr_t blob) const;
  bool nmethodFacts(uintptr_t blob, NmethodFacts* out) const;

  // Interpreter
  bool codelets(std::vector<Codelet>* out, uintptr_t* bufferBegin, size_t* usedBytes) const;

  // Threads: OS tid of a JavaThread*, or 0.
  int osThreadId(uintptr_t javaThread) const;

  // Method*: max_stack of its ConstMethod, or -1.
  int maxStack(uintptr_t method) const;
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
  // Method*: its bytecodes as they are now (the interpreter rewrites some in place the first time it runs them:
  // getfield -> fast_agetfield, ...), right after the ConstMethod; nullptr (and *length 0) when unknown.
  const uint8_t* currentBytecodes(uintptr_t method, size_t* length) const;

  // A VM flag's value printed as text ("" if unknown).
  std::string flag(const char* name) const;

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
  long blobContentBegin_ = -1, blobContentOffset_ = -1;
  // blob name pointers already checked: [0] names of other blobs, [1] names of nmethods (0: a free slot)
  mutable std::atomic<uintptr_t> nameVerdicts_[2][16] = {};
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
  long methodCounters_ = -1, methodData_ = -1, methodCode_ = -1, mcInvocation_ = -1, icCounter_ = -1, mdoInvocation_ = -1;
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
