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
//   precharges (after tRAS from its ACT and tWR after a write) and activates (tRP, tRCD, tRRD, tFAW);
// - one command bus / data bus: one CAS per controller cycle (tCCD) across all ports; read->write
//   turnaround of read_latency-1 cycles and write->read of tWTR + ceil(cwl/nphases) + tCCD (LiteDRAM's
//   multiplexer FSM states RTW and WTR);
// - refresh every tREFI closes all rows and blocks for tRP + tRFC;
// - read data: PHY read latency, then the way back (portOut, SoC cycles).
// Nothing is evaluated while no request comes in: refresh is settled lazily at the next request.
// Presets (DRAM numbers from litedram): ddr_presets.h; controller latencies: DdrController (calibrated
// against boards/sim, docs/ddr-model.md).
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

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
  // A read burst of `bytes` at `addr` accepted at SoC cycle `cycle` by port number `port` (0..15,
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
        banks_(1u << preset.bankBits) {
    for (auto& b : bank_) b = Bank();
    nextRefresh_ = cyc(p.tREFI);
  }

  const DdrPreset& p;
  DdrController c;
  uint64_t rowHits = 0, rowMisses = 0, rowEmpty = 0, refreshes = 0, words = 0, turnarounds = 0;

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
  }

 private:
  struct Bank {
    int64_t row = -1;
    uint64_t actAt = 0, casOk = 0, preOk = 0;
    bool used = false;
  };
  uint64_t cyc(uint64_t n) const { return n * sysPs_; }
  uint64_t up(uint64_t ps) const { return (ps + socPs_ - 1) / socPs_; }
  uint64_t alignSys(uint64_t ps) const { return (ps + sysPs_ - 1) / sysPs_ * sysPs_; }

  // Refresh windows before time t: all rows close, commands wait for the window to end.
  uint64_t refresh(uint64_t t) {
    if (t < nextRefresh_) return t;
    uint64_t period = cyc(p.tREFI);
    uint64_t skipped = (t - nextRefresh_) / period;  // refreshes during an idle stretch: none matters
    refreshes += skipped + 1;
    nextRefresh_ += skipped * period;
    uint64_t start = std::max(nextRefresh_, cmdFree_), end = start + cyc(p.tRP + p.tRFC);
    nextRefresh_ += period;
    for (unsigned b = 0; b < banks_; b++) bank_[b].row = -1;
    return std::max(t, end);
  }

  // Schedules the burst port beat by port beat (LiteDRAM's AXIBurst2Beat: one port command per SoC
  // cycle); a beat wider than the native word becomes several native commands (down-converter), beats
  // narrower share one (up-converter). Reads also wait for a free slot of the port's read buffer
  // (LiteDRAMAXI2NativeR reserves one of readCredits beats per command, freed when the R beat leaves).
  // done(readyPs, firstBeat) gets each beat's data time at the controller side.
  template <typename F>
  void forWords(uint64_t addr, unsigned bytes, unsigned port, unsigned portBytes, uint64_t t0, bool isWrite, F done) {
    Port& pt = port_[port % kPorts];
    portBytes = std::max(portBytes, 1u);
    uint64_t beats = std::max<uint64_t>(1, (bytes + portBytes - 1) / portBytes);
    uint64_t lastWord = UINT64_MAX, lastReady = 0;
    unsigned credits = std::min(std::max(c.readCredits, 1u), kCredits);
    for (uint64_t j = 0; j < beats; j++) {
      uint64_t a = addr + j * portBytes;
      uint64_t t = std::max(t0, pt.free);
      if (!isWrite) t = std::max(t, pt.credit[pt.next % credits]);
      pt.free = t + socPs_;
      uint64_t w0 = a / nativeBytes_, w1 = (a + portBytes - 1) / nativeBytes_, ready = 0;
      for (uint64_t w = w0; w <= w1; w++) {
        if (w == lastWord) {  // same native word as the previous beat (up-converter): no new command
          ready = std::max(ready, lastReady);
          continue;
        }
        lastWord = w;
        lastReady = word(w, t, isWrite, pt.cmdFree);
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

  // One native command at or after time t: returns its CAS time. A port's commands enter the
  // controller in order (portFree); other ports' commands are not held behind them (LiteDRAM's
  // crossbar serves its ports side by side), they share the banks and the CAS/data bus.
  uint64_t word(uint64_t w, uint64_t tIn, bool isWrite, uint64_t& portFree) {
    words++;
    uint64_t t = alignSys(std::max(tIn, portFree));
    t = refresh(t);
    unsigned bank = (unsigned)((w / colWords_) & (banks_ - 1));
    int64_t row = (int64_t)(w / colWords_ / banks_);
    Bank& b = bank_[bank];
    uint64_t cas;
    if (b.row == row) {
      rowHits++;
      cas = std::max(t, b.casOk);
    } else {
      uint64_t act = t;
      if (b.row >= 0) {
        rowMisses++;
        act = std::max({t, b.actAt + cyc(p.tRAS), b.preOk}) + cyc(p.tRP);
      } else {
        rowEmpty++;
      }
      act = std::max({act, lastAct_ + cyc(p.tRRD), faw_[fawIdx_] + cyc(p.tFAW)});
      if (b.used) act = std::max(act, b.actAt + cyc(p.tRC));
      faw_[fawIdx_] = act;
      fawIdx_ = (fawIdx_ + 1) % 4;
      lastAct_ = act;
      b.actAt = act;
      b.row = row;
      b.used = true;
      cas = act + cyc(p.tRCD);
    }
    cas = std::max(cas, casFree_);
    if (anyCas_ && isWrite != lastWrite_) {
      turnarounds++;
      if (isWrite) cas = std::max(cas, lastCas_ + cyc(p.readLatency - 1));
      else cas = std::max(cas, lastCas_ + cyc(p.tWTR + (p.cwl + p.nphases - 1) / p.nphases + p.tCCD));
    }
    cas = alignSys(cas);
    anyCas_ = true;
    lastWrite_ = isWrite;
    lastCas_ = cas;
    casFree_ = cas + cyc(p.tCCD);
    portFree = t;
    cmdFree_ = std::max(cmdFree_, t);  // the latest command: refresh is settled after it
    b.casOk = cas + cyc(p.tCCD);
    if (isWrite) b.preOk = std::max(b.preOk, cas + cyc(p.writeLatency + 1 + p.tWR));
    return cas;
  }

  const uint64_t socPs_, sysPs_;
  const unsigned nativeBytes_, colWords_, banks_;
  Bank bank_[16];
  uint64_t nextRefresh_ = 0, cmdFree_ = 0, casFree_ = 0, lastCas_ = 0, lastAct_ = 0;
  uint64_t faw_[4] = {0, 0, 0, 0};
  static constexpr unsigned kPorts = 16, kCredits = 64;  // ports: CPU, one DMA per unit (<= 8)
  struct Port {
    uint64_t free = 0, lastOut = 0, next = 0, cmdFree = 0;
    uint64_t credit[kCredits] = {};  // when each read-buffer slot frees (ring of readCredits used)
  };
  Port port_[kPorts];
  unsigned fawIdx_ = 0;
  bool anyCas_ = false, lastWrite_ = false;
};

}  // namespace simc
