"""Builds of the table engine's Snappy decompressor (hw/ip/table_engine/rtl/SnappyDecompressor.scala) for
Verilator: its Verilog at a beat width (build/gen/snappy_wN/SnappyDecompressor.v, 64 KiB history) and the
differential harness hw/ip/table_engine/dv/snappy_harness.cpp, which links Debian's libsnappy and the model's
codec (build/table_engine/snappy_wN/VSnappyDecompressor). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_engine_rtl, table_model
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes the generator takes (table_engine.GenerateSnappy --bytes)
HISTORY = 1 << 16  # history bytes = the largest block decompressed (LevelDB's blocks of its default sizes)
HARNESS = ROOT / "hw" / "ip" / "table_engine" / "dv" / "snappy_harness.cpp"
MODEL = table_model.MODEL
# The model's codec (the verdicts), its block builder (LevelDB data blocks to compress) and its table
# framing (the blocks of a table file, --table).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("snappy_codec", "block_builder", "block_reader", "coding", "crc32c",
                                              "error", "format")]


def _check(width: int) -> None:
    if width not in WIDTHS:
        raise ValueError(f"beat width {width!r} not one of {WIDTHS}")


def generate(width: int = 16) -> Path:
    """SnappyDecompressor.v of `width` bytes per beat; cached."""
    _check(width)
    out = GEN / f"snappy_w{width}"
    return build.generate("table_engine", "table_engine.GenerateSnappy", out,
                          ["--bytes", str(width), "--history", str(HISTORY), "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16) -> Path:
    """The Verilator model of SnappyDecompressor with the differential harness; cached."""
    verilog = generate(width) / "SnappyDecompressor.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *table_engine_rtl.DV_HEADERS)
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width} -DHISTORY_BYTES={HISTORY}",
             "-LDFLAGS", "-lsnappy", *common_flags]
    return build.verilate("SnappyDecompressor", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"snappy_w{width}", flags=flags, cflags=build.HARNESS_OPT)


def run(width: int = 16, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options); the completed process (text output)."""
    exe = build_harness(width)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_snappy [WIDTH]: build, print the path
    import sys
    print(build_harness(int(sys.argv[1]) if len(sys.argv) > 1 else 16))
