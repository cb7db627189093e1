"""Differential test of the table engine's C++ model (hw/ip/table_engine/model, `table_model JOB OUT`)
against the reference compactor built from LevelDB's own code (table_ref): the same jobs, K = 2, 4, 8,
key lengths 1 byte to the model's limit, values 0 to 64 KiB, deletions, overwrites, snapshots, base and
non-base levels, grandparent splits, one entry per table. Compression off: byte-identical tables and
result.json; Snappy on: the same entries and file boundaries (a block's compressed bytes may differ).
Malformed tables (mutated bytes, Hypothesis): the model names an error of the job format, in time.
Skips, saying why, while the model is not in this checkout."""
from __future__ import annotations

import importlib
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsmc import tables
from lsmc.build.table_ref import build_table_ref
from lsmc.model import sstable
from lsmc.model.table_workloads import Workload

LONG = os.environ.get("LSMC_LONG") == "1"
ERROR_LINE = re.compile(r"^error=(\w+) table=(\S+) offset=(\d+) .+$")
FIXTURES_OK = [HealthCheck.function_scoped_fixture]

try:
    table_model = importlib.import_module("lsmc.build.table_model")
except ModuleNotFoundError:
    table_model = None
pytestmark = pytest.mark.skipif(table_model is None, reason="the engine's C++ model (hw/ip/table_engine/model, "
                                "lsmc.build.table_model) is not in this checkout yet")


@pytest.fixture(scope="module")
def ref() -> Path:
    return build_table_ref()


@pytest.fixture(scope="module")
def model() -> Path:
    return Path(table_model.build_table_model())


def key_limit() -> int:
    return table_model.limits().get("max_user_key_bytes", 1024)


def both(ref: Path, model: Path, job: Path, work: Path, timeout=120):
    a, b = work / "ref", work / "model"
    ra = subprocess.run([ref, "compact", job, a], capture_output=True, text=True, timeout=timeout)
    rb = subprocess.run([model, job, b], capture_output=True, text=True, timeout=timeout)
    return ra, rb, a, b


def check_same(ref, model, w: Workload, work: Path) -> None:
    job = tables.make_job(work / "job", w, ref)
    ra, rb, a, b = both(ref, model, work / "job" / "job.json", work)
    assert ra.returncode == 0, ra.stderr
    assert rb.returncode == 0, f"model: {rb.stderr}"
    la, lb = sstable.parse_run_line(ra.stdout.splitlines()[-1]), sstable.parse_run_line(rb.stdout.splitlines()[-1])
    assert (la["bytes_in"], la["tables_out"]) == (lb["bytes_in"], lb["tables_out"])
    decoded = job.options["compression"] == "snappy"
    same, verdict = tables.compare_dirs(a, b, decoded=decoded, exe=ref)
    assert same, verdict
    if not decoded:
        assert la["bytes_out"] == lb["bytes_out"]


CASES = {
    "k2-dbbench-none": Workload(runs=2, entries=3000, options={"compression": "none"}),
    "k4-dbbench-snappy": Workload(runs=4, entries=3000),
    "k8-key64-none": Workload(runs=8, entries=500, keys="key64", options={"compression": "none"}),
    "k8-random-snappy": Workload(runs=8, entries=60, keys="random", values="random"),
    "snapshots-deletions": Workload(runs=4, entries=1000, snapshot=True, deletions=0.4,
                                    options={"compression": "none"}),
    "non-base": Workload(runs=2, entries=1000, input_level=1, base_level=False, deletions=0.4,
                         options={"compression": "none"}),
    "grandparent-splits": Workload(runs=2, entries=4000, input_level=1, grandparent_bytes=300_000,
                                   options={"compression": "none", "max_file_size": 16384}),
    "one-entry-per-table": Workload(runs=2, entries=40, input_level=1, entries_per_table=1,
                                    options={"compression": "none"}),
    "bloom-small-blocks": Workload(runs=4, entries=800, options={"compression": "none", "bloom_bits_per_key": 10,
                                                                  "block_size": 256, "block_restart_interval": 3}),
    "empty-values": Workload(runs=2, entries=500, values="empty", options={"compression": "none"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_matches_reference(ref, model, tmp_path, name):
    check_same(ref, model, CASES[name], tmp_path)


def test_long_keys_up_to_the_limit(ref, model, tmp_path):
    """User keys of exactly the model's limit pass; one byte more is KEY_TOO_LONG on the model."""
    n = key_limit()
    for size, ok in ((n, True), (n + 1, False)):
        folder = tmp_path / f"k{size}"
        (folder / "in").mkdir(parents=True)
        ents = [(sstable.internal_key(bytes([i]) * size, 10 + i), b"v" * i) for i in range(5)]
        tables.make_table(ref, folder / "in" / "000001.ldb", ents, {"compression": "none"})
        job = sstable.Job(runs=[["in/000001.ldb"]], options={"compression": "none"}, smallest_snapshot=100)
        sstable.write_job(job, folder / "job.json")
        ra, rb, a, b = both(ref, model, folder / "job.json", folder)
        assert ra.returncode == 0, ra.stderr
        if ok:
            assert rb.returncode == 0, rb.stderr
            assert tables.compare_dirs(a, b)[0]
        else:
            assert rb.returncode == 1 and rb.stderr.startswith("error=KEY_TOO_LONG "), rb.stderr


@settings(max_examples=10 if not LONG else 150, deadline=None, suppress_health_check=FIXTURES_OK)
@given(w=st.builds(Workload, runs=st.sampled_from((2, 4, 8)), entries=st.integers(1, 300),
                   keys=st.sampled_from(("dbbench", "key64", "random")),
                   values=st.sampled_from(("dbbench", "random", "empty")), deletions=st.floats(0, 0.6),
                   snapshot=st.booleans(), base_level=st.booleans(), entries_per_table=st.integers(0, 3),
                   grandparent_bytes=st.sampled_from((0, 50_000)), seed=st.integers(0, 2**31),
                   options=st.fixed_dictionaries({"compression": st.sampled_from(("none", "snappy")),
                                                  "block_size": st.sampled_from((64, 1024, 4096)),
                                                  "block_restart_interval": st.sampled_from((1, 2, 16)),
                                                  "bloom_bits_per_key": st.sampled_from((0, 10)),
                                                  "max_file_size": st.sampled_from((4096, 65536, 2 << 20))})))
def test_model_matches_reference_generated(ref, model, tmp_path_factory, w):
    check_same(ref, model, w, tmp_path_factory.mktemp("gen"))


@settings(max_examples=25 if not LONG else 400, deadline=None, suppress_health_check=FIXTURES_OK)
@given(data=st.data())
def test_malformed_tables_named_error_never_hang(ref, model, tmp_path_factory, data):
    work = tmp_path_factory.mktemp("mut")
    verify = data.draw(st.booleans())
    job = tables.make_job(work / "job", Workload(runs=2, entries=300, options={
        "compression": data.draw(st.sampled_from(("none", "snappy"))), "verify_checksums": verify}), ref)
    victim = work / "job" / job.runs[data.draw(st.integers(0, len(job.runs) - 1))][0]
    blob = bytearray(victim.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] ^= data.draw(st.integers(1, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    victim.write_bytes(bytes(blob))
    out = work / "model"
    r = subprocess.run([model, work / "job" / "job.json", out], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1), f"model exit {r.returncode}: {r.stderr[-500:]}"
    if r.returncode == 1:
        line = r.stderr.strip()
        m = ERROR_LINE.match(line)
        assert m and m.group(1) in sstable.ERROR_CODES, line
        assert not (out / "result.json").exists() and not list(out.glob("*.ldb"))
    else:
        # With every block checked the model may only succeed where the reference does; without, a
        # mutated value or key still reads, and both must then write the same tables.
        ra = subprocess.run([ref, "compact", work / "job" / "job.json", work / "ref"], capture_output=True,
                            text=True, timeout=60)
        if verify:
            assert ra.returncode == 0, f"model accepted what the reference refuses: {ra.stderr}"
        if ra.returncode == 0:
            same, verdict = tables.compare_dirs(work / "ref", out, decoded=job.options["compression"] == "snappy",
                                                exe=ref)
            assert same, verdict


def test_first_restart_point_not_zero_is_refused(ref, model, tmp_path):
    """A data block whose first restart point is not 0 (LevelDB's BlockBuilder always writes 0): LevelDB's
    iterator starts there and, past the entries, silently drops the block; the model refuses the table
    with BAD_BLOCK at that offset instead of writing other tables (found by the mutation test above)."""
    job = tables.make_job(tmp_path / "job", Workload(runs=2, entries=300, options={"compression": "none"}), ref)
    victim = tmp_path / "job" / job.runs[0][0]
    blob = bytearray(victim.read_bytes())
    footer = bytes(blob[-48:])
    _mo, i = sstable.varint(footer, 0)
    _ms, i = sstable.varint(footer, i)
    ix_off, i = sstable.varint(footer, i)
    ix_size, _ = sstable.varint(footer, i)
    index = bytes(blob[ix_off:ix_off + ix_size])
    _shared, i = sstable.varint(index, 0)  # the index's first entry: the first data block's handle
    non_shared, i = sstable.varint(index, i)
    _vlen, i = sstable.varint(index, i)
    off, j = sstable.varint(index, i + non_shared)
    size, _ = sstable.varint(index, j)
    restarts = int.from_bytes(blob[off + size - 4:off + size], "little")
    first = off + size - 4 - 4 * restarts
    assert blob[first:first + 4] == b"\0\0\0\0"
    blob[first + 2] ^= 1  # first restart point 65536
    victim.write_bytes(bytes(blob))
    r = subprocess.run([model, tmp_path / "job" / "job.json", tmp_path / "out"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1, r.stdout
    m = ERROR_LINE.match(r.stderr.strip())
    assert m and m.group(1) == "BAD_BLOCK" and f"offset={first}" in r.stderr and "first restart point" in r.stderr
