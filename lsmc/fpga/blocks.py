"""Where the ECP5's LUTs go: the ECPIX-5's SoC variant synthesised with its hierarchy kept, each mapped
cell counted in the block it sits in (results/fpga_blocks.*, and the committed table docs/boards.md renders)."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from lsmc.fpga.resources import (
    RESOURCES_DATA,
    count_cells,
    read_table,
    resource_row,
    resource_variants,
    resource_yosys,
    stage_verilog,
    variant_label,
    write_table,
)
from lsmc.fpga.tools import FPGA_BUILD, FpgaError, run_step
from lsmc.paths import RESULTS

# children) is the last row, so the rows add up to the whole hierarchy.
SOC_BLOCKS = [
    ("CPU (VexRiscv, its caches)", r"core_cpu\["),
    ("compaction IP", r"compaction_ip\w*\["),
    ("compaction DMA (readers, writers)", r"compaction_dma\w*\["),
    ("NAND: BCH decoder", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\[[^/]*/dec\["),
    ("NAND: page buffer (ping-pong RAM)", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\[[^/]*/buf_"),
    ("NAND: command layer (sequencer, DMA, ECC glue)", r"nand_ctrl\w*\[[^/]*/core_cmdLayer\["),
    ("NAND: timing layer (SDR)", r"nand_ctrl\w*\[[^/]*/core_timing\["),
    ("NAND: NV-DDR timing engine", r"nand_ctrl\w*\[[^/]*/core_ddrTiming\["),
    ("NAND: pad PHY (SDR sampling, drivers)", r"nand_ctrl\w*\[[^/]*/core_phy\["),
    ("NAND: controller registers, FIFOs", r"nand_ctrl\w*\["),
    ("on-chip RAM", r"ram\[Axi4SharedOnChipRam"),
    ("interconnect (AXI/APB decoders, arbiters, upsizers, bridges)", r"\w+\[(Axi4|Apb3)\w*\]/"),
    ("UART, timer, interrupt controller", r"\w+\[(Apb3UartCtrl|MachineTimer|Apb3IrqCtrl)\]/"),
]
REST_BLOCK = "rest (top-level glue)"
BLOCK_COLUMNS = ["block", "LUT", "FF", "BRAM", "DSP"]
BLOCKS_DATA = Path(__file__).resolve().parents[1] / "data" / "fpga_blocks.csv"


def hierarchy_cells(netlist: dict, top: str) -> list:
    """(path, cell type) of every primitive cell under `top` in a yosys JSON netlist (write_json of a
    design synthesised without flattening), path = "inst[Module]/.../cell"; instances of modules of the
    design are walked into (once per instance), cells of library primitives returned."""
    modules = netlist.get("modules", {})
    if top not in modules:
        raise FpgaError(f"top module {top!r} not in the netlist (modules: {', '.join(sorted(modules)[:8])} ...)")
    # write_json lists the library cells (LUT4, TRELLIS_FF, ...) as modules too, marked blackbox (a binary
    # string such as "000...1"); every other module is part of the design and walked into.
    design = {m for m, d in modules.items() if not str(d.get("attributes", {}).get("blackbox", "")).strip("0")}
    out = []

    def walk(module, prefix, depth):
        if depth > 64:
            raise FpgaError(f"{prefix}: hierarchy deeper than 64 (a recursive instance?)")
        for name, cell in modules[module].get("cells", {}).items():
            t = cell["type"]
            if t in design:
                walk(t, f"{prefix}{name}[{t}]/", depth + 1)
            else:
                out.append((prefix + name, t))
    walk(top, "", 0)
    return out


def block_table(cells: list, blocks=SOC_BLOCKS, family: str = "ecpix5") -> list:
    """Rows {block, LUT, FF, BRAM, DSP} (count_cells of the cells each block takes; first pattern wins),
    in `blocks` order, then the rest."""
    pats = [(label, re.compile(p)) for label, p in blocks]
    counts = {label: {} for label, _ in blocks}
    counts[REST_BLOCK] = {}
    for path, t in cells:
        label = next((lb for lb, p in pats if p.match(path)), REST_BLOCK)
        counts[label][t] = counts[label].get(t, 0) + 1
    return [{"block": label, **count_cells(c, family)} for label, c in counts.items()]


def synth_blocks(verilog: Path, top: str, outdir: Path, blocks=SOC_BLOCKS, timeout=None) -> tuple[list, dict]:
    """yosys synth_ecp5 -noflatten of `top`; returns (block_table rows, count_cells of yosys' own `stat`
    total of the whole hierarchy: the rows must add up to it)."""
    outdir, local = stage_verilog(verilog, outdir)
    for old in ("stat_blocks.txt", "blocks.json"):
        (outdir / old).unlink(missing_ok=True)
    run_step([resource_yosys(), "-q", "-l", "synth_blocks.log", "-p",
          f"read_verilog {local.name}; synth_ecp5 -noflatten -top {top}; tee -q -o stat_blocks.txt stat -top {top}; "
          "write_json blocks.json"],
         outdir, outdir / "yosys_blocks.out", f"yosys synth_ecp5 -noflatten of {top}", timeout, env=dict(os.environ))
    try:
        netlist = json.loads((outdir / "blocks.json").read_text())
        text = (outdir / "stat_blocks.txt").read_text()
    except (OSError, ValueError) as e:
        raise FpgaError(f"yosys wrote no usable netlist or stat in {outdir}: {e}") from None
    # `stat -top` ends with the design hierarchy's total: its last "Number of cells" block.
    tail = text[text.rindex("=== design hierarchy ==="):] if "=== design hierarchy ===" in text else ""
    total = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$",
                                                               tail.split("Number of cells:")[-1], re.M)}
    if not total:
        raise FpgaError(f"{outdir / 'stat_blocks.txt'}: no design hierarchy total in yosys' stat")
    return block_table(hierarchy_cells(netlist, top), blocks), count_cells(total, "ecpix5")


def blocks_soc(outdir: Path = FPGA_BUILD / "blocks", timeout=None) -> list:
    """The ECPIX-5's SoC variant (its build's generate_soc_verilog arguments), per block; checked against
    yosys' own total of the hierarchy."""
    from lsmc.boards.gateware import generate_soc_verilog
    v = generate_soc_verilog(**resource_variants()["ecpix5"])
    print(f"fpga: blocks: yosys synth_ecp5 -noflatten of the ECPIX-5 SoC ({v}) ...", flush=True)
    rows, total = synth_blocks(v, "LsmcSoc", Path(outdir) / v.parent.name, timeout=timeout)
    summed = {k: sum(r[k] for r in rows) for k in total}
    if summed != total:
        raise FpgaError(f"the blocks add up to {summed}, yosys' hierarchy total is {total}")
    return rows


def blocks_markdown(rows: list, flat: dict | None = None) -> str:
    """The per-block table (docs/boards.md, generated block `fpga blocks`, and results/fpga_blocks.md);
    `flat`: the ECPIX-5's row of the resources table (the same variant synthesised flat), compared below."""
    tot = {k: sum(float(r[k]) for r in rows) for k in ("LUT", "FF", "BRAM", "DSP")}
    label = variant_label(resource_variants()["ecpix5"])

    def cell(r, k):
        v = float(r[k])
        return f"{v:g} ({100 * v / tot[k]:.1f} %)" if tot[k] else f"{v:g}"
    md = ["| block (ECPIX-5 SoC variant, yosys synth_ecp5, hierarchy kept) | LUT4 | FF | DP16KD | MULT18X18D |",
          "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['block']} | {cell(r, 'LUT')} | {cell(r, 'FF')} | {cell(r, 'BRAM')} | {float(r['DSP']):g} |")
    md.append(f"| **the SoC ({label})** | **{tot['LUT']:g}** | **{tot['FF']:g}** | **{tot['BRAM']:g}** | "
              f"**{tot['DSP']:g}** |")
    md += ["", "LUT4 counted as in the resources table (carry and LUT-RAM cells as LUT4 pairs); shares of the SoC's "
           "total. One `synth_ecp5 -noflatten` run (Debian yosys 0.23) of `LsmcSoc.v` as the ECPIX-5 build generates "
           "it, alone (no LiteDRAM, PHY or BIOS CPU); each mapped cell counted in the block whose instance it sits in "
           "(`lsmc.fpga.blocks.SOC_BLOCKS`), the rows add up to yosys' total of the hierarchy. Without flattening no "
           "logic is optimised across a block's ports (constant inputs, unused outputs, logic merged over a boundary)"]
    if flat:
        lut, ff = float(flat["LUT"]), float(flat["FF"])
        md[-1] += (f", so the total is above the flat synthesis of the same variant (the resources table's "
                   f"ecpix5 row: {lut:g} LUT4, {ff:g} FF; here +{100 * (tot['LUT'] / lut - 1):.0f} % LUT4, "
                   f"+{100 * (tot['FF'] / ff - 1):.0f} % FF): read the shares, not the counts")
    md[-1] += ". Generated from `lsmc/data/fpga_blocks.csv` (`scripts/fpga blocks`)."
    return "\n".join(md)


def read_blocks(path: Path = BLOCKS_DATA) -> list:
    return read_table(path, BLOCK_COLUMNS, "per-block table", "blocks")


def write_blocks(rows: list, outdir: Path = RESULTS, data: Path | None = BLOCKS_DATA) -> Path:
    """results/fpga_blocks.{csv,md}, and the committed copy `data` the docs render (None: not)."""
    flat = resource_row("ecpix5") if RESOURCES_DATA.is_file() else None
    return write_table(rows, BLOCK_COLUMNS, "fpga_blocks", outdir, data,
                        "# Where the ECP5's LUTs go: the ECPIX-5 SoC per block, yosys\n\n"
                        + blocks_markdown(rows, flat))
