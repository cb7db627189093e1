"""Sub-compaction parts on the full SoC's table-engine units side by side (`lsmc tables compact --backend soc
--parts P`, tables.elf SIM_ARG PARTS: the firmware plans the job from the tables' index blocks in DDR, writes a
descriptor a part and runs one a unit). A small db_bench-like job (compression off) in 2 parts must give the model's
parts (`table_model --parts 2`: the same split, tables byte for byte, the same per-part counts and bounds), and the
firmware's figures must hold together: the bracket is the longest unit's CYCLES, the whole job covers the bracket
and its plan, dispatch and gathering. All on one SoC build, the tests' preset (two units; the report's test uses it
too): each SoC build costs minutes of CPU."""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from te_rtl import SOC_TEST_PRESET, small_dbbench_job

from lsmc import tables
from lsmc.build import presets
from lsmc.sim import tables as te_tables

PRESET = SOC_TEST_PRESET


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return small_dbbench_job(tmp_path_factory)


def fields(line: str) -> dict:
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def soc_same_as_model(job, tmp_path, **kw) -> tuple[str, str]:
    """`job` in 2 parts on the SoC (soc_job's keywords `kw`) gives `table_model --parts 2`'s tables byte for byte;
    the SoC's (line, stderr)."""
    m = subprocess.run([str(tables.model_exe()), str(job), str(tmp_path / "model"), "--parts", "2"],
                       capture_output=True, text=True, timeout=600)
    assert m.returncode == 0, m.stderr
    rc, line, err = te_tables.soc_job(job, tmp_path / "soc", parts=2, preset=PRESET, **kw)
    assert rc == 0, err
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "soc")
    assert ok, verdict
    return line, err


def test_two_parts_same_as_model(job, tmp_path):
    line, _ = soc_same_as_model(job, tmp_path)
    parts = json.loads((tmp_path / "soc" / "result.json").read_text())["parts"]
    assert len(parts) == 2 and all(p["entries_in"] for p in parts) and parts[0]["hi"] == parts[1]["lo"]
    soc_line, last = line.splitlines()
    f = fields(soc_line)
    assert f["parts"] == 2 and f["units"] == 2
    assert f["bracket"] == max(p["cycles"] for p in parts) == fields(last)["cycles"]
    # the whole job: the plan and descriptors, the units side by side, the records gathered
    assert f["job_cycles"] == f["plan_cycles"] + f["dispatch_wait_cycles"] + f["collect_cycles"]
    assert f["bracket"] < f["dispatch_wait_cycles"] < f["job_cycles"]
    assert 0 < f["plan_cycles"] and 0 < f["collect_cycles"]


def test_each_unit_reads_and_writes_on_its_own_ddr_port(job, tmp_path):
    """The preset gives each unit two DDR ports of its own, its runs' reads split over them and its writes on the first
    (SocTableEngineConfig.readPortPerUnit, readPortsPerUnit, writePortPerUnit; the manifest's te_unit_ports and
    te_write_ports name them). On the kcu105 DDR model, whose per-port counts the harness prints, the 2-part job is
    still SAME as the model, each part's reads go through its own unit's ports (every one of them used; each unit a
    fair share: the plan balances the parts' bytes) and its writes through the first, and DMA port 0 carries none
    of the engine's traffic: the writes on the units' ports are at least the output's bytes."""
    from lsmc.sim import soc
    derived = presets.soc(PRESET).derived
    unit_ports = derived["te_unit_ports"]
    assert len(unit_ports) == 2 and all(len(p) == 2 for p in unit_ports) and 0 not in derived["te_read_ports"]
    assert derived["te_write_ports"] == [p[0] for p in unit_ports]
    _, err = soc_same_as_model(job, tmp_path, ddr="kcu105")
    word = int(re.search(r"^sim: ddr kcu105: \d+ native words of (\d+) B", err, re.M)[1])
    ports = soc.ddr_port_words(err)  # model port 1 + n is io_ddrDma<n>
    # per unit: its ports' reads, and the writes on its first port (none on the others)
    own = [(sum(ports.get(1 + n, (0, 0))[0] for n in p), ports.get(1 + p[0], (0, 0))[1]) for p in unit_ports]
    assert all(ports.get(1 + n, (0, 0))[1] == 0 for p in unit_ports for n in p[1:]), ports
    assert all(ports.get(1 + n, (0, 0))[0] > 0 for p in unit_ports for n in p), ports  # every read port used
    assert all(r > 0 and w > 0 for r, w in own), ports
    assert all(4 * r > sum(r for r, _ in own) for r, _ in own), ports  # each a quarter of the reads or more
    assert all(4 * w > sum(w for _, w in own) for _, w in own), ports  # and of the writes
    bytes_out = json.loads((tmp_path / "soc" / "result.json").read_text())["bytes_out"]
    assert sum(w for _, w in own) * word >= bytes_out > 0, (ports, bytes_out)
    assert ports.get(1, (0, 0)) == (0, 0), ports  # DMA port 0 (the CPU's records go through its own DDR port)


def test_more_parts_than_units_is_named(job, tmp_path):
    """More parts than any preset's units: refused by the host; more than the firmware's limit, or than the SoC build's
    units: refused by the firmware in one line (the exit status and the console's last lines in the error)."""
    with pytest.raises(tables.CliError, match="at most 4 table-engine units"):
        te_tables.soc_job(job, tmp_path / "x", parts=5)
    rc, _, err = te_tables.soc_job(job, tmp_path / "y", parts=5, preset=PRESET)
    assert rc == 1 and "parts 5: 1..4 (one a unit)" in err, err
    assert not (tmp_path / "y").exists()
    units = presets.soc(PRESET).derived["te_units"]
    rc, _, err = te_tables.soc_job(job, tmp_path / "z", parts=units + 1, preset=PRESET)
    assert rc == 1 and f"{units + 1} parts need {units + 1} table-engine units; this SoC build has {units}" in err, err
    assert not (tmp_path / "z").exists()


def test_host_planned_parts_same_as_model(job, tmp_path):
    """`--plan host`: the host plans (the unit harness's --parts: the model's PlanSubcompactions, a descriptor a part,
    a PARTS_HEAD at DDR_HOST_BASE) and tables.elf (SIM_ARG PARTS_HOST) only checks the head, runs the parts and gathers
    their records: the output is the model's, the same as the firmware's own plan gives, and the whole job is the
    bracket, dispatch and gathering with a plan of a few hundred clocks (the head's checks) instead of the
    firmware's tens of thousands."""
    line, _ = soc_same_as_model(job, tmp_path, plan="host")
    parts = json.loads((tmp_path / "soc" / "result.json").read_text())["parts"]
    model_parts = json.loads((tmp_path / "model" / "result.json").read_text())["parts"]
    assert [(p["lo"], p["hi"], p["tables_out"], p["entries_in"]) for p in parts] == \
        [(p["lo"], p["hi"], p["tables_out"], p["entries_in"]) for p in model_parts]
    soc_line, last = line.splitlines()
    f = fields(soc_line)
    assert "plan=host" in soc_line and float(re.search(r"plan_host_us=([\d.]+)", soc_line)[1]) > 0
    assert f["parts"] == 2 and f["units"] == 2
    assert f["bracket"] == max(p["cycles"] for p in parts) == fields(last)["cycles"]
    assert f["job_cycles"] == f["plan_cycles"] + f["dispatch_wait_cycles"] + f["collect_cycles"]
    assert 0 < f["plan_cycles"] < 5000 and f["bracket"] < f["dispatch_wait_cycles"] < f["job_cycles"]


def _host_parts_image(job, tmp_path):
    """The host-planned 2-part image of `job` (the unit harness's --image --parts 2) as a word array, its base."""
    from lsmc.build import regmap, table_engine_unit
    base = regmap.memmap().base("DDR_HOST")
    img = tmp_path / "image.bin"
    r = subprocess.run([str(table_engine_unit.build_harness(4)), str(job), str(tmp_path / "out"), "--base", str(base),
                        "--image", str(img), "--parts", "2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return bytearray(img.read_bytes()), base


@pytest.mark.parametrize("case", ["magic", "parts", "job", "desc", "bound", "part_desc"])
def test_bad_parts_head_is_named(job, tmp_path, case):
    """A malformed PARTS_HEAD, or a part descriptor the unit refuses: one line naming the word (or the unit's error
    with the part), the TABLES_* exit, the prompt back; never a hang or a run on memory outside DDR_HOST."""
    import struct

    from lsmc.build import facts, firmware
    from lsmc.sim import soc
    img, base = _host_parts_image(job, tmp_path)
    head, part = facts.layout("PARTS_HEAD"), facts.layout("PARTS_PART")
    hw, pw = len(head), len(part)

    def word(i, v=None):
        if v is None:
            return struct.unpack_from("<I", img, 4 * i)[0]
        struct.pack_into("<I", img, 4 * i, v)

    names = {n: i for i, n in enumerate(head)}
    pnames = {n: i for i, n in enumerate(part)}
    expect, status = {
        "magic": ("no PARTS_MAGIC version 1", "BAD_DESC"),
        "parts": ("3 parts need 3 table-engine units; this SoC build has 2", "ABSENT"),
        "job": (f"parts head word {names['job']}: the job's descriptor", "BAD_DESC"),
        "desc": (f"part 1 word {pnames['desc']}: descriptor", "BAD_DESC"),
        "bound": (f"part 0 word {pnames['hi_addr']}: a bound of 2000 bytes", "BAD_DESC"),
        "part_desc": ("tables: error=BAD_JOB unit=", "FAILED"),
    }[case]
    if case == "magic":
        word(names["magic"], 0)
    elif case == "parts":
        word(names["parts"], 3)
    elif case == "job":
        word(names["job"], base + 64)  # not a multiple of TE_DESC_ALIGN
    elif case == "desc":
        word(hw + pw + pnames["desc"], 0x1000)  # below DDR_HOST
    elif case == "bound":
        word(hw + pnames["hi_len"], 2000)
    else:  # part 1's descriptor with no runs: the unit's front end refuses it, the firmware names the part
        desc = (word(hw + pw + pnames["desc"]) - base) // 4
        word(desc + facts.te_layout("TE_DESC")["runs"][0], 0)
    (tmp_path / "bad.bin").write_bytes(bytes(img))
    elf = firmware.build_firmware().parent / "tables.elf"
    run = soc.run_soc(elf, arg=facts.scenarios("tables")["PARTS_HOST"], loads={base: tmp_path / "bad.bin"},
                      exe=te_tables.soc_exe(PRESET), timeout=600)
    assert expect in run.uart, run.uart[-2000:]
    if case == "part_desc":
        assert "part=1" in run.uart, run.uart[-2000:]
    assert run.returncode == facts.job_abi()["status"]["TABLES"][status][0], run.uart[-2000:]
    assert "tables: done" not in run.uart


def test_host_plan_names_a_bad_table(job, tmp_path):
    """The host's plan reads every input table's footer and index block: a table whose footer magic is broken stops
    it before the SoC runs, with the table named (the model's error line: code, table, byte offset), nothing
    written."""
    import shutil
    d = tmp_path / "job"
    shutil.copytree(job.parent, d)
    spec = json.loads((d / "job.json").read_text())
    name = spec["runs"][-1][0]
    t = d / name
    blob = bytearray(t.read_bytes())
    blob[-1] ^= 0xff  # the footer's magic
    t.write_bytes(bytes(blob))
    rc, _, err = te_tables.soc_job(d / "job.json", tmp_path / "out", parts=2, preset=PRESET, plan="host")
    assert rc == 1 and err.startswith("error=BAD_MAGIC") and name in err, err
    assert not (tmp_path / "out").exists()


def test_cli_plan_host(job, tmp_path, capsys):
    """`lsmc tables compact --backend soc --parts 2 --plan host` reaches the SoC's PARTS_HOST scenario: its line names
    the host's plan, and the tables are the ones the firmware's own plan gives."""
    base = ["compact", "--job", str(job), "--backend", "soc", "--parts", "2", "--soc-preset", PRESET]
    assert tables.main([*base, "--out-dir", str(tmp_path / "host"), "--plan", "host"]) == 0
    line = capsys.readouterr().out
    assert "plan=host plan_host_us=" in line and "parts=2" in line, line
    assert tables.main([*base, "--out-dir", str(tmp_path / "fw")]) == 0
    assert "plan=host" not in capsys.readouterr().out
    ok, verdict = tables.compare_dirs(tmp_path / "fw", tmp_path / "host")
    assert ok, verdict
