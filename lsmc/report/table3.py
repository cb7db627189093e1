"""Table III: the paper's numbers (Peng et al., copied, always labelled as the paper's) and the parsers of
what the project's tools print about it: `compact`'s last line, the firmware's TABLE3 block and `run`
line, and results/table3.csv."""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from lsmc import cliutil
from lsmc.report import paper

CLOCK_MHZ = paper.clock_mhz()  # the IP's and SoC's nominal clock: cycles / CLOCK_MHZ = microseconds

TABLE3_COLUMNS = ["entries_in", "entries_out", "bytes_in", "fw_cycles", "hw_cycles", "us_per_entry",
                  "mb_per_s", "sw_cycles", "pass"]

# The two configurations the demo runs (results/table3.csv leads with them): (a) the faithful
# reproduction, the paper's platform: 32-bit streams, every DMA channel programmed and started inside
# the counter bracket as a Xilinx AXI DMA driver does; (b) this project's design: 128-bit streams,
# channels programmed before the counter, one START_MASK write, one ALL_STATUS read per poll.
CONFIGS = [(32, "paper"), (128, "tight")]
# `ddr`: the SoC harness's DDR preset the row ran on (its `ddr: <preset>` line; docs/ddr-model.md), added
# at the end. A file from before that column is read as `fixed`: the harness's only DDR model then.
CSV_COLUMNS = ["width", "bracket"] + TABLE3_COLUMNS + ["ddr"]
LEGACY_CSV_COLUMNS = CSV_COLUMNS[:-1]
LEGACY_DDR = "fixed"
TABLE3_SIZES = [512, 1024, 2048, 4096, 8192]
# The workload of every Table III row: `short` keys (1..8 bytes: one KB16 entry each), half per run,
# 25 % of run 1's keys also in run 0, G 16; the seed of `kb16 gen` and of `lsmc report`, so the report's
# host C merge and LevelDB time exactly the jobs the SoC ran.
TABLE3_WORKLOAD = {"kind": "short", "overlap": 0.25, "seed": 1, "group": 16}

# The paper (Peng et al. 2024), Table III (lsmc/data/paper.json): key number, byte number, throughput
# counter value, processing efficiency (µs/entry), performance comparison with LevelDB. These are the
# only numbers in the report that were not measured by it; they are always labelled as the paper's.
PAPER_TABLE3 = [tuple(r) for r in paper.table3()]


class ReportError(RuntimeError):
    pass


# ---- parsers of the other tools' outputs -----------------------------------------------------------

_COMPACT = re.compile(r"^cycles=(\d+) entries_in=(\d+) entries_out=(\d+) invalid=(\d+)$")


def parse_compact_line(text: str) -> dict:
    """The last non-empty line of `scripts/compact`: `cycles=C entries_in=N entries_out=M invalid=K`."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if not lines:
        raise ReportError("scripts/compact printed nothing")
    m = _COMPACT.match(lines[-1])
    if not m:
        raise ReportError(f"unexpected last line of scripts/compact: {lines[-1]!r}")
    return dict(zip(("cycles", "entries_in", "entries_out", "invalid"), map(int, m.groups())))


def _table3_row(values: list[str], where: str) -> dict:
    if len(values) != len(TABLE3_COLUMNS):
        raise ReportError(f"{where}: {len(values)} fields, expected {len(TABLE3_COLUMNS)}")
    row = {}
    for k, v in zip(TABLE3_COLUMNS, values):
        v = v.strip()
        try:
            if k == "pass":
                low = v.lower()
                if low not in ("1", "0", "pass", "fail", "true", "false"):
                    raise ValueError(v)
                row[k] = low in ("1", "pass", "true")
            elif k in ("us_per_entry", "mb_per_s"):
                row[k] = float(v)
            else:
                row[k] = int(v)
                if row[k] < 0:
                    raise ValueError(v)
        except ValueError:
            raise ReportError(f"{where}: bad {k} value {v!r}") from None
    return row


def parse_table3_lines(text: str) -> list[dict]:
    """Rows of the firmware's machine-readable block: `TABLE3 <header>`, `TABLE3 <csv row>`...,
    `TABLE3 END`. Other console lines may be interleaved. Raises ReportError on a wrong header, a bad
    row or a missing END (the firmware stopped early)."""
    lines = [l.strip() for l in text.splitlines() if l.strip().startswith("TABLE3")]
    header = "TABLE3 " + ",".join(TABLE3_COLUMNS)
    if not lines:
        raise ReportError("no TABLE3 block in the firmware output")
    if lines[0] != header:
        raise ReportError(f"TABLE3 header is {lines[0]!r}, expected {header!r}")
    if lines[-1] != "TABLE3 END" or lines.count("TABLE3 END") != 1:
        raise ReportError("TABLE3 block not terminated by a single 'TABLE3 END' (firmware stopped early?)")
    return [_table3_row(l[len("TABLE3 "):].split(","), f"TABLE3 row {i + 1}") for i, l in enumerate(lines[1:-1])]


_RUN_KEYS = {"entries_in": "entries_in", "entries_out": "entries_out", "bytes_in": "bytes_in",
             "fw_cycles": "fw_cycles", "hw_cycles": "hw_cycles", "us/entry": "us_per_entry",
             "MB/s": "mb_per_s", "sw_cycles": "sw_cycles"}


def parse_run_line(text: str) -> dict:
    """The result line of the firmware console's `run N`:
    `entries_in=N entries_out=M bytes_in=B fw_cycles=F hw_cycles=H us/entry=U MB/s=S sw_cycles=W sw/fw=R PASS`
    (the last such line of the text), as a TABLE3 row."""
    lines = [l.strip() for l in text.splitlines() if l.strip().startswith("entries_in=")]
    if not lines:
        raise ReportError("no `run` result line in the firmware output")
    words = lines[-1].split()
    fields = dict(w.split("=", 1) for w in words if "=" in w)
    missing = [k for k in _RUN_KEYS if k not in fields]
    if missing or words[-1] not in ("PASS", "FAIL"):
        raise ReportError(f"incomplete `run` result line: {lines[-1]!r}")
    return _table3_row([fields[k] for k in _RUN_KEYS] + [words[-1]], "run result line")


_DDR = re.compile(r"^ddr: (\S+)$")


def parse_ddr(text: str) -> str:
    """The DDR preset a SoC simulation ran on: the harness's `ddr: <preset>` line (the last one)."""
    found = [m.group(1) for l in text.splitlines() if (m := _DDR.match(l.strip()))]
    if not found:
        raise ReportError("the SoC simulation printed no `ddr: <preset>` line")
    return found[-1]


def _config_of(values: list[str], where: str) -> tuple[int, str]:
    width, bracket = (v.strip() for v in values)
    if width not in ("32", "128") or bracket not in ("paper", "tight"):
        raise ReportError(f"{where}: width {width!r} / bracket {bracket!r}: width 32 or 128, bracket paper or tight")
    return int(width), bracket


def read_table3_csv(path: Path) -> list[dict]:
    """results/table3.csv as written by scripts/demo (CSV_COLUMNS: width, bracket, the TABLE3 columns,
    ddr). Each row carries "width", "bracket" and "ddr" (LEGACY_DDR for a file without the column)."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise ReportError(f"{path}: empty file") from None
        header = [h.strip() for h in header]
        if header not in (CSV_COLUMNS, LEGACY_CSV_COLUMNS):
            raise ReportError(f"{path}: columns {header}, expected {CSV_COLUMNS}")
        rows = []
        for i, r in enumerate(reader):
            if not r:
                continue
            where = f"{path}: line {i + 2}"
            if len(r) != len(header):
                raise ReportError(f"{where}: {len(r)} fields, expected {len(header)}")
            width, bracket = _config_of(r[:2], where)
            ddr = r[len(LEGACY_CSV_COLUMNS)].strip() if len(header) == len(CSV_COLUMNS) else LEGACY_DDR
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", ddr):
                raise ReportError(f"{where}: bad ddr value {ddr!r} (a DDR preset name)")
            rows.append({"width": width, "bracket": bracket,
                         **_table3_row(r[2:len(LEGACY_CSV_COLUMNS)], where), "ddr": ddr})
        return rows


def table3_csv_text(rows: list[dict], ddr: str | None = None) -> str:
    """results/table3.csv's text: TABLE3 rows with "width", "bracket" and "ddr" (or `ddr` for rows
    without one; a row with neither is an error: every figure names its DDR preset)."""
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
    w.writeheader()
    for r in rows:
        preset = r.get("ddr") or ddr
        if not preset:
            raise ReportError("a Table III row without its DDR preset (ddr)")
        w.writerow({**{k: (f"{r[k]:.6f}" if isinstance(r[k], float) else r[k] if k == "bracket" else int(r[k]))
                       for k in LEGACY_CSV_COLUMNS}, "ddr": preset})
    return f.getvalue()


def write_table3_csv(path: Path, rows: list[dict], ddr: str | None = None) -> None:
    """rows: TABLE3 rows with "width", "bracket" (and "ddr"); written atomically (lsmc.cliutil)."""
    cliutil.write_output(path, table3_csv_text(rows, ddr))


def ratio(a, b):
    """a / b, or None when either is missing (never a made-up number)."""
    if a is None or b is None or b == 0 or (isinstance(a, float) and math.isnan(a)):
        return None
    return a / b
