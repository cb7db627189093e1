"""scripts/nand-report: CSV/Markdown contract and plausibility of the measured throughput."""
import csv
import subprocess
import sys


def test_report_mode5(tmp_path):
    res = subprocess.run([sys.executable, "-m", "lsmc", "nand-report", "--modes", "5", "--pages", "2",
                          "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(open(tmp_path / "nand.csv")))
    assert list(rows[0].keys()) == ["mode", "op", "targets", "bytes", "cycles", "mb_per_s", "bus_limit_mb_per_s",
                                    "efficiency"]
    by = {(r["op"], int(r["targets"])): r for r in rows}
    assert set(by) == {("read", 1), ("read", 2), ("program", 1), ("program", 2)}
    for r in rows:
        assert r["mode"] == "5" and float(r["bus_limit_mb_per_s"]) == 50.0
        assert 0 < float(r["mb_per_s"]) < 50.0
        assert float(r["efficiency"]) >= 0.95  # 2 cycles per byte at 100 MHz = tRC/tWC of mode 5
        assert int(r["bytes"]) == 2 * 2048 * int(r["targets"])
    # interleaving hides tPROG / tR of one target behind the other's transfers
    assert float(by[("program", 2)]["mb_per_s"]) > 1.6 * float(by[("program", 1)]["mb_per_s"])
    assert float(by[("read", 2)]["mb_per_s"]) > 1.15 * float(by[("read", 1)]["mb_per_s"])
    md = (tmp_path / "nand.md").read_text()
    assert "| 5 | 20 | read | 1 |" in md and "Interleaving two targets" in md


def test_report_bad_arguments(tmp_path):
    res = subprocess.run([sys.executable, "-m", "lsmc", "nand-report", "--modes", "7", "--out-dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "nand-report:" in res.stderr and "Traceback" not in res.stderr
