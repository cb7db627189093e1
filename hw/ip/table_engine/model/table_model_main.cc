// table_model JOB.json OUT_DIR [--ways K] [--parts P] [--output-buffer BYTES] [--merge-bytes M] [--stats] [--limits]
// Runs one table job on the model: the output tables and result.json into OUT_DIR, last stdout line
// "cycles=C bytes_in=N bytes_out=N tables_out=T"; with P > 1 parts (sub-compactions, subcompaction.h)
// C is the whole job as the firmware runs it and the line goes on "parts=P bracket=B plan=L". On any error: one line
// "error=CODE table=PATH offset=N message" on stderr, exit 1, and nothing left in OUT_DIR.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compaction.h"
#include "cycle_model.h"
#include "error.h"
#include "job.h"
#include "limits.h"
#include "subcompaction.h"

using namespace table_engine;

namespace {

const char* kUsage =
    "usage: table_model JOB.json OUT_DIR [--ways 2|4|8] [--parts 1..64] [--output-buffer BYTES] [--merge-bytes 16|32]\n"
    "                   [--zip-block-bytes BYTES] [--stats]\n"
    "       table_model --limits\n";

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) throw EngineError(ErrorCode::kBadJob, path, 0, std::string("cannot write: ") + std::strerror(errno));
}

// Every file lands under a temporary name first and is renamed only when all are written, so an
// error leaves OUT_DIR as it was.
void Publish(const std::string& dir, const CompactionResult& r, const std::string& result_json) {
  std::vector<std::pair<std::string, std::string>> files;  // temporary -> final
  size_t renamed = 0;
  try {
    for (const auto& t : r.tables) {
      files.emplace_back(dir + "/." + t.file + ".tmp", dir + "/" + t.file);
      WriteFile(files.back().first, t.bytes);
    }
    files.emplace_back(dir + "/.result.json.tmp", dir + "/result.json");
    WriteFile(files.back().first, result_json);
    for (; renamed < files.size(); renamed++)
      if (std::rename(files[renamed].first.c_str(), files[renamed].second.c_str()) != 0)
        throw EngineError(ErrorCode::kBadJob, files[renamed].second, 0,
                          std::string("cannot rename: ") + std::strerror(errno));
  } catch (...) {
    for (size_t i = 0; i < files.size(); i++) std::remove((i < renamed ? files[i].second : files[i].first).c_str());
    throw;
  }
}

bool ParseUint(const char* s, uint64_t* v) {
  if (*s == '\0') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-') return false;
  *v = x;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  int ways = kDefaultWays;
  uint64_t buffer = kDefaultOutputBufferBytes;
  bool stats = false;
  int parts = 0;  // 0: not asked; the job as one part, as before --parts existed
  uint64_t merge_bytes = cycle_model::kStreamBytes;  // the merge stage's beat (twice W: the wider stage)
  uint64_t zip_block_bytes = 0;  // 0: LevelDB's TableBuilder, no block-buffer limit
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    uint64_t v = 0;
    if (a == "--limits") {
      std::printf("max_user_key_bytes=%zu max_block_bytes=%zu output_buffer_bytes=%llu ways=%d\n", kMaxUserKeyBytes,
                  kMaxBlockBytes, static_cast<unsigned long long>(kDefaultOutputBufferBytes), kDefaultWays);
      return 0;
    } else if (a == "--stats") {
      stats = true;
    } else if (a == "--ways" && i + 1 < argc && ParseUint(argv[i + 1], &v) && (v == 2 || v == 4 || v == 8)) {
      ways = int(v);
      i++;
    } else if (a == "--parts" && i + 1 < argc && ParseUint(argv[i + 1], &v) && v >= 1 && v <= kMaxParts) {
      parts = int(v);
      i++;
    } else if (a == "--merge-bytes" && i + 1 < argc && ParseUint(argv[i + 1], &v) &&
               (v == cycle_model::kStreamBytes || v == 2 * cycle_model::kStreamBytes)) {
      merge_bytes = v;
      i++;
    } else if (a == "--zip-block-bytes" && i + 1 < argc && ParseUint(argv[i + 1], &v) && v > 0) {
      zip_block_bytes = v;  // the RTL writer's block buffer: its OUTPUT_FULL for big compressible Snappy blocks
      i++;
    } else if (a == "--output-buffer" && i + 1 < argc && ParseUint(argv[i + 1], &v) && v > 0) {
      buffer = v;
      i++;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "table_model: bad option %s\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  const std::string& out_dir = pos[1];
  try {
    LoadedJob job = LoadJob(pos[0], buffer);
    job.spec.writer.zip_block_bytes = zip_block_bytes;
    SubcompactionResult sub;
    if (parts > 0) sub = RunSubcompactions(job.spec, parts, ways, merge_bytes);
    CompactionResult r = parts > 0 ? sub.whole : RunCompaction(job.spec);
    struct stat st;
    if (stat(out_dir.c_str(), &st) != 0) {
      if (mkdir(out_dir.c_str(), 0777) != 0)
        throw EngineError(ErrorCode::kBadJob, out_dir, 0, std::string("cannot make the output folder: ") + std::strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
      throw EngineError(ErrorCode::kBadJob, out_dir, 0, "output path is not a folder");
    }
    Publish(out_dir, r, parts > 1 ? SubcompactionJson(sub) : ResultJson(r));
    auto ull = [](uint64_t x) { return static_cast<unsigned long long>(x); };
    cycle_model::Estimate e = cycle_model::EstimateJob(parts > 0 ? sub.parts[0] : r, job.spec.runs.size(),
                                                       job.tables_in, ways, job.spec.verify_checksums,
                                                       cycle_model::RunSizes(job.spec), merge_bytes);
    if (stats) {
      if (parts <= 1) {
        for (const auto& s : e.stages) std::printf("stage %s=%llu\n", s.first.c_str(), ull(s.second));
        // The Snappy compressor alone over every block it took (doc/calibration.md; the compress stage is the
        // writer's lanes sharing them).
        const CompactionResult& w = parts > 0 ? sub.parts[0] : r;
        std::printf("unit compressor=%llu\n", ull(cycle_model::CompressCycles(w.write.compress, w.write.zip_blocks - w.write.big_blocks)));
        // The tables' closes the overhead counts at W a clock (doc/model.md "A table's close").
        std::printf("writer close_bytes=%llu\n", ull(w.write.close_bytes));
        std::printf("pipeline=%llu overhead=%llu cascade=%llu passes=%llu (calibrated against the RTL: entry_decode, decompress, block_build, compress (its compressor; the lanes checked on the engine); merge counted from its RTL; the other stages UNCALIBRATED)\n",
                    ull(e.pipeline), ull(e.overhead), ull(e.cascade), ull(e.passes));
      }
      if (parts > 0) {
        const WholeJobEstimate& w = sub.estimate;
        for (size_t j = 0; j < sub.parts.size(); j++)
          std::printf("part %zu bytes=%llu entries_in=%llu tables_out=%zu cycles=%llu\n", j,
                      ull(sub.plan.parts[j].bytes), ull(sub.parts[j].entries_in), sub.parts[j].tables.size(),
                      ull(w.part_cycles[j]));
        const PlanCost& k = sub.plan.cost;
        std::printf("plan tables=%llu index_entries=%llu comparisons=%llu compared_bytes=%llu unit_cycles=%llu "
                    "cpu_cycles=%llu\n", ull(k.tables), ull(k.index_entries), ull(k.comparisons),
                    ull(k.compared_bytes), ull(k.unit_cycles), ull(k.cpu_cycles));
        std::printf("whole_job=%llu bracket=%llu plan=%llu dispatch=%llu completion=%llu metadata=%llu "
                    "(the plan's CPU costs calibrated on the SoC; dispatch, completion, metadata UNCALIBRATED)\n",
                    ull(w.total), ull(w.bracket), ull(w.plan), ull(w.dispatch), ull(w.completion), ull(w.metadata));
      }
    }
    if (parts > 1)
      std::printf("cycles=%llu bytes_in=%llu bytes_out=%llu tables_out=%zu parts=%d bracket=%llu plan=%llu\n",
                  ull(sub.estimate.total), ull(r.bytes_in), ull(r.bytes_out), r.tables.size(), parts,
                  ull(sub.estimate.bracket), ull(sub.estimate.plan));
    else
      std::printf("cycles=%llu bytes_in=%llu bytes_out=%llu tables_out=%zu\n", ull(e.total), ull(r.bytes_in),
                  ull(r.bytes_out), r.tables.size());
    return 0;
  } catch (const EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error=BAD_JOB table=%s offset=0 out of memory\n", pos[0].c_str());
  }
  return 1;
}
