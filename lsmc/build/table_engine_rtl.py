"""Builds of the table engine's RTL (hw/ip/table_engine/rtl) for Verilator: the block reader's Verilog at a
beat width (build/gen/table_engine_wN/BlockReader.v, with the key and block limits of the C++ model's
limits.h) and its differential harness hw/ip/table_engine/dv/block_reader_harness.cpp, which links the
model's block builder and reader (build/table_engine/rtl_wN/VBlockReader); the block builder's Verilog
(build/gen/table_engine_builder_wN/BlockBuilder.v) and its harness hw/ip/table_engine/dv/block_builder_harness.cpp
(build/table_engine/builder_wN/VBlockBuilder). All cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import table_model
from lsmc.paths import BUILD, GEN, ROOT

WIDTHS = (4, 8, 16, 32)  # beat bytes the generator takes (table_engine.Generate --bytes)
DV = ROOT / "hw" / "ip" / "table_engine" / "dv"
HARNESS = DV / "block_reader_harness.cpp"
# Every header of dv/, in each harness's build stamp: a harness includes some of them, and a change to one must
# rebuild whatever includes it (over-rebuilding the others is the cheaper error).
DV_HEADERS = tuple(sorted(DV.glob("*.h")))
BUILDER_HARNESS = ROOT / "hw" / "ip" / "table_engine" / "dv" / "block_builder_harness.cpp"
MODEL = table_model.MODEL
# The model's pieces the harness links: blocks built and read as the model does.
MODEL_SOURCES = [MODEL / f"{n}.cc" for n in ("block_builder", "block_reader", "coding", "crc32c", "error",
                                              "format", "snappy_codec")]
# The internal key's 8-byte tag (sequence and type) after the user key (model/limits.h kMaxInternalKeyBytes).
TAG_BYTES = 8


def _check(width: int) -> None:
    if width not in WIDTHS:
        raise ValueError(f"beat width {width!r} not one of {WIDTHS}")


def generate(width: int = 16) -> Path:
    """BlockReader.v of `width` bytes per beat, the model's key and block limits; cached."""
    _check(width)
    lim = table_model.limits()
    out = GEN / f"table_engine_w{width}"
    return build.generate("table_engine", "table_engine.Generate", out,
                          ["--bytes", str(width), "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           "--max-block", str(lim["max_block_bytes"]), "--out", str(out.relative_to(ROOT))])


def build_harness(width: int = 16) -> Path:
    """The Verilator model of BlockReader with the differential harness; cached."""
    verilog = generate(width) / "BlockReader.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *DV_HEADERS)
    # Debian's libleveldb: its TableBuilder writes the tables of --leveldb (an independent source of blocks).
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width}", "-LDFLAGS", "-lleveldb", *common_flags]
    return build.verilate("BlockReader", [verilog], [HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"rtl_w{width}", flags=flags, cflags=build.HARNESS_OPT)


def run(width: int = 16, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness with `args` (its options); the completed process (text output)."""
    exe = build_harness(width)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def _builder_name(width: int, max_restarts: int | None) -> str:
    return f"w{width}" + (f"_r{max_restarts}" if max_restarts else "")


def generate_builder(width: int = 16, max_restarts: int | None = None) -> Path:
    """BlockBuilder.v of `width` bytes per beat with the model's key limit (and a restart RAM of
    `max_restarts` offsets instead of the generator's default, to test a full one); cached."""
    _check(width)
    lim = table_model.limits()
    out = GEN / f"table_engine_builder_{_builder_name(width, max_restarts)}"
    extra = ["--max-restarts", str(max_restarts)] if max_restarts else []
    return build.generate("table_engine", "table_engine.GenerateBuilder", out,
                          ["--bytes", str(width), "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           *extra, "--out", str(out.relative_to(ROOT))])


def build_builder_harness(width: int = 16, max_restarts: int | None = None) -> Path:
    """The Verilator model of BlockBuilder with its differential harness (model and libleveldb); cached."""
    verilog = generate_builder(width, max_restarts) / "BlockBuilder.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common(*sorted(MODEL.glob("*.h")), *DV_HEADERS)
    flags = ["-CFLAGS", f"-std=c++17 -I{MODEL} -DBEAT_BYTES={width}", "-LDFLAGS", "-lleveldb", *common_flags]
    return build.verilate("BlockBuilder", [verilog], [BUILDER_HARNESS, *MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"builder_{_builder_name(width, max_restarts)}", flags=flags,
                          cflags=build.HARNESS_OPT)


def run_builder(width: int = 16, *args, max_restarts: int | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the block builder's harness with `args`; the completed process (text output)."""
    exe = build_builder_harness(width, max_restarts)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def summary(res) -> dict:
    """The last line of a table-engine harness's run (`key=value ...`) as a dict, numbers as int or
    float; a run that refused its arguments (status other than 0 or 1) is an AssertionError."""
    assert res.returncode in (0, 1), f"harness refused its arguments:\n{res.stderr}"
    out = {}
    for tok in res.stdout.strip().splitlines()[-1].split():
        k, v = tok.split("=", 1)
        for kind in (int, float, str):
            try:
                out[k] = kind(v)
                break
            except ValueError:
                continue
    return out


if __name__ == "__main__":  # python3 -m lsmc.build.table_engine_rtl [WIDTH] [builder]: build, print the path
    import sys
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    print(build_builder_harness(width) if sys.argv[2:3] == ["builder"] else build_harness(width))
