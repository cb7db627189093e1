#include "table_reader.h"

#include "coding.h"
#include "error.h"
#include "internal_key.h"
#include "limits.h"

namespace table_engine {

TableReader::TableReader(const TableImage* image, bool verify_crc, ReadStats* stats, uint64_t first_block,
                         uint64_t last_block, size_t max_decompressed)
    : t_(image), verify_(verify_crc), max_decompressed_(max_decompressed), stats_(stats), first_block_(first_block),
      last_block_(last_block) {
  BlockHandle ih = ReadFooter(*t_);
  stats_->blocks.bytes += kFooterBytes;
  std::string_view idx = ReadBlock(*t_, ih, verify_, &index_scratch_, &stats_->blocks, max_decompressed_);
  bool z = idx.data() == index_scratch_.data();
  // Index keys are separators no longer than the keys they separate.
  index_.Start(idx, &t_->name, ih.offset, z, kMaxInternalKeyBytes);
  index_.RequireFirstRestartAtZero();
}

bool TableReader::NextBlock() {
  // Index entries before the window are decoded (the index is a stream) but their blocks not read.
  for (;;) {
    if (block_ > last_block_ || !index_.Next()) return false;
    if (block_++ >= first_block_) break;
  }
  BlockHandle h = DecodeIndexHandle(index_.value(), t_->name, index_.entry_offset());
  std::string_view block = ReadBlock(*t_, h, verify_, &data_scratch_, &stats_->blocks, max_decompressed_);
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

RunReader::RunReader(std::vector<TableImage> tables, bool verify_crc, ReadStats* stats, ReadWindow window)
    : tables_(std::move(tables)), window_(window), verify_(verify_crc), stats_(stats) {
  Open();
  Advance();
}

void RunReader::Open() {
  if (idx_ >= tables_.size()) return;
  uint64_t first = idx_ == 0 ? window_.first_block : 0;
  uint64_t last = idx_ + 1 == tables_.size() ? window_.last_block : UINT64_MAX;
  cur_ = std::make_unique<TableReader>(&tables_[idx_], verify_, stats_, first, last);
}

void RunReader::Next() {
  prev_.assign(cur_->key());
  have_prev_ = true;
  Advance();
}

// The parts' windows tile each run and overlap where a block may hold keys of both neighbours; a key
// outside (lo, hi] anywhere else means the index does not bound its data blocks, and no part would
// keep the key: BAD_BLOCK, never a lost entry.
bool RunReader::InWindow() {
  std::string_view user = UserKey(cur_->key());
  uint64_t pos = done_blocks_ + cur_->blocks_started() - 1;  // the block's number in the window
  if (window_.lo != nullptr && !above_lo_) {
    if (CompareBytes(user, *window_.lo) <= 0) {
      if (pos >= window_.lo_blocks)
        throw EngineError(ErrorCode::kBadBlock, tables_[idx_].name, cur_->offset(),
                          "key below the sub-compaction part's range past the blocks it shares with the "
                          "previous part: the index entries do not bound their data blocks");
      return false;
    }
    above_lo_ = true;  // keys ascend: no later key is at or below lo
  }
  if (window_.hi != nullptr && CompareBytes(user, *window_.hi) > 0) {
    if (pos < window_.hi_from)
      throw EngineError(ErrorCode::kBadBlock, tables_[idx_].name, cur_->offset(),
                        "key above the sub-compaction part's range before the blocks it shares with the "
                        "next part: the index entries do not bound their data blocks");
    past_hi_ = true;
  }
  return true;
}

void RunReader::Advance() {
  valid_ = false;
  while (cur_ && !past_hi_) {
    if (cur_->Next()) {
      if (have_prev_ && CompareInternal(prev_, cur_->key()) >= 0)
        throw EngineError(ErrorCode::kKeyOrder, tables_[idx_].name, cur_->offset(),
                          "key does not follow the run's previous key in internal-key order");
      if (!InWindow()) {  // below the part's range: checked for order, not merged
        prev_.assign(cur_->key());
        have_prev_ = true;
        continue;
      }
      valid_ = !past_hi_;  // the first key past hi ends this part's share of the run
      return;
    }
    done_blocks_ += cur_->blocks_started();
    cur_.reset();
    ++idx_;
    Open();
  }
}

}  // namespace table_engine
