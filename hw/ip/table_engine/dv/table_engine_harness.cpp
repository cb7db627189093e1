// Verilator harness of the whole table engine (top `TableEngine`, hw/ip/table_engine/rtl/TableEngine.scala): runs
// one job folder as the model's CLI does (model/table_model_main.cc). The job.json is parsed by the model's
// LoadJob; the input tables are placed in a simulated AXI4 memory (sim/common/axi_mem.h, optional random stalls
// on every channel, each table at an address that is not a multiple of the beat), the deeper levels' ranges are
// loaded into the base-level walker, each run's tables are handed to its reader, and the output tables the
// engine writes into its output buffer are copied into OUT_DIR with a result.json in the model's format. The
// testbench itself is table_engine_sim.{h,cpp}, which the host driver (host/) runs LevelDB's compactions on too.
//
//   VTableEngine JOB.json OUT_DIR [--stall P] [--latency N] [--seed S] [--output-buffer BYTES] [--max-cycles N]
//                [--first JOB.json [--first-output-buffer BYTES]]   (another job on the same engine first, its
//                outcome not reported)
//
// Last stdout line: `cycles=C bytes_in=N bytes_out=N tables_out=T` (C: simulated clocks from the job's command
// to its status; a job of more runs than the engine's ways runs as a cascade of passes, C their sum). On an error: one line `error=CODE table=PATH offset=N message` on stderr, exit 1, nothing
// written (a job the RTL cannot run yet is BAD_JOB naming what). Exit 2: bad usage.
#include "verilated.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compaction.h"
#include "error.h"
#include "job.h"
#include "table_engine_sim.h"

namespace te = table_engine;
namespace sim = table_engine_sim;

namespace {

[[noreturn]] void Fail(te::ErrorCode code, const std::string& table, uint64_t offset, const std::string& msg) {
  throw te::EngineError(code, table, offset, msg);
}

struct Options {
  std::string job, out, first;
  double stall = 0;
  unsigned latency = 20;
  uint64_t seed = 1, outputBuffer = 0, firstOutputBuffer = 0, maxCycles = 0;
};

bool ParseUint(const char* s, uint64_t* v) {
  if (*s == '\0' || *s == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

void WriteFile(const std::string& path, const uint8_t* p, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(p, 1, n, f) == n;
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) Fail(te::ErrorCode::kBadJob, path, 0, std::string("cannot write: ") + std::strerror(errno));
}

// A job folder parsed by the model and made ready for the engine.
struct Job {
  te::LoadedJob loaded;
  sim::PreparedJob prepared;
};

std::unique_ptr<Job> Prepare(const std::string& path, const sim::Options& so, uint64_t outputBuffer) {
  auto j = std::make_unique<Job>();
  j->loaded = te::LoadJob(path, te::kDefaultOutputBufferBytes);
  j->prepared = sim::Prepare(j->loaded.spec, path, so, outputBuffer);
  return j;
}

int Main(const Options& o) {
  sim::Options so;
  so.stall = o.stall;
  so.latency = o.latency;
  so.seed = o.seed;
  so.maxCycles = o.maxCycles;
  std::unique_ptr<Job> first = o.first.empty() ? nullptr : Prepare(o.first, so, o.firstOutputBuffer);
  std::unique_ptr<Job> main = Prepare(o.job, so, o.outputBuffer);
  uint64_t memBytes = sim::MemoryBytes(*main->prepared);
  if (first) memBytes = std::max(memBytes, sim::MemoryBytes(*first->prepared));
  sim::Engine engine(so, memBytes + 4096);
  // --first: another job on the same engine before this one (any outcome but a hang): what it leaves
  // behind, an error included, must not change this job.
  if (first && !engine.Start(*first->prepared))
    Fail(te::ErrorCode::kBadJob, o.first, 0, "hang: the first job gave no status");
  sim::Outcome out = engine.Run(*main->prepared, o.out);
  const te::CompactionResult& res = out.result;
  struct stat st;
  if (stat(o.out.c_str(), &st) != 0) {
    if (mkdir(o.out.c_str(), 0777) != 0)
      Fail(te::ErrorCode::kBadJob, o.out, 0, std::string("cannot make the output folder: ") + std::strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    Fail(te::ErrorCode::kBadJob, o.out, 0, "output path is not a folder");
  }
  for (const auto& t : res.tables)
    WriteFile(o.out + "/" + t.file, reinterpret_cast<const uint8_t*>(t.bytes.data()), t.bytes.size());
  std::string json = te::ResultJson(res);
  WriteFile(o.out + "/result.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
  std::printf("cycles=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " tables_out=%zu\n", out.cycles,
              res.bytes_in, res.bytes_out, res.tables.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  const char* usage =
      "usage: VTableEngine JOB.json OUT_DIR [--stall P] [--latency N] [--seed S] [--output-buffer BYTES] "
      "[--max-cycles N] [--first JOB.json [--first-output-buffer BYTES]]\n";
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    uint64_t v = 0;
    bool hasArg = i + 1 < argc;
    if (a == "--stall" && hasArg) {
      char* end = nullptr;
      o.stall = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(o.stall >= 0 && o.stall < 1)) {
        std::fprintf(stderr, "VTableEngine: --stall %s is not in [0, 1)\n%s", argv[i], usage);
        return 2;
      }
    } else if (a == "--first" && hasArg) {
      o.first = argv[++i];
    } else if ((a == "--latency" || a == "--seed" || a == "--output-buffer" || a == "--first-output-buffer" ||
                a == "--max-cycles") && hasArg) {
      if (!ParseUint(argv[++i], &v) || (a == "--latency" && v > 10000)) {
        std::fprintf(stderr, "VTableEngine: %s %s is not a number it takes\n%s", a.c_str(), argv[i], usage);
        return 2;
      }
      if (a == "--latency") o.latency = unsigned(v);
      if (a == "--seed") o.seed = v;
      if (a == "--output-buffer") o.outputBuffer = v;
      if (a == "--first-output-buffer") o.firstOutputBuffer = v;
      if (a == "--max-cycles") o.maxCycles = v;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "VTableEngine: bad option %s\n%s", a.c_str(), usage);
      return 2;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  o.job = pos[0], o.out = pos[1];
  try {
    return Main(o);
  } catch (const te::EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error=BAD_JOB table=%s offset=0 out of memory\n", o.job.c_str());
  }
  return 1;
}
