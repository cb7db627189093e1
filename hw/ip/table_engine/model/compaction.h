// One job = one LevelDB compaction (DBImpl::DoCompactionWork): merged entries pass the drop stage,
// the kept ones go to output tables that close at max_file_size or where the grandparent overlap
// says (Compaction::ShouldStopBefore).
#ifndef TABLE_ENGINE_COMPACTION_H
#define TABLE_ENGINE_COMPACTION_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format.h"
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
  uint64_t merge_key_beats = 0;
};

std::string TableFileName(uint64_t number);  // "000123.ldb"

CompactionResult RunCompaction(const CompactionSpec& spec);

// The merge, drop and write stages over the given readers (whose stats point into out->read):
// output tables numbered from first_file_number. RunCompaction is this over every run whole; a
// sub-compaction part (subcompaction.h) is this over its windows of the runs.
void CompactRuns(const CompactionSpec& spec, std::vector<std::unique_ptr<RunReader>> runs,
                 uint64_t first_file_number, CompactionResult* out);

}  // namespace table_engine

#endif
