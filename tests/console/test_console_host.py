"""Host side of the console tools without a simulator: a fake serial line replays what a console
prints, so the reading, the source detection and the Table III files are checked in milliseconds."""
from __future__ import annotations

import pytest

from lsmc import console
from lsmc.report.table3 import TABLE3_COLUMNS, read_table3_csv


class FakeSerial:
    """Answers each written line with the next scripted reply, delivered in small chunks."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.pending = b""
        self.written = b""

    def write(self, data):
        self.written += data
        if data.endswith(b"\n") and self.replies:
            self.pending += self.replies.pop(0).encode()

    def flush(self):
        pass

    def read(self, n):
        chunk, self.pending = self.pending[:7], self.pending[7:]
        return chunk

    def close(self):
        pass


BANNER = "\nlsmc firmware 1.0 (board, SIM_ARG 0); registers: IP x, DMA y\ncompaction IP v1.0, 128-bit streams\nlsmc> "
BENCH = ("bench\nTable III: board, G=16, 128-bit streams, tight bracket, irq, 100 MHz\n"
         "TABLE3 " + ",".join(TABLE3_COLUMNS) + "\n"
         "TABLE3 512,480,8192,3000,1300,0.058593,273.06,500000,PASS\n"
         "TABLE3 1024,960,16384,5000,2600,0.048828,327.68,1000000,PASS\nTABLE3 END\nlsmc> ")


def test_bench_over_a_fake_line(tmp_path):
    con = console.Console(FakeSerial([BANNER, BENCH]))
    before, out = console.run_bench(con, timeout=5)
    assert console.source_of("socket://127.0.0.1:5", before) == "board"  # the banner wins over the URL
    from lsmc.report.table3 import parse_table3_lines
    rows = parse_table3_lines(out)
    assert console.bench_config(out) == (128, "tight")
    csv_path, md_path = console.write_table3(rows, "board", "/dev/ttyUSB1", tmp_path, console.bench_config(out))
    back = read_table3_csv(csv_path)
    assert [r["entries_in"] for r in back] == [512, 1024] and all(r["pass"] for r in back)
    assert "Source: **board**" in md_path.read_text()


def test_read_until_times_out_with_the_tail():
    con = console.Console(FakeSerial(["no prompt here"]))
    con.write("x\n")
    with pytest.raises(console.ConsoleError, match="no prompt here"):
        con.read_until(console.PROMPT, timeout=0.3)


@pytest.mark.parametrize("url,banner,want", [
    ("socket://127.0.0.1:4000", "", "simulation"), ("/dev/pts/3", "", "simulation"),
    ("/dev/ttyUSB1", "", "board"), ("/dev/ttyUSB1", "lsmc firmware 2 (simulation, SIM_ARG 1)", "simulation")])
def test_source_of(url, banner, want):
    assert console.source_of(url, banner) == want


def test_board_report_bad_port(tmp_path, capsys):
    assert console.board_report_main(["--port", str(tmp_path / "nope"), "--out-dir", str(tmp_path)]) == 2
    assert "cannot open serial port" in capsys.readouterr().err
