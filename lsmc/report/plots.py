"""The report's two PNG plots (µs per entry, speed-up over LevelDB); matplotlib, Agg back end."""
from __future__ import annotations

import io
from pathlib import Path

from lsmc.report.table3 import CLOCK_MHZ, PAPER_TABLE3, ratio


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    return buf.getvalue()


def write_plots(results: list, out_dir: Path, outputs) -> list[str]:
    """Renders both plots and stages them in `outputs` (a cliutil.Outputs); returns their file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    def series(get):
        pts = [(r.entries_in, get(r)) for r in results]
        return [p[0] for p in pts if p[1] is not None], [p[1] for p in pts if p[1] is not None]

    names = []

    def finish(fig, ax, ylabel: str, title: str, name: str, yformat=None) -> None:
        """Both plots: log-log over the input size, grid, legend; staged as out_dir/name. `yformat`:
        (major, minor) tick formatters, set after the scale (setting a scale resets them)."""
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        if yformat:
            ax.yaxis.set_major_formatter(yformat[0])
            ax.yaxis.set_minor_formatter(yformat[1])
        ax.set_xlabel("input entries (both runs)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        outputs.add(out_dir / name, _png(fig))
        plt.close(fig)
        names.append(name)

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label, get, style in [
        (f"IP, hardware-only cycles @ {CLOCK_MHZ} MHz", lambda r: r.ip_us, "o-"),
        (f"IP in the SoC, firmware-bracketed @ {CLOCK_MHZ} MHz", lambda r: r.soc_fw_us, "s-"),
        (f"VexRiscv C merge @ {CLOCK_MHZ} MHz", lambda r: r.vex_us, "^-"),
        ("host C merge (best)", lambda r: r.host_us, "v-"),
        ("LevelDB 1.23 compaction (best)", lambda r: r.leveldb_us, "D-"),
        ("LevelDB 1.23 whole CompactRange (best)", lambda r: r.leveldb_total_us, "D--"),
        ("LevelDB 1.23 compaction, database on disk (best)", lambda r: r.leveldb_disk_us, "D:"),
    ]:
        x, y = series(get)
        if x:
            ax.plot(x, y, style, label=label)
    finish(fig, ax, "µs per input entry (log scale)", "Compaction time per entry", "report_us_per_entry.png")

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label, get, style in [
        ("measured: IP hardware-only vs LevelDB", lambda r: ratio(r.leveldb_us, r.ip_us), "o-"),
        ("measured: IP in the SoC, firmware-bracketed vs LevelDB", lambda r: ratio(r.leveldb_us, r.soc_fw_us), "s-"),
    ]:
        x, y = series(get)
        if x:
            ax.plot(x, y, style, label=label)
    if not ax.lines:
        ax.text(0.5, 0.5, "no measured speed-up in this run (see report.md, 'Sources and gaps')",
                transform=ax.transAxes, ha="center", color="gray")
    ax.plot([p[0] for p in PAPER_TABLE3], [p[4] for p in PAPER_TABLE3], "k*--",
            label="paper (the paper's Table III, copied): MicroBlaze SoC vs LevelDB on i5-8500")
    finish(fig, ax, "speed-up over LevelDB 1.23 (×, log scale)",
           f"Speed-up of the compaction IP over LevelDB (IP at {CLOCK_MHZ} MHz)", "report_speedup.png",
           (FuncFormatter(lambda v, _: f"{v:g}×"),
            FuncFormatter(lambda v, _: f"{v:g}×" if str(v)[0] in "25" else "")))
    return names
