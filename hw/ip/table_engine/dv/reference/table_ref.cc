// table_ref: the table engine's reference compactor, built from LevelDB 1.23's own source (Debian's
// source package, compiled by lsmc.build.table_ref). Every table it reads goes through LevelDB's Table
// reader, every table it writes through LevelDB's TableBuilder, the inputs are merged by LevelDB's
// merging iterator; only the loop of DBImpl::DoCompactionWork and the two questions it asks of its
// Compaction (ShouldStopBefore, IsBaseLevelForKey) are written here, rule by rule after db_impl.cc and
// version_set.cc, because they live inside DBImpl/VersionSet and need a whole DB.
//
//   table_ref make-table OUT.ldb --options JSON < entries   entries: repeated (u32 LE key length,
//                                                           internal key, u32 LE value length, value)
//   table_ref compact JOB.json OUT_DIR                      one job (hw/ip/table_engine/doc/table-engine.md)
//   table_ref dump [--verify] TABLE.ldb                     blocks and entries (hex internal key, value
//                                                           length, zlib CRC-32 of the value)
//   table_ref make-db LAYOUT.json DB_DIR                    a DB folder (MANIFEST + tables) holding given
//                                                           tables at given levels, for stock LevelDB
//
// Errors: one line on stderr `error=<CODE> table=<path> offset=<n> <message>`, exit 1, no partial output.
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "db/dbformat.h"
#include "db/filename.h"
#include "db/log_writer.h"
#include "db/version_edit.h"
#include "leveldb/comparator.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "table/block.h"
#include "table/format.h"
#include "table/merger.h"
#include "table/two_level_iterator.h"

using json = nlohmann::json;
using leveldb::Slice;
using leveldb::Status;

namespace {

// ------------------------------------------------------------------------------------------ errors
struct JobError {
  std::string code, table;
  int64_t offset;
  std::string message;
};

[[noreturn]] void Fail(const std::string& code, const std::string& table, int64_t offset, const std::string& msg) {
  throw JobError{code, table, offset, msg};
}

// LevelDB reports a bad table as a Status whose text names the fault (table/format.cc, table/table.cc,
// table/block.cc); the job format's codes name the same faults.
std::string CodeOf(const Status& s) {
  const std::string t = s.ToString();
  auto has = [&](const char* m) { return t.find(m) != std::string::npos; };
  if (has("bad magic number")) return "BAD_MAGIC";
  if (has("checksum mismatch")) return "BAD_CRC";
  if (has("too short") || has("truncated")) return "TRUNCATED";
  if (has("compressed block")) return "BAD_SNAPPY";
  if (has("bad block handle")) return "BAD_VARINT";
  return "BAD_BLOCK";
}

std::string Hex(const Slice& s) {
  static const char* d = "0123456789abcdef";
  std::string r;
  r.reserve(2 * s.size());
  for (size_t i = 0; i < s.size(); i++) {
    r.push_back(d[uint8_t(s[i]) >> 4]);
    r.push_back(d[uint8_t(s[i]) & 15]);
  }
  return r;
}

bool Unhex(const std::string& h, std::string* out) {
  if (h.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    int v = 0;
    for (int j = 0; j < 2; j++) {
      char c = h[i + j];
      int n = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (n < 0) return false;
      v = v * 16 + n;
    }
    out->push_back(char(v));
  }
  return true;
}

// ------------------------------------------------------------------------------------------ options
// The options of one job, turned into the leveldb::Options a DB would hand its TableBuilder and its
// table cache: DBImpl's SanitizeOptions wraps the user comparator in an InternalKeyComparator and the
// filter policy in an InternalFilterPolicy (db/db_impl.cc). The job's values are taken as given (a DB
// would clip block_size to 1 KiB..4 MiB and max_file_size to 1 MiB..1 GiB; jobs may go smaller).
struct JobOptions {
  leveldb::InternalKeyComparator icmp{leveldb::BytewiseComparator()};
  std::unique_ptr<const leveldb::FilterPolicy> bloom;
  std::unique_ptr<leveldb::InternalFilterPolicy> ifilter;
  leveldb::Options options;
  uint64_t max_file_size = 2 << 20;
  bool verify = false;
};

void ParseOptions(const json& o, const std::string& where, JobOptions* jo) {
  auto bad = [&](const std::string& m) { Fail("BAD_JOB", where, 0, "options: " + m); };
  if (!o.is_object()) bad("not an object");
  for (auto it = o.begin(); it != o.end(); ++it) {
    static const char* known[] = {"block_size", "block_restart_interval", "compression",
                                  "bloom_bits_per_key", "max_file_size", "verify_checksums"};
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }) ==
        std::end(known))
      bad("unknown key '" + it.key() + "'");
  }
  auto uint_of = [&](const char* k, uint64_t dflt, uint64_t lo, uint64_t hi) -> uint64_t {
    if (!o.contains(k)) return dflt;
    const json& v = o[k];
    if (!v.is_number_unsigned() || v.get<uint64_t>() < lo || v.get<uint64_t>() > hi)
      bad(std::string(k) + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v.get<uint64_t>();
  };
  jo->options = leveldb::Options();
  jo->options.comparator = &jo->icmp;
  jo->options.block_size = uint_of("block_size", 4096, 1, 1u << 30);
  jo->options.block_restart_interval = int(uint_of("block_restart_interval", 16, 1, 1u << 30));
  jo->max_file_size = uint_of("max_file_size", 2 << 20, 1, uint64_t(1) << 40);
  jo->options.max_file_size = jo->max_file_size;
  std::string comp = "snappy";
  if (o.contains("compression")) {
    if (!o["compression"].is_string()) bad("compression must be \"none\" or \"snappy\"");
    comp = o["compression"].get<std::string>();
  }
  if (comp == "none")
    jo->options.compression = leveldb::kNoCompression;
  else if (comp == "snappy")
    jo->options.compression = leveldb::kSnappyCompression;
  else
    bad("compression must be \"none\" or \"snappy\", not \"" + comp + "\"");
  uint64_t bits = uint_of("bloom_bits_per_key", 0, 0, 1000);
  if (bits) {
    jo->bloom.reset(leveldb::NewBloomFilterPolicy(int(bits)));
    jo->ifilter.reset(new leveldb::InternalFilterPolicy(jo->bloom.get()));
    jo->options.filter_policy = jo->ifilter.get();
  }
  if (o.contains("verify_checksums")) {
    if (!o["verify_checksums"].is_boolean()) bad("verify_checksums must be true or false");
    jo->verify = o["verify_checksums"].get<bool>();
  }
  // paranoid_checks: Table::Open then checks the index and meta blocks too; the compaction's
  // ReadOptions.verify_checksums = paranoid_checks (VersionSet::MakeInputIterator).
  jo->options.paranoid_checks = jo->verify;
}

json ReadJson(const std::string& path, const std::string& what) {
  std::ifstream f(path);
  if (!f) Fail("BAD_JOB", path, 0, "cannot read " + what);
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    Fail("BAD_JOB", path, 0, std::string("not valid JSON: ") + e.what());
  }
}

// -------------------------------------------------------------------------------- reading tables
// A table file that remembers where it last read: a fault found in a block is reported at the block's
// offset (LevelDB's Status does not carry one).
class TrackedFile : public leveldb::RandomAccessFile {
 public:
  explicit TrackedFile(leveldb::RandomAccessFile* f) : f_(f) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    last_offset = int64_t(offset);
    return f_->Read(offset, n, result, scratch);
  }
  mutable int64_t last_offset = 0;

 private:
  std::unique_ptr<leveldb::RandomAccessFile> f_;
};

struct InputTable {
  std::string path;
  uint64_t size = 0;
  std::unique_ptr<TrackedFile> file;
  std::unique_ptr<leveldb::Table> table;
};

void OpenTable(InputTable* t, const leveldb::Options& options) {
  leveldb::Env* env = leveldb::Env::Default();
  Status s = env->GetFileSize(t->path, &t->size);
  leveldb::RandomAccessFile* raw = nullptr;
  if (s.ok()) s = env->NewRandomAccessFile(t->path, &raw);
  if (!s.ok()) Fail("BAD_JOB", t->path, 0, "cannot open input table: " + s.ToString());
  t->file.reset(new TrackedFile(raw));
  leveldb::Table* table = nullptr;
  s = leveldb::Table::Open(options, t->file.get(), t->size, &table);
  if (!s.ok()) Fail(CodeOf(s), t->path, t->file->last_offset, s.ToString());
  t->table.reset(table);
}

// One run: its tables concatenated in order, as VersionSet::MakeInputIterator concatenates the files of
// a level >= 1 (a TwoLevelIterator over the file list, one table iterator at a time). Level-0 tables are
// runs of one table here, merged as separate children, as LevelDB merges each Level-0 file.
struct Run {
  std::vector<InputTable*> tables;
  size_t current = 0;  // the table being read (named in an error)
  const leveldb::Options* options = nullptr;
  leveldb::ReadOptions read;
};

// The file list of a run: key = the table's index, value = the same index (fixed 4 bytes). A compaction
// only walks forward (SeekToFirst, Next), so seeking by key is not needed and not offered.
class RunFileIterator : public leveldb::Iterator {
 public:
  explicit RunFileIterator(size_t n) : n_(n), i_(n) {}
  bool Valid() const override { return i_ < n_; }
  void SeekToFirst() override { i_ = 0; Encode(); }
  void SeekToLast() override { i_ = n_ ? n_ - 1 : 0; Encode(); }
  void Seek(const Slice&) override { SeekToFirst(); }
  void Next() override { i_++; Encode(); }
  void Prev() override { i_ = i_ ? i_ - 1 : n_; Encode(); }
  Slice key() const override { return Slice(buf_, 4); }
  Slice value() const override { return Slice(buf_, 4); }
  Status status() const override { return Status::OK(); }

 private:
  void Encode() { leveldb::EncodeFixed32(buf_, uint32_t(i_)); }
  size_t n_, i_;
  char buf_[4] = {0, 0, 0, 0};
};

leveldb::Iterator* OpenRunTable(void* arg, const leveldb::ReadOptions& read, const Slice& index_value) {
  Run* run = static_cast<Run*>(arg);
  run->current = leveldb::DecodeFixed32(index_value.data());
  InputTable* t = run->tables[run->current];
  OpenTable(t, *run->options);
  return t->table->NewIterator(read);
}

// The merge compares internal keys; a key under 8 bytes has no tag and LevelDB's comparator would stop
// on an assertion (Debian's library keeps them) or read outside the key (a DB never holds one; a mutated
// table can). This comparator orders such keys bytewise and remembers that it saw one, and the loop
// stops on it with BAD_BLOCK.
class GuardedComparator : public leveldb::Comparator {
 public:
  explicit GuardedComparator(const leveldb::InternalKeyComparator* icmp) : icmp_(icmp) {}
  int Compare(const Slice& a, const Slice& b) const override {
    if (a.size() < 8 || b.size() < 8) {
      short_key = true;
      return a.compare(b);
    }
    return icmp_->Compare(a, b);
  }
  const char* Name() const override { return icmp_->Name(); }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
  mutable bool short_key = false;

 private:
  const leveldb::InternalKeyComparator* icmp_;
};

// ------------------------------------------------------------------------------- the compaction
// Compaction::ShouldStopBefore (db/version_set.cc): walk the grandparent files (level + 2 of the
// compaction, i.e. output level + 1) whose largest key is below the key, adding their sizes once a key
// has been seen; when the sum passes MaxGrandParentOverlapBytes (10 * max_file_size), start a new output.
struct Grandparents {
  std::vector<std::string> largest;
  std::vector<uint64_t> size;
  size_t index = 0;
  bool seen_key = false;
  int64_t overlapped_bytes = 0;
  int64_t limit = 0;

  bool ShouldStopBefore(const leveldb::InternalKeyComparator& icmp, const Slice& internal_key) {
    while (index < largest.size() && icmp.Compare(internal_key, largest[index]) > 0) {
      if (seen_key) overlapped_bytes += int64_t(size[index]);
      index++;
    }
    seen_key = true;
    if (overlapped_bytes > limit) {
      overlapped_bytes = 0;
      return true;
    }
    return false;
  }
};

// Compaction::IsBaseLevelForKey (db/version_set.cc): no file of a level deeper than the output level
// has a user-key range holding the key. One pointer per level that only moves forward, as LevelDB's
// level_ptrs_: keys arrive in order, so files wholly below the key are passed for good.
struct DeeperLevels {
  std::vector<std::vector<std::pair<std::string, std::string>>> levels;  // (smallest, largest) user keys
  std::vector<size_t> ptr;

  bool IsBaseLevelForKey(const leveldb::Comparator* ucmp, const Slice& user_key) {
    for (size_t lvl = 0; lvl < levels.size(); lvl++) {
      const auto& files = levels[lvl];
      while (ptr[lvl] < files.size()) {
        const auto& f = files[ptr[lvl]];
        if (ucmp->Compare(user_key, f.second) <= 0) {
          if (ucmp->Compare(user_key, f.first) >= 0) return false;  // in this file's range
          break;
        }
        ptr[lvl]++;
      }
    }
    return true;
  }
};

uint64_t ThreadCpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
}

struct Output {
  uint64_t number = 0, size = 0, entries = 0;
  std::string file, smallest, largest;
};

std::string TableName(uint64_t number) {
  char buf[32];
  snprintf(buf, sizeof buf, "%06llu.ldb", static_cast<unsigned long long>(number));
  return buf;
}

std::string DirOf(const std::string& path) {
  size_t p = path.rfind('/');
  return p == std::string::npos ? "." : path.substr(0, p);
}

// The outputs are written in a staging folder inside OUT_DIR and moved in place only when the whole
// job succeeded: a failed job leaves no table behind.
class Stage {
 public:
  explicit Stage(const std::string& out_dir) : out_(out_dir) {
    mkdir(out_dir.c_str(), 0755);
    dir_ = out_dir + "/.table_ref." + std::to_string(getpid());
    if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST)
      Fail("BAD_JOB", out_dir, 0, std::string("cannot create the output folder: ") + strerror(errno));
  }
  ~Stage() {
    for (const auto& f : files_) unlink((dir_ + "/" + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string Path(const std::string& name) {
    files_.push_back(name);
    return dir_ + "/" + name;
  }
  void Commit() {
    for (const auto& f : files_) {
      if (rename((dir_ + "/" + f).c_str(), (out_ + "/" + f).c_str()) != 0)
        Fail("BAD_JOB", out_ + "/" + f, 0, std::string("cannot move output in place: ") + strerror(errno));
    }
    files_.clear();
  }

 private:
  std::string out_, dir_;
  std::vector<std::string> files_;
};

struct Builder {
  std::unique_ptr<leveldb::WritableFile> file;
  std::unique_ptr<leveldb::TableBuilder> builder;
  ~Builder() {
    if (builder) builder->Abandon();  // a job that failed midway: TableBuilder insists on Finish or Abandon
  }
};

int Compact(const std::string& job_path, const std::string& out_dir) {
  const json job = ReadJson(job_path, "job");
  auto bad = [&](const std::string& m) { Fail("BAD_JOB", job_path, 0, m); };
  if (!job.is_object()) bad("not a JSON object");
  if (job.value("format", "") != "lsmc-table-job/1") bad("format must be \"lsmc-table-job/1\"");
  JobOptions jo;
  if (!job.contains("options")) bad("no options");
  ParseOptions(job["options"], job_path, &jo);
  const leveldb::InternalKeyComparator& icmp = jo.icmp;
  const leveldb::Comparator* ucmp = icmp.user_comparator();

  if (!job.contains("smallest_snapshot") || !job["smallest_snapshot"].is_number_unsigned())
    bad("smallest_snapshot must be a non-negative integer");
  const uint64_t smallest_snapshot = job["smallest_snapshot"].get<uint64_t>();
  if (!job.contains("first_file_number") || !job["first_file_number"].is_number_unsigned() ||
      job["first_file_number"].get<uint64_t>() == 0)
    bad("first_file_number must be a positive integer");
  uint64_t next_number = job["first_file_number"].get<uint64_t>();

  // Inputs: run 0 newest. Each run one child of the merging iterator.
  const std::string base = DirOf(job_path);
  if (!job.contains("runs") || !job["runs"].is_array() || job["runs"].empty()) bad("runs must be a non-empty list");
  std::vector<std::unique_ptr<InputTable>> tables;
  std::vector<std::unique_ptr<Run>> runs;
  leveldb::ReadOptions read;
  read.verify_checksums = jo.verify;  // VersionSet::MakeInputIterator: paranoid_checks
  read.fill_cache = false;
  for (const json& r : job["runs"]) {
    if (!r.is_array() || r.empty()) bad("each run must be a non-empty list of table paths");
    auto run = std::make_unique<Run>();
    run->options = &jo.options;
    run->read = read;
    for (const json& p : r) {
      if (!p.is_string()) bad("a table path is not a string");
      auto t = std::make_unique<InputTable>();
      std::string rel = p.get<std::string>();
      t->path = !rel.empty() && rel[0] == '/' ? rel : base + "/" + rel;
      struct stat st;
      if (stat(t->path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) bad("input table " + t->path + " not found");
      run->tables.push_back(t.get());
      tables.push_back(std::move(t));
    }
    runs.push_back(std::move(run));
  }

  Grandparents gp;
  gp.limit = int64_t(10 * jo.max_file_size);  // MaxGrandParentOverlapBytes = 10 * TargetFileSize
  if (job.contains("grandparents")) {
    if (!job["grandparents"].is_array()) bad("grandparents must be a list");
    for (const json& g : job["grandparents"]) {
      std::string key;
      if (!g.is_object() || !g.contains("largest") || !g["largest"].is_string() ||
          !Unhex(g["largest"].get<std::string>(), &key) || key.size() < 8)
        bad("a grandparent needs \"largest\": a hex internal key");
      if (!g.contains("size") || !g["size"].is_number_unsigned()) bad("a grandparent needs \"size\": bytes");
      gp.largest.push_back(key);
      gp.size.push_back(g["size"].get<uint64_t>());
    }
  }
  DeeperLevels deeper;
  if (job.contains("deeper_levels")) {
    if (!job["deeper_levels"].is_array()) bad("deeper_levels must be a list of levels");
    for (const json& lvl : job["deeper_levels"]) {
      if (!lvl.is_array()) bad("each deeper level must be a list of files");
      deeper.levels.emplace_back();
      for (const json& f : lvl) {
        std::string lo, hi;
        if (!f.is_object() || !f.contains("smallest") || !f.contains("largest") || !f["smallest"].is_string() ||
            !f["largest"].is_string() || !Unhex(f["smallest"].get<std::string>(), &lo) ||
            !Unhex(f["largest"].get<std::string>(), &hi))
          bad("a deeper-level file needs \"smallest\" and \"largest\": hex user keys");
        deeper.levels.back().emplace_back(lo, hi);
      }
    }
  }
  deeper.ptr.assign(deeper.levels.size(), 0);

  // VersionSet::MakeInputIterator: one iterator per run, merged by NewMergingIterator.
  GuardedComparator guard(&icmp);
  std::vector<leveldb::Iterator*> children;
  for (auto& run : runs)
    children.push_back(leveldb::NewTwoLevelIterator(new RunFileIterator(run->tables.size()), &OpenRunTable,
                                                    run.get(), read));
  std::vector<leveldb::Iterator*> raw_children = children;  // kept to name the run of a fault
  std::unique_ptr<leveldb::Iterator> input(leveldb::NewMergingIterator(&guard, children.data(), int(children.size())));

  // The table and offset of a fault: the first child whose status is bad (or whose key is current).
  auto fault_site = [&](const Slice* key) -> std::pair<std::string, int64_t> {
    for (size_t i = 0; i < runs.size(); i++) {
      bool hit = key ? (raw_children[i]->Valid() && raw_children[i]->key() == *key) : !raw_children[i]->status().ok();
      if (hit) {
        InputTable* t = runs[i]->tables[runs[i]->current];
        return {t->path, t->file ? t->file->last_offset : 0};
      }
    }
    return {job_path, 0};
  };

  Stage stage(out_dir);
  const uint64_t start_micros = leveldb::Env::Default()->NowMicros();  // as DoCompactionWork's stats.micros
  const uint64_t start_cpu = ThreadCpuMicros();
  std::vector<Output> outputs;
  Builder b;
  uint64_t entries_in = 0, dropped = 0, bytes_out = 0;
  leveldb::Env* env = leveldb::Env::Default();

  // DBImpl::FinishCompactionOutputFile: Finish the builder, record the file's size.
  auto finish_output = [&]() {
    Status s = b.builder->Finish();
    Output& out = outputs.back();
    out.size = b.builder->FileSize();
    out.entries = b.builder->NumEntries();
    if (s.ok()) s = b.file->Close();
    if (!s.ok()) Fail("BAD_JOB", out_dir + "/" + out.file, 0, "cannot write output: " + s.ToString());
    bytes_out += out.size;
    b.builder.reset();
    b.file.reset();
  };

  std::string prev_key;
  bool has_prev = false;
  input->SeekToFirst();
  // DBImpl::DoCompactionWork's state: the current user key and the sequence of its previous entry.
  std::string current_user_key;
  bool has_current_user_key = false;
  leveldb::SequenceNumber last_sequence_for_key = leveldb::kMaxSequenceNumber;
  leveldb::ParsedInternalKey ikey;
  for (; input->Valid(); input->Next()) {
    const Slice key = input->key();
    if (guard.short_key || key.size() < 8) {
      auto site = fault_site(&key);
      Fail("BAD_BLOCK", site.first, site.second, "a key shorter than 8 bytes (no internal-key tag)");
    }
    // Not a LevelDB rule (its loop trusts the order): a merged stream that does not increase means an
    // input run is out of order or repeats a key, and the engine refuses it; so does the reference.
    if (has_prev && icmp.Compare(key, prev_key) <= 0) {
      auto site = fault_site(&key);
      Fail("KEY_ORDER", site.first, site.second, "internal key " + Hex(key) + " not above the previous " + Hex(prev_key));
    }
    prev_key.assign(key.data(), key.size());
    has_prev = true;
    entries_in++;

    // Compaction::ShouldStopBefore, asked of every input key while an output is open.
    if (gp.ShouldStopBefore(icmp, key) && b.builder) finish_output();

    bool drop = false;
    if (!leveldb::ParseInternalKey(key, &ikey)) {
      // "Do not hide error keys": a key whose tag does not parse is kept and resets the user key.
      current_user_key.clear();
      has_current_user_key = false;
      last_sequence_for_key = leveldb::kMaxSequenceNumber;
    } else {
      if (!has_current_user_key || ucmp->Compare(ikey.user_key, Slice(current_user_key)) != 0) {
        // First occurrence of this user key
        current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
        has_current_user_key = true;
        last_sequence_for_key = leveldb::kMaxSequenceNumber;
      }
      if (last_sequence_for_key <= smallest_snapshot) {
        drop = true;  // rule (A): hidden by a newer entry of the same user key that every snapshot sees
      } else if (ikey.type == leveldb::kTypeDeletion && ikey.sequence <= smallest_snapshot &&
                 deeper.IsBaseLevelForKey(ucmp, ikey.user_key)) {
        drop = true;  // an obsolete deletion marker: nothing deeper to hide, no snapshot needs it
      }
      last_sequence_for_key = ikey.sequence;
    }

    if (drop) {
      dropped++;
      continue;
    }
    if (!b.builder) {  // DBImpl::OpenCompactionOutputFile
      Output out;
      out.number = next_number++;
      out.file = TableName(out.number);
      leveldb::WritableFile* wf = nullptr;
      Status s = env->NewWritableFile(stage.Path(out.file), &wf);
      if (!s.ok()) Fail("BAD_JOB", out_dir, 0, "cannot create an output table: " + s.ToString());
      b.file.reset(wf);
      b.builder.reset(new leveldb::TableBuilder(jo.options, wf));
      outputs.push_back(out);
    }
    if (b.builder->NumEntries() == 0) outputs.back().smallest = key.ToString();
    outputs.back().largest = key.ToString();
    b.builder->Add(key, input->value());
    // Close the output when it is big enough: FileSize() >= MaxOutputFileSize() (= max_file_size).
    if (b.builder->FileSize() >= jo.max_file_size) finish_output();
  }
  if (!input->status().ok()) {
    auto site = fault_site(nullptr);
    Fail(CodeOf(input->status()), site.first, site.second, input->status().ToString());
  }
  if (guard.short_key) {
    auto site = fault_site(nullptr);
    Fail("BAD_BLOCK", site.first, site.second, "a key shorter than 8 bytes (no internal-key tag)");
  }
  if (b.builder) finish_output();

  const uint64_t micros = leveldb::Env::Default()->NowMicros() - start_micros;
  const uint64_t cpu_micros = ThreadCpuMicros() - start_cpu;
  uint64_t bytes_in = 0;
  for (auto& t : tables) {
    uint64_t sz = 0;
    env->GetFileSize(t->path, &sz);
    bytes_in += sz;
  }
  json result;
  result["tables"] = json::array();
  for (const Output& o : outputs)
    result["tables"].push_back({{"file", o.file}, {"number", o.number}, {"size", o.size}, {"entries", o.entries},
                                {"smallest", Hex(o.smallest)}, {"largest", Hex(o.largest)}});
  result["entries_in"] = entries_in;
  result["entries_out"] = entries_in - dropped;
  result["dropped"] = dropped;
  result["bytes_in"] = bytes_in;
  result["bytes_out"] = bytes_out;
  {
    std::ofstream f(stage.Path("result.json"));
    f << result.dump(1) << "\n";
    if (!f) Fail("BAD_JOB", out_dir + "/result.json", 0, "cannot write");
  }
  input.reset();
  stage.Commit();
  // The time of the compaction itself (merge, drop, table writes; not the job's parsing or result.json).
  // cpu: this thread's CPU time over the same span (what one core does, whatever else the machine runs).
  printf("compaction_us=%" PRIu64 " compaction_cpu_us=%" PRIu64 " input_mb_per_s=%.1f cpu_input_mb_per_s=%.1f\n",
         micros, cpu_micros, micros ? bytes_in / double(micros) : 0.0, cpu_micros ? bytes_in / double(cpu_micros) : 0.0);
  printf("cycles=0 bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " tables_out=%zu\n", bytes_in, bytes_out, outputs.size());
  return 0;
}

// ------------------------------------------------------------------------------------ make-table
bool ReadExact(FILE* f, char* buf, size_t n) { return fread(buf, 1, n, f) == n; }

int MakeTable(const std::string& out_path, const std::string& options_json) {
  JobOptions jo;
  json o;
  try {
    o = json::parse(options_json);
  } catch (const json::exception& e) {
    Fail("BAD_JOB", out_path, 0, std::string("--options is not valid JSON: ") + e.what());
  }
  ParseOptions(o, out_path, &jo);
  std::string tmp = out_path + ".tmp." + std::to_string(getpid());
  leveldb::WritableFile* wf = nullptr;
  Status s = leveldb::Env::Default()->NewWritableFile(tmp, &wf);
  if (!s.ok()) Fail("BAD_JOB", out_path, 0, "cannot create: " + s.ToString());
  std::unique_ptr<leveldb::WritableFile> file(wf);
  struct Cleanup {
    std::string p;
    bool keep = false;
    ~Cleanup() { if (!keep) unlink(p.c_str()); }
  } cleanup{tmp};
  leveldb::TableBuilder builder(jo.options, wf);
  std::string key, value, prev;
  int64_t pos = 0;
  for (;;) {
    char len[4];
    size_t got = fread(len, 1, 4, stdin);
    if (got == 0) break;
    uint32_t klen = leveldb::DecodeFixed32(len);
    key.resize(klen);
    if (got != 4 || !ReadExact(stdin, &key[0], klen) || !ReadExact(stdin, len, 4))
      Fail("TRUNCATED", "<stdin>", pos, "entry stream ends inside an entry");
    uint32_t vlen = leveldb::DecodeFixed32(len);
    value.resize(vlen);
    if (!ReadExact(stdin, &value[0], vlen)) Fail("TRUNCATED", "<stdin>", pos, "entry stream ends inside a value");
    if (klen < 8) Fail("BAD_JOB", "<stdin>", pos, "an internal key needs at least 8 bytes (user key + tag)");
    if (builder.NumEntries() > 0 && jo.icmp.Compare(key, prev) <= 0)
      Fail("KEY_ORDER", "<stdin>", pos, "internal key " + Hex(key) + " not above the previous " + Hex(prev));
    builder.Add(key, value);
    prev = key;
    pos += 8 + klen + vlen;
  }
  s = builder.Finish();
  if (s.ok()) s = file->Close();
  if (!s.ok() || rename(tmp.c_str(), out_path.c_str()) != 0) Fail("BAD_JOB", out_path, 0, "cannot write the table");
  cleanup.keep = true;
  printf("entries=%" PRIu64 " bytes=%" PRIu64 "\n", builder.NumEntries(), builder.FileSize());
  return 0;
}

// ------------------------------------------------------------------------------------------- dump
// Blocks (handle and stored type: the trailer's byte) then every entry through LevelDB's reader.
int Dump(const std::string& path, bool verify) {
  JobOptions jo;
  ParseOptions(json::object(), path, &jo);
  jo.options.paranoid_checks = verify;
  InputTable t;
  t.path = path;
  OpenTable(&t, jo.options);
  auto fail = [&](const Status& s) { Fail(CodeOf(s), path, t.file->last_offset, s.ToString()); };
  char footer_buf[leveldb::Footer::kEncodedLength];
  Slice footer_in;
  Status s = t.file->Read(t.size - leveldb::Footer::kEncodedLength, leveldb::Footer::kEncodedLength, &footer_in, footer_buf);
  leveldb::Footer footer;
  if (s.ok()) s = footer.DecodeFrom(&footer_in);
  if (!s.ok()) fail(s);
  leveldb::ReadOptions read;
  read.verify_checksums = verify;
  auto block_type = [&](const leveldb::BlockHandle& h) -> const char* {
    char c;
    Slice r;
    Status rs = t.file->Read(h.offset() + h.size(), 1, &r, &c);
    if (!rs.ok() || r.size() != 1) return "?";
    return r[0] == leveldb::kNoCompression ? "raw" : r[0] == leveldb::kSnappyCompression ? "snappy" : "?";
  };
  printf("table size=%" PRIu64 "\n", t.size);
  auto walk = [&](const leveldb::BlockHandle& h, const char* what, bool data_handles) {
    leveldb::BlockContents contents;
    Status bs = leveldb::ReadBlock(t.file.get(), read, h, &contents);
    if (!bs.ok()) fail(bs);
    leveldb::Block block(contents);
    std::unique_ptr<leveldb::Iterator> it(block.NewIterator(leveldb::BytewiseComparator()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      leveldb::BlockHandle bh;
      Slice v = it->value();
      if (!bh.DecodeFrom(&v).ok()) fail(Status::Corruption("bad block handle"));
      if (data_handles)
        printf("block offset=%" PRIu64 " size=%" PRIu64 " type=%s\n", bh.offset(), bh.size(), block_type(bh));
      else
        printf("meta name=%s offset=%" PRIu64 " size=%" PRIu64 " type=%s\n", it->key().ToString().c_str(),
               bh.offset(), bh.size(), block_type(bh));
    }
    if (!it->status().ok()) fail(it->status());
    (void)what;
  };
  walk(footer.metaindex_handle(), "metaindex", false);
  printf("metaindex offset=%" PRIu64 " size=%" PRIu64 " type=%s\n", footer.metaindex_handle().offset(),
         footer.metaindex_handle().size(), block_type(footer.metaindex_handle()));
  printf("index offset=%" PRIu64 " size=%" PRIu64 " type=%s\n", footer.index_handle().offset(),
         footer.index_handle().size(), block_type(footer.index_handle()));
  walk(footer.index_handle(), "index", true);
  std::unique_ptr<leveldb::Iterator> it(t.table->NewIterator(read));
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++)
    printf("entry %s %zu %08lx\n", Hex(it->key()).c_str(), it->value().size(),
           crc32(0, reinterpret_cast<const Bytef*>(it->value().data()), uInt(it->value().size())));
  if (!it->status().ok()) fail(it->status());
  printf("entries=%" PRIu64 "\n", n);
  return 0;
}

// ---------------------------------------------------------------------------------------- make-db
// A DB folder stock LevelDB opens: the given tables copied in as NNNNNN.ldb and a MANIFEST (written with
// LevelDB's own VersionEdit and log::Writer) that puts them at their levels; last_sequence as given
// (with no snapshot, DoCompactionWork's smallest_snapshot is the DB's last sequence).
int MakeDb(const std::string& layout_path, const std::string& db) {
  const json layout = ReadJson(layout_path, "layout");
  auto bad = [&](const std::string& m) { Fail("BAD_JOB", layout_path, 0, m); };
  if (!layout.is_object() || !layout.contains("levels") || !layout["levels"].is_array() ||
      layout["levels"].size() > leveldb::config::kNumLevels)
    bad("levels must be a list of at most 7 lists of table paths");
  if (!layout.contains("last_sequence") || !layout["last_sequence"].is_number_unsigned())
    bad("last_sequence must be a non-negative integer");
  leveldb::Env* env = leveldb::Env::Default();
  env->CreateDir(db);
  JobOptions jo;
  ParseOptions(json::object(), layout_path, &jo);
  leveldb::VersionEdit edit;
  edit.SetComparatorName(leveldb::BytewiseComparator()->Name());
  edit.SetLogNumber(0);
  uint64_t number = 10;
  const std::string base = DirOf(layout_path);
  for (size_t level = 0; level < layout["levels"].size(); level++) {
    for (const json& p : layout["levels"][level]) {
      if (!p.is_string()) bad("a table path is not a string");
      InputTable t;
      std::string rel = p.get<std::string>();
      t.path = !rel.empty() && rel[0] == '/' ? rel : base + "/" + rel;
      OpenTable(&t, jo.options);
      std::unique_ptr<leveldb::Iterator> it(t.table->NewIterator(leveldb::ReadOptions()));
      leveldb::InternalKey smallest, largest;
      it->SeekToFirst();
      if (!it->Valid()) bad("table " + t.path + " is empty");
      smallest.DecodeFrom(it->key());
      it->SeekToLast();
      largest.DecodeFrom(it->key());
      std::string data;
      Status s = leveldb::ReadFileToString(env, t.path, &data);
      if (s.ok()) s = leveldb::WriteStringToFile(env, data, leveldb::TableFileName(db, number));
      if (!s.ok()) Fail("BAD_JOB", t.path, 0, "cannot copy: " + s.ToString());
      edit.AddFile(int(level), number, data.size(), smallest, largest);
      number++;
    }
  }
  const uint64_t manifest = number++;
  edit.SetNextFile(number);
  edit.SetLastSequence(layout["last_sequence"].get<uint64_t>());
  leveldb::WritableFile* wf = nullptr;
  Status s = env->NewWritableFile(leveldb::DescriptorFileName(db, manifest), &wf);
  std::unique_ptr<leveldb::WritableFile> file(wf);
  if (s.ok()) {
    leveldb::log::Writer log(wf);
    std::string record;
    edit.EncodeTo(&record);
    s = log.AddRecord(record);
  }
  if (s.ok()) s = file->Close();
  if (s.ok()) s = leveldb::SetCurrentFile(env, db, manifest);
  if (!s.ok()) Fail("BAD_JOB", db, 0, "cannot write the MANIFEST: " + s.ToString());
  printf("db=%s tables=%" PRIu64 "\n", db.c_str(), number - 11);
  return 0;
}

int Usage() {
  fprintf(stderr,
          "usage: table_ref make-table OUT.ldb --options JSON < entries\n"
          "       table_ref compact JOB.json OUT_DIR\n"
          "       table_ref dump [--verify] TABLE.ldb\n"
          "       table_ref make-db LAYOUT.json DB_DIR\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() == 4 && a[0] == "make-table" && a[2] == "--options") return MakeTable(a[1], a[3]);
    if (a.size() == 3 && a[0] == "compact") return Compact(a[1], a[2]);
    if (a.size() == 2 && a[0] == "dump") return Dump(a[1], false);
    if (a.size() == 3 && a[0] == "dump" && a[1] == "--verify") return Dump(a[2], true);
    if (a.size() == 3 && a[0] == "make-db") return MakeDb(a[1], a[2]);
    return Usage();
  } catch (const JobError& e) {
    fflush(stdout);
    fprintf(stderr, "error=%s table=%s offset=%lld %s\n", e.code.c_str(), e.table.c_str(),
            static_cast<long long>(e.offset), e.message.c_str());
    return 1;
  } catch (const std::exception& e) {
    fprintf(stderr, "error=BAD_JOB table=- offset=0 %s\n", e.what());
    return 1;
  }
}
