// lsmc compaction offload hook for LevelDB 1.23: input tables -> KB16 runs -> device merge -> the entry
// stream LevelDB's own compaction loop writes with TableBuilder (docs/leveldb.md).
//
// Each input run (one per Level-0 file, newest first, then one per level: files of a level >= 1 do
// not overlap) becomes a KB16 run of its distinct user keys; the value address of a key indexes a
// side table holding its internal key (user key, sequence, type) and value. Older versions of a key
// inside one run hang behind their newest version in the side table. The device merges the runs
// (cascading over its 2 ways) and names the superseded addresses. The stream handed back to the loop
// is every input entry in internal-key order: for each key of the merged run, the device's survivor,
// then the versions it superseded. The loop therefore calls ShouldStopBefore, IsBaseLevelForKey and
// its drop rules on exactly the entries the CPU path would, and output files, splits and deletion
// markers come out as LevelDB's own. The device's drops must be drops LevelDB makes too: every
// superseded version must be hidden by a newer version at or below the smallest snapshot, else the
// compaction falls back (reason "snapshot").
#include "lsmc_hook.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "leveldb/comparator.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"

#include "kb16.h"
#include "lsmc_offload.h"

namespace leveldb {
namespace lsmc {
namespace {

constexpr unsigned kGroup = 16;  // the IP's default G (docs/kb16-format.md)

struct Stats {
  uint64_t offloaded = 0, fallback = 0, device_cycles = 0, host_us = 0, sim_us = 0, sim_wall_us = 0, entries = 0,
           jobs = 0, compactions = 0, compaction_cpu_us = 0;
  std::map<std::string, uint64_t> reasons;
};

std::mutex g_stats_mu;
std::map<const void*, Stats> g_stats;

struct Config {
  int backend = LSMC_BACKEND_OFF;
  bool verify = false;
  std::string error;  // a bad LSMC_OFFLOAD value: every compaction falls back with it
};

const Config& config() {
  static const Config cfg = [] {
    Config c;
    char err[200] = "";
    c.backend = lsmc_backend_from_env(err, sizeof err);
    if (c.backend < 0) {
      c.error = err;
      fprintf(stderr, "lsmc: %s; compactions run on the CPU\n", err);
    }
    const char* v = getenv("LSMC_OFFLOAD_VERIFY");
    c.verify = v && *v && strcmp(v, "0") != 0;
    return c;
  }();
  return cfg;
}

// One input entry: offsets into the arena (which may grow, so no pointers are kept).
struct Entry {
  uint64_t key_off;   // internal key: user key + 8-byte (sequence << 8 | type)
  uint32_t key_len;
  uint32_t dups;      // older versions of the same user key that follow in the same run
  uint64_t val_off;
  uint32_t val_len;
  SequenceNumber seq;
};

// Why a compaction falls back to the CPU path: a short tag (counted) and a detail (info log).
// LevelDB builds without exceptions, so every step returns false after calling Fail().
struct Why {
  std::string tag, detail;
  bool Fail(const std::string& t, const std::string& d) {
    tag = t;
    detail = d;
    return false;
  }
};

// The complete entry stream of a compaction, in internal-key order, as the compaction loop reads it.
// Wraps the iterator the compaction loop reads; its deletion ends DoCompactionWork's loop (after the
// last output table is finished), so the compaction thread's CPU time from the hook's entry to there
// is the compaction's CPU time: the same bracket for the stock and the offloaded path. Only used when
// LSMC_OFFLOAD_LOG asks for figures.
class TimedIterator : public Iterator {
 public:
  TimedIterator(Iterator* in, const void* db, uint64_t t0) : in_(in), db_(db), t0_(t0) {}
  ~TimedIterator() override {
    delete in_;
    const uint64_t spent = lsmc_thread_cpu_us() - t0_;
    std::lock_guard<std::mutex> l(g_stats_mu);
    Stats& s = g_stats[db_];
    s.compactions++;
    s.compaction_cpu_us += spent;
  }
  bool Valid() const override { return in_->Valid(); }
  void SeekToFirst() override { in_->SeekToFirst(); }
  void SeekToLast() override { in_->SeekToLast(); }
  void Seek(const Slice& target) override { in_->Seek(target); }
  void Next() override { in_->Next(); }
  void Prev() override { in_->Prev(); }
  Slice key() const override { return in_->key(); }
  Slice value() const override { return in_->value(); }
  Status status() const override { return in_->status(); }

 private:
  Iterator* in_;
  const void* db_;
  uint64_t t0_;
};

Iterator* Timed(Iterator* it, const void* db, uint64_t t0) {
  const char* log = getenv("LSMC_OFFLOAD_LOG");
  return log && *log ? new TimedIterator(it, db, t0) : it;
}

class StreamIterator : public Iterator {
 public:
  StreamIterator(std::string arena, std::vector<Entry> ents, std::vector<uint32_t> order,
                 const InternalKeyComparator& icmp)
      : arena_(std::move(arena)), ents_(std::move(ents)), order_(std::move(order)), icmp_(icmp),
        pos_(order_.size()) {}
  bool Valid() const override { return pos_ < order_.size(); }
  void SeekToFirst() override { pos_ = 0; }
  void SeekToLast() override { pos_ = order_.empty() ? 0 : order_.size() - 1; }
  void Seek(const Slice& target) override {
    size_t lo = 0, hi = order_.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (icmp_.Compare(KeyAt(mid), target) < 0) lo = mid + 1;
      else hi = mid;
    }
    pos_ = lo;
  }
  void Next() override { pos_++; }
  void Prev() override { pos_ = pos_ == 0 ? order_.size() : pos_ - 1; }
  Slice key() const override { return KeyAt(pos_); }
  Slice value() const override {
    const Entry& e = ents_[order_[pos_]];
    return Slice(arena_.data() + e.val_off, e.val_len);
  }
  Status status() const override { return Status::OK(); }

 private:
  Slice KeyAt(size_t i) const {
    const Entry& e = ents_[order_[i]];
    return Slice(arena_.data() + e.key_off, e.key_len);
  }
  std::string arena_;
  std::vector<Entry> ents_;
  std::vector<uint32_t> order_;
  const InternalKeyComparator icmp_;
  size_t pos_;
};

struct Job {
  std::string arena;
  std::vector<Entry> ents;
  std::vector<std::vector<uint8_t>> runs;
  uint64_t n_entries = 0;

  Slice UserKey(uint32_t a) const { return Slice(arena.data() + ents[a].key_off, ents[a].key_len - 8); }
};

// Reads the files of one run (in key order) into the side table and encodes its KB16 run.
bool AddRun(Job* job, const Options& options, TableCache* tc, const std::vector<FileMetaData*>& files,
            SequenceNumber smallest_snapshot, Why* why) {
  ReadOptions ro;
  ro.verify_checksums = options.paranoid_checks;
  ro.fill_cache = false;
  std::vector<uint32_t> survivors;
  std::string prev_user;
  bool have_prev = false;
  for (FileMetaData* f : files) {
    Iterator* it = tc->NewIterator(ro, f->number, f->file_size);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Slice k = it->key(), v = it->value();
      ParsedInternalKey ik;
      if (!ParseInternalKey(k, &ik)) {
        delete it;
        return why->Fail("bad-key", "unparsable internal key in table " + std::to_string(f->number));
      }
      if (ik.user_key.size() < 1 || ik.user_key.size() > KB16_MAX_KEY) {
        delete it;
        return why->Fail("key-length", "user key of " + std::to_string(ik.user_key.size()) + " bytes (KB16: 1..16)");
      }
      if (job->ents.size() >= 0xFFFFFFF0u) {
        delete it;
        return why->Fail("size", "more than 2^32 entries");
      }
      Entry e;
      e.key_off = job->arena.size();
      e.key_len = (uint32_t)k.size();
      job->arena.append(k.data(), k.size());
      e.val_off = job->arena.size();
      e.val_len = (uint32_t)v.size();
      job->arena.append(v.data(), v.size());
      e.seq = ik.sequence;
      e.dups = 0;
      bool same = have_prev && ik.user_key == Slice(prev_user);
      if (same) {
        // An older version in the same run: the KB16 run keeps one entry per key, so LevelDB must
        // drop this version too, i.e. the newest version hides it at or below the oldest snapshot.
        Entry& head = job->ents[survivors.back()];
        if (head.seq > smallest_snapshot) {
          delete it;
          return why->Fail("snapshot", "a live snapshot keeps an older version inside one table");
        }
        head.dups++;
      } else {
        prev_user.assign(ik.user_key.data(), ik.user_key.size());
        have_prev = true;
        survivors.push_back((uint32_t)job->ents.size());
      }
      job->ents.push_back(e);
    }
    Status s = it->status();
    delete it;
    if (!s.ok()) return why->Fail("read-error", s.ToString());
  }
  // Canonical KB16 encoding: at most two entries per key plus one pad per group.
  size_t cap = 16 * (2 * survivors.size() + survivors.size() / (kGroup - 1) + 2);
  std::vector<uint8_t> run(cap);
  kb16_writer w;
  kb16_writer_init(&w, run.data(), run.size(), kGroup);
  for (uint32_t a : survivors) {
    Slice uk = job->UserKey(a);
    size_t ei;
    int st = kb16_writer_put(&w, (const uint8_t*)uk.data(), (unsigned)uk.size(), a, &ei);
    if (st != KB16_OK) return why->Fail("encode", std::string("KB16 encoder: ") + kb16_err_name(st));
  }
  run.resize(kb16_writer_bytes(&w));
  job->runs.push_back(std::move(run));
  return true;
}

// Runs of a compaction, newest first: each Level-0 file alone (higher file number = newer), then one
// run per level (files of a level >= 1 are disjoint; sorted by smallest key).
std::vector<std::vector<FileMetaData*>> RunsOf(Compaction* c, const InternalKeyComparator& icmp) {
  std::vector<std::vector<FileMetaData*>> runs;
  for (int which = 0; which < 2; which++) {
    std::vector<FileMetaData*> files;
    for (int i = 0; i < c->num_input_files(which); i++) files.push_back(c->input(which, i));
    if (files.empty()) continue;
    if (c->level() + which == 0) {
      std::sort(files.begin(), files.end(), [](FileMetaData* a, FileMetaData* b) { return a->number > b->number; });
      for (FileMetaData* f : files) runs.push_back({f});
    } else {
      std::sort(files.begin(), files.end(),
                [&](FileMetaData* a, FileMetaData* b) { return icmp.Compare(a->smallest, b->smallest) < 0; });
      runs.push_back(files);
    }
  }
  return runs;
}

[[noreturn]] void VerifyFailed(uint64_t index, const std::string& what, const Slice& cpu, const Slice& dev) {
  fprintf(stderr,
          "lsmc: LSMC_OFFLOAD_VERIFY: offloaded compaction differs from the CPU path at entry %" PRIu64
          ": %s\n  cpu:    %s\n  device: %s\n",
          index, what.c_str(), cpu.ToString().c_str(), dev.ToString().c_str());
  abort();
}

// Compares LevelDB's merging iterator with the device's stream, entry by entry (key and value).
void Verify(Iterator* cpu, Iterator* dev) {
  uint64_t i = 0;
  cpu->SeekToFirst();
  dev->SeekToFirst();
  for (; cpu->Valid() && dev->Valid(); cpu->Next(), dev->Next(), i++) {
    if (cpu->key() != dev->key()) VerifyFailed(i, "internal key", cpu->key(), dev->key());
    if (cpu->value() != dev->value()) VerifyFailed(i, "value", cpu->value(), dev->value());
  }
  if (cpu->Valid() || dev->Valid())
    VerifyFailed(i, cpu->Valid() ? "device stream ends early" : "device stream has extra entries",
                 cpu->Valid() ? cpu->key() : Slice(), dev->Valid() ? dev->key() : Slice());
  if (!cpu->status().ok()) {
    fprintf(stderr, "lsmc: LSMC_OFFLOAD_VERIFY: CPU path read error %s\n", cpu->status().ToString().c_str());
    abort();
  }
}

// Inputs -> KB16 runs -> device -> `order`: every side-table entry once, in internal-key order.
bool DeviceMerge(const Config& cfg, const Options& options, const Comparator* ucmp, TableCache* tc, Compaction* c,
                 SequenceNumber smallest_snapshot, Job* job, std::vector<uint32_t>* order, lsmc_result* res,
                 Why* why) {
  if (!cfg.error.empty()) return why->Fail("config", cfg.error);
  if (ucmp != BytewiseComparator())
    return why->Fail("comparator", std::string("user comparator ") + ucmp->Name() + " is not bytewise");
  const InternalKeyComparator icmp(ucmp);
  uint64_t in_bytes = 0;
  for (int which = 0; which < 2; which++)
    for (int i = 0; i < c->num_input_files(which); i++) in_bytes += c->input(which, i)->file_size;
  job->arena.reserve(2 * in_bytes);  // tables are block-compressed: usually enough, else it grows
  for (const std::vector<FileMetaData*>& files : RunsOf(c, icmp))
    if (!AddRun(job, options, tc, files, smallest_snapshot, why)) return false;
  std::vector<lsmc_run> runs;
  for (const std::vector<uint8_t>& r : job->runs) runs.push_back(lsmc_run{r.data(), r.size()});
  char err[300] = "";
  if (lsmc_merge_runs(cfg.backend, runs.data(), runs.size(), kGroup, res, err, sizeof err) != 0)
    return why->Fail("device-error", err);

  // Superseded addresses grouped by user key (newest first), in key order like the merged run.
  std::vector<uint32_t> inv(res->inv, res->inv + res->inv_count);
  for (uint32_t a : inv)
    if (a >= job->ents.size()) return why->Fail("device-error", "superseded address out of range");
  std::sort(inv.begin(), inv.end(), [job](uint32_t a, uint32_t b) {
    int r = job->UserKey(a).compare(job->UserKey(b));
    return r < 0 || (r == 0 && job->ents[a].seq > job->ents[b].seq);
  });
  order->reserve(job->ents.size());
  kb16_reader rd;
  kb16_reader_init(&rd, res->out, res->out_len, kGroup);
  uint8_t kbuf[KB16_MAX_KEY];
  unsigned klen;
  uint32_t addr;
  size_t ip = 0;
  std::vector<uint32_t> versions;
  int r;
  while ((r = kb16_reader_next(&rd, kbuf, &klen, &addr)) == 1) {
    if (addr >= job->ents.size() || job->UserKey(addr) != Slice((const char*)kbuf, klen))
      return why->Fail("device-error", "merged key does not match its side-table entry");
    versions.clear();
    for (uint32_t d = 0; d <= job->ents[addr].dups; d++) versions.push_back(addr + d);
    while (ip < inv.size() && job->UserKey(inv[ip]) == job->UserKey(addr)) {
      for (uint32_t d = 0; d <= job->ents[inv[ip]].dups; d++) versions.push_back(inv[ip] + d);
      ip++;
    }
    if (versions.size() > 1) {
      std::stable_sort(versions.begin(), versions.end(),
                       [job](uint32_t a, uint32_t b) { return job->ents[a].seq > job->ents[b].seq; });
      if (versions[0] != addr) return why->Fail("run-order", "the device kept an older version (run order)");
      // The device dropped every older version; LevelDB drops them only if the newest one is at or
      // below the oldest live snapshot.
      if (job->ents[addr].seq > smallest_snapshot)
        return why->Fail("snapshot", "a live snapshot keeps a version the device superseded");
    }
    order->insert(order->end(), versions.begin(), versions.end());
  }
  if (r < 0) return why->Fail("device-error", std::string("merged run: ") + kb16_err_name(rd.err));
  if (ip != inv.size() || order->size() != job->ents.size())
    return why->Fail("device-error", "merged run and superseded addresses do not cover the inputs");
  return true;
}

}  // namespace

Iterator* OffloadCompaction(const void* db, const Options& options, const Comparator* ucmp, TableCache* tc,
                            Compaction* c, SequenceNumber smallest_snapshot, Iterator* input) {
  const Config& cfg = config();
  const uint64_t t0 = lsmc_thread_cpu_us();
  if (cfg.backend == LSMC_BACKEND_OFF && cfg.error.empty()) return Timed(input, db, t0);
  Job job;
  std::vector<uint32_t> order;
  lsmc_result res;
  memset(&res, 0, sizeof res);
  Why why;
  if (!DeviceMerge(cfg, options, ucmp, tc, c, smallest_snapshot, &job, &order, &res, &why)) {
    lsmc_result_free(&res);
    {
      std::lock_guard<std::mutex> l(g_stats_mu);
      Stats& s = g_stats[db];
      s.fallback++;
      s.reasons[why.tag]++;
    }
    Log(options.info_log, "lsmc: compaction %d@%d + %d@%d on the CPU: %s (%s)", c->num_input_files(0), c->level(),
        c->num_input_files(1), c->level() + 1, why.tag.c_str(), why.detail.c_str());
    return Timed(input, db, t0);
  }
  // Self-test of the verifier (tests/test_leveldb.py): LSMC_OFFLOAD_FAULT=swap exchanges the first two
  // entries of the device's stream, which LSMC_OFFLOAD_VERIFY must catch.
  const char* fault = getenv("LSMC_OFFLOAD_FAULT");
  if (fault && !strcmp(fault, "swap") && order.size() >= 2) std::swap(order[0], order[1]);
  const uint64_t n = job.ents.size();
  const size_t n_runs = job.runs.size();
  Iterator* dev = new StreamIterator(std::move(job.arena), std::move(job.ents), std::move(order),
                                     InternalKeyComparator(ucmp));
  // Host conversion time: this thread's CPU time in the hook minus the back end's (thread CPU time,
  // not wall time: on a shared machine wall time mostly measures the other processes).
  const uint64_t spent_us = lsmc_thread_cpu_us() - t0;
  const uint64_t host_us = spent_us > res.sim_us ? spent_us - res.sim_us : 0;
  {
    std::lock_guard<std::mutex> l(g_stats_mu);
    Stats& s = g_stats[db];
    s.offloaded++;
    s.device_cycles += res.device_cycles;
    s.host_us += host_us;
    s.sim_us += res.sim_us;
    s.sim_wall_us += res.sim_wall_us;
    s.entries += n;
    s.jobs += res.jobs;
  }
  Log(options.info_log,
      "lsmc: compaction %d@%d + %d@%d offloaded (%s): %zu runs, %" PRIu64 " entries, %" PRIu64
      " device jobs, %" PRIu64 " device cycles, host %" PRIu64 " us, back end %" PRIu64 " us",
      c->num_input_files(0), c->level(), c->num_input_files(1), c->level() + 1, lsmc_backend_name(cfg.backend),
      n_runs, n, (uint64_t)res.jobs, (uint64_t)res.device_cycles, host_us, (uint64_t)res.sim_us);
  lsmc_result_free(&res);
  if (cfg.verify) Verify(input, dev);
  delete input;
  return Timed(dev, db, t0);
}

void OffloadDbClosed(const void* db) {
  Stats s;
  {
    std::lock_guard<std::mutex> l(g_stats_mu);
    auto it = g_stats.find(db);
    if (it == g_stats.end()) return;
    s = it->second;
    g_stats.erase(it);
  }
  const char* path = getenv("LSMC_OFFLOAD_LOG");
  if (!path || !*path) return;
  std::string line = "offloaded=" + std::to_string(s.offloaded) + " fallback=" + std::to_string(s.fallback) +
                     " device_cycles=" + std::to_string(s.device_cycles) + " host_us=" + std::to_string(s.host_us);
  line += " sim_us=" + std::to_string(s.sim_us) + " sim_wall_us=" + std::to_string(s.sim_wall_us) + " entries=" + std::to_string(s.entries) +
          " jobs=" + std::to_string(s.jobs) + " compactions=" + std::to_string(s.compactions) +
          " compaction_cpu_us=" + std::to_string(s.compaction_cpu_us) + " backend=" + lsmc_backend_name(config().backend);
  for (const auto& kv : s.reasons) line += " reason:" + kv.first + "=" + std::to_string(kv.second);
  line += "\n";
  FILE* f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "lsmc: cannot append to LSMC_OFFLOAD_LOG=%s\n", path);
    return;
  }
  fputs(line.c_str(), f);
  fclose(f);
}

}  // namespace lsmc
}  // namespace leveldb
