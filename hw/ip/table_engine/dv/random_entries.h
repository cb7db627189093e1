// The random entries the table engine's harnesses draw (block reader, block builder): key lengths that
// visit the limit, short and long values, empty ones. One place, so the units are checked on the same mix.
#pragma once

#include <cstdint>
#include <string>

#include "limits.h"
#include "tb.h"

namespace te_dv {

inline uint64_t Below(simc::Prng& r, uint64_t n) { return n ? r.next() % n : 0; }

// `n` bytes: any byte, or letters from the first `alphabet` of 'a'.. (compressible, sortable by eye).
inline std::string RandomBytes(simc::Prng& r, size_t n, int alphabet) {
  std::string s(n, '\0');
  for (auto& ch : s) ch = char(alphabet ? 'a' + Below(r, alphabet) : Below(r, 256));
  return s;
}

// An internal key's length: at the limit 1 in 10, anywhere up to it 1 in 10, else short ones.
inline size_t KeyLength(simc::Prng& r) {
  const size_t lim = table_engine::kMaxInternalKeyBytes;
  switch (Below(r, 10)) {
    case 0: return lim - Below(r, 4);  // at the limit
    case 1: return 1 + Below(r, lim);
    case 2: case 3: return 1 + Below(r, 128);
    default: return 1 + Below(r, 24);
  }
}

// A value's length: up to `maxValue` 1 in 10, up to 4 KiB 2 in 10, empty 1 in 10, else short.
inline size_t ValueLength(simc::Prng& r, uint64_t maxValue) {
  switch (Below(r, 10)) {
    case 0: return Below(r, maxValue + 1);
    case 1: case 2: return Below(r, 4097);
    case 3: return 0;
    default: return Below(r, 129);
  }
}

}  // namespace te_dv
