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


@pytest.mark.parametrize("runs,compression", [(6, "none"), (9, "snappy")])
def test_soc_cascade_same_as_reference(tmp_path, runs, compression):
    """More runs than the SoC's unit merges (4): the host cascades them as the RTL's testbench does, each pass a job
    on the SoC into temporary tables kept between passes (raw, nothing dropped), then the job itself. The tables
    are LevelDB's own compaction's (the reference compactor): byte for byte without compression, entry for entry
    with Snappy (a bloom filter too); bytes_in is the job's own tables'."""
    d = tmp_path / "job"
    extra = ["--bloom-bits", "10"] if compression == "snappy" else []
    assert tables.main(["make", str(d), "--runs", str(runs), "--entries", "200", "--compression", compression,
                        *extra]) == 0
    job = d / "job.json"
    rc, line, err = te_tables.soc_job(job, tmp_path / "soc", preset=PRESET)
    assert rc == 0, err
    plan = te_tables.cascade_plan(runs, te_tables.presets_te_ways(PRESET))
    assert f"passes={len(plan)}" in line.splitlines()[0]
    ref = tables.reference_exe()
    rc, _, err = te_tables.run_job(ref, job, tmp_path / "ref")
    assert rc == 0, err
    ok, verdict = tables.compare_dirs(tmp_path / "ref", tmp_path / "soc", decoded=compression != "none")
    assert ok, verdict
    assert f"bytes_in={sum(p.stat().st_size for p in (d / 'in').iterdir())}" in line.splitlines()[-1]


@pytest.mark.parametrize("runs", [5, 6, 9, 12, 17])
def test_cascade_plan_is_the_models(runs, tmp_path):
    """The host's cascade (lsmc.sim.tables.cascade_plan) mirrors the model's CascadePlan: the same number of passes
    as `table_model --ways 4 --stats` counts, every run merged once, the temporary runs in order."""
    import re
    import subprocess
    d = tmp_path / "job"
    assert tables.main(["make", str(d), "--runs", str(runs), "--entries", "20", "--compression", "none"]) == 0
    res = subprocess.run([str(tables.model_exe()), str(d / "job.json"), str(tmp_path / "m"), "--ways", "4", "--stats"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    plan = te_tables.cascade_plan(runs, 4)
    assert len(plan) == int(re.search(r"passes=(\d+)", res.stdout)[1])
    used = [i for p in plan for i in p]
    assert sorted(i for i in used if i >= 0) == list(range(runs))
    assert sorted(-1 - i for i in used if i < 0) == list(range(len(plan) - 1))
    assert all(len(p) <= 4 for p in plan)


def test_soc_preset_option_checked(job, tmp_path, capsys):
    """--soc-preset: the soc back end's only, a preset with table-engine units, enough units for --parts; --plan host
    only for the soc back end's parts."""
    base = ["compact", "--job", str(job), "--out-dir", str(tmp_path / "o")]
    assert tables.main([*base, "--backend", "model", "--soc-preset", PRESET]) == 2
    assert "the soc back end's SoC only" in capsys.readouterr().err
    assert tables.main([*base, "--backend", "soc", "--soc-preset", "table3-w128"]) == 2
    assert "not a SoC preset with table-engine units" in capsys.readouterr().err
    assert tables.main([*base, "--backend", "soc", "--soc-preset", "tables-m1", "--parts", "2"]) == 2
    assert "has 1 table-engine units" in capsys.readouterr().err
    # --plan host: who plans the soc back end's parts, so only with it and 2 parts or more
    assert tables.main([*base, "--backend", "model", "--parts", "2", "--plan", "host"]) == 2
    assert "--plan host: who plans the soc back end's parts" in capsys.readouterr().err
    assert tables.main([*base, "--backend", "soc", "--plan", "host"]) == 2
    assert "--plan host: who plans the soc back end's parts" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_job_past_the_host_region_refused(job, tmp_path, monkeypatch):
    """A job whose tables and buffers pass the SoC's host region of DDR is refused before the SoC runs, named as a
    capacity (`refused=limits`: LevelDB's hook counts it as soc-limits, not as a device error)."""
    from lsmc.build import regmap
    real = regmap.memmap()

    class Small:
        def base(self, name):
            return real.base(name)

        def size(self, name):
            return 4096 if name == "DDR_HOST" else real.size(name)

    monkeypatch.setattr(regmap, "memmap", lambda: Small())
    rc, _, err = te_tables.soc_job(job, tmp_path / "soc", preset=PRESET)
    assert rc == 1 and err.startswith("error=BAD_JOB ") and " refused=limits the job needs " in err, err
    assert "the host's region has 4096" in err


def test_soc_index_block_spills(tmp_path):
    """1 KiB keys and values (`key1k`, LevelDB's issue320_test's entries): the output table's index block passes the
    writer's 64 KiB buffer and spills into the region the descriptor gives (TE_DESC spill_base / spill_bytes, the
    harness's image places it after the output buffer): the model's table byte for byte on the SoC's unit, its index
    block over 64 KiB."""
    from te_rtl import make_jobs

    from lsmc.sim import te_plan
    job = make_jobs(tmp_path / "job", {"k": ("key1k", ["--entries", "400"])})["k"]
    rc, _, err = te_tables.run_job(tables.model_exe(), job, tmp_path / "model")
    assert rc == 0, err
    rc, _, err = te_tables.soc_job(job, tmp_path / "soc", preset=PRESET)
    assert rc == 0, err
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "soc")
    assert ok, verdict
    out = sorted((tmp_path / "soc").glob("*.ldb"))
    assert out and all(len(te_plan.index_block(t.read_bytes())) > 1 << 16 for t in out)
