"""`lsmc leveldb test|bench`: LevelDB 1.23 with its compactions offloaded to the compaction IP
(docs/leveldb.md). `scripts/leveldb build` makes the binaries this runs.

test [BINARY...]   every LevelDB 1.23 test binary, first on the stock path (LSMC_OFFLOAD=off) to know
                   which pass there, then with LSMC_OFFLOAD=rtl LSMC_OFFLOAD_VERIFY=1; prints each
                   binary's result and offload counts, the stock-reader cross-check, and last
                   `N passed, M failed` (gtest test cases of the offloaded run).
bench [--ops N]    db_bench offload off and on -> results/leveldb.md, .csv, .png
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsmc.cliutil import CliError, int_option, tool_main
from lsmc.sim.leveldb import BIN, FIELDS, OffloadLog, check_built, run_test_binary, stock_cross_check, test_binaries


def cmd_test(args) -> int:
    check_built()
    names = args.binaries or test_binaries()
    unknown = [n for n in names if not (BIN / n).is_file()]
    if unknown:
        raise CliError(f"no such test binary: {', '.join(unknown)} (in {BIN})")
    total_pass = total_fail = 0
    total = OffloadLog()
    skipped = []
    for name in names:
        if not args.no_stock:
            stock = run_test_binary(name, "off", gtest_filter=args.filter)
            if stock.failed or stock.rc != 0:
                skipped.append(name)
                print(f"{name:26s} SKIPPED: fails on the stock build too ({', '.join(stock.failures[:3])})",
                      flush=True)
                continue
        r = run_test_binary(name, "rtl", gtest_filter=args.filter)
        total_pass += r.passed
        total_fail += r.failed
        for k in FIELDS:
            setattr(total, k, getattr(total, k) + getattr(r.log, k))
        total.reasons.update(r.log.reasons)
        status = "ok" if not r.failed else "FAILED " + ", ".join(r.failures[:5])
        if r.reruns:
            status += " (re-run: " + "; ".join(r.reruns) + ")"
        print(f"{name:26s} {r.passed:4d} passed {r.failed:3d} failed {r.seconds:7.1f} s  {status}  "
              f"| {r.log.summary()}", flush=True)
    if not args.no_cross_check:
        ok, msg = stock_cross_check()
        print(f"{'stock-reader cross-check':26s} {'ok' if ok else 'FAILED'}: {msg}", flush=True)
        total_pass += ok
        total_fail += not ok
    print(f"offload total: {total.summary()} entries={total.entries} device_jobs={total.jobs}")
    if skipped:
        print(f"skipped (fail on the stock build): {', '.join(skipped)}")
    print(f"{total_pass} passed, {total_fail} failed")
    return 0 if total_fail == 0 else 1


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
    p = argparse.ArgumentParser(prog="lsmc leveldb", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("test", help="LevelDB's own tests with compactions on the Verilated IP")
    t.add_argument("binaries", nargs="*", help="test binaries (default: all in build/leveldb/bin)")
    t.add_argument("--filter", help="gtest filter (--gtest_filter)")
    t.add_argument("--no-stock", action="store_true", help="skip the stock (offload off) pre-run")
    t.add_argument("--no-cross-check", action="store_true", help="skip the stock-reader cross-check")
    b = sub.add_parser("bench", help="db_bench with offload off and on -> results/leveldb.*")
    b.add_argument("--ops", type=int_option(1000, 100_000_000), default=1_000_000,
                   help="operations per benchmark (default 1000000)")
    j = sub.add_parser("soc-job", help="(internal) one job of the driver's soc back end")
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
