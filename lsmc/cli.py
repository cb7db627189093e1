"""`lsmc <command> [options]`: one entry point for the project's host tools. Each command is a module
with `main(argv) -> int`, imported only when it runs (so `lsmc kb16` needs neither Verilator nor LiteX).
scripts/<command> are thin wrappers that run scripts/setup first and then this."""
from __future__ import annotations

import importlib
import signal
import sys

from lsmc.cliutil import EXIT_BAD_INPUT, CliError, tool_main

# name -> (module, one-line summary). New tools: one line here.
COMMANDS = {
    "kb16": ("lsmc.model.kb16_cli", "KB16 run files: generate, encode, decode, merge (docs/kb16-tool.md)"),
    "compact": ("lsmc.sim.compact", "merge KB16 runs (2, 4 or 8, newest first) on the compaction IP in Verilator"),
    "bench": ("lsmc.report.bench", "IP benchmark in the layout of the paper's Table III (both stream widths)"),
    "report": ("lsmc.report.compare", "IP and full SoC against LevelDB 1.23, the VexRiscv and a host C merge"),
    "nand-report": ("lsmc.report.nand", "NAND controller throughput per ONFI timing mode (SDR, NV-DDR), ECC, channels"),
    "demo": ("lsmc.report.demo", "the full SoC in Verilator: Table III, NAND storage flow (--faults), scaling sweep"),
    "fpga": ("lsmc.fpga.cli", "open ECP5 flow: ECPIX-5 bitstream, Fmax of the IP and NAND alone (docs/boards.md)"),
    "console": ("lsmc.console", "interactive terminal on the firmware console: --port URL (docs/console.md)"),
    "console-suite": ("lsmc.console_suite", "the console's test suite on a target, serially or as Dask tasks "
                                            "(--cluster): results/console-TARGET.xml"),
    "tables": ("lsmc.tables", "LevelDB table jobs of the table engine: make, compact, compare "
                              "(hw/ip/table_engine/doc/table-engine.md)"),
    "leveldb": ("lsmc.leveldb", "LevelDB 1.23 with compactions on the IP: its own tests, db_bench (docs/leveldb.md)"),
    "board-report": ("lsmc.board_report", "run `bench` on the console at --port URL: results/table3.md/.csv"),
    "docs": ("lsmc.gendocs", "re-render the generated tables in docs/ (--check: report stale ones)"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: lsmc COMMAND [options]   (lsmc COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join(lines)


def _terminated(signum, frame):
    raise KeyboardInterrupt


@tool_main("lsmc")  # an output that cannot be written, by a tool not wrapped itself or by the usage text
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"lsmc: unknown command {name!r} (one of: {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    # `kill` (SIGTERM) unwinds like Ctrl-C, so staged outputs are removed and earlier files stay as they were.
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return module.main(rest)
    except CliError as e:  # tools wrap their main with cliutil.tool_main; this catches the rest
        print(f"{name}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
