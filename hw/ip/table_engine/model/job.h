// The job format lsmc-table-job/1 (hw/ip/table_engine/doc/table-engine.md; summary in hw/ip/table_engine/doc/model.md):
// job.json -> a CompactionSpec with every input table loaded (the DDR image the host would place);
// the result -> result.json. Any fault is BAD_JOB naming the file.
#ifndef TABLE_ENGINE_JOB_H
#define TABLE_ENGINE_JOB_H

#include <deque>
#include <string>

#include "coding.h"  // Hex
#include "compaction.h"

namespace table_engine {

struct LoadedJob {
  CompactionSpec spec;
  std::deque<std::string> images;  // the tables' bytes (spec's TableImages point into them)
  size_t tables_in = 0;
};

// `output_buffer_bytes`: each output table's buffer capacity.
LoadedJob LoadJob(const std::string& job_path, uint64_t output_buffer_bytes);

std::string ResultJson(const CompactionResult& r);

}  // namespace table_engine

#endif
