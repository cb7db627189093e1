// Verilator harness of the whole SoC (LsmcSoc): only the wiring lives here. The parts every harness
// shares are in sim/common/: the option parser (args), the AXI4 memory model with its protocol checks
// (axi_mem.h), the UART line model and its TCP / pseudo-terminal link (uart.h, serial_link), the ELF
// loader and --load/--dump specifications (loader), the speed lines (run_stats.h).
// Single-threaded on purpose: see docs/simulation.md for the measured speeds.
// main() is three steps: parseOptions() (the command line), SocSim (the model with its memories, DDR
// ports, UART and NAND channels built from the options; reset, run loop with fault injection, final
// dumps and closing lines).
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

// ------------------------------------------------------------------------------------ options
// Everything the command line sets; parseOptions() refuses bad values (one line, exit status 2) and
// the simulator below checks what needs the built model (memory ranges, block numbers).
struct Stuck {
  uint32_t target;
  uint64_t cycle;
  uint32_t channel = 0;
};

struct Options {
  std::string firmware, logPath, uartIn, prompt, wavePath, ddrName = "fixed", nandPart = "mt29f4g08abada";
  uint32_t simArg = 0, ddrLatency = 20, nandBlocks = 0, nandSeed = 1, nandTapPs = onfi::DdrPads().tap_ps,
           nandTaps = onfi::DdrPads().taps;
  uint64_t maxCycles = 2000000000ull, uartStart = 0, waveFrom = 0, uartGap = UINT64_MAX;
  int32_t uartDiv = 1;
  uint32_t uartTcp = 0, nandBitErrors = 0;
  bool quiet = false, uartPty = false, nandSpread = true, tcpGiven = false;
  bool ddrLatencyGiven = false, ddrParamGiven = false;
  simc::DdrController ddrCtl;
  std::vector<simc::LoadSpec> loads;
  std::vector<simc::DumpSpec> dumps;
  std::vector<uint32_t> nandBad;
  std::vector<Stuck> stuck;
  std::vector<std::pair<std::string, std::string>> faultSpecs;  // (file or "", line); parsed once the geometry is known
};

Options parseOptions(int argc, char** argv) {
  Options o;
  simc::setProgram("sim");
  simc::Args args("VLsmcSoc FIRMWARE [options]",
                  "Ends when the firmware writes SIM_EXIT ((code<<1)|1 to 0xF000F000); exit status = code & 0xff;\n"
                  "124 on --max-cycles, 2 on bad input, 3 on a NAND timing violation, 4 on an AXI protocol violation.");
  args.positional("FIRMWARE", &o.firmware, "ELF32 RISC-V (segments go to on-chip RAM / DDR), or a raw .bin loaded at 0x80000000");
  args.number("--arg", &o.simArg, "value of SIM_ARG (0xF000F004), default 0");
  args.number("--ddr-latency", &o.ddrLatency, "DDR read latency in cycles (AR handshake to first beat), default 20", "N", 0u, 100000u);
  args.custom("--ddr", "MODEL", "DDR timing: fixed (--ddr-latency, no bandwidth limit; default) or a DRAM preset shared by "
              "both ports (" + simc::ddrPresetNames() + ", sim/common/ddr_presets.json, docs/ddr-model.md)",
              [&](const std::string& opt, const std::string& v) {
                if (v != "fixed" && !simc::findDdrPreset(v))
                  die("%s: unknown model '%s' (fixed|%s)", opt.c_str(), v.c_str(), simc::ddrPresetNames().c_str());
                o.ddrName = v;
              });
  args.custom("--ddr-param", "NAME=N", "override one calibrated controller latency of the DDR model (portIn, cmdQueue, "
              "portOut, writeAck, readCredits; docs/ddr-model.md); repeatable",
              [&](const std::string& opt, const std::string& v) {
                size_t eq = v.find('=');
                if (eq == std::string::npos) die("%s: expected NAME=N, got '%s'", opt.c_str(), v.c_str());
                if (!o.ddrCtl.set(v.substr(0, eq), (unsigned)simc::toUnsigned(v.substr(eq + 1), opt, 1000)))
                  die("%s: no controller parameter '%s'", opt.c_str(), v.substr(0, eq).c_str());
              }, true);
  args.custom("--load", "ADDR=FILE", "put FILE's bytes into memory at ADDR before reset (also FILE@ADDR; repeatable)",
              [&](const std::string& opt, const std::string& v) { o.loads.push_back(simc::parseLoad(opt, v)); }, true);
  args.custom("--dump", "ADDR:LEN=FILE", "save LEN bytes of memory at ADDR into FILE after the run (also ADDR:LEN@FILE; repeatable)",
              [&](const std::string& opt, const std::string& v) { o.dumps.push_back(simc::parseDump(opt, v)); }, true);
  args.output("--log", &o.logPath, "also write the UART output to FILE");
  args.text("--uart-in", &o.uartIn, "bytes to send on UART RX (a file if it exists, else the text; \\n escapes)", "FILE|TEXT");
  args.custom("--uart-prompt", "STR", "send --uart-in one line per appearance of STR on the UART output",
              [&](const std::string& opt, const std::string& v) {
                o.prompt = simc::unescape(v);
                if (o.prompt.empty()) die("%s: empty prompt", opt.c_str());
              });
  args.number("--uart-start", &o.uartStart, "without --uart-prompt: first RX byte at cycle N (default 0)");
  args.number("--uart-gap", &o.uartGap, "idle cycles between RX bytes (default 20 bit times)");
  args.number("--uart-div", &o.uartDiv, "UART clock divider forced after reset (bit = 8*(N+1) cycles), default 1; "
              "-1 keeps the hardware reset value (115200 baud at 100 MHz)", "N", (int32_t)-1, (int32_t)0xFFFFF);
  args.custom("--uart-tcp", "PORT", "serve the UART as a raw byte stream on 127.0.0.1:PORT (pyserial socket://127.0.0.1:PORT; 0 = any free port)",
              [&](const std::string& opt, const std::string& v) {
                o.uartTcp = (uint32_t)simc::toUnsigned(v, opt, 65535);
                o.tcpGiven = true;
              });
  args.flag("--uart-pty", &o.uartPty, "serve the UART on a new pseudo-terminal (its path is printed on stderr)");
  args.flag("--quiet", &o.quiet, "do not echo the UART output on stdout");
  args.custom("--nand-part", "NAME", "NAND part on every target: mt29f4g08abada (SDR, default) or mt29f16g08ababa "
              "(NV-DDR modes 0-5, 4096 + 224-byte pages, 128 pages per block)",
              [&](const std::string& opt, const std::string& v) {
                if (v != "mt29f4g08abada" && v != "mt29f16g08ababa") die("%s: unknown part '%s'", opt.c_str(), v.c_str());
                o.nandPart = v;
              });
  args.number("--nand-tap-ps", &o.nandTapPs, "NV-DDR read capture: delay per DQ delay-line tap in ps (default 25)", "PS", 1u, 1000u);
  args.number("--nand-taps", &o.nandTaps, "NV-DDR read capture: taps of the DQ delay line (default 128, ECP5 DELAYF)", "N", 1u, 512u);
  args.number("--nand-blocks", &o.nandBlocks, "blocks per NAND target (default: the MT29F4G08 datasheet's 4096)", "N", 1u, 1u << 20);
  args.custom("--nand-bad", "B,B,...", "factory-bad blocks on every target: PROGRAM and ERASE there fail (status FAIL)",
              [&](const std::string& opt, const std::string& v) { o.nandBad = parseList(opt, v, (1u << 20) - 1); });
  args.number("--nand-bit-errors", &o.nandBitErrors, "bit flips injected into every NAND page read (default 0)", "N", 0u, 4096u);
  args.custom("--nand-bit-error-spread", "0|1", "1: flip i lands in sector i % sectors (default); 0: anywhere in the page",
              [&](const std::string& opt, const std::string& v) { o.nandSpread = simc::toUnsigned(v, opt, 1); });
  args.custom("--nand-stuck-busy", "T[@CYCLE]", "target T holds R/B# low from its first busy period after CYCLE (default 0) on (repeatable)",
              [&](const std::string& opt, const std::string& v) {
                size_t at = v.find('@');
                Stuck s{(uint32_t)simc::toUnsigned(v.substr(0, at), opt + " target", NAND_TARGETS - 1), 0};
                if (at != std::string::npos) s.cycle = simc::toUnsigned(v.substr(at + 1), opt + " cycle", UINT64_MAX);
                o.stuck.push_back(s);
              }, true);
  args.number("--nand-seed", &o.nandSeed, "seed of the NAND models' bit-error positions (default 1)");
  args.custom("--nand-faults", "FILE", "NAND fault schedule, one fault per line (docs/storage.md; sim/soc/nand_faults.h); "
              "a power cut resets the SoC and powers the NAND on again, its array kept",
              [&](const std::string& opt, const std::string& v) {
                simc::checkInputFile(v, opt, true);
                o.faultSpecs.push_back({v, ""});
              }, true);
  args.custom("--nand-fault", "LINE", "one line of a fault schedule, e.g. 'power-cut 0 program 8-11 2' (repeatable)",
              [&](const std::string&, const std::string& v) { o.faultSpecs.push_back({"", v}); }, true);
  args.number("--max-cycles", &o.maxCycles, "stop with exit status 124 after N cycles (default 2000000000)", "N", (uint64_t)1, UINT64_MAX);
  args.output("--wave", &o.wavePath, "dump FST waves (only in the build made with --trace-fst)", "FILE.fst");
  args.number("--wave-from", &o.waveFrom, "start dumping at cycle N (counted from power-on, reset is 16 cycles)");
  args.parse(argc, argv);
  o.ddrLatencyGiven = args.given("--ddr-latency");
  o.ddrParamGiven = args.given("--ddr-param");
  if (o.tcpGiven && o.uartPty) die("--uart-tcp and --uart-pty: choose one");
#if !VM_TRACE
  if (!o.wavePath.empty()) die("--wave needs the harness built with --trace-fst (soc.build_soc(trace=True))");
#endif
  simc::checkInputFile(o.firmware, "firmware");
  return o;
}

// The DMA ports' width (lsmc_soc_config.h): WSTRB is 32 bits (IData) at 256-bit data, 64 bits (QData) at 512.
#if LSMC_DMA_PORT_BYTES == 32
using DmaStrb = IData;
#elif LSMC_DMA_PORT_BYTES == 64
using DmaStrb = QData;
#else
#error "LSMC_DMA_PORT_BYTES must be 32 or 64"
#endif

// The gated build registers the DDR ports' slave-driven inputs (common.SimInputStage): what the models
// present for cycle t is written before the rising edge that ends cycle t - 1, right after their
// edge(t - 1) (their outputs depend only on their state), and once at the last reset cycle. The same
// calls in the same order as the free-running build, which drives them before cycle t's falling edge.
#ifdef LSMC_NO_CLOCK_GATE
constexpr bool INPUT_STAGE = false;
#else
constexpr bool INPUT_STAGE = true;
#endif

// ------------------------------------------------------------------------------------ simulator
// The SoC model with its memories, DDR ports, UART and NAND channels, built from the options (every
// start-up refusal in the order a user meets them: images, DDR, UART, NAND, waves); then reset(),
// run() until SIM_EXIT or --max-cycles, and finish() for the dumps and the closing lines.
class SocSim {
 public:
  explicit SocSim(const Options& opt);
  void reset();
  int run();
  int finish(int status);

 private:
  bool isBin() const { return o_.firmware.size() > 4 && o_.firmware.compare(o_.firmware.size() - 4, 4, ".bin") == 0; }
  void put(uint32_t addr, const uint8_t* data, size_t len, const std::string& what);
  void loadImages();
  void makeDdrPorts();
  void makeUart();
  void makeNand();
  void openWaves();
  void resetCycles();
  void eval();
  void driveDdr(uint64_t c);
  void step(bool resetting, bool lastReset = false);
  void powerCycle();
  void armStuck();
  void reportNand() const;

  const Options& o_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<VLsmcSoc> top_;
  // Memories: DDR is one lazily mapped array (loads are a memcpy), the on-chip RAM is the RTL's own
  // byte-lane arrays (reached by name, made public by sim/soc/soc.vlt).
  simc::Memory ddr_{DDR_BASE, DDR_SIZE};
  uint8_t* ram_[4];
  std::vector<uint8_t> fw_;
  // DDR ports: the CPU's (32-bit) and the DMA's (256-bit), one memory (a multi-port controller).
  std::unique_ptr<simc::DdrModel> ddrModel_;  // one controller for both ports: they share banks and bus
  std::unique_ptr<simc::AxiSlave<CData>> ddrCpu_;
  std::unique_ptr<simc::AxiSlave<DmaStrb>> ddrDma_;
  std::vector<std::unique_ptr<simc::AxiSlave<DmaStrb>>> ddrDmaMore_;
  IData* divider_ = nullptr;
  std::unique_ptr<simc::Uart> uart_;
  std::unique_ptr<simc::SerialLink> link_;
  onfi::Config ncfg_;
  nandf::Schedule faults_;
  std::vector<Stuck> stuck_;
  std::vector<std::unique_ptr<NandChannel>> nandChannels_;
#if VM_TRACE
  std::unique_ptr<VerilatedFstC> tfp_;
#endif
  uint64_t cycle_ = 0, resetCycles_ = 0, nextStuck_ = UINT64_MAX, cutsDone_ = 0;
  simc::RunStats stats_;
};

SocSim::SocSim(const Options& opt) : o_(opt), stuck_(opt.stuck) {
  ctx_ = std::make_unique<VerilatedContext>();
  top_ = std::make_unique<VLsmcSoc>(ctx_.get(), "TOP");
  Verilated::threadContextp(ctx_.get());
  for (int l = 0; l < 4; l++) {
    std::string var = "ram_symbol" + std::to_string(l);
    ram_[l] = findVar("TOP.LsmcSoc.ram", var.c_str(), RAM_SIZE / 4);
    memset(ram_[l], 0, RAM_SIZE / 4);
  }
  fw_ = simc::readFile(o_.firmware, "firmware");
  loadImages();
  for (auto& d : o_.dumps)
    if (!ddr_.contains(d.addr, d.len)) die("--dump 0x%08x:%u is outside DDR", d.addr, d.len);
  makeDdrPorts();
  makeUart();
  makeNand();
  openWaves();
}

void SocSim::put(uint32_t addr, const uint8_t* data, size_t len, const std::string& what) {
  if (addr >= RAM_BASE && (uint64_t)addr - RAM_BASE + len <= RAM_SIZE) {
    for (size_t i = 0; i < len; i++) {
      uint32_t off = addr - RAM_BASE + (uint32_t)i;
      ram_[off & 3][off >> 2] = data ? data[i] : 0;
    }
  } else if (ddr_.contains(addr, len)) {
    if (data) memcpy(ddr_.at(addr), data, len);
    else memset(ddr_.at(addr), 0, len);
  } else {
    die("%s: 0x%08x+0x%zx is neither in on-chip RAM nor in DDR", what.c_str(), addr, len);
  }
}

// The firmware and the --load files into memory: at start-up, and again after a power cut.
void SocSim::loadImages() {
  if (isBin()) {
    put(RAM_BASE, fw_.data(), fw_.size(), o_.firmware);
  } else {
    simc::loadElf(o_.firmware, fw_, [this](uint32_t a, const uint8_t* d, size_t n, const std::string& w) { put(a, d, n, w); });
  }
  for (auto& ld : o_.loads) {
    std::vector<uint8_t> data = simc::readFile(ld.path, "--load");
    put(ld.addr, data.data(), data.size(), "--load " + ld.path);
  }
}

void SocSim::makeDdrPorts() {
  simc::AxiConfig acfg;
  acfg.readLatency = o_.ddrLatency;
  if (o_.ddrName != "fixed") {
    if (o_.ddrLatencyGiven) die("--ddr-latency applies to --ddr fixed only");
  } else if (o_.ddrParamGiven) {
    die("--ddr-param applies to a DRAM preset, not to --ddr fixed");
  }
  if (o_.ddrName != "fixed") {
    ddrModel_ = std::make_unique<simc::DdrModel>(*simc::findDdrPreset(o_.ddrName), CPU_HZ, o_.ddrCtl);
    acfg.timing = ddrModel_.get();
  }
  VLsmcSoc* top = top_.get();
  simc::AxiSlave<CData>::Pins cpuPins;
  SIMC_BIND_AXI(cpuPins, top, io_ddr);
  cpuPins.wData = &top->io_ddr_w_payload_data;
  cpuPins.rData = &top->io_ddr_r_payload_data;
  simc::AxiSlave<DmaStrb>::Pins dmaPins;
  SIMC_BIND_AXI(dmaPins, top, io_ddrDma);
  dmaPins.wData = top->io_ddrDma_w_payload_data.data();
  dmaPins.rData = top->io_ddrDma_r_payload_data.data();
  ddrCpu_ = std::make_unique<simc::AxiSlave<CData>>("ddr", 4, &ddr_, cpuPins, acfg);
  acfg.timingPort = 1;
  ddrDma_ = std::make_unique<simc::AxiSlave<DmaStrb>>("ddrDma", LSMC_DMA_PORT_BYTES, &ddr_, dmaPins, acfg);
  // The DDR ports of compaction units 1.. when the SoC gives each unit its own, P per unit with
  // dma.readPorts P (lsmc_soc_config.h lists them; each is one more port of the same controller and memory).
#define SIMC_DMA_PORT(n)                                                                                  \
  do {                                                                                                    \
    simc::AxiSlave<DmaStrb>::Pins p;                                                                      \
    SIMC_BIND_AXI(p, top, io_ddrDma##n);                                                                  \
    p.wData = top->io_ddrDma##n##_w_payload_data.data();                                                  \
    p.rData = top->io_ddrDma##n##_r_payload_data.data();                                                  \
    acfg.timingPort = 1 + n;                                                                              \
    ddrDmaMore_.emplace_back(new simc::AxiSlave<DmaStrb>("ddrDma" #n, LSMC_DMA_PORT_BYTES, &ddr_, p, acfg)); \
  } while (0);
  LSMC_FOR_EACH_MORE_DMA_PORT(SIMC_DMA_PORT)
#undef SIMC_DMA_PORT
}

void SocSim::makeUart() {
  divider_ = reinterpret_cast<IData*>(findVar("TOP.LsmcSoc.uart", "bridge_uartConfigReg_clockDivider", 4));
  uart_ = std::make_unique<simc::Uart>(&top_->io_uart_txd, &top_->io_uart_rxd, uartBitCycles, divider_);
  simc::Uart& uart = *uart_;
  uart.echo = !o_.quiet;
  if (!o_.logPath.empty() && !(uart.log = fopen(o_.logPath.c_str(), "w"))) die("--log: cannot write %s", o_.logPath.c_str());
  if (!o_.uartIn.empty()) {
    std::string text = simc::unescape(o_.uartIn);  // a file if it exists, else the text itself
    if (access(o_.uartIn.c_str(), F_OK) == 0) {
      std::vector<uint8_t> d = simc::readFile(o_.uartIn, "--uart-in");
      text.assign(d.begin(), d.end());
    }
    uart.script(text, o_.prompt);
  }
  uart.rxStartAt = o_.uartStart;
  if (o_.tcpGiven) link_.reset(simc::SerialLink::tcp(o_.uartTcp));
  if (o_.uartPty) link_.reset(simc::SerialLink::pty());
  if (link_) {
    uart.link = link_.get();
    fprintf(stderr, "sim: UART on %s\n", link_->description().c_str());
    fflush(stderr);
  }
}

// The generated SoC's NAND channels, each with its models and its lines of the fault schedule.
void SocSim::makeNand() {
  ncfg_ = o_.nandPart == "mt29f16g08ababa" ? onfi::mt29f16g08ababa() : onfi::Config();
  if (o_.nandBlocks) ncfg_.blocks = o_.nandBlocks;
  for (uint32_t b : o_.nandBad)
    if (b >= ncfg_.blocks) die("--nand-bad: block %u is past the last block %u", b, ncfg_.blocks - 1);
  ncfg_.bad_blocks = o_.nandBad;
  ncfg_.bit_errors_per_read = (int)o_.nandBitErrors;
  ncfg_.bit_error_spread = o_.nandSpread;
  ncfg_.seed = o_.nandSeed;
  std::vector<NandPinPtrs> nandPins = nandChannelPins(top_.get());
  for (auto& f : o_.faultSpecs) {
    if (f.second.empty()) faults_.addFile(f.first, (uint32_t)nandPins.size(), NAND_TARGETS, ncfg_.blocks, ncfg_.pages_per_block);
    else faults_.addLine(f.second, "--nand-fault", (uint32_t)nandPins.size(), NAND_TARGETS, ncfg_.blocks, ncfg_.pages_per_block);
  }
  for (auto& f : faults_.faults)
    if (f.kind == nandf::Kind::StuckBusy)
      for (uint32_t t = 0; t < NAND_TARGETS; t++)
        if (f.target < 0 || (uint32_t)f.target == t) stuck_.push_back(Stuck{t, f.cycle, (uint32_t)f.channel});
  for (size_t ch = 0; ch < nandPins.size(); ch++) {
    nandChannels_.push_back(std::make_unique<NandChannel>());
    nandChannels_.back()->init(nandPins[ch], ch, ncfg_, faults_);
    nandChannels_.back()->pads.tap_ps = o_.nandTapPs;
    nandChannels_.back()->pads.taps = o_.nandTaps;
    faults_.attach(nandChannels_.back()->models, ch, ncfg_.pages_per_block);
  }
}

void SocSim::openWaves() {
#if VM_TRACE
  if (!o_.wavePath.empty()) {
    Verilated::traceEverOn(true);
    tfp_ = std::make_unique<VerilatedFstC>();
    top_->trace(tfp_.get(), 99);
    tfp_->open(o_.wavePath.c_str());
    if (!tfp_->isOpen()) die("--wave: cannot write %s", o_.wavePath.c_str());
  }
#endif
}

inline void SocSim::eval() {
#if VM_TRACE
  top_->eval();  // eval() also marks the trace's activity
#else
  VLsmcSoc___024root___eval(top_->rootp);
#endif
}

inline void SocSim::driveDdr(uint64_t c) {
  ddrCpu_->drive(c);
  ddrDma_->drive(c);
  for (auto& d : ddrDmaMore_) d->drive(c);
}

// One clock cycle: falling edge (models drive the SoC's inputs), rising edge (models see its outputs).
inline void SocSim::step(bool resetting, bool lastReset) {
  top_->clk = 0;
  if (!resetting) {
    if (!INPUT_STAGE) driveDdr(cycle_);
    for (auto& ch : nandChannels_) ch->drive(cycle_ * NS_PER_CYCLE);
    // RX before the falling edge, where the UART's clock gate samples its enable (the line is read
    // only at the rising edge; TX changes only there, so it reads the same on either side).
    uart_->tick(cycle_);
  }
  eval();
#if VM_TRACE
  if (tfp_ && cycle_ >= o_.waveFrom) tfp_->dump(cycle_ * 10);
#endif
  if (!resetting) {
    ddrCpu_->edge(cycle_);
    ddrDma_->edge(cycle_);
    for (auto& d : ddrDmaMore_) d->edge(cycle_);
  }
  if (INPUT_STAGE && (!resetting || lastReset)) driveDdr(cycle_ + 1);
  top_->clk = 1;
  eval();
#if VM_TRACE
  if (tfp_ && cycle_ >= o_.waveFrom) tfp_->dump(cycle_ * 10 + 5);
#endif
  if (!resetting)
    for (auto& ch : nandChannels_) ch->edge(cycle_ * NS_PER_CYCLE);
  cycle_++;
}

// Synchronous reset, held long enough for every block; the forced UART divider after it.
void SocSim::resetCycles() {
  top_->reset = 1;
  for (int i = 0; i < 16; i++) step(true, i == 15);
  top_->reset = 0;
  if (o_.uartDiv >= 0) *divider_ = (IData)o_.uartDiv;
}

void SocSim::reset() {
  top_->io_simArg = o_.simArg;
  top_->io_uart_rxd = 1;
  top_->clk = 0;
  top_->reset = 1;
  top_->eval();  // the initial blocks and settle, with reset's inputs; eval() above from now on
  resetCycles();
  uart_->rxGap = o_.uartGap != UINT64_MAX ? o_.uartGap : 20 * uart_->bitCycles();
  resetCycles_ = cycle_;
  nextStuck_ = stuck_.empty() ? UINT64_MAX : 0;
}

// A power cut (fault schedule): the target cut mid-operation is off; the whole card loses power. The
// NAND arrays persist (the models' state, within this harness run); DDR, on-chip RAM, CPU and every
// controller do not: memories are cleared, the firmware and --load files are put back (what a boot
// loader and the host would do), the SoC is held in reset and the NAND powered on again.
void SocSim::powerCycle() {
  cutsDone_ = faults_.cuts;
  fflush(stdout);
  char msg[200];
  // channel 0's targets keep their one-channel name ("target T"), others are "target C.T"
  char who[24];
  if (faults_.cutChannel) snprintf(who, sizeof who, "%d.%d", faults_.cutChannel, faults_.cutTarget);
  else snprintf(who, sizeof who, "%d", faults_.cutTarget);
  snprintf(msg, sizeof msg, "\n[sim: power cut %" PRIu64 " at cycle %" PRIu64 ": target %s %s row %u (block %u); SoC reset, NAND powered on]\n",
           cutsDone_, cycle_, who, faults_.cutErase ? "erase" : "program", faults_.cutRow, faults_.cutRow / ncfg_.pages_per_block);
  fputs(msg, stdout);
  fflush(stdout);
  if (uart_->log) fputs(msg, uart_->log);
  fputs(msg + 1, stderr);
  for (auto& d : o_.dumps) simc::writeFileAtomic(d.path + ".cut" + std::to_string(cutsDone_), ddr_.at(d.addr), d.len, "--dump");
  ddrCpu_->reset();
  ddrDma_->reset();
  uart_->dutReset();
  ddr_.remap(ddr_.base(), ddr_.size());
  for (int l = 0; l < 4; l++) memset(ram_[l], 0, RAM_SIZE / 4);
  loadImages();
  resetCycles();
  for (auto& ch : nandChannels_) ch->powerOn(cycle_ * NS_PER_CYCLE);
}

// Fault injection: arm each stuck R/B# at its cycle (counted from the end of reset).
void SocSim::armStuck() {
  nextStuck_ = UINT64_MAX;
  for (auto& s : stuck_) {
    if (s.cycle == UINT64_MAX) continue;
    if (cycle_ - resetCycles_ >= s.cycle) {
      nandChannels_[s.channel]->models[s.target]->set_stuck_busy(true);
      s.cycle = UINT64_MAX;
    } else if (resetCycles_ + s.cycle < nextStuck_) {
      nextStuck_ = resetCycles_ + s.cycle;
    }
  }
}

// Until SIM_EXIT (and the UART's last queued bytes) or --max-cycles; returns the exit status.
int SocSim::run() {
  stats_.start(cycle_);
  int status = -1;
  uint64_t idleAfterExit = 0, drainCycles = 0;
  std::string linkIn;
  simc::Uart& uart = *uart_;
  while (true) {
    step(false);
    stats_.tick(cycle_, uart.lastOutputCycle);
    if (link_ && cycle_ % LINK_POLL_CYCLES == 0 && link_->poll(linkIn)) {
      for (char c : linkIn) uart.send((uint8_t)c);
      linkIn.clear();
    }
    if (faults_.cuts != cutsDone_ && status < 0) powerCycle();
    if (cycle_ >= nextStuck_) armStuck();
    if (top_->io_simExit_valid && status < 0) status = (int)(top_->io_simExit_payload & 0xff);
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
    if (status < 0 && cycle_ - resetCycles_ >= o_.maxCycles) {
      fflush(stdout);
      fprintf(stderr, "\nsim: --max-cycles %" PRIu64 " reached without SIM_EXIT\n", o_.maxCycles);
      status = 124;
      break;
    }
  }
  stats_.finish(cycle_);
  if (link_) link_->poll(linkIn);  // deliver the last bytes
  return status;
}

void SocSim::reportNand() const {
  for (auto& ch : nandChannels_) {
    if (ch->contention)
      fprintf(stderr, "sim: NAND DQ bus contention in %" PRIu64 " cycles (%s)\n", ch->contention, ch->names[0].c_str());
    for (size_t i = 0; i < ch->models.size(); i++) {
      auto& m = *ch->models[i];
      if (m.n_commands)
        fprintf(stderr, "sim: %s: %" PRIu64 " commands, %" PRIu64 " reads, %" PRIu64 " programs, %" PRIu64
                " erases, %" PRIu64 " bit errors\n", ch->names[i].c_str(), m.n_commands, m.n_reads, m.n_programs, m.n_erases, m.n_bit_errors);
    }
  }
  faults_.report(stderr);
  for (size_t c = 0; c < nandChannels_.size(); c++)
    for (size_t i = 0; i < nandChannels_[c]->models.size(); i++) {
      uint64_t grave = nandChannels_[c]->models[i]->n_faults - (c < 4 && i < 8 ? faults_.byTarget[c][i] : 0);  // the rest
      if (grave) fprintf(stderr, "sim: %s: %" PRIu64 " grave-page reads\n", nandChannels_[c]->names[i].c_str(), grave);
    }
  if (faults_.cuts) fprintf(stderr, "sim: %" PRIu64 " power cut(s)\n", faults_.cuts);
}

// The model's end, the --log and --dump files, and the closing lines on stderr; returns the exit
// status (4 when an otherwise clean run broke the AXI protocol on a DDR port).
int SocSim::finish(int status) {
  fflush(stdout);
  top_->final();
#if VM_TRACE
  if (tfp_) tfp_->close();
#endif
  if (uart_->log && fclose(uart_->log) != 0) die("--log: cannot write %s", o_.logPath.c_str());
  for (auto& d : o_.dumps) simc::writeFileAtomic(d.path, ddr_.at(d.addr), d.len, "--dump");
  reportNand();
  if (uart_->framingErrors) fprintf(stderr, "sim: %" PRIu64 " UART framing errors\n", uart_->framingErrors);
  uint64_t violations = ddrCpu_->violations + ddrDma_->violations;
  uint64_t dmaReads = ddrDma_->readBeats, dmaWrites = ddrDma_->writeBeats;
  for (auto& d : ddrDmaMore_) {
    violations += d->violations;
    dmaReads += d->readBeats;
    dmaWrites += d->writeBeats;
  }
  if (violations) {
    fprintf(stderr, "sim: %" PRIu64 " AXI protocol violation(s) on the DDR ports\n", violations);
    if (status == 0) status = 4;
  }
  // The DDR model every figure of this run depends on, on a line of its own for reports.
  if (ddrModel_) ddrModel_->print(stderr);
  else fprintf(stderr, "sim: ddr fixed: read latency %u cycles, no bandwidth limit\n", o_.ddrLatency);
  fprintf(stderr, "ddr: %s\n", o_.ddrName.c_str());
  fprintf(stderr, "sim: exit %d; ddr beats r/w %" PRIu64 "/%" PRIu64 ", ddrDma beats r/w %" PRIu64 "/%" PRIu64 "\n",
          status, ddrCpu_->readBeats, ddrCpu_->writeBeats, dmaReads, dmaWrites);
  // CPU time (what the model costs; the machine may be shared) and wall clock (what a user waits).
  stats_.print(stderr);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // the console reaches a pipe or a file line by line
  Options opt = parseOptions(argc, argv);
  SocSim sim(opt);
  sim.reset();
  return sim.finish(sim.run());
}
