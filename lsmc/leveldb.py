"""`lsmc leveldb test|bench`: LevelDB 1.23 with its compactions offloaded to the table engine (its model or
its RTL) or the KB16 compaction IP (docs/leveldb.md). `scripts/leveldb build` makes the binaries this runs.

test [BINARY...]   every LevelDB 1.23 test binary, first on the stock path (LSMC_OFFLOAD=off) to know
                   which pass there, then with LSMC_OFFLOAD=model (--backend rtl|kb16|soc)
                   LSMC_OFFLOAD_VERIFY=1; prints each binary's result and offload counts, the stock-reader
                   cross-check, and last
                   `N passed, M failed` (gtest test cases of the offloaded run).
bench [--ops N]    db_bench, stock and the engine paced at 100/250 MHz, Snappy and none -> results/leveldb.*
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsmc.cliutil import CliError, int_option, tool_main
from lsmc.sim.leveldb import (
    BIN,
    EXPECTED_REASONS,
    FIELDS,
    TEST_BACKEND,
    BinResult,
    OffloadLog,
    check_built,
    ensure_built,
    run_test_binary,
    stock_cross_check,
    test_binaries,
)


def cmd_test(args) -> int:
    check_built()
    names = args.binaries or test_binaries()
    unknown = [n for n in names if not (BIN / n).is_file()]
    if unknown:
        raise CliError(f"no such test binary: {', '.join(unknown)} (in {BIN})")
    if args.cluster is not None:
        return _test_on_cluster(args, names)
    tally = _Tally()
    for name in names:
        tally.add(name, *judge_binary(name, args.no_stock, args.filter, args.backend))
    if not args.no_cross_check:
        tally.cross_check(*stock_cross_check(backend=args.backend))
    return tally.finish()


def judge_binary(name: str, no_stock: bool = False, gtest_filter: str | None = None,
                 backend: str = TEST_BACKEND) -> tuple:
    """One binary of `test`: (its stock run when that failed, so the binary is skipped, else None; its
    offloaded run, or None when skipped)."""
    if not no_stock:
        stock = run_test_binary(name, "off", gtest_filter=gtest_filter)
        if stock.failed or stock.rc != 0:
            return stock, None
    return None, run_test_binary(name, backend, gtest_filter=gtest_filter)


def leveldb_task(point: tuple):
    """("binary", name, no_stock, gtest filter[, backend]) -> judge_binary's pair;
    ("cross-check"[, backend]) -> stock_cross_check's (ok, message)."""
    ensure_built()
    if point[0] == "cross-check":
        return stock_cross_check(backend=point[1] if len(point) > 1 else TEST_BACKEND)
    name, no_stock, gtest_filter = point[1:4]
    return judge_binary(name, no_stock, gtest_filter, point[4] if len(point) > 4 else TEST_BACKEND)


class _Tally:
    """`test`'s lines and totals, binary by binary in the order given."""

    def __init__(self):
        self.total_pass = self.total_fail = 0
        self.total = OffloadLog()
        self.skipped: list[str] = []

    def add(self, name: str, stock: BinResult | None, r: BinResult | None) -> None:
        if r is None:
            self.skipped.append(name)
            print(f"{name:26s} SKIPPED: fails on the stock build too ({', '.join(stock.failures[:3])})", flush=True)
            return
        self.total_pass += r.passed
        self.total_fail += r.failed
        for k in FIELDS:
            setattr(self.total, k, getattr(self.total, k) + getattr(r.log, k))
        self.total.reasons.update(r.log.reasons)
        for reason, detail in r.log.details.items():
            self.total.details.setdefault(reason, f"{detail} ({name})")
        status = "ok" if not r.failed else "FAILED " + ", ".join(r.failures[:5])
        if r.reruns:
            status += " (re-run: " + "; ".join(r.reruns) + ")"
        print(f"{name:26s} {r.passed:4d} passed {r.failed:3d} failed {r.seconds:7.1f} s  {status}  "
              f"| {r.log.summary()}", flush=True)

    def failed_task(self, name: str, error: str) -> None:  # a cluster task that failed after its retry
        self.total_fail += 1
        print(f"{name:26s} FAILED as a task: {error}", flush=True)

    def cross_check(self, ok: bool, msg: str) -> None:
        print(f"{'stock-reader cross-check':26s} {'ok' if ok else 'FAILED'}: {msg}", flush=True)
        self.total_pass += ok
        self.total_fail += not ok

    def finish(self) -> int:
        print(f"offload total: {self.total.summary()} entries={self.total.entries} device_jobs={self.total.jobs}")
        t = self.total
        other = sum(v for k, v in t.reasons.items() if k not in EXPECTED_REASONS)
        if t.offloaded + t.fallback:
            print(f"fallbacks other than {', '.join(EXPECTED_REASONS)}: {other} of {t.offloaded + t.fallback} "
                  f"compactions ({100 * other / (t.offloaded + t.fallback):.1f} %)")
        for reason, detail in sorted(t.details.items()):
            print(f"first {reason} fallback: {detail}")
        if self.skipped:
            print(f"skipped (fail on the stock build): {', '.join(self.skipped)}")
        print(f"{self.total_pass} passed, {self.total_fail} failed")
        return 0 if self.total_fail == 0 else 1


def _test_on_cluster(args, names: list[str]) -> int:
    """`test` with a task per binary (and one for the cross-check) on Dask (docs/cluster.md): the same
    lines as the serial run, in the same order, once every task has ended."""
    from lsmc import cluster

    points = [("binary", n, args.no_stock, args.filter, args.backend) for n in names]
    if not args.no_cross_check:
        points.append(("cross-check", args.backend))
    tally = _Tally()
    interrupted = False
    try:
        with cluster.connect(args.cluster) as client:
            outcomes = cluster.run(client, leveldb_task, points, label="leveldb test")
    except cluster.Interrupted as e:
        outcomes, interrupted = e.outcomes, True
    for o in outcomes:
        if o.point[0] == "cross-check":
            tally.cross_check(*(o.value if o.ok else (False, f"the task failed: {o.error}")))
        elif o.ok:
            tally.add(o.point[1], *o.value)
        else:
            tally.failed_task(o.point[1], o.error)
    if interrupted:
        print(f"interrupted: {len(outcomes)} of {len(points)} tasks had finished")
        tally.finish()
        return 130
    return tally.finish()


def cmd_soc_job(args) -> int:
    """One 2-way job of the driver's soc back end (host/src/soc.cpp): DIR holds run0.bin, run1.bin and
    the C merge's merged.bin / invalid.bin; the SoC runs the firmware's host-loaded job (polling, no
    software cross-merge), which checks the IP's output against them; the IP's output buffers go to
    DIR/dev_out.bin and DIR/dev_inv.bin. Prints `soc-job pass hw_cycles=N`, exit 0, or the failure."""
    from lsmc.build import firmware
    from lsmc.sim import soc

    d = Path(args.dir)
    files = {n: d / f"{n}.bin" for n in ("run0", "run1", "merged", "invalid")}
    missing = [str(f) for f in files.values() if not f.is_file()]
    if missing:
        raise CliError(f"soc-job: missing {', '.join(missing)}")
    data = {n: f.read_bytes() for n, f in files.items()}
    res = soc.run_job(d / "sim", data["run0"], data["run1"], args.group, merged=data["merged"],
                           invalid=data["invalid"], flags=firmware.JOB_FLAG_POLL | firmware.JOB_FLAG_NO_SW)
    (d / "dev_out.bin").write_bytes(res["out"])
    (d / "dev_inv.bin").write_bytes(res["inv"])
    if res["status"] != 0 or res["exit"] != 0:
        print(f"soc-job FAIL status={res['status']} ({res['status_text']}) exit={res['exit']}\n{res['uart'][-1500:]}")
        return 1
    print(f"soc-job pass hw_cycles={res['hw_cycles']} fw_cycles={res['fw_cycles']}")
    return 0


@tool_main("leveldb")
def main(argv: list[str] | None = None) -> int:
    from lsmc import cluster

    p = argparse.ArgumentParser(prog="lsmc leveldb", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("test", help="LevelDB's own tests with compactions offloaded, verify on")
    t.add_argument("binaries", nargs="*", help="test binaries (default: all in build/leveldb/bin)")
    t.add_argument("--filter", help="gtest filter (--gtest_filter)")
    t.add_argument("--backend", choices=("model", "rtl", "soc", "kb16", "kb16-soc"), default=TEST_BACKEND,
                   help="LSMC_OFFLOAD of the offloaded run: model (the table engine's C++ model, default), "
                        "rtl (its Verilated RTL, random stalls), soc (the full SoC with the engine: seconds a "
                        "compaction; LSMC_SOC_PRESET names the preset), kb16 or kb16-soc (the KB16 compaction IP)")
    t.add_argument("--no-stock", action="store_true", help="skip the stock (offload off) pre-run")
    t.add_argument("--no-cross-check", action="store_true", help="skip the stock-reader cross-check")
    cluster.add_option(t, "the binaries")
    b = sub.add_parser("bench", help="db_bench, stock and the engine paced at 100/250 MHz -> results/leveldb.*")
    b.add_argument("--ops", type=int_option(1000, 100_000_000), default=1_000_000,
                   help="operations per benchmark (default 1000000)")
    cluster.add_option(b, "the offload modes (each a timed task: one per machine)")
    j = sub.add_parser("soc-job", help="(internal) one job of the driver's kb16-soc back end")
    j.add_argument("dir", help="folder with run0.bin, run1.bin, merged.bin, invalid.bin")
    j.add_argument("--group", type=int_option(2, 256), default=16, help="G (default 16)")
    args = p.parse_args(argv)
    if args.cmd == "soc-job":
        return cmd_soc_job(args)
    if args.cmd == "test":
        return cmd_test(args)
    from lsmc.report.leveldb_bench import cmd_bench  # matplotlib only when benchmarking

    return cmd_bench(args)


if __name__ == "__main__":
    sys.exit(main())
