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
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOARDS_BUILD = ROOT / "build" / "boards"
SOC_BOARD_GEN = ROOT / "build" / "gen" / "soc_board"

SOC_TOP = "LsmcSoc"
DDR_BASE = 0x4000_0000
DDR_WINDOW_BITS = 28  # 256 MiB DDR window of the SoC memory map (docs/architecture.md)
ONCHIP_RAM_BASE = 0x8000_0000
ONCHIP_RAM_SIZE = 256 * 1024


class BoardError(RuntimeError):
    """A problem with the inputs of a board build (missing/odd SoC Verilog, bad firmware, ...)."""


# ------------------------------------------------------------------------------------ Verilog ports
@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # "input" | "output" | "inout"
    width: int


_PORT_RE = re.compile(
    r"^\s*(input|output|inout)\s+(?:wire|reg|logic)?\s*(?:signed\s+)?(?:\[\s*(\d+)\s*:\s*(\d+)\s*\])?\s*"
    r"([A-Za-z_][A-Za-z0-9_$]*)\s*,?\s*(?://.*)?$")


def parse_ports(verilog: Path, module: str = SOC_TOP) -> list[Port]:
    """Ports of `module` in an ANSI-style Verilog file (SpinalHDL's output style)."""
    verilog = Path(verilog)
    if not verilog.is_file():
        raise BoardError(f"SoC Verilog not found: {verilog}")
    text = verilog.read_text(errors="replace")
    m = re.search(rf"^\s*module\s+{re.escape(module)}\b\s*(?:#\s*\(.*?\)\s*)?\((.*?)\);", text, re.S | re.M)
    if not m:
        raise BoardError(f"module {module} not found in {verilog}")
    ports = []
    for line in m.group(1).splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        pm = _PORT_RE.match(line)
        if not pm:
            raise BoardError(f"{verilog}: cannot parse port declaration of {module}: {line!r}")
        d, hi, lo, name = pm.groups()
        width = abs(int(hi) - int(lo)) + 1 if hi is not None else 1
        ports.append(Port(name, d, width))
    if not ports:
        raise BoardError(f"module {module} in {verilog} has no ports")
    return ports


# AXI4 fields by channel as SpinalHDL names them (`<prefix>_<ch>_payload_<field>`), with the
# direction seen from the SoC (master).
_AXI_FIELDS = {
    "aw": ("output", ["addr", "id", "len", "size", "burst", "lock", "cache", "prot", "qos", "region"]),
    "w": ("output", ["data", "strb", "last"]),
    "b": ("input", ["id", "resp"]),
    "ar": ("output", ["addr", "id", "len", "size", "burst", "lock", "cache", "prot", "qos", "region"]),
    "r": ("input", ["data", "id", "resp", "last"]),
}
_AXI_REQUIRED = {"aw": {"addr", "len", "size", "burst"}, "w": {"data", "strb", "last"},
                 "b": {"resp"}, "ar": {"addr", "len", "size", "burst"}, "r": {"data", "resp", "last"}}

_NAND_OUT = ["dq_o", "dq_oe", "cle", "ale", "we_n", "re_n", "wp_n", "ce_n"]
_NAND_IN = ["dq_i", "rb_n"]


@dataclass
class AxiPort:
    prefix: str
    data_width: int
    addr_width: int
    id_width: int
    ports: dict = field(default_factory=dict)  # (channel, field) -> Port, field "valid"/"ready" too


@dataclass
class SocInterface:
    """What the LiteX side must wire: the SoC's top-level ports, classified and checked."""
    verilog: Path
    ports: list
    clk: Port
    reset: Port
    uart_txd: Port
    uart_rxd: Port
    ddr: AxiPort  # CPU side (caches, NAND DMA)
    ddr_dma: AxiPort  # compaction DMA, 256 bits
    nand: dict | None  # signal name (dq_o, ...) -> Port, when the SoC has NAND pins

    @property
    def nand_targets(self) -> int:
        return self.nand["ce_n"].width if self.nand else 0


def _axi_port(byname: dict, prefix: str) -> AxiPort:
    found = {}
    for ch, (d, fields) in _AXI_FIELDS.items():
        rev = "input" if d == "output" else "output"
        for hs, hd in (("valid", d), ("ready", rev)):
            p = byname.get(f"{prefix}_{ch}_{hs}")
            if p is None:
                raise BoardError(f"SoC port {prefix}_{ch}_{hs} missing (AXI4 master {prefix} expected)")
            if p.direction != hd:
                raise BoardError(f"SoC port {p.name} is an {p.direction}, expected {hd}")
            found[(ch, hs)] = p
        for f in fields:
            p = byname.get(f"{prefix}_{ch}_payload_{f}")
            if p is None:
                if f in _AXI_REQUIRED[ch]:
                    raise BoardError(f"SoC port {prefix}_{ch}_payload_{f} missing (AXI4 master {prefix})")
                continue
            if p.direction != d:
                raise BoardError(f"SoC port {p.name} is an {p.direction}, expected {d}")
            found[(ch, f)] = p
    dw = found[("w", "data")].width
    if found[("r", "data")].width != dw or found[("w", "strb")].width * 8 != dw:
        raise BoardError(f"AXI4 master {prefix}: inconsistent data/strobe widths")
    if dw not in (32, 64, 128, 256, 512):
        raise BoardError(f"AXI4 master {prefix}: unsupported data width {dw}")
    aw = found[("aw", "addr")].width
    if found[("ar", "addr")].width != aw or aw < DDR_WINDOW_BITS:
        raise BoardError(f"AXI4 master {prefix}: address width {aw} (need >= {DDR_WINDOW_BITS}, equal on AR/AW)")
    idw = found[("aw", "id")].width if ("aw", "id") in found else 0
    return AxiPort(prefix, dw, aw, idw, found)


def soc_interface(verilog: Path) -> SocInterface:
    """Read and check the SoC's ports against the board contract; every port must be accounted for."""
    ports = parse_ports(verilog)
    byname = {p.name: p for p in ports}

    def need(name, direction, width=1):
        p = byname.get(name)
        if p is None:
            raise BoardError(f"{verilog}: SoC port {name} missing (ports: {', '.join(sorted(byname))})")
        if p.direction != direction or p.width != width:
            raise BoardError(f"SoC port {name}: {p.direction} [{p.width}], expected {direction} [{width}]")
        return p

    if "io_simExit_valid" in byname or "io_simArg" in byname:
        raise BoardError(f"{verilog} has the simulation-control block (io_simArg/io_simExit): generate the "
                         "board variant with `soc.Generate --no-sim-ctrl`")
    ddr = _axi_port(byname, "io_ddr")
    dma = _axi_port(byname, "io_ddrDma")
    nand = None
    nand_prefixes = sorted({p.name[: -len("_dq_o")] for p in ports if p.name.endswith("_dq_o")})
    if len(nand_prefixes) > 1:
        raise BoardError(f"several NAND pin groups in the SoC: {nand_prefixes}")
    if nand_prefixes:
        pre = nand_prefixes[0]
        nand = {}
        for s in _NAND_OUT + _NAND_IN:
            d = "output" if s in _NAND_OUT else "input"
            p = byname.get(f"{pre}_{s}")
            if p is None or p.direction != d:
                raise BoardError(f"NAND pins {pre}_*: {pre}_{s} missing or not an {d}")
            nand[s] = p
        if nand["dq_o"].width != 8 or nand["dq_i"].width != 8 or nand["rb_n"].width != nand["ce_n"].width:
            raise BoardError(f"NAND pins {pre}_*: expected 8-bit DQ and one R/B# per CE#")
    itf = SocInterface(Path(verilog), ports, need("clk", "input"), need("reset", "input"),
                       need("io_uart_txd", "output"), need("io_uart_rxd", "input"), ddr, dma, nand)
    used = {itf.clk.name, itf.reset.name, itf.uart_txd.name, itf.uart_rxd.name}
    used |= {p.name for p in ddr.ports.values()} | {p.name for p in dma.ports.values()}
    used |= {p.name for p in (nand or {}).values()}
    unknown = [p for p in ports if p.name not in used]
    if unknown:
        raise BoardError("SoC ports the board wiring does not know (update scripts/lsmc/boards.py): "
                         + ", ".join(f"{p.direction} {p.name}[{p.width}]" for p in unknown))
    return itf


# ------------------------------------------------------------------------------- SoC Verilog source
def generate_soc_verilog(outdir: Path = SOC_BOARD_GEN, uart_baud: int = 115200) -> Path:
    """Board variant of the SoC (no simulation-control block) through the project's Mill wrapper."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from lsmc import build  # noqa: E402  (the project's locked, incremental Mill runner)
    outdir = Path(outdir)
    build.generate("soc", "soc.Generate", outdir,
                   args=["--out", str(outdir), "--no-sim-ctrl", "--uart-baud", str(uart_baud)])
    v = outdir / f"{SOC_TOP}.v"
    if not v.is_file():
        raise BoardError(f"soc.Generate did not write {v}")
    return v


# --------------------------------------------------------------------------- firmware → on-chip RAM
def elf_to_ram_words(elf: Path, base: int = ONCHIP_RAM_BASE, size: int = ONCHIP_RAM_SIZE) -> list[int]:
    """Little-endian 32-bit words of the on-chip RAM image of a firmware ELF (loadable segments only;
    every byte must fall inside the RAM window, else the board would silently run a truncated image)."""
    import struct
    data = Path(elf).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise BoardError(f"{elf}: not a 32-bit little-endian ELF")
    if struct.unpack_from("<H", data, 18)[0] != 0xF3:
        raise BoardError(f"{elf}: not a RISC-V ELF")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    image = bytearray(size)
    loaded = 0
    for i in range(phnum):
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _flags, _align = struct.unpack_from(
            "<8I", data, phoff + i * phentsize)
        if p_type != 1 or p_memsz == 0:  # PT_LOAD only
            continue
        if p_paddr < base or p_paddr + p_memsz > base + size:
            raise BoardError(f"{elf}: segment at 0x{p_paddr:08x}+0x{p_memsz:x} is outside the on-chip RAM "
                             f"0x{base:08x}..0x{base + size:08x} (the board loads only the on-chip RAM)")
        image[p_paddr - base: p_paddr - base + p_filesz] = data[p_offset: p_offset + p_filesz]
        loaded += p_filesz
    if loaded == 0:
        raise BoardError(f"{elf}: no loadable bytes")
    return list(struct.unpack(f"<{size // 4}I", bytes(image)))


# ----------------------------------------------------------------------------------- LiteX gateware
def _litex():
    """LiteX imports, deferred so the parsing helpers above work without LiteX installed."""
    try:
        import migen  # noqa: F401
        import litex  # noqa: F401
        import litedram  # noqa: F401
    except ImportError as e:  # pragma: no cover - environment problem
        raise BoardError(f"LiteX is not installed ({e}); run scripts/setup") from e


def add_lsmc_soc(soc, itf: SocInterface, soc_verilog: Path, lsmc_cd: str = "lsmc", nand_pads=None, leds=None):
    """Instantiate the LSMC SoC in LiteX SoC `soc` (which has `sdram` and the BIOS CPU already):
    DDR ports, reset release after calibration, NAND pins, status LEDs. The SoC's UART wires are left
    on `soc.lsmc_tx` / `soc.lsmc_rx` and the release condition on `soc.lsmc_init_ok`, for the board's
    UART hook (`connect_serial_uart` on real boards)."""
    from migen import Signal, Instance, ClockSignal, ResetSignal, Mux, ClockDomainsRenamer, Cat, Replicate
    from migen.genlib.cdc import MultiReg
    from migen.fhdl.specials import Tristate
    from litex.soc.interconnect.axi import AXIInterface
    from litedram.frontend.axi import LiteDRAMAXI2Native
    from litedram.gen import LiteDRAMCoreControl

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
            raise BoardError(f"the board's DRAM is smaller than the SoC's 256 MiB DDR window")
        axi = AXIInterface(data_width=axi_p.data_width, address_width=aw, id_width=max(axi_p.id_width, 1),
                           clock_domain=lsmc_cd)
        bridge = ClockDomainsRenamer(lsmc_cd)(LiteDRAMAXI2Native(axi, port))
        setattr(soc, f"lsmc_{axi_p.prefix[3:].lower()}_axi2native", bridge)
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

    # ONFI NAND pins (if the SoC has the controller): bidirectional DQ through IOBUF tristates, or
    # (simulation) a record with the split dq_o/dq_oe/dq_i signals.
    if itf.nand is not None:
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

    soc.specials += Instance(SOC_TOP, name="lsmc_soc", **conns)
    soc.platform.add_source(str(soc_verilog))

    # Status LEDs: calibrated, calibration failed, SoC running, UART activity of the SoC.
    if leds is not None and len(leds) >= 3:
        soc.comb += [leds[0].eq(soc.ddrctrl.init_done.storage), leds[1].eq(soc.ddrctrl.init_error.storage),
                     leds[2].eq(init_ok)]
        if len(leds) >= 4:
            soc.comb += leds[3].eq(~lsmc_tx)
    return conns


def _write_data_after_command(soc, port, cd):
    """A native port that passes a write beat on only after its command was accepted.

    LiteDRAMAXI2Native counts the write beats it has reserved for issued commands and underflows that
    count if a beat leaves its buffer first; its write path then stalls for good. Directly on the
    controller's crossbar that cannot happen, but the clock-domain crossing and the width converters
    that `get_port` puts in between take write data eagerly. Found in the board simulation
    (boards/sim): the SoC's first DDR write hung."""
    from migen import Signal, Module, ClockDomainsRenamer
    from litedram.common import LiteDRAMNativePort

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


def make_soc_class():
    """The LiteX SoC class shared by the boards (built lazily: LiteX is an optional dependency)."""
    _litex()
    from litex.soc.integration.soc_core import SoCCore

    class LsmcBoardSoC(SoCCore):
        """Board CRG + LiteDRAM + BIOS CPU (DRAM calibration only) + the LSMC SoC black box.
        `board` supplies: name, ident, platform(), crg(platform, sys_clk, lsmc_clk), dram(soc, platform,
        sys_clk), optional nand_pads(platform, targets) and led_pads(platform)."""

        def __init__(self, board, soc_verilog: Path, sys_clk_freq: float, lsmc_clk_freq: float):
            itf = soc_interface(soc_verilog)
            platform = board.platform()
            self.crg = board.crg(platform, sys_clk_freq, lsmc_clk_freq)
            # BIOS CPU: smallest VexRiscv; ROM holds the LiteX BIOS (liblitedram calibration + memtest).
            SoCCore.__init__(self, platform, sys_clk_freq, ident=f"LSMC on {board.ident}",
                             cpu_type="vexriscv", cpu_variant="minimal",
                             integrated_rom_size=0x10000, integrated_sram_size=0x2000,
                             with_uart=False)
            board.dram(self, platform, sys_clk_freq)
            nand_pads = board.nand_pads(platform, itf.nand_targets) if itf.nand else None
            leds = board.led_pads(platform)
            self.lsmc_itf = itf
            add_lsmc_soc(self, itf, soc_verilog, nand_pads=nand_pads, leds=leds)
            getattr(board, "uart", connect_serial_uart)(self, platform, lsmc_clk_freq)
            self.add_constant("LSMC_CLK_FREQ", int(lsmc_clk_freq))

    return LsmcBoardSoC


def connect_serial_uart(soc, platform, lsmc_clk_freq):
    """One USB-UART (`serial` tx/rx pins) for both: the BIOS (calibration log) until the SoC is
    released, then the SoC. The BIOS UART is created on a private pad record behind the mux."""
    from migen import Record, Mux
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
    ap.add_argument("--sys-clk-freq", type=float, default=board.sys_clk_freq,
                    help=f"LiteDRAM/BIOS clock (default {board.sys_clk_freq / 1e6:g} MHz)")
    ap.add_argument("--lsmc-clk-freq", type=float, default=100e6, help="SoC clock (default 100 MHz, as in the paper)")
    ap.add_argument("--no-compile-software", action="store_true",
                    help="skip compiling the LiteX BIOS (sources only; the BIOS ROM is then empty)")
    args = ap.parse_args(argv)
    try:
        out = build_target(board, args.output_dir, soc_verilog=args.soc_verilog, firmware=args.firmware,
                           sys_clk_freq=args.sys_clk_freq, lsmc_clk_freq=args.lsmc_clk_freq,
                           run=args.build, compile_software=not args.no_compile_software)
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


def build_target(board, output_dir: Path, soc_verilog: Path | None = None, firmware: Path | None = None,
                 sys_clk_freq: float | None = None, lsmc_clk_freq: float = 100e6, run: bool = False,
                 compile_software: bool = True) -> Path:
    """Generate (run=False) or build (run=True, needs Vivado) one board. Returns the output folder."""
    _litex()
    from litex.soc.integration.builder import Builder
    output_dir = Path(output_dir)
    gw = output_dir / "gateware"
    gw.mkdir(parents=True, exist_ok=True)
    src = Path(soc_verilog) if soc_verilog else generate_soc_verilog()
    soc_interface(src)  # fail early, with the port list, before LiteX starts
    # A private copy, so the build folder is self-contained and the RAM image can be attached to it.
    local = gw / f"{SOC_TOP}.v"
    shutil.copyfile(src, local)
    # LiteX's BIOS CPU is a module `VexRiscv` too: give every submodule of the SoC a private prefix.
    prefix_modules(local, "Lsmc_")
    for extra in src.parent.glob(f"{SOC_TOP}.v_*.bin"):  # memory init files SpinalHDL writes next to it
        shutil.copyfile(extra, gw / extra.name)
    if firmware is not None:
        attach_firmware(local, elf_to_ram_words(firmware))
    if run and getattr(board, "toolchain", "vivado") == "vivado" and shutil.which("vivado") is None:
        raise BoardError("--build needs Vivado (vivado not on PATH); without --build the sources are generated")
    cls = make_soc_class()
    soc = cls(board, local, sys_clk_freq or board.sys_clk_freq, lsmc_clk_freq)
    builder = Builder(soc, output_dir=str(output_dir), compile_software=compile_software,
                      csr_csv=str(output_dir / "csr.csv"))
    # Board-specific toolchain arguments (the simulation board passes its Verilator settings).
    kwargs = board.build_kwargs(run, lsmc_clk_freq) if hasattr(board, "build_kwargs") else {"run": run}
    builder.build(build_name=board.name, **kwargs)
    return output_dir


# ------------------------------------------------------------------------- module name clashes
def prefix_modules(verilog: Path, prefix: str, keep: str = SOC_TOP) -> int:
    """Rename every module defined in `verilog` but `keep` to prefix+name, definitions and
    instantiations alike (SpinalHDL style: `module Name (` / `  Name inst (` / `  Name #(...) inst (`, with
    optional `(* attributes *)` before an instance),
    so the SoC's `VexRiscv`, `StreamFifo`, ... cannot clash with LiteX's modules. Returns the count."""
    verilog = Path(verilog)
    text = verilog.read_text()
    names = set(re.findall(r"^\s*module\s+([A-Za-z_]\w*)", text, re.M)) - {keep}
    if not names:
        return 0
    if any(n.startswith(prefix) for n in names):
        raise BoardError(f"{verilog}: modules already carry the prefix {prefix}")
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    text = re.sub(rf"^(\s*module\s+)({alt})\b", lambda m: m.group(1) + prefix + m.group(2), text, flags=re.M)
    text, n_inst = re.subn(rf"^(\s*(?:\(\*[^*]*\*\)\s*)*)({alt})(\s+(?:#\s*\(|[A-Za-z_]\w*\s*\())",
                           lambda m: m.group(1) + prefix + m.group(2) + m.group(3), text, flags=re.M)
    if n_inst < 1:
        raise BoardError(f"{verilog}: no instantiation of its {len(names)} submodules found")
    verilog.write_text(text)
    return len(names)


# ------------------------------------------------------------------------- firmware into the RAM
def attach_firmware(soc_v: Path, words: list[int]) -> None:
    """Preload the SoC's on-chip RAM from `words` by adding `$readmemh` initial blocks for the RAM arrays
    SpinalHDL generated for `Axi4SharedOnChipRam` (Vivado infers initialised BRAMs from them).
    The arrays are found by their depth (RAM words) in the module that holds them."""
    soc_v = Path(soc_v)
    text = soc_v.read_text()
    depth = len(words)
    # SpinalHDL emits a byte-masked RAM either as one 32-bit array or as four 8-bit symbol arrays.
    decl = re.compile(rf"^\s*reg\s+\[(\d+):0\]\s+(\w+)\s*\[0:{depth - 1}\]\s*;", re.M)
    arrays = [(m.group(2), int(m.group(1)) + 1, m.end()) for m in decl.finditer(text)]
    if not arrays:
        raise BoardError(f"{soc_v}: no {depth}-word RAM array found for the firmware image")
    widths = sorted(w for _, w, _ in arrays)
    if widths not in ([32], [8, 8, 8, 8]):
        raise BoardError(f"{soc_v}: unexpected on-chip RAM arrays {[(n, w) for n, w, _ in arrays]}")
    if re.search(r"\$readmem[hb]\s*\(\s*\"[^\"]*\"\s*,\s*(" + "|".join(n for n, _, _ in arrays) + r")\b", text):
        raise BoardError(f"{soc_v}: the on-chip RAM already has an init file (generated with one?)")
    inserts = []
    for name, width, end in arrays:
        if width == 32:
            lines = [f"{w:08x}" for w in words]
        else:
            lane = int(re.search(r"(\d+)$", name).group(1)) if re.search(r"(\d+)$", name) else None
            if lane is None or lane > 3:
                raise BoardError(f"{soc_v}: cannot tell the byte lane of RAM array {name}")
            lines = [f"{(w >> (8 * lane)) & 0xFF:02x}" for w in words]
        fname = f"{SOC_TOP}_{name}.hex"
        (soc_v.parent / fname).write_text("\n".join(lines) + "\n")
        inserts.append((end, f"\n  initial begin\n    $readmemh(\"{fname}\", {name});\n  end\n"))
    for end, ins in sorted(inserts, reverse=True):
        text = text[:end] + ins + text[end:]
    soc_v.write_text(text)


# ------------------------------------------------------------------------------ test/bring-up aid
def contract_stub_verilog(path: Path, nand_targets: int = 0, dma_width: int = 256, extra_ports=()) -> Path:
    """Write an empty `LsmcSoc` with the contract's ports (docs/architecture.md: UART, 32-bit CPU DDR
    AXI4, 256-bit DMA DDR AXI4, optional NAND pins), outputs tied to 0. It lets the board wiring be
    generated and checked without the real SoC; never a bitstream to use."""
    ports = [("output", "io_uart_txd", 1), ("input", "io_uart_rxd", 1)]

    def axi(p, dw, aw=32, idw=4):
        for ch in ("aw", "ar"):
            ports.extend([("output", f"{p}_{ch}_valid", 1), ("input", f"{p}_{ch}_ready", 1),
                          ("output", f"{p}_{ch}_payload_addr", aw), ("output", f"{p}_{ch}_payload_id", idw),
                          ("output", f"{p}_{ch}_payload_len", 8), ("output", f"{p}_{ch}_payload_size", 3),
                          ("output", f"{p}_{ch}_payload_burst", 2)])
        ports.extend([("output", f"{p}_w_valid", 1), ("input", f"{p}_w_ready", 1),
                      ("output", f"{p}_w_payload_data", dw), ("output", f"{p}_w_payload_strb", dw // 8),
                      ("output", f"{p}_w_payload_last", 1),
                      ("input", f"{p}_b_valid", 1), ("output", f"{p}_b_ready", 1),
                      ("input", f"{p}_b_payload_id", idw), ("input", f"{p}_b_payload_resp", 2),
                      ("input", f"{p}_r_valid", 1), ("output", f"{p}_r_ready", 1),
                      ("input", f"{p}_r_payload_data", dw), ("input", f"{p}_r_payload_id", idw),
                      ("input", f"{p}_r_payload_resp", 2), ("input", f"{p}_r_payload_last", 1)])

    axi("io_ddr", 32)
    axi("io_ddrDma", dma_width)
    if nand_targets:
        ports.extend([("output", "io_nand_dq_o", 8), ("output", "io_nand_dq_oe", 1), ("input", "io_nand_dq_i", 8)]
                     + [("output", f"io_nand_{s}", 1) for s in ("cle", "ale", "we_n", "re_n", "wp_n")]
                     + [("output", "io_nand_ce_n", nand_targets), ("input", "io_nand_rb_n", nand_targets)])
    ports.extend(extra_ports)
    ports.extend([("input", "clk", 1), ("input", "reset", 1)])
    decl = ",\n".join(f"  {d} wire {f'[{w - 1}:0] ' if w > 1 else ''}{n}" for d, n, w in ports)
    body = "".join(f"  assign {n} = {w}'d0;\n" for d, n, w in ports if d == "output")
    Path(path).write_text(f"// contract stub of the LSMC SoC ports (scripts/lsmc/boards.py)\n"
                          f"module {SOC_TOP} (\n{decl}\n);\n{body}endmodule\n")
    return Path(path)


def yosys_check_top(gateware: Path, top: str) -> str:
    """Elaborate the generated top with yosys (`hierarchy -check`, Xilinx cells as black boxes): fails on
    a missing module or port; returns the log so callers can look for port-width warnings."""
    gateware = Path(gateware)
    tcl = (gateware / f"{top}.tcl").read_text()
    srcs = re.findall(r"^read_verilog \{(.+?)\}", tcl, re.M)
    if not srcs:
        raise BoardError(f"{gateware}/{top}.tcl reads no Verilog")
    script = ("read_verilog -lib +/xilinx/cells_sim.v +/xilinx/cells_xtra.v; "
              + " ".join(f"read_verilog {s};" for s in srcs) + f" hierarchy -check -top {top}")
    res = subprocess.run(["yosys", "-p", script], cwd=gateware, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise BoardError(f"yosys could not elaborate {top}:\n{(res.stdout + res.stderr)[-3000:]}")
    return res.stdout
