"""The table engine's reference compactor (hw/ip/table_engine/dv/reference/table_ref) against stock
LevelDB 1.23 (Debian's libleveldb, driven by ldb_stock) and against the drop rules written out plainly.

- Stock LevelDB compacts a DB whose levels hold a generated job's tables (table_ref make-db): every
  compaction it logs in its MANIFEST, repeated by the reference from the same inputs, gives LevelDB's
  output tables byte for byte, and the job as generated gives the same entries and file boundaries.
- Stock LevelDB fills a DB of its own (random puts, overwrites, deletions): every compaction it ran,
  found in the MANIFEST (removed files are kept by ldb_stock's Env), is reproduced byte for byte.
- Generated jobs (Hypothesis) keep exactly the entries the plain-Python rules keep; the tables the
  reference writes read back through stock LevelDB's Table reader.
- Bad jobs and mutated tables: one `error=CODE table=... offset=...` line, no partial output, no hang.
The long sweep (LSMC_LONG=1): bigger fills, Snappy on and off, 64-byte keys, ShouldStopBefore splits."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsmc import tables
from lsmc.build.table_ref import build_table_ref, stock_driver
from lsmc.model import sstable
from lsmc.model.table_workloads import Workload, expected_entries, generate

LONG = os.environ.get("LSMC_LONG") == "1"
ERROR_LINE = re.compile(r"^error=(\w+) table=(\S+) offset=(-?\d+) .+$")


@pytest.fixture(scope="module")
def ref() -> Path:
    return build_table_ref()


@pytest.fixture(scope="module")
def stock(ref) -> Path:
    return stock_driver()


def run(cmd, timeout=300, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)


def compact(ref: Path, job: Path, out: Path):
    return run([ref, "compact", job, out])


def dump(exe: Path, table: Path) -> list[str]:
    r = run([exe, "dump", table])
    assert r.returncode == 0, r.stderr
    return [ln for ln in r.stdout.splitlines() if ln.startswith("entry ")]


def write_captured_job(job: sstable.Job, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "job.json"
    sstable.write_job(job, path)
    return path


def db_table(db: Path, n: int) -> Path:
    p = db / sstable.table_name(n)
    return p if p.exists() else db / "kept" / sstable.table_name(n)


def check_manifest_compactions(ref: Path, db: Path, options: dict, work: Path) -> list[sstable.CapturedCompaction]:
    """Every compaction stock LevelDB logged in db's MANIFEST, repeated by the reference: byte-identical
    output tables. Returns the compactions."""
    manifest = (db / "CURRENT").read_text().strip()
    comps = sstable.compactions_from_manifest(sstable.read_manifest(db / manifest), lambda n: db_table(db, n),
                                              options)
    for i, c in enumerate(comps):
        job = write_captured_job(c.job, work / f"c{i}")
        out = work / f"c{i}" / "out"
        r = compact(ref, job, out)
        assert r.returncode == 0, f"compaction {i}: {r.stderr}"
        result = sstable.read_result(out / "result.json")
        assert len(result["tables"]) == len(c.outputs), (
            f"compaction {i} (level {c.level}, {sum(map(len, c.job.runs))} inputs): "
            f"{len(result['tables'])} tables, LevelDB wrote {len(c.outputs)}")
        for t, n in zip(result["tables"], c.outputs):
            mine, theirs = (out / t["file"]).read_bytes(), db_table(db, n).read_bytes()
            assert mine == theirs, f"compaction {i}: {t['file']} differs from LevelDB's {sstable.table_name(n)}"
    return comps


# ------------------------------------------------------------------------ stock LevelDB, generated jobs
STOCK_CASES = {
    "dbbench-snappy": Workload(runs=4, entries=3000),
    "dbbench-none-bloom": Workload(runs=3, entries=3000, options={"compression": "none", "bloom_bits_per_key": 10}),
    "snapshot-deletions": Workload(runs=4, entries=1500, snapshot=True, deletions=0.4),
    "non-base-level1": Workload(runs=2, entries=1500, input_level=1, base_level=False, deletions=0.4),
    # one table per run: a manual compaction of a level >= 1 takes files up to max_file_size only
    "grandparents-split": Workload(runs=2, entries=30000, input_level=1, grandparent_bytes=24 << 20,
                                   entries_per_table=30000, options={"max_file_size": 1 << 20, "compression": "none"}),
    "random-keys-small-blocks": Workload(runs=3, entries=150, keys="random", values="random",
                                         options={"block_size": 1024, "block_restart_interval": 4}),
    "key64-one-entry-tables": Workload(runs=2, entries=40, keys="key64", input_level=2, entries_per_table=1),
}


@pytest.mark.parametrize("name", sorted(STOCK_CASES))
def test_stock_leveldb_compacts_generated_jobs(ref, stock, tmp_path, name):
    w = STOCK_CASES[name]
    folder = tmp_path / "job"
    job = tables.make_job(folder, w, ref)
    db = tmp_path / "db"
    r = run([ref, "make-db", folder / "layout.json", db])
    assert r.returncode == 0, r.stderr
    r = run([stock, "compact", db, json.dumps(job.options)])
    assert r.returncode == 0, r.stderr
    comps = check_manifest_compactions(ref, db, job.options, tmp_path / "captured")
    assert comps, "stock LevelDB ran no compaction"
    first = comps[0]
    # LevelDB compacted exactly the job's inputs (same table bytes, same runs) ...
    mine = [[(folder / p).read_bytes() for p in run_] for run_ in job.runs]
    theirs = [[Path(p).read_bytes() for p in run_] for run_ in first.job.runs]
    if w.input_level == 0:  # Level-0 runs: LevelDB orders them by file number, the job newest first
        assert sorted(map(tuple, mine)) == sorted(map(tuple, theirs))
    else:
        assert mine == theirs
    # ... and the job as generated (its own snapshot, grandparents, deeper levels) gives the same
    # entries and file boundaries as LevelDB's first compaction.
    out = tmp_path / "out"
    r = compact(ref, folder / "job.json", out)
    assert r.returncode == 0, r.stderr
    res = sstable.read_result(out / "result.json")
    assert [dump(stock, out / t["file"]) for t in res["tables"]] == \
        [dump(stock, db_table(db, n)) for n in first.outputs]
    if name == "grandparents-split":  # ShouldStopBefore closed files below max_file_size
        sizes = [t["size"] for t in res["tables"]]
        assert len(sizes) > 1 and min(sizes[:-1]) < (1 << 20)
    if name == "snapshot-deletions":  # the snapshot kept some hidden versions
        assert res["entries_out"] > len(expected_entries(
            [t.entries for run_ in generate(w).runs for t in run_], generate(w).last_sequence, []))


# -------------------------------------------------------------------- stock LevelDB's own compactions
FILLS = {
    "fill-snappy": ({"write_buffer_size": 128 << 10}, 40000, 16, 100, 7),
    "fill-none-key64": ({"write_buffer_size": 128 << 10, "compression": "none", "block_restart_interval": 8},
                        15000, 64, 100, 5),
    # long: enough data for level-2 grandparents to pass 10 x max_file_size (ShouldStopBefore splits)
    "long-snappy-split": ({"write_buffer_size": 1 << 20, "max_file_size": 1 << 20}, 600000, 16, 100, 11),
    "long-none-split": ({"write_buffer_size": 1 << 20, "max_file_size": 1 << 20, "compression": "none"},
                        400000, 16, 100, 0),
    "long-bloom-key64": ({"write_buffer_size": 512 << 10, "bloom_bits_per_key": 10}, 150000, 64, 400, 3),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n.startswith("long") else n
                                  for n in sorted(FILLS)])
def test_stock_leveldb_own_compactions_reproduced(ref, stock, tmp_path, name):
    opts, ops, key_bytes, value_bytes, delete_every = FILLS[name]
    db = tmp_path / "db"
    r = run([stock, "fill", db, json.dumps(opts), ops, 1, key_bytes, value_bytes, delete_every], timeout=1800)
    assert r.returncode == 0, r.stderr
    job_opts = {k: v for k, v in opts.items() if k in sstable.OPTION_DEFAULTS}
    comps = check_manifest_compactions(ref, db, job_opts, tmp_path / "captured")
    assert len(comps) >= 3, f"only {len(comps)} compactions"
    assert any(c.level == 0 for c in comps) and any(c.job.deeper_levels and any(c.job.deeper_levels) for c in comps)
    if name.endswith("-split"):  # grandparents past ShouldStopBefore's limit: it had to split outputs
        limit = 10 * opts["max_file_size"]
        assert any(sum(g["size"] for g in c.job.grandparents) > limit for c in comps)


# ------------------------------------------------------------------ generated jobs: the drop rules
FIXTURES_OK = [HealthCheck.function_scoped_fixture]


@settings(max_examples=12 if not LONG else 80, deadline=None, suppress_health_check=FIXTURES_OK)
@given(w=st.builds(Workload, runs=st.sampled_from((2, 4, 8)), entries=st.integers(1, 200),
                   keys=st.sampled_from(("dbbench", "key64", "random")),
                   values=st.sampled_from(("dbbench", "random", "empty")), deletions=st.floats(0, 0.6),
                   snapshot=st.booleans(), base_level=st.booleans(), entries_per_table=st.integers(0, 3),
                   seed=st.integers(0, 2**31),
                   options=st.fixed_dictionaries({"compression": st.sampled_from(("none", "snappy")),
                                                  "block_size": st.sampled_from((64, 1024, 4096)),
                                                  "max_file_size": st.sampled_from((2048, 65536, 2 << 20))})))
def test_reference_keeps_what_the_rules_keep(ref, stock, tmp_path_factory, w):
    folder = tmp_path_factory.mktemp("job")
    job = tables.make_job(folder, w, ref)
    out = folder / "out"
    r = compact(ref, folder / "job.json", out)
    assert r.returncode == 0, r.stderr
    res = sstable.read_result(out / "result.json")
    got = [ln for t in res["tables"] for ln in dump(stock, out / t["file"])]  # stock LevelDB's reader
    data = generate(w)
    want = expected_entries([t.entries for run_ in data.runs for t in run_], job.smallest_snapshot,
                            job.deeper_levels)
    assert got == [f"entry {k.hex()} {len(v)} {zlib.crc32(v):08x}" for k, v in want]
    assert res["entries_out"] == len(want) and res["dropped"] == res["entries_in"] - len(want)
    assert r.stdout.strip().splitlines()[-1] == (f"cycles=0 bytes_in={res['bytes_in']} "
                                                 f"bytes_out={res['bytes_out']} tables_out={len(res['tables'])}")
    for t in res["tables"]:  # file boundaries: sizes and keys as result.json says
        assert (out / t["file"]).stat().st_size == t["size"]
        lines = dump(ref, out / t["file"])
        assert len(lines) == t["entries"]
        assert lines[0].split()[1] == t["smallest"] and lines[-1].split()[1] == t["largest"]


# ---------------------------------------------------------------------------------------- bad input
def small_job(ref: Path, folder: Path, **opts) -> sstable.Job:
    return tables.make_job(folder, Workload(runs=2, entries=300, options=opts), ref)


@pytest.mark.parametrize("edit, code", [
    (lambda j: j.update(format="x"), "BAD_JOB"),
    (lambda j: j.update(runs=[["in/none.ldb"]]), "BAD_JOB"),
    (lambda j: j["options"].update(compression="lz4"), "BAD_JOB"),
    (lambda j: j.pop("smallest_snapshot"), "BAD_JOB"),
    (lambda j: j.update(grandparents=[{"largest": "0g", "size": 1}]), "BAD_JOB"),
])
def test_bad_job_one_line_no_output(ref, tmp_path, edit, code):
    small_job(ref, tmp_path / "job")
    path = tmp_path / "job" / "job.json"
    j = json.loads(path.read_text())
    edit(j)
    path.write_text(json.dumps(j))
    out = tmp_path / "out"
    r = compact(ref, path, out)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and ERROR_LINE.match(lines[0]) and lines[0].startswith(f"error={code} ")
    assert not out.exists() or not any(out.iterdir())


def test_job_not_json(ref, tmp_path):
    (tmp_path / "job.json").write_text("{runs")
    r = compact(ref, tmp_path / "job.json", tmp_path / "out")
    assert r.returncode == 1 and r.stderr.startswith("error=BAD_JOB ") and "not valid JSON" in r.stderr


def test_runs_out_of_order_key_order(ref, tmp_path):
    """A run that repeats another run's table: the same internal keys twice -> KEY_ORDER."""
    small_job(ref, tmp_path / "job", compression="none")
    path = tmp_path / "job" / "job.json"
    j = json.loads(path.read_text())
    j["runs"].append(j["runs"][0])
    path.write_text(json.dumps(j))
    r = compact(ref, path, tmp_path / "out")
    assert r.returncode == 1 and r.stderr.startswith("error=KEY_ORDER ") and j["runs"][0][0] in r.stderr


@settings(max_examples=25 if not LONG else 300, deadline=None, suppress_health_check=FIXTURES_OK)
@given(data=st.data())
def test_mutated_tables_named_error_or_clean_run(ref, tmp_path_factory, data):
    """Bytes of an input table changed: with verify_checksums a change inside a block is BAD_CRC (or a
    named fault of footer/index); without, LevelDB's reader may read garbage but the run ends in time
    with a named error or a complete result, never a crash and never a partial output."""
    base = tmp_path_factory.mktemp("mut")
    verify = data.draw(st.booleans())
    job = small_job(ref, base / "job", compression=data.draw(st.sampled_from(("none", "snappy"))),
                    verify_checksums=verify)
    victim = base / "job" / job.runs[0][0]
    blob = bytearray(victim.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] ^= data.draw(st.integers(1, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    victim.write_bytes(bytes(blob))
    out = base / "out"
    r = compact(ref, base / "job" / "job.json", out)
    assert r.returncode in (0, 1), r.stderr  # no signal
    if r.returncode == 1:
        line = r.stderr.strip()
        m = ERROR_LINE.match(line)
        assert m and m.group(1) in sstable.ERROR_CODES and "\n" not in line, line
        assert not out.exists() or not any(out.iterdir())
    else:
        assert (out / "result.json").exists()


# ---------------------------------------------------------------------------------------- lsmc tables
def test_cli_make_compact_compare(ref, tmp_path, capsys):
    assert tables.main(["make", str(tmp_path / "job"), "--workload", "dbbench", "--entries", "500",
                        "--compression", "none"]) == 0
    job = tmp_path / "job"
    assert tables.main(["compact", "--job", str(job / "job.json"), "--out-dir", str(tmp_path / "a")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert sstable.parse_run_line(line)["tables_out"] >= 1
    j = sstable.read_job(job / "job.json")
    # the same job from the command line: Level-0 tables positional, the Level-1 run with --run-of
    argv = ["compact", *[str(job / r[0]) for r in j.runs[:-1]], "--run-of", ",".join(str(job / p) for p in j.runs[-1]),
            "--out-dir", str(tmp_path / "b"), "--compression", "none", "--smallest-snapshot", str(j.smallest_snapshot),
            "--first-file-number", str(j.first_file_number)]
    assert tables.main(argv) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == line
    assert tables.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.startswith("SAME: ")
    assert tables.main(["compare", "--decoded", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.startswith("SAME (decoded): ")
    res = sstable.read_result(tmp_path / "b" / "result.json")
    f = tmp_path / "b" / res["tables"][0]["file"]
    blob = bytearray(f.read_bytes())
    blob[10] ^= 1
    f.write_bytes(bytes(blob))
    assert tables.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    verdict = capsys.readouterr().out
    assert verdict.startswith("DIFFERENT: ") and "at byte 10 " in verdict


def test_cli_backends_refused_clearly(tmp_path, capsys):
    t = tmp_path / "a.ldb"
    t.write_bytes(b"x")
    # rtl and soc run: tests/test_table_engine_top.py, tests/test_tables_soc.py
    try:
        import lsmc.build.table_model  # noqa: F401
    except ModuleNotFoundError:
        assert tables.main(["compact", str(t), "--out-dir", str(tmp_path / "o"), "--backend", "model"]) == 2
        assert "model back end is not built" in capsys.readouterr().err


def test_cli_bad_table_one_line(ref, tmp_path, capsys):
    t = tmp_path / "000001.ldb"
    t.write_bytes(b"not a table" * 10)
    assert tables.main(["compact", str(t), "--out-dir", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert ERROR_LINE.match(err) and err.startswith("error=BAD_MAGIC ") and str(t.name) in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    shutil.rmtree(tmp_path / "o", ignore_errors=True)


# ------------------------------------------------------------- one fact, one place: drift between copies
def test_option_defaults_agree(ref, tmp_path):
    """The job format's defaults are written twice (table_ref.cc's ParseOptions, sstable.OPTION_DEFAULTS):
    a table made with `{}` and one made with the Python defaults spelled out are the same bytes, and
    both sides know the same option names."""
    ents = [(sstable.internal_key(b"%06d" % i, i + 1), b"v" * (i % 300)) for i in range(3000)]
    tables.make_table(ref, tmp_path / "a.ldb", ents, {})
    tables.make_table(ref, tmp_path / "b.ldb", ents, dict(sstable.OPTION_DEFAULTS))
    assert (tmp_path / "a.ldb").read_bytes() == (tmp_path / "b.ldb").read_bytes()
    with pytest.raises(tables.CliError, match="unknown key 'blocksize'"):
        tables.make_table(ref, tmp_path / "c.ldb", ents, {"blocksize": 1})


def test_error_codes_documented_once():
    """hw/ip/table_engine/doc/table-engine.md's code table lists exactly sstable.ERROR_CODES, in order."""
    doc = (Path(__file__).resolve().parents[1] / "hw/ip/table_engine/doc/table-engine.md").read_text()
    assert re.findall(r"^\| `([A-Z_]+)` \|", doc, re.M) == list(sstable.ERROR_CODES)


def test_cli_bad_job_and_folders_one_line(tmp_path, capsys):
    job = tmp_path / "job.json"
    job.write_text('{"format": "lsmc-table-job/1", "runs": [["x.ldb"]], "options": {}, "smallest_snapshot": 1, '
                   '"first_file_number": 1}')
    assert tables.main(["compact", "--job", str(job), "--out-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"tables: {job}: run 0: input table x.ldb not found"
    assert tables.main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"tables: {tmp_path / 'nope'}: not a folder"
    (tmp_path / "d").mkdir()
    assert tables.main(["make", str(tmp_path), "--entries", "10"]) == 2
    assert "not empty" in capsys.readouterr().err


def test_cli_speed_table(ref, capsys):
    assert tables.main(["speed", "--entries", "200", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 + len(tables.SPEED_CASES) and all(ln.count("|") == 10 for ln in lines)
