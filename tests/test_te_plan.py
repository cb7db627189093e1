"""The firmware's sub-compaction plan (fw/lib/te_plan.c, on the host under ASan + UBSan) against the table
engine's model (PlanSubcompactions, hw/ip/table_engine/model/subcompaction.cc) on jobs LevelDB's own
TableBuilder wrote: the same splits, the same windows of every part and run, and the same counts of index
entries read, comparisons and bytes compared (the model's cost is charged on them). The index blocks reach
the C as the units leave them (read here with Debian's libsnappy, not through the model). Bad index blocks
give the named error and the offset in the block, and random mutations never read outside a block."""
from __future__ import annotations

import random
import re
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsmc import tables
from lsmc.build.table_model import MODEL, limits
from lsmc.build.table_ref import build_table_ref
from lsmc.model.table_workloads import Workload
from lsmc.sim import te_plan as tp

ROOT = Path(__file__).resolve().parents[1]
COUNTS = ("index_entries", "comparisons", "compared_bytes")


@pytest.fixture(scope="module")
def ref() -> Path:
    return build_table_ref()


@pytest.fixture(scope="module")
def exe() -> Path:
    return tp.host_exe()


def compare(job: Path, parts: int, work: Path, blocks=None) -> dict:
    """The C plan of `job` for `parts` parts equals the model's; returns the C's plan."""
    blocks = blocks or tp.job_index_blocks(job)
    m = tp.model(job, parts)
    assert "head" in m, m
    rc, c, err = tp.host(tp.image(blocks, parts), work)
    assert rc == tp.status("PASS") and not err, err
    assert tp.choices(c) == tp.choices(m), (parts, m["splits"], c["splits"])
    assert {k: c["head"][k] for k in COUNTS} == {k: m["head"][k] for k in COUNTS}
    # the splits ascend and the windows tile each run: part j+1 starts where part j's shared blocks begin
    keys = [bytes.fromhex(s) for s in c["splits"]]
    assert keys == sorted(set(keys))
    assert sum(p["bytes"] for p in c["parts"]) >= c["head"]["total_bytes"]
    return c


WORKLOADS = {
    "dbbench": dict(tables.WORKLOADS["dbbench"], entries=4000),
    "level0": tables.WORKLOADS["level0"],
    "key64": dict(tables.WORKLOADS["key64"], entries=1500),
    "random-long-keys": dict(tables.WORKLOADS["random"], entries=300),
    "snapshots": tables.WORKLOADS["snapshots"],
    "non-base": tables.WORKLOADS["non-base"],
    "one-block-tables": tables.WORKLOADS["one-entry"],
    "grandparents": tables.WORKLOADS["grandparents"],
    "many-blocks": dict(runs=2, entries=3000, input_level=1, deletions=0.2,
                        options={"block_size": 256, "max_file_size": 40000}),
    "one-block-runs": dict(runs=3, entries=5, deletions=0.0),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_plan_is_the_models(ref, exe, tmp_path, name):
    w = Workload(**WORKLOADS[name])
    tables.make_job(tmp_path / "job", w, ref)
    job = tmp_path / "job" / "job.json"
    blocks = tp.job_index_blocks(job)
    for parts in (2, 3, 4, 8):
        compare(job, parts, tmp_path, blocks)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.integers(1, 6), entries=st.integers(1, 1500), keys=st.sampled_from(["dbbench", "key64", "random"]),
       block=st.sampled_from([128, 512, 4096]), file_size=st.sampled_from([4000, 30000, 2 << 20]),
       compression=st.sampled_from(["none", "snappy"]), parts=st.integers(2, 16), seed=st.integers(0, 1000))
def test_plan_is_the_models_hypothesis(ref, exe, tmp_path_factory, runs, entries, keys, block, file_size,
                                       compression, parts, seed):
    d = tmp_path_factory.mktemp("h")
    w = Workload(runs=runs, entries=entries, keys=keys, values="dbbench" if keys != "random" else "random",
                 seed=seed, options={"block_size": block, "max_file_size": file_size, "compression": compression})
    tables.make_job(d / "job", w, ref)
    compare(d / "job" / "job.json", parts, d)


def test_constants_are_the_models():
    """te_plan.h's copies of the model's constants (one fact, checked here)."""
    h = (ROOT / "fw" / "lib" / "te_plan.h").read_text()
    sub = (MODEL / "subcompaction.h").read_text()

    def define(name):
        return int(re.search(rf"#define {name} \(?(\d+)", h)[1])
    assert define("TE_PLAN_MAX_PARTS") == int(re.search(r"kMaxParts = (\d+);", sub)[1])
    assert define("TE_PLAN_SAMPLES_PER_PART") == int(re.search(r"kSamplesPerPart = (\d+);", sub)[1])
    assert define("TE_PLAN_MAX_KEY_BYTES") == limits()["max_user_key_bytes"]
    assert "(1024 + 8)" in h


# ---------------------------------------------------------------------------------------------- bad blocks
@pytest.fixture(scope="module")
def small_job(ref, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bad") / "job"
    tables.make_job(d, Workload(**dict(tables.WORKLOADS["dbbench"], entries=2000)), ref)
    return d / "job.json"


def restarts(b: bytes) -> tuple[int, list[int]]:
    n = struct.unpack_from("<I", b, len(b) - 4)[0]
    end = len(b) - 4 - 4 * n
    return end, list(struct.unpack_from(f"<{n}I", b, end))


def put32(b: bytearray, at: int, v: int) -> None:
    struct.pack_into("<I", b, at, v)


def _restart_count_too_large(b):
    put32(b, len(b) - 4, len(b))
    return "BAD_BLOCK", len(b) - 4


def _restart_past_entries(b):
    end, rs = restarts(b)
    put32(b, end + 4 * (len(rs) - 1), end + 3)
    return "BAD_BLOCK", end + 4 * (len(rs) - 1)


def _first_restart_not_zero(b):
    end, _ = restarts(b)
    put32(b, end, 1)
    return "BAD_BLOCK", end


def _varint_past_end(b):
    end, rs = restarts(b)
    b[rs[-1]:end] = b"\xff" * (end - rs[-1])
    return "BAD_VARINT", rs[-1]


def _shared_prefix(b):
    _, rs = restarts(b)
    b[rs[-1]] = 1
    return "BAD_BLOCK", rs[-1]


def _keys_out_of_order(b):
    """The table's first bound above its last."""
    end, rs = restarts(b)
    b[rs[0] + 3] = 0xff  # the first key's first byte (shared 0, lengths of one byte each)
    return "KEY_ORDER", rs[-1]


def _key_without_tag(b):
    """The last entry's key of 4 bytes: its value then runs into the restart array."""
    end, rs = restarts(b)
    b[rs[-1] + 1] = 4
    return "BAD_BLOCK", rs[-1]


MUTATIONS = {f.__name__[1:]: f for f in (_restart_count_too_large, _restart_past_entries, _first_restart_not_zero,
                                         _varint_past_end, _shared_prefix, _keys_out_of_order, _key_without_tag)}


@pytest.mark.parametrize("how", sorted(MUTATIONS))
@pytest.mark.parametrize("run", [0, 3])
def test_bad_index_block_named(exe, small_job, tmp_path, how, run):
    runs = tp.job_index_blocks(small_job)
    b = bytearray(runs[run][-1])
    code, offset = MUTATIONS[how](b)
    runs[run][-1] = bytes(b)
    rc, c, err = tp.host(tp.image(runs, 4), tmp_path)
    assert not err, err
    assert rc == tp.status("BAD_INDEX"), c
    assert c == {"error": code, "run": run, "table": len(runs[run]) - 1, "offset": offset}


def test_sample_order_checked(exe, small_job, tmp_path):
    """A bound in the middle of a run raised above the run's later bounds: KEY_ORDER at the sample after it."""
    runs = tp.job_index_blocks(small_job)
    b = bytearray(runs[0][0])
    end, rs = restarts(b)
    p = 4  # P = 4: stride n // 8, samples at stride - 1, 2 * stride - 1, ...
    stride = len(rs) // (2 * p)
    b[rs[stride - 1] + 3] = 0xff
    runs[0][0] = bytes(b)
    rc, c, err = tp.host(tp.image(runs, p), tmp_path)
    assert rc == tp.status("BAD_INDEX"), err
    assert c == {"error": "KEY_ORDER", "run": 0, "table": 0, "offset": rs[2 * stride - 1]}


@pytest.mark.parametrize("seed", range(60))
def test_random_mutations_stay_inside(exe, small_job, tmp_path, seed):
    """Random bytes of random index blocks changed: a plan or a named error inside the block, never a read
    outside one (ASan) or undefined behaviour (UBSan)."""
    rng = random.Random(seed)
    runs = tp.job_index_blocks(small_job)
    r = rng.randrange(len(runs))
    t = rng.randrange(len(runs[r]))
    b = bytearray(runs[r][t])
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(b)) if rng.random() < 0.5 else len(b) - 1 - rng.randrange(min(len(b), 64))
        b[at] = rng.randrange(256)
    if rng.random() < 0.2:
        del b[rng.randrange(len(b)):]
    runs[r][t] = bytes(b)
    rc, c, err = tp.host(tp.image(runs, rng.choice([2, 3, 4, 8])), tmp_path)
    assert not err and rc in (tp.status("PASS"), tp.status("BAD_INDEX")), err
    if rc == tp.status("BAD_INDEX"):
        assert c["error"] in ("BAD_BLOCK", "BAD_VARINT", "KEY_ORDER", "KEY_TOO_LONG")
        assert (c["run"], c["table"]) == (r, t) and c["offset"] < max(len(b), 1)
    else:
        assert c["head"]["parts"] >= 2


def test_bad_descriptor(exe, tmp_path):
    img = bytearray(tp.image([[b"\x00" * 8]], 2))
    img[0] ^= 1
    rc, c, _ = tp.host(bytes(img), tmp_path)
    assert rc == tp.status("BAD_DESC") and c == {}


def test_host_time_of_the_plan(small_job, tmp_path):
    """host_ns: the -O2 build times the plan over REPEAT runs (a positive mean); a REPEAT that is not a decimal count
    in 0..10^6 gets the usage line and exit 2, before any plan."""
    img = tp.image(tp.job_index_blocks(small_job), 2)
    assert tp.host_ns(img, tmp_path, repeat=50) > 0
    (tmp_path / "p.bin").write_bytes(img)
    for bad in ("12x", "", "-1", "1000001"):
        r = subprocess.run([str(tp.host_exe(timed=True)), str(tmp_path / "p.bin"), bad], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and r.stdout == "" and r.stderr == "usage: te_plan_host IMAGE [REPEAT]\n", (bad, r)


def varint(v: int) -> bytes:
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def index_block(entries: list[tuple[bytes, int, int]]) -> bytes:
    """An index block as LevelDB's TableBuilder writes it (a restart point at every entry): (internal key,
    block offset, block size) per data block."""
    body, rs = b"", []
    for key, off, size in entries:
        rs.append(len(body))
        value = varint(off) + varint(size)
        body += varint(0) + varint(len(key)) + varint(len(value)) + key + value
    return body + struct.pack(f"<{len(rs) + 1}I", *rs, len(rs))


def test_key_too_long_named(exe, tmp_path):
    tag = struct.pack("<Q", 1 << 8 | 1)
    ok = index_block([(b"a" * 1024 + tag, 0, 100), (b"b" + tag, 105, 100)])
    long = index_block([(b"a" + tag, 0, 100), (b"b" * 1025 + tag, 105, 100)])
    rc, c, err = tp.host(tp.image([[ok]], 2), tmp_path)
    assert rc == tp.status("PASS") and not err and c["head"]["total_bytes"] == 210
    rc, c, err = tp.host(tp.image([[ok], [long]], 2), tmp_path)
    assert rc == tp.status("BAD_INDEX"), err
    assert c == {"error": "KEY_TOO_LONG", "run": 1, "table": 0, "offset": restarts(long)[1][1]}
