"""KB16 reference model (lsmc/model/kb16.py) and workload generator (lsmc/model/workloads.py).

The shared vectors come from an independent implementation of the format (docs/kb16-format.md); the hand-made malformed
entries pin every error class and the lowest-code-wins rule; random workloads check round trips and
the merge against a dict-based merge that shares no code with the model.
"""

import json
import random
import struct

import pytest

from lsmc.model import kb16, workloads
from lsmc.model.kb16 import Kb16Error
from lsmc.model.vectors import VECTORS as VEC

CASES = json.loads((VEC / "cases.json").read_text())
MALFORMED = json.loads((VEC / "malformed.json").read_text())
GROUPS = (2, 3, 16, 255, 256)


def pairs(listed):
    return [(bytes.fromhex(k), a) for k, a in listed]


# --- shared vectors -----------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector_case(case):
    d, g = VEC / case["name"], case["group"]
    run0, run1 = (d / "run0.kb16").read_bytes(), (d / "run1.kb16").read_bytes()
    assert kb16.encode(pairs(case["run0"]), g) == run0
    assert kb16.encode(pairs(case["run1"]), g) == run1
    assert kb16.decode(run0, g) == pairs(case["run0"])
    assert kb16.decode(run1, g) == pairs(case["run1"])
    merged, invalid = kb16.merge(run0, run1, g)
    assert merged == (d / "merged.kb16").read_bytes()
    assert invalid == (d / "invalid.bin").read_bytes()
    assert kb16.decode(merged, g) == pairs(case["merged"])
    assert kb16.unpack_addresses(invalid) == case["invalid"]


# The code each shared malformed file is named after.
MALFORMED_CODE = {
    "malformed-reserved-bit.kb16": kb16.RESERVED_BITS,
    "malformed-unshared-over-8.kb16": kb16.LEN_OVER_8,
    "malformed-group-start-shared.kb16": kb16.GROUP_START_SHARED,
    "malformed-not-increasing.kb16": kb16.NOT_INCREASING,
    "malformed-length-not-multiple.kb16": kb16.LENGTH,
}


@pytest.mark.parametrize("m", MALFORMED, ids=[m["file"] for m in MALFORMED])
def test_vector_malformed(m):
    data = (VEC / m["file"]).read_bytes()
    with pytest.raises(Kb16Error) as ei:
        kb16.decode(data, m["group"])
    e = ei.value
    assert e.code == MALFORMED_CODE[m["file"]]
    if m["first_bad_entry"] is None:
        assert e.index == len(data) // 16
        assert "not a multiple of 16" in e.message
    else:
        assert e.index == m["first_bad_entry"]
        assert e.message == m["reference_message"]
    # As input 1 of a merge the same error comes back, tagged with the input.
    with pytest.raises(Kb16Error) as ei:
        kb16.merge(b"", data, m["group"])
    assert (ei.value.code, ei.value.index, ei.value.input) == (e.code, e.index, 1)


def test_paper_example_headers():
    keys = [(b"hellodb", 1), (b"helloworld", 2), (b"helloworld0", 3)]
    ents = kb16.encode_entries(keys, 16)
    assert [(e.shared, e.unshared, e.vir, e.pad) for e in ents] == \
        [(0, 7, False, False), (5, 5, False, False), (8, 3, False, False)]
    assert kb16.encode(keys, 16)[:16] == bytes.fromhex("07000000" "01000000" "68656c6c6f646200")


# --- canonical encoding by hand -----------------------------------------------------------------

def test_virtual_entry_layout():
    key = bytes(range(1, 14))                       # 13 bytes: needs a virtual entry
    ents = kb16.encode_entries([(b"\x01", 7), (key, 9)], 4)
    assert [(e.shared, e.unshared, e.vir, e.address) for e in ents] == \
        [(0, 1, False, 7), (1, 8, True, 0), (8, 5, False, 9)]
    assert ents[1].keybytes == key[1:9]
    assert ents[2].keybytes == key[8:] + bytes(3)


def test_pad_before_virtual_in_last_slot():
    # G=2: the second key needs a virtual entry at slot 1 (last): pad, then restart with s=0.
    ents = kb16.encode_entries([(b"a", 1), (b"a" * 16, 2)], 2)
    assert [(e.shared, e.unshared, e.vir, e.pad) for e in ents] == \
        [(0, 1, False, False), (0, 0, False, True), (0, 8, True, False), (8, 8, False, False)]
    assert ents[1].pack() == struct.pack("<II8s", 0x200, 0, bytes(8))


def test_shared_capped_at_8_and_group_restart():
    keys = [(b"abcdefghij", 1), (b"abcdefghijk", 2), (b"abcdefghijkl", 3)]
    ents = kb16.encode_entries(keys, 2)
    # group 0: vir(0,8) real(8,2); group 1: s=0 -> vir(0,8) real(8,3); group 2: vir(0,8) real(8,4)
    assert [(e.shared, e.unshared, e.vir) for e in ents] == \
        [(0, 8, True), (8, 2, False), (0, 8, True), (8, 3, False), (0, 8, True), (8, 4, False)]
    ents = kb16.encode_entries([(b"abcdefghij", 1), (b"abcdefghiz", 2)], 16)
    assert [(e.shared, e.unshared) for e in ents[2:]] == [(8, 2)]


@pytest.mark.parametrize("keys,msg", [
    ([(b"", 1)], "key length 0"),
    ([(b"x" * 17, 1)], "key length 17"),
    ([(b"b", 1), (b"a", 2)], "not strictly greater"),
    ([(b"a", 1), (b"a", 2)], "not strictly greater"),
    ([(b"a", -1)], "not a uint32"),
    ([(b"a", 1 << 32)], "not a uint32"),
    ([("a", 1)], "must be bytes"),
    ([(b"a",)], "expected (key, address)"),
])
def test_encode_rejects_bad_keys(keys, msg):
    with pytest.raises(kb16.KeyListError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        kb16.encode(keys, 16)


@pytest.mark.parametrize("g", [0, 1, 257, -3, "16"])
def test_bad_group(g):
    for call in (lambda: kb16.encode([(b"a", 1)], g), lambda: kb16.decode(b"", g),
                 lambda: kb16.merge(b"", b"", g)):
        with pytest.raises(Kb16Error) as ei:
            call()
        assert ei.value.code == kb16.BAD_GROUP


# --- hand-made malformed entries ----------------------------------------------------------------

def E(shared=0, unshared=0, key=b"", addr=0, vir=0, pad=0, extra=0):
    """Raw entry; key bytes are placed at offset 8 as given (fill included)."""
    hdr = unshared | shared << 4 | vir << 8 | pad << 9 | extra
    return struct.pack("<II8s", hdr, addr, key.ljust(8, b"\0"))


def R(shared, key, addr=1, **kw):
    return E(shared, len(key), key, addr, **kw)


GOOD = [R(0, b"abc", 1), R(2, b"d", 2), R(3, b"e", 3)]        # abc, abd, abde (G=4)

MALFORMED_CASES = [
    # (name, entries, group, code, index)
    ("reserved bit 10", GOOD[:2] + [E(3, 1, b"e", 3, extra=1 << 10)], 4, kb16.RESERVED_BITS, 2),
    ("reserved bit 31", [E(0, 1, b"a", 1, extra=1 << 31)], 4, kb16.RESERVED_BITS, 0),
    ("unshared 9", [R(0, b"a"), E(0, 9, b"bbbbbbbb", 2)], 4, kb16.LEN_OVER_8, 1),
    ("shared 15", [R(0, b"a"), E(15, 1, b"b", 2)], 4, kb16.LEN_OVER_8, 1),
    ("shared over previous", [R(0, b"ab"), R(3, b"c")], 4, kb16.SHARED_OVER_PREV, 1),
    ("shared at run start", [R(1, b"a")], 4, kb16.SHARED_OVER_PREV, 0),
    ("group start shared", GOOD + [R(0, b"x", 4), R(1, b"y", 5)], 4, kb16.GROUP_START_SHARED, 4),
    ("virtual in last slot", GOOD + [E(0, 8, b"zzzzzzzz", vir=1), R(8, b"z")], 4,
     kb16.VIRTUAL_AT_END, 3),
    ("virtual at end of run", [R(0, b"a"), E(0, 8, b"zzzzzzzz", vir=1)], 4, kb16.VIRTUAL_AT_END, 1),
    ("pad not in last slot", [R(0, b"a"), E(pad=1), R(0, b"b")], 4, kb16.BAD_PAD, 1),
    ("pad at short group end", [R(0, b"a"), E(pad=1)], 4, kb16.BAD_PAD, 1),
    ("pad with address", GOOD + [E(addr=5, pad=1)], 4, kb16.BAD_PAD, 3),
    ("pad with key byte", GOOD + [E(key=b"\0\0\0\0\0\0\0\1", pad=1)], 4, kb16.BAD_PAD, 3),
    ("pad with unshared", GOOD + [E(0, 1, b"q", pad=1)], 4, kb16.BAD_PAD, 3),
    ("pad with vir bit", [R(0, b"a"), E(vir=1, pad=1), R(0, b"b")], 4, kb16.BAD_PAD, 1),
    ("empty key", [R(0, b"a"), E(0, 0, b"", 2)], 4, kb16.EMPTY_KEY, 1),
    ("empty first key", [E(0, 0, b"", 2)], 4, kb16.EMPTY_KEY, 0),
    ("equal key", [R(0, b"ab"), R(2, b"")], 4, kb16.NOT_INCREASING, 1),
    ("smaller key", [R(0, b"b"), R(0, b"a")], 4, kb16.NOT_INCREASING, 1),
    ("prefix after extension", [R(0, b"abc"), R(2, b"")], 4, kb16.NOT_INCREASING, 1),
    ("smaller across groups", [R(0, b"m"), R(0, b"n"), R(0, b"a")], 2, kb16.NOT_INCREASING, 2),
    ("fill after key bytes", [R(0, b"a"), E(0, 2, b"bc\0\0\0x", 2)], 4, kb16.FILL_NONZERO, 1),
    ("fill right after key", [R(0, b"a"), E(0, 1, b"bx", 2)], 4, kb16.FILL_NONZERO, 1),
    ("fill in last key byte", [R(0, b"a"), E(0, 7, b"bcdefgh\1", 2)], 4, kb16.FILL_NONZERO, 1),
    ("virtual with address", [E(0, 8, b"zzzzzzzz", 9, vir=1), R(8, b"z")], 4,
     kb16.FILL_NONZERO, 0),
    # several faults in one entry: the lowest code wins
    ("reserved + unshared 9", [E(0, 9, b"a", 1, extra=1 << 12)], 4, kb16.RESERVED_BITS, 0),
    ("shared 9 at group start", [R(0, b"a"), R(0, b"b"), E(9, 1, b"c")], 2, kb16.LEN_OVER_8, 2),
    ("over previous at group start", [R(0, b"a"), R(0, b"b"), R(2, b"c")], 2,
     kb16.SHARED_OVER_PREV, 2),
    ("virtual at end with address", [R(0, b"a"), E(0, 8, b"zzzzzzzz", 4, vir=1)], 4,
     kb16.VIRTUAL_AT_END, 1),
    ("vir+pad in last slot", GOOD + [E(vir=1, pad=1)], 4, kb16.VIRTUAL_AT_END, 3),
    # the entry after a virtual entry must be a real entry (spec, "Groups"); reported at that entry
    ("virtual after virtual", [E(0, 8, b"aaaaaaaa", vir=1), E(8, 8, b"bbbbbbbb", vir=1), R(8, b"c", 5)], 4,
     kb16.VIRTUAL_AT_END, 1),
    ("pad after virtual", [R(0, b"a"), R(0, b"b"), E(0, 8, b"cccccccc", vir=1), E(pad=1), R(0, b"d")], 4,
     kb16.VIRTUAL_AT_END, 3),
    ("vir+pad after virtual", [E(0, 8, b"aaaaaaaa", vir=1), E(vir=1, pad=1), R(0, b"b")], 4,
     kb16.VIRTUAL_AT_END, 1),
    ("virtual after virtual, bad fill", [E(0, 8, b"aaaaaaaa", vir=1), E(8, 8, b"bbbbbbbb", 7, vir=1), R(8, b"c")],
     4, kb16.VIRTUAL_AT_END, 1),
    ("reserved bit after virtual", [E(0, 8, b"aaaaaaaa", vir=1), E(8, 1, b"b", 1, extra=1 << 11)], 4,
     kb16.RESERVED_BITS, 1),
    ("empty key with fill", [R(0, b"a"), E(0, 0, b"x", 2)], 4, kb16.EMPTY_KEY, 1),
    ("not increasing with fill", [R(0, b"b"), E(0, 1, b"a\0x", 2)], 4, kb16.NOT_INCREASING, 1),
    ("first error wins", [R(0, b"b"), R(0, b"a"), E(extra=1 << 20)], 4, kb16.NOT_INCREASING, 1),
]


@pytest.mark.parametrize("name,ents,g,code,index", MALFORMED_CASES,
                         ids=[c[0] for c in MALFORMED_CASES])
def test_malformed_entry(name, ents, g, code, index):
    with pytest.raises(Kb16Error) as ei:
        kb16.decode(b"".join(ents), g)
    e = ei.value
    assert (e.code, e.name, e.index) == (code, kb16.ERROR_NAMES[code], index), repr(e)
    assert e.message == f"entry {index}: {kb16.PROBLEMS[code]}"


@pytest.mark.parametrize("extra,index", [(1, 0), (15, 0), (17, 1), (33, 2), (47, 2)])
def test_length_not_multiple(extra, index):
    data = b"".join(GOOD)[:extra] if extra < 48 else b""
    with pytest.raises(Kb16Error) as ei:
        kb16.decode(data, 4)
    assert (ei.value.code, ei.value.index) == (kb16.LENGTH, index)
    assert ei.value.message.startswith(f"length {extra} not a multiple of 16")


def test_error_in_complete_entry_beats_length():
    data = E(0, 1, b"a", 1, extra=1 << 10) + b"\0" * 5
    with pytest.raises(Kb16Error) as ei:
        kb16.decode(data, 4)
    assert (ei.value.code, ei.value.index) == (kb16.RESERVED_BITS, 0)


def test_accepted_non_canonical_shapes():
    # A pad in slot G-1 may end a run; a virtual key smaller than the previous real key is fine
    # (only real keys must increase); a virtual in slot G-2 with its real entry in slot G-1 is fine;
    # the real entry after a virtual one need not share with it.
    data = b"".join([R(0, b"m", 1), R(0, b"n", 2), R(0, b"o", 3), E(pad=1)])
    assert kb16.decode(data, 4) == [(b"m", 1), (b"n", 2), (b"o", 3)]
    data = b"".join([R(0, b"m", 1), E(0, 1, b"a", vir=1), R(0, b"z", 2)])
    assert kb16.decode(data, 4) == [(b"m", 1), (b"z", 2)]
    data = b"".join([R(0, b"a", 1), R(0, b"b", 2), E(0, 8, b"cccccccc", vir=1), R(8, b"d", 3), R(0, b"e", 4)])
    assert kb16.decode(data, 4) == [(b"a", 1), (b"b", 2), (b"ccccccccd", 3), (b"e", 4)]
    assert kb16.decode(b"", 16) == []


def test_decoder_never_crashes_on_mutations():
    """Random byte/bit damage: decode either raises Kb16Error or returns a valid key list."""
    rng = random.Random(5)
    run0, _ = workloads.make_runs("prefix", 120, 0.0, 9)
    base = kb16.encode(run0, 3)
    raised = 0
    for _ in range(1500):
        data = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(256)
        if rng.random() < 0.05:
            data = data[:rng.randrange(len(data))]
        try:
            keys = kb16.decode(bytes(data), 3)
        except Kb16Error as e:
            raised += 1
            assert 1 <= e.code <= 10 and 0 <= e.index <= len(data) // 16
            continue
        assert all(1 <= len(k) <= 16 for k, _ in keys)
        assert all(a[0] < b[0] for a, b in zip(keys, keys[1:]))
    assert raised > 500


# --- random workloads ---------------------------------------------------------------------------

def dict_merge(run0, run1):
    """Trivially-correct merge: newer run overwrites; invalid = run1 addresses of shared keys."""
    table = dict(run1)
    table.update(run0)
    newer = dict(run0)
    invalid = [a for k, a in sorted(run1) if k in newer]
    return sorted(table.items()), invalid


@pytest.mark.parametrize("kind", workloads.KINDS)
@pytest.mark.parametrize("g", GROUPS)
def test_round_trip_and_merge(kind, g):
    run0, run1 = workloads.make_runs(kind, 600, 0.4, g)
    for run in (run0, run1):
        data = kb16.encode(run, g)
        assert len(data) % 16 == 0
        assert kb16.decode(data, g) == run
        ents = kb16.encode_entries(run, g)
        if kind == "short":                             # no virtual or pad entries
            assert len(ents) == len(run)
        for i, e in enumerate(ents):                    # canonical shape
            if i % g == 0:
                assert e.shared == 0
            if e.pad:
                assert i % g == g - 1 and ents[i + 1].vir
    merged, invalid = kb16.merge(kb16.encode(run0, g), kb16.encode(run1, g), g)
    want_keys, want_invalid = dict_merge(run0, run1)
    assert kb16.decode(merged, g) == want_keys
    assert merged == kb16.encode(want_keys, g)
    assert kb16.unpack_addresses(invalid) == want_invalid
    assert kb16.merge_keys(run0, run1) == (want_keys, want_invalid)


def test_merge_edge_cases():
    a = [(b"a", 1), (b"c", 3)]
    b = [(b"a", 10), (b"b", 20), (b"c", 30), (b"d", 40)]
    assert kb16.merge_keys(a, b) == ([(b"a", 1), (b"b", 20), (b"c", 3), (b"d", 40)], [10, 30])
    assert kb16.merge_keys([], b) == (b, [])
    assert kb16.merge_keys(a, []) == (a, [])
    assert kb16.merge(b"", b"", 16) == (b"", b"")


def test_merge_reports_bad_input0_first():
    bad = E(0, 1, b"a", 1, extra=1 << 10)
    with pytest.raises(Kb16Error) as ei:
        kb16.merge(bad, R(0, b"b") + R(0, b"a"), 4)
    assert (ei.value.input, ei.value.code) == (0, kb16.RESERVED_BITS)


# --- workloads ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", workloads.KINDS)
def test_workload_properties(kind):
    run0, run1 = workloads.make_runs(kind, 1001, 0.25, 7)
    assert (len(run0), len(run1)) == (500, 501)
    for run in (run0, run1):
        assert all(a[0] < b[0] for a, b in zip(run, run[1:]))
        assert all(1 <= len(k) <= 16 for k, _ in run)
    keys0 = {k for k, _ in run0}
    assert sum(k in keys0 for k, _ in run1) == round(0.25 * 501)
    addrs = [a for _, a in run0 + run1]
    assert len(set(addrs)) == len(addrs) and all(0 < a <= 0xFFFFFFFF and a % 4 == 0 for a in addrs)
    lens = [len(k) for k, _ in run0 + run1]
    if kind == "short":
        assert max(lens) <= 8
    if kind == "long":
        assert min(lens) >= 9
    if kind == "ycsb":
        assert all(k.startswith(b"user") and k[4:].isdigit() for k, _ in run0 + run1)
    if kind == "prefix":                 # long shared prefixes: most neighbours share >= 6 bytes
        cps = [kb16.common_prefix(a[0], b[0]) for a, b in zip(run0, run0[1:])]
        assert sum(c >= 6 for c in cps) > 0.8 * len(cps)
    assert workloads.make_runs(kind, 1001, 0.25, 7) == (run0, run1)
    assert workloads.make_runs(kind, 1001, 0.25, 8) != (run0, run1)


def test_workload_overlap_limits():
    r0, r1 = workloads.make_runs("uniform", 10, 1.0, 1)
    assert {k for k, _ in r1} == {k for k, _ in r0}
    r0, r1 = workloads.make_runs("uniform", 3, 1.0, 1)       # run1 has 2 keys, run0 only 1
    assert len(r0) == 1 and len(r1) == 2 and r0[0][0] in {k for k, _ in r1}
    assert workloads.make_runs("ycsb", 0, 0.5, 1) == ([], [])
    for bad in (("nope", 10, 0.5), ("uniform", -1, 0.5), ("uniform", 10, 1.5)):
        with pytest.raises(ValueError):
            workloads.make_runs(*bad, seed=1)


def test_keys_text_round_trip():
    run0, _ = workloads.make_runs("uniform", 50, 0, 2)
    assert workloads.parse_keys(workloads.format_keys(run0)) == run0
    lines = []
    got = workloads.parse_keys("# header\n\n0a 0x10  # c\n0b 010\n", "k.txt", lines)
    assert got == [(b"\n", 16), (b"\x0b", 10)] and lines == [3, 4]
    for text, msg in (("zz 1", "line 1: bad hex key"), ("0a", "line 1: expected"),
                      ("0a 1\n0b x", "line 2: bad address"), ("0a -4", "bad address")):
        with pytest.raises(ValueError, match=msg):
            workloads.parse_keys(text, "k.txt")


def test_dump_lines():
    data = kb16.encode([(b"hellodb", 1), (b"x" * 12, 2)], 16)
    lines = kb16.dump(data, 16)
    assert len(lines) == 3
    assert "key s=0 u=7" in lines[0] and "hellodb" in lines[0] and "addr=0x00000001" in lines[0]
    assert "vir" in lines[1] and "key=" + (b"x" * 12).hex() in lines[2]
    bad = kb16.dump(data + R(0, b"a"), 16)
    assert bad[-1] == "error: NOT_INCREASING (8): entry 3: keys not strictly increasing"
