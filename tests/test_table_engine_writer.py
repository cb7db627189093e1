"""The table engine's block builder RTL (hw/ip/table_engine/rtl/BlockBuilder.scala) in Verilator: the bytes it
writes for a stream of entries (the block reader's framing, a FLUSH beat closing the block) must equal, byte for
byte with the 5-byte trailer, the blocks of the engine's C++ model (random keys 1 byte to the key limit, values
0 to 64 KiB, restart intervals 1 and 16, 1 to 200 entries) and the data blocks of tables written by LevelDB's
own TableBuilder (Debian's libleveldb, block_size 4096: its flush points), with random stalls on the entry and
output streams; an entry with a key over the limit dropped and reported (KEY_TOO_LONG); a full restart RAM
closing the block;
never a hang (the harness's cycle bound). The harness: hw/ip/table_engine/dv/block_builder_harness.cpp
(doc/rtl.md)."""
from __future__ import annotations

import pytest

from lsmc.build import table_engine_rtl as rtl
from lsmc.build.table_engine_rtl import summary

WIDTHS = (pytest.param(4, marks=pytest.mark.long), 16)  # the narrowest beat (its build: LSMC_LONG=1), the engine's


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"w{w}")
def width(request):
    rtl.build_builder_harness(request.param)
    return request.param




def run_ok(width, *args, max_restarts=None) -> dict:
    res = rtl.run_builder(width, *args, max_restarts=max_restarts)
    s = summary(res)
    assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0 and s["violations"] == 0, \
        f"{res.stdout}\n{res.stderr[-4000:]}"
    return s


@pytest.mark.parametrize("interval", [1, 16])
def test_random_blocks_match_model(width, interval):
    s = run_ok(width, "--seed", 11 + interval, "--blocks", 40, "--interval", interval, "--max-value", 65536)
    assert s["blocks"] == 40 and s["entries"] > 500


def test_leveldb_tablebuilder_blocks(width):
    """The data blocks of tables by LevelDB's own TableBuilder (block_size 4096), entries fed with a FLUSH where
    it flushed: identical bytes, with stalls."""
    s = run_ok(width, "--seed", 31, "--leveldb", 6, "--pin", 0.3, "--pout", 0.3, "--max-value", 8192)
    assert s["blocks"] > 30 and s["entries"] > 300


def test_stalls_on_every_stream(width):
    for seed, (pin, pout) in enumerate([(0.5, 0.0), (0.0, 0.5), (0.6, 0.6)]):
        run_ok(width, "--seed", 100 + seed, "--blocks", 25, "--pin", pin, "--pout", pout, "--max-value", 4096)


def test_comparison_can_fail(width):
    """With one byte of every expected block changed, every block mismatches."""
    res = rtl.run_builder(width, "--seed", 3, "--blocks", 5, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout


def test_key_over_limit_dropped_and_reported(width):
    """An entry whose key is 1 to 16 bytes over the key limit is dropped (the block is the model's without it)
    and the block's status says KEY_TOO_LONG; blocks without one report no error."""
    s = run_ok(width, "--seed", 9, "--blocks", 40, "--long-key", 0.5, "--pin", 0.2, "--pout", 0.2,
               "--max-value", 2048)
    assert 5 < s["long_keys"] < 35


def test_full_restart_ram_closes_the_block():
    """Generated with a restart RAM of 4 offsets (W = 16): an entry needing a 5th restart closes the block first;
    the bytes equal the model's blocks split at the same entries (the harness applies the rule to the model)."""
    s = run_ok(16, "--seed", 4, "--blocks", 40, "--max-restarts", 4, "--max-value", 2048, "--pin", 0.2,
               "--pout", 0.2, "--long-key", 0.2, max_restarts=4)
    assert s["restart_ram_splits"] > 50
