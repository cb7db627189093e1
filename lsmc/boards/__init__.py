"""LiteX board targets of the LSMC SoC (boards/<board>/target.py use this module; docs/boards.md).

The design on the board is the project's own SpinalHDL SoC (`LsmcSoc`, hw/soc), instantiated as a
Verilog black box, so the firmware that runs in Verilator runs unchanged on the board. LiteX and
LiteDRAM provide only what is board-specific:

* the clocks and resets (a board CRG; the SoC runs in its own `lsmc` clock domain, 100 MHz as in the
  paper, while LiteDRAM runs at the PHY's preferred system clock);
* the DDR controller: the SoC's two AXI4 DDR masters (32-bit CPU port, 256-bit compaction DMA port) go
  through LiteDRAM's AXI-to-native bridge onto two native crossbar ports, with the clock-domain
  crossing and width conversion LiteDRAM's `crossbar.get_port` provides;
* DDR calibration: LiteDRAM needs software to initialise and level the DRAM. As in LiteDRAM's own
  standalone core (litedram_gen), a small LiteX VexRiscv with the LiteX BIOS in ROM does it; the BIOS
  sets `ddrctrl.init_done/init_error`, and only then is the LSMC SoC released from reset. The board UART
  shows the BIOS calibration log until then and the SoC's UART afterwards.

Everything here is generated into build/boards/<board>/ (LiteX `Builder` output: gateware/ with the
top Verilog, XDC and Vivado TCL; software/ with the BIOS when it is compiled).
"""

# Modules: ports (the SoC port contract), gateware (sources and firmware image), litex_soc (LiteX wiring).
