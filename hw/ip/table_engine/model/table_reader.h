// Read side of one merge way: a run's tables one after the other, each as footer -> index block ->
// data blocks in index order -> entries; every entry checked (tag present, key length, strictly
// ascending internal keys through the whole run).
#ifndef TABLE_ENGINE_TABLE_READER_H
#define TABLE_ENGINE_TABLE_READER_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "block_reader.h"
#include "cycle_work.h"
#include "format.h"

namespace table_engine {

struct ReadStats {
  BlockReadStats blocks;
  cycle_model::DecodeWork decode;  // the data blocks' entry decoding (the index's is a table-open cost)
  uint64_t entries = 0, key_bytes = 0, value_bytes = 0, entry_bytes = 0;
};

// A part of a sub-compaction reads a window of a run: from data block `first_block` (index entry
// number) of its first table to `last_block` of its last table, keeping only user keys in (lo, hi]
// (a null bound is open). Blocks outside the window are never read.
struct ReadWindow {
  uint64_t first_block = 0;
  uint64_t last_block = UINT64_MAX;
  const std::string* lo = nullptr;
  const std::string* hi = nullptr;
  // The window's first lo_blocks blocks are shared with the previous part, its blocks from number
  // hi_from on with the next: only there may keys at or below lo, or above hi, lie (BAD_BLOCK elsewhere).
  uint64_t lo_blocks = 1, hi_from = 0;
};

class TableReader {
 public:
  // Reads data blocks first_block..last_block (index entry numbers) of the table; Snappy blocks of up to
  // max_decompressed bytes (the RTL table reader's block buffer is smaller than kMaxBlockBytes).
  TableReader(const TableImage* image, bool verify_crc, ReadStats* stats, uint64_t first_block = 0,
              uint64_t last_block = UINT64_MAX, size_t max_decompressed = kMaxBlockBytes);
  bool Next();  // false at the table's end
  std::string_view key() const { return data_.key(); }
  std::string_view value() const { return data_.value(); }
  uint64_t offset() const { return data_.entry_offset(); }
  uint64_t block_number() const { return block_ - 1; }  // the current data block's index entry
  uint64_t blocks_started() const { return block_ > first_block_ ? block_ - first_block_ : 0; }

 private:
  bool NextBlock();
  const TableImage* t_;
  bool verify_;
  size_t max_decompressed_;
  ReadStats* stats_;
  std::string index_scratch_, data_scratch_;
  BlockReader index_, data_;
  bool in_block_ = false;
  uint64_t block_ = 0, first_block_, last_block_;  // index entries passed; the window
};

class RunReader {
 public:
  RunReader(std::vector<TableImage> tables, bool verify_crc, ReadStats* stats, ReadWindow window = {});
  bool Valid() const { return valid_; }
  void Next();
  std::string_view key() const { return cur_->key(); }
  std::string_view value() const { return cur_->value(); }
  const std::string& table() const { return tables_[idx_].name; }
  uint64_t offset() const { return cur_->offset(); }

 private:
  void Advance();
  void Open();
  bool InWindow();  // false: below lo (skip); past hi ends the run (valid_ stays false)
  std::vector<TableImage> tables_;
  ReadWindow window_;
  bool above_lo_ = false, past_hi_ = false;
  uint64_t done_blocks_ = 0;  // window blocks of the tables already finished
  bool verify_;
  ReadStats* stats_;
  size_t idx_ = 0;
  std::unique_ptr<TableReader> cur_;
  std::string prev_;
  bool have_prev_ = false, valid_ = false;
};

}  // namespace table_engine

#endif
