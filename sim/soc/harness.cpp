// Verilator harness of the whole SoC (LsmcSoc): only the wiring lives here. The parts every harness
// shares are in sim/common/: the option parser (args), the AXI4 memory model with its protocol checks
// (axi_mem.h), the UART line model and its TCP / pseudo-terminal link (uart.h, serial_link), the ELF
// loader and --load/--dump specifications (loader), the speed lines (run_stats.h).
// Single-threaded on purpose: see docs/simulation.md for the measured speeds.
//
// usage: VLsmcSoc FIRMWARE.elf|FIRMWARE.bin [options]   (--help lists them)
#include <verilated.h>
#include <verilated_syms.h>
#include "VLsmcSoc.h"
#include "lsmc_soc.h"  // memory map, generated next to LsmcSoc.v
#include "lsmc_soc_config.h"  // this build's ports and channels (soc.Generate, from its preset), next to it too
#include "onfi_model.h"
#include "nvddr_pads.h"
#if VM_TRACE
#include <verilated_fst_c.h>
#endif

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "args.h"
#include "axi_mem.h"
#include "loader.h"
#include "nand_faults.h"
#include "run_stats.h"
#include "serial_link.h"
#include "uart.h"

using simc::die;

// The model's own evaluation (VLsmcSoc.cpp, Verilator 5.006 and 5.048 alike). eval() wraps it in two
// calls that take a mutex each (the deleter of dynamic objects, the message queue of other threads):
// 3 % of the SoC model's time for a design with neither; after the first eval() (which also runs the
// initial blocks) the harness calls this directly. A Verilator that renames it fails to link, loudly.
void VLsmcSoc___024root___eval(VLsmcSoc___024root* vlSelf);

namespace {

// RAM_BASE, RAM_SIZE, DDR_BASE, DDR_SIZE, CPU_HZ: the generated lsmc_soc.h (hw/soc/map/SocMap.scala).
constexpr uint64_t NS_PER_CYCLE = 1000000000ull / CPU_HZ;  // NAND timings are checked in ns
constexpr size_t NAND_TARGETS = LSMC_NAND_TARGETS;  // LsmcSocConfig.nand.targets (the io_nand_ce_n width)
constexpr uint64_t LINK_POLL_CYCLES = 4096;  // UART link: one non-blocking poll per this many cycles

// ------------------------------------------------------------------------------------ NAND
// One ONFI model per target (CE#) on the controller's channel (hw/ip/nand/model). Pins are handed to the
// models before each rising edge (outputs) and after it (edges); a model is skipped while its pins
// are unchanged and it is neither busy nor driving DQ, which keeps an idle flash almost free.
// The pins of one channel: io_nand (channel 0) or io_nand<c> (LsmcSocConfig.nandChannels).
struct NandPinPtrs {
  CData *dq_o = nullptr, *dq_oe, *cle, *ale, *ce_n, *we_n, *re_n, *wp_n, *dq_i, *rb_n;
  // NV-DDR: the interface switch, the D2 half of the output DDR flops, DQS, the capture tap and samples
  CData *ddr, *h2_dq_o, *h2_dq_oe, *h2_cle, *h2_ale, *h2_we_n, *h2_re_n, *h2_ce_n, *dqs_o, *dqs_oe;
  SData* tap;
  CData *cap_valid, *cap_q1, *cap_q2;
};
#define NAND_PIN_PTRS(t, P)                                                                                   \
  NandPinPtrs{&t->P##_dq_o, &t->P##_dq_oe, &t->P##_cle, &t->P##_ale, &t->P##_ce_n, &t->P##_we_n, &t->P##_re_n,    \
              &t->P##_wp_n, &t->P##_dq_i, &t->P##_rb_n, &t->P##_ddr, &t->P##_ddr_h2_dq_o, &t->P##_ddr_h2_dq_oe,  \
              &t->P##_ddr_h2_cle, &t->P##_ddr_h2_ale, &t->P##_ddr_h2_we_n, &t->P##_ddr_h2_re_n,                   \
              &t->P##_ddr_h2_ce_n, &t->P##_ddr_dqs_o, &t->P##_ddr_dqs_oe, &t->P##_ddr_tap, &t->P##_ddr_cap_valid, \
              &t->P##_ddr_cap_q1, &t->P##_ddr_cap_q2}
// Every channel's pins: io_nand and io_nand<c> for the channels 1.. of this build (lsmc_soc_config.h).
std::vector<NandPinPtrs> nandChannelPins(VLsmcSoc* t) {
#define LSMC_NAND_CHANNEL_PINS(c) NAND_PIN_PTRS(t, io_nand##c),
  return {NAND_PIN_PTRS(t, io_nand), LSMC_FOR_EACH_MORE_NAND_CHANNEL(LSMC_NAND_CHANNEL_PINS)};
#undef LSMC_NAND_CHANNEL_PINS
}

// One ONFI model per target (CE#) on a controller's channel (hw/ip/nand/model). Pins are handed to the
// models before each rising edge (outputs) and after it (edges); a model is skipped while its pins
// are unchanged and it is neither busy nor driving DQ, which keeps an idle flash almost free.
struct NandChannel {
  NandPinPtrs io;
  std::vector<std::unique_ptr<onfi::NandModel>> models;
  std::vector<std::string> names;
  std::vector<onfi::NandPinsIn> lastIn;
  std::vector<onfi::NandPinsOut> lastOut;
  std::vector<bool> fresh;
  uint64_t contention = 0;
  uint32_t junk = 0x12345678;
  // The whole channel at rest: every target evaluated, none driving DQ, busy or pulling R/B# low, and the
  // controller's pins as at the last evaluation: then drive() and edge() have nothing to do (the per-
  // target check below costs ~10 % of a compaction run with four idle channels).
  bool idle = false;
  uint64_t lastPins = 0;
  onfi::DdrPads pads;  // NV-DDR (io.ddr high): every cycle goes through the pad model, no idle skipping

  onfi::DdrPinsOut ddrPins() const {
    onfi::DdrPinsOut o;
    o.d1 = pins(0);
    o.d2 = o.d1;
    o.d2.dq = *io.h2_dq_o;
    o.d2.dq_oe = *io.h2_dq_oe;
    o.d2.cle = *io.h2_cle;
    o.d2.ale = *io.h2_ale;
    o.d2.we_n = *io.h2_we_n;
    o.d2.re_n = *io.h2_re_n;
    o.ce1 = *io.ce_n;
    o.ce2 = *io.h2_ce_n;
    o.dqs_o = *io.dqs_o;
    o.dqs_oe = *io.dqs_oe;
    o.tap = *io.tap;
    return o;
  }

  onfi::NandPinsIn pins(size_t t) const {
    onfi::NandPinsIn p;
    p.dq = *io.dq_o;
    p.dq_oe = *io.dq_oe;
    p.cle = *io.cle;
    p.ale = *io.ale;
    p.ce_n = (*io.ce_n >> t) & 1;
    p.we_n = *io.we_n;
    p.re_n = *io.re_n;
    p.wp_n = *io.wp_n;
    return p;
  }
  static bool same(const onfi::NandPinsIn& a, const onfi::NandPinsIn& b) {
    return a.dq == b.dq && a.dq_oe == b.dq_oe && a.cle == b.cle && a.ale == b.ale && a.ce_n == b.ce_n &&
           a.we_n == b.we_n && a.re_n == b.re_n && a.wp_n == b.wp_n;
  }
  // Channel ch (0 keeps the one-channel names and seeds) with its lines of the fault schedule.
  void init(const NandPinPtrs& pins, size_t ch, const onfi::Config& base, const nandf::Schedule& faults) {
    io = pins;
    for (size_t i = 0; i < NAND_TARGETS; i++) {
      onfi::Config c = base;
      c.seed = base.seed + (uint32_t)i + 97u * (uint32_t)ch;
      faults.configure(ch, i, c, c.pages_per_block);
      std::string name = ch ? "nand" + std::to_string(ch) + "." + std::to_string(i) : "nand" + std::to_string(i);
      models.push_back(std::make_unique<onfi::NandModel>(c, name));
      names.push_back(name);
    }
    lastIn.resize(NAND_TARGETS);
    lastOut.resize(NAND_TARGETS);
    fresh.assign(NAND_TARGETS, false);
  }
  uint64_t packedPins() const {
    return (uint64_t)*io.dq_o | (uint64_t)*io.dq_oe << 8 | (uint64_t)*io.cle << 16 | (uint64_t)*io.ale << 24 |
           (uint64_t)*io.ce_n << 32 | (uint64_t)*io.we_n << 40 | (uint64_t)*io.re_n << 48 | (uint64_t)*io.wp_n << 56;
  }
  // True when the channel is at rest and its pins did not move; else remembers the pins.
  bool resting() {
    uint64_t p = packedPins();
    if (idle && p == lastPins) return true;
    lastPins = p;
    return false;
  }
  // After evaluating every target at time ns: is the channel at rest? (A target's busy time only ends,
  // and a new busy period needs a command, i.e. moving pins; power-on clears `fresh`.)
  void settle(uint64_t ns) {
    idle = true;
    for (size_t i = 0; i < models.size(); i++)
      if (!fresh[i] || lastOut[i].dq_drive || !lastOut[i].rb_n || models[i]->busy(ns)) idle = false;
  }
  void evalModel(size_t i, uint64_t ns) {
    onfi::NandPinsIn in = pins(i);
    if (fresh[i] && same(in, lastIn[i]) && !lastOut[i].dq_drive && lastOut[i].rb_n && !models[i]->busy(ns)) return;
    lastOut[i] = models[i]->eval(ns, in);
    lastIn[i] = in;
    fresh[i] = true;
  }
  // Before the rising edge: flash outputs at time ns.
  void drive(uint64_t ns) {
    if (*io.ddr) {
      *io.cap_valid = pads.take((int64_t)ns * 1000, *io.cap_q1, *io.cap_q2);
      uint32_t rb = 0;
      onfi::DdrPinsOut o = ddrPins();
      for (size_t i = 0; i < models.size(); i++)
        if (pads.rb(*models[i], (int)i, (int64_t)ns * 1000, o).rb_n) rb |= 1u << i;
      *io.rb_n = rb;
      idle = false;
      return;
    }
    *io.cap_valid = 0;
    if (resting()) return;  // dq_i keeps its last junk byte, rb_n all high
    int drivers = 0;
    uint32_t rb = 0;
    junk = junk * 1664525u + 1013904223u;
    uint8_t dq = (uint8_t)(junk >> 24);  // undriven bus: junk, never a stale value that could hide a bug
    for (size_t i = 0; i < models.size(); i++) {
      evalModel(i, ns);
      if (lastOut[i].dq_drive) { drivers++; dq = lastOut[i].dq; }
      if (lastOut[i].rb_n) rb |= 1u << i;
    }
    if (drivers > 1 || (drivers && *io.dq_oe)) contention++;
    *io.dq_i = dq;
    *io.rb_n = rb;
    settle(ns);
  }
  // After the rising edge: record the controller's new pin levels.
  void edge(uint64_t ns) {
    if (*io.ddr) {
      pads.cycle((int64_t)ns * 1000, (int64_t)NS_PER_CYCLE * 1000, ddrPins(), models);
      for (size_t i = 0; i < models.size(); i++) fresh[i] = false;  // back in SDR: evaluate every target
      return;
    }
    if (resting()) return;
    for (size_t i = 0; i < models.size(); i++) evalModel(i, ns);
    settle(ns);
  }
  // Power back on after a cut: the arrays keep their contents, every target starts as after power-up.
  void powerOn(uint64_t ns) {
    for (size_t i = 0; i < models.size(); i++) {
      models[i]->power_on(ns);
      fresh[i] = false;
    }
    pads.reset();
    idle = false;
  }
};

uint8_t* findVar(const char* scope, const char* var, size_t minBytes) {
  const VerilatedScope* s = Verilated::threadContextp()->scopeFind(scope);
  if (!s) die("scope %s not found (was sim/soc/soc.vlt passed to Verilator?)", scope);
  VerilatedVar* v = s->varFind(var);
  if (!v) die("signal %s.%s not found (was sim/soc/soc.vlt passed to Verilator?)", scope, var);
  if (v->totalSize() < minBytes) die("signal %s.%s is %zu bytes, expected at least %zu", scope, var, v->totalSize(), minBytes);
  return static_cast<uint8_t*>(v->datap());
}

uint64_t uartBitCycles(void* divider) { return 8ull * ((uint64_t) * static_cast<IData*>(divider) + 1); }

std::vector<uint32_t> parseList(const std::string& opt, const std::string& v, uint32_t max) {
  std::vector<uint32_t> out;
  size_t p = 0;
  while (p <= v.size()) {
    size_t c = v.find(',', p);
    if (c == std::string::npos) c = v.size();
    out.push_back((uint32_t)simc::toUnsigned(v.substr(p, c - p), opt, max));
    p = c + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // the console reaches a pipe or a file line by line
  std::string firmware, logPath, uartIn, prompt, wavePath, ddrName = "fixed";
  uint32_t simArg = 0, ddrLatency = 20, nandBlocks = 0, nandSeed = 1, nandTapPs = onfi::DdrPads().tap_ps, nandTaps = onfi::DdrPads().taps;
  uint64_t maxCycles = 2000000000ull, uartStart = 0, waveFrom = 0, uartGap = UINT64_MAX;
  int32_t uartDiv = 1;
  uint32_t uartTcp = 0, nandBitErrors = 0;
  bool quiet = false, uartPty = false, nandSpread = true, tcpGiven = false;
  std::vector<simc::LoadSpec> loads;
  std::vector<simc::DumpSpec> dumps;
  std::vector<uint32_t> nandBad;
  struct Stuck { uint32_t target; uint64_t cycle; uint32_t channel = 0; };
  std::vector<Stuck> stuck;

  simc::setProgram("sim");
  simc::Args args("VLsmcSoc FIRMWARE [options]",
                  "Ends when the firmware writes SIM_EXIT ((code<<1)|1 to 0xF000F000); exit status = code & 0xff;\n"
                  "124 on --max-cycles, 2 on bad input, 3 on a NAND timing violation, 4 on an AXI protocol violation.");
  args.positional("FIRMWARE", &firmware, "ELF32 RISC-V (segments go to on-chip RAM / DDR), or a raw .bin loaded at 0x80000000");
  args.number("--arg", &simArg, "value of SIM_ARG (0xF000F004), default 0");
  args.number("--ddr-latency", &ddrLatency, "DDR read latency in cycles (AR handshake to first beat), default 20", "N", 0u, 100000u);
  args.custom("--ddr", "MODEL", "DDR timing: fixed (--ddr-latency, no bandwidth limit; default) or a DRAM preset shared by "
              "both ports (" + simc::ddrPresetNames() + ", sim/common/ddr_presets.json, docs/ddr-model.md)",
              [&](const std::string& o, const std::string& v) {
                if (v != "fixed" && !simc::findDdrPreset(v))
                  die("%s: unknown model '%s' (fixed|%s)", o.c_str(), v.c_str(), simc::ddrPresetNames().c_str());
                ddrName = v;
              });
  simc::DdrController ddrCtl;
  args.custom("--ddr-param", "NAME=N", "override one calibrated controller latency of the DDR model (portIn, cmdQueue, "
              "portOut, writeAck, readCredits; docs/ddr-model.md); repeatable",
              [&](const std::string& o, const std::string& v) {
                size_t eq = v.find('=');
                if (eq == std::string::npos) die("%s: expected NAME=N, got '%s'", o.c_str(), v.c_str());
                if (!ddrCtl.set(v.substr(0, eq), (unsigned)simc::toUnsigned(v.substr(eq + 1), o, 1000)))
                  die("%s: no controller parameter '%s'", o.c_str(), v.substr(0, eq).c_str());
              }, true);
  args.custom("--load", "ADDR=FILE", "put FILE's bytes into memory at ADDR before reset (also FILE@ADDR; repeatable)",
              [&](const std::string& o, const std::string& v) { loads.push_back(simc::parseLoad(o, v)); }, true);
  args.custom("--dump", "ADDR:LEN=FILE", "save LEN bytes of memory at ADDR into FILE after the run (also ADDR:LEN@FILE; repeatable)",
              [&](const std::string& o, const std::string& v) { dumps.push_back(simc::parseDump(o, v)); }, true);
  args.output("--log", &logPath, "also write the UART output to FILE");
  args.text("--uart-in", &uartIn, "bytes to send on UART RX (a file if it exists, else the text; \\n escapes)", "FILE|TEXT");
  args.custom("--uart-prompt", "STR", "send --uart-in one line per appearance of STR on the UART output",
              [&](const std::string& o, const std::string& v) {
                prompt = simc::unescape(v);
                if (prompt.empty()) die("%s: empty prompt", o.c_str());
              });
  args.number("--uart-start", &uartStart, "without --uart-prompt: first RX byte at cycle N (default 0)");
  args.number("--uart-gap", &uartGap, "idle cycles between RX bytes (default 20 bit times)");
  args.number("--uart-div", &uartDiv, "UART clock divider forced after reset (bit = 8*(N+1) cycles), default 1; "
              "-1 keeps the hardware reset value (115200 baud at 100 MHz)", "N", (int32_t)-1, (int32_t)0xFFFFF);
  args.custom("--uart-tcp", "PORT", "serve the UART as a raw byte stream on 127.0.0.1:PORT (pyserial socket://127.0.0.1:PORT; 0 = any free port)",
              [&](const std::string& o, const std::string& v) { uartTcp = (uint32_t)simc::toUnsigned(v, o, 65535); tcpGiven = true; });
  args.flag("--uart-pty", &uartPty, "serve the UART on a new pseudo-terminal (its path is printed on stderr)");
  args.flag("--quiet", &quiet, "do not echo the UART output on stdout");
  std::string nandPart = "mt29f4g08abada";
  args.custom("--nand-part", "NAME", "NAND part on every target: mt29f4g08abada (SDR, default) or mt29f16g08ababa "
              "(NV-DDR modes 0-5, 4096 + 224-byte pages, 128 pages per block)",
              [&](const std::string& o, const std::string& v) {
                if (v != "mt29f4g08abada" && v != "mt29f16g08ababa") die("%s: unknown part '%s'", o.c_str(), v.c_str());
                nandPart = v;
              });
  args.number("--nand-tap-ps", &nandTapPs, "NV-DDR read capture: delay per DQ delay-line tap in ps (default 25)", "PS", 1u, 1000u);
  args.number("--nand-taps", &nandTaps, "NV-DDR read capture: taps of the DQ delay line (default 128, ECP5 DELAYF)", "N", 1u, 512u);
  args.number("--nand-blocks", &nandBlocks, "blocks per NAND target (default: the MT29F4G08 datasheet's 4096)", "N", 1u, 1u << 20);
  args.custom("--nand-bad", "B,B,...", "factory-bad blocks on every target: PROGRAM and ERASE there fail (status FAIL)",
              [&](const std::string& o, const std::string& v) { nandBad = parseList(o, v, (1u << 20) - 1); });
  args.number("--nand-bit-errors", &nandBitErrors, "bit flips injected into every NAND page read (default 0)", "N", 0u, 4096u);
  args.custom("--nand-bit-error-spread", "0|1", "1: flip i lands in sector i % sectors (default); 0: anywhere in the page",
              [&](const std::string& o, const std::string& v) { nandSpread = simc::toUnsigned(v, o, 1); });
  args.custom("--nand-stuck-busy", "T[@CYCLE]", "target T holds R/B# low from its first busy period after CYCLE (default 0) on (repeatable)",
              [&](const std::string& o, const std::string& v) {
                size_t at = v.find('@');
                Stuck s{(uint32_t)simc::toUnsigned(v.substr(0, at), o + " target", NAND_TARGETS - 1), 0};
                if (at != std::string::npos) s.cycle = simc::toUnsigned(v.substr(at + 1), o + " cycle", UINT64_MAX);
                stuck.push_back(s);
              }, true);
  args.number("--nand-seed", &nandSeed, "seed of the NAND models' bit-error positions (default 1)");
  std::vector<std::pair<std::string, std::string>> faultSpecs;  // (file or "", line); parsed once the geometry is known
  args.custom("--nand-faults", "FILE", "NAND fault schedule, one fault per line (docs/storage.md; sim/soc/nand_faults.h); "
              "a power cut resets the SoC and powers the NAND on again, its array kept",
              [&](const std::string& o, const std::string& v) { simc::checkInputFile(v, o, true); faultSpecs.push_back({v, ""}); }, true);
  args.custom("--nand-fault", "LINE", "one line of a fault schedule, e.g. 'power-cut 0 program 8-11 2' (repeatable)",
              [&](const std::string&, const std::string& v) { faultSpecs.push_back({"", v}); }, true);
  args.number("--max-cycles", &maxCycles, "stop with exit status 124 after N cycles (default 2000000000)", "N", (uint64_t)1, UINT64_MAX);
  args.output("--wave", &wavePath, "dump FST waves (only in the build made with --trace-fst)", "FILE.fst");
  args.number("--wave-from", &waveFrom, "start dumping at cycle N (counted from power-on, reset is 16 cycles)");
  args.parse(argc, argv);
  if (tcpGiven && uartPty) die("--uart-tcp and --uart-pty: choose one");
#if !VM_TRACE
  if (!wavePath.empty()) die("--wave needs the harness built with --trace-fst (soc.build_soc(trace=True))");
#endif
  simc::checkInputFile(firmware, "firmware");

  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<VLsmcSoc>(ctx.get(), "TOP");
  Verilated::threadContextp(ctx.get());

  // Memories and loading: DDR is one lazily mapped array (loads are a memcpy), the on-chip RAM is
  // the RTL's own byte-lane arrays (reached by name, made public by sim/soc/soc.vlt).
  simc::Memory ddr(DDR_BASE, DDR_SIZE);
  uint8_t* ram[4];
  for (int l = 0; l < 4; l++) {
    std::string var = "ram_symbol" + std::to_string(l);
    ram[l] = findVar("TOP.LsmcSoc.ram", var.c_str(), RAM_SIZE / 4);
    memset(ram[l], 0, RAM_SIZE / 4);
  }
  simc::PutFn put = [&](uint32_t addr, const uint8_t* data, size_t len, const std::string& what) {
    if (addr >= RAM_BASE && (uint64_t)addr - RAM_BASE + len <= RAM_SIZE) {
      for (size_t i = 0; i < len; i++) {
        uint32_t off = addr - RAM_BASE + (uint32_t)i;
        ram[off & 3][off >> 2] = data ? data[i] : 0;
      }
    } else if (ddr.contains(addr, len)) {
      if (data) memcpy(ddr.at(addr), data, len);
      else memset(ddr.at(addr), 0, len);
    } else {
      die("%s: 0x%08x+0x%zx is neither in on-chip RAM nor in DDR", what.c_str(), addr, len);
    }
  };
  std::vector<uint8_t> fw = simc::readFile(firmware, "firmware");
  if (firmware.size() > 4 && firmware.compare(firmware.size() - 4, 4, ".bin") == 0)
    put(RAM_BASE, fw.data(), fw.size(), firmware);
  else
    simc::loadElf(firmware, fw, put);
  for (auto& ld : loads) {
    std::vector<uint8_t> data = simc::readFile(ld.path, "--load");
    put(ld.addr, data.data(), data.size(), "--load " + ld.path);
  }
  for (auto& d : dumps)
    if (!ddr.contains(d.addr, d.len)) die("--dump 0x%08x:%u is outside DDR", d.addr, d.len);

  // DDR ports: the CPU's (32-bit) and the DMA's (256-bit), one memory (a multi-port controller).
  simc::AxiConfig acfg;
  acfg.readLatency = ddrLatency;
  std::unique_ptr<simc::DdrModel> ddrModel;  // one controller for both ports: they share banks and bus
  if (ddrName != "fixed") {
    if (args.given("--ddr-latency")) die("--ddr-latency applies to --ddr fixed only");
  } else if (args.given("--ddr-param")) {
    die("--ddr-param applies to a DRAM preset, not to --ddr fixed");
  }
  if (ddrName != "fixed") {
    ddrModel = std::make_unique<simc::DdrModel>(*simc::findDdrPreset(ddrName), CPU_HZ, ddrCtl);
    acfg.timing = ddrModel.get();
  }
  simc::AxiSlave<CData>::Pins cpuPins;
  SIMC_BIND_AXI(cpuPins, top, io_ddr);
  cpuPins.wData = &top->io_ddr_w_payload_data;
  cpuPins.rData = &top->io_ddr_r_payload_data;
  // The DMA ports' width (lsmc_soc_config.h): WSTRB is 32 bits (IData) at 256-bit data, 64 bits (QData) at 512.
#if LSMC_DMA_PORT_BYTES == 32
  using DmaStrb = IData;
#elif LSMC_DMA_PORT_BYTES == 64
  using DmaStrb = QData;
#else
#error "LSMC_DMA_PORT_BYTES must be 32 or 64"
#endif
  simc::AxiSlave<DmaStrb>::Pins dmaPins;
  SIMC_BIND_AXI(dmaPins, top, io_ddrDma);
  dmaPins.wData = top->io_ddrDma_w_payload_data.data();
  dmaPins.rData = top->io_ddrDma_r_payload_data.data();
  simc::AxiSlave<CData> ddrCpu("ddr", 4, &ddr, cpuPins, acfg);
  acfg.timingPort = 1;
  simc::AxiSlave<DmaStrb> ddrDma("ddrDma", LSMC_DMA_PORT_BYTES, &ddr, dmaPins, acfg);
  // The DDR ports of compaction units 1.. when the SoC gives each unit its own, P per unit with
  // dma.readPorts P (lsmc_soc_config.h lists them; each is one more port of the same controller and memory).
  std::vector<std::unique_ptr<simc::AxiSlave<DmaStrb>>> ddrDmaMore;
#define SIMC_DMA_PORT(n)                                                                                 \
  do {                                                                                                   \
    simc::AxiSlave<DmaStrb>::Pins p;                                                                     \
    SIMC_BIND_AXI(p, top, io_ddrDma##n);                                                                 \
    p.wData = top->io_ddrDma##n##_w_payload_data.data();                                                 \
    p.rData = top->io_ddrDma##n##_r_payload_data.data();                                                 \
    acfg.timingPort = 1 + n;                                                                             \
    ddrDmaMore.emplace_back(new simc::AxiSlave<DmaStrb>("ddrDma" #n, LSMC_DMA_PORT_BYTES, &ddr, p, acfg)); \
  } while (0);
  LSMC_FOR_EACH_MORE_DMA_PORT(SIMC_DMA_PORT)
#undef SIMC_DMA_PORT

  IData* divider = reinterpret_cast<IData*>(findVar("TOP.LsmcSoc.uart", "bridge_uartConfigReg_clockDivider", 4));
  simc::Uart uart(&top->io_uart_txd, &top->io_uart_rxd, uartBitCycles, divider);
  uart.echo = !quiet;
  if (!logPath.empty() && !(uart.log = fopen(logPath.c_str(), "w"))) die("--log: cannot write %s", logPath.c_str());
  if (!uartIn.empty()) {
    std::string text = simc::unescape(uartIn);  // a file if it exists, else the text itself
    if (access(uartIn.c_str(), F_OK) == 0) {
      std::vector<uint8_t> d = simc::readFile(uartIn, "--uart-in");
      text.assign(d.begin(), d.end());
    }
    uart.script(text, prompt);
  }
  uart.rxStartAt = uartStart;
  std::unique_ptr<simc::SerialLink> link;
  if (tcpGiven) link.reset(simc::SerialLink::tcp(uartTcp));
  if (uartPty) link.reset(simc::SerialLink::pty());
  if (link) {
    uart.link = link.get();
    fprintf(stderr, "sim: UART on %s\n", link->description().c_str());
    fflush(stderr);
  }

  onfi::Config ncfg = nandPart == "mt29f16g08ababa" ? onfi::mt29f16g08ababa() : onfi::Config();
  if (nandBlocks) ncfg.blocks = nandBlocks;
  for (uint32_t b : nandBad)
    if (b >= ncfg.blocks) die("--nand-bad: block %u is past the last block %u", b, ncfg.blocks - 1);
  ncfg.bad_blocks = nandBad;
  ncfg.bit_errors_per_read = (int)nandBitErrors;
  ncfg.bit_error_spread = nandSpread;
  ncfg.seed = nandSeed;
  // The generated SoC's NAND channels, each with its models and its lines of the fault schedule.
  std::vector<NandPinPtrs> nandPins = nandChannelPins(top.get());
  nandf::Schedule faults;
  for (auto& f : faultSpecs) {
    if (f.second.empty()) faults.addFile(f.first, (uint32_t)nandPins.size(), NAND_TARGETS, ncfg.blocks, ncfg.pages_per_block);
    else faults.addLine(f.second, "--nand-fault", (uint32_t)nandPins.size(), NAND_TARGETS, ncfg.blocks, ncfg.pages_per_block);
  }
  for (auto& f : faults.faults)
    if (f.kind == nandf::Kind::StuckBusy)
      for (uint32_t t = 0; t < NAND_TARGETS; t++)
        if (f.target < 0 || (uint32_t)f.target == t) stuck.push_back(Stuck{t, f.cycle, (uint32_t)f.channel});
  std::vector<std::unique_ptr<NandChannel>> nandChannels;
  for (size_t ch = 0; ch < nandPins.size(); ch++) {
    nandChannels.push_back(std::make_unique<NandChannel>());
    nandChannels.back()->init(nandPins[ch], ch, ncfg, faults);
    nandChannels.back()->pads.tap_ps = nandTapPs;
    nandChannels.back()->pads.taps = nandTaps;
    faults.attach(nandChannels.back()->models, ch, ncfg.pages_per_block);
  }

#if VM_TRACE
  std::unique_ptr<VerilatedFstC> tfp;
  if (!wavePath.empty()) {
    Verilated::traceEverOn(true);
    tfp = std::make_unique<VerilatedFstC>();
    top->trace(tfp.get(), 99);
    tfp->open(wavePath.c_str());
    if (!tfp->isOpen()) die("--wave: cannot write %s", wavePath.c_str());
  }
#endif

  top->io_simArg = simArg;
  top->io_uart_rxd = 1;
  top->clk = 0;
  uint64_t cycle = 0;
  auto driveDdr = [&](uint64_t c) {
    ddrCpu.drive(c);
    ddrDma.drive(c);
    for (auto& d : ddrDmaMore) d->drive(c);
  };
  // The gated build registers the DDR ports' slave-driven inputs (common.SimInputStage): what the models
  // present for cycle t is written before the rising edge that ends cycle t - 1, right after their
  // edge(t - 1) (their outputs depend only on their state), and once at the last reset cycle. The same
  // calls in the same order as the free-running build, which drives them before cycle t's falling edge.
#ifdef LSMC_NO_CLOCK_GATE
  constexpr bool inputStage = false;
#else
  constexpr bool inputStage = true;
#endif
#if VM_TRACE
  auto eval = [&] { top->eval(); };  // eval() also marks the trace's activity
#else
  auto eval = [&] { VLsmcSoc___024root___eval(top->rootp); };
#endif
  auto step = [&](bool resetting, bool lastReset = false) {
    top->clk = 0;
    if (!resetting) {
      if (!inputStage) driveDdr(cycle);
      for (auto& ch : nandChannels) ch->drive(cycle * NS_PER_CYCLE);
      // RX before the falling edge, where the UART's clock gate samples its enable (the line is read
      // only at the rising edge; TX changes only there, so it reads the same on either side).
      uart.tick(cycle);
    }
    eval();
#if VM_TRACE
    if (tfp && cycle >= waveFrom) tfp->dump(cycle * 10);
#endif
    if (!resetting) {
      ddrCpu.edge(cycle);
      ddrDma.edge(cycle);
      for (auto& d : ddrDmaMore) d->edge(cycle);
    }
    if (inputStage && (!resetting || lastReset)) driveDdr(cycle + 1);
    top->clk = 1;
    eval();
#if VM_TRACE
    if (tfp && cycle >= waveFrom) tfp->dump(cycle * 10 + 5);
#endif
    if (!resetting)
      for (auto& ch : nandChannels) ch->edge(cycle * NS_PER_CYCLE);
    cycle++;
  };

  // Synchronous reset, held long enough for every block.
  top->reset = 1;
  top->eval();  // the initial blocks and settle, with reset's inputs; eval() above from now on
  for (int i = 0; i < 16; i++) step(true, i == 15);
  top->reset = 0;
  if (uartDiv >= 0) *divider = (IData)uartDiv;
  uart.rxGap = uartGap != UINT64_MAX ? uartGap : 20 * uart.bitCycles();
  uint64_t resetCycles = cycle;
  uint64_t nextStuck = stuck.empty() ? UINT64_MAX : 0;

  // A power cut (fault schedule): the target cut mid-operation is off; the whole card loses power. The
  // NAND arrays persist (the models' state, within this harness run); DDR, on-chip RAM, CPU and every
  // controller do not: memories are cleared, the firmware and --load files are put back (what a boot
  // loader and the host would do), the SoC is held in reset and the NAND powered on again.
  uint64_t cutsDone = 0;
  auto powerCycle = [&]() {
    cutsDone = faults.cuts;
    fflush(stdout);
    char msg[200];
    // channel 0's targets keep their one-channel name ("target T"), others are "target C.T"
    char who[24];
    if (faults.cutChannel) snprintf(who, sizeof who, "%d.%d", faults.cutChannel, faults.cutTarget);
    else snprintf(who, sizeof who, "%d", faults.cutTarget);
    snprintf(msg, sizeof msg, "\n[sim: power cut %" PRIu64 " at cycle %" PRIu64 ": target %s %s row %u (block %u); SoC reset, NAND powered on]\n",
             cutsDone, cycle, who, faults.cutErase ? "erase" : "program", faults.cutRow, faults.cutRow / ncfg.pages_per_block);
    fputs(msg, stdout);
    fflush(stdout);
    if (uart.log) fputs(msg, uart.log);
    fputs(msg + 1, stderr);
    for (auto& d : dumps) simc::writeFileAtomic(d.path + ".cut" + std::to_string(cutsDone), ddr.at(d.addr), d.len, "--dump");
    ddrCpu.reset();
    ddrDma.reset();
    uart.dutReset();
    ddr.remap(ddr.base(), ddr.size());
    for (int l = 0; l < 4; l++) memset(ram[l], 0, RAM_SIZE / 4);
    if (firmware.size() > 4 && firmware.compare(firmware.size() - 4, 4, ".bin") == 0) put(RAM_BASE, fw.data(), fw.size(), firmware);
    else simc::loadElf(firmware, fw, put);
    for (auto& ld : loads) {
      std::vector<uint8_t> data = simc::readFile(ld.path, "--load");
      put(ld.addr, data.data(), data.size(), "--load " + ld.path);
    }
    top->reset = 1;
    for (int i = 0; i < 16; i++) step(true, i == 15);
    top->reset = 0;
    if (uartDiv >= 0) *divider = (IData)uartDiv;
    for (auto& ch : nandChannels) ch->powerOn(cycle * NS_PER_CYCLE);
  };

  simc::RunStats stats;
  stats.start(cycle);
  int status = -1;
  uint64_t idleAfterExit = 0, drainCycles = 0;
  std::string linkIn;
  while (true) {
    step(false);
    stats.tick(cycle, uart.lastOutputCycle);
    if (link && cycle % LINK_POLL_CYCLES == 0 && link->poll(linkIn)) {
      for (char c : linkIn) uart.send((uint8_t)c);
      linkIn.clear();
    }
    if (faults.cuts != cutsDone && status < 0) powerCycle();
    if (cycle >= nextStuck) {  // fault injection: arm stuck R/B# at its cycle
      nextStuck = UINT64_MAX;
      for (auto& s : stuck) {
        if (s.cycle == UINT64_MAX) continue;
        if (cycle - resetCycles >= s.cycle) {
          nandChannels[s.channel]->models[s.target]->set_stuck_busy(true);
          s.cycle = UINT64_MAX;
        } else if (resetCycles + s.cycle < nextStuck) {
          nextStuck = resetCycles + s.cycle;
        }
      }
    }
    if (top->io_simExit_valid && status < 0) status = (int)(top->io_simExit_payload & 0xff);
    if (status >= 0) {
      // Let the UART send what the firmware queued before SIM_EXIT: the TX FIFO feeds the line without
      // gaps, so two idle bit times mean it is empty.
      if (uart.txIdle()) {
        if (++idleAfterExit >= 2 * uart.bitCycles()) break;
      } else {
        idleAfterExit = 0;
      }
      if (++drainCycles > 20000000ull) break;  // firmware still printing after SIM_EXIT: stop anyway
    }
    if (status < 0 && cycle - resetCycles >= maxCycles) {
      fflush(stdout);
      fprintf(stderr, "\nsim: --max-cycles %" PRIu64 " reached without SIM_EXIT\n", maxCycles);
      status = 124;
      break;
    }
  }
  stats.finish(cycle);
  if (link) {
    link->poll(linkIn);  // deliver the last bytes
  }
  fflush(stdout);
  top->final();
#if VM_TRACE
  if (tfp) tfp->close();
#endif
  if (uart.log && fclose(uart.log) != 0) die("--log: cannot write %s", logPath.c_str());

  for (auto& d : dumps) simc::writeFileAtomic(d.path, ddr.at(d.addr), d.len, "--dump");
  for (auto& ch : nandChannels) {
    if (ch->contention)
      fprintf(stderr, "sim: NAND DQ bus contention in %" PRIu64 " cycles (%s)\n", ch->contention, ch->names[0].c_str());
    for (size_t i = 0; i < ch->models.size(); i++) {
      auto& m = *ch->models[i];
      if (m.n_commands)
        fprintf(stderr, "sim: %s: %" PRIu64 " commands, %" PRIu64 " reads, %" PRIu64 " programs, %" PRIu64
                " erases, %" PRIu64 " bit errors\n", ch->names[i].c_str(), m.n_commands, m.n_reads, m.n_programs, m.n_erases, m.n_bit_errors);
    }
  }
  faults.report(stderr);
  for (size_t c = 0; c < nandChannels.size(); c++)
    for (size_t i = 0; i < nandChannels[c]->models.size(); i++) {
      uint64_t grave = nandChannels[c]->models[i]->n_faults - (c < 4 && i < 8 ? faults.byTarget[c][i] : 0);  // the rest
      if (grave) fprintf(stderr, "sim: %s: %" PRIu64 " grave-page reads\n", nandChannels[c]->names[i].c_str(), grave);
    }
  if (faults.cuts) fprintf(stderr, "sim: %" PRIu64 " power cut(s)\n", faults.cuts);
  if (uart.framingErrors) fprintf(stderr, "sim: %" PRIu64 " UART framing errors\n", uart.framingErrors);
  uint64_t violations = ddrCpu.violations + ddrDma.violations;
  uint64_t dmaReads = ddrDma.readBeats, dmaWrites = ddrDma.writeBeats;
  for (auto& d : ddrDmaMore) {
    violations += d->violations;
    dmaReads += d->readBeats;
    dmaWrites += d->writeBeats;
  }
  if (violations) {
    fprintf(stderr, "sim: %" PRIu64 " AXI protocol violation(s) on the DDR ports\n", violations);
    if (status == 0) status = 4;
  }
  // The DDR model every figure of this run depends on, on a line of its own for reports.
  if (ddrModel) ddrModel->print(stderr);
  else fprintf(stderr, "sim: ddr fixed: read latency %u cycles, no bandwidth limit\n", ddrLatency);
  fprintf(stderr, "ddr: %s\n", ddrName.c_str());
  fprintf(stderr, "sim: exit %d; ddr beats r/w %" PRIu64 "/%" PRIu64 ", ddrDma beats r/w %" PRIu64 "/%" PRIu64 "\n",
          status, ddrCpu.readBeats, ddrCpu.writeBeats, dmaReads, dmaWrites);
  // CPU time (what the model costs; the machine may be shared) and wall clock (what a user waits).
  stats.print(stderr);
  return status;
}
