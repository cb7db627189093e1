"""NV-DDR pad wrapper: the SoC's NV-DDR PHY pins (NandPins `ddr_*`, hw/ip/nand/rtl/NandTypes.scala) onto a
board's NAND header through the FPGA's DDR I/O primitives.

The SoC drives D1/D2 pairs for every output (D1 on the SDR pins, D2 on `ddr_h2_*`; in SDR mode both
halves are equal, so the same flops serve both modes), two DQS halves on the 90-degree clock and a
delay tap; it takes DQ sampled at both edges of its clock on `ddr_cap_q1/q2` (`ddr_cap_valid` high:
this wrapper delivers them every cycle) and picks each DQS pair's two samples itself (DDR_CAPTURE.SLOT,
found by training). Here:

* outputs (CLE, ALE, CLK = WE#, W/R# = RE#, CE#n, DQ and its enable): LiteX `DDROutput` on the SoC clock;
* DQS out: `DDROutput` on the 90-degree clock `lsmc90` (a PLL output added next to the SoC's clock);
  DQS in: not sampled;
* read capture, per DQ bit: pad -> delay line (ECP5 `DELAYF`, UltraScale `IDELAYE3` in COUNT mode; one
  tap value `ddr_tap` for all) -> `DDRInput` on the SoC clock (rising edge -> Q1, falling -> Q2), the
  same clock as the pin's `DDROutput` (an ECP5 pin's IOLOGIC has one clock); the SDR read takes Q1
  (an IDDR's D may feed nothing else), `PAD_INPUT_CYCLES` register stage ahead of the SoC's `dq_i`: the
  SoC behind this wrapper is generated with it (`soc.Generate --nand-pad-input-cycles`, its controller's
  SAMPLE.PAD_CYCLES) and moves its SDR sample point by it; `check_soc_pad_cycles` refuses any other.

LiteX lowers `DDROutput`/`DDRInput` per platform (ECP5: ODDRX1F/IDDRX1F, UltraScale: ODDRE1/IDDRE1);
the delay lines are the one primitive instantiated here, so a platform family needs an entry in
`lsmc.sim.pads.TAPS` and `_delay_lines`. The behavioural model of all this is
hw/ip/nand/model/nvddr_pads.h (hw/ip/nand/doc/nand.md,
"PHY and its simulation model", maps each of its behaviours to these primitives and says where they
differ, and what the ECP5's 128 taps cover per NV-DDR mode).
"""
from __future__ import annotations

from lsmc.boards.ports import BoardError
from lsmc.sim.pads import TAPS  # taps of the DQ delay line per family

# Pins of a header's NAND pin set that make it an NV-DDR one (CLK and W/R# are the SDR WE#/RE# pins).
NVDDR_PINS = ("dqs",)
# Register stages between a DQ pad and the SoC's SDR input `dq_i`: the IDDR's rising-edge flop (Q1). The
# board build generates the SoC with it; the standalone harness models it (hw/ip/nand/model/nvddr_pads.h sdr_dq).
PAD_INPUT_CYCLES = 1


def soc_pad_input_cycles(soc_verilog) -> int | None:
    """SAMPLE.PAD_CYCLES the NAND controller of the SoC in `soc_verilog` was generated with, from the
    register description soc.Generate writes next to it (nand_regs.json); None when there is none."""
    import json
    from pathlib import Path
    j = Path(soc_verilog).parent / "nand_regs.json"
    if not j.is_file():
        return None
    try:
        regs = json.loads(j.read_text())["registers"]
        fields = next(r["fields"] for r in regs if r["name"] == "SAMPLE")
    except (ValueError, KeyError, StopIteration, TypeError) as e:
        raise BoardError(f"{j}: no SAMPLE register in the NAND register description ({e})") from None
    return next((f["reset"] for f in fields if f["name"] == "PAD_CYCLES"), 0)  # older controllers: direct pins


def check_soc_pad_cycles(soc_verilog, nvddr: bool) -> None:
    """BoardError unless the SoC's SDR sample point expects the pads it gets: PAD_INPUT_CYCLES behind
    this wrapper (`nvddr`), 0 on direct pins. A Verilog without its nand_regs.json cannot be checked and
    is refused behind the wrapper (its SDR reads would sample one cycle early)."""
    got = soc_pad_input_cycles(soc_verilog)
    want = PAD_INPUT_CYCLES if nvddr else 0
    if got is None and not nvddr:
        return
    if got != want:
        have = "no nand_regs.json next to it" if got is None else f"generated with {got} pad input cycle(s)"
        pins = "go through the NV-DDR pad wrapper" if nvddr else "are direct"
        raise BoardError(f"{soc_verilog}: {have}, but the NAND pins {pins} ({want}): "
                         f"generate the SoC with soc.Generate --nand-pad-input-cycles {want}")


def platform_family(platform) -> str:
    """`ecp5` or `ultrascale` from the LiteX platform's device string; BoardError for anything else."""
    dev = str(getattr(platform, "device", "")).lower()
    if dev.startswith("lfe5"):
        return "ecp5"
    if dev.startswith(("xcku", "xcvu", "xczu", "xcau")):
        return "ultrascale"
    raise BoardError(f"NV-DDR pads: no DDR I/O / delay-line mapping for device {dev or '?'} "
                     "(supported: ECP5 LFE5*, UltraScale xcku/xcvu/xczu/xcau)")


def has_nvddr_pins(pads) -> bool:
    return all(hasattr(pads, p) for p in NVDDR_PINS)


def _delay_lines(family, tap, dq_in, dq_dly, clk):
    """(specials, sync statements, comb statements) of one delay line per DQ bit, all following the SoC's
    tap value `tap` (one shared setting: the bits of a byte travel together on the board)."""
    from migen import If, Instance, ResetSignal, Signal
    n = len(dq_in)
    if family == "ultrascale":
        # COUNT mode (no IDELAYCTRL calibration needed): the tap is loaded whenever it changes.
        last = Signal(len(tap), reset=0)
        load = Signal()
        specs = [Instance("IDELAYE3", name=f"nvddr_dq{k}_idelay",
                          p_CASCADE="NONE", p_DELAY_FORMAT="COUNT", p_DELAY_SRC="IDATAIN", p_DELAY_TYPE="VAR_LOAD",
                          p_DELAY_VALUE=0, p_IS_CLK_INVERTED=0, p_IS_RST_INVERTED=0, p_REFCLK_FREQUENCY=300.0,
                          p_SIM_DEVICE="ULTRASCALE", p_UPDATE_MODE="ASYNC",
                          i_CLK=clk, i_RST=0, i_EN_VTC=0, i_CE=0, i_INC=0, i_LOAD=load,
                          i_CNTVALUEIN=tap[:9], i_IDATAIN=dq_in[k], i_DATAIN=0, i_CASC_IN=0, i_CASC_RETURN=0,
                          o_DATAOUT=dq_dly[k]) for k in range(n)]
        return specs, [last.eq(tap)], [load.eq(tap != last)]
    # ECP5 DELAYF: no load port; LOADN returns it to DEL_VALUE (0) and each MOVE pulse steps one tap
    # (DIRECTION 0: more delay). A counter walks the lines to min(tap, 127), one tap per two cycles;
    # LOADN follows the reset so the lines and the counter restart at 0 together.
    top = TAPS["ecp5"] - 1
    cur = Signal(max=TAPS["ecp5"], reset=0)
    move = Signal(name="nvddr_dly_move")
    direction = Signal(name="nvddr_dly_direction")
    target = Signal(max=TAPS["ecp5"])
    comb = [target.eq(tap), If(tap > top, target.eq(top))]
    stmts = [move.eq(0),
             If(~move & (target > cur), move.eq(1), direction.eq(0), cur.eq(cur + 1))
             .Elif(~move & (target < cur), move.eq(1), direction.eq(1), cur.eq(cur - 1))]
    specs = [Instance("DELAYF", name=f"nvddr_dq{k}_delayf", p_DEL_MODE="USER_DEFINED", p_DEL_VALUE=0,
                      i_A=dq_in[k], i_LOADN=~ResetSignal(), i_MOVE=move, i_DIRECTION=direction, o_Z=dq_dly[k])
             for k in range(n)]
    return specs, stmts, comb


def _output_enable(soc, family, h1, h2, oe, cd):
    """A tristate enable from its two halves. UltraScale: an ODDRE1 into the IOB's T. ECP5: an ODDRX1F's
    Q may only drive an output pad (nextpnr's packer), and the tristate DDR flop exists only in DQS
    groups, so the enable is one flop per cycle, high when either half drives (at most half a cycle
    longer than the SoC asks, inside the bus turnaround times tWRCK / tDQSHZ)."""
    from litex.build.io import DDROutput
    from migen import ClockDomainsRenamer, ClockSignal, Module
    if family == "ultrascale":
        soc.specials += DDROutput(h1, h2, oe, ClockSignal(cd))
    else:
        flop = Module()
        flop.sync += oe.eq(h1 | h2)
        soc.submodules += ClockDomainsRenamer(cd)(flop)


def add_nvddr_pads(soc, itf, pads, conns: dict, lsmc_clk_freq: float, lsmc_cd: str = "lsmc"):
    """Wire the SoC's NAND pins (SDR and `ddr_*`) to `pads` (a header pin set with `dqs`) through the
    DDR primitives; fills `conns` (the SoC instance's connections). Returns the platform family."""
    from litex.build.io import DDRInput, DDROutput
    from migen import ClockDomain, ClockDomainsRenamer, ClockSignal, Module, Signal
    from migen.fhdl.specials import Tristate

    family = platform_family(soc.platform)
    n = itf.nand
    ddr = {p.name[len(n["dq_o"].name) - len("dq_o"):]: p for p in itf.nand_ddr}  # "ddr_h2_cle" -> Port
    need = ["ddr", "ddr_h2_dq_o", "ddr_h2_dq_oe", "ddr_h2_cle", "ddr_h2_ale", "ddr_h2_we_n", "ddr_h2_re_n",
            "ddr_h2_ce_n", "ddr_dqs_o", "ddr_dqs_oe", "ddr_tap", "ddr_cap_valid", "ddr_cap_q1", "ddr_cap_q2"]
    missing = [s for s in need if s not in ddr]
    if missing:
        raise BoardError(f"NV-DDR pin set on the header but the SoC lacks NV-DDR ports: {', '.join(missing)}")
    clk = ClockSignal(lsmc_cd)
    targets = n["ce_n"].width
    if len(pads.ce_n) != targets:
        raise BoardError(f"NAND header has {len(pads.ce_n)} CE# pins, SoC drives {targets}")

    def pin(name, width=1):
        return Signal(width, name=f"nvddr_{name}")

    # D1 (SDR pins) and D2 (ddr_h2_*) halves of every output into one DDR flop per pad bit.
    d1 = {s: pin(f"{s}_d1", n[s].width) for s in ("dq_o", "dq_oe", "cle", "ale", "we_n", "re_n", "ce_n")}
    d2 = {s: pin(f"{s}_d2", n[s].width) for s in d1}
    for s in d1:
        conns[f"o_{n[s].name}"] = d1[s]
        conns[f"o_{ddr['ddr_h2_' + s].name}"] = d2[s]
    for s in ("cle", "ale", "we_n", "re_n"):
        soc.specials += DDROutput(d1[s], d2[s], getattr(pads, s), clk)
    for k in range(targets):
        soc.specials += DDROutput(d1["ce_n"][k], d2["ce_n"][k], pads.ce_n[k], clk)
    conns[f"o_{n['wp_n'].name}"] = pads.wp_n
    conns[f"i_{n['rb_n'].name}"] = pads.rb_n
    conns[f"o_{ddr['ddr'].name}"] = pin("mode")  # NV-DDR active: informational, the flops serve both modes

    # DQ: output DDR flops and input DDR flops on the SoC clock (ECP5: one clock per pin's IOLOGIC), the
    # input through a delay line per bit set from the SoC's tap. The flash's DQS is not a clock here: the
    # IDDR samples DQ at both SoC clock edges and the controller picks each DQS pair's two samples by a
    # trained half-cycle offset (DDR_CAPTURE.SLOT) with the tap placing the samples inside the eye.
    dq_o, dq_oe, dq_pad = pin("dq_o", 8), pin("dq_oe"), pin("dq_pad", 8)
    for k in range(8):
        soc.specials += DDROutput(d1["dq_o"][k], d2["dq_o"][k], dq_o[k], clk)
    _output_enable(soc, family, d1["dq_oe"], d2["dq_oe"], dq_oe, lsmc_cd)
    soc.specials += [Tristate(pads.dq[k], dq_o[k], dq_oe, dq_pad[k]) for k in range(8)]
    tap = pin("tap", 9)
    conns[f"o_{ddr['ddr_tap'].name}"] = tap
    dq_dly = pin("dq_dly", 8)
    specs, sync, comb = _delay_lines(family, tap, dq_pad, dq_dly, clk)
    follower = Module()
    follower.specials += specs
    follower.sync += sync
    follower.comb += comb
    soc.submodules.nvddr_tap = ClockDomainsRenamer(lsmc_cd)(follower)
    q1, q2 = pin("q1", 8), pin("q2", 8)
    for k in range(8):
        soc.specials += DDRInput(dq_dly[k], q1[k], q2[k], clk)
    # The SDR layer reads the rising-edge sample (an IDDR's D may feed nothing else; its flop is the first
    # stage of the SDR PHY's synchroniser); the NV-DDR layer gets both samples every cycle.
    conns[f"i_{n['dq_i'].name}"] = q1
    conns[f"i_{ddr['ddr_cap_valid'].name}"] = 1
    conns[f"i_{ddr['ddr_cap_q1'].name}"] = q1
    conns[f"i_{ddr['ddr_cap_q2'].name}"] = q2

    # DQS: its flop on the 90-degree clock (the SoC's DQS halves start a quarter cycle later); driven by
    # the flash on reads but not sampled (the capture runs on the SoC clock).
    if hasattr(soc, "crg"):  # a board: the CRG's PLL makes it (standalone: the host has the domain)
        if not hasattr(soc.crg, "pll"):
            raise BoardError("NV-DDR pads need the board CRG's PLL (`crg.pll`) for the 90-degree DQS clock")
        soc.clock_domains.cd_lsmc90 = ClockDomain("lsmc90")
        soc.crg.pll.create_clkout(soc.cd_lsmc90, lsmc_clk_freq, phase=90)
    dqs_o2, dqs_oe2 = pin("dqs_o2", 2), pin("dqs_oe2", 2)
    conns[f"o_{ddr['ddr_dqs_o'].name}"] = dqs_o2
    conns[f"o_{ddr['ddr_dqs_oe'].name}"] = dqs_oe2
    dqs_o, dqs_oe = pin("dqs_o"), pin("dqs_oe")
    soc.specials += DDROutput(dqs_o2[0], dqs_o2[1], dqs_o, ClockSignal("lsmc90"))
    _output_enable(soc, family, dqs_oe2[0], dqs_oe2[1], dqs_oe, "lsmc90")
    soc.specials += Tristate(pads.dqs, dqs_o, dqs_oe)
    return family


def standalone_verilog(platform, targets: int = 1, lsmc_clk_freq: float = 100e6) -> str:
    """The wrapper alone as Verilog module `nvddr_pads` for `platform` (the SoC side as top-level ports,
    clocks `lsmc_clk`/`lsmc90_clk` as inputs): a synthesis check of the primitives without the SoC."""
    from types import SimpleNamespace

    from migen import ClockDomain, Module, Record

    from lsmc.boards.ports import _NAND_IN, _NAND_OUT, NAND_DDR_PORTS, Port
    host = Module()
    host.platform = platform
    host.clock_domains.cd_lsmc = ClockDomain("lsmc")
    host.clock_domains.cd_lsmc90 = ClockDomain("lsmc90")
    widths = {"dq_o": 8, "dq_i": 8, "ce_n": targets, "rb_n": targets}
    nand = {s: Port(f"io_nand_{s}", "output" if s in _NAND_OUT else "input", widths.get(s, 1))
            for s in _NAND_OUT + _NAND_IN}
    itf = SimpleNamespace(nand=nand, nand_ddr=[Port(f"io_nand_{s}", d, w or targets) for s, d, w in NAND_DDR_PORTS])
    pads = Record([("dq", 8), ("dqs", 1), ("cle", 1), ("ale", 1), ("we_n", 1), ("re_n", 1), ("wp_n", 1),
                   ("ce_n", targets), ("rb_n", targets)], name="nand")
    conns = {}
    add_nvddr_pads(host, itf, pads, conns, lsmc_clk_freq)
    ios = {s for s in conns.values() if not isinstance(s, int)} | set(pads.flatten())
    ios |= {host.cd_lsmc.clk, host.cd_lsmc.rst, host.cd_lsmc90.clk, host.cd_lsmc90.rst}
    return str(platform.get_verilog(host, ios=ios, name="nvddr_pads"))
