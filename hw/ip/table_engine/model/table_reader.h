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

class TableReader {
 public:
  TableReader(const TableImage* image, bool verify_crc, ReadStats* stats);
  bool Next();  // false at the table's end
  std::string_view key() const { return data_.key(); }
  std::string_view value() const { return data_.value(); }
  uint64_t offset() const { return data_.entry_offset(); }

 private:
  bool NextBlock();
  const TableImage* t_;
  bool verify_;
  ReadStats* stats_;
  std::string index_scratch_, data_scratch_;
  BlockReader index_, data_;
  bool in_block_ = false;
};

class RunReader {
 public:
  RunReader(std::vector<TableImage> tables, bool verify_crc, ReadStats* stats);
  bool Valid() const { return valid_; }
  void Next();
  std::string_view key() const { return cur_->key(); }
  std::string_view value() const { return cur_->value(); }
  const std::string& table() const { return tables_[idx_].name; }
  uint64_t offset() const { return cur_->offset(); }

 private:
  void Advance();
  std::vector<TableImage> tables_;
  bool verify_;
  ReadStats* stats_;
  size_t idx_ = 0;
  std::unique_ptr<TableReader> cur_;
  std::string prev_;
  bool have_prev_ = false, valid_ = false;
};

}  // namespace table_engine

#endif
