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
//                [--parts P | --part PART.json] [--reference]
//
// Sub-compaction parts (doc/table_engine_top.md, "Sub-compaction parts"): --parts P runs the model's plan
// (model/subcompaction.h, PlanSubcompactions) part after part on the one engine, each part a job of its own (its
// runs' block windows and its user-key bounds), the output tables numbered in part order as the model's
// `table_model --parts P` numbers them; --part PART.json runs one part given by hand: {"lo": HEX or null, "hi":
// HEX or null, "windows": [[run, first_table, last_table, first_block, end_block], ...]} (the engine's window:
// first_block in the first table up to end_block, exclusive, in the last, 0 its index's end; the blocks are not
// checked here, so a bad window reaches the engine). result.json then goes on with
// "parts": per part its bounds, first output table, tables, entries in and out and clocks. --reference writes the
// model's output of the same parts instead of running the RTL (CompactRuns over the windows, subcompaction.cc).
// The stdout line with parts: `cycles=C ... tables_out=T parts=P bracket=B`, C the parts' clocks added (they
// run one after the other here), B the longest part's.
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

#include <json-c/json.h>

#include "compaction.h"
#include "error.h"
#include "job.h"
#include "subcompaction.h"
#include "table_engine_sim.h"

namespace te = table_engine;
namespace sim = table_engine_sim;

namespace {

[[noreturn]] void Fail(te::ErrorCode code, const std::string& table, uint64_t offset, const std::string& msg) {
  throw te::EngineError(code, table, offset, msg);
}

struct Options {
  std::string job, out, first, part;
  uint64_t parts = 0;  // 0: the job whole, as without --parts
  bool reference = false;
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

// --part PART.json: one part by hand, as the model's PartPlan.
te::PartPlan ReadPart(const std::string& path, const te::CompactionSpec& s) {
  auto bad = [&](const std::string& m) { Fail(te::ErrorCode::kBadJob, path, 0, m); };
  json_object* root = json_object_from_file(path.c_str());
  if (root == nullptr) bad("cannot read it as JSON");
  std::unique_ptr<json_object, int (*)(json_object*)> hold(root, json_object_put);
  te::PartPlan p;
  auto hex = [&](const char* name, bool* has, std::string* key) {
    json_object* v = nullptr;
    if (!json_object_object_get_ex(root, name, &v) || v == nullptr) return;
    if (!json_object_is_type(v, json_type_string)) bad(std::string(name) + " is not a hex string or null");
    std::string h = json_object_get_string(v);
    if (h.size() % 2 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
      bad(std::string(name) + " is not lower-case hex");
    for (size_t i = 0; i < h.size(); i += 2) key->push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
    *has = true;
  };
  hex("lo", &p.has_lo, &p.lo);
  hex("hi", &p.has_hi, &p.hi);
  json_object* w = nullptr;
  if (!json_object_object_get_ex(root, "windows", &w) || !json_object_is_type(w, json_type_array))
    bad("no \"windows\" array");
  for (size_t i = 0; i < json_object_array_length(w); i++) {
    json_object* e = json_object_array_get_idx(w, i);
    if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 5)
      bad("windows[" + std::to_string(i) + "] is not [run, first_table, last_table, first_block, end_block]");
    uint64_t v[5];
    for (size_t k = 0; k < 5; k++) {
      json_object* x = json_object_array_get_idx(e, k);
      if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0)
        bad("windows[" + std::to_string(i) + "] holds a value that is not a count");
      v[k] = uint64_t(json_object_get_int64(x));
    }
    te::RunWindow rw;
    rw.run = v[0], rw.first_table = v[1], rw.last_table = v[2], rw.first_block = v[3];
    rw.last_block = v[4] ? v[4] - 1 : UINT64_MAX;  // the model's RunWindow: the last block read
    if (rw.run >= s.runs.size() || rw.first_table > rw.last_table || rw.last_table >= s.runs[rw.run].size() ||
        (i > 0 && rw.run <= p.windows.back().run))
      bad("windows[" + std::to_string(i) + "]: no such run or tables (runs ascending, tables in the run)");
    rw.lo_blocks = UINT64_MAX, rw.hi_from = 0;  // the model's index-bounds check off: a hand-made window
    p.windows.push_back(rw);
  }
  return p;
}

// A part as a job of its own: its runs (each its window's tables), the windows and the bounds for the engine.
void PartJob(const te::CompactionSpec& s, const te::PartPlan& pp, uint64_t number, te::CompactionSpec* spec,
             sim::Part* part) {
  *spec = s;
  spec->runs.clear();
  spec->first_file_number = number;
  part->hasLo = pp.has_lo, part->lo = pp.lo;
  part->hasHi = pp.has_hi, part->hi = pp.hi;
  for (const te::RunWindow& w : pp.windows) {
    spec->runs.emplace_back(s.runs[w.run].begin() + long(w.first_table), s.runs[w.run].begin() + long(w.last_table) + 1);
    part->windows.emplace_back();
    for (size_t t = w.first_table; t <= w.last_table; t++) {
      uint64_t first = t == w.first_table ? w.first_block : 0;
      uint64_t end = t == w.last_table && w.last_block != UINT64_MAX ? w.last_block + 1 : 0;
      if (first > 0xffffffffull || end > 0xffffffffull)
        Fail(te::ErrorCode::kBadJob, s.runs[w.run][t].name, 0, "a block window over the engine's 32-bit fields");
      part->windows.back().push_back({uint32_t(first), uint32_t(end)});
    }
  }
}

void WriteOutput(const std::string& out, const te::CompactionResult& res, const std::string& json) {
  struct stat st;
  if (stat(out.c_str(), &st) != 0) {
    if (mkdir(out.c_str(), 0777) != 0)
      Fail(te::ErrorCode::kBadJob, out, 0, std::string("cannot make the output folder: ") + std::strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    Fail(te::ErrorCode::kBadJob, out, 0, "output path is not a folder");
  }
  for (const auto& t : res.tables)
    WriteFile(out + "/" + t.file, reinterpret_cast<const uint8_t*>(t.bytes.data()), t.bytes.size());
  WriteFile(out + "/result.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
}

// --parts / --part: every part a job of its own on one engine (or the model's, --reference), in part order.
int MainParts(const Options& o, const sim::Options& so) {
  te::LoadedJob job = te::LoadJob(o.job, te::kDefaultOutputBufferBytes);
  const te::CompactionSpec& s = job.spec;
  std::vector<te::PartPlan> plan;
  if (!o.part.empty()) {
    plan.push_back(ReadPart(o.part, s));
  } else if (o.parts > 1) {
    plan = te::PlanSubcompactions(s, int(o.parts)).parts;
  } else {
    plan.resize(1);  // one part: the job whole, every table's every block, no bounds
    for (size_t r = 0; r < s.runs.size(); r++) {
      te::RunWindow w;
      w.run = r, w.last_table = s.runs[r].size() - 1, w.last_block = UINT64_MAX, w.lo_blocks = 1;
      plan[0].windows.push_back(w);
    }
  }
  const size_t P = plan.size();
  std::vector<te::CompactionSpec> specs(P);
  std::vector<sim::Part> parts(P);
  std::vector<sim::PreparedJob> prepared(P);
  uint64_t memBytes = 4096;
  for (size_t j = 0; j < P; j++) {
    if (plan[j].windows.empty()) continue;  // nothing of the job in it: not dispatched (as the model)
    PartJob(s, plan[j], 0, &specs[j], &parts[j]);
    if (!o.reference) {
      prepared[j] = sim::Prepare(specs[j], o.job, so, o.outputBuffer, &parts[j]);
      memBytes = std::max(memBytes, sim::MemoryBytes(*prepared[j]) + 4096);
    }
  }
  std::unique_ptr<sim::Engine> engine = o.reference ? nullptr : std::make_unique<sim::Engine>(so, memBytes);
  te::CompactionResult whole;
  for (const auto& run : s.runs)
    for (const auto& t : run) whole.bytes_in += t.bytes.size();
  uint64_t number = s.first_file_number, cycles = 0, bracket = 0;
  std::string partsJson;
  for (size_t j = 0; j < P; j++) {
    te::CompactionResult r;
    uint64_t c = 0;
    if (!plan[j].windows.empty()) {
      specs[j].first_file_number = number;
      if (o.reference) {
        r = te::RunPart(s, plan[j], number);
      } else {
        sim::Outcome out = engine->Run(*prepared[j], o.out);
        r = std::move(out.result);
        c = out.cycles;
      }
    }
    partsJson += std::string(j ? ",\n    " : "\n    ") + "{\"lo\": " +
                 (plan[j].has_lo ? "\"" + te::Hex(plan[j].lo) + "\"" : "null") + ", \"hi\": " +
                 (plan[j].has_hi ? "\"" + te::Hex(plan[j].hi) + "\"" : "null") + ", \"first_table\": " +
                 std::to_string(whole.tables.size()) + ", \"tables_out\": " + std::to_string(r.tables.size()) +
                 ", \"entries_in\": " + std::to_string(r.entries_in) + ", \"entries_out\": " +
                 std::to_string(r.entries_out) + ", \"cycles\": " + std::to_string(c) + "}";
    for (auto& t : r.tables) whole.tables.push_back(std::move(t));
    number += r.tables.size();
    whole.entries_in += r.entries_in;
    whole.entries_out += r.entries_out;
    whole.dropped += r.dropped;
    whole.bytes_out += r.bytes_out;
    cycles += c;
    bracket = std::max(bracket, c);
  }
  std::string json = te::ResultJson(whole);
  json.resize(json.size() - 3);  // "\n}\n"
  json += ",\n  \"parts\": [" + partsJson + "\n  ]\n}\n";
  WriteOutput(o.out, whole, json);
  std::printf("cycles=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " tables_out=%zu parts=%zu bracket=%" PRIu64
              "\n", cycles, whole.bytes_in, whole.bytes_out, whole.tables.size(), P, bracket);
  return 0;
}

int Main(const Options& o) {
  sim::Options so;
  so.stall = o.stall;
  so.latency = o.latency;
  so.seed = o.seed;
  so.maxCycles = o.maxCycles;
  if (o.parts > 0 || !o.part.empty() || o.reference) return MainParts(o, so);
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
      "[--max-cycles N] [--first JOB.json [--first-output-buffer BYTES]] [--parts P | --part PART.json] "
      "[--reference]\n";
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
    } else if (a == "--part" && hasArg) {
      o.part = argv[++i];
    } else if (a == "--reference") {
      o.reference = true;
    } else if (a == "--parts" && hasArg) {
      if (!ParseUint(argv[++i], &v) || v < 1 || v > uint64_t(te::kMaxParts)) {
        std::fprintf(stderr, "VTableEngine: --parts %s is not in 1..%d\n%s", argv[i], te::kMaxParts, usage);
        return 2;
      }
      o.parts = v;
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
  if ((o.parts > 0 || !o.part.empty() || o.reference) && !o.first.empty()) {
    std::fprintf(stderr, "VTableEngine: --first runs with a whole job only\n%s", usage);
    return 2;
  }
  if (o.parts > 0 && !o.part.empty()) {
    std::fprintf(stderr, "VTableEngine: --parts and --part exclude each other\n%s", usage);
    return 2;
  }
  try {
    return Main(o);
  } catch (const te::EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error=BAD_JOB table=%s offset=0 out of memory\n", o.job.c_str());
  }
  return 1;
}
