#!/usr/bin/env python3
"""LSMC SoC on the LambdaConcept ECPIX-5 (Lattice ECP5 LFE5UM5G-85F, speed 8, 512 MiB DDR3): the board
whose whole flow is open and runs on this machine (yosys + nextpnr-ecp5 + ecppack from PyPI's yowasp).

Without --build: generates the gateware sources into build/boards/ecpix5/.
With --build: synthesis, place and route, timing and bitstream (build/boards/ecpix5/gateware/ecpix5.bit).
`scripts/fpga` runs this build and reports Fmax and resources (docs/boards.md, *Open ECP5 flow*).
"""
import sys

from lsmc.boards import litex_soc
from lsmc.boards.ports import BoardError


class ECPIX5:
    name = "ecpix5"
    ident = "ECPIX-5 85F"
    toolchain = "trellis"
    # LiteDRAM's ECP5 DDR3 PHY runs 1:2 off sys (sys2x through ECLKSYNCB/CLKDIVF); 75 MHz (DDR3-300) is
    # the setting litex-boards uses and proves on this board.
    sys_clk_freq = 75e6
    # 128 KiB on-chip RAM (soc.Generate --ram-kib, memory map and firmware link from it): the 256 KiB of the
    # other boards took 128 of the ECP5's 208 DP16KD (199 used in all); lsmc.elf needs ~83 KiB + 16 KiB stack.
    ram_kib = 128

    @staticmethod
    def platform():
        from litex_boards.platforms import lambdaconcept_ecpix5
        return lambdaconcept_ecpix5.Platform(device="85F", toolchain="trellis")

    @staticmethod
    def crg(platform, sys_clk_freq, lsmc_clk_freq):
        from litex.soc.cores.clock import ECP5PLL
        from migen import If, Instance, Signal
        from migen.genlib.resetsync import AsyncResetSynchronizer

        class CRG(litex_soc.crg_base()):
            def __init__(self):
                super().__init__("init", "por", "sys", "sys2x", "sys2x_i", "lsmc")  # lsmc: the SoC, its own PLL output
                self.stop = Signal()  # driven by the DDR PHY's init sequencer (clock stop/divider reset)
                self.reset = Signal()

                clk100 = platform.request("clk100")
                rst_n = platform.request("rst_n")
                por_count = Signal(16, reset=2**16 - 1)
                por_done = Signal()
                self.comb += [self.cd_por.clk.eq(clk100), por_done.eq(por_count == 0)]
                self.sync.por += If(~por_done, por_count.eq(por_count - 1))

                self.pll = pll = ECP5PLL()
                self.comb += pll.reset.eq(~por_done | ~rst_n | self.rst)
                pll.register_clkin(clk100, 100e6)
                pll.create_clkout(self.cd_sys2x_i, 2 * sys_clk_freq)
                pll.create_clkout(self.cd_init, 25e6)
                pll.create_clkout(self.cd_lsmc, lsmc_clk_freq)
                self.specials += [
                    Instance("ECLKSYNCB", i_ECLKI=self.cd_sys2x_i.clk, i_STOP=self.stop, o_ECLKO=self.cd_sys2x.clk),
                    Instance("CLKDIVF", p_DIV="2.0", i_ALIGNWD=0, i_CLKI=self.cd_sys2x.clk, i_RST=self.reset,
                             o_CDIVX=self.cd_sys.clk),
                    AsyncResetSynchronizer(self.cd_sys, ~pll.locked | self.reset),
                ]
                # nextpnr derives the PLL outputs' periods itself; the SoC's period is named here so the
                # timing report's per-clock Fmax has a target for it whatever the PLL's rounding.
                platform.add_period_constraint(self.cd_lsmc.clk, 1e9 / lsmc_clk_freq)

        return CRG()

    @staticmethod
    def dram(soc, platform, sys_clk_freq):
        from litedram.modules import MT41K256M16
        from litedram.phy import ECP5DDRPHY
        soc.ddrphy = ECP5DDRPHY(platform.request("ddram"), sys_clk_freq=sys_clk_freq)
        soc.comb += [soc.crg.stop.eq(soc.ddrphy.init.stop), soc.crg.reset.eq(soc.ddrphy.init.reset)]
        # The BIOS CPU sees 16 MiB (calibration and its memtest); the SoC's ports see the first 256 MiB.
        soc.add_sdram("sdram", phy=soc.ddrphy, module=MT41K256M16(sys_clk_freq, "1:2"),
                      size=0x0100_0000, l2_cache_size=8, l2_cache_min_data_width=0)

    @staticmethod
    def led_pads(platform):
        """The four RGB LEDs are active low: the glue drives plain signals and `uart` below puts them
        inverted on one colour each (green 0: DRAM calibrated, red 1: calibration failed, green 2: SoC
        running, blue 3: SoC UART tx), the other colours off."""
        from migen import Signal
        leds = [Signal(name=f"lsmc_led{i}") for i in range(4)]
        platform.lsmc_leds = [(platform.request("rgb_led", i), colour, led)
                              for i, (colour, led) in enumerate(zip("grgb", leds))]
        return leds

    @staticmethod
    def uart(soc, platform, lsmc_clk_freq):
        litex_soc.connect_serial_uart(soc, platform, lsmc_clk_freq)
        for pins, colour, led in platform.lsmc_leds:
            soc.comb += [getattr(pins, c).eq(~led if c == colour else 1) for c in "rgb"]

    nvddr_pins = True  # nand_pads(..., nvddr=True): the NV-DDR pin set (DQS on PMOD1 pin 6)

    @staticmethod
    def nand_pads(platform, targets, nvddr=False):
        """ONFI NAND on the Pmods, LVCMOS33 (a 3.3 V NAND wires directly): DQ0..7 on PMOD0, CLE/ALE/WE#/
        RE#/WP# on PMOD1 pins 1..5, CE#n on PMOD2 pins 1..4 and R/B#n on PMOD2 pins 5..8 (up to 4).
        NV-DDR pin set (`nvddr`): DQS on PMOD1 pin 6 (pmod1:5), the PMOD next to WE# (CLK) and RE# (W/R#)."""
        from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
        if not 1 <= targets <= 4:
            raise BoardError(f"ECPIX-5 NAND header (PMOD2) has 4 CE#/R/B# pairs, SoC has {targets}")
        platform.add_extension([("lsmc_nand", 0,
            Subsignal("dq", Pins(" ".join(f"pmod0:{i}" for i in range(8)))),
            Subsignal("cle", Pins("pmod1:0")),
            Subsignal("ale", Pins("pmod1:1")),
            Subsignal("we_n", Pins("pmod1:2")),
            Subsignal("re_n", Pins("pmod1:3")),
            Subsignal("wp_n", Pins("pmod1:4")),
            Subsignal("ce_n", Pins(" ".join(f"pmod2:{i}" for i in range(targets)))),
            Subsignal("rb_n", Pins(" ".join(f"pmod2:{4 + i}" for i in range(targets))), Misc("PULLMODE=UP")),
            *([Subsignal("dqs", Pins("pmod1:5"))] if nvddr else []),
            IOStandard("LVCMOS33"))])
        return platform.request("lsmc_nand")

    @staticmethod
    def build_kwargs(run, lsmc_clk_freq):
        # LiteX writes the yosys script, the LPF and build_ecpix5.sh; lsmc.fpga.flow runs that script with the
        # yowasp tools (its own time limit, logs and report), so LiteX itself never starts the tools.
        return {"run": False, "timingstrict": False, "seed": 1}


if __name__ == "__main__":
    from lsmc.fpga import cli
    sys.exit(cli.ecpix5_main(ECPIX5, sys.argv[1:]))
