// The AXI4 slaves' pins of a design with the table engine's two ports, `io_axiRead` (read only) and
// `io_axiWrite` (write only): the engine (VTableEngine) and its SoC unit (VTableEngineUnit) name them alike.
// simc::AxiSlave serves a full AXI4 port, so each one-way port's other half is tied to idle dummies.
#ifndef TE_DV_ENGINE_AXI_H
#define TE_DV_ENGINE_AXI_H

#include <cstddef>
#include <cstdint>

#include "axi_mem.h"
#include "verilated.h"

namespace te_dv {

inline uint32_t* words(IData& s) { return &s; }
inline uint32_t* words(QData& s) { return reinterpret_cast<uint32_t*>(&s); }
template <std::size_t N>
inline uint32_t* words(VlWide<N>& s) { return s.data(); }

// The idle half of a one-way port: never valid, never ready.
template <class Strb>
struct IdleAxi {
  CData c = 0;
  IData i = 0;
  Strb s = 0;
  uint32_t w[16] = {};
};

// The read port's pins; its write channels idle.
template <class Strb, class Top>
typename simc::AxiSlave<Strb>::Pins ReadPortPins(Top& top, IdleAxi<Strb>& d) {
  typename simc::AxiSlave<Strb>::Pins r{};
  r.awValid = &d.c, r.awReady = &d.c, r.awId = &d.c, r.awLen = &d.c, r.awSize = &d.c, r.awBurst = &d.c;
  r.awAddr = &d.i, r.wValid = &d.c, r.wReady = &d.c, r.wLast = &d.c, r.wData = d.w, r.wStrb = &d.s;
  r.bValid = &d.c, r.bReady = &d.c, r.bId = &d.c, r.bResp = &d.c;
  r.arValid = &top.io_axiRead_ar_valid, r.arReady = &top.io_axiRead_ar_ready;
  r.arId = &top.io_axiRead_ar_payload_id, r.arLen = &top.io_axiRead_ar_payload_len;
  r.arSize = &top.io_axiRead_ar_payload_size, r.arBurst = &top.io_axiRead_ar_payload_burst;
  r.arAddr = &top.io_axiRead_ar_payload_addr;
  r.rValid = &top.io_axiRead_r_valid, r.rReady = &top.io_axiRead_r_ready, r.rId = &top.io_axiRead_r_payload_id;
  r.rResp = &top.io_axiRead_r_payload_resp, r.rLast = &top.io_axiRead_r_payload_last;
  r.rData = words(top.io_axiRead_r_payload_data);
  return r;
}

// The write port's pins; its read channels idle.
template <class Strb, class Top>
typename simc::AxiSlave<Strb>::Pins WritePortPins(Top& top, IdleAxi<Strb>& d) {
  typename simc::AxiSlave<Strb>::Pins w{};
  w.arValid = &d.c, w.arReady = &d.c, w.arId = &d.c, w.arLen = &d.c, w.arSize = &d.c, w.arBurst = &d.c;
  w.arAddr = &d.i, w.rValid = &d.c, w.rReady = &d.c, w.rId = &d.c, w.rResp = &d.c, w.rLast = &d.c, w.rData = d.w;
  w.awValid = &top.io_axiWrite_aw_valid, w.awReady = &top.io_axiWrite_aw_ready;
  w.awId = &top.io_axiWrite_aw_payload_id, w.awLen = &top.io_axiWrite_aw_payload_len;
  w.awSize = &top.io_axiWrite_aw_payload_size, w.awBurst = &top.io_axiWrite_aw_payload_burst;
  w.awAddr = &top.io_axiWrite_aw_payload_addr;
  w.wValid = &top.io_axiWrite_w_valid, w.wReady = &top.io_axiWrite_w_ready;
  w.wLast = &top.io_axiWrite_w_payload_last, w.wData = words(top.io_axiWrite_w_payload_data);
  w.wStrb = &top.io_axiWrite_w_payload_strb;
  w.bValid = &top.io_axiWrite_b_valid, w.bReady = &top.io_axiWrite_b_ready;
  w.bId = &top.io_axiWrite_b_payload_id, w.bResp = &top.io_axiWrite_b_payload_resp;
  return w;
}

}  // namespace te_dv

#endif
