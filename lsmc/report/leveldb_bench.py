"""`lsmc leveldb bench`: LevelDB 1.23's db_bench (16-byte keys, 100-byte values), stock against the table
engine paced to its modelled device time, written to results/leveldb.md, .csv and .png (docs/leveldb.md).

Configurations, for each compression (Snappy as Debian builds it; none): `off` (stock LevelDB) and `paced`
at 100 and 250 MHz: every compaction on the table engine's C++ model (LSMC_OFFLOAD=model), each job ending
no earlier than its MODELLED device time (the model's cycle estimate at LSMC_DEVICE_MHZ plus its bytes over
LSMC_HOST_LINK, PCIe 3.0 x4 unless set). A paced run is paired with the stock run of its compression in
the same invocation. Phases, one db_bench process each: fillrandom, then overwrite and readrandom on its
database; fillseq on a fresh one.

Measured: ops/s and MB/s (db_bench, wall), compaction time (LevelDB's own info-log brackets, wall),
compaction MB/s (input bytes, leveldb.stats' Read(MB), per second of compaction time), the compaction
thread's CPU time (the hook's bracket, the same for both paths), write stops (the info log's waits for a
full memtable or too many Level-0 files) and the db_bench process's CPU time. A paced figure includes a
device time that is a model's estimate: it is labelled MODELLED, with its clock and link.
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
from lsmc.sim.leveldb import BIN, TMP, OffloadLog, check_built, ensure_built

# (benchmark, fresh database?): fillrandom then overwrite, readrandom over what they wrote; fillseq
# on a fresh database. One db_bench process per phase so each phase has its own stats and offload log.
PHASES = [("fillrandom", True), ("overwrite", False), ("readrandom", False), ("fillseq", True)]
COMPRESSIONS = ["snappy", "none"]
PACED_MHZ = [100, 250]
HOST_LINK = "pcie3x4"  # LSMC_HOST_LINK of the paced runs (docs/leveldb.md: Lim and Shin's link)
# (mode, device MHz or None), per compression, in the order they run: the stock run first, its pair after.
CONFIGS = [("off", None)] + [("paced", m) for m in PACED_MHZ]
COLUMNS = ["phase", "compression", "mode", "device_mhz", "ops", "ops_per_s", "mb_per_s", "compaction_s",
           "compaction_mb_per_s", "compaction_cpu_s", "stalls",
           # beyond the columns every report has: where the time went
           "process_cpu_s", "compactions", "compaction_read_mb", "compaction_write_mb", "offloaded", "fallback",
           "device_s_modelled", "pace_wait_s", "model_cpu_s", "host_link"]
ANCHOR = ("Lim and Shin (ZCU106 at 250 MHz over PCIe 3.0 x4, host i7-4790, db_bench fillrandom of 5 M records):"
          " compaction 109.1 -> 195.6 MB/s (+79 %), end to end 19.1 -> 24.5 MB/s (+28.2 %)")
# The goals at 100 MHz with Snappy on: (what, phase, how measured, goal)
GOALS = [("compaction throughput", "fillrandom", "compaction_mb_per_s", 4.0),
         ("fillrandom ops/s", "fillrandom", "ops_per_s", 1.30),
         ("overwrite ops/s", "overwrite", "ops_per_s", 1.30)]

_OP = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op;(?:\s*([\d.]+) MB/s)?", re.M)
_STATS_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
_STOP = re.compile(r"(Current memtable full|Too many L0 files); waiting", re.M)


@dataclass
class Phase:
    compression: str
    mode: str
    mhz: int | None
    bench: str
    ops: int
    micros_per_op: float
    mb_per_s: float  # db_bench's own figure (0 when it prints none: readrandom)
    compaction_wall_s: float  # LevelDB's info-log brackets
    read_mb: float
    write_mb: float
    stops: int
    wall_s: float
    cpu_s: float  # db_bench process, user + system
    log: OffloadLog

    @property
    def ops_per_s(self) -> float:
        return 1e6 / self.micros_per_op if self.micros_per_op else 0.0

    @property
    def compaction_mb_per_s(self) -> float:
        return self.read_mb / self.compaction_wall_s if self.compaction_wall_s > 0 else 0.0

    @property
    def label(self) -> str:
        return "stock" if self.mode == "off" else f"paced {self.mhz} MHz"

    def row(self) -> dict:
        return {"phase": self.bench, "compression": self.compression, "mode": self.mode,
                "device_mhz": self.mhz or "", "ops": self.ops, "ops_per_s": round(self.ops_per_s),
                "mb_per_s": self.mb_per_s, "compaction_s": round(self.compaction_wall_s, 3),
                "compaction_mb_per_s": round(self.compaction_mb_per_s, 1),
                "compaction_cpu_s": round(self.log.compaction_cpu_us / 1e6, 3), "stalls": self.stops,
                "process_cpu_s": round(self.cpu_s, 3), "compactions": self.log.compactions,
                "compaction_read_mb": self.read_mb, "compaction_write_mb": self.write_mb,
                "offloaded": self.log.offloaded, "fallback": self.log.fallback,
                "device_s_modelled": round(self.log.device_us / 1e6, 3) if self.mode != "off" else "",
                "pace_wait_s": round(self.log.pace_wait_us / 1e6, 3) if self.mode != "off" else "",
                "model_cpu_s": round(self.log.sim_us / 1e6, 3) if self.mode != "off" else "",
                "host_link": HOST_LINK if self.mode != "off" else ""}


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
    (DBImpl::DoCompactionWork: the merge and the table writes, or the offloaded job)."""
    total, start = 0.0, None
    for m in _LOG_TS.finditer(log_text):
        t = int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6)) + int(m.group(7)) / 1e6
        if m.group(8) == "Compacting":
            start = t
        elif start is not None:
            total += (t - start) % 86400
            start = None
    return total


def bench_env(mode: str, mhz: int | None, log) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSMC_")}
    env.update(LSMC_OFFLOAD_LOG=str(log))
    if mode == "off":
        env.update(LSMC_OFFLOAD="off")
    else:
        env.update(LSMC_OFFLOAD="model", LSMC_DEVICE_PACE="1", LSMC_DEVICE_MHZ=str(mhz), LSMC_HOST_LINK=HOST_LINK,
                   LSMC_OFFLOAD_VERIFY="0")
    return env


def run_phase(compression: str, mode: str, mhz: int | None, bench: str, fresh: bool, ops: int) -> Phase:
    tag = f"{compression}-{mode}{mhz or ''}"
    db = TMP / f"bench-{tag}"
    log = TMP / f"bench-{tag}-{bench}.log"
    log.unlink(missing_ok=True)
    if fresh:
        shutil.rmtree(db, ignore_errors=True)
    info = db / "LOG"  # LevelDB renames the previous run's info log to LOG.old on open: LOG is this phase's
    cmd = [str(BIN / "db_bench"), f"--db={db}", f"--num={ops}", "--value_size=100",
           f"--benchmarks={bench},stats", f"--use_existing_db={0 if fresh else 1}",
           f"--compression={1 if compression == 'snappy' else 0}"]
    t0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, env=bench_env(mode, mhz, log), capture_output=True, text=True)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    if res.returncode != 0:
        raise CliError(f"db_bench {bench} ({tag}) failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    got = {name: (float(us), float(mb or 0)) for name, us, mb in _OP.findall(res.stdout)}
    if bench not in got:
        raise CliError(f"no '{bench}' result in db_bench's output:\n{res.stdout[-2000:]}")
    r, w = parse_stats(res.stdout)
    text = info.read_text(errors="replace") if info.exists() else ""
    return Phase(compression, mode, mhz, bench, ops, got[bench][0], got[bench][1], compaction_seconds(text), r, w,
                 len(_STOP.findall(text)), wall, cpu, OffloadLog.read(log))


def config_phases(compression: str, mode: str, mhz: int | None, ops: int, each=lambda p: None) -> list[Phase]:
    """Every phase of PHASES in one configuration, in order (a phase reads the database the one before left)."""
    out = []
    for bench, fresh in PHASES:
        out.append(run_phase(compression, mode, mhz, bench, fresh, ops))
        each(out[-1])
    return out


def load_csv(path) -> list[Phase]:
    """The phases of a results/leveldb.csv, to render its report again (the offload log's counters that the
    report reads, from their columns)."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            def num(col, scale=1.0, r=r):
                return int(float(r[col] or 0) * scale)
            log = OffloadLog(compactions=num("compactions"), compaction_cpu_us=num("compaction_cpu_s", 1e6),
                             offloaded=num("offloaded"), fallback=num("fallback"),
                             device_us=num("device_s_modelled", 1e6), pace_wait_us=num("pace_wait_s", 1e6),
                             sim_us=num("model_cpu_s", 1e6))
            ops_s = float(r["ops_per_s"])
            out.append(Phase(r["compression"], r["mode"], int(r["device_mhz"]) if r["device_mhz"] else None,
                             r["phase"], int(r["ops"]), 1e6 / ops_s if ops_s else 0.0, float(r["mb_per_s"]),
                             float(r["compaction_s"]), float(r["compaction_read_mb"]),
                             float(r["compaction_write_mb"]), int(r["stalls"]), 0.0, float(r["process_cpu_s"]), log))
    return out


def _ratio(new: float, old: float) -> str:
    return f"{new / old:.2f}x" if old and new else "n/a"


def _gain(new: float, old: float) -> str:
    return f"{(new / old - 1) * 100:+.1f} %" if old and new else "n/a"


def machine_line(load0: tuple, load1: tuple) -> str:
    model = ""
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", open("/proc/cpuinfo").read(), re.M)
        model = m.group(1).strip() if m else ""
    except OSError:
        pass
    return (f"Host: {os.cpu_count()} cores{f' ({model})' if model else ''}; load average {load0[0]:.2f} at the start, "
            f"{load1[0]:.2f} at the end (1 min). The machine is shared: compare the configurations of one run, "
            "not figures of different runs.")


def render(phases: list[Phase], ops: int, machine: str) -> tuple[str, str, bytes]:
    rows = [p.row() for p in phases]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    w.writeheader()
    w.writerows(rows)
    by = {(p.compression, p.mode, p.mhz, p.bench): p for p in phases}
    md = ["# LevelDB 1.23: stock against the table engine paced to its modelled device time (db_bench)", "",
          f"`scripts/leveldb bench --ops {ops}`: db_bench of LevelDB 1.23 (Debian's source, the project's hook "
          "patch, -O2), 16-byte keys, 100-byte values, the database under build/leveldb/tmp, one db_bench process "
          "per phase (fillrandom, then overwrite and readrandom on its database; fillseq on a fresh one). "
          "`off` = stock LevelDB; `paced` = every compaction on the table engine's C++ model in the process, each "
          f"job ending no earlier than its device time at the stated clock plus its bytes over {HOST_LINK} "
          "(docs/leveldb.md): every paced figure is **MODELLED** (a model's cycle estimate, not yet calibrated "
          "against the engine's RTL, stands in for the device).", "", machine, "",
          "| phase | compression | mode | ops/s | MB/s | compaction s | compaction MB/s | compaction thread CPU s "
          "| stops | compactions | offloaded / fallback | device s | pace wait s |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in phases:
        mod = " (MODELLED)" if p.mode != "off" else ""
        md.append(f"| {p.bench} | {p.compression} | {p.label}{mod} | {p.ops_per_s:,.0f} | {p.mb_per_s:.1f} "
                  f"| {p.compaction_wall_s:.2f} | {p.compaction_mb_per_s:.1f} | {p.log.compaction_cpu_us / 1e6:.3f} "
                  f"| {p.stops} | {p.log.compactions} | {p.log.offloaded} / {p.log.fallback} "
                  f"| {p.log.device_us / 1e6:.3f} | {p.log.pace_wait_us / 1e6:.3f} |"
                  if p.mode != "off" else
                  f"| {p.bench} | {p.compression} | stock | {p.ops_per_s:,.0f} | {p.mb_per_s:.1f} "
                  f"| {p.compaction_wall_s:.2f} | {p.compaction_mb_per_s:.1f} | {p.log.compaction_cpu_us / 1e6:.3f} "
                  f"| {p.stops} | {p.log.compactions} | — | — | — |")
    md += ["", "## Against stock, same run (MODELLED device time)", ""]
    for comp in COMPRESSIONS:
        for mhz in PACED_MHZ:
            parts = []
            for bench, _ in PHASES:
                off, pc = by.get((comp, "off", None, bench)), by.get((comp, "paced", mhz, bench))
                if not off or not pc:
                    continue
                parts.append(f"{bench} ops/s {_gain(pc.ops_per_s, off.ops_per_s)}"
                             + (f", compaction MB/s {_ratio(pc.compaction_mb_per_s, off.compaction_mb_per_s)}, "
                                f"compaction thread CPU {_ratio(pc.log.compaction_cpu_us, off.log.compaction_cpu_us)}"
                                if off.log.compactions else ""))
            if parts:
                md.append(f"- {comp}, {mhz} MHz: " + "; ".join(parts))
    md += ["", "## Goals (Snappy on, 100 MHz, MODELLED)", "", "| goal | stock | paced | ratio | target | met |",
           "|---|---|---|---|---|---|"]
    for what, bench, attr, target in GOALS:
        off, pc = by.get(("snappy", "off", None, bench)), by.get(("snappy", "paced", 100, bench))
        if off and pc:
            a, b = getattr(off, attr), getattr(pc, attr)
            ok = a > 0 and b / a >= target
            md.append(f"| {what} | {a:,.1f} | {b:,.1f} | {_ratio(b, a)} | >= {target:.2f}x | {'yes' if ok else 'NO'} |")
    off, pc = by.get(("snappy", "off", None, "readrandom")), by.get(("snappy", "paced", 100, "readrandom"))
    if off and pc:
        ok = pc.ops_per_s >= 0.95 * off.ops_per_s
        md.append(f"| readrandom ops/s | {off.ops_per_s:,.0f} | {pc.ops_per_s:,.0f} "
                  f"| {_ratio(pc.ops_per_s, off.ops_per_s)} | no worse than stock within noise (5 %) "
                  f"| {'yes' if ok else 'NO'} |")
    off, pc = by.get(("snappy", "off", None, "fillrandom")), by.get(("snappy", "paced", 100, "fillrandom"))
    if off and pc and off.log.compaction_cpu_us:
        r = pc.log.compaction_cpu_us / off.log.compaction_cpu_us
        md.append(f"| compaction thread CPU (fillrandom) | {off.log.compaction_cpu_us / 1e6:.2f} s "
                  f"| {pc.log.compaction_cpu_us / 1e6:.2f} s | {r:.2f}x | <= 0.25x | {'yes' if r <= 0.25 else 'NO'} |")
    md += ["", "## What sets a paced job's time", ""]
    paced = [p for p in phases if p.mode != "off" and p.log.offloaded]
    waited = sum(p.log.pace_wait_us for p in paced) / 1e6
    model = sum(p.log.sim_us for p in paced) / 1e6
    device = sum(p.log.device_us for p in paced) / 1e6
    md.append(f"Over all paced phases the jobs' MODELLED device time is {device:.2f} s, the model's own CPU time "
              f"{model:.2f} s and the pacing waited {waited:.2f} s."
              + (" The pacing never waited: in every job the model's own time was longer than the modelled device "
                 "time, so the runs at different clocks did the same work and differ only by the machine's noise; "
                 "their figures are those of the model on this host, not of the device."
                 if waited < 0.01 * device else ""))
    for comp in COMPRESSIONS:
        off, pc = by.get((comp, "off", None, "fillrandom")), by.get((comp, "paced", 100, "fillrandom"))
        if off and pc and pc.log.device_us and off.log.compaction_cpu_us:
            dev = pc.read_mb / (pc.log.device_us / 1e6)
            cpu = off.read_mb / (off.log.compaction_cpu_us / 1e6)
            md.append(f"- {comp}, fillrandom at 100 MHz: the modelled device alone would compact {dev:,.0f} MB/s "
                      f"(input MB per s of MODELLED device time), {dev / cpu:.1f}x stock's {cpu:,.0f} MB/s per s of "
                      "its compaction thread's CPU (MODELLED: what a device beside the host would give if the "
                      "estimate holds).")
    reasons = sum((p.log.reasons for p in phases if p.mode != "off"), start=OffloadLog().reasons)
    md += ["", f"Fallback reasons (all paced runs): {dict(reasons) or 'none'}.", "", f"Anchor: {ANCHOR}.", ""]
    return "\n".join(md), buf.getvalue(), plot(phases)


def plot(phases: list[Phase]) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = [b for b, _ in PHASES]
    labels = [(c, m, mhz) for c in COMPRESSIONS for m, mhz in CONFIGS]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    width = 0.8 / len(labels)
    for i, (c, m, mhz) in enumerate(labels):
        sel = {p.bench: p for p in phases if (p.compression, p.mode, p.mhz) == (c, m, mhz)}
        if not sel:
            continue
        name = f"{c}, " + ("stock" if m == "off" else f"paced {mhz} MHz (MODELLED)")
        xs = [x + (i - (len(labels) - 1) / 2) * width for x in range(len(benches))]
        axes[0].bar(xs, [sel[b].ops_per_s if b in sel else 0 for b in benches], width, label=name)
        axes[1].bar(xs, [sel[b].compaction_mb_per_s if b in sel else 0 for b in benches], width, label=name)
    for ax, title, yl in ((axes[0], "db_bench throughput", "ops/s"),
                          (axes[1], "compaction throughput (input MB per s of compaction)", "MB/s")):
        ax.set_xticks(range(len(benches)), benches)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(yl)
        ax.legend(fontsize=6)
    fig.suptitle(f"LevelDB 1.23, 16-byte keys, 100-byte values; table engine over {HOST_LINK}")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
    return out.getvalue()


def print_phase(p: Phase) -> None:
    print(f"{p.compression:6s} {p.label:15s} {p.bench:10s} {p.ops_per_s:10,.0f} ops/s  compaction "
          f"{p.compaction_wall_s:6.2f} s {p.compaction_mb_per_s:7.1f} MB/s"
          f"  thread CPU {p.log.compaction_cpu_us / 1e6:6.2f} s"
          f"  | {p.log.summary()}", flush=True)


def cmd_bench(args) -> int:
    check_built()
    load0 = os.getloadavg()
    phases = []
    if getattr(args, "cluster", None) is not None:  # a configuration per timed task (lsmc.cluster)
        phases = bench_on_cluster(args.cluster, args.ops)
        for p in phases:
            print_phase(p)
    else:
        for comp in COMPRESSIONS:
            for mode, mhz in CONFIGS:
                phases += config_phases(comp, mode, mhz, args.ops, print_phase)
    md, csv_text, png = render(phases, args.ops, machine_line(load0, os.getloadavg()))
    RESULTS.mkdir(exist_ok=True)
    with Outputs() as out:
        out.add(RESULTS / "leveldb.md", md)
        out.add(RESULTS / "leveldb.csv", csv_text)
        out.add(RESULTS / "leveldb.png", png)
    print(md)
    print(f"wrote {RESULTS / 'leveldb.md'}, .csv, .png")
    return 0


# ---- the configurations as timed Dask tasks (lsmc.cluster, docs/cluster.md) ---------------------------

def _bench_config(point: tuple) -> list:
    """("bench", compression, mode, mhz, ops) -> config_phases of that configuration (its phases in order:
    each reads the database the one before left, on this worker's disk)."""
    ensure_built()
    _, comp, mode, mhz, ops = point
    return config_phases(comp, mode, mhz, ops)


def bench_on_cluster(address, ops: int) -> list:
    """`leveldb bench`'s configurations as timed tasks (their wall time is the measurement: one at a time on
    a machine, nothing beside it); the phases in the serial order. A failed configuration is a
    cluster.ClusterError after its retry (the report pairs every paced run with its stock run)."""
    points = [("bench", c, m, mhz, ops) for c in COMPRESSIONS for m, mhz in CONFIGS]
    try:
        with cluster.connect(address) as client:
            outcomes = cluster.run(client, _bench_config, points, timed=True, label="leveldb bench")
    except cluster.Interrupted as e:
        raise cluster.ClusterError(f"interrupted: {len(e.outcomes)} of {len(points)} configurations had finished; "
                                   "the report pairs them all, so none is written") from None
    bad = [o for o in outcomes if not o.ok]
    if bad:
        raise cluster.ClusterError("; ".join(f"db_bench {o.point[1]} {o.point[2]} {o.point[3] or ''} failed: "
                                             f"{o.error}" for o in bad))
    return [p for o in outcomes for p in o.value]
