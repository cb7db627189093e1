// Verilator harness of the table engine's Snappy decompressor (top `SnappyDecompressor`,
// hw/ip/table_engine/rtl), differential against Debian's libsnappy and the engine's C++ codec
// (model/snappy_codec): data (random bytes, db_bench-like compressible values, short-period runs) of
// 0..64 KiB and a little over is compressed by libsnappy, optionally mutated (bytes changed, cut,
// extended), and decompressed by the RTL with random stalls on every stream; the output must equal the
// data and libsnappy's, or the error (code and offset) the model's Decompress gives with the RTL's limit.
//
// Prints one summary line (`blocks=... mismatches=... hangs=... bytes_per_clock=...`); exit status 0 all
// agree, 1 a mismatch, a hang (no status within the cycle bound) or a stream-rule violation, 2 bad usage.
#include "VSnappyDecompressor.h"
#include "verilated.h"

#include <snappy.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "args.h"
#include "error.h"
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
#ifndef HISTORY_BYTES
#define HISTORY_BYTES 65536
#endif
constexpr int W = BEAT_BYTES;
constexpr size_t kHistory = HISTORY_BYTES;
constexpr int kDataWords = W / 4;
constexpr int kSinkWords = kDataWords + 1;  // data, count

inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
using simc::putWords;

struct Outcome {
  bool error = false;
  int code = 0;
  uint64_t offset = 0;
  std::string out;
};

struct Options {
  uint64_t seed = 1, blocks = 100, maxLen = kHistory, fixedLen = 0;
  double pin = 0, pout = 0, mutate = 0, softReset = 0;
  std::string kind = "mixed", cases, dump, table;
  bool quiet = false, tamper = false;
};

using te_dv::Below;

using te_dv::DbBenchValue;
using te_dv::LevelDbBlock;

// The data to compress: `kind` random | dbbench | runs | leveldb | mixed (one of them at random).
std::string MakeData(simc::Prng& g, const std::string& kind, size_t n) {
  std::string k = kind;
  if (k == "mixed") k = (const char*[]){"random", "dbbench", "leveldb", "runs"}[Below(g, 4)];
  if (k == "leveldb") return LevelDbBlock(g, n);
  std::string d;
  while (d.size() < n) {
    if (k == "random") {
      d.push_back(char(g.next()));
    } else if (k == "dbbench") {  // db_bench's values back to back
      d += DbBenchValue(g);
    } else {  // runs of a short pattern (copies with offsets below the beat width), between random bytes
      std::string pat;
      for (uint64_t i = 0, p = 1 + Below(g, 2 * W); i < p; i++) pat.push_back(char(g.next()));
      for (uint64_t r = Below(g, 300); r--;) d.push_back(pat[r % pat.size()]);
      for (uint64_t r = Below(g, 20); r--;) d.push_back(char(g.next()));
    }
  }
  d.resize(n);
  return d;
}

void Mutate(simc::Prng& g, std::string* s) {
  switch (Below(g, 4)) {
    case 0:  // bytes changed
      for (uint64_t i = 1 + Below(g, 3); i-- && !s->empty();) (*s)[Below(g, s->size())] = char(g.next());
      break;
    case 1:  // cut
      s->resize(Below(g, s->size() + 1));
      break;
    case 2:  // extended
      for (uint64_t i = 1 + Below(g, 8); i--;) s->push_back(char(g.next()));
      break;
    default:  // the preamble or an early tag changed
      if (!s->empty()) (*s)[Below(g, std::min<size_t>(s->size(), 8))] ^= char(1 << Below(g, 8));
  }
}

Outcome ModelDecompress(const std::string& in) {
  Outcome o;
  size_t at = 0;
  const char* why = nullptr;
  if (!te::snappy_codec::Decompress(reinterpret_cast<const uint8_t*>(in.data()), in.size(), kHistory, &o.out, &at,
                                    &why)) {
    o.error = true;
    o.code = int(te::ErrorCode::kBadSnappy);
    o.offset = at;
    o.out.clear();
  }
  return o;
}

class Bench {
 public:
  explicit Bench(const Options& o)
      : rng_(o.seed), src_(&rng_, kDataWords), sink_(&rng_, kSinkWords), statusPause_(&rng_) {
    src_.pause.set(o.pin);
    sink_.pause.set(o.pout);
    statusPause_.set(o.pout);
    top_.reset = 1;
    top_.io_softReset = 0;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // Runs one block through the RTL; false on a hang (no status within `bound` clocks).
  bool Run(const std::string& in, Outcome* rtl, uint64_t* cycles, uint64_t bound) {
    src_.clear();
    sink_.clear();
    if (in.empty()) {
      uint32_t zero[kDataWords] = {};
      src_.push(zero, true);
    } else {
      src_.pushBytes(reinterpret_cast<const uint8_t*>(in.data()), in.size(), true);
    }
    const int lastBeatBytes = in.empty() ? 0 : int((in.size() - 1) % W) + 1;
    for (uint64_t t = 0; t < bound; t++) {
      top_.io_input_valid = src_.drive();
      if (src_.valid()) {
        putWords(top_.io_input_payload_fragment_data, src_.beat());
        top_.io_input_payload_fragment_count = src_.last() ? lastBeatBytes : W;
        top_.io_input_payload_last = src_.last();
      }
      top_.io_output_ready = sink_.drive();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      if (top_.io_input_valid && top_.io_input_ready) src_.take();
      uint32_t w[kSinkWords];
      getWords(top_.io_output_payload_fragment_data, w);
      w[kDataWords] = top_.io_output_payload_fragment_count;
      sink_.sample(top_.io_output_valid, w, top_.io_output_payload_last);
      if (top_.io_status_valid && top_.io_status_ready) {
        rtl->error = top_.io_status_payload_error;
        rtl->code = top_.io_status_payload_code;
        rtl->offset = top_.io_status_payload_offset;
        statusBytes_ = top_.io_status_payload_bytes;
        Tick();
        *cycles = t + 1;
        if (rtl->error) SoftReset();  // an error halts the unit until a soft reset
        return Parse(rtl);
      }
      Tick();
    }
    *cycles = bound;
    SoftReset();
    return false;
  }

  void SoftReset() {
    top_.io_softReset = 1;
    top_.io_input_valid = 0;
    Tick();
    top_.io_softReset = 0;
    src_.clear();
    sink_.dropPending();
  }

  uint64_t violations() const { return sink_.violations; }
  std::string parseError;

 private:
  void Tick() {
    simc::tick(top_);
  }

  // Output beats back into bytes, checking the framing (entry_stream.h); a stream an error stopped may end
  // without `last`.
  bool Parse(Outcome* o) {
    parseError = te_dv::ParseBytes<W>(sink_, &o->out, o->error, true);
    if (parseError.empty() && !o->error && statusBytes_ != o->out.size())
      parseError = "status bytes differ from the output";
    return true;
  }

  VSnappyDecompressor top_;
  simc::Prng rng_;
  simc::StreamSource src_;
  simc::StreamSink sink_;
  simc::Pause statusPause_;
  uint64_t statusBytes_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("snappy_harness");
  Options o;
  simc::Args args("snappy_harness [options]: the Snappy decompressor against libsnappy and the engine's codec");
  args.number("--seed", &o.seed, "PRNG seed (data, mutations, stalls)");
  args.number("--blocks", &o.blocks, "blocks to run");
  args.number("--max-len", &o.maxLen, "longest data in bytes (above the history: an error expected)", "N",
              uint64_t(0), uint64_t(1) << 20);
  args.number("--len", &o.fixedLen, "every block's data this long (0: random up to --max-len)", "N", uint64_t(0),
              uint64_t(1) << 20);
  args.text("--kind", &o.kind, "data: random | dbbench | runs | leveldb (data blocks of db_bench entries) | mixed",
            "KIND");
  args.probability("--pin", &o.pin, "stall probability of the input stream", true);
  args.probability("--pout", &o.pout, "stall probability of the output and status streams", true);
  args.probability("--mutate", &o.mutate, "fraction of compressed blocks mutated");
  args.probability("--soft-reset", &o.softReset, "fraction of blocks first interrupted by a soft reset");
  args.input("--cases", &o.cases, "compressed blocks from a file instead (u32 length, bytes; e.g. Hypothesis-made)");
  args.input("--table", &o.table, "the Snappy blocks of this table file instead, index and data (timing of named jobs)");
  args.output("--dump", &o.dump, "write the compressed blocks made (before mutation) as a --cases file");
  args.flag("--tamper", &o.tamper, "change a byte of the expected output (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);
  if (o.kind != "random" && o.kind != "dbbench" && o.kind != "runs" && o.kind != "leveldb" && o.kind != "mixed") {
    std::fprintf(stderr, "snappy_harness: --kind must be random, dbbench, runs, leveldb or mixed, not '%s'\n",
                 o.kind.c_str());
    return 2;
  }

  std::vector<std::string> cases;
  if (!o.cases.empty()) {
    const std::vector<uint8_t> f = simc::readFile(o.cases, "--cases");
    for (size_t p = 0; p < f.size();) {
      const uint32_t n = p + 4 <= f.size() ? simc::le32(&f[p]) : 0;
      if (p + 4 > f.size() || f.size() - p - 4 < n) {
        std::fprintf(stderr, "snappy_harness: --cases %s: record at byte %zu runs past the file\n", o.cases.c_str(), p);
        return 2;
      }
      cases.emplace_back(reinterpret_cast<const char*>(&f[p + 4]), n);
      p += 4 + n;
    }
    o.blocks = cases.size();
  }
  // --table: (stored, decoded) of each Snappy block, as the engine's read path meets them.
  std::vector<std::pair<std::string, std::string>> tableBlocks;
  if (!o.table.empty()) {
    for (te_dv::TableBlock& b : te_dv::ReadTableBlocks(o.table, true))
      if (b.type == te::kSnappyBlock) tableBlocks.emplace_back(std::move(b.stored), std::move(b.contents));
    o.blocks = tableBlocks.size();
  }
  simc::Prng gen(o.seed ^ 0x5eed);
  Bench bench(o);
  uint64_t mismatches = 0, okBlocks = 0, errBlocks = 0, hangs = 0, libsnappyDiffers = 0, codecDiffers = 0;
  uint64_t cleanCycles = 0, cleanOut = 0, cleanIn = 0;
  std::string dumped;
  for (uint64_t i = 0; i < o.blocks; i++) {
    size_t n = o.fixedLen ? o.fixedLen : Below(gen, 4) == 0 ? Below(gen, 64) : Below(gen, o.maxLen + 1);
    if (!o.fixedLen && i % 50 == 7) n = std::min<uint64_t>(o.maxLen, kHistory);  // the limit itself
    const std::string data = tableBlocks.empty() ? MakeData(gen, o.kind, n) : tableBlocks[i].second;
    std::string in;
    snappy::Compress(data.data(), data.size(), &in);
    std::string mine;  // the model's compressor (libsnappy 1.1.9's choices): the same bytes
    te::snappy_codec::Compress(reinterpret_cast<const uint8_t*>(data.data()), data.size(), &mine);
    if (mine != in) codecDiffers++;
    if (!o.dump.empty()) {
      uint8_t len[4];
      simc::putLe32(len, uint32_t(in.size()));
      dumped.append(reinterpret_cast<const char*>(len), 4).append(in);
    }
    const bool mutated = !cases.empty() || gen.chance(o.mutate);
    if (!cases.empty()) in = cases[i];
    if (!tableBlocks.empty()) in = tableBlocks[i].first;
    if (mutated) Mutate(gen, &in);
    Outcome want = ModelDecompress(in);
    std::string lib;
    const bool libOk = snappy::Uncompress(in.data(), in.size(), &lib);
    if (!mutated && (want.error != (data.size() > kHistory) || (!want.error && want.out != data))) codecDiffers++;
    if (!want.error && (!libOk || lib != want.out)) libsnappyDiffers++;
    if (want.error && libOk && lib.size() <= kHistory) libsnappyDiffers++;
    if (o.tamper && !want.out.empty()) want.out.back() ^= 1;
    const uint64_t bound = 2000 + 40 * (in.size() + std::min<uint64_t>(want.out.size(), kHistory));
    if (gen.chance(o.softReset)) {
      Outcome ignored;
      uint64_t used;
      bench.Run(in, &ignored, &used, 1 + Below(gen, 200));
      bench.SoftReset();
    }
    Outcome rtl;
    uint64_t cycles = 0;
    if (!bench.Run(in, &rtl, &cycles, bound)) {
      hangs++;
      mismatches++;
      if (!o.quiet) std::printf("block %" PRIu64 ": no status within %" PRIu64 " clocks\n", i, bound);
      continue;
    }
    bool same = rtl.error == want.error && (want.error ? rtl.code == want.code && rtl.offset == want.offset
                                                        : rtl.out == want.out) && bench.parseError.empty();
    if (!same) {
      mismatches++;
      if (!o.quiet)
        std::printf("block %" PRIu64 " (%zu bytes in%s): rtl %s code %d offset %" PRIu64 " out %zu B, model %s code "
                    "%d offset %" PRIu64 " out %zu B %s\n", i, in.size(), mutated ? ", mutated" : "",
                    rtl.error ? "error" : "ok", rtl.code, rtl.offset, rtl.out.size(), want.error ? "error" : "ok",
                    want.code, want.offset, want.out.size(), bench.parseError.c_str());
      if (!o.quiet && !rtl.error && !want.error)
        for (size_t k = 0; k < std::min(rtl.out.size(), want.out.size()); k++)
          if (rtl.out[k] != want.out[k]) {
            std::printf("  first difference at output byte %zu\n", k);
            break;
          }
    }
    if (want.error) {
      errBlocks++;
    } else {
      okBlocks++;
      cleanCycles += cycles;
      cleanOut += want.out.size();
      cleanIn += in.size();
    }
  }
  if (!o.dump.empty()) {
    FILE* f = std::fopen(o.dump.c_str(), "wb");
    if (!f || std::fwrite(dumped.data(), 1, dumped.size(), f) != dumped.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "snappy_harness: --dump %s: cannot write\n", o.dump.c_str());
      return 2;
    }
  }
  const bool fail = mismatches || hangs || bench.violations() || libsnappyDiffers || codecDiffers;
  std::printf("blocks=%" PRIu64 " ok=%" PRIu64 " errors=%" PRIu64 " mismatches=%" PRIu64 " hangs=%" PRIu64
              " violations=%" PRIu64 " libsnappy_differs=%" PRIu64 " codec_differs=%" PRIu64 " cycles=%" PRIu64
              " bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " bytes_per_clock=%.3f\n",
              o.blocks, okBlocks, errBlocks, mismatches, hangs, bench.violations(), libsnappyDiffers, codecDiffers,
              cleanCycles, cleanIn, cleanOut, cleanCycles ? double(cleanOut) / cleanCycles : 0.0);
  return fail ? 1 : 0;
}
