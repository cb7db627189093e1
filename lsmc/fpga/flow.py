"""The flows: the compaction IP, the NAND controller, the NAND DMA path, the table engine's merge stage and the
whole table engine alone (out of context), and the whole ECPIX-5 board design through LiteX's trellis script;
each returns the PnrResult of its nextpnr run."""
from __future__ import annotations

import functools
import hashlib
import re
import shutil
from pathlib import Path

from lsmc.fpga.timing import PnrResult, overfull, parse_report
from lsmc.fpga.tools import (
    DEFAULT_NEXTPNR_ARGS,
    DEVICE,
    FPGA_BUILD,
    IP_TARGET_MHZ,
    IP_WIDTH,
    NAND_TARGET_MHZ,
    NEXTPNR_DEVICE,
    SOC_TARGET_MHZ,
    TABLE_ENGINE_MERGE,
    TABLE_ENGINE_PRESET,
    TABLE_ENGINE_TARGET_MHZ,
    FpgaError,
    nextpnr_options,
    run_step,
)
from lsmc.paths import BUILD


# ------------------------------------------------------------------------------ compaction IP alone
def ip_verilog(width: int = IP_WIDTH) -> Path:
    from lsmc.sim import ipsim
    return ipsim.generate(width) / "CompactionIp.v"


def ip_flow(outdir: Path = FPGA_BUILD / "compaction_ip", verilog: Path | None = None, top: str = "CompactionIp",
            target_mhz: float = IP_TARGET_MHZ, timeout: float | None = 3 * 3600, extra_pnr=(),
            pnr_options: tuple = ("--seed", "1")) -> PnrResult:
    """Synthesise and place-and-route `top` (default: the 128-bit compaction IP) out of context for the
    ECPIX-5's ECP5 (all ports stay internal nets), constrained to `target_mhz`. `extra_pnr`: the design's
    own nextpnr options (nand's router); `pnr_options`: the user's (`nextpnr_options`: seed and more)."""
    outdir = Path(outdir)
    times = {}
    synth_ooc(outdir, Path(verilog) if verilog else ip_verilog(), top, timeout, times)
    try:
        times["pnr"] = run_step(["nextpnr-ecp5", *NEXTPNR_DEVICE, "--out-of-context", "--json", f"{top}.json",
                                 "--freq", f"{target_mhz:g}", "--timing-allow-fail",
                                 "--report", "report.json", "-l", "pnr.log", *extra_pnr, *pnr_options],
                                outdir, outdir / "nextpnr.out", f"nextpnr-ecp5 of {top}", timeout)
    except FpgaError:
        over = overfull((outdir / "nextpnr.out").read_text(errors="replace"))
        if over:  # one line instead of the log's tail: the design is larger than the device
            raise FpgaError(f"{top} does not fit the {DEVICE}: " + ", ".join(over)
                            + f" (log: {outdir / 'nextpnr.out'})") from None
        raise
    res = parse_report(outdir / "report.json", outdir / "pnr.log", design=top)
    res.seconds = times
    res.pnr_options = tuple(pnr_options)
    return res


# SpinalHDL heads its Verilog with the generator's and the project's git hashes: comments, so they never change
# the netlist, but the project's changes with every commit and would force a re-synthesis (53 min for the table
# engine) of an unchanged design.
_HASH_LINE = re.compile(rb"^// *(?:Generator|Git hash)\b[^\n]*\n", re.M)


def synthesis_text(verilog: bytes) -> bytes:
    """The Verilog as synthesis sees it, for the synthesis cache's key: without the generator's hash lines."""
    return _HASH_LINE.sub(b"", verilog)


def synth_ooc(outdir: Path, src: Path, top: str, timeout: float | None, times: dict | None = None) -> Path:
    """yosys' ECP5 netlist of `top` in `src`, in `outdir/<top>.json`; kept when the Verilog and the command
    are those of the last synthesis that ended (a re-run for placement or routing only skips minutes of
    yosys; the stamp is written after yosys). `times` gets the step's wall time when it ran."""
    outdir.mkdir(parents=True, exist_ok=True)
    if not src.is_file():
        raise FpgaError(f"Verilog not found: {src}")
    local = outdir / src.name
    synth = f"read_verilog {local.name}; synth_ecp5 -top {top} -json {top}.json"
    stamp = outdir / "synth.stamp"
    want = hashlib.sha256(synthesis_text(src.read_bytes()) + synth.encode()).hexdigest()
    if not ((outdir / f"{top}.json").is_file() and stamp.is_file() and stamp.read_text() == want):
        stamp.unlink(missing_ok=True)
        shutil.copyfile(src, local)
        secs = run_step(["yosys", "-q", "-l", "synth.log", "-p", synth], outdir, outdir / "yosys.out",
                        f"yosys synth_ecp5 of {top}", timeout)
        if times is not None:
            times["synth"] = secs
        stamp.write_text(want)
    return outdir / f"{top}.json"


def nand_verilog() -> Path:
    from lsmc.sim import nandsim
    return nandsim.generate()


def nand_flow(outdir: Path = FPGA_BUILD / "nand", verilog: Path | None = None, target_mhz: float = NAND_TARGET_MHZ,
              timeout: float | None = 3 * 3600, pnr_options: tuple = ("--seed", "1")) -> PnrResult:
    """The NAND controller alone, out of context, the same flow as the IP's."""
    # router2: router1 had not converged after 15 min on this design (56 k overused wires left, out of
    # context the BCH decoder's XOR trees sit in a small, congested region).
    return ip_flow(outdir, verilog=verilog or nand_verilog(), top="NandController", target_mhz=target_mhz,
                   timeout=timeout, extra_pnr=("--router", "router2"), pnr_options=pnr_options)


# ------------------------------------------------------------------------------ the NAND DMA path alone
# The BCH decoder's body for the nand_dma row: every output from a register, fed from its inputs so
# nothing is optimised away (the decoder's own timing is measured alone: docs/boards.md).
BCH_STUB = """  // timing stub (fpga.BCH_STUB): every output from a register
  reg [103:0] s; reg [12:0] p; reg d, u, i; reg [3:0] c;
  always @(posedge {clk}) begin
    if (io_start_valid) s <= io_start_payload;
    p <= s[12:0] ^ s[25:13] ^ s[38:26] ^ s[51:39] ^ s[64:52] ^ s[77:65] ^ s[90:78] ^ s[103:91];
    io_fix_valid <= ^s[7:0] & ~io_fix_ready; d <= ^s[15:8]; u <= ^s[23:16]; i <= ~io_start_valid & ^s[31:24];
    c <= s[35:32] ^ s[39:36];
  end
  assign io_fix_payload = p; assign io_done = d; assign io_uncorrectable = u; assign io_count = c;
  assign io_idle = i;
"""
# The decoder ports the stub drives or reads, with their declarations in the generated Verilog.
BCH_STUB_PORTS = {"io_start_valid": "input  wire", "io_start_payload": "input  wire [103:0]",
                  "io_fix_valid": "output reg", "io_fix_ready": "input  wire", "io_fix_payload": "output wire [12:0]",
                  "io_done": "output wire", "io_uncorrectable": "output wire", "io_count": "output wire [3:0]",
                  "io_idle": "output wire"}
_BCH_MODULE = re.compile(r"^module BchDecoder \((.*?)\);\n.*?^endmodule\n", re.S | re.M)


def stub_bch(verilog: str) -> str:
    """`verilog` with the body of its one BchDecoder module replaced by BCH_STUB (same ports)."""
    mods = list(_BCH_MODULE.finditer(verilog))
    if len(mods) != 1:
        raise FpgaError(f"expected one BchDecoder module in the Verilog, found {len(mods)}")
    ports = {}
    for decl in mods[0].group(1).split(","):
        words = decl.split()
        if words:
            ports[words[-1]] = " ".join(words[:-1])
    want = {n: " ".join(d.split()) for n, d in BCH_STUB_PORTS.items()}
    changed = {n: ports.get(n) for n, d in want.items() if ports.get(n) != d}
    clocks = [n for n, d in ports.items() if d.startswith("input") and re.search(r"clk", n)]
    if changed or len(clocks) != 1 or len(ports) != len(want) + 1 + sum("reset" in n.lower() for n in ports):
        raise FpgaError(f"BchDecoder's ports changed, fpga.BCH_STUB no longer fits them: {ports}")
    m = mods[0]
    head = verilog[m.start():m.end(1) + 3]
    body = head + BCH_STUB.format(clk=clocks[0]) + "endmodule\n"
    return verilog[:m.start()] + body + verilog[m.end():]


def nand_dma_verilog(stage: bool = True, port_slice: bool = False, arbiter_slice: bool = True) -> Path:
    """soc.NandDmaTiming's Verilog with the BCH decoder stubbed (stub_bch), generated if out of date;
    `stage` False: without the NAND link stage; `port_slice` True: with the DMA port slices (LsmcSoc.dmaPortSlice,
    not in the board builds); `arbiter_slice` False: without the slice between DMA port 0's write decoders and
    its write arbiter (LsmcSoc.arbiterSlice, in the board builds)."""
    from lsmc import build
    gen = BUILD / "gen" / ("nand_dma_timing" + ("" if stage else "_nostage") + ("" if port_slice else "_noslice")
                           + ("" if arbiter_slice else "_noarbslice"))
    args = ["--out", str(gen), *([] if stage else ["--no-stage"]), *([] if port_slice else ["--no-slice"]),
            *([] if arbiter_slice else ["--no-arbiter-slice"])]
    build.generate("soc", "soc.NandDmaTiming", gen, args=args)
    src = gen / "NandDmaTiming.v"
    if not src.is_file():
        raise FpgaError(f"soc.NandDmaTiming did not write {src}")
    out = gen / "stub_bch" / "NandDmaTiming.v"
    out.parent.mkdir(exist_ok=True)
    text = stub_bch(src.read_text())
    if not out.is_file() or out.read_text() != text:
        out.write_text(text)
    return out


def nand_dma_flow(outdir: Path = FPGA_BUILD / "nand_dma", stage: bool = True, target_mhz: float = NAND_TARGET_MHZ,
                  timeout: float | None = 3 * 3600, pnr_options: tuple = ("--seed", "1"),
                  port_slice: bool = False, arbiter_slice: bool = True) -> PnrResult:
    """The NAND DMA path alone (nand_dma_verilog), out of context, the IP's flow (router1)."""
    return ip_flow(outdir, verilog=nand_dma_verilog(stage, port_slice, arbiter_slice), top="NandDmaTiming",
                   target_mhz=target_mhz,
                   timeout=timeout, pnr_options=pnr_options)


# ------------------------------------------------------------------------------ table engine's merge stage alone
def table_engine_merge_verilog() -> Path:
    """MergeDrop.v of the table engine's merge and drop stage at the row's W and K (the model's key limit)."""
    from lsmc.build import table_engine_merge
    return table_engine_merge.generate(*TABLE_ENGINE_MERGE) / "MergeDrop.v"


def table_engine_merge_flow(outdir: Path = FPGA_BUILD / "table_engine_merge",
                            target_mhz: float = TABLE_ENGINE_TARGET_MHZ, timeout: float | None = 3 * 3600,
                            pnr_options: tuple = ("--seed", "1")) -> PnrResult:
    """The table engine's merge and drop stage alone (hw/ip/table_engine/doc/merge.md), out of context, the
    IP's flow (router1)."""
    return ip_flow(outdir, verilog=table_engine_merge_verilog(), top="MergeDrop", target_mhz=target_mhz,
                   timeout=timeout, pnr_options=pnr_options)


# ------------------------------------------------------------------------------ the whole table engine alone
# The units a named build can be generated as (table_engine.TableEnginePresets.units) -> their top's name.
TABLE_ENGINE_UNITS = {"engine": "TableEngine", "reader": "TableReader", "writer": "TableWriter"}
# The units `scripts/fpga` routes alone: design name -> unit; each is row `table_engine_<unit>` and builds in
# FPGA_BUILD/table_engine_<unit>.
TABLE_ENGINE_UNIT_DESIGNS = {"te_reader": "reader", "te_writer": "writer"}


def table_engine_verilog(preset: str = TABLE_ENGINE_PRESET, unit: str = "engine") -> Path:
    """The Verilog of the whole table engine's named build `preset` (table_engine.TableEnginePresets: the ECP5-85's
    is two ways with 32 KiB Snappy blocks; the simulation builds' 64 KiB buffers and walker do not fit it), or of
    one of its units alone with the build's parameters (`reader`: one table reader, `writer`: the table writer),
    generated if out of date, with its manifest.json beside it."""
    from lsmc import build
    from lsmc.paths import GEN, ROOT
    if unit not in TABLE_ENGINE_UNITS:
        raise FpgaError(f"no table-engine unit {unit!r} ({', '.join(TABLE_ENGINE_UNITS)})")
    out = GEN / (f"table_engine_{preset}" if unit == "engine" else f"table_engine_{preset}_{unit}")
    build.generate("table_engine", "table_engine.GenerateTableEnginePreset", out,
                   ["--preset", preset, *(["--unit", unit] if unit != "engine" else []),
                    "--out", str(out.relative_to(ROOT))])
    src = out / f"{TABLE_ENGINE_UNITS[unit]}.v"
    if not src.is_file():
        raise FpgaError(f"table_engine.GenerateTableEnginePreset did not write {src}")
    return src


def table_engine_flow(outdir: Path = FPGA_BUILD / "table_engine", target_mhz: float = TABLE_ENGINE_TARGET_MHZ,
                      timeout: float | None = 6 * 3600, pnr_options: tuple = ("--seed", "1")) -> PnrResult:
    """The whole table engine (readers, merge and drop with the walker, writer, write port) alone, out of
    context, in its ECP5 build (table_engine_verilog), the IP's flow (router1)."""
    return ip_flow(outdir, verilog=table_engine_verilog(), top="TableEngine", target_mhz=target_mhz,
                   timeout=timeout, pnr_options=pnr_options)


def table_engine_unit_flow(unit: str, outdir: Path | None = None, target_mhz: float = TABLE_ENGINE_TARGET_MHZ,
                           timeout: float | None = 6 * 3600, pnr_options: tuple = ("--seed", "1")) -> PnrResult:
    """One unit of the table engine's ECP5 build alone (`reader` or `writer`: table_engine_verilog), out of
    context at the engine's goal, the IP's flow (router1): where the whole engine does not fit the device, each
    unit's own Fmax and size."""
    return ip_flow(outdir or FPGA_BUILD / f"table_engine_{unit}", verilog=table_engine_verilog(unit=unit),
                   top=TABLE_ENGINE_UNITS[unit], target_mhz=target_mhz, timeout=timeout, pnr_options=pnr_options)


# ------------------------------------------------------------------------------ the board design
def soc_flow(outdir: Path = BUILD / "boards" / "ecpix5", firmware: Path | None = None,
             soc_verilog: Path | None = None, lsmc_mhz: float = SOC_TARGET_MHZ, timeout: float | None = 6 * 3600,
             compile_software: bool = True, pnr_options: tuple | None = None) -> PnrResult:
    """Generate the ECPIX-5 design (boards/ecpix5/target.py; the firmware ELF baked into the on-chip RAM,
    default the project's lsmc.elf) and run LiteX's trellis script (yosys, nextpnr-ecp5, ecppack)."""
    gateware = soc_sources(outdir, firmware, soc_verilog, lsmc_mhz, compile_software)
    return run_trellis(gateware, ecpix5_board().name, timeout=timeout, pnr_options=pnr_options)


def soc_sources(outdir: Path = BUILD / "boards" / "ecpix5", firmware: Path | None = None,
                soc_verilog: Path | None = None, lsmc_mhz: float = SOC_TARGET_MHZ,
                compile_software: bool = True) -> Path:
    """The ECPIX-5 design's LiteX sources and build script (the firmware ELF baked into the on-chip RAM,
    default the project's lsmc.elf linked for it); returns the gateware folder."""
    from lsmc.boards import litex_soc
    board = ecpix5_board()
    outdir = Path(outdir)
    if firmware is None:
        from lsmc.build.firmware import build_firmware
        firmware = build_firmware(ram_kib=board.ram_kib)  # linked for the board's on-chip RAM
    litex_soc.build_target(board, outdir, soc_verilog=soc_verilog, firmware=firmware,
                           lsmc_clk_freq=lsmc_mhz * 1e6, run=False, compile_software=compile_software)
    return outdir / "gateware"


def trellis_script(text: str, pnr_options: tuple, script: Path | str = "build script") -> str:
    """LiteX's trellis build script `text` with nextpnr's machine-readable report (fmax per clock,
    utilisation) asked for and `pnr_options` in place of LiteX's --seed."""
    import shlex
    lines = text.splitlines(keepends=True)
    calls = [i for i, line in enumerate(lines) if line.startswith("nextpnr-ecp5 ")]
    if len(calls) != 1:
        raise FpgaError(f"{script}: {len(calls)} nextpnr-ecp5 calls found, expected one")
    words = shlex.split(lines[calls[0]])
    for opt in ("--report", "--seed"):  # LiteX's own seed; no report unless asked
        while opt in words:
            i = words.index(opt)
            del words[i:i + 2]
    lines[calls[0]] = shlex.join([*words, "--report", "report.json", *pnr_options]) + "\n"
    return "".join(lines)


def run_trellis(gateware: Path, name: str, timeout: float | None = None,
                pnr_options: tuple | None = None) -> PnrResult:
    """Run LiteX's build_<name>.sh in `gateware` with the yowasp tools, asking nextpnr for its report;
    `pnr_options` (nextpnr_options: seed first; None: the board design's DEFAULT_NEXTPNR_ARGS at seed 1)
    replace LiteX's --seed on its nextpnr line."""
    if pnr_options is None:
        pnr_options = nextpnr_options(DEFAULT_NEXTPNR_ARGS["soc"])
    gateware = Path(gateware)
    if Path(gateware).resolve().is_relative_to("/tmp"):
        # yowasp gives its WebAssembly tools a private /tmp, so LiteX's absolute source paths there break.
        raise FpgaError(f"{gateware}: the yowasp tools cannot read build folders under /tmp; build elsewhere")
    script = gateware / f"build_{name}.sh"
    if not script.is_file():
        raise FpgaError(f"{script} missing: the LiteX sources were not generated")
    # LiteX's script stays as LiteX wrote it; the flow runs a copy with the report and the options.
    ours = gateware / f"build_{name}_lsmc.sh"
    ours.write_text(trellis_script(script.read_text(), pnr_options, script))
    for old in ("report.json", f"{name}.bit"):
        (gateware / old).unlink(missing_ok=True)
    secs = run_step(["bash", ours.name], gateware, gateware / "flow.log", f"ECP5 flow of {name} ({ours.name})",
                timeout)
    bit = gateware / f"{name}.bit"
    if not bit.is_file():
        raise FpgaError(f"the flow ended without {bit} (log: {gateware / 'flow.log'})")
    res = parse_report(gateware / "report.json", gateware / "flow.log", design=name)
    res.bitstream = bit
    res.seconds = {"flow": secs}
    res.pnr_options = tuple(pnr_options)
    return res


@functools.cache
def board_class(name: str):
    """The board class of boards/<name>/target.py (a script, not a module of the package): the class
    whose `name` is `name`. Loaded once, so every caller (the builds, the resource table, tests that
    change a class) sees the same object."""
    import importlib.util
    import inspect

    from lsmc.paths import ROOT
    path = ROOT / "boards" / name / "target.py"
    if not path.is_file():
        raise FpgaError(f"no board {name!r} ({path} not found)")
    spec = importlib.util.spec_from_file_location(f"lsmc_board_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    found = [c for _n, c in inspect.getmembers(mod, inspect.isclass) if getattr(c, "name", None) == name]
    if len(found) != 1:
        raise FpgaError(f"{path}: {len(found)} board classes named {name!r}")
    return found[0]


def ecpix5_board():
    """The ECPIX5 board class of boards/ecpix5/target.py."""
    return board_class("ecpix5")
