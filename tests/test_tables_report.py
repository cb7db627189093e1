"""The table engine's report (lsmc.report.tables, `scripts/demo tables`) on small jobs: every case and back
end gives a row judged against LevelDB's own code (the reference compactor), the CSV has the report's
columns, and a table that differs from the reference's fails its row."""
import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
from te_rtl import SOC_TEST_PRESET

from lsmc.report import tables as report

ENTRIES = 300  # per run: a few 100 kB a job


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    rows, paths = report.run(out, entries=ENTRIES, log=lambda s: None, soc_preset=SOC_TEST_PRESET)
    return rows, paths


def test_every_case_and_back_end_passes(small_report):
    rows, paths = small_report
    got = [(r["workload"], r["compression"], r["backend"], r["units"]) for r in rows]
    want = []
    for w, c in report.CASES:
        want += [(w, c, "rtl", 1)]
        want += [(w, c, "model (MODELLED)", u) for u in report.UNITS]
        # the test SoC has 2 units; the firmware plans on raw index blocks, so Snappy jobs run whole on one
        want += [(w, c, "soc", u) for u in ((1, 2) if c == "none" else (1,))]
        want += [(w, c, "soc (host plan)", 2)]  # the host plans the parts, on Snappy index blocks too
    assert got == want
    assert all(r["pass"] == "PASS" for r in rows), rows
    with paths[0].open() as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == report.COLUMNS
        assert len(list(reader)) == len(rows)
    for r in rows:
        # one unit's bracket is the whole job in the model and the RTL; on the SoC the firmware's job holds it
        assert r["cycles"] <= r["job_cycles"] and (r["units"] > 1 or r["backend"] == "soc"
                                                   or r["cycles"] == r["job_cycles"])
        assert 0 < r["fraction_of_bound"] < 1 and r["leveldb_cpu_mb_per_s"] > 0
        assert r["mb_per_s"] == pytest.approx(r["bytes_in"] / (r["job_cycles"] / 1e8) / 1e6, rel=1e-3)
    # the host's plan leaves the firmware the dispatch: the whole job nearer its bracket than the firmware's own plan
    for w, c in report.CASES:
        own, host = ([r for r in rows if (r["workload"], r["compression"], r["backend"], r["units"]) == (w, c, b, 2)]
                     for b in ("soc", "soc (host plan)"))
        if own:  # (Snappy jobs: the firmware's plan needs raw index blocks, so no own row)
            assert host[0]["job_cycles"] - host[0]["cycles"] < own[0]["job_cycles"] - own[0]["cycles"], (own, host)
    # The back ends read the same input; one unit writes the reference's very bytes with compression off.
    by_case = {}
    for r in rows:
        by_case.setdefault((r["workload"], r["compression"]), set()).add(r["bytes_in"])
        if r["compression"] == "none" and r["units"] == 1:
            by_case.setdefault(("out", r["workload"]), set()).add(r["bytes_out"])
    assert all(len(v) == 1 for v in by_case.values()), by_case
    text = paths[1].read_text()
    assert "MODELLED" in text and "100 MHz" in text and "kcu105" in text
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_changed_table_fails_its_row(tmp_path, monkeypatch):
    real = report._run

    def tampered(exe, job, out, parts=None):
        r = real(exe, job, out, parts)
        first = sorted(Path(out).glob("*.ldb"))[0]
        data = bytearray(first.read_bytes())
        data[100] ^= 0x01
        first.write_bytes(bytes(data))
        return r

    monkeypatch.setattr(report, "_run", tampered)
    rows = report.case_rows("dbbench", "none", tmp_path, ENTRIES, backends=("model",), units=(1,), log=lambda s: None)
    assert [r["pass"] for r in rows] == ["FAIL"]


def test_demo_refuses_a_bad_entries_option():
    res = subprocess.run([sys.executable, "-m", "lsmc", "demo", "tables", "--entries", "0"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and re.search(r"--entries.*0", res.stderr) and "Traceback" not in res.stderr
