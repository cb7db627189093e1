// UART line model (8N1) shared by the harnesses: decodes the DUT's TX pin bit by bit (sampled mid-bit)
// and drives its RX pin from a byte queue, at a bit time the harness reads from the DUT each frame
// (so any divider the firmware programs decodes). Output goes to stdout (unless quiet), a log file and
// an optional byte link (TCP or pseudo-terminal, serial_link.h); input comes from a script (all at once,
// or one line per prompt seen on the output) and from the link.
//
// Cost per cycle when the line is idle and nothing is queued: two loads and two compares.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>

#include <verilated.h>

#include "serial_link.h"

namespace simc {

class Uart {
 public:
  // bitCycles(): cycles per bit, read when a frame starts (the divider may change at run time).
  Uart(CData* txd, CData* rxd, uint64_t (*bitCycles)(void*), void* ctx) : txd_(txd), rxd_(rxd), bit_(bitCycles), ctx_(ctx) {}

  bool echo = true;
  FILE* log = nullptr;
  SerialLink* link = nullptr;
  uint64_t rxGap = 0;            // idle cycles between two RX bytes
  uint64_t rxStartAt = 0;        // first RX byte not before this cycle
  uint64_t framingErrors = 0;
  uint64_t lastOutputCycle = 0;  // cycle of the last byte the DUT sent

  // Bytes for RX: everything at once, or (with a prompt) one line each time the prompt appears.
  void script(const std::string& text, const std::string& prompt) {
    prompt_ = prompt;
    if (prompt.empty()) {
      for (char c : text) rxQueue_.push_back((uint8_t)c);
      return;
    }
    size_t p = 0;
    while (p < text.size()) {
      size_t e = text.find('\n', p);
      e = e == std::string::npos ? text.size() : e + 1;
      lines_.push_back(text.substr(p, e - p));
      p = e;
    }
  }
  void send(uint8_t c) { rxQueue_.push_back(c); }
  bool txIdle() const { return !receiving_ && *txd_; }
  // The DUT was reset (a power cut in the SoC harness): a TX frame in flight is dropped.
  void dutReset() { receiving_ = false; }
  uint64_t bitCycles() const { return bit_(ctx_); }

  // Once per cycle with the TX line as it is before the rising edge; drives RX for the next cycle.
  inline void tick(uint64_t cycle) {
    if (!receiving_ && *txd_ && rxBit_ < 0 && rxQueue_.empty()) return;
    slowTick(cycle);
  }

 private:
  CData *txd_, *rxd_;
  uint64_t (*bit_)(void*);
  void* ctx_;
  std::string prompt_, seen_;
  std::deque<std::string> lines_;
  std::deque<uint8_t> rxQueue_;
  bool receiving_ = false;
  uint64_t txNext_ = 0, txPeriod_ = 0;
  unsigned txCount_ = 0, txByte_ = 0;
  int rxBit_ = -1;  // -1 idle, 0 start, 1..8 data, 9 stop
  uint64_t rxBitEnd_ = 0;
  uint8_t rxCur_ = 0;

  void emit(uint8_t c, uint64_t cycle) {
    lastOutputCycle = cycle;
    if (echo) fputc(c, stdout);
    if (log) fputc(c, log);
    if (link) link->write(c);
    if (prompt_.empty()) return;
    seen_.push_back((char)c);
    if (seen_.size() >= prompt_.size() && seen_.compare(seen_.size() - prompt_.size(), prompt_.size(), prompt_) == 0) {
      seen_.clear();
      if (!lines_.empty()) {
        for (char ch : lines_.front()) rxQueue_.push_back((uint8_t)ch);
        lines_.pop_front();
      }
    }
    if (seen_.size() > 4096) seen_.erase(0, seen_.size() - prompt_.size());
  }

  void slowTick(uint64_t cycle) {
    bool line = *txd_;
    if (!receiving_) {
      if (!line) {  // start bit
        txPeriod_ = bit_(ctx_);
        receiving_ = true;
        txCount_ = 0;
        txByte_ = 0;
        txNext_ = cycle + txPeriod_ + txPeriod_ / 2;  // middle of data bit 0
      }
    } else if (cycle == txNext_) {
      if (txCount_ < 8) {
        txByte_ |= (unsigned)line << txCount_;
        txCount_++;
        txNext_ += txPeriod_;
      } else {  // stop bit
        if (!line) framingErrors++;
        emit((uint8_t)txByte_, cycle);
        receiving_ = false;
      }
    }
    if (rxBit_ < 0) {
      *rxd_ = 1;
      if (!rxQueue_.empty() && cycle >= rxStartAt) {
        rxCur_ = rxQueue_.front();
        rxQueue_.pop_front();
        rxBit_ = 0;
        rxBitEnd_ = cycle + bit_(ctx_);
        *rxd_ = 0;
      }
    } else if (cycle >= rxBitEnd_) {
      rxBit_++;
      rxBitEnd_ = cycle + bit_(ctx_);
      if (rxBit_ <= 8) {
        *rxd_ = rxCur_ >> (rxBit_ - 1) & 1;
      } else if (rxBit_ == 9) {
        *rxd_ = 1;  // stop bit
      } else {
        rxBit_ = -1;
        *rxd_ = 1;
        rxStartAt = cycle + rxGap;
      }
    }
  }
};

}  // namespace simc
