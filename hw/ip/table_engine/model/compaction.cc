#include "compaction.h"

#include <cstdio>
#include <memory>

#include "internal_key.h"
#include "merger.h"

namespace table_engine {

std::string TableFileName(uint64_t number) {
  char b[32];
  std::snprintf(b, sizeof b, "%06llu.ldb", static_cast<unsigned long long>(number));
  return b;
}

bool BaseLevelCheck::IsBase(std::string_view user_key) {
  for (size_t l = 0; l < levels_.size(); l++) {
    const auto& files = levels_[l];
    while (ptr_[l] < files.size()) {
      const KeyRange& f = files[ptr_[l]];
      if (CompareBytes(user_key, f.largest) <= 0) {
        if (CompareBytes(user_key, f.smallest) >= 0) return false;
        break;
      }
      ptr_[l]++;
    }
  }
  return true;
}

bool DropRule::Drop(std::string_view key) {
  bool drop = false;
  uint64_t tag = Tag(key);
  uint8_t type = uint8_t(tag & 0xff);
  uint64_t sequence = tag >> 8;
  if (type > kTypeValue) {
    // A key whose type does not parse is kept, and hides nothing after it.
    has_current_ = false;
    last_sequence_ = kMaxSequence;
  } else {
    std::string_view user = UserKey(key);
    if (!has_current_ || CompareBytes(user, current_user_key_) != 0) {
      current_user_key_.assign(user);
      has_current_ = true;
      last_sequence_ = kMaxSequence;
    }
    if (last_sequence_ <= smallest_snapshot_) {
      drop = true;  // a newer entry of this user key is visible to every snapshot
    } else if (type == kTypeDeletion && sequence <= smallest_snapshot_ && base_.IsBase(user)) {
      drop = true;  // no deeper level holds the key: the marker has nothing left to delete
    }
    last_sequence_ = sequence;
  }
  return drop;
}

namespace {

// Compaction::ShouldStopBefore: the bytes of grandparent files passed since the current output
// began; over 10 x max_file_size, a new output starts before this key. Sees every key, kept or not.
class GrandparentCheck {
 public:
  GrandparentCheck(const std::vector<Grandparent>& gp, uint64_t max_file_size)
      : gp_(gp), limit_(10 * max_file_size) {}
  bool StopBefore(std::string_view ikey) {
    while (idx_ < gp_.size() && CompareInternal(ikey, gp_[idx_].largest) > 0) {
      if (seen_key_) overlapped_ += gp_[idx_].size;
      idx_++;
    }
    seen_key_ = true;
    if (overlapped_ > limit_) {
      overlapped_ = 0;
      return true;
    }
    return false;
  }

 private:
  const std::vector<Grandparent>& gp_;
  uint64_t limit_, overlapped_ = 0;
  size_t idx_ = 0;
  bool seen_key_ = false;
};

}  // namespace

CompactionResult RunCompaction(const CompactionSpec& spec) {
  CompactionResult res;
  std::vector<std::unique_ptr<RunReader>> runs;
  for (const auto& run : spec.runs) {
    for (const auto& t : run) res.bytes_in += t.bytes.size();
    runs.push_back(std::make_unique<RunReader>(run, spec.verify_checksums, &res.read));
  }
  CompactRuns(spec, std::move(runs), spec.first_file_number, &res);
  return res;
}

void CompactRuns(const CompactionSpec& spec, std::vector<std::unique_ptr<RunReader>> runs,
                 uint64_t first_file_number, CompactionResult* out) {
  CompactionResult& res = *out;
  Merger merger(std::move(runs));
  DropRule drop(spec.smallest_snapshot, spec.deeper_levels);
  GrandparentCheck grandparents(spec.grandparents, spec.max_file_size);

  std::unique_ptr<TableWriter> writer;
  OutputTable cur;
  auto close_output = [&]() {
    cur.bytes = writer->Finish();
    cur.entries = writer->entries();
    res.bytes_out += cur.bytes.size();
    res.tables.push_back(std::move(cur));
    cur = OutputTable();
    writer.reset();
  };

  for (; merger.Valid(); merger.Next()) {
    std::string_view key = merger.key();
    res.entries_in++;
    if (grandparents.StopBefore(key) && writer) close_output();
    if (drop.Drop(key)) continue;

    if (!writer) {
      cur.number = first_file_number + res.tables.size();
      cur.file = TableFileName(cur.number);
      writer = std::make_unique<TableWriter>(spec.writer, cur.file, &res.write);
    }
    if (writer->entries() == 0) cur.smallest.assign(key);
    cur.largest.assign(key);
    writer->Add(key, merger.value());
    res.entries_out++;
    if (writer->FileSize() >= spec.max_file_size) close_output();
  }
  if (writer) close_output();
  res.dropped = res.entries_in - res.entries_out;
  res.merge = merger.work();
}

}  // namespace table_engine
