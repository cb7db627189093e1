"""The scaling report: M compaction units x K ways x job size, against the DDR bound.

Entry points (the `scripts/demo scaling` runner calls them; docs/scaling.md):
- `make_row(cus, ways, entries_in, cycles, bytes_in, bytes_out, invalid_bytes, passed, ddr)` -> a row
  dict with the CSV columns (COLUMNS) filled in: entries_per_cycle = entries_in / cycles;
  ddr_bound_entries_per_cycle = the preset's peak bytes per SoC cycle / bytes per entry, where bytes
  per entry = (input bytes + output bytes + invalid-stream bytes) / entries_in, measured from the
  runs; fraction_of_bound = entries_per_cycle / ddr_bound_entries_per_cycle; pass = "PASS"/"FAIL"
  (the runner decides: output byte-identical to the C reference merge).
- `write_results(rows, out_dir=RESULTS, ddr="kcu105", conditions="", leveldb=None)` writes
  scaling.csv (exactly COLUMNS), scaling.md and scaling.png; leveldb maps entries_in -> LevelDB 1.23's
  compaction time in microseconds per input entry on the same keys (`leveldb_us_per_entry` measures it),
  which gives the speed-up column at the SoC clock (lsmc/data/paper.json, 100 MHz);
  `leveldb_for_sizes(sizes, kind, overlap, seed)` measures it for the sweep's workloads.
- `read_csv(path)` -> rows (checked: columns exactly COLUMNS); `markdown_section(rows)` -> the rows as
  Markdown for results/report.md (`lsmc report` includes them when results/scaling.csv exists).
- `sweep(...)`: runs the sweep on the simulated SoC (lsmc.sim.scaling) and returns make_row's rows.
- `peak_bytes_per_cycle(preset, clock_hz)`: from sim/common/ddr_presets.json (lsmc.sim.ddr), the one table of the DDR
  presets (checked against litedram by tests/test_ddr_model.py): native port bytes per controller clock
  (2 x nphases x data bits / 8) x controller MHz / SoC MHz, as ddr_model.h's peakBytesPerSocCycle().
"""
from __future__ import annotations

import csv
import functools
import io
import re
from pathlib import Path

from lsmc import cliutil, cluster
from lsmc.paths import BUILD, RESULTS, ROOT
from lsmc.report import paper
from lsmc.sim.ddr import DdrError, ddr_presets

COLUMNS = ["cus", "ways", "entries_in", "cycles", "entries_per_cycle", "ddr_bound_entries_per_cycle",
           "fraction_of_bound", "pass"]
# The scaling goals for the largest size with 4 units.
GOAL_FRACTION, GOAL_OVER_ONE, GOAL_LEVELDB = 0.85, 2.0, 50.0


class ScalingError(ValueError):
    pass


def peak_bytes_per_cycle(preset: str, clock_hz: int | None = None) -> float:
    """Peak DRAM bytes per SoC cycle of a preset (`fixed` has no bandwidth limit: ScalingError)."""
    try:
        table = ddr_presets()
    except DdrError as e:
        raise ScalingError(str(e)) from None
    if preset not in table:
        raise ScalingError(f"DDR preset {preset!r} has no bandwidth (presets: {', '.join(sorted(table))})")
    p = table[preset]
    clock_hz = clock_hz or paper.clock_hz()
    native = 2 * p["nphases"] * p["dataBits"] // 8
    return native * p["sysMHz"] * 1e6 / clock_hz


def make_row(cus: int, ways: int, entries_in: int, cycles: int, bytes_in: int, bytes_out: int,
             invalid_bytes: int, passed: bool, ddr: str = "kcu105", clock_hz: int | None = None) -> dict:
    for name, v in (("cus", cus), ("ways", ways), ("entries_in", entries_in), ("cycles", cycles)):
        if not isinstance(v, int) or v <= 0:
            raise ScalingError(f"{name} must be a positive integer, not {v!r}")
    peak = peak_bytes_per_cycle(ddr, clock_hz)
    per_entry = (bytes_in + bytes_out + invalid_bytes) / entries_in
    epc = entries_in / cycles
    bound = peak / per_entry
    return {"cus": cus, "ways": ways, "entries_in": entries_in, "cycles": cycles,
            "entries_per_cycle": round(epc, 4), "ddr_bound_entries_per_cycle": round(bound, 4),
            "fraction_of_bound": round(epc / bound, 4), "pass": "PASS" if passed else "FAIL"}


def csv_text(rows: list[dict], columns=COLUMNS) -> str:
    """Rows as CSV with exactly `columns`, in their order (the table-engine report's CSV too)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in columns})
    return buf.getvalue()


def read_csv(path: Path) -> list[dict]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ScalingError(f"{path}: cannot read: {e.strerror}") from None
    rd = csv.DictReader(io.StringIO(text))
    if rd.fieldnames != COLUMNS:
        raise ScalingError(f"{path}: columns {rd.fieldnames}, expected {COLUMNS}")
    rows = []
    for n, r in enumerate(rd, start=2):
        try:
            row = {k: int(r[k]) for k in ("cus", "ways", "entries_in", "cycles")}
            row.update({k: float(r[k]) for k in ("entries_per_cycle", "ddr_bound_entries_per_cycle",
                                                 "fraction_of_bound")})
        except (TypeError, ValueError):
            raise ScalingError(f"{path}: line {n}: a number field is not a number: {r}") from None
        if r["pass"] not in ("PASS", "FAIL"):
            raise ScalingError(f"{path}: line {n}: field pass is {r['pass']!r}, expected PASS or FAIL")
        row["pass"] = r["pass"]
        rows.append(row)
    return rows


def headline(rows: list[dict], cus: int = 4) -> dict | None:
    """The issue's figure: `cus` units at the largest size (best ways), fraction of the bound and the
    speed-up over one unit at the same ways and size."""
    mine = [r for r in rows if r["cus"] == cus]
    if not mine:
        return None
    size = max(r["entries_in"] for r in mine)
    best = max((r for r in mine if r["entries_in"] == size), key=lambda r: r["entries_per_cycle"])
    one = [r for r in rows if r["cus"] == 1 and r["ways"] == best["ways"] and r["entries_in"] == size]
    over_one = best["entries_per_cycle"] / one[0]["entries_per_cycle"] if one else None
    return {"row": best, "over_one": over_one}


def _f(v, d=3):
    return "—" if v is None else f"{v:,.{d}f}"


def speedup(row: dict, leveldb: dict | None, clock_hz: int | None = None) -> float | None:
    """LevelDB's us/entry on the same keys over the row's us/entry at the SoC clock."""
    if not leveldb or row["entries_in"] not in leveldb:
        return None
    mhz = (clock_hz or paper.clock_hz()) / 1e6
    return leveldb[row["entries_in"]] / (row["cycles"] / mhz / row["entries_in"])


def markdown_section(rows: list[dict], ddr: str = "kcu105", leveldb: dict | None = None,
                     clock_hz: int | None = None, level: str = "##") -> str:
    mhz = (clock_hz or paper.clock_hz()) / 1e6
    try:
        peak = f"peak of {peak_bytes_per_cycle(ddr, clock_hz):.1f} bytes per SoC cycle"
    except ScalingError:
        peak = "peak bandwidth"
    L = [f"{level} Scaling: compaction units x ways (DDR preset `{ddr}`, {mhz:g} MHz SoC clock)", "",
         f"DDR bound: the `{ddr}` preset's {peak} (sim/common/ddr_presets.json) "
         "divided by the bytes moved per input entry (input + output + invalid stream, measured).", ""]
    L.append("| units | ways | entries in | cycles | entries/cycle | DDR bound | fraction of bound | "
             "vs LevelDB 1.23 | result |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|:--|")
    for r in sorted(rows, key=lambda r: (r["ways"], r["cus"], r["entries_in"])):
        s = speedup(r, leveldb, clock_hz)
        L.append(f"| {r['cus']} | {r['ways']} | {r['entries_in']:,} | {r['cycles']:,} | {r['entries_per_cycle']:.3f} | "
                 f"{r['ddr_bound_entries_per_cycle']:.3f} | {r['fraction_of_bound']:.1%} | "
                 f"{'—' if s is None else f'{s:,.1f}x'} | {r['pass']} |")
    h = headline(rows)
    L.append("")
    if h:
        r = h["row"]
        s = speedup(r, leveldb, clock_hz)
        L.append(f"**4 units, {r['entries_in']:,} entries, {r['ways']} ways:** {r['entries_per_cycle']:.3f} "
                 f"entries/cycle = {r['fraction_of_bound']:.1%} of the DDR bound (goal >= {GOAL_FRACTION:.0%}), "
                 f"{_f(h['over_one'], 2)}x one unit (goal >= {GOAL_OVER_ONE:g}x), "
                 f"{'speed-up over LevelDB not measured' if s is None else f'{s:,.1f}x LevelDB 1.23'} "
                 f"(goal >= {GOAL_LEVELDB:g}x) at {mhz:g} MHz.")
    else:
        L.append("No 4-unit row.")
    fails = sum(r["pass"] != "PASS" for r in rows)
    L.append("")
    L.append(f"{len(rows) - fails} of {len(rows)} rows PASS (output byte-identical to the C reference merge).")
    return "\n".join(L) + "\n"


def units_table(rows: list[dict]) -> str:
    """docs/scaling.md's table of a sweep, generated from its rows (tests/test_scaling_report.py checks the
    page against results/scaling.csv): per size and ways, entries/cycle (fraction of the DDR bound) for
    each unit count, and the largest count's speed-up over one unit."""
    cus = sorted({r["cus"] for r in rows})
    at = {(r["ways"], r["entries_in"], r["cus"]): r for r in rows}
    if not cus:
        raise ScalingError("no rows")
    name = lambda c: f"{c} unit" + ("s" if c > 1 else "")  # noqa: E731
    L = ["| entries | K | " + " | ".join(name(c) for c in cus) + f" | {name(cus[-1])} / {name(cus[0])} |",
         "|---:|---:|" + "---:|" * (len(cus) + 1)]
    for k, n in sorted({(r["ways"], r["entries_in"]) for r in rows}, key=lambda kn: (-kn[0], kn[1])):
        cells = []
        for c in cus:
            r = at.get((k, n, c))
            cells.append("—" if r is None else f"{r['entries_per_cycle']:.3f} ({100 * r['fraction_of_bound']:.1f} %)")
        lo, hi = at.get((k, n, cus[0])), at.get((k, n, cus[-1]))
        ratio = f"{hi['entries_per_cycle'] / lo['entries_per_cycle']:.2f}x" if lo and hi else "—"
        L.append(f"| {n:,} | {k} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(L) + "\n"


# The committed rows of the last full sweep (results/ is not in git) and the docs table made from them:
# `scripts/demo scaling` refreshes both from one run (refresh_committed); tests/test_scaling_report.py
# checks that the page's table is the rows'.
SWEEP_DATA = ROOT / "lsmc" / "data" / "scaling_sweep.csv"
DOCS_PAGE = ROOT / "docs" / "scaling.md"
TABLE_BEGIN = "<!-- units_table: generated by scripts/demo scaling from lsmc/data/scaling_sweep.csv -->"
TABLE_END = "<!-- end of units_table -->"


def refresh_committed(rows: list[dict], data: Path = SWEEP_DATA, page: Path = DOCS_PAGE) -> list[Path]:
    """A full sweep's rows become the committed ones: `data` (the CSV, exactly COLUMNS) and the table
    between TABLE_BEGIN and TABLE_END in `page` (units_table), both written or neither."""
    data, page = Path(data), Path(page)
    try:
        text = page.read_text()
    except OSError as e:
        raise ScalingError(f"{page}: cannot read: {e.strerror}") from None
    b, e = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if b < 0 or e < b:
        raise ScalingError(f"{page}: no table markers ({TABLE_BEGIN!r} then {TABLE_END!r})")
    new = text[:b + len(TABLE_BEGIN)] + "\n\n" + units_table(rows) + "\n" + text[e:]
    with cliutil.Outputs() as out:
        out.add(data, csv_text(rows))
        out.add(page, new)
    return [data, page]


_MD_DDR = re.compile(r"DDR preset `([^`]+)`")


def read_ddr(md_path: Path) -> str:
    """The DDR preset a scaling.csv was measured on: stated in the scaling.md written beside it (the CSV
    keeps exactly COLUMNS)."""
    try:
        m = _MD_DDR.search(Path(md_path).read_text())
    except OSError:
        m = None
    return m.group(1) if m else "unstated"


def plot_png(rows: list[dict], ddr: str) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for ways in sorted({r["ways"] for r in rows}):
        for cus in sorted({r["cus"] for r in rows}):
            pts = sorted((r["entries_in"], r["entries_per_cycle"]) for r in rows
                         if r["ways"] == ways and r["cus"] == cus)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if ways == 2 else "s--",
                        label=f"{cus} unit{'s' if cus > 1 else ''}, {ways} ways")
    bound = sorted({(r["entries_in"], r["ddr_bound_entries_per_cycle"]) for r in rows})
    if bound:
        ax.plot([b[0] for b in bound], [b[1] for b in bound], "k:", label=f"DDR bound ({ddr})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("entries in (all runs)")
    ax.set_ylabel("input entries per SoC cycle")
    ax.set_title(f"Compaction throughput vs units (DDR preset {ddr}, {paper.clock_mhz()} MHz)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def write_results(rows: list[dict], out_dir: Path = RESULTS, ddr: str = "kcu105", conditions: str = "",
                  leveldb: dict | None = None, clock_hz: int | None = None) -> list[Path]:
    """Write scaling.csv, scaling.md and scaling.png into out_dir (all or none); returns the paths."""
    if not rows:
        raise ScalingError("no scaling rows to write")
    for r in rows:
        missing = [k for k in COLUMNS if k not in r]
        if missing:
            raise ScalingError(f"a scaling row lacks {', '.join(missing)}: {r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = ["# Scaling of the compaction engine", ""]
    if conditions:
        md += [conditions.strip(), ""]
    md.append(markdown_section(rows, ddr, leveldb, clock_hz))
    md.append("Columns of scaling.csv: " + ", ".join(f"`{c}`" for c in COLUMNS) + "; the plot: scaling.png.")
    paths = [out_dir / "scaling.csv", out_dir / "scaling.md", out_dir / "scaling.png"]
    with cliutil.Outputs() as out:
        out.add(paths[0], csv_text(rows))
        out.add(paths[1], "\n".join(md) + "\n")
        out.add(paths[2], plot_png(rows, ddr))
    return paths


def leveldb_us_per_entry(keys0, keys1, reps: int = 5) -> float:
    """LevelDB 1.23's compaction of the two-run form of a workload's keys (the K runs of the sweep deal
    these same keys, lsmc.model.workloads.deal), as `scripts/report`'s main LevelDB figure: the best
    compaction window (log line to log line) with the database on a RAM file system when there is one,
    us per input key."""
    from lsmc.report import baselines
    res = baselines.run_leveldb(keys0, keys1, reps=reps, db_dir=baselines.memory_db_dir())
    return res.core_min / res.keys_in


def leveldb_for_sizes(sizes, kind: str = "short", overlap: float = 0.25, seed: int = 1, reps: int = 3) -> dict:
    """{entries_in: LevelDB us/entry} for the sweep's workloads (`kb16 gen --kind KIND --overlap OVERLAP
    --seed SEED --keys N` per size N, the keys the sweep deals over its K runs): pass it as
    write_results(leveldb=...). Keyed by the workload's 16-byte entries at G 16, which is N for kind
    `short` (one entry per key, however the keys are dealt)."""
    from lsmc.model import kb16, workloads
    out = {}
    for n in sizes:
        k0, k1 = workloads.make_runs(kind, n, overlap, seed)
        entries = (len(kb16.encode(k0, 16)) + len(kb16.encode(k1, 16))) // 16
        out[entries] = leveldb_us_per_entry(k0, k1, reps)
    return out


# ---- the sweep (scripts/demo scaling) -------------------------------------------------------------

SWEEP_CUS = (1, 2, 4)
SWEEP_WAYS = (4, 2)
SWEEP_SIZES = (8192, 32768, 131072, 262144)


def sweep(cus_list=SWEEP_CUS, ways_list=SWEEP_WAYS, sizes=SWEEP_SIZES, ddr: str = "kcu105", units: int | None = None,
          workdir: Path | None = None, log=print, split: str = "fw") -> list[dict]:
    """Every (ways, size, cus) point: one job of `size` entries split into `cus` sub-jobs, run on a SoC
    of `units` (default max(cus_list)) units of that K: the idle units of a larger SoC take no DDR
    bandwidth, so one build per K serves every unit count. Rows as make_row.
    split "fw" (default): the firmware splits the job and stitches the parts (scale_split); "host": the
    host splits it at output group starts and stitches the parts it reads back. `cycles` is the units'
    bracket either way; with "fw" the row also has `total_cycles` (split + units + stitch on the SoC).
    lsmc.cluster runs the same points as tasks through sweep_point."""
    from lsmc.sim import scaling as sim  # the simulator's side (firmware, Verilator) only when a sweep runs

    if split not in ("fw", "host"):
        raise sim.ScalingError(f"split {split!r}: 'fw' or 'host'")
    units = units or max(cus_list)
    workdir = Path(workdir or BUILD / "scaling")
    rows = []
    for ways in ways_list:
        for n in sizes:
            base = sim.make_workload(ways, n)
            for cus in cus_list:
                r = sweep_point(ways, n, cus, ddr, units, workdir / f"k{ways}_n{n}_c{cus}", split, base)
                log(point_line(r, ddr))
                rows.append(r)
    return rows


def sweep_points(cus_list=SWEEP_CUS, ways_list=SWEEP_WAYS, sizes=SWEEP_SIZES) -> list[tuple[int, int, int]]:
    """The sweep's (ways, size, cus) points in the order sweep() runs them (and its rows are)."""
    return [(ways, n, cus) for ways in ways_list for n in sizes for cus in cus_list]


def sweep_point(ways: int, n: int, cus: int, ddr: str, units: int, workdir: Path, split: str = "fw",
                base=None) -> dict:
    """One point of sweep(): a row of make_row plus `total_cycles` and `mcycles_per_s` (the simulation's
    speed, for the log line). `base`: lsmc.sim.scaling.make_workload(ways, n), made here when None."""
    from lsmc.sim import scaling as sim

    base = base or sim.make_workload(ways, n)
    if split == "fw":
        task = sim.make_fw_job(cus, base, sim.bank_stagger(ddr))
        res = sim.run_tasks([task], units, ways, workdir, ddr=ddr, use_units=cus, fw_check=False, split=True)
        merged, invalid = task.merged, task.invalid
    else:
        job = sim.make_job(cus, ways, n, base=base)
        res = sim.run_tasks(job.tasks, units, ways, workdir, ddr=ddr, use_units=cus, job=job, fw_check=False)
        merged, invalid = job.merged, job.invalid
    r = make_row(cus, ways, base.entries_in, res["cycles"], sum(len(x) for x in base.runs),
                 len(merged), len(invalid), res["pass"], ddr)
    r["total_cycles"] = res.get("total_cycles") or None
    r["mcycles_per_s"] = res["mcycles_per_s"]
    return r


def point_line(r: dict, ddr: str) -> str:
    """sweep()'s log line of a row of sweep_point."""
    total = f", {r['total_cycles']} with the firmware's split and stitch" if r["total_cycles"] else ""
    return (f"scaling: {r['cus']} unit(s) x {r['ways']} ways, {r['entries_in']} entries: {r['cycles']} cycles{total}, "
            f"{r['entries_per_cycle']} entries/cycle = {r['fraction_of_bound']:.1%} of the {ddr} bound "
            f"({r['ddr_bound_entries_per_cycle']}), {r['pass']} (simulated at {r['mcycles_per_s']} Mcycles/s)")


# ---- the sweep as Dask tasks (lsmc.cluster, docs/cluster.md): the same points, the same rows ----------

@functools.lru_cache(maxsize=2)
def _worker_workload(ways: int, n: int):
    """The workload of (ways, n) made once per worker process for the points that share it (the serial sweep
    makes it once for its unit counts; made per task, it was a third of a 2-worker sweep's CPU time)."""
    from lsmc.sim import scaling as sim
    return sim.make_workload(ways, n)


def scaling_point(point: tuple) -> dict:
    """(ways, entries, cus, ddr, units) -> lsmc.report.sweep_point's row, simulated in a folder of
    the worker's own (the SoC of `units` x `ways` and the firmware built there once, then reused)."""
    import tempfile
    from pathlib import Path

    ways, n, cus, ddr, units = point
    with tempfile.TemporaryDirectory(prefix="lsmc-scaling-") as wd:
        return sweep_point(ways, n, cus, ddr, units, Path(wd) / f"k{ways}_n{n}_c{cus}",
                           base=_worker_workload(ways, n))

def scaling_sweep(client, sizes, ddr: str, log=print, on_result=None) -> list:
    """sweep()'s points (the default units, ways and split) as tasks; Outcomes in sweep()'s row order."""
    units = max(SWEEP_CUS)
    points = [(w, n, c, ddr, units) for w, n, c in sweep_points(sizes=sizes)]

    def done(o: cluster.Outcome):
        log(point_line(o.value, ddr) if o.ok else f"scaling: {scaling_name(o.point)}: FAILED: {o.error}")
        if on_result:
            on_result(o)

    return cluster.run(client, scaling_point, points, label="scaling", on_result=done)

def scaling_name(point: tuple) -> str:
    ways, n, cus = point[:3]
    return f"{cus} unit(s) x {ways} ways, {n} entries"


__all__ = ["COLUMNS", "ScalingError", "SWEEP_DATA", "DOCS_PAGE", "refresh_committed",
           "peak_bytes_per_cycle", "make_row", "csv_text", "read_csv",
           "headline", "speedup", "markdown_section", "read_ddr", "plot_png", "write_results", "leveldb_us_per_entry",
           "leveldb_for_sizes", "sweep", "sweep_points", "sweep_point", "point_line", "scaling_point", "scaling_sweep",
           "scaling_name", "SWEEP_CUS", "SWEEP_WAYS", "SWEEP_SIZES"]
