// lsmc host driver, table-engine back end (docs/leveldb.md): one LevelDB compaction as one job of the
// table engine (hw/ip/table_engine/doc/table-engine.md), run in process on the engine's C++ model or on its
// Verilated RTL (hw/ip/table_engine/doc/table_engine_top.md).
// The caller hands over the input tables' bytes and the job's parameters and gets back finished
// tables; it names, writes and installs them. Plain C++ types only: the caller (LevelDB's hook) is
// built without exceptions, and every error of the model is caught here and returned as a result.
#ifndef LSMC_TABLE_H
#define LSMC_TABLE_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lsmc_table {

struct InputTable {
  std::string name;  // the file, for error messages
  // The whole table file: `data`/`size` when set (memory the caller keeps until Compact returns, e.g.
  // the file's mapping), else `bytes`.
  const char* data = nullptr;
  size_t size = 0;
  std::string bytes;
};

struct Job {
  std::vector<std::vector<InputTable>> runs;  // newest first; a run's tables in key order
  uint64_t block_size = 4096;
  int restart_interval = 16;
  bool snappy = false;
  int bloom_bits_per_key = 0;  // 0: no filter block
  uint64_t max_file_size = 2u << 20;
  bool verify_checksums = false;
  uint64_t smallest_snapshot = 0;
  std::vector<std::pair<std::string, uint64_t>> grandparents;  // largest internal key, file size
  // user-key ranges (smallest, largest) of each level deeper than the output level, files in key order
  std::vector<std::vector<std::pair<std::string, std::string>>> deeper_levels;
  // rtl: clocks after which a job without status is a hang (0: the testbench's bound, 200 an input byte
  // + 2,000,000); the verifier's self-test gives 1.
  uint64_t rtl_max_cycles = 0;
};

struct OutputTable {
  std::string bytes, smallest, largest;  // smallest / largest: internal keys
  uint64_t entries = 0;
};

struct Result {
  std::vector<OutputTable> tables;
  uint64_t entries_in = 0, entries_out = 0, bytes_in = 0, bytes_out = 0;
  // model: its cycle estimate (hw/ip/table_engine/model/cycle_model.h); rtl: the RTL's clocks from the
  // job's handshake to its status; soc: the unit's CYCLES register
  uint64_t cycles = 0;
  uint64_t cpu_us = 0;   // CPU time of the calling thread inside the model or the simulation (soc: its processes')
  // On an error: the engine's code (KEY_TOO_LONG, BAD_CRC, ..., or EXCEPTION) and its line.
  std::string error_code, error;
  // rtl: a job its RTL cannot take (no job ran; `error` says why): `rtl-filter` (bloom bits over the
  // job's 8-bit field), `rtl-ways` (a cascade's drop-free pass cannot keep a sequence-0 deletion),
  // `rtl-limits` (a field or capacity of the engine: 32-bit sizes and addresses, the walker's RAMs);
  // soc: `soc-limits` (the job's tables and buffers pass the SoC's host region of DDR).
  std::string refused;
  bool ok() const { return error_code.empty(); }
};

enum class Engine { kModel, kRtl, kSoc };

// Runs the job on the model, on the RTL (one engine for the process, one job at a time; its AXI memory and
// job streams stalled with probability LSMC_RTL_STALL, seeded by LSMC_RTL_SEED) or on the full SoC (a job
// folder through `lsmc tables compact --backend soc` in the repository the library was built from, on the
// SoC preset LSMC_SOC_PRESET, default tables-m1; seconds a job: small cases). Never throws.
Result Compact(Job&& job, Engine engine = Engine::kModel);

// Modelled device time of a job in microseconds: its cycles at LSMC_DEVICE_MHZ plus bytes_in +
// bytes_out over LSMC_HOST_LINK (names and rates in src/table_engine.cpp and docs/leveldb.md).
struct Pace {
  bool on = false;  // LSMC_DEVICE_PACE=1
  double mhz = 0;
  std::string link = "pcie3x4";
  double link_mb_per_s = 0;
  double DeviceUs(uint64_t cycles, uint64_t bytes) const { return cycles / mhz + bytes / link_mb_per_s; }
};
// From the environment, read once; a value it cannot use is named on stderr with what is used instead.
const Pace& PaceFromEnv();

}  // namespace lsmc_table

#endif
