// LevelDB 1.23 compaction baseline: times LevelDB's own merge of two overlapping sorted tables holding
// the two input runs of a compaction job (the same keys and addresses the IP merges).
//
// Recipe (public API only, see docs/baselines.md): with a write buffer larger than a run, write the
// older run and flush it with CompactRange over a range past every key (a table with no overlap is
// placed in level 2), then write the newer run and flush it the same way (it overlaps level 2, so it
// lands in level 1). CompactRange(nullptr, nullptr) then runs LevelDB's real level compaction
// 1@1 + 1@2, which drops the older duplicates. A custom Logger timestamps the info-log lines that
// bracket the compaction itself ("Compacting ..." at the start of DoCompactionWork, "compacted to" at
// its end); the whole CompactRange call is timed too.
//
// Usage: leveldb_compact --run0 NEWER.keys --run1 OLDER.keys --db DIR [--reps N]
//                        [--warmup N] [--compression none|snappy] [--dump MERGED.keys]
// Key files: one "<hex key> <address>" per line (address decimal or 0x-hex, '#' comments), strictly
// increasing keys; the value stored is the address as 4 little-endian bytes.
// Output: one "rep ..." line per repetition, then "result ..." with min and median over repetitions.
// Exit codes: 0 ok, 2 bad input or usage, 3 LevelDB error or unexpected table layout.

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Entry = std::pair<std::string, uint32_t>;

[[noreturn]] void die(int code, const std::string& msg) {
  std::fprintf(stderr, "leveldb_compact: %s\n", msg.c_str());
  std::exit(code);
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<Entry> read_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) die(2, path + ": cannot open");
  std::vector<Entry> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ls(line);
    std::string hex, addr, extra;
    if (!(ls >> hex)) continue;  // blank or comment line
    auto where = path + ": line " + std::to_string(lineno) + ": ";
    if (!(ls >> addr) || (ls >> extra)) die(2, where + "expected '<hex key> <address>'");
    if (hex.size() % 2 != 0 || hex.empty()) die(2, where + "key must be a non-empty even-length hex string");
    std::string key;
    for (size_t i = 0; i < hex.size(); i += 2) {
      int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);
      if (hi < 0 || lo < 0) die(2, where + "bad hex digit in key");
      key.push_back(static_cast<char>(hi * 16 + lo));
    }
    char* end = nullptr;
    errno = 0;
    unsigned long long a = std::strtoull(addr.c_str(), &end, 0);
    if (errno || *end || a > 0xFFFFFFFFull || addr[0] == '-') die(2, where + "address must be a uint32");
    // Bytewise order = LevelDB's default comparator = KB16's key order.
    if (!out.empty() && !(out.back().first < key)) die(2, where + "keys must be strictly increasing");
    out.emplace_back(std::move(key), static_cast<uint32_t>(a));
  }
  return out;
}

// Records the time of the info-log lines that open and close a compaction (called from LevelDB's
// background thread); everything else is discarded so logging costs nothing measurable.
class TimingLogger : public leveldb::Logger {
 public:
  struct Window {
    Clock::time_point start, end;
    bool closed = false;
    std::string what;
  };
  void Logv(const char* format, std::va_list ap) override {
    auto now = Clock::now();
    bool open = std::strncmp(format, "Compacting ", 11) == 0;
    bool close = std::strncmp(format, "compacted to", 12) == 0;
    if (!open && !close) return;
    std::lock_guard<std::mutex> g(mu_);
    if (open) {
      char buf[128];
      std::vsnprintf(buf, sizeof buf, format, ap);
      windows_.push_back(Window{now, now, false, buf});
    } else if (!windows_.empty() && !windows_.back().closed) {
      windows_.back().end = now;
      windows_.back().closed = true;
    }
  }
  std::vector<Window> windows() {
    std::lock_guard<std::mutex> g(mu_);
    return windows_;
  }
  size_t count() {
    std::lock_guard<std::mutex> g(mu_);
    return windows_.size();
  }

 private:
  std::mutex mu_;
  std::vector<Window> windows_;
};

void check(const leveldb::Status& s, const char* what) {
  if (!s.ok()) die(3, std::string(what) + ": " + s.ToString());
}

int files_at(leveldb::DB* db, int level) {
  std::string v;
  if (!db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v)) return -1;
  return std::atoi(v.c_str());
}

void write_run(leveldb::DB* db, const std::vector<Entry>& run) {
  leveldb::WriteBatch batch;
  for (const auto& e : run) {
    char v[4] = {static_cast<char>(e.second), static_cast<char>(e.second >> 8),
                 static_cast<char>(e.second >> 16), static_cast<char>(e.second >> 24)};
    batch.Put(e.first, leveldb::Slice(v, 4));
  }
  check(db->Write(leveldb::WriteOptions(), &batch), "write");
}

// Flushes the memtable into one table without compacting anything: the range lies past every key
// (all keys are at most `maxlen` bytes, so maxlen+1 bytes of 0xFF sort after all of them).
void flush(leveldb::DB* db, size_t maxlen) {
  std::string past(maxlen + 1, '\xff'), past2(maxlen + 2, '\xff');
  leveldb::Slice a(past), b(past2);
  db->CompactRange(&a, &b);
}

double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Rep {
  double core_us = NAN;   // "Compacting" .. "compacted to"
  double total_us = NAN;  // the CompactRange(nullptr, nullptr) call; NaN if LevelDB compacted on its own
  bool automatic = false;
  std::string what;
  std::vector<Entry> merged;
};

Rep one_rep(const std::string& dir, const std::vector<Entry>& run0, const std::vector<Entry>& run1,
            bool snappy, bool dump) {
  leveldb::Options opt;
  opt.create_if_missing = true;
  opt.error_if_exists = true;
  opt.compression = snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  // Each run must stay in the memtable until our explicit flush (at most ~60 B per entry in it).
  opt.write_buffer_size = std::max<size_t>(64u << 20, (run0.size() + run1.size()) * 128);
  TimingLogger logger;
  opt.info_log = &logger;
  check(leveldb::DestroyDB(dir, opt), "destroy");
  leveldb::DB* db = nullptr;
  check(leveldb::DB::Open(opt, dir, &db), "open");

  size_t maxlen = 0;
  for (const auto* r : {&run0, &run1})
    for (const auto& e : *r) maxlen = std::max(maxlen, e.first.size());

  write_run(db, run1);  // older run first: lowest sequence numbers
  flush(db, maxlen);
  size_t before = logger.count();
  write_run(db, run0);  // newer run last: it wins for duplicate keys
  flush(db, maxlen);
  int l0 = files_at(db, 0);
  Rep rep;
  // Past ~10 MiB in level 1 LevelDB schedules the 1@1+1@2 compaction by itself after the flush; the
  // compaction window is still exact then, but the CompactRange call no longer brackets it.
  rep.automatic = logger.count() > before || !(l0 == 0 && files_at(db, 1) == 1 && files_at(db, 2) == 1);
  if (rep.automatic && l0 != 0) die(3, "unexpected table layout: " + std::to_string(l0) + " file(s) in level 0");

  auto t0 = Clock::now();
  db->CompactRange(nullptr, nullptr);  // waits for any running compaction, then compacts the rest
  auto t1 = Clock::now();

  auto w = logger.windows();
  std::vector<TimingLogger::Window> ours(w.begin() + before, w.end());
  if (ours.empty()) die(3, "no compaction happened (do the two runs overlap?)");
  rep.core_us = 0;
  for (const auto& x : ours) {
    if (!x.closed) die(3, "compaction window without its end");
    if (x.start < t0) rep.automatic = true;  // began on its own before our call: the call does not bracket it
    rep.core_us += us(x.end - x.start);
    rep.what += (rep.what.empty() ? "" : "; ") + x.what;
  }
  if (!rep.automatic) rep.total_us = us(t1 - t0);

  if (dump) {
    leveldb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto v = it->value();
      if (v.size() != 4) die(3, "value of unexpected size in the merged database");
      const auto* b = reinterpret_cast<const unsigned char*>(v.data());
      rep.merged.emplace_back(it->key().ToString(),
                              b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24));
    }
    check(it->status(), "iterate");
  }
  delete db;
  check(leveldb::DestroyDB(dir, opt), "destroy");
  return rep;
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double minimum(const std::vector<double>& v) {
  double m = NAN;
  for (double x : v)
    if (!std::isnan(x) && (std::isnan(m) || x < m)) m = x;
  return m;
}

void usage() {
  die(2, "usage: leveldb_compact --run0 NEWER.keys --run1 OLDER.keys --db DIR [--reps N] [--warmup N] "
         "[--compression none|snappy] [--dump MERGED.keys]");
}

}  // namespace

int main(int argc, char** argv) {
  std::string run0_path, run1_path, dir, dump_path, compression = "none";
  int reps = 5, warmup = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage();
    std::string v = argv[++i];
    if (a == "--run0") run0_path = v;
    else if (a == "--run1") run1_path = v;
    else if (a == "--db") dir = v;
    else if (a == "--dump") dump_path = v;
    else if (a == "--compression") compression = v;
    else if (a == "--reps") reps = std::atoi(v.c_str());
    else if (a == "--warmup") warmup = std::atoi(v.c_str());
    else usage();
  }
  if (run0_path.empty() || run1_path.empty() || dir.empty()) usage();
  if (reps < 1 || reps > 1000) die(2, "--reps must be 1..1000");
  if (warmup < 0 || warmup > 100) die(2, "--warmup must be 0..100");
  if (compression != "none" && compression != "snappy") die(2, "--compression must be none or snappy");
  auto run0 = read_keys(run0_path), run1 = read_keys(run1_path);
  if (run0.empty() || run1.empty()) die(2, "both runs must hold at least one key (a two-table compaction)");

  std::printf("leveldb version=%d.%d compression=%s entries_run0=%zu entries_run1=%zu warmup=%d\n",
              leveldb::kMajorVersion, leveldb::kMinorVersion, compression.c_str(), run0.size(), run1.size(),
              warmup);
  // Untimed first repetition(s): the first database of a process pays for cold page cache, library
  // and allocator start-up (several times the steady figure at small sizes).
  for (int r = 0; r < warmup; ++r) one_rep(dir, run0, run1, compression == "snappy", false);
  std::vector<double> core, total;
  int automatic = 0;
  for (int r = 0; r < reps; ++r) {
    bool last = r == reps - 1;
    Rep rep = one_rep(dir, run0, run1, compression == "snappy", last && !dump_path.empty());
    core.push_back(rep.core_us);
    total.push_back(rep.total_us);
    automatic += rep.automatic;
    std::printf("rep=%d core_us=%.3f total_us=%.3f automatic=%d compaction=\"%s\"\n", r, rep.core_us,
                rep.total_us, rep.automatic ? 1 : 0, rep.what.c_str());
    std::fflush(stdout);
    if (last && !dump_path.empty()) {
      FILE* f = std::fopen(dump_path.c_str(), "w");
      if (!f) die(2, dump_path + ": cannot write");
      for (const auto& e : rep.merged) {
        for (unsigned char c : e.first) std::fprintf(f, "%02x", c);
        std::fprintf(f, " %" PRIu32 "\n", e.second);
      }
      std::fclose(f);
    }
  }
  std::printf("result keys_in=%zu reps=%d automatic=%d core_us_min=%.3f core_us_median=%.3f "
              "total_us_min=%.3f total_us_median=%.3f\n",
              run0.size() + run1.size(), reps, automatic, minimum(core), median(core), minimum(total),
              median(total));
  return 0;
}
