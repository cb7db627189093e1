// Standalone Verilator harness: one NandController per channel (--channels N), each with one ONFI model
// per target, its own AXI4 port to one shared DDR model and its own APB3 master, all clocked together;
// driven by a line protocol on stdin (lsmc/sim/nandsim.py is the client). Requests act on the channel
// `ch N` selected (0 at start).
// Every request prints exactly one line that starts with "ok" (or "err <why>"); a model timing
// violation prints "VIOLATION ..." and exits with code 3.
//
// Requests:  w ADDR VAL | r ADDR | mw ADDR HEX | mr ADDR LEN | run N | cycles
//            wait_comp MAXCYCLES        (poll STATUS until a completion is queued)
//            ch N                        (select the channel later requests address)
//            wait_irq MAXCYCLES          (run until some channel's io_irq is high; answers the channel mask)
//            model T errors N | model T spread 0/1 | model T stuck 0/1 | model T check 0/1 | model T mode
//            model T corrupt_param OFFSET
//            model T flipmax N | weakblock BLOCK N | weakpage ROW N | gravepage ROW N | growbad BLOCK
//            model T failprog N | failerase N | powercut N | poweron | powered   (faults, see onfi_model.h)
//            peek T ROW | poke T ROW HEX | param T | axi_err LO HI | touched | stats T | irq | quit
// Times: one cycle = 10 ns (100 MHz). Models see every pin edge at the clock edge it happens on.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <type_traits>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include "VNandController.h"
#include "verilated.h"
#include "onfi_model.h"
#include "nvddr_pads.h"
#include "args.h"
#include "axi_mem.h"
#include "tb.h"
#include "nand_regs.h"

// One channel: a controller, its targets' models, its AXI port to the shared DDR model and its NV-DDR
// capture state.
struct Chan {
  VNandController* top = nullptr;
  std::vector<std::unique_ptr<onfi::NandModel>> models;
  std::unique_ptr<simc::AxiSlave<CData>> axi;
  onfi::DdrPads pads;  // NV-DDR pad model (hw/ip/nand/model/nvddr_pads.h)
};
static std::vector<Chan> chans;
static Chan* C = nullptr;  // the channel requests address
static uint64_t cycle = 0;
static simc::Prng junk(12345);  // what an undriven DQ bus reads
static uint32_t ntargets = 2;
static uint32_t nchannels = 1;
static constexpr uint32_t MAX_CHANNELS = 8;
static constexpr uint32_t MAX_TARGETS = 2;  // width of io_nand_ce_n in the generated controller
static bool models_live = false;  // the flash sees the pins only once the controller is out of reset

// ---------------------------------------------------------------- DDR model (sim/common AXI4 slave, 32-bit)
// The whole 32-bit address space, mapped lazily: only the pages a test touches cost memory.
static simc::Memory mem(0, 1ull << 32);

// ---------------------------------------------------------------- clocking
static onfi::NandPinsIn pins_of(int t) {
  onfi::NandPinsIn p;
  p.dq = C->top->io_nand_dq_o; p.dq_oe = C->top->io_nand_dq_oe; p.cle = C->top->io_nand_cle; p.ale = C->top->io_nand_ale;
  p.ce_n = (C->top->io_nand_ce_n >> t) & 1; p.we_n = C->top->io_nand_we_n; p.re_n = C->top->io_nand_re_n; p.wp_n = C->top->io_nand_wp_n;
  return p;
}

// ---------------------------------------------------------------- NV-DDR pad model
// hw/ip/nand/model/nvddr_pads.h (shared with the SoC harness): output DDR flops, DQS, the delayed capture.
static uint32_t tap_ps = onfi::DdrPads().tap_ps, taps = onfi::DdrPads().taps;
static int64_t pad_cycles = -1;  // --pad-input-cycles (-1: the controller's SAMPLE.PAD_CYCLES)

static onfi::DdrPinsOut ddr_out() {
  onfi::DdrPinsOut o;
  o.d1 = pins_of(0);
  o.d2 = o.d1;
  o.d2.dq = C->top->io_nand_ddr_h2_dq_o; o.d2.dq_oe = C->top->io_nand_ddr_h2_dq_oe; o.d2.cle = C->top->io_nand_ddr_h2_cle;
  o.d2.ale = C->top->io_nand_ddr_h2_ale; o.d2.we_n = C->top->io_nand_ddr_h2_we_n; o.d2.re_n = C->top->io_nand_ddr_h2_re_n;
  o.ce1 = C->top->io_nand_ce_n; o.ce2 = C->top->io_nand_ddr_h2_ce_n;
  o.dqs_o = C->top->io_nand_ddr_dqs_o; o.dqs_oe = C->top->io_nand_ddr_dqs_oe; o.tap = C->top->io_nand_ddr_tap;
  return o;
}

static void tick() {
  Chan* addressed = C;
  for (auto& ch : chans) {
    C = &ch;  // the helpers below act on C
    uint64_t t = cycle * 10;
    bool ddr = models_live && C->top->io_nand_ddr;
    // the IDDR samples the controller takes at this edge (one pair per cycle)
    C->top->io_nand_ddr_cap_valid = C->pads.take(int64_t(t) * 1000, C->top->io_nand_ddr_cap_q1, C->top->io_nand_ddr_cap_q2);
    // 1. flash outputs at time t (pins unchanged since the previous edge)
    uint8_t dq = (uint8_t)junk.next();
    int drivers = 0, rb = models_live ? 0 : (1 << ntargets) - 1;
    for (int i = 0; i < ntargets && models_live && ddr; i++) {  // NV-DDR: R/B# (pins as left half a cycle ago)
      if (C->pads.rb(*C->models[i], i, int64_t(t) * 1000, ddr_out()).rb_n) rb |= 1 << i;
    }
    for (int i = 0; i < ntargets && models_live && !ddr; i++) {
      onfi::NandPinsOut o = C->models[i]->eval(t, pins_of(i));
      if (o.dq_drive) { drivers++; dq = o.dq; }
      if (o.rb_n) rb |= 1 << i;
    }
    if (drivers > 1 || (drivers && C->top->io_nand_dq_oe)) {
      printf("VIOLATION bus contention at t=%llu ns: %d flash drivers, controller oe=%d\n", (unsigned long long)t, drivers, C->top->io_nand_dq_oe);
      fflush(stdout); exit(3);
    }
    C->top->io_nand_dq_i = C->pads.sdr_dq(dq);  // the IDDR's flop on a board behind the pad wrapper
    C->top->io_nand_rb_n = rb;
    C->axi->drive(cycle);
    C->top->clk = 0; C->top->eval();
    C->axi->edge(cycle);
    if (C->axi->violations) { fflush(stdout); exit(4); }  // the violation line is already printed
    C->top->clk = 1; C->top->eval();
    // 2. record the pin edges of this clock edge
    if (models_live && C->top->io_nand_ddr) C->pads.cycle(int64_t(t) * 1000, 10000, ddr_out(), C->models);
    else for (int i = 0; i < ntargets && models_live; i++) C->models[i]->eval(t, pins_of(i));
  }
  C = addressed;
  cycle++;
}

// ---------------------------------------------------------------- APB master (sim/common/tb.h)
// On the addressed channel: PREADY is sampled with that controller evaluated at the clock's low phase,
// the edge clocks every channel. A transfer that never sees PREADY reads 0.
using ApbAddr = std::remove_reference_t<decltype(std::declval<VNandController&>().io_apb_PADDR)>;
static uint32_t apb(bool write, uint32_t addr, uint32_t data) {
  simc::ApbPins<ApbAddr> pins;
  SIMC_BIND_APB(pins, C->top, io_apb);
  simc::ApbMaster<ApbAddr> m(pins);
  return m.transfer(write, addr, data, [] { C->top->clk = 0; C->top->eval(); }, [] { tick(); }, 64).data;
}

static std::string hex(const std::vector<uint8_t>& v) {
  static const char* d = "0123456789abcdef";
  std::string s; s.reserve(v.size() * 2);
  for (uint8_t b : v) { s += d[b >> 4]; s += d[b & 15]; }
  return s;
}

// A request that cannot be carried out answers "err <why>" and the harness goes on.
struct BadRequest { std::string why; };

// Tokens of one request; every number is parsed strictly and checked against its range.
struct Req {
  std::vector<std::string> t;
  size_t i = 1;
  explicit Req(const std::string& line) { std::istringstream in(line); for (std::string w; in >> w;) t.push_back(w); }
  const std::string& word(const char* what) {
    if (i >= t.size()) throw BadRequest{std::string("missing ") + what};
    return t[i++];
  }
  // Register/memory addresses and values are hex (with or without 0x), counts decimal.
  uint64_t hex(const char* what, uint64_t max) {
    std::string w = word(what);
    if (w.size() < 2 || (w[1] != 'x' && w[1] != 'X')) w = "0x" + w;
    return num(w, what, max);
  }
  uint64_t dec(const char* what, uint64_t max) { return num(word(what), what, max); }
  uint64_t num(const std::string& w, const char* what, uint64_t max) {
    uint64_t v; std::string why;
    if (!simc::parseUnsigned(w, max, &v, &why)) throw BadRequest{std::string(what) + ": " + why};
    return v;
  }
  std::vector<uint8_t> bytes(const char* what) {
    const std::string& h = word(what);
    if (h.size() % 2) throw BadRequest{std::string(what) + ": odd number of hex digits"};
    std::vector<uint8_t> v;
    for (size_t k = 0; k < h.size(); k += 2) {
      uint64_t b; std::string why;
      if (!simc::parseUnsigned("0x" + h.substr(k, 2), 255, &b, &why)) throw BadRequest{std::string(what) + ": bad hex digit"};
      v.push_back((uint8_t)b);
    }
    return v;
  }
  void end() { if (i < t.size()) throw BadRequest{"unexpected '" + t[i] + "'"}; }
};

static onfi::NandModel& target(Req& r) {
  uint64_t t = r.dec("target", UINT32_MAX);
  if (t >= ntargets) throw BadRequest{"target " + std::to_string(t) + " out of range 0.." + std::to_string(ntargets - 1)};
  return *C->models[t];
}
static uint32_t row(Req& r, const onfi::NandModel& m) {
  uint64_t rows = (uint64_t)m.cfg.blocks * m.cfg.pages_per_block;
  uint64_t v = r.dec("row", UINT32_MAX);
  if (v >= rows) throw BadRequest{"row " + std::to_string(v) + " out of range 0.." + std::to_string(rows - 1)};
  return (uint32_t)v;
}

static void request(const std::string& line, bool& quit) {
  Req r(line);
  const std::string& c = r.t[0];
  if (c == "quit") { r.end(); printf("ok\n"); quit = true; }
  else if (c == "w") { uint32_t a = r.hex("address", 0xFFFF), v = r.hex("value", UINT32_MAX); r.end(); apb(true, a, v); printf("ok\n"); }
  else if (c == "r") { uint32_t a = r.hex("address", 0xFFFF); r.end(); printf("ok %08x\n", apb(false, a, 0)); }
  else if (c == "mw") {
    uint32_t a = r.hex("address", UINT32_MAX); auto v = r.bytes("data"); r.end();
    if (!mem.contains(a, v.size())) throw BadRequest{"mw: past the end of the 32-bit address space"};
    memcpy(mem.at(a), v.data(), v.size()); printf("ok\n");
  }
  else if (c == "mr") {
    uint32_t a = r.hex("address", UINT32_MAX), n = r.hex("length", 1u << 24); r.end();
    if (!mem.contains(a, n)) throw BadRequest{"mr: past the end of the 32-bit address space"};
    printf("ok %s\n", hex(std::vector<uint8_t>(mem.at(a), mem.at(a) + n)).c_str());
  }
  else if (c == "run") { uint64_t n = r.dec("cycles", 1ull << 40); r.end(); for (uint64_t i = 0; i < n; i++) tick(); printf("ok\n"); }
  else if (c == "irq") { r.end(); printf("ok %d\n", C->top->io_irq); }
  else if (c == "ch") {
    uint64_t k = r.dec("channel", UINT32_MAX); r.end();
    if (k >= chans.size()) throw BadRequest{"channel " + std::to_string(k) + " out of range 0.." + std::to_string(chans.size() - 1)};
    C = &chans[k]; printf("ok\n");
  }
  else if (c == "wait_irq") {  // an interrupt-driven scheduler's idle loop: io_irq is a port, no APB polling
    uint64_t n = r.dec("max cycles", 1ull << 40); r.end();
    uint64_t start = cycle; uint32_t mask = 0;
    while (cycle - start < n) {
      for (uint32_t k = 0; k < chans.size(); k++) if (chans[k].top->io_irq) mask |= 1u << k;
      if (mask) break;
      tick();
    }
    if (mask) printf("ok %u\n", mask);
    else printf("err timeout after %" PRIu64 " cycles\n", cycle - start);
  }
  else if (c == "cycles") { r.end(); printf("ok %" PRIu64 "\n", cycle); }
  else if (c == "wait_comp") {
    uint64_t n = r.dec("max cycles", 1ull << 40); r.end();
    uint64_t start = cycle; bool got = false;
    while (cycle - start < n) {
      if (apb(false, NAND_STATUS, 0) & NAND_STATUS_COMP_VALID_MASK) { got = true; break; }
      for (int i = 0; i < 16; i++) tick();
    }
    printf(got ? "ok %" PRIu64 "\n" : "err timeout after %" PRIu64 " cycles\n", cycle - start);
  }
  else if (c == "model") {
    auto& m = target(r);
    std::string k = r.word("key");
    if (k == "mode") { printf("ok %d\n", m.mode()); return; }  // clients send "mode 0": the value is ignored
    if (k == "errors") m.cfg.bit_errors_per_read = (int)r.dec("errors", 1u << 16);
    else if (k == "spread") m.cfg.bit_error_spread = r.dec("0|1", 1);
    else if (k == "stuck") m.set_stuck_busy(r.dec("0|1", 1));
    else if (k == "check") m.cfg.check_timing = r.dec("0|1", 1);
    else if (k == "corrupt_param") m.corrupt_param((uint32_t)r.dec("offset", UINT32_MAX));
    // Faults (onfi_model.h): flips per read, weak/grown-bad blocks, weak/grave pages, failures, power cut.
    else if (k == "flipmax") m.cfg.bit_flips_max = (int)r.dec("max flips", 1u << 16);
    else if (k == "weakblock") { uint32_t b = (uint32_t)r.dec("block", m.cfg.blocks - 1); m.cfg.erase_limit[b] = (int)r.dec("erases", 1u << 30); }
    else if (k == "weakpage") { uint32_t w = row(r, m); m.cfg.program_limit[w] = (int)r.dec("programs", 1u << 30); }
    else if (k == "gravepage") { uint32_t w = row(r, m); m.cfg.read_limit[w] = (int)r.dec("reads", 1u << 30); }
    else if (k == "growbad") m.grow_bad((uint32_t)r.dec("block", m.cfg.blocks - 1));
    else if (k == "failprog") m.cfg.fail_programs = (int)r.dec("programs", 1u << 30);
    else if (k == "failerase") m.cfg.fail_erases = (int)r.dec("erases", 1u << 30);
    else if (k == "powercut") m.cfg.power_cut_after = (int)r.dec("operations before the cut", 1u << 30);
    else if (k == "poweron") m.power_on(cycle * 10);
    else if (k == "powered") { r.end(); printf("ok %d\n", m.powered()); return; }
    else throw BadRequest{"unknown model key " + k + " (errors|spread|stuck|check|mode|corrupt_param|flipmax|weakblock|"
                          "weakpage|gravepage|growbad|failprog|failerase|powercut|poweron|powered)"};
    r.end();
    printf("ok\n");
  }
  else if (c == "peek") { auto& m = target(r); uint32_t w = row(r, m); r.end(); printf("ok %s\n", hex(m.peek(w)).c_str()); }
  else if (c == "poke") {
    auto& m = target(r); uint32_t w = row(r, m); auto v = r.bytes("data"); r.end();
    if (v.size() > m.page_size()) throw BadRequest{"poke: " + std::to_string(v.size()) + " bytes, a page holds " + std::to_string(m.page_size())};
    m.poke(w, v); printf("ok\n");
  }
  else if (c == "param") { auto& m = target(r); r.end(); printf("ok %s\n", hex(m.param_page()).c_str()); }
  else if (c == "axi_err") {
    uint64_t lo = r.hex("low address", UINT32_MAX), hi = r.hex("high address", 1ull << 32); r.end();
    C->axi->cfg.errLo = lo; C->axi->cfg.errHi = hi; printf("ok\n");
  }
  else if (c == "touched") {
    r.end();
    printf("ok %llx %llx\n", (unsigned long long)(C->axi->touchedLo == UINT64_MAX ? 0 : C->axi->touchedLo), (unsigned long long)C->axi->touchedHi);
    C->axi->touchedLo = UINT64_MAX; C->axi->touchedHi = 0;
  }
  else if (c == "stats") {
    auto& m = target(r); r.end();
    printf("ok commands=%llu reads=%llu programs=%llu erases=%llu bit_errors=%llu\n", (unsigned long long)m.n_commands,
           (unsigned long long)m.n_reads, (unsigned long long)m.n_programs, (unsigned long long)m.n_erases, (unsigned long long)m.n_bit_errors);
  }
  else throw BadRequest{"unknown request " + c};
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  onfi::Config cfg;
  cfg.blocks = 64;
  uint32_t axiLatency = 4, axiStallPct = 0;
  simc::setProgram("VNandController");
  simc::Args args("VNandController [options]   (requests on stdin, see the head of hw/ip/nand/dv/nand_harness.cpp)");
  args.number("--blocks", &cfg.blocks, "blocks per target (default 64)", "N", 1u, 1u << 20);
  args.number("--pages", &cfg.pages_per_block, "pages per block, a power of two (default 64)", "N", 1u, 1024u);
  args.number("--page-bytes", &cfg.page_bytes, "main-area bytes per page (default 2048)", "N", 1u, 1u << 16);
  args.number("--spare-bytes", &cfg.spare_bytes, "spare bytes per page (default 64)", "N", 0u, 1u << 12);
  args.number("--targets", &ntargets, "NAND targets (CE#) on the channel, 1..2 (default 2)", "N", 1u, MAX_TARGETS);
  args.number("--channels", &nchannels, "channels (a controller, its targets and an AXI port each), 1..8 (default 1)", "N", 1u,
              MAX_CHANNELS);
  args.number("--seed", &cfg.seed, "seed of the bit-error positions");
  args.number("--tr", &cfg.tR_ns, "array read time tR in ns");
  args.number("--tprog", &cfg.tPROG_ns, "program time tPROG in ns");
  args.number("--tbers", &cfg.tBERS_ns, "block erase time tBERS in ns");
  std::string part = "mt29f4g08abada";
  args.custom("--part", "NAME", "flash part: mt29f4g08abada (SDR, default) or mt29f16g08ababa (NV-DDR modes 0-5)",
              [&](const std::string& o, const std::string& v) {
                if (v != "mt29f4g08abada" && v != "mt29f16g08ababa") simc::die("%s: unknown part '%s'", o.c_str(), v.c_str());
                part = v;
              });
  args.number("--tap-ps", &tap_ps, "NV-DDR capture: delay per DQ delay-line tap in ps (default 25, ECP5 DELAYF-like)", "PS", 1u, 1000u);
  args.number("--taps", &taps, "NV-DDR capture: taps of the DQ delay line (default 128, ECP5 DELAYF; UltraScale IDELAYE3 512)", "N", 1u, 512u);
  args.number("--pad-input-cycles", &pad_cycles, "SDR read: register stages of the pads ahead of DQ in (default: the "
              "controller's SAMPLE.PAD_CYCLES, which it adds to its sample point; another value tests that it does)", "N", (int64_t)0, (int64_t)3);
  uint32_t tdqsck = 0;
  args.number("--tdqsck-ps", &tdqsck, "NV-DDR part: DQS output delay tDQSCK in ps (3000..25000; default the part's)", "PS", 0u, 25000u);
  args.number("--axi-latency", &axiLatency, "DDR model read latency in cycles (default 4)", "N", 0u, 100000u);
  args.number("--axi-stall", &axiStallPct, "percent of cycles the DDR model withholds ready/valid (default 0)", "PCT", 0u, 99u);
  args.custom("--bad", "B,B,...", "factory-bad blocks (PROGRAM/ERASE fail there)", [&](const std::string& o, const std::string& v) {
    size_t p = 0;
    while (p <= v.size()) {
      size_t e = v.find(',', p);
      if (e == std::string::npos) e = v.size();
      cfg.bad_blocks.push_back((uint32_t)simc::toUnsigned(v.substr(p, e - p), o, UINT32_MAX));
      p = e + 1;
    }
  });
  // The part's defaults first, then the geometry/time options given on the command line override them.
  if (std::find(argv, argv + argc, std::string("--part")) != argv + argc) {
    for (int i = 1; i + 1 < argc; i++)
      if (std::string(argv[i]) == "--part" && std::string(argv[i + 1]) == "mt29f16g08ababa") {
        onfi::Config d = onfi::mt29f16g08ababa();
        cfg.page_bytes = d.page_bytes; cfg.spare_bytes = d.spare_bytes; cfg.pages_per_block = d.pages_per_block;
        std::copy(d.id, d.id + 5, cfg.id); cfg.manufacturer = d.manufacturer; cfg.model = d.model;
        cfg.tR_ns = d.tR_ns; cfg.tPROG_ns = d.tPROG_ns; cfg.tBERS_ns = d.tBERS_ns; cfg.nvddr_max_mode = d.nvddr_max_mode;
        cfg.ecc_bits = d.ecc_bits; cfg.ecc_note = d.ecc_note;
        cfg.planes = d.planes; cfg.tDBSY_ns = d.tDBSY_ns;
      }
  }
  args.parse(argc, argv);
  if (tdqsck) {
    if (tdqsck < 3000) simc::die("--tdqsck-ps: %u is below ONFI's tDQSCK minimum 3000", tdqsck);
    cfg.tDQSCK_ps = tdqsck;
  }
  if (cfg.pages_per_block & (cfg.pages_per_block - 1)) simc::die("--pages: %u is not a power of two", cfg.pages_per_block);
  for (uint32_t b : cfg.bad_blocks)
    if (b >= cfg.blocks) simc::die("--bad: block %u is past the last block %u", b, cfg.blocks - 1);
  cfg.on_violation = [](const std::string& m) { printf("VIOLATION %s\n", m.c_str()); fflush(stdout); exit(3); };
  chans.resize(nchannels);
  for (uint32_t k = 0; k < nchannels; k++) {
    Chan& ch = chans[k];
    for (uint32_t i = 0; i < ntargets; i++) {
      onfi::Config c = cfg;
      c.seed = cfg.seed * 31 + i + 97 * k;  // channel 0 keeps the one-channel seeds
      std::string name = "target" + std::to_string(i);
      if (nchannels > 1) name = "ch" + std::to_string(k) + "." + name;
      ch.models.emplace_back(new onfi::NandModel(c, name));
    }
    ch.top = new VNandController;
    ch.pads.tap_ps = tap_ps;
    ch.pads.taps = taps;
  }

  // The controller promises 32-bit INCR bursts; the model holds it to that and to the AXI rules.
  simc::AxiConfig acfg;
  acfg.readLatency = axiLatency ? axiLatency - 1 : 0;  // the model counts idle cycles after the handshake
  acfg.maxReads = 2;
  acfg.maxWrites = 2;
  acfg.stall = axiStallPct / 100.0;
  acfg.seed = 777;
  acfg.onlySize = 4;
  acfg.onlyIncr = true;
  acfg.errLo = 1;  // empty SLVERR window
  acfg.errHi = 0;
  // Each channel has its own AXI port on the shared memory (a multi-port DDR model: the channels do not
  // compete for DDR bandwidth here).
  for (uint32_t k = 0; k < nchannels; k++) {
    C = &chans[k];
    simc::AxiSlave<CData>::Pins pins;
    SIMC_BIND_AXI(pins, C->top, io_axi);
    pins.wData = &C->top->io_axi_w_payload_data;
    pins.rData = &C->top->io_axi_r_payload_data;
    static const char* names[MAX_CHANNELS] = {"nand axi ch0", "nand axi ch1", "nand axi ch2", "nand axi ch3",
                                              "nand axi ch4", "nand axi ch5", "nand axi ch6", "nand axi ch7"};
    C->axi.reset(new simc::AxiSlave<CData>(nchannels > 1 ? names[k] : "nand axi", 4, &mem, pins, acfg));
    C->axi->report = stdout;
    C->axi->reportPrefix = "err axi:";
    C->top->io_apb_PSEL = 0; C->top->io_apb_PENABLE = 0;
    C->top->reset = 1;
  }
  C = &chans[0];
  for (int i = 0; i < 8; i++) tick();
  for (auto& ch : chans) ch.top->reset = 0;
  tick();
  for (auto& ch : chans) {  // the pads the controller was generated for, unless the command line says otherwise
    C = &ch;
    uint32_t gen = (apb(false, NAND_SAMPLE, 0) & NAND_SAMPLE_PAD_CYCLES_MASK) >> NAND_SAMPLE_PAD_CYCLES_SHIFT;
    ch.pads.input_cycles = pad_cycles < 0 ? gen : (uint32_t)pad_cycles;
  }
  C = &chans[0];
  models_live = true;

  std::string line;
  bool quit = false;
  while (!quit && std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      request(line, quit);
    } catch (const BadRequest& e) {
      printf("err %s\n", e.why.c_str());
    }
    fflush(stdout);
  }
  for (auto& ch : chans) { ch.top->final(); delete ch.top; }
  return 0;
}
