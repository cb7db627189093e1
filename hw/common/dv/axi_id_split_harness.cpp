// Testbench of common.Axi4ReadOnlyIdSplit (GenerateAxi4ReadOnlyIdSplit, PORTS slaves): a master issues random
// INCR bursts (random id of the unit's 5 bits, 1 to 16 beats of 16 bytes, never across 4 KiB) with random gaps;
// each port is simc::AxiSlave on one shared memory (its own read latency, random stalls on every ready and valid,
// protocol checks); R is taken with random pauses. Checked: every AR reaches port (id bits 1-3) mod PORTS and no
// other; every R beat is the oldest open burst of its id, its data the memory's bytes, `last` on its final beat
// only, OKAY; every burst answered; no protocol violation; no hang (a cycle bound). The beats of different ids
// interleave on R (counted), which AXI allows.
//
//   VAxi4ReadOnlyIdSplit [--bursts N] [--stall P] [--seed S]
// Last stdout line: `bursts=N beats=B cycles=C interleaved=I ports=A,B,..`; a failure: one line on stderr, exit 1.
#include "VAxi4ReadOnlyIdSplit.h"
#include "verilated.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "axi_mem.h"
#include "tb.h"

namespace {

constexpr unsigned kBeat = 16;
constexpr uint64_t kBase = 0x10000000, kBytes = 1 << 20;

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "axi_id_split: FAIL %s\n", why.c_str());
  std::exit(1);
}

struct Idle {
  CData c = 0;
  IData i = 0;
  CData s = 0;
  uint32_t w[4] = {};
};

#define SPLIT_PORT_PINS(n)                                                                                     \
  case n:                                                                                                      \
    p.arValid = &t.io_outputs_##n##_ar_valid, p.arReady = &t.io_outputs_##n##_ar_ready;                        \
    p.arId = &t.io_outputs_##n##_ar_payload_id, p.arLen = &t.io_outputs_##n##_ar_payload_len;                  \
    p.arSize = &t.io_outputs_##n##_ar_payload_size, p.arBurst = &t.io_outputs_##n##_ar_payload_burst;          \
    p.arAddr = &t.io_outputs_##n##_ar_payload_addr;                                                            \
    p.rValid = &t.io_outputs_##n##_r_valid, p.rReady = &t.io_outputs_##n##_r_ready;                            \
    p.rId = &t.io_outputs_##n##_r_payload_id, p.rResp = &t.io_outputs_##n##_r_payload_resp;                   \
    p.rLast = &t.io_outputs_##n##_r_payload_last, p.rData = t.io_outputs_##n##_r_payload_data.data();          \
    break;

simc::AxiSlave<CData>::Pins PortPins(VAxi4ReadOnlyIdSplit& t, unsigned port, Idle& d) {
  simc::AxiSlave<CData>::Pins p{};
  p.awValid = &d.c, p.awReady = &d.c, p.awId = &d.c, p.awLen = &d.c, p.awSize = &d.c, p.awBurst = &d.c;
  p.awAddr = &d.i, p.wValid = &d.c, p.wReady = &d.c, p.wLast = &d.c, p.wData = d.w, p.wStrb = &d.s;
  p.bValid = &d.c, p.bReady = &d.c, p.bId = &d.c, p.bResp = &d.c;
  switch (port) {
    SPLIT_PORT_PINS(0) SPLIT_PORT_PINS(1)
#if PORTS > 2
    SPLIT_PORT_PINS(2)
#endif
#if PORTS > 3
    SPLIT_PORT_PINS(3)
#endif
  }
  return p;
}

bool PortAr(VAxi4ReadOnlyIdSplit& t, unsigned port, unsigned* id) {
  switch (port) {
#define SPLIT_AR(n) \
  case n: *id = t.io_outputs_##n##_ar_payload_id; return t.io_outputs_##n##_ar_valid && t.io_outputs_##n##_ar_ready;
    SPLIT_AR(0) SPLIT_AR(1)
#if PORTS > 2
    SPLIT_AR(2)
#endif
#if PORTS > 3
    SPLIT_AR(3)
#endif
  }
  return false;
}

struct Burst {
  uint32_t addr;
  unsigned beats, done = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  uint64_t bursts = 2000, seed = 1;
  double stall = 0.3;
  simc::setProgram("axi_id_split");
  simc::Args args("axi_id_split [options]: common.Axi4ReadOnlyIdSplit against per-id order and the ports' memory");
  args.number("--bursts", &bursts, "bursts the master issues", "N", uint64_t(1), uint64_t(1000000));
  args.probability("--stall", &stall, "stall probability of the master's AR and R and of every slave's", true);
  args.number("--seed", &seed, "the run's random seed");
  args.parse(argc, argv);

  VAxi4ReadOnlyIdSplit t;
  simc::Memory mem(kBase, kBytes);
  simc::Prng rng(seed);
  for (uint64_t a = 0; a < kBytes; a += 4) simc::putLe32(mem.at(kBase + a), uint32_t(rng.next()));
  std::vector<Idle> idle(PORTS);
  std::vector<std::unique_ptr<simc::AxiSlave<CData>>> ports;
  for (unsigned p = 0; p < PORTS; p++) {
    simc::AxiConfig c;
    c.readLatency = 3 + 11 * p;  // the ports answer at different paces, so ids overtake one another
    c.maxReads = 4;
    c.stall = stall;
    c.seed = seed * 31 + p;
    c.onlyIncr = true, c.maxBeats = 16, c.onlySize = kBeat, c.aligned = true;
    ports.emplace_back(new simc::AxiSlave<CData>(("port" + std::to_string(p)).c_str(), kBeat, &mem,
                                                 PortPins(t, p, idle[p]), c));
  }
  simc::Pause arPause(&rng), rPause(&rng);
  arPause.set(stall), rPause.set(stall);

  std::deque<Burst> open[32];
  std::vector<uint64_t> perPort(PORTS, 0);
  uint64_t issued = 0, answered = 0, beats = 0, interleaved = 0, cycle = 0;
  int lastId = -1;
  bool midBurst = false, arHeld = false;
  Burst next{};
  unsigned nextId = 0;
  std::deque<std::pair<unsigned, unsigned>> expectPort;  // (id, port) per AR the master issued, in order

  t.reset = 1;
  for (int i = 0; i < 4; i++) simc::tick(t);
  t.reset = 0;
  const uint64_t bound = 400 * bursts + 10000;
  while (answered < bursts) {
    if (++cycle > bound) Fail("no progress: " + std::to_string(answered) + " of " + std::to_string(bursts) + " bursts");
    // the master's outputs for this cycle
    if (!arHeld && issued < bursts && !arPause()) {
      nextId = unsigned(rng.next() % 32);
      next.beats = 1 + unsigned(rng.next() % 16);
      uint32_t off = uint32_t(rng.next() % (kBytes / kBeat)) * kBeat;
      if ((off & 4095) + next.beats * kBeat > 4096) off = (off & ~4095u) + 4096 - next.beats * kBeat;
      next.addr = uint32_t(kBase) + off;
      arHeld = true;
    }
    t.io_input_ar_valid = arHeld;
    t.io_input_ar_payload_addr = next.addr;
    t.io_input_ar_payload_id = nextId;
    t.io_input_ar_payload_len = next.beats - 1;
    t.io_input_ar_payload_size = 4;
    t.io_input_ar_payload_burst = 1;
    t.io_input_r_ready = !rPause();
    for (auto& p : ports) p->drive(cycle);
    t.eval();
    // handshakes before the edge
    for (unsigned p = 0; p < PORTS; p++) {
      unsigned id = 0;
      if (PortAr(t, p, &id)) {
        perPort[p]++;
        const unsigned want = ((id >> 1) & 7) % PORTS;
        if (want != p) Fail("id " + std::to_string(id) + " went to port " + std::to_string(p) + ", not " + std::to_string(want));
        if (id != nextId || !(t.io_input_ar_valid && t.io_input_ar_ready))
          Fail("port " + std::to_string(p) + " took an AR the master did not issue this cycle");
      }
    }
    if (t.io_input_ar_valid && t.io_input_ar_ready) {
      open[nextId].push_back(next);
      issued++;
      arHeld = false;
    }
    if (t.io_input_r_valid && t.io_input_r_ready) {
      const unsigned id = t.io_input_r_payload_id;
      if (open[id].empty()) Fail("R beat of id " + std::to_string(id) + " with no burst open");
      Burst& b = open[id].front();
      const uint8_t* want = mem.at(b.addr + b.done * kBeat);
      for (unsigned w = 0; w < kBeat / 4; w++)
        if (t.io_input_r_payload_data[w] != simc::le32(want + 4 * w))
          Fail("id " + std::to_string(id) + " beat " + std::to_string(b.done) + " of the burst at 0x" +
               std::to_string(b.addr) + ": wrong data");
      if (t.io_input_r_payload_resp != 0) Fail("R resp " + std::to_string(t.io_input_r_payload_resp));
      const bool final = ++b.done == b.beats;
      if (bool(t.io_input_r_payload_last) != final) Fail("R last wrong for id " + std::to_string(id));
      if (midBurst && int(id) != lastId) interleaved++;
      lastId = int(id);
      midBurst = !final;
      beats++;
      if (final) {
        open[id].pop_front();
        answered++;
      }
    }
    for (auto& p : ports) p->edge(cycle);
    simc::tick(t);
  }
  uint64_t violations = 0;
  for (auto& p : ports) violations += p->violations;
  if (violations) Fail(std::to_string(violations) + " AXI protocol violations");
  std::string per;
  for (unsigned p = 0; p < PORTS; p++) per += (p ? "," : "") + std::to_string(perPort[p]);
  std::printf("bursts=%" PRIu64 " beats=%" PRIu64 " cycles=%" PRIu64 " interleaved=%" PRIu64 " ports=%s\n", answered,
              beats, cycle, interleaved, per.c_str());
  return 0;
}
