// ldb_stock: stock LevelDB (Debian's libleveldb, public API only) compacting a DB whose removed files are
// kept, so the tests can hand every compaction's inputs to the reference compactor and compare its
// outputs with LevelDB's own (hw/ip/table_engine/doc/table-engine.md, "Checked against stock LevelDB").
//
//   ldb_stock fill DB OPTIONS_JSON OPS SEED KEY_BYTES VALUE_BYTES DELETE_EVERY
//       random puts of db_bench-like values (compressible to 50 %) over OPS/2 distinct keys (so about
//       half are overwrites); every DELETE_EVERY-th operation a delete (0: none); then CompactRange.
//   ldb_stock compact DB OPTIONS_JSON
//       open an existing DB (e.g. made by `table_ref make-db`) and CompactRange over everything.
//   ldb_stock dump TABLE
//       every entry of one table through stock LevelDB's Table reader (checksums verified), in the
//       form of `table_ref dump`'s entry lines: `entry <hex internal key> <value length> <zlib crc32>`.
//
// Every file LevelDB removes is moved to DB/kept/ instead (an Env wrapper), so the compactions' input
// tables and outputs that later compactions consumed stay readable; the MANIFEST records each
// compaction's inputs and outputs.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/write_batch.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

namespace {

class KeepRemovedEnv : public leveldb::EnvWrapper {
 public:
  KeepRemovedEnv(const std::string& db) : leveldb::EnvWrapper(leveldb::Env::Default()), kept_(db + "/kept") {
    target()->CreateDir(kept_);
  }
  leveldb::Status RemoveFile(const std::string& f) override {
    size_t slash = f.rfind('/');
    return target()->RenameFile(f, kept_ + "/" + (slash == std::string::npos ? f : f.substr(slash + 1)));
  }

 private:
  std::string kept_;
};

[[noreturn]] void Die(const std::string& m) {
  fprintf(stderr, "ldb_stock: %s\n", m.c_str());
  exit(1);
}

struct Db {
  std::unique_ptr<KeepRemovedEnv> env;
  std::unique_ptr<const leveldb::FilterPolicy> bloom;
  std::unique_ptr<leveldb::DB> db;
};

void Open(const std::string& path, const std::string& options_json, bool create, Db* d) {
  nlohmann::json o;
  try {
    o = nlohmann::json::parse(options_json);
  } catch (const std::exception& e) {
    Die(std::string("OPTIONS_JSON: ") + e.what());
  }
  if (create) leveldb::Env::Default()->CreateDir(path);
  d->env.reset(new KeepRemovedEnv(path));
  leveldb::Options opt;
  opt.env = d->env.get();
  opt.create_if_missing = create;
  opt.block_size = o.value("block_size", 4096);
  opt.block_restart_interval = o.value("block_restart_interval", 16);
  opt.max_file_size = o.value("max_file_size", 2 << 20);
  opt.write_buffer_size = o.value("write_buffer_size", 4 << 20);
  opt.compression = o.value("compression", "snappy") == "none" ? leveldb::kNoCompression : leveldb::kSnappyCompression;
  opt.paranoid_checks = o.value("verify_checksums", false);
  int bits = o.value("bloom_bits_per_key", 0);
  if (bits) {
    d->bloom.reset(leveldb::NewBloomFilterPolicy(bits));
    opt.filter_policy = d->bloom.get();
  }
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(opt, path, &db);
  if (!s.ok()) Die("open " + path + ": " + s.ToString());
  d->db.reset(db);
}

uint64_t Micros(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
}

// CompactRange's wall time and the process's CPU time over it (LevelDB compacts on its background
// thread while this one waits): `compact_us=W compact_cpu_us=C` before leveldb.stats.
void CompactAll(Db* d) {
  const uint64_t w0 = Micros(CLOCK_MONOTONIC), c0 = Micros(CLOCK_PROCESS_CPUTIME_ID);
  d->db->CompactRange(nullptr, nullptr);
  printf("compact_us=%llu compact_cpu_us=%llu\n", static_cast<unsigned long long>(Micros(CLOCK_MONOTONIC) - w0),
         static_cast<unsigned long long>(Micros(CLOCK_PROCESS_CPUTIME_ID) - c0));
  std::string stats;
  d->db->GetProperty("leveldb.stats", &stats);
  printf("%s", stats.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "fill" && argc == 9) {
    Db d;
    Open(argv[2], argv[3], true, &d);
    const long ops = atol(argv[4]), key_bytes = atol(argv[6]), value_bytes = atol(argv[7]);
    const long delete_every = atol(argv[8]);
    std::mt19937_64 rng(strtoull(argv[5], nullptr, 10));
    // db_bench's values: 100-byte pieces, each a random 50-character printable string twice over.
    std::string pool;
    while (pool.size() < (1u << 20)) {
      std::string half;
      for (int i = 0; i < 50; i++) half.push_back(char(' ' + rng() % 95));
      pool += half + half;
    }
    size_t pos = 0;
    const long distinct = ops / 2 > 0 ? ops / 2 : 1;
    char fmt[32];
    snprintf(fmt, sizeof fmt, "%%0%ldld", key_bytes);
    for (long i = 0; i < ops; i++) {
      char key[256];
      snprintf(key, sizeof key, fmt, long(rng() % distinct));
      std::string k(key, std::min<size_t>(strlen(key), size_t(key_bytes)));
      leveldb::Status s;
      if (delete_every > 0 && i % delete_every == delete_every - 1) {
        s = d.db->Delete(leveldb::WriteOptions(), k);
      } else {
        if (pos + value_bytes > pool.size()) pos = 0;
        s = d.db->Put(leveldb::WriteOptions(), k, leveldb::Slice(pool.data() + pos, value_bytes));
        pos += value_bytes;
      }
      if (!s.ok()) Die("write: " + s.ToString());
    }
    CompactAll(&d);
    return 0;
  }
  if (cmd == "dump" && argc == 3) {
    leveldb::Env* env = leveldb::Env::Default();
    uint64_t size = 0;
    leveldb::RandomAccessFile* file = nullptr;
    leveldb::Status s = env->GetFileSize(argv[2], &size);
    if (s.ok()) s = env->NewRandomAccessFile(argv[2], &file);
    std::unique_ptr<leveldb::RandomAccessFile> owner(file);
    leveldb::Table* table = nullptr;
    leveldb::Options opt;
    opt.paranoid_checks = true;
    if (s.ok()) s = leveldb::Table::Open(opt, file, size, &table);
    if (!s.ok()) Die(std::string(argv[2]) + ": " + s.ToString());
    std::unique_ptr<leveldb::Table> t(table);
    leveldb::ReadOptions read;
    read.verify_checksums = true;
    std::unique_ptr<leveldb::Iterator> it(t->NewIterator(read));
    static const char* hex = "0123456789abcdef";
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string k;
      for (unsigned char c : it->key().ToString()) k += std::string{hex[c >> 4], hex[c & 15]};
      printf("entry %s %zu %08lx\n", k.c_str(), it->value().size(),
             crc32(0, reinterpret_cast<const Bytef*>(it->value().data()), uInt(it->value().size())));
    }
    if (!it->status().ok()) Die(std::string(argv[2]) + ": " + it->status().ToString());
    return 0;
  }
  if (cmd == "compact" && argc == 4) {
    Db d;
    Open(argv[2], argv[3], false, &d);
    CompactAll(&d);
    return 0;
  }
  fprintf(stderr,
          "usage: ldb_stock fill DB OPTIONS_JSON OPS SEED KEY_BYTES VALUE_BYTES DELETE_EVERY\n"
          "       ldb_stock compact DB OPTIONS_JSON\n"
          "       ldb_stock dump TABLE\n");
  return 2;
}
