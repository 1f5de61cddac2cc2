// The template interpreter: codelets, their code, and the dispatch tables.
#include <string.h>

#include "agent.h"
#include "records.h"

namespace jportal {

namespace {

// CODELET.kind (docs/trace-format.md §4)
uint8_t classify(const Codelet& c) {
  if (c.bytecode >= 0) return 1;
  const char* d = c.description ? c.description : "";
  auto has = [&](const char* s) { return strstr(d, s) != nullptr; };
  if (has("method entry point")) return 2;
  if (has("return entry points") || has("earlyret entry points")) return 3;
  if (has("exception")) return 4;
  if (has("deoptimization")) return 5;
  if (has("signature handler") || has("result handlers for native")) return 6;
  if (has("error exits")) return 7;
  return 0;
}

bool recordTable(Agent& a, uint8_t table, uint8_t source, uintptr_t address, uint16_t states, uint16_t perState) {
  size_t n = (size_t)states * perState;
  if (!readable((void*)address, n * 8)) {
    warnOnce("dispatch-unreadable", "interpreter", "dispatch table %u at %#lx is not readable", table, (unsigned long)address);
    return false;
  }
  Payload p;
  p.u8(table);
  p.u8(source);
  p.u64(address);
  p.u16(states);
  p.u16(perState);
  size_t at = p.beginArray();
  const uintptr_t* e = (const uintptr_t*)address;
  for (size_t i = 0; i < n; i++) p.u64(e[i]);
  p.endArray(at, (uint32_t)n);
  return a.ring.commit(DISPATCH_TABLE, FLAG_REPLAY, p);
}

// Finds the table from `movabs $table,%r10; ... jmp *(%r10,%rbx,8)` at the end of a template codelet.
uintptr_t parseDispatchTarget(const Codelet& c) {
  const uint8_t* b = (const uint8_t*)c.begin;
  size_t n = c.end - c.begin;
  if (n < 4) return 0;
  for (size_t i = n - 4 + 1; i-- > 0;) {  // from the last possible position (the jmp often ends the codelet)
    if (b[i] == 0x41 && b[i + 1] == 0xFF && b[i + 2] == 0x24 && b[i + 3] == 0xDA) {
      for (size_t k = i >= 2 ? i - 2 : 0, steps = 0; steps < 48 && k > 0; k--, steps++)
        if (b[k] == 0x49 && b[k + 1] == 0xBA && k + 10 <= i) {
          uintptr_t v;
          memcpy(&v, b + k + 2, 8);
          return v;
        }
      return 0;
    }
  }
  return 0;
}

void recordDispatchTables(Agent& a, const std::vector<Codelet>& codelets) {
  const std::string active = "_ZN19TemplateInterpreter13_active_tableE", normal = "_ZN19TemplateInterpreter13_normal_tableE",
                    safept = "_ZN19TemplateInterpreter13_safept_tableE", entry = "_ZN19AbstractInterpreter12_entry_tableE";
  if (!a.opts.dispatchParse) {
    auto syms = lookupLibjvmSymbols(a.vms.libjvmPath(), {active, normal, safept, entry});
    bool all = true;
    const std::string tables[3] = {active, normal, safept};
    for (int t = 0; t < 3; t++) {
      auto it = syms.find(tables[t]);
      if (it == syms.end() || it->second.size < 256 * 8 || it->second.size % (256 * 8) != 0) {
        all = false;
        continue;
      }
      recordTable(a, (uint8_t)t, 0, it->second.address, (uint16_t)(it->second.size / (256 * 8)), 256);
    }
    auto e = syms.find(entry);
    if (e != syms.end() && e->second.size >= 8) recordTable(a, 3, 0, e->second.address, 1, (uint16_t)(e->second.size / 8));
    else all = false;
    if (all) return;
    warnOnce("dispatch-symtab", "interpreter", "libjvm .symtab lacks the dispatch-table symbols; parsing dispatch code instead");
  }
  // nop dispatches to the vtos table (state 9) and iconst_0 to the itos table (state 4): both give the
  // active table's base, and their agreement checks the parse
  uintptr_t nop = 0, iconst0 = 0;
  for (const Codelet& c : codelets) {
    if (c.bytecode == 0x00 && !nop) nop = parseDispatchTarget(c);
    if (c.bytecode == 0x03 && !iconst0) iconst0 = parseDispatchTarget(c);
  }
  const uintptr_t stateBytes = 256 * 8;
  if (!nop || !iconst0 || nop - 9 * stateBytes != iconst0 - 4 * stateBytes) {
    warnOnce("dispatch-parse", "interpreter", "could not find the dispatch table in interpreter code: no DISPATCH_TABLE recorded");
    return;
  }
  recordTable(a, 0, 1, nop - 9 * stateBytes, 10, 256);
}

}  // namespace

void recordInterpreter(Agent& a) {
  std::vector<Codelet> codelets;
  uintptr_t buffer = 0;
  size_t used = 0;
  if (!a.layout.codelets(&codelets, &buffer, &used)) {
    warnOnce("interp", "interpreter", "cannot read the interpreter's codelets through VMStructs: no CODELET records");
    return;
  }
  Payload code;
  code.u64(buffer);
  code.bytes((const void*)buffer, used);
  a.ring.commit(INTERP_CODE, FLAG_REPLAY, code);
  for (const Codelet& c : codelets) {
    Payload p;
    p.u64(c.begin);
    p.u64(c.end);
    p.i32(c.bytecode);
    p.u8(classify(c));
    p.str(c.description ? c.description : "");
    a.ring.commit(CODELET, FLAG_REPLAY, p);
  }
  recordDispatchTables(a, codelets);
}

}  // namespace jportal
