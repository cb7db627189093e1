// Verilator harness of the table engine's table front end (top `TableReader`, hw/ip/table_engine/rtl), differential
// against the C++ model's TableReader (model/table_reader.cc, byte-exact with LevelDB 1.23): tables written by
// LevelDB's own TableBuilder (Debian's libleveldb) and by the model's TableWriter, raw or with Snappy blocks,
// optionally mutated (bits flipped anywhere, in the footer or the index block, cut short, the index handle or a
// data block's first restart point rewritten, a Snappy block's bits, raw length or last literal changed with its
// CRC made right), sit in a simulated AXI4 memory (sim/common/axi_mem.h, random stalls on its channels)
// at an unaligned address; the RTL reads them through its AXI port. Its entries, the number it says the model
// delivers, and its error code and offset must be the model's.
//
// Prints one summary line (`tables=... mismatches=... cycles=... bytes=...`); exit status 0 all agree, 1 a
// mismatch, a hang (no status within the cycle bound) or a protocol violation, 2 bad usage.
#include "VTableReader.h"
#include "verilated.h"

#include <leveldb/options.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "axi_mem.h"
#include "coding.h"
#include "crc32c.h"
#include "error.h"
#include "format.h"
#include "leveldb_tables.h"
#include "limits.h"
#include "random_entries.h"
#include "table_reader.h"
#include "table_writer.h"
#include "entry_stream.h"
#include "tb.h"

namespace te = table_engine;

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
#ifndef MAX_BLOCKS
#define MAX_BLOCKS 1024
#endif
#ifndef SNAPPY_BYTES
#define SNAPPY_BYTES 65536
#endif
constexpr int W = BEAT_BYTES;
constexpr int kDataWords = W / 4;
constexpr int kSinkWords = kDataWords + 4;  // data, kind, count, keyBytes, valueBytes
constexpr uint64_t kMemBase = 0x10000000, kMemBytes = 64ull << 20;

inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
inline uint32_t* words(IData& s) { return &s; }
inline uint32_t* words(QData& s) { return reinterpret_cast<uint32_t*>(&s); }
template <std::size_t N>
inline uint32_t* words(VlWide<N>& s) { return s.data(); }

using te_dv::Below;
using te_dv::RandomBytes;

struct Entry {
  std::string key, value;
  bool operator==(const Entry& o) const { return key == o.key && value == o.value; }
};

struct Outcome {
  bool error = false;
  int code = 0;
  uint64_t offset = 0;
  std::vector<Entry> entries;  // all, or those the model delivered before its error
  bool snappy = false;         // the model decompressed a block or failed in one
  uint64_t decompressed = 0;   // bytes the model's Snappy blocks decompressed to
  uint64_t blocks = 0, snappyBlocks = 0;  // blocks the model read (index included), Snappy ones among them
};

Outcome ModelRead(const std::string& bytes, bool verify) {
  Outcome o;
  te::TableImage img{"table", bytes};
  te::ReadStats stats;
  try {
    // The unit's block buffer holds SNAPPY_BYTES of a decompressed block, the model's kMaxBlockBytes: the
    // model with the unit's limit (a larger raw length: BAD_SNAPPY at the block, as the model's own).
    te::TableReader r(&img, verify, &stats, 0, UINT64_MAX, SNAPPY_BYTES);
    while (r.Next()) o.entries.push_back({std::string(r.key()), std::string(r.value())});
  } catch (const te::EngineError& e) {
    o.error = true;
    o.code = static_cast<int>(e.code);
    o.offset = e.offset;
  }
  o.decompressed = stats.blocks.snappy_out;
  o.blocks = stats.blocks.blocks;
  o.snappyBlocks = stats.blocks.snappy_blocks;
  o.snappy = stats.blocks.snappy_blocks > 0 || (o.error && o.code == static_cast<int>(te::ErrorCode::kBadSnappy));
  return o;
}

// The unit's handle RAM holds MAX_BLOCKS data blocks (lsmc.build.table_engine_reader); the model has no
// such limit. A clean table with more blocks: the unit reads the first MAX_BLOCKS and stops with BAD_JOB at
// the next index entry; that is the verdict expected of it.
void ExpectHandleRamFull(const std::string& bytes, Outcome* o) {
  te::TableImage img{"table", bytes};
  try {
    te::BlockHandle ih = te::ReadFooter(img);
    std::string scratch;
    std::string_view index = te::ReadBlock(img, ih, false, &scratch, nullptr);
    te::BlockReader ir;
    ir.Start(index, &img.name, ih.offset, false, te::kMaxInternalKeyBytes);
    uint64_t blocks = 0, entries = 0;
    while (ir.Next()) {
      if (blocks == MAX_BLOCKS) {
        if (o->error) return;  // a table with more blocks and an error: not a case this check decides
        o->error = true;
        o->code = static_cast<int>(te::ErrorCode::kBadJob);
        o->offset = ir.entry_offset();
        o->entries.resize(entries);
        return;
      }
      const uint8_t* p = reinterpret_cast<const uint8_t*>(ir.value().data());
      te::BlockHandle h;
      p = te::ParseVarint64(p, p + ir.value().size(), &h.offset);
      if (p) p = te::ParseVarint64(p, reinterpret_cast<const uint8_t*>(ir.value().data()) + ir.value().size(), &h.size);
      if (!p) return;
      std::string ds;
      te::BlockReader dr;
      dr.Start(te::ReadBlock(img, h, false, &ds, nullptr), &img.name, h.offset, false, te::kMaxInternalKeyBytes);
      while (dr.Next()) entries++;
      blocks++;
    }
  } catch (const te::EngineError&) {
  }
}

struct Options {
  uint64_t seed = 1, tables = 20, maxValue = 2048, maxEntries = 300, latency = 20, dbbench = 0, blockSize = 4096;
  double pin = 0, pout = 0, mutate = 0, verify = 1, model = 0.5, slverr = 0, snappy = 0;
  bool quiet = false, tamper = false;
  std::string cases, dump;
};

struct Case {
  std::string bytes;
  bool verify = true;
};

// Records: u32 length, u8 verify, then the table's bytes.
std::vector<Case> ReadCases(const std::string& path) {
  std::vector<uint8_t> f = simc::readFile(path, "--cases");
  std::vector<Case> out;
  size_t p = 0;
  while (p < f.size()) {
    if (f.size() - p < 5) simc::die("--cases %s: record header cut at byte %zu", path.c_str(), p);
    uint32_t len = simc::le32(&f[p]);
    Case c;
    c.verify = f[p + 4] != 0;
    p += 5;
    if (f.size() - p < len) simc::die("--cases %s: record of %u bytes at byte %zu runs past the file", path.c_str(), len, p);
    c.bytes.assign(reinterpret_cast<const char*>(&f[p]), len);
    p += len;
    out.push_back(std::move(c));
  }
  return out;
}

class Bench {
 public:
  explicit Bench(const Options& o)
      : rng_(o.seed), mem_(kMemBase, kMemBytes), sink_(&rng_, kSinkWords), statusPause_(&rng_) {
    sink_.pause.set(o.pout);
    statusPause_.set(o.pout);
    simc::AxiSlave<CData>::Pins p{};
    p.awValid = &dummy_, p.awReady = &dummy_, p.awId = &dummy_, p.awLen = &dummy_, p.awSize = &dummy_;
    p.awBurst = &dummy_, p.awAddr = &dummyAddr_, p.wValid = &dummy_, p.wReady = &dummy_, p.wLast = &dummy_;
    p.wData = dummyData_, p.wStrb = &dummy_, p.bValid = &dummy_, p.bReady = &dummy_, p.bId = &dummy_;
    p.bResp = &dummy_;
    p.arValid = &top_.io_axi_ar_valid, p.arReady = &top_.io_axi_ar_ready, p.arId = &top_.io_axi_ar_payload_id;
    p.arLen = &top_.io_axi_ar_payload_len, p.arSize = &top_.io_axi_ar_payload_size;
    p.arBurst = &top_.io_axi_ar_payload_burst, p.arAddr = &top_.io_axi_ar_payload_addr;
    p.rValid = &top_.io_axi_r_valid, p.rReady = &top_.io_axi_r_ready, p.rId = &top_.io_axi_r_payload_id;
    p.rResp = &top_.io_axi_r_payload_resp, p.rLast = &top_.io_axi_r_payload_last;
    p.rData = words(top_.io_axi_r_payload_data);
    simc::AxiConfig cfg;
    cfg.readLatency = unsigned(o.latency);
    cfg.stall = o.pin;
    cfg.seed = o.seed * 7 + 1;
    cfg.onlySize = W, cfg.onlyIncr = true, cfg.maxBeats = 16, cfg.aligned = true;
    axi_ = std::make_unique<simc::AxiSlave<CData>>("table_reader", W, &mem_, p, cfg);
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // Reads the table at `addr` through the RTL; false on a hang (no status within `bound` cycles).
  bool Run(const std::string& bytes, uint64_t addr, bool verify, Outcome* rtl, uint64_t* statusEntries,
           uint64_t* cycles, uint64_t bound) {
    std::copy(bytes.begin(), bytes.end(), mem_.at(addr));
    sink_.clear();
    bool cmdOn = true;
    for (uint64_t t = 0; t < bound; t++) {
      top_.io_cmd_valid = cmdOn;
      top_.io_cmd_payload_base = uint32_t(addr);
      top_.io_cmd_payload_size = uint32_t(bytes.size());
      top_.io_cmd_payload_verify = verify;
      top_.io_entries_ready = sink_.drive();
      top_.io_status_ready = !statusPause_();
      axi_->drive(cycle_);
      top_.eval();
      axi_->edge(cycle_);
      if (cmdOn && top_.io_cmd_ready) cmdOn = false;
      uint32_t w[kSinkWords];
      getWords(top_.io_entries_payload_fragment_data, w);
      w[kDataWords] = top_.io_entries_payload_fragment_kind;
      w[kDataWords + 1] = top_.io_entries_payload_fragment_count;
      w[kDataWords + 2] = top_.io_entries_payload_fragment_keyBytes;
      w[kDataWords + 3] = top_.io_entries_payload_fragment_valueBytes;
      sink_.sample(top_.io_entries_valid, w, top_.io_entries_payload_last);
      if (top_.io_status_valid && top_.io_status_ready) {
        rtl->error = top_.io_status_payload_error;
        rtl->code = top_.io_status_payload_code;
        rtl->offset = top_.io_status_payload_offset;
        *statusEntries = top_.io_status_payload_entries;
        Tick();
        *cycles = t + 1;
        return Parse(rtl);
      }
      Tick();
    }
    *cycles = bound;
    return false;
  }

  uint64_t violations() const { return sink_.violations + axi_->violations; }
  uint64_t readBytes() const { return axi_->readBeats * W; }  // every R beat, whole bus words
  // Reads touching [lo, hi) answer SLVERR (lo == hi: none).
  void slverr(uint64_t lo, uint64_t hi) { axi_->cfg.errLo = lo, axi_->cfg.errHi = hi; }
  std::string parseError;

 private:
  void Tick() {
    simc::tick(top_);
    cycle_++;
  }

  // Entry beats back into entries, checking the framing (doc/rtl.md; entry_stream.h).
  bool Parse(Outcome* o) {
    parseError.clear();
    te_dv::ParseEntries<W>(sink_, &o->entries, &parseError);
    return true;  // a framing error is a mismatch, not a hang
  }

  simc::Prng rng_;
  simc::Memory mem_;
  VTableReader top_;
  std::unique_ptr<simc::AxiSlave<CData>> axi_;
  simc::StreamSink sink_;
  simc::Pause statusPause_;
  uint64_t cycle_ = 0;
  CData dummy_ = 0;
  IData dummyAddr_ = 0;
  uint32_t dummyData_[32] = {};
};

// ---- tables ----

// Sorted distinct internal keys: user keys of one length per table (so bytewise order is user-key order for
// both writers) + an 8-byte tag; with `untaggedOk`, one table in 20 has a key shorter than the tag (the model's
// reader refuses it: BAD_BLOCK; its writer takes internal keys only, so those tables come from LevelDB's);
// one LevelDB table in 15 has user keys at the limit or over it (KEY_TOO_LONG).
std::vector<std::string> Keys(simc::Prng& r, size_t count, bool untaggedOk) {
  size_t userLen = Below(r, 20) == 0 ? 1 + Below(r, te::kMaxUserKeyBytes) : 1 + Below(r, 24);
  if (untaggedOk && Below(r, 15) == 0) userLen = te::kMaxUserKeyBytes + Below(r, 3);  // at the limit and over it
  const int alphabet = int(1 + Below(r, 4));
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; i++) keys.push_back(RandomBytes(r, userLen, Below(r, 3) ? alphabet : 0));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const bool untagged = untaggedOk && Below(r, 20) == 0;
  for (size_t i = 0; i < keys.size(); i++) {
    if (untagged && i == keys.size() / 2) {
      keys[i] = keys[i].substr(0, std::min<size_t>(keys[i].size(), 7));
      if (i && keys[i] <= keys[i - 1]) keys[i] = keys[i - 1] + "\x01";  // stays sorted (and may grow)
      continue;
    }
    uint64_t tag = (uint64_t(i + 1) << 8) | 1;
    for (int b = 0; b < 8; b++) keys[i].push_back(char(tag >> (8 * b)));
  }
  for (size_t i = 1; i < keys.size(); i++)
    if (keys[i] <= keys[i - 1]) keys[i] = keys[i - 1] + "\x01";
  return keys;
}

// With `snappy`, LevelDB compresses each block it can shrink by 1/8: values of a few letters (3 in 4) or random
// bytes, so some blocks stay raw among the Snappy ones.
std::string LevelDbTable(simc::Prng& r, const Options& o, const std::vector<std::string>& keys, int interval,
                         size_t blockSize, bool snappy) {
  leveldb::Options opt;
  opt.compression = snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  opt.block_restart_interval = interval;
  opt.block_size = blockSize;
  return te_dv::WriteLevelDbTable(
      opt, keys,
      [&] { return RandomBytes(r, te_dv::ValueLength(r, o.maxValue), snappy ? int(Below(r, 4)) : 0); },
      te_dv::ScratchTablePath("table_reader_harness"));
}

std::string ModelTable(simc::Prng& r, const Options& o, const std::vector<std::string>& keys, int interval,
                       size_t blockSize, bool snappy) {
  te::WriterOptions wo;
  wo.block_size = blockSize;
  wo.restart_interval = interval;
  wo.snappy = snappy;
  wo.bloom_bits_per_key = Below(r, 2) ? 10 : 0;  // a filter block and a metaindex entry
  wo.buffer_bytes = te::kDefaultOutputBufferBytes;
  te::WriteStats ws;
  te::TableWriter w(wo, "model", &ws);
  for (auto& k : keys) w.Add(k, RandomBytes(r, te_dv::ValueLength(r, o.maxValue), snappy ? int(Below(r, 4)) : 0));
  return w.Finish();
}

// A db_bench-like table: 16-byte user keys (consecutive numbers) + tag, 100-byte values (db_bench's: 50
// random printable bytes twice), 4 KiB blocks, raw or Snappy.
std::string DbBenchTable(simc::Prng& r, uint64_t entries, uint64_t blockSize, bool snappy) {
  std::vector<std::string> keys;
  char buf[32];
  for (uint64_t i = 0; i < entries; i++) {
    snprintf(buf, sizeof buf, "%016" PRIu64, i);
    std::string k(buf, 16);
    uint64_t tag = (i + 1) << 8 | 1;
    for (int b = 0; b < 8; b++) k.push_back(char(tag >> (8 * b)));
    keys.push_back(k);
  }
  leveldb::Options opt;
  opt.compression = snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  opt.block_size = blockSize;
  return te_dv::WriteLevelDbTable(
      opt, keys, [&] { std::string h = RandomBytes(r, 50, 95); for (auto& c : h) c = char(c - 'a' + ' '); return h + h; },
      te_dv::ScratchTablePath("table_reader_harness"));
}

// The handles of the data blocks as the model reads them (empty when the table does not parse).
std::vector<te::BlockHandle> Handles(const std::string& bytes) {
  try {
    return te_dv::DataBlockHandles(te::TableImage{"table", bytes});
  } catch (const te::EngineError&) {
    return {};
  }
}

void FixCrc(std::string* t, const te::BlockHandle& h) {
  const uint8_t* d = reinterpret_cast<const uint8_t*>(t->data()) + h.offset;
  uint32_t crc = te::crc32c::Mask(te::crc32c::Value(d, h.size + 1));
  for (int i = 0; i < 4; i++) (*t)[h.offset + h.size + 1 + i] = char(crc >> (8 * i));
}

// The table's Snappy blocks (data and index; empty when the table does not parse).
std::vector<te::BlockHandle> SnappyBlocks(const std::string& t) {
  std::vector<te::BlockHandle> hs = Handles(t), out;
  try {
    hs.push_back(te::ReadFooter(te::TableImage{"table", t}));
  } catch (const te::EngineError&) {
    return {};
  }
  for (const te::BlockHandle& h : hs)
    if (h.offset + h.size + 5 <= t.size() && t[h.offset + h.size] == char(te::kSnappyBlock)) out.push_back(h);
  return out;
}

// A Snappy block's stored bytes changed and its CRC made right again, so the decompressor sees them: bits
// anywhere in it, or its raw-length varint made larger in the same bytes (more than the stream makes; the
// top bits set: over the unit's and the model's limits), or its final bytes replaced by a literal tag that
// claims more bytes than follow.
std::string MutateSnappy(simc::Prng& r, std::string t, std::string* how) {
  auto hs = SnappyBlocks(t);
  if (hs.empty()) {
    *how = "snappy-none";
    return t;
  }
  const te::BlockHandle h = hs[Below(r, hs.size())];
  char* d = t.data() + h.offset;
  switch (Below(r, 3)) {
    case 0:
      *how = "snappy-bits";
      for (int k = 0, m = 1 + Below(r, 3); k < m; k++) d[Below(r, h.size)] ^= char(1 << Below(r, 8));
      break;
    case 1: {
      *how = "snappy-length";
      size_t n = 0;
      while (n < h.size && n < 5 && (d[n] & 0x80)) n++;
      if (n == h.size) break;
      const bool huge = Below(r, 2);
      for (size_t i = 0; i < n; i++) d[i] = char(0x80 | (huge ? 0x7f : Below(r, 128)));
      d[n] = char(huge ? 0x7f : (d[n] | (1 << Below(r, 7))) & 0x7f);
      break;
    }
    default:
      *how = "snappy-literal";
      if (h.size >= 2) d[h.size - 2] = char(Below(r, 2) ? (59 + 1 + Below(r, 4)) << 2 : 60 << 2);
      break;
  }
  if (h.size) FixCrc(&t, h);
  return t;
}

std::string Mutate(simc::Prng& r, std::string t, std::string* how) {
  const size_t n = t.size();
  switch (Below(r, 8)) {
    case 0:
      *how = "bits";
      for (int k = 0, m = 1 + Below(r, 4); k < m; k++) t[Below(r, n)] ^= char(1 << Below(r, 8));
      return t;
    case 1:
      *how = "footer";
      t[n - 1 - Below(r, std::min<size_t>(n, 48))] ^= char(1 << Below(r, 8));
      return t;
    case 2:
      *how = "cut";
      t.resize(Below(r, n));
      return t;
    case 3: {  // the index block (its handle from the footer)
      *how = "index";
      try {
        te::BlockHandle ih = te::ReadFooter(te::TableImage{"t", t});
        if (ih.offset + ih.size + 5 > n) return t;
        for (int k = 0, m = 1 + Below(r, 2); k < m; k++) t[ih.offset + Below(r, ih.size + 5)] ^= char(1 << Below(r, 8));
      } catch (const te::EngineError&) {
      }
      return t;
    }
    case 4: {  // the footer's index handle rewritten: past the end, huge, or a varint that never ends
      *how = "handle";
      std::string f;
      te::BlockHandle meta{Below(r, n), Below(r, 64)}, idx{Below(r, 2) ? n - 48 - Below(r, 64) : uint64_t(1) << (7 * Below(r, 9)),
                                                          Below(r, 3) ? Below(r, 4096) : (uint64_t(1) << 40)};
      f = te::EncodeFooter(meta, idx);
      if (Below(r, 4) == 0) for (int i = 0; i < 40; i++) f[i] = char(0x80 | Below(r, 256));
      t.replace(n - 48, 48, f);
      return t;
    }
    case 5: {  // a data block's first restart point not 0 (its CRC made right again half the time)
      *how = "restart0";
      auto hs = Handles(t);
      if (hs.empty()) return t;
      te::BlockHandle h = hs[Below(r, hs.size())];
      if (h.size < 8) return t;
      const uint8_t* d = reinterpret_cast<const uint8_t*>(t.data()) + h.offset;
      uint32_t restarts = te::LoadFixed32(d + h.size - 4);
      if (restarts == 0 || restarts > (h.size - 4) / 4) return t;
      t[h.offset + h.size - 4 - 4 * restarts + Below(r, 4)] ^= char(1 << Below(r, 8));
      if (Below(r, 2)) FixCrc(&t, h);
      return t;
    }
    case 6: {  // bits in one data block, its CRC made right again (errors from the entry decoder)
      *how = "block";
      auto hs = Handles(t);
      if (hs.empty()) return t;
      te::BlockHandle h = hs[Below(r, hs.size())];
      for (int k = 0, m = 1 + Below(r, 3); k < m; k++) t[h.offset + Below(r, h.size + 1)] ^= char(1 << Below(r, 8));
      FixCrc(&t, h);
      return t;
    }
    default: {  // bits in the index block, its CRC made right again (bad handles, index decode errors)
      *how = "index-fixed";
      try {
        te::BlockHandle ih = te::ReadFooter(te::TableImage{"t", t});
        if (ih.offset + ih.size + 5 > n) return t;
        for (int k = 0, m = 1 + Below(r, 3); k < m; k++) t[ih.offset + Below(r, ih.size + 1)] ^= char(1 << Below(r, 8));
        FixCrc(&t, ih);
      } catch (const te::EngineError&) {
      }
      return t;
    }
  }
}

std::string Describe(const Outcome& o, uint64_t entries) {
  std::string s = o.error ? std::string("error=") + te::ErrorName(te::ErrorCode(o.code)) + " offset=" + std::to_string(o.offset)
                          : std::string("ok");
  return s + " entries=" + std::to_string(entries);
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("table_reader_harness");
  Options o;
  simc::Args args("table_reader_harness [options]: the table front end against the table engine's C++ model");
  args.number("--seed", &o.seed, "PRNG seed (tables, mutations, stalls)");
  args.number("--tables", &o.tables, "tables to run");
  args.number("--max-value", &o.maxValue, "longest random value in bytes", "N", uint64_t(0), uint64_t(1) << 20);
  args.number("--max-entries", &o.maxEntries, "most entries of a random table", "N", uint64_t(1), uint64_t(100000));
  args.number("--latency", &o.latency, "AXI read latency in cycles", "N", uint64_t(0), uint64_t(1000));
  args.number("--dbbench", &o.dbbench, "one db_bench-like table of N entries per --tables instead (throughput)", "N",
              uint64_t(0), uint64_t(1) << 20);
  args.number("--block-size", &o.blockSize, "with --dbbench: LevelDB's block_size", "N", uint64_t(64), uint64_t(1) << 20);
  args.probability("--pin", &o.pin, "stall probability of every AXI ready/valid the memory drives", true);
  args.probability("--pout", &o.pout, "stall probability of the entry and status streams", true);
  args.probability("--mutate", &o.mutate, "fraction of tables mutated");
  args.probability("--verify", &o.verify, "fraction of tables with block CRCs checked (1: all)");
  args.probability("--model", &o.model,
                   "fraction of tables written by the model's TableWriter (else LevelDB's TableBuilder)");
  args.input("--cases", &o.cases, "tables from a file instead (u32 len, u8 verify, bytes; each counted as mutated)");
  args.output("--dump", &o.dump, "write the tables made (before mutation) as a --cases file");
  args.probability("--snappy", &o.snappy,
                   "fraction of tables written with Snappy (by either writer; with --dbbench too)");
  args.probability("--slverr", &o.slverr, "fraction of tables with one byte answering SLVERR (the footer's or any)");
  args.flag("--tamper", &o.tamper, "change a byte of the model's last entry (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);

  simc::Prng gen(o.seed ^ 0x7ab1e);
  Bench bench(o);
  uint64_t blocks = 0, snappyBlocks = 0;
  uint64_t mismatches = 0, snappyTables = 0, okTables = 0, errTables = 0, entries = 0, hangs = 0;
  uint64_t cleanCycles = 0, cleanBytes = 0, cleanTables = 0, cleanDecompressed = 0;
  std::map<std::string, uint64_t> codes;
  std::vector<Case> cases;
  if (!o.cases.empty()) {
    cases = ReadCases(o.cases);
    o.tables = cases.size();
  }
  std::vector<uint8_t> dumped;
  for (uint64_t i = 0; i < o.tables; i++) {
    std::string table, how;
    bool mutated = false, fromFile = !cases.empty(), snappy = false;
    if (fromFile) {
      table = cases[i].bytes;
      mutated = true;
      how = "from --cases";
    } else if (o.dbbench) {
      table = DbBenchTable(gen, o.dbbench, o.blockSize, gen.chance(o.snappy));
    } else {
      const int interval = Below(gen, 2) ? 16 : 1 + int(Below(gen, 4));
      const size_t blockSize = size_t(256) << Below(gen, 7);  // 256 B .. 16 KiB
      const bool byModel = gen.chance(o.model);
      snappy = gen.chance(o.snappy);
      auto keys = Keys(gen, 1 + Below(gen, o.maxEntries), !byModel);
      table = byModel ? ModelTable(gen, o, keys, interval, blockSize, snappy)
                      : LevelDbTable(gen, o, keys, interval, blockSize, snappy);
      uint8_t rec[5];
      simc::putLe32(rec, uint32_t(table.size()));
      rec[4] = 1;
      dumped.insert(dumped.end(), rec, rec + 5);
      dumped.insert(dumped.end(), table.begin(), table.end());
      if (gen.chance(o.mutate)) {
        table = snappy && Below(gen, 2) ? MutateSnappy(gen, table, &how) : Mutate(gen, table, &how);
        mutated = true;
      }
    }
    const bool verify = fromFile ? cases[i].verify : gen.chance(o.verify) || o.verify >= 1;
    Outcome model = ModelRead(table, verify);
    ExpectHandleRamFull(table, &model);
    if (o.tamper && !model.entries.empty()) model.entries.back().value.push_back('!');
    const uint64_t addr = kMemBase + 4096 * Below(gen, 16) + Below(gen, 64);  // any alignment
    // SLVERR on a footer byte: BAD_JOB at 0 whatever the bytes; on any byte: BAD_JOB if the unit read it.
    const int slverr = table.size() >= 48 && gen.chance(o.slverr) ? 1 + int(Below(gen, 2)) : 0;
    const uint64_t errAt = !slverr ? 0 : addr + (slverr == 1 ? table.size() - 1 - Below(gen, 48) : Below(gen, table.size()));
    bench.slverr(slverr ? errAt : 0, slverr ? errAt + 1 : 0);
    Outcome rtl;
    uint64_t cycles = 0, statusEntries = 0;
    const uint64_t bound = 100000 + 400 * (table.size() / W + 1) + 400 * model.entries.size();
    bool done = bench.Run(table, addr, verify, &rtl, &statusEntries, &cycles, bound);
    std::string why;
    if (!done) {
      hangs++;
      why = "no status within " + std::to_string(bound) + " cycles";
    } else if (!bench.parseError.empty()) {
      why = "entry stream: " + bench.parseError;
    } else if (slverr && rtl.error && rtl.code == int(te::ErrorCode::kBadJob) && rtl.offset == 0) {
      codes["BAD_JOB(SLVERR)"]++;
      continue;
    } else if (slverr == 1) {
      why = "SLVERR on the footer, RTL " + Describe(rtl, statusEntries);
    } else if (model.error != rtl.error || (model.error && (model.code != rtl.code || model.offset != rtl.offset)) ||
               statusEntries != model.entries.size()) {
      why = "model " + Describe(model, model.entries.size()) + ", RTL " + Describe(rtl, statusEntries);
    } else if (rtl.entries.size() < statusEntries ||
               !std::equal(model.entries.begin(), model.entries.end(), rtl.entries.begin())) {
      why = "entries differ from the model's";
    } else if (!model.error && rtl.entries.size() != model.entries.size()) {
      why = "more entries than the model's";
    }
    if (!why.empty()) {
      mismatches++;
      if (!o.quiet)
        fprintf(stderr, "table %" PRIu64 " (%zu bytes, verify %d%s%s): %s\n", i, table.size(), verify,
                mutated ? ", mutated: " : "", how.c_str(), why.c_str());
      continue;
    }
    entries += model.entries.size();
    if (model.snappy) snappyTables++;
    blocks += model.blocks;
    snappyBlocks += model.snappyBlocks;
    if (rtl.error) {
      errTables++;
      codes[te::ErrorName(te::ErrorCode(rtl.code))]++;
    } else {
      okTables++;
      if (!mutated) {
        cleanTables++;
        cleanCycles += cycles;
        cleanBytes += table.size();
        cleanDecompressed += model.decompressed;
      }
    }
  }
  if (!o.dump.empty()) simc::writeFileAtomic(o.dump, dumped.data(), dumped.size(), "--dump");
  std::string codeList;
  for (auto& [k, v] : codes) codeList += (codeList.empty() ? "" : ",") + k + ":" + std::to_string(v);
  printf("tables=%" PRIu64 " ok=%" PRIu64 " errors=%" PRIu64 " snappy_tables=%" PRIu64 " mismatches=%" PRIu64
         " hangs=%" PRIu64 " violations=%" PRIu64 " entries=%" PRIu64 " clean_tables=%" PRIu64 " cycles=%" PRIu64
         " bytes=%" PRIu64 " bytes_per_cycle=%.3f decompressed=%" PRIu64 " decompressed_per_cycle=%.3f"
         " blocks=%" PRIu64 " snappy_blocks=%" PRIu64 " read_bytes=%" PRIu64 " codes=%s\n",
         o.tables, okTables, errTables, snappyTables, mismatches, hangs, bench.violations(), entries, cleanTables,
         cleanCycles, cleanBytes, cleanCycles ? double(cleanBytes) / cleanCycles : 0.0, cleanDecompressed,
         cleanCycles ? double(cleanDecompressed) / cleanCycles : 0.0, blocks, snappyBlocks, bench.readBytes(),
         codeList.empty() ? "-" : codeList.c_str());
  return mismatches || hangs || bench.violations() ? 1 : 0;
}
