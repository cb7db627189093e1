"""`scripts/demo`: build both SoC variants and the firmware, run Table III in the full-SoC simulation
twice at once, (a) the paper's platform (32-bit streams, the paper's counter bracket) and (b) this
project's design (128-bit streams, tight bracket), on workloads made on the host, and write
results/table3.md and results/table3.csv. `scripts/demo storage`: the NAND storage flow;
`scripts/demo storage --faults`: the power-cut-safe storage flow under a fault schedule covering every
NAND fault kind (lsmc.sim.storage_faults, docs/storage.md). `scripts/demo scaling`: 1, 2 and 4 compaction
units x 2 and 4 ways x 8,192 .. 262,144 entries in the full SoC on the kcu105 DDR preset
(docs/scaling.md): results/scaling.csv, .md and .png. `scripts/demo tables`: LevelDB table compactions on
the table engine (its RTL in Verilator and its model, MODELLED) against the DDR bound and LevelDB's own
compaction (lsmc.report.tables): results/tables.csv, .md and .png."""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import threading
import time

from lsmc import build, cliutil
from lsmc.build import facts, firmware
from lsmc.paths import RESULTS
from lsmc.report import paper, table3
from lsmc.sim import soc

DDR_LATENCY = 20  # cycles from AR handshake to first beat in the harness's DDR model (its default)
CONFIG_TEXT = {
    (32, "paper"): ("(a) faithful reproduction", "32-bit streams (the paper's platform); every DMA channel checked "
                    "idle, programmed and started inside the counter bracket as a Xilinx AXI DMA driver does (S2MM "
                    "writers first, then MM2S readers), then the IP started, its STATUS polled to DONE, then each "
                    "channel's STATUS polled until idle"),
    (128, "tight"): ("(b) this project's design", "128-bit streams; DMA channels programmed before the counter, "
                     "started by one START_MASK write, the IP started, then one ALL_STATUS read per poll until "
                     "the IP is done and every channel idle"),
}


def workload_rows() -> list[firmware.TableRow]:
    """Table III's jobs made on the host by the reference model (lsmc.model), with their reference merge."""
    w = table3.TABLE3_WORKLOAD
    return firmware.table_rows(table3.TABLE3_SIZES, w["kind"], w["overlap"], w["seed"], w["group"])


def _speed_line(stderr: str) -> str:
    """The harness's closing lines: the cpu-time line when it has one, else "sim: N cycles in S s"."""
    lines = [l.strip() for l in stderr.splitlines() if l.startswith("sim:")]
    cpu = next((l for l in reversed(lines) if "cpu time" in l), "")
    wall = next((l for l in reversed(lines) if "cycles in" in l), "")
    return "; ".join(x for x in (wall, cpu) if x)


def _load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return "unknown"


def table3_markdown(results: dict, speed: dict, sim_s: float, total_s: float, load: str = "unknown",
                    ddr: str = "unstated") -> str:
    """results: (width, bracket) -> TABLE3 rows; the paper's counters beside both, with ratios."""
    a, b = results[(32, "paper")], results[(128, "tight")]
    by_a = {r["entries_in"]: r for r in a}
    by_b = {r["entries_in"]: r for r in b}
    L = ["# Table III: the paper's figures beside the faithful reproduction (a) and this project's design (b)", "",
         "Full-SoC Verilator simulation (VexRiscv firmware, compaction IP fed by the SoC's DMA from DDR; DDR "
         f"preset `{ddr}`: {DDR_LATENCY} cycles read latency, 256-bit port). The counter is the IP's "
         "THROUGHPUT_COUNTER started and stopped by the firmware (REG_COUNT_CONTROL), as the paper reads "
         "reg_throughput_counter; "
         f"cycles are simulated clock cycles, µs assume the nominal {table3.CLOCK_MHZ} MHz clock (the paper's "
         "MicroBlaze system clock is also 100 MHz). Workloads: made on the host by the reference model "
         f"(`kb16 gen --kind {table3.TABLE3_WORKLOAD['kind']} --overlap {table3.TABLE3_WORKLOAD['overlap']} "
         f"--seed {table3.TABLE3_WORKLOAD['seed']}`, G {table3.TABLE3_WORKLOAD['group']}: N/2 keys per run, one "
         "16-byte entry per key) and loaded into DDR; every row's output is checked byte for byte against the "
         "reference merge and the firmware's C merge on the VexRiscv.", ""]
    for key in table3.CONFIGS:
        name, text = CONFIG_TEXT[key]
        L.append(f"- **{name}**: {text}.")
    L += ["", "| key number | byte number | paper counter | (a) counter | (a) / paper | (b) counter | (b) / paper | "
          "paper µs/entry | (a) µs/entry | (b) µs/entry | (a) hw-only cycles | (b) hw-only cycles | check (a), (b) |",
          "|" + "---:|" * 12 + "---|"]
    for k, nbytes, counter, us, _x in table3.PAPER_TABLE3:
        ra, rb = by_a.get(k), by_b.get(k)
        cells = [str(k), str(nbytes), f"{counter:,}"]
        for r, digits in ((ra, 3), (rb, 4)):
            cells += ["—", "—"] if r is None else [f"{r['fw_cycles']:,}", f"{r['fw_cycles'] / counter:.{digits}f}"]
        cells.append(f"{us:.6f}")
        cells += ["—" if r is None else f"{r['us_per_entry']:.6f}" for r in (ra, rb)]
        cells += ["—" if r is None else f"{r['hw_cycles']:,}" for r in (ra, rb)]
        cells.append(", ".join("PASS" if r and r["pass"] else "FAIL" for r in (ra, rb)))
        L.append("| " + " | ".join(cells) + " |")
    leveldb = [us * x for _k, _b, _c, us, x in table3.PAPER_TABLE3]
    L += ["", "**The paper's LevelDB figure is one constant.** Its last column (\"performance comparison with "
          "LevelDB\") times its µs/entry gives LevelDB's µs/entry: "
          + ", ".join(f"{v:.4f}" for v in leveldb)
          + f" µs per entry for 512 … 8,192 keys, i.e. {min(leveldb):.3f}–{max(leveldb):.3f}: one figure "
          f"(~{paper.leveldb_us_per_entry()} µs/entry) divided by each row's IP time, not a LevelDB compaction "
          "measured per size. "
          "`scripts/report` measures LevelDB 1.23 per size on the same jobs and leads with the like-for-like "
          "pairing (the same KB16 merge in C on one host core against the IP).", ""]
    ra, rb = by_a.get(8192), by_b.get(8192)
    if ra and rb:
        pc = paper.counters()[8192]
        L.append(f"At 8,192 entries: the paper's counter **{pc:,}**; (a) faithful reproduction **{ra['fw_cycles']:,}** "
                 f"({ra['fw_cycles'] / pc:.3f} of the paper's); (b) this project's design **{rb['fw_cycles']:,}** "
                 f"({pc / max(1, rb['fw_cycles']):.1f}× fewer cycles than the paper's).")
        L.append("")
    L.append("VexRiscv C merge of the same runs (cycles, the same counter around `kb16_merge`): "
             + ", ".join(f"{r['entries_in']}: {r['sw_cycles']:,}" for r in b) + ".")
    L += ["", "Simulation: " + "; ".join(f"{CONFIG_TEXT[k][0]}: {speed[k]}" for k in table3.CONFIGS if k in speed),
          f"Wall time: {sim_s:.0f} s for both simulations at once (one per core), {total_s:.0f} s for the whole demo "
          f"including any build (1-minute load average {load} at the end: other work on the machine stretches "
          "wall time; the cpu-time lines above do not depend on it).", ""]
    return "\n".join(L)


def _table3_line(line: str) -> bool:
    """A line of the firmware's Table III output (progress: rows done)."""
    return line.startswith(("TABLE3", "bench:", "Table III")) or (line[:1] == " " and line.strip()[:1].isdigit())


def _progress_line(line: str) -> bool:
    """The harness's progress line (every 10 s while the console is quiet: cycles so far)."""
    return line.startswith("sim: progress:")


def _pump(tag: str, stream, sink: list, lock: threading.Lock, echo) -> None:
    """Keep a simulator's output; echo the lines `echo` picks, tagged, as they come."""
    for raw in iter(stream.readline, b""):
        sink.append(raw)
        line = raw.decode("latin-1").rstrip()
        if echo(line):
            with lock:
                print(f"[{tag}] {line}", flush=True)
    stream.close()


def run_table3(args) -> int:
    t0 = time.time()
    print("demo: building the SoC with 32-bit and 128-bit IP streams (SpinalHDL -> Verilog -> Verilator) "
          "and the firmware ...", flush=True)
    exes = {key: soc.build_soc(width=key[0]) for key in table3.CONFIGS}
    elf = firmware.build_firmware()
    print(f"demo: built in {time.time() - t0:.0f} s; making the Table III workloads on the host ...", flush=True)
    rows = workload_rows()
    RESULTS.mkdir(exist_ok=True)
    work = build.BUILD / "demo"
    work.mkdir(parents=True, exist_ok=True)
    t_sim = time.time()
    procs, outs, errs, threads = {}, {}, {}, []
    lock = threading.Lock()
    for key in table3.CONFIGS:
        width, bracket = key
        img = work / f"table3_w{width}_{bracket}.bin"
        img.write_bytes(firmware.table3_image(rows, table3.TABLE3_WORKLOAD["group"], paper=bracket == "paper"))
        cmd = soc.soc_command(exes[key], elf, arg=firmware.SCEN_BENCH_HOST, ddr_latency=DDR_LATENCY,
                              max_cycles=args.max_cycles, loads={firmware.DDR_BASE: img},
                              log=RESULTS / f"console_w{width}_{bracket}.log")
        print(f"demo: simulating the whole SoC, {CONFIG_TEXT[key][0]} ({width}-bit, {bracket} bracket)", flush=True)
        procs[key] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        outs[key], errs[key] = [], []
        for stream, sink, echo in ((procs[key].stdout, outs[key], _table3_line),
                                   (procs[key].stderr, errs[key], _progress_line)):
            th = threading.Thread(target=_pump, args=(f"{width}/{bracket}", stream, sink, lock, echo), daemon=True)
            th.start()
            threads.append(th)
    results, speed, ddrs, ok = {}, {}, {}, True
    for key, p in procs.items():
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            print(f"demo: {CONFIG_TEXT[key][0]} did not finish in {args.timeout} s: stopped", file=sys.stderr)
    for th in threads:
        th.join()
    wall = time.time() - t_sim
    for key, p in procs.items():
        res = soc.soc_result(p.returncode, b"".join(outs[key]), b"".join(errs[key]))
        speed[key] = _speed_line(res.stderr)
        try:
            results[key] = table3.parse_table3_lines(res.uart)
            ddrs[key] = table3.parse_ddr(res.stderr)  # the harness names its DDR model: every figure carries it
        except table3.ReportError as e:
            print(f"demo: {CONFIG_TEXT[key][0]}: {e} (simulation exit {res.returncode}); console in "
                  f"{RESULTS / f'console_w{key[0]}_{key[1]}.log'}", file=sys.stderr)
            results[key] = []
            ok = False
        ok = ok and res.returncode == 0 and len(results[key]) == len(rows) and all(r["pass"] for r in results[key])
    md = RESULTS / "table3.md"
    with cliutil.Outputs() as outputs:  # both files replace the previous ones together, or neither does
        outputs.add(RESULTS / "table3.csv", table3.table3_csv_text([
            {"width": k[0], "bracket": k[1], "ddr": ddrs.get(k), **r} for k in table3.CONFIGS for r in results[k]]))
        outputs.add(md, table3_markdown(results, speed, wall, time.time() - t0, _load(),
                                        ", ".join(sorted(set(ddrs.values()))) or "unstated"))
    print("\n" + md.read_text())
    print(f"demo: wrote {md} and {RESULTS / 'table3.csv'} (simulations {wall:.0f} s, whole demo "
          f"{time.time() - t0:.0f} s)")
    print("demo: LevelDB 1.23 and the host C merge on the same jobs: `scripts/report` -> "
          f"{RESULTS / 'report.md'}")
    print("demo: PASS" if ok else "demo: FAIL")
    return 0 if ok else 1


def run_storage_faults(args) -> int:
    """The run store under the fault schedule; PASS only if nothing reported stored was lost or altered."""
    from lsmc.sim import storage_faults
    schedule = storage_faults.FULL_SCHEDULE
    if args.schedule:
        schedule = cliutil.read_text_input(args.schedule)
    print("demo: building the SoC and the storage firmware, then the storage flow under NAND faults and power cuts "
          "...", flush=True)
    RESULTS.mkdir(exist_ok=True)
    res = storage_faults.run(schedule, out_dir=RESULTS / "storage_faults", timeout=args.timeout,
                             max_cycles=args.max_cycles, schedule_name=f"--schedule {args.schedule}")
    text = "\n".join(res.lines) + "\n"
    cliutil.write_output(RESULTS / "storage_faults.txt", text)
    print(text, end="")
    print(f"demo: console and fault schedule in {RESULTS / 'storage_faults'}; report in "
          f"{RESULTS / 'storage_faults.txt'}")
    print("demo: storage --faults PASS" if res.passed else "demo: storage --faults FAIL")
    return 0 if res.passed else 1


def run_storage(args) -> int:
    """Two KB16 runs to NAND, back to DDR, merged by the IP, results to NAND, read back, verified."""
    from lsmc.sim import nandsim
    if args.faults:
        return run_storage_faults(args)
    RESULTS.mkdir(exist_ok=True)
    log = RESULTS / "storage.log"
    print("demo: building the SoC and the storage firmware, then running the NAND storage flow ...", flush=True)
    passed, run = nandsim.storage_demo(log=log)
    print(run.uart)
    print(f"demo: console saved to {log}")
    print("demo: storage PASS" if passed else f"demo: storage FAIL (simulation exit {run.returncode})")
    return 0 if passed else 1


def scaling_conditions(ddr: str) -> str:
    """The conditions line of results/scaling.md: SoC, DDR preset, clock, bracket, workload."""
    from lsmc.sim import soc

    return (f"Full SoC (VexRiscv + M compaction units of K ways, 128-bit streams, a {soc.SCALING_DMA_PORT_WIDTH}-bit "
            f"DDR port per DMA reader (K per unit, the writers on the first), {soc.SCALING_DMA_WRITE_BURST}-beat "
            "(256-bit) DMA write bursts" + (", grouped across the units" if soc.SCALING_DMA_WRITE_GROUP else "") +
            "), "
            f"DDR model preset `{ddr}`, {paper.clock_hz() // 1_000_000} MHz nominal clock; counter bracket: "
            "machine timer from the first unit's start to the last unit's end, every unit's registers programmed "
            "before it (docs/scaling.md); workload: kb16 gen short keys, 25 % overlap, G 16, one job split by key "
            "range into M sub-jobs (sub-compaction), each output checked byte for byte.")


def run_scaling(args) -> int:
    """The scaling sweep and its report (lsmc.report.scaling, the simulations by lsmc.sim.scaling)."""
    from lsmc.report import scaling as report

    t0 = time.time()
    sizes = tuple(args.sizes) if args.sizes else report.SWEEP_SIZES
    print(f"demo: scaling sweep: units {', '.join(map(str, report.SWEEP_CUS))} x ways "
          f"{', '.join(map(str, report.SWEEP_WAYS))} x {', '.join(map(str, sizes))} entries, DDR {args.ddr} "
          "(one SoC build of 4 units per K; the first build takes many minutes)", flush=True)
    failed = ""
    if args.cluster is None:
        rows = report.sweep(sizes=sizes, ddr=args.ddr, log=lambda s: print(s, flush=True))
    else:  # the same points as Dask tasks (docs/cluster.md): the rows in the same order, failures named
        from lsmc import cluster

        interrupted = None
        try:
            with cluster.connect(args.cluster) as client:
                outcomes = report.scaling_sweep(client, sizes, args.ddr, log=lambda s: print(s, flush=True))
        except cluster.Interrupted as e:
            outcomes, interrupted = e.outcomes, e
        rows = [o.value for o in outcomes if o.ok]
        failed = cluster.failures_text(outcomes, report.scaling_name)
        if interrupted:
            failed += f"\nInterrupted: {len(outcomes)} of {len(report.sweep_points(sizes=sizes))} points finished.\n"
        if not rows:
            print(f"demo: no scaling point finished{' (interrupted)' if interrupted else ''}", file=sys.stderr)
            return 130 if interrupted else 1
        if interrupted:
            report.write_results(rows, RESULTS, ddr=args.ddr, conditions=scaling_conditions(args.ddr) + "\n\n" + failed)
            print(f"demo: interrupted: the {len(rows)} finished point(s) are in {RESULTS / 'scaling.md'}")
            return 130
    cond = scaling_conditions(args.ddr) + ("\n\n" + failed if failed else "")
    # LevelDB 1.23 on the sweep's own keys: the speed-up column (a missing baseline build is a note, not a failure).
    from lsmc.report.baselines import BaselineError
    try:
        leveldb = report.leveldb_for_sizes(sizes)
    except (BaselineError, OSError) as e:
        print(f"demo: LevelDB baseline not measured ({e}); the speed-up column stays empty", flush=True)
        leveldb = None
    paths = report.write_results(rows, RESULTS, ddr=args.ddr, conditions=cond, leveldb=leveldb)
    ok = all(r["pass"] == "PASS" for r in rows) and not failed
    print("\n" + paths[1].read_text())
    print(f"demo: wrote {', '.join(str(p) for p in paths)}")
    # The full default sweep, every row PASS, refreshes the committed rows and the docs table (one run).
    if ok and sizes == report.SWEEP_SIZES and args.ddr == "kcu105":
        done = report.refresh_committed(rows)
        print(f"demo: the full sweep's rows are now the committed ones: {', '.join(str(p) for p in done)}")
    else:
        print(f"demo: not the full kcu105 sweep with every row PASS: {report.SWEEP_DATA} and the table of "
              f"{report.DOCS_PAGE} are left as they are")
    ru = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(r.ru_utime + r.ru_stime for r in ru)
    print(f"demo: scaling took {time.time() - t0:.0f} s wall, {cpu:.0f} s CPU (this process and its children: "
          "builds, simulations, LevelDB)")
    print("demo: PASS" if ok else "demo: FAIL")
    return 0 if ok else 1


def run_tables(args) -> int:
    """The table engine's report (lsmc.report.tables): LevelDB table jobs on the engine's RTL, model and SoC."""
    from lsmc.report import tables as report

    t0 = time.time()
    print(f"demo: table engine report: {', '.join(f'{w} ({c})' for w, c in report.CASES)}; the engine's RTL "
          f"(one unit), its model (1, 2, 4 units, MODELLED) and the SoC (1, 2, 4 units, kcu105 DDR) against LevelDB's "
          f"own compaction ...", flush=True)
    failed = False
    try:
        if args.cluster is None:
            rows, paths = report.run(RESULTS, entries=args.entries, load=_load(), log=lambda s: print(s, flush=True))
        else:  # a case a Dask task (docs/cluster.md): the rows in the same order, a failed case named
            from lsmc import cluster

            try:
                with cluster.connect(args.cluster) as client:
                    rows, paths, outcomes = report.run_cluster(client, RESULTS, entries=args.entries, load=_load(),
                                                               log=lambda s: print(s, flush=True))
            except cluster.Interrupted as e:
                print(f"demo: interrupted: the {len(e.outcomes)} finished case(s) are in {RESULTS / 'tables.md'}")
                return 130
            failed = not all(o.ok for o in outcomes)
    except report.ReportError as e:
        print(f"demo: error: {e}", file=sys.stderr)
        return 1
    print("\n" + paths[1].read_text())
    print(f"demo: wrote {', '.join(str(p) for p in paths)} in {time.time() - t0:.0f} s")
    ok = all(r["pass"] == "PASS" for r in rows) and not failed
    print("demo: PASS" if ok else "demo: FAIL")
    return 0 if ok else 1


@cliutil.tool_main("demo")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/demo", description=__doc__)
    ap.add_argument("scenario", nargs="?", default="table3", choices=["table3", "storage", "scaling", "tables"])
    ap.add_argument("--faults", action="store_true",
                    help="storage: the power-cut-safe flow under every NAND fault kind (docs/storage.md)")
    ap.add_argument("--schedule", metavar="FILE",
                    help="storage --faults: this fault schedule instead of the built-in one (sim/soc/nand_faults.h)")
    ap.add_argument("--sizes", type=cliutil.int_option(64, 1_000_000), nargs="+", metavar="N",
                    help="scaling: job sizes in entries (default 8192 32768 131072 262144)")
    ap.add_argument("--entries", type=cliutil.int_option(1, 10_000_000), metavar="N",
                    help="tables: entries per run of each job (default: each workload's own, lsmc tables make)")
    ap.add_argument("--ddr", default="kcu105", choices=list(facts.ddr_presets()),
                    help="scaling: DDR model preset (default kcu105)")
    ap.add_argument("--max-cycles", type=cliutil.int_option(1, 2**63 - 1), default=400_000_000, metavar="N",
                    help="simulation guard against hangs, 1..2^63-1 cycles (default 400000000)")
    ap.add_argument("--timeout", type=cliutil.int_option(1, 86400), default=3600, metavar="S",
                    help="seconds each simulation may take, 1..86400 (default 3600)")
    from lsmc import cluster

    cluster.add_option(ap, "scaling: the sweep's points; tables: its cases")
    args = ap.parse_args(argv)
    if args.cluster is not None and args.scenario not in ("scaling", "tables"):
        ap.error("--cluster: only with the scaling and tables scenarios")
    if args.entries is not None and args.scenario != "tables":
        ap.error("--entries: only with the tables scenario")
    if (args.faults or args.schedule) and args.scenario != "storage":
        ap.error("--faults/--schedule: only with the storage scenario")
    if args.schedule and not args.faults:
        ap.error("--schedule: only with --faults")
    logs = [f"console_w{w}_{b}.log" for w, b in table3.CONFIGS]
    cliutil.check_output_dir(RESULTS, "results", ["table3.csv", "table3.md", "storage.log", "storage_faults.txt",
                                                   "scaling.csv", "scaling.md", "scaling.png", "tables.csv",
                                                   "tables.md", "tables.png", *logs])
    try:
        if args.scenario == "scaling":
            return run_scaling(args)
        if args.scenario == "tables":
            return run_tables(args)
        return run_storage(args) if args.scenario == "storage" else run_table3(args)
    except (firmware.FirmwareError, table3.ReportError, build.BuildError, RuntimeError) as e:  # ClusterError too
        print(f"demo: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
