// Cycle estimate of one job on one unit, UNCALIBRATED until the RTL exists. The pipeline (every
// stream kStreamBytes wide, stages decoupled by FIFOs, so the slowest stage sets the pace):
//   read DMA -> CRC check -> Snappy decompress -> entry decode -> K-way merge -> drop
//     -> block build -> Snappy compress (kCompressors lanes) -> CRC -> write DMA
// cycles = max(stage costs) + per-block, per-table and per-job overheads + the cascade's extra passes.
// hw/ip/table_engine/doc/model.md explains each term.
#ifndef TABLE_ENGINE_CYCLE_MODEL_H
#define TABLE_ENGINE_CYCLE_MODEL_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compaction.h"

namespace table_engine {
namespace cycle_model {

constexpr uint64_t kStreamBytes = 16;            // bytes per clock on every stream
constexpr uint64_t kSnappyDecodeBytes = 8;       // decompressor output bytes per clock (one element/clock at least)
constexpr uint64_t kCompressors = 8;             // compressor lanes, one block each (see model.md)
constexpr uint64_t kCompressBytesPerLane = 1;    // input bytes per clock per lane
constexpr uint64_t kBlockOverheadCycles = 24;    // DMA descriptor, trailer, block state machines
constexpr uint64_t kTableOpenCycles = 160;       // footer read then index read: two DDR round trips
constexpr uint64_t kTableCloseCycles = 64;       // filter/metaindex/index/footer hand-off, table report
constexpr uint64_t kJobOverheadCycles = 256;     // job descriptor, start, completion

struct Estimate {
  std::vector<std::pair<std::string, uint64_t>> stages;  // name -> cycles if it ran alone
  uint64_t pipeline = 0, overhead = 0, cascade = 0, passes = 1, total = 0;
};

Estimate EstimateJob(const CompactionResult& r, size_t runs, size_t tables_in, int ways, bool verify_checksums);

}  // namespace cycle_model
}  // namespace table_engine

#endif
