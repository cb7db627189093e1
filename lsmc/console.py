"""The firmware console over a serial line, from the host (docs/console.md).

* `lsmc console --port URL`: an interactive terminal (pyserial's miniterm) on a board's USB-UART
  (`/dev/ttyUSB1`), the SoC simulator's `--uart-tcp` (`socket://127.0.0.1:PORT`) or `--uart-pty`
  (`/dev/pts/N`), or the LiteX board simulation's serial2tcp.
* `lsmc board-report --port URL`: runs `bench` on whatever answers there and writes Table III
  (results/table3.md and .csv, same columns as scripts/demo) from the UART log, naming its source.

URLs are pyserial's (`serial.serial_for_url`): a device path, `socket://host:port`, `rfc2217://...`.
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from pathlib import Path

from lsmc import cliutil
from lsmc.paths import RESULTS

PROMPT = "lsmc> "
BAUD = 115200  # the SoC's UART on a board (docs/boards.md); ignored by socket:// URLs


class ConsoleError(RuntimeError):
    """The other end did not answer as the firmware console does (the message says what was seen)."""


def open_port(url: str, baud: int = BAUD, timeout: float = 0.1):
    """Open a pyserial URL; a clear ConsoleError (naming the URL) instead of pyserial's traceback."""
    import serial
    try:
        return serial.serial_for_url(url, baudrate=baud, timeout=timeout)
    except (serial.SerialException, ValueError, OSError) as e:
        raise ConsoleError(f"cannot open serial port {url!r}: {e}") from None


class Console:
    """A line-oriented view of the firmware console: send a command, read until a pattern (the prompt
    by default), keep everything read in `log`."""

    def __init__(self, ser, echo=None):
        self.ser = ser
        self.log = ""
        self.echo = echo
        self._pos = 0  # where the next read_until starts looking

    def read_until(self, pattern: str | re.Pattern = PROMPT, timeout: float = 30.0) -> str:
        """Text from the last match up to and including the next `pattern` (str: literal; or a regex)."""
        rx = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.log, self._pos)
            if m:
                out = self.log[self._pos:m.end()]
                self._pos = m.end()
                return out
            if time.monotonic() > deadline:
                tail = self.log[self._pos:][-400:]
                raise ConsoleError(f"no {rx.pattern!r} within {timeout:g} s; last output: {tail!r}")
            chunk = self.ser.read(4096)
            if chunk:
                text = chunk.decode("latin-1")
                self.log += text
                if self.echo:
                    self.echo.write(text)
                    self.echo.flush()

    def write(self, data: str | bytes) -> None:
        self.ser.write(data.encode("latin-1") if isinstance(data, str) else data)
        self.ser.flush()

    def sync(self, timeout: float = 30.0) -> str:
        """Get a fresh prompt: an empty line makes the console print it again. Returns what came before
        (a banner, when this is the first connection to a freshly started simulator)."""
        self.write("\n")
        return self.read_until(PROMPT, timeout)

    def command(self, line: str, timeout: float = 60.0, until: str | re.Pattern = PROMPT) -> str:
        """Send one command line and return its output up to the next prompt."""
        self.write(line + "\n")
        return self.read_until(until, timeout)


def source_of(url: str, banner: str = "") -> str:
    """What is at the other end: the firmware's banner says `(simulation, ...)` or `(board, ...)` when it
    was seen; otherwise a guess from the URL (loopback sockets and pseudo-terminals are simulators)."""
    m = re.search(r"lsmc firmware \S+ \((simulation|board)\b", banner)
    if m:
        return m.group(1)
    if re.match(r"socket://(127\.|localhost)", url) or url.startswith("/dev/pts/"):
        return "simulation"
    return "board"


# ------------------------------------------------------------------------------------- lsmc console
@cliutil.tool_main("lsmc console")
def console_main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="lsmc console", description="Interactive terminal on the firmware "
                                 "console (pyserial miniterm). Ctrl-] quits, Ctrl-T Ctrl-H shows miniterm's keys.")
    ap.add_argument("--port", required=True, help="pyserial URL: /dev/ttyUSB1, socket://127.0.0.1:PORT, /dev/pts/N")
    ap.add_argument("--baud", type=int, default=BAUD, help=f"baud rate for a real serial port (default {BAUD})")
    args = ap.parse_args(argv)
    from serial.tools import miniterm
    try:
        ser = open_port(args.port, args.baud, timeout=1)
    except ConsoleError as e:
        print(f"lsmc console: {e}", file=sys.stderr)
        return 2
    term = miniterm.Miniterm(ser, echo=False, eol="lf", filters=["direct"])
    term.exit_character = chr(0x1D)  # Ctrl-]
    term.menu_character = chr(0x14)  # Ctrl-T
    term.set_rx_encoding("latin-1")
    term.set_tx_encoding("latin-1")
    print(f"--- lsmc console on {args.port} (Ctrl-] quits; press Enter for a prompt) ---", file=sys.stderr)
    term.start()
    try:
        term.join(True)
    except KeyboardInterrupt:
        pass
    term.join()
    term.close()
    return 0


# ------------------------------------------------------------------------------- lsmc board-report
def run_bench(con: Console, timeout: float) -> tuple[str, str]:
    """(banner or whatever preceded the first prompt, bench output up to the prompt after it)."""
    before = con.sync(timeout=min(timeout, 60))
    out = con.command("bench", timeout=timeout)
    return before, out


def table3_markdown(rows: list, source: str, port: str, ddr: str = "unstated") -> str:
    from lsmc.report.table3 import CLOCK_MHZ
    lines = [f"# Table III reproduction ({source}, from the UART console)", "",
             f"`bench` run by `lsmc board-report --port {port}` on the firmware console; the numbers are "
             f"the firmware's TABLE3 block. Source: **{source}**, DDR: `{ddr}`. Cycles are SoC clock cycles "
             f"(on a board: the `lsmc` clock domain; in simulation: simulated cycles); µs and MB/s assume "
             f"the nominal {CLOCK_MHZ} MHz clock.", "",
             "| entries in | entries out | bytes in | fw-bracketed cycles | hw-only cycles | µs/entry | MB/s | "
             "VexRiscv C merge cycles | C merge / IP | check |", "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['entries_in']} | {r['entries_out']} | {r['bytes_in']} | {r['fw_cycles']} | "
                     f"{r['hw_cycles']} | {r['us_per_entry']:.6f} | {r['mb_per_s']:.1f} | {r['sw_cycles']} | "
                     f"{r['sw_cycles'] / max(1, r['fw_cycles']):.1f}x | {'PASS' if r['pass'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"


def bench_config(out: str) -> tuple[int, str]:
    """(stream width, bracket) from the bench's head line `Table III: ..., 128-bit streams, tight bracket`."""
    m = re.search(r"Table III: .*?(\d+)-bit streams, (\w+) bracket", out)
    if not m:
        raise ConsoleError("the bench printed no `Table III: ... N-bit streams, X bracket` line")
    return int(m.group(1)), m.group(2)


def write_table3(rows: list, source: str, port: str, outdir: Path, config=(128, "tight"),
                 ddr: str | None = None) -> tuple[Path, Path]:
    """table3.csv in the report module's format (its writer when it has one) and table3.md. ddr: the DDR
    preset the simulator ran (its `ddr:` line); default `board` for a board, else `unstated`."""
    ddr = ddr or ("board" if source == "board" else "unstated")
    from lsmc.report import table3
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / "table3.csv", outdir / "table3.md"
    if hasattr(table3, "write_table3_csv"):  # columns width, bracket, then TABLE3's
        width, bracket = config
        table3.write_table3_csv(csv_path, [{"width": width, "bracket": bracket, **r} for r in rows], ddr)
    else:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=table3.TABLE3_COLUMNS)
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{r[k]:.6f}" if isinstance(r[k], float) else int(r[k]))
                            for k in table3.TABLE3_COLUMNS})
    md_path.write_text(table3_markdown(rows, source, port, ddr))
    return csv_path, md_path


@cliutil.tool_main("lsmc board-report")
def board_report_main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="lsmc board-report", description="Run `bench` on the firmware console "
                                 "at --port and write Table III (table3.md/.csv) from the UART log.")
    ap.add_argument("--port", required=True, help="pyserial URL: /dev/ttyUSB1, socket://127.0.0.1:PORT, /dev/pts/N")
    ap.add_argument("--baud", type=int, default=BAUD)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds the bench may take (default 1800)")
    ap.add_argument("--source", choices=["auto", "board", "simulation"], default="auto",
                    help="what to call the source in the report (auto: the banner, else the kind of URL)")
    ap.add_argument("--out-dir", type=Path, default=RESULTS, help="where table3.md/.csv and the log go")
    ap.add_argument("--ddr", help="the DDR preset the simulator runs (its `ddr:` line), named in the outputs "
                    "(default: board for a board, else unstated)")
    ap.add_argument("--quiet", action="store_true", help="do not echo the console")
    args = ap.parse_args(argv)
    from lsmc.report.table3 import ReportError, parse_table3_lines
    try:
        ser = open_port(args.port, args.baud)
    except ConsoleError as e:
        print(f"lsmc board-report: {e}", file=sys.stderr)
        return 2
    con = Console(ser, echo=None if args.quiet else sys.stdout)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    log_path = args.out_dir / "board-console.log"
    try:
        before, out = run_bench(con, args.timeout)
        rows = parse_table3_lines(out)
        config = bench_config(out)
    except (ConsoleError, ReportError) as e:
        log_path.write_text(con.log)
        print(f"\nlsmc board-report: {e} (console log: {log_path})", file=sys.stderr)
        return 1
    finally:
        ser.close()
    log_path.write_text(con.log)
    source = args.source if args.source != "auto" else source_of(args.port, before)
    csv_path, md_path = write_table3(rows, source, args.port, args.out_dir, config, args.ddr)
    ok = all(r["pass"] for r in rows)
    print(f"\nlsmc board-report: {len(rows)} rows from the {source}, "
          f"{'all PASS' if ok else 'FAILURES'}; wrote {md_path}, {csv_path}, {log_path}")
    return 0 if ok else 1


def main(argv=None) -> int:  # `python3 -m lsmc.console ...`
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "board-report":
        return board_report_main(argv[1:])
    return console_main(argv[1:] if argv and argv[0] == "console" else argv)


if __name__ == "__main__":
    sys.exit(main())
