#include "table_reader.h"

#include "coding.h"
#include "error.h"
#include "internal_key.h"
#include "limits.h"

namespace table_engine {

TableReader::TableReader(const TableImage* image, bool verify_crc, ReadStats* stats)
    : t_(image), verify_(verify_crc), stats_(stats) {
  BlockHandle ih = ReadFooter(*t_);
  stats_->blocks.bytes += kFooterBytes;
  std::string_view idx = ReadBlock(*t_, ih, verify_, &index_scratch_, &stats_->blocks);
  bool z = idx.data() == index_scratch_.data();
  // Index keys are separators no longer than the keys they separate.
  index_.Start(idx, &t_->name, ih.offset, z, kMaxInternalKeyBytes);
  index_.RequireFirstRestartAtZero();
}

bool TableReader::NextBlock() {
  if (!index_.Next()) return false;
  std::string_view v = index_.value();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
  const uint8_t* lim = p + v.size();
  BlockHandle h;
  p = ParseVarint64(p, lim, &h.offset);
  if (p != nullptr) p = ParseVarint64(p, lim, &h.size);
  if (p == nullptr)
    throw EngineError(ErrorCode::kBadVarint, t_->name, index_.entry_offset(),
                      "index entry's block handle varint runs past its value");
  std::string_view block = ReadBlock(*t_, h, verify_, &data_scratch_, &stats_->blocks);
  bool z = block.data() == data_scratch_.data();
  data_.Start(block, &t_->name, h.offset, z, kMaxInternalKeyBytes);
  data_.RequireFirstRestartAtZero();
  stats_->entry_bytes += data_.entries_bytes();
  stats_->decode.Block(block.size(), data_.restarts());
  return true;
}

bool TableReader::Next() {
  for (;;) {
    if (in_block_ && data_.Next()) break;
    in_block_ = NextBlock();
    if (!in_block_) return false;
  }
  std::string_view k = data_.key();
  if (k.size() < 8)
    throw EngineError(ErrorCode::kBadBlock, t_->name, data_.entry_offset(),
                      "key of " + std::to_string(k.size()) + " bytes has no 8-byte sequence/type tag");
  stats_->entries++;
  stats_->decode.Entry(data_.shared(), data_.non_shared(), data_.value().size());
  stats_->key_bytes += k.size();
  stats_->value_bytes += data_.value().size();
  return true;
}

RunReader::RunReader(std::vector<TableImage> tables, bool verify_crc, ReadStats* stats)
    : tables_(std::move(tables)), verify_(verify_crc), stats_(stats) {
  if (!tables_.empty()) cur_ = std::make_unique<TableReader>(&tables_[0], verify_, stats_);
  Advance();
}

void RunReader::Next() {
  prev_.assign(cur_->key());
  have_prev_ = true;
  Advance();
}

void RunReader::Advance() {
  valid_ = false;
  while (cur_) {
    if (cur_->Next()) {
      if (have_prev_ && CompareInternal(prev_, cur_->key()) >= 0)
        throw EngineError(ErrorCode::kKeyOrder, tables_[idx_].name, cur_->offset(),
                          "key does not follow the run's previous key in internal-key order");
      valid_ = true;
      return;
    }
    cur_.reset();
    if (++idx_ < tables_.size()) cur_ = std::make_unique<TableReader>(&tables_[idx_], verify_, stats_);
  }
}

}  // namespace table_engine
