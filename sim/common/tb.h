// The harnesses' testbench pieces (the roles of VexRiscv's src/test/cpp/common and of cocotbext-axi's
// masters, sources and sinks): one PRNG, pause generators that withhold a valid or a ready at random,
// a stream source and sink, an AXI4-Lite master and an APB3 master. Header only: hw/ip/compaction/dv,
// hw/ip/dma/dv, hw/ip/nand/dv and host/src/rtl.cpp include it.
//
// Every random decision of a harness comes from one seeded Prng in the order the harness asks, so a
// run is reproducible from its seed; a pause generator of probability 0 draws nothing (a harness
// without stalls consumes no random numbers).
//
// Per clock a harness calls drive() of each piece (outputs for this cycle, decided before it looks at
// the design's outputs), evaluates the model, calls sample() with what the design shows (handshakes
// are valid && ready before the rising edge), then clocks the model.
#ifndef SIMC_TB_H
#define SIMC_TB_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "verilated.h"

namespace simc {

// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators, scrambled").
class Prng {
 public:
  Prng() = default;
  explicit Prng(uint64_t s) { seed(s); }
  void seed(uint64_t v) {
    s_ = v * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!s_) s_ = 1;  // the one state xorshift never leaves
  }
  uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 2685821657736338717ull;
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1), 53 bits
  bool chance(double p) { return p > 0 && uniform() < p; }

 private:
  uint64_t s_ = 0x9E3779B97F4A7C15ull;
};

// A pause generator: each call says whether to hold back this cycle, with probability p.
class Pause {
 public:
  explicit Pause(Prng* rng) : rng_(rng) {}
  void set(double p) { p_ = p; }
  double probability() const { return p_; }
  bool operator()() { return rng_->chance(p_); }

 private:
  Prng* rng_;
  double p_ = 0;
};

// ---- payloads of any width (IData up to 32 bits, VlWide above) ----
inline void putWords(IData& s, const uint32_t* w) { s = w[0]; }
template <std::size_t N>
inline void putWords(VlWide<N>& s, const uint32_t* w) {
  for (std::size_t i = 0; i < N; i++) s[i] = w[i];
}
inline void getWords(const IData& s, uint32_t* w) { w[0] = s; }
template <std::size_t N>
inline void getWords(const VlWide<N>& s, uint32_t* w) {
  for (std::size_t i = 0; i < N; i++) w[i] = s[i];
}
constexpr int wordsOf(const IData&) { return 1; }
template <std::size_t N>
constexpr int wordsOf(const VlWide<N>&) { return (int)N; }

// One clock of a design whose clock input is `clk`: a rising edge, then the falling edge, each evaluated.
template <class Top>
inline void tick(Top& top) {
  top.clk = 1;
  top.eval();
  top.clk = 0;
  top.eval();
}

inline uint32_t le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
inline void putLe32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

// Beats of `words` 32-bit words, each with its `last` flag, offered in order. A beat once offered stays
// offered, payload unchanged, until taken (the stream rule); the pause generator may hold back each new
// offer.
class StreamSource {
 public:
  StreamSource(Prng* rng, int words) : pause(rng), words_(words) {}
  Pause pause;
  uint64_t fired = 0;  // beats taken since construction

  void push(const uint32_t* w, bool last) {
    data_.insert(data_.end(), w, w + words_);
    last_.push_back(last);
  }
  // Bytes as beats (little endian, a short final beat zero-filled), `last` on the final beat.
  void pushBytes(const uint8_t* p, size_t n, bool last) {
    const size_t bb = 4 * (size_t)words_, beats = (n + bb - 1) / bb;
    std::vector<uint8_t> beat(bb);
    std::vector<uint32_t> w(words_);
    for (size_t i = 0; i < beats; i++) {
      size_t k = n - i * bb < bb ? n - i * bb : bb;
      std::fill(beat.begin(), beat.end(), 0);
      std::copy(p + i * bb, p + i * bb + k, beat.begin());
      for (int j = 0; j < words_; j++) w[j] = le32(&beat[4 * j]);
      push(w.data(), last && i + 1 == beats);
    }
  }
  void clear() {
    data_.clear();
    last_.clear();
    pos_ = 0;
    presenting_ = false;
  }
  void withdraw() { presenting_ = false; }  // the design was reset: nothing is on offer
  size_t size() const { return last_.size(); }
  size_t left() const { return last_.size() - pos_; }

  // Before the evaluation: is a beat on offer this cycle?
  bool drive() {
    if (!presenting_ && pos_ < last_.size() && !pause()) presenting_ = true;
    return presenting_;
  }
  bool valid() const { return presenting_; }
  const uint32_t* beat() const { return &data_[pos_ * words_]; }
  bool last() const { return last_[pos_]; }
  // After a handshake (valid && ready before the edge).
  void take() {
    pos_++;
    presenting_ = false;
    fired++;
  }

 private:
  int words_;
  std::vector<uint32_t> data_;
  std::vector<uint8_t> last_;
  size_t pos_ = 0;
  bool presenting_ = false;
};

// Takes beats of `words` words on valid && ready. The pause generator withholds ready; with `everyBeat`
// ready comes only on the clock after a beat was first offered (every beat is stalled once). Checks the
// stream rule: a beat offered and not taken must be offered again unchanged (`violations`).
class StreamSink {
 public:
  StreamSink(Prng* rng, int words) : pause(rng), words_(words), held_(words) {}
  Pause pause;
  bool everyBeat = false;
  uint64_t violations = 0;
  std::vector<uint32_t> data;  // words of the beats taken, beat after beat
  std::vector<uint8_t> lasts;  // their last flags

  size_t beats() const { return lasts.size(); }
  const uint32_t* beat(size_t i) const { return &data[i * words_]; }
  void clear() {
    data.clear();
    lasts.clear();
  }
  void dropPending() { pending_ = false; }  // the design may legally withdraw (a reset)
  bool pending() const { return pending_; }
  // The taken beats' bytes, little endian.
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> b(data.size() * 4);
    for (size_t i = 0; i < data.size(); i++) putLe32(&b[4 * i], data[i]);
    return b;
  }

  // Before the evaluation: ready this cycle.
  bool drive() {
    ready_ = everyBeat ? pending_ : !pause();
    return ready_;
  }
  bool ready() const { return ready_; }
  // After the evaluation, before the edge: what the design offers. Returns whether a beat was taken.
  bool sample(bool valid, const uint32_t* w, bool last) {
    bool fire = valid && ready_;
    if (pending_ && (!valid || last != heldLast_ || !std::equal(held_.begin(), held_.end(), w))) violations++;
    pending_ = valid && !fire;
    std::copy(w, w + words_, held_.begin());
    heldLast_ = last;
    if (fire) {
      data.insert(data.end(), w, w + words_);
      lasts.push_back(last);
    }
    return fire;
  }

 private:
  int words_;
  std::vector<uint32_t> held_;
  bool heldLast_ = false, pending_ = false, ready_ = false;
};

// ---- AXI4-Lite master: one transaction at a time ----
template <typename AddrT>  // the Verilator type of the address ports (SData for a 12-bit window)
struct AxiLitePins {
  CData *awValid, *awReady;
  AddrT* awAddr;
  CData *wValid, *wReady;
  IData* wData;
  CData *bValid, *bReady, *bResp;
  CData *arValid, *arReady;
  AddrT* arAddr;
  CData *rValid, *rReady, *rResp;
  IData* rData;
};
#define SIMC_BIND_AXI_LITE(p, top, prefix)                                                                         \
  do {                                                                                                             \
    (p).awValid = &(top)->prefix##_aw_valid, (p).awReady = &(top)->prefix##_aw_ready;                              \
    (p).awAddr = &(top)->prefix##_aw_payload_addr;                                                                 \
    (p).wValid = &(top)->prefix##_w_valid, (p).wReady = &(top)->prefix##_w_ready;                                  \
    (p).wData = &(top)->prefix##_w_payload_data;                                                                   \
    (p).bValid = &(top)->prefix##_b_valid, (p).bReady = &(top)->prefix##_b_ready;                                  \
    (p).bResp = &(top)->prefix##_b_payload_resp;                                                                   \
    (p).arValid = &(top)->prefix##_ar_valid, (p).arReady = &(top)->prefix##_ar_ready;                              \
    (p).arAddr = &(top)->prefix##_ar_payload_addr;                                                                 \
    (p).rValid = &(top)->prefix##_r_valid, (p).rReady = &(top)->prefix##_r_ready;                                  \
    (p).rResp = &(top)->prefix##_r_payload_resp, (p).rData = &(top)->prefix##_r_payload_data;                      \
  } while (0)

// The pause generator withholds each request valid before it is first raised and each response ready.
// A response before both halves of its request (or with no request) counts as a protocol violation.
template <typename AddrT>
class AxiLiteMaster {
 public:
  AxiLiteMaster(Prng* rng, const AxiLitePins<AddrT>& pins) : pause(rng), p_(pins) {}
  Pause pause;
  uint64_t violations = 0;
  // What the last sample() saw fire (a harness may act on a register write it knows).
  bool firedW = false, firedB = false;

  void start(bool write, uint32_t addr, uint32_t data) {
    op_ = Op{};
    op_.active = true;
    op_.write = write;
    op_.addr = addr;
    op_.data = data;
  }
  bool done() const { return op_.done; }
  bool writing() const { return op_.write; }
  uint32_t addr() const { return op_.addr; }
  uint32_t data() const { return op_.data; }  // the write data, or the read data once done
  uint32_t resp() const { return op_.resp; }
  void idle() {  // reset: nothing in flight, every valid and ready low
    op_ = Op{};
    awV_ = wV_ = arV_ = false;
    *p_.awValid = *p_.wValid = *p_.arValid = 0;
    *p_.bReady = *p_.rReady = 0;
  }

  void drive() {
    if (op_.active) {
      if (op_.write) {
        if (!awV_ && !op_.awDone && !pause()) awV_ = true;
        if (!wV_ && !op_.wDone && !pause()) wV_ = true;
      } else if (!arV_ && !op_.arDone && !pause()) {
        arV_ = true;
      }
    }
    *p_.awValid = awV_;
    *p_.wValid = wV_;
    *p_.arValid = arV_;
    *p_.awAddr = (AddrT)op_.addr;
    *p_.arAddr = (AddrT)op_.addr;
    *p_.wData = op_.data;
    *p_.bReady = !pause();
    *p_.rReady = !pause();
  }
  // After the evaluation, before the edge.
  void sample() {
    fAw_ = awV_ && *p_.awReady;
    firedW = wV_ && *p_.wReady;
    fAr_ = arV_ && *p_.arReady;
    firedB = *p_.bValid && *p_.bReady;
    fR_ = *p_.rValid && *p_.rReady;
    bResp_ = *p_.bResp;
    rResp_ = *p_.rResp;
    rData_ = *p_.rData;
  }
  // After the edge: the handshakes take effect.
  void update() {
    if (fAw_) awV_ = false, op_.awDone = true;
    if (firedW) wV_ = false, op_.wDone = true;
    if (fAr_) arV_ = false, op_.arDone = true;
    if (firedB) {
      if (!op_.active || !op_.write || !op_.awDone || !op_.wDone) violations++;
      else op_.resp = bResp_, op_.done = true, op_.active = false;
    }
    if (fR_) {
      if (!op_.active || op_.write || !op_.arDone) violations++;
      else op_.resp = rResp_, op_.data = rData_, op_.done = true, op_.active = false;
    }
  }

 private:
  struct Op {
    bool active = false, write = false, awDone = false, wDone = false, arDone = false, done = false;
    uint32_t addr = 0, data = 0, resp = 0;
  };
  AxiLitePins<AddrT> p_;
  Op op_;
  bool awV_ = false, wV_ = false, arV_ = false;
  bool fAw_ = false, fAr_ = false, fR_ = false;
  uint32_t bResp_ = 0, rResp_ = 0, rData_ = 0;
};

// ---- APB3 master ----
template <typename AddrT>
struct ApbPins {
  CData *psel, *penable, *pwrite, *pready;
  AddrT* paddr;
  IData *pwdata, *prdata;
};
#define SIMC_BIND_APB(p, top, prefix)                                                                              \
  do {                                                                                                             \
    (p).psel = &(top)->prefix##_PSEL, (p).penable = &(top)->prefix##_PENABLE, (p).pwrite = &(top)->prefix##_PWRITE; \
    (p).pready = &(top)->prefix##_PREADY, (p).paddr = &(top)->prefix##_PADDR;                                     \
    (p).pwdata = &(top)->prefix##_PWDATA, (p).prdata = &(top)->prefix##_PRDATA;                                   \
  } while (0)

// One transfer: the setup cycle, then access cycles until PREADY. The harness's clock is two steps:
// `settle()` applies its inputs for the cycle and evaluates with the clock low (PREADY and PRDATA are
// sampled after it), `edge()` takes the rising edge with everything else the harness clocks.
template <typename AddrT>
class ApbMaster {
 public:
  explicit ApbMaster(const ApbPins<AddrT>& pins) : p_(pins) {}
  void retarget(const ApbPins<AddrT>& pins) { p_ = pins; }
  struct Result {
    bool ok;  // PREADY came within maxWait access cycles
    uint32_t data;
  };
  template <class Settle, class Edge>
  Result transfer(bool write, uint32_t addr, uint32_t data, Settle settle, Edge edge, int maxWait) {
    *p_.psel = 1;
    *p_.penable = 0;
    *p_.pwrite = write;
    *p_.paddr = (AddrT)addr;
    *p_.pwdata = data;
    settle();
    edge();
    *p_.penable = 1;
    Result r{false, 0};
    for (int i = 0; i < maxWait && !r.ok; i++) {
      settle();
      if (*p_.pready) r = Result{true, (uint32_t)*p_.prdata};
      edge();
    }
    *p_.psel = 0;
    *p_.penable = 0;
    return r;
  }

 private:
  ApbPins<AddrT> p_;
};

}  // namespace simc

#endif
