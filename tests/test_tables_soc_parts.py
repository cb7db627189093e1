"""Sub-compaction parts on the full SoC's table-engine units side by side (`lsmc tables compact --backend soc
--parts P`, tables.elf SIM_ARG PARTS: the firmware plans the job from the tables' index blocks in DDR, writes a
descriptor a part and runs one a unit). A small db_bench-like job (compression off) in 2 parts must give the model's
parts (`table_model --parts 2`: the same split, tables byte for byte, the same per-part counts and bounds), and the
firmware's figures must hold together: the bracket is the longest unit's CYCLES, the whole job covers the bracket
and its plan, dispatch and gathering. All on one SoC build, the tests' preset (two units; the report's test uses it
too): each SoC build costs minutes of CPU."""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from te_rtl import SOC_TEST_PRESET, small_dbbench_job

from lsmc import tables
from lsmc.build import presets
from lsmc.sim import tables as te_tables

PRESET = SOC_TEST_PRESET


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return small_dbbench_job(tmp_path_factory)


def fields(line: str) -> dict:
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def test_two_parts_same_as_model(job, tmp_path):
    m = subprocess.run([str(tables.model_exe()), str(job), str(tmp_path / "model"), "--parts", "2"],
                       capture_output=True, text=True, timeout=600)
    assert m.returncode == 0, m.stderr
    rc, line, err = te_tables.soc_job(job, tmp_path / "soc", parts=2, preset=PRESET)
    assert rc == 0, err
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "soc")
    assert ok, verdict
    parts = json.loads((tmp_path / "soc" / "result.json").read_text())["parts"]
    assert len(parts) == 2 and all(p["entries_in"] for p in parts) and parts[0]["hi"] == parts[1]["lo"]
    soc_line, last = line.splitlines()
    f = fields(soc_line)
    assert f["parts"] == 2 and f["units"] == 2
    assert f["bracket"] == max(p["cycles"] for p in parts) == fields(last)["cycles"]
    # the whole job: the plan and descriptors, the units side by side, the records gathered
    assert f["job_cycles"] == f["plan_cycles"] + f["dispatch_wait_cycles"] + f["collect_cycles"]
    assert f["bracket"] < f["dispatch_wait_cycles"] < f["job_cycles"]
    assert 0 < f["plan_cycles"] and 0 < f["collect_cycles"]


def test_more_parts_than_units_is_named(job, tmp_path):
    """More parts than any preset's units: refused by the host; more than the firmware's limit, or than the SoC build's
    units: refused by the firmware in one line (the exit status and the console's last lines in the error)."""
    with pytest.raises(tables.CliError, match="at most 4 table-engine units"):
        te_tables.soc_job(job, tmp_path / "x", parts=5)
    rc, _, err = te_tables.soc_job(job, tmp_path / "y", parts=5, preset=PRESET)
    assert rc == 1 and "parts 5: 1..4 (one a unit)" in err, err
    assert not (tmp_path / "y").exists()
    units = presets.soc(PRESET).derived["te_units"]
    rc, _, err = te_tables.soc_job(job, tmp_path / "z", parts=units + 1, preset=PRESET)
    assert rc == 1 and f"{units + 1} parts need {units + 1} table-engine units; this SoC build has {units}" in err, err
    assert not (tmp_path / "z").exists()
