"""Seeded workload generator: two sorted runs of (key, value address) for compaction tests/benchmarks.

`make_runs(kind, keys, overlap, seed)` -> (run0, run1). run0 (newer) gets keys // 2 pairs, run1
(older) the rest; `overlap` is the fraction of run1's keys that also appear in run0 (rounded, and at
most len(run0)). Every address over both runs is unique and non-zero (value-log offsets: increasing
multiples of 4 with random gaps, dealt out in random order), so picking the wrong run's address in a
merge is always visible. The same arguments give the same runs on every machine: only
random.Random(seed) draws are used, never set or hash ordering.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from lsmc.cliutil import int_list_option, parse_int

KINDS = ("uniform", "short", "prefix", "long", "ycsb")
MAX_KEYS = 16_000_000          # keeps the address space (gaps up to 64 bytes) inside uint32

Pairs = list[tuple[bytes, int]]


def sizes_option():
    """The option type of keys per job, 2..MAX_KEYS (bench and report)."""
    return int_list_option(2, MAX_KEYS)


def _rand_bytes(rng: random.Random, n: int) -> bytes:
    return rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""


def _uniform(rng: random.Random, n: int) -> Callable[[], bytes]:
    return lambda: _rand_bytes(rng, rng.randint(1, 16))


def _short(rng: random.Random, n: int) -> Callable[[], bytes]:
    # 1..8 bytes: every key fits one entry, so entries == keys.
    return lambda: _rand_bytes(rng, rng.randint(1, 8))


def _long(rng: random.Random, n: int) -> Callable[[], bytes]:
    # 9..16 bytes: every key needs a virtual entry.
    return lambda: _rand_bytes(rng, rng.randint(9, 16))


def _prefix(rng: random.Random, n: int) -> Callable[[], bytes]:
    # A few long prefixes (6..12 bytes, about one per 64 keys) shared by many keys, then a short
    # suffix: exercises shared_len 6..8, the 8-byte cap and keys that are prefixes of each other.
    prefixes = [_rand_bytes(rng, rng.randint(6, 12)) for _ in range(max(1, n // 64))]

    def gen() -> bytes:
        p = rng.choice(prefixes)
        return p + _rand_bytes(rng, rng.randint(0, min(4, 16 - len(p))))
    return gen


def _ycsb(rng: random.Random, n: int) -> Callable[[], bytes]:
    # YCSB-style "user" + decimal number (hash of a record number there), at most 16 bytes.
    return lambda: b"user" + str(rng.randrange(10 ** 12)).encode()


_GENERATORS = {"uniform": _uniform, "short": _short, "prefix": _prefix, "long": _long, "ycsb": _ycsb}


def _distinct_keys(kind: str, n: int, rng: random.Random) -> list[bytes]:
    """n distinct keys in generation order (deterministic)."""
    gen = _GENERATORS[kind](rng, n)
    seen: set[bytes] = set()
    out: list[bytes] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n + 1000:                   # every kind's key space dwarfs MAX_KEYS
            raise RuntimeError(f"workload {kind}: cannot find {n} distinct keys")
        k = gen()
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def _addresses(n: int, rng: random.Random) -> list[int]:
    """n unique non-zero uint32 addresses: increasing multiples of 4 with random gaps, shuffled."""
    addrs, a = [], 0
    for _ in range(n):
        a += 4 * rng.randint(1, 16)
        addrs.append(a)
    rng.shuffle(addrs)
    return addrs


def make_runs(kind: str, keys: int, overlap: float, seed: int) -> tuple[Pairs, Pairs]:
    """Two sorted runs (run0 newer, run1 older) of (key, address); see the module doc."""
    if kind not in KINDS:
        raise ValueError(f"unknown workload kind {kind!r} (one of {', '.join(KINDS)})")
    if isinstance(keys, bool) or not isinstance(keys, int) or not 0 <= keys <= MAX_KEYS:
        raise ValueError(f"key count {keys!r} outside 0..{MAX_KEYS}")
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"overlap {overlap!r} outside 0..1")
    rng = random.Random(f"{kind}:{seed}")
    n0 = keys // 2
    n1 = keys - n0
    shared = min(n0, round(overlap * n1))
    distinct = _distinct_keys(kind, n0 + n1 - shared, rng)
    keys0 = distinct[:n0]
    keys1 = rng.sample(keys0, shared) + distinct[n0:]
    addrs = _addresses(n0 + n1, rng)
    run0 = sorted(zip(keys0, addrs[:n0]))
    run1 = sorted(zip(keys1, addrs[n0:]))
    return run0, run1


def format_keys(pairs: Pairs) -> str:
    """The `<hex key> <address>` text form read by `kb16 encode`."""
    return "".join(f"{k.hex()} {a}\n" for k, a in pairs)


def parse_keys(text: str, name: str = "<keys>", lines: list[int] | None = None) -> Pairs:
    """Parse `<hex key> <address>` lines (address decimal or 0x-hex, `#` comments, blank lines).

    Raises ValueError("<name>: line N: problem"); order and key length are checked by the encoder.
    If `lines` is a list, the line number of each pair is appended to it (for error messages)."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{name}: line {no}: expected '<hex key> <address>', got {line!r}")
        try:
            key = bytes.fromhex(parts[0])
        except ValueError:
            raise ValueError(f"{name}: line {no}: bad hex key {parts[0]!r}") from None
        try:
            addr = parse_int(parts[1], hex_ok=True)  # ASCII digits only: no sign, `_` or other scripts
        except ValueError:
            raise ValueError(f"{name}: line {no}: bad address {parts[1]!r}") from None
        out.append((key, addr))
        if lines is not None:
            lines.append(no)
    return out


def deal(k0: Pairs, k1: Pairs, ways: int) -> list[Pairs]:
    """The two-run workload dealt into `ways` runs: run0's keys round robin over runs 0..ways/2-1, run1's
    over ways/2..ways-1, so each overlapping key sits in one newer and one older run (bench --ways, the
    scaling sweep)."""
    half = ways // 2
    return [k0[i::half] for i in range(half)] + [k1[i::half] for i in range(half)]
