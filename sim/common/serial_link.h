// The simulated UART as a raw byte stream for host tools: a TCP server on 127.0.0.1:PORT (pyserial's
// `socket://127.0.0.1:PORT`, telnet-less raw bytes) or a pseudo-terminal (`/dev/pts/N`, any serial
// terminal). The simulation never waits on it: the harness calls poll() every few thousand cycles,
// which costs one non-blocking system call. Bytes the firmware prints before a client connects are
// kept and delivered once a client has been connected for CONNECT_GRACE, so a banner is never lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace simc {

class SerialLink {
 public:
  static SerialLink* tcp(unsigned port);   // listens on 127.0.0.1 only; dies if the port is taken
  static SerialLink* pty();                // opens a pseudo-terminal in raw mode
  ~SerialLink();

  const std::string& description() const { return desc_; }
  void write(uint8_t c) { out_.push_back((char)c); }
  // Flush output and collect input (non-blocking). Returns the number of bytes appended to `in`.
  size_t poll(std::string& in);
  bool connected() const { return fd_ >= 0; }

 private:
  SerialLink() = default;
  void flush();
  static constexpr std::chrono::milliseconds CONNECT_GRACE{500};
  int listen_ = -1, fd_ = -1, ptySlave_ = -1;
  std::chrono::steady_clock::time_point acceptedAt_{};
  bool isPty_ = false;
  std::string out_, desc_;
};

}  // namespace simc
