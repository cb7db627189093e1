"""A table-engine unit (hw/ip/table_engine/rtl/TableEngineUnit.scala: the engine behind its register front end,
APB3 registers from regif) in Verilator, driven as a CPU drives it: the job's descriptor, table lists and walker
load in simulated memory (te_job.json's layouts), DESC_ADDR and CTRL.GO over APB, the interrupt, STATUS and the
TE_OUT records. Against the engine's C++ model (byte-exact with LevelDB 1.23's compaction): the output tables
must compare SAME with and without random stalls and after a soft reset; a malformed table gives the model's
error code, table and offset; Snappy and filter jobs give the model's tables; a malformed descriptor and a
result area too small give the front end's named error, never a hang. The harness:
hw/ip/table_engine/dv/te_unit_harness.cpp (doc/table_engine_soc.md)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from te_rtl import make_jobs

from lsmc import tables
from lsmc.build import facts
from lsmc.build import table_engine_unit as unit

JOBS = {
    "dbbench": ("dbbench", ["--entries", "1500"]),
    "non-base": ("non-base", ["--entries", "1500"]),
    "key64": ("key64", ["--entries", "800"]),
    "grandparents": ("grandparents", ["--entries", "1500"]),
}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return make_jobs(tmp_path_factory.mktemp("jobs"), JOBS)


@pytest.fixture(scope="module")
def model():
    return tables.model_exe()


def run(job: Path, out: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(unit.build_harness(4)), str(job), str(out), *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def model_run(model: Path, job: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(model), str(job), str(out)], capture_output=True, text=True, timeout=600)


def error_fields(text: str) -> str:
    line = text.strip().splitlines()[-1]
    return " ".join(line.split(" ")[:3])


@pytest.mark.parametrize("name,args", [("dbbench", []), ("dbbench", ["--stall", "0.3", "--seed", "5"]),
                                       ("non-base", ["--stall", "0.2"]), ("key64", ["--latency", "100"]),
                                       ("grandparents", ["--stall", "0.3", "--twice"])])
def test_same_as_model(jobs, model, tmp_path, name, args):
    """The unit's tables, file boundaries and result.json are the model's; the whole job (CYCLES) holds the
    engine's own clocks (ENGINE_CYCLES) and a few more for the descriptor, the load and the records."""
    m = model_run(model, jobs[name], tmp_path / "model")
    assert m.returncode == 0, m.stderr
    r = run(jobs[name], tmp_path / "unit", *args)
    assert r.returncode == 0, r.stderr
    *_, eng, line = r.stdout.strip().splitlines()
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "unit")
    assert ok, verdict
    cycles = int(line.split()[0].split("=")[1])
    engine_cycles = int(eng.split("=")[1])
    assert 0 < engine_cycles < cycles < engine_cycles + 2000


@pytest.mark.parametrize("kind", ["magic", "crc"])
def test_malformed_table(jobs, model, tmp_path, kind):
    """A bad magic, or a flipped byte with verify_checksums (the descriptor's TE_F_VERIFY): the model's error code,
    table and offset from STATUS and ERR_TABLE / ERR_OFFSET; nothing written."""
    d = tmp_path / "job"
    shutil.copytree(jobs["dbbench"].parent, d)
    job = json.loads((d / "job.json").read_text())
    t = d / job["runs"][1][0]
    blob = bytearray(t.read_bytes())
    if kind == "magic":
        blob[-1] ^= 0x40
    else:
        blob[len(blob) // 3] ^= 0x01
        job["options"]["verify_checksums"] = True
    t.write_bytes(bytes(blob))
    (d / "job.json").write_text(json.dumps(job))
    m = model_run(model, d / "job.json", tmp_path / "model")
    r = run(d / "job.json", tmp_path / "unit", "--stall", "0.2")
    assert m.returncode == 1 and r.returncode == 1, (m.stderr, r.stderr)
    assert error_fields(r.stderr) == error_fields(m.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "unit").exists()


def desc_word(field: str, i: int = 0) -> int:
    return facts.te_layout("TE_DESC")[field][0] + i


@pytest.mark.parametrize("field,value", [
    ("magic", 0x12345678), ("version", 1), ("runs", 0), ("runs", 9), ("flags", 1 << 7),
    ("restart_interval", 0), ("max_file_size", 0), ("out_base", 0x10000008), ("result_addr", 0x10000010),
    ("loads_count", 0), ("tables_count", 0), ("tables_addr", 0x10000004),
    # the index spill region (the harness gives one): off the beat, or ending past 2^32 - 1
    ("spill_base", 0x10000008), ("spill_bytes", 0xfffffff0)])
def test_malformed_descriptor(jobs, tmp_path, field, value):
    """A descriptor word the front end refuses: BAD_JOB, unit FRONT, the field's byte in the descriptor; the
    engine never sees the job."""
    word = desc_word(field, 1 if field.startswith("tables_") else 0)
    r = run(jobs["dbbench"], tmp_path / "unit", "--desc", f"{word}={value}")
    assert r.returncode == 1
    assert error_fields(r.stderr) == f"error=BAD_JOB table={jobs['dbbench']} offset={4 * word}", r.stderr
    assert "front end" in r.stderr and not (tmp_path / "unit").exists()


def test_snappy_and_filter_same_as_model(model, tmp_path):
    """Snappy tables in and out (TE_F_SNAPPY) with a bloom filter block (bloom_bits_per_key 10): the model's
    tables; bits per key over the engine's 8-bit field are refused, the word named."""
    d = tmp_path / "job"
    assert tables.main(["make", str(d), "--workload", "dbbench", "--compression", "snappy", "--bloom-bits", "10",
                        "--entries", "800"]) == 0
    m = model_run(model, d / "job.json", tmp_path / "model")
    assert m.returncode == 0, m.stderr
    r = run(d / "job.json", tmp_path / "unit", "--stall", "0.2")
    assert r.returncode == 0, r.stderr
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "unit")
    assert ok, verdict
    job = json.loads((d / "job.json").read_text())
    job["options"]["bloom_bits_per_key"] = 256
    (d / "job.json").write_text(json.dumps(job))
    r = run(d / "job.json", tmp_path / "unit2")
    word = desc_word("bloom_bits_per_key")
    assert error_fields(r.stderr) == f"error=BAD_JOB table={d / 'job.json'} offset={4 * word}", r.stderr


def test_result_area_full(jobs, model, tmp_path):
    """A result area for one record of a job with more output tables: OUTPUT_FULL at the second record's byte;
    the engine still finishes the job (its interrupt comes)."""
    job = jobs["grandparents"]
    assert model_run(model, job, tmp_path / "model").returncode == 0
    assert len(json.loads((tmp_path / "model" / "result.json").read_text())["tables"]) > 1
    r = run(job, tmp_path / "unit", "--result-bytes", 4 * facts.te_layout("TE_OUT")[""][0])
    assert error_fields(r.stderr) == f"error=OUTPUT_FULL table={job} offset={4 * facts.te_layout('TE_OUT')[''][0]}"


def test_index_block_spills_through_the_descriptor(model, tmp_path):
    """LevelDB's issue320_test's entries (`key1k`: 1 KiB keys and values): the output table's index block, past the
    writer's 64 KiB buffer, spills into the region TE_DESC's spill_base / spill_bytes give (the harness's default
    region after the output buffer), through the front end: the model's table byte for byte, with stalls. Without a
    region (`--spill-bytes 0`) the same job stops with OUTPUT_FULL, nothing written."""
    from lsmc.sim import te_plan
    job = make_jobs(tmp_path / "job", {"k": ("key1k", ["--entries", "400"])})["k"]
    m = model_run(model, job, tmp_path / "model")
    assert m.returncode == 0, m.stderr
    r = run(job, tmp_path / "unit", "--stall", "0.3", "--seed", "3")
    assert r.returncode == 0, r.stderr
    ok, verdict = tables.compare_dirs(tmp_path / "model", tmp_path / "unit")
    assert ok, verdict
    out = sorted((tmp_path / "unit").glob("*.ldb"))
    assert out and all(len(te_plan.index_block(t.read_bytes())) > 1 << 16 for t in out)
    r = run(job, tmp_path / "none", "--spill-bytes", 0)
    assert r.returncode == 1 and error_fields(r.stderr).startswith("error=OUTPUT_FULL "), r.stderr
    assert not (tmp_path / "none").exists()
