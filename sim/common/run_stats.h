// Speed accounting for a harness run: wall clock and process CPU time from the end of start-up, a
// progress line on stderr every `progressSeconds` of wall time while the console has been quiet
// (checked every 2^20 cycles: one clock read), and the closing lines every harness prints:
//   sim: cpu time 0.051 s = 0.451 Mcycles/s per core
//   sim: 23273 cycles in 0.131 s = 0.178 Mcycles/s
#pragma once

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace simc {

class RunStats {
 public:
  double progressSeconds = 10;

  void start(uint64_t cycle) {
    startCycle_ = cycle;
    t0_ = lastNote_ = std::chrono::steady_clock::now();
    c0_ = std::clock();
  }
  // Call every cycle; `lastOutputCycle` is the cycle the console last printed something.
  inline void tick(uint64_t cycle, uint64_t lastOutputCycle) {
    if ((cycle & ((1u << 20) - 1)) == 0) check(cycle, lastOutputCycle);
  }
  void finish(uint64_t cycle) {
    cycles_ = cycle - startCycle_;
    wall_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    cpu_ = double(std::clock() - c0_) / CLOCKS_PER_SEC;
  }
  void print(FILE* f) const {
    fprintf(f, "sim: cpu time %.3f s = %.3f Mcycles/s per core\n", cpu_, cpu_ > 0 ? cycles_ / cpu_ / 1e6 : 0.0);
    fprintf(f, "sim: %" PRIu64 " cycles in %.3f s = %.3f Mcycles/s\n", cycles_, wall_,
            wall_ > 0 ? cycles_ / wall_ / 1e6 : 0.0);
  }

 private:
  void check(uint64_t cycle, uint64_t lastOutputCycle) {
    auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - lastNote_).count() < progressSeconds) return;
    bool quiet = cycle - lastOutputCycle > (1u << 20);
    lastNote_ = now;
    if (!quiet) return;
    double s = std::chrono::duration<double>(now - t0_).count();
    fflush(stdout);
    fprintf(stderr, "sim: progress: %" PRIu64 " cycles, %.0f s, console quiet since cycle %" PRIu64 "\n",
            cycle - startCycle_, s, lastOutputCycle);
  }
  uint64_t startCycle_ = 0, cycles_ = 0;
  std::chrono::steady_clock::time_point t0_, lastNote_;
  std::clock_t c0_ = 0;
  double wall_ = 0, cpu_ = 0;
};

}  // namespace simc
