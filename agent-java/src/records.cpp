#include "records.h"

#include <string.h>

#include "common.h"
#include "crc32.h"

namespace jportal {

namespace {
struct TypeDef {
  uint16_t type;
  const char* name;
  const char* layout;
};

const TypeDef kTypes[] = {
    {CALIBRATION, "CALIBRATION", "mono_ns:w64 realtime_ns:w64"},
    {VM_INFO, "VM_INFO",
     "pid:u32 java_version:str vm_version:str vm_vendor:str vm_name:str java_home:str agent_version:str code_low:u64 "
     "code_high:u64 flags:[name:str value:str] heaps:[low:u64 high:u64 committed_high:u64 name:str]"},
    {VM_START, "VM_START", ""},
    {VM_END, "VM_END", "records:u64 bytes:u64 stalls:u64 stall_ns:u64 dropped:u64 dropped_bytes:u64 patch_scans:u64 errors:u32"},
    {AGENT_LOG, "AGENT_LOG", "level:u8 component:str message:str"},
    {DROPPED, "DROPPED", "count:u64 bytes:u64 first_seq:u64"},
    {INTERP_CODE, "INTERP_CODE", "base:u64 code:bytes"},
    {CODELET, "CODELET", "begin:u64 end:u64 bytecode:i32 kind:u8 description:str"},
    {DISPATCH_TABLE, "DISPATCH_TABLE", "table:u8 source:u8 address:u64 states:u16 per_state:u16 entries:[target:u64]"},
    {CODE_BLOB, "CODE_BLOB", "address:u64 size:u32 name:str code:bytes"},
    {NMETHOD_LOAD, "NMETHOD_LOAD",
     "method:u32 code_begin:u64 code_size:u32 blob_begin:u64 insts_begin:u64 stub_begin:u64 entry:u64 verified_entry:u64 "
     "osr_entry:u64 compile_id:i32 level:i8 osr_bci:i32 code:bytes pcs:[pc:u64 frames:[method:u32 bci:i32]] consts_begin:u64 consts:bytes"},
    {NMETHOD_UNLOAD, "NMETHOD_UNLOAD", "method:u32 code_begin:u64 last_seen:w64"},
    {CODE_PATCH, "CODE_PATCH", "code_begin:u64 address:u64 bytes:bytes since:w64"},
    {CODE_SNAPSHOT, "CODE_SNAPSHOT", "code_begin:u64 code:bytes"},
    {CLASS, "CLASS", "class_id:u32 loader:u32 source:u8 name:str bytes:bytes"},
    {METHOD, "METHOD", "method:u32 class_id:u32 loader:u32 class_name:str name:str signature:str modifiers:u32"},
    {METHOD_RUNS, "METHOD_RUNS", "classes:[class_id:u32 methods:[name:str signature:str state:u8 invocations:u32 bytecodes:bytes]]"},
    {THREAD_START, "THREAD_START", "os_tid:u32 java_tid:u64 daemon:u8 name:str"},
    {THREAD_END, "THREAD_END", "os_tid:u32 java_tid:u64"},
};
}  // namespace

std::vector<uint8_t> encodeFileHeader() {
  Payload p;
  const char magic[8] = {'J', 'P', 'O', 'R', 'T', 'A', 'L', 0};
  for (char c : magic) p.u8((uint8_t)c);
  p.u16(FORMAT_MAJOR);
  p.u16(FORMAT_MINOR);
  p.u32(0);  // header size, patched below
  p.u32(0);  // crc, patched below
  p.u32((uint32_t)(sizeof kTypes / sizeof kTypes[0]));
  for (const TypeDef& t : kTypes) {
    p.u16(t.type);
    p.str(t.name);
    p.str(t.layout);
  }
  std::vector<uint8_t> out(p.data(), p.data() + p.size());
  uint32_t size = (uint32_t)out.size();
  memcpy(&out[12], &size, 4);
  uint32_t crc = crc32(0, out.data(), out.size());  // crc field is still zero
  memcpy(&out[16], &crc, 4);
  return out;
}

}  // namespace jportal
