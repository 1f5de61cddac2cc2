// Self-test of the ring and the record format without a JVM: many records of varied sizes through a
// small ring (so the stream wraps around many times), drained by the agent's own writer thread; the
// resulting meta.jpt must hold every record in order with correct framing, CRCs and seq numbers.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../src/crc32.h"
#include "../src/records.h"
#include "../src/ring.h"

using namespace jportal;

static int failures = 0;
#define CHECK(c)                                                 \
  do {                                                           \
    if (!(c)) {                                                  \
      fprintf(stderr, "ring_test: FAILED %s (line %d)\n", #c, __LINE__); \
      failures++;                                                \
    }                                                            \
  } while (0)

// An independent, bit-at-a-time CRC-32 to check the agent's table-driven one against.
static uint32_t slowCrc(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

int main() {
  CHECK(jportal::crc32(0, "123456789", 9) == 0xCBF43926u);  // the standard check value
  CHECK(jportal::crc32(0, "", 0) == 0);
  CHECK(jportal::crc32(jportal::crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u);
  char tmpl[] = "/tmp/jportal-ring-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  Ring ring;
  Ring::Options o;
  o.capacity = 64 * 1024;
  o.waitMs = 5000;
  o.outDir = dir + "/trace";
  CHECK(ring.start(o));
  const int kRecords = 5000;
  uint64_t payloadBytes = 0;
  for (int i = 0; i < kRecords; i++) {
    Payload p;
    p.u32((uint32_t)i);
    size_t n = (size_t)((i * 7919) % 3000);
    std::vector<uint8_t> body(n, (uint8_t)i);
    p.bytes(body.data(), body.size());
    payloadBytes += p.size();
    CHECK(ring.commit(CODE_BLOB, 0, p));
  }
  ring.finish();
  RingStats s = ring.stats();
  CHECK(s.records == (uint64_t)kRecords);
  CHECK(s.dropped == 0);

  std::string file = o.outDir + "/meta.jpt";
  FILE* f = fopen(file.c_str(), "rb");
  CHECK(f != nullptr);
  if (!f) return 1;
  std::vector<uint8_t> all;
  uint8_t buf[65536];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) all.insert(all.end(), buf, buf + r);
  fclose(f);
  std::vector<uint8_t> header = encodeFileHeader();
  CHECK(all.size() == header.size() + (size_t)kRecords * RECORD_HEADER_SIZE + payloadBytes);
  CHECK(std::equal(header.begin(), header.end(), all.begin()));
  size_t off = header.size();
  int seen = 0;
  uint64_t lastTsc = 0;
  while (off + RECORD_HEADER_SIZE <= all.size()) {
    uint32_t size, crc, id;
    uint64_t seq, tsc;
    memcpy(&size, &all[off], 4);
    memcpy(&seq, &all[off + 8], 8);
    memcpy(&tsc, &all[off + 16], 8);
    memcpy(&crc, &all[off + 24], 4);
    memcpy(&id, &all[off + 28], 4);
    CHECK(size >= RECORD_HEADER_SIZE && off + size <= all.size());
    if (size < RECORD_HEADER_SIZE || off + size > all.size()) break;
    std::vector<uint8_t> rec(all.begin() + off, all.begin() + off + size);
    memset(&rec[24], 0, 4);
    CHECK(slowCrc(rec.data(), rec.size()) == crc);
    CHECK(seq == (uint64_t)seen);
    CHECK(id == (uint32_t)seen);
    CHECK(tsc >= lastTsc);
    lastTsc = tsc;
    off += size;
    seen++;
  }
  CHECK(seen == kRecords);
  struct stat st;
  CHECK(stat(("/dev/shm/jportal-" + std::to_string(getpid()) + ".ring").c_str(), &st) != 0);  // removed by its consumer
  std::string rm = "rm -rf '" + dir + "'";
  if (system(rm.c_str()) != 0) fprintf(stderr, "ring_test: could not remove %s\n", dir.c_str());
  if (failures) {
    fprintf(stderr, "ring_test: %d checks failed\n", failures);
    return 1;
  }
  printf("ring_test: %d records (%llu bytes) through a 64 KiB ring: framing, CRC, seq and tsc order hold\n", kRecords,
         (unsigned long long)(all.size() - header.size()));
  return 0;
}
