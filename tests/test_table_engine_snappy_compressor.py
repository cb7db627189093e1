"""The table engine's Snappy compressor RTL (hw/ip/table_engine/rtl/SnappyCompressor.scala) in Verilator against
the engine's C++ codec (model/snappy_codec's Compress) and Debian's libsnappy: the compressed bytes must be
theirs, byte for byte (a LevelDB table's block sizes, so its file boundaries, follow from them), on random,
db_bench-like, LevelDB data blocks, all-zero and short-period data, on the edge cases (empty, 1 byte, libsnappy's
15-byte margin, exactly 64 KiB, more fragments, all-same, incompressible), on Hypothesis-made blocks and on a
block at the engine's limit, with random stalls on every stream; never a hang (the harness's cycle bound). The
harness: hw/ip/table_engine/dv/snappy_compressor_harness.cpp (doc/rtl.md)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsmc.build import table_engine_snappy_compressor as rtl
from lsmc.build.table_engine_rtl import summary

WIDTHS = (pytest.param(4, marks=pytest.mark.long), 16)  # the narrowest beat (its build: LSMC_LONG=1), the engine's


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"w{w}")
def width(request):
    rtl.build_harness(request.param)
    return request.param


def run_ok(width, *args) -> dict:
    res = rtl.run(width, *args)
    s = summary(res)
    assert res.returncode == 0 and s["mismatches"] == 0 and s["violations"] == 0 and s["hangs"] == 0 \
        and s["libsnappy_differs"] == 0, f"{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    return s


def test_edge_cases(width):
    """Empty, 1 byte, around the 15-byte margin, 64 KiB - 1 .. 3 fragments, all-same, incompressible."""
    s = run_ok(width, "--edges", "--seed", 4, "--pin", 0.3, "--pout", 0.3)
    assert s["blocks"] > 70 and s["bytes_in"] > 2_000_000


@pytest.mark.parametrize("kind", ["random", "dbbench", "leveldb", "zeros", "runs"])
def test_blocks_match_model_and_libsnappy(width, kind):
    """Blocks of 0..70,000 bytes (a second fragment at times) with stalls on every stream."""
    s = run_ok(width, "--seed", 12, "--blocks", 12, "--kind", kind, "--max-len", 70000, "--pin", 0.2, "--pout", 0.2)
    assert s["blocks"] == 12 and s["bytes_in"] > 100_000


def test_stalls_on_every_stream(width):
    for seed, (pin, pout) in enumerate([(0.6, 0.0), (0.0, 0.6), (0.7, 0.7)]):
        s = run_ok(width, "--seed", 200 + seed, "--blocks", 20, "--max-len", 6000, "--pin", pin, "--pout", pout)
        assert s["blocks"] == 20


def test_fragment_numbers_wrap():
    """The hash table's entries carry an 8-bit fragment number: 600 blocks wrap it twice (a table clear)."""
    run_ok(16, "--seed", 6, "--blocks", 600, "--max-len", 300, "--kind", "runs", "--quiet")


def test_block_at_the_limit():
    """The engine's largest block (limits.h kMaxBlockBytes, 64 fragments) of db_bench's values."""
    s = run_ok(16, "--seed", 2, "--blocks", 1, "--len", rtl.sizes()["max_block"], "--kind", "dbbench")
    assert s["bytes_in"] == rtl.sizes()["max_block"]


def test_comparison_can_fail(tmp_path):
    """With the expected bytes tampered with every block mismatches; bad options and a case file cut
    mid-record are refused with one line."""
    res = rtl.run(16, "--seed", 3, "--blocks", 5, "--max-len", 1000, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout
    res = rtl.run(16, "--kind", "text")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "--kind" in res.stderr
    bad = tmp_path / "bad.bin"
    bad.write_bytes(struct.pack("<I", 100) + b"x" * 5)
    res = rtl.run(16, "--cases", bad)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "--cases" in res.stderr


@pytest.mark.parametrize("kind, floor", [("leveldb", 1.2), ("random", 5.0), ("zeros", 6.0)])
def test_throughput(kind, floor):
    """4 KiB blocks at W = 16, no stalls, input bytes a clock (length to status): at least one byte a clock
    on LevelDB data blocks of db_bench entries (doc/rtl.md has the measured figures)."""
    s = run_ok(16, "--seed", 1, "--blocks", 40, "--len", 4096, "--kind", kind)
    assert s["bytes_per_clock"] >= floor, s


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(st.one_of(st.binary(max_size=300),
                                 st.lists(st.sampled_from(b"ab\x00"), max_size=2000).map(bytes),
                                 st.tuples(st.binary(min_size=1, max_size=40), st.integers(1, 200))
                                 .map(lambda t: (t[0] * t[1])[:5000])), min_size=1, max_size=8),
       seed=st.integers(0, 1000))
def test_hypothesis_blocks(tmp_path, blocks, seed):
    """Hypothesis's blocks (short, small alphabets, repeated strings): the W = 16 RTL writes libsnappy's bytes."""
    path = tmp_path / "cases.bin"
    path.write_bytes(b"".join(struct.pack("<I", len(b)) + b for b in blocks))
    run_ok(16, "--cases", path, "--seed", seed, "--pin", 0.3, "--pout", 0.3)
