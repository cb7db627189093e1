"""Builds of the table engine's Snappy compressor (hw/ip/table_engine/rtl/SnappyCompressor.scala) for Verilator:
its Verilog at a beat width (build/gen/snappy_compressor_wN/SnappyCompressor.v; the block limit and libsnappy's
fragment and hash-table sizes from the model's limits.h) and the differential harness
hw/ip/table_engine/dv/snappy_compressor_harness.cpp, which links Debian's libsnappy and the model's codec
(build/table_engine/snappy_compressor_wN/VSnappyCompressor). Both cached by stamps, built under their locks."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_engine_rtl, table_model
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes the generator takes (table_engine.GenerateSnappyCompressor --bytes)
HARNESS = ROOT / "hw" / "ip" / "table_engine" / "dv" / "snappy_compressor_harness.cpp"
MODEL = table_model.MODEL
# The model's codec (the expected bytes), its block builder (LevelDB data blocks to compress) and its table
# framing (the blocks of a table file, --table).
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("snappy_codec", "block_builder", "block_reader", "coding", "crc32c",
                                              "error", "format")]


def sizes() -> dict[str, int]:
    """The compressor's fixed sizes, from limits.h: largest block, libsnappy's fragment, hash-table bits."""
    lim = table_model.limits()
    return {"max_block": lim["max_block_bytes"], "fragment": lim["snappy_fragment_bytes"],
            "min_hash_bits": lim["snappy_min_hash_bits"], "max_hash_bits": lim["snappy_max_hash_bits"]}


def generate(width: int = 16) -> Path:
    """SnappyCompressor.v of `width` bytes per beat; cached."""
    if width not in WIDTHS:
        raise ValueError(f"beat width {width!r} not one of {WIDTHS}")
    out = GEN / f"snappy_compressor_w{width}"
    s = sizes()
    return build.generate("table_engine", "table_engine.GenerateSnappyCompressor", out,
                          ["--bytes", str(width), "--max-block", str(s["max_block"]), "--fragment", str(s["fragment"]),
                           "--min-hash-bits", str(s["min_hash_bits"]), "--max-hash-bits", str(s["max_hash_bits"]),
                           "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16) -> Path:
    """The Verilator model of SnappyCompressor with the differential harness; cached."""
    verilog = generate(width) / "SnappyCompressor.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *table_engine_rtl.DV_HEADERS)
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width} -DMAX_BLOCK_BYTES={sizes()['max_block']}",
             "-LDFLAGS", "-lsnappy", *common_flags]
    return build.verilate("SnappyCompressor", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"snappy_compressor_w{width}", flags=flags, cflags=build.HARNESS_OPT)


def run(width: int = 16, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options); the completed process (text output)."""
    exe = build_harness(width)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_snappy_compressor [WIDTH]: build, print the path
    import sys
    print(build_harness(int(sys.argv[1]) if len(sys.argv) > 1 else 16))
