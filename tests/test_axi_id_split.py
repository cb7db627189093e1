"""common.Axi4ReadOnlyIdSplit, the split of a table-engine unit's read master over its DDR ports
(soc.SocTableEngineConfig.readPortsPerUnit), alone in its testbench (hw/common/dv/axi_id_split_harness.cpp): random
bursts of random ids into 2 and 3 slaves (3: the id field taken modulo a count that is no power of two), with and
without random stalls on every ready and valid and a different latency a port. The testbench fails on an AR at the
wrong port, an R beat out of its id's order or with other data than memory holds, a wrong `last`, a protocol
violation of a slave's, or no progress."""
from __future__ import annotations

import re
import subprocess

import pytest

from lsmc.build import axi_id_split


@pytest.mark.parametrize("ports", [2, 3])
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_split_keeps_each_ids_order_and_data(ports, stall):
    r = subprocess.run([str(axi_id_split.build_harness(ports)), "--bursts", "3000", "--stall", str(stall),
                        "--seed", str(ports * 7 + int(stall * 10))], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    f = dict(re.findall(r"(\w+)=(\S+)", r.stdout.strip().splitlines()[-1]))
    assert int(f["bursts"]) == 3000 and int(f["beats"]) >= 3000
    per_port = [int(n) for n in f["ports"].split(",")]
    assert len(per_port) == ports and sum(per_port) == 3000 and min(per_port) > 3000 // (2 * ports), per_port
    assert int(f["interleaved"]) > 0  # the ports' beats did interleave on R, so the per-id routing was exercised


@pytest.mark.parametrize("opt,value", [("--stall", "1"), ("--bursts", "0"), ("--bursts", "1000001"),
                                       ("--seed", "x"), ("--seed", "")])
def test_split_refuses_bad_options(opt, value):
    """A stall of 1 (which would stall for ever), no bursts or more than the bound, a seed that is no number: one
    line naming the option, exit 2, before any simulation."""
    r = subprocess.run([str(axi_id_split.build_harness(2)), opt, value], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines()[-1].startswith(f"axi_id_split: error: {opt}"), r.stderr


def test_split_generator_refuses_a_port_count_it_has_no_testbench_for():
    from lsmc import build
    with pytest.raises(build.BuildError, match="built for 2, 3, 4 ports, not 5"):
        axi_id_split.generate(5)
