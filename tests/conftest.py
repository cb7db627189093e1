"""Shared pytest set-up: host tools live in scripts/ (package `lsmc`)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running full-system simulation")
