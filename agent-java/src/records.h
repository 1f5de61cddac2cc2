// Record types of trace format 1.0 (docs/trace-format.md §4). The layouts here are written into every
// file header and must match the doc and packages/format/src/records.ts.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <vector>

namespace jportal {

enum RecordType : uint16_t {
  CALIBRATION = 1,
  VM_INFO = 2,
  VM_START = 3,
  VM_END = 4,
  AGENT_LOG = 5,
  DROPPED = 6,
  INTERP_CODE = 10,
  CODELET = 11,
  DISPATCH_TABLE = 12,
  CODE_BLOB = 20,
  NMETHOD_LOAD = 21,
  NMETHOD_UNLOAD = 22,
  CODE_PATCH = 23,
  CODE_SNAPSHOT = 24,
  CLASS = 30,
  METHOD = 31,
  METHOD_RUNS = 32,
  THREAD_START = 40,
  THREAD_END = 41,
};

constexpr uint16_t FLAG_REPLAY = 1;
constexpr uint16_t FORMAT_MAJOR = 1;
constexpr uint16_t FORMAT_MINOR = 5;
constexpr size_t RECORD_HEADER_SIZE = 28;

// The complete file header (magic, version, type table) as bytes.
std::vector<uint8_t> encodeFileHeader();

}  // namespace jportal
