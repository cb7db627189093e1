"""The table engine's table front end (hw/ip/table_engine/rtl/TableReader.scala) in Verilator against the
engine's C++ model's TableReader (itself byte-exact with LevelDB 1.23): tables written by LevelDB's own
TableBuilder (Debian's libleveldb) and by the model's TableWriter, raw or with Snappy blocks, read from a
simulated AXI4 memory at any alignment, give the model's entries one for one; mutated tables (bits flipped
anywhere, in the footer, the index block or a data block, cut short, the footer's index handle rewritten, a
data block's first restart point changed, a Snappy block's bits, raw length or last literal changed with its
CRC made right; seeded and Hypothesis-made) give exactly the model's error code and table offset and the
entries it delivers before it; a Snappy block over the unit's block buffer gives the model's verdict at that
limit; random stalls on the AXI channels and on the entry and status streams; never
a hang (the harness's cycle bound). The harness: hw/ip/table_engine/dv/table_reader_harness.cpp
(doc/table_reader.md)."""
from __future__ import annotations

import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from te_rtl import run_ok, width_fixture

from lsmc.build import table_engine_reader as rtl
from lsmc.build.table_engine_rtl import summary

SNAPPY_DBBENCH_FLOOR = 5.0  # stored bytes a clock, db_bench-like Snappy table (measured 5.56: doc/table_reader.md)


width = width_fixture(rtl.build_harness)


@pytest.mark.parametrize("source,model", [("leveldb", 0), ("model", 1)])
def test_tables_match_model(width, source, model):
    """Whole tables (block sizes 256 B to 16 KiB, restart intervals 1 to 4 and 16, keys to the limit) read as
    the model reads them, entry for entry; some LevelDB tables have a key without its tag (BAD_BLOCK) or keys
    over the limit (KEY_TOO_LONG)."""
    s = run_ok(rtl.run, width, "--seed", 21 + model, "--tables", 25, "--model", model)
    assert s["ok"] >= 20 and s["entries"] > 1500


@pytest.mark.parametrize("pin,pout", [(0.5, 0.0), (0.0, 0.5), (0.6, 0.6)])
def test_stalls(width, pin, pout):
    s = run_ok(rtl.run, width, "--seed", 30, "--tables", 15, "--mutate", 0.3, "--verify", 0.5, "--pin", pin,
               "--pout", pout, "--max-entries", 150)
    assert s["ok"] >= 5


def test_mutated_tables_named_error(width):
    """Every mutation kind: the model's error code and offset (or its entries), every code this unit raises."""
    s = run_ok(rtl.run, width, "--seed", 7, "--tables", 250, "--mutate", 1, "--verify", 0.5, "--max-entries", 120,
               "--quiet")
    assert s["errors"] > 100 and s["ok"] > 30
    codes = dict(kv.split(":") for kv in s["codes"].split(","))
    assert {"BAD_MAGIC", "BAD_CRC", "BAD_BLOCK", "BAD_VARINT", "TRUNCATED", "KEY_TOO_LONG"} <= codes.keys()


def test_read_latency(width):
    """No latency and a long one (more than the read FIFO covers): the same verdicts."""
    for latency in (0, 150):
        run_ok(rtl.run, width, "--seed", 40 + latency, "--tables", 10, "--mutate", 0.3, "--latency", latency,
               "--max-entries", 100)


@pytest.mark.parametrize("source,model", [("leveldb", 0), ("model", 1)])
def test_snappy_tables_match_model(width, source, model):
    """Tables with Snappy blocks (index block included) from LevelDB's TableBuilder and from the model's
    TableWriter, CRCs checked on half: decompressed and read as the model reads them, entry for entry; blocks
    that do not shrink by 1/8 stay raw, so raw and Snappy blocks alternate in one table."""
    s = run_ok(rtl.run, width, "--seed", 70 + model, "--tables", 16, "--model", model, "--snappy", 1,
               "--max-entries", 200, "--verify", 0.5)
    assert s["snappy_tables"] >= 14 and s["ok"] >= 12 and s["entries"] > 1000
    assert 0.2 * s["blocks"] < s["snappy_blocks"] < 0.95 * s["blocks"]


def test_snappy_mutations_named_error(width):
    """Snappy tables mutated: bits in a Snappy block with its CRC made right (so the decompressor sees them),
    its raw length made larger (over the limit too), a literal that claims more bytes than follow, and every
    general mutation (cut short, bits anywhere, ...): the model's code and offset, the entries before it."""
    s = run_ok(rtl.run, width, "--seed", 75, "--tables", 120, "--snappy", 1, "--mutate", 1, "--verify", 0.5,
               "--max-entries", 120, "--quiet")
    codes = dict(kv.split(":") for kv in s["codes"].split(","))
    assert {"BAD_SNAPPY", "BAD_CRC", "BAD_BLOCK", "TRUNCATED"} <= codes.keys()
    assert int(codes["BAD_SNAPPY"]) >= 15 and s["snappy_tables"] >= 80


def test_snappy_stalls(width):
    """Snappy tables, some mutated, with every stream stalling (AXI channels, entries, status)."""
    s = run_ok(rtl.run, width, "--seed", 80, "--tables", 12, "--snappy", 1, "--mutate", 0.3, "--verify", 0.5,
               "--pin", 0.5, "--pout", 0.5, "--max-entries", 120)
    assert s["snappy_tables"] >= 10


def test_snappy_block_over_buffer(width):
    """Values up to 200 KiB: a Snappy block decompressing past the unit's block buffer (SNAPPY_BYTES) is
    BAD_SNAPPY at the block, the model's verdict with that limit; the smaller blocks read as before."""
    s = run_ok(rtl.run, width, "--seed", 90, "--tables", 10, "--snappy", 1, "--max-value", 200000, "--max-entries", 40)
    assert "BAD_SNAPPY" in s["codes"] and s["ok"] >= 2


@pytest.mark.long  # a reader build more (the ECP5's 32 KiB buffer); scripts/test keeps the same verdict on the
# simulation builds' buffer (test_snappy_block_over_buffer)
def test_snappy_block_over_the_ecp5_buffer():
    """The readers of the engine's ECP5 build (preset ecp5, its Snappy block size from the preset's manifest:
    32 KiB) on values up to 60 KiB: a block over that limit is BAD_SNAPPY at the block, the model's verdict with
    that limit (never a wrong entry), where the simulation builds' 64 KiB buffer reads more of the same tables."""
    import json

    from lsmc.fpga import flow
    small = json.loads((flow.table_engine_verilog().parent / "manifest.json").read_text())["config"]["snappyBytes"]
    assert small < rtl.SNAPPY_BYTES
    case = ("--seed", 91, "--tables", 12, "--snappy", 1, "--max-value", 60000, "--max-entries", 40)
    got = {}
    for limit in (small, rtl.SNAPPY_BYTES):
        res = rtl.run(16, *case, snappy_bytes=limit)
        s = summary(res)
        assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0, res.stdout[-3000:]
        got[limit] = (dict(kv.split(":") for kv in s["codes"].split(",") if kv != "-"), s["ok"])
    codes, ok = got[small]
    assert int(codes.get("BAD_SNAPPY", 0)) > int(got[rtl.SNAPPY_BYTES][0].get("BAD_SNAPPY", 0)) and ok >= 2


def test_memory_errors(width):
    """A read answered with SLVERR: BAD_JOB at offset 0 (on a footer byte always; elsewhere when the unit read
    it, else the model's verdict), never a hang."""
    s = run_ok(rtl.run, width, "--seed", 60, "--tables", 30, "--slverr", 1, "--max-entries", 100)
    assert int(dict(kv.split(":") for kv in s["codes"].split(","))["BAD_JOB(SLVERR)"]) >= 15


def test_handle_ram_full(width):
    """A table of more data blocks than the handle RAM holds (db_bench-like entries in 256-byte blocks): the
    first MAX_BLOCKS blocks' entries, then BAD_JOB at the next index entry (a limit the model does not have)."""
    s = run_ok(rtl.run, width, "--dbbench", 4000, "--block-size", 256, "--tables", 1)
    assert s["codes"] == "BAD_JOB:1" and s["entries"] == 3 * rtl.MAX_BLOCKS  # 3 entries a block


def test_db_bench_throughput():
    """The db_bench-like table (16-byte keys, 100-byte values, 4 KiB blocks, raw) at W = 16: the input bytes a
    clock, footer and index included (doc/table_reader.md: 10.1), kept from falling back; and the bytes the bus
    carried: its raw data blocks are read in one pass, one after the other (no tail read before each, no bus word
    read again at a block's edge), so the whole table costs its own size and a few words more (the footer, which
    shares a word with the index block's end, and the tail reads of the index block and the first data block: 69
    bytes measured; the tail-first read of each of its 113 data blocks added 3,909: 463,776 bytes)."""
    s = run_ok(rtl.run, 16, "--dbbench", 4000, "--tables", 1)
    assert s["entries"] == 4000 and s["bytes_per_cycle"] > 10.0
    assert s["bytes"] <= s["read_bytes"] <= s["bytes"] + 6 * 16


def test_db_bench_snappy_throughput():
    """The same table written with Snappy at W = 16: stored bytes a clock (doc/table_reader.md), kept from
    falling back."""
    s = run_ok(rtl.run, 16, "--dbbench", 4000, "--tables", 1, "--snappy", 1)
    assert s["entries"] == 4000 and s["snappy_tables"] == 1 and s["bytes_per_cycle"] > SNAPPY_DBBENCH_FLOOR


def test_comparison_can_fail(tmp_path):
    """With one byte of the model's entries changed every table mismatches; a case file cut mid-record is
    refused with one line."""
    res = rtl.run(16, "--seed", 3, "--tables", 4, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 4, res.stdout
    bad = tmp_path / "bad.bin"
    bad.write_bytes(struct.pack("<I", 100) + b"\x01" + b"x" * 5)
    res = rtl.run(16, "--cases", bad)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "--cases" in res.stderr


@pytest.fixture(scope="module")
def base_tables(tmp_path_factory):
    """Small tables (both writers) as the harness makes them, for Hypothesis to mutate."""
    path = tmp_path_factory.mktemp("tables") / "tables.bin"
    run_ok(rtl.run, 16, "--seed", 50, "--tables", 8, "--max-entries", 40, "--max-value", 300, "--snappy", 0.5,
           "--dump", path)
    data, out, p = path.read_bytes(), [], 0
    while p < len(data):
        n = struct.unpack_from("<I", data, p)[0]
        out.append(data[p + 5:p + 5 + n])
        p += 5 + n
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(0, 7), seed=st.integers(0, 2**32 - 1), edits=st.integers(1, 6),
       cut=st.booleans(), verify=st.booleans())
def test_hypothesis_mutations(width, base_tables, tmp_path, pick, seed, edits, cut, verify):
    """Bytes replaced (and maybe the table cut) by Hypothesis: the model's verdict, at each width."""
    r = random.Random(seed)
    t = bytearray(base_tables[pick % len(base_tables)])
    for _ in range(edits):
        t[r.randrange(len(t))] = r.randrange(256)
    if cut:
        t = t[:r.randrange(len(t) + 1)]
    f = tmp_path / "case.bin"
    f.write_bytes(struct.pack("<IB", len(t), verify) + bytes(t))
    run_ok(rtl.run, width, "--cases", f, "--pin", 0.3, "--pout", 0.3)
