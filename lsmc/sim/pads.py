"""The NV-DDR pads' DQ delay lines: taps per FPGA family. The board's pad wrapper (lsmc/boards/nand_pads.py)
instantiates them; the simulation's pad model (hw/ip/nand/model/nvddr_pads.h), nandsim and the driver's read
training take the ECP5's (tests/test_nand_pads.py checks every copy)."""

# The SoC's ddr_tap is 9 bits: IDELAYE3's 512 taps.
TAPS = {"ecp5": 128, "ultrascale": 512}
