"""nand-report: page read and program throughput of the NAND controller per ONFI timing mode (SDR
modes 0..5 and NV-DDR modes 0..5), one and two targets, against the bus limit of the mode, and the BCH
ECC sweep (0 .. t + 2 bit errors per sector); writes results/nand.md, nand.csv, nand_ecc.csv and
nand.png. Measured in the standalone controller simulation (hw/ip/nand/dv: NandController RTL + ONFI models,
checker on): SDR against the MT29F4G08ABADA, NV-DDR against the MT29F16G08ABABA (its busy times).

Sequential reads (`op` cache_read): every channel of a --channels simulation reads --seq-pages pages from
each of its two targets with cache reads under the channels x ways scheduler (nandsim.run_channels), plus
the same on one channel; `targets` is then the ways per channel. `op` cache_program / mp_program / mp_read:
one-plane cache programs against multi-plane programs of the same pages, and multi-plane reads of them.
`op` soc_cache_program / soc_cache_read: the firmware's scheduler on every channel of the full SoC
(storage.elf `nand channels`; SDR mode 5 on the MT29F4G08ABADA, NV-DDR mode 5 on the MT29F16G08ABABA).

Usage: scripts/nand-report [--pages N] [--modes sdr5,nvddr5,..] [--ecc-pages N] [--channels N]
                           [--seq-pages N] [--soc-pages N] [--out-dir DIR]
Exit status 0, or 2 with one line on stderr when the measurement cannot be made."""

import argparse
import csv
import io
import sys
import time

from lsmc import build, cliutil, cluster
from lsmc.sim import nandsim

COLUMNS = ["mode", "op", "channels", "targets", "bytes", "cycles", "mb_per_s", "bus_limit_mb_per_s", "efficiency"]
ECC_COLUMNS = ["ecc", "t", "bits_injected", "pages", "corrected", "uncorrectable", "miscorrected"]
CHANNELS = 1  # page read / program rows: one channel; bus_limit_mb_per_s is for all channels together
SEQ_WAYS = 2  # targets per channel in the sequential cache-read rows
SOC_OPS = {"read": "soc_cache_read", "program": "soc_cache_program"}  # op column of the full-SoC rows
SEQ_PROGRAM_PAGES = 8  # pages per way of the multi-channel cache-program rows (tPROG 230 us each)


MODE_NAMES = [nandsim.label(m, d) for d in (False, True) for m in range(len(nandsim.ONFI_MODES))]


def parse_mode(name: str):
    """'sdr3' / 'nvddr5' (a bare digit is the SDR mode) -> (mode, nvddr)."""
    return (int(name[-1]), name.startswith("nvddr"))


def run_seq(modes, channels, seq_pages):
    """Sequential cache reads per NV-DDR mode on 1 and `channels` channels, cache programs on `channels`
    channels (if more than one): [(mode, op, ChannelRun)]."""
    out = []
    for mode in (m for m, d in modes if d):
        for ch in sorted({1, channels}):
            with nandsim.NandSim(blocks=4, pages=128, targets=SEQ_WAYS, part="mt29f16g08ababa", channels=ch) as s:
                for k in range(ch):
                    s.select(k)
                    s.init_nvddr(mode, tap_step=16)
                out.append((mode, "cache_read", nandsim.measure_channels(s, ways=SEQ_WAYS, pages=seq_pages)))
                # programs: one plane (cache program) against two (multi-plane program, blocks 2 and 3), the
                # same pages per way; multi-plane reads of those pages
                npg = min(seq_pages, SEQ_PROGRAM_PAGES)
                out.append((mode, "cache_program", nandsim.measure_channels(s, ways=SEQ_WAYS, pages=npg, block=1,
                                                                            op="program")))
                out.append((mode, "mp_program", nandsim.measure_channels(s, ways=SEQ_WAYS, pages=npg, block=2,
                                                                         op="mp_program")))
                out.append((mode, "mp_read", nandsim.measure_channels(s, ways=SEQ_WAYS, pages=npg, block=2,
                                                                      op="mp_read")))
                s.close()
    return out


def run(modes, pages, ecc_pages):
    """modes: (mode, nvddr) pairs. SDR on the MT29F4G08ABADA model, NV-DDR on the MT29F16G08ABABA model."""
    rows = []
    with sdr_sim() as s:
        for mode, _ in (m for m in modes if not m[1]):
            rows += sdr_rows(s, mode, pages)
        ecc = nandsim.ecc_sweep(s, pages=ecc_pages, block=2) if ecc_pages else []
        dec = s.r("ECC_DEC")
        s.close()
    if any(d for _, d in modes):
        with nvddr_sim() as s:
            for mode, _ in (m for m in modes if m[1]):
                rows += nvddr_rows(s, mode, pages)
            s.close()
    return rows, ecc, dec


# The simulations and the rows of one timing mode (run() takes every mode in turn on one simulation; the
# cluster path, nand_task, one mode per task on a simulation of its own: the same figures).
def sdr_sim():
    return nandsim.NandSim(blocks=8, targets=2)


def nvddr_sim():
    return nandsim.NandSim(blocks=8, pages=128, targets=2, part="mt29f16g08ababa")


def sdr_rows(s, mode: int, pages: int) -> list:
    s.init(mode=mode)
    return [nandsim.measure(s, mode, op, targets, pages=pages) for op in ("read", "program") for targets in (1, 2)]


def nvddr_rows(s, mode: int, pages: int) -> list:
    s.init_nvddr(mode, tap_step=16)
    return [nandsim.measure_nvddr(s, op, targets, pages=pages) for op in ("read", "program", "cache_program")
            for targets in (1, 2)]


def soc_points(soc_pages: int) -> list:
    """(part, channels) of the full-SoC rows, in main()'s order."""
    return [(part, ch) for part in (None, "mt29f16g08ababa") for ch in (1, None)] if soc_pages else []


def soc_rows(part, channels, soc_pages: int) -> list:
    return list(nandsim.soc_channels(ways=SEQ_WAYS, pages=soc_pages, channels=channels, part=part)[0].values())


def plot(rows, ecc):
    """Left: MB/s per mode (read/program, 1/2 targets) with the bus limit; right: the ECC sweep."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2 if ecc else 1, figsize=(11 if ecc else 6, 4), squeeze=False)
    ax = axes[0][0]
    modes = sorted({(r.nvddr, r.mode) for r in rows})
    labels = [nandsim.label(m, d) for d, m in modes]
    for op, tg, style in (("read", 1, "o-"), ("read", 2, "o--"), ("program", 1, "s-"), ("program", 2, "s--")):
        ys = [next((r.mb_per_s for r in rows if (r.nvddr, r.mode, r.op, r.targets) == (d, m, op, tg)), None)
              for d, m in modes]
        ax.plot(labels, ys, style, label=f"{op}, {tg} target{'s' if tg > 1 else ''}")
    ax.plot(labels, [nandsim.bus_limit_mb_per_s(m, "read", d) for d, m in modes], "k:", label="bus limit (read)")
    ax.set_ylabel("MB/s (user data, 100 MHz controller)")
    ax.set_title("NAND throughput, 1 channel, 8-bit bus, ECC on")
    ax.tick_params(axis="x", labelrotation=45)
    ax.legend(fontsize=8)
    if ecc:
        ax = axes[0][1]
        ks = [e.bits_injected for e in ecc]
        for field, dx, color in (("corrected", -0.25, "tab:green"), ("uncorrectable", 0, "tab:orange"),
                                 ("miscorrected", 0.25, "tab:red")):
            ax.bar([k + dx for k in ks], [getattr(e, field) for e in ecc], width=0.25, color=color, label=field)
        ax.axvline(ecc[0].t + 0.5, color="k", ls=":")
        ax.set_xlabel("bit errors injected per 512-byte sector")
        ax.set_ylabel("pages")
        ax.set_title(f"BCH t = {ecc[0].t}: corrected / flagged")
        ax.legend(fontsize=8)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    return png.getvalue()


def write(rows, ecc, dec, out, pages, seconds, seq=(), soc=None, notes=""):
    out = cliutil.make_output_dir(out)
    table = io.StringIO(newline="")
    w = csv.writer(table)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([nandsim.label(r.mode, r.nvddr), r.op, CHANNELS, r.targets, r.bytes, r.cycles, f"{r.mb_per_s:.2f}",
                    f"{r.bus_limit_mb_per_s:.2f}", f"{r.efficiency:.3f}"])
    for mode, op, r in seq:
        w.writerow([nandsim.label(mode, True), op, r.channels, r.ways, r.bytes, r.cycles, f"{r.mb_per_s:.2f}",
                    f"{r.bus_limit_mb_per_s:.2f}", f"{r.efficiency:.3f}"])
    for r in soc or ():
        w.writerow([nandsim.label(r.mode, r.nvddr), SOC_OPS[r.op], r.channels, r.ways, r.bytes, r.cycles,
                    f"{r.mb_per_s:.2f}", f"{r.bus_limit_mb_per_s:.2f}", f"{r.efficiency:.3f}"])
    ecc_table = io.StringIO(newline="")
    w = csv.writer(ecc_table)
    w.writerow(ECC_COLUMNS)
    for e in ecc:
        w.writerow(list(e))
    t = nandsim.ONFI_MODES
    lines = [
        "# NAND controller throughput",
        "",
        "Standalone simulation of `nand.NandController` (100 MHz, one channel, BCH t = 8 per 512 B) against "
        "two ONFI models per interface, timing checker on. SDR rows (`sdrN`): Micron MT29F4G08ABADA busy "
        f"times (tR 25 us, tPROG 200 us), {pages} pages of 2048 B per target (2112 B on the bus). NV-DDR rows "
        "(`nvddrN`): Micron MT29F16G08ABABA (tR 25 us, tPROG 230 us), 4096 B pages (4320 B on the bus), "
        "read capture trained first; the controller runs CLK at a whole number of 10 ns cycles (modes 3 and "
        "4 at 20 ns, mode 5 at 10 ns = two bytes per cycle). ECC on, user data moved by the DMA (32-bit "
        "AXI). `mb_per_s` = user bytes / total time including the array busy time, the command and address "
        "cycles and the DMA; `efficiency` = MB/s over the bus limit of the mode (SDR: one byte per tRC for "
        "reads, per tWC for programs; NV-DDR: two bytes per tCK of the mode); `transfer` = the byte rate "
        "during the data-transfer micro-operations (PERF_BYTES / PERF_CYCLES, spare bytes included) over "
        "the same limit. Two targets: SPLIT commands, the array "
        "time of one target overlapping the transfers of the other.",
        "",
        "| mode | tRC/tWC/tCK ns | op | targets | bytes | cycles | MB/s | bus limit MB/s | efficiency | transfer |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        tc = (nandsim.NVDDR_MODES[r.mode]["tCK"] / 1000 if r.nvddr else t[r.mode]["tRC" if r.op == "read" else "tWC"])
        name = nandsim.label(r.mode, r.nvddr)
        lines.append(f"| {name} | {tc:g} | {r.op} | {r.targets} | {r.bytes} | {r.cycles} | {r.mb_per_s:.2f} | "
                     f"{r.bus_limit_mb_per_s:.2f} | {100 * r.efficiency:.1f} % | "
                     f"{100 * r.transfer_efficiency:.1f} % |")
    lines += ["", "## Interleaving two targets", "", "| mode | op | 1 target MB/s | 2 targets MB/s | gain |",
              "|---:|---|---:|---:|---:|"]
    by = {(nandsim.label(r.mode, r.nvddr), r.op, r.targets): r for r in rows}
    for (mode, op, tg), r in by.items():
        if tg == 1 and (mode, op, 2) in by:
            r2 = by[(mode, op, 2)]
            lines.append(f"| {mode} | {op} | {r.mb_per_s:.2f} | {r2.mb_per_s:.2f} | {r2.mb_per_s / r.mb_per_s:.2f}x |")
    lines += ["", "Why a transfer efficiency is below 100 %: the controller clock is 10 ns, so every WE#/RE# period is "
              "a whole number of cycles (mode 2: tRC 35 ns -> 4 cycles = 40 ns; mode 4: 25 ns -> 30 ns); the "
              "rest is the first cycle's tWHR/tRR/tADL wait counted inside the transfer. See hw/ip/nand/doc/nand.md.",
              ""]
    if seq:
        lines += ["## Sequential reads over channels (cache read, channels x ways scheduler)", "", (
            f"Every channel (its own controller, {SEQ_WAYS} targets and 32-bit AXI port into one DDR model that "
            "gives each port its own bandwidth) reads the same number of pages from each target: PAGE_READ, then per "
            "target READ_CACHE 31h (SPLIT: the bus is free during tRCBSY 3 us and the next tR) and READ_DATA "
            "(00h, the cache register out, ECC, DMA); the last page by READ_CACHE_END 3Fh. The scheduler "
            "(`nandsim.run_channels`) keeps 6 commands queued per channel and drains completions on the "
            "interrupt lines; each page is checked byte for byte in DDR. Whole run: from the first command to "
            "the last completion, including the first tR (25 us) and the last page's ECC and DMA; per channel "
            "up to its own last completion. Bus limit: 2 bytes per tCK of the mode per channel. `cache_program` "
            f"rows: {SEQ_PROGRAM_PAGES} pages per way programmed by PROGRAM_CACHE (SPLIT) / WAIT_STATUS taking "
            "turns between the ways, the last by PROGRAM, checked in the arrays (tPROG 230 us bounds a "
            "target at 17.8 MB/s). `mp_program` rows: the same pages by multi-plane programs (the part's 2 "
            "planes: 80h..11h, tDBSY, 80h..10h, one tPROG for two pages, blocks 2 and 3; bound 35.6 MB/s per "
            "target); `mp_read`: those pages read back by multi-plane reads (00h..32h, 00h..30h: one tR for "
            "two pages, each plane's register out by 06h-E0h), checked in DDR."), "",
            "| mode | op | channels | ways | pages per way | bytes | cycles | MB/s | bus limit MB/s | efficiency | "
            "per channel MB/s (efficiency) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for mode, op, r in seq:
            per = ", ".join(f"{mb:.2f} ({100 * eff:.1f} %)" for _, _, _, mb, eff in r.per_channel)
            lines.append(f"| {nandsim.label(mode, True)} | {op} | {r.channels} | {r.ways} | {r.pages} | {r.bytes} | "
                         f"{r.cycles} | {r.mb_per_s:.2f} | {r.bus_limit_mb_per_s:.2f} | {100 * r.efficiency:.1f} % | "
                         f"{per} |")
        lines += [""]
    if soc:
        lines += ["## Firmware scheduler in the full SoC", "", (
            "storage.elf's `nand channels WAYS PAGES` on the full SoC simulation (VexRiscv at 100 MHz, the "
            "default build's NAND channels, each a controller with 2 models: MT29F4G08ABADA in SDR mode 5, and "
            "MT29F16G08ABABA, which the driver switches to NV-DDR mode 5 by SET FEATURES). The firmware "
            "initialises every channel, erases block 1, "
            "cache-programs PAGES pages per way from DDR and cache-reads them back under its channels x ways "
            "scheduler (`nand_run_channels`, fw/drivers/nand.c: 6 commands queued per channel, completions "
            "polled), then checks every word. One channel, and every channel of the default build: each "
            "channel's DMA is upsized to 256 bits and the channels share DMA port 0 (`io_ddrDma`, 3.2 GB/s) "
            "with compaction unit 0 (LsmcSocConfig.nandDmaPort). Cycles: timer from the first command to the "
            "last completion."), "",
            "| mode | op | channels | ways | pages per way | bytes | cycles | MB/s | bus limit MB/s | efficiency | "
            "per channel MB/s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in soc:
            per = ", ".join(f"{mb:.2f}" for _, _, _, mb, _ in r.per_channel)
            lines.append(f"| {nandsim.label(r.mode, r.nvddr)} | {SOC_OPS[r.op]} | {r.channels} | {r.ways} | "
                         f"{r.pages} | "
                         f"{r.bytes} | {r.cycles} | {r.mb_per_s:.2f} | {r.bus_limit_mb_per_s:.2f} | "
                         f"{100 * r.efficiency:.1f} % | {per} |")
        lines += [""]
    if ecc:
        e0 = ecc[0]
        lines += ["## BCH ECC", "", (
            f"Code `{e0.ecc}`: t = {e0.t} bits per 512-byte sector, GF(2^13), {13 * e0.t} check bits (spare "
            "area from byte 8). Every sector of every page gets exactly `bits_injected` flipped bits (data or "
            "check bits, random positions) through the model's raw back door; each sector's result is checked "
            "against the Python reference decoder (lsmc.model.bch). A page counts as corrected when every "
            "sector came back exact, uncorrectable when a sector was flagged, miscorrected when altered data "
            "was delivered unflagged."), "",
            f"Decoder: {dec >> 16 & 0xFF} Chien positions per cycle, at most {dec & 0xFFFF} cycles per codeword "
            "with t errors (ECC_DEC.WORST_CYCLES); a clean sector costs 4 cycles.", "",
            "| bits per sector | pages | corrected | uncorrectable | miscorrected |", "|---:|---:|---:|---:|---:|"]
        lines += [f"| {e.bits_injected} | {e.pages} | {e.corrected} | {e.uncorrectable} | {e.miscorrected} |"
                  for e in ecc]
        lines += [""]
    if notes:  # a cluster run's failed or unfinished tasks (lsmc.cluster)
        lines += [notes.rstrip("\n"), ""]
    lines += ["![throughput and ECC](nand.png)", "", f"Simulated in {seconds:.1f} s wall time."]
    png = plot(rows, ecc)
    with cliutil.Outputs() as outputs:
        outputs.add(out / "nand.csv", table.getvalue())
        if ecc:
            outputs.add(out / "nand_ecc.csv", ecc_table.getvalue())
        outputs.add(out / "nand.png", png)
        outputs.add(out / "nand.md", "\n".join(lines) + "\n")


# ---- the report as Dask tasks (lsmc.cluster, docs/cluster.md) -----------------------------------------

def nand_task(point: tuple):
    """One part of this module's run on its own simulation: ("sdr"|"nvddr", mode, pages) -> the mode's
    rows; ("ecc", SDR mode or None, pages) -> (ECC sweep rows, ECC_DEC) in that mode; ("seq", mode,
    channels, pages) -> run_seq's rows of the NV-DDR mode; ("soc", part, channels, pages) -> the full-SoC rows."""
    kind = point[0]
    if kind in ("sdr", "nvddr"):
        _, mode, pages = point
        with (sdr_sim() if kind == "sdr" else nvddr_sim()) as s:
            rows = (sdr_rows if kind == "sdr" else nvddr_rows)(s, mode, pages)
            s.close()
        return rows
    if kind == "ecc":
        _, mode, pages = point
        with sdr_sim() as s:
            if mode is not None:
                s.init(mode=mode)
            ecc = nandsim.ecc_sweep(s, pages=pages, block=2) if pages else []
            dec = s.r("ECC_DEC")
            s.close()
        return ecc, dec
    if kind == "seq":
        _, mode, channels, pages = point
        return run_seq([(mode, True)], channels, pages)
    _, part, channels, pages = point
    return soc_rows(part, channels, pages)

def nand_name(point: tuple) -> str:
    kind = point[0]
    if kind in ("sdr", "nvddr", "seq"):
        return f"{kind} {nandsim.label(point[1], kind != 'sdr')}"
    if kind == "ecc":
        return "ECC sweep"
    return f"full SoC {point[1] or 'mt29f4g08abada'}, {point[2] or 'every'} channel(s)"

def nand_report(address, modes, pages: int, ecc_pages: int, channels: int, seq_pages: int, soc_pages: int):
    """this module's measurements as tasks (a timing mode each, the ECC sweep, each full-SoC run):
    (rows, ecc, dec, seq, soc, notes, exit status) in the serial run's order; notes name failed or
    unfinished tasks (status 1, or 130 after Ctrl-C)."""
    sdr = [m for m, d in modes if not d]
    nvddr = [m for m, d in modes if d]
    points = [("sdr", m, pages) for m in sdr] + [("nvddr", m, pages) for m in nvddr]
    points.append(("ecc", sdr[-1] if sdr else None, ecc_pages))
    points += [("seq", m, channels, seq_pages) for m in nvddr] if seq_pages else []
    points += [("soc", part, ch, soc_pages) for part, ch in soc_points(soc_pages)]
    status = 0
    try:
        with cluster.connect(address) as client:
            outcomes = cluster.run(client, nand_task, points, label="nand-report")
    except cluster.Interrupted as e:
        outcomes, status = e.outcomes, 130
    got = {o.point: o for o in outcomes}
    rows, seq, soc, ecc, dec = [], [], [], [], 0
    for p in points:
        o = got.get(p)
        if o is None or not o.ok:
            continue
        if p[0] in ("sdr", "nvddr"):
            rows += o.value
        elif p[0] == "ecc":
            ecc, dec = o.value
        elif p[0] == "seq":
            seq += o.value
        else:
            soc += o.value
    notes = cluster.failures_text(outcomes, nand_name)
    if status == 130:
        notes += f"\nInterrupted: {len(outcomes)} of {len(points)} tasks finished; the others are not in this report.\n"
    elif notes:
        status = 1
    return rows, ecc, dec, seq, soc, notes, status


@cliutil.tool_main("nand-report")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="nand-report", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=cliutil.int_option(1, 32), default=4, metavar="N",
                    help="pages per target and measurement, 1..32 (default 4)")
    ap.add_argument("--modes", type=cliutil.choice_list_option(
                    MODE_NAMES + [str(m) for m in range(len(nandsim.ONFI_MODES))]),
                    default=MODE_NAMES, metavar="M,M,..",
                    help="timing modes, comma separated: sdr0..sdr5, nvddr0..nvddr5 (a bare digit is the SDR "
                         "mode; default all twelve)")
    ap.add_argument("--ecc-pages", type=cliutil.int_option(0, 32), default=4, metavar="N",
                    help="pages per error count in the ECC sweep, 0..32 (0: no sweep; default 4)")
    ap.add_argument("--channels", type=cliutil.int_option(1, 8), default=4, metavar="N",
                    help="channels of the sequential cache-read rows, 1..8 (default 4; one channel is measured too)")
    ap.add_argument("--seq-pages", type=cliutil.int_option(0, 128), default=64, metavar="N",
                    help="pages per target in the sequential cache-read rows of each NV-DDR mode, 0..128 (0: none; "
                         "default 64)")
    ap.add_argument("--soc-pages", type=cliutil.int_option(0, 32), default=16, metavar="N",
                    help="pages per way of the full-SoC rows (firmware scheduler, every channel), 0..32 (0: none; "
                         "default 16)")
    cliutil.add_out_dir(ap, "results", "nand.md, nand.csv, nand_ecc.csv and nand.png")
    from lsmc import cluster

    cluster.add_option(ap, "the timing modes (and the ECC sweep, the full-SoC rows)")
    a = ap.parse_args(argv)
    modes = [parse_mode(m) for m in a.modes]
    if len(set(modes)) != len(modes):
        print("nand-report: --modes names a mode twice", file=sys.stderr)
        return 2
    cliutil.check_output_dir(a.out_dir, "--out-dir", ["nand.md", "nand.csv", "nand_ecc.csv", "nand.png"])
    t0 = time.time()
    try:
        if a.cluster is not None:
            rows, ecc, dec, seq, soc, notes, status = nand_report(
                a.cluster, modes, a.pages, a.ecc_pages, a.channels, a.seq_pages, a.soc_pages)
        else:
            notes, status = "", 0
            rows, ecc, dec = run(modes, a.pages, a.ecc_pages)
            seq = run_seq(modes, a.channels, a.seq_pages) if a.seq_pages else []
            # one channel and every channel of the default build, SDR and NV-DDR parts
            soc = [r for part, ch in soc_points(a.soc_pages) for r in soc_rows(part, ch, a.soc_pages)]
    except (nandsim.SimError, build.BuildError) as e:
        print(f"nand-report: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    write(rows, ecc, dec, a.out_dir, a.pages, time.time() - t0, seq, soc, notes)
    for r in rows:
        print(f"{nandsim.label(r.mode, r.nvddr)} {r.op:7s} x{r.targets}: {r.mb_per_s:6.2f} MB/s "
              f"of {r.bus_limit_mb_per_s:5.1f}, "
              f"efficiency {100 * r.efficiency:5.1f} %, during transfers {100 * r.transfer_efficiency:5.1f} %")
    for mode, op, r in seq:
        print(f"{nandsim.label(mode, True)} {op} {r.channels} ch x {r.ways} ways: {r.mb_per_s:6.2f} MB/s of "
              f"{r.bus_limit_mb_per_s:5.1f}, efficiency {100 * r.efficiency:5.1f} %")
    for r in soc:
        print(f"SoC {nandsim.label(r.mode, r.nvddr)} {SOC_OPS[r.op]} {r.channels} ch x {r.ways} ways: "
              f"{r.mb_per_s:6.2f} MB/s of "
              f"{r.bus_limit_mb_per_s:5.1f}, efficiency {100 * r.efficiency:5.1f} %")
    for e in ecc:
        print(f"ECC {e.ecc}: {e.bits_injected:2d} bits/sector x {e.pages} pages: corrected {e.corrected}, "
              f"uncorrectable {e.uncorrectable}, miscorrected {e.miscorrected}")
    print(f"wrote {a.out_dir / 'nand.md'}, nand.csv, nand.png" + (" and nand_ecc.csv" if ecc else ""))
    if notes:
        print(notes, end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
