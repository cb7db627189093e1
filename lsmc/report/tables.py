"""The table engine's report (`scripts/demo tables`, hw/ip/table_engine/doc/report.md): LevelDB table
compactions on the engine against the DDR bound and against LevelDB 1.23's own compaction of the same
tables on this machine's CPU.

Cases: db_bench-like tables (16-byte keys, 100-byte values) with compression off and with Snappy, and
64-byte keys with compression off, each job made by LevelDB's own `TableBuilder` (`lsmc tables make`).
Back ends per case:
- `rtl`: the whole engine in Verilator (W = 16, K = 4, the SoC's unit: its merge stage 32 bytes a beat inside,
  lsmc.build.presets.te_merge_bytes; `lsmc tables compact --backend rtl`), one unit;
  simulated clocks from the job's handshake to its status, with the harness's AXI memory (fixed read
  latency, no DDR bandwidth limit).
- `model`: the engine's C++ model with its calibrated cycle estimate (doc/calibration.md) of the same unit, 1, 2 and 4
  units as sub-compactions (`--parts`): MODELLED. `cycles` is the units' bracket, `job_cycles` the
  whole job (its plan included); for one unit both are the job.
- `soc`: the full SoC in Verilator (preset `tables-m4`: four 4-way table-engine units on a 512-bit DMA port) with
  the SoC harness's `kcu105` DDR timing model (LiteDRAM DDR4), 1, 2 and 4 units: `tables.elf` plans the job into
  that many parts from the tables' index blocks in DDR and runs one a unit side by side (`lsmc tables compact
  --backend soc --parts P`). `cycles` is the units' bracket (the longest unit's CYCLES register), `job_cycles` the
  whole job as the firmware runs it (plan, descriptors, dispatch, completion, the parts' records gathered).
  Snappy jobs on one unit only: the firmware plans on raw index blocks, and LevelDB compresses index blocks
  as it does data blocks.
- `soc (host plan)`: the same SoC, 2 and 4 units, the parts planned by the host instead (`--plan host`: the
  tables.elf PARTS_HOST scenario runs the host's descriptors); `job_cycles` is the firmware's whole job plus the
  plan's time on this machine's CPU (fw/lib/te_plan.c at -O2) counted at the clock as if it ran before the job.
  Snappy jobs too: the host decodes the index blocks it plans on.
Every row is judged against the reference compactor (LevelDB 1.23's TableBuilder, merging iterator and
DoCompactionWork's drop rule, `lsmc tables compact --backend reference`): byte-identical tables with
compression off and one unit; the same entries in the same order otherwise (sub-compactions cut files
at their own key ranges, and the Snappy rows' block sizes decide nothing here but file boundaries).

Figures: mb_per_s = input bytes (10^6) per second of `job_cycles` at the clock; ddr_bound_mb_per_s = the
DDR preset's peak bytes a clock (lsmc.report.scaling.peak_bytes_per_cycle) spread over each input byte's
read and its share of the output's write; leveldb_cpu_mb_per_s = the reference compactor's input MB per
CPU second (one core of this machine, `compaction_cpu_us`).
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from lsmc import cliutil
from lsmc.build import presets
from lsmc.model.table_workloads import Workload
from lsmc.report.scaling import csv_text, peak_bytes_per_cycle
from lsmc.sim import tables

COLUMNS = ["units", "ways", "compression", "bytes_in", "bytes_out", "cycles", "job_cycles", "mb_per_s",
           "ddr_bound_mb_per_s", "fraction_of_bound", "pass",
           # then which case and back end, and LevelDB's own speed on it
           "workload", "backend", "leveldb_cpu_mb_per_s"]
CASES = [("dbbench", "none"), ("dbbench", "snappy"), ("key64", "none")]
UNITS = (1, 2, 4)
SOC_PRESET = "tables-m4"  # the soc rows' SoC: enough units for every row, so the rows differ in parts only
CLOCK_MHZ = 100
DDR = "kcu105"
BACKENDS = ("rtl", "model", "soc", "soc-host")
LABELS = {"rtl": "rtl", "soc": "soc", "model": "model (MODELLED)", "soc-host": "soc (host plan)"}
ONE_TIMEOUT = 3600  # seconds one back end may take on one job


class ReportError(RuntimeError):
    pass


def _run(exe: Path, job: Path, out: Path, parts: int | None = None) -> dict:
    """One job on a back end: {cycles, bytes_in, bytes_out, parts, bracket, ...} from its last line."""
    rc, line, err = tables.run_job(exe, job, out, parts)
    if rc != 0:
        raise ReportError(f"{exe.name} on {job}: {err or f'exit status {rc}'}")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def _entries(exe: Path, folder: Path) -> list[str]:
    """Every output table's entries in order, through LevelDB's reader (the reference's `dump`)."""
    res = tables.sstable.read_result(folder / "result.json")
    return [e for t in res["tables"] for e in tables.dump_entries(exe, folder / t["file"])]


def make_row(units: int, ways: int, compression: str, bytes_in: int, bytes_out: int, cycles: int,
             job_cycles: int, passed: bool, workload: str, backend: str, leveldb_cpu_mb_per_s: float | None,
             clock_mhz: int = CLOCK_MHZ, ddr: str = DDR) -> dict:
    seconds = job_cycles / (clock_mhz * 1e6)
    mb_per_s = bytes_in / seconds / 1e6
    bound = peak_bytes_per_cycle(ddr, clock_mhz * 1_000_000) * clock_mhz * 1e6 * bytes_in / (bytes_in + bytes_out) / 1e6
    return {"units": units, "ways": ways, "compression": compression, "bytes_in": bytes_in, "bytes_out": bytes_out,
            "cycles": cycles, "job_cycles": job_cycles, "mb_per_s": round(mb_per_s, 1),
            "ddr_bound_mb_per_s": round(bound, 1), "fraction_of_bound": round(mb_per_s / bound, 4),
            "pass": "PASS" if passed else "FAIL", "workload": workload, "backend": backend,
            "leveldb_cpu_mb_per_s": "" if leveldb_cpu_mb_per_s is None else round(leveldb_cpu_mb_per_s, 1)}


def case_rows(workload: str, compression: str, work: Path, entries: int | None = None,
              backends: tuple = BACKENDS, units: tuple = UNITS, log=print,
              soc_preset: str = SOC_PRESET) -> list[dict]:
    """Make one case's job folder in `work`, run the reference and every back end on it, return its rows
    (soc rows for the units `soc_preset` has)."""
    spec = dict(tables.WORKLOADS[workload])
    if entries:
        spec["entries"] = entries
    spec["options"] = {**spec.get("options", {}), "compression": compression}
    ref = tables.reference_exe()
    job_dir = work / "job"
    tables.make_job(job_dir, Workload(**spec), ref)
    job = job_dir / "job.json"
    t0 = time.time()
    res = subprocess.run([str(ref), "compact", str(job), str(work / "reference")], capture_output=True, text=True,
                         timeout=ONE_TIMEOUT)
    m = re.search(r"compaction_cpu_us=(\d+)", res.stdout)
    if res.returncode != 0 or not m:
        raise ReportError(f"the reference compactor on {job}: {res.stderr.strip() or res.stdout.strip()}")
    ref_result = tables.sstable.read_result(work / "reference" / "result.json")
    bytes_in, cpu_us = ref_result["bytes_in"], int(m.group(1))
    leveldb = bytes_in / max(cpu_us, 1)  # bytes per microsecond = MB per second
    log(f"tables: {workload}, compression {compression}: {bytes_in:,} input bytes; LevelDB's own compaction "
        f"{leveldb:,.1f} MB/s of CPU ({time.time() - t0:.0f} s)")
    ref_entries = None
    rows = []
    for backend in backends:
        on_soc = backend in ("soc", "soc-host")
        for p in (units if backend == "model" else soc_units(units, soc_preset) if on_soc else (1,)):
            if backend == "soc" and p > 1 and compression != "none":
                continue  # the firmware plans on raw index blocks; LevelDB compresses them with the data
            if backend == "soc-host" and p == 1:
                continue  # one part: nothing to plan (the soc row)
            out = work / f"{backend}_p{p}"
            t0 = time.time()
            if on_soc:
                plan = "host" if backend == "soc-host" else "firmware"
                rc, line, err = tables.soc_job(job, out, timeout=ONE_TIMEOUT, ddr=DDR, parts=p, preset=soc_preset,
                                               plan=plan)
                if rc != 0:
                    raise ReportError(f"the SoC on {job}: {err or f'exit status {rc}'}")
                soc_line, last = line.splitlines()
                f = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", last)}
                f.update({k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", soc_line)})
                # the host's plan as if it ran before the job, at the clock (errs toward the slow side)
                host = re.search(r"plan_host_us=([\d.]+)", soc_line)
                r = {"bytes_in": f["bytes_in"], "bytes_out": f["bytes_out"], "bracket": f["bracket"],
                     "cycles": f["job_cycles"] + (round(float(host[1]) * CLOCK_MHZ) if host else 0)}
            else:
                exe = tables.backend_exe(backend)
                r = _run(exe, job, out, p if backend == "model" and p > 1 else None)
            if compression == "none" and p == 1:
                passed, verdict = tables.compare_dirs(work / "reference", out)
            else:
                ref_entries = ref_entries if ref_entries is not None else _entries(ref, work / "reference")
                passed = _entries(ref, out) == ref_entries
                verdict = "same entries in order" if passed else "DIFFERENT entries"
            cycles = r.get("bracket", r["cycles"])
            ways = tables.RTL_WAYS if backend != "model" else len(tables.sstable.read_job(job).runs)
            rows.append(make_row(p, ways, compression, r["bytes_in"], r["bytes_out"], cycles, r["cycles"], passed,
                                 workload, LABELS[backend], leveldb))
            log(f"tables:   {backend} x{p}: {r['cycles']:,} cycles, {rows[-1]['mb_per_s']:,} MB/s at {CLOCK_MHZ} MHz, "
                f"{verdict} ({time.time() - t0:.0f} s)")
    return rows


def soc_units(units: tuple, preset: str) -> tuple:
    """The soc rows' unit counts: those of `units` the SoC preset `preset` has units for (one part a unit)."""
    return tuple(u for u in units if u <= tables.te_units(preset))


def conditions(load: str, soc_preset: str = SOC_PRESET) -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")),
               "unknown CPU") if os.path.exists("/proc/cpuinfo") else "unknown CPU"
    return (f"Clock {CLOCK_MHZ} MHz; W = 16 bytes a beat, the merge stage {presets.te_merge_bytes()} bytes a beat "
            f"inside (the SoC's unit); DDR bound: the `{DDR}` preset's peak. `rtl`: the engine "
            "in Verilator, one unit, K = 4, clocks from the job's handshake to its status, AXI memory of fixed "
            "latency without a bandwidth limit (so its fraction of the bound says how far the engine is from "
            "the memory, not a DDR measurement). `model (MODELLED)`: the C++ model's calibrated cycle estimate; "
            "units as sub-compactions, `cycles` their bracket, `job_cycles` the whole job. `soc`: the full SoC "
            f"(preset {soc_preset}, VexRiscv firmware) with the SoC harness's `{DDR}` DDR timing model, one part a "
            "unit, `cycles` the longest unit's CYCLES, `job_cycles` the firmware's whole job (plan, dispatch, "
            "completion, the records gathered); `soc (host plan)`: the parts planned by the host, `job_cycles` "
            "the firmware's whole job plus the plan's time on this machine's CPU at the clock. LevelDB: the reference "
            f"compactor (LevelDB 1.23's own code), one core of {cpu} ({os.cpu_count()} cores, load {load}).")


def markdown(rows: list[dict], cond: str) -> str:
    head = ["case", "backend", "units", "bytes in", "bytes out", "cycles", "job cycles", "MB/s",
            "DDR bound MB/s", "of bound", "LevelDB MB/s (CPU)", "x LevelDB", "pass"]
    lines = ["# Table engine: LevelDB compactions", "", cond, "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        speedup = f"{r['mb_per_s'] / r['leveldb_cpu_mb_per_s']:.1f}" if r["leveldb_cpu_mb_per_s"] else ""
        lines.append("| " + " | ".join(str(x) for x in (
            f"{r['workload']}, {r['compression']}", r["backend"], r["units"], f"{r['bytes_in']:,}",
            f"{r['bytes_out']:,}", f"{r['cycles']:,}", f"{r['job_cycles']:,}", f"{r['mb_per_s']:,}",
            f"{r['ddr_bound_mb_per_s']:,}", f"{r['fraction_of_bound']:.1%}", r["leveldb_cpu_mb_per_s"], speedup,
            r["pass"])) + " |")
    return "\n".join(lines) + "\n"


def plot_png(rows: list[dict]) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    short = {label: name for name, label in LABELS.items()}  # soc (host plan) -> soc-host
    labels = [f"{r['workload']} {r['compression']}\n{short.get(r['backend'], r['backend'])} x{r['units']}"
              for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rows)), 4.5))
    x = range(len(rows))
    ax.bar(x, [r["mb_per_s"] for r in rows], color=["tab:gray" if "MODELLED" in r["backend"] else "tab:blue"
                                                    for r in rows], label="engine (gray: MODELLED)")
    ax.scatter(x, [r["ddr_bound_mb_per_s"] for r in rows], marker="_", s=400, color="tab:red", label="DDR bound")
    ax.scatter(x, [r["leveldb_cpu_mb_per_s"] or 0 for r in rows], marker="o", color="tab:green",
               label="LevelDB 1.23, one core")
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set_ylabel(f"input MB/s at {CLOCK_MHZ} MHz")
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Table engine: compaction throughput")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def write_results(rows: list[dict], out_dir: Path, cond: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "tables.csv", out_dir / "tables.md", out_dir / "tables.png"]
    with cliutil.Outputs() as out:
        out.add(paths[0], csv_text(rows, COLUMNS))
        out.add(paths[1], markdown(rows, cond))
        out.add(paths[2], plot_png(rows))
    return paths


# ---- the report as Dask tasks (lsmc.cluster, docs/cluster.md): a case a task, the rows in the serial order ----

def case_task(point: tuple) -> tuple[list[dict], list[str]]:
    """(workload, compression, entries, backends, units, soc_preset) -> case_rows' rows and the lines it logged,
    in a folder of the worker's own (its builds made there once and reused)."""
    workload, compression, entries, backends, units, soc_preset = point
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lsmc-tables-task-") as tmp:
        rows = case_rows(workload, compression, Path(tmp), entries, backends, units, lines.append, soc_preset)
    return rows, lines


def case_name(point: tuple) -> str:
    return f"{point[0]}, compression {point[1]}"


def run_cluster(client, out_dir: Path, entries: int | None = None, cases=CASES, backends=BACKENDS,
                units=UNITS, load: str = "unknown", log=print,
                soc_preset: str = SOC_PRESET) -> tuple[list[dict], list[Path], list]:
    """run()'s cases as tasks: the same rows in the same order, the files written from the finished cases (a
    failed case named with its error under the table). Returns the rows, the files and the outcomes; raises
    lsmc.cluster.Interrupted (its outcomes the finished cases) after writing them on Ctrl-C."""
    from lsmc import cluster

    points = [(w, c, entries, tuple(backends), tuple(units), soc_preset) for w, c in cases]

    def done(o):
        if o.ok:
            for line in o.value[1]:
                log(line)
        else:
            log(f"tables: {case_name(o.point)}: FAILED: {o.error}")

    interrupted = None
    try:
        outcomes = cluster.run(client, case_task, points, label="tables", on_result=done)
    except cluster.Interrupted as e:
        outcomes, interrupted = e.outcomes, e
    rows = [r for o in outcomes if o.ok for r in o.value[0]]
    failed = cluster.failures_text(outcomes, case_name)
    if interrupted:
        failed = f"Interrupted: {len(outcomes)} of {len(points)} cases finished.\n" + failed
    paths = write_results(rows, out_dir, conditions(load, soc_preset) + ("\n\n" + failed if failed else ""))
    if interrupted:
        raise interrupted
    return rows, paths, outcomes


def run(out_dir: Path, entries: int | None = None, cases=CASES, backends=BACKENDS, units=UNITS,
        load: str = "unknown", log=print, soc_preset: str = SOC_PRESET) -> tuple[list[dict], list[Path]]:
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="lsmc-tables-report-") as tmp:
        for i, (workload, compression) in enumerate(cases):
            rows += case_rows(workload, compression, Path(tmp) / f"case{i}", entries, backends, units, log,
                              soc_preset)
    return rows, write_results(rows, out_dir, conditions(load, soc_preset))
