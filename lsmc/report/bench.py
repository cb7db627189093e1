"""Benchmark of the compaction IP in the layout of the paper's Table III.

For 512 .. 8192 input entries (two runs of N/2 keys, 25 % overlap, fixed seed) and both IP widths,
runs the RTL in Verilator, checks every output against the reference model, and reports the
IP's own HW_CYCLES (first input beat .. done) as cycles, cycles per output entry, µs per input entry
and input MB/s at 100 MHz. Table A uses workload kind `short` (1..8-byte keys: entries == keys, the
paper's setting); table B kind `uniform` (1..16-byte keys: virtual entries make entries > keys).
With --ways K (4 or 8) the same keys are dealt to K runs (run0's keys round robin over runs
0..K/2-1, run1's over K/2..K-1, so each overlapping key sits in one newer and one older run) and
the K-input IP merges them: results/bench_k<K>.md and .csv.
Writes results/bench.md and results/bench.csv. Exit 1 if any output is wrong or a run fails;
with --strict also when a target (128 bit: <= 1.15, 32 bit: <= 4.3 cycles per output entry at
8192 entries, table A) is missed.
"""
import argparse
import csv
import io
import sys

from lsmc import build, cliutil
from lsmc.model import kb16, kb16_cli, workloads
from lsmc.report import paper
from lsmc.sim import ipsim

SIZES = (512, 1024, 2048, 4096, 8192)
PAPER_CYCLES = paper.counters()  # the paper's Table III (lsmc/data/paper.json)
TARGETS = {128: 1.15, 32: 4.3}        # cycles per output entry at 8192 entries, kind `short`
CLOCK_MHZ = paper.clock_mhz()
KINDS = (("short", "A", "kind `short` (1-8 byte keys, entries == keys, as in the paper)"),
         ("uniform", "B", "kind `uniform` (1-16 byte keys: virtual entries, entries != keys)"))
FIELDS = ("table", "kind", "width", "keys", "entries_in", "bytes_in", "entries_out", "invalid", "cycles",
          "sim_cycles", "cycles_per_out_entry", "us_per_in_entry", "mb_per_s", "paper_cycles", "ok", "ddr")
# The DDR preset of every figure here: none. The IP runs alone in Verilator, the harness feeding its streams
# (no DMA, no memory model); the SoC figures with a DDR preset are Table III's and the scaling sweep's.
DDR = "none"


def measure(kind, widths, sizes, seed, overlap, group, stall, ways=2):
    """Rows of results for one workload kind; every output checked against the model."""
    jobs, meta = [], []
    for n in sizes:
        k0, k1 = workloads.make_runs(kind, n, overlap, seed)
        runs = [kb16.encode(k, group) for k in workloads.deal(k0, k1, ways)]
        jobs.append(ipsim.Job(runs[0], runs[1], group, more=tuple(runs[2:]),
                              stalls={s: stall for s in ipsim.streams(ways)} if stall else {}, seed=seed))
        meta.append((n, kb16.merge_runs(runs, group)))
    rows = []
    for w in widths:
        for job, (n, (want_out, want_inv)), r in zip(jobs, meta, ipsim.run_jobs(jobs, width=w, ways=ways)):
            entries_in = sum(len(x) for x in job.runs) // 16
            entries_out = len(r.out) // 16
            ok = (r.status == "done" and r.out == want_out and r.invalid == want_inv and r.violations == 0
                  and r.last_ok)
            cyc = r.hw_cycles
            rows.append(dict(
                kind=kind, width=w, keys=n, entries_in=entries_in, bytes_in=16 * entries_in,
                entries_out=entries_out, invalid=r.invalid_count, cycles=cyc, sim_cycles=r.sim_cycles,
                cycles_per_out_entry=cyc / entries_out if entries_out else float("nan"),
                us_per_in_entry=cyc / CLOCK_MHZ / entries_in,
                mb_per_s=16 * entries_in * CLOCK_MHZ / cyc if cyc else float("nan"),
                paper_cycles=PAPER_CYCLES.get(n, ""), ok=ok, ddr=DDR,
                status=r.status if r.status != "error" else f"error {r.code_name} in{r.input}@{r.index}"))
    return rows


def markdown(title, rows):
    head = ("| width | keys | entries in | bytes in | entries out | invalid | cycles | cycles/out entry "
            "| µs/in entry | MB/s | paper cycles | vs paper | output |")
    lines = [f"### {title}", "", head, "|" + "---|" * 13]
    for r in rows:
        vs = f"{r['paper_cycles'] / r['cycles']:.1f}x" if r["paper_cycles"] and r["cycles"] else ""
        lines.append(f"| {r['width']} | {r['keys']} | {r['entries_in']} | {r['bytes_in']} | {r['entries_out']} "
                     f"| {r['invalid']} | {r['cycles']} | {r['cycles_per_out_entry']:.3f} "
                     f"| {r['us_per_in_entry']:.4f} | {r['mb_per_s']:.1f} | {r['paper_cycles']} | {vs} "
                     f"| {'ok' if r['ok'] else 'WRONG (' + r['status'] + ')'} |")
    return lines


@cliutil.tool_main("bench")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--widths", type=cliutil.choice_list_option(map(str, ipsim.WIDTHS)), default=["128", "32"],
                    help="comma-separated IP widths (default 128,32)")
    ap.add_argument("--sizes", type=workloads.sizes_option(), nargs="+", default=[list(SIZES)], metavar="KEYS",
                    help=f"keys per job, comma or space separated, 2..{workloads.MAX_KEYS} "
                    f"(default {','.join(map(str, SIZES))})")
    ap.add_argument("--kinds", type=cliutil.choice_list_option(workloads.KINDS), default=["short", "uniform"],
                    help="workload kinds, comma separated (tables A, B; default short,uniform)")
    cliutil.add_seed(ap, 2024)
    cliutil.add_overlap(ap, 0.25)
    kb16_cli.add_group(ap)
    cliutil.add_stall(ap)
    ap.add_argument("--ways", type=int, choices=ipsim.WAYS, default=2, help="IP inputs K (default 2)")
    cliutil.add_out_dir(ap, "results", "bench.md and bench.csv (bench_k<K>.* with --ways K)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    a = ap.parse_args(argv)
    sizes = cliutil.flatten(a.sizes)
    widths = sorted((int(w) for w in a.widths), reverse=True)
    kinds = a.kinds
    stem = "bench" if a.ways == 2 else f"bench_k{a.ways}"
    cliutil.check_output_dir(a.out_dir, "--out-dir", [f"{stem}.md", f"{stem}.csv"])

    labels = {k: (t, d) for k, t, d in KINDS}
    runs_text = "Two runs of keys/2 entries each" if a.ways == 2 else \
        f"{a.ways} runs (two runs of keys/2 entries each, dealt over {a.ways} runs)"
    ways_text = "" if a.ways == 2 else f", {a.ways} inputs"
    out = [f"# Compaction IP benchmark (Verilator RTL{ways_text}, {CLOCK_MHZ} MHz clock assumed)", "",
           f"{runs_text}, {a.overlap:.0%} overlap, seed {a.seed}, G = {a.group}"
           + (f", random stalls p = {a.stall}" if a.stall else ", no stalls") + ". `cycles` is the IP's "
           "HW_CYCLES register (first input beat accepted .. done, every output beat accepted). "
           "`paper cycles` is the paper's Table III (firmware-bracketed THROUGHPUT_COUNTER on its platform). "
           f"DDR preset: `{DDR}` (the IP alone, its streams fed by the harness: no DMA, no memory).", ""]
    all_rows, failed = [], False
    try:
        for n, kind in enumerate(kinds):
            table, desc = labels.get(kind, (chr(ord("A") + n), f"kind `{kind}`"))
            rows = measure(kind, widths, sizes, a.seed, a.overlap, a.group, a.stall, a.ways)
            for r in rows:
                r["table"] = table
            all_rows += rows
            out += markdown(f"Table {table}: {desc}", rows) + [""]
    except (build.BuildError, ipsim.SimError) as e:
        print(f"bench: simulator failed: {e}", file=sys.stderr)
        return 1
    for r in all_rows:
        if not r["ok"]:
            failed = True
            print(f"bench: WRONG output: {r['kind']} width {r['width']} keys {r['keys']} ({r['status']})",
                  file=sys.stderr)

    missed = False
    out.append("### Targets (table A, largest size)")
    out.append("")
    big = max(sizes)
    for w in widths:
        row = next((r for r in all_rows if r["kind"] == "short" and r["width"] == w and r["keys"] == big), None)
        if row is None or w not in TARGETS:
            continue
        good = row["cycles_per_out_entry"] <= TARGETS[w]
        missed |= not good
        out.append(f"- {w} bit, {big} entries: {row['cycles_per_out_entry']:.3f} cycles per output entry "
                   f"(target <= {TARGETS[w]}): {'met' if good else 'MISSED'}")
    text = "\n".join(out) + "\n"
    print(text, end="")

    res = cliutil.make_output_dir(a.out_dir)
    table = io.StringIO(newline="")
    wr = csv.DictWriter(table, fieldnames=FIELDS, extrasaction="ignore")
    wr.writeheader()
    for r in all_rows:
        wr.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
    with cliutil.Outputs() as outputs:
        outputs.add(res / f"{stem}.md", text)
        outputs.add(res / f"{stem}.csv", table.getvalue())
    print(f"wrote {res / (stem + '.md')} and {res / (stem + '.csv')}")
    if failed:
        return 1
    return 1 if (missed and a.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
