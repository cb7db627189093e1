"""The K-way compaction IP (K = 2, 4, 8 at 128 bits; RTL in Verilator) against the reference model.

One Verilator build per K. Every job runs with and without random stalls on every stream (each key
input, out, invalid, the register bus). Cases: random overlapping runs, empty runs, identical runs,
disjoint runs, for G in {2, 3, 16, 256}; a malformed run at each input position (ERR_INPUT names it);
the registers added for K > 2; one output entry per clock; cascading compaction of up to 3K runs.
"""
import random

import pytest

from lsmc.model import kb16
from lsmc.sim import ipsim

WIDTH = 128
GROUPS = (2, 3, 16, 256)


@pytest.fixture(scope="module", params=ipsim.WAYS, ids=lambda k: f"k{k}")
def ways(request):
    ipsim.build(WIDTH, ways=request.param)
    return request.param


def random_key(rng, kind):
    if kind == "short":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    if kind == "prefix":  # long shared prefixes: virtual entries, prefix keys
        return b"user" + bytes(rng.randrange(3) for _ in range(rng.randint(0, 12)))
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))


def make_runs(rng, ways, shape, kind="uniform", n=60):
    """Key lists for `ways` runs (newest first); addresses encode (run, index) so a wrong winner shows."""
    universe = sorted({random_key(rng, kind) for _ in range(n * 2)})
    if shape == "identical":
        chosen = [universe[:n]] * ways
    elif shape == "disjoint":
        chosen = [universe[i::ways][: n // ways + 1] for i in range(ways)]
    elif shape == "empty":  # every other run empty, the rest random
        chosen = [[] if i % 2 else sorted(rng.sample(universe, rng.randint(0, n))) for i in range(ways)]
    elif shape == "all-empty":
        chosen = [[] for _ in range(ways)]
    else:
        chosen = [sorted(rng.sample(universe, rng.randint(0, n))) for _ in range(ways)]
    return [[(k, (r << 24) | i) for i, k in enumerate(keys)] for r, keys in enumerate(chosen)]


def job_for(key_lists, group, stalls=None, seed=1, **kw):
    runs = [kb16.encode(k, group) for k in key_lists]
    return ipsim.Job(runs[0], runs[1], group, more=tuple(runs[2:]), stalls=stalls or {}, seed=seed, **kw)


def random_stalls(rng, ways):
    return {s: rng.choice((0.1, 0.3, 0.6)) for s in ipsim.streams(ways)}


def test_model_n_way_merge_is_a_dictionary_merge():
    """The model itself, against the plainest statement of the rule (newest address wins, others in
    run order per key): checked here so the RTL comparisons below rest on it."""
    rng = random.Random(3)
    for _ in range(50):
        lists = make_runs(rng, rng.choice((2, 3, 5, 8)), "random", "prefix", 30)
        merged, invalid = kb16.merge_keys_n(lists)
        want_m, want_i = [], []
        for key in sorted({k for lst in lists for k, _ in lst}):
            addrs = [dict(lst)[key] for lst in lists if key in dict(lst)]
            want_m.append((key, addrs[0]))
            want_i += addrs[1:]
        assert (merged, invalid) == (want_m, want_i)
    # two runs: the same as the original two-way merge
    a, b = make_runs(rng, 2, "random")
    assert kb16.merge_keys_n([a, b]) == kb16.merge_keys(a, b)


@pytest.mark.parametrize("group", GROUPS)
def test_differential_random_stalls(ways, group):
    rng = random.Random(ways * 1000 + group)
    jobs = []
    for shape in ("random", "random", "identical", "disjoint", "empty", "all-empty"):
        kind = rng.choice(("uniform", "prefix", "short"))
        lists = make_runs(rng, ways, shape, kind)
        jobs.append(job_for(lists, group))
        jobs.append(job_for(lists, group, random_stalls(rng, ways), rng.randrange(1 << 20)))
    results = ipsim.run_jobs(jobs, width=WIDTH, ways=ways)
    problems = [f"job {i}: {p}" for i, (j, r) in enumerate(zip(jobs, results)) for p in ipsim.model_problems(j, r)]
    assert not problems, "\n".join(problems)
    # identical runs: every older run's address is invalid, next-newest first for each key
    ident = results[4]
    assert ident.invalid_count == (ways - 1) * len(kb16.decode(jobs[4].run0, group))


def test_fewer_runs_than_ways(ways):
    """Unused inputs are empty runs: a K-way IP also does two-way jobs."""
    rng = random.Random(ways)
    lists = make_runs(rng, 2, "random") + [[] for _ in range(ways - 2)]
    job = job_for(lists, 16, random_stalls(rng, ways), 5)
    r = ipsim.run_jobs([job], width=WIDTH, ways=ways)[0]
    assert not ipsim.model_problems(job, r)
    assert (r.out, r.invalid) == kb16.merge(job.run0, job.run1, 16)


def test_error_names_the_input(ways):
    rng = random.Random(77 + ways)
    good = make_runs(rng, ways, "random", "uniform", 80)
    jobs, want = [], []
    for bad_input in sorted({0, 1, ways // 2, ways - 1}):
        runs = [kb16.encode(k, 16) for k in good]
        victim = kb16.encode([(b"key%03d" % i, i) for i in range(40)], 16)
        es = bytearray(victim)
        es[16 * 23 + 2] |= 0x40  # entry 23: reserved header bit
        runs[bad_input] = bytes(es)
        with pytest.raises(kb16.Kb16Error) as ei:
            kb16.merge_runs(runs, 16)
        assert (ei.value.input, ei.value.code, ei.value.index) == (bad_input, kb16.RESERVED_BITS, 23)
        for stalled in (False, True):
            jobs.append(ipsim.Job(runs[0], runs[1], 16, more=tuple(runs[2:]),
                                  stalls=random_stalls(rng, ways) if stalled else {}, seed=bad_input + 1))
            want.append(("error", kb16.RESERVED_BITS, bad_input, 23))
    ok = job_for(good, 16)
    jobs.append(ok)  # and a correct job after the soft reset
    results = ipsim.run_jobs(jobs, width=WIDTH, ways=ways)
    for r, w in zip(results, want):
        assert (r.status, r.code, r.input, r.index) == w and r.drained and not r.after_error, r.fields
    assert not ipsim.model_problems(ok, results[-1])


def test_registers_for_more_inputs(ways):
    """K > 2: WAYS, IN<k>_BYTES read/write, KEY<k>_ENTRY_IN_CNT counts input k's words; K = 2 has none."""
    if ways == 2:
        res = ipsim.run_script(["read 0x50"], width=WIDTH, ways=2)
        assert res.reads() == [0]
        return
    offs = ipsim.reg_offsets(WIDTH, ways)
    # the documented layout (docs/architecture.md): WAYS at 0x50, then IN<k>_BYTES / KEY<k>_ENTRY_IN_CNT pairs
    assert offs["WAYS"] == 0x50
    lines = [f"expect 0x50 {ways}"]
    for k in range(2, ways):
        assert (offs[f"IN{k}_BYTES"], offs[f"KEY{k}_ENTRY_IN_CNT"]) == (0x54 + 8 * (k - 2), 0x58 + 8 * (k - 2))
        lines += [f"write {offs[f'IN{k}_BYTES']:#x} {0x1000 + k}", f"expect {offs[f'IN{k}_BYTES']:#x} {0x1000 + k}",
                  f"expect {offs[f'KEY{k}_ENTRY_IN_CNT']:#x} 0"]
    ipsim.run_script(lines, width=WIDTH, ways=ways)
    rng = random.Random(9)
    lists = make_runs(rng, ways, "random", "uniform", 50)
    job = job_for(lists, 16)
    counters = [offs[f"KEY{k}_ENTRY_IN_CNT"] for k in range(ways)]
    res = ipsim.run_script(ipsim._job_lines(0, job, _tmp(), ways, WIDTH) + [f"read {c:#x}" for c in counters],
                           width=WIDTH, ways=ways, check=False)
    assert res.reads() == [len(r) // 4 for r in job.runs]


def _tmp():
    import tempfile
    from pathlib import Path
    return Path(tempfile.mkdtemp(prefix="nway-"))


def test_one_entry_per_clock(ways):
    """Large low-overlap job: HW_CYCLES per output entry stays ~1 at 128 bits for every K."""
    rng = random.Random(11)
    keys = sorted({bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) for _ in range(5000)})
    rng.shuffle(keys)
    per = len(keys) // ways
    lists = [sorted((k, i) for i, k in enumerate(keys[r * per:(r + 1) * per])) for r in range(ways)]
    job = job_for(lists, 16)
    r = ipsim.run_jobs([job], width=WIDTH, ways=ways)[0]
    assert not ipsim.model_problems(job, r)
    entries = len(r.out) // 16
    assert r.hw_cycles / entries <= 1.01, (r.hw_cycles, entries)


def lookahead_runs(rng, ways, n=240):
    """Key lists aimed at the merger's look-ahead (each node orders the heads it will have a clock
    early): stretches of keys held by every run (all heads advance at once), by the two runs of one
    node or of the two root halves, winners alternating run by run (a different head advances every
    clock), blocks from one run; keys share a 12-byte prefix and differ in the last bytes or only in
    their length (a key before itself plus a zero byte), so the low chunks of the compare decide."""
    def key():
        return b"lookahead-" + bytes([rng.randrange(4), rng.randrange(4)]) + bytes(rng.randrange(3) for _ in
                                                                                   range(rng.randint(0, 4)))
    keys = sorted({key() for _ in range(n * 3)})[:n]
    lists = [[] for _ in range(ways)]
    i = 0
    while i < len(keys):
        kind, span = rng.choice(("all", "node", "halves", "alternate", "block")), rng.randint(1, 9)
        r0 = rng.randrange(ways)
        for j, k in enumerate(keys[i:i + span]):
            half = r0 % (ways // 2)
            holders = {"all": range(ways), "node": (r0 & ~1, r0 | 1), "halves": (half, half + ways // 2),
                       "alternate": ((r0 + j) % ways,), "block": (r0,)}[kind]
            for r in holders:
                lists[r].append((k, (r << 24) | len(lists[r])))
        i += span
    return lists


def test_lookahead_equal_runs_alternating_winners(ways):
    """The look-ahead merger: equal keys across runs, alternating winners, shared long prefixes,
    with the output stalled at every beat (and the invalid stream, and starved inputs), against the
    model; then strictly alternating winners without stalls stay at one output entry per clock."""
    rng = random.Random(300 + ways)
    jobs = []
    for stalls in ({}, {"out": "every"}, {"out": "every", "invalid": "every"},
                   {"out": "every", **{f"key{k}": 0.5 for k in range(0, ways, 2)}},
                   {"invalid": "every", **{f"key{k}": 0.3 for k in range(ways)}}):
        for group in (3, 16):
            jobs.append(job_for(lookahead_runs(rng, ways), group, stalls, rng.randrange(1 << 20)))
    # a different run wins every clock, no key shared: the invalid port never limits the rate
    keys = [b"alt%05d" % i for i in range(3000)]
    alternate = [[(k, (r << 24) | i) for i, k in enumerate(keys[r::ways])] for r in range(ways)]
    jobs.append(job_for(alternate, 16))
    results = ipsim.run_jobs(jobs, width=WIDTH, ways=ways)
    problems = [f"job {i} (stalls {j.stalls}): {p}" for i, (j, r) in enumerate(zip(jobs, results))
                for p in ipsim.model_problems(j, r)]
    assert not problems, "\n".join(problems)
    assert all(r.invalid_count for r in results[:-1])  # the equal stretches did reach the invalid port
    entries = len(results[-1].out) // 16
    assert results[-1].hw_cycles / entries <= 1.01, (results[-1].hw_cycles, entries)


@pytest.mark.parametrize("factor", (1.5, 3))
def test_cascading_up_to_3k_runs(ways, factor):
    """More runs than ways: temporary merges of the fewest runs first, then the final K-way merge. The
    merged run equals the one-step model merge; the invalid addresses are those of the model's cascade
    (step by step), the same set as the one-step merge's."""
    rng = random.Random(int(ways * factor))
    n = int(ways * factor)
    lists = make_runs(rng, n, "random", "prefix", 40)
    runs = [kb16.encode(k, 3) for k in lists]
    stalls = random_stalls(rng, ways)
    out, inv, plan, results = ipsim.cascade(runs, 3, WIDTH, ways, stalls=stalls, seed=4)
    want, want_inv = kb16.merge_runs(runs, 3)
    assert out == want
    assert sorted(kb16.unpack_addresses(inv)) == sorted(kb16.unpack_addresses(want_inv))
    assert inv == kb16.cascade_merge(runs, 3, ways)[1]
    assert len(results) == len(plan) + 1 and plan
    assert all(m <= ways for _, m in plan)


def test_cascade_plan_rules():
    # exactly enough reduction: 5 runs on 4 ways -> one 2-run temporary merge, of the smallest pair
    assert kb16.cascade_plan([100, 10, 20, 100, 100], 4) == [(1, 2)]
    # 3K runs on K = 2: repeated pairwise merges of the lightest neighbours
    plan = kb16.cascade_plan([5, 1, 1, 5, 9, 9], 2)
    assert plan[0] == (1, 2) and len(plan) == 4
    assert kb16.cascade_plan([1, 2, 3, 4], 4) == []
    with pytest.raises(ValueError):
        kb16.cascade_plan([1, 2, 3], 1)


def test_cascade_error_names_original_run(ways):
    rng = random.Random(5)
    n = ways + 2
    runs = [kb16.encode(k, 16) for k in make_runs(rng, n, "random", "short", 30)]
    bad = bytearray(kb16.encode([(b"a", 1), (b"b", 2), (b"c", 3)], 16))
    bad[16 * 2 + 3] |= 0x80  # entry 2: reserved bit
    runs[n - 1] = bytes(bad)
    with pytest.raises(ipsim.CascadeError) as ei:
        ipsim.cascade(runs, 16, WIDTH, ways)
    assert ei.value.runs == [n - 1] and ei.value.result.code == kb16.RESERVED_BITS and ei.value.result.index == 2


def test_compact_cli_n_runs(tmp_path):
    """scripts/compact with six runs on a 4-way IP: cascades, checks against the model, keeps the
    summary line; a malformed run is named by its position on the command line."""
    import subprocess
    import sys
    rng = random.Random(21)
    lists = make_runs(rng, 6, "random", "uniform", 50)
    paths = []
    for i, keys in enumerate(lists):
        p = tmp_path / f"r{i}.kb16"
        p.write_bytes(kb16.encode(keys, 16))
        paths.append(p)
    out, inv = tmp_path / "m.kb16", tmp_path / "i.bin"
    args = [sys.executable, "-m", "lsmc", "compact", *map(str, paths), "--out", str(out), "--invalid", str(inv)]
    r = subprocess.run(args + ["--ways", "4", "--check", "--stall", "0.2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    runs = [p.read_bytes() for p in paths]
    want, want_inv = kb16.merge_runs(runs, 16)
    assert out.read_bytes() == want
    assert inv.read_bytes() == kb16.cascade_merge(runs, 16, 4)[1]
    last = r.stdout.strip().splitlines()[-1]
    entries_in = sum(len(x) for x in runs) // 16
    assert last.startswith("cycles=") and last.endswith(
        f" entries_in={entries_in} entries_out={len(want) // 16} invalid={len(want_inv) // 4}")
    assert "cascade: 1 temporary merge(s) of [3] runs, then a 4-way merge" in r.stdout
    # a malformed fifth run (index 4)
    bad = bytearray(runs[4])
    bad[16 * 2 + 2] |= 0x10  # entry 2: reserved bit
    paths[4].write_bytes(bytes(bad))
    out.unlink()
    r = subprocess.run(args + ["--ways", "4"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 3 and r.stdout.strip().splitlines()[-1] == "error: RESERVED_BITS at input 4 entry 2"
    assert not out.exists()
