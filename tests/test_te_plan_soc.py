"""The sub-compaction plan on the SoC's VexRiscv (tables.elf SIM_ARG PLAN; the tests' preset te_rtl.SOC_TEST_PRESET,
the SoC build the table-engine SoC tests share; the calibration's figures are tables-m4's, the same CPU and DDR
path): the index blocks of a db_bench job placed in DDR by the host, the plan timed by the firmware. Its splits,
windows and counts must be the model's (PlanSubcompactions) for P = 2 and 4, and a bad index block stops it
with the named error. The measured cycles are what hw/ip/table_engine/model/subcompaction.h's fw_cost constants are
calibrated on (doc/model.md, "Sub-compactions")."""
from __future__ import annotations

from pathlib import Path

import pytest
from te_rtl import SOC_TEST_PRESET

from lsmc import tables
from lsmc.sim import te_plan as tp

PRESET = SOC_TEST_PRESET


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("job") / "dbbench"
    assert tables.main(["make", str(d), "--workload", "dbbench"]) == 0
    return d / "job.json"


@pytest.mark.parametrize("parts", [2, 4])
def test_soc_plan_is_the_models(job, tmp_path, parts):
    rc, plan, uart = tp.soc(tp.image(tp.job_index_blocks(job), parts), tmp_path, preset=PRESET)
    assert rc == tp.status("PASS"), uart[-2000:]
    m = tp.model(job, parts)
    assert tp.choices(plan) == tp.choices(m)
    for k in ("index_entries", "comparisons", "compared_bytes"):
        assert plan["head"][k] == m["head"][k], k
    assert plan["head"]["fw_cycles"] > 0


def test_soc_bad_index_block_named(job, tmp_path):
    runs = tp.job_index_blocks(job)
    b = bytearray(runs[1][0])
    b[-4:] = len(b).to_bytes(4, "little")  # a restart count the block cannot hold
    runs[1][0] = bytes(b)
    rc, plan, uart = tp.soc(tp.image(runs, 2), tmp_path, preset=PRESET)
    assert rc == tp.status("BAD_INDEX"), uart[-2000:]
    assert plan == {"error": "BAD_BLOCK", "run": 1, "table": 0, "offset": len(b) - 4}
