// Verilator harness of the table engine's block reader (top `BlockReader`, hw/ip/table_engine/rtl), differential
// against the C++ model: blocks made by the model's BlockBuilder (random keys and values, restart interval 1 or
// 16), optionally mutated (bits flipped, bytes cut), go through the RTL with random stalls on every stream and
// through the model's ReadBlock + BlockReader; the entries or the error (code and offset) must agree.
// Blocks may also come from a file (--cases), e.g. ones Hypothesis mutated.
//
// Prints one summary line (`blocks=... mismatches=... cycles=... bytes=...`); exit status 0 all agree,
// 1 a mismatch, a hang (no status within the cycle bound) or a stream-rule violation, 2 bad usage.
#include "VBlockReader.h"
#include "verilated.h"

#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
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
constexpr int kSinkWords = kDataWords + 4;  // data, kind, count, keyBytes, valueBytes

// 64-bit ports (W = 8): tb.h's putWords/getWords cover IData and VlWide.
inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
using simc::putWords;

struct Entry {
  std::string key, value;
  bool operator==(const Entry& o) const { return key == o.key && value == o.value; }
};

struct Outcome {
  bool error = false;
  int code = 0;
  uint64_t offset = 0;
  std::vector<Entry> entries;  // all (no error) or those before the error
  bool snappy = false;         // the model took the block for a Snappy one (not this stage's)
  bool decoding = false;       // the error came from the entry decoder (ReadBlock had passed)
};

struct Case {
  std::string bytes;  // what the table holds from the block's offset on (maybe cut short)
  uint64_t size = 0;  // the block handle's size
  bool verify = true;
  bool mutated = false;
};

Outcome ModelRead(const Case& c) {
  Outcome o;
  te::TableImage t{"block", c.bytes};
  std::string scratch;
  te::BlockReader r;
  try {
    std::string_view contents = te::ReadBlock(t, te::BlockHandle{0, c.size}, c.verify, &scratch, nullptr);
    if (static_cast<uint8_t>(c.bytes[c.size]) == te::kSnappyBlock) {
      o.snappy = true;
      return o;
    }
    o.decoding = true;
    r.Start(contents, &t.name, 0, false, te::kMaxInternalKeyBytes);
    while (r.Next()) o.entries.push_back({std::string(r.key()), std::string(r.value())});
  } catch (const te::EngineError& e) {
    o.error = true;
    o.code = static_cast<int>(e.code);
    o.offset = e.offset;
    if (e.code != te::ErrorCode::kBadCrc && e.code != te::ErrorCode::kTruncated && c.bytes.size() > c.size &&
        static_cast<uint8_t>(c.bytes[c.size]) == te::kSnappyBlock)
      o.snappy = true;
  }
  return o;
}

struct Options {
  uint64_t seed = 1, blocks = 100, interval = 0, maxValue = 65536, keyLen = 0, valueLen = 0, leveldbTables = 0;
  double pin = 0, pout = 0, mutate = 0, softReset = 0, verify = 1;
  std::string cases, dump, table;
  bool quiet = false, tamper = false;
};

class Bench {
 public:
  explicit Bench(const Options& o)
      : opt_(o), rng_(o.seed), src_(&rng_, kDataWords), sink_(&rng_, kSinkWords), statusPause_(&rng_),
        cmdPause_(&rng_) {
    src_.pause.set(o.pin);
    sink_.pause.set(o.pout);
    statusPause_.set(o.pout);
    cmdPause_.set(o.pin);
    top_.reset = 1;
    top_.io_softReset = 0;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // Runs one block through the RTL; returns false on a hang (no status within the bound).
  bool Run(const Case& c, Outcome* rtl, uint64_t* cycles, uint64_t bound) {
    src_.clear();
    sink_.clear();
    const uint64_t n = c.size;
    uint32_t restarts = 0;  // the contents' last 4 bytes, as the front end fetches them with the trailer
    for (int i = 0; i < 4; i++)
      if (n >= 4 && n - 4 + i < c.bytes.size()) restarts |= uint32_t(uint8_t(c.bytes[n - 4 + i])) << (8 * i);
    const int lastBeatBytes = int((c.bytes.size() - 1) % W) + 1;
    src_.pushBytes(reinterpret_cast<const uint8_t*>(c.bytes.data()), c.bytes.size(), true);
    bool cmdDone = false, cmdOn = false;
    for (uint64_t t = 0; t < bound; t++) {
      if (!cmdDone && !cmdOn && !cmdPause_()) cmdOn = true;
      top_.io_cmd_valid = cmdOn;
      top_.io_cmd_payload_size = uint32_t(n);
      top_.io_cmd_payload_restarts = restarts;
      top_.io_cmd_payload_verify = c.verify;
      top_.io_input_valid = src_.drive();
      if (src_.valid()) {
        putWords(top_.io_input_payload_fragment_data, src_.beat());
        top_.io_input_payload_fragment_count = src_.last() ? lastBeatBytes : W;
        top_.io_input_payload_last = src_.last();
      }
      top_.io_entries_ready = sink_.drive();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      if (cmdOn && top_.io_cmd_ready) cmdOn = false, cmdDone = true;
      if (top_.io_input_valid && top_.io_input_ready) src_.take();
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
        statusEntries_ = top_.io_status_payload_entries;
        Tick();
        *cycles = t + 1;
        return Parse(rtl);
      }
      Tick();
    }
    *cycles = bound;
    return false;
  }

  // Starts the block, runs `cycles` clocks, then a soft reset: the unit must then take the next block.
  void Interrupt(const Case& c, uint64_t cycles) {
    Outcome ignored;
    uint64_t used;
    Run(c, &ignored, &used, cycles);
    top_.io_softReset = 1;
    top_.io_cmd_valid = top_.io_input_valid = 0;
    Tick();
    top_.io_softReset = 0;
    src_.clear();
    sink_.dropPending();
    sink_.clear();
  }

  uint64_t violations() const { return sink_.violations; }
  uint64_t statusEntries() const { return statusEntries_; }
  std::string parseError;

 private:
  void Tick() {
    simc::tick(top_);
  }

  // Entry beats back into entries, checking the framing (doc/rtl.md; entry_stream.h).
  bool Parse(Outcome* o) {
    parseError.clear();
    te_dv::ParseEntries<W>(sink_, &o->entries, &parseError);
    return true;  // a framing error is a mismatch, not a hang
  }

  Options opt_;
  simc::Prng rng_;
  VBlockReader top_;
  simc::StreamSource src_;
  simc::StreamSink sink_;
  simc::Pause statusPause_, cmdPause_;
  uint64_t statusEntries_ = 0;
};

// ---- random blocks ----
using te_dv::Below;
using te_dv::KeyLength;
using te_dv::RandomBytes;
using te_dv::ValueLength;

// A LevelDB-like block: fixed key and value lengths, entries added until it reaches block_size (4 KiB).
std::string FixedEntries(simc::Prng& r, const Options& o, int interval, te::BlockBuilder* b) {
  std::vector<std::string> keys;
  for (int i = 0; i < 4096; i++) keys.push_back(RandomBytes(r, o.keyLen, 0));
  std::sort(keys.begin(), keys.end());
  for (auto& k : keys) {
    b->Add(k, RandomBytes(r, o.valueLen, 0));
    if (b->SizeEstimate() >= 4096) break;
  }
  (void)interval;
  return b->Finish();
}

std::string MakeBlock(simc::Prng& r, const Options& o, uint64_t* entries) {
  int interval = o.interval ? int(o.interval) : (Below(r, 2) ? 16 : 1);
  if (o.keyLen) {
    te::BlockBuilder fixed(interval);
    std::string block = FixedEntries(r, o, interval, &fixed);
    *entries = fixed.entries();
    block.push_back(char(te::kRawBlock));
    uint32_t crc = te::crc32c::Mask(te::crc32c::Value(reinterpret_cast<const uint8_t*>(block.data()), block.size()));
    for (int i = 0; i < 4; i++) block.push_back(char(crc >> (8 * i)));
    return block;
  }
  size_t count = 1 + Below(r, Below(r, 4) ? 24 : 200);
  std::vector<std::string> keys;
  int alphabet = int(1 + Below(r, 4));  // few letters: long shared prefixes
  for (size_t i = 0; i < count; i++) keys.push_back(RandomBytes(r, KeyLength(r), Below(r, 3) ? alphabet : 0));
  std::sort(keys.begin(), keys.end());
  te::BlockBuilder b(interval);
  size_t bytes = 0;
  for (auto& k : keys) {
    std::string v = RandomBytes(r, ValueLength(r, o.maxValue), 0);
    bytes += k.size() + v.size();
    b.Add(k, v);
    if (bytes > (256u << 10)) break;
  }
  *entries = b.entries();
  std::string block = b.Finish();
  block.push_back(char(te::kRawBlock));
  uint32_t crc = te::crc32c::Mask(te::crc32c::Value(reinterpret_cast<const uint8_t*>(block.data()), block.size()));
  for (int i = 0; i < 4; i++) block.push_back(char(crc >> (8 * i)));
  return block;
}

void Mutate(simc::Prng& r, Case* c) {
  c->mutated = true;
  const size_t n = c->bytes.size();
  switch (Below(r, 5)) {
    case 4: {  // a run of continuation bytes: a varint longer than 5 bytes or past the entries
      size_t at = Below(r, std::min<size_t>(n, 64)), len = 1 + Below(r, 6);
      for (size_t k = at; k < std::min(n, at + len); k++) c->bytes[k] = char(0x80 | Below(r, 256));
      break;
    }
    case 0:  // cut short
      c->bytes.resize(1 + Below(r, n - 1));
      break;
    case 1:  // near the start: the first entries' varints
      for (int k = 0, m = 1 + Below(r, 3); k < m; k++) c->bytes[Below(r, std::min<size_t>(n, 48))] ^= char(1 << Below(r, 8));
      break;
    case 2:  // the restart array, count and trailer
      for (int k = 0, m = 1 + Below(r, 2); k < m; k++) c->bytes[n - 1 - Below(r, std::min<size_t>(n, 24))] ^= char(1 << Below(r, 8));
      break;
    default:
      for (int k = 0, m = 1 + Below(r, 4); k < m; k++) c->bytes[Below(r, n)] ^= char(1 << Below(r, 8));
  }
}

// Tables written by LevelDB's own TableBuilder (Debian's libleveldb, compression off, block_size 1, 4 or
// 16 KiB): their data blocks, located through the footer and index block, become the cases.
std::vector<Case> LevelDbBlocks(simc::Prng& r, const Options& o) {
  std::vector<Case> out;
  const std::string path = te_dv::ScratchTablePath("block_reader_harness");
  for (uint64_t t = 0; t < o.leveldbTables; t++) {
    leveldb::Options opt;
    opt.compression = leveldb::kNoCompression;
    opt.block_restart_interval = o.interval ? int(o.interval) : (Below(r, 2) ? 16 : 1);
    opt.block_size = size_t(1024) << (2 * Below(r, 3));
    std::vector<std::string> keys;
    int alphabet = int(1 + Below(r, 4));
    for (size_t i = 0, n = 1 + Below(r, 300); i < n; i++) keys.push_back(RandomBytes(r, KeyLength(r), Below(r, 3) ? alphabet : 0));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const std::string bytes = te_dv::WriteLevelDbTable(
        opt, keys, [&] { return RandomBytes(r, ValueLength(r, o.maxValue), 0); }, path);
    te::TableImage img{path, bytes};
    for (const te::BlockHandle& h : te_dv::DataBlockHandles(img)) {
      const uint64_t off = h.offset, size = h.size;
      Case c;
      c.bytes = bytes.substr(off, size + te::kTrailerBytes);
      c.size = size;
      c.verify = r.chance(o.verify) || o.verify >= 1;
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<Case> ReadCases(const std::string& path) {
  // Records: u32 length, u8 verify, u32 handle size, then the bytes (little endian).
  std::vector<uint8_t> f = simc::readFile(path, "--cases");
  std::vector<Case> out;
  size_t p = 0;
  while (p < f.size()) {
    if (f.size() - p < 9) simc::die("--cases %s: record header cut at byte %zu", path.c_str(), p);
    uint32_t len = simc::le32(&f[p]);
    Case c;
    c.verify = f[p + 4] != 0;
    c.size = simc::le32(&f[p + 5]);
    p += 9;
    if (f.size() - p < len || len == 0) simc::die("--cases %s: record of %u bytes at byte %zu", path.c_str(), len, p);
    c.bytes.assign(reinterpret_cast<const char*>(&f[p]), len);
    c.mutated = true;
    p += len;
    out.push_back(std::move(c));
  }
  return out;
}

// The data blocks of a table file (`--table`), each a case with its CRC checked; a Snappy block as the
// entry decoder meets it behind the decompressor (its contents with a raw block's trailer). Made for
// timing named jobs.
std::vector<Case> TableCases(const std::string& path) {
  std::vector<Case> out;
  for (const te_dv::TableBlock& b : te_dv::ReadTableBlocks(path, false)) {
    Case c;
    c.bytes = te_dv::WithRawTrailer(b.contents);
    c.size = b.contents.size();
    c.verify = true;
    out.push_back(std::move(c));
  }
  return out;
}

std::string Describe(const Outcome& o) {
  if (o.error) return std::string("error=") + te::ErrorName(te::ErrorCode(o.code)) + " offset=" + std::to_string(o.offset);
  return "ok entries=" + std::to_string(o.entries.size());
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("block_reader_harness");
  Options o;
  simc::Args args("block_reader_harness [options]: the block reader against the table engine's C++ model");
  args.number("--seed", &o.seed, "PRNG seed (blocks, mutations, stalls)");
  args.number("--blocks", &o.blocks, "random blocks to run");
  args.number("--interval", &o.interval, "restart interval (0: 1 or 16 at random per block)", "N", uint64_t(0), uint64_t(1024));
  args.number("--max-value", &o.maxValue, "longest random value in bytes", "N", uint64_t(0), uint64_t(1) << 20);
  args.number("--key-len", &o.keyLen, "every key this long, blocks of 4 KiB (0: random keys)", "N", uint64_t(0),
              uint64_t(te::kMaxInternalKeyBytes));
  args.number("--value-len", &o.valueLen, "with --key-len: every value this long", "N", uint64_t(0), uint64_t(1) << 20);
  args.probability("--pin", &o.pin, "stall probability of the command and input streams", true);
  args.probability("--pout", &o.pout, "stall probability of the entry and status streams", true);
  args.probability("--mutate", &o.mutate, "fraction of blocks mutated (bits flipped, bytes cut)");
  args.probability("--verify", &o.verify, "fraction of blocks with the CRC checked (1: all)");
  args.probability("--soft-reset", &o.softReset, "fraction of blocks first interrupted by a soft reset");
  args.number("--leveldb", &o.leveldbTables, "blocks of this many tables made by LevelDB's TableBuilder instead");
  args.input("--cases", &o.cases, "blocks from a file instead (u32 len, u8 verify, u32 size, bytes)");
  args.input("--table", &o.table, "the data blocks of this table file instead (timing of named jobs)");
  args.output("--dump", &o.dump, "write the random blocks made (before mutation) as a --cases file");
  args.flag("--tamper", &o.tamper, "change a byte of the model's last entry (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);

  simc::Prng gen(o.seed ^ 0x5eed);
  Bench bench(o);
  std::vector<Case> cases;
  if (!o.cases.empty()) cases = ReadCases(o.cases);
  if (o.leveldbTables) cases = LevelDbBlocks(gen, o);
  if (!o.table.empty()) cases = TableCases(o.table);
  const bool random = o.cases.empty() && !o.leveldbTables && o.table.empty();
  const uint64_t total = random ? o.blocks : cases.size();

  uint64_t mismatches = 0, skipped = 0, okBlocks = 0, errBlocks = 0, entries = 0, hangs = 0;
  uint64_t cleanCycles = 0, cleanBytes = 0, cleanBlocks = 0, maxCycles = 0;
  std::map<std::string, uint64_t> codes;
  std::vector<uint8_t> dumped;
  for (uint64_t i = 0; i < total; i++) {
    Case c;
    uint64_t built = 0;
    if (random) {
      c.bytes = MakeBlock(gen, o, &built);
      c.size = c.bytes.size() - te::kTrailerBytes;
      uint8_t rec[9];
      simc::putLe32(rec, uint32_t(c.bytes.size()));
      rec[4] = 1;
      simc::putLe32(rec + 5, uint32_t(c.size));
      dumped.insert(dumped.end(), rec, rec + 9);
      dumped.insert(dumped.end(), c.bytes.begin(), c.bytes.end());
      c.verify = gen.chance(o.verify) || o.verify >= 1;
      if (gen.chance(o.mutate)) Mutate(gen, &c);
    } else {
      c = cases[i];
      if (o.leveldbTables && gen.chance(o.mutate)) Mutate(gen, &c);
    }
    Outcome model = ModelRead(c);
    if (o.tamper && !model.entries.empty()) model.entries.back().value.push_back('!');
    if (gen.chance(o.softReset)) bench.Interrupt(c, 1 + Below(gen, 4 * (c.bytes.size() / W + 8)));
    Outcome rtl;
    uint64_t cycles = 0;
    // Generous: every stream stalled half the time costs 2x; an entry costs a few clocks of its own.
    const uint64_t bound = 20000 + 40 * (c.bytes.size() / W + 1) + 400 * (model.entries.size() + built);
    bool done = bench.Run(c, &rtl, &cycles, bound);
    std::string why;
    if (!done) {
      hangs++;
      why = "no status within " + std::to_string(bound) + " cycles";
    } else if (!bench.parseError.empty()) {
      why = "entry stream: " + bench.parseError;
    } else if (model.snappy) {
      skipped++;
      continue;
    } else if (model.error != rtl.error || (model.error && (model.code != rtl.code || model.offset != rtl.offset))) {
      why = "model " + Describe(model) + ", RTL " + Describe(rtl);
    } else if (!model.error && (rtl.entries != model.entries || bench.statusEntries() != model.entries.size())) {
      why = "entries differ (model " + std::to_string(model.entries.size()) + ", RTL " + std::to_string(rtl.entries.size()) +
            ", status " + std::to_string(bench.statusEntries()) + ")";
    } else if (model.error && model.decoding &&
               (rtl.entries.size() > model.entries.size() ||
                !std::equal(rtl.entries.begin(), rtl.entries.end(), model.entries.begin()))) {
      why = "entries before the error differ from the model's";
    }
    if (!why.empty()) {
      mismatches++;
      if (!o.quiet)
        fprintf(stderr, "block %" PRIu64 " (%zu bytes, size %" PRIu64 ", verify %d%s): %s\n", i, c.bytes.size(), c.size,
                c.verify, c.mutated ? ", mutated" : "", why.c_str());
      continue;
    }
    if (rtl.error) {
      errBlocks++;
      codes[te::ErrorName(te::ErrorCode(rtl.code))]++;
    } else {
      okBlocks++;
      entries += rtl.entries.size();
    }
    if (!c.mutated && !rtl.error) {
      cleanBlocks++;
      cleanCycles += cycles;
      cleanBytes += c.bytes.size();
      maxCycles = std::max(maxCycles, cycles);
    }
  }
  if (!o.dump.empty()) simc::writeFileAtomic(o.dump, dumped.data(), dumped.size(), "--dump");
  std::string codeList;
  for (auto& [k, v] : codes) codeList += (codeList.empty() ? "" : ",") + k + ":" + std::to_string(v);
  printf("blocks=%" PRIu64 " ok=%" PRIu64 " errors=%" PRIu64 " skipped_snappy=%" PRIu64 " mismatches=%" PRIu64
         " hangs=%" PRIu64 " violations=%" PRIu64 " entries=%" PRIu64 " clean_blocks=%" PRIu64 " cycles=%" PRIu64
         " bytes=%" PRIu64 " bytes_per_cycle=%.3f cycles_per_block=%.1f codes=%s\n",
         total, okBlocks, errBlocks, skipped, mismatches, hangs, bench.violations(), entries, cleanBlocks, cleanCycles,
         cleanBytes, cleanCycles ? double(cleanBytes) / cleanCycles : 0.0,
         cleanBlocks ? double(cleanCycles) / cleanBlocks : 0.0, codeList.empty() ? "-" : codeList.c_str());
  return mismatches || bench.violations() ? 1 : 0;
}
