"""Several compaction units in the full SoC: every unit reachable from the firmware at the
address SocMap gives it, an interrupt line per unit, units working at once on the DDR model (the
harness's AXI protocol checks on every port: a violation ends the run with status 4), the task
queue's round-robin dispatch in polling and interrupt modes, the CPU fallback after a unit error,
the console's `run` with runs and units, and the host-loaded job checked byte for byte against the
reference merge. One SoC build (2 units x 4 ways, a DDR port each) serves the module."""
import json
import re
import struct

import pytest

from lsmc import build
from lsmc.build import firmware
from lsmc.model import kb16
from lsmc.report import scaling as report
from lsmc.sim import scaling, soc

UNITS, WAYS = 2, 4
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sut():
    return soc.build_soc(units=UNITS, ways=WAYS), firmware.build_firmware()


def run(sut, tasks, tmp_path, **kw):
    exe, elf = sut
    return scaling.run_tasks(tasks, UNITS, WAYS, workdir=tmp_path, elf=elf, **kw)


def test_map_gives_every_unit_an_address_and_a_line(sut):
    """lsmc_soc.json (from SocMap, written by the module's SoC build) lists the unit slots; unit 0 keeps
    the one-unit SoC's IP and DMA addresses and IRQ line, the others have their own lines."""
    m = json.loads((build.GEN / f"soc_m{UNITS}k{WAYS}" / "lsmc_soc.json").read_text())
    regions = {r["name"]: r for r in m["regions"]}
    units = m["units"]
    assert units["max"] == 8 and units["stride"] == 0x1000
    assert regions["CIP_UNITS"]["base"] == regions["CIP"]["base"] + units["stride"]
    assert regions["DMA_UNITS"]["base"] == regions["DMA"]["base"] + units["stride"]
    assert units["cip_irq"][0] == m["irqs"]["CIP"]
    assert len(set(units["cip_irq"])) == units["max"]
    assert all(line < m["irq_lines"] for line in units["cip_irq"])
    assert not set(units["cip_irq"]) & {v for k, v in m["irqs"].items() if not k.startswith("CIP")}


def test_units_at_once_by_interrupt(sut, tmp_path):
    """Two 4-way tasks run side by side, one per unit, each ending on its unit's own interrupt; the
    outputs are byte-identical to the reference merge (host check of the dumped buffers)."""
    # 8,192 entries per unit: with 512-bit DDR ports a unit merges 2,048 in ~2,000 cycles, about the
    # firmware's own dispatch and interrupt cost, which would hide the overlap (measured 0.62 here)
    tasks = scaling.make_tasks(UNITS, WAYS, 16384)
    res = run(sut, tasks, tmp_path)
    assert res["exit"] == 0, res["uart"][-2000:]
    assert res["pass"] and res["status"] == 0
    assert res["units"] == UNITS and res["ways"] == WAYS  # found by probing ID and WAYS
    assert sorted(t["unit"] for t in res["tasks"]) == list(range(UNITS))
    assert all(t["irq_events"] >= 1 and t["state_text"] == "done" for t in res["tasks"])
    # side by side: the whole bracket is shorter than the two units' windows one after the other
    assert res["cycles"] < 0.8 * sum(t["hw_cycles"] for t in res["tasks"])
    # a DDR port per reader (lsmc.sim.soc.scaling_read_ports): each of the units' ports read its run, the
    # first of each unit also took the writes (the harness's per-port statistics, port 0 is the CPU's)
    per_unit = soc.scaling_read_ports(UNITS, WAYS)
    ports = {int(m[1]): (int(m[2]), int(m[3])) for m in
             re.finditer(r"^sim: ddr port (\d+): reads (\d+), writes (\d+)", res["stderr"], re.M)}
    assert sorted(ports) == list(range(1 + UNITS * per_unit)), sorted(ports)
    assert all(ports[n][0] > 0 for n in range(1, 1 + UNITS * per_unit)), ports
    assert [n for n in range(1, 1 + UNITS * per_unit) if ports[n][1]] == [1 + u * per_unit for u in range(UNITS)]
    assert "AXI protocol" not in res["stderr"]


def test_round_robin_polling(sut, tmp_path):
    """Five tasks of different sizes and runs (1..4) on two units, by polling: dispatch in queue
    order to the next free unit in round-robin order; every output right."""
    tasks = [scaling.make_task(k, n, seed=10 + i) for i, (k, n) in
             enumerate([(4, 1024), (2, 256), (3, 600), (1, 300), (4, 512)])]
    res = run(sut, tasks, tmp_path, poll=True)
    assert res["pass"], res["uart"][-2000:]
    t = res["tasks"]
    assert [x["seq"] for x in t] == [0, 1, 2, 3, 4]
    assert (t[0]["unit"], t[1]["unit"]) == (0, 1)
    # the small task 1 ends first: unit 1 is free, then unit 0 again (round robin from the last grant)
    assert t[2]["unit"] == 1
    assert all(x["irq_events"] == 0 for x in t)  # polling: no interrupt enabled
    assert res["irq"] == 0


def test_fallback_after_unit_error(sut, tmp_path):
    """A unit that reports an error (the task's unit programmed with group 1: BAD_GROUP) -> the CPU's
    C merge finishes the task, its output is still exact, and the fallback is counted and reported."""
    tasks = scaling.make_tasks(UNITS, WAYS, 1024, seed=3)
    tasks[1].fault = scaling.FAULT_BAD_GROUP
    res = run(sut, tasks, tmp_path)
    assert res["pass"], res["uart"][-2000:]
    assert res["fallbacks"] == 1 and res["failed"] == 0
    bad = res["tasks"][1]
    assert bad["state_text"] == "done_cpu" and bad["hw_rc"] == -1 and bad["err_code"] == 13
    assert "done on CPU (fallback)" in res["uart"] and "BAD_GROUP" in res["uart"]
    assert res["tasks"][0]["state_text"] == "done"


def test_malformed_run_fails_on_unit_and_cpu(sut, tmp_path):
    """A malformed run: the unit reports the error (naming the input), the C merge refuses it too, so
    the task fails and the job says so (status 11); the other task is unaffected."""
    tasks = scaling.make_tasks(UNITS, WAYS, 1024, seed=4)
    run2 = bytearray(tasks[0].runs[2])
    run2[16 * 5 + 3] |= 0x80  # a reserved header bit (31) of entry 5
    tasks[0].runs[2] = bytes(run2)
    res = run(sut, tasks, tmp_path)
    assert res["status"] == 11 and res["failed"] == 1 and not res["pass"]
    t = res["tasks"][0]
    assert t["state_text"] == "failed" and t["err_input"] == 2 and t["err_index"] == 5
    assert res["tasks"][1]["pass"]


def test_bad_descriptor_names_the_field(sut, tmp_path):
    exe, elf = sut
    img, _ = scaling.scale_image(scaling.make_tasks(1, 2, 64), units=UNITS + 1)
    (tmp_path / "job.bin").write_bytes(img)
    r = soc.run_soc(elf, arg=scaling.SCEN_SCALE, exe=exe, loads={firmware.DDR_BASE: tmp_path / "job.bin"})
    assert r.returncode == 10
    assert f"descriptor word 4 asks for {UNITS + 1} units, the SoC has {UNITS}" in r.uart


def test_console_run_runs_and_units(sut):
    """`run N` alone keeps its meaning (two runs, unit 0, Table III row); `run N ov G R U` runs U jobs
    of R runs on U units, cascading when R > K (6 runs on 4-way units), in both wait modes."""
    exe, elf = sut
    script = "run 256\nrun 1024 25 16 4 2\nrun 1536 25 16 6 2\nmode irq\nrun 1536 25 3 7 2\nrun 64 25 16 2 3\nexit 0\n"
    r = soc.run_soc(elf, arg=1, exe=exe, uart_in=script, uart_prompt="lsmc> ", max_cycles=400_000_000, timeout=1200)
    assert r.returncode == 0, r.uart[-3000:]
    out = r.uart
    assert "PASS" in out.split("run 1024")[0]  # the one-unit row
    lines = [ln for ln in out.splitlines() if ln.startswith("run: ") and " entries in " in ln]
    assert len(lines) == 3, out[-3000:]
    assert "one merge per unit" in lines[0] and "poll" in lines[0]
    assert "cascaded" in lines[1] and "cascaded" in lines[2] and "irq" in lines[2]
    assert all(ln.endswith("fallbacks=0 failed=0 PASS") for ln in lines), lines
    assert "run: U (units) must be 1..2 (units in this SoC)" in out


def test_reference_is_the_model(tmp_path):
    """The host's expectation is the model's K-way merge of exactly the runs it loads."""
    t = scaling.make_task(4, 400, seed=5)
    assert len(t.runs) == 4
    assert (t.merged, t.invalid) == kb16.merge_runs(t.runs, 16)
    img, bufs = scaling.scale_image([t])
    words = struct.unpack_from("<8I", img)
    assert words[0] == scaling.SCALE_MAGIC and words[5] == 1
    assert len(bufs) == 1 and bufs[0][1] >= len(t.merged)


def test_subcompaction_job_on_two_units(sut, tmp_path):
    """One 4-way merge split by key range into two sub-jobs (lsmc.model.split), one per unit: the
    parts' outputs stitched equal the unsplit reference merge byte for byte."""
    job = scaling.make_job(2, WAYS, 3000, seed=9)
    assert len(job.tasks) == 2 and len(job.keys) == 1
    res = run(sut, job.tasks, tmp_path, job=job)
    assert res["stitched_pass"] and res["pass"], res["uart"][-2000:]
    assert sorted(t["unit"] for t in res["tasks"]) == [0, 1]


def fw_split(sut, tmp_path, runs, group, parts, **kw):
    """One job that the firmware splits into `parts` (scale.c scale_split): the host's reference is the
    model's sub-compaction at the firmware's split keys (it decodes as the unsplit merge)."""
    merged, invalid = kb16.merge_runs(runs, group)
    ddr = kw.pop("ddr", "kcu105")
    task = scaling.make_fw_job(parts, scaling.Job(runs, merged, invalid, [], [], group), scaling.bank_stagger(ddr))
    res = run(sut, [task], tmp_path, group=group, use_units=parts, fw_check=False, split=True, ddr=ddr, **kw)
    return task, res


@pytest.mark.parametrize("ddr", ["kcu105", "fixed"])
def test_firmware_splits_and_stitches_one_job(sut, tmp_path, ddr):
    """The SoC takes ONE 4-way job, splits it into two parts at group-start keys, runs them on both units
    at once and closes each part where its unit wrote it: the result's segments, read in order, are
    byte-identical to the model's sub-compaction at the same keys, the invalid segments to the unsplit
    merge's stream. The result block states both brackets: the units' (first start to last end) and
    split + units + stitch; nothing is copied by the CPU. On kcu105 the split key moves one bank row in
    the largest run and lands on a group start of every run (no head); with `fixed` (no banks, no skew)
    some runs split inside a group: a re-encoded head, read by the DMA as the first of two segments."""
    base = scaling.make_workload(WAYS, 8192)
    task, res = fw_split(sut, tmp_path, base.runs, 16, UNITS, ddr=ddr)
    assert res["exit"] == 0 and res["status"] == 0, res["uart"][-2000:]
    assert res["pass"], res["uart"][-2000:]
    assert res["tasks"][0]["out_bytes"] == len(task.merged) and task.merged != b""
    seg = scaling.segment_inputs(task, (tmp_path / "job.bin").read_bytes(), 16, UNITS)
    assert res["copied"] == 0
    assert (seg["heads"] == 0) == (ddr == "kcu105"), seg  # both cases exercised
    assert len(res["out_segs"]) == len(res["inv_segs"]) == UNITS
    assert sum(n for _, n in res["out_segs"]) == len(task.merged)
    assert res["total_cycles"] >= res["cycles"] + res["split_cycles"] + res["stitch_cycles"] > res["cycles"] > 0
    assert "AXI protocol" not in res["stderr"]


@pytest.mark.parametrize("kind,group", [("prefix", 3), ("uniform", 16)])
def test_firmware_split_virtual_entries_and_odd_groups(sut, tmp_path, kind, group):
    """Keys that need virtual entries (a head re-encodes its first key in full) and an odd group size
    (tails that start at a 16-byte, not 32-byte, boundary: the DMA reads them as a lone second segment);
    more parts than units queue on the task queue. Polling mode. Nothing is copied."""
    import random

    from lsmc.model import workloads

    rng = random.Random(len(kind) * 31 + group)
    k0, k1 = workloads.make_runs(kind, 1500, 0.3, rng.randrange(1000))
    runs = [kb16.encode(k, group) for k in (k0, k1)]
    task, res = fw_split(sut, tmp_path, runs, group, 3, poll=True)
    assert res["pass"] and res["status"] == 0, res["uart"][-2000:]
    assert res["tasks"][0]["out_bytes"] == len(task.merged)
    seg = scaling.segment_inputs(task, (tmp_path / "job.bin").read_bytes(), group, 3)
    assert res["copied"] == 0 and seg["heads"] + seg["off_align"] > 0, seg


def test_firmware_split_cpu_fallback_joins_segments(sut, tmp_path):
    """Every part's unit refuses its job (the fault hook programs group 1): the CPU merges each part
    instead, joining the reader's two segments (head, then tail in place) in the work area first; the
    result is still the model's sub-compaction byte for byte."""
    from lsmc.model import workloads

    k0, k1 = workloads.make_runs("uniform", 1200, 0.3, 11)
    runs = [kb16.encode(k, 16) for k in (k0, k1)]
    merged, invalid = kb16.merge_runs(runs, 16)
    task = scaling.make_fw_job(UNITS, scaling.Job(runs, merged, invalid, [], [], 16), None)
    task.fault = scaling.FAULT_BAD_GROUP
    res = run(sut, [task], tmp_path, group=16, use_units=UNITS, fw_check=False, split=True, ddr="fixed")
    seg = scaling.segment_inputs(task, (tmp_path / "job.bin").read_bytes(), 16, UNITS)
    assert seg["heads"] > 0, seg  # a part with a two-segment input did fall back
    assert res["pass"] and res["status"] == 0, res["uart"][-2000:]
    assert res["fallbacks"] == UNITS and res["tasks"][0]["state_text"] == "done_cpu"


def test_sweep_small(sut, tmp_path):
    """The representative sweep of the default run: 1 and 2 units, 4 ways, 8,192 entries on the
    kcu105 DDR preset; rows as results/scaling.csv has them, every one PASS."""
    rows = report.sweep(cus_list=(1, 2), ways_list=(WAYS,), sizes=(8192,), units=UNITS, workdir=tmp_path,
                        log=lambda s: None)
    assert [r["cus"] for r in rows] == [1, 2]
    assert all(r["pass"] == "PASS" for r in rows)
    assert all(0 < r["fraction_of_bound"] <= 1 for r in rows)
    assert report.csv_text(rows).splitlines()[0] == ",".join(report.COLUMNS)


def test_two_units_faster_when_memory_allows(sut, tmp_path):
    """With the fixed-latency DDR model (no bandwidth limit) the same job split over two units takes
    at most 0.7 of one unit's cycles (0.51 at 131,072 entries): the SoC, the driver and the sub-jobs scale
    (docs/scaling.md)."""
    base = scaling.make_workload(WAYS, 8192)
    cyc = {}
    for cus in (1, 2):
        job = scaling.make_job(cus, WAYS, 8192, base=base)
        res = run(sut, job.tasks, tmp_path / f"c{cus}", ddr="fixed", use_units=cus, job=job, fw_check=False)
        assert res["pass"], res["uart"][-2000:]
        cyc[cus] = res["cycles"]
    assert cyc[2] <= 0.7 * cyc[1], cyc


@pytest.mark.long
def test_sweep_full(tmp_path):
    """`scripts/demo scaling`'s sweep on kcu105: its rows (1, 2, 4 units x 4, 2 ways x 8,192 ..
    262,144 entries), each exactly once, every one PASS (output byte-identical to its reference), within
    the DDR bound; at the largest size 4 units faster than 1 for each K. (The issue's 2x is not asserted:
    one unit runs at the IP's own rate and four share one DDR bus; docs/scaling.md gives the measured
    ratio, 1.99x for 4 ways.)"""
    rows = report.sweep(workdir=tmp_path, log=lambda s: None)
    want = {(c, k, n) for k in report.SWEEP_WAYS for n in report.SWEEP_SIZES for c in report.SWEEP_CUS}
    got = [(r["cus"], r["ways"], r["entries_in"]) for r in rows]
    assert sorted(got) == sorted(want)
    assert [r for r in rows if r["pass"] != "PASS"] == []
    assert all(0 < r["fraction_of_bound"] <= 1 for r in rows)
    big = max(report.SWEEP_SIZES)
    at = {(r["cus"], r["ways"]): r for r in rows if r["entries_in"] == big}
    for k in report.SWEEP_WAYS:
        assert at[4, k]["entries_per_cycle"] > at[1, k]["entries_per_cycle"], at
