"""The ONFI model on its own (sim/nand/model_test.cpp): legal sequences behave like the datasheet part,
and every timing/protocol check fires on a sequence that breaks it."""
import hashlib
import subprocess

import pytest

from lsmc import build
from lsmc.paths import ROOT

MODEL = ROOT / "nand" / "model"


@pytest.fixture(scope="module")
def exe():
    out = build.BUILD / "sim" / "nand-model-test"
    out.mkdir(parents=True, exist_ok=True)
    srcs = [ROOT / "sim" / "nand" / "model_test.cpp", MODEL / "onfi_model.cpp", MODEL / "onfi_model.h"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in srcs)).hexdigest()
    exe = out / "model_test"
    stamp = out / ".stamp"
    if not (exe.exists() and stamp.exists() and stamp.read_text() == digest):
        build.run(["g++", "-std=c++17", "-O1", "-Wall", "-I", MODEL, "-o", exe, srcs[0], srcs[1]])
        stamp.write_text(digest)
    return exe


def run(exe, scenario):
    r = subprocess.run([str(exe), scenario], capture_output=True, text=True, timeout=60)
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("result "):
            k, _, v = line[7:].partition(" ")
            results.setdefault(k, []).append(v)
    return r, results


def test_legal_session(exe):
    r, res = run(exe, "legal")
    assert r.returncode == 0, r.stdout
    assert res["id"] == ["2c dc 90 95 56"]
    assert res["status"] == ["e0"]
    assert res["prog_status"] == ["e0"]
    assert res["page"] == ["a2 a3 a4 a5"]  # column 2 of the programmed page
    assert res["mode"] == ["3"]
    assert res["features"] == ["03"]


@pytest.mark.parametrize("scenario,message", [
    ("twp", "tWP 20 ns < 50 ns"),
    ("twc", "tWH 30 ns < 30|tWC"),
    ("tdh", "tDH 5 ns < 20 ns"),
    ("tadl", "tADL"),
    ("twhr", "tWHR"),
    ("busy_cmd", "latched while busy"),
    ("busy_read", "RE# data output while busy"),
    ("trr", "tRR"),
    ("contention", "bus contention"),
    ("unsupported", "unsupported command 85h"),
    ("bad_mode", "timing mode 6 not supported"),
    ("sequence", "out of sequence"),
])
def test_checker_fires(exe, scenario, message):
    r, _ = run(exe, scenario)
    assert r.returncode == 3, (scenario, r.stdout, r.stderr)
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("VIOLATION NAND VIOLATION [dut]") and "timing mode 0" in line
    assert any(m in line for m in message.split("|")), line


def test_status_errors_and_bad_block_marker(exe):
    r, res = run(exe, "status_errors")
    assert r.returncode == 0, r.stdout
    assert res["first"] == ["e0"]
    assert res["again"] == ["e1"]  # programming a programmed page: FAIL
    assert res["bad_erase"] == ["e1"]  # erasing a factory bad block: FAIL
    assert res["marker"] == ["00"]


def test_stuck_busy(exe):
    r, res = run(exe, "stuck")
    assert r.returncode == 0, r.stdout
    assert res["rb"] == ["0", "1"]
    assert res["status"] == ["80"]  # RDY = ARDY = 0 while stuck


def test_output_timing_junk_before_trea(exe):
    r, res = run(exe, "early_sample")
    assert r.returncode == 0, r.stdout
    assert res["byte"] == ["2c", "dc", "90", "95", "56"]
    assert int(res["junk"][0]) >= 3  # junk (random) before tREA, the real byte after it
