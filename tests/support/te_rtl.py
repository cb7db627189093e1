"""What the table engine's unit tests share: the beat widths they build (4 bytes, the narrowest, only with
LSMC_LONG=1; 16, the engine's), a module fixture that builds a unit's harness at each width, the check
of a run that must agree with the model, and the job folders `lsmc tables make` writes for them."""
from __future__ import annotations

from pathlib import Path

import pytest

from lsmc.build.table_engine_rtl import summary

WIDTHS = (pytest.param(4, marks=pytest.mark.long), 16)


def width_fixture(build_harness):
    """A module-scoped fixture `width` over WIDTHS that builds the harness (`build_harness(width)`) first."""
    @pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"w{w}")
    def width(request):
        build_harness(request.param)
        return request.param
    return width


def run_ok(run, *args) -> dict:
    """`run(*args)`'s summary line, asserting the harness agreed with the model: exit 0, no mismatch, no
    stream-rule violation, no hang where the harness counts them; else the run's output."""
    res = run(*args)
    s = summary(res)
    assert res.returncode == 0 and s["mismatches"] == 0 and s["violations"] == 0 and s.get("hangs", 0) == 0, \
        f"{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    return s


def make_jobs(root: Path, specs: dict) -> dict:
    """One job folder per `name: (workload, extra make flags)` under `root` (uncompressed unless the flags say
    otherwise: the last --compression wins); name -> its job.json."""
    from lsmc import tables
    out = {}
    for name, (workload, flags) in specs.items():
        d = root / name
        assert tables.main(["make", str(d), "--workload", workload, "--compression", "none", *flags]) == 0
        out[name] = d / "job.json"
    return out


def engine_merge(ways: int) -> int:
    """The merge stage a K-way engine harness is built with: at K = 4 the SoC's unit's (presets.json's
    te_merge_bytes, the wider stage), so the tests build the engine the SoC and `--backend rtl` run; other K the
    ports' width (0)."""
    from lsmc.build import presets
    from lsmc.sim import tables
    return presets.te_merge_bytes() if ways == tables.RTL_WAYS else 0


# The SoC build every table-engine SoC test shares (a SoC build costs minutes of CPU): two 4-way units, as many
# as a test runs side by side; the report's own SoC (tables-m4) has four and builds for `scripts/demo tables`.
SOC_TEST_PRESET = "tables-m2"


def small_dbbench_job(tmp_path_factory) -> Path:
    """The table-engine SoC tests' job: 1,500 db_bench-like entries, compression off; its job.json."""
    return make_jobs(tmp_path_factory.mktemp("job"), {"dbbench": ("dbbench", ["--entries", "1500"])})["dbbench"]
