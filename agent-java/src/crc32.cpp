#include "crc32.h"

#include <string.h>

namespace jportal {

namespace {
// Slicing-by-8 tables: t[0] is the classic byte-at-a-time table, t[k][i] the CRC of byte i followed by k zero
// bytes, so eight input bytes cost eight table lookups and no serial dependency per byte.
struct Tables {
  uint32_t t[8][256];
  constexpr Tables() : t() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
      for (int k = 1; k < 8; k++) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
};
constexpr Tables kTables;  // computed at compile time: no initialisation order issues in early callbacks
}  // namespace

uint32_t crc32(uint32_t crc, const void* data, size_t len) {
  const uint8_t* p = (const uint8_t*)data;
  const auto& t = kTables.t;
  uint32_t c = crc ^ 0xFFFFFFFFu;
  while (len >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);  // little-endian (x86-64)
    memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
        t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    len -= 8;
  }
  while (len--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

}  // namespace jportal
