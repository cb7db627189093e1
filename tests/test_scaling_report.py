"""The scaling report (lsmc/report/scaling.py, docs/scaling.md) on synthetic sweep rows: the CSV's columns
exactly, the DDR bound against the preset table (sim/common/ddr_presets.json, read independently here), the
issue's headline figure, the speed-up over LevelDB, and bad rows and files named in the error."""
from __future__ import annotations

import csv
import json
import struct

import pytest

from lsmc.build import facts
from lsmc.report import compare, paper, scaling
from lsmc.sim import ddr as ddr_model

COLUMNS = "cus,ways,entries_in,cycles,entries_per_cycle,ddr_bound_entries_per_cycle,fraction_of_bound,pass"


def _preset_row(name):
    """(sysMHz, nphases, dataBits) of a preset, read here without the module's reader."""
    p = next(p for p in json.loads(facts.DDR_PRESETS.read_text())["presets"] if p["name"] == name)
    return p["sysMHz"], p["nphases"], p["dataBits"]


def sweep(ddr="kcu105"):
    """Rows as `scripts/demo scaling` makes them: 1/2/4 units x ways 2/4 x two sizes."""
    rows = []
    for cus in (1, 2, 4):
        for ways in (2, 4):
            for n in (8192, 262144):
                cycles = int(n / min(0.95 * cus, 3.0)) + 500
                out = 16 * int(n * 0.8)
                inv = 4 * int(n * 0.2)
                rows.append(scaling.make_row(cus, ways, n, cycles, 16 * n, out, inv, passed=True, ddr=ddr))
    return rows


@pytest.mark.parametrize("ddr", ["kcu105", "arty", "boardsim"])
def test_bound_from_the_preset_table(ddr):
    mhz, phases, bits = _preset_row(ddr)
    peak = 2 * phases * bits / 8 * mhz * 1e6 / paper.clock_hz()
    assert scaling.peak_bytes_per_cycle(ddr) == pytest.approx(peak)
    r = scaling.make_row(4, 4, 1000, 400, 16_000, 12_800, 800, True, ddr=ddr)
    per_entry = (16_000 + 12_800 + 800) / 1000
    assert r["entries_per_cycle"] == pytest.approx(2.5)
    assert r["ddr_bound_entries_per_cycle"] == pytest.approx(peak / per_entry, abs=1e-4)
    assert r["fraction_of_bound"] == pytest.approx(2.5 / (peak / per_entry), abs=1e-4)
    assert r["pass"] == "PASS"


def test_kcu105_peak_is_80_bytes_per_soc_cycle():
    """64-bit DDR4 at 1:4 behind a 125 MHz controller: 64 B per controller clock, 80 B per 100 MHz cycle."""
    assert scaling.peak_bytes_per_cycle("kcu105", 100_000_000) == pytest.approx(80.0)


def test_writes_the_three_files(tmp_path):
    rows = sweep()
    rows[3] = {**rows[3], "pass": "FAIL"}
    leveldb = {8192: 0.21, 262144: 0.17}
    paths = scaling.write_results(rows, tmp_path, ddr="kcu105", conditions="Full SoC, 128-bit streams.",
                                  leveldb=leveldb)
    assert [p.name for p in paths] == ["scaling.csv", "scaling.md", "scaling.png"]
    text = (tmp_path / "scaling.csv").read_text()
    assert text.splitlines()[0] == COLUMNS
    with open(tmp_path / "scaling.csv") as f:
        got = list(csv.DictReader(f))
    assert len(got) == len(rows) and got[3]["pass"] == "FAIL"
    back = scaling.read_csv(tmp_path / "scaling.csv")
    assert back[0] == {k: rows[0][k] for k in COLUMNS.split(",")}
    md = (tmp_path / "scaling.md").read_text()
    assert "DDR preset `kcu105`" in md and "100 MHz" in md and "Full SoC, 128-bit streams." in md
    assert "11 of 12 rows PASS" in md
    # the headline: 4 units, largest size, fraction of the bound, over one unit, over LevelDB
    h = scaling.headline(back)
    four = max((r for r in back if r["cus"] == 4 and r["entries_in"] == 262144), key=lambda r: r["entries_per_cycle"])
    one = next(r for r in back if r["cus"] == 1 and r["ways"] == four["ways"] and r["entries_in"] == 262144)
    assert h["row"] == four and h["over_one"] == pytest.approx(four["entries_per_cycle"] / one["entries_per_cycle"])
    x = leveldb[262144] / (four["cycles"] / 100 / 262144)
    assert f"{x:,.1f}x LevelDB 1.23" in md
    assert f"{four['fraction_of_bound']:.1%} of the DDR bound" in md
    assert scaling.read_ddr(tmp_path / "scaling.md") == "kcu105"
    png = (tmp_path / "scaling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_bad_rows_and_files(tmp_path):
    with pytest.raises(scaling.ScalingError, match="cycles must be a positive integer"):
        scaling.make_row(1, 2, 100, 0, 1600, 1600, 0, True)
    with pytest.raises(scaling.ScalingError, match="DDR preset 'fixed' has no bandwidth"):
        scaling.make_row(1, 2, 100, 100, 1600, 1600, 0, True, ddr="fixed")
    with pytest.raises(scaling.ScalingError, match="no scaling rows"):
        scaling.write_results([], tmp_path)
    with pytest.raises(scaling.ScalingError, match="lacks pass"):
        scaling.write_results([{k: 1 for k in COLUMNS.split(",")[:-1]}], tmp_path)
    assert not (tmp_path / "scaling.csv").exists()
    p = tmp_path / "scaling.csv"
    p.write_text("cus,ways\n1,2\n")
    with pytest.raises(scaling.ScalingError, match="columns"):
        scaling.read_csv(p)
    p.write_text(COLUMNS + "\n1,2,100,x,1,1,1,PASS\n")
    with pytest.raises(scaling.ScalingError, match="line 2"):
        scaling.read_csv(p)
    p.write_text(COLUMNS + "\n1,2,100,100,1,1,1,maybe\n")
    with pytest.raises(scaling.ScalingError, match="field pass"):
        scaling.read_csv(p)
    with pytest.raises(scaling.ScalingError, match="cannot read"):
        scaling.read_csv(tmp_path / "missing.csv")
    assert scaling.read_ddr(tmp_path / "missing.md") == "unstated"


def test_report_includes_the_scaling_rows(tmp_path, monkeypatch):
    """`scripts/report` (compare.write_markdown) appends results/scaling.csv's rows when it exists."""
    scaling.write_results(sweep("arty"), tmp_path, ddr="arty")
    cfg = compare.Config(sizes=[], out_dir=tmp_path)
    meta = {"command": "lsmc report", "date": "today", "elapsed": 1.0, "leveldb_where": "/dev/shm",
            "labels": {k: k for k in ("cpu", "cores", "os", "leveldb", "compiler", "workload", "clock")},
            **{k: "x" for k in ("cpu", "cores", "os", "leveldb", "compiler", "workload", "clock")}}

    class Out:
        def add(self, path, text):
            self.text = text
    out = Out()
    compare.write_markdown(cfg, [], "not run", [], meta, tmp_path / "report.md", [], out)
    assert "## Scaling (from scaling.csv, not measured by this run): compaction units x ways (DDR preset `arty`" \
        in out.text
    assert "| 4 | 4 | 262,144 |" in out.text
    (tmp_path / "scaling.csv").unlink()
    compare.write_markdown(cfg, [], "not run", [], meta, tmp_path / "report.md", [], out)
    assert "Scaling" not in out.text


def test_leveldb_for_sizes_keys_by_entries(monkeypatch):
    """The LevelDB figures are keyed by the workload's entries (== keys for kind short) and timed on the
    very keys `kb16 gen` makes (a stand-in for the LevelDB program records what it was given)."""
    from lsmc.model import workloads
    seen = []
    monkeypatch.setattr(scaling, "leveldb_us_per_entry", lambda k0, k1, reps: seen.append((k0, k1)) or 0.25)
    got = scaling.leveldb_for_sizes([512, 2048], kind="short", overlap=0.25, seed=1)
    assert got == {512: 0.25, 2048: 0.25}
    assert seen[1] == workloads.make_runs("short", 2048, 0.25, 1)


def test_buffers_start_in_successive_banks():
    """scale_image(stagger=bank_geometry(preset)): the streamed buffers (runs, outputs) of a task-queue
    job start in banks 0, 1, 2, ... of the preset's ROW_BANK_COL mapping (docs/scaling.md, "Buffers
    across banks"); the expected results (not streamed) are not staggered; `fixed` has no banks."""
    from lsmc.sim import scaling as sim

    assert ddr_model.bank_geometry("kcu105") == (8192, 8)    # 64-byte native word x 128 columns, 8 banks
    assert ddr_model.bank_geometry("arty") == (2048, 8)
    with pytest.raises(ddr_model.DdrError, match="fixed"):
        ddr_model.bank_geometry("fixed")
    assert sim.bank_stagger("fixed") is None and sim.bank_stagger("kcu105") == (8192, 8)
    tasks = sim.make_tasks(2, 4, 2048)
    img, bufs = sim.scale_image(tasks, stagger=(8192, 8))
    words = struct.unpack_from("<48I", img, 4 * sim.TASK0)
    streamed = []
    for t in range(2):
        w = words[sim.TASK_WORDS * t:sim.TASK_WORDS * (t + 1)]
        streamed += [w[2 + 2 * k] for k in range(4)] + [w[14], w[16]]
    banks = [(sim.firmware.DDR_BASE + off) // 8192 % 8 for off in streamed]
    assert banks == [i % 8 for i in range(12)], banks


def test_split_job_runs_start_units_banks_apart():
    """A split job (one task the firmware splits into M parts, moving split j by j bank rows): run i
    starts in bank M i, so part j's reader of run i starts in bank M i + j (mod 8) and the K x M readers
    spread evenly over the banks (docs/scaling.md, "Buffers across banks")."""
    from collections import Counter

    from lsmc.sim import scaling as sim

    task = sim.make_tasks(1, 4, 4096)[0]
    for m in (1, 2, 4):
        img, _ = sim.scale_image([task], units=m, stagger=(8192, 8), split=True)
        banks = [(sim.firmware.DDR_BASE + off) // 8192 % 8 for off in sim.run_offsets(img)]
        assert banks == [m * i % 8 for i in range(4)], (m, banks)
        readers = Counter((b + j) % 8 for b in banks for j in range(m))
        assert max(readers.values()) == -(-4 * m // 8), (m, readers)


def test_refresh_committed_rows_and_docs_table(tmp_path):
    """The full sweep refreshes the committed CSV and the docs table between the markers, nothing else
    of the page; a page without the markers is refused and neither file changes."""
    rows = sweep()
    page, data = tmp_path / "scaling.md", tmp_path / "rows.csv"
    page.write_text(f"intro\n{scaling.TABLE_BEGIN}\nold table\n{scaling.TABLE_END}\nafter\n")
    assert scaling.refresh_committed(rows, data, page) == [data, page]
    assert scaling.read_csv(data) == scaling.read_csv(io_csv(tmp_path, rows))
    text = page.read_text()
    assert text.startswith(f"intro\n{scaling.TABLE_BEGIN}\n\n" + scaling.units_table(rows))
    assert text.endswith(f"{scaling.TABLE_END}\nafter\n") and "old table" not in text
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    with pytest.raises(scaling.ScalingError, match="bare.md: no table markers"):
        scaling.refresh_committed(rows, tmp_path / "other.csv", bare)
    assert not (tmp_path / "other.csv").exists() and bare.read_text() == "no markers\n"


def io_csv(tmp_path, rows):
    p = tmp_path / "direct.csv"
    p.write_text(scaling.csv_text(rows))
    return p


def test_units_table_from_rows():
    """docs/scaling.md's table: one line per (ways, size), K 4 before K 2, each unit count's e/c with its
    fraction of the bound, the 4-unit / 1-unit ratio recomputed here from the rows."""
    rows = sweep()
    text = scaling.units_table(rows)
    lines = text.splitlines()
    assert lines[0] == "| entries | K | 1 unit | 2 units | 4 units | 4 units / 1 unit |"
    assert [tuple(ln.split(" | ")[:2]) for ln in lines[2:]] == [
        ("| 8,192", "4"), ("| 262,144", "4"), ("| 8,192", "2"), ("| 262,144", "2")]
    r1 = next(r for r in rows if (r["cus"], r["ways"], r["entries_in"]) == (1, 2, 262144))
    r4 = next(r for r in rows if (r["cus"], r["ways"], r["entries_in"]) == (4, 2, 262144))
    cells = lines[-1].strip("| ").split(" | ")
    assert cells[2] == f"{r1['entries_per_cycle']:.3f} ({r1['fraction_of_bound'] * 100:.1f} %)"
    assert cells[-1] == f"{r4['entries_per_cycle'] / r1['entries_per_cycle']:.2f}x"
    with pytest.raises(scaling.ScalingError, match="no rows"):
        scaling.units_table([])


def test_docs_table_is_the_results():
    """The sweep's table in docs/scaling.md is generated from the last full sweep's rows, kept as
    lsmc/data/scaling_sweep.csv (results/ is not in git: a fresh clone has none): a re-run sweep copies
    its results/scaling.csv there, and a changed figure fails here until the page is regenerated."""
    from lsmc.paths import ROOT

    rows = scaling.read_csv(ROOT / "lsmc" / "data" / "scaling_sweep.csv")
    assert rows and all(r["pass"] == "PASS" for r in rows)
    assert scaling.units_table(rows) in (ROOT / "docs" / "scaling.md").read_text(), \
        "docs/scaling.md: paste lsmc.report.scaling.units_table(read_csv('lsmc/data/scaling_sweep.csv'))"
