"""The table engine's C++ model (hw/ip/table_engine/model) against independent references:
- CRC32C: RFC 3720's test vectors and a bitwise CRC written here;
- Snappy: Debian's libsnappy decodes the model's streams and the model decodes libsnappy's; on
  malformed streams both give the same verdict; the ratio on db_bench-like blocks is within 5 %;
- tables: the model's TableWriter is byte-identical to Debian's libleveldb TableBuilder (compression
  off, bloom filter on and off), and LevelDB's Table reader reads the model's Snappy tables back;
- compactions: hand-built jobs (overwrites, deletions, snapshots, base/non-base levels, size and
  grandparent splits) against the drop and split rules of LevelDB's DoCompactionWork written out in
  Python below, the output tables byte-identical to LevelDB's TableBuilder fed the expected entries;
- malformed tables and jobs: the named error (code, table, offset), never a crash or hang, under
  ASan/UBSan; no partial output."""
import json
import os
import random
import re
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmc.build import table_model
from lsmc.model import sstable

MAXSEQ = (1 << 56) - 1
CODES = ("BAD_MAGIC", "BAD_CRC", "TRUNCATED", "BAD_BLOCK", "BAD_VARINT", "BAD_SNAPPY", "KEY_ORDER",
         "KEY_TOO_LONG", "OUTPUT_FULL", "BAD_JOB")
ERROR_LINE = re.compile(r"^error=(" + "|".join(CODES) + r") table=(\S+) offset=(\d+) \S.*$")
# Examples of the subprocess-heavy properties: x100 in a fuzzing session (LSMC_FUZZ_LONG=1, conftest.py).
FUZZ_SCALE = 100 if os.environ.get("LSMC_FUZZ_LONG") == "1" else 1
# Sanitizer findings exit with their own codes, never 0/1.
SAN_ENV = dict(os.environ, ASAN_OPTIONS="exitcode=86:detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:exitcode=87")


@pytest.fixture(scope="module")
def model():
    return table_model.build_table_model()


@pytest.fixture(scope="module")
def model_asan():
    return table_model.build_table_model(sanitize=True)


@pytest.fixture(scope="module")
def check():
    return table_model.build_model_check()


# ---- helpers ------------------------------------------------------------------------------------

def ikey(user: bytes, seq: int, typ: int = 1) -> bytes:
    return user + struct.pack("<Q", seq << 8 | typ)


def order(k: bytes):
    """LevelDB's internal-key order: user key ascending, then tag descending."""
    return (k[:-8], -struct.unpack("<Q", k[-8:])[0])


def lines(entries) -> str:
    return "".join("STOP\n" if e == "STOP" else f"{e[0].hex()} {e[1].hex()}\n" for e in entries)


def opt_args(block_size=4096, restart=16, bloom=0, snappy=False, max_file_size=0):
    return ["--block-size", str(block_size), "--restart", str(restart), "--bloom", str(bloom),
            "--snappy", str(int(snappy)), "--max-file-size", str(max_file_size)]


def leveldb_tables(check, entries, prefix: Path, **opts) -> list[Path]:
    """Debian's libleveldb TableBuilder writes `entries` (a "STOP" item starts a new table; with
    max_file_size, DoCompactionWork's size rule splits too)."""
    subprocess.run([check, "leveldb-split", str(prefix), *opt_args(**opts)], input=lines(entries), text=True,
                   check=True, capture_output=True, env=SAN_ENV)
    return sorted(prefix.parent.glob(prefix.name + "*.ldb"))


def model_table(check, entries, out: Path, **opts) -> bytes:
    subprocess.run([check, "model-write", str(out), *opt_args(**opts)], input=lines(entries), text=True,
                   check=True, capture_output=True, env=SAN_ENV)
    return out.read_bytes()


def leveldb_read(check, path, bloom=0):
    r = subprocess.run([check, "leveldb-read", str(path), "--bloom", str(bloom)], text=True, capture_output=True,
                       env=SAN_ENV)
    assert r.returncode == 0, r.stderr
    return [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in (ln.split(" ") for ln in r.stdout.splitlines())]


def write_job(folder: Path, check, runs, *, snapshot, options=None, grandparents=(), deeper=(), first=100,
              input_snappy=False):
    """runs: newest first; each a list of tables, each a list of (internal key, value), written by
    LevelDB's TableBuilder."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for r, run in enumerate(runs):
        names = []
        for t, entries in enumerate(run):
            made = leveldb_tables(check, entries, folder / f"in_{r}_{t}_", snappy=input_snappy)
            assert len(made) == 1
            names.append(made[0].name)
        paths.append(names)
    opts = {"block_size": 4096, "block_restart_interval": 16, "compression": "none", "bloom_bits_per_key": 0,
            "max_file_size": 2 << 20, "verify_checksums": False}
    opts.update(options or {})
    job = {"format": "lsmc-table-job/1", "runs": paths, "options": opts, "smallest_snapshot": snapshot,
           "grandparents": [{"largest": k.hex(), "size": s} for k, s in grandparents],
           "deeper_levels": [[{"smallest": a.hex(), "largest": b.hex()} for a, b in lvl] for lvl in deeper],
           "first_file_number": first}
    (folder / "job.json").write_text(json.dumps(job))
    return folder / "job.json"


def run_model(exe, job, out, *extra, timeout=60):
    return subprocess.run([exe, str(job), str(out), *extra], text=True, capture_output=True, timeout=timeout,
                          env=SAN_ENV)


def reference_compaction(runs, snapshot, grandparents=(), deeper=(), max_file_size=2 << 20):
    """DBImpl::DoCompactionWork's drop rules and Compaction::ShouldStopBefore / IsBaseLevelForKey,
    from LevelDB 1.23's source: the kept entries, with "STOP" where a grandparent split falls."""
    merged = sorted((e for run in runs for table in run for e in table), key=lambda e: order(e[0]))
    out, gp_idx, seen, overlapped = [], 0, False, 0
    ptrs = [0] * len(deeper)
    cur_user, last_seq = None, MAXSEQ

    def is_base(user):
        for lvl, files in enumerate(deeper):
            while ptrs[lvl] < len(files):
                lo, hi = files[ptrs[lvl]]
                if user <= hi:
                    if user >= lo:
                        return False
                    break
                ptrs[lvl] += 1
        return True

    for k, v in merged:
        while gp_idx < len(grandparents) and order(k) > order(grandparents[gp_idx][0]):
            if seen:
                overlapped += grandparents[gp_idx][1]
            gp_idx += 1
        seen = True
        if overlapped > 10 * max_file_size:
            overlapped = 0
            out.append("STOP")
        user, tag = k[:-8], struct.unpack("<Q", k[-8:])[0]
        seq, typ = tag >> 8, tag & 0xff
        drop = False
        if typ > 1:
            cur_user, last_seq = None, MAXSEQ
        else:
            if user != cur_user:
                cur_user, last_seq = user, MAXSEQ
            if last_seq <= snapshot:
                drop = True
            elif typ == 0 and seq <= snapshot and is_base(user):
                drop = True
            last_seq = seq
        if not drop:
            out.append((k, v))
    return out


def crc32c_bitwise(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def db_bench_values(n: int, seed: int = 301) -> list[bytes]:
    """db_bench's value generator (RandomGenerator): a 1 MB pool of 100-byte pieces, each 50 random
    printable bytes repeated (compression_ratio 0.5); values are consecutive 100-byte slices."""
    rnd = random.Random(seed)
    pool = bytearray()
    while len(pool) < 1 << 20:
        raw = bytes(32 + rnd.randrange(95) for _ in range(50))
        pool += (raw * 2)[:100]
    pos, out = 0, []
    for _ in range(n):
        if pos + 100 > len(pool):
            pos = 0
        out.append(bytes(pool[pos:pos + 100]))
        pos += 100
    return out


def db_bench_entries(n: int, seed: int = 301):
    rnd = random.Random(seed)
    keys = sorted({b"%016d" % rnd.randrange(10 * n) for _ in range(n)})
    return [(ikey(k, 1000 + i), v) for i, (k, v) in enumerate(zip(keys, db_bench_values(len(keys), seed)))]


# ---- CRC32C -------------------------------------------------------------------------------------

RFC3720 = [(bytes(32), 0x8A9136AA), (b"\xff" * 32, 0x62A8AB43), (bytes(range(32)), 0x46DD794E),
           (bytes(range(31, -1, -1)), 0x113FDB5C), (b"123456789", 0xE3069283)]


def test_crc32c_vectors_and_bitwise(check, tmp_path):
    rnd = random.Random(5)
    cases = RFC3720 + [(d, crc32c_bitwise(d)) for d in
                       (bytes(rnd.randrange(256) for _ in range(n)) for n in (0, 1, 7, 8, 9, 63, 4101))]
    for i, (data, want) in enumerate(cases):
        f = tmp_path / f"c{i}"
        f.write_bytes(data)
        got = subprocess.run([check, "crc", f], capture_output=True, text=True, check=True, env=SAN_ENV).stdout
        # SSE4.2 (where this CPU has it) and the tables, whole and in two pieces
        assert [int(x, 16) for x in got.split()] == [want] * 4, (i, len(data))


# ---- Snappy -------------------------------------------------------------------------------------

def patterned(draw_bytes: bytes, length: int) -> bytes:
    """Compressible data: pieces of the drawn bytes repeated at varying distances."""
    if not draw_bytes:
        return bytes(length)
    out = bytearray()
    i = 0
    while len(out) < length:
        piece = draw_bytes[i % len(draw_bytes):][:1 + (i * 7) % 40]
        out += piece * (1 + i % 5)
        i += 1
    return bytes(out[:length])


@settings(max_examples=40 * FUZZ_SCALE)
@given(seed=st.binary(max_size=64), length=st.integers(0, 200_000), chunk=st.sampled_from([4096, 65536, 1 << 20]))
def test_snappy_round_trip_with_libsnappy(check, tmp_path_factory, seed, length, chunk):
    f = tmp_path_factory.mktemp("snappy") / "data"
    f.write_bytes(patterned(seed, length))
    r = subprocess.run([check, "snappy-check", f, str(chunk)], capture_output=True, text=True, env=SAN_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    m = dict(kv.split("=") for kv in r.stdout.split())
    assert m["identical"] == m["chunks"], r.stdout  # the same bytes as libsnappy 1.1.9


def test_snappy_round_trip_random_bytes(check, tmp_path):
    f = tmp_path / "data"
    f.write_bytes(random.Random(7).randbytes(150_000))
    r = subprocess.run([check, "snappy-check", f, str(1 << 20)], capture_output=True, text=True, env=SAN_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "chunks=1 identical=1" in r.stdout


@settings(max_examples=100 * FUZZ_SCALE)
@given(seed=st.binary(min_size=1, max_size=64), length=st.integers(1, 5000), which=st.sampled_from(["model", "lib"]),
       data=st.data())
def test_snappy_decoder_agrees_with_libsnappy(check, tmp_path_factory, seed, length, which, data):
    """Mutated valid streams (the model's or libsnappy's): the model decodes exactly those libsnappy
    decodes, to the same bytes, and never reads out of bounds."""
    d = tmp_path_factory.mktemp("dec")
    (d / "src").write_bytes(patterned(seed, length))
    subprocess.run([check, "snappy-compress", d / "src", d / "z", which], check=True, env=SAN_ENV)
    stream = bytearray((d / "z").read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = data.draw(st.integers(0, max(0, len(stream) - 1)))
        if kind == "flip" and stream:
            stream[pos] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del stream[pos:]
        else:
            stream.insert(pos, data.draw(st.integers(0, 255)))
    (d / "bad").write_bytes(bytes(stream))
    r = subprocess.run([check, "snappy-decode", d / "bad"], capture_output=True, text=True, env=SAN_ENV, timeout=30)
    assert r.returncode == 0, r.stderr
    m = re.fullmatch(r"model=(\d) libsnappy=(\d) same=(\d)\n", r.stdout)
    assert m and m.group(1) == m.group(2) and m.group(3) == "1", r.stdout


def test_snappy_ratio_on_db_bench_blocks(check, tmp_path):
    """db_bench's values (16-byte keys, 100-byte values at compression_ratio 0.5) in 4 KiB blocks: the
    model's compressed size within 5 % of libsnappy's."""
    tables = leveldb_tables(check, db_bench_entries(20_000), tmp_path / "bench_")
    r = subprocess.run([check, "snappy-blocks", tables[0]], capture_output=True, text=True, env=SAN_ENV, check=True)
    m = dict(kv.split("=") for kv in r.stdout.split())
    model, lib, raw = int(m["model"]), int(m["libsnappy"]), int(m["raw"])
    print(f"db_bench blocks: raw {raw}, model {model} ({model / raw:.3f}), libsnappy {lib} ({lib / raw:.3f})")
    assert int(m["blocks"]) > 500
    assert abs(model - lib) <= 0.05 * lib
    assert m["identical"] == m["blocks"]


# ---- tables -------------------------------------------------------------------------------------

@settings(max_examples=30 * FUZZ_SCALE)
@given(n=st.integers(1, 400), klen=st.integers(0, 300), vmax=st.sampled_from([0, 10, 200, 5000]),
       block_size=st.sampled_from([1, 64, 256, 4096]), restart=st.sampled_from([1, 2, 16]),
       bloom=st.sampled_from([0, 1, 10]), snappy=st.booleans(), seed=st.integers(0, 1 << 30))
def test_writer_byte_identical_to_leveldb(check, tmp_path_factory, n, klen, vmax, block_size, restart, bloom, snappy,
                                          seed):
    """Compression off and Snappy on (Debian's LevelDB compresses with Debian's libsnappy)."""
    rnd = random.Random(seed)
    # Shared prefixes and 0xff bytes exercise the separator and successor rules.
    alphabet = [0, 1, 0x41, 0x42, 0xfe, 0xff]
    users = sorted({bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, klen))) for _ in range(n)})
    entries = []
    for u in users:
        for s in sorted(rnd.sample(range(1, 50), rnd.randint(1, 2)), reverse=True):
            # values that compress (repeats) and values that do not
            v = rnd.randbytes(rnd.randint(0, vmax))
            entries.append((ikey(u, s, rnd.randint(0, 1)), v if rnd.random() < 0.5 else (v[:7] * 50)[:len(v)]))
    d = tmp_path_factory.mktemp("w")
    opts = dict(block_size=block_size, restart=restart, bloom=bloom, snappy=snappy)
    (ref,) = leveldb_tables(check, entries, d / "ref_", **opts)
    mine = model_table(check, entries, d / "model.ldb", **opts)
    assert mine == ref.read_bytes()


def test_writer_snappy_tables_read_by_leveldb(check, tmp_path):
    entries = db_bench_entries(5000)
    table = tmp_path / "model.ldb"
    data = model_table(check, entries, table, snappy=True, bloom=10)
    assert leveldb_read(check, table, bloom=10) == entries
    (ref,) = leveldb_tables(check, entries, tmp_path / "ref_", snappy=True, bloom=10)
    assert data == ref.read_bytes()


# ---- compactions --------------------------------------------------------------------------------

def _check_job(model, check, tmp_path, runs, *, snapshot, max_file_size=2 << 20, block_size=4096, grandparents=(),
               deeper=(), input_snappy=False, bloom=0, snappy=False):
    job = write_job(tmp_path / "job", check, runs, snapshot=snapshot, grandparents=grandparents, deeper=deeper,
                    options={"max_file_size": max_file_size, "block_size": block_size, "bloom_bits_per_key": bloom,
                             "verify_checksums": True, "compression": "snappy" if snappy else "none"},
                    input_snappy=input_snappy)
    out = tmp_path / "out"
    r = run_model(model, job, out)
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-1]
    m = re.fullmatch(r"cycles=(\d+) bytes_in=(\d+) bytes_out=(\d+) tables_out=(\d+)", last)
    assert m, last
    res = json.loads((out / "result.json").read_text())
    expected = reference_compaction(runs, snapshot, grandparents, deeper, max_file_size)
    kept = [e for e in expected if e != "STOP"]
    ref_tables = leveldb_tables(check, expected, tmp_path / "ref_", block_size=block_size, bloom=bloom,
                                max_file_size=max_file_size, snappy=snappy) if kept else []
    got = [out / t["file"] for t in res["tables"]]
    assert [t["number"] for t in res["tables"]] == list(range(100, 100 + len(got)))
    assert len(got) == len(ref_tables) == int(m.group(4))
    for g, ref, t in zip(got, ref_tables, res["tables"]):
        assert g.read_bytes() == ref.read_bytes(), g.name
        ents = leveldb_read(check, g, bloom)
        assert t["entries"] == len(ents) and t["size"] == g.stat().st_size
        assert bytes.fromhex(t["smallest"]) == ents[0][0] and bytes.fromhex(t["largest"]) == ents[-1][0]
    n_in = sum(len(t) for run in runs for t in run)
    assert (res["entries_in"], res["entries_out"], res["dropped"]) == (n_in, len(kept), n_in - len(kept))
    assert res["bytes_out"] == sum(g.stat().st_size for g in got) == int(m.group(3))
    assert res["bytes_in"] == int(m.group(2)) == sum((job.parent / p).stat().st_size
                                                     for run in json.loads(job.read_text())["runs"] for p in run)
    assert int(m.group(1)) > 0
    return expected, res


def test_compaction_drop_rules_by_hand(model, check, tmp_path):
    """Hand-checked: overwrites, deletions, a snapshot between versions, base and non-base keys."""
    a, b, c, d = b"apple", b"banana", b"cherry", b"date"
    newest = [[(ikey(a, 30), b"a30"), (ikey(b, 31, 0), b""), (ikey(c, 32, 0), b""), (ikey(d, 33), b"d33")]]
    older = [[(ikey(a, 20), b"a20"), (ikey(b, 21), b"b21"), (ikey(c, 22), b"c22"), (ikey(d, 5), b"d5")]]
    oldest = [[(ikey(a, 10), b"a10"), (ikey(d, 4), b"d4")]]
    # snapshot 20: a20 is what the snapshot sees, so it stays; a10 is hidden by a20 (20 <= 20). The
    # deletions of b and c are newer than the snapshot: they and the values under them stay. d5 is
    # under d33 (33 > 20): it stays; d4 is hidden by d5 (5 <= 20).
    deeper = [[(b"b", b"bz")]]
    expected, res = _check_job(model, check, tmp_path, [newest, older, oldest], snapshot=20, deeper=deeper)
    assert [e for e in expected if e != "STOP"] == [
        (ikey(a, 30), b"a30"), (ikey(a, 20), b"a20"), (ikey(b, 31, 0), b""), (ikey(b, 21), b"b21"),
        (ikey(c, 32, 0), b""), (ikey(c, 22), b"c22"), (ikey(d, 33), b"d33"), (ikey(d, 5), b"d5")]
    assert res["dropped"] == 2


def test_compaction_deletions_at_base_and_not(model, check, tmp_path):
    """Deletions at or below the snapshot: dropped where no deeper level holds the key (base level),
    kept where one does; older versions under a kept or dropped marker go (hidden)."""
    keys = [b"k%03d" % i for i in range(60)]
    new = [[(ikey(k, 100 + i, 0), b"") for i, k in enumerate(keys)]]
    old = [[(ikey(k, 10 + i), b"v" * i) for i, k in enumerate(keys)]]
    deeper = [[(b"k010", b"k019")], [(b"k030", b"k034"), (b"k050", b"k050")]]
    expected, _ = _check_job(model, check, tmp_path, [new, old], snapshot=1000, deeper=deeper)
    kept_users = sorted({e[0][:-8] for e in expected if e != "STOP"})
    assert kept_users == keys[10:20] + keys[30:35] + keys[50:51]
    assert all(e[0][-8] == 0 for e in expected if e != "STOP")  # only markers remain; values hidden


def test_compaction_snapshot_boundary(model, check, tmp_path):
    """Sequences equal to smallest_snapshot count as visible to it: a deletion at the snapshot drops at
    the base level, and so does what it hides; one above the snapshot stays with what it hides."""
    keys = [b"k%d" % i for i in range(4)]
    new = [[(ikey(k, 104 + i, 0), b"") for i, k in enumerate(keys)]]  # 104, 105, 106, 107
    old = [[(ikey(k, 10 + i), b"v") for i, k in enumerate(keys)]]
    expected, _ = _check_job(model, check, tmp_path, [new, old], snapshot=105)
    assert [e for e in expected if e != "STOP"] == [
        (ikey(keys[2], 106, 0), b""), (ikey(keys[2], 12), b"v"),
        (ikey(keys[3], 107, 0), b""), (ikey(keys[3], 13), b"v")]


@settings(max_examples=12 * FUZZ_SCALE)
@given(seed=st.integers(0, 1 << 30), nruns=st.integers(1, 10), snapshot=st.integers(0, 2200))
def test_compaction_random_jobs(model, check, tmp_path_factory, seed, nruns, snapshot):
    """Random overlapping runs (Level-0 runs, a multi-table level run), grandparents, deeper levels,
    small files: kept entries, drops and file boundaries as LevelDB's rules give them."""
    rnd = random.Random(seed)
    users = sorted({rnd.randbytes(rnd.randint(1, 40)) for _ in range(300)})
    runs = []
    for r in range(nruns):
        chosen = sorted(rnd.sample(users, rnd.randint(1, 120)))
        # newer runs hold larger sequence numbers; every internal key of the job is unique
        entries = [(ikey(u, (nruns - r) * 1000 + i, rnd.choice([0, 1, 1, 1])),
                    rnd.randbytes(rnd.choice([0, 5, 100, 3000]))) for i, u in enumerate(chosen)]
        if r == nruns - 1 and len(entries) > 2:  # the oldest run: a level of two tables in key order
            cut = len(entries) // 2
            runs.append([entries[:cut], entries[cut:]])
        else:
            runs.append([entries])
    if rnd.random() < 0.5:  # a sequence of the job: the boundary of every snapshot rule
        snapshot = struct.unpack("<Q", rnd.choice(rnd.choice(rnd.choice(runs)))[0][-8:])[0] >> 8
    else:
        snapshot *= 5
    gp_users = sorted(rnd.sample(users, 12))
    grandparents = [(ikey(u, 5), rnd.randint(1000, 9000)) for u in gp_users]
    deeper = [[(u, u + b"\x00") for u in sorted(rnd.sample(users, 20))]]
    _check_job(model, check, tmp_path_factory.mktemp("rj"), runs, snapshot=snapshot, max_file_size=6000,
               block_size=rnd.choice([256, 1024, 4096]), grandparents=grandparents, deeper=deeper,
               input_snappy=rnd.random() < 0.5, bloom=rnd.choice([0, 10]), snappy=rnd.random() < 0.5)


def test_compaction_grandparent_split(model, check, tmp_path):
    """Outputs close where the grandparent overlap passes 10 x max_file_size, not only on size."""
    users = [b"u%04d" % i for i in range(400)]
    runs = [[[(ikey(u, 1000 + i), b"x" * 20) for i, u in enumerate(users)]]]
    grandparents = [(ikey(users[i], 1), 3000) for i in range(0, 400, 20)]
    expected, res = _check_job(model, check, tmp_path, runs, snapshot=0, max_file_size=1000,
                               grandparents=grandparents)
    assert "STOP" in expected and len(res["tables"]) > 3


def data_block_sizes(table: bytes) -> list[int]:
    """Sizes of a raw table's data blocks: footer -> index block (restart interval 1) -> handles."""
    _, i = sstable.varint(table, len(table) - 48)
    _, i = sstable.varint(table, i)
    off, i = sstable.varint(table, i)
    size, _ = sstable.varint(table, i)
    index = table[off:off + size]
    end = len(index) - 4 - 4 * struct.unpack("<I", index[-4:])[0]
    sizes, i = [], 0
    while i < end:
        _, i = sstable.varint(index, i)
        nonshared, i = sstable.varint(index, i)
        vlen, i = sstable.varint(index, i)
        i += nonshared
        _, j = sstable.varint(index, i)
        sizes.append(sstable.varint(index, j)[0])
        i += vlen
    return sizes


def test_compaction_split_boundaries(model, check, tmp_path):
    """Exact boundaries: a file whose written bytes reach max_file_size exactly closes; grandparent
    overlap exactly at 10 x max_file_size does not split, one file more does; a key equal to a
    grandparent's largest key has not passed that file yet."""
    users = [b"u%04d" % i for i in range(300)]
    entries = [(ikey(u, 100), b"x" * 30) for u in users]
    (probe,) = leveldb_tables(check, entries, tmp_path / "probe_", block_size=1024)
    max_file_size = data_block_sizes(probe.read_bytes())[0] + 5  # the first block and its trailer
    grandparents = [(ikey(users[i], 100), 5 * max_file_size) for i in range(80, 300, 7)]
    expected, res = _check_job(model, check, tmp_path, [[entries]], snapshot=0, max_file_size=max_file_size,
                               block_size=1024, grandparents=grandparents)
    assert "STOP" in expected and len(res["tables"]) > 4
    assert res["tables"][0]["size"] > max_file_size and res["tables"][0]["entries"] < 40


def test_compaction_snappy_output_read_by_leveldb(model, check, tmp_path):
    entries = db_bench_entries(8000)
    job = write_job(tmp_path / "job", check, [[entries[::2]], [entries[1::2]]], snapshot=0,
                    options={"compression": "snappy", "max_file_size": 200_000, "bloom_bits_per_key": 10})
    r = run_model(model, job, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    got = [e for t in res["tables"] for e in leveldb_read(check, tmp_path / "out" / t["file"], bloom=10)]
    assert got == entries
    assert res["bytes_out"] < 0.75 * sum(len(k) + len(v) for k, v in entries)


def test_key_lengths_up_to_the_limit(model, check, tmp_path):
    limit = table_model.limits()["max_user_key_bytes"]
    runs = [[[(ikey(b"\x01" * n, 9), b"v") for n in (1, 17, 255, limit)]], [[(ikey(b"\x02" * limit, 3), b"")]]]
    _check_job(model, check, tmp_path, runs, snapshot=0)


# ---- errors -------------------------------------------------------------------------------------

def _error(r):
    assert r.returncode == 1, (r.returncode, r.stderr[-3000:])
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and ERROR_LINE.match(err[0]), r.stderr[-3000:]
    m = ERROR_LINE.match(err[0])
    return m.group(1), m.group(2), int(m.group(3))


def _simple_job(check, folder, n=300, **kw):
    entries = [(ikey(b"key%05d" % i, 10 + i), b"value%d" % i * 3) for i in range(n)]
    return write_job(folder, check, [[entries]], snapshot=0, **kw), entries


def test_key_over_the_limit(model_asan, check, tmp_path):
    limit = table_model.limits()["max_user_key_bytes"]
    job = write_job(tmp_path / "j", check, [[[(ikey(b"a", 1), b""), (ikey(b"b" * (limit + 1), 2), b"")]]], snapshot=0)
    code, table, offset = _error(run_model(model_asan, job, tmp_path / "out"))
    assert code == "KEY_TOO_LONG" and table.endswith(".ldb") and offset > 0
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_named_errors(model_asan, check, tmp_path):
    job, _ = _simple_job(check, tmp_path / "j", options={"verify_checksums": True})
    spec = json.loads(job.read_text())
    table = job.parent / spec["runs"][0][0]
    good = table.read_bytes()

    def attempt(data, **opt):
        table.write_bytes(data)
        s = dict(spec)
        s["options"] = dict(spec["options"], **opt)
        job.write_text(json.dumps(s))
        return _error(run_model(model_asan, job, tmp_path / "out"))

    assert attempt(good[:-1] + b"\x00") == ("BAD_MAGIC", str(table), len(good) - 8)
    assert attempt(good[:20])[0] == "TRUNCATED"
    assert attempt(bytes([good[0] ^ 1]) + good[1:]) == ("BAD_CRC", str(table), 0)
    # the first entry's key-length varint (byte 1) made to run on for 5 bytes
    assert attempt(good[:1] + b"\xff" * 5 + good[6:], verify_checksums=False) == ("BAD_VARINT", str(table), 1)
    table.write_bytes(good)
    (tmp_path / "out").mkdir(exist_ok=True)
    # the output buffer: too small for the first table
    job.write_text(json.dumps(spec))
    r = run_model(model_asan, job, tmp_path / "out", "--output-buffer", "1000")
    assert _error(r)[0] == "OUTPUT_FULL" and not list((tmp_path / "out").iterdir())


def test_key_order_across_a_runs_tables(model_asan, check, tmp_path):
    t1 = [(ikey(b"m", 5), b"")]
    t2 = [(ikey(b"a", 6), b"")]
    job = write_job(tmp_path / "j", check, [[t1, t2]], snapshot=0)
    code, table, offset = _error(run_model(model_asan, job, tmp_path / "out"))
    assert code == "KEY_ORDER" and table.endswith("in_0_1_000000.ldb") and offset == 0


@pytest.mark.parametrize("text", ["", "{", "[]", '{"format": "lsmc-table-job/2"}',
                                  '{"format": "lsmc-table-job/1", "runs": [["nope.ldb"]], "options": {}, '
                                  '"smallest_snapshot": 0, "first_file_number": 1}',
                                  '{"format": "lsmc-table-job/1", "runs": [], "options": {}, '
                                  '"smallest_snapshot": 0, "first_file_number": 1}',
                                  '{"format": "lsmc-table-job/1", "runs": [["a"]], "options": {"block_size": -1}, '
                                  '"smallest_snapshot": 0, "first_file_number": 1}',
                                  '{"format": "lsmc-table-job/1", "runs": [["a"]], "options": {"compresion": "none"}, '
                                  '"smallest_snapshot": 0, "first_file_number": 1}'])
def test_bad_jobs(model_asan, tmp_path, text):
    (tmp_path / "job.json").write_text(text)
    code, _, _ = _error(run_model(model_asan, tmp_path / "job.json", tmp_path / "out"))
    assert code == "BAD_JOB" and not (tmp_path / "out").exists()


@settings(max_examples=80 * FUZZ_SCALE)
@given(data=st.data())
def test_mutated_tables_give_named_errors(model_asan, check, tmp_path_factory, data):
    """Flipped bytes, truncations and insertions in valid tables (raw or Snappy, CRCs checked or not):
    the job ends with a result or one named error, never a crash (ASan/UBSan) or hang."""
    d = tmp_path_factory.mktemp("mut")
    snappy = data.draw(st.booleans())
    verify = data.draw(st.booleans())
    entries = db_bench_entries(data.draw(st.integers(1, 150)), seed=data.draw(st.integers(0, 99)))
    job = write_job(d, check, [[entries]], snapshot=0, input_snappy=snappy,
                    options={"verify_checksums": verify, "block_size": 1024})
    table = d / json.loads(job.read_text())["runs"][0][0]
    b = bytearray(table.read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["flip", "flip", "truncate", "insert"]))
        pos = data.draw(st.integers(0, len(b) - 1)) if b else 0
        if kind == "flip" and b:
            b[pos] ^= data.draw(st.integers(1, 255))
        elif kind == "truncate":
            del b[pos:]
        else:
            b.insert(pos, data.draw(st.integers(0, 255)))
    table.write_bytes(bytes(b))
    r = run_model(model_asan, job, d / "out", timeout=30)
    if r.returncode == 0:
        assert (d / "out" / "result.json").exists()
    else:
        code, name, offset = _error(r)
        assert name == str(table) and offset <= len(b)
        assert not (d / "out").exists() or not list((d / "out").iterdir())


def test_doc_cycle_constants_match_the_model():
    """hw/ip/table_engine/doc/model.md's constants table is a copy of cycle_model.h and cycle_work.h: it must not
    drift."""
    header = (table_model.MODEL / "cycle_model.h").read_text() + (table_model.MODEL / "cycle_work.h").read_text()
    code = {k: int(v) for k, v in re.findall(r"constexpr (?:uint64_t|double) (k\w+) = (\d+);", header)}
    doc = (table_model.MODEL.parent / "doc" / "model.md").read_text()
    table = {k: int(v) for k, v in re.findall(r"^\| `(k\w+)` \| (\d+) \|$", doc, re.M)}
    assert code and table == code


def masked_crc(data: bytes) -> int:
    c = crc32c_bitwise(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@settings(max_examples=80 * FUZZ_SCALE)
@given(data=st.data())
def test_mutated_blocks_with_valid_crcs_give_named_errors(model_asan, check, tmp_path_factory, data):
    """Bytes changed inside one block (index or data, raw or Snappy) and its CRC made to match again,
    so that the decoders behind the CRC check see the damage: a result or one named error."""
    d = tmp_path_factory.mktemp("blk")
    snappy = data.draw(st.booleans())
    entries = db_bench_entries(data.draw(st.integers(1, 120)), seed=data.draw(st.integers(0, 99)))
    job = write_job(d, check, [[entries]], snapshot=0, input_snappy=snappy, options={"verify_checksums": True})
    table = d / json.loads(job.read_text())["runs"][0][0]
    b = bytearray(table.read_bytes())
    listing = subprocess.run([check, "blocks", table], capture_output=True, text=True, check=True, env=SAN_ENV)
    blocks = [tuple(map(int, ln.split())) for ln in listing.stdout.splitlines()]
    which = data.draw(st.integers(0, len(blocks) - 1))  # 0: the index block
    off, size, _ = blocks[which]
    for _ in range(data.draw(st.integers(1, 3))):
        # near the block's end sit the restart array and count: weight them
        pos = off + data.draw(st.one_of(st.integers(0, size - 1), st.integers(max(0, size - 12), size - 1)))
        b[pos] = data.draw(st.sampled_from([0, 0x7F, 0x80, 0xFF, b[pos] ^ 1, data.draw(st.integers(0, 255))]))
    b[off + size + 1:off + size + 5] = struct.pack("<I", masked_crc(bytes(b[off:off + size + 1])))
    table.write_bytes(bytes(b))
    r = run_model(model_asan, job, d / "out", timeout=30)
    if r.returncode != 0:
        code, name, offset = _error(r)
        # a damaged index may point a data block's handle at other bytes: their CRC fails
        assert name == str(table) and offset <= len(b) and (which == 0 or code != "BAD_CRC")


@pytest.mark.parametrize("args", [["--zip-block-bytes"], ["--zip-block-bytes", "0"], ["--zip-block-bytes", "-1"],
                                  ["--zip-block-bytes", "64k"], ["--zip-block-bytes", "99999999999999999999999"]])
def test_bad_zip_block_bytes_named(model, tmp_path, args):
    """table_model's RTL block-buffer option with a value it cannot use: one line naming the option and the
    usage, exit 2, before any job is read or output written."""
    r = subprocess.run([str(model), str(tmp_path / "missing.json"), str(tmp_path / "out"), *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("table_model: bad option --zip-block-bytes"), r.stderr
    assert "usage:" in r.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags", [["--compression", "none"], ["--compression", "snappy", "--bloom-bits", "10"]],
                         ids=["raw", "snappy-filter"])
def test_close_bytes_are_what_follows_the_data_blocks(flags, tmp_path):
    """The estimate's table-close term (doc/model.md "A table's close") counts every byte after a table's last data
    block: `writer close_bytes=` of `table_model --stats` equals, summed over the output tables, the table's size
    less where its first non-data block starts (the filter or the metaindex) as LevelDB's own reader lists them."""
    from te_rtl import make_jobs

    from lsmc import tables
    job = make_jobs(tmp_path / "job", {"k": ("key1k", ["--entries", "300", *flags])})["k"]
    r = subprocess.run([str(table_model.build_table_model()), str(job), str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    close = int(re.search(r"^writer close_bytes=(\d+)$", r.stdout, re.M)[1])
    want = 0
    for t in sorted((tmp_path / "out").glob("*.ldb")):
        d = subprocess.run([str(tables.reference_exe()), "dump", str(t)], capture_output=True, text=True, timeout=60)
        assert d.returncode == 0, d.stderr
        size = int(re.search(r"^table size=(\d+)$", d.stdout, re.M)[1])
        starts = [int(m) for m in re.findall(r"^(?:metaindex|meta name=\S+) offset=(\d+)", d.stdout, re.M)]
        want += size - min(starts)
    assert close == want > 0
