"""The table engine's table writer RTL (hw/ip/table_engine/rtl/TableWriter.scala) in Verilator: for random jobs
of sorted internal keys (user keys 0 bytes to the key limit, values up to several KiB or 64 KiB), block sizes of
64 B to 4 KiB, restart intervals 1 and 16 (and 3), max file sizes that split the output (0 B to 2 MiB) and CUT
beats where the merge side would stop an output, its tables must equal the engine's C++ model's TableWriter
driven as LevelDB's DoCompactionWork drives TableBuilder, byte for byte, file boundaries included; each table's
status and smallest / largest keys match, and the model's TableReader reads the RTL's tables back into the
job's entries. Random stalls on every stream; a key over the limit stops the job with KEY_TOO_LONG and a soft
reset readies the unit; never a hang (the harness's cycle bound). Filter blocks are checked with LevelDB's own
BloomFilterPolicy; Snappy jobs with the model's libsnappy-exact compressor and stock LevelDB's reader. Index blocks
past the index buffer spill (the writer's spill port, kept by the harness). The harness:
hw/ip/table_engine/dv/table_writer_harness.cpp (doc/table_writer.md)."""
from __future__ import annotations

import pytest

from lsmc.build import table_engine_writer_top as writer
from lsmc.build.table_engine_rtl import summary

WIDTHS = (pytest.param(4, marks=pytest.mark.long), 16)  # the narrowest beat (its build: LSMC_LONG=1), the engine's


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"w{w}")
def width(request):
    writer.build_harness(request.param)
    return request.param


def run_ok(width, *args) -> dict:
    res = writer.run(width, *args)
    s = summary(res)
    assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0 and s["violations"] == 0, \
        f"{res.stdout}\n{res.stderr[-4000:]}"
    return s


@pytest.mark.parametrize("stalls", [(0.0, 0.0), (0.3, 0.3)], ids=["no_stalls", "stalls"])
def test_random_jobs_match_model(width, stalls):
    """Block sizes 64 B to 4 KiB, intervals 1 / 16, max file sizes 0 B to 2 MiB, CUT beats: many files."""
    pin, pout = stalls
    s = run_ok(width, "--seed", 21, "--jobs", 30, "--cut", 0.03, "--pin", pin, "--pout", pout)
    assert s["jobs"] == 30 and s["entries"] > 2000 and s["tables"] > 300


def test_stalls_on_every_stream(width):
    for seed, (pin, pout) in enumerate([(0.6, 0.0), (0.0, 0.6)]):
        run_ok(width, "--seed", 200 + seed, "--jobs", 10, "--pin", pin, "--pout", pout, "--max-value", 2048)


def test_large_values_and_other_interval(width):
    """Values up to 64 KiB (blocks far past block_size), and a restart interval of 3 in 4 KiB blocks."""
    run_ok(width, "--seed", 7, "--jobs", 8, "--max-value", 65536, "--max-entries", 60, "--pin", 0.2, "--pout", 0.2)
    run_ok(width, "--seed", 8, "--jobs", 10, "--interval", 3, "--block-size", 4096, "--max-file", 4096)


def test_one_table_per_job_and_one_entry_per_table(width):
    """A max file size of 2 MiB and no cuts: one table per job; max_file_size 0: one entry per table."""
    s = run_ok(width, "--seed", 5, "--jobs", 10, "--max-file", 2 << 20, "--cut", 0)
    assert s["tables"] == 10
    s = run_ok(width, "--seed", 6, "--jobs", 10, "--max-file", 0, "--cut", 0, "--max-entries", 40)
    assert s["tables"] == s["entries"]


def test_key_over_limit_stops_job_then_soft_reset(width):
    """A key 1 to 16 bytes over the limit: the job's status is KEY_TOO_LONG naming the entry; after a soft
    reset the next job's tables are right."""
    s = run_ok(width, "--seed", 9, "--jobs", 30, "--long-key", 0.3, "--pin", 0.2, "--pout", 0.2, "--max-value", 1024)
    assert 3 < s["long_keys"] < 20


def test_refused_jobs_then_soft_reset(width):
    """Jobs the writer refuses: restart interval 0, a block_size past what its restart RAM guarantees, a VALUE beat
    where a HEAD is due, a key shorter than its 8-byte tag: BAD_JOB after exactly the entries before it, and after
    a soft reset the next job's tables are right."""
    s = run_ok(width, "--seed", 10, "--jobs", 30, "--bad", 0.4, "--pin", 0.2, "--pout", 0.2, "--max-value", 1024)
    assert 5 < s["bad_jobs"] < 25


def test_comparison_can_fail(width):
    """With one byte of every job's first expected table changed, every job mismatches."""
    res = writer.run(width, "--seed", 3, "--jobs", 5, "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout


def test_full_index_buffer_stops_job():
    """On the small-limits build (W = 16; an index buffer of 1 KiB): a table whose index block would pass it stops
    the job with OUTPUT_FULL after the entries the harness predicts from the model's index blocks (the tables
    before it right), then a soft reset; jobs that fit are byte-identical."""
    s = summary(res := writer.run(16, "--seed", 12, "--jobs", 30, "--pin", 0.2, "--pout", 0.2, "--max-value", 512,
                                  small=True))
    assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0, f"{res.stdout}\n{res.stderr[-4000:]}"
    assert 3 < s["index_full"] < 27


def small_ok(*args) -> dict:
    """The small-limits build (W = 16, an index buffer of 1 KiB and 64 index entries a table) told its limits."""
    s = summary(res := writer.run(16, *args, small=True))
    assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0 and s["violations"] == 0, \
        f"{res.stdout}\n{res.stderr[-4000:]}"
    return s


@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_index_spills_past_the_buffer(compression):
    """With a spill region (64 KiB) the index blocks past the 1 KiB buffer leave on the spill port and come back
    at the table's end (the harness keeps them, stalling every spill stream and checking the protocol): the tables
    are the model's byte for byte, filters at random; what passes the 64-entry restart RAM stops with OUTPUT_FULL
    where predicted."""
    s = small_ok("--seed", 13, "--jobs", 30, "--pin", 0.3, "--pout", 0.3, "--max-value", 512, "--spill-bytes", 65536,
                 "--compression", compression, "--bloom", "random")
    assert s["spilled_tables"] > 20 and s["spilled_beats"] > 2000 and s["tables"] > 300


def test_full_spill_region_stops_job():
    """A spill region of 3,000 bytes (187 whole beats): a table whose index block would pass buffer and region
    stops with OUTPUT_FULL after the predicted entries; the tables before it and the jobs that fit are right."""
    s = small_ok("--seed", 12, "--jobs", 30, "--pin", 0.2, "--pout", 0.2, "--max-value", 512, "--spill-bytes", 3000)
    assert s["index_full"] > 3 and s["spilled_tables"] > 10


def test_big_index_block_spills():
    """1000-byte user keys a block each (index entries keep whole keys): a 232 KiB index block, 168 KiB of it
    spilled through the 64 KiB buffer, byte for byte as the model's; with Snappy the block passes the 64 KiB block
    buffer and its Snappy form would win (decimal keys), which the engine refuses as for a big data block: OUTPUT_FULL
    as the model predicts."""
    common = ("--jobs", 1, "--pin", 0.2, "--pout", 0.2, "--key-len", 1000, "--entries", 240, "--value-len", 10,
              "--block-size", 64, "--max-file", 1 << 30, "--cut", 0, "--spill-bytes", 1 << 20)
    s = run_ok(16, "--seed", 21, *common, "--compression", "none")
    assert s["spilled_tables"] == 1 and s["spilled_beats"] > 10000 and s["tables"] == 1
    s = run_ok(16, "--seed", 21, *common, "--compression", "snappy")
    assert s["big_full"] == 1 and s["spilled_tables"] == 1


@pytest.mark.parametrize("stalls", [(0.0, 0.0), (0.3, 0.3)], ids=["no_stalls", "stalls"])
def test_bloom_filter_blocks_match_model_and_leveldb(width, stalls):
    """bloom_bits_per_key 0, 1, 10 or 20 per job: the filter block (filters per 2 KiB of block offsets, offsets, base
    lg), the metaindex entry and the footer as the model writes them; each filter as LevelDB's CreateFilter."""
    pin, pout = stalls
    s = run_ok(width, "--seed", 31, "--jobs", 30, "--cut", 0.03, "--bloom", "random", "--pin", pin, "--pout", pout)
    assert s["jobs"] == 30 and s["filtered_tables"] > 100


def test_bloom_edge_cases(width):
    """One key per table (64-bit minimum arrays, bits 1 and 10); blocks far past 2 KiB (64 KiB values: empty filters
    for the bases a block spans); one table of many keys with bits 20; a soft reset mid-table then a filtered job."""
    s = run_ok(width, "--seed", 41, "--jobs", 8, "--max-file", 0, "--cut", 0, "--max-entries", 30, "--bloom", 1)
    assert s["filtered_tables"] == s["entries"]
    run_ok(width, "--seed", 42, "--jobs", 6, "--max-file", 0, "--cut", 0, "--max-entries", 30, "--bloom", 10)
    run_ok(width, "--seed", 43, "--jobs", 6, "--max-value", 65536, "--max-entries", 40, "--bloom", 10, "--pin", 0.2,
           "--pout", 0.2)
    run_ok(width, "--seed", 44, "--jobs", 3, "--max-file", 2 << 20, "--cut", 0, "--entries", 1500, "--block-size", 4096,
           "--max-value", 256, "--bloom", 20)
    s = run_ok(width, "--seed", 45, "--jobs", 20, "--long-key", 0.3, "--bloom", 10, "--max-value", 1024)
    assert s["long_keys"] > 2


@pytest.mark.parametrize("stalls", [(0.0, 0.0), (0.3, 0.3)], ids=["no_stalls", "stalls"])
def test_snappy_blocks_match_model_and_leveldb(width, stalls):
    """Options::compression Snappy on half the jobs (filters at random too): every data and index block through the
    compressor, kept in Snappy form only when it saves 1/8 (type 1, its masked CRC32C), as the model (libsnappy's
    bytes) writes them; stock LevelDB reads the tables back. Random values of few letters compress, random bytes
    do not: both forms occur."""
    pin, pout = stalls
    s = run_ok(width, "--seed", 51, "--jobs", 30, "--cut", 0.03, "--compression", "random", "--bloom", "random",
               "--pin", pin, "--pout", pout)
    assert s["snappy_tables"] > 100 and s["snappy_blocks"] > 200 and s["tables"] > s["snappy_tables"]


def test_snappy_edge_cases(width):
    """One entry per table; values up to 64 KiB (blocks up to the 64 KiB block buffer and just past it); a key over
    the limit and refused jobs mid-stream, each followed by a soft reset (the compressor clears
    its hash table again) and a right job; a tampered expectation must fail."""
    s = run_ok(width, "--seed", 52, "--jobs", 8, "--max-file", 0, "--cut", 0, "--max-entries", 30,
               "--compression", "snappy", "--bloom", 10)
    assert s["snappy_tables"] == s["entries"]
    run_ok(width, "--seed", 53, "--jobs", 8, "--max-value", 65536, "--max-entries", 40, "--compression", "snappy",
           "--pin", 0.2, "--pout", 0.2)
    s = run_ok(width, "--seed", 54, "--jobs", 20, "--long-key", 0.3, "--bad", 0.2, "--compression", "snappy",
               "--max-value", 1024)
    assert s["long_keys"] > 2 and s["bad_jobs"] > 0
    res = writer.run(width, "--seed", 55, "--jobs", 5, "--compression", "snappy", "--tamper", "--quiet")
    assert res.returncode == 1 and summary(res)["mismatches"] == 5, res.stdout


def test_big_snappy_blocks(width):
    """Snappy blocks past the 64 KiB block buffer (100 KB values, stalls on every stream): a big block streams out
    raw while its compressor lane counts the Snappy form; random bytes (LevelDB keeps them raw) come out
    byte-identical with the model and read back by stock LevelDB, values of few letters (LevelDB would store
    them compressed) stop the job with OUTPUT_FULL where the model's own limit does (the tables before it right)."""
    big = ("--compression", "snappy", "--value-len", 100000, "--max-entries", 5, "--pin", 0.3, "--pout", 0.3)
    s = run_ok(width, "--seed", 61, "--jobs", 4, "--letters", 0, *big)
    assert s["big_raw_blocks"] == s["entries"] > 4 and s["big_full"] == 0  # each value a block of its own
    s = run_ok(width, "--seed", 61, "--jobs", 4, "--letters", 1, *big)
    assert s["big_full"] == 4


@pytest.mark.long
@pytest.mark.parametrize("value_len", [65535, 65536, 100000, 300000])
@pytest.mark.parametrize("letters", [0, 1], ids=["random_bytes", "one_letter"])
def test_big_snappy_blocks_sweep(width, value_len, letters):
    """Values of 64 KiB - 1, 64 KiB, 100 KB and 300 KB with Snappy, filters at random, stalls 0.3: incompressible
    ones byte-identical with the model (every such block big and raw), compressible ones OUTPUT_FULL in the table
    the model names."""
    s = run_ok(width, "--seed", 62, "--jobs", 4, "--compression", "snappy", "--value-len", value_len,
               "--letters", letters, "--max-entries", 4, "--bloom", "random", "--pin", 0.3, "--pout", 0.3)
    if letters == 0:
        assert s["big_raw_blocks"] >= 4 and s["big_full"] == 0 and s["mismatches"] == 0
    else:
        assert s["big_full"] == 4


def test_full_filter_unit_stops_job():
    """On the small-limits build (W = 16; a filter unit of 1 KiB, 64 keys a filter, 16 filters a table, and the
    1 KiB index buffer): a table whose filters would pass one of them stops the job with OUTPUT_FULL after the
    entries the harness predicts from the model's tables (the tables before it right), then a soft reset clears
    the buffer; jobs that fit are byte-identical. Random keys fill the small index buffer too, so the first run
    sees both kinds of full buffer, each where the harness predicts it."""
    s = summary(res := writer.run(16, "--seed", 14, "--jobs", 40, "--bloom", "random", "--pin", 0.2, "--pout", 0.2,
                                  "--max-value", 512, small=True))
    assert res.returncode == 0 and s["mismatches"] == 0 and s["hangs"] == 0, f"{res.stdout}\n{res.stderr[-4000:]}"
    assert 3 <= s["filter_full"] < 30 and s["filtered_tables"] > 10  # the offset RAM (16 filters: 32 KiB tables)
    assert s["index_full"] > 3
    # Small entries: 4 KiB blocks of some 180 keys pass the 64 keys of a filter; 1 KiB blocks at 20 bits a key fill
    # the 1 KiB buffer first. Told other limits, the harness must disagree with the RTL.
    small = ("--key-len", 8, "--entries", 600, "--max-file", 2 << 20, "--cut", 0, "--pin", 0.2, "--pout", 0.2)
    for opts, wrong in [(("--block-size", 4096, "--value-len", 4, "--bloom", 10), "1024,32,16"),
                        (("--block-size", 1024, "--value-len", 20, "--bloom", 20), "2048,64,16")]:
        s = summary(res := writer.run(16, "--seed", 16, "--jobs", 4, *small, *opts, small=True))
        assert res.returncode == 0 and s["filter_full"] == 4, f"{res.stdout}\n{res.stderr[-4000:]}"
        res = writer.run(16, "--seed", 16, "--jobs", 4, "--filter-limits", wrong, *small, *opts, "--quiet",
                         small=True)
        assert res.returncode == 1 and summary(res)["mismatches"] == 4, res.stdout
