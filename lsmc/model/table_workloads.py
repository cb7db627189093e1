"""Workloads of the table engine: the entries of a compaction's input tables and the rest of its job
(hw/ip/table_engine/doc/table-engine.md). Pure data: `lsmc tables make` turns a Workload into a job folder through the
reference compactor's `make-table` (LevelDB's own TableBuilder).

Kinds of data (`keys` / `values`):
- `dbbench`: db_bench's 16-byte decimal keys and 100-byte values that compress to 50 % (each 100-byte
  piece a random 50-character printable string twice, as its RandomGenerator makes them);
- `key64`: 64-byte keys; `random`: user keys of 1..1024 bytes; `key1k`: LevelDB's issue320_test's keys, 1024
  bytes (8 letters from the entry's number, then random letters: neighbours seldom get a shorter separator, so a
  table's index block holds whole 1 KiB keys and passes the writer's index buffer);
- values `random`: 0..65536 bytes of db_bench-like compressible data; `noise`: random bytes of `value_bytes`
  (Snappy cannot shrink them: LevelDB keeps their blocks raw).
Runs are made as a DB would hold them: run 0 newest (highest sequences); a Level-0 job has K-1 runs of
one table and an oldest run of several tables in key order; a level >= 1 job has K = 2 runs of tables.
Overwrites (a user key in several runs), deletions, a snapshot below some entries, deeper levels that
hold some keys (not the base level for them) and grandparents that split outputs are all options."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from lsmc.model.sstable import (
    MAX_SEQUENCE,
    OPTION_DEFAULTS,
    TYPE_DELETION,
    TYPE_VALUE,
    internal_key,
    order_key,
    parse_internal_key,
)

KEY_KINDS = ("dbbench", "key64", "random", "key1k")
VALUE_KINDS = ("dbbench", "random", "empty", "noise")
VALUE_MAX = 65536
USER_KEY_MAX = 1024


@dataclass
class Workload:
    runs: int = 2                  # K
    entries: int = 1000            # entries per run (before splitting into tables)
    keys: str = "dbbench"
    values: str = "dbbench"
    value_bytes: int = 100         # dbbench and noise values
    overlap: float = 0.5           # fraction of a run's user keys also in another run (overwrites)
    deletions: float = 0.1         # fraction of entries that are deletion markers
    snapshot: bool = False         # smallest_snapshot in the middle of the sequences (else above all)
    base_level: bool = True        # no deeper level holds any key (deletion markers may be dropped)
    input_level: int = 0           # 0: K-1 single-table runs + one run of tables; >= 1: K = 2 runs of tables
    entries_per_table: int = 0     # for runs of several tables (0: entries // 4 + 1); 1: one entry per table
    grandparent_bytes: int = 0     # total size of grandparent files (0: none)
    options: dict = field(default_factory=dict)
    seed: int = 1

    def check(self) -> None:
        if not 1 <= self.runs <= 64:
            raise ValueError(f"runs must be 1..64, not {self.runs}")
        if self.input_level >= 1 and self.runs != 2:
            raise ValueError("a level >= 1 compaction has two runs (level and level + 1)")
        if self.keys not in KEY_KINDS or self.values not in VALUE_KINDS:
            raise ValueError(f"keys one of {KEY_KINDS}, values one of {VALUE_KINDS}")
        if self.entries < 1:
            raise ValueError("entries must be at least 1")


@dataclass
class TableEntries:
    entries: list[tuple[bytes, bytes]]  # (internal key, value) in internal order


@dataclass
class JobData:
    runs: list[list[TableEntries]]
    options: dict
    smallest_snapshot: int
    grandparents: list[dict]
    deeper_levels: list[list[dict]]
    last_sequence: int


class DbBenchValues:
    """db_bench's RandomGenerator in spirit: a 1 MiB pool of 100-byte pieces, each a random
    50-character printable string twice (Snappy halves it), served as consecutive slices."""

    def __init__(self, rng: random.Random):
        pieces = []
        for _ in range((1 << 20) // 100 + 1):
            half = bytes(32 + b % 95 for b in rng.randbytes(50))
            pieces.append(half + half)
        self.pool = b"".join(pieces)
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n > len(self.pool):
            return (self.pool * (n // len(self.pool) + 1))[:n]
        if self.pos + n > len(self.pool):
            self.pos = 0
        self.pos += n
        return self.pool[self.pos - n:self.pos]


def _user_key(kind: str, rng: random.Random, i: int) -> bytes:
    if kind == "dbbench":
        return b"%016d" % i
    if kind == "key64":
        return (b"%016d" % i) + rng.randbytes(48)
    if kind == "key1k":
        head = bytes(97 + (i // 26 ** k) % 26 for k in reversed(range(8)))
        return head + bytes(97 + b % 26 for b in rng.randbytes(USER_KEY_MAX - 8))
    n = rng.choice((1, 2, 3, rng.randint(1, 64), rng.randint(1, USER_KEY_MAX), USER_KEY_MAX))
    return rng.randbytes(n)


def _value(w: Workload, rng: random.Random, gen: DbBenchValues) -> bytes:
    if w.values == "empty":
        return b""
    if w.values == "dbbench":
        return gen.take(w.value_bytes)
    if w.values == "noise":
        return rng.randbytes(w.value_bytes)
    n = rng.choice((0, 1, rng.randint(0, 4096), rng.randint(0, VALUE_MAX), VALUE_MAX))
    return gen.take(n)


def _split(entries: list, per_table: int) -> list[TableEntries]:
    """Tables of one run in key order; a user key's versions never straddle two tables (LevelDB keeps a
    user key's entries in one file of a level >= 1: AddBoundaryInputs relies on it)."""
    tables, cur = [], []
    for k, v in entries:
        if len(cur) >= per_table and k[:-8] != cur[-1][0][:-8]:
            tables.append(TableEntries(cur))
            cur = []
        cur.append((k, v))
    if cur:
        tables.append(TableEntries(cur))
    return tables


def generate(w: Workload) -> JobData:
    w.check()
    rng = random.Random(w.seed)
    gen = DbBenchValues(rng)
    universe_n = max(1, int(w.entries * w.runs * (1 - w.overlap / 2)))
    universe = sorted({_user_key(w.keys, rng, rng.randrange(10 ** 12) if w.keys != "random" else i)
                       for i in range(universe_n)})
    # Sequences: the oldest run lowest; one block of sequences per run.
    seq = 1
    runs_entries: list[list[tuple[bytes, bytes]]] = [[] for _ in range(w.runs)]
    for r in reversed(range(w.runs)):
        n = min(w.entries, len(universe))
        picked = set(rng.sample(universe, n))
        if n >= 2:  # every run spans the whole key range: LevelDB would pick all of them for one compaction
            picked = (picked - set(rng.sample(sorted(picked), 2))) | {universe[0], universe[-1]} \
                if universe[0] not in picked or universe[-1] not in picked else picked
        picked = sorted(picked)
        items = []
        for uk in picked:
            versions = 1 + (w.snapshot and rng.random() < 0.2)  # a snapshot keeps older versions in a run
            for _ in range(versions):
                kind = TYPE_DELETION if rng.random() < w.deletions else TYPE_VALUE
                items.append((uk, kind))
        rng.shuffle(items)  # sequences in write order, not key order
        ents = []
        for uk, kind in items:
            ents.append((internal_key(uk, seq, kind), b"" if kind == TYPE_DELETION else _value(w, rng, gen)))
            seq += 1
        ents.sort(key=lambda e: order_key(e[0]))
        runs_entries[r] = ents
    last_sequence = seq - 1
    snapshot = rng.randint(1, last_sequence) if w.snapshot else last_sequence

    per_table = w.entries_per_table or (w.entries // 4 + 1)
    runs: list[list[TableEntries]] = []
    for r, ents in enumerate(runs_entries):
        single = w.input_level == 0 and r < w.runs - 1
        runs.append([TableEntries(ents)] if single else _split(ents, per_table))

    # Deeper levels: some key ranges of the universe in the levels under the output level.
    deeper: list[list[dict]] = []
    grandparents: list[dict] = []
    opts = dict(OPTION_DEFAULTS, **w.options)
    if not w.base_level or w.grandparent_bytes:
        for _ in range(rng.randint(1, 3)):
            files, i = [], rng.randrange(max(1, len(universe) // 8))
            while i < len(universe):
                j = min(len(universe) - 1, i + rng.randint(0, max(1, len(universe) // 6)))
                if w.base_level:  # ranges between the keys: deeper files that hold none of them
                    lo, hi = universe[i] + b"\x00", universe[i] + b"\x00\xff"
                else:
                    lo, hi = universe[i], universe[j]
                files.append({"smallest": lo.hex(), "largest": hi.hex()})
                i = j + 1 + rng.randrange(max(1, len(universe) // 8))
            deeper.append(files)
        if w.grandparent_bytes and deeper[0]:
            each = max(1, w.grandparent_bytes // len(deeper[0]))
            grandparents = [{"largest": internal_key(bytes.fromhex(f["largest"]), 0, TYPE_VALUE).hex(),
                             "size": each} for f in deeper[0]]
    return JobData(runs=runs, options=opts, smallest_snapshot=snapshot, grandparents=grandparents,
                   deeper_levels=deeper, last_sequence=last_sequence)


# ------------------------------------------------------------------------ the drop rules, in Python
def expected_entries(runs_entries: list[list[tuple[bytes, bytes]]], smallest_snapshot: int,
                     deeper_levels: list[list[dict]]) -> list[tuple[bytes, bytes]]:
    """The entries a compaction keeps, by DoCompactionWork's rules written out plainly (no file
    boundaries): an independent check of the reference's loop on generated data."""
    merged = sorted((e for run in runs_entries for e in run), key=lambda e: order_key(e[0]))
    ranges = [[(bytes.fromhex(f["smallest"]), bytes.fromhex(f["largest"])) for f in lvl] for lvl in deeper_levels]
    out, current, last_seq = [], None, MAX_SEQUENCE
    for k, v in merged:
        p = parse_internal_key(k)
        if p is None:
            out.append((k, v))
            current, last_seq = None, MAX_SEQUENCE
            continue
        uk, sq, kind = p
        if uk != current:
            current, last_seq = uk, MAX_SEQUENCE
        drop = last_seq <= smallest_snapshot or (
            kind == TYPE_DELETION and sq <= smallest_snapshot
            and not any(lo <= uk <= hi for lvl in ranges for lo, hi in lvl))
        last_seq = sq
        if not drop:
            out.append((k, v))
    return out
