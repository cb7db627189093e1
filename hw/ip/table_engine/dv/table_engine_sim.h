// The whole table engine's Verilated RTL (top `TableEngine`, hw/ip/table_engine/rtl/TableEngine.scala) as a
// reusable simulator: a simulated AXI4 memory (sim/common/axi_mem.h, optional random stalls on every channel and
// on the job's streams), a job laid out in it (each input table at an address that is not a multiple of the beat,
// the deeper levels and grandparents loaded into the base-level walker), run to its status, and the output tables
// with their metadata, or the engine's error as the model names it (table and offset). The harness
// (table_engine_harness.cpp: job folders) and the host driver (host/src/table_engine.cpp: LevelDB's compactions
// in process) both run the engine through this; no Verilator type shows here.
//
// Build with the engine's parameters as the generator got them (lsmc.build.table_engine_top): BEAT_BYTES, WAYS,
// WALKER_LEVELS, WALKER_FILES, WALKER_KEY_WORDS, GRANDPARENTS.
#ifndef TABLE_ENGINE_SIM_H
#define TABLE_ENGINE_SIM_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compaction.h"
#include "error.h"

namespace table_engine_sim {

namespace te = table_engine;

// The build's beat bytes and ways.
int BeatBytes();
int Ways();

// A job this engine cannot run yet: BAD_JOB naming what, and a short reason for a caller that falls back
// (`filter`, `ways`, `limits`).
class Refused : public te::EngineError {
 public:
  Refused(std::string reason, const std::string& table, const std::string& message)
      : te::EngineError(te::ErrorCode::kBadJob, table, 0, message), reason(std::move(reason)) {}
  std::string reason;
};

struct Options {
  double stall = 0;      // probability of withholding each AXI ready/valid and pausing each job stream, [0, 1)
  unsigned latency = 20;  // AXI read latency, clocks
  uint64_t seed = 1;      // the stalls' and the tables' placement's
  uint64_t maxCycles = 0;  // a job without status after this many clocks is a hang; 0: 200 a byte in + 2,000,000
};

// The index spill region a job gets by default (bytes, whole 4 KiB pages): an index block past the writer's buffer
// waits there until its table's end. An index block is part of its table, which closes near max_file_size (an entry
// and the blocks after it past it), so max_file_size and 8 MiB hold it; never more than the output buffer.
inline uint64_t DefaultSpillBytes(uint64_t outBytes, uint64_t maxFileSize) {
  return (outBytes < maxFileSize + (8u << 20) ? outBytes : maxFileSize + (8u << 20)) & ~uint64_t(4095);
}

// What the engine's job registers cannot hold (bloom bits per key over 255, a max_file_size over 32 bits): throws
// Refused. Prepare checks them too.
void CheckOptions(const te::CompactionSpec& spec, const std::string& name);

// A sub-compaction part (model/subcompaction.h, doc/table_engine_top.md "Sub-compaction parts"): per run of the
// job given to Prepare (the part's runs, in run order, each its window's tables), per table the window of data
// blocks its reader reads (index entries first .. end, exclusive; 0, 0: the whole table); and the part's user-key
// bounds (lo, hi], each absent or up to the engine's key limit, loaded into the base-level walker.
struct Part {
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> windows;
  bool hasLo = false, hasHi = false;
  std::string lo, hi;
};

// A job checked against what the engine runs and laid out in memory (the spec's tables are not copied: the
// caller keeps them until the job has run). More runs than the engine's ways: a cascade of passes
// (cycle_model::CascadePlan, doc/table_engine_top.md "Cascades"), their temporary tables in the same memory.
// Throws Refused.
class Prepared;
struct PreparedDelete {
  void operator()(Prepared* p) const;
};
using PreparedJob = std::unique_ptr<Prepared, PreparedDelete>;
PreparedJob Prepare(const te::CompactionSpec& spec, const std::string& name, const Options& o,
                    uint64_t outputBuffer /* bytes; 0: 2 x the input + 1 MiB */, const Part* part = nullptr);
uint64_t MemoryBytes(const Prepared& p);  // the simulated memory the job needs

struct Outcome {
  te::CompactionResult result;  // tables numbered from spec.first_file_number; counts from the engine's status
  uint64_t cycles = 0;          // clocks from the job's handshake to its status (a cascade: its passes' added)
};

class Engine {
 public:
  // The Verilated engine, reset, with `memBytes` of simulated memory.
  Engine(const Options& o, uint64_t memBytes);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Gives the memory `memBytes` (cleared) unless it has that size already.
  void Resize(uint64_t memBytes);
  // Places the job's tables, clears its output buffers and runs it, every pass of a cascade (stopping at the
  // first pass with an error); false when no status came (a hang).
  bool Start(const Prepared& p);
  // After Start: the job's output, or its error as EngineError (the engine's code, the table and offset as the
  // model gives them; an output table is named OUT_DIR/NNNNNN.ldb), AXI protocol violations, a bad record count.
  Outcome Collect(const Prepared& p, const std::string& outDir);
  // Start and Collect; a hang is a BAD_JOB error naming the job.
  Outcome Run(const Prepared& p, const std::string& outDir);
  uint64_t violations() const;

 private:
  class Bench;
  std::unique_ptr<Bench> bench_;
};

}  // namespace table_engine_sim

#endif
