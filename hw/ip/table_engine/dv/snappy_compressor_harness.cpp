// Verilator harness of the table engine's Snappy compressor (top `SnappyCompressor`, hw/ip/table_engine/rtl),
// differential against the engine's C++ codec (model/snappy_codec's Compress) and Debian's libsnappy: each
// block (random bytes, db_bench's values, LevelDB data blocks of db_bench entries, all-zero, short-period
// runs, or the edge cases: empty, 1 byte, around libsnappy's 15-byte margin, exactly 64 KiB, fragments past
// it, all-same, incompressible) is compressed by the RTL with random stalls on every stream; its output must
// be the model's bytes and libsnappy's, decompress (libsnappy) to the block, and its status must give the
// output's length and LevelDB's "saves 1/8" verdict.
//
// Prints one summary line (`blocks=... mismatches=... hangs=... bytes_per_clock=...`, bytes_per_clock: input
// bytes per clock, length offered to status taken); exit status 0 all agree, 1 a mismatch, a hang (no status
// within the cycle bound) or a stream-rule violation, 2 bad usage.
#include "VSnappyCompressor.h"
#include "verilated.h"

#include <snappy.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "leveldb_tables.h"
#include "snappy_codec.h"
#include "snappy_data.h"
#include "entry_stream.h"
#include "tb.h"

namespace te = table_engine;

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
#ifndef MAX_BLOCK_BYTES
#define MAX_BLOCK_BYTES (4u << 20)
#endif
constexpr int W = BEAT_BYTES;
constexpr uint64_t kMaxBlock = MAX_BLOCK_BYTES;
constexpr int kDataWords = W / 4;
constexpr int kSinkWords = kDataWords + 1;  // data, count

inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
using simc::putWords;

using te_dv::Below;

using te_dv::DbBenchValue;
using te_dv::LevelDbBlock;

const char* const kKinds[] = {"random", "dbbench", "leveldb", "zeros", "runs", "mixed"};

// The data to compress: `kind` random | dbbench | leveldb | zeros | runs | mixed (one of them at random).
std::string MakeData(simc::Prng& g, std::string k, size_t n) {
  if (k == "mixed") k = kKinds[Below(g, 5)];
  if (k == "leveldb") return n ? LevelDbBlock(g, n) : std::string();
  std::string d;
  while (d.size() < n) {
    if (k == "random") {
      d.push_back(char(g.next()));
    } else if (k == "dbbench") {
      d += DbBenchValue(g);
    } else if (k == "zeros") {
      d.push_back('\0');
    } else {  // runs of a short pattern between random bytes: overlapping copies, offsets below W
      std::string pat;
      for (uint64_t i = 0, p = 1 + Below(g, 2 * W); i < p; i++) pat.push_back(char(g.next()));
      for (uint64_t r = Below(g, 300); r--;) d.push_back(pat[r % pat.size()]);
      for (uint64_t r = Below(g, 20); r--;) d.push_back(char(g.next()));
    }
  }
  d.resize(n);
  return d;
}

// The edge cases, in order: lengths around the margin and the fragment, all-same and incompressible data.
std::vector<std::string> EdgeCases(simc::Prng& g) {
  const size_t F = 1 << 16;
  std::vector<std::string> v;
  for (size_t n : {0, 1, 2, 4, 14, 15, 16, 17, 31, 32, 33, 255, 256, 257})
    for (const char* k : {"random", "zeros", "runs"}) v.push_back(MakeData(g, k, n));
  for (size_t n : {F - 1, F, F + 1, F + 14, F + 15, F + 16, 2 * F, 3 * F + 100})
    for (const char* k : {"random", "zeros", "dbbench", "runs"}) v.push_back(MakeData(g, k, n));
  v.push_back(std::string(5000, 'a'));                     // all-same, not zero
  v.push_back(std::string(F, '\xff'));                     // a fragment of one byte value
  v.push_back(MakeData(g, "random", 4096) + std::string(4096, 'x'));  // incompressible, then a run
  std::string tail = MakeData(g, "dbbench", 4096);         // a match that runs to the block's end
  v.push_back(tail + tail);
  return v;
}

struct Result {
  std::string out;
  uint64_t statusBytes = 0;
  bool saves = false;
};

class Bench {
 public:
  Bench(uint64_t seed, double pin, double pout)
      : rng_(seed), src_(&rng_, kDataWords), sink_(&rng_, kSinkWords), lengthPause_(&rng_), statusPause_(&rng_) {
    src_.pause.set(pin);
    lengthPause_.set(pin);
    sink_.pause.set(pout);
    statusPause_.set(pout);
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
    // After reset the unit clears its hash table (2^14 clocks) before it takes a length.
    for (uint64_t t = 0; t < (1u << 16) && !top_.io_length_ready; t++) Tick();
  }

  // One block through the RTL; false on a hang (no status within `bound` clocks).
  bool Run(const std::string& data, Result* r, uint64_t* cycles, uint64_t bound) {
    src_.clear();
    sink_.clear();
    if (!data.empty()) src_.pushBytes(reinterpret_cast<const uint8_t*>(data.data()), data.size(), true);
    const int lastBeatBytes = data.empty() ? 0 : int((data.size() - 1) % W) + 1;
    bool lengthOffered = false, lengthTaken = false;
    for (uint64_t t = 0; t < bound; t++) {
      if (!lengthTaken && !lengthOffered && !lengthPause_()) lengthOffered = true;
      top_.io_length_valid = lengthOffered && !lengthTaken;
      top_.io_length_payload = uint32_t(data.size());
      top_.io_input_valid = src_.drive();
      if (src_.valid()) {
        putWords(top_.io_input_payload_fragment_data, src_.beat());
        top_.io_input_payload_fragment_count = src_.last() ? lastBeatBytes : W;
        top_.io_input_payload_last = src_.last();
      }
      top_.io_output_ready = sink_.drive();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      if (top_.io_length_valid && top_.io_length_ready) lengthTaken = true;
      if (top_.io_input_valid && top_.io_input_ready) src_.take();
      uint32_t w[kSinkWords];
      getWords(top_.io_output_payload_fragment_data, w);
      w[kDataWords] = top_.io_output_payload_fragment_count;
      sink_.sample(top_.io_output_valid, w, top_.io_output_payload_last);
      if (top_.io_status_valid && top_.io_status_ready) {
        r->statusBytes = top_.io_status_payload_bytes;
        r->saves = top_.io_status_payload_saves;
        Tick();
        *cycles = t + 1;
        Parse(r);
        if (src_.left() != 0) parseError = std::to_string(src_.left()) + " input beats not taken";
        return true;
      }
      Tick();
    }
    *cycles = bound;
    return false;
  }

  uint64_t violations() const { return sink_.violations; }
  std::string parseError;

 private:
  void Tick() {
    simc::tick(top_);
  }

  // Output beats back into bytes, checking the framing (entry_stream.h).
  void Parse(Result* r) {
    parseError = te_dv::ParseBytes<W>(sink_, &r->out);
    if (parseError.empty() && r->statusBytes != r->out.size()) parseError = "status bytes differ from the output";
  }

  VSnappyCompressor top_;
  simc::Prng rng_;
  simc::StreamSource src_;
  simc::StreamSink sink_;
  simc::Pause lengthPause_, statusPause_;
};

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("snappy_compressor_harness");
  uint64_t seed = 1, blocks = 100, maxLen = 1 << 16, fixedLen = 0;
  double pin = 0, pout = 0;
  std::string kind = "mixed", cases, table;
  bool edges = false, quiet = false, tamper = false;
  simc::Args args("snappy_compressor_harness [options]: the Snappy compressor against the engine's codec and "
                  "libsnappy");
  args.number("--seed", &seed, "PRNG seed (data, stalls)");
  args.number("--blocks", &blocks, "blocks to run");
  args.number("--max-len", &maxLen, "longest block in bytes", "N", uint64_t(0), kMaxBlock);
  args.number("--len", &fixedLen, "every block this long (0: random up to --max-len)", "N", uint64_t(0), kMaxBlock);
  args.text("--kind", &kind, "data: random | dbbench | leveldb (data blocks of db_bench entries) | zeros | runs | "
            "mixed", "KIND");
  args.flag("--edges", &edges, "the edge cases instead (empty, 1 byte, the margin, 64 KiB and past it, ...)");
  args.input("--cases", &cases, "blocks from a file instead (records: u32 length, bytes; e.g. Hypothesis-made)");
  args.input("--table", &table, "the blocks of this table file instead, index and data, decompressed (what the "
             "table writer compresses for it: timing of named jobs)");
  args.probability("--pin", &pin, "stall probability of the length and input streams", true);
  args.probability("--pout", &pout, "stall probability of the output and status streams", true);
  args.flag("--tamper", &tamper, "change a byte of the expected output (the comparison must fail)");
  args.flag("--quiet", &quiet, "no line per mismatch");
  args.parse(argc, argv);
  bool known = false;
  for (const char* k : kKinds) known = known || kind == k;
  if (!known) {
    std::fprintf(stderr, "snappy_compressor_harness: --kind must be random, dbbench, leveldb, zeros, runs or mixed, "
                 "not '%s'\n", kind.c_str());
    return 2;
  }

  simc::Prng gen(seed ^ 0x5eed);
  std::vector<std::string> edgeCases;
  if (edges) {
    edgeCases = EdgeCases(gen);
    blocks = edgeCases.size();
  }
  if (!cases.empty()) {
    edgeCases.clear();
    const std::vector<uint8_t> f = simc::readFile(cases, "--cases");
    for (size_t p = 0; p < f.size();) {
      const uint32_t n = p + 4 <= f.size() ? simc::le32(&f[p]) : 0;
      if (p + 4 > f.size() || f.size() - p - 4 < n || n > kMaxBlock) {
        std::fprintf(stderr, "snappy_compressor_harness: --cases %s: record at byte %zu %s\n", cases.c_str(), p,
                     n > kMaxBlock ? "is longer than the largest block" : "runs past the file");
        return 2;
      }
      edgeCases.emplace_back(reinterpret_cast<const char*>(&f[p + 4]), n);
      p += 4 + n;
    }
    edges = true;
    blocks = edgeCases.size();
  }
  if (!table.empty()) {
    edgeCases.clear();
    for (te_dv::TableBlock& b : te_dv::ReadTableBlocks(table, true)) edgeCases.push_back(std::move(b.contents));
    edges = true;
    blocks = edgeCases.size();
  }
  Bench bench(seed, pin, pout);
  uint64_t mismatches = 0, hangs = 0, libsnappyDiffers = 0, cycles = 0, bytesIn = 0, bytesOut = 0;
  for (uint64_t i = 0; i < blocks; i++) {
    std::string data;
    if (edges) {
      data = edgeCases[i];
    } else {
      const size_t n = fixedLen ? fixedLen : Below(gen, 4) == 0 ? Below(gen, 64) : Below(gen, maxLen + 1);
      data = MakeData(gen, kind, n);
      if (data.size() > kMaxBlock) data.resize(kMaxBlock);  // a LevelDB block made for the limit runs over
    }
    std::string want;
    te::snappy_codec::Compress(reinterpret_cast<const uint8_t*>(data.data()), data.size(), &want);
    std::string lib;
    snappy::Compress(data.data(), data.size(), &lib);
    if (lib != want) libsnappyDiffers++;
    if (tamper) want.back() ^= 1;
    const uint64_t bound = 20000 + 40 * (data.size() + want.size());
    Result r;
    uint64_t used = 0;
    if (!bench.Run(data, &r, &used, bound)) {
      hangs++;
      mismatches++;
      if (!quiet) std::printf("block %" PRIu64 " (%zu bytes): no status within %" PRIu64 " clocks\n", i, data.size(),
                              bound);
      break;  // the unit is stuck: later blocks would only time out too
    }
    std::string back;
    const bool decodes = snappy::Uncompress(r.out.data(), r.out.size(), &back) && back == data;
    const bool saves = r.out.size() < data.size() - data.size() / 8;
    if (r.out != want || !decodes || r.saves != saves || !bench.parseError.empty()) {
      mismatches++;
      if (!quiet) {
        std::printf("block %" PRIu64 " (%zu bytes): rtl %zu B, model %zu B%s%s %s\n", i, data.size(), r.out.size(),
                    want.size(), decodes ? "" : ", does not decode", r.saves != saves ? ", wrong `saves`" : "",
                    bench.parseError.c_str());
        for (size_t k = 0; k < std::min(r.out.size(), want.size()); k++)
          if (r.out[k] != want[k]) {
            std::printf("  first difference at output byte %zu\n", k);
            break;
          }
      }
    }
    cycles += used;
    bytesIn += data.size();
    bytesOut += r.out.size();
  }
  const bool fail = mismatches || hangs || bench.violations() || libsnappyDiffers;
  std::printf("blocks=%" PRIu64 " mismatches=%" PRIu64 " hangs=%" PRIu64 " violations=%" PRIu64
              " libsnappy_differs=%" PRIu64 " cycles=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
              " bytes_per_clock=%.3f\n", blocks, mismatches, hangs, bench.violations(), libsnappyDiffers, cycles,
              bytesIn, bytesOut, cycles ? double(bytesIn) / cycles : 0.0);
  return fail ? 1 : 0;
}
