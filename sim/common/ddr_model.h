// DDR timing model for the Verilator harnesses' AXI memory (axi_mem.h, AxiConfig::timing): one
// LiteDRAM-like controller and its DRAM, shared by every AXI port that points at it (the SoC's CPU and
// DMA ports contend for the same banks and the same data bus, as on the board).
//
// What it models, in picoseconds so the SoC clock and LiteDRAM's clock stay apart (no rounding of one
// into the other until a beat is handed back in SoC cycles):
// - the path into the controller: AXI2Native bridge, width converter, clock-domain crossing (portIn,
//   SoC cycles) and the crossbar / bank-machine command queue (cmdQueue, controller cycles); one native
//   command per controller cycle per port at most, fewer when the port is narrower than the native word;
// - open-row banks (ROW_BANK_COL mapping as LiteDRAM's default): a row hit costs CAS only; a miss
//   precharges (after tRAS from its ACT, tWR after a write, and after the row's last booked CAS: a bank
//   machine serves its own queue in order) and activates (tRP, tRCD, tRC, tRRD, tFAW);
// - one command/data bus as a slot calendar: every CAS takes the earliest free controller cycle at or
//   after the time its bank and port allow, with the read->write turnaround (read_latency-1) and the
//   write->read one (tWTR + ceil(cwl/nphases) + tCCD; LiteDRAM's multiplexer states RTW, WTR) checked
//   against BOTH calendar neighbours. A command a port books ahead (waiting for its read credits) thus
//   leaves the earlier slots to other ports, as LiteDRAM's crossbar and bank machines serve ports side by
//   side; booking in arrival order instead serialised the ports (docs/scaling.md);
// - refresh every tREFI (fixed windows of tRP + tRFC) closes all rows; no command inside a window;
// - read data: PHY read latency, then the way back (portOut, SoC cycles).
// Nothing is evaluated while no request comes in. Presets (DRAM numbers from litedram): ddr_presets.h (rendered from ddr_presets.json);
// controller latencies: DdrController (calibrated against boards/sim, docs/ddr-model.md).
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ddr_presets.h"

namespace simc {

// LiteDRAM's own latencies around the DRAM (not in litedram's module data): calibrated against boards/sim
// (lsmc.sim.ddrcal, sim/common/ddr_calibration.json, docs/ddr-model.md).
struct DdrController {
  unsigned portIn = 12;   // SoC cycles: AXI handshake to the native command on the controller side
  unsigned cmdQueue = 3;  // controller cycles: crossbar + bank machine buffer + multiplexer choice
  unsigned portOut = 12;  // SoC cycles: read data out of the PHY to the R beat (CDC, converter)
  unsigned writeAck = 4;  // SoC cycles: last write command taken to the B response
  // Port beats a port may have in flight: LiteDRAMAXI2Native reserves a read-buffer slot per command
  // (r_buffer_depth 16), but the stream measured through LiteDRAM's converter and CDC behaves like 5:
  // an effective, calibrated value (docs/ddr-model.md), not the buffer's size.
  unsigned readCredits = 5;

  // NAME=VALUE of one field (calibration runs: harness option --ddr-param); false if no such field.
  bool set(const std::string& name, unsigned v) {
    unsigned* f = name == "portIn" ? &portIn : name == "cmdQueue" ? &cmdQueue : name == "portOut" ? &portOut
                : name == "writeAck" ? &writeAck : name == "readCredits" ? &readCredits : nullptr;
    if (f) *f = v;
    return f != nullptr;
  }
};

// The interface axi_mem.h calls (kept abstract so the fixed-latency path has no dependency on it).
struct MemTiming {
  virtual ~MemTiming() = default;
  // A read burst of `bytes` at `addr` accepted at SoC cycle `cycle` by port number `port` (0..23,
  // one per AXI slave) of `portBytes`: the cycles its first and last beats may be handed out.
  virtual void read(uint64_t cycle, uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes,
                    uint64_t* first, uint64_t* last) = 0;
  // A write burst whose last W beat came at `cycle`: the cycle its B response may be sent.
  virtual uint64_t write(uint64_t cycle, uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes) = 0;
};

inline const DdrPreset* findDdrPreset(const std::string& name) {
  for (const DdrPreset& p : kDdrPresets)
    if (name == p.name) return &p;
  return nullptr;
}

inline std::string ddrPresetNames() {
  std::string s;
  for (const DdrPreset& p : kDdrPresets) s += (s.empty() ? "" : "|") + std::string(p.name);
  return s;
}

class DdrModel : public MemTiming {
 public:
  DdrModel(const DdrPreset& preset, uint64_t socHz, const DdrController& ctl = DdrController())
      : p(preset), c(ctl), socPs_(1000000000000ull / socHz), sysPs_(1000000ull / preset.sysMHz),
        nativeBytes_(2 * preset.nphases * preset.dataBits / 8), colWords_(1u << (preset.colBits - 3)),
        banks_(1u << preset.bankBits), rtw_(preset.readLatency - 1),
        wtr_(preset.tWTR + (preset.cwl + preset.nphases - 1) / preset.nphases + preset.tCCD) {
    for (auto& b : bank_) b = Bank();
  }

  const DdrPreset& p;
  DdrController c;
  uint64_t rowHits = 0, rowMisses = 0, rowEmpty = 0, refreshes = 0, words = 0, turnarounds = 0;
  // Tests (tests/ddr/ddr_model_drive.cpp): every CAS as (controller cycle, is a write), in booking order.
  bool trace = false;
  std::vector<std::pair<uint64_t, bool>> casLog;
  // Controller cycles a CAS of kind `b` must follow one of kind `a` (same kind: tCCD; else a turnaround).
  unsigned gap(bool aWrite, bool bWrite) const { return aWrite == bWrite ? p.tCCD : aWrite ? wtr_ : rtw_; }

  unsigned nativeBytes() const { return nativeBytes_; }
  // Peak data rate of the DRAM in bytes per SoC cycle (one native word per controller cycle).
  double peakBytesPerSocCycle() const { return (double)nativeBytes_ * socPs_ / sysPs_; }

  void read(uint64_t cycle, uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes, uint64_t* first,
            uint64_t* last) override {
    uint64_t t0 = cycle * socPs_ + (uint64_t)c.portIn * socPs_ + cyc(c.cmdQueue);
    uint64_t done0 = 0, done = 0;
    forWords(addr, bytes, port, portBytes, t0, false, [&](uint64_t ready, bool firstBeat) {
      if (firstBeat) done0 = ready;
      done = std::max(done, ready);
    });
    *first = up(done0);
    *last = std::max(*first, up(done));
  }

  uint64_t write(uint64_t cycle, uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes) override {
    uint64_t t0 = cycle * socPs_ + (uint64_t)c.portIn * socPs_ + cyc(c.cmdQueue);
    uint64_t lastCas = 0;
    forWords(addr, bytes, port, portBytes, t0, true, [&](uint64_t cas, bool) { lastCas = std::max(lastCas, cas); });
    return up(lastCas) + c.writeAck;
  }

  void print(FILE* f) const {
    fprintf(f, "sim: ddr %s: %" PRIu64 " native words of %u B, row hits %" PRIu64 ", misses %" PRIu64
            ", empty %" PRIu64 ", refreshes %" PRIu64 ", read/write turnarounds %" PRIu64
            ", peak %.3f B per SoC cycle\n",
            p.name, words, nativeBytes_, rowHits, rowMisses, rowEmpty, refreshes, turnarounds, peakBytesPerSocCycle());
    printBus(f);
  }

  // Where the data bus goes, over the window from the first to the last CAS of any port but the CPU's
  // (port 0): the units' work. Every controller cycle of the window is one of: a CAS (data), inside a
  // refresh window, a turnaround (within read->write or write->read distance of the CAS before it, the
  // next CAS being of the other kind), or idle (no command was ready: banks, or ports not asking).
  // Per port (the whole run): native words read and written, the mean controller cycles a word waited
  // for its bank (ACT/precharge) and then for a bus slot, and the read beats held back by credits.
  struct BusStats {
    uint64_t from = 0, to = 0, cycles = 0, data = 0, refresh = 0, turnaround = 0, idle = 0, switches = 0;
  };
  BusStats busStats() const {
    BusStats r;
    std::vector<std::pair<uint64_t, uint8_t>> v(casAll_);  // (cycle, port << 1 | write)
    std::sort(v.begin(), v.end());
    bool any = false;
    for (auto& e : v)
      if (e.second >> 1) { r.to = e.first; if (!any) r.from = e.first, any = true; }
    if (!any) return r;
    r.cycles = r.to - r.from + 1;
    auto refreshIn = [&](uint64_t a, uint64_t b) {  // refresh cycles in [a, b)
      uint64_t n = 0;
      for (uint64_t k = std::max<uint64_t>(1, a / p.tREFI); k * p.tREFI < b; k++) {
        uint64_t lo = std::max(a, k * p.tREFI), hi = std::min(b, k * p.tREFI + p.tRP + p.tRFC);
        if (hi > lo) n += hi - lo;
      }
      return n;
    };
    const std::pair<uint64_t, uint8_t>* prev = nullptr;
    for (auto& e : v) {
      if (e.first < r.from || e.first > r.to) continue;
      r.data++;
      if (prev) {
        uint64_t a = prev->first + 1, b = e.first;  // the idle cycles between two CAS
        uint64_t ref = refreshIn(a, b);
        uint64_t turn = 0;
        if ((prev->second & 1) != (e.second & 1)) {
          r.switches++;
          uint64_t end = std::min(b, prev->first + gap(prev->second & 1, e.second & 1));
          turn = end > a ? end - a - refreshIn(a, end) : 0;
        }
        r.refresh += ref;
        r.turnaround += turn;
        r.idle += (b - a) - ref - turn;
      }
      prev = &e;
    }
    return r;
  }

  void printBus(FILE* f) const {
    BusStats b = busStats();
    if (!b.cycles) return;
    auto pc = [&](uint64_t n) { return 100.0 * n / b.cycles; };
    fprintf(f, "sim: ddr bus, controller cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 "): data %" PRIu64 " (%.1f %%), "
            "refresh %" PRIu64 " (%.1f %%), turnaround %" PRIu64 " (%.1f %%, %" PRIu64 " switches), idle %" PRIu64
            " (%.1f %%)\n", b.from, b.to, b.cycles, b.data, pc(b.data), b.refresh, pc(b.refresh), b.turnaround,
            pc(b.turnaround), b.switches, b.idle, pc(b.idle));
    for (unsigned i = 0; i < kPorts; i++) {
      const PortStats& s = stats_[i];
      uint64_t n = s.reads + s.writes;
      if (!n) continue;
      fprintf(f, "sim: ddr port %u: reads %" PRIu64 ", writes %" PRIu64 " native words; per word: bank wait %.2f, "
              "bus wait %.2f controller cycles; read beats held by credits %" PRIu64 " of %" PRIu64
              " (mean %.1f SoC cycles)\n", i, s.reads, s.writes, (double)s.bankWait / n, (double)s.busWait / n,
              s.creditBeats, s.readBeats, s.creditBeats ? (double)s.creditWaitPs / socPs_ / s.creditBeats : 0.0);
    }
  }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  // Bank state in controller cycles: its open row and when it was activated; the row's last booked CAS
  // and the earliest precharge its writes allow (a miss precharges after both: the bank's queue is in order).
  struct Bank {
    int64_t row = -1;
    uint64_t act = 0, lastCas = 0, preOk = 0;
    bool used = false;
  };
  uint64_t cyc(uint64_t n) const { return n * sysPs_; }
  uint64_t up(uint64_t ps) const { return (ps + socPs_ - 1) / socPs_; }
  uint64_t alignSys(uint64_t ps) const { return (ps + sysPs_ - 1) / sysPs_ * sysPs_; }

  // Refresh: window k (k >= 1) covers controller cycles [k tREFI, k tREFI + tRP + tRFC) and closes every row.
  uint64_t skipRefresh(uint64_t s) const {
    uint64_t k = s / p.tREFI, end = k * p.tREFI + p.tRP + p.tRFC;
    return k >= 1 && s < end ? end : s;
  }
  uint64_t refreshAfter(uint64_t s) const { return (s / p.tREFI + 1) * p.tREFI; }

  // The earliest CAS slot >= lo and < hi (kNone if none) free of other CAS and of refresh, whose turnaround
  // to the booked CAS before it and from it to the booked CAS after it both hold.
  uint64_t findCas(uint64_t lo, bool isWrite, uint64_t hi) const {
    for (uint64_t s = lo;;) {
      s = skipRefresh(s);
      if (s >= hi) return kNone;
      auto nx = cal_.lower_bound(s);
      if (nx != cal_.begin()) {
        auto pv = std::prev(nx);
        uint64_t need = pv->first + gap(pv->second, isWrite);
        if (s < need) { s = need; continue; }
      }
      if (nx != cal_.end() && nx->first < s + gap(isWrite, nx->second)) { s = nx->first + 1; continue; }
      return s;
    }
  }

  // The earliest ACT at or after a: tRRD from every other ACT, at most 4 in any tFAW window, no refresh.
  uint64_t placeAct(uint64_t a) const {
    for (;;) {
      a = skipRefresh(a);
      auto nx = acts_.lower_bound(a);
      if (nx != acts_.begin() && a < *std::prev(nx) + p.tRRD) { a = *std::prev(nx) + p.tRRD; continue; }
      if (nx != acts_.end() && *nx < a + p.tRRD) { a = *nx + p.tRRD; continue; }
      uint64_t v[16];  // the ACTs within tFAW either side of a, a included, in time order
      unsigned n = 0;
      bool placed = false;
      for (auto it = acts_.lower_bound(a >= p.tFAW ? a - p.tFAW + 1 : 0); it != acts_.end() && *it < a + p.tFAW && n < 14;
           ++it) {
        if (!placed && *it > a) v[n++] = a, placed = true;
        v[n++] = *it;
      }
      if (!placed) v[n++] = a;
      bool ok = true;
      for (unsigned i = 0; i + 4 < n; i++) ok = ok && v[i + 4] - v[i] >= p.tFAW;
      if (ok) return a;
      a++;
    }
  }

  // Schedules the burst port beat by port beat (LiteDRAM's AXIBurst2Beat: one port command per SoC
  // cycle); a beat wider than the native word becomes several native commands (down-converter), beats
  // narrower share one (up-converter). Reads also wait for a free slot of the port's read buffer
  // (LiteDRAMAXI2NativeR reserves one of readCredits beats per command, freed when the R beat leaves).
  // done(readyPs, firstBeat) gets each beat's data time at the controller side.
  template <typename F>
  void forWords(uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes, uint64_t t0, bool isWrite, F done) {
    Port& pt = port_[port % kPorts];
    prune(t0 / sysPs_);
    portBytes = std::max(portBytes, 1u);
    uint64_t beats = std::max<uint64_t>(1, (bytes + portBytes - 1) / portBytes);
    uint64_t lastWord = UINT64_MAX, lastReady = 0;
    unsigned credits = std::min(std::max(c.readCredits, 1u), kCredits);
    PortStats& st = stats_[port % kPorts];
    for (uint64_t j = 0; j < beats; j++) {
      uint64_t a = addr + j * portBytes;
      uint64_t t = std::max(t0, pt.free);
      if (!isWrite) {
        uint64_t c = pt.credit[pt.next % credits];
        st.readBeats++;
        if (c > t) st.creditBeats++, st.creditWaitPs += c - t, t = c;
      }
      pt.free = t + socPs_;
      uint64_t w0 = a / nativeBytes_, w1 = (a + portBytes - 1) / nativeBytes_, ready = 0;
      for (uint64_t w = w0; w <= w1; w++) {
        if (w == lastWord) {  // same native word as the previous beat (up-converter): no new command
          ready = std::max(ready, lastReady);
          continue;
        }
        lastWord = w;
        lastReady = word(w, t, isWrite, port % kPorts, pt.cmdFree);
        ready = std::max(ready, lastReady);
      }
      if (!isWrite) {
        uint64_t out = std::max(ready + cyc(p.readLatency) + (uint64_t)c.portOut * socPs_, pt.lastOut + socPs_);
        pt.lastOut = out;
        pt.credit[pt.next++ % credits] = out;  // this slot frees when its beat leaves
        ready = out;
      }
      done(ready, j == 0);
    }
  }

  // Bookings long past cannot constrain a new command (every request starts at or after t0; the largest
  // gap is a turnaround or tFAW, a few cycles): drop them so the calendars stay short.
  void prune(uint64_t now) {
    if (now < 256) return;
    cal_.erase(cal_.begin(), cal_.lower_bound(now - 256));
    acts_.erase(acts_.begin(), acts_.lower_bound(now - 256));
  }

  // One native command at or after time tIn (ps): returns its CAS time (ps). A port's commands enter the
  // controller in order (portFree); other ports' commands are not held behind them (LiteDRAM's crossbar
  // serves its ports side by side): they share the banks and the calendar of the CAS/data bus.
  uint64_t word(uint64_t w, uint64_t tIn, bool isWrite, unsigned port, uint64_t& portFree) {
    words++;
    uint64_t t = alignSys(std::max(tIn, portFree));
    portFree = t;
    uint64_t ts = t / sysPs_;
    refreshes = std::max<uint64_t>(refreshes, ts / p.tREFI);
    unsigned bank = (unsigned)((w / colWords_) & (banks_ - 1));
    int64_t row = (int64_t)(w / colWords_ / banks_);
    Bank& b = bank_[bank];
    uint64_t s = kNone, bankReady = ts;
    if (b.row == row) {  // open row: any free slot while it stays open (until the next refresh)
      bankReady = std::max(ts, b.act + p.tRCD);
      s = findCas(bankReady, isWrite, refreshAfter(b.act));
      if (s != kNone) rowHits++;
    }
    if (s == kNone) {
      uint64_t act = ts;
      bool miss = false;
      if (b.row >= 0) {
        uint64_t pre = std::max({ts, b.act + p.tRAS, b.preOk, b.lastCas + p.tCCD});
        if (pre < refreshAfter(b.act)) {
          act = pre + p.tRP;
          miss = true;
        }  // else a refresh closed the row before: the bank is precharged
      }
      if (b.used) act = std::max(act, b.act + p.tRC);
      for (;;) {
        act = placeAct(act);
        bankReady = act + p.tRCD;
        s = findCas(bankReady, isWrite, refreshAfter(act));
        if (s != kNone) break;
        act = refreshAfter(act);  // a refresh comes first: activate after it
      }
      acts_.insert(act);
      if (miss) rowMisses++;
      else rowEmpty++;
      b.row = row;
      b.act = act;
      b.lastCas = s;
      b.preOk = 0;
      b.used = true;
    }
    b.lastCas = std::max(b.lastCas, s);
    if (isWrite) b.preOk = std::max<uint64_t>(b.preOk, s + p.writeLatency + 1 + p.tWR);
    // read/write turnarounds: kind changes between neighbours in the calendar
    auto nx = cal_.lower_bound(s);
    bool hasPrev = nx != cal_.begin(), hasNext = nx != cal_.end();
    bool pw = hasPrev && std::prev(nx)->second, nw = hasNext && nx->second;
    if (hasPrev && pw != isWrite) turnarounds++;
    if (hasNext && nw != isWrite) turnarounds++;
    if (hasPrev && hasNext && pw != nw) turnarounds--;
    cal_.emplace_hint(nx, s, isWrite);
    if (trace) casLog.emplace_back(s, isWrite);
    casAll_.emplace_back(s, (uint8_t)(port << 1 | isWrite));
    PortStats& st = stats_[port];
    (isWrite ? st.writes : st.reads)++;
    st.bankWait += bankReady - ts;
    st.busWait += s - bankReady;
    return cyc(s);
  }

  const uint64_t socPs_, sysPs_;
  const unsigned nativeBytes_, colWords_, banks_, rtw_, wtr_;
  Bank bank_[16];
  std::map<uint64_t, bool> cal_;  // booked CAS slots (controller cycle -> is a write)
  std::set<uint64_t> acts_;       // booked ACTs (controller cycles)
  static constexpr unsigned kPorts = 24, kCredits = 64;  // ports: CPU, the DMAs' (<= 16, LsmcSocConfig.maxDmaPorts)
  struct Port {
    uint64_t free = 0, lastOut = 0, next = 0, cmdFree = 0;
    uint64_t credit[kCredits] = {};  // when each read-buffer slot frees (ring of readCredits used)
  };
  Port port_[kPorts];
  struct PortStats {
    uint64_t reads = 0, writes = 0, bankWait = 0, busWait = 0, readBeats = 0, creditBeats = 0, creditWaitPs = 0;
  };
  PortStats stats_[kPorts];
  std::vector<std::pair<uint64_t, uint8_t>> casAll_;  // every CAS: (controller cycle, port << 1 | write)
};

}  // namespace simc
