"""The table engine's block reader RTL (hw/ip/table_engine/rtl/BlockReader.scala) in Verilator against the
engine's C++ model (itself byte-exact with LevelDB): blocks made by the model's BlockBuilder (random keys
1 byte to the key limit, values 0 to 64 KiB, restart intervals 1 and 16) and the data blocks of tables
written by LevelDB's own TableBuilder decode to the model's entries,
entry by entry, with random stalls on every stream; mutated blocks (seeded and Hypothesis-made) give the
model's error code and offset or its entries; soft resets in mid-block; never a hang (the harness's
cycle bound). The harness: hw/ip/table_engine/dv/block_reader_harness.cpp (doc/rtl.md)."""
from __future__ import annotations

import struct
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from te_rtl import run_ok, width_fixture

from lsmc.build import table_engine_rtl as rtl
from lsmc.build.table_engine_rtl import summary

ERROR_CODES = ("BAD_CRC", "TRUNCATED", "BAD_BLOCK", "BAD_VARINT", "KEY_TOO_LONG")


width = width_fixture(rtl.build_harness)


@pytest.mark.parametrize("interval", [1, 16])
def test_random_blocks_match_model(width, interval):
    s = run_ok(rtl.run, width, "--seed", 11 + interval, "--blocks", 60, "--interval", interval)
    assert s["ok"] == 60 and s["entries"] > 1000 and s["hangs"] == 0


def test_leveldb_tablebuilder_blocks(width):
    """Every data block of tables written by LevelDB's own TableBuilder (Debian's libleveldb; block_size
    1, 4, 16 KiB) decodes to the model's entries, with stalls; mutated ones give the model's verdict."""
    s = run_ok(rtl.run, width, "--seed", 31, "--leveldb", 12, "--pin", 0.3, "--pout", 0.3)
    assert s["ok"] == s["blocks"] > 100 and s["entries"] > 500
    s = run_ok(rtl.run, width, "--seed", 32, "--leveldb", 12, "--mutate", 0.6, "--verify", 0.5, "--quiet")
    assert s["errors"] > 50 and s["ok"] > 50


def test_stalls_on_every_stream(width):
    for seed, (pin, pout) in enumerate([(0.5, 0.0), (0.0, 0.5), (0.6, 0.6)]):
        s = run_ok(rtl.run, width, "--seed", 100 + seed, "--blocks", 40, "--pin", pin, "--pout", pout,
                   "--max-value", 8192)
        assert s["ok"] == 40


def test_mutated_blocks_and_soft_resets(width):
    """Seeded bit flips and cuts, CRC checked or not: every block the model's verdict, every code seen."""
    s = run_ok(rtl.run, width, "--seed", 7, "--blocks", 600, "--mutate", 1, "--verify", 0.3, "--pin", 0.3,
               "--pout", 0.3, "--soft-reset", 0.1, "--max-value", 4096, "--quiet")
    codes = dict(kv.split(":") for kv in s["codes"].split(","))
    assert set(ERROR_CODES) <= set(codes), codes
    assert s["ok"] > 50 and s["hangs"] == 0


def test_comparison_can_fail(width, tmp_path):
    """With the model's entries tampered with (one value byte changed) every decoded block mismatches; a
    case file cut mid-record is refused with one line."""
    res = rtl.run(width, "--seed", 3, "--blocks", 5, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout
    bad = tmp_path / "bad.bin"
    bad.write_bytes(struct.pack("<IBI", 100, 1, 10) + b"x" * 5)
    res = rtl.run(width, "--cases", bad)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "--cases" in res.stderr


@pytest.fixture(scope="module")
def base_blocks(tmp_path_factory):
    """A few model-built blocks (restart intervals 1 and 16) for Hypothesis to mutate."""
    path = tmp_path_factory.mktemp("blocks") / "blocks.bin"
    s = run_ok(rtl.run, 16, "--seed", 5, "--blocks", 6, "--max-value", 300, "--dump", path)
    assert s["ok"] == 6
    data, blocks, p = path.read_bytes(), [], 0
    while p < len(data):
        n, _, _ = struct.unpack_from("<IBI", data, p)
        blocks.append(data[p + 9:p + 9 + n])
        p += 9 + n
    return blocks


def case_record(block: bytes, size: int, verify: bool) -> bytes:
    return struct.pack("<IBI", len(block), int(verify), size) + block


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_mutations(base_blocks, data):
    """Hypothesis flips bytes, cuts and extends blocks; the W=16 RTL must agree with the model on each."""
    records = []
    for _ in range(8):
        block = bytearray(data.draw(st.sampled_from(base_blocks)))
        size = len(block) - 5
        for _ in range(data.draw(st.integers(0, 4))):
            i = data.draw(st.integers(0, len(block) - 1))
            block[i] = data.draw(st.integers(0, 255))
        if data.draw(st.booleans()):
            block = block[:data.draw(st.integers(1, len(block)))]
        records.append(case_record(bytes(block), size, data.draw(st.booleans())))
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(b"".join(records))
        f.flush()
        run_ok(rtl.run, 16, "--cases", f.name, "--seed", data.draw(st.integers(0, 1000)), "--pin", 0.3, "--pout", 0.3)
