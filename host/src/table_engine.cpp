// Table-engine back end of the host driver: a LevelDB compaction as one job of the engine's C++ model
// (hw/ip/table_engine/model) or of its Verilated RTL (hw/ip/table_engine/dv/table_engine_sim.h, the
// harness's testbench), and the modelled device time of a job (docs/leveldb.md).
#include "lsmc_table.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "compaction.h"
#include "cycle_model.h"
#include "error.h"
#include "limits.h"
#include "lsmc_env.h"
#include "lsmc_offload.h"
#include "table_engine_sim.h"

namespace lsmc_table {
namespace {

uint64_t ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
}

// Host links a job's bytes cross (LSMC_HOST_LINK). The data rate after 128b/130b encoding is 984.6
// MB/s per lane for PCIe 3.0 and twice that for 4.0; a DMA reaches about 80 % of it: Intel's AN 690
// ("PCI Express Avalon-MM DMA Reference Design") computes 88.9 % as the TLP ceiling of 256-byte
// posted writes, before flow-control and ACK DLLPs, SKP sets and the read requests' completions.
struct Link {
  const char* name;
  double mb_per_s;
};
constexpr Link kLinks[] = {
    {"pcie3x4", 3150}, {"pcie3x8", 6300}, {"pcie3x16", 12600},
    {"pcie4x4", 6300}, {"pcie4x8", 12600}, {"pcie4x16", 25200},
};

// The RTL engine of the process: built at its first job (a Verilated model is costly to build) and kept.
std::mutex g_rtl_mu;
std::unique_ptr<table_engine_sim::Engine> g_rtl;
table_engine_sim::Options g_rtl_options;

// One job on the RTL under g_rtl_mu. Throws what the testbench throws.
table_engine::CompactionResult RunRtl(const table_engine::CompactionSpec& spec, uint64_t max_cycles, Result* r) {
  std::lock_guard<std::mutex> l(g_rtl_mu);
  if (!g_rtl) {
    g_rtl_options.stall = lsmc_env_rtl_stall();
    unsigned long long seed;
    if (lsmc_env_rtl_seed(&seed)) g_rtl_options.seed = seed;
  }
  const char* const name = "(LevelDB compaction)";
  table_engine_sim::Options o = g_rtl_options;
  o.maxCycles = max_cycles;
  // What the DB's options ask first: a job refused for them is counted so even when it has more runs, too.
  table_engine_sim::CheckOptions(spec, name);
  table_engine_sim::PreparedJob p = table_engine_sim::Prepare(spec, name, o, 0);
  const uint64_t mem = table_engine_sim::MemoryBytes(*p) + 4096;
  if (!g_rtl) g_rtl = std::make_unique<table_engine_sim::Engine>(g_rtl_options, mem);
  g_rtl->Resize(mem);
  if (!g_rtl->Start(*p)) {
    g_rtl.reset();  // the job is still in the engine: the next one gets a fresh engine
    throw table_engine::EngineError(table_engine::ErrorCode::kBadJob, name, 0, "hang: the job gave no status");
  }
  table_engine_sim::Outcome out;
  try {
    out = g_rtl->Collect(*p, "(output)");
  } catch (...) {
    // AXI violations stay counted in the engine: a fresh one starts the next job clean. After the engine's
    // own error status it is ready for the next job (it soft-resets at each job's start).
    if (g_rtl->violations()) g_rtl.reset();
    throw;
  }
  r->cycles = out.cycles;
  return std::move(out.result);
}

}  // namespace

Result Compact(Job&& job, Engine engine) {
  Result r;
  const uint64_t t0 = ThreadCpuUs();
  try {
    table_engine::CompactionSpec spec;
    size_t tables_in = 0;
    for (const auto& run : job.runs) {
      std::vector<table_engine::TableImage> images;
      for (const InputTable& t : run)
        images.push_back(table_engine::TableImage{
            t.name, t.data ? std::string_view(t.data, t.size) : std::string_view(t.bytes)});
      tables_in += images.size();
      spec.runs.push_back(std::move(images));
    }
    spec.writer.block_size = job.block_size;
    spec.writer.restart_interval = job.restart_interval;
    spec.writer.snappy = job.snappy;
    spec.writer.bloom_bits_per_key = job.bloom_bits_per_key;
    // An output table closes at the first entry past max_file_size: room for that entry's block and
    // the table's index and filter.
    spec.writer.buffer_bytes =
        std::max<uint64_t>(table_engine::kDefaultOutputBufferBytes, 2 * job.max_file_size + 2 * table_engine::kMaxBlockBytes);
    spec.max_file_size = job.max_file_size;
    spec.verify_checksums = job.verify_checksums;
    spec.smallest_snapshot = job.smallest_snapshot;
    for (auto& g : job.grandparents) spec.grandparents.push_back(table_engine::Grandparent{g.first, g.second});
    for (auto& level : job.deeper_levels) {
      std::vector<table_engine::KeyRange> files;
      for (auto& f : level) files.push_back(table_engine::KeyRange{f.first, f.second});
      spec.deeper_levels.push_back(std::move(files));
    }
    table_engine::CompactionResult res;
    if (engine == Engine::kRtl) {
      res = RunRtl(spec, job.rtl_max_cycles, &r);
    } else {
      res = table_engine::RunCompaction(spec);
      r.cycles = table_engine::cycle_model::EstimateJob(res, spec.runs.size(), tables_in,
                                                        table_engine::kDefaultWays, spec.verify_checksums)
                     .total;
    }
    r.entries_in = res.entries_in;
    r.entries_out = res.entries_out;
    r.bytes_in = res.bytes_in;
    r.bytes_out = res.bytes_out;
    for (auto& t : res.tables) {
      OutputTable o;
      o.bytes = std::move(t.bytes);
      o.smallest = std::move(t.smallest);
      o.largest = std::move(t.largest);
      o.entries = t.entries;
      r.tables.push_back(std::move(o));
    }
  } catch (const table_engine_sim::Refused& e) {
    r.tables.clear();
    r.error_code = table_engine::ErrorName(e.code);
    r.error = e.Line();
    r.refused = "rtl-" + e.reason;
  } catch (const table_engine::EngineError& e) {
    r.tables.clear();
    r.error_code = table_engine::ErrorName(e.code);
    r.error = e.Line();
  } catch (const std::exception& e) {
    r.tables.clear();
    r.error_code = "EXCEPTION";
    r.error = e.what();
  }
  r.cpu_us = ThreadCpuUs() - t0;
  return r;
}

const Pace& PaceFromEnv() {
  static const Pace pace = [] {
    Pace p;
    p.on = lsmc_env_flag("LSMC_DEVICE_PACE");
    p.mhz = lsmc_env_number("LSMC_DEVICE_MHZ", LSMC_DEVICE_MHZ, 1, 10000, 0, "a clock in MHz (1..10000)");
    const char* names[sizeof kLinks / sizeof kLinks[0]];
    for (size_t i = 0; i < sizeof kLinks / sizeof kLinks[0]; i++) names[i] = kLinks[i].name;
    const int link = lsmc_env_choice("LSMC_HOST_LINK", names, int(sizeof kLinks / sizeof kLinks[0]), 0);
    p.link = kLinks[link].name;
    p.link_mb_per_s = kLinks[link].mb_per_s;
    return p;
  }();
  return pace;
}

}  // namespace lsmc_table
