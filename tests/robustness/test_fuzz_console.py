"""Property-based fuzzing (Hypothesis) of the firmware console's input side, compiled for the host:
the strict number parser (fw/lib/parse.c: parse_u32, parse_arg) and the UART line reader
(fw/drivers/uart.c: uart_read_command, fed through the fake SoC's UART). Each is compared with an
independent Python model of its documented rules. Bounded in `scripts/test` (profile `bounded` in
tests/conftest.py); LSMC_FUZZ_LONG=1 runs the long profile."""
from __future__ import annotations

import contextlib
import ctypes
import os
import re
import tempfile

import fake_soc as fs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lsmc.build import firmware

U32 = 0xFFFFFFFF
NUMBER = re.compile(rb"0|[1-9][0-9]*|0[xX][0-9a-fA-F]+")  # parse.h: decimal without leading zero, or 0x hex


def model_u32(text: bytes, limit: int):
    """The value parse_u32 must give, or None when it must refuse."""
    if not NUMBER.fullmatch(text):
        return None
    v = int(text, 16) if text[:2] in (b"0x", b"0X") else int(text)
    return v if v <= min(limit, U32) else None  # no wrap: beyond 32 bits is refused, not reduced


@pytest.fixture(scope="module")
def parse_lib():
    lib = ctypes.CDLL(str(firmware.build_host_lib("parse", [firmware.FW / "lib" / "parse.c"])))
    lib.parse_u32.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
    lib.parse_arg.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                              ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                              ctypes.POINTER(ctypes.c_uint32)]
    return lib


_libc = ctypes.CDLL(None)


@contextlib.contextmanager
def c_stdout():
    """What C's printf writes while inside (fd 1 redirected to a file); yields a list that gets it."""
    got = []
    _libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            yield got
        finally:
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            f.seek(0)
            got.append(f.read())


# numbers at and beyond 32 bits, written the accepted ways and some refused ones
BIG = st.one_of(st.integers(0, 2**70), st.sampled_from([U32, U32 + 1, 2**33, 2**64 - 1, 2**64]),
                st.integers(U32 - 3, U32 + 3))
NUM_TEXT = st.one_of(
    BIG.map(lambda n: str(n).encode()), BIG.map(lambda n: hex(n).encode()), BIG.map(lambda n: f"0X{n:X}".encode()),
    BIG.map(lambda n: b"0" + str(n).encode()), BIG.map(lambda n: b"+" + str(n).encode()),
    BIG.map(lambda n: b"-" + str(n).encode()), BIG.map(lambda n: str(n).encode() + b" "),
    st.text(alphabet="0123456789xXabcdefABCDEFg_+- .e", max_size=14).map(str.encode),
    st.binary(min_size=0, max_size=16).map(lambda b: b.replace(b"\0", b"")),  # C strings: no NUL inside
)
LIMITS = st.one_of(st.sampled_from([0, 1, 255, 65535, U32 - 1, U32]), st.integers(0, U32))


@given(NUM_TEXT, LIMITS)
@example(b"4294967296", U32)
@example(b"0x100000000", U32)
@example(b"42949672950", U32)  # wraps to 4294967286 if the overflow check were wrong
@example(b"0x00000000ffffffff", U32)
@example(b"00", 9)
@example(b"\xd9\xa1", 9)
def test_parse_u32_matches_model(parse_lib, text, limit):
    v = ctypes.c_uint32(0xDEADBEEF)
    rc = parse_lib.parse_u32(text, limit, ctypes.byref(v))
    want = model_u32(text, limit)
    if want is None:
        assert rc == -1 and v.value == 0xDEADBEEF, text  # refused, *v untouched
    else:
        assert rc == 0 and v.value == want, text


@given(st.integers(0, 2**40), st.integers(0, U32))
def test_parse_u32_round_trips_decimal_and_hex(parse_lib, n, limit):
    for text in (str(n).encode(), hex(n).encode()):
        v = ctypes.c_uint32(0)
        rc = parse_lib.parse_u32(text, limit, ctypes.byref(v))
        assert (rc, v.value if rc == 0 else None) == ((0, n) if n <= limit else (-1, None)), text


@given(NUM_TEXT, LIMITS, LIMITS, st.integers(0, U32), st.booleans())
def test_parse_arg_matches_model(parse_lib, text, lo, hi, dflt, given_arg):
    lo, hi = min(lo, hi), max(lo, hi)
    argv = (ctypes.c_char_p * 2)(b"cmd", text)
    argc = 2 if given_arg else 1
    v = ctypes.c_uint32(0xDEADBEEF)
    with c_stdout() as out:
        rc = parse_lib.parse_arg(b"nand", b"block", argc, argv, 1, lo, hi, dflt, ctypes.byref(v))
    if not given_arg:
        assert (rc, v.value, out[0]) == (0, dflt, b"")
        return
    want = model_u32(text, hi)
    if want is not None and want >= lo:
        assert (rc, v.value, out[0]) == (0, want, b""), text
    else:
        assert rc == -1 and v.value == 0xDEADBEEF, text
        assert out[0] == b"nand: block must be a number %d..%d, not '%s'\n" % (lo, hi, text), text


# ------------------------------------------------------------------------- the UART line reader
TOO_LONG, BAD_BYTE, TOO_MANY = -1, -2, -3  # fw/drivers/uart.h


def model_read_command(data: bytes, cap: int, max_words: int):
    """(rc, words, bytes consumed) of uart_read_command on the bytes `data` (which hold a CR or LF)."""
    buf, too_long, bad = [], False, False
    for i, c in enumerate(data):
        if c in (13, 10):
            if too_long:
                return TOO_LONG, None, i + 1
            if bad:
                return BAD_BYTE, None, i + 1
            words = bytes(buf).replace(b"\t", b" ").split()
            return (TOO_MANY, None, i + 1) if len(words) > max_words else (len(words), words, i + 1)
        if c in (8, 127):
            if buf and not too_long:
                buf.pop()
        elif (c < 32 and c != 9) or c > 126:
            bad = True
        elif len(buf) + 1 < cap:
            buf.append(c)
        else:
            too_long = True
    raise AssertionError("no line end")


@pytest.fixture(scope="module")
def soc():
    s = fs.FakeSoc()
    s.lib.uart_read_command.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint,
                                        ctypes.POINTER(ctypes.c_char_p), ctypes.c_uint]
    s.lib.uart_command_error.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
    s.lib.uart_command_error.restype = ctypes.c_char_p
    return s


# mostly printable words, blanks, line edits, and now and then a byte that is not printable ASCII
LINE_BYTE = st.one_of(st.sampled_from(b"ab0x9 \t"), st.integers(32, 126), st.sampled_from([8, 127]),
                      st.integers(0, 255).filter(lambda c: c not in (10, 13)))
LINE = st.lists(LINE_BYTE, max_size=120).map(bytes)


@given(LINE, st.sampled_from([b"\n", b"\r", b"\r\n"]), LINE, st.integers(2, 96), st.integers(1, 12))
@example(b"a" * 79, b"\n", b"", 80, 8)    # the longest line that fits
@example(b"a" * 80, b"\n", b"", 80, 8)    # one more: refused as a whole, not cut
@example(b"a" * 85 + b"\b" * 10, b"\n", b"", 80, 8)  # backspace cannot rescue an over-long line
@example(b"a b c d e f g h i", b"\n", b"", 80, 8)
@example(b"nand\x00 init", b"\n", b"", 80, 8)
@example(b"\xc3\xa9", b"\r", b"next", 80, 8)
def test_read_command_matches_model(soc, line, end, rest, cap, max_words):
    soc.uart_rx[:] = line + end + rest + b"\n"
    buf = ctypes.create_string_buffer(cap)
    argv = (ctypes.c_char_p * max_words)()
    rc = soc.lib.uart_read_command(b"> ", buf, cap, argv, max_words)
    want, words, used = model_read_command(line + end, cap, max_words)
    assert rc == want, (line, rc)
    assert bytes(soc.uart_rx) == (line + end)[used:] + rest + b"\n"  # nothing read past the line end
    if rc >= 0:
        assert [argv[i] for i in range(rc)] == words
        assert all(len(w) < cap for w in words)
    else:
        msg = soc.lib.uart_command_error(rc, cap, max_words).decode()
        assert msg.endswith(": ignored") and msg == {
            TOO_LONG: f"line too long (more than {cap - 1} characters): ignored",
            BAD_BYTE: "line holds a byte that is not printable ASCII: ignored",
            TOO_MANY: f"too many words (more than {max_words}): ignored"}[rc]
