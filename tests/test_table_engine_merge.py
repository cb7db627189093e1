"""The table engine's merge and drop stage (hw/ip/table_engine/rtl/Merger.scala) in Verilator against the
engine's C++ model: random jobs of K runs (overwrites, deletions, one user key in several runs with
different sequences, unparseable types, snapshots, deeper levels that hold a key or not, internal keys of
8..1032 bytes, values up to several KiB) are written as tables by the model's TableWriter, merged by its
Merger and dropped by its DropRule; the RTL, fed the same entries with random stalls on every input and
the output, must keep the same entries in the same order with the same counters, or stop with the model's
KEY_ORDER error (run and entry) after the same entries; keys of 0..7 bytes or over the limit are refused.
The harness: hw/ip/table_engine/dv/merge_harness.cpp (doc/merge.md)."""
from __future__ import annotations

import pytest
from te_rtl import run_ok

from lsmc.build import table_engine_merge as rtl
from lsmc.build.table_engine_rtl import summary

# The engine's beat with every way count, the narrowest beat at 4 ways, the wider stage (ports of 16 bytes, 32
# inside: MergeConfig's portBytes) at 4 ways; the narrow beat's other way counts (two more builds, about 100 s
# each) with LSMC_LONG=1. (W, K, the stage's width inside; 0: W.)
BUILDS = [pytest.param((w, k, 0), marks=[pytest.mark.long] if (w, k) in ((4, 2), (4, 8)) else [])
          for w in (4, 16) for k in (2, 4, 8)] + [pytest.param((16, 4, 32))]


class Build:
    """One harness build: `run(*args)` runs it."""

    def __init__(self, width: int, ways: int, merge: int):
        self.width, self.ways, self.merge = width, ways, merge

    def run(self, *args):
        return rtl.run(self.width, self.ways, *args, merge=self.merge)


@pytest.fixture(scope="module", params=BUILDS, ids=lambda b: f"w{b[0]}_k{b[1]}" + (f"_m{b[2]}" if b[2] else ""))
def build(request):
    rtl.build_harness(*request.param)
    return Build(*request.param)


@pytest.mark.parametrize("stalls", [0.0, 0.3], ids=["no_stalls", "stalls"])
def test_random_jobs_match_model(build, stalls):
    """Kept entries, their order and the counters equal the model's; both drop rules fire."""
    s = run_ok(build.run, "--seed", 10 + build.ways, "--jobs", 60, "--entries", 30, "--pin", stalls,
               "--pout", stalls)
    assert s["ok"] >= 50 and s["dropped"] > 100 and s["base_drops"] > 5 and s["entries_out"] > 500


def test_malformed_runs_give_the_models_error(build):
    """Keys out of order in a run (swapped, repeated) and one internal key in two runs: KEY_ORDER with the
    model's run and entry index, after exactly the model's entries."""
    s = run_ok(build.run, "--seed", 20, "--jobs", 60, "--entries", 20, "--malformed", 1, "--pin", 0.2,
               "--pout", 0.2)
    assert s["errors"] >= 40 and s["key_order"] == s["errors"] and s["cross_run"] >= 5


def test_refused_key_lengths(build):
    """A HEAD with a key under 8 bytes (no tag) or over the limit: BAD_BLOCK or KEY_TOO_LONG naming the run and
    entry, after exactly the entries the model's merge puts before that run reaches it."""
    s = run_ok(build.run, "--seed", 40, "--jobs", 40, "--entries", 20, "--bad-head", 1, "--pin", 0.2,
               "--pout", 0.2)
    assert s["bad_block"] >= 5 and s["key_too_long"] >= 5


@pytest.mark.parametrize("merge", [0, 32], ids=["w16", "w16_m32"])
def test_heavy_stalls_and_long_values(merge):
    """One side stalled hard, then the other; values up to 16 KiB (W = 16, K = 4; and the wider stage)."""
    for seed, (pin, pout) in enumerate([(0.7, 0.0), (0.0, 0.7), (0.6, 0.6)]):
        run_ok(Build(16, 4, merge).run, "--seed", 30 + seed, "--jobs", 15, "--entries", 20, "--max-value", 16384,
               "--pin", pin, "--pout", pout)


@pytest.mark.parametrize("merge, clocks", [(0, 12), (32, 10)], ids=["w16", "w16_m32"])
def test_db_bench_throughput(merge, clocks):
    """16-byte user keys + 100-byte values at W = 16, K = 4: 12 clocks an entry; the wider stage merges one in 8
    (HEAD, one KEY and 4 VALUE beats of 32 bytes, Check, Decide) but these jobs keep every entry, so its output of
    16-byte beats (HEAD + 2 KEY + 7 VALUE) bounds it at 10 (doc/merge.md)."""
    s = run_ok(Build(16, 4, merge).run, "--seed", 1, "--jobs", 1, "--entries", 500, "--key-len", 24,
               "--value-len", 100)
    assert s["entries_out"] == 2000 and abs(s["cycles"] / 2000 - clocks) < 0.05


def test_comparison_can_fail():
    """With one byte of the model's first kept entry changed, the jobs that keep entries mismatch; a bad
    option is one line and exit status 2."""
    res = rtl.run(16, 4, "--seed", 3, "--jobs", 10, "--snapshot-none", "--tamper", "--quiet")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    res = rtl.run(16, 4, "--seed", 3, "--jobs", 10, "--entries", 10, "--tamper", "--quiet")
    s = summary(res)
    assert res.returncode == 1 and s["mismatches"] >= 5 and s["mismatches"] + s["errors"] + s["ok"] == 10
    res = rtl.run(16, 4, "--key-len", 10)
    assert res.returncode == 2 and "--key-len" in res.stderr and len(res.stderr.strip().splitlines()) == 1
