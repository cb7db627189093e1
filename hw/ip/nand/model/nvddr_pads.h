// NV-DDR pad model: the behaviour of the PHY's DDR I/O primitives that Verilator cannot express below a
// clock edge, shared by the standalone harness (hw/ip/nand/dv) and the SoC harness (sim/soc); the pad wrapper
// lsmc/boards/nand_pads.py builds the same scheme. Output DDR flops put D1 on the pins at the clock edge and D2
// half a cycle later; the DQS flop runs on the 90-degree clock (its halves start a quarter cycle later).
// Read capture on the controller's clock: every DQ bit passes a delay line of min(tap, taps - 1) x tap_ps
// (DELAYF / IDELAYE3) into an IDDR clocked by the controller clock, which samples at the rising edge
// (Q1) and the falling edge (Q2) and presents both after the next rising edge (the falling sample is
// re-registered there), so the controller's input register sees the samples of the cycle from t0 at
// the edge t0 + 2 periods. The flash's DQS is not sampled: the controller picks each DQS pair's two
// samples by its trained slot. The SDR read takes the IDDR's rising-edge sample as its DQ input
// (`sdr_dq`): `input_cycles` register stages (the controller's SAMPLE.PAD_CYCLES, 1 behind the wrapper)
// between the pad and the controller. hw/ip/nand/doc/nand.md, "PHY and its simulation model".
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
  uint32_t tap_ps = 25;  // delay per tap (DELAYF ~25 ps)
  uint32_t taps = 128;   // taps of the platform's delay line (lsmc/boards/nand_pads.py TAPS: ECP5 DELAYF 128)
  uint32_t input_cycles = 0;  // register stages ahead of the SDR DQ input (lsmc/boards/nand_pads.py PAD_INPUT_CYCLES)

  // Before the rising edge: the SDR DQ input the controller takes at it, `pad` being DQ at the pad now
  // (the IDDR's Q1 of `input_cycles` edges ago; call once per cycle, in either interface mode).
  uint8_t sdr_dq(uint8_t pad) {
    if (!input_cycles) return pad;
    sdr_.push_back(pad);
    if (sdr_.size() <= input_cycles) return sdr_.front();  // after reset: the first byte seen
    uint8_t v = sdr_.front();
    sdr_.pop_front();
    return v;
  }

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
  // then the IDDR's two samples of DQ delayed by the tap.
  template <class Models>
  void cycle(int64_t t0, int64_t period, const DdrPinsOut& o, Models& models) {
    bool d0 = o.dqs_o & 1, d1 = (o.dqs_o >> 1) & 1;
    for (int k = 0; k < 4; k++) {
      bool dqs = k == 0 ? dqs_prev_ : (k < 3 ? d0 : d1);
      for (size_t i = 0; i < models.size(); i++) models[i]->eval_ps((uint64_t)(t0 + k * period / 4), pins(o, (int)i, k >= 2, dqs));
    }
    dqs_prev_ = d1;
    int64_t delay = int64_t(o.tap < taps ? o.tap : taps - 1) * tap_ps;
    queue_.push_back({t0 + 2 * period, sample(models, t0 - delay), sample(models, t0 + period / 2 - delay)});
  }

  // Before the rising edge at t_ps: the IDDR's samples the controller's input register takes at it.
  bool take(int64_t t_ps, uint8_t& q1, uint8_t& q2) {
    bool got = false;
    while (!queue_.empty() && queue_.front().ready_ps <= t_ps) {
      q1 = queue_.front().q1;
      q2 = queue_.front().q2;
      queue_.pop_front();
      got = true;
    }
    return got;
  }
  void reset() { queue_.clear(); sdr_.clear(); dqs_prev_ = false; }

 private:
  // DQ at the pad at t_ps: the byte of the target driving inside its eye, junk elsewhere (the model's).
  template <class Models>
  static uint8_t sample(Models& models, int64_t t_ps) {
    uint8_t v;
    for (size_t i = 0; i < models.size(); i++)
      if (models[i]->dq_eye(t_ps, v)) return v;
    return models[0]->dq_at(t_ps);
  }
  struct Pair { int64_t ready_ps; uint8_t q1, q2; };
  std::deque<Pair> queue_;
  std::deque<uint8_t> sdr_;
  bool dqs_prev_ = false;
};

}  // namespace onfi

#endif
