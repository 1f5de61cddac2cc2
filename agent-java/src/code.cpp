// Code blobs, compiled methods (with inlining debug info), unloads, and the patch watcher.
#include <string.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <unordered_map>

#include "agent.h"  // jvmti.h first: jvmticmlr.h needs its types
#include <jvmticmlr.h>
#include "records.h"

namespace jportal {

namespace {
// Blobs reported once and filled later: native signature handlers are appended into their buffer as methods
// are first called, inline-cache stubs come and go in the InlineCacheBuffer.
bool isMutableBuffer(const char* name) {
  return !strcmp(name, "native signature handlers") || !strcmp(name, "InlineCacheBuffer");
}

// Writes a CODE_PATCH for every run of bytes that differs between `cur` and `seen` (runs closer than 8
// unchanged bytes are merged) and updates `seen`. `begin` names the code (nmethod or blob) in the record;
// `since` is the tsc at which the previous scan began (the change happened after it).
// The first index in [i, n) where a and b differ, or n (8 bytes at a time: a nmethod's code is mostly the same).
size_t firstDifference(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) return i + (size_t)__builtin_ctzll(x ^ y) / 8;
  }
  for (; i < n; i++)
    if (a[i] != b[i]) return i;
  return n;
}

// The first index in [i, n) from which a and b agree for 8 bytes (or up to n), or n.
size_t firstAgreement(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  for (;;) {
    if (i >= n) return n;
    size_t run = std::min<size_t>(8, n - i);
    if (memcmp(a + i, b + i, run) == 0) return i;
    i++;
  }
}

void diffAndRecord(Agent& a, uintptr_t begin, const uint8_t* cur, std::vector<uint8_t>& seen, uint64_t since) {
  size_t n = seen.size();
  if (memcmp(cur, seen.data(), n) == 0) return;
  size_t i = firstDifference(cur, seen.data(), 0, n);
  while (i < n) {
    // the run ends at the last differing byte before 8 equal ones
    size_t start = i, end = firstAgreement(cur, seen.data(), i + 1, n);
    uint8_t now[4096];
    size_t len = end - start;
    if (len > sizeof now) len = sizeof now, end = start + len;
    memcpy(now, cur + start, len);  // one read, so the record and our copy agree
    Payload p;
    p.u64(begin);
    p.u64(begin + start);
    p.bytes(now, len);
    p.u64(since);
    a.ring.commit(CODE_PATCH, 0, p);
    memcpy(seen.data() + start, now, len);
    i = firstDifference(cur, seen.data(), end, n);
  }
}
}  // namespace

void JNICALL onDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::DynamicCode);
  Agent& a = *gAgent;
  if (!address || length <= 0) return;
  std::string key = std::to_string((uintptr_t)address) + ":" + std::to_string(length) + ":" + (name ? name : "");
  {
    std::lock_guard<std::mutex> lk(a.codeMu);
    if (!a.blobsSeen.insert(key).second) return;  // GenerateEvents replays blobs already reported
  }
  Payload p;
  p.u64((uintptr_t)address);
  p.u32((uint32_t)length);
  p.str(name ? name : "");
  // inside a code heap's committed memory (where the VM puts all it generates) the range is readable without asking
  // the kernel (a system call per blob was most of this callback's time)
  bool ok = (a.layoutOk && a.layout.inCommittedCode((uintptr_t)address, (size_t)length)) || readable(address, (size_t)length);
  // one copy serves the record and the watcher's baseline
  std::vector<uint8_t> code;
  if (ok) code.assign((const uint8_t*)address, (const uint8_t*)address + length);
  p.bytes(code.data(), code.size());
  if (!a.ring.commit(CODE_BLOB, tReplaying ? FLAG_REPLAY : 0, p) || !ok || !name) return;
  if (isMutableBuffer(name)) {
    std::lock_guard<std::mutex> lk(a.codeMu);
    a.mutableBlobs[(uintptr_t)address] = std::move(code);
  }
  CALLBACK_GUARD_END("DynamicCodeGenerated")
}

namespace {
// A constants section longer than this is not recorded (C2's are a few hundred bytes; a bad VMStructs read is not)
constexpr uintptr_t kMaxConsts = 1 << 20;
// nmethods=scan: how long a new nmethod must stay the same before it is read (see scanNmethods)
constexpr int kScanSettleMs = 1;

// Writes NMETHOD_UNLOAD for the nmethod at `begin` (caller holds codeMu) and stops watching it. `lastSeen`: the tsc
// of the last scan that found it alive (nmethods=scan, format 1.5), 0 when the unload is reported as it happens.
void unloadLocked(Agent& a, std::map<uintptr_t, LiveNmethod>::iterator it, uint64_t lastSeen = 0) {
  Payload p;
  p.u32(it->second.method);
  p.u64(it->first);
  p.u64(lastSeen);
  a.ring.commit(NMETHOD_UNLOAD, 0, p);
  a.nmethods.erase(it);
}
}  // namespace

namespace {
// Writes the NMETHOD_LOAD of the nmethod whose code starts at `begin` (`pcs`: its PcDescs as the record carries
// them) and starts watching it, unless the same nmethod (address, method, compile id) is recorded already.
void recordNmethodLoad(Agent& a, uint32_t mid, uintptr_t begin, uint32_t codeSize, const NmethodFacts& f, const Payload& pcs, bool replay) {
  auto sameNmethod = [&](const LiveNmethod& nm) { return nm.method == mid && nm.compileId == f.compileId; };
  // the constants section, where C2 puts a tableswitch's jump table (format 1.3); empty when unknown or implausible
  uintptr_t cb = f.constsBegin;
  bool consts = f.instsBegin && cb && cb > f.blob && cb <= f.instsBegin && f.instsBegin - cb <= kMaxConsts;
  Payload p;
  p.reserve(128 + codeSize + pcs.size() + (consts ? f.instsBegin - cb : 0));
  p.u32(mid);
  p.u64(begin);
  p.u32(codeSize);
  p.u64(f.blob);
  p.u64(f.instsBegin);
  p.u64(f.stubBegin);
  p.u64(f.entry);
  p.u64(f.verifiedEntry);
  p.u64(f.osrEntry);
  p.i32(f.compileId);
  p.i8((int8_t)f.level);
  p.i32(f.entryBci);
  // one copy of the code serves the record and the watcher's baseline, so no change falls between them
  std::vector<uint8_t> code((const uint8_t*)begin, (const uint8_t*)begin + codeSize);
  p.bytes(code.data(), code.size());
  p.raw(pcs.data(), pcs.size());
  p.u64(consts ? cb : 0);
  p.bytes(consts ? (const uint8_t*)cb : nullptr, consts ? f.instsBegin - cb : 0);
  std::lock_guard<std::mutex> lk(a.codeMu);
  auto it = a.nmethods.find(begin);
  if (it != a.nmethods.end()) {
    if (sameNmethod(it->second)) return;
    // the earlier occupant's unload has not been seen yet: close its life first so that each address names one
    // nmethod at a time; its late CompiledMethodUnload is then ignored (nmethods=scan: it ended after the last
    // scan that saw it)
    unloadLocked(a, it, a.scanNmethods ? it->second.seenTsc : 0);
  }
  // a load the ring dropped is not tracked: no patch or unload record may refer to a load the file lacks
  if (!a.ring.commit(NMETHOD_LOAD, replay ? FLAG_REPLAY : 0, p)) return;
  LiveNmethod nm{mid, f.blob, f.compileId, f.blob != 0, std::move(code), rdtsc()};
  a.nmethods[begin] = std::move(nm);
}

// nmethods=check: the compile info JVMTI built for this nmethod against what nmethodScopes() reads from it, frame
// by frame (jmethodID -> Method*), and each method's naming against JVMTI's. Counted in the Agent; no records.
void checkAgainstScan(Agent& a, const NmethodFacts& f, uintptr_t begin, jint codeSize, const void* compileInfo) {
  NmethodScopes sc;
  if (!f.blob || !a.layout.nmethodScanKnown() || !a.layout.nmethodScopes(f.blob, begin, &sc)) {
    a.checkUnreadable++;
    return;
  }
  a.checkNmethods++;
  bool differ = a.layout.codeEnd(f.blob) - begin != (uintptr_t)codeSize;
  size_t k = 0, frame = 0;
  jvmtiEnv* j = a.jvmti;
  PageCheck pages;
  for (auto* h = (const jvmtiCompiledMethodLoadRecordHeader*)compileInfo; h; h = h->next) {
    if (h->kind != JVMTI_CMLR_INLINE_INFO) continue;
    auto* r = (const jvmtiCompiledMethodLoadInlineRecord*)h;
    for (jint i = 0; i < r->numpcs; i++, k++) {
      const PCStackInfo& pc = r->pcinfo[i];
      a.checkPcs++;
      if (k >= sc.pcs.size() || sc.pcs[k] != (uintptr_t)pc.pc || sc.frameCounts[k] != (uint32_t)pc.numstackframes) {
        differ = true;
        break;
      }
      for (jint q = 0; q < pc.numstackframes; q++, frame++) {
        a.checkFrames++;
        uintptr_t method = *(const uintptr_t*)pc.methods[q];
        if (sc.methods[frame] != method || sc.bcis[frame] != pc.bcis[q]) differ = true;
      }
    }
  }
  if (k != sc.pcs.size()) differ = true;
  if (differ) {
    a.checkDiffer++;
    warnOnce("check-scopes", "nmethods", "nmethods=check: a scan reads other debug info than JVMTI gives (compile id %d)", f.compileId);
  }
  // the naming of the nmethod's own method
  jmethodID m = nullptr;
  for (auto* h = (const jvmtiCompiledMethodLoadRecordHeader*)compileInfo; h && !m; h = h->next)
    if (h->kind == JVMTI_CMLR_INLINE_INFO && ((const jvmtiCompiledMethodLoadInlineRecord*)h)->numpcs > 0) {
      const PCStackInfo& pc = ((const jvmtiCompiledMethodLoadInlineRecord*)h)->pcinfo[0];
      if (pc.numstackframes > 0) m = pc.methods[pc.numstackframes - 1];
    }
  if (!m) return;
  MethodNaming n;
  a.checkMethods++;
  JvmtiPtr<char> name(j), sig(j), csig(j);
  jclass cls = nullptr;
  jint mods = 0;
  j->GetMethodName(m, &name.p, &sig.p, nullptr);
  j->GetMethodModifiers(m, &mods);
  j->GetMethodDeclaringClass(m, &cls);
  if (cls) j->GetClassSignature(cls, &csig.p, nullptr);
  bool same = a.layout.methodNaming(*(const uintptr_t*)m, pages, &n) && name.p && sig.p && csig.p && n.name == name.p && n.signature == sig.p &&
              n.className == internalName(csig.p) && n.modifiers == (uint32_t)mods;
  if (!same) {
    a.checkNamesDiffer++;
    warnOnce("check-names", "nmethods", "nmethods=check: a method is named otherwise through VMStructs (%s.%s%s) than through JVMTI (%s.%s%s)",
             n.className.c_str(), n.name.c_str(), n.signature.c_str(), csig.p ? csig.p : "?", name.p ? name.p : "?", sig.p ? sig.p : "?");
  }
  JNIEnv* jni = nullptr;
  if (cls && a.vm && a.vm->GetEnv((void**)&jni, JNI_VERSION_1_6) == JNI_OK && jni) jni->DeleteLocalRef(cls);
}
}  // namespace

void JNICALL onCompiledMethodLoad(jvmtiEnv*, jmethodID method, jint codeSize, const void* codeAddr, jint, const jvmtiAddrLocationMap*,
                                  const void* compileInfo) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::CompiledLoad);
  Agent& a = *gAgent;
  if (!codeAddr || codeSize <= 0) return;
  uintptr_t begin = (uintptr_t)codeAddr;
  // the nmethod header (tier, OSR, entry points, compile id); the JVM keeps the nmethod alive while its
  // load event is being posted
  NmethodFacts f;
  if (a.layoutOk) {
    auto heaps = a.layout.codeHeaps();
    if (!a.layout.nmethodFacts(a.layout.findBlob(begin, heaps), &f)) {
      f = NmethodFacts();
      warnOnce("nmethod-facts", "nmethods", "nmethod header not found for some compiled methods: their tier/OSR/entry fields are -1/0 and their patches are not watched");
    }
  }
  if (a.opts.nmethods == "check") checkAgainstScan(a, f, begin, codeSize, compileInfo);
  uint32_t mid = methodId(a, method);
  // the same nmethod (address, method and compile id) is reported twice when the ServiceThread's event and
  // the GenerateEvents replay at VMInit overlap: write it once
  {
    std::lock_guard<std::mutex> lk(a.codeMu);
    auto it = a.nmethods.find(begin);
    if (it != a.nmethods.end() && it->second.method == mid && it->second.compileId == f.compileId) return;
  }
  // method ids of every inlined frame first: their METHOD records must precede this record. One methodId() per
  // distinct method: a C2 nmethod names the same few methods in each of its thousands of frames, and each call
  // takes the method table's lock (measured on fop: half of this callback's time went to repeated lookups)
  std::unordered_map<jmethodID, uint32_t> ids;
  auto idOf = [&](jmethodID m) {
    auto it = ids.find(m);
    if (it != ids.end()) return it->second;
    uint32_t id = methodId(a, m);
    ids.emplace(m, id);
    return id;
  };
  ids.emplace(method, mid);
  Payload pcs;
  size_t arr = pcs.beginArray();
  uint32_t npcs = 0;
  for (auto* h = (const jvmtiCompiledMethodLoadRecordHeader*)compileInfo; h; h = h->next) {
    if (h->kind != JVMTI_CMLR_INLINE_INFO) continue;
    auto* r = (const jvmtiCompiledMethodLoadInlineRecord*)h;
    for (jint i = 0; i < r->numpcs; i++) {
      const PCStackInfo& pc = r->pcinfo[i];
      pcs.u64((uintptr_t)pc.pc);
      size_t fr = pcs.beginArray();
      for (jint k = 0; k < pc.numstackframes; k++) {
        pcs.u32(idOf(pc.methods[k]));
        pcs.i32(pc.bcis[k]);
      }
      pcs.endArray(fr, (uint32_t)pc.numstackframes);
      npcs++;
    }
  }
  pcs.endArray(arr, npcs);
  recordNmethodLoad(a, mid, begin, (uint32_t)codeSize, f, pcs, tReplaying);
  CALLBACK_GUARD_END("CompiledMethodLoad")
}

namespace {
// The class-data sharing archive's range (mapped before VMInit, never unmapped): its pages become permanent as
// they are found readable; `whole` (the watcher, once, off the JVM's threads: about a millisecond of page checks
// for a 13 MB archive) checks every page at once.
void noteSharedRange(Agent& a, bool whole) {
  uintptr_t low = 0, high = 0;
  if (!a.sharedRangeKnown) {
    a.sharedRangeKnown = true;
    if (a.layout.sharedMetaspace(&low, &high)) a.permanentPages.setShared(low, high);
  }
  if (whole && a.layout.sharedMetaspace(&low, &high) && a.permanentPages.inShared(low) && high - low < (1ull << 32) &&
      readable((const void*)low, high - low))
    a.permanentPages.trustShared();
}
}  // namespace

void scanNmethods(Agent& a) {
  if (!a.scanNmethods) return;
  const uint64_t walk0 = threadCpuNs();
  auto heaps = a.layout.codeHeaps();
  std::vector<uintptr_t> blobs;
  a.layout.nmethodBlobs(heaps, &blobs);
  // in use, not used or not entrant (frames of it may still run); not while being built, not once dead
  auto factsOf = [&](uintptr_t blob, NmethodFacts* f) {
    int state = a.layout.nmethodState(blob);
    return state >= 0 && state <= 2 && a.layout.nmethodFacts(blob, f) && f->instsBegin && f->compileId >= 0 && f->method;
  };
  std::vector<std::pair<uintptr_t, NmethodFacts>> fresh;
  // nmethods recorded before: the same blob with the same compile id (compile ids are unique), one read each,
  // found by walking the last scan's list alongside (both in address order)
  if (!std::is_sorted(blobs.begin(), blobs.end())) std::sort(blobs.begin(), blobs.end());  // (they come sorted)
  std::vector<std::pair<uintptr_t, int>> known;
  known.reserve(blobs.size());
  auto last = a.scanKnown.cbegin();
  constexpr size_t kAhead = 8;  // compile ids are a cache miss each: several in flight at once
  for (size_t i = 0; i < blobs.size(); i++) {
    if (i + kAhead < blobs.size()) a.layout.prefetchCompileId(blobs[i + kAhead]);
    const uintptr_t blob = blobs[i];
    while (last != a.scanKnown.cend() && last->first < blob) ++last;
    if (last != a.scanKnown.cend() && last->first == blob) {
      int id = a.layout.nmethodCompileId(blob);
      if (id == last->second) {
        known.emplace_back(blob, id);
        continue;
      }
    }
    NmethodFacts f;
    if (!factsOf(blob, &f)) continue;
    std::lock_guard<std::mutex> lk(a.codeMu);
    auto it = a.nmethods.find(f.instsBegin);
    if (it == a.nmethods.end() || it->second.compileId != f.compileId || it->second.blob != blob) fresh.emplace_back(blob, f);
    else known.emplace_back(blob, f.compileId);
  }
  // blocks freed since the last scan drop out of the list here (a compile id never comes back)
  a.scanKnown.swap(known);
  a.walkCpuNs.fetch_add(threadCpuNs() - walk0, std::memory_order_relaxed);
  if (fresh.empty()) return;
  a.scansWithNew.fetch_add(1, std::memory_order_relaxed);
  // A block is named "nmethod" from the start of its constructor, and until the constructor marks it not
  // installed its state byte holds whatever the memory held (fresh memory reads "in use"): a new nmethod is read
  // only if it is still the same a moment later (an installed nmethod's compile id, method and code begin
  // never change)
  std::this_thread::sleep_for(std::chrono::milliseconds(kScanSettleMs));
  noteSharedRange(a, false);
  PageCheck pages(&a.permanentPages);
  // the inlining of a big C2 method names the same few methods in thousands of frames: one lookup each
  std::unordered_map<uintptr_t, uint32_t> ids;
  auto idOf = [&](uintptr_t m) {
    auto it = ids.find(m);
    if (it != ids.end()) return it->second;
    uint32_t id = methodIdOfPtr(a, m, pages);
    ids.emplace(m, id);
    return id;
  };
  std::vector<std::pair<uintptr_t, int>> recorded;
  NmethodScopes sc;  // (buffers reused from one nmethod to the next)
  Payload pcs;
  for (const auto& [blob, f] : fresh) {
    NmethodFacts now;
    if (!factsOf(blob, &now) || now.compileId != f.compileId || now.method != f.method || now.instsBegin != f.instsBegin) continue;
    const uintptr_t begin = f.instsBegin, end = a.layout.codeEnd(blob);
    if (end <= begin || end - begin > (1u << 30)) continue;
    sc.pcs.clear(), sc.frameCounts.clear(), sc.methods.clear(), sc.bcis.clear();
    if (!a.layout.nmethodScopes(blob, begin, &sc)) {
      warnOnce("scan-scopes", "nmethods", "the debug info of some compiled methods could not be read: they are not recorded");
      continue;
    }
    uint32_t mid = idOf(f.method);
    bool named = mid != kNoMethod;
    pcs.clear();
    size_t arr = pcs.beginArray();
    for (size_t i = 0, frame = 0; i < sc.pcs.size() && named; i++) {
      pcs.u64(sc.pcs[i]);
      size_t fr = pcs.beginArray();
      for (uint32_t k = 0; k < sc.frameCounts[i]; k++, frame++) {
        uint32_t id = idOf(sc.methods[frame]);
        named = named && id != kNoMethod;
        pcs.u32(id);
        pcs.i32(sc.bcis[frame]);
      }
      pcs.endArray(fr, sc.frameCounts[i]);
    }
    pcs.endArray(arr, (uint32_t)sc.pcs.size());
    if (!named) {
      warnOnce("scan-names", "nmethods", "some compiled methods name methods that could not be read: they are not recorded");
      continue;
    }
    // still the nmethod we read (it may have died meanwhile; its compile id is unique)
    if (!factsOf(blob, &now) || now.compileId != f.compileId) continue;
    recordNmethodLoad(a, mid, begin, (uint32_t)(end - begin), f, pcs, tReplaying);
    recorded.emplace_back(blob, f.compileId);
  }
  a.pageSyscalls.fetch_add(pages.syscalls(), std::memory_order_relaxed);
  if (recorded.empty()) return;
  // into the list, in address order (fresh blobs come in that order)
  std::vector<std::pair<uintptr_t, int>> merged;
  merged.reserve(a.scanKnown.size() + recorded.size());
  std::merge(a.scanKnown.begin(), a.scanKnown.end(), recorded.begin(), recorded.end(), std::back_inserter(merged));
  a.scanKnown.swap(merged);
}

void JNICALL onCompiledMethodUnload(jvmtiEnv*, jmethodID, const void* codeAddr) {
  CALLBACK_GUARD_BEGIN
  CostScope cost(Cost::CompiledUnload);
  Agent& a = *gAgent;
  std::lock_guard<std::mutex> lk(a.codeMu);
  auto it = a.nmethods.find((uintptr_t)codeAddr);
  if (it == a.nmethods.end()) return;  // loaded before the agent saw it, or closed already
  unloadLocked(a, it);
  CALLBACK_GUARD_END("CompiledMethodUnload")
}

namespace {
bool stillSameNmethod(Agent& a, uintptr_t begin, const LiveNmethod& nm, const std::vector<CodeHeapRange>& heaps) {
  bool inHeap = false;
  for (const CodeHeapRange& h : heaps)
    if (begin >= h.low && begin + nm.bytes.size() <= h.committedHigh) inHeap = true;
  if (!inHeap || !nm.blob) return false;
  // Its block still in use, still an nmethod, with the same compile id (unique): the same nmethod, read straight
  // from its header (this runs for every live nmethod on every patch scan). A freed block keeps its header, used
  // flag cleared, until new code overwrites it; a blob allocated over it puts no header with this nmethod's name
  // pointer and compile id where this one's was.
  if (nm.compileId >= 0 && a.layout.blockHeaderKnown())
    return a.layout.blockInUse(nm.blob) && a.layout.isNmethod(nm.blob) && a.layout.nmethodCompileId(nm.blob) == nm.compileId;
  // without those fields: the block the segment map finds at the code begin still starts at the blob
  if (a.layout.findBlob(begin, heaps) != nm.blob) return false;
  if (nm.compileId >= 0) {
    NmethodFacts f;
    if (!a.layout.nmethodFacts(nm.blob, &f) || f.compileId != nm.compileId) return false;
  }
  return true;
}
}  // namespace

void scanPatches(Agent& a) {
  if (!a.layoutOk) return;
  auto heaps = a.layout.codeHeaps();
  std::lock_guard<std::mutex> lk(a.codeMu);
  a.patchScans++;
  const uint64_t since = a.lastScanTsc;
  a.lastScanTsc = rdtsc();
  const bool diffs = a.opts.patchIntervalMs != 0;  // else only nmethods=scan's watch for dead nmethods
  for (auto it = a.nmethods.begin(); it != a.nmethods.end();) {
    uintptr_t begin = it->first;
    LiveNmethod& nm = it->second;
    if (!nm.watched) {
      ++it;
      continue;
    }
    // still the same nmethod? (its code lies in committed code heap, the blob found at its code begin starts
    // where it did, and it has the same compile id); if not, its memory was freed or reused: stop watching.
    // nmethods=scan has no unload events: the nmethod's life ends when a scan finds it gone or dead
    bool same = stillSameNmethod(a, begin, nm, heaps);
    if (a.scanNmethods && (!same || a.layout.nmethodState(nm.blob) > 2)) {
      auto dead = it++;
      unloadLocked(a, dead, dead->second.seenTsc);
      continue;
    }
    nm.seenTsc = a.lastScanTsc;
    if (!same) {
      nm.watched = false;
      ++it;
      continue;
    }
    if (diffs) diffAndRecord(a, begin, (const uint8_t*)begin, nm.bytes, since);
    ++it;
  }
  // buffers live as long as the VM: no identity check needed
  if (diffs)
    for (auto& [begin, seen] : a.mutableBlobs) diffAndRecord(a, begin, (const uint8_t*)begin, seen, since);
}

// The watcher pauses at least this many times as long as its last scan took (1% of a core), at most kMaxPatchWaitMs.
constexpr uint64_t kPatchScanShare = 100;
constexpr uint64_t kMaxPatchWaitMs = 1000;
constexpr uint64_t kScanIntervalMs = 50;

void startPatchWatcher(Agent& a) {
  if ((a.opts.patchIntervalMs == 0 && !a.scanNmethods) || !a.layoutOk) return;
  a.watcher = std::thread([&a] {
    nameThisThread("jportal-watch");
    if (a.scanNmethods) noteSharedRange(a, true);
    const uint64_t intervalMs = a.opts.patchIntervalMs ? a.opts.patchIntervalMs : kScanIntervalMs;
    // nmethods=scan looks for new nmethods every kScanIntervalMs (a walk of the heaps' block headers, cheap)
    // however long the patch scans' pause has grown
    const uint64_t wakeMs = a.scanNmethods ? std::min<uint64_t>(intervalMs, kScanIntervalMs) : intervalMs;
    uint64_t patchWaitMs = intervalMs, nextPatchNs = monotonicNs() + intervalMs * 1000000ull;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(a.watcherMu);
        a.watcherWake.wait_for(lk, std::chrono::milliseconds(std::min(wakeMs, patchWaitMs)), [&] { return a.stopWatcher; });
        if (a.stopWatcher) return;
      }
      try {
        uint64_t t0 = monotonicNs();
        if (t0 >= nextPatchNs) {
          {
            CostScope cost(Cost::WatcherPatches);
            scanPatches(a);
          }
          // a scan compares every live nmethod's bytes: with much compiled code that is milliseconds, so the
          // pause grows to keep the watcher within 1% of a core (each CODE_PATCH says when the previous scan
          // began, so a longer pause widens the window a decoder must allow, it does not mislead it)
          uint64_t budget = (monotonicNs() - t0) * kPatchScanShare / 1000000ull;
          patchWaitMs = budget > intervalMs ? (budget < kMaxPatchWaitMs ? budget : kMaxPatchWaitMs) : intervalMs;
          nextPatchNs = monotonicNs() + patchWaitMs * 1000000ull;
        }
        if (a.scanNmethods) {
          CostScope cost(Cost::WatcherNmethods);
          scanNmethods(a);
        }
        a.watcherCpuNs.store(threadCpuNs(), std::memory_order_relaxed);
      } catch (...) {
        warnOnce("patch-watcher", "patches", "internal error in the patch watcher: patches are no longer recorded");
        return;
      }
    }
  });
}

void stopPatchWatcher(Agent& a) {
  {
    std::lock_guard<std::mutex> lk(a.watcherMu);
    a.stopWatcher = true;
  }
  a.watcherWake.notify_all();
  if (a.watcher.joinable()) a.watcher.join();
}

void recordSnapshots(Agent& a) {
  if (!a.layoutOk) return;
  auto heaps = a.layout.codeHeaps();
  std::lock_guard<std::mutex> lk(a.codeMu);
  const bool diffs = a.opts.patchIntervalMs != 0;
  std::vector<uint8_t> now;
  for (auto& [begin, nm] : a.nmethods) {
    if (!nm.watched || !stillSameNmethod(a, begin, nm, heaps)) continue;
    // one read of the code: the VM's other threads run on at VM death (compiler threads, inline caches), so the code
    // may have changed since the final patch scan; what changed is recorded as patches from this same read, so the
    // load bytes and every patch before the snapshot give the snapshot
    now.assign((const uint8_t*)begin, (const uint8_t*)begin + nm.bytes.size());
    if (diffs) diffAndRecord(a, begin, now.data(), nm.bytes, a.lastScanTsc);
    Payload p;
    p.u64(begin);
    p.bytes(now.data(), now.size());
    a.ring.commit(CODE_SNAPSHOT, 0, p);
  }
}

}  // namespace jportal
