// The base-level walker's load (doc/table_engine_top.md, "The walker's load"): a job's deeper levels' file ranges
// and its grandparents as the beats of the engine's `baseLoad` stream. Shared by the engine's testbench
// (table_engine_sim.cpp) and the register front end's, which writes the same beats into memory as TE_LOAD records
// (te_unit_harness.cpp). No Verilator type here.
#ifndef TABLE_ENGINE_WALKER_LOADS_H
#define TABLE_ENGINE_WALKER_LOADS_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compaction.h"
#include "limits.h"
#include "table_engine_sim.h"

namespace table_engine_sim {

struct Load {  // one beat of the walker's load stream
  int target;
  uint32_t addr;
  std::vector<uint8_t> data;  // max(W, 8) bytes
};

// The walker's capacities, as the generator got them (lsmc.build.table_engine_top.WALKER).
struct WalkerLimits {
  size_t levels, files, keyWords, grandparents;
};

// The walker's load: each level's files' (smallest, largest) user keys word by word, their descriptors,
// the levels' first files and counts, and the level count (the final beat).
inline std::vector<Load> WalkerLoads(const te::CompactionSpec& s, const std::string& job, size_t W,
                                     const WalkerLimits& lim, const Part* part = nullptr) {
  auto Refuse = [](const char* reason, const std::string& table, const std::string& msg) {
    throw Refused(reason, table, msg);
  };
  const size_t kMaxLevels = lim.levels, kMaxRanges = lim.files, kRangeWords = lim.keyWords,
               kMaxGrandparents = lim.grandparents;
  std::vector<Load> loads;
  if (s.deeper_levels.size() > kMaxLevels)
    Refuse("limits", job, std::to_string(s.deeper_levels.size()) + " deeper levels: the engine's walker holds " +
         std::to_string(kMaxLevels));
  uint32_t word = 0, range = 0;
  auto keyWords = [&](const std::string& k) {
    uint32_t at = word;
    for (size_t p = 0; p < k.size() || (p == 0 && k.empty()); p += W) {
      size_t n = std::min<size_t>(W, k.size() - std::min(p, k.size()));
      Load l{0, word++, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
      std::memcpy(l.data.data(), k.data() + p, n);
      loads.push_back(std::move(l));
      if (k.empty()) break;
    }
    return at;
  };
  std::vector<std::pair<uint32_t, uint32_t>> levels;
  for (const auto& files : s.deeper_levels) {
    levels.push_back({range, uint32_t(files.size())});
    for (const auto& f : files) {
      if (f.smallest.size() > 0xffff || f.largest.size() > 0xffff)
        Refuse("limits", job, "a deeper level's key is over 65535 bytes");
      uint32_t so = keyWords(f.smallest), lo = keyWords(f.largest);
      uint64_t d = uint64_t(so) | uint64_t(f.smallest.size()) << 16 | uint64_t(lo) << 32 |
                   uint64_t(f.largest.size()) << 48;
      Load l{1, range++, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
      std::memcpy(l.data.data(), &d, 8);
      loads.push_back(std::move(l));
    }
  }
  if (range > kMaxRanges || word > kRangeWords)
    Refuse("limits", job, "the deeper levels' " + std::to_string(range) + " files (" +
         std::to_string(word * W) + " key bytes) exceed the walker's " + std::to_string(kMaxRanges) + " files / " +
         std::to_string(kRangeWords * W) + " bytes");
  for (size_t l = 0; l < levels.size(); l++) {
    uint64_t d = levels[l].first | uint64_t(levels[l].second) << 16;
    Load x{2, uint32_t(l), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(x.data.data(), &d, 8);
    loads.push_back(std::move(x));
  }
  // The grandparents' largest internal keys, sizes and tags (Compaction::ShouldStopBefore).
  if (s.grandparents.size() > kMaxGrandparents)
    Refuse("limits", job, std::to_string(s.grandparents.size()) + " grandparents: the walker holds " +
         std::to_string(kMaxGrandparents));
  for (size_t i = 0; i < s.grandparents.size(); i++) {
    const auto& g = s.grandparents[i];
    if (g.size > 0xffffffffull || g.largest.size() > 0xffff)
      Refuse("limits", job, "grandparents[" + std::to_string(i) + "]: size or key over the walker's fields");
    uint32_t off = keyWords(g.largest);
    uint64_t d = uint64_t(off) | uint64_t(g.largest.size()) << 16 | uint64_t(g.size) << 32;
    Load x{4, uint32_t(i), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(x.data.data(), &d, 8);
    loads.push_back(std::move(x));
    Load t{5, uint32_t(i), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(t.data.data(), g.largest.data() + g.largest.size() - 8, 8);
    loads.push_back(std::move(t));
  }
  // A sub-compaction part's bounds: BOUND addr 0 (lo), 1 (hi), each a key in the range-key RAM.
  for (int b = 0; part != nullptr && b < 2; b++) {
    if (!(b ? part->hasHi : part->hasLo)) continue;
    const std::string& k = b ? part->hi : part->lo;
    if (k.size() + 8 > te::kMaxInternalKeyBytes)
      Refuse("limits", job, std::string("the part's ") + (b ? "hi" : "lo") + " bound of " + std::to_string(k.size()) +
             " bytes is over the engine's user-key limit");
    uint64_t d = uint64_t(keyWords(k)) | uint64_t(k.size()) << 16;
    Load x{7, uint32_t(b), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(x.data.data(), &d, 8);
    loads.push_back(std::move(x));
  }
  if (word > kRangeWords)
    Refuse("limits", job, "the deeper levels' and grandparents' keys (" + std::to_string(word * W) +
         " bytes) exceed the walker's " + std::to_string(kRangeWords * W));
  {
    Load c{6, 0, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    uint16_t n = uint16_t(s.grandparents.size());
    std::memcpy(c.data.data(), &n, 2);
    loads.push_back(std::move(c));
  }
  Load n{3, 0, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
  n.data[0] = uint8_t(levels.size());
  loads.push_back(std::move(n));
  return loads;
}

}  // namespace table_engine_sim

#endif
