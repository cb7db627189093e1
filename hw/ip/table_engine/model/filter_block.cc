#include "filter_block.h"

#include "coding.h"

namespace table_engine {

uint32_t BloomHash(std::string_view key) {
  // Murmur-like: 4 bytes per step, then the 1-3 left over; seed 0xbc9f1d34.
  constexpr uint32_t m = 0xc6a4a793u;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(key.data());
  size_t n = key.size();
  uint32_t h = 0xbc9f1d34u ^ uint32_t(n * m);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h += LoadFixed32(p + i);
    h *= m;
    h ^= h >> 16;
  }
  size_t rest = n - i;
  if (rest > 0) {
    if (rest == 3) h += uint32_t(p[i + 2]) << 16;
    if (rest >= 2) h += uint32_t(p[i + 1]) << 8;
    h += p[i];
    h *= m;
    h ^= h >> 24;
  }
  return h;
}

FilterBlockBuilder::FilterBlockBuilder(int bits_per_key) : bits_per_key_(size_t(bits_per_key)) {
  // LevelDB rounds bits_per_key * ln 2 down, keeps it in [1, 30].
  probes_ = static_cast<size_t>(bits_per_key * 0.69);
  if (probes_ < 1) probes_ = 1;
  if (probes_ > 30) probes_ = 30;
}

void FilterBlockBuilder::StartBlock(uint64_t block_offset) {
  uint64_t index = block_offset >> kFilterBaseLg;
  while (index > offsets_.size()) EmitFilter();
}

void FilterBlockBuilder::AddKey(std::string_view user_key) { hashes_.push_back(BloomHash(user_key)); }

void FilterBlockBuilder::EmitFilter() {
  offsets_.push_back(uint32_t(out_.size()));
  if (hashes_.empty()) return;
  size_t bits = hashes_.size() * bits_per_key_;
  if (bits < 64) bits = 64;
  size_t bytes = (bits + 7) / 8;
  bits = bytes * 8;
  size_t base = out_.size();
  out_.resize(base + bytes, '\0');
  out_.push_back(char(probes_));
  for (uint32_t h : hashes_) {
    uint32_t delta = (h >> 17) | (h << 15);
    for (size_t j = 0; j < probes_; j++) {
      uint32_t bit = uint32_t(h % bits);
      out_[base + bit / 8] = char(uint8_t(out_[base + bit / 8]) | (1u << (bit % 8)));
      h += delta;
    }
  }
  hashes_.clear();
}

const std::string& FilterBlockBuilder::Finish() {
  if (!hashes_.empty()) EmitFilter();
  uint32_t array_at = uint32_t(out_.size());
  for (uint32_t o : offsets_) AppendFixed32(&out_, o);
  AppendFixed32(&out_, array_at);
  out_.push_back(char(kFilterBaseLg));
  return out_;
}

}  // namespace table_engine
