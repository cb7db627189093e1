"""Builds of the whole table engine (hw/ip/table_engine/rtl/TableEngine.scala: K table readers, the merge and
drop stage with its base-level walker, the table writer and an AXI4 write port) for Verilator: its Verilog at a
beat width and a number of ways (build/gen/table_engine_top_wN_kK/TableEngine.v, the key and block limits of
the C++ model's limits.h) and the harness hw/ip/table_engine/dv/table_engine_harness.cpp, which runs a job
folder (`lsmc tables make`) from a simulated AXI memory and links the model's job parser
(build/table_engine/top_wN_kK/VTableEngine). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_model
from lsmc.build.table_engine_rtl import DV, DV_HEADERS, TAG_BYTES
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes (table_engine.GenerateTableEngine --bytes)
WAYS = (2, 4, 8)  # runs merged (--ways)
MAX_BLOCKS = 1024  # data blocks of one input table (the reader's handle RAM)
# The base-level walker's capacities, given to the generator and to the harness (which refuses a job over them):
# deeper levels, their files in all, words of W bytes holding their keys and the grandparents' keys, grandparents.
WALKER = {"walker-levels": 8, "walker-files": 1024, "walker-key-words": 8192, "grandparents": 1024}
HARNESS = DV / "table_engine_harness.cpp"
# The testbench as an object (the harness's main and host/'s `rtl` back end run the engine through it).
SIM = DV / "table_engine_sim.cpp"
SIM_HEADER = DV / "table_engine_sim.h"
MODEL = table_model.MODEL
# The model's job parser (job.json -> the tables and options) and what it needs; its table reader names a
# merge error's entry by table and offset; its sub-compaction plan gives the parts (--parts).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("job", "compaction", "merger", "table_reader", "table_writer",
                                              "block_builder", "block_reader", "filter_block", "format",
                                              "internal_key", "coding", "crc32c", "snappy_codec", "error",
                                              "subcompaction", "cycle_model")]


def _check(width: int, ways: int, merge: int = 0) -> None:
    if merge not in (0, width, 2 * width):
        raise ValueError(f"merge stage width {merge!r}: 0, the beat's {width} or twice that")
    if width not in WIDTHS:
        raise ValueError(f"beat width {width!r} not one of {WIDTHS}")
    if ways not in WAYS:
        raise ValueError(f"ways {ways!r} not one of {WAYS}")


def _name(width: int, ways: int, merge: int = 0) -> str:
    """The build's folder name; `_mM` for a merge stage M bytes wide inside (the wider stage, doc/merge.md)."""
    return f"w{width}_k{ways}" + (f"_m{merge}" if merge and merge != width else "")


def generate(width: int = 16, ways: int = 4, merge: int = 0) -> Path:
    """TableEngine.v of `width` bytes per beat and `ways` runs, the model's limits, its merge stage `merge` bytes
    a beat inside (0: `width`); cached."""
    _check(width, ways, merge)
    lim = table_model.limits()
    out = GEN / f"table_engine_top_{_name(width, ways, merge)}"
    return build.generate("table_engine", "table_engine.GenerateTableEngine", out,
                          ["--bytes", str(width), "--ways", str(ways),
                           "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           "--max-block", str(lim["max_block_bytes"]), "--max-blocks", str(MAX_BLOCKS),
                           *(x for k, v in WALKER.items() for x in (f"--{k}", str(v))),
                           "--zip-lanes", str(lim["zip_lanes"]), "--zip-bytes", str(lim["zip_block_bytes"]),
                           *(["--merge-bytes", str(merge)] if merge and merge != width else []),
                           "--out", str(out.relative_to(ROOT))])


def defines(width: int = 16, ways: int = 4) -> str:
    """The C++ defines the engine's testbench (dv/table_engine_sim.cpp) is built with: its beat, ways and the
    walker's capacities and the reader's data blocks a table as the generator got them."""
    _check(width, ways)
    walker = " ".join(f"-D{k.upper().replace('-', '_')}={v}" for k, v in WALKER.items())
    return f"-DBEAT_BYTES={width} -DWAYS={ways} {walker} -DMAX_BLOCKS={MAX_BLOCKS}"


def build_harness(width: int = 16, ways: int = 4, merge: int = 0) -> Path:
    """The Verilator model of TableEngine with the job harness; cached."""
    verilog = generate(width, ways, merge) / "TableEngine.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *DV_HEADERS)
    # -fPIC: LevelDB's `rtl` back end links this build's model archive (VTableEngine__ALL.a) into libleveldb.so
    # (host/Makefile), so the engine compiles once for both. Debian's Verilator: host/ links it beside its KB16
    # model with one Verilator runtime, Debian's.
    flags = ["-CFLAGS", f"-std=c++17 -fPIC -I{MODEL} {defines(width, ways)}",
             "-LDFLAGS", "-ljson-c", *common_flags]
    return build.verilate("TableEngine", [verilog], [HARNESS, SIM, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"top_{_name(width, ways, merge)}",
                          flags=flags, cflags=build.HARNESS_OPT, wheel=False)


def run(width: int = 16, ways: int = 4, *args, timeout: float = 600, merge: int = 0) -> subprocess.CompletedProcess:
    """Run the harness with `args` (JOB.json OUT_DIR [options]); the completed process (text output)."""
    exe = build_harness(width, ways, merge)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":
    # python3 -m lsmc.build.table_engine_top [WIDTH [WAYS [MERGE]]]: build the harness (MERGE: the merge stage's
    # bytes a beat inside, twice WIDTH for the wider stage), print its path;
    # ... verilog WIDTH WAYS [MERGE]: generate, print TableEngine.v's folder; ... defines WIDTH WAYS: the
    # testbench's defines; ... model WIDTH WAYS [MERGE]: build the harness, print the folder of its Verilated
    # model (VTableEngine__ALL.a and headers); ... soc-merge: the SoC's unit's merge stage (host/Makefile links
    # the engine into LevelDB's driver with these).
    import sys
    if sys.argv[1:2] == ["soc-merge"]:
        from lsmc.build import presets
        print(presets.te_merge_bytes())
    elif sys.argv[1:2] in (["verilog"], ["defines"], ["model"]):
        try:
            if sys.argv[1] == "verilog":
                print(generate(*(int(a) for a in sys.argv[2:5])))
            elif sys.argv[1] == "model":
                print(build_harness(*(int(a) for a in sys.argv[2:5])).parent)
            else:
                print(defines(*(int(a) for a in sys.argv[2:4])))
        except (ValueError, TypeError, build.BuildError) as e:
            sys.exit(f"lsmc.build.table_engine_top {' '.join(sys.argv[1:])}: {str(e).splitlines()[0]}")
    else:
        print(build_harness(*(int(a) for a in sys.argv[1:4])))
