// Test driver of the table engine's model against independent references: Debian's libleveldb (its
// TableBuilder writes tables, its Table reader reads the model's) and Debian's libsnappy. Built and
// run by tests/test_table_model.py. Entry streams are text lines "KEYHEX VALUEHEX" ("STOP" starts a
// new output table in leveldb-split).
#include <leveldb/comparator.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>
#include <snappy.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../coding.h"
#include "../crc32c.h"
#include "../error.h"
#include "../format.h"
#include "../block_reader.h"
#include "../snappy_codec.h"
#include "../table_writer.h"

namespace te = table_engine;

namespace {

// LevelDB's internal-key order and index-key shortening, over Debian's bytewise comparator (the
// wrapper LevelDB's DB puts around a user comparator; its class is not exported).
class InternalComparator : public leveldb::Comparator {
 public:
  const char* Name() const override { return "leveldb.InternalKeyComparator"; }
  int Compare(const leveldb::Slice& a, const leveldb::Slice& b) const override {
    int r = user()->Compare(User(a), User(b));
    if (r != 0) return r;
    uint64_t ta = Tag(a), tb = Tag(b);
    return ta > tb ? -1 : ta < tb ? 1 : 0;
  }
  void FindShortestSeparator(std::string* start, const leveldb::Slice& limit) const override {
    leveldb::Slice us = User(*start);
    std::string tmp(us.data(), us.size());
    user()->FindShortestSeparator(&tmp, User(limit));
    Finish(us, &tmp, start);
  }
  void FindShortSuccessor(std::string* key) const override {
    leveldb::Slice us = User(*key);
    std::string tmp(us.data(), us.size());
    user()->FindShortSuccessor(&tmp);
    Finish(us, &tmp, key);
  }

 private:
  static const leveldb::Comparator* user() { return leveldb::BytewiseComparator(); }
  static leveldb::Slice User(const leveldb::Slice& k) { return leveldb::Slice(k.data(), k.size() - 8); }
  static uint64_t Tag(const leveldb::Slice& k) {
    return te::LoadFixed64(reinterpret_cast<const uint8_t*>(k.data()) + k.size() - 8);
  }
  static void Finish(const leveldb::Slice& us, std::string* tmp, std::string* key) {
    if (tmp->size() < us.size() && user()->Compare(us, *tmp) < 0) {
      te::AppendFixed64(tmp, ((uint64_t(1) << 56) - 1) << 8 | 1);
      key->swap(*tmp);
    }
  }
};

// The filter policy LevelDB's DB wraps around the user's: hashes user keys.
class InternalFilter : public leveldb::FilterPolicy {
 public:
  explicit InternalFilter(int bits) : p_(leveldb::NewBloomFilterPolicy(bits)) {}
  const char* Name() const override { return p_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    std::vector<leveldb::Slice> u;
    for (int i = 0; i < n; i++) u.emplace_back(keys[i].data(), keys[i].size() - 8);
    p_->CreateFilter(u.data(), n, dst);
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& f) const override {
    return p_->KeyMayMatch(leveldb::Slice(key.data(), key.size() - 8), f);
  }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> p_;
};

std::string Unhex(const std::string& h) {
  std::string o;
  for (size_t i = 0; i + 1 < h.size(); i += 2) o.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
  return o;
}

std::string Hex(const leveldb::Slice& s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = s[i];
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

std::string ReadAll(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Opts {
  int block_size = 4096, restart = 16, bloom = 0;
  bool snappy = false;
  uint64_t max_file_size = 0;
};

Opts ParseOpts(int argc, char** argv, int from) {
  Opts o;
  for (int i = from; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    long v = std::atol(argv[i + 1]);
    if (k == "--block-size") o.block_size = int(v);
    else if (k == "--restart") o.restart = int(v);
    else if (k == "--bloom") o.bloom = int(v);
    else if (k == "--snappy") o.snappy = v != 0;
    else if (k == "--max-file-size") o.max_file_size = uint64_t(v);
  }
  return o;
}

// leveldb-split OUTPREFIX [opts] < entries: LevelDB's TableBuilder writes the entries, a new table at
// each STOP line and after an entry that brings FileSize() to max_file_size (DoCompactionWork's rule).
int LevelDbSplit(const std::string& prefix, const Opts& o) {
  InternalComparator cmp;
  std::unique_ptr<InternalFilter> filter(o.bloom ? new InternalFilter(o.bloom) : nullptr);
  leveldb::Options opt;
  opt.comparator = &cmp;
  opt.block_size = size_t(o.block_size);
  opt.block_restart_interval = o.restart;
  opt.compression = o.snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  opt.filter_policy = filter.get();
  leveldb::Env* env = leveldb::Env::Default();
  std::unique_ptr<leveldb::WritableFile> file;
  std::unique_ptr<leveldb::TableBuilder> b;
  int n = 0;
  auto close = [&]() {
    if (!b) return;
    leveldb::Status s = b->Finish();
    if (s.ok()) s = file->Close();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
    b.reset();
    file.reset();
  };
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "STOP") {
      close();
      continue;
    }
    size_t sp = line.find(' ');
    std::string k = Unhex(line.substr(0, sp)), v = Unhex(line.substr(sp + 1));
    if (!b) {
      leveldb::WritableFile* f;
      char num[16];
      std::snprintf(num, sizeof num, "%06d.ldb", n++);
      if (!env->NewWritableFile(prefix + num, &f).ok()) return 1;
      file.reset(f);
      b.reset(new leveldb::TableBuilder(opt, file.get()));
    }
    b->Add(k, v);
    if (o.max_file_size && b->FileSize() >= o.max_file_size) close();
  }
  close();
  std::printf("tables=%d\n", n);
  return 0;
}

// model-write OUT [opts] < entries: the model's TableWriter writes one table.
int ModelWrite(const char* out, const Opts& o) {
  te::WriterOptions w;
  w.block_size = uint64_t(o.block_size);
  w.restart_interval = o.restart;
  w.snappy = o.snappy;
  w.bloom_bits_per_key = o.bloom;
  w.buffer_bytes = uint64_t(1) << 40;
  te::WriteStats st;
  te::TableWriter tw(w, out, &st);
  std::string line;
  while (std::getline(std::cin, line)) {
    size_t sp = line.find(' ');
    tw.Add(Unhex(line.substr(0, sp)), Unhex(line.substr(sp + 1)));
  }
  std::string bytes = tw.Finish();
  std::ofstream(out, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return 0;
}

// leveldb-read TABLE [--bloom N]: Debian's Table reader with checksums verified; entries to stdout.
int LevelDbRead(const char* path, const Opts& o) {
  InternalComparator cmp;
  std::unique_ptr<InternalFilter> filter(o.bloom ? new InternalFilter(o.bloom) : nullptr);
  leveldb::Options opt;
  opt.comparator = &cmp;
  opt.filter_policy = filter.get();
  opt.paranoid_checks = true;
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size;
  leveldb::RandomAccessFile* raw;
  if (!env->GetFileSize(path, &size).ok() || !env->NewRandomAccessFile(path, &raw).ok()) return 1;
  std::unique_ptr<leveldb::RandomAccessFile> file(raw);
  leveldb::Table* t;
  leveldb::Status s = leveldb::Table::Open(opt, file.get(), size, &t);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<leveldb::Table> table(t);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) std::printf("%s %s\n", Hex(it->key()).c_str(), Hex(it->value()).c_str());
  if (!it->status().ok()) {
    std::fprintf(stderr, "%s\n", it->status().ToString().c_str());
    return 1;
  }
  return 0;
}

// crc FILE: the model's CRC32C of the file's bytes, in hex: Extend (SSE4.2 where the CPU has it), then the
// tables' ExtendPortable, each over the whole file and in two pieces (a cut that is not a multiple of 8).
int Crc(const char* path) {
  std::string d = ReadAll(path);
  const auto* p = reinterpret_cast<const uint8_t*>(d.data());
  const size_t cut = d.size() / 3;
  std::printf("%08x %08x %08x %08x\n", te::crc32c::Extend(0, p, d.size()), te::crc32c::ExtendPortable(0, p, d.size()),
              te::crc32c::Extend(te::crc32c::Extend(0, p, cut), p + cut, d.size() - cut),
              te::crc32c::ExtendPortable(te::crc32c::ExtendPortable(0, p, cut), p + cut, d.size() - cut));
  return 0;
}

// snappy-check FILE CHUNK: each CHUNK-byte piece compressed by the model and decoded by libsnappy,
// compressed by libsnappy and decoded by the model; sizes summed.
int SnappyCheck(const char* path, size_t chunk) {
  std::string d = ReadAll(path);
  uint64_t model = 0, lib = 0, chunks = 0, identical = 0;
  for (size_t off = 0; off < d.size() || off == 0; off += chunk) {
    std::string piece = d.substr(off, chunk);
    std::string mc, back, lc, mback;
    te::snappy_codec::Compress(reinterpret_cast<const uint8_t*>(piece.data()), piece.size(), &mc);
    if (!snappy::IsValidCompressedBuffer(mc.data(), mc.size()) || !snappy::Uncompress(mc.data(), mc.size(), &back) ||
        back != piece) {
      std::printf("FAIL libsnappy cannot decode the model's stream at %zu\n", off);
      return 1;
    }
    snappy::Compress(piece.data(), piece.size(), &lc);
    size_t at;
    const char* why;
    if (!te::snappy_codec::Decompress(reinterpret_cast<const uint8_t*>(lc.data()), lc.size(), size_t(1) << 30, &mback,
                                      &at, &why) || mback != piece) {
      std::printf("FAIL the model cannot decode libsnappy's stream at %zu\n", off);
      return 1;
    }
    model += mc.size();
    lib += lc.size();
    chunks++;
    identical += mc == lc;
    if (d.empty()) break;
  }
  std::printf("raw=%zu model=%llu libsnappy=%llu chunks=%llu identical=%llu\n", d.size(), (unsigned long long)model,
              (unsigned long long)lib, (unsigned long long)chunks, (unsigned long long)identical);
  return 0;
}

// snappy-compress IN OUT model|lib: IN's bytes as one Snappy stream by the model or by libsnappy.
int SnappyCompress(const char* in, const char* out, const std::string& which) {
  std::string d = ReadAll(in), z;
  if (which == "lib")
    snappy::Compress(d.data(), d.size(), &z);
  else
    te::snappy_codec::Compress(reinterpret_cast<const uint8_t*>(d.data()), d.size(), &z);
  std::ofstream(out, std::ios::binary).write(z.data(), std::streamsize(z.size()));
  return 0;
}

// snappy-decode FILE: the model's and libsnappy's verdicts on arbitrary bytes must agree.
int SnappyDecode(const char* path) {
  std::string d = ReadAll(path);
  std::string mine, lib;
  size_t at;
  const char* why;
  bool ok = te::snappy_codec::Decompress(reinterpret_cast<const uint8_t*>(d.data()), d.size(), size_t(1) << 24, &mine,
                                         &at, &why);
  size_t len = 0;
  bool lib_ok = snappy::GetUncompressedLength(d.data(), d.size(), &len) && len <= (size_t(1) << 24) &&
                snappy::Uncompress(d.data(), d.size(), &lib);
  std::printf("model=%d libsnappy=%d same=%d\n", ok, lib_ok, ok && lib_ok ? int(mine == lib) : 1);
  return 0;
}

// snappy-blocks TABLE: the data blocks of an uncompressed table, each compressed by both.
int SnappyBlocks(const char* path) {
  std::string d = ReadAll(path);
  te::TableImage t{path, d};
  te::BlockHandle ih = te::ReadFooter(t);
  std::string scratch, s2;
  std::string_view idx = te::ReadBlock(t, ih, true, &scratch, nullptr);
  te::BlockReader r;
  std::string name = path;
  r.Start(idx, &name, ih.offset, false, 1 << 20);
  uint64_t raw = 0, model = 0, lib = 0, blocks = 0, identical = 0;
  while (r.Next()) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(r.value().data());
    te::BlockHandle h;
    p = te::ParseVarint64(p, p + r.value().size(), &h.offset);
    te::ParseVarint64(p, reinterpret_cast<const uint8_t*>(r.value().data()) + r.value().size(), &h.size);
    std::string_view b = te::ReadBlock(t, h, true, &s2, nullptr);
    std::string mc, lc;
    te::snappy_codec::Compress(reinterpret_cast<const uint8_t*>(b.data()), b.size(), &mc);
    snappy::Compress(b.data(), b.size(), &lc);
    raw += b.size();
    identical += mc == lc;
    model += mc.size();
    lib += lc.size();
    blocks++;
  }
  std::printf("blocks=%llu raw=%llu model=%llu libsnappy=%llu identical=%llu\n", (unsigned long long)blocks,
              (unsigned long long)raw, (unsigned long long)model, (unsigned long long)lib, (unsigned long long)identical);
  return 0;
}

// blocks TABLE: "offset size type" of the index block and of every data block of a valid table.
int Blocks(const char* path) {
  std::string d = ReadAll(path);
  te::TableImage t{path, d};
  te::BlockHandle ih = te::ReadFooter(t);
  std::string scratch;
  std::string_view idx = te::ReadBlock(t, ih, true, &scratch, nullptr);
  std::printf("%llu %llu %d\n", (unsigned long long)ih.offset, (unsigned long long)ih.size, int(d[ih.offset + ih.size]));
  te::BlockReader r;
  std::string name = path;
  r.Start(idx, &name, ih.offset, false, 1 << 20);
  while (r.Next()) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(r.value().data());
    const uint8_t* lim = p + r.value().size();
    te::BlockHandle h;
    p = te::ParseVarint64(p, lim, &h.offset);
    te::ParseVarint64(p, lim, &h.size);
    std::printf("%llu %llu %d\n", (unsigned long long)h.offset, (unsigned long long)h.size, int(d[h.offset + h.size]));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: model_check leveldb-split|model-write|leveldb-read|crc|snappy-check|snappy-compress|snappy-decode|snappy-blocks|blocks ...\n");
    return 2;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "leveldb-split") return LevelDbSplit(argv[2], ParseOpts(argc, argv, 3));
    if (cmd == "model-write") return ModelWrite(argv[2], ParseOpts(argc, argv, 3));
    if (cmd == "leveldb-read") return LevelDbRead(argv[2], ParseOpts(argc, argv, 3));
    if (cmd == "crc") return Crc(argv[2]);
    if (cmd == "snappy-check") return SnappyCheck(argv[2], argc > 3 ? size_t(std::atol(argv[3])) : 4096);
    if (cmd == "snappy-compress" && argc > 4) return SnappyCompress(argv[2], argv[3], argv[4]);
    if (cmd == "snappy-decode") return SnappyDecode(argv[2]);
    if (cmd == "snappy-blocks") return SnappyBlocks(argv[2]);
    if (cmd == "blocks") return Blocks(argv[2]);
  } catch (const te::EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
    return 1;
  }
  return 2;
}
