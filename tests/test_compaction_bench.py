"""scripts/bench: runs, checks every output against the model, writes its reports, and the IP meets
the throughput targets (cycle counts are deterministic, so the targets are exact checks)."""
import csv
import subprocess
import sys

import pytest

from lsmc.sim import ipsim

ROOT = ipsim.ROOT
TARGETS = {128: 1.15, 32: 4.3}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    for w in ipsim.WIDTHS:
        ipsim.build(w)
    out = tmp_path_factory.mktemp("bench")
    res = subprocess.run([sys.executable, "-m", "lsmc", "bench", "--out-dir", str(out)],
                         capture_output=True, text=True, timeout=900)
    with open(out / "bench.csv") as f:
        rows = list(csv.DictReader(f))
    return res, rows, out


def test_bench_runs_and_outputs_match_model(bench):
    res, rows, out = bench
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(rows) == 2 * 2 * 5                      # kinds x widths x sizes
    assert all(r["ok"] == "True" for r in rows)
    md = (out / "bench.md").read_text()
    assert "Table A" in md and "Table B" in md and md in res.stdout


def test_bench_table_layout(bench):
    _, rows, _ = bench
    short = [r for r in rows if r["kind"] == "short"]
    assert sorted({int(r["keys"]) for r in short}) == [512, 1024, 2048, 4096, 8192]
    for r in short:       # kind short: one entry per key, 16 bytes per entry
        assert int(r["entries_in"]) == int(r["keys"]) and int(r["bytes_in"]) == 16 * int(r["keys"])
        assert int(r["entries_out"]) == int(r["keys"]) - int(r["invalid"])
        cyc = int(r["cycles"])
        assert abs(float(r["cycles_per_out_entry"]) - cyc / int(r["entries_out"])) < 1e-3
        assert abs(float(r["us_per_in_entry"]) - cyc / 100 / int(r["entries_in"])) < 1e-3
    uniform = [r for r in rows if r["kind"] == "uniform"]
    assert uniform and all(int(r["entries_in"]) > int(r["keys"]) for r in uniform)


@pytest.mark.parametrize("width", ipsim.WIDTHS)
def test_throughput_targets(bench, width):
    _, rows, _ = bench
    r = next(r for r in rows if r["kind"] == "short" and int(r["width"]) == width and int(r["keys"]) == 8192)
    cpe = float(r["cycles_per_out_entry"])
    assert cpe <= TARGETS[width], f"{width} bit: {cpe:.3f} cycles per output entry > {TARGETS[width]}"
    # the IP's own window and the harness's agree, and nothing beats one beat per clock
    assert abs(int(r["cycles"]) - int(r["sim_cycles"])) <= 2
    assert int(r["cycles"]) >= int(r["entries_out"]) * (128 // width)


def test_cycle_counts_are_deterministic(bench):
    _, rows, _ = bench
    r0, r1 = ipsim.encoded_runs("short", 2048, 0.25, 2024, 16)
    again = ipsim.run_jobs([ipsim.Job(r0, r1, 16, seed=2024)], width=128)[0]
    row = next(r for r in rows if r["kind"] == "short" and r["width"] == "128" and r["keys"] == "2048")
    assert again.hw_cycles == int(row["cycles"])


@pytest.mark.parametrize("width", ipsim.WIDTHS)
def test_one_entry_per_clock_whatever_the_mix(width):
    """Every kind (virtual entries, pads at small G, long prefixes), every overlap: the job takes at
    most 1.15x the cycles of its busiest stream at one entry (128 bit) / four words (32 bit) per clock."""
    jobs, meta = [], []
    for kind in ("short", "uniform", "long", "prefix", "ycsb"):
        for g in (2, 3, 16, 256):
            for overlap in (0.0, 1.0):
                r0, r1 = ipsim.encoded_runs(kind, 4096, overlap, 3, g)
                jobs.append(ipsim.Job(r0, r1, g))
                meta.append(f"{kind} G={g} overlap={overlap}")
    slow = []
    for job, name, r in zip(jobs, meta, ipsim.run_jobs(jobs, width=width)):
        assert ipsim.model_problems(job, r) == [], name
        busiest = max(len(r.out), len(job.run0), len(job.run1)) // 16 * (128 // width)
        if r.hw_cycles > 1.15 * busiest:
            slow.append(f"{name}: {r.hw_cycles} cycles for {busiest} beats on the busiest stream")
    assert not slow, "\n".join(slow)
