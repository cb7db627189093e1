// Verilator harness of a table-engine unit (top `TableEngineUnit`, hw/ip/table_engine/rtl/TableEngineUnit.scala: the
// engine behind its register front end): runs one job folder as the engine's own harness does, but as the CPU of a
// SoC would. The job.json is parsed by the model's LoadJob; the input tables, each run's table list (TE_TABLE), the
// walker's load (TE_LOAD records, the beats of walker_loads.h), the descriptor (TE_DESC of te_job.h), the result
// area and the output buffer are laid out in a simulated AXI4 memory (sim/common/axi_mem.h: protocol checks,
// optional random stalls on every channel); the harness writes DESC_ADDR, IRQ_ENABLE and CTRL.GO over APB, waits for
// the interrupt, reads STATUS and the counters (te_regs.h), and copies the output tables the TE_OUT records name into
// OUT_DIR with a result.json in the model's format.
//
//   VTableEngineUnit JOB.json OUT_DIR [--stall P] [--latency N] [--seed S] [--output-buffer BYTES]
//                    [--result-bytes BYTES] [--spill-bytes BYTES] [--desc WORD=VALUE]... [--max-cycles N] [--twice]
//
// --spill-bytes sets the index spill region (a multiple of 16; 0: none; default: the output buffer or max_file_size
// and 8 MiB, whichever is less). --desc overrides a descriptor word after the layout (a malformed descriptor); --twice
// runs the job, then a soft reset, then the job again on the same unit (the second's outcome is reported). Last
// stdout line: `cycles=C bytes_in=N bytes_out=N tables_out=T` (C: the unit's CYCLES, GO to status), the line before
// it `engine_cycles=E`. An error: one line `error=CODE table=PATH offset=N message` on stderr, exit 1, nothing written.
//
// --base ADDR --image FILE lays the job out as the SoC's DDR image from ADDR for tables.elf (lsmc.sim.tables.soc_job);
// --collect DUMP --counts ... writes OUT_DIR from the memory after the run. With --parts P both lay out the host's
// plan instead (tables.elf SIM_ARG PARTS_HOST, fw/include/job_abi.json PARTS_HEAD): the model's PlanSubcompactions,
// a descriptor a part as fw/apps/tables/parts.c would write it, the parts head at ADDR.
#include "VTableEngineUnit.h"
#include "verilated.h"

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "axi_mem.h"
#include "compaction.h"
#include "engine_axi.h"
#include "error.h"
#include "job.h"
#include "lsmc_job.h"
#include "subcompaction.h"
#include "table_engine_sim.h"
#include "tb.h"
#include "te_job.h"
#include "te_parts.h"
#include "te_regs.h"
#include "walker_loads.h"

namespace te = table_engine;
namespace sim = table_engine_sim;

namespace {

#if !defined(WALKER_LEVELS) || !defined(WALKER_FILES) || !defined(WALKER_KEY_WORDS) || !defined(GRANDPARENTS)
#error "build with lsmc.build.table_engine_unit: it defines the walker's capacities"
#endif
constexpr int W = 16;
// Where the job's memory starts: the simulated memory's base, or with --image the SoC's DDR address the host loads
// the image at.
uint64_t kMemBase = 0x10000000;

[[noreturn]] void Fail(te::ErrorCode code, const std::string& table, uint64_t offset, const std::string& msg) {
  throw te::EngineError(code, table, offset, msg);
}

struct Options {
  std::string job, out;
  double stall = 0;
  unsigned latency = 20;
  uint64_t seed = 1, outputBuffer = 0, resultBytes = 0, maxCycles = 0;
  int64_t spillBytes = -1;  // --spill-bytes; -1: the default region (Place)
  std::map<unsigned, uint32_t> desc;
  bool twice = false;
  uint64_t parts = 0;  // --parts P (>= 2, with --image / --collect): the host's plan laid out for tables.elf PARTS_HOST
  std::string image, collect, counts;  // --image FILE / --collect DUMP --counts ...: the SoC back end's two halves
};

bool ParseUint(const char* s, uint64_t* v) {
  if (*s == '\0' || *s == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

void WriteFile(const std::string& path, const uint8_t* p, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(p, 1, n, f) == n;
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) Fail(te::ErrorCode::kBadJob, path, 0, std::string("cannot write: ") + std::strerror(errno));
}

uint64_t Align(uint64_t a, uint64_t n) { return (a + n - 1) / n * n; }

// The job in memory: where the harness put each part.
struct Layout {
  uint64_t desc, result, resultBytes, loads, out, outBytes, end, bytesIn = 0;
  uint64_t spill = 0, spillBytes = 0, memEnd = 0;  // the index spill region, after the output buffer; memory's end
  std::vector<std::vector<uint64_t>> tables;  // per run, each table's address
};

// --parts: a part's structures in the image (its descriptor, result area, walker load, table lists, bound keys).
struct PartPlace {
  uint64_t desc = 0, result = 0, loads = 0, lo = 0, hi = 0;
  std::vector<uint64_t> lists;  // per window
  std::vector<sim::Load> load;
};

class Unit {
 public:
  Unit(const Options& o, uint64_t memBytes) : rng_(o.seed), mem_(kMemBase, memBytes) {
    simc::AxiConfig cfg;
    cfg.readLatency = o.latency;
    cfg.stall = o.stall;
    cfg.seed = o.seed * 7 + 1;
    cfg.onlySize = W, cfg.onlyIncr = true, cfg.maxBeats = 16, cfg.aligned = true;
    const auto r = te_dv::ReadPortPins<SData>(top_, idle_), w = te_dv::WritePortPins<SData>(top_, idle_);
    rd_ = std::make_unique<simc::AxiSlave<SData>>("unit read", W, &mem_, r, cfg);
    cfg.seed = o.seed * 11 + 3;
    wr_ = std::make_unique<simc::AxiSlave<SData>>("unit write", W, &mem_, w, cfg);
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }
  simc::Memory& mem() { return mem_; }
  uint64_t violations() const { return rd_->violations + wr_->violations; }
  uint64_t cycle() const { return cycle_; }

  // One APB access (setup, then access until PREADY); a PSLVERROR is a harness failure.
  uint32_t Apb(uint32_t addr, bool write, uint32_t data = 0) {
    top_.io_apb_PADDR = addr;
    top_.io_apb_PSEL = 1;
    top_.io_apb_PENABLE = 0;
    top_.io_apb_PWRITE = write;
    top_.io_apb_PWDATA = data;
    Step();
    top_.io_apb_PENABLE = 1;
    for (int i = 0; i < 64; i++) {
      top_.eval();
      if (top_.io_apb_PREADY) {
        uint32_t v = top_.io_apb_PRDATA;
        bool err = top_.io_apb_PSLVERROR;
        Step();
        top_.io_apb_PSEL = 0;
        top_.io_apb_PENABLE = 0;
        if (err) Fail(te::ErrorCode::kBadJob, "apb", addr, "APB slave error");
        return v;
      }
      Step();
    }
    Fail(te::ErrorCode::kBadJob, "apb", addr, "APB access without PREADY");
  }
  // Clocks until the interrupt, at most `bound`; false without it.
  bool WaitIrq(uint64_t bound) {
    for (uint64_t t = 0; t < bound; t++) {
      if (top_.io_irq) return true;
      Step();
    }
    return false;
  }

 private:
  void Step() {
    rd_->drive(cycle_);
    wr_->drive(cycle_);
    top_.eval();
    rd_->edge(cycle_);
    wr_->edge(cycle_);
    Tick();
  }
  void Tick() {
    simc::tick(top_);
    cycle_++;
  }
  simc::Prng rng_;
  simc::Memory mem_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  VTableEngineUnit top_{ctx_.get(), "TOP"};
  std::unique_ptr<simc::AxiSlave<SData>> rd_, wr_;
  te_dv::IdleAxi<SData> idle_;  // the read port's write half and the write port's read half
  uint64_t cycle_ = 0;
};

void Put32(simc::Memory& m, uint64_t a, uint32_t v) { std::memcpy(m.at(a), &v, 4); }
uint32_t Get32(simc::Memory& m, uint64_t a) {
  uint32_t v;
  std::memcpy(&v, m.at(a), 4);
  return v;
}

// Lays the job out from kMemBase: descriptor, result area, walker load, table lists, tables (each at an address
// that is not a multiple of the beat), output buffer.
Layout Place(const te::CompactionSpec& s, const std::string& path, const Options& o, std::vector<uint8_t>* image) {
  // Snappy output and a filter block go into the descriptor as asked: the front end refuses them while the engine
  // lacks them (BAD_JOB naming the word).
  if (s.max_file_size > 0xffffffffull)
    Fail(te::ErrorCode::kBadJob, path, 0, "options.max_file_size is over the descriptor's 32-bit word");
  if (s.runs.size() > size_t(TE_DESC_TABLES_COUNT - TE_DESC_TABLES_ADDR))
    Fail(te::ErrorCode::kBadJob, path, 0, std::to_string(s.runs.size()) + " runs: a descriptor names at most 8");
  std::vector<sim::Load> loads = sim::WalkerLoads(s, path, W, {WALKER_LEVELS, WALKER_FILES, WALKER_KEY_WORDS, GRANDPARENTS});
  Layout L;
  uint64_t at = 0;  // the descriptor first (the SoC's firmware finds it at DDR_HOST_BASE); --parts: the parts head
  const size_t P = size_t(o.parts);
  te::SubcompactionPlan plan;
  if (P >= 2) {
    // The host plans as the model does: the same choices as the firmware's te_plan (tests/test_te_plan.py).
    plan = te::PlanSubcompactions(s, int(P));
    at = Align(4 * (PARTS_HEAD_NWORDS + PARTS_PART_NWORDS * P), TE_DESC_ALIGN);
  }
  L.desc = at;
  at += Align(4 * TE_DESC_NWORDS, TE_DESC_ALIGN);
  L.result = at;
  L.resultBytes = o.resultBytes ? o.resultBytes : 4 * TE_OUT_NWORDS * 1024;
  at = Align(at + L.resultBytes, TE_LOAD_ALIGN);
  L.loads = at;
  at += 4 * TE_LOAD_NWORDS * loads.size();
  std::vector<uint64_t> lists;
  for (const auto& run : s.runs) {
    at = Align(at, TE_TABLE_ALIGN);
    lists.push_back(at);
    at += 4 * TE_TABLE_NWORDS * run.size();
  }
  // --parts: each part's descriptor, result area, walker load (the job's with the part's bounds), its windows' table
  // lists and its bound keys, as fw/apps/tables/parts.c lays them out for its own plan
  std::vector<PartPlace> pp(P >= 2 ? P : 0);
  for (size_t j = 0; j < pp.size(); j++) {
    const te::PartPlan& part = plan.parts[j];
    if (part.windows.empty()) continue;  // an empty part: not dispatched
    sim::Part bounds;
    bounds.hasLo = part.has_lo, bounds.lo = part.lo, bounds.hasHi = part.has_hi, bounds.hi = part.hi;
    pp[j].load = sim::WalkerLoads(s, path, W, {WALKER_LEVELS, WALKER_FILES, WALKER_KEY_WORDS, GRANDPARENTS}, &bounds);
    at = Align(at, TE_DESC_ALIGN);
    pp[j].desc = at;
    at += 4 * TE_DESC_NWORDS;
    at = Align(at, TE_OUT_ALIGN);
    pp[j].result = at;
    at += L.resultBytes;
    at = Align(at, TE_LOAD_ALIGN);
    pp[j].loads = at;
    at += 4 * TE_LOAD_NWORDS * pp[j].load.size();
    for (const te::RunWindow& w : part.windows) {
      at = Align(at, TE_TABLE_ALIGN);
      pp[j].lists.push_back(at);
      at += 4 * TE_TABLE_NWORDS * (w.last_table - w.first_table + 1);
    }
    pp[j].lo = at;
    at += part.lo.size();
    pp[j].hi = at;
    at += part.hi.size();
  }
  simc::Prng rng(o.seed);
  for (const auto& run : s.runs) {
    L.tables.emplace_back();
    for (const auto& t : run) {
      at += 1 + rng.next() % (W - 1);
      if (t.bytes.size() > 0xffffffffull) Fail(te::ErrorCode::kBadJob, t.name, 0, "table over 4 GiB");
      L.tables.back().push_back(at);
      at += t.bytes.size();
      L.bytesIn += t.bytes.size();
    }
  }
  L.out = Align(at, 4096);
  L.outBytes = o.outputBuffer ? o.outputBuffer : 2 * L.bytesIn + (1u << 20);
  L.end = L.out + L.outBytes;
  // The index spill region after the output buffer, the engine harness's default unless --spill-bytes; not in the
  // dump (--collect).
  L.spill = (L.end + 4095) & ~uint64_t(4095);
  L.spillBytes = o.spillBytes >= 0 ? uint64_t(o.spillBytes)
                                   : table_engine_sim::DefaultSpillBytes(L.outBytes, s.max_file_size);
  L.memEnd = L.spill + L.spillBytes;
  if (kMemBase + L.memEnd > 0xffffffffull) Fail(te::ErrorCode::kBadJob, path, 0, "the job passes 32-bit addresses");

  image->assign(L.out, 0);  // everything below the output buffer
  auto put = [&](uint64_t off, uint32_t v) { std::memcpy(image->data() + off, &v, 4); };
  uint32_t d[TE_DESC_NWORDS] = {};
  d[TE_DESC_MAGIC] = TE_MAGIC;
  d[TE_DESC_VERSION] = TE_VERSION;
  d[TE_DESC_RUNS] = uint32_t(s.runs.size());
  d[TE_DESC_FLAGS] = (s.verify_checksums ? TE_F_VERIFY : 0) | (s.writer.snappy ? TE_F_SNAPPY : 0);
  d[TE_DESC_BLOOM_BITS_PER_KEY] = uint32_t(s.writer.bloom_bits_per_key);
  d[TE_DESC_SNAPSHOT_LO] = uint32_t(s.smallest_snapshot);
  d[TE_DESC_SNAPSHOT_HI] = uint32_t(s.smallest_snapshot >> 32);
  d[TE_DESC_BLOCK_SIZE] = uint32_t(s.writer.block_size);
  d[TE_DESC_RESTART_INTERVAL] = uint32_t(s.writer.restart_interval);
  d[TE_DESC_MAX_FILE_SIZE] = uint32_t(s.max_file_size);
  d[TE_DESC_OUT_BASE] = uint32_t(kMemBase + L.out);
  d[TE_DESC_OUT_BYTES] = uint32_t(L.outBytes);
  d[TE_DESC_RESULT_ADDR] = uint32_t(kMemBase + L.result);
  d[TE_DESC_RESULT_BYTES] = uint32_t(L.resultBytes);
  d[TE_DESC_LOADS_ADDR] = uint32_t(kMemBase + L.loads);
  d[TE_DESC_LOADS_COUNT] = uint32_t(loads.size());
  d[TE_DESC_SPILL_BASE] = L.spillBytes ? uint32_t(kMemBase + L.spill) : 0;
  d[TE_DESC_SPILL_BYTES] = uint32_t(L.spillBytes);
  for (size_t r = 0; r < s.runs.size(); r++) {
    d[TE_DESC_TABLES_ADDR + r] = uint32_t(kMemBase + lists[r]);
    d[TE_DESC_TABLES_COUNT + r] = uint32_t(s.runs[r].size());
    for (size_t i = 0; i < s.runs[r].size(); i++) {
      uint64_t rec = lists[r] + 4 * TE_TABLE_NWORDS * i;
      put(rec + 4 * TE_TABLE_BASE, uint32_t(kMemBase + L.tables[r][i]));
      put(rec + 4 * TE_TABLE_SIZE, uint32_t(s.runs[r][i].bytes.size()));
      std::memcpy(image->data() + L.tables[r][i], s.runs[r][i].bytes.data(), s.runs[r][i].bytes.size());
    }
  }
  for (const auto& [word, v] : o.desc) {
    if (word >= TE_DESC_NWORDS) Fail(te::ErrorCode::kBadJob, path, 0, "--desc: word " + std::to_string(word) + " past the descriptor");
    d[word] = v;
  }
  std::memcpy(image->data() + L.desc, d, sizeof d);
  auto putLoads = [&](uint64_t at, const std::vector<sim::Load>& ls) {
    for (size_t i = 0; i < ls.size(); i++) {
      uint64_t rec = at + 4 * TE_LOAD_NWORDS * i;
      put(rec + 4 * TE_LOAD_TARGET, uint32_t(ls[i].target));
      put(rec + 4 * TE_LOAD_ADDR, ls[i].addr);
      std::memcpy(image->data() + rec + 4 * TE_LOAD_DATA, ls[i].data.data(), std::min<size_t>(W, ls[i].data.size()));
    }
  };
  putLoads(L.loads, loads);
  if (P < 2) return L;

  // The parts head and each part's descriptor: the job's with the part's windows, load, result area and its shares of
  // the output buffer and the index spill region (fw/lib/te_parts.h, the firmware's own rule).
  put(4 * PARTS_HEAD_MAGIC, PARTS_MAGIC);
  put(4 * PARTS_HEAD_VERSION, PARTS_VERSION);
  put(4 * PARTS_HEAD_PARTS, uint32_t(P));
  put(4 * PARTS_HEAD_JOB, uint32_t(kMemBase + L.desc));
  uint64_t partSum = 0, outAt = L.out;
  for (const te::PartPlan& part : plan.parts)
    if (!part.windows.empty()) partSum += te_part_weight(part.bytes);
  for (size_t j = 0; j < P; j++) {
    const te::PartPlan& part = plan.parts[j];
    const uint64_t rec = 4 * (PARTS_HEAD_NWORDS + PARTS_PART_NWORDS * j);
    put(rec + 4 * PARTS_PART_DESC, pp[j].desc ? uint32_t(kMemBase + pp[j].desc) : 0);
    put(rec + 4 * PARTS_PART_LO_ADDR, part.has_lo ? uint32_t(kMemBase + pp[j].lo) : 0);
    put(rec + 4 * PARTS_PART_LO_LEN, part.has_lo ? uint32_t(part.lo.size()) : PARTS_NO_BOUND);
    put(rec + 4 * PARTS_PART_HI_ADDR, part.has_hi ? uint32_t(kMemBase + pp[j].hi) : 0);
    put(rec + 4 * PARTS_PART_HI_LEN, part.has_hi ? uint32_t(part.hi.size()) : PARTS_NO_BOUND);
    if (!pp[j].desc) continue;
    std::memcpy(image->data() + pp[j].lo, part.lo.data(), part.lo.size());
    std::memcpy(image->data() + pp[j].hi, part.hi.data(), part.hi.size());
    uint32_t pd[TE_DESC_NWORDS];
    std::memcpy(pd, d, sizeof pd);
    for (unsigned w = TE_DESC_TABLES_ADDR; w < TE_DESC_TABLES_COUNT + 8; w++) pd[w] = 0;
    pd[TE_DESC_RUNS] = uint32_t(part.windows.size());
    for (size_t i = 0; i < part.windows.size(); i++) {
      const te::RunWindow& w = part.windows[i];
      pd[TE_DESC_TABLES_ADDR + i] = uint32_t(kMemBase + pp[j].lists[i]);
      pd[TE_DESC_TABLES_COUNT + i] = uint32_t(w.last_table - w.first_table + 1);
      for (size_t t = w.first_table; t <= w.last_table; t++) {
        const uint64_t tr = pp[j].lists[i] + 4 * TE_TABLE_NWORDS * (t - w.first_table);
        put(tr + 4 * TE_TABLE_BASE, uint32_t(kMemBase + L.tables[w.run][t]));
        put(tr + 4 * TE_TABLE_SIZE, uint32_t(s.runs[w.run][t].bytes.size()));
        put(tr + 4 * TE_TABLE_FIRST_BLOCK, t == w.first_table ? uint32_t(w.first_block) : 0);
        put(tr + 4 * TE_TABLE_END_BLOCK, t == w.last_table && w.last_block != UINT64_MAX ? uint32_t(w.last_block + 1) : 0);
      }
    }
    pd[TE_DESC_RESULT_ADDR] = uint32_t(kMemBase + pp[j].result);
    pd[TE_DESC_LOADS_ADDR] = uint32_t(kMemBase + pp[j].loads);
    pd[TE_DESC_LOADS_COUNT] = uint32_t(pp[j].load.size());
    pd[TE_DESC_OUT_BASE] = uint32_t(kMemBase + outAt);
    pd[TE_DESC_OUT_BYTES] = te_part_out_bytes(d[TE_DESC_OUT_BYTES], part.bytes, partSum);
    outAt += pd[TE_DESC_OUT_BYTES];
    pd[TE_DESC_SPILL_BYTES] = te_part_spill_bytes(d[TE_DESC_SPILL_BYTES], uint32_t(P));
    pd[TE_DESC_SPILL_BASE] = pd[TE_DESC_SPILL_BYTES] ? d[TE_DESC_SPILL_BASE] + uint32_t(j) * pd[TE_DESC_SPILL_BYTES] : 0;
    std::memcpy(image->data() + pp[j].desc, pd, sizeof pd);
    putLoads(pp[j].loads, pp[j].load);
  }
  return L;
}

struct Regs {
  uint32_t status, table, offset, entry, in, out, dropped, tables, bytes, cycles, engineCycles;
};

Regs RunOnce(Unit& u, const Layout& L, const std::vector<uint8_t>& image, uint64_t bound, const std::string& job) {
  std::memcpy(u.mem().at(kMemBase), image.data(), image.size());
  std::memset(u.mem().at(kMemBase + L.out), 0, L.outBytes);
  u.Apb(TE_DESC_ADDR, true, uint32_t(kMemBase + L.desc));
  u.Apb(TE_IRQ_ENABLE, true, TE_IRQ_ENABLE_DONE_MASK | TE_IRQ_ENABLE_ERROR_MASK);
  u.Apb(TE_CTRL, true, TE_CTRL_GO_MASK);
  if (!u.WaitIrq(bound)) Fail(te::ErrorCode::kBadJob, job, 0, "hang: no interrupt after " + std::to_string(bound) + " clocks");
  Regs g;
  g.status = u.Apb(TE_STATUS, false);
  g.table = u.Apb(TE_ERR_TABLE, false);
  g.offset = u.Apb(TE_ERR_OFFSET, false);
  g.entry = u.Apb(TE_ERR_ENTRY, false);
  g.in = u.Apb(TE_ENTRIES_IN, false);
  g.out = u.Apb(TE_ENTRIES_OUT, false);
  g.dropped = u.Apb(TE_DROPPED, false);
  g.tables = u.Apb(TE_TABLES_OUT, false);
  g.bytes = u.Apb(TE_BYTES_OUT, false);
  g.cycles = u.Apb(TE_CYCLES, false);
  g.engineCycles = u.Apb(TE_ENGINE_CYCLES, false);
  u.Apb(TE_IRQ_STATUS, true, TE_IRQ_STATUS_DONE_MASK | TE_IRQ_STATUS_ERROR_MASK);
  if (u.Apb(TE_STATUS, false) & TE_STATUS_BUSY_MASK) Fail(te::ErrorCode::kBadJob, job, 0, "BUSY after the interrupt");
  return g;
}

void WriteOutputs(const Options& o, const te::CompactionSpec& s, const Layout& L, simc::Memory& mem, const Regs& g);

// --image: the job laid out from --base as the SoC's DDR image (descriptor first) and one line naming the regions
// the host dumps after the run. --collect DUMP: DUMP holds the image's memory after the run (from the descriptor to
// the output buffer's end); --counts ENTRIES_IN,ENTRIES_OUT,DROPPED,TABLES_OUT,BYTES_OUT,CYCLES,ENGINE_CYCLES
// are the registers of a job that ended without error, as the firmware read them.
int ImageOrCollect(const Options& o, const te::CompactionSpec& s) {
  std::vector<uint8_t> image;
  Layout L = Place(s, o.job, o, &image);
  if (!o.image.empty()) {
    WriteFile(o.image, image.data(), image.size());
    std::printf("desc=%" PRIu64 " end=%" PRIu64 " out=%" PRIu64 " out_bytes=%" PRIu64 " bytes_in=%" PRIu64
                " mem_end=%" PRIu64 "\n",
                kMemBase + L.desc, kMemBase + L.end, kMemBase + L.out, L.outBytes, L.bytesIn, kMemBase + L.memEnd);
    return 0;
  }
  FILE* f = std::fopen(o.collect.c_str(), "rb");
  std::vector<uint8_t> dump(L.end);
  bool ok = f != nullptr && std::fread(dump.data(), 1, dump.size(), f) == dump.size();
  if (f) std::fclose(f);
  if (!ok) Fail(te::ErrorCode::kBadJob, o.collect, 0, "not a dump of " + std::to_string(L.end) + " bytes");
  Regs g{};
  g.status = TE_STATUS_DONE_MASK;
  uint32_t* v[] = {&g.in, &g.out, &g.dropped, &g.tables, &g.bytes, &g.cycles, &g.engineCycles};
  size_t n = 0, at = 0;
  while (n < 7 && at <= o.counts.size()) {
    size_t comma = o.counts.find(',', at);
    uint64_t x = 0;
    if (!ParseUint(o.counts.substr(at, comma - at).c_str(), &x)) break;
    *v[n++] = uint32_t(x);
    at = comma == std::string::npos ? o.counts.size() + 1 : comma + 1;
  }
  if (n != 7) Fail(te::ErrorCode::kBadJob, o.job, 0, "--counts needs 7 numbers: " + o.counts);
  simc::Memory mem(kMemBase, L.end);
  std::memcpy(mem.at(kMemBase), dump.data(), dump.size());
  WriteOutputs(o, s, L, mem, g);
  return 0;
}

int Main(const Options& o) {
  te::LoadedJob loaded = te::LoadJob(o.job, te::kDefaultOutputBufferBytes);
  const te::CompactionSpec& s = loaded.spec;
  if (!o.image.empty() || !o.collect.empty()) return ImageOrCollect(o, s);
  std::vector<uint8_t> image;
  Layout L = Place(s, o.job, o, &image);
  Unit u(o, L.memEnd + 4096);
  uint64_t bound = o.maxCycles ? o.maxCycles : 200 * L.bytesIn + 2000000;
  Regs g = RunOnce(u, L, image, bound, o.job);
  if (o.twice) {
    u.Apb(TE_CTRL, true, TE_CTRL_SOFT_RESET_MASK);
    u.Apb(TE_ID, false);  // the pulse acts a clock after the write, as GO does; a CPU's next access comes later still
    if (u.Apb(TE_STATUS, false) & (TE_STATUS_DONE_MASK | TE_STATUS_ERROR_MASK))
      Fail(te::ErrorCode::kBadJob, o.job, 0, "STATUS not cleared by SOFT_RESET");
    g = RunOnce(u, L, image, bound, o.job);
  }
  if (u.violations()) Fail(te::ErrorCode::kBadJob, o.job, 0, std::to_string(u.violations()) + " AXI protocol violations");
  WriteOutputs(o, s, L, u.mem(), g);
  return 0;
}

void WriteOutputs(const Options& o, const te::CompactionSpec& s, const Layout& L, simc::Memory& mem, const Regs& g) {
  unsigned code = (g.status & TE_STATUS_CODE_MASK) >> TE_STATUS_CODE_SHIFT;
  unsigned unit = (g.status & TE_STATUS_UNIT_MASK) >> TE_STATUS_UNIT_SHIFT;
  unsigned run = (g.status & TE_STATUS_RUN_MASK) >> TE_STATUS_RUN_SHIFT;
  if (!(g.status & TE_STATUS_DONE_MASK)) Fail(te::ErrorCode::kBadJob, o.job, 0, "interrupt without DONE");
  if (g.status & TE_STATUS_ERROR_MASK) {
    static const char* units[] = {"reader", "merge", "writer", "output", "front end", "?", "?", "?"};
    static const char* where[] = {"descriptor", "table list", "walker load", "result area"};
    std::string table = o.job;
    uint64_t off = 0;
    std::string msg = std::string("the unit's ") + units[unit] + " stopped the job (run " + std::to_string(run) +
                      ", entry " + std::to_string(g.entry) + ")";
    if (unit == TE_UNIT_READER && run < s.runs.size() && g.table < s.runs[run].size()) {
      table = s.runs[run][g.table].name;
      off = g.offset;
    } else if (unit == TE_UNIT_OUTPUT) {
      table = o.out + "/" + te::TableFileName(s.first_file_number + g.table);
      off = g.offset;
    } else if (unit == TE_UNIT_FRONT) {
      off = g.offset;
      msg = std::string("the unit's front end refused the job: ") + (g.table < 4 ? where[g.table] : "?") +
            " byte " + std::to_string(g.offset) + (g.table == TE_WHERE_DESC ? " (word " + std::to_string(g.offset / 4) + ")" : "");
    }
    Fail(te::ErrorCode(code), table, off, msg);
  }
  te::CompactionResult res;
  res.entries_in = g.in;
  res.entries_out = g.out;
  res.dropped = g.dropped;
  res.bytes_in = L.bytesIn;
  for (uint32_t i = 0; i < g.tables; i++) {
    uint64_t rec = kMemBase + L.result + 4 * TE_OUT_NWORDS * i;
    uint32_t a = Get32(mem, rec + 4 * TE_OUT_ADDR), n = Get32(mem, rec + 4 * TE_OUT_SIZE);
    uint32_t sa = Get32(mem, rec + 4 * TE_OUT_SMALLEST_ADDR), sn = Get32(mem, rec + 4 * TE_OUT_SMALLEST_LEN);
    uint32_t la = Get32(mem, rec + 4 * TE_OUT_LARGEST_ADDR), ln = Get32(mem, rec + 4 * TE_OUT_LARGEST_LEN);
    if (a < kMemBase + L.out || uint64_t(a) + n > kMemBase + L.end || sa + uint64_t(sn) > kMemBase + L.end ||
        la + uint64_t(ln) > kMemBase + L.end || sa < kMemBase || la < kMemBase)
      Fail(te::ErrorCode::kBadJob, o.job, 0, "result record " + std::to_string(i) + " points outside the output buffer");
    te::OutputTable t;
    t.number = s.first_file_number + i;
    t.file = te::TableFileName(t.number);
    t.bytes.assign(reinterpret_cast<const char*>(mem.at(a)), n);
    t.smallest.assign(reinterpret_cast<const char*>(mem.at(sa)), sn);
    t.largest.assign(reinterpret_cast<const char*>(mem.at(la)), ln);
    t.entries = Get32(mem, rec + 4 * TE_OUT_ENTRIES);
    res.bytes_out += n;
    res.tables.push_back(std::move(t));
  }
  if (res.bytes_out != g.bytes)
    Fail(te::ErrorCode::kBadJob, o.job, 0, "BYTES_OUT " + std::to_string(g.bytes) + " but the records hold " +
         std::to_string(res.bytes_out));
  struct stat st;
  if (stat(o.out.c_str(), &st) != 0) {
    if (mkdir(o.out.c_str(), 0777) != 0)
      Fail(te::ErrorCode::kBadJob, o.out, 0, std::string("cannot make the output folder: ") + std::strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    Fail(te::ErrorCode::kBadJob, o.out, 0, "output path is not a folder");
  }
  for (const auto& t : res.tables)
    WriteFile(o.out + "/" + t.file, reinterpret_cast<const uint8_t*>(t.bytes.data()), t.bytes.size());
  std::string json = te::ResultJson(res);
  WriteFile(o.out + "/result.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
  std::printf("engine_cycles=%u\n", g.engineCycles);
  std::printf("cycles=%u bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " tables_out=%zu\n", g.cycles, res.bytes_in,
              res.bytes_out, res.tables.size());
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  const char* usage =
      "usage: VTableEngineUnit JOB.json OUT_DIR [--stall P] [--latency N] [--seed S] [--output-buffer BYTES] "
      "[--result-bytes BYTES] [--spill-bytes BYTES] [--desc WORD=VALUE]... [--max-cycles N] [--twice] "
      "[--base ADDR (--image FILE | --collect DUMP --counts N,..) [--parts P]]\n";
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    uint64_t v = 0;
    bool hasArg = i + 1 < argc;
    if (a == "--stall" && hasArg) {
      char* end = nullptr;
      o.stall = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(o.stall >= 0 && o.stall < 1)) {
        std::fprintf(stderr, "VTableEngineUnit: --stall %s is not in [0, 1)\n%s", argv[i], usage);
        return 2;
      }
    } else if (a == "--desc" && hasArg) {
      std::string d = argv[++i];
      size_t eq = d.find('=');
      uint64_t word = 0, val = 0;
      if (eq == std::string::npos || !ParseUint(d.substr(0, eq).c_str(), &word) ||
          !ParseUint(d.substr(eq + 1).c_str(), &val) || val > 0xffffffffull) {
        std::fprintf(stderr, "VTableEngineUnit: --desc %s is not WORD=VALUE\n%s", d.c_str(), usage);
        return 2;
      }
      o.desc[unsigned(word)] = uint32_t(val);
    } else if ((a == "--image" || a == "--collect" || a == "--counts") && hasArg) {
      (a == "--image" ? o.image : a == "--collect" ? o.collect : o.counts) = argv[++i];
    } else if (a == "--base" && hasArg) {
      if (!ParseUint(argv[++i], &v) || v % 4096 || v > 0xf0000000ull) {
        std::fprintf(stderr, "VTableEngineUnit: --base %s is not a 4 KiB-aligned 32-bit address\n%s", argv[i], usage);
        return 2;
      }
      kMemBase = v;
    } else if (a == "--parts" && hasArg) {
      if (!ParseUint(argv[++i], &v) || v < 2 || v > uint64_t(te::kMaxParts)) {
        std::fprintf(stderr, "VTableEngineUnit: --parts %s is not in 2..%d\n%s", argv[i], te::kMaxParts, usage);
        return 2;
      }
      o.parts = v;
    } else if (a == "--twice") {
      o.twice = true;
    } else if ((a == "--latency" || a == "--seed" || a == "--output-buffer" || a == "--result-bytes" ||
                a == "--max-cycles" || a == "--spill-bytes") && hasArg) {
      if (!ParseUint(argv[++i], &v) || (a == "--latency" && v > 10000) ||
          (a == "--spill-bytes" && (v > 0xffffffffull || v % 16))) {
        std::fprintf(stderr, "VTableEngineUnit: %s %s is not a number it takes\n%s", a.c_str(), argv[i], usage);
        return 2;
      }
      if (a == "--latency") o.latency = unsigned(v);
      if (a == "--seed") o.seed = v;
      if (a == "--output-buffer") o.outputBuffer = v;
      if (a == "--result-bytes") o.resultBytes = v;
      if (a == "--max-cycles") o.maxCycles = v;
      if (a == "--spill-bytes") o.spillBytes = int64_t(v);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "VTableEngineUnit: bad option %s\n%s", a.c_str(), usage);
      return 2;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  o.job = pos[0], o.out = pos[1];
  if (o.parts && o.image.empty() && o.collect.empty()) {
    std::fprintf(stderr, "VTableEngineUnit: --parts lays out the SoC's image: it needs --image or --collect\n%s", usage);
    return 2;
  }
  try {
    return Main(o);
  } catch (const te::EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error=BAD_JOB table=%s offset=0 out of memory\n", o.job.c_str());
  }
  return 1;
}
