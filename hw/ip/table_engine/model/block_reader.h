// The entry decoder: splits one block's contents into (key, value) entries, as the RTL's entry
// decoder does on the block stream: the restart count first (the block's last 4 bytes), then entries
// front to back up to the restart array; restart offsets themselves are not needed to stream.
#ifndef TABLE_ENGINE_BLOCK_READER_H
#define TABLE_ENGINE_BLOCK_READER_H

#include <cstdint>
#include <string>
#include <string_view>

namespace table_engine {

class BlockReader {
 public:
  // `file_offset` is where the block starts in its table; `decompressed` says the contents came out
  // of the Snappy decoder (errors then name the block's offset and the position inside it).
  void Start(std::string_view contents, const std::string* table, uint64_t file_offset, bool decompressed,
             size_t max_key_bytes);
  // Decodes the next entry; false at the end of the block. Throws BAD_BLOCK / BAD_VARINT / KEY_TOO_LONG.
  bool Next();
  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }
  // Offset of the current entry in its table (the block's offset for a decompressed block).
  uint64_t entry_offset() const { return Where(entry_pos_); }
  uint64_t entries_bytes() const { return end_; }
  // For the cycle estimate: the block's restart count and the current entry's prefix split.
  uint32_t restarts() const { return restarts_; }
  uint32_t shared() const { return shared_; }
  uint32_t non_shared() const { return non_shared_; }
  // BAD_BLOCK unless the first restart point is offset 0. LevelDB's BlockBuilder always writes 0 there;
  // LevelDB's own iterator would start at whatever it says (past the entries: an empty block), silently
  // dropping entries, which the engine never does. The table reader asks it of every block it reads.
  void RequireFirstRestartAtZero() const;

 private:
  [[noreturn]] void Fail(int code, size_t pos, const std::string& msg) const;
  uint64_t Where(size_t pos) const { return decompressed_ ? file_offset_ : file_offset_ + pos; }
  const uint8_t* data_ = nullptr;
  size_t pos_ = 0, end_ = 0, entry_pos_ = 0, max_key_ = 0;
  uint32_t restarts_ = 0, shared_ = 0, non_shared_ = 0;
  const std::string* table_ = nullptr;
  uint64_t file_offset_ = 0;
  bool decompressed_ = false;
  std::string key_;
  std::string_view value_;
};

}  // namespace table_engine

#endif
