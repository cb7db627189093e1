// DRAM presets of the DDR timing model (ddr_model.h): the one table of these numbers in the repo.
// Every value is what LiteDRAM itself uses for the board's module at the board's controller clock and
// rate, in controller (LiteDRAM `sys`) clock cycles: `litedram.modules.<module>(sys_hz, "1:4")
// .timing_settings` / `.geom_settings` and `litedram.phy.model.get_sdram_phy_settings(memtype, bits,
// sys_hz)` (cl, cwl, read/write latency). tests/test_ddr_model.py recomputes them with the installed
// litedram and fails on any difference. Boards: boards/kcu105, boards/arty_a7, boards/sim (docs/boards.md).
#pragma once

namespace simc {

struct DdrPreset {
  const char* name;
  const char* module;      // litedram.modules class
  const char* memtype;     // DDR3 / DDR4
  unsigned sysMHz;         // LiteDRAM controller clock
  unsigned nphases;        // 4 = "1:4"
  unsigned dataBits;       // DRAM data bus width (native port = 2 * nphases * dataBits)
  unsigned bankBits, rowBits, colBits;
  // Timings in sys cycles, as litedram rounds them (ns_to_cycles with its 1:4 margin, ck_to_cycles).
  unsigned tRP, tRCD, tWR, tWTR, tREFI, tRFC, tRAS, tRC, tCCD, tRRD, tFAW;
  // PHY: CAS latencies in DRAM clocks, read/write latency in sys cycles (LiteDRAM's PHY model).
  unsigned cl, cwl, readLatency, writeLatency;
};

// name        module        type    MHz ph bits bk row col  tRP tRCD tWR tWTR tREFI tRFC tRAS tRC tCCD tRRD tFAW  cl cwl rdl wrl
inline constexpr DdrPreset kDdrPresets[] = {
  {"kcu105",   "EDY4016A",   "DDR4", 125, 4, 64,  3, 15, 10,  3,  3,   3,  2,   977,  34,  5,   7,  1,   2,   7,   9,  9,  8,  2},
  {"arty",     "MT41K128M16","DDR3", 100, 4, 16,  3, 14, 10,  3,  3,   3,  2,   782,  32,  5,   6,  1,   2,   5,   6,  5,  8,  1},
  {"boardsim", "MT41K128M16","DDR3", 125, 4, 16,  3, 14, 10,  3,  3,   3,  2,   977,  32,  6,   7,  1,   2,   6,   7,  6,  8,  1},
};

}  // namespace simc
