// The filter block: one Bloom filter per 2 KiB (2^kFilterBaseLg) of data-block file offset over the
// user keys of the blocks starting there, LevelDB's bloom hash and probe sequence, the filters'
// offset array and the base lg. Policy name "leveldb.BuiltinBloomFilter2".
#ifndef TABLE_ENGINE_FILTER_BLOCK_H
#define TABLE_ENGINE_FILTER_BLOCK_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace table_engine {

constexpr int kFilterBaseLg = 11;
constexpr const char* kBloomPolicyName = "leveldb.BuiltinBloomFilter2";

uint32_t BloomHash(std::string_view key);

class FilterBlockBuilder {
 public:
  explicit FilterBlockBuilder(int bits_per_key);
  void StartBlock(uint64_t block_offset);
  void AddKey(std::string_view user_key);
  const std::string& Finish();

 private:
  void EmitFilter();
  size_t bits_per_key_, probes_;
  std::vector<uint32_t> hashes_;  // the hardware hashes each key as it arrives, keeps only the hash
  std::vector<uint32_t> offsets_;
  std::string out_;
};

}  // namespace table_engine

#endif
