"""LiteX wiring of the LSMC SoC on a board (the CRG, LiteDRAM, BIOS CPU and serial hand-over) and the
command line shared by boards/<board>/target.py."""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from lsmc import cliutil
from lsmc.boards import nand_pads as nand_pads_mod
from lsmc.boards.gateware import attach_firmware, elf_to_ram_words, generate_soc_verilog, prefix_modules, ram_region
from lsmc.boards.ports import BOARDS_BUILD, DDR_WINDOW_BITS, SOC_TOP, BoardError, SocInterface, soc_interface


# ----------------------------------------------------------------------------------- LiteX gateware
def _litex():
    """LiteX imports, deferred so the parsing helpers above work without LiteX installed."""
    try:
        import litedram  # noqa: F401
        import litex  # noqa: F401
        import migen  # noqa: F401
    except ImportError as e:  # pragma: no cover - environment problem
        raise BoardError(f"LiteX is not installed ({e}); run scripts/setup") from e


def add_lsmc_soc(soc, itf: SocInterface, soc_verilog: Path, lsmc_cd: str = "lsmc", nand_pads=None, leds=None,
                 lsmc_clk_freq: float = 100e6):
    """Instantiate the LSMC SoC in LiteX SoC `soc` (which has `sdram` and the BIOS CPU already):
    DDR ports, reset release after calibration, NAND pins, status LEDs. The SoC's UART wires are left
    on `soc.lsmc_tx` / `soc.lsmc_rx` and the release condition on `soc.lsmc_init_ok`, for the board's
    UART hook (`connect_serial_uart` on real boards)."""
    from litedram.frontend.axi import LiteDRAMAXI2Native
    from litedram.gen import LiteDRAMCoreControl
    from litex.soc.interconnect.axi import AXIInterface
    from migen import ClockDomainsRenamer, ClockSignal, Instance, Replicate, ResetSignal, Signal
    from migen.fhdl.specials import Tristate
    from migen.genlib.cdc import MultiReg

    # Calibration status written by the BIOS (liblitedram writes ddrctrl_init_done/_error).
    soc.ddrctrl = LiteDRAMCoreControl()
    init_ok = Signal()
    soc.comb += init_ok.eq(soc.ddrctrl.init_done.storage & ~soc.ddrctrl.init_error.storage)

    # The SoC is held in reset until the DRAM is calibrated and tested (its firmware uses DDR at once).
    lsmc_run = Signal()
    soc.specials += MultiReg(init_ok, lsmc_run, odomain=lsmc_cd)
    lsmc_reset = Signal()
    soc.comb += lsmc_reset.eq(ResetSignal(lsmc_cd) | ~lsmc_run)

    conns = {f"i_{itf.clk.name}": ClockSignal(lsmc_cd), f"i_{itf.reset.name}": lsmc_reset}

    # DDR: AXI4 master of the SoC -> LiteDRAM AXI2Native -> native crossbar port (CDC + width change).
    # Only the low 28 address bits reach LiteDRAM: the SoC's DDR window is 256 MiB at 0x4000_0000,
    # so a DDR address and its offset in the window map to the same DRAM byte.
    soc.lsmc_ddr_ports = []
    for axi_p in (itf.ddr, itf.ddr_dma):
        port = _write_data_after_command(
            soc, soc.sdram.crossbar.get_port(data_width=axi_p.data_width, clock_domain=lsmc_cd), lsmc_cd)
        aw = port.address_width + (axi_p.data_width // 8).bit_length() - 1
        if aw < DDR_WINDOW_BITS:
            raise BoardError("the board's DRAM is smaller than the SoC's 256 MiB DDR window")
        axi = AXIInterface(data_width=axi_p.data_width, address_width=aw, id_width=max(axi_p.id_width, 1),
                           clock_domain=lsmc_cd)
        bridged = AXIInterface(data_width=axi_p.data_width, address_width=aw, id_width=max(axi_p.id_width, 1),
                               clock_domain=lsmc_cd)
        name = axi_p.prefix[3:].lower()
        bridge = ClockDomainsRenamer(lsmc_cd)(LiteDRAMAXI2Native(bridged, port))
        setattr(soc, f"lsmc_{name}_axi2native", bridge)
        setattr(soc, f"lsmc_{name}_axi_slice", _axi_register_slice(axi, bridged, lsmc_cd))
        soc.lsmc_ddr_ports.append((axi_p, axi, port))
        for (ch, f), p in axi_p.ports.items():
            chan = getattr(axi, ch)
            sig = getattr(chan, f)
            if f == "addr":
                if p.direction != "output":
                    raise BoardError(p.name)
                a = Signal(p.width, name=f"{p.name}_soc")
                conns[f"o_{p.name}"] = a
                soc.comb += sig.eq(a[:DDR_WINDOW_BITS])
                continue
            if f == "id" and axi_p.id_width == 0:
                continue
            conns[("o_" if p.direction == "output" else "i_") + p.name] = sig
        if axi_p.id_width == 0:
            soc.comb += [axi.aw.id.eq(0), axi.ar.id.eq(0)]

    # UART wires of the SoC, for the board's UART hook.
    soc.lsmc_tx = lsmc_tx = Signal(reset=1)
    soc.lsmc_rx = lsmc_rx = Signal(reset=1)
    soc.lsmc_init_ok = init_ok
    conns[f"o_{itf.uart_txd.name}"] = lsmc_tx
    conns[f"i_{itf.uart_rxd.name}"] = lsmc_rx

    # ONFI NAND pins (if the SoC has the controller): an NV-DDR pin set (with DQS) through the DDR pad
    # wrapper (lsmc/boards/nand_pads.py); otherwise the SDR bus with DQ through IOBUF tristates, or
    # (simulation) a record with the split dq_o/dq_oe/dq_i signals.
    if itf.nand is not None and nand_pads is not None and nand_pads_mod.has_nvddr_pins(nand_pads):
        soc.lsmc_nand_family = nand_pads_mod.add_nvddr_pads(soc, itf, nand_pads, conns, lsmc_clk_freq, lsmc_cd)
    elif itf.nand is not None:
        if nand_pads is None:
            raise BoardError("the SoC has NAND pins but this board defines no NAND header pin set")
        n = itf.nand
        if hasattr(nand_pads, "dq_oe"):
            dq_o, dq_oe, dq_i = nand_pads.dq_o, nand_pads.dq_oe, nand_pads.dq_i
        else:
            dq_o, dq_oe, dq_i = Signal(8), Signal(), Signal(8)
            soc.specials += Tristate(nand_pads.dq, dq_o, Replicate(dq_oe, 8), dq_i)
        conns[f"o_{n['dq_o'].name}"] = dq_o
        conns[f"o_{n['dq_oe'].name}"] = dq_oe
        conns[f"i_{n['dq_i'].name}"] = dq_i
        for s in ("cle", "ale", "we_n", "re_n", "wp_n"):
            conns[f"o_{n[s].name}"] = getattr(nand_pads, s)
        if len(nand_pads.ce_n) != n["ce_n"].width:
            raise BoardError(f"NAND header has {len(nand_pads.ce_n)} CE# pins, SoC drives {n['ce_n'].width}")
        conns[f"o_{n['ce_n'].name}"] = nand_pads.ce_n
        conns[f"i_{n['rb_n'].name}"] = nand_pads.rb_n
        # NV-DDR PHY pins on an SDR-only pin set (no DQS): inputs low, outputs open.
        for p in itf.nand_ddr:
            if p.direction == "input":
                conns[f"i_{p.name}"] = 0
            else:
                conns[f"o_{p.name}"] = Signal(p.width, name=f"nc_{p.name}")

    soc.specials += Instance(SOC_TOP, name="lsmc_soc", **conns)
    soc.platform.add_source(str(soc_verilog))

    # Status LEDs: calibrated, calibration failed, SoC running, UART activity of the SoC.
    if leds is not None and len(leds) >= 3:
        soc.comb += [leds[0].eq(soc.ddrctrl.init_done.storage), leds[1].eq(soc.ddrctrl.init_error.storage),
                     leds[2].eq(init_ok)]
        if len(leds) >= 4:
            soc.comb += leds[3].eq(~lsmc_tx)
    return conns


def _axi_register_slice(master, slave, cd):
    """A full register slice on all five AXI channels between the SoC (`master`) and LiteDRAM's bridge
    (`slave`): valid, payload and ready all registered (LiteX stream Buffer with pipe_valid and
    pipe_ready). Without it the ECPIX-5 design's `lsmc` clock was limited at 64.36 MHz (f6d4008) by a
    combinational path from AXI2Native's write-buffer level through its upconverter's arbitration into
    the SoC's aw output stage. Costs 2 cycles of latency per direction of each channel."""
    from litex.soc.interconnect.stream import Buffer
    from migen import ClockDomainsRenamer, Module
    m = Module()
    for ch, down in (("aw", True), ("w", True), ("ar", True), ("r", False), ("b", False)):
        src, dst = (getattr(master, ch), getattr(slave, ch)) if down else (getattr(slave, ch), getattr(master, ch))
        buf = Buffer(src.description, pipe_valid=True, pipe_ready=True)
        m.submodules += buf
        m.comb += [src.connect(buf.sink), buf.source.connect(dst)]
    return ClockDomainsRenamer(cd)(m)


def _write_data_after_command(soc, port, cd):
    """A native port that passes a write beat on only after its command was accepted.

    LiteDRAMAXI2Native counts the write beats it has reserved for issued commands and underflows that
    count if a beat leaves its buffer first; its write path then stalls for good. Directly on the
    controller's crossbar that cannot happen, but the clock-domain crossing and the width converters
    that `get_port` puts in between take write data eagerly. Found in the board simulation
    (boards/sim): the SoC's first DDR write hung."""
    from litedram.common import LiteDRAMNativePort
    from migen import ClockDomainsRenamer, Module, Signal

    user = LiteDRAMNativePort(port.mode, port.address_width, port.data_width, clock_domain=port.clock_domain,
                              id=port.id)
    m = Module()
    credit = Signal(12)  # write commands accepted whose beat has not gone yet
    take = Signal()
    m.comb += [
        user.cmd.connect(port.cmd),
        port.rdata.connect(user.rdata),
        take.eq(credit != 0),
        port.wdata.valid.eq(user.wdata.valid & take),
        port.wdata.data.eq(user.wdata.data),
        port.wdata.we.eq(user.wdata.we),
        user.wdata.ready.eq(port.wdata.ready & take),
    ]
    if hasattr(port, "flush"):
        m.comb += port.flush.eq(user.flush)
    m.sync += credit.eq(credit + (user.cmd.valid & user.cmd.ready & user.cmd.we)
                        - (user.wdata.valid & user.wdata.ready))
    soc.submodules += ClockDomainsRenamer(cd)(m)
    return user


def crg_base():
    """Base class of a board's clock and reset generator (its `crg`): `super().__init__(*domains)` makes the
    `rst` signal LiteX's SoC drives and a clock domain `cd_<name>` per name (a `(name, True)` pair:
    reset-less); the board's `__init__` then adds its PLL and wiring (signals keep their `crg_` names)."""
    from litex.gen import LiteXModule
    from migen import ClockDomain, Signal

    class BoardCRG(LiteXModule):
        def __init__(self, *domains):
            self.rst = Signal()
            for d in domains:
                name, reset_less = (d, False) if isinstance(d, str) else d
                setattr(self, f"cd_{name}", ClockDomain(name, reset_less=reset_less))

    return BoardCRG


def make_soc_class():
    """The LiteX SoC class shared by the boards (built lazily: LiteX is an optional dependency)."""
    _litex()
    from litex.soc.integration.soc_core import SoCCore

    class LsmcBoardSoC(SoCCore):
        """Board CRG + LiteDRAM + BIOS CPU (DRAM calibration only) + the LSMC SoC black box.
        `board` supplies: name, ident, platform(), crg(platform, sys_clk, lsmc_clk), dram(soc, platform,
        sys_clk), optional nand_pads(platform, targets[, nvddr]) and led_pads(platform). `nvddr` asks
        for the board's NV-DDR NAND pin set (with DQS; lsmc/boards/nand_pads.py wires it)."""

        def __init__(self, board, soc_verilog: Path, sys_clk_freq: float, lsmc_clk_freq: float,
                     nvddr: bool = False):
            itf = soc_interface(soc_verilog)
            platform = board.platform()
            self.crg = board.crg(platform, sys_clk_freq, lsmc_clk_freq)
            # BIOS CPU: smallest VexRiscv; ROM holds the LiteX BIOS (liblitedram calibration + memtest).
            SoCCore.__init__(self, platform, sys_clk_freq, ident=f"LSMC on {board.ident}",
                             cpu_type="vexriscv", cpu_variant="minimal",
                             integrated_rom_size=0x10000, integrated_sram_size=0x2000,
                             with_uart=False)
            board.dram(self, platform, sys_clk_freq)
            if nvddr and not itf.nand:
                raise BoardError("--nvddr: the SoC has no NAND controller pins")
            if nvddr and not getattr(board, "nvddr_pins", False):
                raise BoardError(f"--nvddr: board {board.name} defines no NV-DDR NAND pin set (no DQS pin)")
            if nvddr:
                nand_pads = board.nand_pads(platform, itf.nand_targets, nvddr=True)
            else:
                nand_pads = board.nand_pads(platform, itf.nand_targets) if itf.nand else None
            leds = board.led_pads(platform)
            self.lsmc_itf = itf
            add_lsmc_soc(self, itf, soc_verilog, nand_pads=nand_pads, leds=leds, lsmc_clk_freq=lsmc_clk_freq)
            getattr(board, "uart", connect_serial_uart)(self, platform, lsmc_clk_freq)
            self.add_constant("LSMC_CLK_FREQ", int(lsmc_clk_freq))

    return LsmcBoardSoC


def connect_serial_uart(soc, platform, lsmc_clk_freq):
    """One USB-UART (`serial` tx/rx pins) for both: the BIOS (calibration log) until the SoC is
    released, then the SoC. The BIOS UART is created on a private pad record behind the mux."""
    from migen import Mux, Record
    serial = platform.request("serial")
    bios = Record([("tx", 1), ("rx", 1)])
    soc.add_uart(uart_name="serial", uart_pads=bios, baudrate=115200)
    ok = soc.lsmc_init_ok
    soc.comb += [
        serial.tx.eq(Mux(ok, soc.lsmc_tx, bios.tx)),
        bios.rx.eq(Mux(ok, 1, serial.rx)),
        soc.lsmc_rx.eq(Mux(ok, serial.rx, 1)),
    ]


# ------------------------------------------------------------------------------------------ command
def target_main(board, argv=None):
    """Command line shared by boards/<board>/target.py."""
    return cliutil.tool_main(f"{board.name}/target.py")(lambda a: _target_main(board, a))(argv)


def _target_main(board, argv):
    ap = argparse.ArgumentParser(
        description=f"LSMC SoC on {board.ident}: generate the gateware sources (Verilog, XDC, Vivado TCL) "
                    f"into build/boards/{board.name}/, or build/load a bitstream with --build/--load (Vivado).")
    ap.add_argument("--build", action="store_true", help="run Vivado (synthesis, P&R, bitstream)")
    ap.add_argument("--load", action="store_true", help="load the bitstream over JTAG (Vivado hw_server)")
    ap.add_argument("--output-dir", type=Path, default=BOARDS_BUILD / board.name)
    ap.add_argument("--soc-verilog", type=Path, default=None,
                    help="LsmcSoc.v to use (default: generate the board variant with soc.Generate --no-sim-ctrl)")
    ap.add_argument("--firmware", type=Path, default=None,
                    help="firmware ELF to preload into the SoC's on-chip RAM (see docs/boards.md)")
    ap.add_argument("--sys-clk-freq", type=cliutil.hz_option(1e6, 1e9), default=board.sys_clk_freq, metavar="HZ",
                    help=f"LiteDRAM/BIOS clock (default {board.sys_clk_freq / 1e6:g} MHz)")
    ap.add_argument("--lsmc-clk-freq", type=cliutil.hz_option(1e6, 1e9), default=100e6, metavar="HZ",
                    help="SoC clock (default 100 MHz, as in the paper)")
    ap.add_argument("--no-compile-software", action="store_true",
                    help="skip compiling the LiteX BIOS (sources only; the BIOS ROM is then empty)")
    ap.add_argument("--nvddr", action="store_true",
                    help="NAND on the board's NV-DDR pin set (adds DQS; DDR I/O primitives, a delay line per DQ)")
    args = ap.parse_args(argv)
    cliutil.check_output_dir(args.output_dir, "--output-dir")
    for opt, path in (("--soc-verilog", args.soc_verilog), ("--firmware", args.firmware)):
        if path is not None and not cliutil.read_input(path):
            raise cliutil.CliError(f"{path}: empty file ({opt})")
    try:
        out = build_target(board, args.output_dir, soc_verilog=args.soc_verilog, firmware=args.firmware,
                           sys_clk_freq=args.sys_clk_freq, lsmc_clk_freq=args.lsmc_clk_freq,
                           run=args.build, compile_software=not args.no_compile_software, nvddr=args.nvddr)
    except BoardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{board.name}: gateware in {out}")
    if args.firmware is None:
        print("note: no --firmware given: the SoC's on-chip RAM is empty in this design (docs/boards.md, "
              "Loading the firmware)", file=sys.stderr)
    if args.load:
        if not args.build and not (out / "gateware" / f"{board.name}.bit").exists():
            print("error: --load needs a bitstream (run with --build first)", file=sys.stderr)
            return 2
        board.platform().create_programmer().load_bitstream(str(out / "gateware" / f"{board.name}.bit"))
    return 0


def soc_generate_args(board, nvddr: bool = False) -> dict:
    """The `generate_soc_verilog` arguments of `board`'s build: its on-chip RAM (`ram_kib`, None: the default
    map's) and, behind the NV-DDR pad wrapper (`nvddr`), the wrapper's input stage, by which the SoC's SDR
    sample point moves. build_target and lsmc.fpga's per-board resource table both take them from here.
    No DMA port slices (`dma_port_slice`): the whole ECPIX-5 route with them was slower (78.51 MHz against 89.82,
    their 256-bit W buffers' enables became the critical path: docs/boards.md); every board preset has the slice
    between DMA port 0's write decoders and its arbiter instead (LsmcSocConfig.dma.arbiterSlice)."""
    return {"ram_kib": getattr(board, "ram_kib", None),
            "nand_pad_input_cycles": nand_pads_mod.PAD_INPUT_CYCLES if nvddr else 0,
            "dma_port_slice": False}


def build_target(board, output_dir: Path, soc_verilog: Path | None = None, firmware: Path | None = None,
                 sys_clk_freq: float | None = None, lsmc_clk_freq: float = 100e6, run: bool = False,
                 compile_software: bool = True, nvddr: bool = False) -> Path:
    """Generate (run=False) or build (run=True, needs Vivado) one board. Returns the output folder."""
    _litex()
    from litex.soc.integration.builder import Builder
    output_dir = Path(output_dir)
    gw = output_dir / "gateware"
    gw.mkdir(parents=True, exist_ok=True)
    src = Path(soc_verilog) if soc_verilog else generate_soc_verilog(**soc_generate_args(board, nvddr))
    soc_interface(src)  # fail early, with the port list, before LiteX starts
    nand_pads_mod.check_soc_pad_cycles(src, nvddr)
    # A private copy, so the build folder is self-contained and the RAM image can be attached to it.
    local = gw / f"{SOC_TOP}.v"
    shutil.copyfile(src, local)
    # LiteX's BIOS CPU is a module `VexRiscv` too: give every submodule of the SoC a private prefix.
    prefix_modules(local, "Lsmc_")
    for extra in src.parent.glob(f"{SOC_TOP}.v_*.bin"):  # memory init files SpinalHDL writes next to it
        shutil.copyfile(extra, gw / extra.name)
    if firmware is not None:
        attach_firmware(local, elf_to_ram_words(firmware, *ram_region(src)))
    if run and getattr(board, "toolchain", "vivado") == "vivado" and shutil.which("vivado") is None:
        raise BoardError("--build needs Vivado (vivado not on PATH); without --build the sources are generated")
    cls = make_soc_class()
    soc = cls(board, local, sys_clk_freq or board.sys_clk_freq, lsmc_clk_freq, nvddr=nvddr)
    builder = Builder(soc, output_dir=str(output_dir), compile_software=compile_software,
                      csr_csv=str(output_dir / "csr.csv"))
    # Board-specific toolchain arguments (the simulation board passes its Verilator settings).
    kwargs = board.build_kwargs(run, lsmc_clk_freq) if hasattr(board, "build_kwargs") else {"run": run}
    builder.build(build_name=board.name, **kwargs)
    return output_dir
