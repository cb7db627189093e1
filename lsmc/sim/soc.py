"""Build and run the whole-SoC Verilator simulation (hw/soc + sim/soc).

    from lsmc import soc
    exe = soc.build_soc()                       # generate LsmcSoc.v (Mill) + verilate, both cached
    res = soc.run_soc(elf, arg=firmware.SCEN["ERRTEST"], ddr_latency=20, loads={0x40100000: "in.bin"})
    res.returncode, res.uart, res.cycles, res.mcycles_per_s

`build_selftest()` compiles the small firmware of fw/apps/selftest/ that the tests use."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lsmc import build, progress
from lsmc.build import facts, firmware, presets

ROOT = build.ROOT
SIM_SRC = ROOT / "sim" / "soc"
NAND_MODEL = ROOT / "hw" / "ip" / "nand" / "model"
TIMEOUT_EXIT = 124


# Every SoC simulated here is a preset of hw/soc/rtl/Presets.scala (lsmc.build.presets): the Table III builds
# at both stream widths (one two-way unit), the scaling sweep's M units x K ways at 128 bits, the default
# with the DMA port slices. What callers may ask for follows from that list.
_SIM = [p for p in presets.soc_presets().values() if p.target == "sim"]
WIDTHS = tuple(sorted({p.derived["ip_width"] for p in _SIM}))
UNITS = tuple(sorted({p.derived["units"] for p in _SIM}))
WAYS = tuple(sorted({p.derived["ways"] for p in _SIM}))
MAX_DMA_PORTS = _SIM[0].derived["max_dma_ports"]  # LsmcSocConfig.maxDmaPorts: the harness binds io_ddrDma .. 15
# The scaling builds' DMA (the report's caption states them; docs/scaling.md, "What limits"): 512-bit ports,
# 128-beat write bursts grouped across the units, a DDR port per reader.
_SCALING_DMA = presets.find_soc("sim", 128, 2, 2).config["dma"]
SCALING_DMA_PORT_WIDTH = _SCALING_DMA["portWidth"]
SCALING_DMA_WRITE_BURST = _SCALING_DMA["writeBurst"]
SCALING_DMA_WRITE_GROUP = _SCALING_DMA["writeGroup"]


def preset_for(width: int = 128, units: int = 1, ways: int = 2, dma_port_slice: bool = False) -> presets.SocPreset:
    """The simulator's SoC preset of `width`-bit streams and `units` x `ways` (with the DMA port slices)."""
    if width not in WIDTHS:
        raise build.BuildError(f"SoC IP width {width!r}: one of {', '.join(map(str, WIDTHS))}")
    if units not in UNITS or ways not in WAYS:
        raise build.BuildError(f"SoC units {units!r} / ways {ways!r}: units 1..{UNITS[-1]}, ways one of "
                               f"{', '.join(map(str, WAYS))}")
    return presets.find_soc("sim", width, units, ways, dma_port_slice, arbiter_slice=False)


def scaling_read_ports(units: int, ways: int) -> int:
    """DDR ports per unit of the `units` x `ways` build (its preset's; fewer than K when M x K ports would
    exceed MAX_DMA_PORTS)."""
    return preset_for(128, units, ways).config["dma"]["readPorts"]


def generate_preset(p: presets.SocPreset) -> Path:
    """LsmcSoc.v of preset `p` (+ C headers, manifest.json, lsmc_soc_config.h) in build/gen/<its folder>,
    regenerated only when the hardware sources changed."""
    out = build.generate("soc", "soc.Generate", p.gen_dir, args=("--preset", p.name, "--out", str(p.gen_dir)))
    verilog = out / "LsmcSoc.v"
    for f in (verilog, out / presets.HARNESS_HEADER):
        if not f.exists():
            raise build.BuildError(f"soc.Generate did not write {f}")
    # The generator copies hw/soc/include/*.h too, but a header-only change does not rerun it.
    with build.lock(out / ".lock"):
        for h in (ROOT / "hw" / "soc" / "include").glob("*.h"):
            if not (out / h.name).exists() or (out / h.name).read_bytes() != h.read_bytes():
                shutil.copyfile(h, out / h.name)
    return verilog


def generate_soc(width: int = 128, units: int = 1, ways: int = 2, dma_port_slice: bool = False) -> Path:
    """LsmcSoc.v of the simulator's preset of `width`, `units` x `ways` (preset_for), e.g. build/gen/soc."""
    return generate_preset(preset_for(width, units, ways, dma_port_slice))


def build_soc(trace: bool = False, width: int = 128, units: int = 1, ways: int = 2,
              free_clock: bool = False, dma_port_slice: bool = False, preset: str | None = None) -> Path:
    """Verilated simulator of the SoC; `trace=True` builds a separate binary with FST waves; `width` the
    compaction IP's stream width (WIDTHS); `units`/`ways` the compaction units M and their ways K;
    `free_clock=True` a separate binary whose simulation clock gates are plain wires
    (-DLSMC_NO_CLOCK_GATE, as synthesis sees them; tests/test_sim_clock_gate.py compares the two);
    `dma_port_slice=True` a separate binary with the DMA port slices (soc.Generate
    --dma-port-slice; tests/test_dma_port_slice.py compares it with the default). `preset`: a SoC preset
    by name instead of width/units/ways/dma_port_slice."""
    p = presets.soc(preset) if preset else preset_for(width, units, ways, dma_port_slice)
    if p.target != "sim":
        raise build.BuildError(f"SoC preset {p.name} is a board build (no simulation control): not for the SoC harness")
    verilog = generate_preset(p)
    outdir = build.BUILD / "sim" / (p.variant.replace("soc", "soc-trace", 1) if trace else p.variant)
    if free_clock:
        outdir = outdir.with_name(outdir.name + "-free-clock")
    # The harness needs the define too: without gates there are no input stages to drive a cycle early.
    flags = (["--trace-fst", "--trace-structs"] if trace else []) + \
        (["-DLSMC_NO_CLOCK_GATE", "-CFLAGS", "-DLSMC_NO_CLOCK_GATE"] if free_clock else [])
    # RAM arrays are 8-bit lanes; the DDR port data is wide: no lint noise, same flags as the IP sim.
    # The NAND model's header is not a compile input Verilator accepts: its hash rides in a define so a
    # header change still rebuilds.
    # The harness reads the memory map (lsmc_soc.h) and its ports and channels (lsmc_soc_config.h, from the
    # preset) from the generated headers next to the Verilog.
    common_srcs, common_flags = build.sim_common(NAND_MODEL / "onfi_model.h",
                                                 verilog.parent / "lsmc_soc.h",
                                                 verilog.parent / presets.HARNESS_HEADER, SIM_SRC / "nand_faults.h")
    incs = ["-CFLAGS", f"-I{NAND_MODEL} -I{verilog.parent}"]
    light = quick_wanted() or free_clock or p.dma_port_slice or p.arbiter_slice or bool(p.derived.get("te_units", 0))
    return build.verilate("LsmcSoc", [verilog, SIM_SRC / "soc.vlt"],
                          [SIM_SRC / "harness.cpp", NAND_MODEL / "onfi_model.cpp", *common_srcs],
                          outdir, flags=flags + common_flags + incs,
                          # -O1 for the builds whose runs are short or only check another build: the free-running
                          # and sliced ones, the table-engine ones (their jobs run under a second: 287 against 482 s
                          # of compile CPU for 11 % fewer cycles/s, docs/simulation.md), every one with
                          # LSMC_SOC_QUICK=1; PGO doubles the build, so only the -O3 builds of one or two units
                          # (Table III, run often) take it
                          cflags="-O1" if light else "-O3",
                          train=None if not pgo_wanted() or light or trace or p.derived["units"] * p.derived["ways"] > 2
                          else _train,
                          # the wheel's FST writer needs liblz4 headers Debian's base lacks: waves keep 5.006
                          wheel=not trace)


def _switch(name: str, default: bool, meaning: str) -> bool:
    """An on/off build switch from the environment: 0 or 1, unset or empty `default`; any other value is refused
    (BuildError naming the variable and `meaning`), not read as either."""
    v = os.environ.get(name, "")
    if v not in ("", "0", "1"):
        raise build.BuildError(f"{name}={v!r}: {meaning}")
    return default if v == "" else v == "1"


def quick_wanted() -> bool:
    """Every SoC model at -O1 without profile-guided optimisation when LSMC_SOC_QUICK=1 (scripts/test's default: its
    SoC runs are seconds long, and -O1 compiles the SoC in about 60 % of the CPU for about 11 % fewer cycles/s,
    docs/simulation.md). Unset, empty or 0: each build's own choice."""
    return _switch("LSMC_SOC_QUICK", False, "1 (every SoC model at -O1, no PGO) or 0 (the default)")


def pgo_wanted() -> bool:
    """Profile-guided optimisation for the builds that take it, unless LSMC_PGO=0 (scripts/test's default: its
    runs are short, and the instrumented build, training and LTO rebuild cost more than the speed returns).
    Unset, empty or 1: on."""
    return _switch("LSMC_PGO", True, "0 (no profile-guided optimisation of the SoC builds) or 1 (the default)")


def _train(exe: Path) -> None:
    """Profile-guided optimisation's training run (docs/simulation.md): the self-test's CPU loop, DDR
    through the caches, and a DMA + compaction IP job: every part of the SoC that a run keeps busy."""
    elf = build_selftest()
    scen = facts.scenarios("selftest")
    for args in (["--arg", str(scen["HANG"]), "--max-cycles", "1500000"], ["--arg", str(scen["DDR_RW"])],
                 ["--arg", str(scen["DMA_IP"])]):
        subprocess.run([str(exe), str(elf), "--quiet", *args], capture_output=True, timeout=600, check=False)


def build_selftest() -> Path:
    """Compile the SoC self-test (fw/apps/selftest, with fw/start/crt0.S and the drivers) into
    build/fw/selftest.elf: only that app, so a half-edited other app does not stop the SoC tests."""
    firmware.ensure_headers()
    elf = firmware.BUILD_FW / "selftest.elf"
    digest = firmware._digest(firmware.firmware_sources(), extra=("selftest",))
    stamp = firmware.BUILD_FW / ".stamp-selftest"
    if elf.exists() and stamp.exists() and stamp.read_text() == digest:
        return elf
    with build.lock(firmware.BUILD_FW / ".lock"):  # build_firmware makes in the same folder
        if elf.exists() and stamp.exists() and stamp.read_text() == digest:
            return elf
        gen = " ".join(str(g) for g in firmware.GEN_INCLUDES)
        try:
            build.run(["make", "-C", firmware.FW, f"BUILD={firmware.BUILD_FW}", f"GEN_INC={gen}", "-j2",
                       "--no-print-directory", str(elf)])
        except build.BuildError as e:
            raise firmware.FirmwareError(f"the self-test firmware did not build:\n{e}") from None
        stamp.write_text(digest)
    return elf


@dataclass
class SocRun:
    returncode: int
    uart: str          # what the firmware printed on the UART (stdout of the simulator)
    stderr: str        # harness messages, incl. the speed lines
    cycles: int | None
    seconds: float | None          # wall clock
    mcycles_per_s: float | None    # per wall-clock second
    cpu_seconds: float | None = None           # the process's CPU time (what the model costs)
    cpu_mcycles_per_s: float | None = None     # per CPU second: the figure to compare builds by

    @property
    def timed_out(self) -> bool:
        return self.returncode == TIMEOUT_EXIT


# The harness's closing statistics lines (sim/common/run_stats.h).
_SPEED = re.compile(r"^sim: (\d+) cycles in ([\d.]+) s = ([\d.]+) Mcycles/s$", re.M)
_CPU = re.compile(r"^sim: cpu time ([\d.]+) s = ([\d.]+) Mcycles/s per core$", re.M)


def soc_command(exe, elf, arg: int = 0, ddr_latency: int | None = None, max_cycles: int | None = None,
                loads: dict | None = None, dumps: list | None = None, uart_in: str | None = None,
                uart_prompt: str | None = None, log=None, wave=None, extra=()) -> list[str]:
    """The simulator's command line (run_soc() runs it; the demo starts several at once)."""
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
    return cmd + [str(e) for e in extra]


_DDR_PORT = re.compile(r"^sim: ddr port (\d+): reads (\d+), writes (\d+) native words", re.M)


def ddr_port_words(stderr: str) -> dict[int, tuple[int, int]]:
    """The harness's per-port DDR statistics of a run with a DDR timing model (`--ddr PRESET`; none with `fixed`):
    model port -> (native words read, written), for the ports that moved any. Port 0 is the CPU's (io_ddr), port
    1 + n the DMA port io_ddrDma<n> (sim/soc/harness.cpp timingPort)."""
    return {int(m[1]): (int(m[2]), int(m[3])) for m in _DDR_PORT.finditer(stderr)}


def soc_result(returncode: int, stdout: bytes, stderr: bytes) -> SocRun:
    out = stdout.decode("latin-1")
    err = stderr.decode("latin-1")
    m = _SPEED.search(err)
    c = _CPU.search(err)
    return SocRun(returncode, out, err, int(m.group(1)) if m else None,
                  float(m.group(2)) if m else None, float(m.group(3)) if m else None,
                  float(c.group(1)) if c else None, float(c.group(2)) if c else None)


def run_soc(elf, arg: int = 0, ddr_latency: int | None = None, max_cycles: int | None = None,
            loads: dict | None = None, dumps: list | None = None, uart_in: str | None = None,
            uart_prompt: str | None = None, log=None, wave=None, extra=(), timeout: float = 600,
            exe: Path | None = None) -> SocRun:
    """Run firmware `elf` on the simulated SoC. `loads` maps DDR/RAM addresses to files put in memory
    before reset; `dumps` is a list of (addr, length, path) saved after the run."""
    exe = exe or build_soc(trace=wave is not None)
    cmd = soc_command(exe, elf, arg, ddr_latency, max_cycles, loads, dumps, uart_in, uart_prompt, log, wave, extra)
    with progress.step(f"simulating the SoC ({Path(elf).name}, SIM_ARG {arg})"):
        res = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return soc_result(res.returncode, res.stdout, res.stderr)


def run_job(workdir: Path, run0: bytes, run1: bytes, group: int = 16, elf: Path | None = None, **kw) -> dict:
    """Run one job on the simulated SoC (SIM_ARG 2). Keyword arguments go to firmware.job_image(), except
    `sim` (a dict of extra run_soc arguments). Returns the result block plus "exit", "uart" and the
    IP's output ("out", "inv": bytes read back from DDR)."""
    sim = kw.pop("sim", {})
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    img, layout = firmware.job_image(run0, run1, group, **kw)
    (workdir / "job.bin").write_bytes(img)
    elf = elf or firmware.build_firmware()
    out_addr, out_len = layout["out"]
    inv_addr, inv_len = layout["inv"]
    result_addr = firmware.DDR_BASE + 4 * firmware.JOB_RESULT_WORD
    dumps = [(result_addr, 4 * len(firmware.JOB_RESULT_FIELDS), workdir / "result.bin"),
             (out_addr, max(out_len, 4), workdir / "out.bin"), (inv_addr, max(inv_len, 4), workdir / "inv.bin")]
    r = run_soc(elf, arg=firmware.SCEN["JOB"], loads={firmware.DDR_BASE: workdir / "job.bin"}, dumps=dumps, **sim)
    if not (workdir / "result.bin").exists():
        raise firmware.FirmwareError(f"simulation wrote no result (exit {r.returncode}):\n{r.uart[-2000:]}\n"
                                     f"{r.stderr[-2000:]}")
    res = firmware.parse_job_result((workdir / "result.bin").read_bytes())
    res.update(exit=r.returncode, uart=r.uart,
               out=(workdir / "out.bin").read_bytes()[:res["out_bytes"]],
               inv=(workdir / "inv.bin").read_bytes()[:res["inv_bytes"]])
    return res
