"""The firmware's sub-compaction plan (fw/lib/te_plan.c) against the model's (PlanSubcompactions,
hw/ip/table_engine/model/subcompaction.h): a job's index blocks as the units leave them in DDR (read here from
the tables: footer, block, Debian's libsnappy when compressed), laid out as tables.elf's plan descriptor
(PLAN_HEAD, PLAN_TABLE of fw/include/job_abi.json), and run three ways: the model (`plan_dump`), the C on the
host (`te_plan_host`, ASan + UBSan) and the C on the SoC (tables.elf SIM_ARG PLAN, preset tables-m1, timed).
All three print the same lines; parse() reads them."""
from __future__ import annotations

import ctypes
import ctypes.util
import re
import struct
import subprocess
from pathlib import Path

from lsmc import build
from lsmc.build import facts
from lsmc.model import sstable

FOOTER_BYTES, TRAILER_BYTES = 48, 5
TABLE_MAGIC = 0xdb4775248b80fb57


def status(name: str) -> int:
    """tables.elf's exit status TABLES_<name> (job_abi.json): PASS, BAD_DESC, BAD_INDEX, ..."""
    return facts.job_abi()["status"]["TABLES"][name][0]


class PlanError(ValueError):
    pass


_SNAPPY = None


def snappy_uncompress(data: bytes) -> bytes:
    """Debian's libsnappy through its C interface (snappy-c.h)."""
    global _SNAPPY
    if _SNAPPY is None:
        _SNAPPY = ctypes.CDLL(ctypes.util.find_library("snappy") or "libsnappy.so.1")
    n = ctypes.c_size_t()
    if _SNAPPY.snappy_uncompressed_length(data, ctypes.c_size_t(len(data)), ctypes.byref(n)) != 0:
        raise PlanError("bad Snappy block")
    out = ctypes.create_string_buffer(max(n.value, 1))
    if _SNAPPY.snappy_uncompress(data, ctypes.c_size_t(len(data)), out, ctypes.byref(n)) != 0:
        raise PlanError("bad Snappy block")
    return out.raw[:n.value]


def index_block(table: bytes, name: str = "table") -> bytes:
    """A table's index block as the unit delivers it: its contents after the footer's handle, decompressed."""
    if len(table) < FOOTER_BYTES or struct.unpack_from("<Q", table, len(table) - 8)[0] != TABLE_MAGIC:
        raise PlanError(f"{name}: no LevelDB table footer")
    foot = table[-FOOTER_BYTES:]
    try:
        _, i = sstable.varint(foot, 0)
        _, i = sstable.varint(foot, i)
        off, i = sstable.varint(foot, i)
        size, i = sstable.varint(foot, i)
    except ValueError as e:
        raise PlanError(f"{name}: footer: {e}") from None
    if off + size + TRAILER_BYTES > len(table):
        raise PlanError(f"{name}: index handle past the file")
    body, kind = table[off:off + size], table[off + size]
    return snappy_uncompress(body) if kind == 1 else body


def job_index_blocks(job: Path) -> list[list[bytes]]:
    """Each run's tables' index blocks (runs newest first, tables in key order)."""
    spec = sstable.read_job(job)
    return [[index_block((job.parent / t).read_bytes(), t) for t in run] for run in spec.runs]


def image(runs: list[list[bytes]], parts: int) -> bytes:
    """The plan descriptor (PLAN_HEAD, a PLAN_TABLE per table) followed by the index blocks, 4-byte aligned;
    offsets from the image's start (DDR_HOST_BASE on the SoC)."""
    head, rec = facts.layout("PLAN_HEAD"), facts.layout("PLAN_TABLE")
    tables = [(r, b) for r, run in enumerate(runs) for b in run]
    off = 4 * (len(head) + len(rec) * len(tables))
    words = {"magic": facts.constant("PLAN_MAGIC"), "version": facts.constant("PLAN_VERSION"), "runs": len(runs),
             "parts": parts, "tables": len(tables)}
    out = [words.get(w, 0) for w in head]
    data = b""
    for r, b in tables:
        f = {"run": r, "off": off + len(data), "len": len(b)}
        out += [f.get(w, 0) for w in rec]
        data += b + bytes(-len(b) % 4)
    return struct.pack(f"<{len(out)}I", *out) + data


_LINE = re.compile(r"tables: plan (\w+)=(\S+)(.*)")


def parse(text: str) -> dict:
    """The plan's lines -> {"head": {...}, "splits": [hex], "parts": [{"bytes", "windows": [{...}]}]} or
    {"error": NAME, "run", "table", "offset"}; {} when there is no plan line."""
    out: dict = {}
    for line in text.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in f"{m[1]}={m[2]}{m[3]}".split())
        if m[1] == "error":
            return {"error": fields.pop("error"), **{k: int(v) for k, v in fields.items()}}
        if m[1] == "parts":
            out = {"head": {k: int(v) for k, v in fields.items()}, "splits": [], "parts": []}
        elif m[1] == "split":
            out["splits"].append(fields["key"])
        elif m[1] == "part" and "windows" in fields:
            out["parts"].append({"bytes": int(fields["bytes"]), "windows": []})
        elif m[1] == "window":
            w = {k: v if "-" in v else int(v) for k, v in fields.items() if k != "window"}
            out["parts"][int(fields["part"])]["windows"].append(w)
    return out


def choices(plan: dict) -> dict:
    """What the plan chose, without its costs: splits, total bytes, per part its bytes and windows."""
    return {"total_bytes": plan["head"]["total_bytes"], "splits": plan["splits"], "parts": plan["parts"]}


# ------------------------------------------------------------------------------------------ three back ends
def model(job: Path, parts: int) -> dict:
    from lsmc.build.table_model import build_plan_dump
    r = subprocess.run([str(build_plan_dump()), str(job), str(parts)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return parse(r.stdout)


HOST_SOURCES = [build.ROOT / "fw" / "lib" / "te_plan.c", build.ROOT / "fw" / "apps" / "tables" / "plan.c",
                build.ROOT / "tests" / "fw_host" / "te_plan_main.c"]
HOST_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fsanitize=address,undefined",
              "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]


TIMED_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]  # the plan's host time: no sanitizers


def host_exe(timed: bool = False) -> Path:
    """te_plan_host (ASan + UBSan; `timed`: -O2 without them, te_plan_host_timed), rebuilt when a source or header
    changed."""
    from lsmc.build import firmware
    inc = [build.ROOT / "fw" / "lib", build.ROOT / "fw" / "apps" / "tables", facts.include_dir(), firmware.TE_REGS_DIR]
    if not (firmware.TE_REGS_DIR / "te_regs.h").exists():
        firmware.ensure_headers()
    flags = TIMED_FLAGS if timed else HOST_FLAGS
    exe = firmware.HOST_BUILD / ("te_plan_host_timed" if timed else "te_plan_host")
    headers = [h for d in inc for h in sorted(Path(d).glob("*.h"))]
    digest = build._hash_paths([*HOST_SOURCES, *headers], extra=tuple(flags))
    stamp = exe.with_name(f".{exe.name}.stamp")
    if exe.exists() and build._up_to_date(stamp, digest):
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    with build.lock(exe.with_name(f".{exe.name}.lock")):
        if exe.exists() and build._up_to_date(stamp, digest):
            return exe
        tmp = exe.with_name(exe.name + ".tmp")
        build.run(["gcc", *flags, *[f"-I{d}" for d in inc], "-o", tmp, *HOST_SOURCES], quiet=True)
        tmp.replace(exe)
        stamp.write_text(digest)
    return exe


def host(img: bytes, work: Path) -> tuple[int, dict, str]:
    """(exit status, parsed plan, stderr) of the C plan on the host."""
    path = Path(work) / "plan.bin"
    path.write_bytes(img)
    r = subprocess.run([str(host_exe()), str(path)], capture_output=True, text=True, timeout=300)
    return r.returncode, parse(r.stdout), r.stderr


def host_ns(img: bytes, work: Path, repeat: int = 2000) -> float:
    """The C plan's time on this host's CPU, ns (the mean of `repeat` plans after a first, -O2, no sanitizers)."""
    path = Path(work) / "plan.bin"
    path.write_bytes(img)
    r = subprocess.run([str(host_exe(timed=True)), str(path), str(repeat)], capture_output=True, text=True,
                       timeout=300)
    m = re.search(r"^tables: plan host_ns=(\d+)$", r.stdout, re.M)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"te_plan_host_timed exited {r.returncode}: {r.stderr.strip() or r.stdout[-300:]}")
    return float(m[1])


def soc(img: bytes, work: Path, preset: str, ddr: str | None = None) -> tuple[int, dict, str]:
    """(exit status, parsed plan, console) of tables.elf's plan scenario on the SoC preset `preset` (one with a
    table-engine unit; `ddr`: the harness's DDR timing model, default fixed). The plan reads only the image, so the
    SoC alone is built (not the unit's job harness, lsmc.sim.tables.soc_exe, which in turn times the host's plan
    here: so this module does not import that one)."""
    from lsmc.build import firmware, regmap
    from lsmc.sim import soc as soc_sim
    path = Path(work) / "plan.bin"
    path.write_bytes(img)
    exe = soc_sim.build_soc(preset=preset)
    elf = firmware.build_firmware().parent / "tables.elf"
    run = soc_sim.run_soc(elf, arg=facts.scenarios("tables")["PLAN"], loads={regmap.memmap().base("DDR_HOST"): path},
                          exe=exe, extra=["--ddr", ddr] if ddr else ())
    return run.returncode, parse(run.uart), run.uart
