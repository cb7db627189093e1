// The whole table engine's Verilated RTL as an object (table_engine_sim.h): the harness's testbench, shared with
// the host driver.
#include "table_engine_sim.h"

#include "VTableEngine.h"
#include "verilated.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "axi_mem.h"
#include "cycle_model.h"
#include "engine_axi.h"
#include "internal_key.h"
#include "table_reader.h"
#include "tb.h"
#include "walker_loads.h"

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
#if !defined(WALKER_LEVELS) || !defined(WALKER_FILES) || !defined(WALKER_KEY_WORDS) || !defined(GRANDPARENTS) || \
    !defined(MAX_BLOCKS)
#error "build with lsmc.build.table_engine_top: it defines the walker's capacities and the reader's blocks"
#endif
const WalkerLimits kWalkerLimits{WALKER_LEVELS, WALKER_FILES, WALKER_KEY_WORDS, GRANDPARENTS};
constexpr uint64_t kMaxBlocks = MAX_BLOCKS;  // data blocks of one input table (the table reader's handle RAM)
constexpr uint64_t kWriterIndexBytes = 1 << 16;  // one table's index block (rtl/TableWriter.scala, indexBytes)
constexpr uint64_t kMemBase = 0x10000000;
using Strb = std::conditional_t<(W <= 8), CData, std::conditional_t<(W <= 16), SData, IData>>;

using te_dv::words;
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
  uint32_t first = 0, end = 0;  // the window of data blocks read (a sub-compaction part's); 0, 0: the whole table
};

struct OutRecord {
  uint32_t addr, size, entries, smallestAddr, largestAddr, smallestBytes, largestBytes;
};

[[noreturn]] void Refuse(const char* reason, const std::string& table, const std::string& msg) {
  throw Refused(reason, table, msg);
}

// Data blocks of a table as its index lists them; 0 when its footer or index block is malformed (the engine names
// that itself, at the byte it stops).
uint64_t DataBlocks(const te::TableImage& t) {
  try {
    const te::BlockHandle h = te::ReadFooter(t);
    std::string scratch;
    te::BlockReadStats stats;
    const std::string_view index = te::ReadBlock(t, h, false, &scratch, &stats);
    te::BlockReader entries;
    entries.Start(index, &t.name, h.offset, !scratch.empty(), te::kMaxInternalKeyBytes);
    uint64_t n = 0;
    while (entries.Next()) n++;
    return n;
  } catch (const te::EngineError&) {
    return 0;
  }
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

// A merge that stopped in a run of temporary tables (`temp`, from the engine's memory) at its entry `entry` on an
// internal key it met twice: the model names the entry of the second run (in run order) that holds it. False
// when fewer than two runs hold that key (then the temporary table itself is wrong).
bool DuplicateWhere(const te::CompactionSpec& s, simc::Memory& mem, const std::vector<TableRef>& temp,
                    uint64_t entry, std::string* table, uint64_t* offset) {
  std::string key;
  te::ReadStats stats;
  uint64_t n = 0;
  try {
    for (const TableRef& t : temp) {
      te::TableImage image{"temporary", std::string_view(reinterpret_cast<const char*>(mem.at(t.base)), t.size)};
      te::TableReader r(&image, false, &stats);
      while (key.empty() && r.Next())
        if (n++ == entry) key = std::string(r.key());
    }
  } catch (const te::EngineError&) {
    return false;
  }
  if (key.size() < 8) return false;
  int holders = 0;
  for (const auto& run : s.runs) {
    bool held = false;
    for (const auto& t : run) {
      try {
        te::TableReader r(&t, false, &stats);
        while (!held && r.Next())
          if (r.key() == key) {
            held = true;
            if (++holders == 2) {
              *table = t.name;
              *offset = r.offset();
              return true;
            }
          }
      } catch (const te::EngineError&) {
      }
      if (held) break;
    }
  }
  return false;
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
    const auto r = te_dv::ReadPortPins<Strb>(top_, idle_), w = te_dv::WritePortPins<Strb>(top_, idle_);
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

  uint32_t spillBase = 0, spillBytes = 0;  // the index spill region every job gets

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
      top_.io_job_payload_spillBase = spillBase;
      top_.io_job_payload_spillBytes = spillBytes;
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
        SetTable(i, tableOn[i], tr ? tr->base : 0, tr ? tr->size : 0, tr ? tr->last : false, tr ? tr->first : 0,
                 tr ? tr->end : 0);
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

  // The passes of the job run so far (a cascade's; one pass otherwise): where it stopped and what the
  // intermediate passes did (their temporary tables, the entries they read and dropped, their clocks).
  struct Cascade {
    size_t pass = 0;
    std::vector<std::vector<TableRef>> temps;  // each pass's temporary table (none: it had no entries)
    uint64_t cycles = 0, entriesIn = 0, tempEntries = 0, dropped = 0;
    std::string fault;  // an intermediate pass that did not write one table or dropped an entry
  } cascade;

  std::vector<OutRecord> out;
  bool error = false;
  unsigned code = 0, unit = 0, run = 0;
  uint64_t table = 0, offset = 0, entry = 0, entriesIn = 0, entriesOut = 0, dropped = 0, tablesOut = 0, bytesOut = 0;
  uint64_t cycles = 0;

 private:
  void Tick() {
    simc::tick(top_);
    cycle_++;
  }
#define TE_TABLE(i)                                                  \
  case i:                                                            \
    top_.io_tables_##i##_valid = v, top_.io_tables_##i##_payload_base = base; \
    top_.io_tables_##i##_payload_size = size, top_.io_tables_##i##_payload_last = last; \
    top_.io_tables_##i##_payload_firstBlock = first, top_.io_tables_##i##_payload_endBlock = end; \
    return;
#define TE_READY(i) \
  case i: return top_.io_tables_##i##_ready;
  void SetTable(int i, bool v, uint32_t base, uint32_t size, bool last, uint32_t first, uint32_t end) {
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
  te_dv::IdleAxi<Strb> idle_;  // the read port's write half and the write port's read half
  uint64_t cycle_ = 0, start_ = 0;
};


// A job made ready to run: checked against what the RTL does, laid out in memory.
// More runs than ways: the cascade's passes (cycle_model::CascadePlan), each a job of its own on the engine.
struct Pass {
  std::vector<int> inputs;     // run numbers, or -1 - the pass whose temporary table it is
  te::CompactionSpec options;  // an intermediate pass's (no runs: the inputs say what it reads)
  std::vector<Load> loads;     // an intermediate pass's walker load (nothing deeper, no grandparents)
  uint64_t outOff = 0, outBytes = 0;  // its temporary table's buffer
};

class Prepared {
 public:
  const te::CompactionSpec* spec = nullptr;
  std::string name;
  std::vector<Load> loads;
  std::vector<std::vector<TableRef>> runs;
  std::vector<std::pair<uint64_t, const te::TableImage*>> place;
  uint64_t bytesIn = 0, outOff = 0, outBytes = 0, maxCycles = 0, memEnd = 0;
  uint64_t spillOff = 0, spillBytes = 0;  // the index spill region (every pass's)
  std::vector<Pass> passes;  // every pass but the final one (the job's own, with spec's options); empty: K runs or fewer
  std::vector<int> finalInputs;  // the final pass's inputs (the job's runs in order when there is no cascade)
};

void CheckOptions(const te::CompactionSpec& s, const std::string& path) {
  if (s.writer.bloom_bits_per_key > 255)
    Refuse("filter", path, "options.bloom_bits_per_key is " + std::to_string(s.writer.bloom_bits_per_key) +
           ": the engine's job register holds 0 to 255");
  if (s.max_file_size > 0xffffffffull)
    Refuse("limits", path, "options.max_file_size is over the engine's 32-bit register");
}

void PreparedDelete::operator()(Prepared* p) const { delete p; }

namespace {

// What a cascade needs to know of one run: the bytes its entries can take as raw tables at most, whatever their
// blocks and prefixes (per entry its key and value, three varints, a restart offset, and, were it alone in its
// block, the block's trailer and an index entry, its key written behind its table twice; the footers), and its
// longest key. Read by the model's table reader (a driver would bound it from the tables' sizes and Snappy's
// expansion); a table the reader stops on counts twice its bytes and a block more (the engine stops on it too).
struct RunScan {
  uint64_t bound = 65536;
  size_t maxKey = 8;
};

RunScan ScanRun(const std::vector<te::TableImage>& run, const std::string& path) {
  RunScan scan;
  te::ReadStats stats;
  for (const auto& t : run) {
    uint64_t entries = 0, bytes = 0;
    try {
      te::TableReader r(&t, false, &stats);
      while (r.Next()) {
        const std::string_view k = r.key();
        entries++;
        bytes += 4 * k.size() + r.value().size();
        scan.maxKey = std::max(scan.maxKey, k.size());
        // A deletion marker at sequence 0 would be dropped by an intermediate pass (snapshot 0, base level for
        // every key): LevelDB never writes one (its sequences start at 1).
        if (k.size() >= 8 && (te::Tag(k) >> 8) == 0 && (te::Tag(k) & 0xff) == te::kTypeDeletion)
          Refuse("ways", path, t.name + ": a deletion marker at sequence 0 in a job with more runs than the "
                 "engine's " + std::to_string(K) + " ways (a cascade's intermediate pass would drop it)");
      }
    } catch (const Refused&) {
      throw;
    } catch (const te::EngineError&) {
      bytes += 2 * t.bytes.size() + te::kMaxBlockBytes;
      scan.maxKey = te::kMaxInternalKeyBytes;
    }
    scan.bound += bytes + 64 * entries;
  }
  return scan;
}

// More runs than ways: every pass but the final one merges its inputs into a run of temporary tables of raw blocks
// behind the output buffer, dropping nothing (smallest_snapshot 0, no deeper levels: every entry is either visible
// or hidden by one at sequence 0, which LevelDB never writes) and closing a table only where it would outgrow what
// the engine reads back (no grandparents, no filter, no compression; max_file_size keeps a table's data blocks
// within the reader's handle RAM and its index block within the writer's index buffer for the longest key).
void PlanCascade(const te::CompactionSpec& s, const std::string& path, Prepared* p, const Part* part) {
  std::vector<std::vector<int>> plan = table_engine::cycle_model::CascadePlan(s.runs.size(), K);
  plan.pop_back();  // the final pass: the job itself
  std::vector<RunScan> runScan, tempScan;
  for (const auto& run : s.runs) runScan.push_back(ScanRun(run, path));
  uint64_t at = (p->memEnd + 4095) & ~uint64_t(4095);
  for (const auto& inputs : plan) {
    Pass x;
    x.inputs = inputs;
    RunScan scan;
    scan.bound = 0;
    for (int i : inputs) {
      const RunScan& in = i >= 0 ? runScan[size_t(i)] : tempScan[size_t(-1 - i)];
      scan.bound += in.bound;
      scan.maxKey = std::max(scan.maxKey, in.maxKey);
    }
    tempScan.push_back(scan);
    // An index entry as the writer counts it: the key, its three varints (at most 1 + 2 + 1), a handle (two
    // varints of at most 10) and its restart offset.
    const uint64_t blocks = std::min<uint64_t>(kMaxBlocks, (kWriterIndexBytes - 64) / (scan.maxKey + 28));
    if (blocks < 3) Refuse("limits", path, "a cascade's temporary table would hold under 3 data blocks");
    x.options.writer = s.writer;
    x.options.writer.snappy = false;
    x.options.writer.bloom_bits_per_key = 0;
    x.options.max_file_size = std::min<uint64_t>(0xffffffffull, (blocks - 2) * s.writer.block_size);
    x.options.verify_checksums = s.verify_checksums;
    x.options.smallest_snapshot = 0;
    x.loads = WalkerLoads(x.options, path, W, kWalkerLimits, part);  // a part's passes keep only its keys too
    x.outOff = at;
    x.outBytes = scan.bound;
    at = (at + x.outBytes + 4095) & ~uint64_t(4095);
    if (x.outBytes > 0xffffffffull) Refuse("limits", path, "a cascade's temporary tables would pass 4 GiB");
    p->passes.push_back(std::move(x));
  }
  p->memEnd = at;
  p->finalInputs = table_engine::cycle_model::CascadePlan(s.runs.size(), K).back();
}

}  // namespace

PreparedJob Prepare(const te::CompactionSpec& s, const std::string& path, const Options& o, uint64_t outputBuffer,
                    const Part* part) {
  PreparedJob p(new Prepared);
  p->spec = &s;
  p->name = path;
  // What this engine does not do yet: refused before anything runs.
  CheckOptions(s, path);
  p->loads = WalkerLoads(s, path, W, kWalkerLimits, part);
  if (part != nullptr && part->windows.size() != s.runs.size())
    Refuse("limits", path, "the part gives windows for " + std::to_string(part->windows.size()) + " runs, the job has " +
           std::to_string(s.runs.size()));

  // Memory: the input tables (each at an address that is not a multiple of the beat), then the output buffer.
  uint64_t at = 0x1000;
  simc::Prng rng(o.seed);
  for (size_t r = 0; r < s.runs.size(); r++) {
    const auto& run = s.runs[r];
    p->runs.emplace_back();
    if (part != nullptr && part->windows[r].size() != run.size())
      Refuse("limits", path, "the part's run " + std::to_string(r) + " gives " + std::to_string(part->windows[r].size()) +
             " windows for " + std::to_string(run.size()) + " tables");
    for (size_t i = 0; i < run.size(); i++) {
      at += 1 + rng.next() % (W - 1);
      if (run[i].bytes.size() > 0xffffffffull) Refuse("limits", run[i].name, "table over 4 GiB");
      // The reader keeps every data block's handle of a table (MAX_BLOCKS of them) and stops a longer index with
      // BAD_JOB, which a caller could not tell from a fault: refused first, by name (LevelDB's hook: rtl-limits).
      if (const uint64_t blocks = DataBlocks(run[i]); blocks > kMaxBlocks)
        Refuse("limits", run[i].name, std::to_string(blocks) + " data blocks; the engine's table reader holds " +
               std::to_string(kMaxBlocks) + " handles");
      p->place.push_back({at, &run[i]});
      p->runs.back().push_back({uint32_t(kMemBase + at), uint32_t(run[i].bytes.size()), i + 1 == run.size()});
      if (part != nullptr) p->runs.back().back().first = part->windows[r][i].first, p->runs.back().back().end = part->windows[r][i].second;
      at += run[i].bytes.size();
      p->bytesIn += run[i].bytes.size();
    }
  }
  p->outOff = (at + 4095) & ~uint64_t(4095);
  p->outBytes = outputBuffer ? outputBuffer : 2 * p->bytesIn + (1u << 20);
  p->memEnd = p->outOff + p->outBytes;
  for (size_t i = 0; i < s.runs.size(); i++) p->finalInputs.push_back(int(i));
  if (s.runs.size() > size_t(K)) PlanCascade(s, path, p.get(), part);
  p->spillOff = (p->memEnd + 4095) & ~uint64_t(4095);  // the index spill region after the buffers
  p->spillBytes = DefaultSpillBytes(p->outBytes, s.max_file_size);
  p->memEnd = p->spillOff + p->spillBytes;
  if (kMemBase + p->memEnd > 0xffffffffull)
    Refuse("limits", path, "the job's tables, output buffer and temporary tables pass the engine's 32-bit addresses");
  p->maxCycles = o.maxCycles ? o.maxCycles : 200 * p->bytesIn + 2000000;
  return p;
}

uint64_t MemoryBytes(const Prepared& p) { return p.memEnd; }

Engine::Engine(const Options& o, uint64_t memBytes) : bench_(std::make_unique<Bench>(o, memBytes)) {}
Engine::~Engine() = default;

void Engine::Resize(uint64_t memBytes) { bench_->Resize(memBytes); }
uint64_t Engine::violations() const { return bench_->violations(); }

bool Engine::Start(const Prepared& p) {
  Bench& bench = *bench_;
  for (const auto& x : p.place) std::memcpy(bench.mem().at(kMemBase + x.first), x.second->bytes.data(), x.second->bytes.size());
  std::memset(bench.mem().at(kMemBase + p.outOff), 0, p.outBytes);
  for (const auto& x : p.passes) std::memset(bench.mem().at(kMemBase + x.outOff), 0, x.outBytes);
  bench.spillBase = uint32_t(kMemBase + p.spillOff);
  bench.spillBytes = uint32_t(p.spillBytes);
  Bench::Cascade& c = bench.cascade;
  c = Bench::Cascade{};
  // Each pass a job of its own; the temporary tables stay where the engine wrote them and are read from there.
  for (size_t j = 0; j <= p.passes.size(); j++) {
    const bool final = j == p.passes.size();
    const std::vector<int>& inputs = final ? p.finalInputs : p.passes[j].inputs;
    std::vector<std::vector<TableRef>> runs;
    for (int i : inputs) runs.push_back(i >= 0 ? p.runs[size_t(i)] : c.temps[size_t(-1 - i)]);
    c.pass = j;
    const bool status =
        final ? bench.Run(*p.spec, runs, p.loads, uint32_t(kMemBase + p.outOff), uint32_t(p.outBytes), p.maxCycles)
              : bench.Run(p.passes[j].options, runs, p.passes[j].loads, uint32_t(kMemBase + p.passes[j].outOff),
                          uint32_t(p.passes[j].outBytes), p.maxCycles);
    if (!status) return false;
    c.cycles += bench.cycles;
    if (final || bench.error || bench.violations()) return true;
    c.entriesIn += bench.entriesIn;
    c.dropped += bench.dropped;
    if (bench.out.size() != bench.tablesOut || bench.dropped != 0) {
      c.fault = "cascade pass " + std::to_string(j + 1) + " reported " + std::to_string(bench.tablesOut) +
                " temporary tables, wrote " + std::to_string(bench.out.size()) + " and dropped " +
                std::to_string(bench.dropped) + " entries: an engine fault (a pass drops none)";
      return true;
    }
    c.temps.emplace_back();
    for (size_t i = 0; i < bench.out.size(); i++) {
      c.tempEntries += bench.out[i].entries;
      c.temps.back().push_back({bench.out[i].addr, bench.out[i].size, i + 1 == bench.out.size()});
    }
  }
  return true;
}

Outcome Engine::Collect(const Prepared& p, const std::string& outDir) {
  Bench& bench = *bench_;
  const te::CompactionSpec& s = *p.spec;
  if (bench.violations())
    Fail(te::ErrorCode::kBadJob, p.name, 0, std::to_string(bench.violations()) + " AXI protocol violations");
  const Bench::Cascade& c = bench.cascade;
  if (!c.fault.empty()) Fail(te::ErrorCode::kBadJob, p.name, 0, c.fault);
  if (bench.error) {
    te::ErrorCode code = te::ErrorCode(bench.code);
    std::string unitName[] = {"reader", "merge", "writer", "output"};
    const std::string unit = unitName[bench.unit & 3];
    // The pass's way -> the job's run (or a temporary table); the model names the job's tables.
    const bool final = c.pass == p.passes.size();
    const std::vector<int>& inputs = final ? p.finalInputs : p.passes[c.pass].inputs;
    const bool known = bench.run < inputs.size();
    const int src = known ? inputs[bench.run] : 0;
    const unsigned run = known && src >= 0 ? unsigned(src) : bench.run;
    std::string where = p.name;
    uint64_t off = 0;
    std::string cascade;
    if (!p.passes.empty())
      cascade = "; cascade pass " + std::to_string(c.pass + 1) + " of " + std::to_string(p.passes.size() + 1);
    auto tempFault = [&](size_t temp, uint64_t at) {
      Fail(code, p.name + ":temporary-table-" + std::to_string(temp + 1), at,
           "the engine's " + unit + " stopped on the temporary table cascade pass " + std::to_string(temp + 1) +
           " wrote" + cascade + ": an engine fault, not the input's (the engine writes and reads it alone)");
    };
    if (known && src < 0 && bench.unit <= 1) {
      const size_t temp = size_t(-1 - src);
      // Two runs holding the very same internal key meet only here when one of them went through a temporary
      // table: the model names the later run's entry.
      if (bench.unit != 1 || code != te::ErrorCode::kKeyOrder || !DuplicateWhere(s, bench.mem(), c.temps[temp],
                                                                                  bench.entry, &where, &off))
        tempFault(temp, bench.unit == 0 ? bench.offset : 0);
    } else if (bench.unit == 0 && known && run < s.runs.size() && bench.table < s.runs[run].size()) {
      where = s.runs[run][bench.table].name;
      off = bench.offset;
      const TableRef& t = p.runs[run][bench.table];
      if (code == te::ErrorCode::kBadJob && (t.first != 0 || t.end != 0))
        Fail(code, where, off, "the engine's reader refused the table's block window [" + std::to_string(t.first) +
             ", " + (t.end ? std::to_string(t.end) : "end") + "): past its index or its first block above its end "
             "(run " + std::to_string(run) + ")");
    } else if (bench.unit == 1 && known && run < s.runs.size()) {
      EntryWhere(s, run, bench.entry, &where, &off);
    } else if (bench.unit == 3 && !final) {
      tempFault(c.pass, bench.offset);
    } else if (bench.unit == 3) {
      where = outDir + "/" + te::TableFileName(s.first_file_number + bench.table);
      off = bench.offset;
    }
    const std::string way = known && src < 0 ? "the temporary run of cascade pass " + std::to_string(-src)
                                             : "run " + std::to_string(run);
    Fail(code, where, off, "the engine's " + unit + " stopped the job (" + way + ", entry " +
         std::to_string(bench.entry) + cascade + ")");
  }
  if (bench.out.size() != bench.tablesOut)
    Fail(te::ErrorCode::kBadJob, p.name, 0, "the engine reported " + std::to_string(bench.tablesOut) + " tables and " +
         std::to_string(bench.out.size()) + " table records");

  Outcome o;
  te::CompactionResult& res = o.result;
  // A cascade: the passes' clocks added; each temporary table's entries read twice, counted once.
  o.cycles = c.cycles;
  res.entries_in = c.entriesIn + bench.entriesIn - c.tempEntries;
  res.entries_out = bench.entriesOut;
  res.dropped = c.dropped + bench.dropped;
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
