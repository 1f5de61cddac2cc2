// CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace jportal {

// Continues a CRC: crc32(crc32(0, a), b) == crc32(0, a+b); crc32(0, "123456789", 9) == 0xCBF43926.
// (by carry-less multiplication where the CPU has it, for 64 bytes and more; else crc32Table)
uint32_t crc32(uint32_t crc, const void* data, size_t len);
// The same by table lookups (slicing by 8), on any x86-64.
uint32_t crc32Table(uint32_t crc, const void* data, size_t len);

}  // namespace jportal
