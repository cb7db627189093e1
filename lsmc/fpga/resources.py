"""yosys' estimate of the SoC per board: each board's own SoC variant synthesised for its FPGA family
(results/fpga_resources.*, and the committed table docs/boards.md renders); the committed tables'
reader and writer."""
from __future__ import annotations

import csv
import os
import re
import shutil
from pathlib import Path

from lsmc.fpga.flow import board_class
from lsmc.fpga.tools import FPGA_BUILD, FpgaError, run_step
from lsmc.paths import RESULTS

# of the SoC's FIFOs to LUT RAM; small FIFOs then land in block RAM or flip-flops (Vivado would not).
FAMILIES = {
    "kcu105": ("synth_xilinx -family xcu -flatten -nolutram", (242400, 484800, 600, 1920)),  # XCKU040
    "arty_a7": ("synth_xilinx -family xc7 -flatten -nolutram", (63400, 126800, 135, 240)),  # XC7A100T
    "ecpix5": ("synth_ecp5", (83640, 83640, 208, 156)),  # LFE5UM5G-85F
}
RESOURCE_COLUMNS = ["board", "LUT", "FF", "BRAM", "DSP", "LUT_pct", "FF_pct", "BRAM_pct", "DSP_pct"]


def resource_yosys() -> str:
    """The native yosys (Debian's, scripts/setup) for the per-family estimate: the same synthesis as
    yowasp's WebAssembly build in a fraction of the time (synth_xilinx of the SoC: minutes instead of
    more than 50 min)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        y = Path(d) / "yosys"
        if d and Path(d).resolve() != (FPGA_BUILD / "bin").resolve() and y.is_file() and os.access(y, os.X_OK):
            if "yowasp" not in y.read_bytes()[:200].decode("latin-1"):
                return str(y)
    raise FpgaError("yosys (Debian package) not found on PATH; run scripts/setup")


def count_cells(cells: dict, family: str) -> dict:
    """LUT / FF / BRAM / DSP from yosys cell counts. Xilinx: LUT1..6 plus LUT-RAM cells (Vivado counts
    them as LUTs), FD* flip-flops, RAMB36 + RAMB18/2 (36 Kbit tiles), DSP48. ECP5: LUT4 + 2 per CCU2C
    (a carry cell is two LUT4 slices) + 2 per TRELLIS_DPR16X4, TRELLIS_FF, DP16KD (18 Kbit), MULT18X18D."""
    def n(pattern):
        return sum(v for k, v in cells.items() if re.fullmatch(pattern, k.lstrip("\\$")))
    if family == "ecpix5":
        return {"LUT": n(r"LUT4") + 2 * n(r"CCU2C") + 2 * n(r"TRELLIS_DPR16X4"), "FF": n(r"TRELLIS_FF"),
                "BRAM": n(r"DP16KD"), "DSP": n(r"MULT18X18D")}
    lutram = n(r"RAM32M16?") * 4 + n(r"RAM64M8?") * 4 + n(r"RAM(32|64|128|256)X1[SD]") * 2
    return {"LUT": n(r"LUT[1-6](_2)?") + lutram, "FF": n(r"FD[RSCP]E(_1)?"),
            "BRAM": n(r"RAMB36E[12]") + n(r"RAMB18E[12]") / 2, "DSP": n(r"DSP48E[12]")}


def stage_verilog(verilog: Path, outdir: Path) -> tuple[Path, Path]:
    """Copy `verilog` and its SpinalHDL memory images into `outdir` (yosys runs there); (outdir, copy)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    local = outdir / Path(verilog).name
    if Path(verilog).resolve() != local.resolve():
        shutil.copyfile(verilog, local)
    for extra in Path(verilog).parent.glob(f"{Path(verilog).name}_*.bin"):  # SpinalHDL memory images
        shutil.copyfile(extra, outdir / extra.name)
    return outdir, local


def synth_resources(family: str, verilog: Path, top: str, outdir: Path, timeout: float | None = None) -> dict:
    """yosys synthesis of `top` for one board's family; returns count_cells() of its `stat`."""
    if family not in FAMILIES:
        raise FpgaError(f"unknown family {family!r} (one of {', '.join(FAMILIES)})")
    outdir, local = stage_verilog(verilog, outdir)
    synth, _cap = FAMILIES[family]
    (outdir / f"stat_{family}.txt").unlink(missing_ok=True)
    run_step([resource_yosys(), "-q", "-l", f"synth_{family}.log", "-p",
          f"read_verilog {local.name}; {synth} -top {top}; tee -q -o stat_{family}.txt stat"],
         outdir, outdir / f"yosys_{family}.out", f"yosys {synth} of {top}", timeout, env=dict(os.environ))
    return stat_counts(outdir / f"stat_{family}.txt", family)


def stat_counts(stat: Path, family: str) -> dict:
    """count_cells() of the top's block of a yosys `stat` text report."""
    try:
        text = Path(stat).read_text()
    except OSError as e:
        raise FpgaError(f"yosys wrote no stat for {family}: {e}") from None
    # yosys 0.23's `stat -json` has no per-type counts: read the text report's "Number of cells" block
    # (after `-flatten` there is one module; otherwise the last block is the top's).
    blocks = re.split(r"\n=== ", text)
    cells = {}
    for m in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$", blocks[-1], re.M):
        cells[m.group(1)] = int(m.group(2))
    if not cells:
        raise FpgaError(f"{stat}: no cell counts in yosys' stat")
    return count_cells(cells, family)


def resource_variants() -> dict:
    """board -> the `generate_soc_verilog` arguments of that board's own build (its default build, direct
    NAND pins: boards/<board>/target.py without --nvddr, and `scripts/fpga soc`), from the helper
    build_target calls, so each row of the table is the SoC variant its board places."""
    from lsmc.boards import litex_soc
    return {b: litex_soc.soc_generate_args(board_class(b)) for b in FAMILIES}


def variant_label(args: dict) -> str:
    """`128 KiB RAM` (+ `, 1 NAND pad input cycle`, `, DMA port slices`): the SoC variant of
    `generate_soc_verilog(**args)`."""
    from lsmc.boards.ports import ONCHIP_RAM_SIZE
    kib = ONCHIP_RAM_SIZE // 1024 if args.get("ram_kib") is None else args["ram_kib"]
    pads = args.get("nand_pad_input_cycles", 0)
    return f"{kib} KiB RAM" + (f", {pads} NAND pad input cycle{'s' * (pads != 1)}" if pads else "") + \
        (", DMA port slices" if args.get("dma_port_slice") else "")


def resources_table(outdir: Path = FPGA_BUILD / "resources", timeout=None, variants: dict | None = None) -> list:
    """Each board's variant of LsmcSoc (the SoC alone: no LiteDRAM, no BIOS CPU; `resource_variants()`)
    synthesised by yosys for that board's family: one row per board with counts and device percentages.
    Boards whose builds share one variant share its generated Verilog."""
    from lsmc.boards.gateware import generate_soc_verilog
    variants = resource_variants() if variants is None else variants
    verilogs = {}  # frozen arguments -> generated LsmcSoc.v
    rows = []
    for board, (synth, cap) in FAMILIES.items():
        args = variants[board]
        key = tuple(sorted(args.items()))
        if key not in verilogs:
            verilogs[key] = generate_soc_verilog(**args)
        v = verilogs[key]
        print(f"fpga: resources: yosys {synth} of the SoC for {board} ({variant_label(args)}, {v}) ...", flush=True)
        r = synth_resources(board, v, "LsmcSoc", Path(outdir) / v.parent.name, timeout)
        pct = {f"{k}_pct": f"{100 * r[k] / c:.2f}" for k, c in zip(("LUT", "FF", "BRAM", "DSP"), cap)}
        rows.append({"board": board, **r, **pct})
    return rows


def resources_markdown(rows: list) -> str:
    """The per-board table with the paper's Table II beside it (docs/boards.md, generated block
    `fpga resources`, and results/fpga_resources.md)."""
    from lsmc.report import paper
    variants = resource_variants()
    md = ["| board (yosys, the SoC alone) | SoC variant (its board build's) | LUT | FF | BRAM | DSP |",
          "|---|---|---|---|---|---|"]
    for r in rows:
        label = variant_label(variants[r["board"]]) if r["board"] in variants else "?"
        cells = [f"{float(r[k]):g} ({r[f'{k}_pct']} %)" for k in ("LUT", "FF", "BRAM", "DSP")]
        md.append(f"| {r['board']} | {label} | " + " | ".join(cells) + " |")
    t2 = paper.table2()
    cols = [f"{t2[k][0]} ({100 * t2[k][0] / t2[k][1]:.2f} %)" for k in ("LUT", "FF", "BRAM", "DSP")]
    md.append("| paper, Table II (KCU105, whole platform, Vivado) | MicroBlaze platform | " + " | ".join(cols) + " |")
    md += ["", "LUT: LUT1..6 and LUT-RAM on Xilinx, LUT4 (carry and LUT-RAM cells as LUT4 pairs) on the ECP5; "
           "BRAM: 36 Kbit tiles on Xilinx (RAMB18 = 0.5), DP16KD (18 Kbit) on the ECP5; percentages of the "
           "board's device (XCKU040, XC7A100T, LFE5UM5G-85F). Each row is the variant of `LsmcSoc.v` its board's "
           "build generates (`litex_soc.soc_generate_args` of the board class, direct NAND pins), alone: LiteDRAM, "
           "its PHY and the BIOS CPU come on top. Table II is copied from the paper (`lsmc/data/paper.json`). "
           "Generated from `lsmc/data/fpga_resources.csv` (`scripts/fpga resources`)."]
    return "\n".join(md)


# The measured table, committed (results/ is not): docs/boards.md's generated block renders it.
RESOURCES_DATA = Path(__file__).resolve().parents[1] / "data" / "fpga_resources.csv"


def read_table(path: Path, columns: list, what: str, command: str) -> list:
    """A committed estimate table (CSV with exactly `columns`); a clear error naming the file otherwise."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise FpgaError(f"{path}: {e.strerror}; run scripts/fpga {command}") from None
    if not rows or list(rows[0]) != columns:
        raise FpgaError(f"{path}: not a {what} (columns {', '.join(columns)})")
    return rows


def write_table(rows: list, columns: list, name: str, outdir: Path, data: Path | None, markdown: str) -> Path:
    """results/<name>.csv and .md, and the committed copy `data` the docs render (None: not)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    for target in [outdir / f"{name}.csv"] + ([Path(data)] if data else []):
        with open(target, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            for r in rows:
                w.writerow({k: r[k] for k in columns})
    path = outdir / f"{name}.md"
    path.write_text(markdown + "\n")
    return path


def read_resources(path: Path = RESOURCES_DATA) -> list:
    return read_table(path, RESOURCE_COLUMNS, "resources table", "resources")


def resource_row(board: str, path: Path = RESOURCES_DATA) -> dict | None:
    """`board`'s row of the resources table at `path` (None: the table has no such row)."""
    return next((r for r in read_resources(path) if r["board"] == board), None)


def write_resources(rows: list, outdir: Path = RESULTS, data: Path | None = RESOURCES_DATA) -> Path:
    """results/fpga_resources.{csv,md}, and the committed copy `data` the docs render (None: not)."""
    return write_table(rows, RESOURCE_COLUMNS, "fpga_resources", outdir, data,
                        "# The SoC (LsmcSoc, board variant) per board, yosys\n\n" + resources_markdown(rows))


# ------------------------------------------------------------------- where the ECP5's LUTs go, per block
# One hierarchical synth_ecp5 (-noflatten: every module keeps its cells) of the ECPIX-5's SoC variant;
