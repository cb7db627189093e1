"""Shared pytest set-up. The host tools are the installed package `lsmc` (scripts/setup installs it
editable); the host-firmware helpers in tests/fw_host are on pytest's `pythonpath` (pytest.ini).

Hypothesis runs a bounded number of examples per property in `scripts/test` (profile `bounded`);
LSMC_FUZZ_LONG=1 selects the long profile (`long`: 100x more, no deadline) for a fuzzing session."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("bounded", max_examples=200, deadline=None, derandomize=False,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("long" if os.environ.get("LSMC_FUZZ_LONG") == "1" else "bounded")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running full-system simulation")
