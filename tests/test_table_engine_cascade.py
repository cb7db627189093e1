"""Cascades on the table engine's RTL: a job with more runs than the engine's K ways runs as several passes
(hw/ip/table_engine/dv/table_engine_sim.cpp, the plan cycle_model::CascadePlan; doc/table_engine_top.md
"Cascades"), each intermediate pass merging runs into temporary tables in the engine's memory without a drop,
the final pass with the job's own options. Checked against the engine's C++ model, which merges every run at
once (itself byte-exact with LevelDB 1.23's compaction): Level-0-heavy jobs of K + 1 .. 3K runs made by
`lsmc tables make` (overwrites and deletions across runs merged in different passes, snapshots, base and
non-base levels, grandparents, 1 KiB keys and 64 KiB values) give the model's tables byte for byte with random
stalls, at K = 2 and 4; a bad table or a key in two runs, in any pass, gives the model's error code, table and
offset; the pass count is the closed form; the model's cycle estimate stays within 10 % of the RTL's cycles
on the named jobs of doc/model.md. The long sweep (every K + 1 .. 3K, more workloads) runs with LSMC_LONG=1."""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from te_rtl import engine_merge

from lsmc import tables
from lsmc.build import table_engine_top as top

W = 16
ROOT = Path(__file__).resolve().parents[1]


def make(root: Path, workload: str, runs: int, entries: int, *flags) -> Path:
    d = root / f"{workload}_{runs}_{entries}{'_'.join(flags)}"
    if not (d / "job.json").exists():
        assert tables.main(["make", str(d), "--workload", workload, "--runs", str(runs), "--input-level", "0",
                            "--entries", str(entries), "--compression", "none", *flags]) == 0
    return d / "job.json"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("cascade")


@pytest.fixture(scope="module")
def model():
    return tables.model_exe()


def run(cmd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(cmd), *map(str, args)], capture_output=True, text=True, timeout=900)


def cycles(line: str) -> int:
    return int(re.match(r"cycles=(\d+) ", line).group(1))


def same_as_model(model, job: Path, tmp: Path, ways: int, *args, merge: int | None = None) -> tuple[int, int]:
    """The RTL's tables are the model's; (RTL cycles, model estimate at the same ways and merge stage). `merge`
    None: te_rtl.engine_merge (K = 4: the SoC's unit, the wider stage)."""
    merge = engine_merge(ways) if merge is None else merge
    tmp.mkdir(parents=True, exist_ok=True)
    m = run(model, job, tmp / "model", "--ways", ways, *(["--merge-bytes", merge] if merge > W else []))
    assert m.returncode == 0, m.stderr
    r = run(top.build_harness(W, ways, merge), job, tmp / "rtl", *args)
    assert r.returncode == 0, r.stderr
    ok, verdict = tables.compare_dirs(tmp / "model", tmp / "rtl")
    assert ok, verdict
    return cycles(r.stdout.strip().splitlines()[-1]), cycles(m.stdout.strip().splitlines()[-1])


# (K, workload, runs, entries a run): deletions and overwrites in runs merged in different passes (snapshots:
# 30 % deletions, a snapshot in the middle), a non-base output level, grandparents that close outputs.
# On the SoC's 4-way engine (the 2-way engine, a whole build more, cascades in test_cascade_sweep: LSMC_LONG=1):
# 7, 9 and 11 runs take two, three and four passes.
DEFAULT = [(4, "snapshots", 7, 300), (4, "non-base", 9, 80), (4, "grandparents", 11, 60)]


@pytest.mark.parametrize("ways,workload,runs,entries", DEFAULT)
def test_cascade_byte_identical(root, model, tmp_path, ways, workload, runs, entries):
    job = make(root, workload, runs, entries)
    same_as_model(model, job, tmp_path, ways, "--stall", 0.3, "--seed", runs)


@pytest.mark.long
@pytest.mark.parametrize("ways", [2, 4])
@pytest.mark.parametrize("workload", ["snapshots", "non-base", "grandparents", "random", "key64"])
def test_cascade_sweep(root, model, tmp_path, ways, workload):
    """Every run count K + 1 .. 3K (runs merged in one, two and three levels of passes)."""
    for runs in range(ways + 1, 3 * ways + 1):
        job = make(root, workload, runs, 60 if workload == "random" else 300)
        same_as_model(model, job, tmp_path / str(runs), ways, "--stall", 0.3, "--seed", runs)


def error_fields(text: str) -> str:
    line = text.strip().splitlines()[-1]
    return " ".join(line.split(" ")[:3])


def test_passes_closed_form(root, model, tmp_path):
    """The plan's passes (model --stats) are the fewest a K-way merge needs: 1 + ceil((n - K) / (K - 1))."""
    job = make(root, "dbbench", 12, 20)
    for ways in (2, 4, 8):
        m = run(model, job, tmp_path / f"o{ways}", "--ways", ways, "--stats")
        assert m.returncode == 0, m.stderr
        passes = int(re.search(r"passes=(\d+)", m.stdout).group(1))
        assert passes == 1 + max(0, math.ceil((12 - ways) / (ways - 1)))


# (K, what): a block byte flipped with verify_checksums on in a run read by the first pass, by a later
# intermediate pass, by the final pass; a run given twice (a key in two runs, met after one went through a
# temporary table).
# The 2-way cases (an intermediate pass) need the 2-way engine, a whole build more: LSMC_LONG=1.
_K2 = pytest.mark.long
ERRORS = [pytest.param(2, "crc", 0, marks=_K2), pytest.param(2, "crc", 3, marks=_K2), (4, "crc", 4),
          pytest.param(2, "two-runs", 3, marks=_K2), (4, "two-runs", 3)]


@pytest.mark.parametrize("ways,kind,at", ERRORS)
def test_cascade_error_is_the_models(root, model, tmp_path, ways, kind, at):
    """An error in any pass names the user's table and offset as the model does, never a temporary table;
    one line, no output."""
    src = make(root, "snapshots", 5, 200)
    d = tmp_path / "job"
    shutil.copytree(src.parent, d)
    job = json.loads((d / "job.json").read_text())
    if kind == "crc":
        t = d / job["runs"][at][0]
        blob = bytearray(t.read_bytes())
        blob[len(blob) // 3] ^= 0x01
        t.write_bytes(bytes(blob))
        job["options"]["verify_checksums"] = True
    else:
        job["runs"][at] = job["runs"][0]
    (d / "job.json").write_text(json.dumps(job))
    m = run(model, d / "job.json", tmp_path / "model", "--ways", ways)
    # the engine every other K-way test builds (te_rtl.engine_merge): the merge stage does not reach errors
    r = run(top.build_harness(W, ways, engine_merge(ways)), d / "job.json", tmp_path / "rtl", "--stall", 0.2)
    assert m.returncode == 1 and r.returncode == 1, (m.stderr, r.stderr)
    assert error_fields(r.stderr) == error_fields(m.stderr)
    assert "temporary" not in error_fields(r.stderr) and "cascade pass" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "rtl").exists()


def calibration_rows() -> list[tuple[str, int, int, int, int]]:
    """doc/model.md's cascade table: (job, K, runs, RTL cycles, model cycles) per named job."""
    text = (ROOT / "hw/ip/table_engine/doc/model.md").read_text()
    rows = re.findall(r"^\| `([\w-]+)` \| (\d+) \| (\d+) \| [\d,]+ \| ([\d,]+) \| [\d,]+ \| ([\d,]+) \|", text, re.M)
    assert rows, "doc/model.md has no cascade calibration table"
    return [(j, int(k), int(n), int(r.replace(",", "")), int(c.replace(",", ""))) for j, k, n, r, c in rows]


# The named jobs: `lsmc tables make --workload W --runs N --input-level 0 --entries E --compression none`.
CALIBRATION = {"dbbench-5": ("dbbench", 5, 2000), "dbbench-8": ("dbbench", 8, 2000),
               "dbbench-12": ("dbbench", 12, 1000), "key64-8": ("key64", 8, 1000),
               "snapshots-8": ("snapshots", 8, 2000), "dbbench-3": ("dbbench", 3, 2000),
               "dbbench-6": ("dbbench", 6, 1000), "non-base-6": ("non-base", 6, 2000)}


def check_calibration(root, model, tmp_path, names):
    rows = {r[0]: r for r in calibration_rows()}
    for name in names:
        workload, runs, entries = CALIBRATION[name]
        _, ways, n, rtl_doc, model_doc = rows[name]
        assert n == runs
        # doc/model.md's figures are the narrow merge stage's (the ports' 16 bytes)
        rtl, est = same_as_model(model, make(root, workload, runs, entries), tmp_path / name, ways, merge=W)
        assert (rtl, est) == (rtl_doc, model_doc), f"{name}: doc/model.md out of date"
        # A non-base job's final pass walks deeper levels, which the estimate does not charge (doc/model.md).
        if not name.startswith("non-base"):
            assert abs(est - rtl) <= 0.10 * rtl, f"{name}: estimate {est}, RTL {rtl}"


def test_cascade_estimate_within_10pct(root, model, tmp_path):
    """One named job (K = 2, three passes): the RTL's cycles and the model's estimate are doc/model.md's and
    within 10 % of each other."""
    check_calibration(root, model, tmp_path, ["dbbench-6"])


@pytest.mark.long
def test_cascade_calibration_all(root, model, tmp_path):
    check_calibration(root, model, tmp_path, list(CALIBRATION))


def test_cli_level0_backend_rtl(root, tmp_path, capsys):
    """`lsmc tables make --workload level0` (8 Level-0 tables and a Level-1 run: 9 runs) and `lsmc tables compact
    --backend rtl` (K = 4: three passes) give the model back end's tables."""
    d = root / "level0"
    assert tables.main(["make", str(d), "--workload", "level0", "--entries", "150", "--compression", "none"]) == 0
    assert len(json.loads((d / "job.json").read_text())["runs"]) == 9
    for backend in ("model", "rtl"):
        assert tables.main(["compact", "--job", str(d / "job.json"), "--out-dir", str(tmp_path / backend),
                            "--backend", backend]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("cycles=") and lines[-1].split()[1:] == lines[-2].split()[1:]
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "rtl")
    assert ok, verdict
