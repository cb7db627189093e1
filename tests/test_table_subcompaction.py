"""Sub-compactions on the table engine's C++ model (`table_model JOB OUT --parts P`,
hw/ip/table_engine/model/subcompaction.h) against the reference compactor built from LevelDB's own
code (table_ref): the parts' output tables, read back through LevelDB's Table reader (checksums
verified) and concatenated in file-number order, hold exactly the entries of the single job LevelDB's
code writes; the parts' key ranges are disjoint and ascending; P=1 is the job as without --parts;
mutated input tables give a result or one named error under ASan/UBSan; the doc's cost table is a
copy of subcompaction.h."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsmc import tables
from lsmc.build.table_model import build_table_model
from lsmc.build.table_ref import build_table_ref
from lsmc.model import sstable
from lsmc.model.table_workloads import Workload

PARTS = (1, 2, 3, 4, 8)


@pytest.fixture(scope="module")
def ref() -> Path:
    return build_table_ref()


@pytest.fixture(scope="module")
def model() -> Path:
    return build_table_model()


def run(cmd) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)


def entries(ref: Path, out: Path) -> list[str]:
    """Every entry of out's tables in file-number order, through LevelDB's reader with CRCs checked."""
    res = sstable.read_result(out / "result.json")
    got = []
    for t in sorted(res["tables"], key=lambda t: t["number"]):
        r = run([ref, "dump", "--verify", out / t["file"]])
        assert r.returncode == 0, f"{t['file']}: {r.stderr}"
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("entry ")]
        assert len(lines) == t["entries"]
        got += lines
    return got


def user(hex_key: str) -> bytes:
    return bytes.fromhex(hex_key)[:-8]


def check_parts(ref: Path, model: Path, job: Path, work: Path, parts: int, expected: list[str]) -> dict:
    out = work / f"p{parts}"
    r = run([model, job, out, "--parts", parts])
    assert r.returncode == 0, r.stderr
    line = sstable.parse_run_line(r.stdout.splitlines()[-1])
    res = json.loads((out / "result.json").read_text())
    assert entries(ref, out) == expected
    tabs = res["tables"]
    assert line["tables_out"] == len(tabs) and line["bytes_out"] == res["bytes_out"]
    # File numbers in part order from first_file_number; tables ascending and apart by user key.
    first = json.loads(job.read_text())["first_file_number"]
    assert [t["number"] for t in tabs] == list(range(first, first + len(tabs)))
    for a, b in zip(tabs, tabs[1:]):
        assert user(a["largest"]) < user(b["smallest"]), (a, b)
    if parts > 1:
        assert line["parts"] == parts and line["cycles"] >= line["bracket"] + line["plan"]
        assert len(res["parts"]) == parts
        assert res["cycles"]["whole_job"] == line["cycles"] and res["cycles"]["bracket"] == line["bracket"]
        assert line["bracket"] == max(p["cycles"] for p in res["parts"])
        for p in res["parts"]:  # each part's tables inside its range (lo, hi]
            for t in tabs[p["first_table"]:p["first_table"] + p["tables_out"]]:
                if p["lo"] is not None:
                    assert user(t["smallest"]) > bytes.fromhex(p["lo"])
                if p["hi"] is not None:
                    assert user(t["largest"]) <= bytes.fromhex(p["hi"])
        his = [bytes.fromhex(p["hi"]) for p in res["parts"] if p["hi"] is not None]
        assert his == sorted(set(his))
        assert sum(p["entries_in"] for p in res["parts"]) == res["entries_in"]
    return res


def check_job(ref: Path, model: Path, job: Path, work: Path, parts=PARTS) -> None:
    r = run([ref, "compact", job, work / "ref"])
    assert r.returncode == 0, r.stderr
    expected = entries(ref, work / "ref")
    assert expected, "the job keeps no entry"
    ref_res = sstable.read_result(work / "ref" / "result.json")
    for p in parts:
        res = check_parts(ref, model, job, work, p, expected)
        for k in ("entries_in", "entries_out", "dropped", "bytes_in"):
            assert res[k] == ref_res[k], (p, k)


WORKLOADS = {
    "dbbench": dict(tables.WORKLOADS["dbbench"], entries=3000),
    "snapshots": tables.WORKLOADS["snapshots"],
    "non-base": tables.WORKLOADS["non-base"],
    "grandparents": tables.WORKLOADS["grandparents"],
    "key64": dict(tables.WORKLOADS["key64"], entries=1500, options={"compression": "none"}),
    "random": tables.WORKLOADS["random"],
    "one-entry-per-table": tables.WORKLOADS["one-entry"],
    "small-blocks-level1": dict(runs=2, entries=2000, input_level=1, deletions=0.3,
                                options={"block_size": 256, "max_file_size": 20000}),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_parts_hold_the_single_jobs_entries(ref, model, tmp_path, name):
    spec = dict(WORKLOADS[name])
    w = Workload(**spec)
    tables.make_job(tmp_path / "job", w, ref)
    check_job(ref, model, tmp_path / "job" / "job.json", tmp_path)


def test_one_part_is_the_job_as_before(ref, model, tmp_path):
    """--parts 1: the same tables, result.json and stdout line as without --parts."""
    tables.make_job(tmp_path / "job", Workload(runs=4, entries=3000, snapshot=True, deletions=0.2), ref)
    job = tmp_path / "job" / "job.json"
    a, b = run([model, job, tmp_path / "a"]), run([model, job, tmp_path / "b", "--parts", "1"])
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout
    same, verdict = tables.compare_dirs(tmp_path / "a", tmp_path / "b")
    assert same, verdict
    assert (tmp_path / "a" / "result.json").read_bytes() == (tmp_path / "b" / "result.json").read_bytes()


def test_more_parts_than_blocks(ref, model, tmp_path):
    """One data block in all: P=8 leaves the parts past the block empty (not dispatched, no tables)."""
    folder = tmp_path / "job"
    (folder / "in").mkdir(parents=True)
    ents = [(sstable.internal_key(b"k%03d" % i, 10 + i), b"v") for i in range(20)]
    tables.make_table(ref, folder / "in" / "000001.ldb", ents, {"compression": "none"})
    sstable.write_job(sstable.Job(runs=[["in/000001.ldb"]], options={"compression": "none"}, smallest_snapshot=100),
                      folder / "job.json")
    check_job(ref, model, folder / "job.json", tmp_path, parts=(8,))
    res = json.loads((tmp_path / "p8" / "result.json").read_text())
    assert sum(1 for p in res["parts"] if p["tables_out"]) == 1
    assert [p["cycles"] for p in res["parts"]].count(0) >= 7


def test_all_entries_one_user_key(ref, model, tmp_path):
    """Every version of one user key, over many blocks and three runs: one part holds them all."""
    folder = tmp_path / "job"
    (folder / "in").mkdir(parents=True)
    names = []
    for r in range(3):
        ents = [(sstable.internal_key(b"the-only-key", 1000 - 3 * i - r), b"x" * 50) for i in range(300)]
        name = f"in/{sstable.table_name(r + 1)}"
        tables.make_table(ref, folder / name, ents, {"compression": "none", "block_size": 512})
        names.append([name])
    sstable.write_job(sstable.Job(runs=names, options={"compression": "none", "block_size": 512},
                                  smallest_snapshot=500), folder / "job.json")
    check_job(ref, model, folder / "job.json", tmp_path, parts=(2, 4, 8))
    res = json.loads((tmp_path / "p4" / "result.json").read_text())
    assert sum(1 for p in res["parts"] if p["entries_in"]) == 1


def test_balance_on_dbbench(ref, model, tmp_path):
    """Four parts of a db_bench job read within 5 % of the mean bytes each."""
    tables.make_job(tmp_path / "job", Workload(runs=4, entries=20000), ref)
    r = run([model, tmp_path / "job" / "job.json", tmp_path / "p4", "--parts", 4])
    assert r.returncode == 0, r.stderr
    b = [p["bytes"] for p in json.loads((tmp_path / "p4" / "result.json").read_text())["parts"]]
    assert max(b) <= 1.05 * sum(b) / len(b), b


def test_index_that_does_not_bound_its_blocks_is_an_error(ref, model, tmp_path):
    """A run whose second table's keys lie below its first table's: the reader names KEY_ORDER or
    BAD_BLOCK; no part silently drops the keys."""
    folder = tmp_path / "job"
    (folder / "in").mkdir(parents=True)
    hi = [(sstable.internal_key(b"z%05d" % i, 5), b"v" * 40) for i in range(400)]
    lo = [(sstable.internal_key(b"a%05d" % i, 5), b"v" * 40) for i in range(400)]
    other = [(sstable.internal_key(b"m%05d" % i, 7), b"v" * 40) for i in range(800)]
    opts = {"compression": "none", "block_size": 512}
    for name, ents in (("000001.ldb", hi), ("000002.ldb", lo), ("000003.ldb", other)):
        tables.make_table(ref, folder / "in" / name, ents, opts)
    sstable.write_job(sstable.Job(runs=[["in/000003.ldb"], ["in/000001.ldb", "in/000002.ldb"]], options=opts,
                                  smallest_snapshot=100), folder / "job.json")
    for p in (1, 2, 4):
        r = run([model, folder / "job.json", tmp_path / f"p{p}", "--parts", p])
        assert r.returncode == 1 and r.stderr.split()[0] in ("error=KEY_ORDER", "error=BAD_BLOCK"), r.stderr
        assert not (tmp_path / f"p{p}").exists() or not any((tmp_path / f"p{p}").iterdir())


def test_parts_need_the_model_or_rtl_back_end(tmp_path):
    r = run(["python3", "-m", "lsmc", "tables", "compact", "--job", tmp_path / "job.json", "--out-dir",
             tmp_path / "o", "--parts", "2", "--backend", "reference"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--parts 2" in r.stderr, r.stderr


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(w=st.builds(Workload, runs=st.sampled_from((2, 4)), entries=st.integers(1, 200),
                   keys=st.sampled_from(("dbbench", "random")), values=st.sampled_from(("dbbench", "empty")),
                   deletions=st.floats(0, 0.5), snapshot=st.booleans(), entries_per_table=st.integers(0, 3),
                   seed=st.integers(0, 2**31), options=st.just({"compression": "none", "block_size": 200})),
       parts=st.integers(2, 8))
def test_random_small_jobs(ref, model, tmp_path_factory, w, parts):
    work = tmp_path_factory.mktemp("sub")
    tables.make_job(work / "job", w, ref)
    r = run([ref, "compact", work / "job" / "job.json", work / "ref"])
    assert r.returncode == 0, r.stderr
    check_parts(ref, model, work / "job" / "job.json", work, parts, entries(ref, work / "ref"))


def test_doc_firmware_costs_match_the_model():
    """hw/ip/table_engine/doc/model.md's table of the firmware's costs is a copy of subcompaction.h."""
    from lsmc.build import table_model

    header = (table_model.MODEL / "subcompaction.h").read_text()
    ns = header[header.index("namespace fw_cost"):]
    code = {f"fw_cost::{k}": int(v) for k, v in re.findall(r"constexpr uint64_t (k\w+) = (\d+);", ns)}
    code.update((k, int(v)) for k, v in re.findall(r"constexpr uint64_t (kSamplesPerPart) = (\d+);", header))
    doc = (table_model.MODEL.parent / "doc" / "model.md").read_text()
    sec = doc[doc.index("## Sub-compactions"):]
    table = {k: int(v) for k, v in re.findall(r"^\| `((?:fw_cost::)?k\w+)` \| (\d+) \| [^|]+ \|$", sec, re.M)}
    assert len(code) == 10 and table == code


@pytest.fixture(scope="module")
def model_asan() -> Path:
    return build_table_model(sanitize=True)


@pytest.fixture(scope="module")
def small_job(ref, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mut") / "job"
    tables.make_job(folder, Workload(runs=3, entries=300, deletions=0.2,
                                     options={"compression": "snappy", "block_size": 256}), ref)
    return folder


ERROR_LINE = re.compile(r"^error=[A-Z_]+ table=\S+ offset=\d+ .+$")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), parts=st.integers(2, 8))
def test_mutated_tables_give_a_result_or_one_named_error(model_asan, small_job, tmp_path_factory, data, parts):
    """Bytes of an input table flipped (index blocks included, CRCs unchecked): under ASan/UBSan the
    sub-compaction gives a result or one named error line, never a crash or a hang."""
    import shutil

    work = tmp_path_factory.mktemp("m")
    shutil.copytree(small_job, work / "job")
    names = sorted((work / "job" / "in").glob("*.ldb"))
    victim = names[data.draw(st.integers(0, len(names) - 1))]
    b = bytearray(victim.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] ^= data.draw(st.integers(1, 255))
    victim.write_bytes(bytes(b))
    r = subprocess.run([str(model_asan), str(work / "job" / "job.json"), str(work / "out"), "--parts", str(parts)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    if r.returncode == 1:
        assert ERROR_LINE.match(r.stderr.strip()) and len(r.stderr.strip().splitlines()) == 1, r.stderr
