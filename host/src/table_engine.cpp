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
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include "coding.h"
#include "compaction.h"
#include "cycle_model.h"
#include "error.h"
#include "limits.h"
#include "lsmc_env.h"
#include "lsmc_offload.h"
#include "backend.h"
#include "table_engine_sim.h"
#include "table_reader.h"

// The SoC unit's merge stage (host/Makefile's TE_M): the model back end estimates that engine's cycles.
#ifndef LSMC_TE_MERGE_BYTES
#error "LSMC_TE_MERGE_BYTES: build with host/Makefile (TE_M)"
#endif

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

// ---- soc: the job on the full SoC simulation, through `lsmc tables compact --backend soc` ----

// The job as a job folder in the format lsmc-table-job/1 (hw/ip/table_engine/model/job.h): in/NNNNNN.ldb
// and job.json, output tables numbered from 1 (the hook numbers them itself).
bool WriteJobFolder(const Job& job, const std::string& dir) {
  std::string runs;
  int number = 1;
  for (size_t r = 0; r < job.runs.size(); r++) {
    runs += r ? ", [" : "[";
    for (size_t i = 0; i < job.runs[r].size(); i++, number++) {
      const InputTable& t = job.runs[r][i];
      char name[32];
      snprintf(name, sizeof name, "in/%06d.ldb", number);
      if (!(t.data ? lsmc::write_file(dir + "/" + name, t.data, t.size)
                   : lsmc::write_file(dir + "/" + name, t.bytes.data(), t.bytes.size())))
        return false;
      runs += std::string(i ? ", \"" : "\"") + name + "\"";
    }
    runs += "]";
  }
  std::string gp, dl;
  for (size_t i = 0; i < job.grandparents.size(); i++)
    gp += std::string(i ? ", " : "") + "{\"largest\": \"" + table_engine::Hex(job.grandparents[i].first) +
          "\", \"size\": " + std::to_string(job.grandparents[i].second) + "}";
  for (size_t l = 0; l < job.deeper_levels.size(); l++) {
    dl += l ? ", [" : "[";
    for (size_t i = 0; i < job.deeper_levels[l].size(); i++)
      dl += std::string(i ? ", " : "") + "{\"smallest\": \"" + table_engine::Hex(job.deeper_levels[l][i].first) +
            "\", \"largest\": \"" + table_engine::Hex(job.deeper_levels[l][i].second) + "\"}";
    dl += "]";
  }
  const std::string j =
      "{\"format\": \"lsmc-table-job/1\", \"runs\": [" + runs + "],\n \"options\": {\"block_size\": " +
      std::to_string(job.block_size) + ", \"block_restart_interval\": " + std::to_string(job.restart_interval) +
      ", \"compression\": \"" + (job.snappy ? "snappy" : "none") + "\", \"bloom_bits_per_key\": " +
      std::to_string(job.bloom_bits_per_key) + ", \"max_file_size\": " + std::to_string(job.max_file_size) +
      ", \"verify_checksums\": " + (job.verify_checksums ? "true" : "false") + "},\n \"smallest_snapshot\": " +
      std::to_string(job.smallest_snapshot) + ", \"grandparents\": [" + gp + "], \"deeper_levels\": [" + dl +
      "], \"first_file_number\": 1}\n";
  return lsmc::write_file(dir + "/job.json", j.data(), j.size());
}

// The tool's result line, its last: `cycles=C bytes_in=...` (C the unit's CYCLES, a cascade's passes summed).
uint64_t ResultCycles(const std::string& out) {
  size_t end = out.find_last_not_of('\n');
  if (end == std::string::npos) return 0;
  const size_t start = out.rfind('\n', end);
  const std::string last = out.substr(start == std::string::npos ? 0 : start + 1);
  return last.rfind("cycles=", 0) == 0 ? strtoull(last.c_str() + 7, nullptr, 10) : 0;
}

// The engine's error as the SoC's tool names it: its code (the hook's fallback reason) and its line.
struct SocError {
  std::string code, line, refused;  // refused: the tool's `refused=WHY` (a capacity of the SoC; no job ran)
};

// Runs the job on the SoC (tables.elf on the preset LSMC_SOC_PRESET names, default the one-unit tables-m1) and
// reads its tables back: each is read through the model's table reader for its entries and end keys, so a table
// the SoC wrote wrong is an error here, not a file LevelDB installs.
table_engine::CompactionResult RunSoc(const Job& job, Result* r, uint64_t* child_us) {
  const char* tmp = getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/lsmc-te-soc-XXXXXX";
  if (!mkdtemp(&dir[0])) throw std::runtime_error("soc: cannot make a temporary folder");
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      if (system(("rm -rf '" + d + "'").c_str()) != 0) { /* a leftover temporary folder is harmless */ }
    }
  } cleanup{dir};
  if (system(("mkdir -p '" + dir + "/in'").c_str()) != 0 || !WriteJobFolder(job, dir))
    throw std::runtime_error("soc: cannot write the job folder " + dir);
  // The preset goes into a shell command: a name of letters, digits, '.', '_' and '-' only (the tool then says
  // whether it is a SoC preset with table-engine units).
  const char* preset = getenv("LSMC_SOC_PRESET");
  if (preset && *preset && strspn(preset, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(preset)) {
    lsmc_env_bad("LSMC_SOC_PRESET", preset, "is not a preset name", "tables-m1");
    preset = nullptr;
  }
  const std::string cmd = "cd '" LSMC_REPO_ROOT "' && python3 -m lsmc tables compact --job '" + dir +
                          "/job.json' --out-dir '" + dir + "/out' --backend soc" +
                          (preset && *preset ? std::string(" --soc-preset '") + preset + "'" : std::string()) + " 2>&1";
  // The simulation runs in child processes: their CPU time (waited for by pclose) is the job's.
  rusage before, after;
  getrusage(RUSAGE_CHILDREN, &before);
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  if (p) {
    char line[4096];
    while (fgets(line, sizeof line, p)) out += line;
  }
  const int rc = p ? pclose(p) : -1;
  getrusage(RUSAGE_CHILDREN, &after);
  auto us = [](const timeval& t) { return uint64_t(t.tv_sec) * 1000000u + uint64_t(t.tv_usec); };
  *child_us = us(after.ru_utime) + us(after.ru_stime) - us(before.ru_utime) - us(before.ru_stime);
  if (rc != 0) {
    // The tool's error line (`error=CODE table=... offset=...`) names the engine's error; anything else is the
    // device's (a SoC that did not answer, a tool that failed).
    const size_t e = out.find("error=");
    if (e != std::string::npos) {
      const size_t end = out.find_first_of(" \n", e);
      const std::string code = out.substr(e + 6, end == std::string::npos ? std::string::npos : end - e - 6);
      const std::string line = out.substr(e, out.find('\n', e) == std::string::npos ? std::string::npos : out.find('\n', e) - e);
      const size_t w = line.find(" refused=");
      throw SocError{code, line,
                     w == std::string::npos ? "" : "soc-" + line.substr(w + 9, line.find(' ', w + 9) - w - 9)};
    }
    throw std::runtime_error("soc: lsmc tables compact exited with status " + std::to_string(rc) + ": " +
                             out.substr(out.size() > 400 ? out.size() - 400 : 0));
  }
  std::string result;
  if (!lsmc::read_file(dir + "/out/result.json", &result)) throw std::runtime_error("soc: no result.json in " + dir + "/out");
  r->cycles = ResultCycles(out);
  table_engine::CompactionResult res;
  table_engine::ReadStats stats;
  for (size_t at = result.find("\"file\": \""); at != std::string::npos; at = result.find("\"file\": \"", at + 1)) {
    const size_t b = at + 9, e = result.find('"', b);
    const std::string name = result.substr(b, e - b);
    table_engine::OutputTable t;
    if (!lsmc::read_file(dir + "/out/" + name, &t.bytes)) throw std::runtime_error("soc: cannot read its table " + name);
    const table_engine::TableImage image{name, t.bytes};
    table_engine::TableReader reader(&image, true, &stats);
    while (reader.Next()) {
      if (t.entries == 0) t.smallest = std::string(reader.key());
      t.largest = std::string(reader.key());
      t.entries++;
    }
    res.entries_out += t.entries;
    res.bytes_out += t.bytes.size();
    res.tables.push_back(std::move(t));
  }
  for (const auto& run : job.runs)
    for (const InputTable& t : run) res.bytes_in += t.data ? t.size : t.bytes.size();
  const size_t n = result.find("\"entries_in\": ");
  res.entries_in = n == std::string::npos ? 0 : strtoull(result.c_str() + n + 14, nullptr, 10);
  return res;
}

}  // namespace

Result Compact(Job&& job, Engine engine) {
  Result r;
  const uint64_t t0 = ThreadCpuUs();
  uint64_t child_us = 0;  // soc: the simulation's processes
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
    } else if (engine == Engine::kSoc) {
      res = RunSoc(job, &r, &child_us);
    } else {
      res = table_engine::RunCompaction(spec);
      r.cycles = table_engine::cycle_model::EstimateJob(res, spec.runs.size(), tables_in,
                                                        table_engine::kDefaultWays, spec.verify_checksums, {},
                                                        LSMC_TE_MERGE_BYTES)
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
  } catch (const SocError& e) {
    r.tables.clear();
    r.error_code = e.code;
    r.error = e.line;
    r.refused = e.refused;
  } catch (const table_engine::EngineError& e) {
    r.tables.clear();
    r.error_code = table_engine::ErrorName(e.code);
    r.error = e.Line();
  } catch (const std::exception& e) {
    r.tables.clear();
    r.error_code = "EXCEPTION";
    r.error = e.what();
  }
  r.cpu_us = ThreadCpuUs() - t0 + child_us;
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
