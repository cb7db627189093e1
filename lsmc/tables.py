"""`lsmc tables`: LevelDB table compaction jobs for the table engine (hw/ip/table_engine/doc/table-engine.md).

make DIR [--workload W] [...]     a job folder (job.json, in/*.ldb written by LevelDB's TableBuilder,
                                  layout.json for stock LevelDB) from a generated workload
compact TABLE... [--run-of T,T..] --out-dir DIR [--backend reference|model|rtl|soc] [options]
compact --job JOB.json --out-dir DIR [--backend ...] [--parts P]
                                  one compaction; prints `cycles=C bytes_in=N bytes_out=N tables_out=T`;
                                  with --parts P > 1 P sub-compactions: on the model back end C the
                                  whole job as estimated and the line goes on `parts=P bracket=B plan=L`;
                                  on rtl each part a job of the one engine, C their clocks added, the
                                  line going on `parts=P bracket=B` (B the longest part's); on soc the
                                  firmware plans and runs one part a unit (tables-m2/-m4), its line
                                  `soc job_cycles=W bracket=B ...` before the harness's
compare DIR_A DIR_B [--decoded]   two output folders: byte-identical tables and result.json, or (with
                                  --decoded) identical entries and file boundaries; one-line verdict
speed [--entries N] [--repeat R]  LevelDB's own compaction speed on the reference's inputs (stock
                                  LevelDB and the reference, MB of input per second, one core)
dump TABLE                        blocks (handle, raw/snappy) and entries through LevelDB's reader
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lsmc.cliutil import CliError, int_option, tool_main
from lsmc.model import sstable
from lsmc.model.table_workloads import KEY_KINDS, VALUE_KINDS, Workload
from lsmc.sim.tables import (  # noqa: F401  (jobs and back ends a layer down, for the report too; the tool's names)
    BACKENDS,
    NO_SNAPSHOT,
    PLANS,
    RTL_WAYS,
    RTL_WIDTH,
    SOC_PARTS_PRESETS,
    WORKLOADS,
    backend_exe,
    compare_dirs,
    dump_entries,
    make_job,
    make_table,
    model_exe,
    reference_exe,
    rtl_exe,
    run_job,
    soc_job,
    te_units,
)


def cmd_make(args) -> int:
    spec = dict(WORKLOADS[args.workload])
    for name in ("runs", "entries", "keys", "values", "seed", "input_level"):
        if getattr(args, name) is not None:
            spec[name] = getattr(args, name)
    opts = dict(spec.pop("options", {}))
    for name, key in (("compression", "compression"), ("block_size", "block_size"),
                      ("max_file_size", "max_file_size"), ("bloom_bits", "bloom_bits_per_key"),
                      ("restart_interval", "block_restart_interval")):
        if getattr(args, name) is not None:
            opts[key] = getattr(args, name)
    w = Workload(**spec, options=opts)
    try:
        w.check()
    except ValueError as e:
        raise CliError(str(e)) from None
    folder = Path(args.dir)
    if folder.exists() and any(folder.iterdir()):
        raise CliError(f"{folder}: not empty (a job folder is made in a new or empty folder)")
    job = make_job(folder, w)
    n = sum(len(r) for r in job.runs)
    size = sum((folder / p).stat().st_size for r in job.runs for p in r)
    print(f"{folder}/job.json: {len(job.runs)} runs, {n} tables, {size} bytes, smallest_snapshot="
          f"{job.smallest_snapshot}")
    return 0


# -------------------------------------------------------------------------------------------- compact
def job_from_args(args, job_dir: Path) -> Path:
    """A job.json in `job_dir` for the tables and options on the command line (paths relative to it)."""
    runs = [[t] for t in args.tables] + [[p for p in group.split(",") if p] for group in args.run_of or []]
    if not runs:
        raise CliError("no input tables (TABLE... and/or --run-of T1,T2,...)")
    for r in runs:
        for t in r:
            if not Path(t).is_file():
                raise CliError(f"{t}: no such table")
    rel = [[os.path.relpath(Path(t).resolve(), job_dir) for t in r] for r in runs]
    opts = {"block_size": args.block_size, "block_restart_interval": args.restart_interval,
            "compression": args.compression, "bloom_bits_per_key": args.bloom_bits,
            "max_file_size": args.max_file_size, "verify_checksums": args.verify_checksums}
    levels = {"grandparents": [], "deeper_levels": []}
    if args.levels:
        try:
            levels.update(json.loads(Path(args.levels).read_text()))
        except (OSError, ValueError) as e:
            raise CliError(f"--levels {args.levels}: {e}") from None
    job = {"format": sstable.FORMAT, "runs": rel, "options": opts,
           "smallest_snapshot": NO_SNAPSHOT if args.smallest_snapshot is None else args.smallest_snapshot,
           "grandparents": levels.get("grandparents", []), "deeper_levels": levels.get("deeper_levels", []),
           "first_file_number": args.first_file_number}
    path = job_dir / "job.json"
    try:
        sstable.validate_job(job, f"--levels {args.levels}" if args.levels else "the command line", job_dir)
    except sstable.JobFormatError as e:
        raise CliError(str(e)) from None
    path.write_text(json.dumps(job, indent=1) + "\n")
    return path


PARTS_BACKENDS = ("model", "rtl", "soc")  # the back ends that run sub-compaction parts (--parts)


def cmd_compact(args) -> int:
    out = Path(args.out_dir)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out-dir {out}: not a folder")
    if args.parts is not None and args.parts > 1 and args.backend not in PARTS_BACKENDS:
        raise CliError(f"--parts {args.parts}: sub-compactions run on the model, rtl and soc back ends only so far "
                       f"(--backend model, rtl or soc), not on {args.backend}")
    if args.ddr and args.backend != "soc":
        raise CliError(f"--ddr {args.ddr}: the soc back end's DDR timing only, not {args.backend}'s")
    if args.plan != "firmware" and (args.backend != "soc" or (args.parts or 1) < 2):
        raise CliError(f"--plan {args.plan}: who plans the soc back end's parts (--backend soc --parts 2 or more)")
    if args.soc_preset and args.backend != "soc":
        raise CliError(f"--soc-preset {args.soc_preset}: the soc back end's SoC only, not {args.backend}'s")
    if args.soc_preset and args.soc_preset not in SOC_PARTS_PRESETS:
        raise CliError(f"--soc-preset {args.soc_preset}: not a SoC preset with table-engine units "
                       f"({', '.join(SOC_PARTS_PRESETS)})")
    if args.soc_preset and (args.parts or 1) > te_units(args.soc_preset):
        raise CliError(f"--parts {args.parts}: the SoC preset {args.soc_preset} has {te_units(args.soc_preset)} "
                       "table-engine units")
    exe = backend_exe(args.backend) if args.backend != "soc" else None
    with tempfile.TemporaryDirectory(prefix="lsmc-tables-") as tmp:
        if args.job:
            if args.tables or args.run_of:
                raise CliError("--job and input tables exclude each other")
            try:
                sstable.read_job(Path(args.job))
            except sstable.JobFormatError as e:
                raise CliError(str(e)) from None
            job_path = Path(args.job)
        else:
            job_path = job_from_args(args, Path(tmp))
        if args.backend == "soc":
            rc, line, err = soc_job(job_path, out, ddr=args.ddr, parts=args.parts, preset=args.soc_preset,
                                    plan=args.plan)
        else:
            rc, line, err = run_job(exe, job_path, out, args.parts if args.backend in PARTS_BACKENDS else None)
    if rc != 0:
        print(err or f"{exe.name if exe else 'the SoC'} exited with status {rc}", file=sys.stderr)
        return 1
    print(line)
    return 0


def cmd_compare(args) -> int:
    for d in (args.dir_a, args.dir_b):
        if not Path(d).is_dir():
            raise CliError(f"{d}: not a folder")
    same, verdict = compare_dirs(Path(args.dir_a), Path(args.dir_b), args.decoded)
    print(verdict)
    return 0 if same else 1


# ---------------------------------------------------------------------------------------------- speed
SPEED_CASES = {  # db_bench-like tables of a few MB: 3 Level-0 tables and a Level-1 run of 4 tables
    "16-byte keys, 100-byte values, Snappy": dict(keys="dbbench", options={"compression": "snappy"}),
    "16-byte keys, 100-byte values, none": dict(keys="dbbench", options={"compression": "none"}),
    "64-byte keys, 100-byte values, Snappy": dict(keys="key64", options={"compression": "snappy"}),
}


def cmd_speed(args) -> int:
    """LevelDB's own compaction speed on the reference's inputs: stock LevelDB (Debian's libleveldb opens a
    DB holding the job's tables and runs CompactRange) and the reference (`table_ref compact`), the same
    tables; input MB (10^6 bytes) per second of CPU (one core) and of wall time, best of --repeat."""
    import re

    from lsmc.build.table_ref import stock_driver

    ref, stock = reference_exe(), stock_driver()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lsmc-tables-speed-") as tmp:
        for name, spec in SPEED_CASES.items():
            folder = Path(tmp) / re.sub(r"\W+", "_", name)
            w = Workload(runs=4, entries=args.entries, deletions=0.0, seed=args.seed, **spec)
            job = make_job(folder, w, ref)
            size = sum((folder / p).stat().st_size for r in job.runs for p in r)
            refs, stocks, res = [], [], {}
            for i in range(args.repeat):
                out, db = folder / f"out{i}", folder / f"db{i}"
                r = subprocess.run([str(ref), "compact", str(folder / "job.json"), str(out)], capture_output=True,
                                   text=True)
                m = re.search(r"compaction_us=(\d+) compaction_cpu_us=(\d+)", r.stdout)
                if r.returncode != 0 or not m:
                    raise CliError(f"table_ref compact failed: {r.stderr.strip()}")
                refs.append((int(m.group(1)), int(m.group(2))))
                res = sstable.read_result(out / "result.json")
                r = subprocess.run([str(ref), "make-db", str(folder / "layout.json"), str(db)], capture_output=True,
                                   text=True)
                s = subprocess.run([str(stock), "compact", str(db), json.dumps(job.options)], capture_output=True,
                                   text=True)
                m = re.search(r"compact_us=(\d+) compact_cpu_us=(\d+)", s.stdout)
                if r.returncode != 0 or s.returncode != 0 or not m:
                    raise CliError(f"stock LevelDB's compaction failed: {r.stderr.strip()} {s.stderr.strip()}")
                stocks.append((int(m.group(1)), int(m.group(2))))
            rows.append([name, f"{size:,}", f"{res['bytes_out']:,}", f"{res['entries_in']:,}", str(len(res["tables"])),
                         *(f"{size / min(x[k] for x in v):,.1f}" for v in (stocks, refs) for k in (1, 0))])
    head = ["tables", "input bytes", "output bytes", "entries in", "tables out", "stock LevelDB MB/s (CPU)",
            "stock (wall)", "reference MB/s (CPU)", "reference (wall)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


def cmd_dump(args) -> int:
    if not Path(args.table).is_file():
        raise CliError(f"{args.table}: no such table")
    res = subprocess.run([str(reference_exe()), "dump", *(["--verify"] if args.verify else []), args.table])
    return res.returncode


@tool_main("tables")
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="lsmc tables", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n\n")[1:]))
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="a job folder from a generated workload")
    m.add_argument("dir", help="new (or empty) folder for job.json and in/*.ldb")
    m.add_argument("--workload", choices=sorted(WORKLOADS), default="dbbench", help="default dbbench")
    m.add_argument("--runs", type=int_option(1, 64), help="K: runs merged (default per workload)")
    m.add_argument("--entries", type=int_option(1, 10_000_000), help="entries per run")
    m.add_argument("--keys", choices=KEY_KINDS, help="user keys: dbbench (16 B), key64, random (1..1024 B)")
    m.add_argument("--values", choices=VALUE_KINDS, help="values: dbbench (100 B, 50 %% compressible), random "
                   "(0..64 KiB), empty")
    m.add_argument("--input-level", type=int_option(0, 5), help="0: Level-0 tables + a Level-1 run; N: two runs")
    m.add_argument("--seed", type=int_option(0, 2**31), help="generator seed (default 1)")
    m.add_argument("--compression", choices=("none", "snappy"))
    m.add_argument("--block-size", type=int_option(1, 1 << 30))
    m.add_argument("--restart-interval", type=int_option(1, 1 << 30))
    m.add_argument("--max-file-size", type=int_option(1, 1 << 40))
    m.add_argument("--bloom-bits", type=int_option(0, 1000))

    c = sub.add_parser("compact", help="one compaction on a back end")
    c.add_argument("tables", nargs="*", help="input tables, each a run of its own (Level-0 tables), newest first")
    c.add_argument("--run-of", action="append", metavar="T1,T2,...",
                   help="one run of several tables in key order (a level >= 1), after the single tables; "
                        "repeatable, newer runs first")
    c.add_argument("--job", help="a job.json instead of tables and options")
    c.add_argument("--out-dir", required=True, help="output folder (NNNNNN.ldb, result.json)")
    c.add_argument("--backend", choices=BACKENDS, default="reference",
                   help="reference (LevelDB's own code), model (the engine's C++ model), rtl (the engine's RTL in "
                        "Verilator: up to 4 runs), soc")
    c.add_argument("--compression", choices=("none", "snappy"), default="snappy")
    c.add_argument("--block-size", type=int_option(1, 1 << 30), default=4096)
    c.add_argument("--restart-interval", type=int_option(1, 1 << 30), default=16)
    c.add_argument("--bloom-bits", type=int_option(0, 1000), default=0, help="bloom bits per key (0: no filter)")
    c.add_argument("--max-file-size", type=int_option(1, 1 << 40), default=2 << 20)
    c.add_argument("--verify-checksums", action="store_true", help="check every block's CRC (paranoid_checks)")
    c.add_argument("--smallest-snapshot", type=int_option(0, sstable.MAX_SEQUENCE),
                   help="oldest live snapshot's sequence (default: none live)")
    c.add_argument("--levels", metavar="LEVELS.json",
                   help='{"grandparents": [...], "deeper_levels": [...]} as in job.json (default: none)')
    c.add_argument("--first-file-number", type=int_option(1, 999_999_999), default=1)
    c.add_argument("--parts", type=int_option(1, 64), metavar="P",
                   help="sub-compactions: P units share the job, split by key range at data-block boundaries "
                        "(model, rtl and soc back ends; 1: the job whole, as without it; soc: on the SoC preset "
                        "with that many table-engine units, tables-m1, -m2 or -m4, one part a unit)")
    c.add_argument("--soc-preset", metavar="NAME",
                   help=f"soc back end: the SoC preset ({', '.join(SOC_PARTS_PRESETS)}; default: the smallest with "
                        "the parts' units)")
    c.add_argument("--plan", choices=PLANS, default="firmware",
                   help="soc back end with --parts: who plans the parts, the SoC's firmware from the index blocks in "
                        "DDR (default), or the host from the tables it holds, handing the SoC a descriptor a part")
    c.add_argument("--ddr", metavar="PRESET",
                   help="soc back end: the SoC harness's DDR timing model (fixed, the default, or a DDR preset such "
                        "as kcu105: sim/common/ddr_presets.json)")

    d = sub.add_parser("compare", help="two output folders: byte-identical, or --decoded")
    d.add_argument("dir_a")
    d.add_argument("dir_b")
    d.add_argument("--decoded", action="store_true", help="entries and file boundaries only (block types may differ)")

    v = sub.add_parser("speed", help="LevelDB's own compaction speed on the reference's inputs (MB/s, one core)")
    v.add_argument("--entries", type=int_option(100, 10_000_000), default=30000, help="entries per run (30000)")
    v.add_argument("--repeat", type=int_option(1, 100), default=5, help="runs per case, best kept (5)")
    v.add_argument("--seed", type=int_option(0, 2**31), default=1)

    u = sub.add_parser("dump", help="a table's blocks and entries through LevelDB's reader")
    u.add_argument("table")
    u.add_argument("--verify", action="store_true", help="check the blocks' CRCs")
    args = p.parse_args(argv)
    return {"make": cmd_make, "compact": cmd_compact, "compare": cmd_compare, "speed": cmd_speed,
            "dump": cmd_dump}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
