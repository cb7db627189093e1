// The data the Snappy harnesses (decompressor and compressor) compress: db_bench's values and LevelDB data
// blocks of db_bench's entries. One place, so both units are measured on the same blocks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "block_builder.h"
#include "random_entries.h"
#include "tb.h"

namespace te_dv {

// db_bench's value (its RandomGenerator at compression ratio 0.5): 50 random printable bytes, twice.
inline std::string DbBenchValue(simc::Prng& g) {
  std::string half;
  for (int i = 0; i < 50; i++) half.push_back(char(' ' + Below(g, 95)));
  return half + half;
}

// A LevelDB data block of about n bytes as a table holds it before compression: db_bench's entries
// (16-byte keys of consecutive numbers + the 8-byte sequence/type tag, 100-byte values) through the
// model's BlockBuilder (restart interval 16), closed once its size reaches n (LevelDB's flush rule).
inline std::string LevelDbBlock(simc::Prng& g, size_t n) {
  table_engine::BlockBuilder b(16);
  uint64_t key = Below(g, 1000000);
  while (b.SizeEstimate() < n) {
    char k[32];
    std::snprintf(k, sizeof k, "%016llu", static_cast<unsigned long long>(key++));
    std::string ikey(k, 16);
    const uint64_t tag = (key << 8) | 1;  // sequence, kTypeValue
    for (int i = 0; i < 8; i++) ikey.push_back(char(tag >> (8 * i)));
    b.Add(ikey, DbBenchValue(g));
  }
  return b.Finish();
}

}  // namespace te_dv
