// Direct tests of the ONFI model (no controller): bit-banged pin sequences with explicit ns timing.
// Usage: model_test SCENARIO   — prints "result ..." lines; a violation prints "VIOLATION ..." and
// exits 3 (tests/test_nand_model.py checks both the legal sequences and that each check fires).
#include <cstdio>
#include <cstdlib>
#include <string>

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

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: model_test SCENARIO\n"); return 2; }
  std::string s = argv[1];
  Config c;
  c.blocks = 16;
  c.bad_blocks = {3};
  c.tR_ns = 2000; c.tPROG_ns = 5000; c.tBERS_ns = 8000;
  c.on_violation = [](const std::string& m) { printf("VIOLATION %s\n", m.c_str()); fflush(stdout); exit(3); };
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
