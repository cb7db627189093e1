"""The open ECP5 FPGA flow: synthesis (yosys), place and route with timing analysis (nextpnr-ecp5) and
bitstream (ecppack), all from PyPI's yowasp builds, on this machine (docs/boards.md, *Open ECP5 flow*).

The designs, one row each in results/fpga.md and results/fpga.csv:

* `soc`: the whole ECPIX-5 board design (boards/ecpix5/target.py: LiteX CRG, LiteDRAM with the ECP5
  DDR3 PHY, BIOS CPU, the LSMC SoC with its firmware in the on-chip RAM); Fmax of the SoC's clock
  domain `lsmc`, and the .bit file;
* `compaction_ip`: the compaction IP alone (128-bit, generated Verilog), out of context (its ports are
  not pins), synthesised and placed for the same device;
* `nand`: the NAND flash controller alone (default parameters: 2 targets, BCH t = 8 per 512 B), out of
  context like the IP, at the SoC's 100 MHz (it runs in the SoC's clock domain);
* `nand_dma`: the SoC's NAND DMA path alone (`soc.NandDmaTiming`: one controller, its upsizer and stage,
  both crossbars, the boards' register slice at the DDR port), the BCH decoder replaced by a stub whose
  outputs are registers (`flow.BCH_STUB`: the decoder alone places at 124 MHz, and with it the controller's
  command and PHY paths, the subject of this row, do not route out of context in useful time);
* `table_engine_merge` (`te_merge`): the table engine's merge and drop stage alone (`MergeDrop`, W = 16 bytes
  a beat, K = 4 ways, hw/ip/table_engine/doc/merge.md), out of context at the engine's 125 MHz goal;
* `table_engine_reader` (`te_reader`), `table_engine_writer` (`te_writer`): one table reader (fetch, Snappy
  decompressor, block reader) and the table writer (block builders, compressor lane, index, filter, footer) alone,
  each with the parameters of the engine's ECP5 build (preset `ecp5`), out of context at the same goal: each
  unit's Fmax and size where the whole engine does not fit;
* `table_engine`: the whole table engine alone (`TableEngine` in its named build for the ECP5-85, preset
  `ecp5`: W = 16, K = 2, 32 KiB Snappy blocks; hw/ip/table_engine/doc/table_engine_top.md, Synthesis), out of
  context at the same goal (it fits the block RAM, not yet the LUTs: nextpnr stops while packing).

The LiteX trellis toolchain calls `yosys`, `nextpnr-ecp5` and `ecppack` by name: `tools.tool_dir()` writes
three one-line wrappers for the `yowasp-` commands and the flow puts that folder first on PATH.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

from lsmc import cluster
from lsmc.cliutil import tool_main
from lsmc.fpga import blocks, flow, resources, seeds
from lsmc.fpga.results import alone_row, ip_row, print_result, soc_row, write_results
from lsmc.fpga.tools import (
    DEFAULT_NEXTPNR_ARGS,
    IP_TARGET_MHZ,
    IP_WIDTH,
    SOC_TARGET_MHZ,
    TABLE_ENGINE_PRESET,
    FpgaError,
    nextpnr_options,
)
from lsmc.paths import BUILD, RESULTS

# Design names on the command line -> result rows, in the order of the results table.
DESIGNS = {"soc": "soc", "ip": "compaction_ip", "nand": "nand", "nand_dma": "nand_dma",
           "te_merge": "table_engine_merge",
           **{d: f"table_engine_{u}" for d, u in flow.TABLE_ENGINE_UNIT_DESIGNS.items()},
           "table_engine": "table_engine"}
ESTIMATES = ("resources", "blocks")
# Other names of a design on the command line.
ALIASES: dict = {}


@tool_main("fpga")
def main(argv=None) -> int:
    """`scripts/fpga` / `lsmc fpga`: every design (or those named), results/fpga.md and .csv."""
    ap = argparse.ArgumentParser(prog="scripts/fpga", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("designs", nargs="*", default=[],
                    metavar="{" + ",".join([*DESIGNS, *ESTIMATES]) + "}",
                    help="which rows to build (default all three): soc (ECPIX-5 bitstream), ip (compaction IP "
                         "alone), nand (NAND controller alone), nand_dma (the NAND DMA path alone, BCH stubbed), "
                         "te_merge (the table engine's merge stage alone), te_reader and te_writer (a table reader "
                         "and the table writer alone, the engine's ECP5 build), table_engine (the whole table engine "
                         "alone, its ECP5 build); these not in the default set. Yosys estimates, apart from "
                         "the timing table (one "
                         "or both): `resources` the SoC per board, each board's own variant "
                         "(results/fpga_resources.md); `blocks` the ECPIX-5's SoC per block, where its LUTs go "
                         "(results/fpga_blocks.md)")
    ap.add_argument("--ip-target-mhz", type=float, default=IP_TARGET_MHZ)
    ap.add_argument("--lsmc-mhz", type=float, default=SOC_TARGET_MHZ, help="SoC clock (default 100 MHz)")
    ap.add_argument("--firmware", type=Path, default=None, help="ELF baked into the SoC's RAM (default lsmc.elf)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where fpga.md/.csv go (default results/)")
    ap.add_argument("--timeout", type=float, default=6 * 3600, help="seconds per flow (default 6 h)")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr's placement seed (default 1; route-to-route noise)")
    ap.add_argument("--nextpnr-args", default=None, metavar="ARGS",
                    help="more nextpnr-ecp5 options for every flow, one shell-quoted string, e.g. "
                         "--nextpnr-args=--tmg-ripup (not those the flow sets: device, files, --freq, --seed);"
                         + " default: " + "; ".join(f"{d} {a!r}" for d, a in DEFAULT_NEXTPNR_ARGS.items())
                         + ", none for the others; '' for nextpnr's own defaults")
    ap.add_argument("--seeds", default=None, metavar="SEEDS",
                    help="route each design at these nextpnr seeds (1-8, 1,3,5) as Dask tasks and keep the best: "
                         "results/fpga_seeds.csv, the spread in results/fpga.md (--seed is then ignored)")
    cluster.add_option(ap, "the --seeds routes")
    args = ap.parse_args(argv)
    try:
        seed_list = seeds.parse_seeds(args.seeds) if args.seeds is not None else None
    except FpgaError as e:
        ap.error(str(e))
    if args.cluster is not None and seed_list is None:
        ap.error("--cluster sends the --seeds routes to a cluster: give --seeds too")
    try:
        pnr_options = {d: nextpnr_options(DEFAULT_NEXTPNR_ARGS.get(d, "") if args.nextpnr_args is None
                                          else args.nextpnr_args, args.seed) for d in DESIGNS}
    except FpgaError as e:
        ap.error(str(e))
    # The results folder is checked before a flow of minutes to hours starts, not when its row is written.
    if args.results.exists() and not args.results.is_dir():
        ap.error(f"{args.results}: is a file; --results needs a folder")
    try:
        args.results.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"{args.results}: cannot create the results folder: {e.strerror}")
    if not os.access(args.results, os.W_OK):
        ap.error(f"{args.results}: results folder not writable")
    designs = [ALIASES.get(d, d) for d in args.designs] or ["ip", "nand", "soc"]  # the short flows first
    estimates = {"resources": (resources.resources_table, resources.write_resources),
                 "blocks": (blocks.blocks_soc, blocks.write_blocks)}
    bad = [d for d in designs if d not in (*DESIGNS, *estimates)]
    if bad:
        ap.error(f"unknown design {bad[0]!r} ({', '.join(DESIGNS)}, {' or '.join(ESTIMATES)})")
    if any(d in estimates for d in designs):
        if any(d not in estimates for d in designs):
            ap.error(f"`resources` and `blocks` run apart from {', '.join(DESIGNS)} (they write "
                     "results/fpga_resources.* and results/fpga_blocks.*, not the timing table)")
        if seed_list is not None:
            ap.error(f"--seeds sweeps the routed rows ({', '.join(DESIGNS)}), not the yosys estimates")
        for d in dict.fromkeys(designs):
            make, write = estimates[d]
            try:
                path = write(make(timeout=args.timeout), args.results)
            except (FpgaError, OSError) as e:
                print(f"fpga: error: {e}", file=sys.stderr)
                return 2
            print(path.read_text())
            print(f"fpga: wrote {path}", flush=True)
        return 0
    # Rows of a design not rebuilt this time are kept from the previous results file; the files are
    # rewritten after each design, so a later design's failure keeps the earlier ones' figures.
    rows = {}
    if (args.results / "fpga.csv").is_file():
        with open(args.results / "fpga.csv", newline="") as f:
            rows = {r["design"]: r for r in csv.DictReader(f) if r.get("design") in DESIGNS.values()}
    paths = {}
    if seed_list is not None:
        with cluster.connect(args.cluster or None) as client:
            return _sweeps(args, designs, seed_list, client, rows, paths)
    for d in dict.fromkeys(designs):
        try:
            if d == "soc":
                print("fpga: ECPIX-5 board design (LiteX + the LSMC SoC), yosys + nextpnr-ecp5 + ecppack ...",
                      flush=True)
                res = flow.soc_flow(firmware=args.firmware, lsmc_mhz=args.lsmc_mhz, timeout=args.timeout,
                               pnr_options=pnr_options["soc"])
                row, clock = soc_row(res), res.clock(r"lsmc")[0]
            elif d == "ip":
                print(f"fpga: compaction IP alone ({IP_WIDTH}-bit), yosys + nextpnr-ecp5 out of context ...",
                      flush=True)
                res = flow.ip_flow(target_mhz=args.ip_target_mhz, timeout=args.timeout, pnr_options=pnr_options["ip"])
                row, clock = ip_row(res), next(iter(res.clocks))
            elif d == "te_merge":
                print("fpga: table engine's merge stage alone (W = 16, K = 4), yosys + nextpnr-ecp5 out of context ...",
                      flush=True)
                res = flow.table_engine_merge_flow(timeout=args.timeout, pnr_options=pnr_options["te_merge"])
                row, clock = alone_row("table_engine_merge", res), next(iter(res.clocks))
            elif d in flow.TABLE_ENGINE_UNIT_DESIGNS:
                unit = flow.TABLE_ENGINE_UNIT_DESIGNS[d]
                print(f"fpga: the table engine's {unit} alone ({TABLE_ENGINE_PRESET} build: W = 16), yosys + "
                      "nextpnr-ecp5 out of context ...", flush=True)
                res = flow.table_engine_unit_flow(unit, timeout=args.timeout, pnr_options=pnr_options[d])
                row, clock = alone_row(DESIGNS[d], res), next(iter(res.clocks))
            elif d == "table_engine":
                print(f"fpga: the whole table engine alone ({TABLE_ENGINE_PRESET} build: W = 16, K = 2), yosys + "
                      "nextpnr-ecp5 out of context ...", flush=True)
                res = flow.table_engine_flow(timeout=args.timeout, pnr_options=pnr_options["table_engine"])
                row, clock = alone_row("table_engine", res), next(iter(res.clocks))
            elif d == "nand_dma":
                print("fpga: NAND DMA path alone (BCH stubbed), yosys + nextpnr-ecp5 out of context ...", flush=True)
                res = flow.nand_dma_flow(timeout=args.timeout, pnr_options=pnr_options["nand_dma"])
                row, clock = alone_row("nand_dma", res), next(iter(res.clocks))
            else:
                print("fpga: NAND controller alone, yosys + nextpnr-ecp5 out of context ...", flush=True)
                res = flow.nand_flow(timeout=args.timeout, pnr_options=pnr_options["nand"])
                row, clock = alone_row("nand", res), next(iter(res.clocks))
        except Exception as e:  # the flow's own errors and the board glue's, one line each
            from lsmc.boards.ports import BoardError
            if not isinstance(e, (FpgaError, BoardError, OSError)):
                raise
            print(f"fpga: error: {e}", file=sys.stderr)
            return 2
        print_result(row, res, clock)
        rows[row["design"]] = row
        paths[row["design"]] = (clock, res.critical_paths.get(clock, []), res.pnr_options)
        ordered = [rows[n] for n in DESIGNS.values() if n in rows]
        try:
            csv_path, md_path = write_results(ordered, paths, args.results)
        except OSError as e:
            print(f"fpga: error: results not written: {e}", file=sys.stderr)
            return 2
        print(f"fpga: wrote {md_path} and {csv_path}", flush=True)
    return 0


def _sweeps(args, designs, seed_list, client, rows, paths) -> int:
    """--seeds: each design's routes as tasks; its row in results/fpga.csv is the best seed's."""
    from lsmc.boards.ports import BoardError
    for d in dict.fromkeys(designs):
        text = DEFAULT_NEXTPNR_ARGS.get(d, "") if args.nextpnr_args is None else args.nextpnr_args
        print(f"fpga: {DESIGNS[d]} at seeds {','.join(map(str, seed_list))}: synthesis here, routes as tasks ...",
              flush=True)
        try:
            tasks, where, clock_of = seeds.prepare(d, seed_list, lambda s, t=text: nextpnr_options(t, s),
                                                   args.timeout, args.ip_target_mhz, args.firmware, args.lsmc_mhz)
            routed = seeds.run_routes(client, tasks, where, clock_of)
            seed_rows, best = seeds.summarise(DESIGNS[d], routed, clock_of)
            seeds.write_seed_rows(seed_rows, args.results)
        except seeds.RoutesInterrupted as e:  # Ctrl-C: the ended routes' rows are kept, nothing else changes
            seed_rows, _ = seeds.summarise(DESIGNS[d], e.routed, clock_of)
            if seed_rows:
                seeds.write_seed_rows(seed_rows, args.results, whole_sweep=False)
            print(f"fpga: {DESIGNS[d]}: {e}; their rows in {args.results / 'fpga_seeds.csv'}", file=sys.stderr)
            return 130
        except (FpgaError, BoardError, OSError) as e:
            print(f"fpga: error: {e}", file=sys.stderr)
            return 2
        if best is None:
            print(f"fpga: error: no seed of {DESIGNS[d]} routed (results/fpga_seeds.csv names each error)",
                  file=sys.stderr)
            return 2
        task, res, clock = best
        if d == "soc":  # the best seed's bitstream beside LiteX's, its seed in the name
            keep = BUILD / "boards" / "ecpix5" / "gateware" / f"ecpix5-seed{task.seed}.bit"
            keep.write_bytes(Path(res.bitstream).read_bytes())
            Path(res.bitstream).unlink()
            res.bitstream = keep
        row = soc_row(res) if d == "soc" else alone_row(DESIGNS[d], res)
        print(f"fpga: {DESIGNS[d]}: best of {len(seed_list)} seeds is seed {task.seed}")
        print_result(row, res, clock)
        rows[row["design"]] = row
        paths[row["design"]] = (clock, res.critical_paths.get(clock, []), res.pnr_options)
        ordered = [rows[n] for n in DESIGNS.values() if n in rows]
        csv_path, md_path = write_results(ordered, paths, args.results)
        print(f"fpga: wrote {md_path}, {csv_path} and {args.results / 'fpga_seeds.csv'}", flush=True)
    return 0


def ecpix5_main(board, argv) -> int:
    """boards/ecpix5/target.py: sources (default) or --build (the open flow)."""

    from lsmc.boards import litex_soc
    from lsmc.boards.ports import BOARDS_BUILD, BoardError
    ap = argparse.ArgumentParser(description=f"LSMC SoC on {board.ident}: gateware sources into "
                                 f"build/boards/{board.name}/, or with --build a bitstream (yowasp yosys/nextpnr).")
    ap.add_argument("--build", action="store_true", help="synthesis, place and route, bitstream (open tools)")
    ap.add_argument("--output-dir", type=Path, default=BOARDS_BUILD / board.name)
    ap.add_argument("--soc-verilog", type=Path, default=None)
    ap.add_argument("--firmware", type=Path, default=None, help="firmware ELF preloaded into the on-chip RAM")
    ap.add_argument("--lsmc-clk-freq", type=float, default=SOC_TARGET_MHZ * 1e6)
    ap.add_argument("--no-compile-software", action="store_true")
    ap.add_argument("--nvddr", action="store_true",
                    help="NAND on the NV-DDR pin set (DQS on PMOD1 pin 6) through the DDR pad wrapper; its "
                         "placement fails on ECP5 today (hw/ip/nand/doc/nand.md, PHY and its simulation model)")
    args = ap.parse_args(argv)
    try:
        litex_soc.build_target(board, args.output_dir, soc_verilog=args.soc_verilog, firmware=args.firmware,
                               lsmc_clk_freq=args.lsmc_clk_freq, run=False,
                               compile_software=not args.no_compile_software, nvddr=args.nvddr)
        print(f"{board.name}: gateware in {args.output_dir}")
        if args.build:
            res = flow.run_trellis(args.output_dir / "gateware", board.name)
            print_result(soc_row(res), res, res.clock(r"lsmc")[0])
    except (BoardError, FpgaError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
