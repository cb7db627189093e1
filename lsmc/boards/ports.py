"""The LSMC SoC's port contract as the boards see it: the memory-map constants the board needs, the
Verilog port list of `LsmcSoc` parsed into its AXI/UART/NAND groups, and a contract stub of it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lsmc.build import regmap
from lsmc.paths import BUILD

BOARDS_BUILD = BUILD / "boards"

SOC_TOP = "LsmcSoc"
# The SoC memory map, generated from hw/soc/map/SocMap.scala (lsmc_soc.json).
DDR_BASE, _DDR_SIZE = regmap.memmap().regions["DDR"]
DDR_WINDOW_BITS = _DDR_SIZE.bit_length() - 1  # the DDR window of the SoC: 256 MiB -> 28 address bits
ONCHIP_RAM_BASE, ONCHIP_RAM_SIZE = regmap.memmap().regions["RAM"]


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
# The NV-DDR PHY's ports (NandPins in hw/ip/nand/rtl/NandTypes.scala; a test checks this list against it):
# (name, direction, width, or None for the CE# width).
NAND_DDR_PORTS = [("ddr", "output", 1), ("ddr_h2_dq_o", "output", 8), ("ddr_h2_dq_oe", "output", 1),
                  ("ddr_h2_cle", "output", 1), ("ddr_h2_ale", "output", 1), ("ddr_h2_we_n", "output", 1),
                  ("ddr_h2_re_n", "output", 1), ("ddr_h2_ce_n", "output", None), ("ddr_dqs_o", "output", 2),
                  ("ddr_dqs_oe", "output", 2), ("ddr_tap", "output", 9), ("ddr_cap_valid", "input", 1),
                  ("ddr_cap_q1", "input", 8), ("ddr_cap_q2", "input", 8)]


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
    # The NV-DDR PHY's pins ({nand}_ddr*: DDR-flop halves, DQS, delay tap, captured pairs). A board pin
    # set with DQS gets them through the DDR pad wrapper (lsmc/boards/nand_pads.py); on an SDR-only pin set
    # inputs are tied low, outputs left open, and the firmware must not set DDR_CFG.DDR_EN.
    nand_ddr: list = field(default_factory=list)

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
    nand_prefixes = sorted({p.name[: -len("_dq_o")] for p in ports
                            if p.name.endswith("_dq_o") and "_ddr_" not in p.name})
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
    nand_ddr = [p for p in ports if nand_prefixes and p.name.startswith(f"{nand_prefixes[0]}_ddr")]
    itf = SocInterface(Path(verilog), ports, need("clk", "input"), need("reset", "input"),
                       need("io_uart_txd", "output"), need("io_uart_rxd", "input"), ddr, dma, nand, nand_ddr)
    used = {itf.clk.name, itf.reset.name, itf.uart_txd.name, itf.uart_rxd.name}
    used |= {p.name for p in ddr.ports.values()} | {p.name for p in dma.ports.values()}
    used |= {p.name for p in (nand or {}).values()} | {p.name for p in nand_ddr}
    unknown = [p for p in ports if p.name not in used]
    if unknown:
        raise BoardError("SoC ports the board wiring does not know (update lsmc/boards/ports.py): "
                         + ", ".join(f"{p.direction} {p.name}[{p.width}]" for p in unknown))
    return itf


# ------------------------------------------------------------------------------ test/bring-up aid
def contract_stub_verilog(path: Path, nand_targets: int = 0, dma_width: int = 256, extra_ports=(),
                          nvddr: bool = False, nand_pad_input_cycles: int | None = None) -> Path:
    """Write an empty `LsmcSoc` with the contract's ports (docs/architecture.md: UART, 32-bit CPU DDR
    AXI4, 256-bit DMA DDR AXI4, optional NAND pins), outputs tied to 0. It lets the board wiring be
    generated and checked without the real SoC; never a bitstream to use. `nand_pad_input_cycles`: also
    a nand_regs.json next to it whose SAMPLE.PAD_CYCLES says so (what soc.Generate writes)."""
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
        if nvddr:
            ports.extend((d, f"io_nand_{s}", w or nand_targets) for s, d, w in NAND_DDR_PORTS)
    ports.extend(extra_ports)
    ports.extend([("input", "clk", 1), ("input", "reset", 1)])
    decl = ",\n".join(f"  {d} wire {f'[{w - 1}:0] ' if w > 1 else ''}{n}" for d, n, w in ports)
    body = "".join(f"  assign {n} = {w}'d0;\n" for d, n, w in ports if d == "output")
    Path(path).write_text(f"// contract stub of the LSMC SoC ports (lsmc/boards/ports.py)\n"
                          f"module {SOC_TOP} (\n{decl}\n);\n{body}endmodule\n")
    if nand_pad_input_cycles is not None:
        import json
        sample = {"name": "SAMPLE", "fields": [{"name": "PAD_CYCLES", "access": "RO", "reset": nand_pad_input_cycles}]}
        (Path(path).parent / "nand_regs.json").write_text(json.dumps({"block": "NAND", "registers": [sample]}))
    return Path(path)
