"""Builds of a table-engine unit (hw/ip/table_engine/rtl/TableEngineUnit.scala: the engine behind its register front
end, APB3 registers from regif, one AXI4 read and one write master) for Verilator: its Verilog and te_regs.h / .json
/ .md / .html (build/gen/table_engine_unit_w16_kK/, the model's limits and the walker's capacities as the engine's
own build gets them, lsmc.build.table_engine_top) and the harness hw/ip/table_engine/dv/te_unit_harness.cpp, which
runs a job folder through a descriptor in simulated memory as a CPU would (build/table_engine/unit_w16_kK/
VTableEngineUnit). Both cached by stamps."""
from __future__ import annotations

import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import facts, table_engine_top, table_model
from lsmc.build.table_engine_rtl import DV, DV_HEADERS, TAG_BYTES
from lsmc.paths import BUILD, GEN, ROOT

WIDTH = 16  # the front end's TE_LOAD records carry 16-byte beats
HARNESS = DV / "te_unit_harness.cpp"
FW_LIB = ROOT / "fw" / "lib"  # te_parts.h: a part's shares of its job's buffers, the firmware's rule


def generate(ways: int = 4) -> Path:
    """TableEngineUnit.v and te_regs.* of `ways` runs (W = 16), the model's limits; cached."""
    if ways not in table_engine_top.WAYS:
        raise ValueError(f"ways {ways!r} not one of {table_engine_top.WAYS}")
    lim = table_model.limits()
    out = GEN / f"table_engine_unit_w{WIDTH}_k{ways}"
    return build.generate("table_engine", "table_engine.GenerateTableEngineUnit", out,
                          ["--bytes", str(WIDTH), "--ways", str(ways),
                           "--key-limit", str(lim["max_user_key_bytes"] + TAG_BYTES),
                           "--max-block", str(lim["max_block_bytes"]), "--max-blocks", str(table_engine_top.MAX_BLOCKS),
                           *(x for k, v in table_engine_top.WALKER.items() for x in (f"--{k}", str(v))),
                           "--out", str(out.relative_to(ROOT))])


def build_harness(ways: int = 4) -> Path:
    """The Verilator model of TableEngineUnit with its job harness; cached."""
    gen = generate(ways)
    verilog = gen / "TableEngineUnit.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    fdir = facts.include_dir()
    common_srcs, common_flags = build.sim_common(*sorted(table_engine_top.MODEL.glob("*.h")), *DV_HEADERS,
                                                 gen / "te_regs.h", fdir / "lsmc_job.h", FW_LIB / "te_parts.h")
    flags = ["-CFLAGS", f"-std=c++17 -I{table_engine_top.MODEL} -I{DV} -I{gen} -I{fdir} -I{FW_LIB} "
                        f"{table_engine_top.defines(WIDTH, ways)}",
             "-LDFLAGS", "-ljson-c", *common_flags]
    return build.verilate("TableEngineUnit", [verilog], [HARNESS, *table_engine_top.MODEL_SOURCES, *common_srcs],
                          BUILD / "table_engine" / f"unit_w{WIDTH}_k{ways}", flags=flags, cflags=build.HARNESS_OPT)


def run(ways: int = 4, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness with `args` (JOB.json OUT_DIR [options]); the completed process (text output)."""
    exe = build_harness(ways)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":
    # python3 -m lsmc.build.table_engine_unit [WAYS]: build the harness, print its path.
    import sys
    print(build_harness(*(int(a) for a in sys.argv[1:2])))
