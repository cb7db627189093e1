"""Shared pytest set-up. The host tools are the installed package `lsmc` (scripts/setup installs it
editable); the host-firmware helpers in tests/fw_host are on pytest's `pythonpath` (pytest.ini).

Hypothesis runs a bounded number of examples per property in `scripts/test` (profile `bounded`);
LSMC_FUZZ_LONG=1 selects the long profile (`long`: 100x more, no deadline) for a fuzzing session.

Tests marked `long` (each many minutes on 2 cores, with a shorter representative beside them in the
default run) are skipped unless LSMC_LONG=1, so that `scripts/test` stays within CI's time budget."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("bounded", max_examples=200, deadline=None, derandomize=False,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("long" if os.environ.get("LSMC_FUZZ_LONG") == "1" else "bounded")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running full-system simulation")
    config.addinivalue_line("markers", "long: many minutes; runs only with LSMC_LONG=1")


# The files that take longest (builds they start, simulations), longest first. pytest-xdist (--dist loadfile,
# --no-loadscope-reorder in pytest.ini) hands files to its workers in collection order, so these start first and
# the many short files fill in at the end instead of one long file running alone on the last worker. Figures:
# a fresh-clone CI on 2 cores (seconds, builds included).
LONGEST_FIRST = (
    "tests/test_leveldb.py",  # LevelDB 1.23 with the offload library: ~320 s build, db_test subsets
    "tests/test_boards.py",  # the LiteX board simulation: ~300 s build, BIOS and a job
    "tests/test_fw_host.py",  # the Table III SoC build (~150 s without PGO: scripts/test), 400 tests
    "tests/test_table_engine_top.py",  # the engine's K = 4 harness (~190 s)
    "tests/test_table_engine_unit.py",  # the register front end's harness (~190 s)
    "tests/test_te_plan_soc.py",  # the tests' table-engine SoC (te_rtl.SOC_TEST_PRESET) and its jobs
    "tests/test_soc_units.py",  # the 2-unit SoC (~160 s)
    "tests/test_sim_clock_gate.py",  # the free-running 2-unit SoC (~130 s)
    "tests/test_tables_soc.py",  # the same SoC, as test_tables_soc_parts.py
    "tests/test_tables_soc_parts.py",
    "tests/test_table_engine_table_writer.py",
    "tests/test_sim_args.py",
    "tests/test_dma_port_slice.py",
    "tests/test_table_engine_cascade.py",
    "tests/test_table_engine_table_reader.py",
)


def _run_longest_files_first(items):
    rank = {f: i for i, f in enumerate(LONGEST_FIRST)}
    counts: dict[str, int] = {}
    for item in items:
        counts[item.nodeid.split("::")[0]] = counts.get(item.nodeid.split("::")[0], 0) + 1
    order = {id(item): i for i, item in enumerate(items)}

    def key(item):  # listed files first, then by number of tests (pytest-xdist's own default order)
        f = item.nodeid.split("::")[0]
        return rank.get(f, len(rank)), -counts[f], f, order[id(item)]
    items.sort(key=key)


def pytest_collection_modifyitems(config, items):
    _run_longest_files_first(items)
    if os.environ.get("LSMC_LONG") == "1":
        return
    skip = pytest.mark.skip(reason="long test: LSMC_LONG=1 runs it (scripts/test keeps a shorter representative)")
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(skip)
