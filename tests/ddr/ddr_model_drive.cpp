// Drives sim/common/ddr_model.h without Verilator for tests/test_ddr_model.py: reads requests on stdin,
// one per line, and prints when each completes (SoC cycles).
//   usage: ddr_model_drive PRESET SOC_HZ
//   r CYCLE ADDR BYTES PORT PORT_BYTES   ->  "r FIRST LAST"
//   w CYCLE ADDR BYTES PORT PORT_BYTES   ->  "w B"
//   stats                           ->  "stats words hits misses empty refreshes turnarounds"
//   trace                           ->  (nothing) log every CAS from now on
//   cas                             ->  "cas CYCLE IS_WRITE" per logged CAS (controller cycles), booking order
//   bus                             ->  "bus FROM TO CYCLES DATA REFRESH TURNAROUND IDLE SWITCHES" (busStats())
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ddr_model.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: ddr_model_drive PRESET SOC_HZ\n");
    return 2;
  }
  const simc::DdrPreset* p = simc::findDdrPreset(argv[1]);
  if (!p) {
    fprintf(stderr, "unknown preset %s (%s)\n", argv[1], simc::ddrPresetNames().c_str());
    return 2;
  }
  simc::DdrModel m(*p, strtoull(argv[2], nullptr, 0));
  char op[16];
  while (scanf("%15s", op) == 1) {
    if (!strcmp(op, "stats")) {
      printf("stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", m.words, m.rowHits,
             m.rowMisses, m.rowEmpty, m.refreshes, m.turnarounds);
      continue;
    }
    if (!strcmp(op, "bus")) {
      simc::DdrModel::BusStats b = m.busStats();
      printf("bus %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
             b.from, b.to, b.cycles, b.data, b.refresh, b.turnaround, b.idle, b.switches);
      continue;
    }
    if (!strcmp(op, "trace")) {
      m.trace = true;
      continue;
    }
    if (!strcmp(op, "cas")) {
      for (auto& e : m.casLog) printf("cas %" PRIu64 " %d\n", e.first, (int)e.second);
      continue;
    }
    uint64_t cycle, addr;
    unsigned bytes, port, portBytes;
    if (scanf("%" SCNu64 " %" SCNi64 " %u %u %u", &cycle, &addr, &bytes, &port, &portBytes) != 5) {
      fprintf(stderr, "bad request line after '%s'\n", op);
      return 2;
    }
    if (op[0] == 'r') {
      uint64_t first, last;
      m.read(cycle, addr, bytes, port, portBytes, &first, &last);
      printf("r %" PRIu64 " %" PRIu64 "\n", first, last);
    } else {
      printf("w %" PRIu64 "\n", m.write(cycle, addr, bytes, port, portBytes));
    }
  }
  return 0;
}
