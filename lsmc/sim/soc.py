"""Build and run the whole-SoC Verilator simulation (hw/soc + sim/soc).

    from lsmc import soc
    exe = soc.build_soc()                       # generate LsmcSoc.v (Mill) + verilate, both cached
    res = soc.run_soc(elf, arg=3, ddr_latency=20, loads={0x40100000: "in.bin"})
    res.returncode, res.uart, res.cycles, res.mcycles_per_s

`build_selftest()` compiles the small firmware of sim/soc/selftest/ that the tests use."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lsmc import build

ROOT = build.ROOT
GEN_DIR = build.GEN / "soc"
SIM_SRC = ROOT / "sim" / "soc"
SELFTEST_SRC = SIM_SRC / "selftest"
NAND_MODEL = ROOT / "nand" / "model"
RISCV_CC = "riscv64-unknown-elf-gcc"
TIMEOUT_EXIT = 124


def generate_soc() -> Path:
    """build/gen/soc/LsmcSoc.v (+ C headers), regenerated only when the hardware sources changed."""
    out = build.generate("soc", "soc.Generate", GEN_DIR, args=("--out", str(GEN_DIR)))
    verilog = out / "LsmcSoc.v"
    if not verilog.exists():
        raise build.BuildError(f"soc.Generate did not write {verilog}")
    # The generator copies hw/soc/include/*.h too, but a header-only change does not rerun it.
    for h in (ROOT / "hw" / "soc" / "include").glob("*.h"):
        if not (out / h.name).exists() or (out / h.name).read_bytes() != h.read_bytes():
            shutil.copyfile(h, out / h.name)
    return verilog


def build_soc(trace: bool = False) -> Path:
    """Verilated simulator of the SoC; `trace=True` builds a separate binary with FST waves."""
    verilog = generate_soc()
    outdir = build.BUILD / "sim" / ("soc-trace" if trace else "soc")
    flags = ["--trace-fst", "--trace-structs"] if trace else []
    # RAM arrays are 8-bit lanes; the DDR port data is wide: no lint noise, same flags as the IP sim.
    # The NAND model's header is not a compile input Verilator accepts: its hash rides in a define so a
    # header change still rebuilds.
    header = build._hash_paths([NAND_MODEL / "onfi_model.h"])
    return build.verilate("LsmcSoc", [verilog, SIM_SRC / "soc.vlt"],
                          [SIM_SRC / "harness.cpp", NAND_MODEL / "onfi_model.cpp"],
                          outdir, flags=flags + ["-CFLAGS", f"-I{NAND_MODEL} -DONFI_MODEL_H={header}"])


def build_selftest() -> Path:
    """Compile sim/soc/selftest (crt0 + main) into build/sim/soc-selftest/selftest.elf."""
    if shutil.which(RISCV_CC) is None:
        raise build.BuildError(f"{RISCV_CC} not found (apt-get install gcc-riscv64-unknown-elf)")
    generate_soc()  # provides lsmc_soc.h next to the Verilog
    outdir = build.BUILD / "sim" / "soc-selftest"
    outdir.mkdir(parents=True, exist_ok=True)
    elf = outdir / "selftest.elf"
    srcs = [SELFTEST_SRC / "crt0.S", SELFTEST_SRC / "main.c"]
    digest = build._hash_paths(srcs + [SELFTEST_SRC / "link.ld", GEN_DIR / "lsmc_soc.h"])
    stamp = outdir / ".stamp"
    if elf.exists() and build._up_to_date(stamp, digest):
        return elf
    build.run([RISCV_CC, "-march=rv32im_zicsr", "-mabi=ilp32", "-O2", "-g", "-ffreestanding", "-nostdlib",
               "-Wall", "-Werror", "-I", GEN_DIR, "-T", SELFTEST_SRC / "link.ld", "-o", elf, *srcs, "-lgcc"])
    stamp.write_text(digest)
    return elf


@dataclass
class SocRun:
    returncode: int
    uart: str          # what the firmware printed on the UART (stdout of the simulator)
    stderr: str        # harness messages, incl. the speed line
    cycles: int | None
    seconds: float | None
    mcycles_per_s: float | None

    @property
    def timed_out(self) -> bool:
        return self.returncode == TIMEOUT_EXIT


_SPEED = re.compile(r"sim: (\d+) cycles in ([\d.]+) s = ([\d.]+) Mcycles/s")


def run_soc(elf, arg: int = 0, ddr_latency: int | None = None, max_cycles: int | None = None,
            loads: dict | None = None, dumps: list | None = None, uart_in: str | None = None,
            uart_prompt: str | None = None, log=None, wave=None, extra=(), timeout: float = 600,
            exe: Path | None = None) -> SocRun:
    """Run firmware `elf` on the simulated SoC. `loads` maps DDR/RAM addresses to files put in memory
    before reset; `dumps` is a list of (addr, length, path) saved after the run."""
    exe = exe or build_soc(trace=wave is not None)
    cmd = [str(exe), str(elf), "--arg", str(arg)]
    if ddr_latency is not None:
        cmd += ["--ddr-latency", str(ddr_latency)]
    if max_cycles is not None:
        cmd += ["--max-cycles", str(max_cycles)]
    for addr, path in (loads or {}).items():
        cmd += ["--load", f"{addr:#x}={path}"]
    for addr, length, path in (dumps or []):
        cmd += ["--dump", f"{addr:#x}:{length}={path}"]
    if uart_in is not None:
        cmd += ["--uart-in", uart_in]
    if uart_prompt is not None:
        cmd += ["--uart-prompt", uart_prompt]
    if log is not None:
        cmd += ["--log", str(log)]
    if wave is not None:
        cmd += ["--wave", str(wave)]
    cmd += [str(e) for e in extra]
    res = subprocess.run(cmd, capture_output=True, timeout=timeout)
    out = res.stdout.decode("latin-1")
    err = res.stderr.decode("latin-1")
    m = _SPEED.search(err)
    return SocRun(res.returncode, out, err, int(m.group(1)) if m else None,
                  float(m.group(2)) if m else None, float(m.group(3)) if m else None)
