// Verilator harness of the table engine's block builder (top `BlockBuilder`, hw/ip/table_engine/rtl), differential
// against two references: random blocks built by the model's BlockBuilder (random sorted keys up to the key limit,
// values up to --max-value, restart interval 1 or 16, 1 to 200 entries), and the data blocks of tables written by
// LevelDB's own TableBuilder (Debian's libleveldb, block_size 4096, compression off) whose entries go in with a
// FLUSH beat where TableBuilder flushed. The RTL's bytes (contents + 5-byte trailer) must equal the reference's,
// byte for byte, with random stalls on the entry and output streams.
//
// Prints one summary line (`blocks=... mismatches=... bytes_per_cycle=...`); exit status 0 all agree, 1 a
// mismatch, a hang or a stream-rule violation, 2 bad usage.
#include "VBlockBuilder.h"
#include "verilated.h"

#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "block_builder.h"
#include "block_reader.h"
#include "coding.h"
#include "crc32c.h"
#include "error.h"
#include "format.h"
#include "leveldb_tables.h"
#include "limits.h"
#include "random_entries.h"
#include "entry_stream.h"
#include "tb.h"

namespace te = table_engine;

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
constexpr int W = BEAT_BYTES;
constexpr int kDataWords = W / 4;
constexpr int kSrcWords = kDataWords + 4;  // data, kind, count, keyBytes, valueBytes
constexpr int kSinkWords = kDataWords + 1;  // data, count
constexpr uint32_t kFlush = te_dv::kControl;  // the builder's control beat: close the block

inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
using simc::putWords;

struct Entry {
  std::string key, value;
};

// One block to build: its entries and the bytes the reference wrote (contents + trailer).
struct Case {
  std::vector<Entry> entries;
  int interval = 16;
  std::string expected;  // the blocks' bytes, one after the other
  int blocks = 1;        // more than one where the restart RAM filled (--max-restarts)
  bool longKey = false;  // holds an entry over the key limit: dropped, the status says KEY_TOO_LONG
};

std::string WithTrailer(std::string contents) { return te_dv::WithRawTrailer(std::move(contents)); }

struct Options {
  uint64_t seed = 1, blocks = 100, maxRestarts = 0, interval = 0, maxValue = 65536, keyLen = 0, valueLen = 0, leveldbTables = 0;
  double pin = 0, pout = 0, longKey = 0;
  std::string table;
  bool quiet = false, tamper = false;
};

class Bench {
 public:
  explicit Bench(const Options& o)
      : rng_(o.seed), src_(&rng_, kSrcWords), sink_(&rng_, kSinkWords), statusPause_(&rng_) {
    src_.pause.set(o.pin);
    sink_.pause.set(o.pout);
    statusPause_.set(o.pout);
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // Runs one block; false on a hang. `out` gets the bytes, `size`/`entries` the status.
  bool Run(const Case& c, std::string* out, uint64_t* size, uint64_t* entries, int* code, uint64_t* cycles,
           uint64_t bound) {
    src_.clear();
    sink_.clear();
    for (auto& e : c.entries) te_dv::PushEntry<W>(src_, e);
    te_dv::PushEntryBeat<W>(src_, kFlush, nullptr, 0, 0, 0, true);
    top_.io_restartInterval = c.interval;
    int statuses = 0;
    *size = *entries = 0;
    *code = -1;
    for (uint64_t t = 0; t < bound; t++) {
      top_.io_entries_valid = src_.drive();
      if (src_.valid()) {
        const uint32_t* b = src_.beat();
        putWords(top_.io_entries_payload_fragment_data, b);
        top_.io_entries_payload_fragment_kind = b[kDataWords];
        top_.io_entries_payload_fragment_count = b[kDataWords + 1];
        top_.io_entries_payload_fragment_keyBytes = b[kDataWords + 2];
        top_.io_entries_payload_fragment_valueBytes = b[kDataWords + 3];
        top_.io_entries_payload_last = src_.last();
      }
      top_.io_output_ready = sink_.drive();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      if (top_.io_entries_valid && top_.io_entries_ready) src_.take();
      uint32_t w[kSinkWords];
      getWords(top_.io_output_payload_fragment_data, w);
      w[kDataWords] = top_.io_output_payload_fragment_count;
      sink_.sample(top_.io_output_valid, w, top_.io_output_payload_last);
      if (top_.io_status_valid && top_.io_status_ready) {
        *size += top_.io_status_payload_size + te::kTrailerBytes;
        *entries += top_.io_status_payload_entries;
        if (top_.io_status_payload_error) *code = int(top_.io_status_payload_code);
        if (++statuses == c.blocks) {
          Tick();
          *cycles = t + 1;
          return Collect(out, c.blocks);
        }
      }
      Tick();
    }
    *cycles = bound;
    return false;
  }

  uint64_t violations() const { return sink_.violations; }
  std::string framingError;

 private:
  void Tick() {
    simc::tick(top_);
  }

  // The output beats into bytes, checking the framing: full beats but the final one, `last` on it only.
  bool Collect(std::string* out, int blocks) {
    framingError.clear();
    out->clear();
    int lasts = 0;
    for (size_t i = 0; i < sink_.beats(); i++) {
      const uint32_t* b = sink_.beat(i);
      uint32_t cnt = b[kDataWords];
      bool last = sink_.lasts[i];
      lasts += last;
      if (i + 1 == sink_.beats() && !last) framingError = "final beat without last";
      if ((!last && cnt != W) || cnt == 0 || cnt > W) framingError = "beat " + std::to_string(i) + ": count " + std::to_string(cnt);
      for (uint32_t k = 0; k < std::min<uint32_t>(cnt, W); k++) out->push_back(char(uint8_t(b[k / 4] >> (8 * (k % 4)))));
    }
    if (lasts != blocks) framingError = std::to_string(lasts) + " beats with last for " + std::to_string(blocks) + " blocks";
    return true;
  }

  simc::Prng rng_;
  VBlockBuilder top_;
  simc::StreamSource src_;
  simc::StreamSink sink_;
  simc::Pause statusPause_;
};

using te_dv::Below;
using te_dv::KeyLength;
using te_dv::RandomBytes;
using te_dv::ValueLength;

std::vector<std::string> SortedKeys(simc::Prng& r, size_t n) {
  std::vector<std::string> keys;
  int alphabet = int(1 + Below(r, 4));  // few letters: long shared prefixes
  for (size_t i = 0; i < n; i++) keys.push_back(RandomBytes(r, KeyLength(r), Below(r, 3) ? alphabet : 0));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// A random block by the model's BlockBuilder; with --key-len, fixed lengths filled to block_size 4096.
Case RandomCase(simc::Prng& r, const Options& o) {
  Case c;
  c.interval = o.interval ? int(o.interval) : (Below(r, 2) ? 16 : 1);
  te::BlockBuilder b(c.interval);
  // The RTL's restart RAM (--max-restarts): an entry that needs one more restart closes the block first.
  uint64_t restarts = 1, since = 0;
  auto add = [&](const std::string& k, const std::string& v) {
    bool restart = since >= uint64_t(c.interval);
    if (o.maxRestarts && restart && restarts == o.maxRestarts) {
      c.expected += WithTrailer(b.Finish());
      b.Reset();
      c.blocks++;
      restarts = 1, since = 0, restart = false;
    }
    if (restart) restarts++, since = 1;
    else since++;
    b.Add(k, v);
  };
  if (o.keyLen) {
    std::vector<std::string> keys;
    for (int i = 0; i < 4096; i++) keys.push_back(RandomBytes(r, o.keyLen, 0));
    std::sort(keys.begin(), keys.end());
    for (auto& k : keys) {
      c.entries.push_back({k, RandomBytes(r, o.valueLen, 0)});
      add(k, c.entries.back().value);
      if (b.SizeEstimate() >= 4096) break;
    }
  } else {
    size_t bytes = 0;
    std::vector<std::string> keys = SortedKeys(r, 1 + Below(r, Below(r, 4) ? 24 : 200));
    c.longKey = r.chance(o.longKey);
    const size_t longAt = Below(r, keys.size());
    for (size_t i = 0; i < keys.size(); i++) {
      const std::string& k = keys[i];
      if (c.longKey && i == longAt)  // one byte to 16 over the limit, anywhere in the block
        c.entries.push_back({RandomBytes(r, te::kMaxInternalKeyBytes + 1 + Below(r, 16), 0), RandomBytes(r, Below(r, 300), 0)});
      c.entries.push_back({k, RandomBytes(r, ValueLength(r, o.maxValue), 0)});
      add(k, c.entries.back().value);
      bytes += k.size() + c.entries.back().value.size();
      if (bytes > (256u << 10)) break;
    }
  }
  c.expected += WithTrailer(b.Finish());
  return c;
}

// Tables by LevelDB's own TableBuilder (block_size 4096, no compression): each data block a case, its entries
// read back by the model's BlockReader, so the FLUSH points are where TableBuilder flushed.
std::vector<Case> LevelDbCases(simc::Prng& r, const Options& o) {
  std::vector<Case> out;
  const std::string path = te_dv::ScratchTablePath("block_builder_harness");
  for (uint64_t t = 0; t < o.leveldbTables; t++) {
    leveldb::Options opt;
    opt.compression = leveldb::kNoCompression;
    opt.block_restart_interval = o.interval ? int(o.interval) : (Below(r, 2) ? 16 : 1);
    opt.block_size = 4096;
    const std::string bytes = te_dv::WriteLevelDbTable(opt, SortedKeys(r, 1 + Below(r, 300)),
                                                       [&] { return RandomBytes(r, ValueLength(r, o.maxValue), 0); }, path);
    te::TableImage img{path, bytes};
    for (const te::BlockHandle& h : te_dv::DataBlockHandles(img)) {
      const uint64_t off = h.offset, size = h.size;
      Case c;
      c.interval = opt.block_restart_interval;
      c.expected = bytes.substr(off, size + te::kTrailerBytes);
      std::string blockScratch;
      std::string_view contents = te::ReadBlock(img, te::BlockHandle{off, size}, true, &blockScratch, nullptr);
      te::BlockReader br;
      br.Start(contents, &img.name, off, false, te::kMaxInternalKeyBytes);
      while (br.Next()) c.entries.push_back({std::string(br.key()), std::string(br.value())});
      out.push_back(std::move(c));
    }
  }
  return out;
}

// The data blocks of a table file (`--table`), each a case: its entries (decompressed first when the block
// is Snappy) rebuilt with the table's restart interval (`--interval`, LevelDB's 16 when 0) and FLUSH where
// the block ends; expected: the contents with a raw block's trailer. Made for timing named jobs.
std::vector<Case> TableCases(const Options& o) {
  std::vector<Case> out;
  for (const te_dv::TableBlock& b : te_dv::ReadTableBlocks(o.table, false)) {
    Case c;
    c.interval = o.interval ? int(o.interval) : 16;
    c.expected = te_dv::WithRawTrailer(b.contents);
    te::BlockReader br;
    br.Start(b.contents, &o.table, b.handle.offset, false, te::kMaxInternalKeyBytes);
    while (br.Next()) c.entries.push_back({std::string(br.key()), std::string(br.value())});
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("block_builder_harness");
  Options o;
  simc::Args args("block_builder_harness [options]: the block builder against the model's and LevelDB's blocks");
  args.number("--seed", &o.seed, "PRNG seed (entries, stalls)");
  args.number("--blocks", &o.blocks, "random blocks to build");
  args.number("--interval", &o.interval, "restart interval (0: 1 or 16 at random per block)", "N", uint64_t(0), uint64_t(1024));
  args.number("--max-value", &o.maxValue, "longest random value in bytes", "N", uint64_t(0), uint64_t(1) << 20);
  args.number("--key-len", &o.keyLen, "every key this long, blocks filled to 4 KiB (0: random keys)", "N", uint64_t(0),
              uint64_t(te::kMaxInternalKeyBytes));
  args.number("--value-len", &o.valueLen, "with --key-len: every value this long", "N", uint64_t(0), uint64_t(1) << 20);
  args.probability("--pin", &o.pin, "stall probability of the entry stream", true);
  args.probability("--pout", &o.pout, "stall probability of the output and status streams", true);
  args.number("--max-restarts", &o.maxRestarts, "the RTL's restart RAM as generated (0: never full in these blocks)");
  args.probability("--long-key", &o.longKey,
                   "fraction of random blocks with one entry over the key limit (dropped, KEY_TOO_LONG)");
  args.number("--leveldb", &o.leveldbTables, "the data blocks of this many tables by LevelDB's TableBuilder instead");
  args.input("--table", &o.table, "the data blocks of this table file instead (timing of named jobs; --interval: its restart interval)");
  args.flag("--tamper", &o.tamper, "change a byte of each expected block (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);

  simc::Prng gen(o.seed ^ 0xb10c);
  Bench bench(o);
  std::vector<Case> cases;
  if (o.leveldbTables) cases = LevelDbCases(gen, o);
  if (!o.table.empty()) cases = TableCases(o);
  const bool given = o.leveldbTables || !o.table.empty();
  const uint64_t total = given ? cases.size() : o.blocks;
  uint64_t splits = 0, longKeys = 0, mismatches = 0, hangs = 0, entries = 0, cycles = 0, bytes = 0, maxCycles = 0;
  for (uint64_t i = 0; i < total; i++) {
    Case c = given ? cases[i] : RandomCase(gen, o);
    if (o.tamper) c.expected[c.expected.size() / 2] ^= 1;
    std::string got;
    uint64_t size = 0, n = 0, used = 0;
    int code = -1;
    uint64_t payload = 0;
    for (auto& e : c.entries) payload += e.key.size() + e.value.size();
    const uint64_t bound = 20000 + 40 * (payload / W + 8 * c.entries.size());
    std::string why;
    if (!bench.Run(c, &got, &size, &n, &code, &used, bound)) {
      hangs++;
      why = "no status within " + std::to_string(bound) + " cycles";
    } else if (!bench.framingError.empty()) {
      why = "output stream: " + bench.framingError;
    } else if (got != c.expected) {
      size_t at = 0;
      while (at < got.size() && at < c.expected.size() && got[at] == c.expected[at]) at++;
      why = "bytes differ at " + std::to_string(at) + " (RTL " + std::to_string(got.size()) + " bytes, reference " +
            std::to_string(c.expected.size()) + ")";
    } else if (size != c.expected.size() || n != c.entries.size() - c.longKey) {
      why = "status size " + std::to_string(size) + " entries " + std::to_string(n);
    } else if (code != (c.longKey ? int(te::ErrorCode::kKeyTooLong) : -1)) {
      why = "status code " + std::to_string(code);
    }
    if (!why.empty()) {
      mismatches++;
      if (!o.quiet) fprintf(stderr, "block %" PRIu64 " (%zu entries, interval %d): %s\n", i, c.entries.size(), c.interval, why.c_str());
      continue;
    }
    entries += n;
    longKeys += c.longKey;
    splits += c.blocks - 1;
    cycles += used;
    bytes += got.size();
    maxCycles = std::max(maxCycles, used);
  }
  printf("blocks=%" PRIu64 " mismatches=%" PRIu64 " hangs=%" PRIu64 " violations=%" PRIu64 " entries=%" PRIu64 " long_keys=%" PRIu64 " restart_ram_splits=%" PRIu64
         " cycles=%" PRIu64 " bytes=%" PRIu64 " bytes_per_cycle=%.3f cycles_per_block=%.1f max_cycles=%" PRIu64 "\n",
         total, mismatches, hangs, bench.violations(), entries, longKeys, splits, cycles, bytes, cycles ? double(bytes) / cycles : 0.0,
         total - mismatches ? double(cycles) / double(total - mismatches) : 0.0, maxCycles);
  return mismatches || hangs || bench.violations() ? 1 : 0;
}
