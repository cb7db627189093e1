// Verilator harness of the whole SoC (LsmcSoc): firmware loader, DDR memory model with two AXI4 ports
// (CPU side 32-bit, DMA side 256-bit), UART line decoder/encoder, simulation control. Single-threaded
// on purpose: see docs/simulation.md for the measured speeds.
//
// usage: VLsmcSoc FIRMWARE.elf|FIRMWARE.bin [options]   (--help lists them)
#include <verilated.h>
#include <verilated_syms.h>
#include "VLsmcSoc.h"
#include "onfi_model.h"
#if VM_TRACE
#include <verilated_fst_c.h>
#endif

#include <chrono>
#include <ctime>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace {

// ------------------------------------------------------------------------------------ memory map
constexpr uint32_t RAM_BASE = 0x80000000u;
constexpr uint32_t RAM_SIZE = 256u << 10;
constexpr uint32_t DDR_BASE = 0x40000000u;
constexpr uint32_t DDR_SIZE = 256u << 20;
constexpr uint64_t NS_PER_CYCLE = 10;  // 100 MHz system clock (NAND timings are checked in ns)
constexpr size_t NAND_TARGETS = 2;     // LsmcSocConfig.nandTargets

[[noreturn]] void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sim: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

bool readFile(const std::string& path, std::vector<uint8_t>& out) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  out.clear();
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return true;
}

uint64_t parseNum(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(s.c_str(), &end, 0);
  if (s.empty() || *end || errno) die("bad number '%s' for %s", s.c_str(), what);
  return v;
}

// ------------------------------------------------------------------------------------ DDR model
// One byte array shared by both ports (a multi-port memory controller). Accesses outside it get SLVERR.
struct Ddr {
  std::vector<uint8_t> mem = std::vector<uint8_t>(DDR_SIZE, 0);
  bool contains(uint64_t addr, uint64_t len) const {
    return addr >= DDR_BASE && addr - DDR_BASE + len <= DDR_SIZE;
  }
  uint8_t* at(uint32_t addr) { return &mem[addr - DDR_BASE]; }
};

// AXI4 slave serving one port of the DDR model. Reads: the first beat of a burst comes `latency` cycles
// after its AR handshake, then one beat per cycle (bursts pipeline: a later burst's latency overlaps the
// earlier one's data). Writes are posted: W beats go to memory as they arrive, B follows the last beat.
// StrbT is the Verilator type of WSTRB (CData for 4 lanes, IData for 32).
template <typename StrbT>
struct AxiSlave {
  const char* name;
  unsigned bytes;  // data bus width in bytes
  Ddr* ddr;
  uint64_t latency = 20;
  // signal bindings
  CData *awValid, *awReady, *awId, *awLen, *awSize, *awBurst;
  IData* awAddr;
  CData *wValid, *wReady, *wLast;
  uint32_t* wData;
  StrbT* wStrb;
  CData *bValid, *bReady, *bId, *bResp;
  CData *arValid, *arReady, *arId, *arLen, *arSize, *arBurst;
  IData* arAddr;
  CData *rValid, *rReady, *rId, *rResp, *rLast;
  uint32_t* rData;

  struct Burst {
    uint32_t addr;
    unsigned id, len, size, burst, beat = 0;
    uint64_t readyAt = 0;  // reads: cycle of the first beat
    bool err = false;
  };
  std::deque<Burst> reads, writes;
  std::deque<std::pair<unsigned, unsigned>> bQueue;  // (id, resp)
  static constexpr size_t MAX_OUTSTANDING = 16;
  uint64_t readBeats = 0, writeBeats = 0;

  static uint32_t beatAddr(const Burst& b) {
    uint32_t step = 1u << b.size;
    uint32_t start = b.addr & ~(step - 1);
    if (b.burst == 0) return b.addr;  // FIXED
    if (b.burst == 2) {               // WRAP
      uint32_t total = step * (b.len + 1);
      uint32_t base = b.addr & ~(total - 1);
      return base + ((b.addr - base + b.beat * step) % total);
    }
    return (b.beat == 0 ? b.addr : start + b.beat * step);  // INCR
  }
  bool burstInRange(const Burst& b) const {
    uint64_t span = (uint64_t)(b.len + 1) << b.size;
    if ((1u << b.size) > bytes) return false;
    return ddr->contains(b.addr & ~((1u << b.size) - 1), span);
  }

  // Drive the slave's outputs for this cycle (before the rising edge).
  void drive(uint64_t cycle) {
    *arReady = reads.size() < MAX_OUTSTANDING;
    *awReady = writes.size() < MAX_OUTSTANDING;
    *wReady = !writes.empty();
    *bValid = !bQueue.empty();
    if (!bQueue.empty()) {
      *bId = bQueue.front().first;
      *bResp = bQueue.front().second;
    }
    bool rv = !reads.empty() && cycle >= reads.front().readyAt;
    *rValid = rv;
    if (rv) {
      Burst& b = reads.front();
      *rId = b.id;
      *rResp = b.err ? 2 : 0;
      *rLast = b.beat == b.len;
      uint32_t a = beatAddr(b) & ~(bytes - 1);
      if (b.err)
        memset(rData, 0, bytes);
      else
        memcpy(rData, ddr->at(a), bytes);
    }
  }

  // Apply the handshakes that happen at this rising edge (signals sampled before it).
  void edge(uint64_t cycle) {
    if (*rValid && *rReady) {
      Burst& b = reads.front();
      readBeats++;
      if (b.beat == b.len)
        reads.pop_front();
      else
        b.beat++;
    }
    if (*bValid && *bReady) bQueue.pop_front();
    if (*wValid && *wReady) {
      Burst& b = writes.front();
      writeBeats++;
      if (!b.err) {
        uint32_t a = beatAddr(b) & ~(bytes - 1);
        uint8_t* p = ddr->at(a);
        const uint8_t* d = reinterpret_cast<const uint8_t*>(wData);
        uint64_t strb = *wStrb;
        for (unsigned i = 0; i < bytes; i++)
          if (strb >> i & 1) p[i] = d[i];
      }
      bool last = b.beat == b.len;
      if (bool(*wLast) != last)
        fprintf(stderr, "sim: warning: %s: WLAST=%d on beat %u of a %u-beat burst\n", name, *wLast,
                b.beat, b.len + 1);
      if (last) {
        bQueue.emplace_back(b.id, b.err ? 2u : 0u);
        writes.pop_front();
      } else {
        b.beat++;
      }
    }
    if (*arValid && *arReady) {
      Burst b{*arAddr, *arId, *arLen, *arSize, *arBurst};
      b.readyAt = cycle + 1 + latency;
      // Keep bursts in order: a later one never overtakes (ids are not reordered by this model).
      if (!reads.empty() && reads.back().readyAt > b.readyAt) b.readyAt = reads.back().readyAt;
      b.err = !burstInRange(b);
      reads.push_back(b);
    }
    if (*awValid && *awReady) {
      Burst b{*awAddr, *awId, *awLen, *awSize, *awBurst};
      b.err = !burstInRange(b);
      writes.push_back(b);
    }
  }
};

#define BIND_AXI(port, prefix)                                                            \
  do {                                                                                    \
    port.awValid = &top->prefix##_aw_valid; port.awReady = &top->prefix##_aw_ready;       \
    port.awAddr = &top->prefix##_aw_payload_addr; port.awId = &top->prefix##_aw_payload_id; \
    port.awLen = &top->prefix##_aw_payload_len; port.awSize = &top->prefix##_aw_payload_size; \
    port.awBurst = &top->prefix##_aw_payload_burst;                                        \
    port.wValid = &top->prefix##_w_valid; port.wReady = &top->prefix##_w_ready;           \
    port.wLast = &top->prefix##_w_payload_last; port.wStrb = &top->prefix##_w_payload_strb; \
    port.bValid = &top->prefix##_b_valid; port.bReady = &top->prefix##_b_ready;           \
    port.bId = &top->prefix##_b_payload_id; port.bResp = &top->prefix##_b_payload_resp;   \
    port.arValid = &top->prefix##_ar_valid; port.arReady = &top->prefix##_ar_ready;       \
    port.arAddr = &top->prefix##_ar_payload_addr; port.arId = &top->prefix##_ar_payload_id; \
    port.arLen = &top->prefix##_ar_payload_len; port.arSize = &top->prefix##_ar_payload_size; \
    port.arBurst = &top->prefix##_ar_payload_burst;                                        \
    port.rValid = &top->prefix##_r_valid; port.rReady = &top->prefix##_r_ready;           \
    port.rId = &top->prefix##_r_payload_id; port.rResp = &top->prefix##_r_payload_resp;   \
    port.rLast = &top->prefix##_r_payload_last;                                            \
  } while (0)

// ------------------------------------------------------------------------------------ UART
// Frame 8N1. One bit lasts 8 * (divider + 1) cycles (spinal.lib UartCtrl: 8 samples per bit, one sample
// every divider+1 cycles); the divider is read from the UART's register so any firmware setting works.
struct Uart {
  CData* txd;
  CData* rxd;
  IData* divider;  // bridge_uartConfigReg_clockDivider (public)
  FILE* log = nullptr;
  bool echo = true;
  std::string seen;  // TX text since the last prompt match (for --uart-prompt)

  // TX decoder
  enum { IDLE, RECEIVING } txState = IDLE;
  uint64_t txNext = 0, txBit = 0, txPeriod = 0;
  unsigned txCount = 0, txByte = 0;
  uint64_t framingErrors = 0;

  // RX encoder
  std::deque<std::string> rxLines;  // with --uart-prompt: one line is released per prompt
  std::string prompt;
  std::deque<uint8_t> rxQueue;
  uint64_t rxStartAt = 0, rxGap = 0;
  int rxBitIndex = -1;  // -1 idle, 0 start, 1..8 data, 9 stop
  uint64_t rxBitEnd = 0;
  uint8_t rxCur = 0;
  std::string txText;  // everything printed (kept for the prompt search)

  uint64_t period() const { return 8ull * ((uint64_t)*divider + 1); }

  void emit(uint8_t c) {
    if (echo) {
      fputc(c, stdout);
      if (c == '\n') fflush(stdout);
    }
    if (log) fputc(c, log);
    if (!prompt.empty()) {
      seen.push_back((char)c);
      if (seen.size() >= prompt.size() && seen.compare(seen.size() - prompt.size(), prompt.size(), prompt) == 0) {
        seen.clear();
        if (!rxLines.empty()) {
          for (char ch : rxLines.front()) rxQueue.push_back((uint8_t)ch);
          rxLines.pop_front();
        }
      }
      if (seen.size() > 4096) seen.erase(0, seen.size() - prompt.size());
    }
  }

  // Called once per cycle with the TX line as seen before the rising edge; drives RX for the next cycle.
  void tick(uint64_t cycle) {
    bool line = *txd;
    if (txState == IDLE) {
      if (!line) {  // start bit
        txPeriod = period();
        txState = RECEIVING;
        txCount = 0;
        txByte = 0;
        txNext = cycle + txPeriod + txPeriod / 2;  // middle of data bit 0
      }
    } else if (cycle == txNext) {
      if (txCount < 8) {
        txByte |= (unsigned)line << txCount;
        txCount++;
        txNext += txPeriod;
      } else {  // stop bit
        if (!line) framingErrors++;
        emit((uint8_t)txByte);
        txState = IDLE;
      }
    }

    // RX: start a byte when the previous one (and the gap) is over.
    if (rxBitIndex < 0) {
      *rxd = 1;
      if (!rxQueue.empty() && cycle >= rxStartAt) {
        rxCur = rxQueue.front();
        rxQueue.pop_front();
        rxBitIndex = 0;
        rxBitEnd = cycle + period();
        *rxd = 0;
      }
    } else if (cycle >= rxBitEnd) {
      rxBitIndex++;
      rxBitEnd = cycle + period();
      if (rxBitIndex <= 8) {
        *rxd = rxCur >> (rxBitIndex - 1) & 1;
      } else if (rxBitIndex == 9) {
        *rxd = 1;  // stop bit
      } else {
        rxBitIndex = -1;
        *rxd = 1;
        rxStartAt = cycle + rxGap;
      }
    }
  }
};

// ------------------------------------------------------------------------------------ NAND
// One ONFI model per target (CE#) on the controller's channel (nand/model). Pins are handed to the
// models before each rising edge (outputs) and after it (edges); a model is skipped while its pins
// are unchanged and it is neither busy nor driving DQ, which keeps an idle flash almost free.
struct NandChannel {
  VLsmcSoc* top;
  std::vector<std::unique_ptr<onfi::NandModel>> models;
  std::vector<onfi::NandPinsIn> lastIn;
  std::vector<onfi::NandPinsOut> lastOut;
  std::vector<bool> fresh;
  uint64_t contention = 0;
  uint32_t junk = 0x12345678;

  onfi::NandPinsIn pins(size_t t) const {
    onfi::NandPinsIn p;
    p.dq = top->io_nand_dq_o;
    p.dq_oe = top->io_nand_dq_oe;
    p.cle = top->io_nand_cle;
    p.ale = top->io_nand_ale;
    p.ce_n = (top->io_nand_ce_n >> t) & 1;
    p.we_n = top->io_nand_we_n;
    p.re_n = top->io_nand_re_n;
    p.wp_n = top->io_nand_wp_n;
    return p;
  }
  static bool same(const onfi::NandPinsIn& a, const onfi::NandPinsIn& b) {
    return a.dq == b.dq && a.dq_oe == b.dq_oe && a.cle == b.cle && a.ale == b.ale && a.ce_n == b.ce_n &&
           a.we_n == b.we_n && a.re_n == b.re_n && a.wp_n == b.wp_n;
  }
  void init(VLsmcSoc* t, size_t targets, uint32_t blocks) {
    top = t;
    for (size_t i = 0; i < targets; i++) {
      onfi::Config c;
      if (blocks) c.blocks = blocks;
      c.seed = 1 + (uint32_t)i;
      models.push_back(std::make_unique<onfi::NandModel>(c, "nand" + std::to_string(i)));
    }
    lastIn.resize(targets);
    lastOut.resize(targets);
    fresh.assign(targets, false);
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
    int drivers = 0;
    uint32_t rb = 0;
    uint8_t dq;
    junk = junk * 1664525u + 1013904223u;
    dq = (uint8_t)(junk >> 24);  // undriven bus: junk, never a stale value that could hide a bug
    for (size_t i = 0; i < models.size(); i++) {
      evalModel(i, ns);
      if (lastOut[i].dq_drive) { drivers++; dq = lastOut[i].dq; }
      if (lastOut[i].rb_n) rb |= 1u << i;
    }
    if (drivers > 1 || (drivers && top->io_nand_dq_oe)) contention++;
    top->io_nand_dq_i = dq;
    top->io_nand_rb_n = rb;
  }
  // After the rising edge: record the controller's new pin levels.
  void edge(uint64_t ns) {
    for (size_t i = 0; i < models.size(); i++) evalModel(i, ns);
  }
};

// ------------------------------------------------------------------------------------ ELF loading
struct Loader {
  uint8_t* ram[4];  // byte lanes of the on-chip RAM (ram_symbol0..3)
  Ddr* ddr;

  void put(uint32_t addr, const uint8_t* data, size_t len, const char* what) {
    if (addr >= RAM_BASE && (uint64_t)addr - RAM_BASE + len <= RAM_SIZE) {
      for (size_t i = 0; i < len; i++) {
        uint32_t off = addr - RAM_BASE + i;
        ram[off & 3][off >> 2] = data ? data[i] : 0;
      }
    } else if (ddr->contains(addr, len)) {
      if (data) memcpy(ddr->at(addr), data, len); else memset(ddr->at(addr), 0, len);
    } else {
      die("%s: 0x%08x+0x%zx is neither in on-chip RAM nor in DDR", what, addr, len);
    }
  }

  // ELF32 little-endian RISC-V: copy every PT_LOAD segment to its physical address, zero its .bss part.
  void loadElf(const std::string& path, const std::vector<uint8_t>& f) {
    auto u16 = [&](size_t o) { return (uint32_t)f[o] | (uint32_t)f[o + 1] << 8; };
    auto u32 = [&](size_t o) { return u16(o) | u16(o + 2) << 16; };
    if (f.size() < 52 || memcmp(f.data(), "\x7f" "ELF", 4) != 0) die("%s: not an ELF file", path.c_str());
    if (f[4] != 1 || f[5] != 1) die("%s: not a 32-bit little-endian ELF", path.c_str());
    if (u16(18) != 243) die("%s: not a RISC-V ELF (e_machine %u)", path.c_str(), u16(18));
    uint32_t phoff = u32(28), phentsize = u16(42), phnum = u16(44);
    if (phnum == 0 || phentsize < 32 || (uint64_t)phoff + (uint64_t)phnum * phentsize > f.size())
      die("%s: bad program header table", path.c_str());
    unsigned loaded = 0;
    for (uint32_t i = 0; i < phnum; i++) {
      size_t ph = phoff + (size_t)i * phentsize;
      if (u32(ph) != 1) continue;  // PT_LOAD
      uint32_t off = u32(ph + 4), paddr = u32(ph + 12), filesz = u32(ph + 16), memsz = u32(ph + 20);
      if ((uint64_t)off + filesz > f.size()) die("%s: segment %u runs past the end of the file", path.c_str(), i);
      if (memsz < filesz) die("%s: segment %u has memsz < filesz", path.c_str(), i);
      if (filesz) put(paddr, &f[off], filesz, path.c_str());
      if (memsz > filesz) put(paddr + filesz, nullptr, memsz - filesz, path.c_str());
      loaded++;
    }
    if (!loaded) die("%s: no loadable segment", path.c_str());
  }
};

void usage() {
  puts(
      "usage: VLsmcSoc FIRMWARE [options]\n"
      "  FIRMWARE            ELF32 RISC-V (segments go to on-chip RAM / DDR), or a raw .bin loaded at 0x80000000\n"
      "  --arg N             value of SIM_ARG (0xF000F004), default 0\n"
      "  --ddr-latency N     DDR read latency in cycles (AR handshake to first beat), default 20\n"
      "  --load ADDR=FILE    put FILE's bytes into memory at ADDR before reset (repeatable)\n"
      "  --dump ADDR:LEN=FILE  save LEN bytes of memory at ADDR into FILE after the run (repeatable)\n"
      "  --log FILE          also write the UART output to FILE\n"
      "  --uart-in FILE|TEXT bytes to send on UART RX (a file if it exists, else the text; \\n escapes)\n"
      "  --uart-prompt STR   send --uart-in one line per appearance of STR on the UART output\n"
      "  --uart-start N      without --uart-prompt: first RX byte at cycle N (default 0)\n"
      "  --uart-gap N        idle cycles between RX bytes (default 20 bit times)\n"
      "  --uart-div N        UART clock divider forced after reset (bit = 8*(N+1) cycles), default 1;\n"
      "                      -1 keeps the hardware reset value (115200 baud at 100 MHz)\n"
      "  --quiet             do not echo the UART output on stdout\n"
      "  --nand-blocks N     blocks per NAND target (default: the MT29F4G08 datasheet's 4096)\n"
      "  --max-cycles N      stop with exit status 124 after N cycles (default 2000000000)\n"
      "  --wave FILE.fst     dump waves (only in the build made with --trace-fst)\n"
      "  --wave-from N       start dumping at cycle N (counted from power-on, reset is 16 cycles)\n"
      "Ends when the firmware writes SIM_EXIT ((code<<1)|1 to 0xF000F000); exit status = code & 0xff.");
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out.push_back(c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

uint8_t* findVar(const char* scope, const char* var, size_t minBytes) {
  const VerilatedScope* s = Verilated::threadContextp()->scopeFind(scope);
  if (!s) die("scope %s not found (was sim/soc/soc.vlt passed to Verilator?)", scope);
  VerilatedVar* v = s->varFind(var);
  if (!v) die("signal %s.%s not found (was sim/soc/soc.vlt passed to Verilator?)", scope, var);
  if (v->totalSize() < minBytes) die("signal %s.%s is %zu bytes, expected at least %zu", scope, var, v->totalSize(), minBytes);
  return static_cast<uint8_t*>(v->datap());
}

}  // namespace

int main(int argc, char** argv) {
  std::string firmware, logPath, uartIn, prompt, wavePath;
  uint64_t simArg = 0, ddrLatency = 20, maxCycles = 2000000000ull, uartStart = 0, waveFrom = 0;
  int64_t uartDiv = 1, uartGap = -1;
  uint32_t nandBlocks = 0;
  bool quiet = false;
  std::vector<std::pair<uint32_t, std::string>> loads;
  struct Dump { uint32_t addr, len; std::string path; };
  std::vector<Dump> dumps;

  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("%s needs a value", a.c_str());
      return argv[++i];
    };
    if (a == "--help" || a == "-h") { usage(); return 0; }
    else if (a == "--arg") simArg = parseNum(next(), "--arg");
    else if (a == "--ddr-latency") ddrLatency = parseNum(next(), "--ddr-latency");
    else if (a == "--max-cycles") maxCycles = parseNum(next(), "--max-cycles");
    else if (a == "--log") logPath = next();
    else if (a == "--uart-in") uartIn = next();
    else if (a == "--uart-prompt") prompt = unescape(next());
    else if (a == "--uart-start") uartStart = parseNum(next(), "--uart-start");
    else if (a == "--uart-gap") uartGap = (int64_t)parseNum(next(), "--uart-gap");
    else if (a == "--uart-div") { std::string v = next(); uartDiv = v == "-1" ? -1 : (int64_t)parseNum(v, "--uart-div"); }
    else if (a == "--quiet") quiet = true;
    else if (a == "--nand-blocks") nandBlocks = (uint32_t)parseNum(next(), "--nand-blocks");
    else if (a == "--wave") wavePath = next();
    else if (a == "--wave-from") waveFrom = parseNum(next(), "--wave-from");
    else if (a == "--load") {
      std::string v = next();
      size_t eq = v.find('=');
      if (eq == std::string::npos) die("--load wants ADDR=FILE, got '%s'", v.c_str());
      loads.emplace_back((uint32_t)parseNum(v.substr(0, eq), "--load address"), v.substr(eq + 1));
    } else if (a == "--dump") {
      std::string v = next();
      size_t colon = v.find(':'), eq = v.find('=');
      if (colon == std::string::npos || eq == std::string::npos || eq < colon)
        die("--dump wants ADDR:LEN=FILE, got '%s'", v.c_str());
      dumps.push_back({(uint32_t)parseNum(v.substr(0, colon), "--dump address"),
                       (uint32_t)parseNum(v.substr(colon + 1, eq - colon - 1), "--dump length"), v.substr(eq + 1)});
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option %s (see --help)", a.c_str());
    } else if (firmware.empty()) {
      firmware = a;
    } else {
      die("more than one firmware given (%s, %s)", firmware.c_str(), a.c_str());
    }
  }
  if (firmware.empty()) { usage(); return 2; }
#if !VM_TRACE
  if (!wavePath.empty()) die("--wave needs the harness built with --trace-fst (soc.build_soc(trace=True))");
#endif

  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<VLsmcSoc>(ctx.get(), "TOP");
  Verilated::threadContextp(ctx.get());

  // Memories and loading
  auto ddr = std::make_unique<Ddr>();
  Loader loader;
  loader.ddr = ddr.get();
  for (int l = 0; l < 4; l++) {
    std::string var = "ram_symbol" + std::to_string(l);
    loader.ram[l] = findVar("TOP.LsmcSoc.ram", var.c_str(), RAM_SIZE / 4);
    memset(loader.ram[l], 0, RAM_SIZE / 4);
  }
  std::vector<uint8_t> fw;
  if (!readFile(firmware, fw)) die("cannot read firmware %s", firmware.c_str());
  if (firmware.size() > 4 && firmware.compare(firmware.size() - 4, 4, ".bin") == 0)
    loader.put(RAM_BASE, fw.data(), fw.size(), firmware.c_str());
  else
    loader.loadElf(firmware, fw);
  for (auto& ld : loads) {
    std::vector<uint8_t> data;
    if (!readFile(ld.second, data)) die("--load: cannot read %s", ld.second.c_str());
    loader.put(ld.first, data.data(), data.size(), ld.second.c_str());
  }

  // Ports
  AxiSlave<CData> ddrCpu;
  ddrCpu.name = "ddr";
  ddrCpu.bytes = 4;
  BIND_AXI(ddrCpu, io_ddr);
  ddrCpu.wData = &top->io_ddr_w_payload_data;
  ddrCpu.rData = &top->io_ddr_r_payload_data;
  AxiSlave<IData> ddrDma;
  ddrDma.name = "ddrDma";
  ddrDma.bytes = 32;
  BIND_AXI(ddrDma, io_ddrDma);
  ddrDma.wData = top->io_ddrDma_w_payload_data.data();
  ddrDma.rData = top->io_ddrDma_r_payload_data.data();
  ddrCpu.ddr = ddrDma.ddr = ddr.get();
  ddrCpu.latency = ddrDma.latency = ddrLatency;

  Uart uart;
  uart.txd = &top->io_uart_txd;
  uart.rxd = &top->io_uart_rxd;
  uart.divider = reinterpret_cast<IData*>(findVar("TOP.LsmcSoc.uart", "bridge_uartConfigReg_clockDivider", 4));
  uart.echo = !quiet;
  uart.prompt = prompt;
  if (!logPath.empty() && !(uart.log = fopen(logPath.c_str(), "w"))) die("cannot write %s", logPath.c_str());
  if (!uartIn.empty()) {
    std::vector<uint8_t> data;
    std::string text = readFile(uartIn, data) ? std::string(data.begin(), data.end()) : unescape(uartIn);
    if (prompt.empty()) {
      for (char c : text) uart.rxQueue.push_back((uint8_t)c);
    } else {  // one line (with its '\n') per prompt
      size_t p = 0;
      while (p < text.size()) {
        size_t e = text.find('\n', p);
        e = e == std::string::npos ? text.size() : e + 1;
        uart.rxLines.push_back(text.substr(p, e - p));
        p = e;
      }
    }
  }
  uart.rxStartAt = uartStart;

  NandChannel nand;
  nand.init(top.get(), NAND_TARGETS, nandBlocks);

#if VM_TRACE
  std::unique_ptr<VerilatedFstC> tfp;
  if (!wavePath.empty()) {
    Verilated::traceEverOn(true);
    tfp = std::make_unique<VerilatedFstC>();
    top->trace(tfp.get(), 99);
    tfp->open(wavePath.c_str());
  }
#endif

  top->io_simArg = (IData)simArg;
  top->io_uart_rxd = 1;
  top->clk = 0;
  uint64_t cycle = 0;
  auto step = [&](bool resetting) {
    top->clk = 0;
    if (!resetting) {
      ddrCpu.drive(cycle);
      ddrDma.drive(cycle);
      nand.drive(cycle * NS_PER_CYCLE);
    }
    top->eval();
#if VM_TRACE
    if (tfp && cycle >= waveFrom) tfp->dump(cycle * 10);
#endif
    if (!resetting) {
      uart.tick(cycle);
      ddrCpu.edge(cycle);
      ddrDma.edge(cycle);
    }
    top->clk = 1;
    top->eval();
#if VM_TRACE
    if (tfp && cycle >= waveFrom) tfp->dump(cycle * 10 + 5);
#endif
    if (!resetting) nand.edge(cycle * NS_PER_CYCLE);
    cycle++;
  };

  // Synchronous reset, held long enough for every block.
  top->reset = 1;
  for (int i = 0; i < 16; i++) step(true);
  top->reset = 0;
  if (uartDiv >= 0) *uart.divider = (IData)uartDiv;
  uart.rxGap = uartGap >= 0 ? (uint64_t)uartGap : 20 * uart.period();
  uint64_t resetCycles = cycle;

  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  int status = -1;
  uint64_t idleAfterExit = 0, drainCycles = 0;
  while (true) {
    step(false);
    if (top->io_simExit_valid && status < 0) status = (int)(top->io_simExit_payload & 0xff);
    if (status >= 0) {
      // Let the UART send what the firmware queued before SIM_EXIT: the TX FIFO feeds the line without
      // gaps, so two idle bit times mean it is empty.
      if (uart.txState == Uart::IDLE && *uart.txd) {
        if (++idleAfterExit >= 2 * uart.period()) break;
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
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpuSecs = double(std::clock() - c0) / CLOCKS_PER_SEC;
  uint64_t ran = cycle - resetCycles;
  fflush(stdout);
  top->final();
#if VM_TRACE
  if (tfp) tfp->close();
#endif
  if (uart.log) fclose(uart.log);

  for (auto& d : dumps) {
    if (!ddr->contains(d.addr, d.len)) die("--dump 0x%08x:%u is outside DDR", d.addr, d.len);
    FILE* f = fopen(d.path.c_str(), "wb");
    if (!f || fwrite(ddr->at(d.addr), 1, d.len, f) != d.len) die("cannot write %s", d.path.c_str());
    fclose(f);
  }
  if (nand.contention) fprintf(stderr, "sim: NAND DQ bus contention in %" PRIu64 " cycles\n", nand.contention);
  for (size_t i = 0; i < nand.models.size(); i++) {
    auto& m = *nand.models[i];
    if (m.n_commands)
      fprintf(stderr, "sim: nand%zu: %" PRIu64 " commands, %" PRIu64 " reads, %" PRIu64 " programs, %" PRIu64 " erases\n",
              i, m.n_commands, m.n_reads, m.n_programs, m.n_erases);
  }
  if (uart.framingErrors) fprintf(stderr, "sim: %" PRIu64 " UART framing errors\n", uart.framingErrors);
  fprintf(stderr, "sim: exit %d; ddr beats r/w %" PRIu64 "/%" PRIu64 ", ddrDma beats r/w %" PRIu64 "/%" PRIu64 "\n",
          status, ddrCpu.readBeats, ddrCpu.writeBeats, ddrDma.readBeats, ddrDma.writeBeats);
  // Wall clock (what a user waits) and CPU time (what the model costs; the machine may be shared).
  fprintf(stderr, "sim: cpu time %.3f s = %.3f Mcycles/s per core\n", cpuSecs,
          cpuSecs > 0 ? ran / cpuSecs / 1e6 : 0.0);
  fprintf(stderr, "sim: %" PRIu64 " cycles in %.3f s = %.3f Mcycles/s\n", ran, secs,
          secs > 0 ? ran / secs / 1e6 : 0.0);
  return status;
}
