// See serial_link.h.
#include "serial_link.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <thread>

#include "args.h"

namespace simc {

static void nonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

SerialLink* SerialLink::tcp(unsigned port) {
  signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill the simulation
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) die("--uart-tcp: socket: %s", strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: the console is not for the network
  if (bind(s, (sockaddr*)&a, sizeof a) != 0) die("--uart-tcp %u: cannot listen on 127.0.0.1:%u: %s", port, port, strerror(errno));
  if (listen(s, 1) != 0) die("--uart-tcp %u: listen: %s", port, strerror(errno));
  socklen_t len = sizeof a;
  getsockname(s, (sockaddr*)&a, &len);  // port 0: the system picks one; report the real one
  nonBlocking(s);
  SerialLink* l = new SerialLink;
  l->listen_ = s;
  l->desc_ = "socket://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  return l;
}

SerialLink* SerialLink::pty() {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) die("--uart-pty: cannot open a pseudo-terminal: %s", strerror(errno));
  const char* name = ptsname(m);
  if (!name) die("--uart-pty: ptsname: %s", strerror(errno));
  // Keep a slave descriptor open: raw mode sticks, and reads on the master do not fail with EIO while
  // no terminal program is attached.
  int sl = open(name, O_RDWR | O_NOCTTY);
  if (sl < 0) die("--uart-pty: cannot open %s: %s", name, strerror(errno));
  termios t;
  if (tcgetattr(sl, &t) == 0) {
    cfmakeraw(&t);
    tcsetattr(sl, TCSANOW, &t);
  }
  nonBlocking(m);
  SerialLink* l = new SerialLink;
  l->fd_ = m;
  l->ptySlave_ = sl;
  l->isPty_ = true;
  l->desc_ = name;
  return l;
}

SerialLink::~SerialLink() {
  if (fd_ >= 0 && !isPty_) std::this_thread::sleep_until(acceptedAt_ + CONNECT_GRACE);  // last bytes too
  flush();
  // A pty's last output is lost if the master closes before the terminal read it (hangup flushes the
  // slave's queue): give the reader up to 2 s to take what is pending.
  for (int i = 0; isPty_ && ptySlave_ >= 0 && i < 200; i++) {
    int pending = 0;
    if (ioctl(ptySlave_, FIONREAD, &pending) != 0 || pending <= 0) break;
    usleep(10000);
  }
  if (fd_ >= 0) close(fd_);
  if (ptySlave_ >= 0) close(ptySlave_);
  if (listen_ >= 0) close(listen_);
}

void SerialLink::flush() {
  // pyserial's socket:// open() discards whatever arrives before it returns (reset_input_buffer right
  // after connect), so what the firmware printed before the client came waits out a short grace time.
  if (fd_ >= 0 && !isPty_ && std::chrono::steady_clock::now() - acceptedAt_ < CONNECT_GRACE) return;
  while (fd_ >= 0 && !out_.empty()) {
    ssize_t n = ::write(fd_, out_.data(), out_.size());
    if (n > 0) {
      out_.erase(0, (size_t)n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;  // try again at the next poll
    if (!isPty_) {                                             // client gone: wait for the next one
      close(fd_);
      fd_ = -1;
    }
    return;
  }
}

size_t SerialLink::poll(std::string& in) {
  if (fd_ < 0 && listen_ >= 0) {
    int c = accept(listen_, nullptr, nullptr);
    if (c >= 0) {
      nonBlocking(c);
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd_ = c;
      acceptedAt_ = std::chrono::steady_clock::now();
    }
  }
  if (fd_ < 0) return 0;
  flush();
  size_t got = 0;
  char buf[4096];
  while (fd_ >= 0) {
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n > 0) {
      in.append(buf, (size_t)n);
      got += (size_t)n;
      continue;
    }
    if (n == 0 && !isPty_) {  // TCP client closed: accept another one later
      close(fd_);
      fd_ = -1;
    }
    break;  // EAGAIN (nothing waiting), or a pty with no data
  }
  return got;
}

}  // namespace simc
