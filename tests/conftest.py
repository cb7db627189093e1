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


def pytest_collection_modifyitems(config, items):
    if os.environ.get("LSMC_LONG") == "1":
        return
    skip = pytest.mark.skip(reason="long test: LSMC_LONG=1 runs it (scripts/test keeps a shorter representative)")
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(skip)
