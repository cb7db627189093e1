// Cycle estimate of one job on one unit. The stages that have RTL (entry decode = BlockReader,
// decompress = SnappyDecompressor, block build = BlockBuilder) count the beats their pipelines spend
// clocks on (cycle_work.h) plus a per-block cost fitted to the RTL's measured cycles on named jobs
// (doc/calibration.md, lsmc/build/table_engine_calibrate.py); the others are UNCALIBRATED design
// targets until their RTL exists. The pipeline (every stream kStreamBytes wide, stages decoupled by
// FIFOs, so the slowest stage sets the pace):
//   read DMA -> CRC check -> Snappy decompress -> entry decode -> K-way merge -> drop
//     -> block build -> Snappy compress (kZipLanes lanes, limits.h) -> CRC -> write DMA
// cycles = the stages' kStageNorm-norm (about the slowest stage's cost: see kStageNorm) + per-block, per-table
// and per-job overheads + the cascade's intermediate passes
// (each a job of its own on the unit: its share of the pipeline's work with nothing dropped, its overheads).
// hw/ip/table_engine/doc/model.md explains each term.
#ifndef TABLE_ENGINE_CYCLE_MODEL_H
#define TABLE_ENGINE_CYCLE_MODEL_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compaction.h"
#include "cycle_work.h"
#include "limits.h"

namespace table_engine {
namespace cycle_model {

// Calibrated against the RTL at W = kStreamBytes (doc/calibration.md): clocks per block besides the beats.
constexpr uint64_t kDecodeBlockCycles = 2;       // BlockReader: command, first header, verdict, status
constexpr uint64_t kDecompressBlockCycles = 7;   // SnappyDecompressor: raw length, final chunk, packer, status
constexpr uint64_t kBuildBlockCycles = 7;        // BlockBuilder: FLUSH, count, type, CRC, push stage, packer drain, status
// From the RTL's structure (doc/merge.md), not fitted: MergeDrop spends per entry its HEAD beat and the
// Check and Decide clocks of its pipelined select, besides the key and value beats (of its own width).
constexpr uint64_t kMergeEntryCycles = 3;
// The wider merge stage's input queue a run, in its beats (rtl/Merger.scala MergeConfig inputFifo).
constexpr uint64_t kMergeInputFifoBeats = 16;
// The drop filter's queue (rtl/Merger.scala, MergeDrop: the key limit in the merge stage's beats and this many more),
// where an entry's HEAD waits for the walker's verdict on its whole key: how far the merge side runs ahead of the
// writer.
constexpr uint64_t kDropQueueExtraBeats = 4;
// SnappyCompressor: length, preamble, the final chunk's packer drain, status (fitted like the above).
constexpr uint64_t kCompressBlockCycles = 8;
// The table writer's lanes (ZipLanes, kZipLanes of limits.h): per block besides the compressor, BlockZip's
// length hand-off, the buffer's read latency, the type byte, the result and the stored bytes' last beat.
constexpr uint64_t kZipBlockCycles = 6;
// Stages of about the same cost stall each other through their short FIFOs (a few beats to a few entries), so the
// pipeline takes longer than its slowest stage: the stages' 8-norm, which is the slowest alone when it leads by far
// and up to 9 % over it when three are within 5 %. Fitted on the whole engine's db_bench and 64-byte-key jobs with
// the merge stage 16 and 32 bytes wide (RTL within 5 % of each; the maximum was 5-15 % under, doc/model.md).
constexpr double kStageNorm = 8;
// Uncalibrated (no RTL yet):
constexpr uint64_t kBlockOverheadCycles = 24;    // DMA descriptor, trailer, block state machines
constexpr uint64_t kTableOpenCycles = 160;       // footer read then index read: two DDR round trips
constexpr uint64_t kTableCloseCycles = 64;       // filter/metaindex/index/footer hand-off, table report
constexpr uint64_t kJobOverheadCycles = 256;     // job descriptor, start, completion

// A cascade's passes when a job has more runs than the unit's ways (doc/table_engine_top.md "Cascades"):
// the runs in a list, newest first; while it holds more than `ways`, a pass merges the list's first m inputs
// into one temporary table that joins the end of the list, m = `ways` except on the pass that leaves exactly
// `ways` (there m = count - ways + 1); the final pass merges the list with the job's own options. So every
// pass but the last removes ways - 1 inputs (the fewest passes), and a run's entries pass through about
// log_ways(runs) merges. An input is a run number (>= 0) or a temporary table: -1 - the pass that wrote it.
// One pass (the job itself) when runs <= ways. Shared by the estimate and the RTL's testbench.
inline std::vector<std::vector<int>> CascadePlan(size_t runs, int ways) {
  std::vector<int> list;
  for (size_t i = 0; i < runs; i++) list.push_back(int(i));
  std::vector<std::vector<int>> passes;
  while (list.size() > size_t(ways)) {
    const size_t m = std::min(size_t(ways), list.size() - size_t(ways) + 1);
    passes.emplace_back(list.begin(), list.begin() + long(m));
    list.erase(list.begin(), list.begin() + long(m));
    list.push_back(-int(passes.size()));
  }
  passes.push_back(list);
  return passes;
}

struct Estimate {
  std::vector<std::pair<std::string, uint64_t>> stages;  // name -> cycles if it ran alone
  uint64_t pipeline = 0, overhead = 0, cascade = 0, passes = 1, total = 0;
};

// The stages with RTL, each alone (what doc/calibration.md compares with the RTL's cycles).
uint64_t DecodeCycles(const DecodeWork& w);
uint64_t DecompressCycles(const BlockReadStats& b);
uint64_t BuildCycles(const BuildWork& w);
// The Snappy compressor alone over the blocks the writer compressed (doc/calibration.md).
uint64_t CompressCycles(const snappy_codec::Stats& w, uint64_t blocks);
// What the big blocks' compressor passes (WriteStats::big_compress) add to the job: their lag behind the blocks'
// own beats, which holds the whole pipeline (an overhead, not a stage).
uint64_t BigBlockLag(const WriteStats& w);
// The writer's compressor lanes: each block holds a lane while it comes in (at the pace of the stages before,
// `upstream`), is compressed and leaves (its stored bytes W a clock); see doc/model.md "Compressor lanes".
uint64_t ZipCycles(const WriteStats& w, uint64_t upstream);

// Each run's bytes and tables: what the cascade's passes read (doc/model.md "Cascade"). Empty: runs of equal
// size, tables_in shared out evenly.
struct RunSize {
  uint64_t bytes = 0;
  size_t tables = 0;
};
std::vector<RunSize> RunSizes(const CompactionSpec& spec);

// `merge_bytes`: the merge stage's beat, kStreamBytes or twice that (the wider stage, doc/merge.md).
Estimate EstimateJob(const CompactionResult& r, size_t runs, size_t tables_in, int ways, bool verify_checksums,
                     const std::vector<RunSize>& run_sizes = {}, uint64_t merge_bytes = kStreamBytes);

}  // namespace cycle_model
}  // namespace table_engine

#endif
