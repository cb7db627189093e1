// lsmc compaction offload hook for LevelDB 1.23 (docs/leveldb.md). Two device paths:
//
// Table engine (LSMC_OFFLOAD=model: its C++ model; rtl: its Verilated RTL; soc: the full SoC, small cases;
// hw/ip/table_engine): the engine does the whole compaction. The hook reads the input tables' bytes from their files and hands them over with
// the run layout (each Level-0 file a run, newest first; each input level >= 1 one run in key order), the DB's
// table options, smallest_snapshot, the grandparents (for ShouldStopBefore) and the deeper levels' user-key
// ranges (for IsBaseLevelForKey). The engine applies LevelDB's drop rules and writes the tables as
// TableBuilder does; the hook numbers them as OpenCompactionOutputFile would, writes and syncs them,
// and DoCompactionWork's tail installs them with the same VersionEdit. LevelDB's loop does not run.
//
// KB16 IP (kb16: its Verilated RTL in process; kb16-soc: the full SoC; hw/ip/compaction): each input run (one per
// Level-0 file, newest first, then one per level) becomes a KB16 run of its distinct user keys; the value
// address of a key indexes a side
// table holding its internal key (user key, sequence, type) and value. Older versions of a key
// inside one run hang behind their newest version in the side table. The device merges the runs
// (cascading over its 2 ways) and names the superseded addresses. The stream handed back to the loop
// is every input entry in internal-key order: for each key of the merged run, the device's survivor,
// then the versions it superseded. The loop therefore calls ShouldStopBefore, IsBaseLevelForKey and
// its drop rules on exactly the entries the CPU path would. The device's drops must be drops LevelDB
// makes too: every superseded version must be hidden by a newer version at or below the smallest
// snapshot, else the compaction falls back (reason "snapshot").
#include "lsmc_hook.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "db/dbformat.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "leveldb/comparator.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

#include "kb16.h"
#include "lsmc_env.h"
#include "lsmc_offload.h"
#include "lsmc_table.h"

namespace leveldb {
namespace lsmc {
namespace {

constexpr unsigned kGroup = 16;  // the IP's default G (docs/kb16-format.md)

struct Stats {
  uint64_t offloaded = 0, fallback = 0, device_cycles = 0, host_us = 0, sim_us = 0, sim_wall_us = 0, entries = 0,
           jobs = 0, compactions = 0, compaction_cpu_us = 0, bytes_in = 0, bytes_out = 0, device_us = 0,
           pace_wait_us = 0, tables_out = 0, job_wall_us = 0;
  std::map<std::string, uint64_t> reasons;
  std::map<std::string, std::string> details;  // the first fallback's detail of each reason (the log's '#' lines)
};

std::mutex g_stats_mu;
std::map<const void*, Stats> g_stats;

enum Fault { kNoFault = 0, kSwap = 1, kFlip = 2, kHang = 3 };

struct Config {
  int backend = LSMC_BACKEND_OFF;
  bool verify = false;
  int fault = kNoFault;
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
    c.verify = lsmc_env_flag("LSMC_OFFLOAD_VERIFY");
    // Self-tests of the verifiers (tests/test_leveldb.py): swap exchanges the first two entries of the
    // KB16 path's stream, flip changes the first byte of the table engine's first output table; hang
    // gives each job on the engine's RTL one clock, so it ends without status (the device-error fallback).
    static const char* const kFaults[] = {"none", "swap", "flip", "hang"};
    c.fault = lsmc_env_choice("LSMC_OFFLOAD_FAULT", kFaults, 4, kNoFault);
    lsmc_env_check();  // every variable is read now, so a bad value is named when the library starts
    lsmc_table::PaceFromEnv();
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

namespace {

void CountFallback(const void* db, const Options& options, Compaction* c, const Why& why) {
  {
    std::lock_guard<std::mutex> l(g_stats_mu);
    Stats& s = g_stats[db];
    s.fallback++;
    s.reasons[why.tag]++;
    s.details.emplace(why.tag, why.detail);  // the first only: a reason's later details are in the info log
  }
  Log(options.info_log, "lsmc: compaction %d@%d + %d@%d on the CPU: %s (%s)", c->num_input_files(0), c->level(),
      c->num_input_files(1), c->level() + 1, why.tag.c_str(), why.detail.c_str());
}

// The KB16 path (kb16, soc): the device's merge rebuilt into the stream LevelDB's loop writes.
Iterator* Kb16Offload(const void* db, const Config& cfg, uint64_t t0, const Options& options, const Comparator* ucmp,
                      TableCache* tc, Compaction* c, SequenceNumber smallest_snapshot, Iterator* input) {
  Job job;
  std::vector<uint32_t> order;
  lsmc_result res;
  memset(&res, 0, sizeof res);
  Why why;
  if (!DeviceMerge(cfg, options, ucmp, tc, c, smallest_snapshot, &job, &order, &res, &why)) {
    lsmc_result_free(&res);
    CountFallback(db, options, c, why);
    return input;
  }
  // Self-test of the verifier (tests/test_leveldb.py): LSMC_OFFLOAD_FAULT=swap exchanges the first two
  // entries of the device's stream, which LSMC_OFFLOAD_VERIFY must catch.
  if (cfg.fault == kSwap && order.size() >= 2) std::swap(order[0], order[1]);
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
  return dev;
}

// ------------------------------------------------------------------------------- table engine path

// Bits per key of LevelDB's own bloom filter (0 without a filter policy), or -1 for another policy.
// The policy's bits_per_key is private, so it is read off a filter of 1000 keys: LevelDB's bloom
// filter has n * bits_per_key bits (n * bits_per_key / 8 bytes here) and a last byte holding its
// number of probes, 0.69 * bits_per_key clamped to 1..30. The policy in the DB's options is the
// internal-key wrapper, so the keys carry an 8-byte tag.
int BloomBitsPerKey(const FilterPolicy* policy) {
  if (policy == nullptr) return 0;
  if (strcmp(policy->Name(), "leveldb.BuiltinBloomFilter2") != 0) return -1;
  constexpr int kKeys = 1000;
  std::vector<std::string> keys(kKeys);
  std::vector<Slice> slices(kKeys);
  for (int i = 0; i < kKeys; i++) {
    keys[i] = "probe" + std::to_string(i) + std::string(8, '\1');
    slices[i] = keys[i];
  }
  std::string filter;
  policy->CreateFilter(slices.data(), kKeys, &filter);
  if (filter.size() < 2 || (filter.size() - 1) % (kKeys / 8) != 0) return -1;
  const int bits = int((filter.size() - 1) / (kKeys / 8));
  const int probes = std::min(30, std::max(1, int(bits * 0.69)));
  return uint8_t(filter.back()) == probes ? bits : -1;
}

// A table file's bytes without a copy where the Env maps the file (PosixEnv does, up to its mmap
// limit): the view stays valid while *file lives. Otherwise the bytes land in t->bytes.
Status ReadTableFile(Env* env, const std::string& dbname, uint64_t number, uint64_t size,
                     std::unique_ptr<RandomAccessFile>* file, lsmc_table::InputTable* t) {
  RandomAccessFile* f = nullptr;
  Status s = env->NewRandomAccessFile(TableFileName(dbname, number), &f);
  if (!s.ok() && env->NewRandomAccessFile(SSTTableFileName(dbname, number), &f).ok()) s = Status::OK();
  if (!s.ok()) return s;
  file->reset(f);
  t->bytes.resize(size);
  Slice got;
  s = f->Read(0, size, &got, &t->bytes[0]);
  if (s.ok() && got.size() != size) s = Status::Corruption("table file shorter than its size", std::to_string(number));
  if (s.ok() && got.data() != t->bytes.data()) {
    t->data = got.data();
    t->size = got.size();
    std::string().swap(t->bytes);
  }
  return s;
}

// The engine's error codes as fallback reasons: a key over the engine's limit, an input table that
// fails its checks, an output that would pass its buffer; anything else is the device's.
std::string ReasonOf(const std::string& code) {
  if (code == "KEY_TOO_LONG") return "key-length";
  if (code == "BAD_MAGIC" || code == "BAD_CRC" || code == "TRUNCATED" || code == "BAD_BLOCK" ||
      code == "BAD_VARINT" || code == "BAD_SNAPPY" || code == "KEY_ORDER")
    return "read-error";
  if (code == "OUTPUT_FULL") return "size";
  return "device-error";
}

// Runs the job on a thread; meanwhile (and until the paced device time has passed) the compaction
// thread keeps flushing the immutable memtable, as LevelDB's loop does between entries.
lsmc_table::Result RunJob(lsmc_table::Job&& job, lsmc_table::Engine engine, const OffloadHost& host, uint64_t* wait_us,
                          double* device_us, uint64_t* wall_us) {
  const auto start = std::chrono::steady_clock::now();
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  lsmc_table::Result res;
  std::thread worker([&] {
    lsmc_table::Result r = lsmc_table::Compact(std::move(job), engine);
    std::lock_guard<std::mutex> l(mu);
    res = std::move(r);
    finished = true;
    cv.notify_all();
  });
  bool shutting_down = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu);
      if (cv.wait_for(l, std::chrono::milliseconds(1), [&] { return finished; })) break;
    }
    shutting_down = host.serve();
  }
  worker.join();
  const lsmc_table::Pace& pace = lsmc_table::PaceFromEnv();
  *device_us = pace.DeviceUs(res.cycles, res.bytes_in + res.bytes_out);
  *wait_us = 0;
  if (pace.on && res.ok()) {
    // The model's (or the simulation's) own time counts against the device's: the job ends at start + device time.
    const auto deadline = start + std::chrono::microseconds(uint64_t(*device_us + 0.5));
    const auto waited_from = std::chrono::steady_clock::now();
    while (!shutting_down) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now,
                                                                                 std::chrono::milliseconds(1)));
      shutting_down = host.serve();
    }
    *wait_us = uint64_t(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - waited_from).count());
  }
  *wall_us = uint64_t(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  return res;
}

// In-memory file for LevelDB's own TableBuilder and Table (the verifier's stock tables).
class StringFile : public WritableFile {
 public:
  explicit StringFile(std::string* s) : s_(s) {}
  Status Append(const Slice& data) override {
    s_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }

 private:
  std::string* s_;
};

class StringSource : public RandomAccessFile {
 public:
  explicit StringSource(const std::string& s) : s_(s) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset > s_.size()) return Status::IOError("read past the end");
    *result = Slice(s_.data() + offset, std::min<size_t>(n, s_.size() - offset));
    return Status::OK();
  }

 private:
  const std::string& s_;
};

struct StockTable {
  std::string bytes, smallest, largest;
  uint64_t entries = 0;
};

// LevelDB's own compaction of the same inputs, in memory: its merging iterator, DoCompactionWork's
// drop rules with the Compaction's own ShouldStopBefore and IsBaseLevelForKey, its TableBuilder.
// (Those two advance state inside the Compaction: this runs only once the offload is committed.)
std::vector<StockTable> StockCompaction(const Options& options, const Comparator* ucmp, Compaction* c,
                                        SequenceNumber smallest_snapshot, Iterator* input) {
  std::vector<StockTable> out;
  std::unique_ptr<StringFile> file;
  std::unique_ptr<TableBuilder> builder;
  auto finish = [&] {
    Status s = builder->Finish();
    if (!s.ok()) {
      fprintf(stderr, "lsmc: LSMC_OFFLOAD_VERIFY: stock TableBuilder failed: %s\n", s.ToString().c_str());
      abort();
    }
    builder.reset();
    file.reset();
  };
  std::string user_key;
  bool has_user_key = false;
  SequenceNumber last_sequence = kMaxSequenceNumber;
  for (input->SeekToFirst(); input->Valid(); input->Next()) {
    const Slice key = input->key();
    if (c->ShouldStopBefore(key) && builder) finish();
    bool drop = false;
    ParsedInternalKey ik;
    if (!ParseInternalKey(key, &ik)) {
      has_user_key = false;
      last_sequence = kMaxSequenceNumber;
    } else {
      if (!has_user_key || ucmp->Compare(ik.user_key, Slice(user_key)) != 0) {
        user_key.assign(ik.user_key.data(), ik.user_key.size());
        has_user_key = true;
        last_sequence = kMaxSequenceNumber;
      }
      drop = last_sequence <= smallest_snapshot ||
             (ik.type == kTypeDeletion && ik.sequence <= smallest_snapshot && c->IsBaseLevelForKey(ik.user_key));
      last_sequence = ik.sequence;
    }
    if (drop) continue;
    if (!builder) {
      out.emplace_back();
      file.reset(new StringFile(&out.back().bytes));
      builder.reset(new TableBuilder(options, file.get()));
    }
    StockTable& t = out.back();
    if (builder->NumEntries() == 0) t.smallest = key.ToString();
    t.largest = key.ToString();
    t.entries++;
    builder->Add(key, input->value());
    if (builder->FileSize() >= c->MaxOutputFileSize()) finish();
  }
  if (builder) finish();
  if (!input->status().ok()) {
    fprintf(stderr, "lsmc: LSMC_OFFLOAD_VERIFY: the stock path's input failed: %s\n", input->status().ToString().c_str());
    abort();
  }
  return out;
}

// A table's entries through LevelDB's own reader (checksums verified), or the reader's error.
std::vector<std::pair<std::string, std::string>> Entries(const Options& options, const std::string& bytes,
                                                         std::string* error) {
  std::vector<std::pair<std::string, std::string>> v;
  Options o = options;
  o.block_cache = nullptr;
  StringSource src(bytes);
  Table* table = nullptr;
  Status s = Table::Open(o, &src, bytes.size(), &table);
  if (s.ok()) {
    ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    Iterator* it = table->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) v.emplace_back(it->key().ToString(), it->value().ToString());
    s = it->status();
    delete it;
    delete table;
  }
  if (!s.ok()) *error = s.ToString();
  return v;
}

std::string Scratch(const std::string& name, const std::string& bytes) {
  const char* tmp = getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lsmc-verify-" + std::to_string(getpid()) + "-" + name;
  FILE* f = fopen(path.c_str(), "wb");
  if (f) {
    fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
  }
  return f ? path : "(could not write " + path + ")";
}

[[noreturn]] void TablesDiffer(const std::string& dbname, const OffloadOutput* dev, const lsmc_table::OutputTable* dev_t,
                               size_t index, const StockTable* stock, const std::string& what) {
  const std::string dev_name = dev ? TableFileName(dbname, dev->number) : "(none)";
  fprintf(stderr,
          "lsmc: LSMC_OFFLOAD_VERIFY: output table %zu of the offloaded compaction differs from the stock path: %s\n"
          "  engine: %s (copy: %s)\n  stock:  %s\n",
          index, what.c_str(), dev_name.c_str(),
          dev_t ? Scratch(std::to_string(index) + "-engine.ldb", dev_t->bytes).c_str() : "-",
          stock ? Scratch(std::to_string(index) + "-stock.ldb", stock->bytes).c_str() : "(none)");
  abort();
}

// Compares the engine's tables with the stock path's: byte for byte without compression; with
// Snappy, the decoded entries (LevelDB's reader) and the file boundaries.
void VerifyTables(const std::string& dbname, const Options& options, const std::vector<OffloadOutput>& outs,
                  const std::vector<lsmc_table::OutputTable>& tables, const std::vector<StockTable>& stock) {
  for (size_t i = 0; i < std::max(tables.size(), stock.size()); i++) {
    const OffloadOutput* o = i < outs.size() ? &outs[i] : nullptr;
    const lsmc_table::OutputTable* t = i < tables.size() ? &tables[i] : nullptr;
    const StockTable* s = i < stock.size() ? &stock[i] : nullptr;
    if (!t || !s) TablesDiffer(dbname, o, t, i, s, t ? "the stock path wrote fewer tables" : "the engine wrote fewer tables");
    if (t->smallest != s->smallest || t->largest != s->largest || t->entries != s->entries)
      TablesDiffer(dbname, o, t, i, s, "file boundaries (smallest, largest key or entries) differ");
    if (options.compression == kNoCompression) {
      if (t->bytes != s->bytes) TablesDiffer(dbname, o, t, i, s, "bytes differ (compression off)");
      continue;
    }
    std::string e1, e2;
    const auto a = Entries(options, t->bytes, &e1), b = Entries(options, s->bytes, &e2);
    if (!e1.empty()) TablesDiffer(dbname, o, t, i, s, "the engine's table does not read: " + e1);
    if (!e2.empty()) TablesDiffer(dbname, o, t, i, s, "the stock table does not read: " + e2);
    if (a != b) TablesDiffer(dbname, o, t, i, s, "decoded entries differ");
  }
}

// Deletes the written output files and gives their numbers back: a fallback leaves nothing behind.
void Discard(Env* env, const std::string& dbname, const OffloadHost& host, std::vector<OffloadOutput>* outputs) {
  for (const OffloadOutput& o : *outputs) {
    env->RemoveFile(TableFileName(dbname, o.number));
    host.release_file_number(o.number);
  }
  outputs->clear();
}

bool TableEngineOffload(const void* db, const Config& cfg, uint64_t t0, Env* env, const std::string& dbname,
                        const Options& options, const Comparator* ucmp, TableCache* tc, Compaction* c,
                        SequenceNumber smallest_snapshot, const OffloadHost& host, Iterator* input,
                        std::vector<OffloadOutput>* outputs) {
  Why why;
  auto fallback = [&](const std::string& tag, const std::string& detail) {
    Discard(env, dbname, host, outputs);
    why.Fail(tag, detail);
    CountFallback(db, options, c, why);
    return false;
  };
  if (ucmp != BytewiseComparator())
    return fallback("comparator", std::string("user comparator ") + ucmp->Name() + " is not bytewise");
  lsmc_table::Job job;
  if (options.compression != kNoCompression && options.compression != kSnappyCompression)
    return fallback("options", "compression type " + std::to_string(int(options.compression)));
  job.snappy = options.compression == kSnappyCompression;
  job.bloom_bits_per_key = BloomBitsPerKey(options.filter_policy);
  if (job.bloom_bits_per_key < 0)
    return fallback("filter-policy", std::string("filter policy ") + options.filter_policy->Name() +
                                         " is not LevelDB's bloom filter");
  job.block_size = options.block_size;
  job.restart_interval = options.block_restart_interval;
  job.max_file_size = c->MaxOutputFileSize();
  job.verify_checksums = options.paranoid_checks;  // as VersionSet::MakeInputIterator reads them
  job.smallest_snapshot = smallest_snapshot;
  const InternalKeyComparator icmp(ucmp);
  size_t n_tables = 0;
  std::vector<std::unique_ptr<RandomAccessFile>> files_open;  // the tables' mappings, until the job ends
  for (const std::vector<FileMetaData*>& files : RunsOf(c, icmp)) {
    std::vector<lsmc_table::InputTable> run;
    for (FileMetaData* f : files) {
      lsmc_table::InputTable t;
      t.name = TableFileName(dbname, f->number);
      files_open.emplace_back();
      Status s = ReadTableFile(env, dbname, f->number, f->file_size, &files_open.back(), &t);
      if (!s.ok()) return fallback("read-error", s.ToString());
      run.push_back(std::move(t));
      n_tables++;
    }
    job.runs.push_back(std::move(run));
  }
  for (const FileMetaData* g : c->grandparents())
    job.grandparents.emplace_back(g->largest.Encode().ToString(), g->file_size);
  // The RTL's walker holds up to 1024 deeper files: it gets those that overlap the compaction's user keys
  // (the others never answer IsBaseLevelForKey differently), as table_engine_top.md asks of the host.
  // The RTL and the SoC's unit share the walker's RAMs.
  const bool rtl = cfg.backend == LSMC_BACKEND_RTL, soc = cfg.backend == LSMC_BACKEND_SOC, device = rtl || soc;
  std::string lo, hi;
  if (device) {
    bool first = true;
    for (int which = 0; which < 2; which++)
      for (int i = 0; i < c->num_input_files(which); i++) {
        const Slice s = c->input(which, i)->smallest.user_key(), l = c->input(which, i)->largest.user_key();
        if (first || ucmp->Compare(s, lo) < 0) lo = s.ToString();
        if (first || ucmp->Compare(l, hi) > 0) hi = l.ToString();
        first = false;
      }
  }
  for (int level = c->level() + 2; level < config::kNumLevels; level++) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const FileMetaData* f : c->input_version()->files(level)) {
      if (device && (ucmp->Compare(f->largest.user_key(), lo) < 0 || ucmp->Compare(f->smallest.user_key(), hi) > 0))
        continue;
      files.emplace_back(f->smallest.user_key().ToString(), f->largest.user_key().ToString());
    }
    job.deeper_levels.push_back(std::move(files));
  }
  if (cfg.fault == kHang) job.rtl_max_cycles = 1;
  const size_t n_runs = job.runs.size();
  uint64_t wait_us = 0, wall_us = 0;
  double device_us = 0;
  lsmc_table::Result res = RunJob(std::move(job), rtl ? lsmc_table::Engine::kRtl : soc ? lsmc_table::Engine::kSoc
                                                                             : lsmc_table::Engine::kModel, host,
                                  &wait_us, &device_us, &wall_us);
  files_open.clear();
  if (!res.refused.empty()) return fallback(res.refused, res.error);  // what the RTL does not do yet
  if (!res.ok()) return fallback(ReasonOf(res.error_code), res.error);
  if (cfg.fault == kFlip && !res.tables.empty() && !res.tables[0].bytes.empty()) res.tables[0].bytes[0] ^= 1;

  // Number, write and sync the tables as OpenCompactionOutputFile and FinishCompactionOutputFile do.
  for (const lsmc_table::OutputTable& t : res.tables) {
    OffloadOutput o;
    o.number = host.new_file_number();
    o.file_size = t.bytes.size();
    o.smallest.DecodeFrom(t.smallest);
    o.largest.DecodeFrom(t.largest);
    outputs->push_back(o);
    WritableFile* file = nullptr;
    Status s = env->NewWritableFile(TableFileName(dbname, o.number), &file);
    if (s.ok()) s = file->Append(t.bytes);
    if (s.ok()) s = file->Sync();
    if (s.ok()) s = file->Close();
    delete file;
    if (s.ok() && t.entries > 0) {  // the table is usable, as LevelDB checks its own
      Iterator* it = tc->NewIterator(ReadOptions(), o.number, o.file_size);
      s = it->status();
      delete it;
    }
    if (!s.ok()) return fallback("write-error", s.ToString());
  }
  if (cfg.verify) VerifyTables(dbname, options, *outputs, res.tables, StockCompaction(options, ucmp, c, smallest_snapshot, input));
  for (size_t i = 0; i < outputs->size(); i++)
    Log(options.info_log, "Generated table #%llu@%d: %lld keys, %lld bytes (lsmc table engine)",
        (unsigned long long)(*outputs)[i].number, c->level(), (long long)res.tables[i].entries,
        (long long)(*outputs)[i].file_size);
  const uint64_t host_us = lsmc_thread_cpu_us() - t0;  // the model (or the RTL) ran on its own thread
  {
    std::lock_guard<std::mutex> l(g_stats_mu);
    Stats& s = g_stats[db];
    s.offloaded++;
    s.device_cycles += res.cycles;
    s.host_us += host_us;
    s.sim_us += res.cpu_us;
    s.entries += res.entries_in;
    s.jobs++;
    s.bytes_in += res.bytes_in;
    s.bytes_out += res.bytes_out;
    s.device_us += uint64_t(device_us);
    s.pace_wait_us += wait_us;
    s.job_wall_us += wall_us;
    s.tables_out += res.tables.size();
  }
  const lsmc_table::Pace& pace = lsmc_table::PaceFromEnv();
  Log(options.info_log,
      "lsmc: compaction %d@%d + %d@%d offloaded (table engine %s): %zu runs, %zu tables, %" PRIu64
      " entries in, %" PRIu64 " out, %zu tables out, %" PRIu64 " cycles%s; device %.0f us MODELLED (%.0f MHz, %s)%s,"
      " %s CPU %" PRIu64 " us, host %" PRIu64 " us",
      c->num_input_files(0), c->level(), c->num_input_files(1), c->level() + 1, rtl ? "RTL" : soc ? "SoC" : "model", n_runs, n_tables,
      res.entries_in, res.entries_out, res.tables.size(), res.cycles, rtl ? " (RTL clocks)" : soc ? " (the unit's clocks)" : "",
      device_us, pace.mhz,
      pace.link.c_str(), pace.on ? (", paced: waited " + std::to_string(wait_us) + " us").c_str() : "",
      device ? "simulation" : "model", res.cpu_us, host_us);
  return true;
}

}  // namespace

bool OffloadCompaction(const void* db, Env* env, const std::string& dbname, const Options& options,
                       const Comparator* ucmp, TableCache* tc, Compaction* c, SequenceNumber smallest_snapshot,
                       const OffloadHost& host, Iterator** input, std::vector<OffloadOutput>* outputs) {
  const Config& cfg = config();
  const uint64_t t0 = lsmc_thread_cpu_us();
  bool done = false;
  if (!cfg.error.empty()) {
    Why why;
    why.Fail("config", cfg.error);
    CountFallback(db, options, c, why);
  } else if (cfg.backend == LSMC_BACKEND_MODEL || cfg.backend == LSMC_BACKEND_RTL || cfg.backend == LSMC_BACKEND_SOC) {
    done = TableEngineOffload(db, cfg, t0, env, dbname, options, ucmp, tc, c, smallest_snapshot, host, *input,
                              outputs);
  } else if (cfg.backend != LSMC_BACKEND_OFF) {
    *input = Kb16Offload(db, cfg, t0, options, ucmp, tc, c, smallest_snapshot, *input);
  }
  *input = Timed(*input, db, t0);
  return done;
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
  line += " bytes_in=" + std::to_string(s.bytes_in) + " bytes_out=" + std::to_string(s.bytes_out) +
          " tables_out=" + std::to_string(s.tables_out) + " device_us=" + std::to_string(s.device_us) +
          " pace_wait_us=" + std::to_string(s.pace_wait_us) + " job_wall_us=" + std::to_string(s.job_wall_us);
  for (const auto& kv : s.reasons) line += " reason:" + kv.first + "=" + std::to_string(kv.second);
  line += "\n";
  // Then, for each reason, its first fallback's detail on a line of its own (the counts line stays one line).
  for (const auto& kv : s.details) {
    std::string detail = kv.second;
    for (char& ch : detail)
      if (ch == '\n' || ch == '\r') ch = ' ';
    line += "# fallback " + kv.first + ": " + detail + "\n";
  }
  FILE* f = fopen(path, "a");
  if (!f) {
    const std::string problem = std::string("cannot be appended to (") + strerror(errno) + ")";
    lsmc_env_bad("LSMC_OFFLOAD_LOG", path, problem.c_str(), "no log (the counts are dropped)");
    return;
  }
  fputs(line.c_str(), f);
  fclose(f);
}

}  // namespace lsmc
}  // namespace leveldb
