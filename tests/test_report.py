"""scripts/report: parsing of every input it reads (scripts/compact's last line, the firmware's TABLE3
block, results/table3.csv), and small end-to-end runs that must write well-formed files whose numbers
are the measured ones (a stand-in for the IP simulation with known cycles makes them checkable)."""
import csv
import math
import struct
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from lsmc import build
from lsmc.model import kb16
from lsmc.report import compare, table3
from lsmc.sim import ipsim

ROOT = Path(__file__).resolve().parents[1]
HEADER = "entries_in,entries_out,bytes_in,fw_cycles,hw_cycles,us_per_entry,mb_per_s,sw_cycles,pass"


# ---- scripts/compact's last line

def test_parse_compact_line():
    text = "building...\nsim: 1234 cycles\ncycles=9334 entries_in=512 entries_out=448 invalid=64\n\n"
    assert table3.parse_compact_line(text) == {"cycles": 9334, "entries_in": 512, "entries_out": 448,
                                               "invalid": 64}


@pytest.mark.parametrize("text", [
    "",
    "cycles=1 entries_in=2 entries_out=3 invalid=4\nerror: LENGTH at input 0 entry 3\n",  # not last
    "cycles=-1 entries_in=2 entries_out=3 invalid=4\n",
    "cycles=1 entries_in=2 entries_out=3\n",
    "cycles=1 entries_in=2 entries_out=3 invalid=4 extra=5\n",
])
def test_parse_compact_line_rejects(text):
    with pytest.raises(table3.ReportError):
        table3.parse_compact_line(text)


# ---- the firmware's TABLE3 block

def test_parse_table3_lines():
    text = textwrap.dedent(f"""\
        lsmc> bench
        entries  fw  hw ...
        TABLE3 {HEADER}
        TABLE3 512,448,8192,9334,600,0.182305,43.9,51200,PASS
        some console noise
        TABLE3 1024,900,16384,14814,1100,0.144668,110.6,102400,FAIL
        TABLE3 END
        lsmc> """)
    rows = table3.parse_table3_lines(text)
    assert rows == [
        dict(entries_in=512, entries_out=448, bytes_in=8192, fw_cycles=9334, hw_cycles=600,
             us_per_entry=0.182305, mb_per_s=43.9, sw_cycles=51200, **{"pass": True}),
        dict(entries_in=1024, entries_out=900, bytes_in=16384, fw_cycles=14814, hw_cycles=1100,
             us_per_entry=0.144668, mb_per_s=110.6, sw_cycles=102400, **{"pass": False}),
    ]
    assert table3.parse_table3_lines(f"TABLE3 {HEADER}\nTABLE3 2,2,32,5,4,0.025,64,9,1\nTABLE3 END\n")[0]["pass"]


@pytest.mark.parametrize("text,message", [
    ("no block here\n", "no TABLE3 block"),
    ("TABLE3 entries_in,fw_cycles\nTABLE3 END\n", "header"),
    (f"TABLE3 {HEADER}\nTABLE3 512,448,8192,9334,600,0.18,43.9,51200,PASS\n", "not terminated"),
    (f"TABLE3 {HEADER}\nTABLE3 512,448,8192,9334,600,0.18,43.9,PASS\nTABLE3 END\n", "8 fields"),
    (f"TABLE3 {HEADER}\nTABLE3 512,448,8192,x,600,0.18,43.9,1,PASS\nTABLE3 END\n", "bad fw_cycles"),
    (f"TABLE3 {HEADER}\nTABLE3 512,448,8192,9,600,0.18,43.9,1,MAYBE\nTABLE3 END\n", "bad pass"),
    (f"TABLE3 {HEADER}\nTABLE3 512,448,8192,9,-6,0.18,43.9,1,PASS\nTABLE3 END\n", "bad hw_cycles"),
])
def test_parse_table3_lines_rejects(text, message):
    with pytest.raises(table3.ReportError, match=message):
        table3.parse_table3_lines(text)


def test_parse_run_line():
    text = ("lsmc> run 65536\n"
            "entries_in=65536 entries_out=57344 bytes_in=1048576 fw_cycles=70000 hw_cycles=66000 "
            "us/entry=0.010681 MB/s=1497.97 sw_cycles=9000000 sw/fw=128.57 PASS\nlsmc> ")
    assert table3.parse_run_line(text) == dict(
        entries_in=65536, entries_out=57344, bytes_in=1048576, fw_cycles=70000, hw_cycles=66000,
        us_per_entry=0.010681, mb_per_s=1497.97, sw_cycles=9000000, **{"pass": True})
    with pytest.raises(table3.ReportError, match="no `run` result"):
        table3.parse_run_line("run: entries must be 2..65536\n")
    with pytest.raises(table3.ReportError, match="incomplete"):
        table3.parse_run_line("entries_in=4 entries_out=4 bytes_in=64 fw_cycles=9 PASS\n")
    with pytest.raises(table3.ReportError, match="bad sw_cycles"):
        table3.parse_run_line("entries_in=4 entries_out=4 bytes_in=64 fw_cycles=9 hw_cycles=5 us/entry=0.1 "
                              "MB/s=3.0 sw_cycles=lots sw/fw=1.0 FAIL\n")


CSV_HEADER = "width,bracket," + HEADER


def test_parse_ddr():
    assert table3.parse_ddr("sim: ddr fixed: read latency 20 cycles\nddr: fixed\nsim: exit 0\n") == "fixed"
    assert table3.parse_ddr("ddr: kcu105\n") == "kcu105"
    with pytest.raises(table3.ReportError, match="no `ddr: <preset>` line"):
        table3.parse_ddr("sim: exit 0\n")


def test_read_table3_csv(tmp_path):
    p = tmp_path / "table3.csv"
    p.write_text(f"{CSV_HEADER}\n32,paper,512,448,8192,9334,600,0.182305,43.9,51200,PASS\n"
                 "128,tight,512,448,8192,700,476,0.01367,1171.9,333000,1\n")
    rows = table3.read_table3_csv(p)   # a file from before the ddr column: the fixed model, the only one then
    assert (rows[0]["width"], rows[0]["bracket"], rows[0]["fw_cycles"], rows[0]["ddr"]) == (32, "paper", 9334, "fixed")
    p.write_text(f"{CSV_HEADER},ddr\n32,paper,512,448,8192,9334,600,0.182305,43.9,51200,PASS,kcu105\n")
    assert table3.read_table3_csv(p)[0]["ddr"] == "kcu105"
    p.write_text(f"{CSV_HEADER},ddr\n32,paper,512,448,8192,9334,600,0.182305,43.9,51200,PASS,k c\n")
    with pytest.raises(table3.ReportError, match="bad ddr value"):
        table3.read_table3_csv(p)
    assert (rows[1]["width"], rows[1]["bracket"], rows[1]["pass"]) == (128, "tight", True)
    p.write_text("entries_in,fw_cycles\n512,9334\n")
    with pytest.raises(table3.ReportError, match="columns"):
        table3.read_table3_csv(p)
    p.write_text(f"{HEADER}\n512,448,8192,9334,600,0.182305,43.9,51200,PASS\n")  # before width/bracket
    with pytest.raises(table3.ReportError, match="columns"):
        table3.read_table3_csv(p)
    p.write_text(f"{CSV_HEADER}\n64,paper,512,448,8192,9334,600,0.182305,43.9,51200,PASS\n")
    with pytest.raises(table3.ReportError, match="line 2: width '64'"):
        table3.read_table3_csv(p)
    p.write_text(f"{CSV_HEADER}\n32,paper,512,448,8192,9334,600,fast,43.9,51200,PASS\n")
    with pytest.raises(table3.ReportError, match="line 2: bad us_per_entry"):
        table3.read_table3_csv(p)
    p.write_text("")
    with pytest.raises(table3.ReportError, match="empty"):
        table3.read_table3_csv(p)


# ---- end to end, with a stand-in for the IP simulation whose cycle count is known

def _fake_ip(monkeypatch, mode="ok"):
    """Replaces lsmc.sim.ipsim.compact: the model's merge, HW_CYCLES = input entries + 40; `wrong` drops an
    entry, `crash` fails like a broken Verilator build."""
    def compact(run0, run1, group, width):
        if mode == "crash":
            raise build.BuildError("command failed (1): ./mill compaction.runMain\n"
                                   "[error] compaction.compile Compilation failed")
        out, inv = kb16.merge(run0, run1, group)
        if mode == "wrong":
            out = out[16:]
        return SimpleNamespace(out=out, invalid=inv, hw_cycles=(len(run0) + len(run1)) // 16 + 40,
                               violations=0, status="done", code_name="NONE")
    monkeypatch.setattr(ipsim, "compact", compact)


def _read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def test_quick_report_writes_well_formed_files(tmp_path, capsys, monkeypatch):
    _fake_ip(monkeypatch)
    soc_csv = tmp_path / "table3.csv"
    # SoC figures for the first size only, second size FAIL: the report must use the first, refuse the
    # second and say so; the third size has no SoC row at all.
    soc_csv.write_text(f"{CSV_HEADER},ddr\n128,tight,200,180,3200,900,260,0.045,355.6,40000,PASS,kcu105\n"
                       "128,tight,400,360,6400,1500,480,0.0375,426.7,80000,FAIL,kcu105\n"
                       "32,paper,600,525,9600,5000,2400,0.083,192,120000,PASS,kcu105\n")  # other configuration
    out = tmp_path / "results"
    rc = compare.main(["--sizes", "200", "400", "600", "--quick", "--leveldb-reps", "2", "--soc-csv",
                      str(soc_csv), "--out-dir", str(out)])
    assert rc == 0
    header, rows = _read_csv(out / "report.csv")
    assert header == ["entries_in", "ip_us_per_entry", "vexriscv_us_per_entry", "host_c_us_per_entry",
                      "leveldb_us_per_entry", "speedup_vs_leveldb", "ddr"]
    assert [r["ddr"] for r in rows] == ["kcu105", "", ""]  # the preset of the row's SoC figures
    assert [r["entries_in"] for r in rows] == ["200", "400", "600"]  # `short` keys: entries == keys
    for r in rows:
        n = int(r["entries_in"])
        assert float(r["ip_us_per_entry"]) == pytest.approx((n + 40) / 100 / n, rel=1e-5)
        assert float(r["host_c_us_per_entry"]) > 0 and float(r["leveldb_us_per_entry"]) > 0
        assert float(r["speedup_vs_leveldb"]) == pytest.approx(
            float(r["leveldb_us_per_entry"]) / float(r["ip_us_per_entry"]), rel=1e-3)
    assert float(rows[0]["vexriscv_us_per_entry"]) == pytest.approx(40000 / 100 / 200)
    assert rows[1]["vexriscv_us_per_entry"] == "" and rows[2]["vexriscv_us_per_entry"] == ""

    md = (out / "report.md").read_text()
    assert compare.cpu_model() in md
    assert "LevelDB | 1.23 (library), Debian package libleveldb-dev 1.23" in md
    assert "## The paper's own Table III (copied from the paper, not measured here)" in md
    assert "| 8192 | 131072 | 88247 | 0.107723 | 11.07× |" in md
    assert "the firmware reported FAIL for this size" in md
    assert "600 entries, soc: not measured — no TABLE3 row for 600 entries" in md
    assert "not by this run" in md  # SoC figures from a file are labelled as such
    assert "DDR preset `kcu105`" in md
    spread = [l for l in md.splitlines() if l.startswith("| 400 | ")][-1].split(" | ")
    assert all(float(v) > 0 for v in spread[1:8])  # LevelDB in RAM and on disk, best and median
    table = [l for l in md.splitlines() if l.startswith("| 200 | 3200 |")]
    assert len(table) == 1 and "| 240 | 0.012 | 900 | 0.045 | 2 |" in table[0]
    for png in ("report_us_per_entry.png", "report_speedup.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
        assert f"]({png})" in md
    assert "speed-up vs LevelDB" in capsys.readouterr().out


def test_report_never_uses_a_wrong_ip_output(tmp_path, monkeypatch):
    _fake_ip(monkeypatch, "wrong")
    out = tmp_path / "results"
    rc = compare.main(["--sizes", "100", "--leveldb-reps", "1", "--no-soc", "--no-leveldb-disk", "--out-dir", str(out)])
    assert rc == 0
    _, rows = _read_csv(out / "report.csv")
    assert rows[0]["ip_us_per_entry"] == "" and rows[0]["speedup_vs_leveldb"] == ""
    assert "differs from the reference merge" in (out / "report.md").read_text()


def test_report_states_a_broken_simulator_once(tmp_path, monkeypatch):
    _fake_ip(monkeypatch, "crash")
    out = tmp_path / "results"
    rc = compare.main(["--sizes", "100", "120", "--leveldb-reps", "1", "--no-soc", "--no-leveldb-disk",
                       "--out-dir", str(out)])
    assert rc == 0
    md = (out / "report.md").read_text()
    assert ("100 entries, ip: not measured — the IP simulation failed: command failed (1): ./mill "
            "compaction.runMain | "
            "[error] compaction.compile") in md
    assert "120 entries, ip: not measured — not run: the IP simulation failed at a smaller size" in md
    _, rows = _read_csv(out / "report.csv")
    assert all(r["ip_us_per_entry"] == "" for r in rows)


def test_report_rejects_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        compare.main(["--sizes", "1", "--out-dir", str(tmp_path)])
    assert e.value.code == 2
    assert compare.main(["--soc-csv", str(tmp_path / "missing.csv"), "--out-dir", str(tmp_path)]) == 2
    assert "missing.csv: cannot read: No such file or directory" in capsys.readouterr().err


def test_report_with_the_real_ip(tmp_path):
    """The IP column from the real IP simulation (Verilator build cached by lsmc.build)."""
    out = tmp_path / "results"
    rc = compare.main(["--sizes", "512", "--leveldb-reps", "1", "--no-soc", "--out-dir", str(out)])
    assert rc == 0
    _, rows = _read_csv(out / "report.csv")
    ip = rows[0]["ip_us_per_entry"]
    assert ip != "", (out / "report.md").read_text()
    # 128-bit IP: about one cycle per entry plus pipeline latency, far from a CPU's figures
    assert 0.005 < float(ip) < 0.1
    assert not math.isnan(float(rows[0]["speedup_vs_leveldb"]))


class _FakeSoc:
    """Stands in for lsmc.sim.soc: answers the host-loaded Table III (SIM_ARG 7) with a TABLE3 block for
    the jobs in the loaded image, or (fail) dies as a broken simulation would."""
    def __init__(self, fail=False):
        self.calls = []
        self.fail = fail

    def build_soc(self, width=128):
        self.width = width
        return Path("/nonexistent/Vsoc")

    def run_soc(self, elf, arg=0, loads=None, **kw):
        (img_path,) = loads.values()
        img = Path(img_path).read_bytes()
        words = struct.unpack("<88I", img[:352])
        n = words[4]
        self.calls.append((arg, words[3], n))
        sizes = [(words[8 + 10 * i + 1] + words[8 + 10 * i + 3]) // 16 for i in range(n)]

        class R:
            returncode = 0
            stderr = "sim: ddr fixed: read latency 20 cycles, no bandwidth limit\nddr: fixed\nsim: exit 0\n"
        if self.fail:
            R.uart, R.returncode = "bench: descriptor ... simulator died\n", 134
            return R
        R.uart = f"TABLE3 {HEADER}\n" + "".join(
            f"TABLE3 {e},{e - e // 8},{16 * e},{e + 1000},{e},0.0,0.0,{150 * e},1\n" for e in sizes) + "TABLE3 END\n"
        return R


def _use_fake_soc(monkeypatch, **kw):
    """compare.main with the SoC simulation, the IP simulator and the firmware build replaced."""
    from lsmc.build import firmware
    fake = _FakeSoc(**kw)
    monkeypatch.setattr(compare, "soc", fake)
    _fake_ip(monkeypatch)
    monkeypatch.setattr(firmware, "build_firmware", lambda *a, **k: Path("/nonexistent/lsmc.elf"))
    return fake


def test_report_runs_the_soc_on_its_own_jobs(tmp_path, monkeypatch):
    fake = _use_fake_soc(monkeypatch)
    out = tmp_path / "results"
    rc = compare.main(["--sizes", "512", "1024", "3000", "--soc-max", "2000", "--leveldb-reps", "1",
                      "--no-leveldb-disk", "--out-dir", str(out)])
    assert rc == 0
    assert fake.calls == [(7, 0, 2)] and fake.width == 128  # one simulation, tight bracket, sizes <= --soc-max
    _, rows = _read_csv(out / "report.csv")
    vex = {r["entries_in"]: r["vexriscv_us_per_entry"] for r in rows}
    assert float(vex["512"]) == pytest.approx(150 / 100, rel=1e-5)
    assert vex["3000"] == ""
    assert [r["ddr"] for r in rows] == ["fixed", "fixed", ""]  # the harness's `ddr:` line, carried through
    md = (out / "report.md").read_text()
    assert "full-SoC Verilator simulation run by this report on the same jobs (128-bit IP, tight" in md
    assert "3000 entries, soc: not measured — not simulated: above --soc-max 2000" in md
    row = [l for l in md.splitlines() if l.startswith("| 1024 | 16384 |")][0]
    assert "| 2024 | 0.01977 |" in row  # the fw-bracketed counter and its µs/entry
    lead = md.index("## Like for like: the same KB16 merge in C on one host core against the IP")
    assert lead < md.index("## Results") and "| 512 |" in md[lead:md.index("## Results")]


def test_report_says_when_the_soc_failed(tmp_path, monkeypatch):
    _use_fake_soc(monkeypatch, fail=True)
    out = tmp_path / "results"
    assert compare.main(["--sizes", "512", "--leveldb-reps", "1", "--no-leveldb-disk", "--out-dir", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "512 entries, soc: not measured — the SoC simulation gave no result (no TABLE3 block" in md
    assert "simulator exit 134" in md


def test_report_32_bit_runs_the_paper_bracket(tmp_path, monkeypatch):
    fake = _use_fake_soc(monkeypatch)
    out = tmp_path / "results"
    assert compare.main(["--sizes", "512", "9000", "--width", "32", "--leveldb-reps", "1", "--no-leveldb-disk",
                         "--out-dir", str(out)]) == 0
    from lsmc.build import firmware
    assert fake.calls == [(7, firmware.TABLE_FLAG_PAPER, 1)] and fake.width == 32
    assert "9000 entries, soc: not measured — not simulated: above --soc-max 8192" in (out / "report.md").read_text()
    assert "TABLE3 END" in (out / "report_soc_bench.log").read_text()


def test_demo_table3_markdown_and_csv(tmp_path):
    """results/table3.md puts the paper's counters beside (a) and (b) with ratios and says the paper's
    LevelDB figure is one constant; table3.csv leads with width and bracket and reads back."""
    from lsmc.report import demo

    def rows(scale):
        return [dict(entries_in=n, entries_out=n - n // 8, bytes_in=16 * n, fw_cycles=int(scale * n) + 100,
                     hw_cycles=int(scale * n), us_per_entry=(scale * n + 100) / 100 / n, mb_per_s=1.0,
                     sw_cycles=650 * n, pass_=True) for n in table3.TABLE3_SIZES]
    res = {}
    for key, scale in (((32, "paper"), 3.5), ((128, "tight"), 0.9)):
        res[key] = [{**{k: v for k, v in r.items() if k != "pass_"}, "pass": True} for r in rows(scale)]
    md = demo.table3_markdown(res, {k: "sim: 1 cycles in 1 s" for k in res}, 30.0, 40.0, "0.5")
    assert "| 8192 | 131072 | 88,247 | 28,772 | 0.326 | 7,472 | 0.0847 |" in md
    assert "one constant" in md and "1.1923, 1.1921, 1.1919, 1.1926, 1.1925" in md
    assert "(a) faithful reproduction **28,772**" in md and "(b) this project's design **7,472**" in md
    assert "30 s for both simulations at once" in md and "load average 0.5" in md
    csv_path = tmp_path / "table3.csv"
    with pytest.raises(table3.ReportError, match="DDR preset"):
        table3.table3_csv_text([{"width": 32, "bracket": "paper", **res[(32, "paper")][0]}])
    table3.write_table3_csv(csv_path, [{"width": k[0], "bracket": k[1], **r} for k in table3.CONFIGS for r in res[k]],
                            ddr="fixed")
    back = table3.read_table3_csv(csv_path)
    assert csv_path.read_text().splitlines()[0] == CSV_HEADER + ",ddr"
    assert {r["ddr"] for r in back} == {"fixed"}
    assert [(r["width"], r["bracket"]) for r in back] == [(32, "paper")] * 5 + [(128, "tight")] * 5
    assert back[4]["fw_cycles"] == 28772 and all(r["pass"] for r in back)
