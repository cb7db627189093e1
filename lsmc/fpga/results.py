"""results/fpga.csv and results/fpga.md: one row per design, the conditions, each design's critical path."""
from __future__ import annotations

import csv
import re
from pathlib import Path

from lsmc.fpga.seeds import spread_lines
from lsmc.fpga.timing import PnrResult, condense_path, path_summary
from lsmc.fpga.tools import DEVICE, IP_WIDTH, TABLE_ENGINE_PRESET, FpgaError
from lsmc.paths import RESULTS

CSV_COLUMNS = ["design", "device", "fmax_mhz", "target_mhz", "lut", "ff", "bram", "dsp", "bitstream"]


def soc_row(res: PnrResult, clock: str = r"lsmc") -> dict:
    net, achieved, target = res.clock(clock)
    return _row("soc", res, achieved, target, res.bitstream)


def alone_row(design: str, res: PnrResult) -> dict:
    """The row of a block placed alone (one clock, no bitstream): `compaction_ip` or `nand`."""
    if len(res.clocks) != 1:
        raise FpgaError(f"{res.design}: expected one clock, the report has {sorted(res.clocks)}")
    (achieved, target), = res.clocks.values()
    return _row(design, res, achieved, target, None)


def ip_row(res: PnrResult) -> dict:
    return alone_row("compaction_ip", res)


def _row(design, res, achieved, target, bit) -> dict:
    from lsmc.paths import ROOT
    bitstream = ""
    if bit is not None:
        bit = Path(bit).resolve()
        bitstream = str(bit.relative_to(ROOT)) if bit.is_relative_to(ROOT) else str(bit)
    return {"design": design, "device": DEVICE, "fmax_mhz": f"{achieved:.2f}", "target_mhz": f"{target:.2f}",
            "lut": res.used("TRELLIS_COMB"), "ff": res.used("TRELLIS_FF"), "bram": res.used("DP16KD"),
            "dsp": res.used("MULT18X18D"), "bitstream": bitstream}


def write_results(rows: list, paths: dict, outdir: Path = RESULTS, notes: list = ()) -> tuple[Path, Path]:
    """results/fpga.csv (CSV_COLUMNS) and results/fpga.md (the table, conditions, critical paths).
    `paths`: design -> (clock name, critical path lines[, nextpnr options]); `notes`: lines under the table
    (provenance)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / "fpga.csv", outdir / "fpga.md"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    md = ["# Open ECP5 flow (yosys + nextpnr-ecp5 + ecppack, yowasp builds from PyPI)", "",
          f"Device {DEVICE} (ECPIX-5), speed grade 8. `fmax_mhz`: nextpnr's post-route estimate of the "
          "named clock; `lut` = LUT4s (TRELLIS_COMB, carry cells included), `ff` = flip-flops, `bram` = "
          "DP16KD (18 Kbit), `dsp` = MULT18X18D. `soc`: the whole ECPIX-5 design, Fmax of the SoC's clock "
          "domain `lsmc`; `compaction_ip`: the IP alone, out of context, "
          f"{IP_WIDTH}-bit stream; `nand`: the NAND controller alone, out of context; `nand_dma`: the "
          "SoC's NAND DMA path alone, BCH decoder stubbed, out of context; `table_engine_merge`: the table "
          "engine's merge and drop stage alone (W = 16, K = 4), out of context; `table_engine_reader`, "
          f"`table_engine_writer`: a table reader and the table writer alone in the engine's ECP5 build (preset "
          f"`{TABLE_ENGINE_PRESET}`), out of context; `table_engine`: the whole table "
          f"engine alone in its ECP5 build (preset `{TABLE_ENGINE_PRESET}`: W = 16, K = 2, 32 KiB Snappy blocks), "
          "out of context.", "",
          "| " + " | ".join(CSV_COLUMNS) + " |", "|" + "---|" * len(CSV_COLUMNS)]
    for r in rows:
        md.append("| " + " | ".join(str(r[c]) for c in CSV_COLUMNS) + " |")
    if notes:
        md += ["", *notes]
    # A design not rebuilt this time keeps its section (and its row) from the previous file.
    old = _path_sections(md_path.read_text()) if md_path.is_file() else {}
    for r in rows:
        design = r["design"]
        if design in paths:
            clock, lines, *opts = paths[design]
            md += ["", f"## Critical path: {design} (clock {clock})", "", path_summary(lines), "",
                   *([f"nextpnr options beyond the flow's own: `{' '.join(opts[0])}`", ""] if opts else []),
                   "```", *condense_path(lines), "```"]
        elif design in old:
            md += ["", old[design]]
    spread = spread_lines(outdir)
    if spread:
        md += ["", *spread]
    md_path.write_text("\n".join(md) + "\n")
    return csv_path, md_path


def _path_sections(md: str) -> dict:
    """design -> its "## Critical path: design ..." section of a results/fpga.md, verbatim."""
    out = {}
    for m in re.finditer(r"^## Critical path: (\S+) .*?(?=^## |\Z)", md, re.S | re.M):
        out[m.group(1)] = m.group(0).rstrip("\n")
    return out


def print_result(row: dict, res: PnrResult, clock: str) -> None:
    lines = res.critical_paths.get(clock, [])
    print(f"{row['design']}: Fmax {row['fmax_mhz']} MHz (target {row['target_mhz']} MHz) on {clock}; "
          f"{row['lut']} LUT4, {row['ff']} FF, {row['bram']} DP16KD, {row['dsp']} MULT18X18D"
          + (f"; bitstream {row['bitstream']}" if row["bitstream"] else ""))
    if res.pnr_options:
        print(f"  nextpnr options: {' '.join(res.pnr_options)}")
    print(f"  critical path: {path_summary(lines)}")
    for l in condense_path(lines):
        print(f"    {l}")
