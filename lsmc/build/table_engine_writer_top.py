"""Builds of the table engine's table writer (hw/ip/table_engine/rtl/TableWriter.scala) for Verilator: its
Verilog at a beat width (build/gen/table_engine_writer_wN/TableWriter.v, the key limit of the C++ model's
limits.h) and the differential harness hw/ip/table_engine/dv/table_writer_harness.cpp, which links the model's
TableWriter and table reader (build/table_engine/writer_wN/VTableWriter). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_model
from lsmc.build.table_engine_rtl import DV, DV_HEADERS, TAG_BYTES
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes the generator takes (table_engine.GenerateTableWriter --bytes)
HARNESS = DV / "table_writer_harness.cpp"
MODEL = table_model.MODEL
# The model's writer (the reference bytes) and its reader (the tables read back).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("table_writer", "table_reader", "block_builder", "block_reader",
                                              "filter_block", "internal_key", "coding", "crc32c", "error",
                                              "format", "snappy_codec")]


def _check(width: int) -> None:
    if width not in WIDTHS:
        raise ValueError(f"beat width {width!r} not one of {WIDTHS}")


# One build with small limits to test a full buffer of each kind (CI builds it once, not once per kind): an
# index buffer of SMALL_INDEX bytes instead of the generator's 64 KiB (the rest spills), an index restart RAM of
# SMALL_INDEX_ENTRIES entries instead of 4096, and the filter limits SMALL_FILTER
# (filter buffer bytes, keys of one filter, filters of one table). The harness is told the same figures
# (--index-bytes N, --filter-limits B,K,F): SMALL_ARGS.
SMALL_INDEX = 1024
SMALL_INDEX_ENTRIES = 64  # the index builder's restart RAM: index entries of one table
SMALL_FILTER = (1024, 64, 16)
SMALL_ARGS = ("--index-bytes", SMALL_INDEX, "--index-entries", SMALL_INDEX_ENTRIES,
              "--filter-limits", ",".join(map(str, SMALL_FILTER)))


def _name(width: int, small: bool = False) -> str:
    return f"w{width}" + ("_small" if small else "")


def generate(width: int = 16, small: bool = False) -> Path:
    """TableWriter.v of `width` bytes per beat with the model's key limit (`small`: the index buffer and filter
    limits above instead of the generator's, to test full ones); cached."""
    _check(width)
    lim = table_model.limits()
    out = GEN / f"table_engine_writer_{_name(width, small)}"
    extra = []
    if small:
        fb, fk, ff = SMALL_FILTER
        extra += ["--index-bytes", str(SMALL_INDEX), "--index-entries", str(SMALL_INDEX_ENTRIES),
                  "--filter-bytes", str(fb), "--filter-keys", str(fk), "--max-filters", str(ff)]
    return build.generate("table_engine", "table_engine.GenerateTableWriter", out,
                          ["--bytes", str(width), "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           "--zip-lanes", str(lim["zip_lanes"]),
                           "--max-block", str(lim["max_block_bytes"]),
                           "--zip-bytes", str(lim["zip_block_bytes"]), *extra, "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16, small: bool = False) -> Path:
    """The Verilator model of TableWriter with its differential harness; cached."""
    verilog = generate(width, small) / "TableWriter.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *DV_HEADERS)
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width}", "-LDFLAGS", "-lleveldb", *common_flags]
    return build.verilate("TableWriter", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"writer_{_name(width, small)}",
                          flags=flags, cflags=build.HARNESS_OPT)


def run(width: int = 16, *args, small: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options; `small`: on the small-limits build, told its limits); the
    completed process (text output)."""
    exe = build_harness(width, small)
    if small:  # the build's limits, unless the caller names one (a test telling the harness a wrong one)
        given = {str(a) for a in args}
        args = (*args, *(x for i in range(0, len(SMALL_ARGS), 2) if SMALL_ARGS[i] not in given
                         for x in SMALL_ARGS[i:i + 2]))
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_writer_top [WIDTH]: build, print the path
    import sys
    print(build_harness(int(sys.argv[1]) if len(sys.argv) > 1 else 16))
