#include "crc32.h"

namespace jportal {

namespace {
struct Table {
  uint32_t t[256];
  constexpr Table() : t() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
  }
};
constexpr Table kTable;  // computed at compile time: no initialisation order issues in early callbacks
}  // namespace

uint32_t crc32(uint32_t crc, const void* data, size_t len) {
  const uint8_t* p = (const uint8_t*)data;
  uint32_t c = crc ^ 0xFFFFFFFFu;
  for (size_t i = 0; i < len; i++) c = kTable.t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

}  // namespace jportal
