"""`lsmc <command> [options]`: one entry point for the project's host tools. Each command is a module
with `main(argv) -> int`, imported only when it runs (so `lsmc kb16` needs neither Verilator nor LiteX).
scripts/<command> are thin wrappers that run scripts/setup first and then this."""
from __future__ import annotations

import importlib
import signal
import sys

from lsmc.cliutil import EXIT_BAD_INPUT, CliError

# name -> (module, one-line summary). New tools: one line here.
COMMANDS = {
    "kb16": ("lsmc.model.kb16_cli", "KB16 run files: generate, encode, decode, merge (docs/kb16-tool.md)"),
    "compact": ("lsmc.sim.compact", "merge two KB16 runs on the compaction IP in Verilator"),
    "bench": ("lsmc.report.bench", "IP benchmark in the layout of seed 000's Table III"),
    "report": ("lsmc.report.compare", "IP against LevelDB, the VexRiscv and a host C merge"),
    "nand-report": ("lsmc.report.nand", "NAND controller throughput per ONFI timing mode"),
    "demo": ("lsmc.report.demo", "the full SoC in Verilator: Table III reproduction, NAND storage flow"),
    "fpga": ("lsmc.fpga", "open ECP5 flow: ECPIX-5 bitstream and IP-alone Fmax (results/fpga.md, docs/boards.md)"),
    "console": ("lsmc.console", "interactive terminal on the firmware console: --port URL (docs/console.md)"),
    "tables": ("lsmc.tables", "LevelDB table jobs of the table engine: make, compact, compare (docs/table-engine.md)"),
    "leveldb": ("lsmc.leveldb", "LevelDB 1.23 with compactions on the IP: its own tests, db_bench (docs/leveldb.md)"),
    "board-report": ("lsmc.board_report", "run `bench` on the console at --port URL: results/table3.md/.csv"),
    "docs": ("lsmc.build.gendocs", "re-render the generated tables in docs/ (--check: report stale ones)"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: lsmc COMMAND [options]   (lsmc COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join(lines)


def _terminated(signum, frame):
    raise KeyboardInterrupt


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
