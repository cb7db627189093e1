"""Sub-compaction (docs/scaling.md): one N-way merge split by key range into M parts.

The C version (fw/lib/kb16.c through ctypes) and the model (lsmc/model/split.py) are checked against each
other step by step (split keys, plan, stitch, whole result byte for byte) and both against the unsplit
merge (kb16.merge_runs): same (key, address) sequence, same invalid stream, a valid run; byte-identical
when the split keys start groups of the unsplit output. Random runs through Hypothesis (bounded) plus
the named edge cases: a split inside a long shared prefix, a split at a virtual entry, empty parts,
identical runs, G in {2, 3, 16, 256}, malformed runs, too little scratch."""
from __future__ import annotations

import ctypes
import os
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmc.build import firmware
from lsmc.build.firmware import MergeResult
from lsmc.model import kb16, split

GROUPS = [2, 3, 16, 256]
SCRATCH_ERR = 66  # KB16_ERR_SCRATCH
OPEN_PART = 67    # KB16_ERR_OPEN_PART


class SubRun(ctypes.Structure):
    _fields_ = [("head", ctypes.c_void_p), ("head_bytes", ctypes.c_size_t), ("head_src", ctypes.c_size_t),
                ("tail_begin", ctypes.c_size_t), ("tail_end", ctypes.c_size_t)]


class CSplit:
    """The C sub-compaction through ctypes."""

    def __init__(self):
        self.lib = lib = firmware.Kb16Lib().lib
        sz, vp, u = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_uint
        res = ctypes.POINTER(MergeResult)
        lib.kb16_split_keys.argtypes = [vp, vp, u, u, u, vp, vp]
        lib.kb16_split_keys_fast.argtypes = [vp, vp, u, u, u, vp, vp]
        lib.kb16_split_keys_skew.argtypes = [vp, vp, u, u, u, u, vp, vp]
        lib.kb16_stitch_inplace.argtypes = [vp, vp, vp, u, u, vp, sz, res]
        lib.kb16_split_plan.argtypes = [vp, vp, u, u, u, vp, vp, vp, vp, sz, ctypes.POINTER(sz), res]
        lib.kb16_stitch.argtypes = [vp, vp, u, u, vp, sz, vp, sz, res]
        lib.kb16_stitch_scratch.argtypes = [u]
        lib.kb16_stitch_scratch.restype = sz
        lib.kb16_subcompact_scratch.argtypes = [vp, u, u, u]
        lib.kb16_subcompact_scratch.restype = sz
        lib.kb16_subcompact.argtypes = [vp, vp, u, u, u, vp, vp, vp, sz, vp, sz, vp, sz, res]
        lib.kb16_subrun_orig_index.argtypes = [ctypes.POINTER(SubRun), sz]
        lib.kb16_subrun_orig_index.restype = sz

    @staticmethod
    def _runs(runs):
        n = max(len(runs), 1)
        bufs = [ctypes.create_string_buffer(bytes(r), max(len(r), 1)) for r in runs]
        ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(b, ctypes.c_void_p) for b in bufs])
        lens = (ctypes.c_size_t * n)(*[len(r) for r in runs])
        return bufs, ptrs, lens

    @staticmethod
    def _keys(keys):
        kb = (ctypes.c_uint8 * (16 * max(len(keys), 1)))()
        kl = (ctypes.c_uint8 * max(len(keys), 1))(*[len(k) for k in keys])
        for i, k in enumerate(keys):
            ctypes.memmove(ctypes.addressof(kb) + 16 * i, k, len(k))
        return kb, kl

    def split_keys(self, runs, group, parts, fast=False, skew=None):
        bufs, ptrs, lens = self._runs(runs)
        kb = (ctypes.c_uint8 * (16 * max(parts, 1)))()
        kl = (ctypes.c_uint8 * max(parts, 1))()
        if skew is not None:
            rc = self.lib.kb16_split_keys_skew(ptrs, lens, len(runs), group, parts, skew, kb, kl)
        else:
            fn = self.lib.kb16_split_keys_fast if fast else self.lib.kb16_split_keys
            rc = fn(ptrs, lens, len(runs), group, parts, kb, kl)
        raw = bytes(kb)
        return rc, [raw[16 * i:16 * i + kl[i]] for i in range(parts - 1)]

    def plan(self, runs, group, keys, scratch=1 << 22):
        bufs, ptrs, lens = self._runs(runs)
        kb, kl = self._keys(keys)
        parts, n = len(keys) + 1, len(runs)
        sub = (SubRun * (parts * n))()
        buf = (ctypes.c_uint8 * scratch)()
        used, res = ctypes.c_size_t(), MergeResult()
        rc = self.lib.kb16_split_plan(ptrs, lens, n, group, parts, kb, kl, sub, buf, scratch, ctypes.byref(used),
                                      ctypes.byref(res))
        rows = []
        if rc == 0:
            for j in range(parts):
                row = []
                for i in range(n):
                    s = sub[j * n + i]
                    head = ctypes.string_at(s.head, s.head_bytes) if s.head_bytes else b""
                    row.append((split.SubRun(head, s.head_src, s.tail_begin, s.tail_end),
                                [self.lib.kb16_subrun_orig_index(ctypes.byref(s), x)
                                 for x in range(s.head_bytes // 16 + s.tail_end - s.tail_begin)]))
                rows.append(row)
        return rc, res, used.value, rows

    def stitch(self, outputs, group, out_cap=None):
        bufs, ptrs, lens = self._runs(outputs)
        out_cap = 3 * sum(len(o) for o in outputs) + 16 * group * len(outputs) + 16 if out_cap is None else out_cap
        out = (ctypes.c_uint8 * max(out_cap, 1))()
        sc = self.lib.kb16_stitch_scratch(group)
        scratch = (ctypes.c_uint8 * sc)()
        res = MergeResult()
        rc = self.lib.kb16_stitch(ptrs, lens, len(outputs), group, out, out_cap, scratch, sc, ctypes.byref(res))
        return rc, res, bytes(out)[:res.out_bytes]

    def stitch_inplace(self, outputs, group):
        """-> (rc, res, [part bytes after closing])"""
        n = len(outputs)
        bufs = [ctypes.create_string_buffer(bytes(o), len(o) + 16 * group) for o in outputs]
        ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(b, ctypes.c_void_p) for b in bufs])
        lens = (ctypes.c_size_t * n)(*[len(o) for o in outputs])
        caps = (ctypes.c_size_t * n)(*[len(o) + 16 * group for o in outputs])
        sc = self.lib.kb16_stitch_scratch(group)
        scratch = (ctypes.c_uint8 * sc)()
        res = MergeResult()
        rc = self.lib.kb16_stitch_inplace(ptrs, lens, caps, n, group, scratch, sc, ctypes.byref(res))
        return rc, res, [b.raw[:lens[j]] for j, b in enumerate(bufs)]

    def subcompact(self, runs, group, parts, keys=None, scratch=None, out_cap=None, inv_cap=None):
        bufs, ptrs, lens = self._runs(runs)
        total = sum(len(r) for r in runs)
        out_cap = 3 * total + 16 * group * parts + 16 if out_cap is None else out_cap
        inv_cap = total // 16 + 1 if inv_cap is None else inv_cap
        sc = self.lib.kb16_subcompact_scratch(lens, len(runs), group, parts) if scratch is None else scratch
        sbuf = (ctypes.c_uint8 * max(sc, 1))()
        out = (ctypes.c_uint8 * max(out_cap, 1))()
        inv = (ctypes.c_uint32 * max(inv_cap, 1))()
        res = MergeResult()
        kb, kl = self._keys(keys) if keys is not None else (None, None)
        rc = self.lib.kb16_subcompact(ptrs, lens, len(runs), group, parts, kb, kl, out, out_cap, inv, inv_cap,
                                      sbuf, sc, ctypes.byref(res))
        return rc, res, bytes(out)[:res.out_bytes], struct.pack(f"<{res.inv_count}I", *list(inv)[:res.inv_count])


@pytest.fixture(scope="module")
def c():
    return CSplit()


# ---- workloads ---------------------------------------------------------------------------------------

def _keys(rng, n, kind):
    out = set()
    while len(out) < n:
        if kind == "short":
            out.add(bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))))
        elif kind == "long":      # 9..16 bytes: many need a virtual entry
            out.add(bytes(rng.randrange(256) for _ in range(rng.randint(9, 16))))
        elif kind == "prefix":    # small alphabet after a prefix: long shared prefixes, pads, virtual entries
            out.add(b"user0000" + bytes(rng.randrange(3) for _ in range(rng.randint(0, 8))))
        else:
            out.add(bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))))
    return sorted(out)


def _runs(rng, n_runs, n_keys, kind, group, share=0.5):
    universe = _keys(rng, n_keys, kind)
    runs = []
    for _ in range(n_runs):
        ks = sorted(k for k in universe if rng.random() < share)
        runs.append(kb16.encode([(k, rng.getrandbits(32)) for k in ks], group))
    return runs


def check(c, runs, group, parts, keys=None, identical=None):
    """Model and C agree step by step; both equal the unsplit merge; returns the stitched run."""
    ref, ref_inv = kb16.merge_runs(runs, group)
    out, inv, info = split.subcompact(runs, group, parts, keys)
    assert inv == ref_inv, "invalid stream differs from the unsplit merge's"
    assert kb16.decode(out, group) == kb16.decode(ref, group), "entries differ from the unsplit merge's"
    if identical:
        assert out == ref
    # C: split keys, plan, the whole sub-compaction
    if keys is None:
        rc, ck = c.split_keys(runs, group, parts)
        assert rc == 0 and ck == info.keys
    rc, res, used, rows = c.plan(runs, group, info.keys)
    assert rc == 0, kb16.ERROR_NAMES.get(rc, rc)
    for crow, mrow in zip(rows, info.plan):
        for (csub, _idx), msub in zip(crow, mrow):
            assert csub == msub
    for row, runs_row in zip(rows, [runs] * len(rows)):
        for (sub, idx), run in zip(row, runs_row):
            data = sub.bytes(run)
            h = len(sub.head) // 16
            for x in range(h, len(data) // 16):   # tail entries map back to the same original entry
                assert data[16 * x:16 * x + 16] == run[16 * idx[x]:16 * idx[x] + 16]
            if sub.head and sub.tail_end > sub.tail_begin:
                assert h % group == 0, "a head followed by original entries must fill whole groups"
    rc, res, cout, cinv = c.subcompact(runs, group, parts, None if keys is None else info.keys)
    assert rc == 0, kb16.ERROR_NAMES.get(rc, rc)
    assert cout == out and cinv == inv
    assert res.out_bytes == len(out) and res.inv_count == len(inv) // 4
    assert res.out_keys == len(kb16.decode(ref, group))
    return out


# ---- random runs ----------------------------------------------------------------------------------------

# Kept small in the default run (each example runs the model's search in Python); the long fuzzing profile
# (LSMC_FUZZ_LONG=1, tests/conftest.py) takes its own count.
@settings(max_examples=settings().max_examples if os.environ.get("LSMC_FUZZ_LONG") == "1" else 40)
@given(seed=st.integers(0, 2**32 - 1), group=st.sampled_from(GROUPS), parts=st.integers(1, 8),
       n_runs=st.integers(1, 5), kind=st.sampled_from(["short", "long", "prefix", "uniform"]),
       n_keys=st.integers(0, 300))
def test_random(c, seed, group, parts, n_runs, kind, n_keys):
    rng = random.Random(seed)
    check(c, _runs(rng, n_runs, n_keys, kind, group), group, parts)


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("kind", ["short", "long", "prefix"])
def test_aligned_split_keys_give_the_same_bytes(c, group, kind):
    """Split keys that start groups of the unsplit output: the stitched run is byte-identical."""
    rng = random.Random(group * 7 + len(kind))
    runs = _runs(rng, 3, 400, kind, group)
    ref, _ = kb16.merge_runs(runs, group)
    starts = split.output_group_keys(ref, group)
    for parts in (2, 4, 8):
        if len(starts) > parts:
            keys = sorted(rng.sample(starts[1:], parts - 1))
            check(c, runs, group, parts, keys, identical=True)


@pytest.mark.parametrize("group", GROUPS)
def test_one_part_is_the_merge(c, group):
    runs = _runs(random.Random(group), 4, 300, "uniform", group)
    check(c, runs, group, 1, identical=True)


@pytest.mark.parametrize("group", GROUPS)
def test_split_inside_a_long_shared_prefix(c, group):
    """Keys share 12 bytes; every split falls inside groups whose entries share 8 bytes with the previous
    key, so the parts' heads re-encode their first key in full (with a virtual entry)."""
    base = b"tenant-0042/"
    keys = [base + bytes([a, b]) for a in range(6) for b in range(0, 250, 7)]
    rng = random.Random(group)
    runs = [kb16.encode([(k, rng.getrandbits(32)) for k in keys if rng.random() < p], group) for p in (0.6, 0.8, 0.5)]
    ref, _ = kb16.merge_runs(runs, group)
    mid = [keys[i] for i in range(3, len(keys), max(1, len(keys) // 7))][:7]
    out = check(c, runs, group, len(mid) + 1, mid)
    assert kb16.decode(out, group) == kb16.decode(ref, group)
    _, _, info = split.subcompact(runs, group, len(mid) + 1, mid)
    if group > 3:
        assert info.head_bytes > 0, "no head was re-encoded: the case does not test what it says"


@pytest.mark.parametrize("group", GROUPS)
def test_split_at_a_virtual_entry(c, group):
    """Split keys whose entry in the run is a virtual + real pair in mid-group: the part starts at the
    virtual entry (it belongs to the key), never between the two."""
    rng = random.Random(100 + group)
    keys = sorted({rng.choice([b"ab", b"ac"]) + bytes(rng.randrange(256) for _ in range(rng.choice([3, 8, 12, 14])))
                   for _ in range(300)})    # shared 2 bytes, often 8+ more: virtual entries after slot 0
    run = kb16.encode([(k, i) for i, k in enumerate(keys)], group)
    older = kb16.encode([(k, 10_000 + i) for i, k in enumerate(keys) if i % 3 == 0], group)
    ds = list(kb16.iter_entries(run, group))
    at_vir = [ds[i + 1].key for i, d in enumerate(ds[:-1]) if d.entry.vir and (i % group or group == 2)]
    assert at_vir, "no virtual entry in mid-group"   # with G = 2 a virtual entry can only start a group
    split_at = sorted(rng.sample(at_vir, min(5, len(at_vir))))
    check(c, [run, older], group, len(split_at) + 1, split_at)
    rc, res, used, rows = c.plan([run, older], group, split_at)
    for row in rows[1:]:
        sub = row[0][0]
        first = sub.tail_begin if not sub.head else sub.head_src
        assert not ds[first - 1].entry.vir, "a part starts between a virtual entry and its real entry"


@pytest.mark.parametrize("group", GROUPS)
def test_empty_parts(c, group):
    rng = random.Random(7)
    runs = _runs(rng, 3, 120, "uniform", group)
    every = sorted({k for r in runs for k, _ in kb16.decode(r, group)})
    cases = [[every[10]] * 5,                      # repeated split key: four empty parts
             [b"\x00"] + [every[-1] + b"\xff"] * 2,   # parts before every key and after every key
             [b""] * 3]                                # the empty key sorts before all keys
    for keys in cases:
        check(c, runs, group, len(keys) + 1, keys)
    check(c, [b"", b""], group, 8)                     # nothing at all
    check(c, _runs(rng, 2, 3, "short", group), group, 8)   # more parts than keys


@pytest.mark.parametrize("group", GROUPS)
def test_identical_runs(c, group):
    run = _runs(random.Random(group), 1, 300, "prefix", group, share=1.0)[0]
    out = check(c, [run] * 4, group, 5)
    assert kb16.decode(out, group) == kb16.decode(run, group)


def test_balanced_by_bytes(c):
    """Split keys balance the parts' input bytes: every part within two groups per run of total/M."""
    rng = random.Random(3)
    group = 16
    runs = _runs(rng, 4, 4000, "short", group)
    total = sum(len(r) for r in runs)
    for parts in (2, 4, 8):
        _, _, info = split.subcompact(runs, group, parts)
        sizes = [sum(len(s.head) // 16 * 0 + (s.tail_end - s.head_src) * 16 for s in row) for row in info.plan]
        assert sum(sizes) == total
        for s in sizes:
            assert abs(s - total / parts) <= 2 * group * 16 * len(runs), (parts, sizes)


def test_stitch_c_equals_model(c):
    """kb16_stitch on its own, against the model, with part outputs of every closing class."""
    rng = random.Random(11)
    for trial in range(60):
        group = rng.choice(GROUPS)
        kind = rng.choice(["short", "long", "prefix", "uniform"])
        keys = _keys(rng, rng.randint(0, 200), kind)
        cuts = sorted(rng.randint(0, len(keys)) for _ in range(rng.randint(0, 6)))
        pieces = [keys[a:b] for a, b in zip([0] + cuts, cuts + [len(keys)])]
        outs = [kb16.encode([(k, i) for i, k in enumerate(p)], group) for p in pieces]
        want = split.stitch(outs, group)
        rc, res, got = c.stitch(outs, group)
        assert rc == 0 and got == want, (trial, group, kind)
        assert kb16.decode(want, group) == [(k, a) for p in pieces for a, k in enumerate(p)]


# ---- errors --------------------------------------------------------------------------------------------

def test_malformed_runs_named_like_the_unsplit_merge(c):
    rng = random.Random(5)
    seen = set()
    for _trial in range(80):
        group = rng.choice([2, 3, 16])
        runs = _runs(rng, 3, 150, rng.choice(["uniform", "prefix"]), group)
        which = rng.randrange(3)
        if not runs[which]:
            continue
        b = bytearray(runs[which])
        i = rng.randrange(len(b) // 16)
        b[16 * i + rng.choice([0, 1, 8, 9])] ^= 1 << rng.randrange(8)
        runs[which] = bytes(b)
        try:
            kb16.merge_runs(runs, group)
            continue
        except kb16.Kb16Error as e:
            want = (e.code, e.input, e.index)
        with pytest.raises(kb16.Kb16Error) as m:
            split.subcompact(runs, group, 4)
        assert (m.value.code, m.value.input, m.value.index) == want
        rc, res, _, _ = c.subcompact(runs, group, 4)
        assert (rc, res.err_input, res.err_index) == want
        seen.add(want[0])
    assert len(seen) >= 3, seen


def test_ragged_length_and_bad_arguments(c):
    run = kb16.encode([(b"a", 1), (b"b", 2)], 16)
    rc, res, _, _ = c.subcompact([run, run[:-3]], 16, 2)
    assert (rc, res.err_input, res.err_index) == (kb16.LENGTH, 1, 1)
    with pytest.raises(kb16.Kb16Error):
        split.subcompact([run, run[:-3]], 16, 2)
    assert c.subcompact([run], 1, 2)[0] == kb16.BAD_GROUP
    assert c.subcompact([run], 16, 0)[0] == 65
    assert c.subcompact([run], 16, 17)[0] == 65
    with pytest.raises(ValueError):
        split.subcompact([run], 16, 17)


def test_too_little_scratch_is_reported(c):
    runs = _runs(random.Random(9), 2, 200, "prefix", 16)
    rc, res, _, _ = c.subcompact(runs, 16, 4, scratch=1000)
    assert rc == SCRATCH_ERR
    keys = split.split_keys(runs, 16, 4)
    rc, res, used, _ = c.plan(runs, 16, keys, scratch=100)
    assert rc == SCRATCH_ERR and used > 100
    rc2, _, used2, _ = c.plan(runs, 16, keys, scratch=used)
    assert rc2 == 0 and used2 <= used


def test_output_and_invalid_overflow(c):
    runs = _runs(random.Random(12), 3, 200, "short", 16, share=0.8)
    ref, inv = kb16.merge_runs(runs, 16)
    rc, res, _, _ = c.subcompact(runs, 16, 4, out_cap=len(ref) // 2)
    assert rc == kb16.OUT_OVERFLOW
    rc, res, _, _ = c.subcompact(runs, 16, 4, inv_cap=len(inv) // 8)
    assert rc == kb16.INV_OVERFLOW


# ---- on the IP: `lsmc compact --parts M` (one IP job per part, lsmc.sim.ipsim) ------------------------

def _compact(tmp_path, runs, *args):
    import subprocess
    import sys
    paths = []
    for i, r in enumerate(runs):
        paths.append(tmp_path / f"run{i}.kb16")
        paths[-1].write_bytes(r)
    res = subprocess.run([sys.executable, "-m", "lsmc", "compact", *map(str, paths), "--out", str(tmp_path / "out"),
                          "--invalid", str(tmp_path / "inv"), *args], capture_output=True, text=True, timeout=900)
    return res


@pytest.mark.parametrize("ways,group", [(2, 16), (4, 3)])
def test_compact_parts_on_the_ip(tmp_path, ways, group):
    rng = random.Random(ways)
    runs = _runs(rng, ways, 1500, "prefix", group)
    res = _compact(tmp_path, runs, "--parts", "4", "--ways", str(ways), "--group", str(group), "--stall", "0.2",
                   "--check")
    assert res.returncode == 0, res.stdout + res.stderr
    out, inv = (tmp_path / "out").read_bytes(), (tmp_path / "inv").read_bytes()
    want, want_inv = kb16.merge_runs(runs, group)
    assert kb16.decode(out, group) == kb16.decode(want, group) and inv == want_inv
    assert out == split.subcompact(runs, group, 4)[0]       # the IP's parts stitch as the model's do
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("cycles=") and f"entries_out={len(out) // 16} invalid={len(inv) // 4}" in last
    assert "HW_CYCLES per part" in res.stdout


def test_compact_parts_names_a_malformed_run(tmp_path):
    runs = _runs(random.Random(4), 2, 300, "uniform", 16)
    bad = bytearray(runs[1])
    bad[16 * 20] = 0x90           # shared_len 9 in entry 20 of run 1
    res = _compact(tmp_path, [runs[0], bytes(bad)], "--parts", "3")
    assert res.returncode == 3 and res.stdout.strip().splitlines()[-1] == "error: LEN_OVER_8 at input 1 entry 20"
    assert not (tmp_path / "out").exists()
    res = _compact(tmp_path, runs, "--parts", "17")
    assert res.returncode == 2 and "--parts" in res.stderr


# ---- the firmware's variants: cheap split keys, closing in place --------------------------------------

@pytest.mark.parametrize("group", GROUPS)
def test_split_keys_fast(c, group):
    rng = random.Random(group + 50)
    for trial in range(6):
        runs = _runs(rng, rng.randint(1, 4), rng.randint(0, 400), ["short", "uniform", "prefix"][trial % 3], group)
        parts = rng.randint(1, 8)
        keys = split.split_keys_fast(runs, group, parts)
        rc, ck = c.split_keys(runs, group, parts, fast=True)
        assert rc == 0 and ck == keys
        check(c, runs, group, parts, keys)


@pytest.mark.parametrize("group", [3, 16])
def test_split_keys_skew(c, group):
    """The firmware's bank-skewed split (split j moved by skew*j groups of the largest run; past its end:
    the last group's key, so keys never decrease): C equals the model, and the sub-compaction at those
    keys is valid."""
    rng = random.Random(group + 90)
    for trial in range(6):
        runs = _runs(rng, rng.randint(1, 4), rng.randint(0, 400), ["short", "uniform", "prefix"][trial % 3], group)
        parts, skew = rng.randint(1, 8), rng.choice([0, 1, 2, 5, 40])
        keys = split.split_keys_fast(runs, group, parts, skew)
        rc, ck = c.split_keys(runs, group, parts, skew=skew)
        assert rc == 0 and ck == keys, (skew, parts)
        if skew == 0:
            assert keys == split.split_keys_fast(runs, group, parts)
        check(c, runs, group, parts, keys)


def test_split_keys_fast_balances_dealt_runs(c):
    """The sweep's workload (one key set dealt over K runs): the cheap split is within 2.5 % of total/M."""
    from lsmc.model import workloads
    k0, k1 = workloads.make_runs("short", 40_000, 0.25, 1)
    runs = [kb16.encode(k, 16) for k in workloads.deal(k0, k1, 4)]
    total = sum(len(r) for r in runs)
    for parts in (2, 4, 8):
        plan = split.plan(runs, 16, split.split_keys_fast(runs, 16, parts))
        sizes = [sum(16 * (s.tail_end - s.head_src) for s in row) for row in plan]
        assert max(abs(x - total / parts) for x in sizes) < 0.025 * total / parts, sizes


def test_stitch_inplace(c):
    """Closing each part in its own buffer: the concatenation is stitch's run, C equals the model, and a
    part with no freedom is refused (OPEN_PART) by both."""
    rng = random.Random(21)
    seen = set()
    for _trial in range(80):
        group = rng.choice(GROUPS)
        kind = rng.choice(["short", "long", "prefix", "uniform"])
        keys = _keys(rng, rng.randint(0, 200), kind)
        cuts = sorted(rng.randint(0, len(keys)) for _ in range(rng.randint(0, 6)))
        pieces = [keys[a:b] for a, b in zip([0] + cuts, cuts + [len(keys)])]
        outs = [kb16.encode([(k, i) for i, k in enumerate(p)], group) for p in pieces]
        rc, res, got = c.stitch_inplace(outs, group)
        try:
            want = split.stitch_inplace(outs, group)
        except split.OpenPart as e:
            assert (rc, res.err_input) == (OPEN_PART, e.part)
            seen.add("open")
            continue
        assert rc == 0 and got == want and b"".join(want) == split.stitch(outs, group)
        assert res.out_bytes == sum(map(len, want))
        seen.add("closed")
    # long keys only, G even: every key is two entries, nothing can change the count
    keys = _keys(random.Random(1), 40, "long")
    keys = [k for k in keys if k[:1] != keys[0][:1] or k == keys[0]][:9]  # no shared first byte
    outs = [kb16.encode([(k, 1) for k in keys[:3]], 16), kb16.encode([(k, 2) for k in keys[3:]], 16)]
    with pytest.raises(split.OpenPart):
        split.stitch_inplace(outs, 16)
    assert c.stitch_inplace(outs, 16)[0] == OPEN_PART
    assert seen == {"open", "closed"} or seen == {"closed"}
