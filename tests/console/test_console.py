"""The firmware console (`lsmc> `, fw/apps/lsmc/console.c, docs/console.md) over a serial line: the same
tests against the SoC simulator, the LiteX board simulation or a board (conftest.py picks the line).

Results are checked against the project's independent models: the workload a `run N` generates is
rebuilt on the host (the firmware's generator compiled natively) and merged by the Python KB16 model;
the IP's ID comes from the generated register header. Bad input must give an error line and the
prompt, and the next job must still pass; messages are not matched word for word (the firmware's
wording is its own), only the kind of line.
"""
from __future__ import annotations

import random
import re

import pytest

from lsmc.console import PROMPT
from lsmc.report.table3 import parse_run_line

ERROR_LINE = re.compile(r"(?im)^.*\b(error|usage|unknown|invalid|out of range|too (long|many|large|big)|"
                        r"must be|bad|fail(ed|s)?|not allowed)\b.*$")
COMMANDS = ["help", "run", "bench", "errtest", "job", "regs", "reset", "mode", "exit"]
TABLE3_SIZES = [512, 1024, 2048, 4096, 8192]


def ip_id_magic() -> int:
    """The IP's ID: the magic the generated register header names (`magic "LSMC"`, from the RTL's
    register description) as the big-endian ASCII word the firmware's CIP_ID_MAGIC holds."""
    from lsmc.paths import ROOT
    from lsmc.sim import ipsim
    hdr = (ipsim.generate(128) / "compaction_regs.h").read_text()
    m = re.search(r"#define\s+CIP_ID\s+0x[0-9A-Fa-f]+\s+/\*.*magic \"(\w{4})\"", hdr)
    assert m, "the ID register's magic is not named in compaction_regs.h"
    magic = int.from_bytes(m.group(1).encode(), "big")
    fw = re.search(r"#define\s+CIP_ID_MAGIC\s+(0x[0-9A-Fa-f]+)", (ROOT / "fw/drivers/compaction.h").read_text())
    assert fw and int(fw.group(1), 16) == magic, "firmware and RTL disagree on the ID magic"
    return magic


def expected_run(n: int, overlap: int = 25, group: int = 16) -> dict:
    """What `run N [overlap] [G]` must report, from the host: the firmware's workload generator (same seed
    rule as bench.c: 0x5EED0000 ^ N, N/2 + N - N/2 short keys) and the Python KB16 model's merge."""
    from lsmc.build.firmware import Kb16Lib
    from lsmc.model import kb16
    rc, run0, run1 = Kb16Lib().gen_runs("short", seed=0x5EED0000 ^ n, n0=n // 2, n1=n - n // 2,
                                        overlap_pct=overlap, group=group)
    assert rc == 0
    merged, _invalid = kb16.merge(run0, run1, group)
    return {"entries_in": (len(run0) + len(run1)) // 16, "bytes_in": len(run0) + len(run1),
            "entries_out": len(merged) // 16}


def output_lines(out: str) -> list[str]:
    """Console output lines without the echoed command and the trailing prompt."""
    lines = [l.rstrip("\r") for l in out.splitlines()]
    return [l for l in lines[1:] if l and not l.startswith("lsmc> ")]


def assert_error(out: str, what: str) -> None:
    assert ERROR_LINE.search("\n".join(output_lines(out))), f"{what}: no error line in {out!r}"


# ------------------------------------------------------------------------------------ start, help
def test_banner_and_ip_id(console):
    banner = console.endpoint.banner
    if console.endpoint.target != "board" or "lsmc firmware" in banner:
        assert re.search(r"lsmc firmware \S+ \((simulation|board), SIM_ARG \d+\)", banner), banner
        m = re.search(r"compaction IP v(\d+)\.(\d+), (\d+)-bit streams", banner)
        assert m, banner
        assert int(m.group(3)) in (32, 128)
        assert "not found" not in banner
    out = console.cmd("regs")
    m = re.search(r"^\s*\w+\s+ID\s+0x([0-9a-fA-F]{8})\s*$", out, re.M)
    assert m, out
    assert int(m.group(1), 16) == ip_id_magic()


def test_help_lists_every_command(console):
    out = console.cmd("help")
    for c in COMMANDS:
        assert re.search(rf"^\s+{c}\b", out, re.M), f"help does not list {c}: {out}"
    # the paper's bracket is named by its authors, as the project cites the paper everywhere
    assert "Peng et al.'s (paper)" in out, out


# ------------------------------------------------------------------------------------------- jobs
@pytest.mark.parametrize("n,overlap,group", [(64, 25, 16), (512, 25, 16), (256, 0, 16), (256, 100, 16),
                                             (300, 50, 4), (2, 25, 16)])
def test_run_counters(console, n, overlap, group):
    out = console.cmd(f"run {n} {overlap} {group}", timeout=300)
    row = parse_run_line(out)
    exp = expected_run(n, overlap, group)
    assert row["pass"], out
    for k, v in exp.items():
        assert row[k] == v, f"{k}: console {row[k]}, host model {v}\n{out}"
    assert 0 < row["hw_cycles"] <= row["fw_cycles"], out
    assert row["sw_cycles"] > 0
    # the derived columns follow from the counters at 100 MHz
    assert row["us_per_entry"] == pytest.approx(row["fw_cycles"] / 100 / row["entries_in"], rel=1e-3, abs=2e-6)
    assert row["mb_per_s"] == pytest.approx(row["bytes_in"] * 100 / row["fw_cycles"], rel=1e-2, abs=0.01)


@pytest.mark.slow
@pytest.mark.long
def test_bench_through_board_report(endpoint, tmp_path):
    """`lsmc board-report` on the same serial line: `bench` parsed into Table III (the report module's
    TABLE3 parser), written as table3.csv/.md naming the source; rows checked against the host model."""
    from lsmc.console import board_report_main
    from lsmc.report.table3 import read_table3_csv
    rc = board_report_main(["--port", endpoint.url, "--out-dir", str(tmp_path), "--quiet", "--timeout", "3600"])
    log = (tmp_path / "board-console.log").read_text()
    assert rc == 0, log[-3000:]
    rows = read_table3_csv(tmp_path / "table3.csv")
    assert [r["entries_in"] for r in rows] == TABLE3_SIZES, log[-3000:]
    for r in rows:
        assert r["pass"], r
        exp = expected_run(r["entries_in"])
        assert (r["bytes_in"], r["entries_out"]) == (exp["bytes_in"], exp["entries_out"]), (r, exp)
        assert 0 < r["hw_cycles"] <= r["fw_cycles"] < r["sw_cycles"], r
    want = "board" if endpoint.target == "board" else "simulation"
    assert f"Source: **{want}**" in (tmp_path / "table3.md").read_text()


def test_errtest(console):
    out = console.cmd("errtest", timeout=900)
    cases = re.findall(r"^errtest (.+?)\s+(PASS|FAIL)\b", out, re.M)
    assert len(cases) >= 8, out
    assert all(v == "PASS" for _, v in cases), [c for c in cases if c[1] != "PASS"]
    assert re.search(r"^errtest: PASS \(0 failures\)", out, re.M), out
    console.check_alive()


# ------------------------------------------------------------------------------ registers, modes
def test_regs(console):
    out = console.cmd("regs")
    for name in ["ENCODER_DATA_OUT_CNT", "INVALID_ADDR_OUT_CNT", "KEY0_ENTRY_IN_CNT", "KEY1_ENTRY_IN_CNT",
                 "COUNT_CONTROL", "THROUGHPUT_COUNTER", "ID", "VERSION", "STATUS", "HW_CYCLES"]:
        assert re.search(rf"\b{name}\s+0x[0-9a-fA-F]{{8}}", out), f"regs lacks {name}: {out}"
    assert len(re.findall(r"^dma\d: ADDR 0x", out, re.M)) == 4, out
    assert not re.search(r"STATUS: .*\bBUSY\b", out), "IP busy while idle"


def test_regs_follow_a_job(console):
    """After `run N` the Table I counters in `regs` hold that job's numbers."""
    n = 128
    row = console.check_alive(n)
    out = console.cmd("regs")
    regs = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"\b([A-Z0-9_]+)\s+0x([0-9a-fA-F]{8})", out)}
    assert regs["HW_CYCLES"] == row["hw_cycles"], out
    assert regs["KEY0_ENTRY_IN_CNT"] + regs["KEY1_ENTRY_IN_CNT"] > 0
    assert re.search(r"STATUS: .*\bDONE\b", out), out


def test_mode(console):
    assert re.search(r"^mode: (irq|poll)\s*$", console.cmd("mode"), re.M)
    for m in ("poll", "irq"):
        out = console.cmd(f"mode {m}")
        assert re.search(rf"^mode: {m}\s*$", out, re.M), out
        console.check_alive()
    out = console.cmd("mode sideways")
    assert_error(out, "mode sideways")
    assert re.search(r"^mode: irq\s*$", console.cmd("mode"), re.M), "a bad mode changed the mode"


def test_reset(console):
    out = console.cmd("reset")
    assert re.search(r"soft reset: ok", out), out
    out = console.cmd("regs")
    assert not re.search(r"STATUS: .*\b(BUSY|ERROR)\b", out), out
    console.check_alive()


# ------------------------------------------------------------------------------------ bad input
def test_empty_and_blank_lines(console):
    for line in ["", "   ", "\t", " \t "]:
        out = console.cmd(line)
        assert not output_lines(out), f"{line!r} printed {out!r}"
    console.check_alive()


@pytest.mark.parametrize("line", ["frobnicate", "RUN 64", "helpme", "x" * 40, "run64", "?"])
def test_unknown_command(console, line):
    assert_error(console.cmd(line), line)
    console.check_alive()


@pytest.mark.parametrize("length", [95, 96, 200, 1000])
def test_over_long_line(console, length):
    """A line at or beyond the console's buffer: an error line (a refused line, or the usage of the
    number it cut), never a job, then the prompt."""
    line = ("run 64 " + "9" * length)[:length]
    out = console.cmd(line, timeout=120)
    assert_error(out, f"{length}-character line")
    assert "entries_in=" not in out, out
    console.check_alive()


@pytest.mark.parametrize("args", ["run", "run x", "run -1", "run 0", "run 1", "run 99999999999999999999",
                                  "run 4294967297", "run 1000000", "run 64 101", "run 64 -5", "run 64 25 0",
                                  "run 64 25 1", "run 64 25 99999", "run 64 25 16 7 8 9", "run 0x", "exit x"])
def test_out_of_range_numbers(console, args):
    out = console.cmd(args, timeout=120)
    assert_error(out, args)
    assert not re.search(r"entries_in=.*\bPASS\b", out), f"{args!r} ran a job: {out}"
    console.check_alive()


def test_binary_garbage(console):
    rng = random.Random(0x1BAD)
    for _ in range(3):
        console.write(bytes(rng.randrange(256) for _ in range(300)))
        console.sync(timeout=120)
    # control characters, an escape sequence, DEL and backspaces over an empty line
    console.write(b"\x00\x01\x1b[A\x7f\x08\x08\x08\n")
    console.sync()
    console.check_alive()


def test_backspace_edits_the_line(console):
    out = console.cmd(b"rux\x08n 64")
    row = parse_run_line(out)
    assert row["pass"] and row["entries_in"] == 64, out


def test_input_while_a_job_runs(console):
    """Bytes typed while a job runs (they reach the UART during the C merge and the IP's job) must not
    break it: the job passes, the prompt comes back, the typed lines are at most taken as ordinary
    input afterwards, and the next job passes."""
    n = 4096
    console.write(f"run {n}\n".encode() + b"help\nfrobnicate\n" + bytes(range(1, 32)) + b"\xff\xfe\n")
    out = console.until("entries_in=", timeout=900) + console.until(PROMPT, timeout=300)
    row = parse_run_line(out)
    assert row["pass"] and row["entries_in"] == n, out
    console.check_alive()
