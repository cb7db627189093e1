"""Shared pytest set-up. The host tools are the installed package `lsmc` (scripts/setup installs it
editable); the host-firmware helpers in tests/fw_host are on pytest's `pythonpath` (pytest.ini)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running full-system simulation")
