#!/usr/bin/env python3
"""LSMC SoC on the Xilinx KCU105 (Kintex UltraScale XCKU040, the paper's board).

Without --build: generates the gateware sources into build/boards/kcu105/ (no Vivado needed).
With --build: runs Vivado and writes build/boards/kcu105/gateware/kcu105.bit. See boards/kcu105/README.md.
"""
import sys

from lsmc.boards import litex_soc
from lsmc.boards.ports import BoardError


def kcu105_timing_constraints(platform, sys_clk, lsmc_clk, lsmc_clkout: int, sys_ns: float, lsmc_ns: float):
    """Vivado constraints of the two clock domains, run in kcu105.tcl before placement (once every XDC is
    read and Vivado has derived the MMCM's clocks from clk125; in kcu105.xdc they would come before
    clk125's create_clock and find no clocks):

    * the SoC's clock, an MMCM output Vivado derives by itself, gets the name `lsmc` (timing reports and
      the constraints below name it; its period is the MMCM's, `--lsmc-clk-freq`);
    * LiteDRAM (sys) and the SoC (lsmc) meet only in LiteDRAM's clock-domain-crossing FIFOs (`get_port`
      with clock_domain="lsmc") and in the reset-release/UART-select MultiRegs. Instead of cutting every
      path between them (set_clock_groups, which would also hide the FIFOs' RAM-to-reader data paths), the
      crossings get a datapath-only bound of the faster clock's period: the Gray-coded FIFO pointers and
      other MultiReg inputs stay false paths (LiteX's `mr_ff` rule in kcu105.xdc), and FIFO data read in
      the other domain must arrive within one cycle of the pointer that announces it."""
    cmds = platform.toolchain.pre_placement_commands
    # (LiteX formats these strings twice, signal names then build name: Tcl quotes instead of braces.)
    cmds.add("create_generated_clock -name lsmc [get_pins -of_objects [get_cells -hierarchical -filter "
             f'"REF_NAME =~ MMCME*"] -filter "REF_PIN_NAME == CLKOUT{lsmc_clkout}"]')
    bound = min(sys_ns, lsmc_ns)
    for a, b in (("sys", "lsmc"), ("lsmc", "sys")):
        cmds.add(f"set_max_delay -datapath_only -from [get_clocks -of_objects [get_nets {{{a}}}]] "
                 f"-to [get_clocks -of_objects [get_nets {{{b}}}]] {bound:.3f}", sys=sys_clk, lsmc=lsmc_clk)


class KCU105:
    name = "kcu105"
    ident = "KCU105"
    # LiteDRAM's DDR4 PHY runs 1:4 off sys; 125 MHz (DDR4-1000) is LiteX's proven KCU105 setting.
    sys_clk_freq = 125e6

    @staticmethod
    def platform():
        from litex_boards.platforms import xilinx_kcu105
        return xilinx_kcu105.Platform()

    @staticmethod
    def crg(platform, sys_clk_freq, lsmc_clk_freq):
        from litex.soc.cores.clock import USIDELAYCTRL, USMMCM
        from migen import Instance

        class CRG(litex_soc.crg_base()):
            def __init__(self):
                super().__init__("sys", "sys4x", "pll4x", "idelay", "lsmc")  # lsmc: the SoC, 100 MHz as in the paper
                self.pll = pll = USMMCM(speedgrade=-2)
                self.comb += pll.reset.eq(platform.request("cpu_reset") | self.rst)
                pll.register_clkin(platform.request("clk125"), 125e6)
                pll.create_clkout(self.cd_pll4x, sys_clk_freq * 4, buf=None, with_reset=False)
                pll.create_clkout(self.cd_idelay, 200e6)
                pll.create_clkout(self.cd_lsmc, lsmc_clk_freq)
                platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)
                # sys and sys4x from one MMCM output, phase-aligned as the DDR4 PHY's serdes need.
                self.specials += [
                    Instance("BUFGCE_DIV", p_BUFGCE_DIVIDE=4, i_CE=1, i_I=self.cd_pll4x.clk, o_O=self.cd_sys.clk),
                    Instance("BUFGCE", i_CE=1, i_I=self.cd_pll4x.clk, o_O=self.cd_sys4x.clk),
                ]
                self.idelayctrl = USIDELAYCTRL(cd_ref=self.cd_idelay, cd_sys=self.cd_sys)
                lsmc_out = max(pll.clkouts)  # the MMCM output the SoC's clock comes from (CLKOUT<n>)
                kcu105_timing_constraints(platform, self.cd_sys.clk, self.cd_lsmc.clk, lsmc_out,
                                          1e9 / sys_clk_freq, 1e9 / lsmc_clk_freq)

        return CRG()

    @staticmethod
    def dram(soc, platform, sys_clk_freq):
        from litedram.modules import EDY4016A
        from litedram.phy import usddrphy
        soc.ddrphy = usddrphy.USDDRPHY(platform.request("ddram"), memtype="DDR4",
                                       sys_clk_freq=sys_clk_freq, iodelay_clk_freq=200e6)
        # The BIOS CPU sees 16 MiB (enough for calibration and its memtest); the SoC's ports see it all.
        soc.add_sdram("sdram", phy=soc.ddrphy, module=EDY4016A(sys_clk_freq, "1:4"),
                      size=0x0100_0000, l2_cache_size=8, l2_cache_min_data_width=0)

    @staticmethod
    def led_pads(platform):
        return [platform.request("user_led", i) for i in range(4)]

    nvddr_pins = True  # nand_pads(..., nvddr=True): the NV-DDR pin set (DQS on LA01_CC_P)

    @staticmethod
    def nand_pads(platform, targets, nvddr=False):
        """ONFI NAND on the FMC LPC connector (J2) LA pairs, single-ended LVCMOS18 (VADJ = 1.8 V):
        use a 1.8 V NAND part or a level-shifting FMC card. Pin list in boards/kcu105/README.md.
        NV-DDR pin set (`nvddr`): DQS on LA01_CC_P, a clock-capable pin (the delayed DQS clocks the IDDRs)."""
        from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
        if not 1 <= targets <= 4:
            raise BoardError(f"KCU105 NAND header: 1..4 targets supported, SoC has {targets}")
        ce = " ".join(f"LPC:LA{10 + i:02d}_P" for i in range(targets))
        rb = " ".join(f"LPC:LA{10 + i:02d}_N" for i in range(targets))
        platform.add_extension([("lsmc_nand", 0,
            Subsignal("dq", Pins("LPC:LA02_P LPC:LA02_N LPC:LA03_P LPC:LA03_N "
                                 "LPC:LA04_P LPC:LA04_N LPC:LA05_P LPC:LA05_N")),
            Subsignal("cle", Pins("LPC:LA06_P")),
            Subsignal("ale", Pins("LPC:LA06_N")),
            Subsignal("we_n", Pins("LPC:LA07_P")),
            Subsignal("re_n", Pins("LPC:LA07_N")),
            Subsignal("wp_n", Pins("LPC:LA08_P")),
            Subsignal("ce_n", Pins(ce)),
            Subsignal("rb_n", Pins(rb), Misc("PULLUP=TRUE")),  # open-drain R/B#
            *([Subsignal("dqs", Pins("LPC:LA01_CC_P"))] if nvddr else []),
            IOStandard("LVCMOS18"))])
        return platform.request("lsmc_nand")


if __name__ == "__main__":
    sys.exit(litex_soc.target_main(KCU105))
