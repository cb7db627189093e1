// One job = one LevelDB compaction (DBImpl::DoCompactionWork): merged entries pass the drop stage,
// the kept ones go to output tables that close at max_file_size or where the grandparent overlap
// says (Compaction::ShouldStopBefore).
#ifndef TABLE_ENGINE_COMPACTION_H
#define TABLE_ENGINE_COMPACTION_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format.h"
#include "internal_key.h"
#include "table_reader.h"
#include "table_writer.h"

namespace table_engine {

struct KeyRange {
  std::string smallest, largest;  // user keys
};

struct Grandparent {
  std::string largest;  // internal key
  uint64_t size = 0;
};

struct CompactionSpec {
  std::vector<std::vector<TableImage>> runs;  // newest first
  WriterOptions writer;
  uint64_t max_file_size = 2u << 20;
  bool verify_checksums = false;
  uint64_t smallest_snapshot = 0;
  std::vector<Grandparent> grandparents;
  std::vector<std::vector<KeyRange>> deeper_levels;
  uint64_t first_file_number = 1;
};

struct OutputTable {
  uint64_t number = 0;
  std::string file, bytes, smallest, largest;
  uint64_t entries = 0;
};

struct CompactionResult {
  std::vector<OutputTable> tables;
  uint64_t entries_in = 0, entries_out = 0, dropped = 0, bytes_in = 0, bytes_out = 0;
  ReadStats read;
  WriteStats write;
  cycle_model::MergeWork merge;
};

std::string TableFileName(uint64_t number);  // "000123.ldb"

// Compaction::IsBaseLevelForKey: no file of a deeper level holds the user key in its range. Keys
// arrive in order, so each level's file pointer only moves forward (asking for every key in order
// gives the same answers as asking only where the drop rule needs it).
class BaseLevelCheck {
 public:
  explicit BaseLevelCheck(const std::vector<std::vector<KeyRange>>& levels) : levels_(levels), ptr_(levels.size()) {}
  bool IsBase(std::string_view user_key);

 private:
  const std::vector<std::vector<KeyRange>>& levels_;
  std::vector<size_t> ptr_;
};

// DBImpl::DoCompactionWork's drop decision for each merged internal key, in merge order.
class DropRule {
 public:
  DropRule(uint64_t smallest_snapshot, const std::vector<std::vector<KeyRange>>& deeper_levels)
      : smallest_snapshot_(smallest_snapshot), base_(deeper_levels) {}
  bool Drop(std::string_view ikey);

 private:
  uint64_t smallest_snapshot_;
  BaseLevelCheck base_;
  std::string current_user_key_;
  bool has_current_ = false;
  uint64_t last_sequence_ = kMaxSequence;  // "no newer entry" (LevelDB uses kMaxSequenceNumber too)
};

CompactionResult RunCompaction(const CompactionSpec& spec);

// The merge, drop and write stages over the given readers (whose stats point into out->read):
// output tables numbered from first_file_number. RunCompaction is this over every run whole; a
// sub-compaction part (subcompaction.h) is this over its windows of the runs.
void CompactRuns(const CompactionSpec& spec, std::vector<std::unique_ptr<RunReader>> runs,
                 uint64_t first_file_number, CompactionResult* out);

}  // namespace table_engine

#endif
