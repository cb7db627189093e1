"""Seed sweeps of the open ECP5 flow: one design synthesised once, then placed and routed at several
nextpnr seeds, each route a task on Dask distributed (lsmc.cluster: a LocalCluster of one worker per core,
or `--cluster tcp://HOST:8786`).

Route-to-route noise decides how much of a Fmax difference between two designs is real: the whole
ECPIX-5 design gave 77-90 MHz over routes of one netlist. A sweep measures that spread.

- No shared file system: a task carries the files its route reads (yosys' JSON netlist, the board's LPF;
  the same for every seed, so a sweep scatters them to the workers once: cluster.run's `shared`, and the
  task graph holds a reference, not megabytes of netlist per seed) and brings back nextpnr's report, the
  critical-path part of its log and, for the board design, the bitstream. The route runs in a folder of its
  own under build/fpga/seeds on the worker (not /tmp: the yowasp tools have a private /tmp), removed afterwards.
- results/fpga_seeds.csv holds one row per design and seed (SEED_COLUMNS; a failed route keeps its row
  with the error). results/fpga.md renders the spread from it (min / median / max, best seed), and the
  design's row of results/fpga.csv is the best seed's route, its critical path and options recorded.
  For `soc` the best seed's bitstream is kept as build/boards/ecpix5/gateware/ecpix5-seed<N>.bit.
- Routes are not timed tasks (their result is Fmax, not wall time), so two share a machine; each route
  of the whole design needs about 3 GiB.
"""
from __future__ import annotations

import csv
import functools
import re
import shlex
import shutil
import statistics
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from lsmc.fpga.timing import PnrResult, parse_critical_paths, parse_report
from lsmc.fpga.tools import FPGA_BUILD, NEXTPNR_DEVICE, FpgaError, run_step

SEED_COLUMNS = ["design", "seed", "fmax_mhz", "target_mhz", "lut", "ff", "bram", "dsp", "route_s", "error"]
MAX_SEEDS = 64


def parse_seeds(text: str) -> list[int]:
    """`--seeds 1-8`, `1,3,5`, `2-4,9`: the seeds in the order given, each once; FpgaError names the
    problem."""
    seeds: list[int] = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise FpgaError(f"--seeds {text!r}: {part.strip()!r} is not a seed or a range (e.g. 1-8 or 1,3,5)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise FpgaError(f"--seeds {text!r}: range {lo}-{hi} runs backwards")
        if hi >= 2**31:
            raise FpgaError(f"--seeds {text!r}: {hi} is out of range (0 .. 2^31-1)")
        if hi - lo + 1 > MAX_SEEDS:
            raise FpgaError(f"--seeds {text!r}: {hi - lo + 1} seeds; at most {MAX_SEEDS} in one sweep")
        seeds += [s for s in range(lo, hi + 1) if s not in seeds]
    if len(seeds) > MAX_SEEDS:
        raise FpgaError(f"--seeds {text!r}: {len(seeds)} seeds; at most {MAX_SEEDS} in one sweep")
    return seeds


@dataclass(frozen=True)
class RouteTask:
    """One route as a task: everything a worker needs, nothing it must find on the client's disk."""
    design: str  # the row name: compaction_ip, nand, nand_dma, table_engine_merge, table_engine_reader, ..., soc
    seed: int
    files: dict  # file name -> bytes, written into the route's folder
    nextpnr: tuple  # nextpnr-ecp5's arguments without --seed, --report and -l (file names relative)
    options: tuple  # the user's nextpnr options (seed first: tools.nextpnr_options)
    after: tuple = ()  # commands run after nextpnr in the same folder (the board's ecppack)
    bitstream: str | None = None  # the file the commands write, brought back
    timeout: float | None = None


@dataclass
class RouteResult:
    """What comes back from a worker."""
    report: str  # nextpnr's --report JSON
    paths_log: str  # the log's critical-path reports
    seconds: float
    bitstream: bytes | None = None


def route(task: RouteTask, files: dict | None = None) -> RouteResult:
    """Run one route on this machine (what a worker does); `files` (name -> bytes) are written beside the
    task's own (a sweep's shared netlist)."""
    work = FPGA_BUILD / "seeds" / f"{task.design}-seed{task.seed}-{uuid.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    try:
        for name, data in {**(files or {}), **task.files}.items():
            (work / name).write_bytes(data)
        secs = run_step(["nextpnr-ecp5", *task.nextpnr, "--report", "report.json", "-l", "pnr.log", *task.options],
                        work, work / "nextpnr.out", f"nextpnr-ecp5 of {task.design} (seed {task.seed})", task.timeout)
        for i, cmd in enumerate(task.after):
            secs += run_step(list(cmd), work, work / f"after{i}.out", f"{cmd[0]} of {task.design} (seed {task.seed})",
                             task.timeout)
        log = (work / "pnr.log").read_text(errors="replace")
        # only the final analysis' critical-path reports travel back (a whole log is megabytes)
        keep = "\n".join(line for line in log.splitlines() if line.startswith("Info:"))
        bit = None
        if task.bitstream:
            p = work / task.bitstream
            if not p.is_file():
                raise FpgaError(f"{task.design} (seed {task.seed}): the flow ended without {task.bitstream}")
            bit = p.read_bytes()
        return RouteResult((work / "report.json").read_text(), keep, secs, bit)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def result_of(task: RouteTask, rr: RouteResult, where: Path) -> PnrResult:
    """The PnrResult of a route that came back (its report written to `where` for the record)."""
    where.mkdir(parents=True, exist_ok=True)
    rep = where / f"report-seed{task.seed}.json"
    rep.write_text(rr.report)
    res = parse_report(rep, None, design=task.design)
    res.critical_paths = parse_critical_paths(rr.paths_log)
    res.seconds = {"route": rr.seconds}
    res.pnr_options = tuple(task.options)
    if rr.bitstream is not None:
        res.bitstream = where / f"{task.design}-seed{task.seed}.bit"
        res.bitstream.write_bytes(rr.bitstream)
    return res


# ------------------------------------------------------------------------------ the tasks of each design
def ooc_tasks(design: str, netlist: Path, top: str, target_mhz: float, seeds: list[int], options_of,
              extra_pnr: tuple = (), timeout: float | None = None) -> list[RouteTask]:
    """The routes of an out-of-context design (flow.synth_ooc's netlist), one per seed; `options_of(seed)`
    gives the user's nextpnr options for that seed."""
    data = Path(netlist).read_bytes()
    args = (*NEXTPNR_DEVICE, "--out-of-context", "--json", f"{top}.json", "--freq", f"{target_mhz:g}",
            "--timing-allow-fail", *extra_pnr)
    return [RouteTask(design, s, {f"{top}.json": data}, args, tuple(options_of(s)), timeout=timeout) for s in seeds]


@dataclass(frozen=True)
class TrellisSplit:
    """LiteX's build_<name>.sh split at its nextpnr line."""
    before: list  # shell lines run once on the client (yosys)
    nextpnr: tuple  # the nextpnr line's arguments without --seed, --report, -l
    reads: tuple  # the files of the gateware folder nextpnr reads (--json, --lpf), shipped with each task
    after: tuple  # the commands after it (ecppack), run in the task
    bitstream: str


def split_trellis(gateware: Path, name: str) -> TrellisSplit:
    script = Path(gateware) / f"build_{name}.sh"
    if not script.is_file():
        raise FpgaError(f"{script} missing: the LiteX sources were not generated")
    lines = [line for line in script.read_text().splitlines() if line.strip() and not line.startswith("#")]
    calls = [i for i, line in enumerate(lines) if line.startswith("nextpnr-ecp5 ")]
    if len(calls) != 1:
        raise FpgaError(f"{script}: {len(calls)} nextpnr-ecp5 calls found, expected one")
    words = shlex.split(lines[calls[0]])[1:]
    for opt in ("--report", "--seed", "-l", "--log"):  # the task sets these
        while opt in words:
            i = words.index(opt)
            del words[i:i + 2]
    reads = tuple(words[words.index(o) + 1] for o in ("--json", "--lpf") if o in words[:-1])
    if not reads or any("/" in r for r in reads):
        raise FpgaError(f"{script}: the nextpnr line's inputs {list(reads)} are not files of the gateware folder")
    after = tuple(tuple(shlex.split(line)) for line in lines[calls[0] + 1:])
    bit = f"{name}.bit"
    if not any(bit in cmd for cmd in after):
        raise FpgaError(f"{script}: no command after nextpnr writes {bit}")
    return TrellisSplit(lines[:calls[0]], tuple(words), reads, after, bit)


def trellis_tasks(gateware: Path, split: TrellisSplit, seeds: list[int], options_of,
                  timeout: float | None = None) -> list[RouteTask]:
    """One task per seed for the board design, once `split.before` has run in `gateware`."""
    files = {}
    for r in split.reads:
        p = Path(gateware) / r
        if not p.is_file():
            raise FpgaError(f"{p}: missing after the synthesis (log: {Path(gateware) / 'synth.out'})")
        files[r] = p.read_bytes()
    return [RouteTask("soc", s, files, split.nextpnr, tuple(options_of(s)), split.after, split.bitstream, timeout)
            for s in seeds]


# ------------------------------------------------------------------------------ results
def row_of(design: str, seed: int, res: PnrResult | None, error: str | None, clock: str | None) -> dict:
    if res is None:
        return {"design": design, "seed": seed, "fmax_mhz": "", "target_mhz": "", "lut": "", "ff": "", "bram": "",
                "dsp": "", "route_s": "", "error": error or "failed"}
    achieved, target = res.clocks[clock]
    return {"design": design, "seed": seed, "fmax_mhz": f"{achieved:.2f}", "target_mhz": f"{target:.2f}",
            "lut": res.used("TRELLIS_COMB"), "ff": res.used("TRELLIS_FF"), "bram": res.used("DP16KD"),
            "dsp": res.used("MULT18X18D"), "route_s": f"{res.seconds.get('route', 0):.0f}", "error": ""}


def write_seed_rows(rows: list[dict], outdir: Path, whole_sweep: bool = True) -> Path:
    """results/fpga_seeds.csv: these designs' rows replace their earlier ones; other designs' stay. Not
    `whole_sweep` (an interrupted one): only the same designs' same seeds are replaced."""
    path = Path(outdir) / "fpga_seeds.csv"
    swept = {r["design"] for r in rows} if whole_sweep else {(r["design"], str(r["seed"])) for r in rows}
    old = []
    if path.is_file():
        with open(path, newline="") as f:
            old = [r for r in csv.DictReader(f)
                   if (r.get("design") if whole_sweep else (r.get("design"), r.get("seed"))) not in swept]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=SEED_COLUMNS)
        w.writeheader()
        for r in [*old, *rows]:
            w.writerow({c: r.get(c, "") for c in SEED_COLUMNS})
    return path


def spread_lines(outdir: Path) -> list[str]:
    """The seed-spread section of results/fpga.md, rendered from results/fpga_seeds.csv (empty without it)."""
    path = Path(outdir) / "fpga_seeds.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    by = {}
    for r in rows:
        by.setdefault(r["design"], []).append(r)
    out = ["## Seed spread (results/fpga_seeds.csv)", "",
           "nextpnr-ecp5 routes of one synthesised netlist at several placement seeds: Fmax in MHz. The "
           "design's row above is its best seed's route.", "",
           "| design | seeds | routed | min | median | max | best seed | failed |", "|---|---|---|---|---|---|---|---|"]
    for design, rs in by.items():
        ok = [(float(r["fmax_mhz"]), int(r["seed"])) for r in rs if not r["error"]]
        seeds = ",".join(r["seed"] for r in rs)
        if ok:
            fm = [f for f, _ in ok]
            best = max(ok)
            out.append(f"| {design} | {seeds} | {len(ok)} | {min(fm):.2f} | {statistics.median(fm):.2f} | "
                       f"{max(fm):.2f} | {best[1]} | {len(rs) - len(ok)} |")
        else:
            out.append(f"| {design} | {seeds} | 0 | | | | | {len(rs)} |")
    return out


# ------------------------------------------------------------------------------ a sweep
def run_routes(client, tasks: list[RouteTask], where: Path, clock_of, log=print) -> list[tuple]:
    """The tasks on the cluster; [(task, PnrResult | None, error | None)] in seed order, each route's line
    printed as it ends. A route that fails twice (lsmc.cluster retries once) keeps its error."""
    from lsmc import cluster

    def said(o):
        t = o.point
        if o.ok:
            res = result_of(t, o.value, where)
            net, achieved, _target = res.clock(clock_of(res))
            log(f"fpga: {t.design} seed {t.seed}: Fmax {achieved:.2f} MHz on {net} "
                f"(route {o.value.seconds:.0f} s)", flush=True)
        else:
            log(f"fpga: {t.design} seed {t.seed}: FAILED: {o.error.splitlines()[0]}", flush=True)

    # The files every route reads (the netlist: ~10 MB for the table engine) go to the workers once.
    shared = tasks[0].files
    if any(t.files != shared for t in tasks):
        raise FpgaError(f"{tasks[0].design}: the routes of one sweep read different files")
    light = [replace(t, files={}) for t in tasks]
    try:
        outcomes = cluster.run(client, route, light, label=f"{tasks[0].design} seeds", on_result=said, shared=shared)
    except cluster.Interrupted as e:  # Ctrl-C: the routes that had ended, in seed order
        ended = {o.point.seed: o for o in e.outcomes}
        raise RoutesInterrupted([(t, result_of(t, o.value, where), None) if o.ok else (t, None, o.error)
                                 for t in tasks if (o := ended.get(t.seed)) is not None], len(tasks)) from None
    return [(t, result_of(t, o.value, where), None) if o.ok else (t, None, o.error)
            for t, o in zip(tasks, outcomes)]


class RoutesInterrupted(Exception):
    """Ctrl-C during a sweep: `routed` holds the routes that had ended (as run_routes returns them)."""

    def __init__(self, routed: list[tuple], total: int):
        super().__init__(f"interrupted: {len(routed)} of {total} routes had ended")
        self.routed, self.total = routed, total


def summarise(design: str, routed: list[tuple], clock_of) -> tuple[list[dict], tuple | None]:
    """The seed rows of one design and its best route (task, result, clock net) or None when none routed."""
    rows, best = [], None
    for task, res, err in routed:
        clock = None
        if res is not None:
            clock = res.clock(clock_of(res))[0]
            if best is None or res.clocks[clock][0] > best[1].clocks[best[2]][0]:
                best = (task, res, clock)
        rows.append(row_of(design, task.seed, res, err, clock))
    for _task, res, _err in routed:  # only the best route's bitstream is kept
        if res is not None and res.bitstream and (best is None or res is not best[1]):
            Path(res.bitstream).unlink(missing_ok=True)
    return rows, best


def prepare(design: str, seeds: list[int], options_of, timeout: float | None, ip_target_mhz: float,
            firmware: Path | None = None, lsmc_mhz: float | None = None) -> tuple[list[RouteTask], Path, object]:
    """Synthesise `design` (a key of cli.DESIGNS) once on this machine and make its route tasks; returns
    (tasks, the folder the routes' reports go to, clock_of(PnrResult) -> the clock pattern of its row)."""
    from lsmc.fpga import flow
    from lsmc.fpga.tools import NAND_TARGET_MHZ, SOC_TARGET_MHZ, TABLE_ENGINE_TARGET_MHZ

    def only_clock(res):
        if len(res.clocks) != 1:
            raise FpgaError(f"{res.design}: expected one clock, the report has {sorted(res.clocks)}")
        return "^" + re.escape(next(iter(res.clocks))) + "$"

    if design == "soc":
        board = flow.ecpix5_board()
        gateware = flow.soc_sources(firmware=firmware, lsmc_mhz=lsmc_mhz or SOC_TARGET_MHZ)
        split = split_trellis(gateware, board.name)
        run_step(["bash", "-ec", "\n".join(split.before)], gateware, gateware / "synth.out",
                 f"yosys of {board.name} (LiteX's script up to nextpnr)", timeout)
        return trellis_tasks(gateware, split, seeds, options_of, timeout), gateware / "seeds", lambda _r: r"lsmc"
    ooc = {"ip": ("compaction_ip", flow.ip_verilog, "CompactionIp", ip_target_mhz, ()),
           "nand": ("nand", flow.nand_verilog, "NandController", NAND_TARGET_MHZ, ("--router", "router2")),
           "nand_dma": ("nand_dma", flow.nand_dma_verilog, "NandDmaTiming", NAND_TARGET_MHZ, ()),
           "te_merge": ("table_engine_merge", flow.table_engine_merge_verilog, "MergeDrop",
                        TABLE_ENGINE_TARGET_MHZ, ()),
           **{d: (f"table_engine_{u}", functools.partial(flow.table_engine_verilog, unit=u),
                  flow.TABLE_ENGINE_UNITS[u], TABLE_ENGINE_TARGET_MHZ, ())
              for d, u in flow.TABLE_ENGINE_UNIT_DESIGNS.items()},
           "table_engine": ("table_engine", flow.table_engine_verilog, "TableEngine", TABLE_ENGINE_TARGET_MHZ, ())}
    if design not in ooc:
        raise FpgaError(f"no seed sweep for {design!r} ({', '.join(['soc', *ooc])})")
    row, verilog, top, mhz, extra = ooc[design]
    work = FPGA_BUILD / row
    netlist = flow.synth_ooc(work, Path(verilog()), top, timeout)
    return ooc_tasks(row, netlist, top, mhz, seeds, options_of, extra, timeout), work / "seeds", only_clock
