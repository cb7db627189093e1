"""The table engine's job format and workloads in pure Python (lsmc.model.sstable,
lsmc.model.table_workloads): no build. Each job-format fault gives one error naming the file and the
problem; the workload generator, driven by Hypothesis, makes runs a DB could hold."""
from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmc.model import sstable
from lsmc.model.table_workloads import KEY_KINDS, USER_KEY_MAX, VALUE_MAX, Workload, expected_entries, generate


def _job(**over):
    d = {"format": sstable.FORMAT, "runs": [["a.ldb"]], "options": {"compression": "none"},
         "smallest_snapshot": 5, "grandparents": [], "deeper_levels": [], "first_file_number": 7}
    d.update(over)
    return d


def test_internal_key_layout():
    k = sstable.internal_key(b"abc", 0x123456, sstable.TYPE_DELETION)
    assert k == b"abc" + struct.pack("<Q", 0x123456 << 8)
    assert sstable.parse_internal_key(k) == (b"abc", 0x123456, 0)
    assert sstable.parse_internal_key(b"short") is None
    assert sstable.parse_internal_key(b"x" + struct.pack("<Q", 5 << 8 | 2)) is None  # type 2: no parse
    # user key ascending, then sequence descending
    keys = [sstable.internal_key(b"b", 1), sstable.internal_key(b"a", 1), sstable.internal_key(b"a", 9)]
    assert sorted(keys, key=sstable.order_key) == [keys[2], keys[1], keys[0]]


def test_valid_job_round_trip(tmp_path):
    (tmp_path / "a.ldb").write_bytes(b"x")
    (tmp_path / "job.json").write_text(json.dumps(_job()))
    job = sstable.read_job(tmp_path / "job.json")
    assert job.runs == [["a.ldb"]] and job.smallest_snapshot == 5 and job.first_file_number == 7
    sstable.write_job(job, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == _job()


@pytest.mark.parametrize("change, message", [
    (dict(format="lsmc-table-job/2"), "format must be"),
    (dict(runs=[]), "runs must be a non-empty list"),
    (dict(runs=[["a.ldb"], []]), "run 1 must be a non-empty list"),
    (dict(runs=[["missing.ldb"]]), "input table missing.ldb not found"),
    (dict(options={"compression": "zstd"}), "options.compression"),
    (dict(options={"blocksize": 4096}), "unknown option 'blocksize'"),
    (dict(options={"block_size": 0}), "options.block_size"),
    (dict(options={"verify_checksums": 1}), "verify_checksums must be true or false"),
    (dict(smallest_snapshot=-1), "smallest_snapshot must be an integer"),
    (dict(smallest_snapshot=True), "smallest_snapshot must be an integer"),
    (dict(grandparents=[{"largest": "00", "size": 1}]), "grandparent 0 largest"),
    (dict(grandparents=[{"largest": "zz" * 8, "size": 1}]), "not hex"),
    (dict(grandparents=[{"largest": "00" * 8}]), "grandparent 0 must be"),
    (dict(deeper_levels=[[{"smallest": "02", "largest": "01"}]]), "smallest above largest"),
    (dict(deeper_levels=[[]] * 7), "at most 6 levels"),
    (dict(first_file_number=0), "first_file_number"),
    (dict(extra=1), "unknown key 'extra'"),
])
def test_job_errors_name_file_and_problem(tmp_path, change, message):
    (tmp_path / "a.ldb").write_bytes(b"x")
    path = tmp_path / "job.json"
    path.write_text(json.dumps(_job(**change)))
    with pytest.raises(sstable.JobFormatError) as e:
        sstable.read_job(path)
    text = str(e.value)
    assert text.startswith(str(path) + ": ") and message in text and "\n" not in text


def test_unreadable_and_malformed_json(tmp_path):
    with pytest.raises(sstable.JobFormatError, match="cannot read"):
        sstable.read_job(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(sstable.JobFormatError, match="not valid JSON"):
        sstable.read_job(tmp_path / "bad.json")


def test_version_edit_decoding():
    # A hand-made edit: comparator, log 3, next file 9, last sequence 77, delete (1, 5), add (2, 8, ...).
    def v(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def lp(b):
        return v(len(b)) + b
    small, large = sstable.internal_key(b"a", 1), sstable.internal_key(b"z", 300)
    rec = (v(1) + lp(b"leveldb.BytewiseComparator") + v(2) + v(3) + v(3) + v(9) + v(4) + v(77)
           + v(6) + v(1) + v(5) + v(7) + v(2) + v(8) + v(123456) + lp(small) + lp(large))
    # one log record of type FULL (checksum not checked by the reader)
    data = b"\0\0\0\0" + struct.pack("<HB", len(rec), 1) + rec
    [e] = [sstable.decode_version_edit(r) for r in sstable.log_records(data)]
    assert (e.log_number, e.next_file, e.last_sequence) == (3, 9, 77)
    assert e.deleted == [(1, 5)]
    assert e.added == [{"level": 2, "number": 8, "size": 123456, "smallest": small, "largest": large}]


def test_log_records_across_blocks():
    big = bytes(range(256)) * 200  # 51,200 bytes: FIRST in block 0, LAST in block 1
    first = 32768 - 7
    data = b"\0" * 4 + struct.pack("<HB", first, 2) + big[:first]
    data += b"\0" * 4 + struct.pack("<HB", len(big) - first, 4) + big[first:]
    assert sstable.log_records(data) == [big]


# --------------------------------------------------------------------------------------- workloads
workloads = st.builds(
    Workload,
    runs=st.integers(1, 8),
    entries=st.integers(1, 60),
    keys=st.sampled_from(KEY_KINDS),
    values=st.sampled_from(("dbbench", "random", "empty")),
    overlap=st.floats(0, 1),
    deletions=st.floats(0, 1),
    snapshot=st.booleans(),
    base_level=st.booleans(),
    entries_per_table=st.integers(0, 5),
    grandparent_bytes=st.integers(0, 10**6),
    seed=st.integers(0, 2**31),
)


@settings(max_examples=60, deadline=None)
@given(workloads)
def test_generated_runs_are_what_a_db_holds(w):
    d = generate(w)
    assert len(d.runs) == w.runs
    seqs = []
    for r, run in enumerate(d.runs):
        if r < w.runs - 1:
            assert len(run) == 1  # a Level-0 table
        flat = [e for t in run for e in t.entries]
        assert [k for k, _ in flat] == sorted((k for k, _ in flat), key=sstable.order_key)
        assert len({k for k, _ in flat}) == len(flat)
        for t1, t2 in zip(run, run[1:]):  # a user key's versions stay in one table of a run
            assert t1.entries[-1][0][:-8] < t2.entries[0][0][:-8]
        for k, v in flat:
            uk, seq, kind = sstable.parse_internal_key(k)
            assert 1 <= len(uk) <= USER_KEY_MAX and len(v) <= VALUE_MAX
            if w.keys == "dbbench":
                assert len(uk) == 16
            if kind == sstable.TYPE_DELETION:
                assert v == b""
            seqs.append((r, seq))
    # newer runs hold higher sequences; sequences are unique
    assert len({s for _, s in seqs}) == len(seqs)
    for r in range(1, w.runs):
        assert min(s for q, s in seqs if q == r - 1) > max(s for q, s in seqs if q == r)
    assert 0 <= d.smallest_snapshot <= d.last_sequence
    if not w.snapshot:
        assert d.smallest_snapshot == d.last_sequence
    for lvl in d.deeper_levels:  # files of one level in key order, not overlapping
        for f, g in zip(lvl, lvl[1:]):
            assert bytes.fromhex(f["largest"]) < bytes.fromhex(g["smallest"])


@settings(max_examples=40, deadline=None)
@given(workloads)
def test_expected_entries_rules(w):
    """The plain-Python drop rules: no snapshot and a base level keep exactly the newest value of each
    user key (deletions vanish); the output is in order and a subset of the input."""
    d = generate(w)
    ins = [t.entries for run in d.runs for t in run]
    out = expected_entries(ins, d.smallest_snapshot, d.deeper_levels)
    flat = sorted((e for t in ins for e in t), key=lambda e: sstable.order_key(e[0]))
    assert set(out) <= set(flat) and out == sorted(out, key=lambda e: sstable.order_key(e[0]))
    if not w.snapshot and not d.deeper_levels:
        newest = {}
        for k, v in flat:
            newest.setdefault(k[:-8], (k, v))
        assert out == [kv for kv in newest.values() if sstable.parse_internal_key(kv[0])[2] == sstable.TYPE_VALUE]


def test_dbbench_values_compress_to_half():
    import zlib

    d = generate(Workload(runs=1, entries=2000))
    blob = b"".join(v for t in d.runs[0] for _, v in t.entries)
    # db_bench's generator aims at 50 % (Snappy); zlib, a stronger coder, lands a little under it
    assert 0.35 < len(zlib.compress(blob)) / len(blob) < 0.55


def test_compactions_from_manifest_replay():
    """Version edits -> jobs as VersionSet sets them up: Level-0 inputs newest (highest number) first,
    the level + 1 run in key order, grandparents = overlapping files of level + 2, deeper levels
    level + 2 .. 6; a trivial move is no compaction."""
    ik = sstable.internal_key

    def f(level, number, lo, hi, size=100):
        return {"level": level, "number": number, "size": size, "smallest": ik(lo, 1), "largest": ik(hi, 1)}
    e0 = sstable.VersionEdit(added=[f(0, 5, b"b", b"k"), f(0, 6, b"a", b"c"), f(1, 8, b"f", b"z"), f(1, 7, b"a", b"e"),
                                    f(2, 9, b"a", b"b", 7), f(2, 10, b"x", b"y", 9), f(2, 11, b"zz", b"zzz"),
                                    f(3, 12, b"c", b"d")], last_sequence=50)
    move = sstable.VersionEdit(deleted=[(2, 11)], added=[f(3, 11, b"zz", b"zzz")], last_sequence=50)
    comp = sstable.VersionEdit(deleted=[(0, 5), (0, 6), (1, 7), (1, 8)],
                               added=[f(1, 21, b"a", b"m"), f(1, 20, b"n", b"z")], last_sequence=60)
    [c] = sstable.compactions_from_manifest([e0, move, comp], lambda n: f"t/{n}", {"compression": "none"})
    assert c.level == 0 and c.outputs == [20, 21]
    assert c.job.runs == [["t/6"], ["t/5"], ["t/7", "t/8"]]
    assert c.job.grandparents == [{"largest": ik(b"b", 1).hex(), "size": 7}, {"largest": ik(b"y", 1).hex(), "size": 9}]
    assert c.job.deeper_levels[0] == [{"smallest": b"a".hex(), "largest": b"b".hex()},
                                      {"smallest": b"x".hex(), "largest": b"y".hex()}]
    assert c.job.deeper_levels[1] == [{"smallest": b"c".hex(), "largest": b"d".hex()},
                                      {"smallest": b"zz".hex(), "largest": b"zzz".hex()}]
    assert len(c.job.deeper_levels) == 5 and c.job.smallest_snapshot == 60 and c.job.first_file_number == 20
