"""Merge KB16 runs on the compaction IP simulated in Verilator (RTL, not the model).

  compact RUN0 RUN1 [RUN2 ...] --out OUT --invalid INV [--group G] [--width 32|128] [--ways 2|4|8]
          [--out-capacity BYTES] [--parts M]

Runs are given newest first. With more runs than the IP's ways K, a cascading compaction runs:
temporary merges of the fewest runs needed first, then the final K-way merge (one IP job per step).
Writes the merged run to OUT and the superseded addresses (LE uint32, step by step) to INV;
the last line printed is `cycles=<HW_CYCLES, summed over steps> entries_in=<n> entries_out=<m> invalid=<k>`.
Exit status: 0 done; 2 missing/unreadable file or bad option; 3 the IP reported an error
(`error: <CODE_NAME> at input <i> entry <index>`, i the run's position, nothing written); 1 simulator
failure or, with --check, an output differing from the reference model. See hw/ip/compaction/doc/compaction-sim.md.

--parts M: a sub-compaction (docs/scaling.md): the merge split by key range into M parts
(lsmc.model.split), one IP job per part, the outputs stitched into one run; `cycles=` is then the
longest part's HW_CYCLES (the parts as if on M units at once, memory not shared).
"""
import argparse
import sys

from lsmc import build, cliutil
from lsmc.cliutil import U32_MAX
from lsmc.model import kb16, split
from lsmc.sim import ipsim


@cliutil.tool_main("compact")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="compact", description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", metavar="RUN", nargs="+", help="KB16 run files, newest first (at least two)")
    ap.add_argument("--out", required=True, help="merged run to write")
    ap.add_argument("--invalid", required=True, help="superseded value addresses to write (LE uint32)")
    # Any 32-bit G reaches the IP's register: outside 2..256 the IP itself answers BAD_GROUP (exit 3).
    ap.add_argument("--group", "-g", type=cliutil.int_option(0, U32_MAX), default=kb16.GROUP_DEFAULT, metavar="G",
                    help=f"group size G, 0..{U32_MAX} (default {kb16.GROUP_DEFAULT}; the IP accepts "
                    f"{kb16.GROUP_MIN}..{kb16.GROUP_MAX})")
    cliutil.add_width(ap)
    ap.add_argument("--ways", type=int, choices=ipsim.WAYS, default=2,
                    help="inputs K of the IP (default 2); more runs than K cascade")
    ap.add_argument("--out-capacity", type=cliutil.int_option(0, ipsim.NO_LIMIT, hex_ok=True), default=ipsim.NO_LIMIT,
                    metavar="BYTES", help="OUT_CAPACITY in bytes, decimal or 0x-hex (default unlimited)")
    ap.add_argument("--inv-capacity", type=cliutil.int_option(0, ipsim.NO_LIMIT, hex_ok=True), default=ipsim.NO_LIMIT,
                    metavar="BYTES", help="INV_CAPACITY in bytes, decimal or 0x-hex (default unlimited)")
    cliutil.add_stall(ap)
    cliutil.add_seed(ap, 1, "stall generator")
    ap.add_argument("--wave", metavar="FILE.fst", help="write an FST waveform (separate traced build)")
    ap.add_argument("--parts", type=cliutil.int_option(1, split.MAX_PARTS), default=1, metavar="M",
                    help=f"sub-compaction: split the merge by key range into M parts, 1..{split.MAX_PARTS} "
                    "(default 1: one job)")
    ap.add_argument("--check", action="store_true", help="also compare the output with the model")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the harness's measurements")
    a = ap.parse_args(argv)
    if len(a.runs) < 2:
        ap.error("give at least two runs (RUN0 RUN1 [RUN2 ...])")
    if a.wave and len(a.runs) > a.ways:
        ap.error("--wave records a single job: give at most --ways runs")
    if a.parts > 1 and (len(a.runs) > a.ways or a.wave or a.out_capacity != ipsim.NO_LIMIT
                        or a.inv_capacity != ipsim.NO_LIMIT):
        ap.error("--parts M: give at most --ways runs and no --wave, --out-capacity or --inv-capacity")
    cliutil.check_paths({"--out": a.out, "--invalid": a.invalid, "--wave": a.wave},
                        {f"RUN{i}": p for i, p in enumerate(a.runs)})
    runs = [cliutil.read_input(p) for p in a.runs]
    stalls = {s: a.stall for s in ipsim.streams(a.ways)} if a.stall else {}
    job_kw = dict(out_capacity=a.out_capacity, inv_capacity=a.inv_capacity, stalls=stalls, seed=a.seed)
    if a.parts > 1:
        return _parts(a, runs, job_kw)
    try:
        if len(runs) <= a.ways:
            padded = runs + [b""] * (a.ways - len(runs))
            job = ipsim.Job(padded[0], padded[1], a.group, more=tuple(padded[2:]), **job_kw)
            r = ipsim.run_jobs([job], width=a.width, wave=a.wave, ways=a.ways)[0]
            results, failed, bad_input = [r], (r if r.status != "done" else None), r.input
            out, inv = r.out, r.invalid
        else:
            try:
                out, inv, plan, results = ipsim.cascade(runs, a.group, a.width, a.ways, **job_kw)
                failed = None
                print(f"cascade: {len(plan)} temporary merge(s) of {[m for _, m in plan]} runs, then a "
                      f"{len(runs) - sum(m - 1 for _, m in plan)}-way merge")
            except ipsim.CascadeError as e:
                results, failed, bad_input = [e.result], e.result, e.runs[0]
    except (build.BuildError, ipsim.SimError) as e:
        print(f"compact: simulator failed: {e}", file=sys.stderr)
        return 1
    if a.verbose:
        for r in results:
            print(" ".join(f"{k}={v}" for k, v in r.fields.items()))
    for r in results:
        if r.violations:
            print(f"compact: the IP broke the stream/AXI protocol {r.violations} time(s)", file=sys.stderr)
            return 1
    if failed is not None:
        if failed.status == "error":
            if failed.code in (kb16.OUT_OVERFLOW, kb16.INV_OVERFLOW, kb16.BAD_GROUP):
                bad_input = failed.input  # not a run's fault: the IP's own input field (0)
            print(f"error: {failed.code_name} at input {bad_input} entry {failed.index}")
            return 3
        print(f"compact: the IP did not finish ({failed.status}: {failed.fields})", file=sys.stderr)
        return 1
    if a.check:
        try:
            want, _ = kb16.merge_runs(runs, a.group)
        except kb16.Kb16Error as e:
            print(f"compact: IP finished but the model rejects the input: {e!r}", file=sys.stderr)
            return 1
        if (out, inv) != (want, kb16.cascade_merge(runs, a.group, a.ways)[1]):
            print("compact: IP output differs from the model", file=sys.stderr)
            return 1
    return _write(a, runs, out, inv, sum(r.hw_cycles for r in results))  # cascade: jobs in sequence


def _parts(a, runs: list[bytes], job_kw: dict) -> int:
    """--parts M: split (model), one IP job per part, stitch (model), check, write."""
    try:
        keys = split.split_keys(runs, a.group, a.parts)
        plan = split.plan(runs, a.group, keys)
    except kb16.Kb16Error as e:  # the split reads the runs: a malformed one is named as the IP would
        print(f"error: {e.name} at input {e.input} entry {e.index}")
        return 3
    jobs = []
    for row in plan:
        subs = [s.bytes(r) for s, r in zip(row, runs)] + [b""] * (a.ways - len(runs))
        jobs.append(ipsim.Job(subs[0], subs[1], a.group, more=tuple(subs[2:]), **job_kw))
    try:
        results = ipsim.run_jobs(jobs, width=a.width, ways=a.ways)
    except (build.BuildError, ipsim.SimError) as e:
        print(f"compact: simulator failed: {e}", file=sys.stderr)
        return 1
    for j, r in enumerate(results):
        if r.violations:
            print(f"compact: the IP broke the stream/AXI protocol {r.violations} time(s)", file=sys.stderr)
            return 1
        if r.status == "error":
            where = (r.input, r.index) if r.code in (kb16.OUT_OVERFLOW, kb16.INV_OVERFLOW, kb16.BAD_GROUP) \
                else (r.input, plan[j][r.input].orig_index(r.index))
            print(f"error: {r.code_name} at input {where[0]} entry {where[1]} (part {j})")
            return 3
        if r.status != "done":
            print(f"compact: part {j}: the IP did not finish ({r.status}: {r.fields})", file=sys.stderr)
            return 1
    if a.verbose:
        for r in results:
            print(" ".join(f"{k}={v}" for k, v in r.fields.items()))
    out = split.stitch([r.out for r in results], a.group)
    inv = b"".join(r.invalid for r in results)
    print(f"parts: {a.parts}, split keys {[k.hex() for k in keys]}, HW_CYCLES per part "
          f"{[r.hw_cycles for r in results]}, re-encoded heads {sum(len(s.head) for row in plan for s in row)} bytes")
    if a.check:
        want, want_inv = kb16.merge_runs(runs, a.group)
        if kb16.decode(out, a.group) != kb16.decode(want, a.group) or inv != want_inv:
            print("compact: the split merge differs from the model's unsplit merge", file=sys.stderr)
            return 1
    return _write(a, runs, out, inv, max(r.hw_cycles for r in results))  # parts: on parallel units


def _write(a, runs: list[bytes], out: bytes, inv: bytes, cycles: int) -> int:
    """Writes OUT and INV (both or neither) and prints the summary line scripts rely on."""
    with cliutil.Outputs() as files:
        files.add(a.out, out)
        files.add(a.invalid, inv)
    entries_in = sum(len(r) for r in runs) // kb16.ENTRY_BYTES
    print(f"cycles={cycles} entries_in={entries_in} "
          f"entries_out={len(out) // kb16.ENTRY_BYTES} invalid={len(inv) // 4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
