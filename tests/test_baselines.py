"""The CPU baselines compute the same job as the IP: LevelDB 1.23's compaction of the two runs must leave
exactly the reference merge in the database, and the firmware's C merge compiled for the host must
produce the model's bytes. Small workloads and one or two repetitions keep this file fast."""
import subprocess

import pytest

from lsmc.model import kb16, workloads
from lsmc.report import baselines


def _runs(kind, keys, overlap, seed):
    return workloads.make_runs(kind, keys, overlap, seed)


@pytest.mark.parametrize("kind,keys,overlap,seed", [
    ("short", 512, 0.25, 1),      # the Table III workload
    ("long", 600, 0.5, 2),        # 9..16-byte keys (virtual entries in KB16)
    ("uniform", 900, 0.1, 3),
    ("prefix", 700, 0.75, 4),     # long shared prefixes
    ("ycsb", 400, 1.0, 5),        # every run-1 key superseded
])
def test_leveldb_merged_contents_equal_reference(kind, keys, overlap, seed):
    k0, k1 = _runs(kind, keys, overlap, seed)
    res = baselines.run_leveldb(k0, k1, reps=2)  # run_leveldb checks too; assert here explicitly
    want, invalid = kb16.merge_keys(k0, k1)
    assert res.merged == want
    assert len(res.merged) == len(k0) + len(k1) - len(invalid)
    assert res.version == "1.23"
    assert res.keys_in == len(k0) + len(k1)
    assert res.reps == 2 and len(res.core_us) == 2
    assert res.compaction == "Compacting 1@1 + 1@2 files"  # LevelDB's real two-level merge ran
    assert res.automatic == 0
    assert 0 < res.core_min <= res.core_median
    assert res.core_min <= res.total_min  # the compaction window lies inside the CompactRange call


def test_leveldb_newer_run_wins_on_duplicates():
    k1 = [(b"a", 10), (b"b", 11), (b"c", 12)]
    k0 = [(b"b", 20), (b"d", 21)]
    res = baselines.run_leveldb(k0, k1, reps=1)
    assert res.merged == [(b"a", 10), (b"b", 20), (b"c", 12), (b"d", 21)]


def test_leveldb_program_rejects_bad_input(tmp_path):
    exe = baselines.build_leveldb()
    good = tmp_path / "good.keys"
    good.write_text("01 1\n02 2\n")
    cases = {
        "unsorted.keys": ("02 1\n01 2\n", "line 2: keys must be strictly increasing"),
        "badhex.keys": ("0g 1\n", "line 1: bad hex digit"),
        "badaddr.keys": ("01 4294967296\n", "line 1: address must be a uint32"),
        "fields.keys": ("01\n", "line 1: expected '<hex key> <address>'"),
        "empty.keys": ("# nothing\n", "both runs must hold at least one key"),
    }
    for name, (text, message) in cases.items():
        bad = tmp_path / name
        bad.write_text(text)
        res = subprocess.run([exe, "--run0", bad, "--run1", good, "--db", tmp_path / "db", "--reps", "1"],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, name
        assert message in res.stderr, (name, res.stderr)
        assert "Traceback" not in res.stderr and res.stdout == ""
    res = subprocess.run([exe, "--run0", tmp_path / "missing", "--run1", good, "--db", tmp_path / "db"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "missing: cannot open" in res.stderr


def test_parse_leveldb_output():
    text = ("leveldb version=1.23 compression=none entries_run0=2 entries_run1=2\n"
            'rep=0 core_us=10.500 total_us=20.000 automatic=0 compaction="Compacting 1@1 + 1@2 files"\n'
            'rep=1 core_us=8.000 total_us=nan automatic=1 compaction="Compacting 1@1 + 1@2 files"\n'
            'rep=2 core_us=9.000 total_us=30.000 automatic=0 compaction="Compacting 1@1 + 1@2 files"\n'
            "result keys_in=4 reps=3 automatic=1 core_us_min=8.000 core_us_median=9.000 "
            "total_us_min=20.000 total_us_median=25.000\n")
    r = baselines.parse_leveldb_output(text)
    assert (r.version, r.keys_in, r.reps, r.automatic) == ("1.23", 4, 3, 1)
    assert (r.core_min, r.core_median) == (8.0, 9.0)
    assert (r.total_min, r.total_median) == (20.0, 25.0)  # the NaN repetition is left out
    with pytest.raises(baselines.BaselineError):
        baselines.parse_leveldb_output("something else\n")


@pytest.mark.parametrize("kind,group", [("short", 16), ("uniform", 2), ("long", 3), ("prefix", 256),
                                        ("ycsb", 255)])
def test_host_merge_equals_model(kind, group):
    pairs = []
    for seed in range(3):
        k0, k1 = _runs(kind, 1000, 0.3, seed)
        pairs.append((kb16.encode(k0, group), kb16.encode(k1, group)))
    res = baselines.run_host_merge(pairs, group=group, reps=2)  # raises if the bytes differ
    merged, invalid = kb16.merge(*pairs[0], group)
    assert res.entries_in == (len(pairs[0][0]) + len(pairs[0][1])) // 16
    assert res.entries_out == len(merged) // 16
    assert res.invalid == len(invalid) // 4
    assert res.sets == 3 and len(res.us_per_entry) == 3 * 2
    assert 0 < res.min <= res.median


def test_host_merge_check_catches_a_wrong_output(monkeypatch):
    k0, k1 = _runs("short", 200, 0.5, 9)
    pair = (kb16.encode(k0, 16), kb16.encode(k1, 16))
    real = kb16.merge
    monkeypatch.setattr(kb16, "merge", lambda a, b, g: (real(a, b, g)[0][16:], real(a, b, g)[1]))
    with pytest.raises(baselines.BaselineError, match="differs from the reference"):
        baselines.run_host_merge([pair], reps=1)


def test_host_merge_reports_malformed_input(tmp_path):
    exe = baselines.build_host_merge()
    good = kb16.encode([(b"a", 1), (b"b", 2)], 16)
    bad = bytearray(good)
    bad[3] = 0x80  # reserved header bit of entry 0
    (tmp_path / "good").write_bytes(good)
    (tmp_path / "bad").write_bytes(bytes(bad))
    res = subprocess.run([exe, "--group", "16", "--reps", "1", tmp_path / "bad", tmp_path / "good"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 3
    assert "RESERVED_BITS at input 0 entry 0" in res.stderr
    res = subprocess.run([exe, "--group", "1", tmp_path / "good", tmp_path / "good"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--group must be 2..256" in res.stderr
