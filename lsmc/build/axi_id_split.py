"""common.Axi4ReadOnlyIdSplit (hw/common/rtl) and its testbench (hw/common/dv/axi_id_split_harness.cpp): the split
of a table-engine unit's read master over several DDR ports (soc.SocTableEngineConfig.readPortsPerUnit)."""
from __future__ import annotations

from pathlib import Path

from lsmc import build
from lsmc.paths import BUILD, GEN, ROOT

HARNESS = ROOT / "hw" / "common" / "dv" / "axi_id_split_harness.cpp"
PORTS = (2, 3, 4)


def generate(ports: int = 2) -> Path:
    """Axi4ReadOnlyIdSplit.v over `ports` slaves; cached."""
    if ports not in PORTS:
        raise build.BuildError(f"the split's testbench is built for {', '.join(map(str, PORTS))} ports, not {ports}")
    out = GEN / f"axi_id_split_p{ports}"
    return build.generate("common", "common.GenerateAxi4ReadOnlyIdSplit", out,
                          ["--ports", str(ports), "--out", str(out.relative_to(ROOT))])


def build_harness(ports: int = 2) -> Path:
    """The Verilator model of the split with its testbench; cached."""
    verilog = generate(ports) / "Axi4ReadOnlyIdSplit.v"
    if not verilog.is_file():
        raise build.BuildError(f"{verilog} was not generated")
    common_srcs, common_flags = build.sim_common()
    return build.verilate("Axi4ReadOnlyIdSplit", [verilog], [HARNESS, *common_srcs],
                          BUILD / "axi_id_split" / f"p{ports}",
                          flags=["-CFLAGS", f"-std=c++17 -DPORTS={ports}", *common_flags], cflags="-O1")
