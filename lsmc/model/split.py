"""Sub-compaction model: one N-way merge split by key range into M parts whose outputs concatenate into
one valid KB16 run (docs/scaling.md), the way RocksDB splits a compaction across `max_subcompactions`
threads. The C version is fw/lib/kb16.c (kb16_split_keys / kb16_split_plan / kb16_stitch /
kb16_subcompact); tests/test_subcompaction.py checks the two against each other byte for byte and both
against the unsplit merge (kb16.merge_runs).

Entry points:
- `split_keys(runs, group, parts)` -> parts-1 split keys (b"" sorts before every key), balanced by
  input bytes: for j = 1..parts-1 the group-start key of any run whose count of input bytes below it
  is nearest total*j//parts (ties: fewer bytes, lower run, earlier group); never decreasing.
- `plan(runs, group, keys)` -> per part, per run a `SubRun` (re-encoded head + original tail).
- `split_keys_fast(runs, group, parts)`: the firmware's cheap split, the largest run's group-start keys
  at groups*j//parts (parts-1 decodes; balanced when the runs' keys are alike in distribution).
- `stitch(outputs, group)` -> the parts' outputs (part order) as one valid run.
- `stitch_inplace(outputs, group)` -> each part closed on its own (no copy; their concatenation is
  stitch's result), or OpenPart when a part cannot be closed within its last 8 groups.
- `subcompact(runs, group, parts, keys=None, merge=None)` -> (run, invalid, info): the whole thing;
  `merge(list_of_subrun_bytes) -> (run, invalid)` runs one part (default: kb16.merge_runs; the IP
  model or a unit can stand in).
- `fit(keys, group, closed)` -> entries: the encoder with the format's freedom used to fill whole groups.

Guarantees (exact statement in docs/scaling.md): the parts' invalid streams concatenated in part order
are the unsplit merge's; the stitched run decodes to the unsplit merge's (key, address) sequence and is
valid; it is byte-identical to the unsplit output when every split key is the first key of a group of
that output (always for one part).

Part j merges from every run the keys in [s_j, s_j+1). In run i that is the entries from p (the first
entry of the first key >= s_j: a key's virtual entry belongs to it) to the p of part j+1. When p is not a
group start, the keys from p to the end of its group (or up to 8 groups further, until they fit) are
re-encoded from slot 0 (first key in full) to fill whole groups, the "head"; then the original entries
resume at that group boundary, the "tail". If no such fit exists the whole sub-run is re-encoded.
Entry indices a unit reports for a sub-run translate back with `SubRun.orig_index`.

Closing a part's output (stitch): a last group of G entries needs nothing, of G-1 a pad (canonical);
otherwise the part's last 1, 2, 4 or 8 groups are re-encoded by `fit` to fill whole groups: a real key
may take a virtual entry before it (2 slots instead of 1) and a pad may end any group. If none fits, the
next part's keys continue the canonical encoding (the part stays open) and the closing is tried at the
end of that one; the last part is never closed.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from lsmc.model import kb16
from lsmc.model.kb16 import PAD, Entry, Kb16Error

FIT_GROUPS = (1, 2, 4, 8)   # closing regions tried, in groups
HEAD_GROUPS = 8             # a head may extend this many groups past p's group before the whole sub-run is re-encoded
MAX_PARTS = 16              # KB16_MAX_PARTS


@dataclass(frozen=True)
class SubRun:
    """What part j reads of run i: `head` (re-encoded, in scratch), then the original entries
    [tail_begin, tail_end). head_src: original entry index where the head's keys start."""
    head: bytes
    head_src: int
    tail_begin: int
    tail_end: int

    def bytes(self, run: bytes) -> bytes:
        return self.head + run[self.tail_begin * 16:self.tail_end * 16]

    def orig_index(self, x: int) -> int:
        h = len(self.head) // 16
        return self.head_src if x < h else self.tail_begin + x - h


def _keys_with_pos(run: bytes, group: int) -> list[tuple[bytes, int, int]]:
    """(key, address, index of the key's first entry) of every real key."""
    out, first = [], None
    for d in kb16.iter_entries(run, group):
        e = d.entry
        if e.pad:
            continue
        if e.vir:
            first = d.index
            continue
        out.append((d.key, e.address, d.index if first is None else first))
        first = None
    return out


class _Run:
    def __init__(self, run: bytes, group: int):
        self.keys = _keys_with_pos(run, group)
        self.sorted = [k for k, _, _ in self.keys]
        self.n = len(run) // 16
        self.groups = -(-self.n // group)
        by_pos = {p: k for k, _, p in self.keys}
        self.starts = [by_pos[g * group] for g in range(self.groups)]   # every group starts a key

    def rank(self, s: bytes | None) -> int:
        """First entry of the first key >= s (None: after every key)."""
        if s is None:
            return self.n
        i = bisect.bisect_left(self.sorted, s)
        return self.keys[i][2] if i < len(self.keys) else self.n


def _check(runs, group):
    kb16.check_group(group)
    if not 1 <= len(runs) <= 32:
        raise ValueError(f"{len(runs)} runs: 1..32 allowed")
    out = []
    for i, r in enumerate(runs):
        try:
            out.append(_Run(bytes(r), group))
            if len(r) % 16:
                raise Kb16Error(kb16.LENGTH, len(r) // 16, f"length {len(r)} not a multiple of 16")
        except Kb16Error as err:
            err.input = i
            raise
    return out


def split_keys(runs: list[bytes], group: int, parts: int, _runs=None) -> list[bytes]:
    if not 1 <= parts <= MAX_PARTS:
        raise ValueError(f"parts {parts}: 1..{MAX_PARTS} allowed")
    rs = _runs or _check(runs, group)
    total = sum(len(r) for r in runs)

    def below(s):
        return 16 * sum(r.rank(s) for r in rs)

    keys, prev = [], b""
    for j in range(1, parts):
        t = total * j // parts
        best = None
        for r in rs:
            lo, hi = 0, r.groups          # smallest g with below(starts[g]) >= t
            while lo < hi:
                mid = (lo + hi) // 2
                if below(r.starts[mid]) >= t:
                    hi = mid
                else:
                    lo = mid + 1
            for g in (lo - 1, lo):
                if 0 <= g < r.groups:
                    b = below(r.starts[g])
                    score = (abs(b - t), b)
                    if best is None or score < best[0]:
                        best = (score, r.starts[g])
        key = b"" if best is None else best[1]
        prev = max(prev, key)
        keys.append(prev)
    return keys


def split_keys_fast(runs: list[bytes], group: int, parts: int, skew: int = 0) -> list[bytes]:
    """The firmware's cheap split (kb16_split_keys_fast, kb16_split_keys_skew): the largest run's (ties:
    lowest index) group-start keys at groups*j//parts + skew*j (at most the last group's with a skew); b""
    when that group does not exist."""
    if not 1 <= parts <= MAX_PARTS:
        raise ValueError(f"parts {parts}: 1..{MAX_PARTS} allowed")
    rs = _check(runs, group)
    pivot = max(range(len(runs)), key=lambda i: (len(runs[i]), -i))
    r = rs[pivot]
    at = [r.groups * j // parts + skew * j for j in range(1, parts)]
    if skew and r.groups:  # keys must not decrease: past the end, the last group's start key
        at = [min(g, r.groups - 1) for g in at]
    return [r.starts[g] if g < r.groups else b"" for g in at]


# ---- the encoder with freedom --------------------------------------------------------------------

def _s0(slot, prev, key):
    return 0 if slot == 0 else min(8, kb16.common_prefix(prev, key))


def _options(key, slot, prev, group):
    """(kind, next slot) of every way to write `key` at `slot`, canonical first."""
    n, s0 = len(key), _s0(slot, prev, key)
    last = slot == group - 1
    opts = []
    if n - s0 <= 8:
        opts.append(("one", (slot + 1) % group))
    elif last:
        opts.append(("pad_two", 2 % group))
    else:
        opts.append(("two", (slot + 2) % group))
    if n - s0 <= 8 and not last:
        opts.append(("two", (slot + 2) % group))
    if last:
        if n <= 8:
            opts.append(("pad_one", 1 % group))
        if n - s0 <= 8:
            opts.append(("pad_two", 2 % group))
    return opts


def _real(shared, suffix, addr):
    return Entry(shared << 4 | len(suffix), addr, suffix.ljust(8, b"\0"))


def _emit(kind, key, addr, slot, prev):
    n = len(key)
    if kind == "one":
        s = _s0(slot, prev, key)
        return [_real(s, key[s:], addr)]
    ents = []
    s = _s0(slot, prev, key)
    if kind.startswith("pad"):
        ents.append(PAD)
        s = 0
    if kind.endswith("one"):
        return ents + [_real(0, key, addr)]
    v = key[s:min(n, s + 8)]
    ents.append(Entry(kb16.HDR_VIR | s << 4 | len(v), 0, v.ljust(8, b"\0")))
    ents.append(_real(0, key, addr) if n <= 8 else _real(8, key[8:], addr))
    return ents


def fit(keys: list[tuple[bytes, int]], group: int, closed: bool, slot: int = 0,
        prev: bytes = b"") -> list[Entry] | None:
    """Encode sorted keys starting at `slot` after key `prev`. closed: the entries must end a group
    (a pad fills a last slot), found by a feasibility table over (key, slot) and then the canonical
    choice wherever it stays feasible; None if no encoding fills whole groups. Open: canonical."""
    n = len(keys)
    if closed:
        reach = [[False] * group for _ in range(n + 1)]
        reach[n][0] = reach[n][group - 1] = True
        for i in range(n - 1, -1, -1):
            p = keys[i - 1][0] if i else prev
            for t in range(group):
                reach[i][t] = any(reach[i + 1][t2] for _, t2 in _options(keys[i][0], t, p, group))
        if not reach[0][slot]:
            return None
    out: list[Entry] = []
    t, p = slot, prev
    for i, (k, a) in enumerate(keys):
        kind, t2 = next(o for o in _options(k, t, p, group) if not closed or reach[i + 1][o[1]])
        out += _emit(kind, k, a, t, p)
        t, p = t2, k
    if closed and t == group - 1:
        out.append(PAD)
    return out


def _pack(entries):
    return b"".join(e.pack() for e in entries)


# ---- plan ---------------------------------------------------------------------------------------

def plan(runs: list[bytes], group: int, keys: list[bytes], _runs=None) -> list[list[SubRun]]:
    """Per part (len(keys)+1 of them), per run, the SubRun it reads."""
    rs = _runs or _check(runs, group)
    if len(keys) + 1 > MAX_PARTS:
        raise ValueError(f"{len(keys) + 1} parts: 1..{MAX_PARTS} allowed")
    bounds = [b""] + list(keys) + [None]
    parts = []
    for j in range(len(keys) + 1):
        row = []
        for r in rs:
            p, e = (0 if j == 0 else r.rank(bounds[j])), r.rank(bounds[j + 1])
            e = max(p, e)
            if p == e or p % group == 0:
                row.append(SubRun(b"", p, p, e))
                continue
            ks = [(k, a) for k, a, q in r.keys if p <= q < e]
            pos = [q for k, a, q in r.keys if p <= q < e]
            head = None
            gend = p - p % group + group
            for extra in range(HEAD_GROUPS):
                rend = gend + extra * group
                if rend >= e:
                    break
                f = fit([kv for kv, q in zip(ks, pos) if q < rend], group, closed=True)
                if f is not None:
                    head = SubRun(_pack(f), p, rend, e)
                    break
            row.append(head or SubRun(_pack(fit(ks, group, closed=False)), p, e, e))
        parts.append(row)
    return parts


# ---- stitch -------------------------------------------------------------------------------------

class OpenPart(ValueError):
    """stitch_inplace: part `part` cannot be closed within its last 8 groups."""

    def __init__(self, part: int):
        super().__init__(f"part {part} cannot be closed in place (no freedom left in its last groups)")
        self.part = part


def _close(out: list[Entry], chunk: int, group: int) -> bool:
    """Close out[chunk:] (a group start) in place: nothing, a pad, or the last 1/2/4/8 groups re-encoded
    by `fit`. False when none fits (the entries are left as they were)."""
    n = len(out)
    if n % group in (0, group - 1):
        if n % group:
            out.append(PAD)
        return True
    for groups in FIT_GROUPS:
        rs = max(chunk, (n // group - (groups - 1)) * group)
        f = fit(kb16.decode(_pack(out[rs:]), group), group, closed=True)
        if f is not None:
            out[rs:] = f
            return True
        if rs == chunk:
            break
    return False


def stitch(outputs: list[bytes], group: int) -> bytes:
    kb16.check_group(group)
    out: list[Entry] = []
    chunk = 0                 # entry index where the part(s) not yet closed begin (a group start)
    pending = False           # out[chunk:] is open: the next part continues its encoding
    last_key = b""
    for j, part in enumerate(outputs):
        try:
            ks = kb16.decode(part, group)
        except Kb16Error as err:
            err.input = j
            raise
        if pending:
            out += fit(ks, group, closed=False, slot=len(out) % group, prev=last_key)
        else:
            out += [Entry.unpack(part[i:i + 16]) for i in range(0, len(part), 16)]
        if ks:
            last_key = ks[-1][0]
        if j == len(outputs) - 1:
            break
        pending = not _close(out, chunk, group)
        if not pending:
            chunk = len(out)
    return _pack(out)


def stitch_inplace(outputs: list[bytes], group: int) -> list[bytes]:
    """kb16_stitch_inplace: every part but the last closed on its own; their concatenation is
    stitch(outputs) whenever this succeeds. Raises OpenPart when a part cannot be closed."""
    kb16.check_group(group)
    res = []
    for j, part in enumerate(outputs):
        try:
            kb16.decode(part, group)
        except Kb16Error as err:
            err.input = j
            raise
        out = [Entry.unpack(part[i:i + 16]) for i in range(0, len(part), 16)]
        if j < len(outputs) - 1 and not _close(out, 0, group):
            raise OpenPart(j)
        res.append(_pack(out))
    return res


# ---- the whole sub-compaction -------------------------------------------------------------------

@dataclass
class Info:
    keys: list            # split keys
    plan: list            # per part, per run SubRun
    part_outputs: list    # per part (run, invalid)
    head_bytes: int       # scratch taken by re-encoded heads


def subcompact(runs: list[bytes], group: int, parts: int, keys: list[bytes] | None = None,
               merge=None) -> tuple[bytes, bytes, Info]:
    """Split merge of runs (newest first) -> (run, invalid addresses LE uint32, Info). A malformed run
    raises Kb16Error with .input = its index, .index = the original entry index (runs are checked in
    index order before splitting, as kb16.merge_runs does)."""
    rs = _check(runs, group)
    merge = merge or (lambda subs: kb16.merge_runs(subs, group))
    keys = split_keys(runs, group, parts, rs) if keys is None else list(keys)
    if len(keys) != parts - 1:
        raise ValueError(f"{len(keys)} split keys for {parts} parts")
    pl = plan(runs, group, keys, rs)
    outs = [merge([s.bytes(r) for s, r in zip(row, runs)]) for row in pl]
    out = stitch([o for o, _ in outs], group)
    inv = b"".join(i for _, i in outs)
    return out, inv, Info(keys, pl, outs, sum(len(s.head) for row in pl for s in row))


def output_group_keys(run: bytes, group: int) -> list[bytes]:
    """First key of every group of a run (split keys that make the stitched output byte-identical)."""
    return _Run(run, group).starts


__all__ = ["SubRun", "Info", "OpenPart", "split_keys", "split_keys_fast", "plan", "fit", "stitch", "stitch_inplace",
           "subcompact", "output_group_keys",
           "MAX_PARTS", "FIT_GROUPS", "HEAD_GROUPS"]
