"""The paper's published numbers (Tables II and III, the LevelDB figure, the platform clock), read from the one
data file lsmc/data/paper.json. Reports, the demo and docs/ (generated block `table3 paper`) import
them from here; nothing else restates them."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import NamedTuple

DATA = Path(__file__).resolve().parents[1] / "data" / "paper.json"


class Row(NamedTuple):
    keys: int
    bytes: int
    counter: int
    us_per_entry: float
    speedup: float


@cache
def data() -> dict:
    return json.loads(DATA.read_text())


def table3() -> list[Row]:
    """Table III rows: key number, byte number, throughput counter, µs per entry, speed-up over LevelDB."""
    d = data()
    if d["table3_columns"] != list(Row._fields):
        raise ValueError(f"{DATA}: table3_columns {d['table3_columns']} are not {list(Row._fields)}")
    return [Row(*r) for r in d["table3"]]


def clock_hz() -> int:
    return data()["clock_hz"]


def clock_mhz() -> int:
    return clock_hz() // 1_000_000


def leveldb_us_per_entry() -> float:
    return data()["leveldb_us_per_entry"]


def counters() -> dict:
    """Key number -> throughput counter value."""
    return {r.keys: r.counter for r in table3()}


def table2() -> dict:
    """Table II (the paper's whole platform on the KCU105): resource -> (used, available)."""
    d = data()
    if d["table2_columns"] != ["resource", "used", "available"]:
        raise ValueError(f"{DATA}: table2_columns {d['table2_columns']} are not resource, used, available")
    return {name: (used, avail) for name, used, avail in d["table2"]}


def table3_markdown() -> str:
    rows = ["| keys | bytes | throughput counter | µs/entry | speed-up over LevelDB |", "|---|---|---|---|---|"]
    rows += [f"| {r.keys:,} | {r.bytes:,} | {r.counter:,} | {r.us_per_entry} | {r.speedup:.2f}× |" for r in table3()]
    rows += ["", f"The paper's Table III at its {clock_mhz()} MHz clock, {data()['stream_width_bits']}-bit streams. "
             f"The LevelDB figure is one constant, {leveldb_us_per_entry()} µs per entry, in every row "
             "(speed-up = that figure ÷ the row's µs/entry). Generated from `lsmc/data/paper.json`."]
    return "\n".join(rows)
