"""Builds of the table engine's merge and drop stage (hw/ip/table_engine/rtl/Merger.scala) for Verilator: its
Verilog at a beat width and a number of ways (build/gen/table_engine_merge_wN_kK/MergeDrop.v, the key limit
of the C++ model's limits.h) and the differential harness hw/ip/table_engine/dv/merge_harness.cpp, which
links the model's merger and drop rule with the table reader and writer they run on
(build/table_engine/merge_wN_kK/VMergeDrop). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_model
from lsmc.build.table_engine_rtl import DV, DV_HEADERS, TAG_BYTES
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes (table_engine.GenerateMerge --bytes)
WAYS = (2, 4, 8)  # input runs (--ways)
HARNESS = DV / "merge_harness.cpp"
MODEL = table_model.MODEL
# The model's merge (Merger over RunReaders, the tables each run is written to) and drop rule (compaction).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("merger", "compaction", "table_reader", "table_writer", "block_builder",
                                              "block_reader", "filter_block", "format", "internal_key", "coding",
                                              "crc32c", "snappy_codec", "error")]


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
    """MergeDrop.v of `width` bytes per beat and `ways` runs, the model's key limit, `merge` bytes a beat inside
    (0: `width`); cached."""
    _check(width, ways, merge)
    lim = table_model.limits()
    out = GEN / f"table_engine_merge_{_name(width, ways, merge)}"
    return build.generate("table_engine", "table_engine.GenerateMerge", out,
                          ["--bytes", str(width), "--ways", str(ways),
                           "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           *(["--merge-bytes", str(merge)] if merge and merge != width else []),
                           "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16, ways: int = 4, merge: int = 0) -> Path:
    """The Verilator model of MergeDrop with the differential harness; cached."""
    verilog = generate(width, ways, merge) / "MergeDrop.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *DV_HEADERS)
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width} -DWAYS={ways}", *common_flags]
    return build.verilate("MergeDrop", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"merge_{_name(width, ways, merge)}",
                          flags=flags, cflags=build.HARNESS_OPT)


def run(width: int = 16, ways: int = 4, *args, timeout: float = 600, merge: int = 0) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options); the completed process (text output)."""
    exe = build_harness(width, ways, merge)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_merge [WIDTH [WAYS [MERGE]]]: build, print the path
    import sys
    print(build_harness(*(int(a) for a in sys.argv[1:4])))
