#include "block_builder.h"

#include "coding.h"

namespace table_engine {

void BlockBuilder::Reset() {
  buf_.clear();
  last_key_.clear();
  restarts_.assign(1, 0);
  since_restart_ = 0;
  entries_ = 0;
}

void BlockBuilder::Add(std::string_view key, std::string_view value) {
  size_t shared = 0;
  if (since_restart_ < interval_) {
    size_t n = key.size() < last_key_.size() ? key.size() : last_key_.size();
    while (shared < n && key[shared] == last_key_[shared]) shared++;
  } else {
    restarts_.push_back(uint32_t(buf_.size()));
    since_restart_ = 0;
  }
  AppendVarint32(&buf_, uint32_t(shared));
  AppendVarint32(&buf_, uint32_t(key.size() - shared));
  AppendVarint32(&buf_, uint32_t(value.size()));
  buf_.append(key.data() + shared, key.size() - shared);
  buf_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  last_shared_ = shared;
  since_restart_++;
  entries_++;
}

const std::string& BlockBuilder::Finish() {
  for (uint32_t r : restarts_) AppendFixed32(&buf_, r);
  AppendFixed32(&buf_, uint32_t(restarts_.size()));
  return buf_;
}

}  // namespace table_engine
