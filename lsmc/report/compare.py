"""The throughput report: the compaction IP against three CPU baselines on the same jobs.

For each size it makes one workload as `kb16 gen` does, then measures on exactly those runs:
the IP in Verilator (as `compact` runs it, hardware-only cycles), the firmware's C merge compiled for this
host, and LevelDB 1.23's own compaction; the full SoC (VexRiscv firmware: firmware-bracketed counter,
hardware-only counter, the C merge on the VexRiscv) comes from the firmware's `TABLE3` block. Every
output is checked against the reference model before its time is used. It writes results/report.md,
results/report.csv and two PNG plots. How to read them: docs/baselines.md."""
from __future__ import annotations

import argparse
import csv
import datetime
import io
import math
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsmc import build, cliutil
from lsmc.build import firmware
from lsmc.model import kb16, kb16_cli, workloads
from lsmc.paths import RESULTS
from lsmc.report import baselines, paper, scaling
from lsmc.report.plots import write_plots
from lsmc.report.table3 import (
    CLOCK_MHZ,
    PAPER_TABLE3,
    ReportError,
    parse_ddr,
    parse_table3_lines,
    ratio,
    read_table3_csv,
)
from lsmc.sim import ipsim, soc

DEFAULT_SIZES = [512, 1024, 2048, 4096, 8192, 65536, 1048576]
QUICK_SIZES = [512, 1024, 2048, 4096, 8192]
# `ddr` (last): the DDR preset of the row's SoC figures (the SoC harness's `ddr:` line; empty without them).
# The IP column has no DDR: the IP alone in Verilator, its streams fed by the harness.
CSV_COLUMNS = ["entries_in", "ip_us_per_entry", "vexriscv_us_per_entry", "host_c_us_per_entry",
               "leveldb_us_per_entry", "speedup_vs_leveldb", "ddr"]
# ---- the machine ------------------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "uarch")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    """1-minute load average: on a shared machine it says how much the CPU timings can be trusted."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except (OSError, IndexError):
        return "unknown"


def _tool_version(cmd) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (res.stdout or res.stderr).splitlines()[0].strip()
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


# ---- measurement ------------------------------------------------------------------------------------

@dataclass
class Config:
    sizes: list[int]
    kind: str = "short"
    overlap: float = 0.25
    seed: int = 1
    group: int = 16
    width: int = 128
    leveldb_reps: int = 9
    host_sets: int = 8
    quick: bool = False
    ip: bool = True
    soc: str = "run"                  # run | csv | off
    soc_csv: Path | None = None
    soc_max: int = 8192               # largest size simulated in the full SoC (see measure_soc)
    db_dir: Path | None = None        # LevelDB's main figure: default a RAM file system (see docs)
    leveldb_disk: bool = True         # also time LevelDB on the project's disk (fsync reaches a device)
    out_dir: Path = RESULTS


@dataclass
class SizeResult:
    keys: int                          # keys asked of `kb16 gen` (both runs)
    entries_in: int                    # 16-byte entries in both runs
    bytes_in: int
    entries_out: int
    invalid: int
    ip_cycles: int | None = None       # hardware-only cycles of the IP alone (lsmc.sim.ipsim)
    leveldb: baselines.LevelDbResult | None = None       # on cfg.db_dir (RAM file system by default)
    leveldb_disk: baselines.LevelDbResult | None = None  # on build/baselines/db
    host: baselines.HostMergeResult | None = None
    soc: dict | None = None            # TABLE3 row with the same entries_in
    errors: dict = field(default_factory=dict)  # column -> why it could not be measured

    # µs per input entry at CLOCK_MHZ (None: not measured)
    @property
    def ip_us(self):
        return self.ip_cycles / CLOCK_MHZ / self.entries_in if self.ip_cycles is not None else None

    @property
    def soc_fw_us(self):
        return self.soc["fw_cycles"] / CLOCK_MHZ / self.soc["entries_in"] if self.soc else None

    @property
    def vex_us(self):
        return self.soc["sw_cycles"] / CLOCK_MHZ / self.soc["entries_in"] if self.soc else None

    @property
    def host_us(self):
        return self.host.min if self.host else None

    @property
    def leveldb_us(self):
        return self.leveldb.core_min / self.entries_in if self.leveldb else None

    @property
    def leveldb_disk_us(self):
        return self.leveldb_disk.core_min / self.entries_in if self.leveldb_disk else None

    @property
    def leveldb_total_us(self):
        if not self.leveldb or math.isnan(self.leveldb.total_min):
            return None
        return self.leveldb.total_min / self.entries_in


def _say(msg: str) -> None:
    print(f"report: {msg}", file=sys.stderr, flush=True)


def make_workload(cfg: Config, keys: int):
    """One workload as `kb16 gen` makes it (same generator, same seed): both runs encoded, and their keys."""
    k0, k1 = workloads.make_runs(cfg.kind, keys, cfg.overlap, cfg.seed)
    return kb16.encode(k0, cfg.group), kb16.encode(k1, cfg.group), k0, k1


class IpSimFailed(ReportError):
    """The IP simulator itself failed (build or harness): no use retrying at the next size."""


def run_ip(run0: bytes, run1: bytes, group: int, width: int) -> tuple[bytes, bytes, int]:
    """The IP alone in Verilator (what `lsmc compact` runs): merged run, invalid addresses, HW_CYCLES."""
    try:
        r = ipsim.compact(run0, run1, group, width)
    except (build.BuildError, ipsim.SimError) as e:
        tail = " | ".join(str(e).strip().splitlines()[-3:])
        raise IpSimFailed(f"the IP simulation failed: {tail}") from None
    if r.violations:
        raise ReportError(f"the IP broke the stream/AXI protocol {r.violations} time(s)")
    if r.status != "done":
        raise ReportError(f"the IP did not finish ({r.status}, {r.code_name})")
    return r.out, r.invalid, r.hw_cycles


def measure_ip(cfg: Config, run0: bytes, run1: bytes, expect: tuple[bytes, bytes]) -> int:
    out, inv, cycles = run_ip(run0, run1, cfg.group, cfg.width)
    if (out, inv) != expect:
        raise ReportError("the IP's output differs from the reference merge: cycles not used")
    return cycles


SOC_MAX_CYCLES = 1_500_000_000                    # guard of the simulator (exit 124 past it)
SOC_TIMEOUT = 3600                                # seconds per simulation


def _soc_text(res) -> str:
    return getattr(res, "uart", None) or getattr(res, "output", "") or ""


def measure_soc(cfg: Config, sizes: list[int]) -> tuple[dict, str]:
    """TABLE3 rows of the full SoC by entries_in, and a sentence saying where they came from.

    The jobs are this report's own (the same `kb16 gen` workloads, made on the host and loaded into
    DDR): the firmware runs each on the IP (this project's 128-bit, tight-bracket design; cfg.width 32:
    the paper's platform and bracket) and its C merge on the VexRiscv, and checks both against the
    reference merge (SIM_ARG 7)."""
    if cfg.soc == "off":
        return {}, "not run (--no-soc)"
    bracket = "tight" if cfg.width == 128 else "paper"
    if cfg.soc == "csv":
        rows = [r for r in read_table3_csv(cfg.soc_csv) if (r["width"], r["bracket"]) == (cfg.width, bracket)]
        stamp = datetime.datetime.fromtimestamp(cfg.soc_csv.stat().st_mtime, datetime.timezone.utc)
        presets = ", ".join(sorted({r["ddr"] for r in rows})) or "none: no rows"
        return ({r["entries_in"]: r for r in rows},
                f"read from {cfg.soc_csv} ({cfg.width}-bit, {bracket} bracket rows, DDR preset `{presets}`; written "
                f"{stamp:%Y-%m-%d %H:%M} UTC, not by this run)")
    rows: dict = {}
    todo = [n for n in sizes if n <= cfg.soc_max]
    for n in sizes:
        if n > cfg.soc_max:
            # The VexRiscv C merge alone takes ~650 cycles per entry: 65,536 entries are over 40 M
            # simulated cycles per job.
            rows[n] = {"error": f"not simulated: above --soc-max {cfg.soc_max} (the full SoC runs the VexRiscv "
                                "C merge too, ~650 simulated cycles per entry; raise --soc-max to include it)"}
    if not todo:
        return rows, "not run (every size above --soc-max)"
    _say(f"SoC: building the SoC simulator ({cfg.width}-bit IP) and the firmware")
    exe = soc.build_soc(width=cfg.width)
    elf = firmware.build_firmware()
    t0 = time.time()
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    work = build.BUILD / "report"
    work.mkdir(parents=True, exist_ok=True)
    for i in range(0, len(todo), firmware.TABLE_MAX_ROWS):
        chunk = todo[i:i + firmware.TABLE_MAX_ROWS]
        _say(f"SoC: {', '.join(map(str, chunk))} keys ({cfg.width}-bit IP, {bracket} bracket)")
        img = work / "soc_table.bin"
        jobs = firmware.table_rows(chunk, cfg.kind, cfg.overlap, cfg.seed, cfg.group)
        img.write_bytes(firmware.table3_image(jobs, cfg.group, paper=bracket == "paper"))
        res = soc.run_soc(elf, arg=firmware.SCEN_BENCH_HOST, exe=exe, loads={firmware.DDR_BASE: img},
                          max_cycles=SOC_MAX_CYCLES, timeout=SOC_TIMEOUT)
        (cfg.out_dir / "report_soc_bench.log").write_text(_soc_text(res))  # the console, for the record
        try:
            got = parse_table3_lines(_soc_text(res))
            ddr = parse_ddr(res.stderr)
        except ReportError as e:
            for n in chunk:
                rows[n] = {"error": f"the SoC simulation gave no result ({e}; simulator exit {res.returncode})"}
            continue
        for n, r in zip(chunk, got):
            r["ddr"] = ddr
            rows[n] = r
            rows[r["entries_in"]] = r
    presets = sorted({r["ddr"] for r in rows.values() if "ddr" in r}) or ["none: no result"]
    return rows, (f"full-SoC Verilator simulation run by this report on the same jobs ({cfg.width}-bit IP, "
                  f"{bracket} counter bracket, DDR preset `{', '.join(presets)}`; {time.time() - t0:.0f} s)")


def host_reps(entries: int, sets: int) -> int:
    """Enough timed merges to see the spread, about 2 M merged entries in all (bounded)."""
    return max(3, min(50, 2_000_000 // max(1, entries * sets)))


def host_sets_for(cfg: Config, keys: int) -> int:
    """Rotation sets: all of them for small runs (the branch predictor could learn one), fewer for
    big runs that no predictor can hold (and that take long to generate)."""
    return max(2, min(cfg.host_sets, 524288 // max(1, keys)))


def measure(cfg: Config) -> tuple[list[SizeResult], str, list[str]]:
    """Run everything; returns the per-size results, the SoC source sentence and global notes."""
    notes: list[str] = []
    soc_rows, soc_source = {}, ""
    try:
        soc_rows, soc_source = measure_soc(cfg, cfg.sizes)
    except Exception as e:  # the report goes on without the SoC columns, saying why
        soc_source = f"not measured: {e}"
        _say(f"SoC: {e}")
    results = []
    ip_broken = None
    for keys in cfg.sizes:
        _say(f"{keys} keys: workload")
        r0, r1, k0, k1 = make_workload(cfg, keys)
        want = kb16.merge(r0, r1, cfg.group)
        r = SizeResult(keys=keys, entries_in=(len(r0) + len(r1)) // 16, bytes_in=len(r0) + len(r1),
                       entries_out=len(want[0]) // 16, invalid=len(want[1]) // 4)
        if r.entries_in == 0:
            raise ReportError(f"size {keys}: empty workload")
        if ip_broken:
            r.errors["ip"] = f"not run: the IP simulation failed at a smaller size ({ip_broken})"
        elif cfg.ip:
            _say(f"{keys} keys: IP (lsmc.sim.ipsim, {cfg.width}-bit)")
            try:
                r.ip_cycles = measure_ip(cfg, r0, r1, want)
            except IpSimFailed as e:  # a broken build/simulator: don't retry per size
                r.errors["ip"] = str(e)
                ip_broken = f"{keys} keys"
            except ReportError as e:
                r.errors["ip"] = str(e)
        else:
            r.errors["ip"] = "not run (--no-ip)"
        _say(f"{keys} keys: host C merge")
        try:
            sets = host_sets_for(cfg, keys)
            pairs = [(r0, r1)] + [
                tuple(kb16.encode(k, cfg.group) for k in workloads.make_runs(cfg.kind, keys, cfg.overlap,
                                                                             cfg.seed + 1000 + i))
                for i in range(sets - 1)]
            r.host = baselines.run_host_merge(pairs, cfg.group, host_reps(r.entries_in, sets), expected=want)
        except Exception as e:
            r.errors["host"] = str(e)
        variants = [("leveldb", cfg.db_dir or baselines.memory_db_dir() or baselines.BUILD / "db")]
        if cfg.leveldb_disk:
            variants.append(("leveldb_disk", baselines.BUILD / "db"))
        for attr, where in variants:
            _say(f"{keys} keys: LevelDB in {where} ({cfg.leveldb_reps} repetitions)")
            try:
                res = baselines.run_leveldb(k0, k1, reps=cfg.leveldb_reps, db_dir=where)
                setattr(r, attr, res)
                if res.automatic:
                    notes.append(f"{keys} keys, {attr}: in {res.automatic} of {res.reps} repetitions LevelDB "
                                 "started the compaction by itself after the flush (level 1 over 10 MiB); its "
                                 "compaction window is still exact, the whole-call time is left out there.")
            except Exception as e:
                r.errors[attr] = str(e)
        r.soc = soc_rows.get(r.entries_in) or soc_rows.get(keys)
        if r.soc is not None and "error" in r.soc:
            r.errors["soc"] = r.soc["error"]
            r.soc = None
        elif r.soc is None:
            r.errors["soc"] = (f"no TABLE3 row for {r.entries_in} entries" if soc_rows else soc_source)
        elif not r.soc["pass"]:
            r.errors["soc"] = "the firmware reported FAIL for this size: its figures are not used"
            r.soc = None
        results.append(r)
    return results, soc_source, notes


# ---- outputs ----------------------------------------------------------------------------------------

def _f(v, digits=4):
    return "" if v is None else f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def write_csv(results: list[SizeResult], path: Path, outputs: cliutil.Outputs) -> None:
    """Exactly the report's documented columns; a value that was not measured is an empty cell."""
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(CSV_COLUMNS)
    for r in results:
        w.writerow([r.entries_in, _f(r.ip_us, 6), _f(r.vex_us, 6), _f(r.host_us, 6), _f(r.leveldb_us, 6),
                    _f(ratio(r.leveldb_us, r.ip_us), 4), r.soc.get("ddr", "") if r.soc else ""])
    outputs.add(path, f.getvalue())


def _m(v, digits=4, suffix=""):
    return "—" if v is None else f"{v:.{digits}g}{suffix}"


def write_markdown(cfg: Config, results: list[SizeResult], soc_source: str, notes: list[str], meta: dict,
                   path: Path, plots: list[str], outputs: cliutil.Outputs) -> None:
    L = []
    L.append("# Compaction throughput: the IP against LevelDB 1.23, the VexRiscv C merge and a host C merge\n")
    L.append(f"Generated by `{meta['command']}` on {meta['date']} in {meta['elapsed']:.0f} s. Every number "
             "below was measured by that run, except the section copied from the paper (labelled). "
             "How to read it: [docs/baselines.md](../docs/baselines.md).\n")
    L.append("| | |\n|---|---|")
    for k in ("cpu", "cores", "os", "leveldb", "compiler", "workload", "clock"):
        L.append(f"| {meta['labels'][k]} | {meta[k]} |")
    L.append("")
    L.append("## Like for like: the same KB16 merge in C on one host core against the IP\n")
    L.append("The same jobs (the workload above), the same algorithm (the two-way KB16 merge of `fw/lib/kb16.c`, "
             "which the IP implements in hardware), the same output, checked byte for byte against the reference "
             "merge on both sides. Host C: one call of `kb16_merge()` on runs already in memory, one core of the "
             f"host CPU above, gcc -O2, best of many calls. IP: the compaction IP alone in Verilator, {cfg.width}-bit "
             f"streams, source and sink never stalling, hardware-only window (first input beat → done) at the "
             f"nominal {CLOCK_MHZ} MHz. These two columns compare the merge itself; the pairings below add "
             "what each system does around it.\n")
    L.append("| entries in | host C µs/entry (1 core) | IP µs/entry (hw-only) | host C ÷ IP |")
    L.append("|---:|---:|---:|---:|")
    for r in results:
        L.append(f"| {r.entries_in} | {_m(r.host_us)} | {_m(r.ip_us)} | {_m(ratio(r.host_us, r.ip_us), 3, '×')} |")
    L.append("")
    L.append("Other pairings and their conditions:\n")
    ddrs = sorted({r.soc["ddr"] for r in results if r.soc and r.soc.get("ddr")})
    L.append(f"- **SoC fw-bracketed vs VexRiscv C**: the same SoC at {CLOCK_MHZ} MHz, the same counter "
             "(THROUGHPUT_COUNTER started and stopped by the firmware) around the IP's whole job (DMA from and "
             f"to the DDR model, preset `{', '.join(ddrs) or 'none: not run'}`, register accesses; the paper's "
             "metric) and around the C merge on the SoC's VexRiscv; the same runs, loaded into DDR by the "
             "simulator. The IP-alone columns have no DDR (the harness feeds the streams).")
    L.append("- **vs LevelDB 1.23**: LevelDB's own compaction of two tables holding the same keys, timed on this "
             "host (log line to log line): a different program (it reads and writes SSTables, builds blocks and "
             "filters, keeps values), so its ratio to the IP says how much a real store's compaction costs, not "
             "how fast the merge is.")
    L.append(f"- **The paper's speed-ups** (copied below) divide one LevelDB figure ({paper.leveldb_us_per_entry()} "
             "µs/entry in every row) "
             "by its module's fw-bracketed time; they are not a per-size comparison.\n")
    L.append("## Results (layout of the paper's Table III, one column per baseline)\n")
    L.append("µs/entry = time / input entries (16-byte KB16 entries of both runs; with `short` keys an entry is "
             f"a key). IP figures are cycles at {CLOCK_MHZ} MHz. Speed-up = LevelDB µs/entry ÷ the other "
             "µs/entry.\n")
    L.append("| Key number (entries in) | Byte number | IP cycles (hw-only) | IP µs/entry | SoC throughput "
             "counter (fw-bracketed) | SoC µs/entry | VexRiscv C µs/entry | host C µs/entry | LevelDB µs/entry | "
             "Speed-up vs LevelDB (IP hw-only) | Speed-up vs LevelDB (SoC fw-bracketed) | IP vs VexRiscv C | "
             "IP vs host C |")
    L.append("|" + "---:|" * 13)
    for r in results:
        L.append("| " + " | ".join([
            str(r.entries_in), str(r.bytes_in), _m(r.ip_cycles and float(r.ip_cycles), 8),
            _m(r.ip_us), _m(r.soc and float(r.soc["fw_cycles"]), 8), _m(r.soc_fw_us), _m(r.vex_us),
            _m(r.host_us), _m(r.leveldb_us), _m(ratio(r.leveldb_us, r.ip_us), 3, "×"),
            _m(ratio(r.leveldb_us, r.soc_fw_us), 3, "×"), _m(ratio(r.vex_us, r.ip_us), 3, "×"),
            _m(ratio(r.host_us, r.ip_us), 3, "×")]) + " |")
    L.append("")
    L.append("## Spread of the CPU baselines (µs per input entry: best / median of the repetitions)\n")
    L.append(f"Main LevelDB figure: database in {meta['leveldb_where']}. Second figure (\"on disk\"): the same "
             "program with the database on the project's disk, where LevelDB's fsyncs reach a device.\n")
    L.append("| entries in | LevelDB compaction best | median | whole CompactRange best | median | "
             "on disk: compaction best | median | whole CompactRange best | repetitions | host C best | median | "
             "host C merges timed (sets × rounds) | SoC hw-only cycles |")
    L.append("|" + "---:|" * 13)

    def per(res, attr, n):
        v = getattr(res, attr) if res else None
        return None if v is None or math.isnan(v) else v / n
    for r in results:
        lv, ld, h = r.leveldb, r.leveldb_disk, r.host
        n = r.entries_in
        L.append("| " + " | ".join([
            str(n), _m(per(lv, "core_min", n)), _m(per(lv, "core_median", n)), _m(per(lv, "total_min", n)),
            _m(per(lv, "total_median", n)), _m(per(ld, "core_min", n)), _m(per(ld, "core_median", n)),
            _m(per(ld, "total_min", n)), str(lv.reps) if lv else "—", _m(h and h.min), _m(h and h.median),
            f"{h.sets} × {h.reps}" if h else "—", _m(r.soc and float(r.soc["hw_cycles"]), 8)]) + " |")
    L.append("")
    L.append("## The paper's own Table III (copied from the paper, not measured here)\n")
    L.append("MicroBlaze soft core at 100 MHz on an FPGA; LevelDB 1.23 on an Intel i5-8500 (how LevelDB was "
             "timed is not stated in the paper).\n")
    L.append("| Key number | Byte number | Throughput counter value | Processing efficiency (µs/entry) | "
             "Performance comparison with LevelDB |")
    L.append("|---:|---:|---:|---:|---:|")
    for k, b, c, us, x in PAPER_TABLE3:
        L.append(f"| {k} | {b} | {c} | {us} | {x}× |")
    L.append("")
    L.append("## Sources and gaps\n")
    L.append(f"- IP: `scripts/compact` (the IP alone in Verilator, {cfg.width}-bit streams, no stalls), "
             "hardware-only window first input beat → done; output checked against the reference merge.")
    L.append(f"- SoC columns (fw-bracketed counter, VexRiscv C merge): {soc_source}. The firmware runs this "
             "report's own jobs (the same keys as every other column, loaded into DDR) on the IP and on its C "
             "merge, checks both against the reference merge and prints PASS/FAIL.")
    L.append("- Host C: fw/lib/kb16.c compiled with gcc -O2, in memory, rotating through several data sets of the "
             "same size (the first is the job's own); output checked against the reference merge.")
    L.append("- LevelDB: the 1@1 + 1@2 compaction of two tables holding the two runs (values = 4-byte addresses, "
             "no compression, LevelDB's own fsyncs left on); timed from LevelDB's `Compacting` log line to "
             f"`compacted to`, best of the repetitions; database in {meta['leveldb_where']}; merged contents "
             "checked against the reference merge.")
    for r in results:
        for col, why in r.errors.items():
            if col == "soc" and not r.soc and why == soc_source:
                continue  # said once above
            L.append(f"- {r.entries_in} entries, {col}: not measured — {why}")
    L.extend(f"- {n}" for n in notes)
    L.append("")
    sc = cfg.out_dir / "scaling.csv"
    if sc.exists():  # the sweep of `scripts/demo scaling` (lsmc.report.scaling), when it has run
        try:
            L.append(scaling.markdown_section(scaling.read_csv(sc), scaling.read_ddr(sc.with_suffix(".md"))).replace(
                "## Scaling:", f"## Scaling (from {sc.name}, not measured by this run):", 1))
        except (scaling.ScalingError, OSError) as e:
            L.append(f"## Scaling\n\n{sc} could not be read: {e}\n")
    if plots:
        L.append("## Plots\n")
        L.extend(f"![{p}]({p})\n" for p in plots)
    outputs.add(path, "\n".join(L) + "\n")


def run_report(cfg: Config, command: str) -> list[SizeResult]:
    t0 = time.time()
    load0 = load_average()
    results, soc_source, notes = measure(cfg)
    lv = next((x.version for r in results for x in (r.leveldb, r.leveldb_disk) if x), None)
    where = cfg.db_dir or baselines.memory_db_dir()
    meta = {
        "command": command,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed": time.time() - t0,
        "cpu": cpu_model(),
        "cores": f"{os.cpu_count()} (1-minute load average {load0} at the start, {load_average()} at the end: "
                 "other work on the machine slows the CPU baselines; compare best and median below)",
        "os": f"{platform.system()} {platform.release()}",
        "leveldb": (f"{lv} (library), Debian package libleveldb-dev {baselines.leveldb_package_version()}"
                    if lv else f"not measured; Debian package {baselines.leveldb_package_version()}"),
        "compiler": _tool_version(["gcc", "--version"]),
        "workload": (f"`kb16 gen --kind {cfg.kind} --overlap {cfg.overlap} --seed {cfg.seed} --group {cfg.group}`"
                     f" (run0 newer = keys/2, run1 older)"),
        "clock": f"{CLOCK_MHZ} MHz for the IP, the SoC and the VexRiscv",
        "leveldb_where": (f"`{where}`" + (" (a RAM file system: LevelDB's CPU work without the storage device)"
                                          if str(where).startswith("/dev/shm") else "")
                          if where else f"`{baselines.BUILD / 'db'}` (no RAM file system here)"),
        "labels": {"cpu": "host CPU", "cores": "host cores", "os": "OS", "leveldb": "LevelDB",
                   "compiler": "host compiler", "workload": "workload", "clock": "clock assumed"},
    }
    cliutil.make_output_dir(cfg.out_dir)
    with cliutil.Outputs() as outputs:  # all four files replace the previous report together, or none does
        write_csv(results, cfg.out_dir / "report.csv", outputs)
        plots = write_plots(results, cfg.out_dir, outputs)
        write_markdown(cfg, results, soc_source, notes, meta, cfg.out_dir / "report.md", plots, outputs)
    return results


def summary(results: list[SizeResult]) -> str:
    lines = ["entries_in  IP us/e  VexRiscv  host C  LevelDB  speed-up vs LevelDB"]
    for r in results:
        lines.append(f"{r.entries_in:>10}  {_m(r.ip_us):>7}  {_m(r.vex_us):>8}  {_m(r.host_us):>6}  "
                     f"{_m(r.leveldb_us):>7}  {_m(ratio(r.leveldb_us, r.ip_us), 3, 'x'):>8}")
    return "\n".join(lines)


SOC_CSV_LIMIT = 1 << 20  # bytes: a table3.csv holds a few rows


@cliutil.tool_main("report")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="report", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=workloads.sizes_option(), nargs="+", metavar="KEYS",
                    help=f"keys per job, comma or space separated, 2..{workloads.MAX_KEYS} "
                    f"(default {','.join(map(str, DEFAULT_SIZES))}; --quick: {','.join(map(str, QUICK_SIZES))})")
    ap.add_argument("--quick", action="store_true", help="Table III sizes only, fewer repetitions")
    ap.add_argument("--kind", default="short", choices=workloads.KINDS)
    cliutil.add_overlap(ap, 0.25)
    cliutil.add_seed(ap, 1)
    kb16_cli.add_group(ap)
    cliutil.add_width(ap)
    ap.add_argument("--leveldb-reps", type=cliutil.int_option(1, 1000), metavar="N",
                    help="LevelDB repetitions per size, 1..1000 (default 9, --quick 3)")
    ap.add_argument("--host-sets", type=cliutil.int_option(1, 64), default=8, metavar="N",
                    help="data sets the host C timing rotates through, 1..64 (default 8)")
    ap.add_argument("--no-ip", action="store_true", help="leave out the IP simulation")
    ap.add_argument("--no-soc", action="store_true", help="leave out the full-SoC simulation")
    ap.add_argument("--soc-max", type=cliutil.int_option(0, workloads.MAX_KEYS), default=8192, metavar="KEYS",
                    help="largest size run in the full SoC "
                    "(default 8192: the firmware bench; larger sizes take long to simulate)")
    ap.add_argument("--soc-csv", type=Path, help="take the SoC figures from this table3.csv instead of "
                    "running the SoC (said so in the report)")
    ap.add_argument("--db-dir", type=Path, help="folder for LevelDB's main database (default /dev/shm/"
                    "lsmc-baselines, a RAM file system)")
    ap.add_argument("--no-leveldb-disk", action="store_true", help="skip the second LevelDB run on the disk")
    cliutil.add_out_dir(ap, "results", "report.md, report.csv and the plots")
    a = ap.parse_args(argv)
    sizes = cliutil.flatten(a.sizes) if a.sizes else (QUICK_SIZES if a.quick else DEFAULT_SIZES)
    reps = a.leveldb_reps or (3 if a.quick else 9)
    # Every path problem now, not after an hour of measurements.
    outputs = ["report.md", "report.csv", "report_us_per_entry.png", "report_speedup.png", "report_soc_bench.log"]
    cliutil.check_output_dir(a.out_dir, "--out-dir", outputs)
    if a.db_dir is not None:
        cliutil.check_output_dir(a.db_dir, "--db-dir")
    if a.soc_csv is not None:
        if not cliutil.read_text_input(a.soc_csv, SOC_CSV_LIMIT).strip():
            raise cliutil.CliError(f"{a.soc_csv}: empty file (--soc-csv needs results/table3.csv)")
        cliutil.check_paths({f"--out-dir {name}": a.out_dir / name for name in outputs}, {"--soc-csv": a.soc_csv},
                            folders_made=True)
    cfg = Config(sizes=sizes, kind=a.kind, overlap=a.overlap, seed=a.seed, group=a.group, width=a.width,
                 leveldb_reps=reps, host_sets=a.host_sets, quick=a.quick, ip=not a.no_ip,
                 soc="off" if a.no_soc else "csv" if a.soc_csv else "run", soc_csv=a.soc_csv, soc_max=a.soc_max,
                 db_dir=a.db_dir, leveldb_disk=not a.no_leveldb_disk, out_dir=a.out_dir)
    command = "scripts/report" + ("" if argv is None and len(sys.argv) < 2 else
                                  " " + " ".join(argv if argv is not None else sys.argv[1:]))
    try:
        results = run_report(cfg, command)
    except (ReportError, baselines.BaselineError, kb16.Kb16Error) as e:
        raise cliutil.CliError(str(e)) from None
    print(summary(results))
    print(f"report: wrote {cfg.out_dir / 'report.md'}, report.csv, report_us_per_entry.png, report_speedup.png")
    return 0
