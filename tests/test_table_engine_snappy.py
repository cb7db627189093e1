"""The table engine's Snappy decompressor RTL (hw/ip/table_engine/rtl/SnappyDecompressor.scala) in Verilator
against Debian's libsnappy and the engine's C++ codec (model/snappy_codec, itself libsnappy 1.1.9's
format): random, db_bench-like, short-period data and LevelDB data blocks of db_bench entries, 0..64 KiB,
compressed by libsnappy, decompress to the data with random stalls on every stream; mutated streams
(seeded and Hypothesis-made) give the model's error code and offset or its output; blocks over the 64 KiB
history are refused; soft resets in mid-block; never a hang (the harness's cycle bound). The harness:
hw/ip/table_engine/dv/snappy_harness.cpp (doc/rtl.md)."""
from __future__ import annotations

import struct
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from te_rtl import run_ok, width_fixture

from lsmc.build import table_engine_snappy as rtl
from lsmc.build.table_engine_rtl import summary

width = width_fixture(rtl.build_harness)


@pytest.mark.parametrize("kind", ["random", "dbbench", "runs", "leveldb"])
def test_blocks_match_libsnappy(width, kind):
    """Data of 0..64 KiB (the limit itself included) decompresses to itself, as libsnappy and the model do."""
    s = run_ok(rtl.run, width, "--seed", 11, "--blocks", 16, "--kind", kind, "--pin", 0.2, "--pout", 0.2)
    # A LevelDB block closes after the entry that reaches its size: the one made for 64 KiB is over the
    # limit, BAD_SNAPPY at offset 0 on both sides.
    assert s["ok"] == 16 - (kind == "leveldb") and s["bytes_out"] > 100_000


def test_stalls_on_every_stream(width):
    for seed, (pin, pout) in enumerate([(0.5, 0.0), (0.0, 0.5), (0.6, 0.6)]):
        s = run_ok(rtl.run, width, "--seed", 100 + seed, "--blocks", 20, "--pin", pin, "--pout", pout,
                   "--max-len", 8192)
        assert s["ok"] == 20


def test_mutated_streams_and_soft_resets(width):
    """Changed, cut and extended streams: the model's verdict (error and offset, or the same output)."""
    s = run_ok(rtl.run, width, "--seed", 7, "--blocks", 400, "--mutate", 1, "--pin", 0.3, "--pout", 0.3,
               "--soft-reset", 0.1, "--max-len", 4096, "--quiet")
    assert s["errors"] > 150 and s["ok"] > 30


def test_history_limit(width):
    """64 KiB decompress; one byte more is BAD_SNAPPY at offset 0 (the model's verdict with the same limit)."""
    s = run_ok(rtl.run, width, "--seed", 5, "--blocks", 2, "--len", rtl.HISTORY, "--kind", "dbbench")
    assert s["ok"] == 2
    s = run_ok(rtl.run, width, "--seed", 5, "--blocks", 2, "--len", rtl.HISTORY + 1, "--kind", "dbbench")
    assert s["errors"] == 2


def test_comparison_can_fail(tmp_path):
    """With the expected output tampered with (one byte changed) every block mismatches; a case file cut
    mid-record is refused with one line."""
    res = rtl.run(16, "--seed", 3, "--blocks", 5, "--max-len", 1000, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout
    bad = tmp_path / "bad.bin"
    bad.write_bytes(struct.pack("<I", 100) + b"x" * 5)
    res = rtl.run(16, "--cases", bad)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "--cases" in res.stderr


@pytest.mark.parametrize("kind", ["dbbench", "leveldb"])
def test_throughput_db_bench(kind):
    """db_bench's values, and data blocks of its entries, in 4 KiB blocks, no stalls: at least the engine's
    goal of 4 bytes a clock at W = 16."""
    s = run_ok(rtl.run, 16, "--seed", 1, "--blocks", 40, "--len", 4096, "--kind", kind)
    assert s["bytes_per_clock"] >= 4.0, s


@pytest.fixture(scope="module")
def base_streams(tmp_path_factory):
    """A few libsnappy-compressed blocks (every data kind) for Hypothesis to mutate."""
    path = tmp_path_factory.mktemp("snappy") / "streams.bin"
    run_ok(rtl.run, 16, "--seed", 9, "--blocks", 8, "--max-len", 600, "--dump", path)
    data, streams, p = path.read_bytes(), [], 0
    while p < len(data):
        (n,) = struct.unpack_from("<I", data, p)
        streams.append(data[p + 4:p + 4 + n])
        p += 4 + n
    return [s for s in streams if len(s) > 2]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_mutations(base_streams, data):
    """Hypothesis changes bytes, cuts and extends streams; the W=16 RTL must agree with the model on each."""
    records = []
    for _ in range(8):
        s = bytearray(data.draw(st.sampled_from(base_streams)))
        for _ in range(data.draw(st.integers(0, 4))):
            s[data.draw(st.integers(0, len(s) - 1))] = data.draw(st.integers(0, 255))
        if data.draw(st.booleans()):
            s = s[:data.draw(st.integers(0, len(s)))]
        s += data.draw(st.binary(max_size=6))
        records.append(struct.pack("<I", len(s)) + bytes(s))
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(b"".join(records))
        f.flush()
        run_ok(rtl.run, 16, "--cases", f.name, "--max-len", 64, "--seed", data.draw(st.integers(0, 1000)),
               "--pin", 0.3, "--pout", 0.3)
