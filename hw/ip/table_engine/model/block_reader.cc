#include "block_reader.h"

#include "coding.h"
#include "error.h"

namespace table_engine {

void BlockReader::Fail(int code, size_t pos, const std::string& msg) const {
  std::string m = msg;
  if (decompressed_) m += " (at byte " + std::to_string(pos) + " of the decompressed block)";
  throw EngineError(static_cast<ErrorCode>(code), *table_, Where(pos), m);
}

void BlockReader::Start(std::string_view contents, const std::string* table, uint64_t file_offset,
                        bool decompressed, size_t max_key_bytes) {
  data_ = reinterpret_cast<const uint8_t*>(contents.data());
  table_ = table;
  file_offset_ = file_offset;
  decompressed_ = decompressed;
  max_key_ = max_key_bytes;
  key_.clear();
  pos_ = 0;
  const size_t n = contents.size();
  if (n < 4) Fail(int(ErrorCode::kBadBlock), 0, "block of " + std::to_string(n) + " bytes has no restart count");
  uint32_t restarts = LoadFixed32(data_ + n - 4);
  if (restarts == 0) Fail(int(ErrorCode::kBadBlock), n - 4, "block has no restart point");
  if (restarts > (n - 4) / 4)
    Fail(int(ErrorCode::kBadBlock), n - 4,
         "restart count " + std::to_string(restarts) + " does not fit a block of " + std::to_string(n) + " bytes");
  end_ = n - 4 - 4 * size_t(restarts);
  restarts_ = restarts;
}

void BlockReader::RequireFirstRestartAtZero() const {
  const uint32_t first = LoadFixed32(data_ + end_);
  if (first != 0)
    Fail(int(ErrorCode::kBadBlock), end_, "first restart point is " + std::to_string(first) + ", not 0");
}

bool BlockReader::Next() {
  if (pos_ >= end_) return false;
  entry_pos_ = pos_;
  const uint8_t* lim = data_ + end_;
  const uint8_t* p = data_ + pos_;
  uint32_t shared, non_shared, value_len;
  for (uint32_t* v : {&shared, &non_shared, &value_len}) {
    const uint8_t* q = ParseVarint32(p, lim, v);
    if (q == nullptr)
      Fail(int(ErrorCode::kBadVarint), size_t(p - data_), "entry length varint runs past the block's entries");
    p = q;
  }
  if (shared > key_.size())
    Fail(int(ErrorCode::kBadBlock), entry_pos_,
         "entry shares " + std::to_string(shared) + " key bytes, previous key has " + std::to_string(key_.size()));
  size_t left = size_t(lim - p);
  if (non_shared > left || value_len > left - non_shared)
    Fail(int(ErrorCode::kBadBlock), entry_pos_, "entry's key and value run past the block's entries");
  if (size_t(shared) + non_shared > max_key_)
    Fail(int(ErrorCode::kKeyTooLong), entry_pos_,
         "key of " + std::to_string(size_t(shared) + non_shared) + " bytes exceeds the engine's limit of " +
             std::to_string(max_key_));
  shared_ = shared;
  non_shared_ = non_shared;
  key_.resize(shared);
  key_.append(reinterpret_cast<const char*>(p), non_shared);
  p += non_shared;
  value_ = std::string_view(reinterpret_cast<const char*>(p), value_len);
  pos_ = size_t(p - data_) + value_len;
  return true;
}

}  // namespace table_engine
