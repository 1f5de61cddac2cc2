#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

namespace jportal {

namespace {
bool parseUint(const std::string& v, uint64_t max, uint64_t* out) {
  if (v.empty() || v.size() > 12) return false;
  for (char c : v)
    if (c < '0' || c > '9') return false;
  uint64_t x = strtoull(v.c_str(), nullptr, 10);
  if (x > max) return false;
  *out = x;
  return true;
}
bool parseBool(const std::string& v, bool* out) {
  if (v == "1" || v == "true" || v == "yes") return (*out = true), true;
  if (v == "0" || v == "false" || v == "no") return (*out = false), true;
  return false;
}
}  // namespace

bool parseOptions(const char* text, Options* o, std::string* error) {
  o->out = "jportal-trace-" + std::to_string(getpid());
  if (!text || !*text) return true;
  std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? s.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    uint64_t n = 0;
    bool ok = true;
    if (key == "help") o->help = true;
    else if (key == "out") ok = !value.empty(), o->out = value;
    else if (key == "collector") ok = parseUint(value, 0x7fffffff, &n) && n > 0, o->collector = (pid_t)n;
    else if (key == "ring_mb") ok = parseUint(value, 4096, &n) && n > 0, o->ringKb = (uint32_t)(n * 1024);
    else if (key == "ring_kb") ok = parseUint(value, 4096u * 1024, &n) && n >= 64, o->ringKb = (uint32_t)n;
    else if (key == "wait_ms") ok = parseUint(value, 600000, &n), o->waitMs = (uint32_t)n;
    else if (key == "patch_interval_ms") ok = parseUint(value, 3600000, &n), o->patchIntervalMs = (uint32_t)n;
    else if (key == "snapshot") ok = parseBool(value, &o->snapshot);
    else if (key == "nmethods") ok = value == "scan" || value == "events" || value == "check", o->nmethods = value;
    else if (key == "runs") ok = parseBool(value, &o->runs);
    else if (key == "stats") ok = parseBool(value, &o->stats);
    else if (key == "oracle") ok = parseBool(value, &o->oracle);
    else if (key == "classes") {
      // 1 is the old name of hook (kept for scripts)
      o->classes = value != "0" && value != "false" && value != "no";
      o->classesEarly = value == "early";
      o->classesHook = value == "hook" || value == "1" || value == "true" || value == "yes" || o->classesEarly;
      ok = !o->classes || o->classesHook || value == "path";
    }
    else if (key == "dispatch") ok = value == "symtab" || value == "parse", o->dispatchParse = value == "parse";
    else if (key == "log") ok = value == "quiet" || value == "info" || value == "debug", o->log = value;
    else {
      *error = "unknown option '" + key + "' (-agentpath:libjportal.so=help lists them)";
      return false;
    }
    if (!ok) {
      *error = "bad value '" + value + "' for option '" + key + "' (-agentpath:libjportal.so=help lists them)";
      return false;
    }
  }
  return true;
}

void printHelp() {
  fprintf(stderr,
          "jportal agent options (-agentpath:/path/libjportal.so=key=value,...):\n"
          "  out=DIR                 trace directory (default jportal-trace-<pid>); DIR/meta.jpt is written\n"
          "  collector=PID           a collector process (jportal record) drains the ring; the agent takes\n"
          "                          over if it dies (default: the agent writes the trace itself)\n"
          "  ring_mb=N               shared-memory ring size in MiB, rounded up to a power of two (default 4)\n"
          "  ring_kb=N               the same in KiB (at least 64), for small rings\n"
          "  wait_ms=N               how long a writer waits for ring space before dropping a record; drops\n"
          "                          are counted in DROPPED records (default 2000)\n"
          "  patch_interval_ms=N     how often live compiled code is re-read for patches, at least (the pause grows\n"
          "                          to 100x the last scan's duration, at most 1 s); 0 disables (default 50)\n"
          "  snapshot=0|1            also record every live nmethod's bytes at VM death (default 0)\n"
          "  nmethods=scan|events|check  how compiled methods are found (default scan: the watcher reads new nmethods\n"
          "                          from the code heaps every 50 ms, so the VM builds no JVMTI compile info; sets\n"
          "                          DebugNonSafepoints; an nmethod living under ~50 ms is missed; JVMs whose VMStructs\n"
          "                          lack a field it reads, e.g. 25, use events). events: JVMTI CompiledMethodLoad.\n"
          "                          check: events, each compared with what a scan reads (a summary on stderr at exit)\n"
          "  runs=0|1                record which methods the VM says ran, at VM death (default 1)\n"
          "  stats=0|1               at VM death, log what the agent cost: time in each kind of callback and phase,\n"
          "                          CPU of its threads (default 0)\n"
          "  classes=0|path|hook|early  how class files reach the trace (default path). path: no ClassFileLoadHook\n"
          "                          (the cheapest): classes are named, and analysis reads JDK classes from the\n"
          "                          runtime image (lib/modules) and application classes from the recorded class\n"
          "                          path; only classes of other loaders are rebuilt from JVMTI (no exception\n"
          "                          tables). hook (or 1): ClassFileLoadHook from the start phase on records\n"
          "                          class bytes, keeping class-data sharing. early: every class's bytes from the\n"
          "                          first (turns class-data sharing off). 0: no classes\n"
          "  dispatch=symtab|parse   find interpreter dispatch tables in libjvm's .symtab or by parsing code\n"
          "                          (default symtab, falling back to parse)\n"
          "  oracle=0|1              ground-truth mode: record every executed bytecode of every thread through\n"
          "                          JVMTI single-stepping into DIR/threads/*.jpo (slow; no PT metadata) (default 0)\n"
          "  log=quiet|info|debug    stderr verbosity (default info; warnings and errors always print)\n"
          "  help                    print this and run the JVM without the agent\n");
}

}  // namespace jportal
