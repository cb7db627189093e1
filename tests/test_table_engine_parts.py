"""Sub-compaction parts on the whole table engine's RTL (doc/table_engine_top.md, "Sub-compaction parts"): a part is
a job of its own on the engine, each input table read in its window of data blocks and only the user keys in the
part's (lo, hi] kept (model/subcompaction.h). For P = 2, 3, 4 parts of real jobs (db_bench-like, snapshots, a
non-base output level, random keys of 1 to 1,024 bytes, Snappy, a job of more runs than the engine's ways, which
each part runs as a cascade) every part runs on the RTL with random stalls and must give the model's per-part
output byte for byte (`table_model --parts P`: the same plan, the same tables in part order, the same per-part
counts), and the parts together must hold every entry of the job once. Hand-made parts (the harness's --part, the
model's output of the same part by --reference): a split inside a block read by both neighbours, an empty part, a
part of one entry, bounds of 1 byte and near the engine's key limit; a part whose bound is off by one key must
differ (the comparison can fail); a window past the index or with its first block above its end is one named
error line, never a hang."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from te_rtl import engine_merge, make_jobs

from lsmc import tables
from lsmc.build import table_engine_top as top

W, K = 16, 4
JOBS = {
    "dbbench": ("dbbench", ["--entries", "1500"]),
    "snapshots": ("snapshots", ["--entries", "800"]),
    "non-base": ("non-base", ["--entries", "1500"]),
    "random": ("random", ["--entries", "60"]),
    "snappy": ("dbbench", ["--entries", "1500", "--compression", "snappy"]),
    "cascade": ("dbbench", ["--entries", "500", "--runs", "6"]),  # 6 runs on 4 ways: each part a cascade
}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return make_jobs(tmp_path_factory.mktemp("jobs"), JOBS)


@pytest.fixture(scope="module")
def engine():
    return top.build_harness(W, K, engine_merge(K))


def run(exe: Path, job: Path, out: Path, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), str(job), str(out), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def ok(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().splitlines()[-1]


def same(a: Path, b: Path) -> dict:
    """`lsmc tables compare` of two output folders (the tables byte for byte, result.json's counts and parts but
    for the model's estimates and the RTL's clocks); a's result.json."""
    same_, verdict = tables.compare_dirs(a, b)
    assert same_, verdict
    return json.loads((a / "result.json").read_text())


def whole_entries_in(job: Path, tmp: Path) -> int:
    res = subprocess.run([str(tables.model_exe()), str(job), str(tmp / "whole")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return json.loads((tmp / "whole" / "result.json").read_text())["entries_in"]


@pytest.mark.parametrize("name", list(JOBS))
@pytest.mark.parametrize("parts", [2, 3, 4])
def test_parts_same_as_model(jobs, engine, tmp_path, name, parts):
    """Every part of the model's plan on the RTL, 30 % stalls: the model's tables (numbered in part order), its
    per-part bounds and counts; the parts hold every entry of the job once."""
    if name == "dbbench" and parts == 2:  # the CLI's rtl back end runs the parts too
        cli = tmp_path / "cli"
        assert tables.main(["compact", "--job", str(jobs[name]), "--out-dir", str(cli), "--backend", "rtl",
                            "--parts", "2"]) == 0
        assert json.loads((cli / "result.json").read_text())["parts"][1]["lo"]
    job = jobs[name]
    m = subprocess.run([str(tables.model_exe()), str(job), str(tmp_path / "model"), "--parts", str(parts)],
                       capture_output=True, text=True, timeout=600)
    assert m.returncode == 0, m.stderr
    line = ok(run(engine, job, tmp_path / "rtl", "--parts", parts, "--stall", 0.3, "--seed", parts))
    assert f"parts={parts} bracket=" in line
    r = same(tmp_path / "model", tmp_path / "rtl")
    assert len(r["parts"]) == parts
    if name != "random":  # 60 entries a run: too few blocks to split
        assert sum(1 for p in r["parts"] if p["entries_in"]) >= 2, r["parts"]
    assert r["entries_in"] == whole_entries_in(job, tmp_path)


# ---- hand-made parts ----
def user_keys(job: Path) -> list[bytes]:
    """Every input entry's user key (through LevelDB's reader), sorted, one per version."""
    ref = tables.reference_exe()
    spec = json.loads(job.read_text())
    keys = []
    for run_ in spec["runs"]:
        for t in run_:
            for e in tables.dump_entries(ref, job.parent / t):
                keys.append(bytes.fromhex(e.split()[1])[:-8])
    return sorted(keys)


def whole_windows(job: Path) -> list[list[int]]:
    runs = json.loads(job.read_text())["runs"]
    return [[r, 0, len(t) - 1, 0, 0] for r, t in enumerate(runs)]


def run_part(engine, job: Path, tmp: Path, name: str, lo: bytes | None, hi: bytes | None, windows=None,
             reference_hi: bytes | None = None) -> dict:
    """The part on the RTL (20 % stalls) and the model's output of it (--reference; `reference_hi` there instead
    of hi: the tamper case); same() asserts they agree and returns the counts."""
    def write(h):
        p = tmp / f"{name}-{h is reference_hi}.json"
        p.write_text(json.dumps({"lo": lo.hex() if lo is not None else None, "hi": h.hex() if h is not None else None,
                                 "windows": windows or whole_windows(job)}))
        return p
    ok(run(engine, job, tmp / f"{name}-rtl", "--part", write(hi), "--stall", 0.2, "--seed", 7))
    ok(run(engine, job, tmp / f"{name}-model", "--part", write(reference_hi if reference_hi is not None else hi),
           "--reference"))
    return same(tmp / f"{name}-model", tmp / f"{name}-rtl")["parts"][0]


def test_split_inside_a_block(jobs, engine, tmp_path):
    """A split at a key in the middle of the job (inside a data block of every run that holds it, so both
    neighbours read that block), each side kept by one part: the model's output each, every entry once."""
    job = jobs["dbbench"]
    keys = user_keys(job)
    k = keys[len(keys) // 2]
    a = run_part(engine, job, tmp_path, "below", None, k)
    b = run_part(engine, job, tmp_path, "above", k, None)
    assert a["entries_in"] == sum(1 for x in keys if x <= k) and b["entries_in"] == sum(1 for x in keys if x > k)
    assert a["entries_in"] and b["entries_in"]


def test_empty_and_one_entry_parts(jobs, engine, tmp_path):
    """(k, k] and a part above every key hold nothing: no table, nothing read into the merge; (p, u] with u a
    user key of one version and p the key before it holds that one entry."""
    job = jobs["dbbench"]
    keys = user_keys(job)
    k = keys[len(keys) // 3]
    for name, lo, hi in (("empty", k, k), ("above-all", keys[-1], None)):
        r = run_part(engine, job, tmp_path, name, lo, hi)
        assert r["entries_in"] == 0 and r["tables_out"] == 0, (name, r)
    i = next(i for i in range(1, len(keys) - 1) if keys[i - 1] < keys[i] < keys[i + 1])
    r = run_part(engine, job, tmp_path, "one", keys[i - 1], keys[i])
    assert r["entries_in"] == 1 and r["tables_out"] == 1


def test_bounds_of_one_byte_and_near_the_key_limit(jobs, engine, tmp_path):
    """Random keys of 1 to 1,024 bytes cut by bounds of 1 byte and of 1,023 and 1,024 bytes (the engine's user-key
    limit): each part the model's, the parts every entry once."""
    job = jobs["random"]
    keys = user_keys(job)
    cuts = [b"m", b"m" * 1023, b"\xf0" * 1024]
    assert max(map(len, keys)) > 900
    bounds = list(zip([None, *cuts], [*cuts, None]))
    n = [run_part(engine, job, tmp_path, f"p{i}", lo, hi)["entries_in"] for i, (lo, hi) in enumerate(bounds)]
    assert n == [sum(1 for x in keys if (lo is None or x > lo) and (hi is None or x <= hi)) for lo, hi in bounds]
    assert sum(n) == len(keys)


def test_tampered_bound_differs(jobs, engine, tmp_path):
    """The RTL's part (None, k] against the model's (None, k'], k' the next user key: the comparison must fail."""
    job = jobs["dbbench"]
    keys = sorted(set(user_keys(job)))
    k, k2 = keys[len(keys) // 2], keys[len(keys) // 2 + 1]
    with pytest.raises(AssertionError, match="DIFFERENT"):
        run_part(engine, job, tmp_path, "tamper", None, k, reference_hi=k2)


@pytest.mark.parametrize("window", [[3, 2], [0, 100000], [5000, 0]], ids=["first-above-end", "end-past-index",
                                                                          "first-past-index"])
def test_bad_window_is_named(jobs, engine, tmp_path, window):
    """A window the table's index does not have: one line naming the table (BAD_JOB), exit 1, no hang."""
    job = jobs["dbbench"]
    part = tmp_path / "part.json"
    part.write_text(json.dumps({"lo": None, "hi": None, "windows": [[0, 0, 0, *window]]}))
    res = run(engine, job, tmp_path / "out", "--part", part, "--stall", 0.2, timeout=120)
    first = json.loads(job.read_text())["runs"][0][0]
    assert res.returncode == 1 and res.stderr.count("\n") <= 1, res.stderr
    assert res.stderr.startswith(f"error=BAD_JOB table={job.parent / first} ") and "block window" in res.stderr
    assert not (tmp_path / "out").exists()
