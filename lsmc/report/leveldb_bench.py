"""`lsmc leveldb bench`: LevelDB's db_bench (1.23, 16-byte keys, 100-byte values) with compactions on
the CPU (stock), on the project's C merge (`model` back end) and on the Verilated IP (`rtl`), written to
results/leveldb.md, .csv and .png (docs/leveldb.md says how to read them).

What is measured and what is modelled:
* measured: ops/s (wall), the db_bench process's CPU time, the compaction thread's CPU time from the
  hook's entry to the end of LevelDB's compaction loop (leveldb/lsmc_hook.cc, TimedIterator: the same
  bracket for the stock and the offloaded path), LevelDB's own wall-time brackets from its info log,
  compaction bytes (leveldb.stats), the host conversion time and the back end's CPU time;
* MODELLED (`rtl` only): the same CPU times with the simulator's CPU time replaced by the device's
  cycles at the IP's clock.
CPU time is the headline because the machine is shared: wall time there mostly measures the others.
"""
from __future__ import annotations

import csv
import io
import os
import re
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass

from lsmc import cluster
from lsmc.cliutil import CliError, Outputs
from lsmc.paths import RESULTS
from lsmc.sim.leveldb import BIN, TMP, OffloadLog, check_built, ensure_built, mhz_from_header

# (benchmark, fresh database?): fillrandom then overwrite, readrandom over what they wrote; fillseq
# on a fresh database. One db_bench process per phase so each phase has its own stats and offload log.
PHASES = [("fillrandom", True), ("overwrite", False), ("readrandom", False), ("fillseq", True)]
MODES = ["off", "model", "rtl"]
ANCHOR = ("Lim and Shin (ZCU106 at 250 MHz over PCIe 3.0 x4, host i7-4790, db_bench fillrandom of 5 M records):"
          " compaction 109.1 -> 195.6 MB/s (+79 %; Level 0-1 with cascading 126.4 -> 156.7 MB/s, +23 %),"
          " end to end 19.1 -> 24.5 MB/s (+28.2 %)")

_OP = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op;", re.M)
_STATS_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)


@dataclass
class Phase:
    mode: str
    bench: str
    ops: int
    micros_per_op: float
    compaction_wall_s: float  # LevelDB's info-log brackets (includes the simulator for rtl)
    read_mb: float
    write_mb: float
    wall_s: float
    cpu_s: float  # db_bench process, user + system
    log: OffloadLog

    @property
    def ops_per_s(self) -> float:
        return 1e6 / self.micros_per_op if self.micros_per_op else 0.0

    def device_s(self, mhz: int) -> float:
        return self.log.device_cycles / (mhz * 1e6)

    def _model(self, cpu_s: float, mhz: int) -> float:
        """A CPU time with the simulator's CPU time replaced by the device's time (rtl only)."""
        if self.mode != "rtl":
            return cpu_s
        return max(0.0, cpu_s - self.log.sim_us / 1e6 + self.device_s(mhz))

    def compaction_s(self, mhz: int) -> float:
        """Compaction thread CPU time: measured (off, model) or MODELLED (rtl)."""
        return self._model(self.log.compaction_cpu_us / 1e6, mhz)

    def process_s(self, mhz: int) -> float:
        """db_bench process CPU time: measured (off, model) or MODELLED (rtl)."""
        return self._model(self.cpu_s, mhz)


def parse_stats(text: str) -> tuple[float, float]:
    """Sum of LevelDB's per-level compaction stats: Read(MB), Write(MB). (Its Time(sec) column is
    printed in whole seconds: the time comes from the info log instead.)"""
    r = w = 0.0
    for m in _STATS_ROW.finditer(text.split("Compactions", 1)[1] if "Compactions" in text else ""):
        r += float(m.group(5))
        w += float(m.group(6))
    return r, w


_LOG_TS = re.compile(r"^(\d{4})/(\d\d)/(\d\d)-(\d\d):(\d\d):(\d\d)\.(\d{6}) \S+ (Compacting|compacted to)", re.M)


def compaction_seconds(log_text: str) -> float:
    """Sum of LevelDB's own compaction brackets in its info log: "Compacting ..." to "compacted to"
    (DBImpl::DoCompactionWork; the time of the merge, the table writes and the offload hook)."""
    total, start = 0.0, None
    for m in _LOG_TS.finditer(log_text):
        t = int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6)) + int(m.group(7)) / 1e6
        if m.group(8) == "Compacting":
            start = t
        elif start is not None:
            total += (t - start) % 86400
            start = None
    return total


def run_phase(mode: str, bench: str, fresh: bool, ops: int) -> Phase:
    db = TMP / f"bench-{mode}"
    log = TMP / f"bench-{mode}-{bench}.log"
    log.unlink(missing_ok=True)
    if fresh:
        shutil.rmtree(db, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSMC_")}
    env.update(LSMC_OFFLOAD=mode, LSMC_OFFLOAD_LOG=str(log), LSMC_RTL_STALL="0")
    cmd = [str(BIN / "db_bench"), f"--db={db}", f"--num={ops}", "--value_size=100",
           f"--benchmarks={bench},stats", f"--use_existing_db={0 if fresh else 1}"]
    t0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    if res.returncode != 0:
        raise CliError(f"db_bench {bench} ({mode}) failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    m = {name: float(v) for name, v in _OP.findall(res.stdout)}
    if bench not in m:
        raise CliError(f"no '{bench}' result in db_bench's output:\n{res.stdout[-2000:]}")
    r, w = parse_stats(res.stdout)
    info = db / "LOG"
    t = compaction_seconds(info.read_text(errors="replace")) if info.exists() else 0.0
    return Phase(mode, bench, ops, m[bench], t, r, w, wall, cpu, OffloadLog.read(log))


def render(phases: list[Phase], ops: int, mhz: int) -> tuple[str, str, bytes]:
    by = {(p.mode, p.bench): p for p in phases}
    rows = []
    for p in phases:
        rtl = p.mode == "rtl"
        rows.append({
            "mode": p.mode, "benchmark": p.bench, "ops": p.ops, "ops_per_s_wall": round(p.ops_per_s),
            "process_cpu_s_measured": round(p.cpu_s, 3),
            "process_cpu_s_modelled": round(p.process_s(mhz), 3) if rtl else "",
            "compaction_cpu_s_measured": round(p.log.compaction_cpu_us / 1e6, 3),
            "compaction_cpu_s_modelled": round(p.compaction_s(mhz), 3) if rtl else "",
            "compaction_wall_s_measured": round(p.compaction_wall_s, 3), "compactions": p.log.compactions,
            "compaction_read_mb": p.read_mb, "compaction_write_mb": p.write_mb,
            "offloaded": p.log.offloaded, "fallback": p.log.fallback, "entries": p.log.entries,
            "device_jobs": p.log.jobs, "device_cycles": p.log.device_cycles,
            "device_s_modelled": round(p.device_s(mhz), 4) if rtl else "",
            "host_conversion_cpu_s": round(p.log.host_us / 1e6, 3), "backend_cpu_s": round(p.log.sim_us / 1e6, 3),
            "backend_wall_s": round(p.log.sim_wall_us / 1e6, 3),
        })
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)

    def gain(old: float, new: float) -> str:  # time -> speed gain
        return f"{(old / new - 1) * 100:+.1f} %" if old and new else "n/a"

    md = [
        "# LevelDB 1.23 with compactions offloaded (db_bench)", "",
        f"`scripts/leveldb bench --ops {ops}`: db_bench of LevelDB 1.23 (Debian's source, the repo's hook patch,"
        " -O2, snappy on), 16-byte keys, 100-byte values, database under build/leveldb/tmp, one db_bench process per"
        " phase (fillrandom, then overwrite and readrandom on its database; fillseq on a fresh one). Modes: `off` ="
        " stock compaction on the CPU; `model` = the offload path with the project's C merge (fw/lib/kb16.c) as the"
        " device, all MEASURED; `rtl` = the offload path with the Verilated compaction IP in-process (no stalls):"
        f" its CPU times are MODELLED, the simulator's CPU time replaced by the IP's HW_CYCLES at {mhz} MHz.", "",
        "Compaction CPU = the compaction thread's CPU time from the offload hook's entry to the end of LevelDB's"
        " compaction loop (the last output table written), the same bracket for every mode. Process CPU = db_bench's"
        " user + system time. Wall-time figures (ops/s, LevelDB's info-log brackets) are measured too, but on this"
        " shared 2-core machine they mostly measure the other processes.", "",
        "| phase | mode | ops/s (wall) | process CPU s | compaction CPU s | compaction wall s | compactions"
        " | read MB | write MB | compaction MB/s (read / CPU s) | offloaded / fallback | device cycles"
        " | device s | host conversion CPU s | back end CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in phases:
        rtl = p.mode == "rtl"
        tag = " (MODELLED)" if rtl else ""
        ct = p.compaction_s(mhz)
        mbps = f"{p.read_mb / ct:.1f}{tag}" if ct > 0 else "—"
        md.append(f"| {p.bench} | {p.mode} | {p.ops_per_s:,.0f} | {p.process_s(mhz):.2f}{tag} | {ct:.3f}{tag}"
                  f" | {p.compaction_wall_s:.2f} | {p.log.compactions} | {p.read_mb:.0f} | {p.write_mb:.0f} | {mbps}"
                  f" | {p.log.offloaded} / {p.log.fallback} | {p.log.device_cycles:,}"
                  f" | {f'{p.device_s(mhz):.4f}' if rtl else '—'} | {p.log.host_us / 1e6:.3f}"
                  f" | {p.log.sim_us / 1e6:.3f} |")
    md += ["", "## Against the stock path (CPU time; speed = stock time / offloaded time - 1)", ""]
    for bench, _ in PHASES:
        off, mod, rtl = by.get(("off", bench)), by.get(("model", bench)), by.get(("rtl", bench))
        if not off or not off.log.compactions:
            md.append(f"- {bench}: no compaction ran through DoCompactionWork in the stock run"
                      " (sequential keys: files move down without merging)")
            continue
        parts = []
        if mod:
            parts.append(f"C-merge device (measured): compaction {gain(off.compaction_s(mhz), mod.compaction_s(mhz))},"
                         f" process {gain(off.process_s(mhz), mod.process_s(mhz))}")
        if rtl:
            parts.append(f"IP at {mhz} MHz (MODELLED): compaction {gain(off.compaction_s(mhz), rtl.compaction_s(mhz))},"
                         f" process {gain(off.process_s(mhz), rtl.process_s(mhz))}")
        md.append(f"- {bench}: " + "; ".join(parts))
    reasons = sum((p.log.reasons for p in phases if p.mode != "off"), start=OffloadLog().reasons)
    md += ["", f"Fallback reasons (all offloaded runs): {dict(reasons) or 'none'}.", "",
           f"Anchor: {ANCHOR}. Our device time is the IP's HW_CYCLES at {mhz} MHz with no DMA or PCIe transfer"
           " modelled; the host conversion (tables -> KB16 runs, merged run -> LevelDB's entry stream, the work"
           " Lim and Shin's driver also does) is measured apart and included in every offloaded figure. Figures move"
           " between runs on a shared machine; compare modes within one run.", ""]
    png = plot(phases, mhz)
    return "\n".join(md), buf.getvalue(), png


def plot(phases: list[Phase], mhz: int) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = [b for b, _ in PHASES]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.27
    for i, mode in enumerate(MODES):
        vals = [next((p.ops_per_s for p in phases if p.mode == mode and p.bench == b), 0) for b in benches]
        label = {"off": "stock", "model": "offload, C merge (measured)",
                 "rtl": "offload, IP simulated (measured)"}[mode]
        a1.bar([x + (i - 1) * width for x in range(len(benches))], vals, width, label=label)
        cvals = [next((p.compaction_s(mhz) for p in phases if p.mode == mode and p.bench == b), 0) for b in benches]
        clabel = {"off": "stock (measured)", "model": "C merge (measured)", "rtl": f"IP at {mhz} MHz (MODELLED)"}[mode]
        a2.bar([x + (i - 1) * width for x in range(len(benches))], cvals, width, label=clabel)
    for ax, title, yl in ((a1, "db_bench throughput (wall, measured)", "ops/s"),
                          (a2, "compaction thread CPU time", "s")):
        ax.set_xticks(range(len(benches)), benches)
        ax.set_title(title)
        ax.set_ylabel(yl)
        ax.legend(fontsize=7)
    fig.suptitle("LevelDB 1.23, 16-byte keys, 100-byte values")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
    return out.getvalue()


def mode_phases(mode: str, ops: int, each=lambda p: None) -> list[Phase]:
    """Every phase of PHASES in `mode`, in order (a phase reads the database the one before left)."""
    out = []
    for bench, fresh in PHASES:
        out.append(run_phase(mode, bench, fresh, ops))
        each(out[-1])
    return out


def print_phase(p: Phase) -> None:
    print(f"{p.mode:5s} {p.bench:10s} {p.ops_per_s:10,.0f} ops/s  process CPU {p.cpu_s:7.2f} s"
          f"  compaction CPU {p.log.compaction_cpu_us / 1e6:7.3f} s"
          f"  | {p.log.summary()}", flush=True)


def cmd_bench(args) -> int:
    check_built()
    mhz = mhz_from_header()
    phases = []
    if getattr(args, "cluster", None) is not None:  # a mode per timed task (lsmc.cluster, docs/cluster.md)
        phases = bench_on_cluster(args.cluster, args.ops)
        for p in phases:
            print_phase(p)
    else:
        for mode in MODES:
            phases += mode_phases(mode, args.ops, print_phase)
    md, csv_text, png = render(phases, args.ops, mhz)
    RESULTS.mkdir(exist_ok=True)
    with Outputs() as out:
        out.add(RESULTS / "leveldb.md", md)
        out.add(RESULTS / "leveldb.csv", csv_text)
        out.add(RESULTS / "leveldb.png", png)
    print(md)
    print(f"wrote {RESULTS / 'leveldb.md'}, .csv, .png")
    return 0


# ---- the modes as timed Dask tasks (lsmc.cluster, docs/cluster.md) -----------------------------------

def _bench_mode(point: tuple) -> list:
    """("bench", mode, ops) -> mode_phases of the mode (its phases in order: each
    reads the database the one before left, on this worker's disk)."""
    ensure_built()
    _, mode, ops = point
    return mode_phases(mode, ops)

def bench_on_cluster(address, ops: int) -> list:
    """`leveldb bench`'s modes as timed tasks (their wall time is the measurement: one at a time on a
    machine, nothing beside it); the phases in the serial order. A failed mode is a cluster.ClusterError after
    its retry (a report without one of its modes would compare nothing)."""
    points = [("bench", m, ops) for m in MODES]
    try:
        with cluster.connect(address) as client:
            outcomes = cluster.run(client, _bench_mode, points, timed=True, label="leveldb bench")
    except cluster.Interrupted as e:
        raise cluster.ClusterError(f"interrupted: {len(e.outcomes)} of {len(points)} modes had finished; the report "
                           "compares all three, so none is written") from None
    bad = [o for o in outcomes if not o.ok]
    if bad:
        raise cluster.ClusterError("; ".join(f"db_bench mode {o.point[1]} failed: {o.error}" for o in bad))
    return [p for o in outcomes for p in o.value]


