"""Calibration of the table engine model's cycle estimate against its RTL (hw/ip/table_engine/doc/calibration.md).

Each named job is one table written by LevelDB's own TableBuilder (`table_ref make-table`) from fixed-length
entries, compacted alone by the model (`table_model --stats`: the estimate of each stage) and run through
the RTL harnesses at W = 16 (`--table`: the block reader over its data blocks, the Snappy decompressor over
its Snappy blocks, the block builder rebuilding its data blocks, which are the job's output blocks too, the Snappy
compressor compressing its index and data blocks as the writer does them).
Per job and stage with RTL: RTL cycles, model cycles, error.

    python3 -m lsmc.build.table_engine_calibrate            # measure every job, print the table
    python3 -m lsmc.build.table_engine_calibrate --write    # and commit it: calibration.csv + calibration.md
    python3 -m lsmc.build.table_engine_calibrate --jobs dbbench,dbbench-snappy
    python3 -m lsmc.build.table_engine_calibrate --fit      # and the per-block constants (cycle_model.h) they fit

Exit status 1 when a stage of a job is off by more than TOLERANCE."""
from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lsmc.build import BuildError, table_engine_rtl, table_engine_snappy, table_model, table_ref
from lsmc.build import table_engine_snappy_compressor as compressor
from lsmc.model import sstable
from lsmc.model.table_workloads import DbBenchValues
from lsmc.paths import ROOT

# The stream width the estimate is made for (cycle_work.h's kStreamBytes): the RTL is run at it.
WIDTH = int(re.search(r"constexpr uint64_t kStreamBytes = (\d+);", (table_model.MODEL / "cycle_work.h").read_text())
            .group(1))
TOLERANCE = 0.10  # the goal: every job's estimate within 10 % of the RTL, stage by stage
DATA = ROOT / "hw" / "ip" / "table_engine" / "data" / "calibration.csv"
PAGE = ROOT / "hw" / "ip" / "table_engine" / "doc" / "calibration.md"
COLUMNS = ("job", "stage", "unit", "blocks", "rtl_cycles", "model_cycles", "error_pct")
BEGIN = "<!-- BEGIN GENERATED: calibration table_engine -->"
END = "<!-- END GENERATED -->"


class CalibrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Job:
    doc: str
    user_key: int = 16  # bytes; 16: db_bench's "%016d", longer: that + fixed random bytes
    value: int = 100
    restart: int = 16
    snappy: bool = False
    entries: int = 2000


# The named jobs (db_bench's data: 16-byte keys, 100-byte values, 4 KiB blocks, is the first).
JOBS = {
    "dbbench": Job("db_bench-like: 16 B keys, 100 B values"),
    "dbbench-snappy": Job("the same, Snappy", snappy=True),
    "restart1": Job("16 B keys, 100 B values, restart interval 1", restart=1),
    "key64": Job("64 B keys, 100 B values", user_key=64, entries=1500),
    "key64-snappy": Job("64 B keys, 100 B values, Snappy", user_key=64, snappy=True, entries=1500),
    "value1k": Job("16 B keys, 1 KiB values", value=1024, entries=400),
    "value1k-snappy": Job("16 B keys, 1 KiB values, Snappy", value=1024, snappy=True, entries=400),
    "tiny": Job("16 B keys, 4 B values", value=4, entries=4000),
    "tiny-restart1": Job("16 B keys, 4 B values, restart interval 1", value=4, restart=1, entries=4000),
}
# Stage of the model's estimate -> the RTL unit measured for it.
STAGES = {"entry_decode": "BlockReader", "decompress": "SnappyDecompressor", "block_build": "BlockBuilder",
          "compressor": "SnappyCompressor"}


def entries(job: Job) -> list[tuple[bytes, bytes]]:
    rng = random.Random(1)
    values = DbBenchValues(rng)
    out = []
    for i in range(job.entries):
        user = b"%016d" % i + rng.randbytes(job.user_key - 16)
        out.append((sstable.internal_key(user, i + 1), values.take(job.value)))
    return out


def options(job: Job) -> dict:
    return {"block_size": 4096, "block_restart_interval": job.restart,
            "compression": "snappy" if job.snappy else "none", "max_file_size": 1 << 30, "verify_checksums": True}


def _summary(res: subprocess.CompletedProcess, what: str) -> dict:
    if res.returncode not in (0, 1) or not res.stdout.strip():
        raise CalibrationError(f"{what}: exit {res.returncode}: {(res.stderr or res.stdout).strip()[-400:]}")
    out = dict(tok.split("=", 1) for tok in res.stdout.strip().splitlines()[-1].split() if "=" in tok)
    if res.returncode != 0 or out.get("mismatches", "0") != "0" or out.get("hangs", "0") != "0":
        raise CalibrationError(f"{what}: the RTL disagrees with the model: {res.stdout.strip().splitlines()[-1]}")
    return out


def model_stages(table: Path, job: Job, work: Path) -> dict[str, int]:
    """The model's estimate of each stage for the job of this one table."""
    spec = sstable.Job(runs=[[str(table)]], options=options(job), smallest_snapshot=sstable.MAX_SEQUENCE - 1)
    sstable.write_job(spec, work / "job.json")
    res = subprocess.run([str(table_model.build_table_model()), str(work / "job.json"), str(work / "out"), "--stats"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise CalibrationError(f"table_model {work / 'job.json'}: {res.stderr.strip()}")
    # `unit compressor`: the Snappy compressor alone (the estimate's compress stage is the writer's lanes).
    return {k: int(v) for k, v in re.findall(r"^(?:stage|unit) (\w+)=(\d+)$", res.stdout, re.M)}


def rtl_cycles(table: Path, job: Job) -> dict[str, tuple[int, int]]:
    """stage -> (RTL cycles, blocks) of the units with RTL on the table's blocks."""
    out = {}
    r = _summary(table_engine_rtl.run(WIDTH, "--table", table, "--quiet"), "block reader --table")
    out["entry_decode"] = (int(r["cycles"]), int(r["clean_blocks"]))
    b = _summary(table_engine_rtl.run_builder(WIDTH, "--table", table, "--interval", job.restart, "--quiet"),
                 "block builder --table")
    out["block_build"] = (int(b["cycles"]), int(b["blocks"]))
    if job.snappy:
        s = _summary(table_engine_snappy.run(WIDTH, "--table", table, "--quiet"), "Snappy decompressor --table")
        out["decompress"] = (int(s["cycles"]), int(s["ok"]))
        z = _summary(compressor.run(WIDTH, "--table", table, "--quiet"), "Snappy compressor --table")
        out["compressor"] = (int(z["cycles"]), int(z["blocks"]))
    return out


def make_table(name: str, work: Path) -> Path:
    """The job's input table, written by LevelDB's TableBuilder into `work` (made if missing)."""
    job = JOBS[name]
    try:
        make = table_ref.build_table_ref()
    except BuildError as e:
        raise CalibrationError(f"building the reference (LevelDB's TableBuilder) failed: "
                               f"{str(e).splitlines()[0]}") from None
    work.mkdir(parents=True, exist_ok=True)
    table = work / "000001.ldb"
    res = subprocess.run([str(make), "make-table", str(table), "--options", json.dumps(options(job))],
                         input=sstable.entry_stream(entries(job)), capture_output=True)
    if res.returncode != 0:
        raise CalibrationError(f"make-table {name}: {res.stderr.decode(errors='replace').strip()}")
    return table


def measure(names) -> list[dict]:
    """One row per job and stage with RTL (COLUMNS)."""
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"calibrate-{name}-") as tmp:
            table = make_table(name, Path(tmp))
            model = model_stages(table, JOBS[name], Path(tmp))
            for stage, (rtl, blocks) in rtl_cycles(table, JOBS[name]).items():
                rows.append(row(name, stage, blocks, rtl, model[stage]))
    return rows


def row(job: str, stage: str, blocks: int, rtl: int, model: int) -> dict:
    return {"job": job, "stage": stage, "unit": STAGES[stage], "blocks": blocks, "rtl_cycles": rtl,
            "model_cycles": model, "error_pct": round(100 * (model - rtl) / rtl, 2) if rtl else 0.0}


# Each stage's per-block constant in model/cycle_model.h (what the fit adjusts).
BLOCK_CONSTANTS = {"entry_decode": "kDecodeBlockCycles", "decompress": "kDecompressBlockCycles",
                   "block_build": "kBuildBlockCycles", "compressor": "kCompressBlockCycles"}


def fit(rows: list[dict]) -> dict[str, int]:
    """The per-block constant of each stage that makes the model's total over all jobs closest to the
    RTL's: today's constant + the mean residual per block, rounded (the beats are counted exactly; the
    constant takes handshakes and pipeline latency)."""
    header = (table_model.MODEL / "cycle_model.h").read_text()
    out = {}
    for stage, name in BLOCK_CONSTANTS.items():
        now = int(re.search(rf"constexpr uint64_t {name} = (\d+);", header).group(1))
        rs = [r for r in rows if r["stage"] == stage]
        if rs:
            blocks = sum(r["blocks"] for r in rs)
            out[name] = max(0, now + round(sum(r["rtl_cycles"] - r["model_cycles"] for r in rs) / blocks))
    return out


def off(rows: list[dict]) -> list[dict]:
    return [r for r in rows if abs(r["error_pct"]) > 100 * TOLERANCE]


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def read_rows(path: Path = DATA) -> list[dict]:
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            if tuple(rd.fieldnames or ()) != COLUMNS:
                raise CalibrationError(f"{path}: columns {rd.fieldnames}, expected {list(COLUMNS)}")
            out = []
            for i, r in enumerate(rd, start=2):
                try:
                    out.append(row(r["job"], r["stage"], int(r["blocks"]), int(r["rtl_cycles"]),
                                   int(r["model_cycles"])))
                except (KeyError, ValueError) as e:
                    raise CalibrationError(f"{path}: line {i}: {e}") from None
    except OSError as e:
        raise CalibrationError(f"{path}: cannot read: {e.strerror}") from None
    return out


def markdown(rows: list[dict]) -> str:
    """The job x stage table of doc/calibration.md."""
    lines = ["| job | what | stage (RTL unit) | blocks | RTL cycles | model cycles | error |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['job']}` | {JOBS[r['job']].doc if r['job'] in JOBS else ''} | {r['stage']} ({r['unit']}) "
                     f"| {r['blocks']:,} | {r['rtl_cycles']:,} | {r['model_cycles']:,} | {r['error_pct']:+.1f} % |")
    worst = max(rows, key=lambda r: abs(r["error_pct"]))
    lines += ["", f"Largest error: {worst['error_pct']:+.1f} % (`{worst['job']}`, {worst['stage']}); goal within "
              f"{100 * TOLERANCE:.0f} %. W = {WIDTH} bytes a beat, no stalls, 4 KiB blocks. Generated from "
              f"`{DATA.relative_to(ROOT)}` (`python3 -m lsmc.build.table_engine_calibrate --write`)."]
    return "\n".join(lines)


def write(rows: list[dict], data: Path = DATA, page: Path = PAGE) -> None:
    """The CSV and the generated table of the page, both or neither."""
    text = page.read_text()
    b, e = text.find(BEGIN), text.find(END, text.find(BEGIN))
    if b < 0 or e < 0:
        raise CalibrationError(f"{page}: no '{BEGIN}' ... '{END}' block")
    new = text[:b + len(BEGIN)] + "\n" + markdown(rows) + "\n" + text[e:]
    data.parent.mkdir(parents=True, exist_ok=True)
    tmp = data.with_suffix(".tmp")
    tmp.write_text(csv_text(rows))
    page.write_text(new)
    tmp.replace(data)


def table_text(rows: list[dict]) -> str:
    lines = [f"{'job':16} {'stage':13} {'blocks':>6} {'RTL cycles':>11} {'model cycles':>12} {'error':>8}"]
    for r in rows:
        lines.append(f"{r['job']:16} {r['stage']:13} {r['blocks']:>6} {r['rtl_cycles']:>11} {r['model_cycles']:>12} "
                     f"{r['error_pct']:>+7.1f}%")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lsmc.build.table_engine_calibrate",
                                 description="the model's cycle estimate against the RTL on named jobs")
    ap.add_argument("--jobs", help=f"comma-separated, of: {', '.join(JOBS)} (default: all)")
    ap.add_argument("--fit", action="store_true", help="also print the per-block constants the jobs fit")
    ap.add_argument("--write", action="store_true", help=f"write {DATA.relative_to(ROOT)} and the table of "
                    f"{PAGE.relative_to(ROOT)}")
    a = ap.parse_args(argv)
    names = a.jobs.split(",") if a.jobs else list(JOBS)
    unknown = [n for n in names if n not in JOBS]
    if unknown:
        print(f"table_engine_calibrate: unknown job(s) {', '.join(unknown)} (one of: {', '.join(JOBS)})",
              file=sys.stderr)
        return 2
    if a.write and a.jobs:
        print("table_engine_calibrate: --write takes every job (no --jobs)", file=sys.stderr)
        return 2
    try:
        rows = measure(names)
        print(table_text(rows))
        if a.fit:
            print("fitted: " + " ".join(f"{k}={v}" for k, v in fit(rows).items()))
        if a.write:
            write(rows)
            print(f"wrote {DATA.relative_to(ROOT)}, {PAGE.relative_to(ROOT)}")
    except (CalibrationError, BuildError) as e:
        print(f"table_engine_calibrate: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    bad = off(rows)
    for r in bad:
        print(f"table_engine_calibrate: {r['job']} {r['stage']}: model {r['error_pct']:+.1f} % off the RTL "
              f"(over {100 * TOLERANCE:.0f} %)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
