"""The whole table engine in RTL (hw/ip/table_engine/rtl/TableEngine.scala: K table readers, the merge and drop
stage with its base-level walker, the table writer, an AXI4 write port) in Verilator against the engine's C++
model (itself byte-exact with LevelDB 1.23's compaction): job folders made by `lsmc tables make` with compression
off (db_bench-like, snapshots, a non-base output level, 64-byte and random keys, one entry per table,
grandparents that close outputs early; K = 2 and 4) run from a simulated AXI4 memory with and without random
stalls must give the model's output tables byte for byte (`lsmc tables compare`: tables, file boundaries and
result.json); random deeper levels check the base-level walker against the model's BaseLevelCheck and random
grandparents its ShouldStopBefore against the model's GrandparentCheck; a malformed table gives the model's
error code, table and offset; Snappy jobs (tables made with Snappy, read and written compressed) give the
model's tables byte for byte too; what the engine's registers cannot hold and a full output buffer are one named
error line (more runs than ways cascade: tests/test_table_engine_cascade.py). The harness:
hw/ip/table_engine/dv/table_engine_harness.cpp (doc/table_engine_top.md)."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from te_rtl import engine_merge, make_jobs

from lsmc import tables
from lsmc.build import table_engine_top as top
from lsmc.model.table_workloads import Workload
from lsmc.sim import tables as te_tables

W = 16
# (workload, extra `tables make` flags); entries kept small: the file runs in about 3 min with builds cached.
JOBS = {
    "dbbench": ("dbbench", ["--entries", "1500"]),
    "snapshots": ("snapshots", ["--entries", "800"]),
    "non-base": ("non-base", ["--entries", "1500"]),
    "key64": ("key64", ["--entries", "800"]),
    "random": ("random", ["--entries", "60"]),
    "one-entry": ("one-entry", ["--entries", "30"]),
    "dbbench2": ("dbbench", ["--entries", "1500", "--runs", "2", "--input-level", "1"]),
    "grandparents": ("grandparents", ["--entries", "1500"]),
    # Options::compression Snappy (inputs and outputs), a filter block, both (`tables make` flags after the
    # workload's; the last --compression wins).
    "snappy": ("dbbench", ["--entries", "1500", "--compression", "snappy"]),
    "bloom": ("dbbench", ["--entries", "1500", "--bloom-bits", "10"]),
    "snappy-key64": ("key64", ["--entries", "800", "--compression", "snappy"]),
    "snappy-non-base": ("non-base", ["--entries", "1500", "--compression", "snappy"]),
    "snappy-bloom": ("key64", ["--entries", "800", "--compression", "snappy", "--bloom-bits", "20"]),
}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    out = make_jobs(tmp_path_factory.mktemp("jobs"), JOBS)
    for name, (_, flags) in JOBS.items():
        options = json.loads(out[name].read_text())["options"]
        assert options["compression"] == ("snappy" if "snappy" in flags else "none")
    return out


@pytest.fixture(scope="module")
def model():
    return tables.model_exe()


def engine(ways: int, merge: int | None = None) -> Path:
    """The K-way engine's harness; `merge` None: te_rtl.engine_merge (K = 4: the SoC's unit, the wider stage)."""
    return top.build_harness(W, ways, engine_merge(ways) if merge is None else merge)


def run(exe: Path, job: Path, out: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), str(job), str(out), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def model_run(model: Path, job: Path, out: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(model), str(job), str(out), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def same_as_model(model, job: Path, tmp: Path, ways: int, *args, merge: int | None = None) -> str:
    m = model_run(model, job, tmp / "model")
    assert m.returncode == 0, m.stderr
    r = run(engine(ways, merge), job, tmp / "rtl", *args)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("cycles=") and "bytes_in=" in line and "tables_out=" in line
    ok, verdict = tables.compare_dirs(tmp / "model", tmp / "rtl")
    assert ok, verdict
    return line


@pytest.mark.parametrize("name", ["dbbench", "snapshots", "non-base", "key64", "random", "one-entry",
                                  "grandparents", "dbbench2"])
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_k4_byte_identical(jobs, model, tmp_path, name, stall):
    """K = 4: every workload's output tables are the model's, byte for byte, with and without stalls on every
    AXI channel and on the job's streams (dbbench2: two runs on the four ways, two of them idle)."""
    same_as_model(model, jobs[name], tmp_path, 4, "--stall", stall, "--seed", 5)


@pytest.mark.parametrize("name", ["snappy", "snappy-key64", "snappy-non-base", "bloom", "snappy-bloom"])
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_k4_snappy_byte_identical(jobs, model, tmp_path, name, stall):
    """K = 4, Options::compression Snappy (input blocks decompressed; each output block compressed by libsnappy's
    rules and kept when it saves 1/8): the model's tables byte for byte; the tables hold compressed blocks (so the
    comparison covers them)."""
    same_as_model(model, jobs[name], tmp_path, 4, "--stall", stall, "--seed", 5)
    if "snappy" in name:
        out = sorted((tmp_path / "rtl").glob("*.ldb"))
        assert out and all(snappy_blocks(t.read_bytes()) for t in out)


@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_index_block_past_the_buffer_spills(model, tmp_path, compression):
    """LevelDB's issue320_test's entries (`key1k`: 1 KiB keys and values): the output table's index block holds
    whole keys, 107 KiB, past the writer's 64 KiB index buffer; the rest goes to the job's spill region through the
    shared write port and comes back through the read arbiter at the table's end; with Snappy the big index block
    streams out raw (random letters: LevelDB keeps it raw). The model's table byte for byte, with stalls."""
    from lsmc.sim import te_plan
    job = make_jobs(tmp_path / "job", {"k": ("key1k", ["--entries", "400", "--compression", compression])})["k"]
    same_as_model(model, job, tmp_path, 4, "--stall", 0.3, "--seed", 3)
    out = sorted((tmp_path / "rtl").glob("*.ldb"))
    assert out and all(len(te_plan.index_block(t.read_bytes())) > 1 << 16 for t in out)


def big_value_job(folder: Path, kind: str, value_bytes: int) -> Path:
    """A job of 2 runs of 3 entries of `value_bytes` values with Snappy on the output: `noise` (random bytes, so
    LevelDB keeps every such block raw; inputs with Snappy too) or `dbbench` (half compressible, so LevelDB would
    store each in Snappy form; inputs raw, as the engine's readers take Snappy blocks up to 64 KiB only)."""
    w = Workload(runs=2, entries=3, values=kind, value_bytes=value_bytes, seed=value_bytes,
                 options={"compression": "snappy" if kind == "noise" else "none"})
    tables.make_job(folder, w)
    job = json.loads((folder / "job.json").read_text())
    job["options"]["compression"] = "snappy"
    (folder / "job.json").write_text(json.dumps(job))
    return folder / "job.json"


def big_value_case(model, tmp_path, kind, value_bytes, stall):
    job = big_value_job(tmp_path / "job", kind, value_bytes)
    if kind == "noise":
        line = same_as_model(model, job, tmp_path, 4, "--stall", stall, "--seed", 5)
        out = sorted((tmp_path / "rtl").glob("*.ldb"))
        assert out and all(t.stat().st_size > value_bytes for t in out), line  # each holds a big block
        return line
    # the model with the RTL writer's block buffer (without it, LevelDB's TableBuilder: stored compressed)
    m = model_run(model, job, tmp_path / "model", "--zip-block-bytes", top.table_model.limits()["zip_block_bytes"])
    r = run(engine(4), job, tmp_path / "rtl", "--stall", stall, "--seed", 5)
    assert m.returncode == 1 and r.returncode == 1, (m.stderr, r.stdout, r.stderr)
    assert m.stderr.startswith("error=OUTPUT_FULL") and r.stderr.startswith("error=OUTPUT_FULL"), (m.stderr, r.stderr)
    return ""


@pytest.mark.parametrize("kind", ["noise", "dbbench"], ids=["random_bytes", "compressible"])
def test_k4_big_snappy_values(model, tmp_path, kind):
    """Values of 100 KB with Snappy, stalls 0.3: blocks past the writer's 64 KiB block buffer. Random bytes: the
    model's tables byte for byte, each big block raw (LevelDB's verdict, counted by the compressor as the block
    streamed out); compressible ones: the RTL's OUTPUT_FULL, the model's with the RTL's block buffer
    (`--zip-block-bytes`; what LevelDB's rtl back end falls back for, `size`)."""
    big_value_case(model, tmp_path, kind, 100_000, 0.3)


@pytest.mark.long
@pytest.mark.parametrize("value_bytes", [65535, 65536, 100_000, 300_000])
@pytest.mark.parametrize("kind", ["noise", "dbbench"], ids=["random_bytes", "compressible"])
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_k4_big_snappy_values_sweep(model, tmp_path, kind, value_bytes, stall):
    """The same at 64 KiB - 1, 64 KiB, 100 KB and 300 KB, with and without stalls."""
    big_value_case(model, tmp_path, kind, value_bytes, stall)


def snappy_blocks(table: bytes) -> int:
    """1 when the table's index block is stored in Snappy form (its trailer's type byte, the footer naming it), else
    0: db_bench-like keys always compress there."""
    def varint(b: bytes, at: int) -> tuple[int, int]:
        v = shift = 0
        while True:
            c = b[at]
            v |= (c & 0x7f) << shift
            shift += 7
            at += 1
            if c < 0x80:
                return v, at
    footer = table[-48:]
    at = varint(footer, varint(footer, 0)[1])[1]  # past the metaindex handle
    index_off, at = varint(footer, at)
    index_size, _ = varint(footer, at)
    return int(table[index_off + index_size] == 1)


@pytest.mark.long  # a whole engine build more (~200 s); scripts/test keeps the narrow stage's own tests (merge)
@pytest.mark.parametrize("name", ["dbbench", "snapshots", "non-base", "key64", "random", "one-entry",
                                  "grandparents", "snappy", "bloom"])
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_k4_narrow_merge_byte_identical(jobs, model, tmp_path, name, stall):
    """K = 4 with the merge stage as wide as the ports (16 bytes; the K = 4 tests above run the SoC's unit, 32
    inside, doc/merge.md): the model's tables byte for byte, with and without stalls."""
    same_as_model(model, jobs[name], tmp_path, 4, "--stall", stall, "--seed", 5, merge=W)


@pytest.mark.long  # a whole engine build more (~150 s of CPU); scripts/test keeps the 2-way merge stage's own
# tests (tests/test_table_engine_merge.py: k2, with stalls) and runs 2-run jobs on the 4-way engine
# (test_k4_byte_identical's dbbench2)
@pytest.mark.parametrize("name", ["non-base", "one-entry", "dbbench2", "grandparents"])
def test_k2_byte_identical(jobs, model, tmp_path, name):
    same_as_model(model, jobs[name], tmp_path, 2, "--stall", 0.2, "--seed", 9)


def user_keys_of(model, job: Path, tmp: Path) -> list[bytes]:
    """The user keys the job's output holds (smallest and largest of each output table, and the dbbench range)."""
    m = model_run(model, job, tmp)
    assert m.returncode == 0, m.stderr
    res = json.loads((tmp / "result.json").read_text())
    keys = {bytes.fromhex(t[k])[:-8] for t in res["tables"] for k in ("smallest", "largest")}
    return sorted(keys)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_walker_random_deeper_levels(jobs, model, tmp_path, seed):
    """The base-level walker against the model's BaseLevelCheck: the non-base job (30 % deletions, every
    sequence below the snapshot) with 1 to 4 random deeper levels of disjoint ranges over its own keys (bounds
    on keys, between keys, empty-width, shorter and longer than the keys). The ranges must change what the
    model drops (else the walker would not be tested)."""
    rng = random.Random(seed)
    src = jobs["non-base"]
    d = tmp_path / "job"
    shutil.copytree(src.parent, d)
    job = json.loads(src.read_text())
    keys = user_keys_of(model, src, tmp_path / "plain")
    lo, hi = int(keys[0]), int(keys[-1])
    levels = []
    for _ in range(rng.randint(1, 4)):
        points = sorted(rng.sample(range(lo - 5, hi + 5), rng.randint(2, 40)))
        files = []
        for a, b in zip(points[::2], points[1::2]):
            small = b"%016d" % a
            large = b"%016d" % b if rng.random() < 0.8 else (b"%016d" % b)[:rng.randint(1, 15)]
            if large < small:
                large = small
            if rng.random() < 0.2:
                small += b"\x00"  # just above the key
            if files and bytes.fromhex(files[-1]["largest"]) > small or large < small:
                continue
            files.append({"smallest": small.hex(), "largest": large.hex()})
        levels.append(files)
    job["deeper_levels"] = levels
    (d / "job.json").write_text(json.dumps(job))
    same_as_model(model, d / "job.json", tmp_path, 4, "--stall", 0.2, "--seed", seed)
    plain = json.loads((tmp_path / "plain" / "result.json").read_text())["dropped"]
    assert json.loads((tmp_path / "model" / "result.json").read_text())["dropped"] != plain


@pytest.mark.parametrize("seed", [1, 2])
def test_walker_random_grandparents(jobs, model, tmp_path, seed):
    """Compaction::ShouldStopBefore in the walker against the model's GrandparentCheck: random grandparents
    (largest internal keys on, between and around the job's keys, sequences that tie a user key, sizes
    1 B to 40 KiB) with a small max_file_size, so outputs close both at the size and before keys; the file
    boundaries must be the model's and must differ from the job without grandparents."""
    rng = random.Random(seed)
    src = jobs["dbbench2"]
    d = tmp_path / "job"
    shutil.copytree(src.parent, d)
    job = json.loads(src.read_text())
    job["options"]["max_file_size"] = rng.choice((8192, 20000))
    keys = user_keys_of(model, src, tmp_path / "plain")
    lo, hi = int(keys[0]), int(keys[-1])
    points = sorted(rng.sample(range(lo - 3, hi + 3), 60))
    gps = []
    for p in points:
        user = b"%016d" % p
        if rng.random() < 0.1:
            user = user[:rng.randint(1, 15)]
        seq = rng.choice((0, rng.randint(0, 1 << 20), (1 << 56) - 1))
        key = user + (seq << 8 | 1).to_bytes(8, "little")
        if gps and bytes.fromhex(gps[-1]["largest"])[:-8] >= user:
            continue
        gps.append({"largest": key.hex(), "size": rng.randint(1, 40000)})
    job["grandparents"] = gps
    (d / "job.json").write_text(json.dumps(job))
    job["grandparents"] = []
    (d / "plain.json").write_text(json.dumps(job))
    same_as_model(model, d / "job.json", tmp_path, 4, "--stall", 0.2, "--seed", seed)
    m = model_run(model, d / "plain.json", tmp_path / "nogp")
    assert m.returncode == 0, m.stderr
    with_gp = json.loads((tmp_path / "model" / "result.json").read_text())["tables"]
    without = json.loads((tmp_path / "nogp" / "result.json").read_text())["tables"]
    assert [t["entries"] for t in with_gp] != [t["entries"] for t in without]


def error_fields(text: str) -> str:
    """`error=CODE table=PATH offset=N` of an error line (the message after it is each back end's own)."""
    line = text.strip().splitlines()[-1]
    return " ".join(line.split(" ")[:3])


@pytest.mark.parametrize("kind", ["magic", "crc", "truncated"])
def test_malformed_table_model_error(jobs, model, tmp_path, kind):
    """A table with a bad magic, a data block byte flipped (verify_checksums on) or cut short: the job stops
    with the model's error code, table and offset; no output folder is written."""
    d = tmp_path / "job"
    shutil.copytree(jobs["dbbench"].parent, d)
    job = json.loads((d / "job.json").read_text())
    t = d / job["runs"][1][0]
    blob = bytearray(t.read_bytes())
    if kind == "magic":
        blob[-1] ^= 0x40
    elif kind == "crc":
        blob[len(blob) // 3] ^= 0x01
        job["options"]["verify_checksums"] = True
    else:
        blob = blob[:len(blob) // 2] + blob[-48:]
    t.write_bytes(bytes(blob))
    (d / "job.json").write_text(json.dumps(job))
    m = model_run(model, d / "job.json", tmp_path / "model")
    r = run(engine(4), d / "job.json", tmp_path / "rtl", "--stall", 0.2)
    assert m.returncode == 1 and r.returncode == 1, (m.stderr, r.stderr)
    assert error_fields(r.stderr) == error_fields(m.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "rtl").exists()


def test_key_in_two_runs_model_error(jobs, model, tmp_path):
    """One table given as two runs (on the 4-way engine, two ways idle): every internal key is in both, the
    model's KEY_ORDER at the second run's first entry; the RTL's merge names the run and the entry's index, which
    the harness turns into the same table and offset."""
    d = tmp_path / "job"
    shutil.copytree(jobs["dbbench2"].parent, d)
    job = json.loads((d / "job.json").read_text())
    job["runs"] = [job["runs"][0][:1], job["runs"][0][:1]]
    (d / "job.json").write_text(json.dumps(job))
    m = model_run(model, d / "job.json", tmp_path / "model")
    r = run(engine(4), d / "job.json", tmp_path / "rtl", "--stall", 0.2)
    assert m.returncode == 1 and r.returncode == 1, (m.stderr, r.stderr)
    assert error_fields(m.stderr).startswith("error=KEY_ORDER ")
    assert error_fields(r.stderr) == error_fields(m.stderr)


@pytest.mark.parametrize("bad", ["magic", "two-runs", "full"])
def test_job_after_an_error(jobs, model, tmp_path, bad):
    """A job stopped by an error (a reader's BAD_MAGIC; the merge's KEY_ORDER while the writer holds half a
    table; OUTPUT_FULL in the middle of the writes) leaves the engine ready: the next job on the same engine
    gives the model's tables."""
    d = tmp_path / "bad"
    shutil.copytree(jobs["dbbench2"].parent, d)
    job = json.loads((d / "job.json").read_text())
    args = []
    if bad == "magic":
        t = d / job["runs"][1][-1]
        t.write_bytes(t.read_bytes()[:-1] + b"\x00")
    elif bad == "two-runs":
        job["runs"] = [job["runs"][0][-1:], job["runs"][1] + job["runs"][0][-1:]]
    else:
        args = ["--output-buffer", 30000]
    (d / "job.json").write_text(json.dumps(job))
    r = run(engine(4), d / "job.json", tmp_path / "o", *args)
    assert r.returncode == 1, r.stdout
    same_as_model(model, jobs["dbbench2"], tmp_path, 4, "--stall", 0.2, "--first", d / "job.json",
                  *(args and ["--first-output-buffer", args[1]]))


def test_refused_jobs_one_line(jobs, tmp_path):
    """Jobs the RTL engine cannot take: one named BAD_JOB line each (bloom bits per key over its 8-bit register,
    more deeper levels than the walker holds, an input table with more data blocks than the reader's handle RAM);
    an output buffer too small: OUTPUT_FULL naming the output table.
    (More runs than ways cascade: tests/test_table_engine_cascade.py.)"""
    d = tmp_path / "job"
    shutil.copytree(jobs["dbbench"].parent, d)
    job = json.loads((d / "job.json").read_text())
    job["options"]["bloom_bits_per_key"] = 256
    (d / "bloom.json").write_text(json.dumps(job))
    r = run(engine(4), d / "bloom.json", tmp_path / "o")
    assert r.returncode == 1 and r.stderr.startswith("error=BAD_JOB") and "bloom_bits_per_key is 256" in r.stderr
    job["options"]["bloom_bits_per_key"] = 0
    levels = top.WALKER["walker-levels"] + 1
    job["deeper_levels"] = [[{"smallest": "00", "largest": "01"}]] * levels
    (d / "levels.json").write_text(json.dumps(job))
    r = run(engine(4), d / "levels.json", tmp_path / "o")
    assert r.returncode == 1 and r.stderr.startswith("error=BAD_JOB") and f"{levels} deeper levels" in r.stderr
    # 4,000 entries in 256-byte blocks (TableBuilder's): over the reader's handles (top.MAX_BLOCKS)
    big = tmp_path / "big.ldb"
    te_tables.make_table(te_tables.reference_exe(), big,
                         [(b"%016d" % i + ((i + 1) << 8 | 1).to_bytes(8, "little"), b"v" * 100) for i in range(4000)],
                         {"block_size": 256, "compression": "none"})
    job["deeper_levels"] = []
    job["runs"] = [[str(big)]]
    (d / "big.json").write_text(json.dumps(job))
    r = run(engine(4), d / "big.json", tmp_path / "o")
    assert r.returncode == 1 and r.stderr.startswith("error=BAD_JOB") and \
        f"data blocks; the engine's table reader holds {top.MAX_BLOCKS} handles" in r.stderr, r.stderr
    r = run(engine(4), jobs["dbbench"], tmp_path / "o", "--output-buffer", 20000)
    assert r.returncode == 1 and r.stderr.startswith("error=OUTPUT_FULL table=") and ".ldb offset=" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_cli_backend_rtl(jobs, tmp_path, capsys):
    """`lsmc tables compact --backend rtl` runs the engine and prints the model CLI's line."""
    assert tables.main(["compact", "--job", str(jobs["one-entry"]), "--out-dir", str(tmp_path / "o"),
                        "--backend", "rtl"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("cycles=") and line.endswith("tables_out=1")
