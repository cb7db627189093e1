// NV-DDR pad model: the behaviour of the PHY's DDR I/O primitives that Verilator cannot express below a
// clock edge, shared by the standalone harness (sim/nand) and the SoC harness (sim/soc). Output DDR flops
// put D1 on the pins at the clock edge and D2 half a cycle later; the DQS flop runs on the 90-degree clock
// (its halves start a quarter cycle later); the read capture delays the flash's DQS by tap x tap_ps
// (IDELAYE3 / DELAYF), samples DQ at each delayed edge into an IDDR (rising edge -> Q1, falling -> Q2)
// and hands each pair to the controller's clock domain through the capture FIFO, whose read side sees
// it two cycles (pointer synchroniser) after the capture. docs/nand.md, "PHY and its simulation model".
#ifndef NVDDR_PADS_H
#define NVDDR_PADS_H

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "onfi_model.h"

namespace onfi {

// The controller's NV-DDR pin outputs of one cycle (read after its rising edge): D1 (the usual pins) and
// D2 (ddr_h2_*), the DQS flop's two halves, the capture delay tap.
struct DdrPinsOut {
  NandPinsIn d1, d2;   // ce_n holds all targets' CE# bits (bit t): pins() picks one
  uint8_t ce1 = 0xFF, ce2 = 0xFF;
  uint8_t dqs_o = 0, dqs_oe = 0;
  uint32_t tap = 0;
};

class DdrPads {
 public:
  uint32_t tap_ps = 25;

  // Target t's pins in half `half` of the cycle (0: D1, 1: D2) with DQS level `dqs`.
  static NandPinsIn pins(const DdrPinsOut& o, int t, int half, bool dqs) {
    NandPinsIn p = half ? o.d2 : o.d1;
    p.wp_n = o.d1.wp_n;
    p.ce_n = (((half ? o.ce2 : o.ce1) >> t) & 1) != 0;
    p.dqs = dqs;
    p.dqs_oe = ((o.dqs_oe >> half) & 1) != 0;  // DQS enable follows the DQS flop's halves
    return p;
  }

  // Before the rising edge at t_ps: target t sees the pins as left half a cycle ago (R/B# out).
  NandPinsOut rb(NandModel& m, int t, int64_t t_ps, const DdrPinsOut& o) const {
    return m.eval_ps((uint64_t)t_ps, pins(o, t, 1, dqs_prev_));
  }

  // After the clock edge at t0_ps (period_ps the controller's clock): the four pad instants of this cycle,
  // then the captures in [t0, t0 + period).
  template <class Models>
  void cycle(int64_t t0, int64_t period, const DdrPinsOut& o, Models& models) {
    bool d0 = o.dqs_o & 1, d1 = (o.dqs_o >> 1) & 1;
    for (int k = 0; k < 4; k++) {
      bool dqs = k == 0 ? dqs_prev_ : (k < 3 ? d0 : d1);
      for (size_t i = 0; i < models.size(); i++) models[i]->eval_ps((uint64_t)(t0 + k * period / 4), pins(o, (int)i, k >= 2, dqs));
    }
    dqs_prev_ = d1;
    int64_t delay = int64_t(o.tap) * tap_ps;
    for (size_t i = 0; i < models.size(); i++) {
      edges_.clear();
      models[i]->dqs_edges(t0 - delay, t0 + period - delay, edges_);
      for (auto& e : edges_) {
        int64_t c = e.first + delay;
        uint8_t v = models[i]->dq_at(c);
        if (e.second) { q1_ = v; have_q1_ = true; }
        else if (have_q1_) { queue_.push_back({c + 2 * period, q1_, v}); have_q1_ = false; }
      }
    }
  }

  // Before the rising edge at t_ps: the captured pair the FIFO shows now, one per cycle.
  bool take(int64_t t_ps, uint8_t& q1, uint8_t& q2) {
    if (queue_.empty() || queue_.front().ready_ps > t_ps) return false;
    q1 = queue_.front().q1;
    q2 = queue_.front().q2;
    queue_.pop_front();
    return true;
  }
  bool idle() const { return queue_.empty() && !have_q1_; }
  void reset() { queue_.clear(); have_q1_ = false; dqs_prev_ = false; }

 private:
  struct Pair { int64_t ready_ps; uint8_t q1, q2; };
  std::deque<Pair> queue_;
  std::vector<std::pair<int64_t, bool>> edges_;
  bool have_q1_ = false, dqs_prev_ = false;
  uint8_t q1_ = 0;
};

}  // namespace onfi

#endif
