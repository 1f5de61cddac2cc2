#include "vm.h"

#include <algorithm>
#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <mutex>

#include "common.h"

namespace jportal {

namespace {
// Fallback probe where process_vm_readv is unavailable (e.g. under qemu-user): write() one byte of every
// page to a pipe; the kernel (or QEMU) checks the source and fails with EFAULT when it is not readable.
bool readableByPipe(const void* p, size_t n) {
  static int fds[2] = {-1, -1};
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) fds[0] = fds[1] = -1;
  });
  if (fds[1] < 0) return false;
  const uintptr_t page = 4096;
  uintptr_t a = (uintptr_t)p, end = a + n;
  char sink[16];
  for (uintptr_t q = a; q < end; q = (q & ~(page - 1)) + page) {
    if (write(fds[1], (const void*)q, 1) != 1) return false;
    // drain what is there; another thread may have drained our byte already (EAGAIN): the write decided
    (void)!read(fds[0], sink, sizeof sink);
  }
  return true;
}
}  // namespace

bool readable(const void* p, size_t n) {
  if (!p) return false;
  static bool vmReadv = true;  // false once the kernel (or an emulator) says ENOSYS
  if (!vmReadv) return readableByPipe(p, n);
  static const pid_t self = getpid();  // the JVM never forks into a process that runs agent code
  // readability is per page: one byte of each page the range touches, up to 64 pages per system call
  constexpr size_t kPage = 4096, kBatch = 64;
  char sink[kBatch];
  struct iovec local[kBatch], remote[kBatch];
  size_t k = 0;
  const uintptr_t end = (uintptr_t)p + (n ? n : 1);
  for (uintptr_t q = (uintptr_t)p; q < end; q = (q & ~(kPage - 1)) + kPage) {
    local[k] = {sink + k, 1};
    remote[k] = {(void*)q, 1};
    k++;
    if (k == kBatch || ((q & ~(kPage - 1)) + kPage) >= end) {
      if (process_vm_readv(self, local, k, remote, k, 0) != (ssize_t)k) {
        if (errno == ENOSYS || errno == EPERM) {
          vmReadv = false;
          return readableByPipe(p, n);
        }
        return false;
      }
      k = 0;
    }
  }
  return true;
}

template <class T>
static T rd(uintptr_t base, long off) {
  T v;
  memcpy(&v, (const void*)(base + off), sizeof v);
  return v;
}

namespace {
// JVMFlag::FlagType numbering (the same in JDK 17 and 25; verified at run time against known flags)
enum FlagType { TBool = 0, TInt, TUint, TIntx, TUintx, TUint64, TSizeT, TDouble, TCcstr, TCcstrlist };
}  // namespace

// ------------------------------------------------------------------------------------------ VMStructs

bool VMStructs::init(void* anyAddressInLibjvm) {
  Dl_info info;
  if (!dladdr(anyAddressInLibjvm, &info) || !info.dli_fname) return false;
  libjvmPath_ = info.dli_fname;
  void* h = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return false;
  auto sym = [&](const char* n) -> void* { return dlsym(h, n); };
  auto u64 = [&](const char* n) -> uint64_t {
    void* p = sym(n);
    return p ? *(uint64_t*)p : 0;
  };
  char** structs = (char**)sym("gHotSpotVMStructs");
  char** types = (char**)sym("gHotSpotVMTypes");
  char** ints = (char**)sym("gHotSpotVMIntConstants");
  if (!structs || !*structs || !types || !*types) {
    dlclose(h);
    return false;
  }
  {
    uint64_t stride = u64("gHotSpotVMStructEntryArrayStride");
    uint64_t oType = u64("gHotSpotVMStructEntryTypeNameOffset"), oField = u64("gHotSpotVMStructEntryFieldNameOffset");
    uint64_t oTypeStr = u64("gHotSpotVMStructEntryTypeStringOffset"), oStatic = u64("gHotSpotVMStructEntryIsStaticOffset");
    uint64_t oOff = u64("gHotSpotVMStructEntryOffsetOffset"), oAddr = u64("gHotSpotVMStructEntryAddressOffset");
    if (stride == 0) {
      dlclose(h);
      return false;
    }
    for (char* e = *structs;; e += stride) {
      const char* tn = *(const char**)(e + oType);
      if (!tn) break;
      const char* fn = *(const char**)(e + oField);
      const char* ts = *(const char**)(e + oTypeStr);
      if (!fn) continue;
      fields_[std::string(tn) + "::" + fn] = Field{*(int32_t*)(e + oStatic) != 0, *(uint64_t*)(e + oOff), *(void**)(e + oAddr), ts ? ts : ""};
    }
  }
  {
    uint64_t stride = u64("gHotSpotVMTypeEntryArrayStride");
    uint64_t oName = u64("gHotSpotVMTypeEntryTypeNameOffset"), oSize = u64("gHotSpotVMTypeEntrySizeOffset");
    for (char* e = *types; stride;) {
      const char* tn = *(const char**)(e + oName);
      if (!tn) break;
      typeSizes_[tn] = (long)*(uint64_t*)(e + oSize);
      e += stride;
    }
  }
  if (ints && *ints) {
    uint64_t stride = u64("gHotSpotVMIntConstantEntryArrayStride");
    uint64_t oName = u64("gHotSpotVMIntConstantEntryNameOffset"), oValue = u64("gHotSpotVMIntConstantEntryValueOffset");
    for (char* e = *ints; stride;) {
      const char* n = *(const char**)(e + oName);
      if (!n) break;
      intConstants_[n] = *(int32_t*)(e + oValue);
      e += stride;
    }
  }
  dlclose(h);
  ok_ = !fields_.empty();
  return ok_;
}

long VMStructs::off(const char* k) const {
  auto it = fields_.find(k);
  return it == fields_.end() || it->second.isStatic ? -1 : (long)it->second.offset;
}
void* VMStructs::staticAddr(const char* k) const {
  auto it = fields_.find(k);
  return it == fields_.end() || !it->second.isStatic ? nullptr : it->second.address;
}
std::string VMStructs::fieldType(const char* k) const {
  auto it = fields_.find(k);
  return it == fields_.end() ? std::string() : it->second.type;
}
long VMStructs::typeSize(const char* t) const {
  auto it = typeSizes_.find(t);
  return it == typeSizes_.end() ? -1 : it->second;
}
bool VMStructs::intConstant(const char* n, long* out) const {
  auto it = intConstants_.find(n);
  if (it == intConstants_.end()) return false;
  *out = it->second;
  return true;
}

// ------------------------------------------------------------------------------------------ ELF symbols

namespace {
// Reads `n` bytes at `offset` of the file (false when short).
bool readAt(int fd, void* out, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, (char*)out + done, n - done, (off_t)(offset + done));
    if (r <= 0) return false;
    done += (size_t)r;
  }
  return true;
}
}  // namespace

std::map<std::string, ElfSymbol> lookupLibjvmSymbols(const std::string& path, const std::vector<std::string>& names) {
  std::map<std::string, ElfSymbol> found;
  Dl_info info;
  void* h = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  void* any = h ? dlsym(h, "JNI_CreateJavaVM") : nullptr;
  if (h) dlclose(h);
  if (!any || !dladdr(any, &info)) return found;
  uintptr_t base = (uintptr_t)info.dli_fbase;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return found;
  struct stat st;
  Elf64_Ehdr eh;
  std::vector<Elf64_Shdr> sh;
  bool sane = fstat(fd, &st) == 0 && readAt(fd, &eh, sizeof eh, 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_shoff > 0 &&
              eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) <= (uint64_t)st.st_size;
  if (sane) {
    sh.resize(eh.e_shnum);
    sane = readAt(fd, sh.data(), sh.size() * sizeof(Elf64_Shdr), eh.e_shoff);
  }
  // each wanted name's first 8 bytes: a symbol's name is compared in full only when they match (libjvm's .symtab
  // has ~57,000 names; comparing each in full with every wanted name took 3 ms of the VM's start-up)
  const size_t kPrefix = 8;
  for (size_t i = 0; sane && i < sh.size(); i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= sh.size()) continue;
    const Elf64_Shdr& symSec = sh[i];
    const Elf64_Shdr& strSec = sh[symSec.sh_link];
    if (symSec.sh_offset + symSec.sh_size > (uint64_t)st.st_size || strSec.sh_offset + strSec.sh_size > (uint64_t)st.st_size) continue;
    // only the symbol and string tables are mapped, not the whole library
    const uint64_t lo = std::min(symSec.sh_offset, strSec.sh_offset) & ~(uint64_t)4095;
    const uint64_t hi = std::max(symSec.sh_offset + symSec.sh_size, strSec.sh_offset + strSec.sh_size);
    const uint8_t* m = (const uint8_t*)mmap(nullptr, hi - lo, PROT_READ, MAP_PRIVATE, fd, (off_t)lo);
    if (m == MAP_FAILED) continue;
    const Elf64_Sym* syms = (const Elf64_Sym*)(m + (symSec.sh_offset - lo));
    const size_t count = symSec.sh_size / sizeof(Elf64_Sym);
    const char* strs = (const char*)(m + (strSec.sh_offset - lo));
    for (size_t k = 0; k < count; k++) {
      const uint64_t at = syms[k].st_name;
      if (at >= strSec.sh_size) continue;
      const char* nm = strs + at;
      const bool prefixReadable = at + kPrefix <= strSec.sh_size;
      for (const std::string& want : names) {
        if (want.size() >= kPrefix && prefixReadable && memcmp(nm, want.data(), kPrefix) != 0) continue;
        // the whole name and its terminating NUL, inside the table
        if (at + want.size() < strSec.sh_size && memcmp(nm, want.c_str(), want.size() + 1) == 0) found[want] = ElfSymbol{base + syms[k].st_value, (size_t)syms[k].st_size};
      }
    }
    munmap((void*)m, hi - lo);
  }
  close(fd);
  return found;
}

// ------------------------------------------------------------------------------------------ VmLayout

bool VmLayout::resolve(const VMStructs& v) {
  vms_ = &v;
  heapsAddr_ = v.staticAddr("CodeCache::_heaps");
  lowBoundAddr_ = v.staticAddr("CodeCache::_low_bound");
  highBoundAddr_ = v.staticAddr("CodeCache::_high_bound");
  gaLen_ = v.off("GrowableArrayBase::_len");
  gaData_ = v.off("GrowableArray<int>::_data");
  heapMemory_ = v.off("CodeHeap::_memory");
  heapSegmap_ = v.off("CodeHeap::_segmap");
  heapLog2_ = v.off("CodeHeap::_log2_segment_size");
  vsLow_ = v.off("VirtualSpace::_low");
  vsHigh_ = v.off("VirtualSpace::_high");
  vsHighBoundary_ = v.off("VirtualSpace::_high_boundary");
  hbLength_ = v.off("HeapBlock::Header::_length");
  std::string lt = v.fieldType("HeapBlock::Header::_length");
  hbLengthSize_ = lt == "size_t" ? 8 : 4;  // size_t on 17, uint32_t on 25
  hbUsed_ = v.off("HeapBlock::Header::_used");
  heapBlockSize_ = v.typeSize("HeapBlock");

  blobName_ = v.off("CodeBlob::_name");
  blobSize_ = v.off("CodeBlob::_size");
  blobCodeBegin_ = v.off("CodeBlob::_code_begin");    // JDK 17
  blobCodeOffset_ = v.off("CodeBlob::_code_offset");  // JDK 25
  blobCodeEnd_ = v.off("CodeBlob::_code_end");        // JDK 17
  blobKind_ = v.off("CodeBlob::_kind");               // JDK 25
  blobContentBegin_ = v.off("CodeBlob::_content_begin");    // JDK 17
  blobContentOffset_ = v.off("CodeBlob::_content_offset");  // JDK 25
  if (!v.intConstant("CodeBlobKind::Nmethod", &nmethodKind_)) nmethodKind_ = -1;

  nmCompLevel_ = v.off("nmethod::_comp_level");
  std::string cl = v.fieldType("nmethod::_comp_level");
  nmCompLevelSize_ = v.typeSize(cl.c_str()) > 0 ? v.typeSize(cl.c_str()) : 4;  // int on 17, CompLevel (1 byte) on 25
  nmEntryBci_ = v.off("nmethod::_entry_bci");
  nmCompileId_ = v.off("nmethod::_compile_id");
  nmStubOffset_ = v.off("nmethod::_stub_offset");
  nmOsrEntry_ = v.off("nmethod::_osr_entry_point");
  nmEntryPoint_ = v.off("nmethod::_entry_point");                    // 17: address
  nmVerifiedEntryPoint_ = v.off("nmethod::_verified_entry_point");   // 17: address
  nmEntryOffset_ = v.off("nmethod::_entry_offset");                  // 25: u2 from code begin
  nmVerifiedEntryOffset_ = v.off("nmethod::_verified_entry_offset"); // 25
  nmMethod_ = v.off("nmethod::_method");                             // 25
  if (nmMethod_ < 0) nmMethod_ = v.off("CompiledMethod::_method");   // 17

  interpCodeAddr_ = v.staticAddr("AbstractInterpreter::_code");
  sqStubBuffer_ = v.off("StubQueue::_stub_buffer");
  sqQueueBegin_ = v.off("StubQueue::_queue_begin");
  sqQueueEnd_ = v.off("StubQueue::_queue_end");
  icSize_ = v.off("InterpreterCodelet::_size");
  icDescription_ = v.off("InterpreterCodelet::_description");
  icBytecode_ = v.off("InterpreterCodelet::_bytecode");
  icHeaderSize_ = v.typeSize("InterpreterCodelet");

  threadOsThread_ = v.off("JavaThread::_osthread");                     // 17
  if (threadOsThread_ < 0) threadOsThread_ = v.off("Thread::_osthread");  // 25
  osThreadId_ = v.off("OSThread::_thread_id");
  methodConstMethod_ = v.off("Method::_constMethod");
  constMethodMaxStack_ = v.off("ConstMethod::_max_stack");
  constMethodMaxLocals_ = v.off("ConstMethod::_max_locals");
  constMethodCodeSize_ = v.off("ConstMethod::_code_size");
  constMethodSize_ = v.typeSize("ConstMethod");
  methodCounters_ = v.off("Method::_method_counters");
  methodData_ = v.off("Method::_method_data");
  methodCode_ = v.off("Method::_code");  // CompiledMethod* on 17, nmethod* on 25
  mcInvocation_ = v.off("MethodCounters::_invocation_counter");
  icCounter_ = v.off("InvocationCounter::_counter");
  // MethodData::_invocation_counter is not in VMStructs. On 17 and 25 it is the first of four 4-byte fields before
  // _tenure_traps (_invocation_counter, _backedge_counter, _invocation_counter_start, _backedge_counter_start):
  // measured, a method called 1000 times reads 256 in its MethodCounters and 744 there on both
  long tenure = v.off("MethodData::_tenure_traps");
  if (tenure >= 16 && v.typeSize("InvocationCounter") == 4) mdoInvocation_ = tenure - 16;
  mirrorKlassOffsetAddr_ = v.staticAddr("java_lang_Class::_klass_offset");
  sharedBaseAddr_ = v.staticAddr("MetaspaceObj::_shared_metaspace_base");
  sharedTopAddr_ = v.staticAddr("MetaspaceObj::_shared_metaspace_top");
  ikMethods_ = v.off("InstanceKlass::_methods");
  arrayMethodData_ = v.off("Array<Method*>::_data");
  arrayLength_ = v.off("Array<int>::_length");  // the same first field of every Array<T>

  nmState_ = v.off("nmethod::_state");
  nmScopesDataBegin_ = v.off("CompiledMethod::_scopes_data_begin");  // 17 (25: in the immutable data)
  nmMetadataOffset_ = v.off("nmethod::_metadata_offset");            // 17 (25: not in VMStructs)
  nmScopesPcsOffset_ = v.off("nmethod::_scopes_pcs_offset");
  nmDependenciesOffset_ = v.off("nmethod::_dependencies_offset");
  pcDescSize_ = v.typeSize("PcDesc");
  pcPcOffset_ = v.off("PcDesc::_pc_offset");
  pcScopeOffset_ = v.off("PcDesc::_scope_decode_offset");
  cmConstants_ = v.off("ConstMethod::_constants");
  cmNameIndex_ = v.off("ConstMethod::_name_index");
  cmSignatureIndex_ = v.off("ConstMethod::_signature_index");
  methodAccessFlags_ = v.off("Method::_access_flags");
  cpPoolHolder_ = v.off("ConstantPool::_pool_holder");
  cpTags_ = v.off("ConstantPool::_tags");
  cpLength_ = v.off("ConstantPool::_length");
  cpSize_ = v.typeSize("ConstantPool");
  arrayU1Data_ = v.off("Array<u1>::_data");
  klassName_ = v.off("Klass::_name");
  klassLoaderData_ = v.off("Klass::_class_loader_data");
  cldMirrorHolder_ = v.off("ClassLoaderData::_has_class_mirror_holder");
  symLength_ = v.off("Symbol::_length");
  symBody_ = v.off("Symbol::_body");
  if (!v.intConstant("InvocationEntryBci", &invocationEntryBci_)) invocationEntryBci_ = -1;

  flagsAddr_ = v.staticAddr("JVMFlag::flags");
  numFlagsAddr_ = v.staticAddr("JVMFlag::numFlags");
  flagName_ = v.off("JVMFlag::_name");
  flagAddr_ = v.off("JVMFlag::_addr");
  flagType_ = v.off("JVMFlag::_type");
  flagSize_ = v.typeSize("JVMFlag");
  if (flagType_ >= 0) {
    // trust JVMFlag::_type's numbering only if flags of known type carry the expected numbers
    // (flags whose declared type is the same on 17 and 25; UseAVX, for one, is intx on 17 but int on 25)
    uintptr_t b = findFlag("UseCompressedOops"), x = findFlag("CodeEntryAlignment"), z = findFlag("MaxHeapSize");
    flagTypesKnown_ = b && x && z && rd<int>(b, flagType_) == TBool && rd<int>(x, flagType_) == TIntx && rd<int>(z, flagType_) == TSizeT;
  }
  if (flagsAddr_ == nullptr || flagName_ < 0 || flagAddr_ < 0 || flagSize_ <= 0)
    warnOnce("layout-flags", "vmstructs", "JVMFlag fields missing: VM_INFO has no flags and codelet code starts are unknown");
  else if (!flagTypesKnown_)
    warnOnce("layout-flag-types", "vmstructs", "JVMFlag::_type numbering unexpected: only flags of known type are recorded");

  bool heapsOk = heapsAddr_ && gaLen_ >= 0 && gaData_ >= 0 && heapMemory_ >= 0 && heapSegmap_ >= 0 && heapLog2_ >= 0 && vsLow_ >= 0 &&
                 vsHigh_ >= 0 && hbLength_ >= 0 && hbUsed_ >= 0 && heapBlockSize_ > 0;
  if (!heapsOk) warnOnce("layout-heaps", "vmstructs", "code heap fields missing: nmethod tier/OSR/entry points are not recorded");
  if (blobCodeBegin_ < 0 && blobCodeOffset_ < 0) warnOnce("layout-blob", "vmstructs", "CodeBlob code offsets missing");
  if (threadOsThread_ < 0 || osThreadId_ < 0) warnOnce("layout-thread", "vmstructs", "thread fields missing: OS tids of threads started before the agent are unknown");
  return heapsOk;
}

std::vector<CodeHeapRange> VmLayout::codeHeaps() const {
  std::vector<CodeHeapRange> out;
  if (!heapsAddr_ || gaLen_ < 0 || gaData_ < 0 || heapMemory_ < 0) return out;
  uintptr_t ga = *(uintptr_t*)heapsAddr_;
  if (!ga) return out;
  int len = rd<int>(ga, gaLen_);
  uintptr_t data = rd<uintptr_t>(ga, gaData_);
  if (len <= 0 || len > 16 || !data) return out;
  for (int i = 0; i < len; i++) {
    uintptr_t heap = ((uintptr_t*)data)[i];
    if (!heap) continue;
    CodeHeapRange r;
    r.heap = heap;
    r.low = rd<uintptr_t>(heap, heapMemory_ + vsLow_);
    r.committedHigh = rd<uintptr_t>(heap, heapMemory_ + vsHigh_);
    r.high = vsHighBoundary_ >= 0 ? rd<uintptr_t>(heap, heapMemory_ + vsHighBoundary_) : r.committedHigh;
    r.segmap = (const uint8_t*)rd<uintptr_t>(heap, heapSegmap_ + vsLow_);
    r.log2Segment = rd<int>(heap, heapLog2_);
    if (r.low && r.committedHigh > r.low && r.segmap && r.log2Segment > 0 && r.log2Segment < 16) out.push_back(r);
  }
  return out;
}

bool VmLayout::inCommittedCode(uintptr_t p, size_t n) const {
  for (const CodeHeapRange& h : codeHeaps())
    if (p >= h.low && p <= h.committedHigh && n <= h.committedHigh - p) return true;
  return false;
}

void VmLayout::codeBounds(uintptr_t* low, uintptr_t* high) const {
  *low = lowBoundAddr_ ? *(uintptr_t*)lowBoundAddr_ : 0;
  *high = highBoundAddr_ ? *(uintptr_t*)highBoundAddr_ : 0;
}

uintptr_t VmLayout::findBlob(uintptr_t pc, const std::vector<CodeHeapRange>& heaps) const {
  for (const CodeHeapRange& h : heaps) {
    if (pc < h.low || pc >= h.committedHigh) continue;
    size_t idx = (pc - h.low) >> h.log2Segment;
    const uint8_t* sm = h.segmap;
    if (sm[idx] == 0xFF) return 0;  // free segment
    // segmap holds distances back to the block start (in segments), each hop at most 0xFE
    for (int hops = 0; sm[idx] > 0; hops++) {
      if (hops > (1 << 20) || sm[idx] > idx) return 0;
      idx -= sm[idx];
    }
    uintptr_t block = h.low + (idx << h.log2Segment);
    if (!rd<bool>(block, hbUsed_)) return 0;
    return block + heapBlockSize_;
  }
  return 0;
}

bool VmLayout::blockInUse(uintptr_t blob) const { return blockHeaderKnown() && rd<bool>(blob - heapBlockSize_, hbUsed_); }

bool VmLayout::isNmethod(uintptr_t blob) const {
  if (blobKind_ >= 0 && nmethodKind_ >= 0) return rd<uint8_t>(blob, blobKind_) == (uint8_t)nmethodKind_;
  if (blobName_ < 0) return false;
  const char* name = rd<const char*>(blob, blobName_);
  if (!name) return false;
  // a blob's name is one of a few hundred strings of libjvm: each pointer is checked (a system call) once,
  // since the nmethod scan asks this for every block of the code heaps many times a second
  const uintptr_t key = (uintptr_t)name;
  if (key & kNmethodName) return false;  // not a user-space address
  size_t at = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 53) & (kNameSlots - 1);
  for (size_t probe = 0; probe < kNameSlots; probe++, at = (at + 1) & (kNameSlots - 1)) {
    uintptr_t v = nameVerdicts_[at].load(std::memory_order_relaxed);
    if (v == 0) break;
    if ((v & ~kNmethodName) == key) return (v & kNmethodName) != 0;
  }
  bool yes = readable(name, 8) && (strcmp(name, "nmethod") == 0 || strcmp(name, "native nmethod") == 0);
  // a race only checks a pointer twice (and may take two slots); a full table only costs the check
  const uintptr_t entry = key | (yes ? kNmethodName : 0);
  for (size_t probe = 0; probe < kNameSlots; probe++, at = (at + 1) & (kNameSlots - 1)) {
    uintptr_t expected = 0;
    if (nameVerdicts_[at].compare_exchange_strong(expected, entry, std::memory_order_relaxed) || expected == entry) break;
  }
  return yes;
}

bool VmLayout::nmethodFacts(uintptr_t blob, NmethodFacts* f) const {
  if (!blob || !isNmethod(blob)) return false;
  f->blob = blob;
  if (blobCodeBegin_ >= 0) f->instsBegin = rd<uintptr_t>(blob, blobCodeBegin_);
  else if (blobCodeOffset_ >= 0) f->instsBegin = blob + rd<int>(blob, blobCodeOffset_);
  if (nmStubOffset_ >= 0) f->stubBegin = blob + rd<int>(blob, nmStubOffset_);
  if (blobContentBegin_ >= 0) f->constsBegin = rd<uintptr_t>(blob, blobContentBegin_);
  else if (blobContentOffset_ >= 0) f->constsBegin = blob + rd<int>(blob, blobContentOffset_);
  if (nmEntryPoint_ >= 0) f->entry = rd<uintptr_t>(blob, nmEntryPoint_);
  else if (nmEntryOffset_ >= 0 && f->instsBegin) f->entry = f->instsBegin + rd<uint16_t>(blob, nmEntryOffset_);
  if (nmVerifiedEntryPoint_ >= 0) f->verifiedEntry = rd<uintptr_t>(blob, nmVerifiedEntryPoint_);
  else if (nmVerifiedEntryOffset_ >= 0 && f->instsBegin) f->verifiedEntry = f->instsBegin + rd<uint16_t>(blob, nmVerifiedEntryOffset_);
  if (nmOsrEntry_ >= 0) f->osrEntry = rd<uintptr_t>(blob, nmOsrEntry_);
  if (nmMethod_ >= 0) f->method = rd<uintptr_t>(blob, nmMethod_);
  if (nmCompileId_ >= 0) f->compileId = rd<int>(blob, nmCompileId_);
  if (nmCompLevel_ >= 0) f->level = nmCompLevelSize_ == 1 ? rd<int8_t>(blob, nmCompLevel_) : rd<int>(blob, nmCompLevel_);
  if (nmEntryBci_ >= 0) f->entryBci = rd<int>(blob, nmEntryBci_);
  if (f->entryBci < 0) {
    f->entryBci = -1;  // InvocationEntryBci
    f->osrEntry = 0;   // only OSR nmethods have a meaningful OSR entry
  }
  return true;
}


bool PageCheck::ok(uintptr_t p, size_t n) {
  constexpr uintptr_t kPage = 4096;
  if (!p) return false;
  if (trusted_) return true;
  for (uintptr_t q = p & ~(kPage - 1); q < p + n; q += kPage) {
    if (permanent_ && permanent_->contains(q)) continue;
    bool known = false;
    for (uintptr_t g : good_)
      if (g == q) {
        known = true;
        break;
      }
    if (known) continue;
    syscalls_++;
    if (!readable((const void*)q, 1)) return false;
    if (permanent_ && permanent_->inShared(q)) permanent_->add(q);
    else if (good_.size() < 4096) good_.push_back(q);
  }
  return true;
}

void PageCheck::makePermanent(size_t mark) {
  if (!permanent_) return;
  for (size_t i = mark; i < good_.size(); i++) permanent_->add(good_[i]);
}

bool VmLayout::nmethodScanKnown() const {
  return heapsAddr_ && blobCodeEnd_ >= 0 && hbLength_ >= 0 && hbUsed_ >= 0 && heapBlockSize_ > 0 && blobSize_ >= 0 && blobCodeBegin_ >= 0 && nmMethod_ >= 0 &&
         nmCompileId_ >= 0 && nmState_ >= 0 && nmScopesDataBegin_ >= 0 && nmMetadataOffset_ >= 0 && nmScopesPcsOffset_ >= 0 &&
         nmDependenciesOffset_ >= 0 && pcDescSize_ > 0 && pcPcOffset_ >= 0 && pcScopeOffset_ >= 0 && methodConstMethod_ >= 0 &&
         cmConstants_ >= 0 && cmNameIndex_ >= 0 && cmSignatureIndex_ >= 0 && methodAccessFlags_ >= 0 && cpPoolHolder_ >= 0 && cpTags_ >= 0 &&
         cpLength_ >= 0 && cpSize_ > 0 && arrayU1Data_ >= 0 && klassName_ >= 0 && klassLoaderData_ >= 0 && symLength_ >= 0 && symBody_ >= 0;
}

void VmLayout::nmethodBlobs(const std::vector<CodeHeapRange>& heaps, std::vector<uintptr_t>* out) const {
  std::vector<uintptr_t> blocks;
  // CodeCache::_heaps is in code blob type order, not address order
  std::vector<const CodeHeapRange*> byAddress;
  for (const CodeHeapRange& h : heaps) byAddress.push_back(&h);
  std::sort(byAddress.begin(), byAddress.end(), [](const CodeHeapRange* x, const CodeHeapRange* y) { return x->low < y->low; });
  for (const CodeHeapRange* heap : byAddress) {
    const CodeHeapRange& h = *heap;
    // The segment map marks each block's first segment 0 (the others count the segments back to it, and a free
    // block joined to the free block on its left is marked as part of it): the block starts come from one pass over
    // the map, not from a chase through the blocks' headers, so that their headers can be read independently
    // of one another. (The map is committed with the heap, a byte per segment.)
    const size_t segments = (h.committedHigh - h.low) >> h.log2Segment;
    const uint8_t* sm = h.segmap;
    blocks.clear();
    for (const uint8_t *p = sm, *end = sm + segments; p < end && (p = (const uint8_t*)memchr(p, 0, (size_t)(end - p))) != nullptr; p++)
      blocks.push_back(h.low + ((uintptr_t)(p - sm) << h.log2Segment));
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < blocks.size(); i++) {
      // the block's header and, a line further on, the blob's kind or name: two independent misses per block
      if (i + kAhead < blocks.size()) {
        __builtin_prefetch((const void*)blocks[i + kAhead]);
        __builtin_prefetch((const void*)(blocks[i + kAhead] + heapBlockSize_ + (blobKind_ >= 0 ? blobKind_ : blobName_ >= 0 ? blobName_ : 0)));
      }
      uintptr_t block = blocks[i];
      // a block being split or joined right now may show a start that is not one: it is no used nmethod, or
      // a later check of the blob (callers read it again) finds that it is not
      if (block + heapBlockSize_ > h.committedHigh || !rd<bool>(block, hbUsed_)) continue;
      uint64_t length = hbLengthSize_ == 8 ? rd<uint64_t>(block, hbLength_) : rd<uint32_t>(block, hbLength_);
      if (length == 0 || length > (uint64_t)(h.committedHigh - block) >> h.log2Segment) continue;
      if (isNmethod(block + heapBlockSize_)) out->push_back(block + heapBlockSize_);
    }
  }
}

int VmLayout::nmethodCompileId(uintptr_t blob) const { return nmCompileId_ >= 0 ? rd<int>(blob, nmCompileId_) : -1; }

int VmLayout::nmethodState(uintptr_t blob) const { return nmState_ >= 0 ? rd<int8_t>(blob, nmState_) : -100; }

namespace {
// HotSpot's CompressedReadStream::read_int (JDK 17): one to five bytes; a byte below 192 ends the number, each
// further byte adds its value shifted by 6 more bits.
bool readCompressedInt(const uint8_t* p, size_t len, size_t* pos, int32_t* out) {
  if (*pos >= len) return false;
  uint32_t b = p[(*pos)++];
  uint32_t sum = b;
  for (int i = 1, shift = 6; b >= 192 && i <= 4; i++, shift += 6) {
    if (*pos >= len) return false;
    b = p[(*pos)++];
    sum += b << shift;
  }
  *out = (int32_t)sum;
  return true;
}
}  // namespace

bool VmLayout::nmethodScopes(uintptr_t blob, uintptr_t instsBegin, NmethodScopes* out) const {
  const uintptr_t end = blob + (uintptr_t)rd<int>(blob, blobSize_);
  const uintptr_t sdBegin = rd<uintptr_t>(blob, nmScopesDataBegin_);
  const uintptr_t pcsBegin = blob + rd<int>(blob, nmScopesPcsOffset_), pcsEnd = blob + rd<int>(blob, nmDependenciesOffset_);
  const uintptr_t mdBegin = blob + rd<int>(blob, nmMetadataOffset_), mdEnd = sdBegin;
  if (!(blob < mdBegin && mdBegin <= mdEnd && mdEnd <= pcsBegin && pcsBegin <= pcsEnd && pcsEnd <= end)) return false;
  if ((pcsEnd - pcsBegin) % (uintptr_t)pcDescSize_ != 0 || (mdEnd - mdBegin) % sizeof(uintptr_t) != 0) return false;
  const uint8_t* sd = (const uint8_t*)sdBegin;
  const size_t sdLen = pcsBegin - sdBegin;
  const uintptr_t* md = (const uintptr_t*)mdBegin;
  const size_t mdCount = (mdEnd - mdBegin) / sizeof(uintptr_t);
  for (uintptr_t p = pcsBegin; p < pcsEnd; p += pcDescSize_) {
    int32_t scope = rd<int32_t>(p, pcScopeOffset_);
    if (scope == 0) continue;  // DebugInformationRecorder::serialized_null: no scope (JVMTI skips these too)
    uint32_t frames = 0;
    for (int32_t off = scope; off != 0; frames++) {
      int32_t sender = 0, index = 0, bci = 0;
      size_t pos = (size_t)off;
      if (off < 0 || (size_t)off >= sdLen || frames >= 256) return false;
      if (!readCompressedInt(sd, sdLen, &pos, &sender) || !readCompressedInt(sd, sdLen, &pos, &index) || !readCompressedInt(sd, sdLen, &pos, &bci))
        return false;
      // metadata_at(index): 1-based, 0 is null
      if (index <= 0 || (size_t)index > mdCount || !md[index - 1]) return false;
      out->methods.push_back(md[index - 1]);
      out->bcis.push_back(bci + (int32_t)invocationEntryBci_);
      off = sender;
    }
    out->pcs.push_back(instsBegin + rd<int32_t>(p, pcPcOffset_));
    out->frameCounts.push_back(frames);
  }
  return true;
}

bool VmLayout::sharedMetaspace(uintptr_t* low, uintptr_t* high) const {
  if (!sharedBaseAddr_ || !sharedTopAddr_) return false;
  *low = *(const uintptr_t*)sharedBaseAddr_;
  *high = *(const uintptr_t*)sharedTopAddr_;
  return *low && *high > *low;
}

uintptr_t VmLayout::constMethodOf(uintptr_t method) const { return rd<uintptr_t>(method, methodConstMethod_); }

uintptr_t VmLayout::codeEnd(uintptr_t blob) const { return blobCodeEnd_ >= 0 ? rd<uintptr_t>(blob, blobCodeEnd_) : 0; }

bool VmLayout::symbolText(uintptr_t symbol, PageCheck& pages, std::string* out) const {
  if (!pages.ok(symbol, symBody_)) return false;
  uint16_t len = rd<uint16_t>(symbol, symLength_);
  if (!pages.ok(symbol + symBody_, len)) return false;
  out->assign((const char*)(symbol + symBody_), len);
  return true;
}

bool VmLayout::cpSymbol(uintptr_t cp, int index, PageCheck& pages, std::string* out) const {
  int len = rd<int>(cp, cpLength_);
  if (index <= 0 || index >= len) return false;
  uintptr_t tags = rd<uintptr_t>(cp, cpTags_);
  constexpr uint8_t kUtf8 = 1;  // JVM_CONSTANT_Utf8
  if (!pages.ok(tags + arrayU1Data_ + index, 1) || rd<uint8_t>(tags, arrayU1Data_ + index) != kUtf8) return false;
  uintptr_t slot = cp + cpSize_ + (uintptr_t)index * sizeof(uintptr_t);
  if (!pages.ok(slot, sizeof(uintptr_t))) return false;
  return symbolText(rd<uintptr_t>(slot, 0), pages, out);
}

uintptr_t VmLayout::loaderDataOf(uintptr_t method, PageCheck& pages, bool* own) const {
  *own = false;
  if (methodConstMethod_ < 0 || cmConstants_ < 0 || cpPoolHolder_ < 0 || klassLoaderData_ < 0) return 0;
  if (!pages.ok(method + methodConstMethod_, sizeof(uintptr_t))) return 0;
  uintptr_t cm = rd<uintptr_t>(method, methodConstMethod_);
  if (!pages.ok(cm + cmConstants_, sizeof(uintptr_t))) return 0;
  uintptr_t cp = rd<uintptr_t>(cm, cmConstants_);
  if (!pages.ok(cp + cpPoolHolder_, sizeof(uintptr_t))) return 0;
  uintptr_t holder = rd<uintptr_t>(cp, cpPoolHolder_);
  if (!pages.ok(holder + klassLoaderData_, sizeof(uintptr_t))) return 0;
  uintptr_t cld = rd<uintptr_t>(holder, klassLoaderData_);
  *own = cld && cldMirrorHolder_ >= 0 && pages.ok(cld + cldMirrorHolder_, 1) && rd<bool>(cld, cldMirrorHolder_);
  return cld;
}

bool VmLayout::methodNaming(uintptr_t method, PageCheck& pages, MethodNaming* m) const {
  if (!pages.ok(method, methodAccessFlags_ + 4) || !pages.ok(method, methodConstMethod_ + sizeof(uintptr_t))) return false;
  m->constMethod = rd<uintptr_t>(method, methodConstMethod_);
  m->modifiers = rd<uint32_t>(method, methodAccessFlags_) & 0x1DFF;  // JVM_RECOGNIZED_METHOD_MODIFIERS, as GetMethodModifiers
  long cmEnd = std::max(cmConstants_ + 8, std::max(cmNameIndex_, cmSignatureIndex_) + 2);
  if (!pages.ok(m->constMethod, cmEnd)) return false;
  uintptr_t cp = rd<uintptr_t>(m->constMethod, cmConstants_);
  if (!pages.ok(cp, cpSize_)) return false;
  m->holder = rd<uintptr_t>(cp, cpPoolHolder_);
  if (!cpSymbol(cp, rd<uint16_t>(m->constMethod, cmNameIndex_), pages, &m->name) ||
      !cpSymbol(cp, rd<uint16_t>(m->constMethod, cmSignatureIndex_), pages, &m->signature))
    return false;
  if (!pages.ok(m->holder, std::max(klassName_, klassLoaderData_) + 8)) return false;
  if (!symbolText(rd<uintptr_t>(m->holder, klassName_), pages, &m->className)) return false;
  // a hidden class's Symbol is "Foo+0x0000000800c01000"; JVMTI (and our CLASS records) print "Foo.0x..."
  size_t plus = m->className.rfind("+0x");
  if (plus != std::string::npos && m->className.find_first_not_of("0123456789abcdef", plus + 3) == std::string::npos) m->className[plus] = '.';
  m->loaderData = rd<uintptr_t>(m->holder, klassLoaderData_);
  m->ownLoaderData = cldMirrorHolder_ >= 0 && m->loaderData && pages.ok(m->loaderData + cldMirrorHolder_, 1) && rd<bool>(m->loaderData, cldMirrorHolder_);
  return true;
}

bool VmLayout::codelets(std::vector<Codelet>* out, uintptr_t* bufferBegin, size_t* usedBytes) const {
  if (!interpCodeAddr_ || sqStubBuffer_ < 0 || sqQueueBegin_ < 0 || sqQueueEnd_ < 0 || icSize_ < 0 || icDescription_ < 0 || icBytecode_ < 0 || icHeaderSize_ <= 0)
    return false;
  uintptr_t queue = *(uintptr_t*)interpCodeAddr_;
  if (!queue) return false;
  std::string alignText = flag("CodeEntryAlignment");
  long align = alignText.empty() ? 0 : atol(alignText.c_str());
  if (align <= 0 || (align & (align - 1)) != 0) return false;
  uintptr_t buf = rd<uintptr_t>(queue, sqStubBuffer_);
  int qb = rd<int>(queue, sqQueueBegin_), qe = rd<int>(queue, sqQueueEnd_);
  if (!buf || qb < 0 || qe <= qb) return false;
  *bufferBegin = buf;
  *usedBytes = (size_t)qe;
  for (uintptr_t p = buf + qb; p < buf + qe;) {
    int size = rd<int>(p, icSize_);
    if (size <= 0 || p + size > buf + (uintptr_t)qe) return false;
    // code begins at the codelet header's end aligned to CodeEntryAlignment (true on 17 and 25)
    uintptr_t begin = (p + icHeaderSize_ + align - 1) & ~(uintptr_t)(align - 1);
    out->push_back(Codelet{begin, p + size, rd<int>(p, icBytecode_), rd<const char*>(p, icDescription_)});
    p += size;
  }
  return true;
}

int VmLayout::osThreadId(uintptr_t javaThread) const {
  if (!javaThread || threadOsThread_ < 0 || osThreadId_ < 0) return 0;
  uintptr_t os = rd<uintptr_t>(javaThread, threadOsThread_);
  if (!os || !readable((void*)(os + osThreadId_), 4)) return 0;
  return rd<int>(os, osThreadId_);
}

int VmLayout::maxStack(uintptr_t method, bool check) const {
  if (!method || methodConstMethod_ < 0 || constMethodMaxStack_ < 0) return -1;
  uintptr_t cm = rd<uintptr_t>(method, methodConstMethod_);
  if (!cm || (check && !readable((void*)(cm + constMethodMaxStack_), 2))) return -1;
  return rd<uint16_t>(cm, constMethodMaxStack_);
}

int VmLayout::maxLocals(uintptr_t method) const {
  if (!method || methodConstMethod_ < 0 || constMethodMaxLocals_ < 0 || !readable((void*)(method + methodConstMethod_), sizeof(uintptr_t))) return -1;
  uintptr_t cm = rd<uintptr_t>(method, methodConstMethod_);
  if (!cm || !readable((void*)(cm + constMethodMaxLocals_), 2)) return -1;
  return rd<uint16_t>(cm, constMethodMaxLocals_);
}

const uint8_t* VmLayout::currentBytecodes(uintptr_t method, size_t* length) const {
  *length = 0;
  if (!method || methodConstMethod_ < 0 || constMethodCodeSize_ < 0 || constMethodSize_ <= 0) return nullptr;
  uintptr_t cm = rd<uintptr_t>(method, methodConstMethod_);
  if (!cm) return nullptr;
  *length = rd<uint16_t>(cm, constMethodCodeSize_);
  return (const uint8_t*)(cm + constMethodSize_);  // ConstMethod::code_base(): the bytecodes follow the header
}

bool VmLayout::methodRun(uintptr_t method, MethodRunFacts* out) const {
  if (!method || !methodRunsKnown()) return false;
  uintptr_t mc = rd<uintptr_t>(method, methodCounters_);
  uintptr_t mdo = rd<uintptr_t>(method, methodData_);
  out->counters = mc != 0;
  out->methodData = mdo != 0;
  out->code = rd<uintptr_t>(method, methodCode_) != 0;
  out->invocations = 0;
  // (no readable() checks: each is a system call, and the pointers are the VM's own, set once and kept)
  if (mc) out->invocations = rd<uint32_t>(mc, mcInvocation_ + icCounter_) >> 1;  // the low bit is the sticky carry
  if (mdo) out->invocations += rd<uint32_t>(mdo, mdoInvocation_ + icCounter_) >> 1;
  return true;
}

void VmLayout::prefetchMethodRuns(const std::vector<uintptr_t>& methods) const {
  if (!methodRunsKnown() || methodConstMethod_ < 0) return;
  for (uintptr_t m : methods) {
    __builtin_prefetch((const void*)(m + methodCounters_));
    __builtin_prefetch((const void*)(m + methodConstMethod_));
  }
  for (uintptr_t m : methods) {
    uintptr_t mc = rd<uintptr_t>(m, methodCounters_), mdo = rd<uintptr_t>(m, methodData_), cm = rd<uintptr_t>(m, methodConstMethod_);
    if (mc) __builtin_prefetch((const void*)(mc + mcInvocation_ + icCounter_));
    if (mdo) __builtin_prefetch((const void*)(mdo + mdoInvocation_ + icCounter_));
    if (cm) __builtin_prefetch((const void*)(cm + cmConstants_));
  }
}

bool VmLayout::klassMethodArray(uintptr_t klass, PageCheck& pages, const uintptr_t** data, int* count) const {
  if (!klass || ikMethods_ < 0 || arrayLength_ < 0 || arrayMethodData_ < 0 || !pages.ok(klass + ikMethods_, sizeof(uintptr_t))) return false;
  uintptr_t array = rd<uintptr_t>(klass, ikMethods_);
  if (!array || !pages.ok(array + arrayLength_, sizeof(int))) return false;
  int n = rd<int>(array, arrayLength_);
  if (n < 0 || n > 65535 || !pages.ok(array + arrayMethodData_, (size_t)n * sizeof(uintptr_t))) return false;
  *data = (const uintptr_t*)(array + arrayMethodData_);
  *count = n;
  return true;
}

bool VmLayout::klassHasMethod(uintptr_t klass, uintptr_t method, PageCheck& pages) const {
  const uintptr_t* ms = nullptr;
  int n = 0;
  if (!klassMethodArray(klass, pages, &ms, &n)) return false;
  for (int i = 0; i < n; i++)
    if (ms[i] == method) return true;
  return false;
}

bool VmLayout::classMethods(const void* classHandle, PageCheck& pages, std::vector<uintptr_t>* methods) const {
  methods->clear();
  if (!classHandle || !classMethodsKnown()) return false;
  // a local JNI handle is a slot holding the oop (a global or weak one is tagged in its low bits: masked off)
  uintptr_t slot = (uintptr_t)classHandle & ~(uintptr_t)3;
  if (!pages.ok(slot, sizeof(uintptr_t))) return false;
  uintptr_t mirror = rd<uintptr_t>(slot, 0);
  int klassOffset = *(const int*)mirrorKlassOffsetAddr_;
  if (!mirror || klassOffset <= 0 || !pages.ok(mirror + klassOffset, sizeof(uintptr_t))) return false;
  uintptr_t klass = rd<uintptr_t>(mirror, klassOffset);  // Klass* (a metadata field: never compressed)
  const uintptr_t* ms = nullptr;
  int n = 0;
  if (!klassMethodArray(klass, pages, &ms, &n)) return false;
  methods->reserve((size_t)n);
  for (int i = 0; i < n; i++) {
    if (!ms[i]) return false;
    methods->push_back(ms[i]);
  }
  // the methods' constant pool names this class as its holder, or the reads went astray: every method while the
  // reads are checked page by page, then the first of each class (each check is three dependent cache misses)
  for (size_t i = 0; i < methods->size() && (i == 0 || !pages.trusted()); i++) {
    uintptr_t m = (*methods)[i];
    if (!pages.ok(m + methodConstMethod_, sizeof(uintptr_t))) return false;
    uintptr_t cm = rd<uintptr_t>(m, methodConstMethod_);
    if (!cm || !pages.ok(cm + cmConstants_, sizeof(uintptr_t))) return false;
    uintptr_t cp = rd<uintptr_t>(cm, cmConstants_);
    if (!cp || !pages.ok(cp + cpPoolHolder_, sizeof(uintptr_t)) || rd<uintptr_t>(cp, cpPoolHolder_) != klass) return false;
  }
  return true;
}

bool VmLayout::methodNameAndSignature(uintptr_t method, PageCheck& pages, std::string* name, std::string* signature) const {
  if (methodConstMethod_ < 0 || cmConstants_ < 0 || cmNameIndex_ < 0 || cmSignatureIndex_ < 0 || cpLength_ < 0 || cpTags_ < 0 || cpSize_ <= 0)
    return false;
  uintptr_t cm = rd<uintptr_t>(method, methodConstMethod_);
  long cmEnd = std::max(cmConstants_ + 8, std::max(cmNameIndex_, cmSignatureIndex_) + 2);
  if (!cm || !pages.ok(cm, cmEnd)) return false;
  uintptr_t cp = rd<uintptr_t>(cm, cmConstants_);
  if (!cp || !pages.ok(cp, cpSize_)) return false;
  return cpSymbol(cp, rd<uint16_t>(cm, cmNameIndex_), pages, name) && cpSymbol(cp, rd<uint16_t>(cm, cmSignatureIndex_), pages, signature);
}

namespace {
// Fallback when JVMFlag::_type cannot be trusted: flags that matter to decoding, with their declared types.
// Where 17 and 25 differ the narrower read is used: UseAVX is intx on 17 and int on 25 (little-endian, its
// small value reads the same as int); ReservedCodeCacheSize is uintx on 17 and size_t on 25 (both 8 bytes).
const struct {
  const char* name;
  int type;
} kKnownFlags[] = {
    {"CodeEntryAlignment", TIntx},  {"OptoLoopAlignment", TIntx},         {"InteriorEntryAlignment", TIntx},
    {"UseCompressedOops", TBool},   {"UseCompressedClassPointers", TBool}, {"SegmentedCodeCache", TBool},
    {"TieredCompilation", TBool},   {"ReservedCodeCacheSize", TUintx},    {"UseAVX", TInt},
    {"TieredStopAtLevel", TIntx},   {"UseCodeCacheFlushing", TBool},      {"UseSerialGC", TBool},
    {"UseG1GC", TBool},             {"UseParallelGC", TBool},             {"UseZGC", TBool},
    {"UseShenandoahGC", TBool},     {"UseCountedLoopSafepoints", TBool},  {"BackgroundCompilation", TBool},
    {"UseCompiler", TBool},
};
int knownFlagType(const char* name) {
  for (const auto& k : kKnownFlags)
    if (strcmp(k.name, name) == 0) return k.type;
  return -1;
}
}  // namespace

uintptr_t VmLayout::findFlag(const char* name) const {
  if (!flagsAddr_ || !numFlagsAddr_ || flagName_ < 0 || flagAddr_ < 0 || flagSize_ <= 0) return 0;
  uintptr_t flags = *(uintptr_t*)flagsAddr_;
  size_t n = *(size_t*)numFlagsAddr_;
  if (!flags || n > 100000) return 0;
  for (size_t i = 0; i < n; i++) {
    uintptr_t f = flags + i * flagSize_;
    const char* nm = rd<const char*>(f, flagName_);
    if (nm && strcmp(nm, name) == 0) return f;
  }
  return 0;
}

std::string VmLayout::flag(const char* name) const {
  uintptr_t f = findFlag(name);
  if (!f) return "";
  uintptr_t addr = rd<uintptr_t>(f, flagAddr_);
  if (!addr) return "";
  // JVMFlag::_type when its numbering checked out; otherwise the type the flag is known to have
  int type = flagTypesKnown_ ? rd<int>(f, flagType_) : knownFlagType(name);
  char buf[64];
  switch (type) {
    case TBool: return *(bool*)addr ? "true" : "false";
    case TInt: snprintf(buf, sizeof buf, "%d", *(int*)addr); return buf;
    case TUint: snprintf(buf, sizeof buf, "%u", *(unsigned*)addr); return buf;
    case TIntx: snprintf(buf, sizeof buf, "%ld", *(long*)addr); return buf;
    case TUintx: case TUint64: case TSizeT: snprintf(buf, sizeof buf, "%lu", *(unsigned long*)addr); return buf;
    case TDouble: snprintf(buf, sizeof buf, "%g", *(double*)addr); return buf;
    case TCcstr: case TCcstrlist: {
      const char* s = *(const char**)addr;
      return s && readable(s, 1) ? s : "";
    }
    default: return "";
  }
}

bool VmLayout::setBoolFlag(const char* name, bool value) const {
  uintptr_t f = findFlag(name);
  if (!f || !flagTypesKnown_ || rd<int>(f, flagType_) != TBool) return false;
  uintptr_t addr = rd<uintptr_t>(f, flagAddr_);
  if (!addr) return false;
  *(volatile bool*)addr = value;
  return true;
}

std::string VmLayout::heapName(const CodeHeapRange& h) const {
  PageCheck pages;  // the object's fields point into a few pages: each checked (a system call) once
  if (!h.heap || !pages.ok(h.heap, 512)) return "";
  for (size_t off = 0; off < 512; off += sizeof(uintptr_t)) {
    const uintptr_t p = *(const uintptr_t*)(h.heap + off);
    // small numbers and non-canonical values are no user-space pointers
    if (p < 0x10000 || p >= ((uintptr_t)1 << 47) || !pages.ok(p, 10)) continue;
    const char* c = (const char*)p;
    if (strncmp(c, "CodeHeap '", 10) != 0 && strncmp(c, "CodeCache", 9) != 0) continue;
    char buf[128];
    size_t n = 0;
    while (n + 1 < sizeof buf && pages.ok(p + n, 1) && c[n] >= 0x20 && c[n] < 0x7F) buf[n] = c[n], n++;
    if (n + 1 < sizeof buf && pages.ok(p + n, 1) && c[n] == 0) return std::string(buf, n);
  }
  return "";
}

}  // namespace jportal
