#!/usr/bin/env python3
"""LSMC SoC on the Digilent Arty A7-100T (Artix-7 XC7A100T, 256 MiB DDR3): the low-cost board.

The A7-35T variant is too small (225 KiB of block RAM < the SoC's 256 KiB on-chip RAM).
Without --build: generates the gateware sources into build/boards/arty_a7/. See boards/arty_a7/README.md.
"""
import sys

from lsmc.boards import litex_soc
from lsmc.boards.ports import BoardError


class ArtyA7:
    name = "arty_a7"
    ident = "Arty A7-100T"
    sys_clk_freq = 100e6  # DDR3-800 with the 1:4 A7DDRPHY, LiteX's default on this board

    @staticmethod
    def platform():
        from litex_boards.platforms import digilent_arty
        return digilent_arty.Platform(variant="a7-100")

    @staticmethod
    def crg(platform, sys_clk_freq, lsmc_clk_freq):
        from litex.soc.cores.clock import S7IDELAYCTRL, S7PLL

        class CRG(litex_soc.crg_base()):
            def __init__(self):
                super().__init__("sys", "sys4x", "sys4x_dqs", "idelay", "lsmc")  # lsmc: the SoC, its own PLL output
                self.pll = pll = S7PLL(speedgrade=-1)
                self.comb += pll.reset.eq(~platform.request("cpu_reset") | self.rst)
                pll.register_clkin(platform.request("clk100"), 100e6)
                pll.create_clkout(self.cd_sys, sys_clk_freq)
                pll.create_clkout(self.cd_sys4x, 4 * sys_clk_freq)
                pll.create_clkout(self.cd_sys4x_dqs, 4 * sys_clk_freq, phase=90)
                pll.create_clkout(self.cd_idelay, 200e6)
                pll.create_clkout(self.cd_lsmc, lsmc_clk_freq)
                platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)
                platform.add_false_path_constraints(self.cd_sys.clk, self.cd_lsmc.clk)
                self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)

        return CRG()

    @staticmethod
    def dram(soc, platform, sys_clk_freq):
        from litedram.modules import MT41K128M16
        from litedram.phy import s7ddrphy
        soc.ddrphy = s7ddrphy.A7DDRPHY(platform.request("ddram"), memtype="DDR3", nphases=4,
                                       sys_clk_freq=sys_clk_freq)
        soc.add_sdram("sdram", phy=soc.ddrphy, module=MT41K128M16(sys_clk_freq, "1:4"),
                      size=0x0100_0000, l2_cache_size=8, l2_cache_min_data_width=0)

    @staticmethod
    def led_pads(platform):
        return [platform.request("user_led", i) for i in range(4)]

    @staticmethod
    def nand_pads(platform, targets):
        """ONFI NAND on Pmods, LVCMOS33 (a 3.3 V NAND wires directly): DQ0..7 on JC, CLE/ALE/WE#/RE#/WP#
        on JD, CE#n on JB pins 1..4 and R/B#n on JB pins 7..10 (up to 4 targets)."""
        from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
        if not 1 <= targets <= 4:
            raise BoardError(f"Arty NAND header (Pmod JB) has 4 CE#/R/B# pairs, SoC has {targets}")
        platform.add_extension([("lsmc_nand", 0,
            Subsignal("dq", Pins(" ".join(f"pmodc:{i}" for i in range(8)))),
            Subsignal("cle", Pins("pmodd:0")),
            Subsignal("ale", Pins("pmodd:1")),
            Subsignal("we_n", Pins("pmodd:2")),
            Subsignal("re_n", Pins("pmodd:3")),
            Subsignal("wp_n", Pins("pmodd:4")),
            Subsignal("ce_n", Pins(" ".join(f"pmodb:{i}" for i in range(targets)))),
            Subsignal("rb_n", Pins(" ".join(f"pmodb:{4 + i}" for i in range(targets))), Misc("PULLUP=TRUE")),
            IOStandard("LVCMOS33"))])
        return platform.request("lsmc_nand")

if __name__ == "__main__":
    sys.exit(litex_soc.target_main(ArtyA7))
