// crc32 (carry-less multiplication where the CPU has it) against crc32Table and a bit-at-a-time reference, on
// every length up to 5,000 bytes at several alignments and seeds, and the standard check value.
#include <stdio.h>
#include <stdlib.h>

#include <initializer_list>

#include "crc32.h"

namespace {
uint32_t bitwise(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = crc ^ 0xFFFFFFFFu;
  while (n--) {
    c ^= *p++;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}
}  // namespace

int main() {
  static uint8_t buf[8192];
  uint32_t x = 12345;
  for (auto& b : buf) b = (uint8_t)(x = x * 1103515245u + 12345u) >> 3;
  size_t checked = 0, bad = 0;
  for (size_t len = 0; len <= 5000; len++)
    for (size_t off : {(size_t)0, (size_t)1, (size_t)7, (size_t)13}) {
      const uint32_t seed = (uint32_t)(len * 2654435761u + off);
      const uint32_t got = jportal::crc32(seed, buf + off, len);
      const uint32_t want = len % 97 == 0 ? bitwise(seed, buf + off, len) : jportal::crc32Table(seed, buf + off, len);
      checked++;
      if (got != want && bad++ < 5) fprintf(stderr, "crc32_test: length %zu offset %zu: %08x, want %08x\n", len, off, got, want);
    }
  const uint32_t check = jportal::crc32(0, "123456789", 9);
  if (check != 0xCBF43926u) fprintf(stderr, "crc32_test: check value %08x, want cbf43926\n", check), bad++;
  if (jportal::crc32Table(0, buf, 4096) != bitwise(0, buf, 4096)) fprintf(stderr, "crc32_test: the table disagrees with the bitwise reference\n"), bad++;
  __builtin_cpu_init();
  printf("crc32_test: %zu lengths and alignments compared, %zu differ (carry-less multiplication %s)\n", checked, bad,
         __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") ? "used" : "not available: table only");
  return bad ? 1 : 0;
}
