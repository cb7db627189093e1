// AXI4 slave memory model shared by the Verilator harnesses (SoC DDR ports, NAND controller, DMA).
//
// - Memory: one flat byte array at a base address, mapped lazily (untouched pages cost nothing, so a
//   256 MiB DDR starts instantly); loads and dumps are plain memcpy.
// - AxiSlave<StrbT>: serves one AXI4 port from a Memory. Reads: the first beat of a burst comes
//   `readLatency` cycles after the AR handshake, then one beat per cycle; later bursts pipeline behind
//   it (in order: this model never reorders, whatever the ids); with AxiConfig::timing a DRAM model
//   (ddr_model.h) decides instead when each read beat and each B response may come. Writes: W beats land as they come
//   (optionally before their AW, as AXI allows), B follows the last beat after `writeLatency`.
//   Optional random withholding of every ready/valid (`stall`), an SLVERR address window, and DECERR
//   outside the memory.
// - Protocol checks on the master (each violation is counted and reported once per kind with the
//   cycle): burst legality (reserved burst type, size over the bus width, WRAP length/alignment,
//   FIXED over 16 beats), INCR bursts crossing a 4 KiB boundary, WLAST on the wrong beat, AR/AW/W
//   valid withdrawn or payload changed before ready, W beats running too far ahead of their AW,
//   and an optional stricter shape a given master promises (one beat size, INCR only, at most N
//   beats, bus-aligned addresses).
// - Idle ports cost almost nothing per cycle: with no burst in flight and no valid input the model
//   returns after three loads.
#pragma once

#include <cinttypes>
#include <cstdarg>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <sys/mman.h>

#include <verilated.h>

#include "ddr_model.h"  // MemTiming: optional DRAM timing behind the port
#include "tb.h"        // Prng: the harnesses' one generator

namespace simc {

class Memory {
 public:
  Memory(uint64_t base, uint64_t size) : base_(base), size_(size), data_(map(size)) {}
  ~Memory() { munmap(data_, size_); }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  // Resize/move (DMA harness `membase`): contents are cleared.
  void remap(uint64_t base, uint64_t size) {
    munmap(data_, size_);
    base_ = base;
    size_ = size;
    data_ = map(size);
  }
  bool contains(uint64_t addr, uint64_t len) const {
    return addr >= base_ && addr - base_ <= size_ && len <= size_ - (addr - base_);
  }
  uint8_t* at(uint64_t addr) { return data_ + (addr - base_); }
  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }

 private:
  static uint8_t* map(uint64_t size) {
    void* p = mmap(nullptr, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      fprintf(stderr, "sim: error: cannot map %" PRIu64 " bytes of simulated memory\n", size);
      exit(2);
    }
    return static_cast<uint8_t*>(p);
  }
  uint64_t base_, size_;
  uint8_t* data_;
};

struct AxiConfig {
  unsigned readLatency = 20;   // idle cycles between the AR handshake and the first R beat
  unsigned writeLatency = 0;   // last W beat to B valid, cycles
  MemTiming* timing = nullptr; // if set (ddr_model.h), it decides when beats and B come; the two latencies are unused
  unsigned timingPort = 0;     // this slave's port number in `timing` (ports share its DRAM, not their queues)
  unsigned maxReads = 16;      // bursts in flight before ARREADY drops
  unsigned maxWrites = 16;     // AW accepted before AWREADY drops
  bool acceptWEarly = false;   // take W beats before their AW (up to maxWAhead)
  unsigned maxWAhead = 64;
  double stall = 0;            // probability of withholding each ready/valid in a cycle
  uint64_t seed = 1;
  uint64_t errLo = 0, errHi = 0;  // accesses touching [errLo, errHi) answer SLVERR
  unsigned outsideRead = 2, outsideWrite = 2;  // response outside the memory (2 SLVERR, 3 DECERR)
  // Stricter shape a master promises (0 / false = anything legal).
  unsigned onlySize = 0;       // required AxSIZE in bytes
  bool onlyIncr = false;
  unsigned maxBeats = 0;
  bool aligned = false;        // addresses aligned to the bus width
};

// StrbT is the Verilator type of WSTRB: CData up to 8 lanes, SData 16, IData 32.
template <typename StrbT>
class AxiSlave {
 public:
  struct Pins {
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
  };

  AxiSlave(const char* name, unsigned busBytes, Memory* mem, const Pins& pins, const AxiConfig& config = AxiConfig())
      : cfg(config), name_(name), bytes_(busBytes), mem_(mem), p_(pins) {
    reseed(cfg.seed);
  }

  AxiConfig cfg;
  uint64_t readBeats = 0, writeBeats = 0, arCount = 0, awCount = 0, maxReadsInFlight = 0;
  uint64_t violations = 0;
  uint64_t touchedLo = UINT64_MAX, touchedHi = 0;  // byte range of every beat served
  FILE* report = stderr;         // where violations are printed
  const char* reportPrefix = "sim: AXI protocol";

  void reseed(uint64_t seed) { rng_.seed(seed); }
  bool busy() const { return !reads_.empty() || !writes_.empty() || !bq_.empty() || wAhead_ != 0; }
  // The master was reset (a power cut in the SoC harness): every transaction in flight is dropped.
  void reset() {
    reads_.clear(); writes_.clear(); wq_.clear(); bq_.clear();
    wAhead_ = 0;
    rValid_ = bValid_ = idleDriven_ = arHeld_ = awHeld_ = wHeld_ = false;
  }

  // Outputs for this cycle (call before the evaluation that precedes the rising edge).
  void drive(uint64_t cycle) {
    if (!busy() && cfg.stall == 0) {
      if (!idleDriven_) {
        *p_.arReady = 1;
        *p_.awReady = 1;
        *p_.wReady = cfg.acceptWEarly;
        *p_.bValid = 0;
        *p_.rValid = 0;
        idleDriven_ = true;
      }
      return;
    }
    idleDriven_ = false;
    *p_.arReady = reads_.size() < cfg.maxReads && !coin();
    *p_.awReady = writes_.size() < cfg.maxWrites && !coin();
    bool wOpen = !writes_.empty() || (cfg.acceptWEarly && wq_.size() < cfg.maxWAhead);
    *p_.wReady = wOpen && !coin();
    if (!bValid_ && !bq_.empty() && cycle >= bq_.front().at && !coin()) bValid_ = true;
    *p_.bValid = bValid_;
    if (bValid_) {
      *p_.bId = bq_.front().id;
      *p_.bResp = bq_.front().resp;
    }
    if (!rValid_ && !reads_.empty() && cycle >= beatReady(reads_.front()) && !coin()) rValid_ = true;
    *p_.rValid = rValid_;
    if (rValid_) {
      Burst& b = reads_.front();
      uint64_t a = beatAddr(b) & ~(uint64_t)(bytes_ - 1);
      int resp = respFor(a, b.sizeBytes(), cfg.outsideRead);
      *p_.rId = b.id;
      *p_.rResp = resp;
      *p_.rLast = b.beat == b.len;
      if (resp) memset(p_.rData, 0, bytes_);
      else {
        memcpy(p_.rData, mem_->at(a), bytes_);
        touch(a);
      }
    }
  }

  // Handshakes of this rising edge (call after that evaluation, before the clock rises).
  void edge(uint64_t cycle) {
    bool arV = *p_.arValid, awV = *p_.awValid, wV = *p_.wValid;
    if (!arV && !awV && !wV && !busy() && !arHeld_ && !awHeld_ && !wHeld_) return;
    cycle_ = cycle;
    if (rValid_ && *p_.rReady) {
      Burst& b = reads_.front();
      readBeats++;
      rValid_ = false;
      if (b.beat == b.len) reads_.pop_front();
      else b.beat++;
    }
    if (bValid_ && *p_.bReady) {
      bq_.pop_front();
      bValid_ = false;
    }
    if (wV && *p_.wReady) takeW();
    if (arV && *p_.arReady) {
      Burst b{*p_.arAddr, *p_.arId, *p_.arLen, *p_.arSize, *p_.arBurst};
      arCount++;
      check("AR", b);
      if (cfg.timing) {
        cfg.timing->read(cycle + 1, b.addr, (b.len + 1) << b.size, cfg.timingPort, bytes_, &b.at, &b.last);
        if (!reads_.empty() && reads_.back().last > b.at) {  // in order
          b.last += reads_.back().last - b.at;
          b.at = reads_.back().last;
        }
      } else {
        b.at = cycle + 1 + cfg.readLatency;
        if (!reads_.empty() && reads_.back().at > b.at) b.at = reads_.back().at;  // in order
      }
      reads_.push_back(b);
      if (reads_.size() > maxReadsInFlight) maxReadsInFlight = reads_.size();
    }
    if (awV && *p_.awReady) {
      Burst b{*p_.awAddr, *p_.awId, *p_.awLen, *p_.awSize, *p_.awBurst};
      awCount++;
      check("AW", b);
      writes_.push_back(b);
      matchW();
    }
    // Stability: a valid not taken must stay, with the same payload, until ready.
    stable(arHeld_, arV && !*p_.arReady, arSaved_, "AR", [&](Saved& s) {
      s = {*p_.arAddr, *p_.arId, *p_.arLen, *p_.arSize, *p_.arBurst, 0, 0};
    });
    stable(awHeld_, awV && !*p_.awReady, awSaved_, "AW", [&](Saved& s) {
      s = {*p_.awAddr, *p_.awId, *p_.awLen, *p_.awSize, *p_.awBurst, 0, 0};
    });
    stable(wHeld_, wV && !*p_.wReady, wSaved_, "W", [&](Saved& s) {
      s = {0, 0, 0, 0, 0, (uint64_t)*p_.wStrb, *p_.wLast};
      s.dataHash = hashData(p_.wData);
    });
  }

 private:
  struct Burst {
    uint32_t addr;
    unsigned id, len, size, burst;
    unsigned beat = 0;
    uint64_t at = 0;    // reads: cycle of the first beat
    uint64_t last = 0;  // reads with cfg.timing: cycle of the last beat (beats spread between)
    unsigned errResp = 0;
    unsigned sizeBytes() const { return 1u << size; }
  };
  struct WBeat {
    uint8_t data[128];
    uint64_t strb;
    bool last;
  };
  struct BRsp {
    uint64_t at;
    unsigned id, resp;
  };
  struct Saved {
    uint32_t addr;
    unsigned id, len, size, burst;
    uint64_t strb;
    unsigned last;
    uint64_t dataHash = 0;
    bool operator==(const Saved& o) const {
      return addr == o.addr && id == o.id && len == o.len && size == o.size && burst == o.burst && strb == o.strb &&
             last == o.last && dataHash == o.dataHash;
    }
  };

  const char* name_;
  unsigned bytes_;
  Memory* mem_;
  Pins p_;
  std::deque<Burst> reads_, writes_;  // writes_: AW accepted, W beats still to come
  std::deque<WBeat> wq_;              // W beats taken before their AW
  std::deque<BRsp> bq_;
  unsigned wAhead_ = 0;
  bool rValid_ = false, bValid_ = false, idleDriven_ = false;
  bool arHeld_ = false, awHeld_ = false, wHeld_ = false;
  Saved arSaved_{}, awSaved_{}, wSaved_{};
  Prng rng_;
  uint64_t cycle_ = 0;
  unsigned reported_ = 0;

  bool coin() { return rng_.chance(cfg.stall); }
  uint64_t hashData(const uint32_t* d) const {
    uint64_t h = 1469598103934665603ull;
    for (unsigned i = 0; i < bytes_ / 4 || i == 0; i++) h = (h ^ d[i]) * 1099511628211ull;
    return h;
  }
  template <typename F>
  void stable(bool& held, bool nowHeld, Saved& saved, const char* ch, F capture) {
    Saved cur{};
    if (held || nowHeld) capture(cur);
    if (held) {
      // last cycle: valid without ready; this cycle valid must still be up with the same payload
      bool v = ch[0] == 'A' ? (ch[1] == 'R' ? *p_.arValid : *p_.awValid) : *p_.wValid;
      if (!v) violation("%s valid withdrawn before ready", ch);
      else if (!(cur == saved)) violation("%s payload changed while waiting for ready", ch);
    }
    held = nowHeld;
    if (nowHeld) saved = cur;
  }

  void touch(uint64_t a) {
    if (a < touchedLo) touchedLo = a;
    if (a + bytes_ > touchedHi) touchedHi = a + bytes_;
  }
  int respFor(uint64_t a, unsigned n, unsigned outside) const {
    if (!mem_->contains(a, bytes_)) return outside;
    if (cfg.errHi > cfg.errLo && a < cfg.errHi && a + n > cfg.errLo) return 2;  // SLVERR
    return 0;
  }
  // The cycle the current beat of read burst b may be handed out.
  uint64_t beatReady(const Burst& b) const {
    if (!cfg.timing || b.len == 0) return b.at;
    return b.at + std::max<uint64_t>(b.beat, (uint64_t)b.beat * (b.last - b.at) / b.len);
  }
  static uint64_t beatAddr(const Burst& b) {
    uint64_t step = 1ull << b.size;
    if (b.burst == 0) return b.addr;  // FIXED
    if (b.burst == 2) {               // WRAP
      uint64_t total = step * (b.len + 1);
      uint64_t base = b.addr & ~(total - 1);
      return base + ((b.addr - base + b.beat * step) % total);
    }
    uint64_t start = b.addr & ~(step - 1);
    return b.beat == 0 ? b.addr : start + b.beat * step;  // INCR
  }

  void violation(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    violations++;
    if (reported_++ >= 20) return;  // keep a flood readable; the count is exact
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(report, "%s cycle=%" PRIu64 " %s: %s\n", reportPrefix, cycle_, name_, msg);
  }

  void check(const char* ch, const Burst& b) {
    unsigned beats = b.len + 1, sz = b.sizeBytes();
    if (b.burst == 3) violation("%s reserved burst type 3", ch);
    if (sz > bytes_) violation("%s size %u bytes over the %u-byte bus", ch, sz, bytes_);
    if (b.burst == 2 && ((beats != 2 && beats != 4 && beats != 8 && beats != 16) || (b.addr & (sz - 1))))
      violation("%s WRAP burst of %u beats at 0x%08x (2/4/8/16 beats, aligned start)", ch, beats, b.addr);
    if (b.burst == 0 && beats > 16) violation("%s FIXED burst of %u beats (at most 16)", ch, beats);
    if (b.burst == 1) {
      uint64_t first = b.addr & ~(uint64_t)(sz - 1), end = first + (uint64_t)beats * sz;
      if ((b.addr >> 12) != ((end - 1) >> 12)) violation("%s burst 0x%08x+%u crosses 4 KiB", ch, b.addr, beats);
    }
    if (cfg.onlySize && sz != cfg.onlySize) violation("%s size %u bytes, expected %u", ch, sz, cfg.onlySize);
    if (cfg.onlyIncr && b.burst != 1) violation("%s burst type %u, expected INCR", ch, b.burst);
    if (cfg.maxBeats && beats > cfg.maxBeats) violation("%s burst of %u beats, at most %u", ch, beats, cfg.maxBeats);
    if (cfg.aligned && (b.addr % bytes_)) violation("%s unaligned address 0x%08x", ch, b.addr);
  }

  void takeW() {
    writeBeats++;
    WBeat w;
    memcpy(w.data, p_.wData, bytes_);
    w.strb = (uint64_t)*p_.wStrb;
    w.last = *p_.wLast;
    wq_.push_back(w);
    wAhead_ = wq_.size();
    if (cfg.acceptWEarly && writes_.empty() && wq_.size() > cfg.maxWAhead)
      violation("more than %u W beats ahead of their AW", cfg.maxWAhead);
    matchW();
  }

  void matchW() {
    while (!wq_.empty() && !writes_.empty()) {
      const WBeat& w = wq_.front();
      Burst& b = writes_.front();
      bool last = b.beat == b.len;
      if (w.last != last) violation("WLAST=%d on beat %u of a %u-beat burst", (int)w.last, b.beat + 1, b.len + 1);
      uint64_t a = beatAddr(b) & ~(uint64_t)(bytes_ - 1);
      unsigned resp = respFor(a, b.sizeBytes(), cfg.outsideWrite);
      if (resp) {
        if (w.strb && resp > b.errResp) b.errResp = resp;
      } else {
        uint8_t* dst = mem_->at(a);
        if ((bytes_ == 64 ? ~0ull : (1ull << bytes_) - 1) == w.strb) memcpy(dst, w.data, bytes_);
        else
          for (unsigned i = 0; i < bytes_; i++)
            if (w.strb >> i & 1) dst[i] = w.data[i];
        touch(a);
      }
      wq_.pop_front();
      if (last) {
        uint64_t at = cfg.timing ? cfg.timing->write(cycle_, b.addr, (b.len + 1) << b.size, cfg.timingPort, bytes_) : cycle_ + cfg.writeLatency;
        bq_.push_back({at, b.id, b.errResp});
        writes_.pop_front();
      } else {
        b.beat++;
      }
    }
    wAhead_ = wq_.size();
  }
};

// Bind every AXI4 signal of port `prefix` of a Verilator top (SpinalHDL names) into `pins`; wData and
// rData are set by the caller (IData for 32-bit ports, VlWide::data() for wider ones).
#define SIMC_BIND_AXI(pins, top, prefix)                                                                 \
  do {                                                                                                   \
    pins.awValid = &top->prefix##_aw_valid; pins.awReady = &top->prefix##_aw_ready;                      \
    pins.awAddr = &top->prefix##_aw_payload_addr; pins.awId = &top->prefix##_aw_payload_id;              \
    pins.awLen = &top->prefix##_aw_payload_len; pins.awSize = &top->prefix##_aw_payload_size;            \
    pins.awBurst = &top->prefix##_aw_payload_burst;                                                      \
    pins.wValid = &top->prefix##_w_valid; pins.wReady = &top->prefix##_w_ready;                          \
    pins.wLast = &top->prefix##_w_payload_last; pins.wStrb = &top->prefix##_w_payload_strb;              \
    pins.bValid = &top->prefix##_b_valid; pins.bReady = &top->prefix##_b_ready;                          \
    pins.bId = &top->prefix##_b_payload_id; pins.bResp = &top->prefix##_b_payload_resp;                  \
    pins.arValid = &top->prefix##_ar_valid; pins.arReady = &top->prefix##_ar_ready;                      \
    pins.arAddr = &top->prefix##_ar_payload_addr; pins.arId = &top->prefix##_ar_payload_id;              \
    pins.arLen = &top->prefix##_ar_payload_len; pins.arSize = &top->prefix##_ar_payload_size;            \
    pins.arBurst = &top->prefix##_ar_payload_burst;                                                      \
    pins.rValid = &top->prefix##_r_valid; pins.rReady = &top->prefix##_r_ready;                          \
    pins.rId = &top->prefix##_r_payload_id; pins.rResp = &top->prefix##_r_payload_resp;                  \
    pins.rLast = &top->prefix##_r_payload_last;                                                          \
  } while (0)

}  // namespace simc
