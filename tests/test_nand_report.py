"""scripts/nand-report: CSV/Markdown contract and plausibility of the measured throughput."""
import csv
import subprocess
import sys


def test_report_mode5(tmp_path):
    res = subprocess.run([sys.executable, "-m", "lsmc", "nand-report", "--modes", "5", "--pages", "2",
                          "--ecc-pages", "1", "--soc-pages", "0", "--out-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(open(tmp_path / "nand.csv")))
    assert list(rows[0].keys()) == ["mode", "op", "channels", "targets", "bytes", "cycles", "mb_per_s",
                                    "bus_limit_mb_per_s", "efficiency"]
    by = {(r["op"], int(r["targets"])): r for r in rows}
    assert set(by) == {("read", 1), ("read", 2), ("program", 1), ("program", 2)}
    for r in rows:
        assert r["mode"] == "sdr5" and r["channels"] == "1" and float(r["bus_limit_mb_per_s"]) == 50.0
        assert 0 < float(r["mb_per_s"]) < 50.0
        assert abs(float(r["efficiency"]) - float(r["mb_per_s"]) / 50.0) < 0.001  # the report's definition
        assert int(r["bytes"]) == 2 * 2048 * int(r["targets"])
    # interleaving hides tPROG / tR of one target behind the other's transfers
    assert float(by[("program", 2)]["mb_per_s"]) > 1.6 * float(by[("program", 1)]["mb_per_s"])
    assert float(by[("read", 2)]["mb_per_s"]) > 1.15 * float(by[("read", 1)]["mb_per_s"])
    md = (tmp_path / "nand.md").read_text()
    assert "| sdr5 | 20 | read | 1 |" in md and "Interleaving two targets" in md and "## BCH ECC" in md
    assert "| 100.0 % |" in md  # transfers at tRC/tWC of mode 5
    assert (tmp_path / "nand.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ecc = list(csv.DictReader(open(tmp_path / "nand_ecc.csv")))
    assert list(ecc[0].keys()) == ["ecc", "t", "bits_injected", "pages", "corrected", "uncorrectable", "miscorrected"]
    t = int(ecc[0]["t"])
    assert t >= 8 and [int(e["bits_injected"]) for e in ecc] == list(range(t + 3))
    for e in ecc:
        k, pages = int(e["bits_injected"]), int(e["pages"])
        assert int(e["miscorrected"]) == 0
        assert int(e["corrected" if k <= t else "uncorrectable"]) == pages


def test_report_nvddr5(tmp_path):
    """NV-DDR mode 5 rows: 200 MB/s bus limit (two bytes per 10 ns tCK), the bus at its limit during
    transfers, 4096-byte pages of the MT29F16G08ABABA."""
    res = subprocess.run([sys.executable, "-m", "lsmc", "nand-report", "--modes", "nvddr5", "--pages", "2",
                          "--ecc-pages", "0", "--channels", "2", "--seq-pages", "8", "--soc-pages", "0",
                          "--out-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(open(tmp_path / "nand.csv")))
    seq = {int(r["channels"]): r for r in rows if r["op"] == "cache_read"}
    cprog = {(int(r["channels"]), int(r["targets"])): r for r in rows if r["op"] == "cache_program"}
    rows = [r for r in rows if r["op"] in ("read", "program")]
    by = {(r["op"], int(r["targets"])): r for r in rows}
    assert set(by) == {("read", 1), ("read", 2), ("program", 1), ("program", 2)}
    for r in rows:
        assert r["mode"] == "nvddr5" and r["channels"] == "1" and float(r["bus_limit_mb_per_s"]) == 200.0
        assert abs(float(r["efficiency"]) - float(r["mb_per_s"]) / 200.0) < 0.001
        assert int(r["bytes"]) == 2 * 4096 * int(r["targets"])
    # tR 25 us + 21.6 us on the bus + the DMA per page: well above the SDR mode-5 bus limit of 50 MB/s
    assert 55 < float(by[("read", 1)]["mb_per_s"]) < float(by[("read", 2)]["mb_per_s"]) < 200
    # programs: tPROG 230 us per page and target bounds them at 4096 B / 230 us = 17.8 MB/s per target
    assert 0.8 * 17.8 < float(by[("program", 1)]["mb_per_s"]) < 17.8
    assert float(by[("program", 2)]["mb_per_s"]) > 1.8 * float(by[("program", 1)]["mb_per_s"])
    # cache program: the next page's transfer hides behind tPROG (2 pages per target: one transfer hidden)
    assert set(cprog) == {(1, 1), (1, 2), (2, 2)}
    for (ch, tg), r in cprog.items():
        assert float(by[("program", tg)]["mb_per_s"]) * ch < float(r["mb_per_s"]) < 17.8 * tg * ch
        assert float(r["bus_limit_mb_per_s"]) == 200.0 * ch
    md = (tmp_path / "nand.md").read_text()
    assert "| nvddr5 | 10 | read | 1 |" in md and md.count("| 100.0 % |") == 6  # 2 bytes per cycle in transfers
    # sequential cache reads, 2 ways x 8 pages per channel, on one channel and on two
    assert set(seq) == {1, 2}
    for ch, r in seq.items():
        assert r["mode"] == "nvddr5" and r["targets"] == "2" and int(r["bytes"]) == ch * 2 * 8 * 4096
        assert float(r["bus_limit_mb_per_s"]) == 200.0 * ch
        assert abs(float(r["efficiency"]) - float(r["mb_per_s"]) / (200.0 * ch)) < 0.001
        assert 0.8 < float(r["efficiency"]) < 4096 / 4320  # the first tR counts; spare bytes cross the bus too
    assert float(seq[2]["mb_per_s"]) > 1.98 * float(seq[1]["mb_per_s"])
    assert "## Sequential reads over channels" in md and "| nvddr5 | cache_read | 2 | 2 | 8 |" in md


def test_report_bad_arguments(tmp_path):
    res = subprocess.run([sys.executable, "-m", "lsmc", "nand-report", "--modes", "7", "--out-dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "nand-report:" in res.stderr and "Traceback" not in res.stderr
