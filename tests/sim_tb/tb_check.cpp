// Driver of tests/test_sim_tb.py: runs sim/common/tb.h's pieces without a Verilated model and prints
// what they did, one line per request (argv).
//   prng SEED N                 N outputs of Prng(SEED)
//   pause SEED P N              how many of N calls of a pause generator of probability P held back,
//                               then the generator's next raw output (P = 0 must draw nothing)
//   stream SEED PSRC PSNK BYTES WORDS  BYTES bytes (i * 7 + 3) from a source to a sink, both pausing;
//                               prints the bytes received (hex), the last flags' beat indexes, cycles
//   unstable                    a producer that changes a beat it offered before it is taken
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tb.h"

static uint64_t num(const char* s) { return std::strtoull(s, nullptr, 0); }

int main(int argc, char** argv) {
  std::string c = argc > 1 ? argv[1] : "";
  if (c == "prng" && argc == 4) {
    simc::Prng r(num(argv[2]));
    for (uint64_t i = num(argv[3]); i; i--) std::printf("%llu\n", (unsigned long long)r.next());
  } else if (c == "pause" && argc == 5) {
    simc::Prng r(num(argv[2]));
    simc::Pause p(&r);
    p.set(std::strtod(argv[3], nullptr));
    uint64_t held = 0;
    for (uint64_t i = num(argv[4]); i; i--) held += p();
    std::printf("%llu %llu\n", (unsigned long long)held, (unsigned long long)r.next());
  } else if (c == "stream" && argc == 7) {
    simc::Prng r(num(argv[2]));
    int words = (int)num(argv[6]);
    simc::StreamSource src(&r, words);
    simc::StreamSink snk(&r, words);
    src.pause.set(std::strtod(argv[3], nullptr));
    snk.pause.set(std::strtod(argv[4], nullptr));
    std::vector<uint8_t> in(num(argv[5]));
    for (size_t i = 0; i < in.size(); i++) in[i] = (uint8_t)(i * 7 + 3);
    src.pushBytes(in.data(), in.size(), true);
    uint64_t cycles = 0;
    while (src.left() && cycles < 1000000) {
      bool valid = src.drive();
      snk.drive();
      std::vector<uint32_t> zero(words, 0);
      bool fire = snk.sample(valid, valid ? src.beat() : zero.data(), valid && src.last());
      if (fire) src.take();
      cycles++;
    }
    for (uint8_t b : snk.bytes()) std::printf("%02x", b);
    std::printf("\nlasts");
    for (size_t i = 0; i < snk.lasts.size(); i++)
      if (snk.lasts[i]) std::printf(" %zu", i);
    std::printf("\ncycles %llu violations %llu fired %llu\n", (unsigned long long)cycles,
                (unsigned long long)snk.violations, (unsigned long long)src.fired);
  } else if (c == "unstable") {
    simc::Prng r(1);
    simc::StreamSink snk(&r, 1);
    snk.pause.set(0.999999);  // almost never ready: the beat stays pending
    uint32_t w = 1;
    for (int i = 0; i < 4; i++, w++) {
      snk.drive();
      snk.sample(true, &w, false);
    }
    std::printf("violations %llu\n", (unsigned long long)snk.violations);
  } else {
    std::fprintf(stderr, "usage: tb_check prng|pause|stream|unstable ...\n");
    return 2;
  }
  return 0;
}
