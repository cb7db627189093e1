"""Builds of the table engine's table front end (hw/ip/table_engine/rtl/TableReader.scala) for Verilator: its
Verilog at a beat width (build/gen/table_reader_wN/TableReader.v, with the key and block limits of the C++
model's limits.h, the block reader inside) and the differential harness
hw/ip/table_engine/dv/table_reader_harness.cpp, which links the model's table reader and Debian's libleveldb
(build/table_engine/table_reader_wN/VTableReader). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_engine_rtl, table_engine_snappy, table_model
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = table_engine_rtl.WIDTHS  # beat bytes = AXI data bytes (table_engine.GenerateTableReader --bytes)
MAX_BLOCKS = 1024  # data blocks of one table the handle RAM holds (a 4 MiB table of 4 KiB blocks)
SNAPPY_BYTES = table_engine_snappy.HISTORY  # largest decompressed Snappy block (history = each block buffer)
HARNESS = table_engine_rtl.DV / "table_reader_harness.cpp"
MODEL = table_model.MODEL
# The model's pieces the harness links: its table reader (the reference) and table writer (tables to read).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("table_reader", "table_writer", "block_builder", "block_reader",
                                              "filter_block", "internal_key", "coding", "crc32c", "error",
                                              "format", "snappy_codec")]


def _suffix(snappy_bytes: int) -> str:
    """The build folders' suffix of a Snappy block buffer other than the default (the ECP5 build's: `_s32k`)."""
    return "" if snappy_bytes == SNAPPY_BYTES else f"_s{snappy_bytes >> 10}k"


def generate(width: int = 16, snappy_bytes: int = SNAPPY_BYTES) -> Path:
    """TableReader.v of `width` bytes per beat, the model's key and block limits, Snappy blocks up to
    `snappy_bytes` decompressed; cached."""
    table_engine_rtl._check(width)
    lim = table_model.limits()
    out = GEN / f"table_reader_w{width}{_suffix(snappy_bytes)}"
    return build.generate("table_engine", "table_engine.GenerateTableReader", out,
                          ["--bytes", str(width),
                           "--key-limit", str(lim["max_user_key_bytes"] + table_engine_rtl.TAG_BYTES),
                           "--max-block", str(lim["max_block_bytes"]), "--max-blocks", str(MAX_BLOCKS),
                           "--snappy-bytes", str(snappy_bytes),
                           "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16, snappy_bytes: int = SNAPPY_BYTES) -> Path:
    """The Verilator model of TableReader with the differential harness (the model reads Snappy blocks with the
    same limit); cached."""
    verilog = generate(width, snappy_bytes) / "TableReader.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *table_engine_rtl.DV_HEADERS)
    flags = ["-CFLAGS",
             f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width} -DMAX_BLOCKS={MAX_BLOCKS} -DSNAPPY_BYTES={snappy_bytes}",
             "-LDFLAGS", "-lleveldb", *common_flags]
    return build.verilate("TableReader", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"table_reader_w{width}{_suffix(snappy_bytes)}", flags=flags,
                          cflags=build.HARNESS_OPT)


def run(width: int = 16, *args, timeout: float = 600, snappy_bytes: int = SNAPPY_BYTES) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options); the completed process (text output)."""
    exe = build_harness(width, snappy_bytes)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_reader [WIDTH]: build, print the path
    import sys
    print(build_harness(int(sys.argv[1]) if len(sys.argv) > 1 else 16))
