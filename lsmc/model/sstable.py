"""LevelDB 1.23 tables as the table engine sees them: internal keys, the job format every back end of
`lsmc tables` reads and writes (hw/ip/table_engine/doc/table-engine.md), and a reader of LevelDB's MANIFEST (the log of
version edits, which records each compaction's inputs and outputs). Pure Python, no build needed.

Internal key = user key + 8-byte little-endian tag (sequence << 8 | type), deletion 0, value 1; order:
user key bytewise ascending, then tag descending (db/dbformat.h)."""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = "lsmc-table-job/1"
TYPE_DELETION = 0
TYPE_VALUE = 1
MAX_SEQUENCE = (1 << 56) - 1  # kMaxSequenceNumber
NUM_LEVELS = 7
ERROR_CODES = ("BAD_MAGIC", "BAD_CRC", "TRUNCATED", "BAD_BLOCK", "BAD_VARINT", "BAD_SNAPPY", "KEY_ORDER",
               "KEY_TOO_LONG", "OUTPUT_FULL", "BAD_JOB")
OPTION_DEFAULTS = {"block_size": 4096, "block_restart_interval": 16, "compression": "snappy",
                   "bloom_bits_per_key": 0, "max_file_size": 2 * 1024 * 1024, "verify_checksums": False}


class JobFormatError(ValueError):
    """A job or result that does not follow the format; the message names the file and the problem."""


# ------------------------------------------------------------------------------------ internal keys
def internal_key(user_key: bytes, sequence: int, kind: int = TYPE_VALUE) -> bytes:
    if not 0 <= sequence <= MAX_SEQUENCE or kind not in (TYPE_DELETION, TYPE_VALUE):
        raise ValueError(f"sequence {sequence} / type {kind} out of range")
    return bytes(user_key) + struct.pack("<Q", sequence << 8 | kind)


def parse_internal_key(key: bytes) -> tuple[bytes, int, int] | None:
    """(user key, sequence, type), or None where LevelDB's ParseInternalKey fails (short key, bad type)."""
    if len(key) < 8:
        return None
    tag = struct.unpack_from("<Q", key, len(key) - 8)[0]
    if tag & 0xFF > TYPE_VALUE:
        return None
    return key[:-8], tag >> 8, tag & 0xFF


def order_key(key: bytes) -> tuple[bytes, int]:
    """Sort key of an internal key in LevelDB's internal order (InternalKeyComparator)."""
    return key[:-8], -struct.unpack_from("<Q", key, len(key) - 8)[0]


def entry_stream(entries) -> bytes:
    """`table_ref make-table`'s input: per entry u32 LE key length, internal key, u32 LE value length, value."""
    out = bytearray()
    for k, v in entries:
        out += struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v
    return bytes(out)


def table_name(number: int) -> str:
    return f"{number:06d}.ldb"


# ----------------------------------------------------------------------------------------- the job
@dataclass
class Job:
    runs: list[list[str]]
    options: dict
    smallest_snapshot: int
    grandparents: list[dict] = field(default_factory=list)  # {"largest": hex internal key, "size": n}
    deeper_levels: list[list[dict]] = field(default_factory=list)  # [{"smallest": hex, "largest": hex}]
    first_file_number: int = 1

    def to_json(self) -> dict:
        return {"format": FORMAT, "runs": self.runs, "options": self.options,
                "smallest_snapshot": self.smallest_snapshot, "grandparents": self.grandparents,
                "deeper_levels": self.deeper_levels, "first_file_number": self.first_file_number}


def _hex(v, where: str, what: str, min_len: int = 0) -> bytes:
    if not isinstance(v, str):
        raise JobFormatError(f"{where}: {what} must be a hex string")
    try:
        b = bytes.fromhex(v)
    except ValueError:
        raise JobFormatError(f"{where}: {what} is not hex: {v[:40]!r}") from None
    if v != v.lower() or len(b) < min_len:
        raise JobFormatError(f"{where}: {what} must be lowercase hex of at least {min_len} bytes")
    return b


def _uint(v, where: str, what: str, lo: int = 0, hi: int = 1 << 64) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise JobFormatError(f"{where}: {what} must be an integer in {lo}..{hi}")
    return v


def validate_options(o, where: str) -> dict:
    if not isinstance(o, dict):
        raise JobFormatError(f"{where}: options must be an object")
    unknown = sorted(set(o) - set(OPTION_DEFAULTS))
    if unknown:
        raise JobFormatError(f"{where}: unknown option {unknown[0]!r} (known: {', '.join(OPTION_DEFAULTS)})")
    full = dict(OPTION_DEFAULTS, **o)
    _uint(full["block_size"], where, "options.block_size", 1, 1 << 30)
    _uint(full["block_restart_interval"], where, "options.block_restart_interval", 1, 1 << 30)
    _uint(full["bloom_bits_per_key"], where, "options.bloom_bits_per_key", 0, 1000)
    _uint(full["max_file_size"], where, "options.max_file_size", 1, 1 << 40)
    if full["compression"] not in ("none", "snappy"):
        raise JobFormatError(f"{where}: options.compression must be \"none\" or \"snappy\"")
    if not isinstance(full["verify_checksums"], bool):
        raise JobFormatError(f"{where}: options.verify_checksums must be true or false")
    return full


def validate_job(d, where: str, base: Path | None = None) -> Job:
    """A Job from parsed JSON; JobFormatError naming `where` and the problem. With `base` (the job's
    folder), the input tables must exist."""
    if not isinstance(d, dict):
        raise JobFormatError(f"{where}: not a JSON object")
    if d.get("format") != FORMAT:
        raise JobFormatError(f"{where}: format must be {FORMAT!r}, not {d.get('format')!r}")
    known = {"format", "runs", "options", "smallest_snapshot", "grandparents", "deeper_levels", "first_file_number"}
    extra = sorted(set(d) - known)
    if extra:
        raise JobFormatError(f"{where}: unknown key {extra[0]!r}")
    runs = d.get("runs")
    if not isinstance(runs, list) or not runs:
        raise JobFormatError(f"{where}: runs must be a non-empty list of runs")
    for i, r in enumerate(runs):
        if not isinstance(r, list) or not r or not all(isinstance(p, str) and p for p in r):
            raise JobFormatError(f"{where}: run {i} must be a non-empty list of table paths")
        if base is not None:
            for p in r:
                if not (base / p).is_file():
                    raise JobFormatError(f"{where}: run {i}: input table {p} not found")
    if "options" not in d:
        raise JobFormatError(f"{where}: no options")
    validate_options(d["options"], where)
    snap = _uint(d.get("smallest_snapshot"), where, "smallest_snapshot", 0, MAX_SEQUENCE)
    gps = d.get("grandparents", [])
    if not isinstance(gps, list):
        raise JobFormatError(f"{where}: grandparents must be a list")
    for i, g in enumerate(gps):
        if not isinstance(g, dict) or set(g) != {"largest", "size"}:
            raise JobFormatError(f"{where}: grandparent {i} must be {{\"largest\": hex, \"size\": bytes}}")
        _hex(g["largest"], where, f"grandparent {i} largest", 8)
        _uint(g["size"], where, f"grandparent {i} size")
    deeper = d.get("deeper_levels", [])
    if not isinstance(deeper, list) or len(deeper) > NUM_LEVELS - 1:
        raise JobFormatError(f"{where}: deeper_levels must be a list of at most {NUM_LEVELS - 1} levels")
    for li, lvl in enumerate(deeper):
        if not isinstance(lvl, list):
            raise JobFormatError(f"{where}: deeper level {li} must be a list of files")
        for fi, f in enumerate(lvl):
            if not isinstance(f, dict) or set(f) != {"smallest", "largest"}:
                raise JobFormatError(f"{where}: deeper level {li} file {fi} must be "
                                     "{\"smallest\": hex, \"largest\": hex}")
            if _hex(f["smallest"], where, "smallest") > _hex(f["largest"], where, "largest"):
                raise JobFormatError(f"{where}: deeper level {li} file {fi}: smallest above largest")
    first = _uint(d.get("first_file_number"), where, "first_file_number", 1, 999_999_999)
    return Job(runs=runs, options=d["options"], smallest_snapshot=snap, grandparents=gps,
               deeper_levels=deeper, first_file_number=first)


def _read_json(path: Path):
    """The JSON document in `path`; an unreadable or malformed file is one JobFormatError naming it."""
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise JobFormatError(f"{path}: cannot read ({e.strerror})") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise JobFormatError(f"{path}: not valid JSON ({e})") from None


def read_job(path: Path) -> Job:
    path = Path(path)
    return validate_job(_read_json(path), str(path), path.parent)


def write_job(job: Job, path: Path) -> None:
    Path(path).write_text(json.dumps(job.to_json(), indent=1) + "\n")


def read_result(path: Path) -> dict:
    """A job's result.json, checked for the format's keys."""
    path = Path(path)
    d = _read_json(path)
    for k in ("tables", "entries_in", "entries_out", "dropped", "bytes_in", "bytes_out"):
        if k not in d:
            raise JobFormatError(f"{path}: no {k!r}")
    for i, t in enumerate(d["tables"]):
        missing = {"file", "number", "size", "entries", "smallest", "largest"} - set(t)
        if missing:
            raise JobFormatError(f"{path}: table {i} lacks {sorted(missing)[0]!r}")
    return d


def parse_run_line(line: str) -> dict:
    """`cycles=C bytes_in=N bytes_out=N tables_out=T` -> dict of ints (KeyError/ValueError if malformed);
    a sub-compaction's line adds `parts=P bracket=B plan=L` (C then is the whole job)."""
    d = dict(tok.split("=", 1) for tok in line.split())
    return {k: int(d[k]) for k in ("cycles", "bytes_in", "bytes_out", "tables_out", "parts", "bracket", "plan")
            if k in d or k in ("cycles", "bytes_in", "bytes_out", "tables_out")}


# -------------------------------------------------------------------------------------- MANIFEST
def varint(b: bytes, i: int) -> tuple[int, int]:
    """LevelDB's varint at b[i]: (value, index after it); ValueError when it runs past `b`."""
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("varint runs past its record")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _lenprefixed(b: bytes, i: int) -> tuple[bytes, int]:
    n, i = varint(b, i)
    if i + n > len(b):
        raise ValueError("length-prefixed field runs past its record")
    return b[i:i + n], i + n


def log_records(data: bytes) -> list[bytes]:
    """The records of a LevelDB log file (db/log_format.h: 32 KiB blocks, 7-byte headers, records split
    FULL/FIRST/MIDDLE/LAST). Checksums are not verified here: the files come from a LevelDB that wrote
    them moments ago."""
    out, part, pos = [], b"", 0
    block = 32768
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # block trailer padding
            pos += left
            continue
        length, kind = struct.unpack_from("<HB", data, pos + 4)
        payload = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 0:  # zero-filled preallocation
            continue
        if kind == 1:
            out.append(payload)
        elif kind == 2:
            part = payload
        elif kind == 3:
            part += payload
        elif kind == 4:
            out.append(part + payload)
            part = b""
    return out


@dataclass
class VersionEdit:
    log_number: int | None = None
    next_file: int | None = None
    last_sequence: int | None = None
    deleted: list[tuple[int, int]] = field(default_factory=list)  # (level, number)
    added: list[dict] = field(default_factory=list)  # level, number, size, smallest, largest (internal keys)


def decode_version_edit(rec: bytes) -> VersionEdit:
    """db/version_edit.cc's encoding: tagged fields."""
    e, i = VersionEdit(), 0
    while i < len(rec):
        tag, i = varint(rec, i)
        if tag == 1:
            _, i = _lenprefixed(rec, i)
        elif tag == 2:
            e.log_number, i = varint(rec, i)
        elif tag == 3:
            e.next_file, i = varint(rec, i)
        elif tag == 4:
            e.last_sequence, i = varint(rec, i)
        elif tag == 5:
            _, i = varint(rec, i)
            _, i = _lenprefixed(rec, i)
        elif tag == 6:
            level, i = varint(rec, i)
            number, i = varint(rec, i)
            e.deleted.append((level, number))
        elif tag == 7:
            level, i = varint(rec, i)
            number, i = varint(rec, i)
            size, i = varint(rec, i)
            smallest, i = _lenprefixed(rec, i)
            largest, i = _lenprefixed(rec, i)
            e.added.append({"level": level, "number": number, "size": size, "smallest": smallest,
                            "largest": largest})
        elif tag == 9:
            _, i = varint(rec, i)
        else:
            raise ValueError(f"unknown version-edit tag {tag}")
    return e


def read_manifest(path: Path) -> list[VersionEdit]:
    return [decode_version_edit(r) for r in log_records(Path(path).read_bytes())]


@dataclass
class CapturedCompaction:
    """One compaction a LevelDB logged in its MANIFEST: the job that repeats it (table paths absolute)
    and the numbers of the tables it wrote, in the order it wrote them."""
    level: int
    job: Job
    outputs: list[int]


def compactions_from_manifest(edits: list[VersionEdit], table_path, options: dict) -> list[CapturedCompaction]:
    """Replay a MANIFEST's version edits and turn each compaction into a job, as VersionSet would have
    set it up: the deleted files of level L and L+1 are its inputs (Level-0 files one run each, newest =
    highest number first; a level >= 1 one run in key order), the grandparents are the files of level
    L+2 that overlap the whole input range (SetupOtherInputs / GetOverlappingInputs by user key), the
    deeper levels are L+2..6 (IsBaseLevelForKey). smallest_snapshot is the edit's last sequence: with no
    snapshot held, DoCompactionWork uses the DB's last sequence, and every value at or above the inputs'
    sequences drops the same entries. A trivial move (a file re-added under its number) is no compaction.
    `table_path(number)` -> path of a table file."""
    levels: list[dict[int, dict]] = [{} for _ in range(NUM_LEVELS)]
    out: list[CapturedCompaction] = []
    for e in edits:
        added_numbers = {a["number"] for a in e.added}
        if e.deleted and not any(n in added_numbers for _, n in e.deleted):
            level = min(lv for lv, _ in e.deleted)
            in0 = [levels[level][n] for lv, n in e.deleted if lv == level]
            in1 = [levels[level + 1][n] for lv, n in e.deleted if lv == level + 1]
            by_key = lambda f: order_key(f["smallest"])  # noqa: E731
            runs = [[f] for f in sorted(in0, key=lambda f: -f["number"])] if level == 0 else [sorted(in0, key=by_key)]
            if in1:
                runs.append(sorted(in1, key=by_key))
            ins = in0 + in1
            lo = min((f["smallest"] for f in ins), key=order_key)[:-8]
            hi = max((f["largest"] for f in ins), key=order_key)[:-8]
            gps = []
            if level + 2 < NUM_LEVELS:
                for f in sorted(levels[level + 2].values(), key=by_key):
                    if not (f["largest"][:-8] < lo or f["smallest"][:-8] > hi):
                        gps.append({"largest": f["largest"].hex(), "size": f["size"]})
            deeper = [[{"smallest": f["smallest"][:-8].hex(), "largest": f["largest"][:-8].hex()}
                       for f in sorted(levels[lv].values(), key=by_key)] for lv in range(level + 2, NUM_LEVELS)]
            outputs = sorted(a["number"] for a in e.added)
            job = Job(runs=[[str(table_path(f["number"])) for f in r] for r in runs], options=dict(options),
                      smallest_snapshot=e.last_sequence, grandparents=gps, deeper_levels=deeper,
                      first_file_number=outputs[0] if outputs else 1)
            out.append(CapturedCompaction(level, job, outputs))
        for lv, n in e.deleted:
            levels[lv].pop(n, None)
        for a in e.added:
            levels[a["level"]][a["number"]] = a
    return out
