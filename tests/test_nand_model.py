"""The ONFI model on its own (hw/ip/nand/dv/model_test.cpp): legal sequences behave like the datasheet part,
and every timing/protocol check fires on a sequence that breaks it."""
import hashlib
import subprocess

import pytest

from lsmc import build
from lsmc.build import facts
from lsmc.paths import ROOT

MODEL = ROOT / "hw" / "ip" / "nand" / "model"


@pytest.fixture(scope="module")
def exe():
    out = build.BUILD / "sim" / "nand-model-test"
    out.mkdir(parents=True, exist_ok=True)
    srcs = [ROOT / "hw" / "ip" / "nand" / "dv" / "model_test.cpp", MODEL / "onfi_model.cpp", MODEL / "onfi_model.h",
            facts.include_dir() / "onfi_timing.h"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in srcs)).hexdigest()
    exe = out / "model_test"
    stamp = out / ".stamp"
    if not (exe.exists() and stamp.exists() and stamp.read_text() == digest):
        build.run(["g++", "-std=c++17", "-O1", "-Wall", "-I", MODEL, "-I", facts.FACTS, "-o", exe, srcs[0], srcs[1]])
        stamp.write_text(digest)
    return exe


def run(exe, scenario, *args):
    r = subprocess.run([str(exe), scenario, *map(str, args)], capture_output=True, text=True, timeout=60)
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


def _violation(exe, scenario, *args) -> str:
    """Run a checker scenario that must end in a violation (exit 3); its last line, the checker's report."""
    r, _ = run(exe, scenario, *args)
    assert r.returncode == 3, (scenario, r.stdout, r.stderr)
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("VIOLATION NAND VIOLATION [dut]"), line
    return line


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
    line = _violation(exe, scenario)
    assert "timing mode 0" in line, line
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


# ---- NV-DDR (the MT29F16G08ABABA part): a bus-functional NV-DDR host in model_test.cpp --------------

@pytest.mark.parametrize("mode", range(6))
def test_nvddr_session_every_mode(exe, mode):
    """SET FEATURES 01h (interface 1) switches to NV-DDR; ID, status, parameter page, erase, program, read
    and GET FEATURES then run with every NV-DDR check of that mode on."""
    r, res = run(exe, "ddr_legal", mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert res["nvddr"] == [f"1 mode {mode}"]
    assert res["id"] == ["2c 48 00 26 89"]
    assert res["status"] == ["e0"] and res["prog_status"] == ["e0"]
    # the parameter page advertises NV-DDR modes 0..5, the NV-DDR and multi-plane feature bits, CRC correct
    assert res["param"] == ["ONFI crc_ok 1 nvddr_modes 3f features 28"]
    assert res["page_ok"] == ["1"] and res["array_ok"] == ["1"]
    assert res["features"] == [f"{0x10 | mode:02x} 00 00 00"]


def test_nvddr_data_eye(exe):
    """Data output is valid only inside the eye [DQS edge + tDQSQ, edge + tCK/2 - tQHS): sampling at every
    skew over two clock periods finds exactly one eye of 3.15 ns in mode 5 (tDQSCK 7.3 ns), junk elsewhere."""
    r, res = run(exe, "ddr_eye", 5)
    assert r.returncode == 0, r.stdout + r.stderr
    good, first, last = map(int, res["eye"][0].split())
    assert 7300 + 850 <= first <= 7300 + 850 + 250, first
    assert 7300 + 5000 - 1000 - 250 <= last < 7300 + 5000 - 1000, last
    assert good == (last - first) // 250 + 1  # one contiguous eye


def test_nvddr_reset_returns_to_sdr(exe):
    r, res = run(exe, "ddr_reset", 5)
    assert r.returncode == 0, r.stdout + r.stderr
    assert res["nvddr"] == ["1 mode 5", "0 mode 0"]


@pytest.mark.parametrize("scenario,message", [
    ("ddr_tck", "tCK 9500 ps < 10000 ps"),
    ("ddr_tds", "tDS 200 ps < 900 ps"),
    ("ddr_tdqss", "tDQSS 20000 ps outside [7500, 12500] ps"),
    ("ddr_tcad", "tCAD 10000 ps < 45000 ps"),
    ("ddr_twhr", "tWHR"),
    ("ddr_contention", "bus contention"),
    ("ddr_sdr_part", "data interface 1 not supported"),
])
def test_nvddr_checker_fires(exe, scenario, message):
    assert message in _violation(exe, scenario, 5)


# ---- multi-plane operations (the MT29F16G08ABABA's 2 planes), SDR mode 0 ---------------------------------

def test_multiplane_program_read_erase(exe):
    """80h..11h..80h..10h programs a page in each plane in one tPROG, 00h..32h..00h..30h reads both in one
    tR (output starts in the plane addressed last, 06h-E0h selects the other plane's register and column),
    60h..D1h..60h..D0h erases both blocks. The parameter page says so: features bit 3, optional command
    06h-E0h (bit 6) besides 15h/31h/3Fh/GET-SET FEATURES, one plane address bit, attributes 04h (block
    address restriction; program cache with multi-plane, no cache read), CRC correct."""
    r, res = run(exe, "mp_legal")
    assert r.returncode == 0, r.stdout + r.stderr
    assert res["param"] == ["features 0028 opt 0047 planes_bits 1 attr 04 crc_ok 1"]
    assert int(res["dbsy_ns"][0]) < 5000  # 11h: tDBSY (0.5 us) + the bus cycles, no tPROG (5 us here)
    assert 5000 <= int(res["prog_ns"][0]) < 2 * 5000  # 10h: one tPROG for both planes
    assert res["prog_status"] == ["e0"] and res["erase_status"] == ["e0"]
    assert res["last_plane"] == ["b0 b1 b2 b3"]
    assert res["plane0_col1"] == ["a1 a2 a3"] and res["plane1"] == ["b0 b1 b2 b3"]
    assert res["erased"] == ["ff ff"]


@pytest.mark.parametrize("scenario,message", [
    ("mp_same_plane", "multi-plane program: blocks 4 and 6 are both in plane 0"),
    ("mp_page", "page addresses 0 and 1 differ"),
    ("mp_block", "blocks 4 and 7 differ outside the plane bits"),
    ("mp_sequence", "command 00h inside a multi-plane sequence (after 11h only 80h, 70h or FFh)"),
    ("mp_read_cache", "31h/3Fh without a single-plane page read"),
    ("mp_too_many", "every plane is addressed"),
    ("mp_no_register", "06h-E0h: row 640 is in no page register"),
    ("mp_one_plane", "unsupported command 11h"),
])
def test_multiplane_checker_fires(exe, scenario, message):
    assert message in _violation(exe, scenario)


def test_multiplane_cache_program(exe):
    """80h..11h..80h..15h hands both planes' pages to the array at once (program cache with multi-plane,
    byte 114 bit 2); the closing group ends with 10h; every page lands (read back by a multi-plane read)."""
    r, res = run(exe, "mp_cache_program")
    assert r.returncode == 3, r.stdout + r.stderr  # the scenario ends on a deliberate violation
    # after 15h the cache register is free (RDY) while the array programs (ARDY 0); after 10h both ready
    assert res["status"] == ["c0", "c0", "e0"] and res["plane0"] == ["20 21"]
    assert "06h-E0h: row 641 is in no page register" in r.stdout.strip().splitlines()[-1]
