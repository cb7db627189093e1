// Direct tests of the ONFI model (no controller): bit-banged pin sequences with explicit ns timing.
// Usage: model_test SCENARIO   — prints "result ..." lines; a violation prints "VIOLATION ..." and
// exits 3 (tests/test_nand_model.py checks both the legal sequences and that each check fires).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "onfi_model.h"

using namespace onfi;

struct Bus {
  NandModel m;
  uint64_t t = 1000;
  NandPinsIn p;
  NandPinsOut o;
  bool read_since_write = false;
  explicit Bus(const Config& c) : m(c, "dut") { p.ce_n = false; o = m.eval(t, p); }
  void step(uint64_t dt) { t += dt; o = m.eval(t, p); }
  // One latch cycle: pins set with WE# falling, WE# low `low` ns, high `high` ns.
  void write(bool cle, bool ale, uint8_t v, int low, int high) {
    if (read_since_write) step(200);  // tRHW: the flash releases DQ
    read_since_write = false;
    p.cle = cle; p.ale = ale; p.dq = v; p.dq_oe = true; p.we_n = false;
    step(0);
    step(low);
    p.we_n = true;
    step(0);
    step(high);
  }
  void cmd(uint8_t c, int low = 50, int high = 100) { write(true, false, c, low, high); }
  void addr(uint8_t a, int low = 50, int high = 100) { write(false, true, a, low, high); }
  void data(uint8_t d, int low = 50, int high = 100) { write(false, false, d, low, high); }
  void release(int gap = 200) { p.cle = p.ale = false; p.dq_oe = false; step(0); step(gap); }
  // One read cycle: RE# low `low` ns (sample at the end), high `high` ns.
  uint8_t read(int low = 50, int high = 50) {
    p.re_n = false; step(0); step(low);
    uint8_t v = o.dq;
    read_since_write = true;
    p.re_n = true; step(0); step(high);
    return v;
  }
  void wait_ready(uint64_t max_ns = 10000000) {
    for (uint64_t i = 0; i < max_ns / 100 && !o.rb_n; i++) step(100);
    step(0);
  }
  void wait_busy_then_ready() { step(250); wait_ready(); step(100); }
};

// NV-DDR host, bus-functional, time in ps: CLK runs with period P (rises at base + k P); pins are set at
// the falling edge before the rise that latches them (setup and hold P/2), DQS for data input is driven
// tDQSS = 1 tCK after the data clock with DQ centred between its edges, data output is sampled `skew`
// ps after each CLK edge (the flash launches it tDQSCK after the edge, unknown to the host).
struct DdrBus {
  NandModel& m;
  NandPinsIn p;
  NandPinsOut o;
  int64_t P, base, k = 0;  // next rise = base + k * P
  struct Ev { int64_t t; int seq; std::function<void()> f; };
  std::vector<Ev> ev;
  int seq = 0;
  int64_t now = 0;
  int64_t dqsck_skew = 0;  // when data output is sampled after each CLK edge
  std::vector<uint8_t> got;
  DdrBus(NandModel& model, const NandPinsIn& pins, int64_t t0, int64_t period) : m(model), p(pins), P(period) {
    base = (t0 / P + 2) * P;
    now = t0;
  }
  int64_t rise(int64_t i) const { return base + i * P; }
  void at(int64_t t, std::function<void()> f) { ev.push_back({t, seq++, std::move(f)}); }
  // Run every scheduled event and the clock up to the rise k (exclusive), evaluating after each change.
  void run() {
    int64_t end = rise(k);
    for (int64_t r = (now - base) / P; rise(r) - P / 2 <= end; r++) {
      if (rise(r) - P / 2 > now) set(rise(r) - P / 2, [this] { p.we_n = false; });
      if (rise(r) > now && rise(r) < end) set(rise(r), [this] { p.we_n = true; });
    }
    std::stable_sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; });
    for (size_t i = 0; i < ev.size();) {
      int64_t t = ev[i].t;
      // pin changes of one instant first, then one evaluation, then samples (seq order keeps samples last)
      for (; i < ev.size() && ev[i].t == t; i++) ev[i].f();
      now = t;
    }
    ev.clear();
  }
  void eval_at(int64_t t) { at(t, [this, t] { o = m.eval_ps(t, p); }); }
  void set(int64_t t, std::function<void()> f) { at(t, [this, t, f] { f(); o = m.eval_ps(t, p); }); }
  void idle(int n = 1) { set(rise(k) - P / 2, [this] { p.cle = p.ale = false; }); k += n; }
  void ca(bool cle, uint8_t v, int64_t tcad) {
    set(rise(k) - P / 2, [this, cle, v] { p.cle = cle; p.ale = !cle; p.dq = v; p.dq_oe = true; });
    k++;
    idle(int((tcad + P - 1) / P) - 1);
  }
  void cmd(uint8_t c) { ca(true, c, nvddr_timing(m.mode()).tCAD); }
  void addr(uint8_t a) { ca(false, a, nvddr_timing(m.mode()).tCAD); }
  void wait_ns(int64_t ns) { idle(int((ns * 1000 + P - 1) / P)); }
  void data_in(const std::vector<uint8_t>& d) {
    int64_t r = rise(k);
    set(r - P / 2, [this] { p.dqs_oe = true; p.dqs = false; });   // preamble: DQS low from here (1.5 tCK)
    k++;
    r = rise(k);
    set(r - P / 2, [this] { p.cle = p.ale = true; });
    for (size_t i = 0; i < d.size(); i++) {
      int64_t e = r + P + int64_t(i) * P / 2;
      uint8_t v = d[i];
      set(e - P / 4, [this, v] { p.dq = v; });
      set(e, [this, i] { p.dqs = i % 2 == 0; });
    }
    int64_t nclk = int64_t(d.size() + 1) / 2;
    k += nclk;
    idle(1);
    int64_t last = r + P + int64_t(d.size() - 1) * P / 2;
    if (d.size() % 2) set(last + P / 2, [this] { p.dqs = false; });
    set(last + P, [this] { p.dqs_oe = false; });  // postamble
    while (rise(k) < last + P) idle(1);
  }
  // W/R# low, tWRCK, n bytes out (samples at CLK edge + skew), W/R# high, tDQSHZ.
  std::vector<uint8_t> data_out(size_t n) {
    const NvddrTiming& N = nvddr_timing(m.mode());
    set(rise(k) - P / 2, [this] { p.cle = p.ale = false; p.dq_oe = false; p.dqs_oe = false; p.re_n = false; });
    k += int((N.tWRCK + P - 1) / P);
    std::vector<uint8_t> out(n);
    int64_t nclk = int64_t(n + 1) / 2;
    set(rise(k) - P / 2, [this] { p.cle = p.ale = true; });
    for (size_t i = 0; i < n; i++) {
      int64_t ts = rise(k + int64_t(i) / 2) + (i % 2 ? P / 2 : 0) + dqsck_skew;
      at(ts, [this, ts, &out, i] { o = m.eval_ps(ts, p); out[i] = o.dq; });
    }
    k += nclk;
    idle(int((dqsck_skew + P) / P) + 1);
    set(rise(k) - P / 2, [this] { p.re_n = true; });
    k += int((N.tDQSHZ + P - 1) / P) + 1;
    run();
    return out;
  }
  void wait_ready() {
    run();
    for (int i = 0; i < 100000 && (m.busy(now / 1000) || !o.rb_n); i++) { idle(int(100000 / P) + 1); run(); }
    idle(int(N_tRR() / P) + 1);
    run();
  }
  int64_t N_tRR() { return nvddr_timing(m.mode()).tRR; }
};

// Switch the SDR-mode bus to NV-DDR mode `mode` with SET FEATURES 01h (P1 = 10h | mode).
template <class B>
static void to_nvddr(B& b, int mode) {
  b.cmd(0xEF); b.addr(0x01); b.step(200); b.data(uint8_t(0x10 | mode)); b.data(0); b.data(0); b.data(0);
  b.release(); b.wait_busy_then_ready();
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: model_test SCENARIO\n"); return 2; }
  std::string s = argv[1];
  Config c;
  c.blocks = 16;
  c.bad_blocks = {3};
  c.tR_ns = 2000; c.tPROG_ns = 5000; c.tBERS_ns = 8000;
  c.on_violation = [](const std::string& m) { printf("VIOLATION %s\n", m.c_str()); fflush(stdout); exit(3); };
  if (s.rfind("mp_", 0) == 0) {  // multi-plane scenarios on the MT29F16G08ABABA (2 planes), SDR mode 0
    Config d = mt29f16g08ababa();
    d.blocks = 16; d.tR_ns = 2000; d.tPROG_ns = 5000; d.tBERS_ns = 8000;
    d.on_violation = c.on_violation;
    if (s == "mp_one_plane") d.planes = 1;
    Bus b(d);
    b.cmd(0xFF); b.release(); b.wait_busy_then_ready();
    const uint32_t ppb = d.pages_per_block;
    auto row5 = [&](uint8_t first, uint32_t row, int col = 0) {  // command + 2 column + 3 row cycles
      b.cmd(first);
      for (int a : {col & 0xFF, col >> 8, int(row & 0xFF), int(row >> 8 & 0xFF), int(row >> 16)}) b.addr(uint8_t(a));
    };
    auto program = [&](uint32_t row, uint8_t v, uint8_t confirm) {  // 4 bytes v, v+1, .. at column 0
      row5(0x80, row); b.step(200);
      for (int i = 0; i < 4; i++) b.data(uint8_t(v + i));
      b.cmd(confirm); b.release(); b.wait_busy_then_ready();
    };
    auto status = [&] { b.cmd(0x70); b.release(200); return b.read(); };
    auto bytes = [&](const char* k, int n) {
      printf("result %s", k);
      for (int i = 0; i < n; i++) printf(" %02x", b.read());
      printf("\n");
    };
    if (s == "mp_legal") {
      b.cmd(0xEC); b.addr(0); b.release(); b.wait_busy_then_ready();
      std::vector<uint8_t> pp(256);
      for (auto& x : pp) x = b.read();
      printf("result param features %02x%02x opt %02x%02x planes_bits %d attr %02x crc_ok %d\n", pp[7], pp[6], pp[9],
             pp[8], pp[113], pp[114], onfi_crc16(pp.data(), 254) == uint16_t(pp[254] | pp[255] << 8));
      // program page 3 of blocks 4 (plane 0) and 5 (plane 1) together: tDBSY after 11h, then one tPROG
      uint64_t t0 = b.t;
      program(4 * ppb + 3, 0xA0, 0x11);
      printf("result dbsy_ns %llu\n", (unsigned long long)(b.t - t0));
      t0 = b.t;
      program(5 * ppb + 3, 0xB0, 0x10);
      printf("result prog_ns %llu\n", (unsigned long long)(b.t - t0));
      printf("result prog_status %02x\n", status());
      // read both back by one multi-plane read, each plane's register by 06h-E0h
      row5(0x00, 4 * ppb + 3); b.cmd(0x32); b.release(); b.wait_busy_then_ready();
      row5(0x00, 5 * ppb + 3); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
      bytes("last_plane", 4);  // output starts in the plane addressed last
      row5(0x06, 4 * ppb + 3, 1); b.cmd(0xE0); b.release(300);
      bytes("plane0_col1", 3);
      row5(0x06, 5 * ppb + 3); b.cmd(0xE0); b.release(300);
      bytes("plane1", 4);
      // erase both blocks together: the pages read FFh again
      auto erase = [&](uint32_t row, uint8_t confirm) {
        b.cmd(0x60);
        for (int a : {int(row & 0xFF), int(row >> 8 & 0xFF), int(row >> 16)}) b.addr(uint8_t(a));
        b.cmd(confirm); b.release(); b.wait_busy_then_ready();
      };
      erase(4 * ppb, 0xD1);
      erase(5 * ppb, 0xD0);
      printf("result erase_status %02x\n", status());
      row5(0x00, 5 * ppb + 3); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
      bytes("erased", 2);
      return 0;
    }
    // each breaks one rule of the parameter page's promise (violation expected)
    if (s == "mp_same_plane") { program(4 * ppb, 1, 0x11); program(6 * ppb, 2, 0x10); return 0; }
    if (s == "mp_page") { program(4 * ppb, 1, 0x11); program(5 * ppb + 1, 2, 0x10); return 0; }
    if (s == "mp_block") { program(4 * ppb, 1, 0x11); program(7 * ppb, 2, 0x10); return 0; }
    if (s == "mp_sequence") { program(4 * ppb, 1, 0x11); row5(0x00, 5 * ppb); return 0; }
    if (s == "mp_read_cache") {  // no cache read after a multi-plane read (parameter page byte 114 bit 4 clear)
      row5(0x00, 4 * ppb); b.cmd(0x32); b.release(); b.wait_busy_then_ready();
      row5(0x00, 5 * ppb); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
      b.cmd(0x31); return 0;
    }
    if (s == "mp_cache_program") {  // 80h..11h..80h..15h twice, then 80h..11h..80h..10h: three groups of two
      for (int q = 0; q < 3; q++) {
        program(4 * ppb + q, uint8_t(0x10 * q), 0x11);
        program(5 * ppb + q, uint8_t(0x10 * q + 8), q < 2 ? 0x15 : 0x10);
        printf("result status %02x\n", status());
      }
      row5(0x00, 4 * ppb + 2); b.cmd(0x32); b.release(); b.wait_busy_then_ready();
      row5(0x00, 5 * ppb + 2); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
      row5(0x06, 4 * ppb + 2); b.cmd(0xE0); b.release(300);
      bytes("plane0", 2);
      row5(0x06, 5 * ppb + 1); b.cmd(0xE0); return 0;  // page 1 is in no register: a violation ends it
    }
    if (s == "mp_too_many") { program(4 * ppb, 1, 0x11); program(5 * ppb, 2, 0x11); return 0; }
    if (s == "mp_no_register") {  // 06h-E0h for a row no read brought in
      row5(0x00, 4 * ppb); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
      row5(0x06, 5 * ppb); b.cmd(0xE0); return 0;
    }
    if (s == "mp_one_plane") { program(4 * ppb, 1, 0x11); return 0; }  // a one-plane part has no 11h
    fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
  }
  if (s.rfind("ddr", 0) == 0) {  // NV-DDR scenarios on the MT29F16G08ABABA: ddr_<what> [mode]
    Config d = mt29f16g08ababa();
    d.blocks = 16; d.tR_ns = 2000; d.tPROG_ns = 5000; d.tBERS_ns = 8000;
    d.on_violation = c.on_violation;
    int mode = argc > 2 ? atoi(argv[2]) : 5;
    if (s == "ddr_sdr_part") d.nvddr_max_mode = -1;
    Bus b(d);
    b.cmd(0xFF); b.release(); b.wait_busy_then_ready();
    to_nvddr(b, mode);
    printf("result nvddr %d mode %d\n", b.m.nvddr(), b.m.mode());
    int64_t P = nvddr_timing(mode).tCK;
    if (s == "ddr_tck") P -= 500;  // clock faster than the mode allows
    b.p.re_n = true; b.p.we_n = true;
    DdrBus q(b.m, b.p, int64_t(b.t) * 1000, P);
    q.dqsck_skew = d.tDQSCK_ps + P / 4;  // the centre of the data eye (what training finds)
    q.idle(4);
    auto hex = [](const char* k, const std::vector<uint8_t>& v, size_t step = 1) {
      printf("result %s", k);
      for (size_t i = 0; i < v.size(); i += step) printf(" %02x", v[i]);
      printf("\n");
    };
    if (s == "ddr_legal" || s == "ddr_tck" || s == "ddr_sdr_part") {
      q.cmd(0x90); q.addr(0x00); q.wait_ns(80);
      hex("id", q.data_out(10), 2);
      q.wait_ns(100);
      q.cmd(0x70); q.wait_ns(80);
      hex("status", q.data_out(2), 2);
      q.wait_ns(100);
      q.cmd(0xEC); q.addr(0x00); q.wait_ready();
      auto pp = q.data_out(512);
      std::vector<uint8_t> param;
      for (size_t i = 0; i < pp.size(); i += 2) param.push_back(pp[i]);
      uint16_t crc = onfi_crc16(param.data(), 254);
      printf("result param %c%c%c%c crc_ok %d nvddr_modes %02x features %02x\n", param[0], param[1], param[2], param[3],
             crc == (param[254] | param[255] << 8), param[141], param[6]);
      q.wait_ns(100);
      q.cmd(0x60); q.addr(0x40); q.addr(0); q.addr(0); q.cmd(0xD0); q.wait_ready();
      std::vector<uint8_t> data;
      for (int i = 0; i < 64; i++) data.push_back(uint8_t(i * 37 + 5));
      q.cmd(0x80); for (int a : {0, 0, 0x40, 0, 0}) q.addr(uint8_t(a));
      q.wait_ns(400);  // tADL
      q.data_in(data);
      q.cmd(0x10); q.wait_ready();
      q.cmd(0x70); q.wait_ns(80);
      hex("prog_status", q.data_out(2), 2);
      q.wait_ns(100);
      q.cmd(0x00); for (int a : {0, 0, 0x40, 0, 0}) q.addr(uint8_t(a)); q.cmd(0x30); q.wait_ready();
      auto back = q.data_out(64);
      printf("result page_ok %d\n", back == data);
      auto stored = b.m.peek(0x40);
      printf("result array_ok %d\n", std::equal(data.begin(), data.end(), stored.begin()));
      q.wait_ns(100);
      q.cmd(0xEE); q.addr(0x01); q.wait_ready();
      hex("features", q.data_out(8), 2);
      q.run();
      return 0;
    }
    if (s == "ddr_eye") {  // sample the ID at every skew across two clock periods: junk outside the eye
      int good_total = 0, first = -1, last = -1;
      for (int64_t skew = 0; skew < 2 * P + 10000; skew += 250) {
        q.dqsck_skew = skew;
        q.cmd(0x90); q.addr(0x00); q.wait_ns(80);
        auto v = q.data_out(10);
        bool good = true;
        const uint8_t want[5] = {0x2C, 0x48, 0x00, 0x26, 0x89};
        for (int i = 0; i < 10; i++) good = good && v[i] == want[i / 2];
        q.wait_ns(100);
        if (good) { good_total++; if (first < 0) first = int(skew); last = int(skew); }
      }
      printf("result eye %d %d %d\n", good_total, first, last);
      return 0;
    }
    if (s == "ddr_tds") {  // DQ changes 200 ps before its DQS edge (tDS 900 ps in mode 5)
      q.cmd(0x80); for (int a : {0, 0, 0x40, 0, 0}) q.addr(uint8_t(a)); q.wait_ns(400);
      int64_t r = q.rise(q.k);
      q.set(r - P / 2, [&] { q.p.dqs_oe = true; q.p.dqs = false; });
      q.k++;
      r = q.rise(q.k);
      q.set(r - P / 2, [&] { q.p.cle = q.p.ale = true; });
      q.set(r + P - 200, [&] { q.p.dq = 0x5A; });
      q.set(r + P, [&] { q.p.dqs = true; });
      q.k += 2;
      q.run();
      return 0;
    }
    if (s == "ddr_tdqss") {  // first DQS edge 2 tCK after the data clock (window 0.75..1.25 tCK)
      q.cmd(0x80); for (int a : {0, 0, 0x40, 0, 0}) q.addr(uint8_t(a)); q.wait_ns(400);
      int64_t r = q.rise(q.k);
      q.set(r - P / 2, [&] { q.p.dqs_oe = true; q.p.dqs = false; });
      q.k++;
      r = q.rise(q.k);
      q.set(r - P / 2, [&] { q.p.cle = q.p.ale = true; });
      q.set(r + P, [&] { q.p.dq = 0x5A; });
      q.set(r + 2 * P, [&] { q.p.dqs = true; });
      q.k += 3;
      q.run();
      return 0;
    }
    if (s == "ddr_tcad") {  // address one clock after the command (tCAD 45 ns)
      q.ca(true, 0x90, P); q.ca(false, 0x00, P); q.run();
      return 0;
    }
    if (s == "ddr_twhr") { q.cmd(0x70); q.data_out(2); return 0; }  // data output right after the command
    if (s == "ddr_contention") {  // host keeps DQ on while W/R# falls
      q.cmd(0x90); q.addr(0x00); q.wait_ns(80);
      q.set(q.rise(q.k) - P / 2, [&] { q.p.re_n = false; });
      q.k++;
      q.run();
      return 0;
    }
    if (s == "ddr_reset") {  // FFh returns to SDR mode 0 (the host stops CLK: WE# high from then on)
      q.cmd(0xFF); q.run();
      b.p = q.p; b.p.we_n = true; b.t = uint64_t(q.rise(q.k) / 1000) + 1; b.step(0);
      b.wait_busy_then_ready();
      printf("result nvddr %d mode %d\n", b.m.nvddr(), b.m.mode());
      return 0;
    }
    fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
  }
  Bus b(c);

  if (s == "legal") {  // a complete mode-0 session: ID, status, erase, program, read, features
    b.cmd(0xFF); b.release(); b.wait_busy_then_ready();
    b.cmd(0x90); b.addr(0x00); b.release(200);
    printf("result id");
    for (int i = 0; i < 5; i++) printf(" %02x", b.read());
    printf("\n");
    b.cmd(0x70); b.release(200);
    printf("result status %02x\n", b.read());
    b.cmd(0x60); b.addr(0x40); b.addr(0); b.addr(0); b.cmd(0xD0); b.release(); b.wait_busy_then_ready();
    b.cmd(0x80); for (int a : {0, 0, 0x40, 0, 0}) b.addr(a);
    b.step(200);  // tADL
    for (int i = 0; i < 8; i++) b.data(uint8_t(0xA0 + i));
    b.cmd(0x10); b.release(); b.wait_busy_then_ready();
    b.cmd(0x70); b.release(200);
    printf("result prog_status %02x\n", b.read());
    b.cmd(0x00); for (int a : {2, 0, 0x40, 0, 0}) b.addr(a); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
    printf("result page");
    for (int i = 0; i < 4; i++) printf(" %02x", b.read());
    printf("\n");
    b.cmd(0xEF); b.addr(0x01); b.step(200); b.data(3); b.data(0); b.data(0); b.data(0); b.release(); b.wait_busy_then_ready();
    printf("result mode %d\n", b.m.mode());
    // mode 3 timing from now on: tWP 15, tWH 10, tWC 30, tRC 30
    b.cmd(0xEE, 20, 20); b.addr(0x01, 20, 20); b.release(100); b.wait_busy_then_ready();
    printf("result features %02x\n", b.read(20, 20));
    return 0;
  }
  if (s == "twp") { b.cmd(0x70, 20, 100); return 0; }                    // tWP 50 in mode 0
  if (s == "twc") { b.cmd(0x70, 50, 100); b.cmd(0x70, 50, 30); b.cmd(0x70, 50, 30); return 0; }
  if (s == "tdh") {  // data changes 5 ns after the WE# rising edge (tDH 20)
    b.p.cle = true; b.p.dq = 0x70; b.p.dq_oe = true; b.p.we_n = false; b.step(0); b.step(60);
    b.p.we_n = true; b.step(0); b.step(5); b.p.dq = 0x00; b.step(0); return 0;
  }
  if (s == "tadl") { b.cmd(0x80); for (int a : {0, 0, 0x40, 0, 0}) b.addr(a); b.data(1); return 0; }
  if (s == "twhr") { b.cmd(0x70, 50, 20); b.release(25); b.read(); return 0; }
  if (s == "busy_cmd") {
    b.cmd(0x00); for (int a : {0, 0, 0, 0, 0}) b.addr(a); b.cmd(0x30); b.release(); b.step(500);
    b.cmd(0x00); return 0;
  }
  if (s == "busy_read") {
    b.cmd(0x00); for (int a : {0, 0, 0, 0, 0}) b.addr(a); b.cmd(0x30); b.release(); b.step(500);
    b.read(); return 0;
  }
  if (s == "trr") {
    b.cmd(0x00); for (int a : {0, 0, 0, 0, 0}) b.addr(a); b.cmd(0x30); b.release(); b.step(250);
    while (!b.o.rb_n) b.step(10);
    b.read(); return 0;  // RE# at most 10 ns after R/B# rose (tRR 40)
  }
  if (s == "contention") { b.cmd(0x90); b.addr(0); b.release(200); b.p.dq_oe = true; b.p.re_n = false; b.step(0); return 0; }
  if (s == "unsupported") { b.cmd(0x85); return 0; }
  if (s == "bad_mode") { b.cmd(0xEF); b.addr(0x01); b.step(200); b.data(6); b.data(0); b.data(0); b.data(0); return 0; }
  if (s == "sequence") { b.cmd(0x30); return 0; }
  if (s == "status_errors") {  // program twice, erase a bad block: FAIL bits like a real part
    auto prog = [&](int blockrow) {
      b.cmd(0x80); for (int a : {0, 0, blockrow, 0, 0}) b.addr(a); b.step(200); b.data(0x55); b.cmd(0x10); b.release();
      b.wait_busy_then_ready(); b.cmd(0x70); b.release(200); return b.read();
    };
    printf("result first %02x\n", prog(0x80));
    printf("result again %02x\n", prog(0x80));
    b.cmd(0x60); b.addr(0xC0); b.addr(0); b.addr(0); b.cmd(0xD0); b.release(); b.wait_busy_then_ready();
    b.cmd(0x70); b.release(200);
    printf("result bad_erase %02x\n", b.read());
    b.cmd(0x00); for (int a : {0, 8, 0xC0, 0, 0}) b.addr(a); b.cmd(0x30); b.release(); b.wait_busy_then_ready();
    printf("result marker %02x\n", b.read());  // spare byte 0 of block 3 page 0
    return 0;
  }
  if (s == "stuck") {
    b.m.set_stuck_busy(true);
    b.m.cfg.stuck_busy = true;
    b.cmd(0x60); b.addr(0x40); b.addr(0); b.addr(0); b.cmd(0xD0); b.release(); b.step(100000);
    printf("result rb %d\n", b.o.rb_n);
    b.cmd(0x70); b.release(200);
    printf("result status %02x\n", b.read());
    b.m.set_stuck_busy(false);
    b.m.cfg.stuck_busy = false;
    b.step(100);
    printf("result rb %d\n", b.o.rb_n);
    return 0;
  }
  if (s == "early_sample") {  // sampling before tREA sees junk, after it the byte
    b.cmd(0x90); b.addr(0); b.release(200);
    int junk = 0;
    for (int i = 0; i < 5; i++) {
      b.p.re_n = false; b.step(0); b.step(10);
      uint8_t early = b.o.dq;
      b.step(40);
      uint8_t late = b.o.dq;
      b.p.re_n = true; b.step(0); b.step(50);
      junk += early != late;
      printf("result byte %02x\n", late);
    }
    printf("result junk %d\n", junk);
    return 0;
  }
  fprintf(stderr, "unknown scenario %s\n", s.c_str());
  return 2;
}
