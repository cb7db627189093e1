"""`lsmc tables compact --backend soc`: a small db_bench-like job (compression off) on the full SoC's table-engine
unit (the firmware's driver runs the job from a descriptor the host placed in DDR) must give the engine's C++
model's output tables byte for byte (`lsmc tables compare` SAME), and the firmware's bracket must hold the unit's
own clocks. On unit 0 of the tests' preset (te_rtl.SOC_TEST_PRESET), the SoC build every table-engine SoC test
shares (a build costs minutes of CPU; tables-m1, the one-unit preset `--backend soc` picks, has the same unit)."""
from __future__ import annotations

import pytest
from te_rtl import SOC_TEST_PRESET, small_dbbench_job

from lsmc import tables
from lsmc.sim import tables as te_tables

PRESET = SOC_TEST_PRESET


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return small_dbbench_job(tmp_path_factory)


def test_soc_same_as_model(job, tmp_path):
    model = tables.model_exe()
    rc, _, err = te_tables.run_job(model, job, tmp_path / "model")
    assert rc == 0, err
    rc, line, err = te_tables.soc_job(job, tmp_path / "soc", preset=PRESET)
    assert rc == 0, err
    soc_line, last = line.splitlines()
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "soc")
    assert ok, verdict
    f = dict(kv.split("=") for kv in soc_line.split()[1:])
    assert 0 < int(f["engine_cycles"]) < int(f["cycles"]) <= int(f["job_cycles"])
    assert last.startswith("cycles=") and "tables_out=" in last


def test_soc_malformed_table_names_the_error(job, tmp_path):
    """A table with a bad magic: the job stops with BAD_MAGIC from the SoC's unit; nothing is written."""
    import json
    import shutil
    d = tmp_path / "job"
    shutil.copytree(job.parent, d)
    spec = json.loads((d / "job.json").read_text())
    t = d / spec["runs"][1][0]
    blob = bytearray(t.read_bytes())
    blob[-1] ^= 0x40
    t.write_bytes(bytes(blob))
    rc, _, err = te_tables.soc_job(d / "job.json", tmp_path / "soc", preset=PRESET)
    assert rc == 1 and err.startswith("error=BAD_MAGIC "), err
    assert not (tmp_path / "soc").exists()
