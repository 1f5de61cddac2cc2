// Agent options: -agentpath:libjportal.so=key=value,key=value,...
#pragma once
#include <stdint.h>
#include <sys/types.h>

#include <string>

namespace jportal {

struct Options {
  std::string out;             // trace directory
  pid_t collector = 0;         // a collector process drains the ring (set by `jportal record`)
  // ring capacity in KiB (rounded up to a power of two, at least 64). Small by default: every page of it is
  // allocated up front, and the consumer drains it every 20 ms (a full ring makes producers wait, not drop)
  uint32_t ringKb = 4 * 1024;
  uint32_t waitMs = 2000;      // how long a producer waits for ring space before dropping a record
  uint32_t patchIntervalMs = 50;
  bool snapshot = false;
  bool runs = true;
  bool stats = false;          // at VM death, log what the agent cost (cost.h)
  // how compiled methods are found: scan (the default where VMStructs allow: the watcher walks the code heaps every
  // 50 ms and reads each new nmethod's debug info itself, so the VM builds no JVMTI compile info; an nmethod that
  // lives less than a scan interval is missed), events (JVMTI CompiledMethodLoad/Unload), check (events, each
  // compared against what a scan reads; a summary at exit)
  std::string nmethods = "scan";            // METHOD_RUNS at VM death (runs.cpp)
  bool classes = true;
  // classes=path (the default): no ClassFileLoadHook at all, which is what costs (HotSpot reads every CDS-archived
  // class's file to post it); classes are named with where their bytes are (runtime image, class path), and only
  // those of other loaders are rebuilt from JVMTI. classes=hook: ClassFileLoadHook from the start phase on records
  // the bytes of every class loaded after it (CDS stays on; classes loaded before are named as runtime-image
  // classes). classes=early: the early hook (every class's bytes, class-data sharing off).
  bool classesHook = false;
  bool classesEarly = false;
  bool dispatchParse = false;  // find the dispatch table by parsing code instead of libjvm's .symtab
  std::string log = "info";
  bool help = false;
  bool oracle = false;         // ground-truth mode: single-step every bytecode into out/ (oracle.cpp)
};

// Parses the option string. On error fills `error` (one line) and returns false.
bool parseOptions(const char* text, Options* out, std::string* error);
void printHelp();

}  // namespace jportal
