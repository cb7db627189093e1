"""nand-report: page read and program throughput of the NAND controller per ONFI timing mode, one
and two targets, against the 8-bit SDR bus limit of the mode; writes results/nand.md and
results/nand.csv. Measured in the standalone controller simulation (sim/nand: NandController RTL +
ONFI models with the MT29F4G08ABADA busy times, checker on).

Usage: scripts/nand-report [--pages N] [--modes 0,1,..] [--out-dir DIR]
Exit status 0, or 2 with one line on stderr when the measurement cannot be made."""

import argparse
import csv
import io
import sys
import time

from lsmc import build, cliutil
from lsmc.sim import nandsim

COLUMNS = ["mode", "op", "targets", "bytes", "cycles", "mb_per_s", "bus_limit_mb_per_s", "efficiency"]


def run(modes, pages):
    rows = []
    with nandsim.NandSim(blocks=8, targets=2) as s:
        for mode in modes:
            s.init(mode=mode)
            for op in ("read", "program"):
                for targets in (1, 2):
                    rows.append(nandsim.measure(s, mode, op, targets, pages=pages))
        s.close()
    return rows


def write(rows, out, pages, seconds):
    out = cliutil.make_output_dir(out)
    table = io.StringIO(newline="")
    w = csv.writer(table)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([r.mode, r.op, r.targets, r.bytes, r.cycles, f"{r.mb_per_s:.2f}", f"{r.bus_limit_mb_per_s:.2f}",
                    f"{r.efficiency:.3f}"])
    t = nandsim.ONFI_MODES
    lines = [
        "# NAND controller throughput",
        "",
        "Standalone simulation of `nand.NandController` (100 MHz, single clock domain) against two ONFI "
        "models with the Micron MT29F4G08ABADA busy times (tR 25 us, tPROG 200 us), timing checker on. "
        f"{pages} pages of 2048 B per target, ECC on (2112 B per page on the bus, 2048 B of user data "
        "moved by the DMA). `mb_per_s` = user bytes / total time including the array busy time, the "
        "command and address cycles and the DMA; `efficiency` = byte rate during the data-transfer "
        "micro-operations (PERF_BYTES / PERF_CYCLES) over the bus limit of the mode (one byte per tRC for "
        "reads, per tWC for programs). Two targets: SPLIT commands, the array time of one target "
        "overlapping the transfers of the other.",
        "",
        "| mode | tRC/tWC ns | op | targets | bytes | cycles | MB/s | bus limit MB/s | efficiency |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        tc = t[r.mode]["tRC" if r.op == "read" else "tWC"]
        lines.append(f"| {r.mode} | {tc} | {r.op} | {r.targets} | {r.bytes} | {r.cycles} | {r.mb_per_s:.2f} | "
                     f"{r.bus_limit_mb_per_s:.2f} | {100 * r.efficiency:.1f} % |")
    lines += ["", "## Interleaving two targets", "", "| mode | op | 1 target MB/s | 2 targets MB/s | gain |",
              "|---:|---|---:|---:|---:|"]
    by = {(r.mode, r.op, r.targets): r for r in rows}
    for (mode, op, tg), r in by.items():
        if tg == 1 and (mode, op, 2) in by:
            r2 = by[(mode, op, 2)]
            lines.append(f"| {mode} | {op} | {r.mb_per_s:.2f} | {r2.mb_per_s:.2f} | {r2.mb_per_s / r.mb_per_s:.2f}x |")
    lines += ["", "Why an efficiency is below 100 %: the controller clock is 10 ns, so every WE#/RE# period is "
              "a whole number of cycles (mode 2: tRC 35 ns -> 4 cycles = 40 ns; mode 4: 25 ns -> 30 ns); the "
              "rest is the first cycle's tWHR/tRR/tADL wait counted inside the transfer. See docs/nand.md.",
              "", f"Simulated in {seconds:.1f} s wall time."]
    with cliutil.Outputs() as outputs:
        outputs.add(out / "nand.csv", table.getvalue())
        outputs.add(out / "nand.md", "\n".join(lines) + "\n")


@cliutil.tool_main("nand-report")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="nand-report", description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=cliutil.int_option(1, 32), default=4, metavar="N",
                    help="pages per target and measurement, 1..32 (default 4)")
    ap.add_argument("--modes", type=cliutil.choice_list_option(map(str, range(len(nandsim.ONFI_MODES)))),
                    default=["0", "1", "2", "3", "4", "5"], metavar="M,M,..",
                    help="ONFI timing modes, comma separated, 0..5 (default all)")
    cliutil.add_out_dir(ap, "results", "nand.md and nand.csv")
    a = ap.parse_args(argv)
    modes = [int(m) for m in a.modes]
    cliutil.check_output_dir(a.out_dir, "--out-dir", ["nand.md", "nand.csv"])
    t0 = time.time()
    try:
        rows = run(modes, a.pages)
    except (nandsim.SimError, build.BuildError) as e:
        print(f"nand-report: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    write(rows, a.out_dir, a.pages, time.time() - t0)
    for r in rows:
        print(f"mode {r.mode} {r.op:7s} x{r.targets}: {r.mb_per_s:6.2f} MB/s of {r.bus_limit_mb_per_s:5.1f}, "
              f"transfer efficiency {100 * r.efficiency:5.1f} %")
    print(f"wrote {a.out_dir / 'nand.md'} and nand.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
