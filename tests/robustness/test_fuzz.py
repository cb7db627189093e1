"""Property-based fuzzing (Hypothesis) of the host side's parsers: the KB16 decoder, the key-list
parser and the option parsers. Bounded in `scripts/test` (200 examples per property, profile `bounded`
in tests/conftest.py); LSMC_FUZZ_LONG=1 runs 20,000 per property."""
from __future__ import annotations

import argparse
import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from lsmc import cliutil
from lsmc.model import kb16, workloads

ASCII_DEC = re.compile(r"[0-9]+")
ASCII_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
# text that looks like a number to Python but is not one to the tools
NEAR_NUMBERS = st.one_of(
    st.text(alphabet="0123456789_+- xXabcdefABCDEF.eE\t\n\u0660\u0661\u0663\u06f1\u0967\uff11\u00b2\u00bd",
            max_size=12),
    st.integers(-2**70, 2**70).map(str),
    st.integers(0, 2**70).map(hex),
)


# ------------------------------------------------------------------------------------- numbers
@given(NEAR_NUMBERS, st.booleans())
@example("1_000", False)
@example("\u0661\u0660", False)
@example("0x+4", True)
@example("+5", False)
@example(" 5", False)
@example("5\n", False)
@example("\u00b2", False)
def test_parse_int_accepts_exactly_ascii_digits(text, hex_ok):
    accepted = bool(ASCII_DEC.fullmatch(text)) or (hex_ok and bool(ASCII_HEX.fullmatch(text)))
    try:
        v = cliutil.parse_int(text, hex_ok=hex_ok)
    except ValueError as e:
        assert not accepted, text
        assert repr(text) in str(e)
        return
    assert accepted, text
    assert v == (int(text, 16) if text[:2] in ("0x", "0X") else int(text, 10))


@given(st.integers(0, 2**64))
def test_parse_int_round_trips(n):
    assert cliutil.parse_int(str(n)) == n
    assert cliutil.parse_int(hex(n), hex_ok=True) == n
    with pytest.raises(ValueError):
        cliutil.parse_int(hex(n))  # hex only where documented


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.one_of(st.integers(-2**41, 2**41).map(str), NEAR_NUMBERS))
def test_int_option_range(lo, span, text):
    hi = lo + span
    opt = cliutil.int_option(lo, hi)
    try:
        v = opt(text)
    except argparse.ArgumentTypeError as e:
        assert f"{lo}..{hi}" in str(e)  # the message names the allowed range
        assert not (ASCII_DEC.fullmatch(text) and lo <= int(text) <= hi)
        return
    assert ASCII_DEC.fullmatch(text) and v == int(text) and lo <= v <= hi


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(str), NEAR_NUMBERS,
                 st.from_regex(r"\A[0-9]{0,3}(\.[0-9]{0,4})?\Z")), st.booleans())
@example("nan", False)
@example("inf", False)
@example("1e-1", False)
@example("1.0", True)
def test_fraction_option(text, hi_open):
    opt = cliutil.fraction_option(0.0, 1.0, hi_open=hi_open)
    try:
        v = opt(text)
    except argparse.ArgumentTypeError:
        ok = re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", text)
        assert not ok or not (0 <= float(text) < 1 if hi_open else 0 <= float(text) <= 1)
        return
    assert re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", text)
    assert 0.0 <= v <= 1.0 and (v < 1.0 or not hi_open)


@given(st.lists(st.integers(0, 40), min_size=1, max_size=5), st.sampled_from([",", ",,", " ", ""]))
def test_list_option(values, sep):
    text = sep.join(map(str, values))
    if sep == ",":
        expect = values if all(2 <= v <= 30 for v in values) else None
    elif len(values) == 1 or sep == "":
        expect = [int(text)] if 2 <= int(text) <= 30 else None  # one number
    else:
        expect = None  # an empty item or a space inside a number
    try:
        got = cliutil.int_list_option(2, 30)(text)
    except argparse.ArgumentTypeError as e:
        assert expect is None, text
        assert "2..30" in str(e)
        return
    assert got == expect, text


# ------------------------------------------------------------------------------------ KB16 data
KEYS = st.lists(st.tuples(st.binary(min_size=1, max_size=kb16.MAX_KEY), st.integers(0, kb16.MAX_ADDR)),
                max_size=60).map(lambda ps: sorted({k: a for k, a in ps}.items()))


@given(KEYS, st.integers(kb16.GROUP_MIN, 24))
def test_decode_inverts_encode(keys, group):
    data = kb16.encode(keys, group)
    assert len(data) % kb16.ENTRY_BYTES == 0
    assert kb16.decode(data, group) == keys


def assert_sound(keys, group):
    """What the decoder returns is a valid key list: strictly increasing keys of 1..16 bytes, 32-bit
    addresses, and it survives a canonical re-encoding unchanged. (The input itself need not be canonical:
    the format accepts, e.g., a virtual entry whose prefix the next entry does not use; docs/kb16-format.md.)"""
    assert all(1 <= len(k) <= kb16.MAX_KEY and 0 <= a <= kb16.MAX_ADDR for k, a in keys)
    assert all(a[0] < b[0] for a, b in zip(keys, keys[1:]))
    assert kb16.decode(kb16.encode(keys, group), group) == keys


@given(st.binary(max_size=16 * 40), st.integers(kb16.GROUP_MIN, 24))
def test_decoder_on_random_bytes(data, group):
    """Random bytes: either a clean Kb16Error naming the entry, or a sound key list."""
    try:
        keys = kb16.decode(data, group)
    except kb16.Kb16Error as e:
        assert e.message and "entry" in e.message or "length" in e.message
        return
    assert_sound(keys, group)


@given(KEYS, st.integers(kb16.GROUP_MIN, 24), st.data())
def test_decoder_on_mutated_runs(keys, group, data):
    """One byte of a valid run changed: the decoder rejects it or returns a sound key list."""
    run = bytearray(kb16.encode(keys, group))
    assume(run)
    i = data.draw(st.integers(0, len(run) - 1))
    run[i] ^= data.draw(st.integers(1, 255))
    try:
        got = kb16.decode(bytes(run), group)
    except kb16.Kb16Error:
        return
    assert_sound(got, group)


def test_a_non_canonical_run_found_by_the_fuzzer():
    """Found by the long run: a virtual entry whose prefix the next entry does not use is accepted (no
    error code exists for it) and decodes to the keys after it."""
    run = bytearray(kb16.encode([(b"\x00", 0), (b"\x01", 0)], 2))
    run[1] ^= 1  # entry 0 becomes virtual
    assert kb16.decode(bytes(run), 2) == [(b"\x01", 0)]


@given(st.text(max_size=200))
@example("00 \u0661\n")
@example("00 1_000\n")
@example("00 0x+4\n")
@example("00 -1\n")
def test_key_list_parser(text):
    """`kb16 encode`'s key list: either pairs whose addresses were ASCII numbers, or one ValueError
    naming the line."""
    try:
        pairs = workloads.parse_keys(text, "k.txt")
    except ValueError as e:
        assert str(e).startswith("k.txt: line ")
        return
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        if parts:
            assert ASCII_DEC.fullmatch(parts[1]) or ASCII_HEX.fullmatch(parts[1])
    assert all(isinstance(a, int) and a >= 0 for _, a in pairs)


# ---------------------------------------------------------------------------------- atomic outputs
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=4), st.integers(0, 4))
def test_outputs_all_or_nothing(tmp_path_factory, contents, fail_at):
    """Any number of outputs, the run failing after any of them: either every target holds its new
    content or every target holds its old one, and no temporary file is left."""
    d = tmp_path_factory.mktemp("out")
    targets = [d / f"f{i}" for i in range(len(contents))]
    for i, t in enumerate(targets):
        if i % 2 == 0:
            t.write_bytes(b"old%d" % i)
    before = {t: t.read_bytes() if t.exists() else None for t in targets}
    try:
        with cliutil.Outputs() as out:
            for i, (t, c) in enumerate(zip(targets, contents)):
                if i == fail_at:
                    raise RuntimeError("the run failed")
                out.add(t, c)
    except RuntimeError:
        assert {t: t.read_bytes() if t.exists() else None for t in targets} == before
    else:
        assert [t.read_bytes() for t in targets] == contents
    assert sorted(p.name for p in d.iterdir()) == sorted(t.name for t in targets if t.exists())
