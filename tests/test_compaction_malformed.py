"""Malformed input, capacities and recovery of the compaction IP (RTL in Verilator, both widths).

Each input error class 1..10 is provoked by a hand-made entry; the model's Kb16Error (code, index)
is the expectation and is checked first so every case really is the class it claims. The IP must
report code, input and index, accept and drop the rest of the input (no hang, even with stalls),
never emit past OUT_CAPACITY / INV_CAPACITY, and run a correct job after the soft reset.
"""
import dataclasses
import json
import random

import pytest

from lsmc.model import kb16
from lsmc.model.vectors import VECTORS  # tests/vectors/kb16, or $KB16_VECTORS
from lsmc.sim import ipsim

STREAMS = ("key0", "key1", "out", "invalid", "ctrl")
G = 16


@pytest.fixture(scope="module", params=ipsim.WIDTHS, ids=lambda w: f"w{w}")
def width(request):
    ipsim.build(request.param)
    return request.param


def entries(run):
    return [kb16.Entry.unpack(run[i:i + 16]) for i in range(0, len(run) - len(run) % 16, 16)]


def pack(es):
    return b"".join(e.pack() for e in es)


def patch(run, i, **fields):
    es = entries(run)
    es[i] = dataclasses.replace(es[i], **fields)
    return pack(es)


def real(shared, key, addr):
    return kb16.Entry(shared << 4 | len(key), addr, key.ljust(8, b"\0"))


def first(run, pred, start=0):
    return next(i for i, e in enumerate(entries(run)) if i >= start and pred(i, e))


def base_runs():
    """Valid runs: `mixed` has virtual entries and several groups, `short` only real entries."""
    mixed, _ = ipsim.encoded_runs("uniform", 120, 0.0, 3, G)
    short, _ = ipsim.encoded_runs("short", 100, 0.0, 4, G)
    return mixed, short


def malformed_cases():
    """name -> (bad run, intended code). The model decides the expected index."""
    mixed, short = base_runs()
    es = entries(mixed)
    c = {}
    c["reserved-bit"] = (patch(mixed, 5, header=es[5].header | 1 << 20), kb16.RESERVED_BITS)
    c["reserved-bit-31"] = (patch(short, 20, header=entries(short)[20].header | 1 << 31), kb16.RESERVED_BITS)
    c["unshared-9"] = (patch(short, 6, header=(entries(short)[6].header & ~0xF) | 9), kb16.LEN_OVER_8)
    c["shared-9"] = (patch(short, 7, header=(entries(short)[7].header & ~0xF0) | 9 << 4), kb16.LEN_OVER_8)
    c["shared-over-prev"] = (pack([real(0, b"a", 4), real(2, b"x", 8), real(0, b"z", 12)]), kb16.SHARED_OVER_PREV)
    c["group-start-shared"] = (patch(short, 16, header=entries(short)[16].header | 1 << 4), kb16.GROUP_START_SHARED)
    v = first(mixed, lambda i, e: e.vir)
    last = len(es) - 1
    c["virtual-at-end"] = (patch(mixed, last, header=es[last].header | kb16.HDR_VIR, address=0), kb16.VIRTUAL_AT_END)
    s15 = entries(short)[15]
    c["virtual-in-last-slot"] = (patch(short, 15, header=s15.header | kb16.HDR_VIR, address=0), kb16.VIRTUAL_AT_END)
    # the entry after a virtual entry must be real (spec, "Groups"): a virtual, or a pad in slot G-1
    c["virtual-after-virtual"] = (patch(mixed, v + 1, header=es[v + 1].header | kb16.HDR_VIR, address=0),
                                  kb16.VIRTUAL_AT_END)
    vir14 = kb16.Entry(kb16.HDR_VIR | 8, 0, b"zzzzzzzz")
    c["pad-after-virtual"] = (pack([real(0, bytes([0x61 + i]), 4 * i) for i in range(14)] +
                                   [vir14, kb16.Entry(kb16.HDR_PAD, 0, bytes(8)), real(0, b"zz", 99)]),
                              kb16.VIRTUAL_AT_END)
    c["pad-not-last-slot"] = (patch(short, 3, header=kb16.HDR_PAD, address=0, keybytes=bytes(8)), kb16.BAD_PAD)
    c["pad-with-address"] = (patch(short, 15, header=kb16.HDR_PAD, address=4, keybytes=bytes(8)), kb16.BAD_PAD)
    c["pad-with-key-byte"] = (patch(short, 31, header=kb16.HDR_PAD, address=0, keybytes=b"\0" * 7 + b"\1"),
                              kb16.BAD_PAD)
    c["empty-key"] = (patch(short, 32, header=0, keybytes=bytes(8)), kb16.EMPTY_KEY)
    c["equal-keys"] = (pack([real(0, b"b", 4), real(0, b"b", 8)]), kb16.NOT_INCREASING)
    c["decreasing"] = (pack([real(0, b"b", 4), real(0, b"c", 8), real(0, b"a", 12), real(0, b"d", 16)]),
                       kb16.NOT_INCREASING)
    c["prefix-after-extension"] = (pack([real(0, b"ab", 4), real(1, b"", 8)]), kb16.NOT_INCREASING)
    c["extension-before-prefix"] = (pack([real(0, b"ab", 4), real(0, b"a", 8)]), kb16.NOT_INCREASING)
    c["length-not-multiple"] = (short[:16 * 40 + 8], kb16.LENGTH)
    u = first(short, lambda i, e: not e.vir and not e.pad and e.unshared < 8, start=10)
    c["fill-nonzero"] = (patch(short, u, keybytes=entries(short)[u].keybytes[:7] + b"\x5a"), kb16.FILL_NONZERO)
    c["virtual-with-address"] = (patch(mixed, v, address=0x40), kb16.FILL_NONZERO)
    return c


def expected_error(run):
    with pytest.raises(kb16.Kb16Error) as ei:
        kb16.decode(run, G)
    return ei.value


def valid_partner(seed):
    r0, _ = ipsim.encoded_runs("uniform", 80, 0.0, seed, G)
    return r0


def test_error_codes_1_to_10(width):
    jobs, want = [], []
    rng = random.Random(width)
    seen = set()
    for name, (bad, code) in malformed_cases().items():
        err = expected_error(bad)
        assert err.code == code, f"{name}: model says {err!r}, case meant code {code}"
        seen.add(code)
        other = valid_partner(rng.randrange(1000))
        for which in (0, 1):
            for stalled in (False, True):
                stalls = {s: rng.choice((0.2, 0.5)) for s in STREAMS} if stalled else {}
                runs = (bad, other) if which == 0 else (other, bad)
                jobs.append(ipsim.Job(*runs, G, stalls=stalls, seed=rng.randrange(1 << 20)))
                want.append((f"{name} in{which}{' stalled' if stalled else ''}", code, which, err.index))
        # after the error (and the harness's soft reset) a valid job must be right
        jobs.append(ipsim.Job(other, valid_partner(7), G))
        want.append((f"{name}: recovery job", None, None, None))
    assert seen == set(range(1, 11))
    bad_results = []
    for job, (name, code, which, index), r in zip(jobs, want, ipsim.run_jobs(jobs, width=width)):
        if code is None:
            bad_results += [f"{name}: {p}" for p in ipsim.model_problems(job, r)]
            continue
        got = (r.status, r.code, r.input, r.index)
        if got != ("error", code, which, index) or not r.drained or r.violations or r.after_error:
            bad_results.append(f"{name}: got {got} drained={r.drained} violations={r.violations} "
                               f"after_error={r.after_error}, "
                               f"want error code {code} input {which} index {index}")
    assert not bad_results, "\n".join(bad_results)


def test_last_flag_disagrees_with_length(width):
    """LENGTH (9) from `last`: on an early beat, missing on the final beat, or data past the length."""
    run, _ = ipsim.encoded_runs("short", 40, 0.0, 9, G)
    other = valid_partner(3)
    four = run[:64]
    cases = [
        ("early last", ipsim.Job(four, other, G, in0_bytes=96)),
        ("no last", ipsim.Job(four, other, G, nolast0=True)),
        ("data past length", ipsim.Job(run[:96], other, G, in0_bytes=64)),
        ("early last in1", ipsim.Job(other, four, G, in1_bytes=96)),
        ("no last in1", ipsim.Job(other, four, G, nolast1=True)),
    ]
    for name, job in list(cases):
        cases.append((name + " stalled", dataclasses.replace(job, stalls={s: 0.4 for s in STREAMS}, seed=3)))
    results = ipsim.run_jobs([j for _, j in cases], width=width)
    bad = []
    for (name, _job), r in zip(cases, results):
        which = 1 if "in1" in name else 0
        # the first beat that disagrees belongs to entry 3 in every case
        if (r.status, r.code, r.input, r.index) != ("error", kb16.LENGTH, which, 3) or not r.drained \
                or r.after_error:
            bad.append(f"{name}: {r.status} {r.code_name} input {r.input} index {r.index} drained={r.drained}")
    assert not bad, "\n".join(bad)


def test_shared_malformed_vectors(width):
    meta = json.loads((VECTORS / "malformed.json").read_text())
    jobs, want = [], []
    for m in meta:
        bad = (VECTORS / m["file"]).read_bytes()
        err = expected_error(bad)
        index = m["first_bad_entry"] if m["first_bad_entry"] is not None else len(bad) // 16
        assert err.index == index
        for which in (0, 1):
            runs = (bad, b"") if which == 0 else (b"", bad)
            jobs.append(ipsim.Job(*runs, m["group"], stalls={s: 0.3 for s in STREAMS}, seed=which))
            want.append((m["file"], err.code, which, index))
    got = ipsim.run_jobs(jobs, width=width)
    bad = [f"{w[0]} in{w[2]}: got {(r.status, r.code, r.input, r.index)} want {w[1:]}"
           for w, r in zip(want, got) if (r.status, r.code, r.input, r.index) != ("error",) + w[1:]]
    assert not bad, "\n".join(bad)


def test_both_inputs_bad_reports_first_in_time(width):
    bad = malformed_cases()["group-start-shared"][0]
    early = malformed_cases()["reserved-bit"][0]      # index 5 vs 16 in the other input
    r = ipsim.run_jobs([ipsim.Job(bad, bad, G), ipsim.Job(bad, early, G), ipsim.Job(early, bad, G)],
                       width=width)
    assert [(x.status, x.code, x.input, x.index) for x in r] == [
        ("error", kb16.GROUP_START_SHARED, 0, 16),
        ("error", kb16.RESERVED_BITS, 1, 5),
        ("error", kb16.RESERVED_BITS, 0, 5)]


def overflow_jobs(width, rng):
    r0, r1 = ipsim.encoded_runs("uniform", 300, 0.5, 21, G)
    merged, inv = kb16.merge(r0, r1, G)
    n_inv = len(inv) // 4
    assert len(merged) > 400 and n_inv > 20
    caps = [0, 16, 16 * 7, 16 * 7 + 4, 16 * 7 + 8, 16 * 7 + 12, len(merged) - 16, len(merged) - 4]
    jobs = []
    for cap in caps:
        for stalled in (False, True):
            stalls = {s: 0.3 for s in STREAMS} if stalled else {}
            jobs.append(("out", cap, ipsim.Job(r0, r1, G, out_capacity=cap, stalls=stalls, seed=rng.randrange(99))))
    for cap in [0, 4, 4 * 9, 4 * 9 + 2, len(inv) - 4, len(inv) - 1]:
        for stalled in (False, True):
            stalls = {s: 0.3 for s in STREAMS} if stalled else {}
            jobs.append(("inv", cap, ipsim.Job(r0, r1, G, inv_capacity=cap, stalls=stalls, seed=rng.randrange(99))))
    # exact fits are not errors
    jobs.append(("fit", None, ipsim.Job(r0, r1, G, out_capacity=len(merged), inv_capacity=len(inv))))
    return merged, inv, jobs


def test_output_capacities(width):
    merged, inv, jobs = overflow_jobs(width, random.Random(width))
    results = ipsim.run_jobs([j for _, _, j in jobs], width=width)
    beat = width // 8
    bad = []
    for (kind, cap, job), r in zip(jobs, results):
        tag = f"{kind} cap={cap} stalls={bool(job.stalls)}"
        if kind == "fit":
            bad += [f"{tag}: {p}" for p in ipsim.model_problems(job, r)]
            continue
        if kind == "out":
            want = ("error", kb16.OUT_OVERFLOW, cap // 16)
            n = cap // beat * beat        # every beat that fits leaves, none past the capacity
            ok = r.out == merged[:n] and inv.startswith(r.invalid)
        else:
            want = ("error", kb16.INV_OVERFLOW, cap // 4)
            n = cap // 4 * 4
            ok = r.invalid == inv[:n] and merged.startswith(r.out)
        got = (r.status, r.code, r.index)
        if got != want or not ok or not r.drained or r.violations or r.after_error:
            bad.append(f"{tag}: got {got} out={len(r.out)} inv={len(r.invalid)} drained={r.drained}, want {want} "
                       f"with {n} bytes on the capped stream")
        if len(r.out) > job.out_capacity or len(r.invalid) > job.inv_capacity:
            bad.append(f"{tag}: wrote past the capacity ({len(r.out)} / {len(r.invalid)} bytes)")
    assert not bad, "\n".join(bad)


def test_bad_group(width):
    run0, run1 = ipsim.encoded_runs("short", 50, 0.5, 1, 16)
    groups = [0, 1, 257, 1000, 0x10002, 0xFFFFFFFF]
    jobs = [ipsim.Job(run0, run1, g, stalls={s: 0.3 for s in STREAMS} if i % 2 else {}, seed=i)
            for i, g in enumerate(groups)]
    jobs.append(ipsim.Job(run0, run1, 16))          # recovery
    results = ipsim.run_jobs(jobs, width=width)
    for g, r in zip(groups, results):
        assert (r.status, r.code) == ("error", kb16.BAD_GROUP), f"G={g}: {r.fields}"
        assert r.out == b"" and r.invalid == b"" and r.drained and not r.after_error, f"G={g}: {r.fields}"
    assert ipsim.model_problems(jobs[-1], results[-1]) == []


def test_soft_reset_after_error_then_valid_job(width, tmp_path):
    """Explicit register-level recovery: error, soft reset clears status, next job is correct."""
    bad = malformed_cases()["empty-key"][0]
    good0, good1 = ipsim.encoded_runs("prefix", 200, 0.5, 8, G)
    for n, data in (("bad", bad), ("g0", good0), ("g1", good1)):
        (tmp_path / n).write_bytes(data)
    script = [
        "stall key0 0.3", "stall out 0.3",
        "write 0x24 16", f"write 0x38 {len(bad)}", "write 0x3c 0", f"load 0 {tmp_path / 'bad'}",
        "write 0x20 1", "run",
        "expect 0x28 0x00000704 0x0001ff06",     # ERROR, code 7 (EMPTY_KEY), input 0, not DONE/BUSY
        "write 0x20 2",
        "expect 0x28 0", "expect 0x2c 0", "expect 0x34 0", "expect 0x48 0", "expect 0x24 16",
        f"write 0x38 {len(good0)}", f"write 0x3c {len(good1)}",
        f"load 0 {tmp_path / 'g0'}", f"load 1 {tmp_path / 'g1'}",
        "write 0x20 1", "run", f"save out {tmp_path / 'out'}", f"save invalid {tmp_path / 'inv'}",
        "expect 0x28 0x2 0xff07",
    ]
    res = ipsim.run_script(script, width=width)
    runs = res.records("run")
    assert runs[0]["status"] == "error" and runs[0]["index"] == 32 and runs[1]["status"] == "done"
    assert ((tmp_path / "out").read_bytes(), (tmp_path / "inv").read_bytes()) == kb16.merge(good0, good1, G)


def compact_cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "lsmc", "compact", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_compact_cli_reports_ip_error(width, tmp_path):
    bad = malformed_cases()["fill-nonzero"][0]
    err = expected_error(bad)
    (tmp_path / "bad").write_bytes(bad)
    (tmp_path / "good").write_bytes(valid_partner(1))
    res = compact_cli(tmp_path / "good", tmp_path / "bad", "--out", tmp_path / "m", "--invalid", tmp_path / "i",
                      "--width", width)
    assert res.returncode == 3, res.stdout + res.stderr
    assert res.stdout.strip().splitlines()[-1] == f"error: FILL_NONZERO at input 1 entry {err.index}"
    assert not (tmp_path / "m").exists() and not (tmp_path / "i").exists()
    res = compact_cli(tmp_path / "good", tmp_path / "good", "--out", tmp_path / "m", "--invalid", tmp_path / "i",
                      "--width", width, "--out-capacity", 64)
    last = res.stdout.strip().splitlines()[-1]
    assert res.returncode == 3 and last.startswith("error: OUT_OVERFLOW at input ") and last.endswith(" entry 4"), \
        res.stdout + res.stderr


def test_compact_cli_missing_file(tmp_path):
    (tmp_path / "r").write_bytes(b"")
    res = compact_cli(tmp_path / "nope", tmp_path / "r", "--out", tmp_path / "m", "--invalid", tmp_path / "i")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "nope" in lines[0] and "Traceback" not in res.stderr
    assert not (tmp_path / "m").exists()


def corrupt(run, rng):
    """One random corruption of a valid run (may leave it valid)."""
    es = entries(run)
    i = rng.randrange(len(es))
    e = es[i]
    kind = rng.randrange(7)
    if kind == 0:
        es[i] = dataclasses.replace(e, header=e.header ^ 1 << rng.randrange(32))
    elif kind == 1:
        es[i] = dataclasses.replace(e, address=e.address ^ 1 << rng.randrange(32))
    elif kind == 2:
        kb = bytearray(e.keybytes)
        kb[rng.randrange(8)] ^= 1 << rng.randrange(8)
        es[i] = dataclasses.replace(e, keybytes=bytes(kb))
    elif kind == 3:
        hdr = rng.randrange(10) | rng.randrange(10) << 4 | rng.choice((0, 0, kb16.HDR_VIR, kb16.HDR_PAD))
        es[i] = dataclasses.replace(e, header=hdr)
    elif kind == 4 and i + 1 < len(es):
        es[i], es[i + 1] = es[i + 1], es[i]
    elif kind == 5:
        es.insert(i, e)
    else:
        return run[:rng.randrange(len(run))]
    return pack(es)


def test_random_corruptions_match_model(width):
    """Fuzz the decoder checks: the IP's verdict (error code, input, index or the merged output) must
    equal the model's for randomly damaged runs, with random stalls."""
    rng = random.Random(4242 + width)
    jobs, want = [], []
    for n in range(300):
        kind = rng.choice(("uniform", "long", "prefix", "short"))
        g = rng.choice((2, 3, 16, 256))
        r0, r1 = ipsim.encoded_runs(kind, rng.randint(10, 120), 0.3, rng.randrange(1 << 20), g)
        which = rng.randrange(2)
        if which == 0:
            r0 = corrupt(r0, rng)
        else:
            r1 = corrupt(r1, rng)
        stalls = {s: rng.choice((0.0, 0.2, 0.5)) for s in STREAMS}
        jobs.append(ipsim.Job(r0, r1, g, stalls=stalls, seed=n))
        try:
            want.append(("done", kb16.merge(r0, r1, g)))
        except kb16.Kb16Error as err:
            want.append(("error", (err.code, err.input, err.index)))
    assert 80 < sum(w[0] == "error" for w in want) < len(want), "corruptions should give both verdicts"
    bad = []
    for i, (job, (verdict, what), r) in enumerate(zip(jobs, want, ipsim.run_jobs(jobs, width=width))):
        if verdict == "error":
            got = (r.status, (r.code, r.input, r.index))
            ok = got == ("error", what) and r.drained and not r.after_error
        else:
            got = (r.status, f"{len(r.out)} bytes out, {r.invalid_count} invalid")
            ok = r.status == "done" and (r.out, r.invalid) == what
        if not ok or r.violations:
            bad.append(f"job {i} (G={job.group}): got {got}, model says {verdict} {what if verdict == 'error' else ''}")
    assert not bad, "\n".join(bad[:30])
