// Standalone Verilator harness: NandController + one ONFI model per target + an AXI4 DDR model +
// an APB3 master, driven by a line protocol on stdin (scripts/lsmc/nandsim.py is the client).
// Every request prints exactly one line that starts with "ok" (or "err <why>"); a model timing
// violation prints "VIOLATION ..." and exits with code 3.
//
// Requests:  w ADDR VAL | r ADDR | mw ADDR HEX | mr ADDR LEN | run N | cycles
//            wait_comp MAXCYCLES        (poll STATUS until a completion is queued)
//            model T errors N | model T spread 0/1 | model T stuck 0/1 | model T check 0/1 | model T mode
//            model T corrupt_param OFFSET
//            model T flipmax N | weakblock BLOCK N | weakpage ROW N | gravepage ROW N | growbad BLOCK
//            model T failprog N | failerase N | powercut N | poweron | powered   (faults, see onfi_model.h)
//            peek T ROW | poke T ROW HEX | param T | axi_err LO HI | touched | stats T | irq | quit
// Times: one cycle = 10 ns (100 MHz). Models see every pin edge at the clock edge it happens on.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "VNandController.h"
#include "verilated.h"
#include "onfi_model.h"

static VNandController* top;
static std::vector<std::unique_ptr<onfi::NandModel>> models;
static uint64_t cycle = 0;
static std::mt19937 junk(12345);
static int ntargets = 2;
static bool models_live = false;  // the flash sees the pins only once the controller is out of reset

// ---------------------------------------------------------------- DDR model (AXI4 slave, 32-bit)
static std::map<uint32_t, uint8_t> mem;
static uint32_t err_lo = 1, err_hi = 0;  // SLVERR window (empty by default)
static uint64_t touched_lo = ~0ull, touched_hi = 0;
static int axi_latency = 4;
static int axi_stall_pct = 0;  // random ready stalls and extra latency (AXI robustness)
static std::mt19937 stall_rng(777);
static bool stall() { return axi_stall_pct && int(stall_rng() % 100) < axi_stall_pct; }
struct Burst { uint32_t addr; int beats; int wait; };
static std::deque<Burst> rq, wq;
static bool b_pending = false; static int b_resp = 0; static int w_resp = 0;
static uint8_t mem_rd(uint32_t a) { auto it = mem.find(a); return it == mem.end() ? 0 : it->second; }
static bool in_err(uint32_t a) { return a >= err_lo && a < err_hi; }
static void touch(uint32_t a) { touched_lo = std::min<uint64_t>(touched_lo, a); touched_hi = std::max<uint64_t>(touched_hi, a + 4); }

static void axi_drive() {  // outputs of the slave for this cycle (from state)
  top->io_axi_ar_ready = rq.size() < 2 && !stall();
  top->io_axi_aw_ready = wq.size() < 2 && !stall();
  bool rv = !rq.empty() && rq.front().wait <= 0;
  top->io_axi_r_valid = rv;
  if (rv) {
    uint32_t a = rq.front().addr;
    top->io_axi_r_payload_data = mem_rd(a) | mem_rd(a + 1) << 8 | mem_rd(a + 2) << 16 | (uint32_t)mem_rd(a + 3) << 24;
    top->io_axi_r_payload_resp = in_err(a) ? 2 : 0;
    top->io_axi_r_payload_last = rq.front().beats == 1;
    top->io_axi_r_payload_id = 0;
  }
  top->io_axi_w_ready = !wq.empty() && !b_pending && !stall();
  top->io_axi_b_valid = b_pending;
  top->io_axi_b_payload_resp = b_resp;
  top->io_axi_b_payload_id = 0;
}
struct Fires { bool ar, aw, r, w, b; uint32_t ar_addr, aw_addr; int ar_len, aw_len; uint32_t wdata; int wstrb; bool wlast; };
static Fires axi_sample() {
  Fires f{};
  f.ar = top->io_axi_ar_valid && top->io_axi_ar_ready;
  f.aw = top->io_axi_aw_valid && top->io_axi_aw_ready;
  f.r = top->io_axi_r_valid && top->io_axi_r_ready;
  f.w = top->io_axi_w_valid && top->io_axi_w_ready;
  f.b = top->io_axi_b_valid && top->io_axi_b_ready;
  f.ar_addr = top->io_axi_ar_payload_addr; f.ar_len = top->io_axi_ar_payload_len;
  f.aw_addr = top->io_axi_aw_payload_addr; f.aw_len = top->io_axi_aw_payload_len;
  f.wdata = top->io_axi_w_payload_data; f.wstrb = top->io_axi_w_payload_strb; f.wlast = top->io_axi_w_payload_last;
  if (f.ar && (top->io_axi_ar_payload_size != 2 || top->io_axi_ar_payload_burst != 1)) { printf("err axi: AR size/burst\n"); exit(4); }
  if (f.aw && (top->io_axi_aw_payload_size != 2 || top->io_axi_aw_payload_burst != 1)) { printf("err axi: AW size/burst\n"); exit(4); }
  return f;
}
static void axi_update(const Fires& f) {
  for (auto& b : rq) b.wait--;
  if (f.r) {
    touch(rq.front().addr);
    rq.front().addr += 4;
    if (--rq.front().beats == 0) rq.pop_front();
  }
  if (f.ar) {
    if (((f.ar_addr & 0xFFF) + (f.ar_len + 1) * 4) > 0x1000) { printf("err axi: AR burst crosses 4 KiB\n"); exit(4); }
    rq.push_back({f.ar_addr, f.ar_len + 1, axi_latency + (axi_stall_pct ? int(stall_rng() % 8) : 0)});
  }
  if (f.w) {
    Burst& b = wq.front();
    touch(b.addr);
    if (in_err(b.addr)) w_resp = 2;
    else for (int i = 0; i < 4; i++) if (f.wstrb >> i & 1) mem[b.addr + i] = f.wdata >> (8 * i);
    b.addr += 4;
    if (--b.beats == 0) {
      if (!f.wlast) { printf("err axi: WLAST missing on the last beat\n"); exit(4); }
      wq.pop_front(); b_pending = true; b_resp = w_resp; w_resp = 0;
    } else if (f.wlast) { printf("err axi: early WLAST\n"); exit(4); }
  }
  if (f.b) b_pending = false;
  if (f.aw) {
    if (((f.aw_addr & 0xFFF) + (f.aw_len + 1) * 4) > 0x1000) { printf("err axi: AW burst crosses 4 KiB\n"); exit(4); }
    wq.push_back({f.aw_addr, f.aw_len + 1, 0});
  }
}

// ---------------------------------------------------------------- clocking
static onfi::NandPinsIn pins_of(int t) {
  onfi::NandPinsIn p;
  p.dq = top->io_nand_dq_o; p.dq_oe = top->io_nand_dq_oe; p.cle = top->io_nand_cle; p.ale = top->io_nand_ale;
  p.ce_n = (top->io_nand_ce_n >> t) & 1; p.we_n = top->io_nand_we_n; p.re_n = top->io_nand_re_n; p.wp_n = top->io_nand_wp_n;
  return p;
}

static void tick() {
  uint64_t t = cycle * 10;
  // 1. flash outputs at time t (pins unchanged since the previous edge)
  uint8_t dq = junk();
  int drivers = 0, rb = models_live ? 0 : (1 << ntargets) - 1;
  for (int i = 0; i < ntargets && models_live; i++) {
    onfi::NandPinsOut o = models[i]->eval(t, pins_of(i));
    if (o.dq_drive) { drivers++; dq = o.dq; }
    if (o.rb_n) rb |= 1 << i;
  }
  if (drivers > 1 || (drivers && top->io_nand_dq_oe)) {
    printf("VIOLATION bus contention at t=%llu ns: %d flash drivers, controller oe=%d\n", (unsigned long long)t, drivers, top->io_nand_dq_oe);
    fflush(stdout); exit(3);
  }
  top->io_nand_dq_i = dq;
  top->io_nand_rb_n = rb;
  axi_drive();
  top->clk = 0; top->eval();
  Fires f = axi_sample();
  top->clk = 1; top->eval();
  axi_update(f);
  // 2. record the pin edges of this clock edge
  for (int i = 0; i < ntargets && models_live; i++) models[i]->eval(t, pins_of(i));
  cycle++;
}

// ---------------------------------------------------------------- APB master
static uint32_t apb(bool write, uint32_t addr, uint32_t data) {
  top->io_apb_PSEL = 1; top->io_apb_PENABLE = 0; top->io_apb_PWRITE = write; top->io_apb_PADDR = addr; top->io_apb_PWDATA = data;
  tick();
  top->io_apb_PENABLE = 1;
  uint32_t r = 0;
  for (int i = 0; i < 64; i++) {
    top->clk = 0; top->eval();
    if (top->io_apb_PREADY) { r = top->io_apb_PRDATA; tick(); break; }
    tick();
  }
  top->io_apb_PSEL = 0; top->io_apb_PENABLE = 0;
  return r;
}

static std::string hex(const std::vector<uint8_t>& v) {
  static const char* d = "0123456789abcdef";
  std::string s; s.reserve(v.size() * 2);
  for (uint8_t b : v) { s += d[b >> 4]; s += d[b & 15]; }
  return s;
}
static std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2) v.push_back(std::stoi(s.substr(i, 2), nullptr, 16));
  return v;
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  onfi::Config cfg;
  cfg.blocks = 64;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() { if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", a.c_str()); exit(2); } return std::string(argv[++i]); };
    if (a == "--blocks") cfg.blocks = std::stoul(next());
    else if (a == "--pages") cfg.pages_per_block = std::stoul(next());
    else if (a == "--page-bytes") cfg.page_bytes = std::stoul(next());
    else if (a == "--spare-bytes") cfg.spare_bytes = std::stoul(next());
    else if (a == "--targets") ntargets = std::stoi(next());
    else if (a == "--seed") cfg.seed = std::stoul(next());
    else if (a == "--tr") cfg.tR_ns = std::stoull(next());
    else if (a == "--tprog") cfg.tPROG_ns = std::stoull(next());
    else if (a == "--tbers") cfg.tBERS_ns = std::stoull(next());
    else if (a == "--axi-latency") axi_latency = std::stoi(next());
    else if (a == "--axi-stall") axi_stall_pct = std::stoi(next());
    else if (a == "--bad") {
      std::stringstream ss(next()); std::string x;
      while (std::getline(ss, x, ',')) if (!x.empty()) cfg.bad_blocks.push_back(std::stoul(x));
    } else if (a.rfind("+", 0) == 0) {
    } else { fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  cfg.on_violation = [](const std::string& m) { printf("VIOLATION %s\n", m.c_str()); fflush(stdout); exit(3); };
  for (int i = 0; i < ntargets; i++) {
    onfi::Config c = cfg;
    c.seed = cfg.seed * 31 + i;
    models.emplace_back(new onfi::NandModel(c, "target" + std::to_string(i)));
  }
  top = new VNandController;
  top->io_apb_PSEL = 0; top->io_apb_PENABLE = 0;
  top->reset = 1;
  for (int i = 0; i < 8; i++) tick();
  top->reset = 0;
  tick();
  models_live = true;

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string c; in >> c;
    if (c.empty()) continue;
    if (c == "quit") { printf("ok\n"); break; }
    else if (c == "w") { uint32_t a, v; in >> std::hex >> a >> v; apb(true, a, v); printf("ok\n"); }
    else if (c == "r") { uint32_t a; in >> std::hex >> a; printf("ok %08x\n", apb(false, a, 0)); }
    else if (c == "mw") { uint32_t a; std::string h; in >> std::hex >> a >> h; auto v = unhex(h); for (size_t i = 0; i < v.size(); i++) mem[a + i] = v[i]; printf("ok\n"); }
    else if (c == "mr") { uint32_t a, n; in >> std::hex >> a >> n; std::vector<uint8_t> v(n); for (uint32_t i = 0; i < n; i++) v[i] = mem_rd(a + i); printf("ok %s\n", hex(v).c_str()); }
    else if (c == "run") { uint64_t n; in >> n; for (uint64_t i = 0; i < n; i++) tick(); printf("ok\n"); }
    else if (c == "irq") printf("ok %d\n", top->io_irq);
    else if (c == "cycles") printf("ok %llu\n", (unsigned long long)cycle);
    else if (c == "wait_comp") {
      uint64_t n; in >> n; uint64_t start = cycle; bool got = false;
      while (cycle - start < n) {
        if (apb(false, 0x0C, 0) & 2) { got = true; break; }
        for (int i = 0; i < 16; i++) tick();
      }
      printf(got ? "ok %llu\n" : "err timeout after %llu cycles\n", (unsigned long long)(cycle - start));
    }
    else if (c == "model") {
      int t; std::string k; long v = 0, v2 = 0; in >> t >> k; in >> v >> v2;
      if (t < 0 || t >= ntargets) { printf("err no target\n"); continue; }
      auto& m = *models[t];
      if (k == "errors") m.cfg.bit_errors_per_read = v;
      else if (k == "spread") m.cfg.bit_error_spread = v;
      else if (k == "stuck") m.set_stuck_busy(v);
      else if (k == "check") m.cfg.check_timing = v;
      else if (k == "mode") { printf("ok %d\n", m.mode()); continue; }
      else if (k == "corrupt_param") m.corrupt_param(v);
      else if (k == "flipmax") m.cfg.bit_flips_max = v;
      else if (k == "weakblock") m.cfg.erase_limit[v] = v2;      // block, erases that succeed
      else if (k == "weakpage") m.cfg.program_limit[v] = v2;     // row, programs that succeed
      else if (k == "gravepage") m.cfg.read_limit[v] = v2;       // row, clean reads
      else if (k == "growbad") m.grow_bad(v);
      else if (k == "failprog") m.cfg.fail_programs = v;
      else if (k == "failerase") m.cfg.fail_erases = v;
      else if (k == "powercut") m.cfg.power_cut_after = v;       // the v-th next program/erase (0 = next)
      else if (k == "poweron") m.power_on(cycle * 10);
      else if (k == "powered") { printf("ok %d\n", m.powered()); continue; }
      else { printf("err unknown model key\n"); continue; }
      printf("ok\n");
    }
    else if (c == "peek") { int t; uint32_t row; in >> t >> row; printf("ok %s\n", hex(models[t]->peek(row)).c_str()); }
    else if (c == "poke") { int t; uint32_t row; std::string h; in >> t >> row >> h; models[t]->poke(row, unhex(h)); printf("ok\n"); }
    else if (c == "param") { int t; in >> t; printf("ok %s\n", hex(models[t]->param_page()).c_str()); }
    else if (c == "axi_err") { in >> std::hex >> err_lo >> err_hi; printf("ok\n"); }
    else if (c == "touched") { printf("ok %llx %llx\n", (unsigned long long)(touched_lo == ~0ull ? 0 : touched_lo), (unsigned long long)touched_hi); touched_lo = ~0ull; touched_hi = 0; }
    else if (c == "stats") {
      int t; in >> t; auto& m = *models[t];
      printf("ok commands=%llu reads=%llu programs=%llu erases=%llu bit_errors=%llu\n", (unsigned long long)m.n_commands,
             (unsigned long long)m.n_reads, (unsigned long long)m.n_programs, (unsigned long long)m.n_erases, (unsigned long long)m.n_bit_errors);
    }
    else printf("err unknown request %s\n", c.c_str());
    fflush(stdout);
  }
  top->final();
  delete top;
  return 0;
}
