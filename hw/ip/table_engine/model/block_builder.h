// One block being built: entries prefix-compressed against the previous key, a full key at every
// restart point (each block_restart_interval entries), then the restart offsets and their count.
#ifndef TABLE_ENGINE_BLOCK_BUILDER_H
#define TABLE_ENGINE_BLOCK_BUILDER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace table_engine {

class BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : interval_(restart_interval) { Reset(); }
  void Reset();
  void Add(std::string_view key, std::string_view value);
  // Size the finished block would have now (LevelDB's flush rule compares this with block_size).
  size_t SizeEstimate() const { return buf_.size() + 4 * restarts_.size() + 4; }
  // Appends the restart array; the contents stay valid until Reset().
  const std::string& Finish();
  bool empty() const { return buf_.empty(); }
  uint64_t entries() const { return entries_; }
  // For the cycle estimate: the last Add's shared prefix, the restart offsets so far.
  size_t last_shared() const { return last_shared_; }
  size_t restarts() const { return restarts_.size(); }

 private:
  int interval_;
  std::string buf_, last_key_;
  std::vector<uint32_t> restarts_;
  int since_restart_ = 0;
  uint64_t entries_ = 0;
  size_t last_shared_ = 0;
};

}  // namespace table_engine

#endif
