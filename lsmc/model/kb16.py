"""KB16 reference model: encoder, checking decoder, two-way merge and dump.

Written from the KB16 format (docs/kb16-format.md) alone; every RTL and
firmware test compares against it, so it favours plain, obviously-right code over speed.  Error codes and
their order come from hw/ip/compaction/data/kb16_errors.json (tabled in
docs/architecture.md).  The format in prose: docs/kb16-format.md.

Decoder rules this model fixes where the format is silent (docs/kb16-format.md, "Checking"):
- every check is a predicate on one entry's raw fields plus the decoder state (previous decoded
  key, previous real key, slot in the group); when several hold, the lowest code wins;
- the header checks (codes 1..4) apply to every entry kind, pads and virtual entries included;
- an entry with `pad = 1` is a pad (any other set bit, `vir` included, is BAD_PAD); the `vir` bit
  alone decides VIRTUAL_AT_END, so `vir = pad = 1` in a last slot reports VIRTUAL_AT_END (5);
- VIRTUAL_AT_END covers every breach of "the entry after a virtual entry is a real entry of the
  same group": a virtual entry in slot G-1 or at the end of the run (reported at the virtual
  entry), and a virtual or pad entry right after a virtual entry (reported at that entry);
- a pad may sit only at slot G-1 (the last slot of a full group);
- the "previous decoded key" of the first entry of a run is the empty key;
- a length that is not a multiple of 16 is reported after the complete entries (which are checked
  first, in stream order) at index len // 16, the entry that is cut short.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lsmc.paths import ROOT

ENTRY_BYTES = 16
MAX_KEY = 16
MAX_FIELD = 8          # shared_len and unshared_len are 0..8
GROUP_MIN, GROUP_MAX, GROUP_DEFAULT = 2, 256, 16
MAX_ADDR = 0xFFFF_FFFF

HDR_UNSHARED = 0x00F
HDR_SHARED = 0x0F0
HDR_VIR = 0x100
HDR_PAD = 0x200
HDR_RESERVED = 0xFFFF_FC00

# Error codes of STATUS.ERR_CODE: their one source is hw/ip/compaction/data/kb16_errors.json (the IP's
# Scala and the firmware's kb16_errors.h are made from it too), read here directly so the model needs no
# build. `problem` is the wording of the shared vectors' reference messages.
ERRORS_FILE = ROOT / "hw" / "ip" / "compaction" / "data" / "kb16_errors.json"


def _errors() -> list:
    try:
        codes = json.loads(ERRORS_FILE.read_text())["codes"]
        if [c["code"] for c in codes] != list(range(len(codes))):
            raise ValueError("codes are not 0, 1, 2, ... in order")
        return codes
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ImportError(f"{ERRORS_FILE}: not the KB16 error table ({e})") from None


ERRORS = _errors()
ERROR_NAMES = {c["code"]: c["name"] for c in ERRORS}
PROBLEMS = {c["code"]: c["problem"] for c in ERRORS if "problem" in c}
_CODE = {c["name"]: c["code"] for c in ERRORS}
NONE, RESERVED_BITS, LEN_OVER_8 = _CODE["NONE"], _CODE["RESERVED_BITS"], _CODE["LEN_OVER_8"]
SHARED_OVER_PREV, GROUP_START_SHARED = _CODE["SHARED_OVER_PREV"], _CODE["GROUP_START_SHARED"]
VIRTUAL_AT_END, BAD_PAD, EMPTY_KEY = _CODE["VIRTUAL_AT_END"], _CODE["BAD_PAD"], _CODE["EMPTY_KEY"]
NOT_INCREASING, LENGTH, FILL_NONZERO = _CODE["NOT_INCREASING"], _CODE["LENGTH"], _CODE["FILL_NONZERO"]
OUT_OVERFLOW, INV_OVERFLOW, BAD_GROUP = _CODE["OUT_OVERFLOW"], _CODE["INV_OVERFLOW"], _CODE["BAD_GROUP"]


class Kb16Error(ValueError):
    """A malformed run (or bad group size).

    code: numeric error code (RESERVED_BITS ... FILL_NONZERO, BAD_GROUP); name: its table name;
    index: 0-based entry index of the offender (len // 16 for LENGTH, None for BAD_GROUP);
    input: 0 or 1 when raised by merge() (which run was bad), else None;
    message: e.g. "entry 5: reserved header bits set".
    """

    def __init__(self, code: int, index: int | None, message: str, input: int | None = None):
        super().__init__(message)
        self.code = code
        self.name = ERROR_NAMES.get(code, str(code))
        self.index = index
        self.message = message
        self.input = input

    def __repr__(self) -> str:
        return f"Kb16Error({self.name}={self.code}, index={self.index}, {self.message!r})"


class KeyListError(ValueError):
    """A key list that cannot be encoded (bad key length, order, address); index = key index."""

    def __init__(self, index: int, message: str):
        super().__init__(f"key {index}: {message}")
        self.index = index


@dataclass(frozen=True)
class Entry:
    """One 16-byte entry as stored."""
    header: int
    address: int
    keybytes: bytes      # the 8 stored key bytes, fill included

    @property
    def unshared(self) -> int:
        return self.header & HDR_UNSHARED

    @property
    def shared(self) -> int:
        return (self.header & HDR_SHARED) >> 4

    @property
    def vir(self) -> bool:
        return bool(self.header & HDR_VIR)

    @property
    def pad(self) -> bool:
        return bool(self.header & HDR_PAD)

    def pack(self) -> bytes:
        return struct.pack("<II8s", self.header, self.address, self.keybytes)

    @staticmethod
    def unpack(raw: bytes) -> Entry:
        header, address, keybytes = struct.unpack("<II8s", raw)
        return Entry(header, address, keybytes)


def check_group(group: int) -> None:
    if not isinstance(group, int) or isinstance(group, bool) or not GROUP_MIN <= group <= GROUP_MAX:
        raise Kb16Error(BAD_GROUP, None, f"group size {group!r} outside {GROUP_MIN}..{GROUP_MAX}")


def _real(shared: int, suffix: bytes, address: int) -> Entry:
    return Entry(shared << 4 | len(suffix), address, suffix.ljust(8, b"\0"))


def _virtual(shared: int, suffix: bytes) -> Entry:
    return Entry(HDR_VIR | shared << 4 | len(suffix), 0, suffix.ljust(8, b"\0"))


PAD = Entry(HDR_PAD, 0, bytes(8))


def common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def validate_keys(keys: Iterable[tuple[bytes, int]]) -> list[tuple[bytes, int]]:
    """Return keys as a list after checking: 1..16-byte keys, strictly increasing, uint32 addresses."""
    out = []
    prev = None
    for i, item in enumerate(keys):
        try:
            key, addr = item
        except (TypeError, ValueError):
            raise KeyListError(i, f"expected (key, address), got {item!r}") from None
        if not isinstance(key, (bytes, bytearray)):
            raise KeyListError(i, f"key must be bytes, got {type(key).__name__}")
        key = bytes(key)
        if not 1 <= len(key) <= MAX_KEY:
            raise KeyListError(i, f"key length {len(key)} outside 1..{MAX_KEY}")
        if not isinstance(addr, int) or isinstance(addr, bool) or not 0 <= addr <= MAX_ADDR:
            raise KeyListError(i, f"address {addr!r} is not a uint32")
        if prev is not None and key <= prev:
            raise KeyListError(i, f"key {key.hex()} not strictly greater than previous key {prev.hex()}")
        out.append((key, addr))
        prev = key
    return out


def encode_entries(keys: Iterable[tuple[bytes, int]], group: int) -> list[Entry]:
    """Canonical encoding (spec rules 1-3) as a list of entries."""
    check_group(group)
    entries: list[Entry] = []
    prev = b""                                   # previous decoded key
    for key, addr in validate_keys(keys):
        slot = len(entries) % group
        s = 0 if slot == 0 else min(MAX_FIELD, common_prefix(prev, key))
        if len(key) - s <= MAX_FIELD:                             # rule 2
            entries.append(_real(s, key[s:], addr))
        else:                                                     # rule 3
            if slot == group - 1:
                entries.append(PAD)
                s = 0
            entries.append(_virtual(s, key[s:s + MAX_FIELD]))
            entries.append(_real(MAX_FIELD, key[MAX_FIELD:], addr))
        prev = key
    return entries


def encode(keys: Iterable[tuple[bytes, int]], group: int = GROUP_DEFAULT) -> bytes:
    """Byte image of the canonical encoding of sorted (key, address) pairs."""
    return b"".join(e.pack() for e in encode_entries(keys, group))


@dataclass(frozen=True)
class Decoded:
    """One checked entry with its decoder view (for dump and tools)."""
    index: int
    entry: Entry
    key: bytes | None        # decoded key (None for a pad)


def _entry_error(e: Entry, i: int, slot: int, group: int, n: int, prev: bytes,
                 prev_real: bytes | None, after_vir: bool = False) -> tuple[int, bytes | None]:
    """Lowest error code of entry i (NONE if good) and its decoded key; after_vir: entry i-1 is virtual."""
    sh, un = e.shared, e.unshared
    if e.header & HDR_RESERVED:
        return RESERVED_BITS, None
    if sh > MAX_FIELD or un > MAX_FIELD:
        return LEN_OVER_8, None
    if sh > len(prev):
        return SHARED_OVER_PREV, None
    if slot == 0 and sh != 0:
        return GROUP_START_SHARED, None
    if e.vir and (slot == group - 1 or i == n - 1):
        return VIRTUAL_AT_END, None
    if after_vir and (e.vir or e.pad):          # the entry after a virtual one must be real
        return VIRTUAL_AT_END, None
    if e.pad and (e.header != HDR_PAD or e.address != 0 or any(e.keybytes) or slot != group - 1):
        return BAD_PAD, None
    if e.pad:
        return NONE, None
    key = prev[:sh] + e.keybytes[:un]
    if not e.vir:
        if len(key) == 0:
            return EMPTY_KEY, key
        if prev_real is not None and key <= prev_real:
            return NOT_INCREASING, key
    if any(e.keybytes[un:]) or (e.vir and e.address != 0):
        return FILL_NONZERO, key
    return NONE, key


def iter_entries(data: bytes, group: int = GROUP_DEFAULT) -> Iterator[Decoded]:
    """Check and decode a run entry by entry; raises Kb16Error at the first bad entry."""
    check_group(group)
    data = bytes(data)
    n = len(data) // ENTRY_BYTES
    prev = b""                 # previous decoded key (real or virtual); a pad keeps it
    prev_real = None           # previous real key of the run
    after_vir = False          # the previous entry was virtual
    for i in range(n):
        e = Entry.unpack(data[i * ENTRY_BYTES:(i + 1) * ENTRY_BYTES])
        code, key = _entry_error(e, i, i % group, group, n, prev, prev_real, after_vir)
        if code != NONE:
            raise Kb16Error(code, i, f"entry {i}: {PROBLEMS[code]}")
        if key is not None:
            prev = key
            if not e.vir:
                prev_real = key
        after_vir = e.vir
        yield Decoded(i, e, key)
    if len(data) % ENTRY_BYTES:
        raise Kb16Error(LENGTH, n, f"length {len(data)} not a multiple of 16 "
                                   f"(entry {n} is cut short)")


def decode(data: bytes, group: int = GROUP_DEFAULT) -> list[tuple[bytes, int]]:
    """Real (key, address) pairs of a run, after every check of the format."""
    return [(d.key, d.entry.address) for d in iter_entries(data, group)
            if not d.entry.vir and not d.entry.pad]


def merge_keys(keys0: Iterable[tuple[bytes, int]], keys1: Iterable[tuple[bytes, int]]
               ) -> tuple[list[tuple[bytes, int]], list[int]]:
    """Key-level merge: keys0 is newer. Returns (merged pairs, superseded run-1 addresses)."""
    k0, k1 = list(keys0), list(keys1)
    merged: list[tuple[bytes, int]] = []
    invalid: list[int] = []
    i = j = 0
    while i < len(k0) and j < len(k1):
        if k0[i][0] < k1[j][0]:
            merged.append(k0[i])
            i += 1
        elif k1[j][0] < k0[i][0]:
            merged.append(k1[j])
            j += 1
        else:                                    # same key: newer run wins
            merged.append(k0[i])
            invalid.append(k1[j][1])
            i += 1
            j += 1
    merged += k0[i:] + k1[j:]
    return merged, invalid


def merge_keys_n(key_lists: list[list[tuple[bytes, int]]]) -> tuple[list[tuple[bytes, int]], list[int]]:
    """Key-level N-way merge, key_lists[0] newest. For a key held by several runs the newest address
    is kept; the others are superseded, for each key in key order, from the next-newest run to the
    oldest. Returns (merged pairs, superseded addresses)."""
    holders: dict[bytes, list[int]] = {}
    for keys in key_lists:
        for key, addr in keys:
            holders.setdefault(key, []).append(addr)
    merged, invalid = [], []
    for key in sorted(holders):
        addrs = holders[key]
        merged.append((key, addrs[0]))
        invalid += addrs[1:]
    return merged, invalid


def pack_addresses(addrs: Iterable[int]) -> bytes:
    return b"".join(struct.pack("<I", a) for a in addrs)


def unpack_addresses(data: bytes) -> list[int]:
    if len(data) % 4:
        raise ValueError(f"address file length {len(data)} not a multiple of 4")
    return [a for (a,) in struct.iter_unpack("<I", data)]


def merge(run0: bytes, run1: bytes, group: int = GROUP_DEFAULT) -> tuple[bytes, bytes]:
    """Two-way compaction of encoded runs (run0 newer) -> (merged run, invalid addresses LE uint32).

    A malformed input raises Kb16Error with .input set; run0 is checked first (the IP reports
    input 0 on a tie; which error comes first in time when both are bad is the IP's business)."""
    check_group(group)
    keys = []
    for which, run in ((0, run0), (1, run1)):
        try:
            keys.append(decode(run, group))
        except Kb16Error as err:
            err.input = which
            raise
    merged, invalid = merge_keys(keys[0], keys[1])
    return encode(merged, group), pack_addresses(invalid)


def merge_runs(runs: list[bytes], group: int = GROUP_DEFAULT) -> tuple[bytes, bytes]:
    """N-way compaction of encoded runs (runs[0] newest) -> (merged run, invalid addresses LE uint32).
    A malformed run raises Kb16Error with .input = its index (the lowest bad index is reported)."""
    check_group(group)
    keys = []
    for which, run in enumerate(runs):
        try:
            keys.append(decode(run, group))
        except Kb16Error as err:
            err.input = which
            raise
    merged, invalid = merge_keys_n(keys)
    return encode(merged, group), pack_addresses(invalid)


def cascade_plan(sizes: list[int], ways: int) -> list[tuple[int, int]]:
    """Cascading compaction (Lim and Shin, "LSM-Tree Compaction FPGA Accelerator using Cascading Compaction",
    section 3.2) of runs with these byte sizes (newest first) on a
    `ways`-input merger: while more runs than ways remain, merge the consecutive window of
    min(ways, runs - ways + 1) runs with the fewest bytes into one temporary run, in place (only
    neighbours in age may be merged, or a newer address could lose to an older one). Returns the
    windows as (first index, count) in the current list at each step; the final K-way merge is not
    listed."""
    if ways < 2:
        raise ValueError(f"ways must be >= 2, not {ways}")
    sizes = list(sizes)
    plan = []
    while len(sizes) > ways:
        m = min(ways, len(sizes) - ways + 1)
        start = min(range(len(sizes) - m + 1), key=lambda i: (sum(sizes[i:i + m]), i))
        plan.append((start, m))
        sizes[start:start + m] = [sum(sizes[start:start + m])]
    return plan


def cascade_merge(runs: list[bytes], group: int, ways: int, merge=None) -> tuple[bytes, bytes, list]:
    """Run cascade_plan with `merge(list_of_runs) -> (merged, invalid bytes)` (default: the model).
    Returns (merged run, invalid addresses of every step in step order, [(start, count), ...]).
    The merged run equals merge_runs(runs); the invalid addresses are the same set, step by step."""
    merge = merge or (lambda rs: merge_runs(rs, group))
    runs = list(runs)
    invalid = b""
    plan = cascade_plan([len(r) for r in runs], ways)
    for start, m in plan:
        tmp, inv = merge(runs[start:start + m])
        invalid += inv
        runs[start:start + m] = [tmp]
    out, inv = merge(runs)
    return out, invalid + inv, plan


def _printable(b: bytes) -> str:
    return "".join(chr(c) if 0x20 <= c < 0x7F else "." for c in b)


def format_entry(d: Decoded) -> str:
    e = d.entry
    kind = "pad" if e.pad else "vir" if e.vir else "key"
    stored = e.keybytes[:e.unshared]
    line = (f"{d.index:6d} {kind} s={e.shared} u={e.unshared} "
            f"bytes={stored.hex():<16} |{_printable(stored):<8}| addr=0x{e.address:08x}")
    if d.key is not None:
        line += f" key={d.key.hex()} |{_printable(d.key)}|"
    return line


def dump(data: bytes, group: int = GROUP_DEFAULT) -> list[str]:
    """Human-readable lines, one per entry; a malformed run ends with an "error:" line."""
    lines = []
    try:
        for d in iter_entries(data, group):
            lines.append(format_entry(d))
    except Kb16Error as err:
        lines.append(f"error: {err.name} ({err.code}): {err.message}")
    return lines


__all__ = [
    "Kb16Error", "KeyListError", "Entry", "Decoded", "encode", "encode_entries", "decode",
    "iter_entries", "merge", "merge_keys", "merge_keys_n", "merge_runs", "cascade_plan", "cascade_merge",
    "dump", "format_entry", "validate_keys", "check_group",
    "pack_addresses", "unpack_addresses", "ERROR_NAMES", "PROBLEMS", "ENTRY_BYTES", "GROUP_DEFAULT",
]
