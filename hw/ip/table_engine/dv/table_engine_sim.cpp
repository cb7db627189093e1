// The whole table engine's Verilated RTL as an object (table_engine_sim.h): the harness's testbench, shared with
// the host driver.
#include "table_engine_sim.h"

#include "VTableEngine.h"
#include "verilated.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "axi_mem.h"
#include "table_reader.h"
#include "tb.h"

namespace table_engine_sim {

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
#ifndef WAYS
#define WAYS 4
#endif
constexpr int W = BEAT_BYTES;
constexpr int K = WAYS;
// The walker's capacities: the build gives the generator and this harness the same (lsmc.build.table_engine_top).
#if !defined(WALKER_LEVELS) || !defined(WALKER_FILES) || !defined(WALKER_KEY_WORDS) || !defined(GRANDPARENTS)
#error "build with lsmc.build.table_engine_top: it defines the walker's capacities"
#endif
constexpr size_t kMaxLevels = WALKER_LEVELS, kMaxRanges = WALKER_FILES, kRangeWords = WALKER_KEY_WORDS,
                 kMaxGrandparents = GRANDPARENTS;
constexpr uint64_t kMemBase = 0x10000000;
using Strb = std::conditional_t<(W <= 8), CData, std::conditional_t<(W <= 16), SData, IData>>;

inline uint32_t* words(IData& s) { return &s; }
inline uint32_t* words(QData& s) { return reinterpret_cast<uint32_t*>(&s); }
template <std::size_t N>
inline uint32_t* words(VlWide<N>& s) { return s.data(); }
template <typename T>
void putBytes(T& s, const uint8_t* p, size_t n, size_t width) {
  uint32_t* w = words(s);
  for (size_t i = 0; i < width / 4; i++) w[i] = 0;
  for (size_t i = 0; i < n; i++) w[i / 4] |= uint32_t(p[i]) << (8 * (i % 4));
}

[[noreturn]] void Fail(te::ErrorCode code, const std::string& table, uint64_t offset, const std::string& msg) {
  throw te::EngineError(code, table, offset, msg);
}

struct TableRef {
  uint32_t base, size;
  bool last;
};

struct Load {  // one beat of the walker's load stream
  int target;
  uint32_t addr;
  std::vector<uint8_t> data;
};

struct OutRecord {
  uint32_t addr, size, entries, smallestAddr, largestAddr, smallestBytes, largestBytes;
};

[[noreturn]] void Refuse(const char* reason, const std::string& table, const std::string& msg) {
  throw Refused(reason, table, msg);
}

// The walker's load: each level's files' (smallest, largest) user keys word by word, their descriptors,
// the levels' first files and counts, and the level count (the final beat).
std::vector<Load> WalkerLoads(const te::CompactionSpec& s, const std::string& job) {
  std::vector<Load> loads;
  if (s.deeper_levels.size() > kMaxLevels)
    Refuse("limits", job, std::to_string(s.deeper_levels.size()) + " deeper levels: the engine's walker holds " +
         std::to_string(kMaxLevels));
  uint32_t word = 0, range = 0;
  auto keyWords = [&](const std::string& k) {
    uint32_t at = word;
    for (size_t p = 0; p < k.size() || (p == 0 && k.empty()); p += W) {
      size_t n = std::min<size_t>(W, k.size() - std::min(p, k.size()));
      Load l{0, word++, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
      std::memcpy(l.data.data(), k.data() + p, n);
      loads.push_back(std::move(l));
      if (k.empty()) break;
    }
    return at;
  };
  std::vector<std::pair<uint32_t, uint32_t>> levels;
  for (const auto& files : s.deeper_levels) {
    levels.push_back({range, uint32_t(files.size())});
    for (const auto& f : files) {
      if (f.smallest.size() > 0xffff || f.largest.size() > 0xffff)
        Refuse("limits", job, "a deeper level's key is over 65535 bytes");
      uint32_t so = keyWords(f.smallest), lo = keyWords(f.largest);
      uint64_t d = uint64_t(so) | uint64_t(f.smallest.size()) << 16 | uint64_t(lo) << 32 |
                   uint64_t(f.largest.size()) << 48;
      Load l{1, range++, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
      std::memcpy(l.data.data(), &d, 8);
      loads.push_back(std::move(l));
    }
  }
  if (range > kMaxRanges || word > kRangeWords)
    Refuse("limits", job, "the deeper levels' " + std::to_string(range) + " files (" +
         std::to_string(word * W) + " key bytes) exceed the walker's " + std::to_string(kMaxRanges) + " files / " +
         std::to_string(kRangeWords * W) + " bytes");
  for (size_t l = 0; l < levels.size(); l++) {
    uint64_t d = levels[l].first | uint64_t(levels[l].second) << 16;
    Load x{2, uint32_t(l), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(x.data.data(), &d, 8);
    loads.push_back(std::move(x));
  }
  // The grandparents' largest internal keys, sizes and tags (Compaction::ShouldStopBefore).
  if (s.grandparents.size() > kMaxGrandparents)
    Refuse("limits", job, std::to_string(s.grandparents.size()) + " grandparents: the walker holds " +
         std::to_string(kMaxGrandparents));
  for (size_t i = 0; i < s.grandparents.size(); i++) {
    const auto& g = s.grandparents[i];
    if (g.size > 0xffffffffull || g.largest.size() > 0xffff)
      Refuse("limits", job, "grandparents[" + std::to_string(i) + "]: size or key over the walker's fields");
    uint32_t off = keyWords(g.largest);
    uint64_t d = uint64_t(off) | uint64_t(g.largest.size()) << 16 | uint64_t(g.size) << 32;
    Load x{4, uint32_t(i), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(x.data.data(), &d, 8);
    loads.push_back(std::move(x));
    Load t{5, uint32_t(i), std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    std::memcpy(t.data.data(), g.largest.data() + g.largest.size() - 8, 8);
    loads.push_back(std::move(t));
  }
  if (word > kRangeWords)
    Refuse("limits", job, "the deeper levels' and grandparents' keys (" + std::to_string(word * W) +
         " bytes) exceed the walker's " + std::to_string(kRangeWords * W));
  {
    Load c{6, 0, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
    uint16_t n = uint16_t(s.grandparents.size());
    std::memcpy(c.data.data(), &n, 2);
    loads.push_back(std::move(c));
  }
  Load n{3, 0, std::vector<uint8_t>(W < 8 ? 8 : W, 0)};
  n.data[0] = uint8_t(levels.size());
  loads.push_back(std::move(n));
  return loads;
}

// A merge error names the run and the entry's index in it; the model names the table and the entry's offset.
void EntryWhere(const te::CompactionSpec& s, unsigned run, uint64_t entry, std::string* table, uint64_t* offset) {
  te::ReadStats stats;
  uint64_t n = 0;
  for (const auto& t : s.runs[run]) {
    *table = t.name;
    *offset = 0;
    try {
      te::TableReader r(&t, s.verify_checksums, &stats);
      while (r.Next()) {
        if (n++ == entry) {
          *offset = r.offset();
          return;
        }
      }
    } catch (const te::EngineError&) {
      return;
    }
  }
}

}  // namespace

int BeatBytes() { return W; }
int Ways() { return K; }

class Engine::Bench {
 public:
  Bench(const Options& o, uint64_t memBytes) : o_(o), rng_(o.seed), mem_(kMemBase, memBytes), pause_(&rng_) {
    pause_.set(o.stall);
    simc::AxiConfig cfg;
    cfg.readLatency = o.latency;
    cfg.stall = o.stall;
    cfg.seed = o.seed * 7 + 1;
    cfg.onlySize = W, cfg.onlyIncr = true, cfg.maxBeats = 16, cfg.aligned = true;
    typename simc::AxiSlave<Strb>::Pins r{}, w{};
    r.awValid = &dc_, r.awReady = &dc_, r.awId = &dc_, r.awLen = &dc_, r.awSize = &dc_, r.awBurst = &dc_;
    r.awAddr = &di_, r.wValid = &dc_, r.wReady = &dc_, r.wLast = &dc_, r.wData = dw_, r.wStrb = &ds_;
    r.bValid = &dc_, r.bReady = &dc_, r.bId = &dc_, r.bResp = &dc_;
    r.arValid = &top_.io_axiRead_ar_valid, r.arReady = &top_.io_axiRead_ar_ready;
    r.arId = &top_.io_axiRead_ar_payload_id, r.arLen = &top_.io_axiRead_ar_payload_len;
    r.arSize = &top_.io_axiRead_ar_payload_size, r.arBurst = &top_.io_axiRead_ar_payload_burst;
    r.arAddr = &top_.io_axiRead_ar_payload_addr;
    r.rValid = &top_.io_axiRead_r_valid, r.rReady = &top_.io_axiRead_r_ready, r.rId = &top_.io_axiRead_r_payload_id;
    r.rResp = &top_.io_axiRead_r_payload_resp, r.rLast = &top_.io_axiRead_r_payload_last;
    r.rData = words(top_.io_axiRead_r_payload_data);
    w.arValid = &dc_, w.arReady = &dc_, w.arId = &dc_, w.arLen = &dc_, w.arSize = &dc_, w.arBurst = &dc_;
    w.arAddr = &di_, w.rValid = &dc_, w.rReady = &dc_, w.rId = &dc_, w.rResp = &dc_, w.rLast = &dc_, w.rData = dw_;
    w.awValid = &top_.io_axiWrite_aw_valid, w.awReady = &top_.io_axiWrite_aw_ready;
    w.awId = &top_.io_axiWrite_aw_payload_id, w.awLen = &top_.io_axiWrite_aw_payload_len;
    w.awSize = &top_.io_axiWrite_aw_payload_size, w.awBurst = &top_.io_axiWrite_aw_payload_burst;
    w.awAddr = &top_.io_axiWrite_aw_payload_addr;
    w.wValid = &top_.io_axiWrite_w_valid, w.wReady = &top_.io_axiWrite_w_ready;
    w.wLast = &top_.io_axiWrite_w_payload_last, w.wData = words(top_.io_axiWrite_w_payload_data);
    w.wStrb = &top_.io_axiWrite_w_payload_strb;
    w.bValid = &top_.io_axiWrite_b_valid, w.bReady = &top_.io_axiWrite_b_ready;
    w.bId = &top_.io_axiWrite_b_payload_id, w.bResp = &top_.io_axiWrite_b_payload_resp;
    rd_ = std::make_unique<simc::AxiSlave<Strb>>("table_engine read", W, &mem_, r, cfg);
    cfg.seed = o.seed * 11 + 3;
    wr_ = std::make_unique<simc::AxiSlave<Strb>>("table_engine write", W, &mem_, w, cfg);
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  simc::Memory& mem() { return mem_; }
  void Resize(uint64_t bytes) {
    if (mem_.size() != bytes) mem_.remap(kMemBase, bytes);
  }
  uint64_t violations() const { return rd_->violations + wr_->violations; }

  // Runs the job; false when no status came within `bound` cycles.
  bool Run(const te::CompactionSpec& s, const std::vector<std::vector<TableRef>>& runs, const std::vector<Load>& loads,
           uint32_t outBase, uint32_t outBytes, uint64_t bound) {
    bool jobOn = true;
    out.clear();
    error = false;
    size_t loadPos = 0;
    std::vector<size_t> tablePos(K, 0);
    bool loadOn = false, tableOn[K] = {};
    for (uint64_t t = 0; t < bound; t++) {
      top_.io_job_valid = jobOn;
      top_.io_job_payload_runs = uint8_t(runs.size());
      top_.io_job_payload_verify = s.verify_checksums;
      top_.io_job_payload_smallestSnapshot = s.smallest_snapshot;
      top_.io_job_payload_blockSize = uint32_t(s.writer.block_size);
      top_.io_job_payload_restartInterval = uint16_t(s.writer.restart_interval);
      top_.io_job_payload_maxFileSize = uint32_t(s.max_file_size);
      top_.io_job_payload_outBase = outBase;
      top_.io_job_payload_outBytes = outBytes;
      top_.io_job_payload_snappy = s.writer.snappy;
      top_.io_job_payload_bloomBitsPerKey = uint8_t(s.writer.bloom_bits_per_key);
      if (!jobOn && !loadOn && loadPos < loads.size() && !pause_()) loadOn = true;
      top_.io_baseLoad_valid = loadOn;
      if (loadOn) {
        const Load& l = loads[loadPos];
        top_.io_baseLoad_payload_fragment_target = uint8_t(l.target);
        top_.io_baseLoad_payload_fragment_addr = uint16_t(l.addr);
        putBytes(top_.io_baseLoad_payload_fragment_data, l.data.data(), l.data.size(), W < 8 ? 8 : W);
        top_.io_baseLoad_payload_last = loadPos + 1 == loads.size();
      }
      for (int i = 0; i < K; i++) {
        if (!tableOn[i] && i < int(runs.size()) && tablePos[i] < runs[i].size() && !jobOn && !pause_())
          tableOn[i] = true;
        const TableRef* tr = tableOn[i] ? &runs[i][tablePos[i]] : nullptr;
        SetTable(i, tableOn[i], tr ? tr->base : 0, tr ? tr->size : 0, tr ? tr->last : false);
      }
      bool outReady = !pause_(), statusReady = !pause_();
      top_.io_outTables_ready = outReady;
      top_.io_status_ready = statusReady;
      rd_->drive(cycle_);
      wr_->drive(cycle_);
      top_.eval();
      rd_->edge(cycle_);
      wr_->edge(cycle_);
      if (jobOn && top_.io_job_ready) jobOn = false, start_ = cycle_;
      if (loadOn && top_.io_baseLoad_ready) loadOn = false, loadPos++;
      for (int i = 0; i < K; i++)
        if (tableOn[i] && TableReady(i)) tableOn[i] = false, tablePos[i]++;
      if (top_.io_outTables_valid && outReady)
        out.push_back({top_.io_outTables_payload_addr, top_.io_outTables_payload_size,
                       top_.io_outTables_payload_entries, top_.io_outTables_payload_smallestAddr,
                       top_.io_outTables_payload_largestAddr, top_.io_outTables_payload_smallestBytes,
                       top_.io_outTables_payload_largestBytes});
      if (top_.io_status_valid && statusReady) {
        error = top_.io_status_payload_error;
        code = top_.io_status_payload_code;
        unit = top_.io_status_payload_unit;
        run = top_.io_status_payload_run;
        table = top_.io_status_payload_table;
        offset = top_.io_status_payload_offset;
        entry = top_.io_status_payload_entry;
        entriesIn = top_.io_status_payload_entriesIn;
        entriesOut = top_.io_status_payload_entriesOut;
        dropped = top_.io_status_payload_dropped;
        tablesOut = top_.io_status_payload_tablesOut;
        bytesOut = top_.io_status_payload_bytesOut;
        cycles = cycle_ - start_ + 1;
        Tick();
        return true;
      }
      Tick();
    }
    return false;
  }

  std::vector<OutRecord> out;
  bool error = false;
  unsigned code = 0, unit = 0, run = 0;
  uint64_t table = 0, offset = 0, entry = 0, entriesIn = 0, entriesOut = 0, dropped = 0, tablesOut = 0, bytesOut = 0;
  uint64_t cycles = 0;

 private:
  void Tick() {
    top_.clk = 1;
    top_.eval();
    top_.clk = 0;
    top_.eval();
    cycle_++;
  }
#define TE_TABLE(i)                                                  \
  case i:                                                            \
    top_.io_tables_##i##_valid = v, top_.io_tables_##i##_payload_base = base; \
    top_.io_tables_##i##_payload_size = size, top_.io_tables_##i##_payload_last = last; \
    return;
#define TE_READY(i) \
  case i: return top_.io_tables_##i##_ready;
  void SetTable(int i, bool v, uint32_t base, uint32_t size, bool last) {
    switch (i) {
      TE_TABLE(0) TE_TABLE(1)
#if WAYS > 2
      TE_TABLE(2) TE_TABLE(3)
#endif
#if WAYS > 4
      TE_TABLE(4) TE_TABLE(5) TE_TABLE(6) TE_TABLE(7)
#endif
    }
  }
  bool TableReady(int i) {
    switch (i) {
      TE_READY(0) TE_READY(1)
#if WAYS > 2
      TE_READY(2) TE_READY(3)
#endif
#if WAYS > 4
      TE_READY(4) TE_READY(5) TE_READY(6) TE_READY(7)
#endif
    }
    return false;
  }

  Options o_;
  simc::Prng rng_;
  simc::Memory mem_;
  simc::Pause pause_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();  // the engine's own
  VTableEngine top_{ctx_.get(), "TOP"};
  std::unique_ptr<simc::AxiSlave<Strb>> rd_, wr_;
  CData dc_ = 0;
  IData di_ = 0;
  Strb ds_ = 0;
  uint32_t dw_[16] = {};
  uint64_t cycle_ = 0, start_ = 0;
};


// A job made ready to run: checked against what the RTL does, laid out in memory.
class Prepared {
 public:
  const te::CompactionSpec* spec = nullptr;
  std::string name;
  std::vector<Load> loads;
  std::vector<std::vector<TableRef>> runs;
  std::vector<std::pair<uint64_t, const te::TableImage*>> place;
  uint64_t bytesIn = 0, outOff = 0, outBytes = 0, maxCycles = 0;
};

void CheckOptions(const te::CompactionSpec& s, const std::string& path) {
  if (s.writer.bloom_bits_per_key > 255)
    Refuse("filter", path, "options.bloom_bits_per_key is " + std::to_string(s.writer.bloom_bits_per_key) +
           ": the engine's job register holds 0 to 255");
  if (s.max_file_size > 0xffffffffull)
    Refuse("limits", path, "options.max_file_size is over the engine's 32-bit register");
}

void PreparedDelete::operator()(Prepared* p) const { delete p; }

PreparedJob Prepare(const te::CompactionSpec& s, const std::string& path, const Options& o, uint64_t outputBuffer) {
  PreparedJob p(new Prepared);
  p->spec = &s;
  p->name = path;
  // What this engine does not do yet: refused before anything runs.
  if (s.runs.size() > size_t(K))
    Refuse("ways", path, std::to_string(s.runs.size()) + " runs: this engine merges " + std::to_string(K) +
           " (more runs cascade, not in the RTL yet)");
  CheckOptions(s, path);
  p->loads = WalkerLoads(s, path);

  // Memory: the input tables (each at an address that is not a multiple of the beat), then the output buffer.
  uint64_t at = 0x1000;
  simc::Prng rng(o.seed);
  for (const auto& run : s.runs) {
    p->runs.emplace_back();
    for (size_t i = 0; i < run.size(); i++) {
      at += 1 + rng.next() % (W - 1);
      if (run[i].bytes.size() > 0xffffffffull) Refuse("limits", run[i].name, "table over 4 GiB");
      p->place.push_back({at, &run[i]});
      p->runs.back().push_back({uint32_t(kMemBase + at), uint32_t(run[i].bytes.size()), i + 1 == run.size()});
      at += run[i].bytes.size();
      p->bytesIn += run[i].bytes.size();
    }
  }
  p->outOff = (at + 4095) & ~uint64_t(4095);
  p->outBytes = outputBuffer ? outputBuffer : 2 * p->bytesIn + (1u << 20);
  if (kMemBase + p->outOff + p->outBytes > 0xffffffffull)
    Refuse("limits", path, "the job's tables and output buffer pass the engine's 32-bit addresses");
  p->maxCycles = o.maxCycles ? o.maxCycles : 200 * p->bytesIn + 2000000;
  return p;
}

uint64_t MemoryBytes(const Prepared& p) { return p.outOff + p.outBytes; }

Engine::Engine(const Options& o, uint64_t memBytes) : bench_(std::make_unique<Bench>(o, memBytes)) {}
Engine::~Engine() = default;

void Engine::Resize(uint64_t memBytes) { bench_->Resize(memBytes); }
uint64_t Engine::violations() const { return bench_->violations(); }

bool Engine::Start(const Prepared& p) {
  Bench& bench = *bench_;
  for (const auto& x : p.place) std::memcpy(bench.mem().at(kMemBase + x.first), x.second->bytes.data(), x.second->bytes.size());
  std::memset(bench.mem().at(kMemBase + p.outOff), 0, p.outBytes);
  return bench.Run(*p.spec, p.runs, p.loads, uint32_t(kMemBase + p.outOff), uint32_t(p.outBytes), p.maxCycles);
}

Outcome Engine::Collect(const Prepared& p, const std::string& outDir) {
  Bench& bench = *bench_;
  const te::CompactionSpec& s = *p.spec;
  if (bench.violations())
    Fail(te::ErrorCode::kBadJob, p.name, 0, std::to_string(bench.violations()) + " AXI protocol violations");
  if (bench.error) {
    te::ErrorCode code = te::ErrorCode(bench.code);
    std::string unitName[] = {"reader", "merge", "writer", "output"};
    std::string where = p.name;
    uint64_t off = 0;
    if (bench.unit == 0 && bench.run < s.runs.size() && bench.table < s.runs[bench.run].size()) {
      where = s.runs[bench.run][bench.table].name;
      off = bench.offset;
    } else if (bench.unit == 1 && bench.run < s.runs.size()) {
      EntryWhere(s, bench.run, bench.entry, &where, &off);
    } else if (bench.unit == 3) {
      where = outDir + "/" + te::TableFileName(s.first_file_number + bench.table);
      off = bench.offset;
    }
    Fail(code, where, off, "the engine's " + unitName[bench.unit & 3] + " stopped the job (run " +
         std::to_string(bench.run) + ", entry " + std::to_string(bench.entry) + ")");
  }
  if (bench.out.size() != bench.tablesOut)
    Fail(te::ErrorCode::kBadJob, p.name, 0, "the engine reported " + std::to_string(bench.tablesOut) + " tables and " +
         std::to_string(bench.out.size()) + " table records");

  Outcome o;
  te::CompactionResult& res = o.result;
  o.cycles = bench.cycles;
  res.entries_in = bench.entriesIn;
  res.entries_out = bench.entriesOut;
  res.dropped = bench.dropped;
  res.bytes_in = p.bytesIn;
  for (size_t i = 0; i < bench.out.size(); i++) {
    const OutRecord& r = bench.out[i];
    te::OutputTable t;
    t.number = s.first_file_number + i;
    t.file = te::TableFileName(t.number);
    t.bytes.assign(reinterpret_cast<const char*>(bench.mem().at(r.addr)), r.size);
    t.smallest.assign(reinterpret_cast<const char*>(bench.mem().at(r.smallestAddr)), r.smallestBytes);
    t.largest.assign(reinterpret_cast<const char*>(bench.mem().at(r.largestAddr)), r.largestBytes);
    t.entries = r.entries;
    res.bytes_out += r.size;
    res.tables.push_back(std::move(t));
  }
  return o;
}

Outcome Engine::Run(const Prepared& p, const std::string& outDir) {
  if (!Start(p)) Fail(te::ErrorCode::kBadJob, p.name, 0, "hang: the job gave no status");
  return Collect(p, outDir);
}

}  // namespace table_engine_sim
