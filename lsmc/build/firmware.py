"""Firmware builds and host-side access to the firmware's C code.

- `build_firmware()` builds the bare-metal ELF `build/fw/lsmc.elf` with fw/Makefile (riscv64-unknown-elf
  gcc + picolibc), skipped when the sources and the generated register headers are unchanged.
- `build_host_lib()` compiles firmware C files natively into a shared library (host tests, baselines).
- `Kb16Lib` is a ctypes wrapper of fw/lib/kb16.c compiled for the host.
- the machine-readable Table III block the firmware prints is parsed by report.parse_table3_lines().
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from lsmc import build as _build
from lsmc.build import facts, presets, regmap

ROOT = _build.ROOT
FW = ROOT / "fw"
BUILD_FW = _build.BUILD / "fw"
HOST_BUILD = _build.BUILD / "fw_host"
# Generated register headers (made by the IP and DMA generators through build.generate()).
# The firmware drives units of any K (2 or 4): it compiles against the K = 4 blocks, whose maps extend
# the two-way ones (WAYS, IN2/IN3_BYTES; the DMA's XCH readers) and reads WAYS to know a unit's K: the
# standalone presets of the IP and the DMA with the SoC's largest K (hw/ip/*/rtl: *Config.presets).
FW_WAYS = max(p.derived["ways"] for p in presets.soc_presets().values())
FW_IP = presets.find_ip("compaction", dataWidth=128, ways=FW_WAYS)
FW_DMA = presets.find_ip("dma", dataWidth=128, readers=FW_WAYS)
# build/gen/facts: the headers rendered from data files (lsmc.build.facts: ONFI timing, KB16 error codes).
# The table engine's te_regs.h: its unit's generator (lsmc.build.table_engine_unit, K = 4; the map is K's alone in
# CONFIG.WAYS).
TE_REGS_DIR = _build.GEN / "table_engine_unit_w16_k4"
GEN_INCLUDES = [FW_IP.gen_dir, FW_DMA.gen_dir, _build.GEN / "nand", _build.GEN / "soc_map", TE_REGS_DIR, facts.FACTS]


class FirmwareError(RuntimeError):
    pass


def _digest(paths, extra=()) -> str:
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        files = [p] if p.is_file() else \
            sorted(f for f in p.rglob("*") if f.is_file() and f.name != ".stamp") if p.is_dir() else []
        for f in files:
            h.update(str(f).encode())
            h.update(f.read_bytes())
    for e in extra:
        h.update(repr(e).encode())
    return h.hexdigest()[:24]


def firmware_sources():
    """What the ELF depends on: fw/ and the generated headers and linker script (not the Verilog)."""
    return [FW, *sorted(h for g in GEN_INCLUDES if g.is_dir() for h in [*g.glob("*.h"), *g.glob("*.ld")])]


# (module, generator main, output folder, header, arguments) of every generated header the firmware includes.
HEADER_GENERATORS = [
    ("compaction", "compaction.Generate", FW_IP.gen_dir, "compaction_regs.h", ["--preset", FW_IP.name]),
    ("dma", "dma.Generate", FW_DMA.gen_dir, "dma_regs.h", ["--preset", FW_DMA.name]),
    ("nand", "nand.Generate", _build.GEN / "nand", "nand_regs.h", []),
    ("socmap", "soc.MemoryMap", _build.GEN / "soc_map", "lsmc_soc.h", []),
]


def ensure_headers() -> None:
    """Run the IP/DMA/NAND generators and the memory-map export (each skipped when its RTL is
    unchanged) so the generated headers match the RTL, and render the data files' headers. Raises
    FirmwareError when one fails."""
    try:
        facts.include_dir()
    except facts.FactsError as e:
        raise FirmwareError(str(e)) from None
    for module, main, outdir, header, args in HEADER_GENERATORS:
        try:
            _build.generate(module, main, outdir, [*args, "--out", str(outdir)])
        except _build.BuildError as e:
            raise FirmwareError(f"{header} could not be generated:\n{e}") from None
        if not (outdir / header).exists():
            raise FirmwareError(f"{module} generator did not write {outdir / header}")
    from lsmc.build import table_engine_unit
    try:
        if table_engine_unit.generate(4) != TE_REGS_DIR:
            raise FirmwareError(f"te_regs.h is not in {TE_REGS_DIR}")
    except _build.BuildError as e:
        raise FirmwareError(f"te_regs.h could not be generated:\n{e}") from None


def default_ram_kib() -> int:
    """The on-chip RAM of the default memory map (simulation, KCU105, Arty), from the generated map."""
    return regmap.memmap().size("RAM") // 1024


def memory_map_dir(ram_kib: int | None = None) -> Path:
    """Folder of the generated memory map (lsmc_soc.h / .ld / .json) for an on-chip RAM of `ram_kib` KiB
    (soc.MemoryMap --ram-kib; the size choices are SocMap's MapConfig.ramKibChoices): the default map's
    folder for the default size, build/gen/soc_map_ram<N> for a board variant."""
    if ram_kib is None or ram_kib == default_ram_kib():
        return _build.GEN / "soc_map"
    outdir = _build.GEN / f"soc_map_ram{ram_kib}"
    try:
        _build.generate("socmap", "soc.MemoryMap", outdir, ["--ram-kib", str(ram_kib), "--out", str(outdir)])
    except _build.BuildError as e:
        raise FirmwareError(f"memory map for a {ram_kib} KiB on-chip RAM could not be generated:\n{e}") from None
    return outdir


def build_firmware(build_dir: Path | None = None, opt: str = "-O2", force: bool = False,
                   ram_kib: int | None = None, baud: int | None = None) -> Path:
    """Build build/fw/lsmc.elf (out of tree) and return its path. Raises FirmwareError with the
    compiler output on failure. The make log is kept in <build_dir>/build.log (tests grep it for
    warnings). The same ELF runs in simulation and on a board (it reads the sim-control ID word).
    `ram_kib`: link for a board variant's on-chip RAM (its stack at that RAM's end; default build folder
    build/fw-ram<N>); None or the default size: the default map. `baud`: the console line's rate (`make ...
    BOARD_BAUD=<baud>`, e.g. the board simulation's fast line; default build folder build/fw-baud<N>); None:
    the boards' 115200."""
    ensure_headers()
    map_dir = memory_map_dir(ram_kib)
    variant = map_dir != _build.GEN / "soc_map"
    default_dir = _build.BUILD / f"fw-ram{ram_kib}" if variant else BUILD_FW
    if baud is not None:
        default_dir = default_dir.with_name(f"{default_dir.name}-baud{baud}")
    build_dir = Path(build_dir or default_dir)
    elf = build_dir / "lsmc.elf"
    includes = [map_dir if g == _build.GEN / "soc_map" else g for g in GEN_INCLUDES]
    sources = firmware_sources() + ([*sorted(map_dir.glob("*.h")), *sorted(map_dir.glob("*.ld"))] if variant else [])
    extra = ((opt, str(map_dir)) if variant else (opt,)) + ((f"baud={baud}",) if baud is not None else ())
    digest = _digest(sources, extra=extra)
    stamp = build_dir / ".stamp"
    if not force and elf.exists() and stamp.exists() and stamp.read_text() == digest:
        return elf
    with _build.lock(build_dir / ".lock"):  # one make per build folder (build_selftest shares build/fw)
        if not force and elf.exists() and stamp.exists() and stamp.read_text() == digest:
            return elf
        gen = " ".join(str(g) for g in includes)
        try:
            res = _build.run(["make", "-C", FW, f"BUILD={build_dir}", f"GEN_INC={gen}", f"OPT={opt}",
                              *([f"BOARD_BAUD={baud}"] if baud is not None else []),
                              "-j2", "--no-print-directory", "all"], quiet=True)
        except _build.BuildError as e:
            raise FirmwareError(str(e)) from None
        (build_dir / "build.log").write_text((res.stdout or "") + (res.stderr or ""))
        stamp.write_text(digest)
    return elf


def build_host_lib(name: str, sources, defines=(), includes=(), cflags=("-O2",)) -> Path:
    """Compile C `sources` natively into build/fw_host/lib<name>.so (cached by content)."""
    sources = [Path(s) for s in sources]
    includes = [Path(i) for i in includes]
    so = HOST_BUILD / f"lib{name}.so"
    # fw/include/soc.h includes the generated memory map; nand.h the ONFI table and kb16.h the error codes
    # (build/gen/facts, rendered from their data files).
    soc_map = _build.GEN / "soc_map"
    if not (soc_map / "lsmc_soc.h").exists():
        ensure_headers()
    headers = [FW / "include", FW / "lib", FW / "drivers", facts.include_dir(), soc_map, *includes]
    digest = _digest([*sources, *headers], extra=(tuple(defines), tuple(cflags)))
    stamp = HOST_BUILD / f"lib{name}.stamp"
    if so.exists() and stamp.exists() and stamp.read_text() == digest:
        return so
    with _build.lock(HOST_BUILD / f"lib{name}.lock"):
        if so.exists() and stamp.exists() and stamp.read_text() == digest:
            return so
        # Linked beside, then renamed over: a process that loaded the old library keeps its copy.
        tmp = so.with_name(f".{so.name}.{os.getpid()}")
        cmd = ["gcc", "-std=c99", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", *cflags,
               *[f"-D{d}" for d in defines], *[f"-I{i}" for i in headers], "-o", tmp, *sources]
        try:
            _build.run(cmd, quiet=True)
        except _build.BuildError as e:
            raise FirmwareError(str(e)) from None
        os.replace(tmp, so)
        stamp.write_text(digest)
    return so


# ---- ctypes wrapper of fw/lib/kb16.c ---------------------------------------------------------

class MergeResult(ctypes.Structure):
    _fields_ = [("status", ctypes.c_uint), ("err_input", ctypes.c_uint), ("err_index", ctypes.c_size_t),
                ("out_bytes", ctypes.c_size_t), ("out_entries", ctypes.c_size_t),
                ("out_keys", ctypes.c_size_t), ("inv_count", ctypes.c_size_t),
                ("in_keys", ctypes.c_size_t * 32)]  # KB16_MAX_RUNS


class GenParams(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint), ("seed", ctypes.c_uint32), ("n0", ctypes.c_size_t),
                ("n1", ctypes.c_size_t), ("overlap_pct", ctypes.c_uint), ("group", ctypes.c_uint),
                ("addr0_base", ctypes.c_uint32), ("addr1_base", ctypes.c_uint32)]


KINDS = {"short": 0, "uniform": 1, "prefix": 2}
KEY_SLOT_BYTES = 20  # sizeof(kb16_key_slot)


@dataclass
class Merge:
    status: int
    err_input: int
    err_index: int
    merged: bytes
    invalid: list
    out_entries: int
    out_keys: int


class Kb16Lib:
    """fw/lib/kb16.c compiled for the host and called through ctypes."""

    def __init__(self):
        so = build_host_lib("kb16", [FW / "lib" / "kb16.c"])
        self.lib = lib = ctypes.CDLL(str(so))
        lib.kb16_err_name.restype = ctypes.c_char_p
        sz, u8p = ctypes.c_size_t, ctypes.c_char_p
        lib.kb16_decode.argtypes = [u8p, sz, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, sz, ctypes.POINTER(sz), ctypes.POINTER(sz)]
        lib.kb16_encode.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, sz, ctypes.c_uint,
                                    ctypes.c_void_p, sz, ctypes.POINTER(sz), ctypes.POINTER(sz)]
        lib.kb16_merge.argtypes = [u8p, sz, u8p, sz, ctypes.c_uint, ctypes.c_void_p, sz,
                                   ctypes.c_void_p, sz, ctypes.POINTER(MergeResult)]
        lib.kb16_merge_n.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p,
                                     sz, ctypes.c_void_p, sz, ctypes.POINTER(MergeResult)]
        lib.kb16_gen_runs.argtypes = [ctypes.POINTER(GenParams), ctypes.c_void_p, sz, ctypes.c_void_p, sz,
                                      ctypes.POINTER(sz), ctypes.c_void_p, sz, ctypes.POINTER(sz)]
        lib.kb16_gen_scratch_slots.argtypes = [ctypes.POINTER(GenParams)]
        lib.kb16_gen_scratch_slots.restype = sz

    def err_name(self, code: int) -> str:
        return self.lib.kb16_err_name(code).decode()

    def decode(self, data: bytes, group: int = 16):
        """-> (code, err_index, [(key, addr), ...]) (keys decoded before an error included)."""
        cap = len(data) // 16 + 1
        keys = (ctypes.c_uint8 * (16 * cap))()
        lens = (ctypes.c_uint8 * cap)()
        addrs = (ctypes.c_uint32 * cap)()
        n, idx = ctypes.c_size_t(), ctypes.c_size_t()
        rc = self.lib.kb16_decode(data, len(data), group, keys, lens, addrs, cap, ctypes.byref(n), ctypes.byref(idx))
        raw = bytes(keys)
        out = [(raw[16 * i:16 * i + lens[i]], addrs[i]) for i in range(min(n.value, cap))]
        return rc, idx.value, out

    def encode(self, pairs, group: int = 16, cap: int | None = None):
        """pairs: [(key bytes, addr)] -> (code, err_index, bytes)."""
        n = len(pairs)
        bufs = [ctypes.create_string_buffer(bytes(k), max(len(k), 1)) for k, _ in pairs]
        ptrs = (ctypes.c_void_p * max(n, 1))(*[ctypes.cast(b, ctypes.c_void_p) for b in bufs])
        lens = (ctypes.c_uint8 * max(n, 1))(*[len(k) for k, _ in pairs])
        addrs = (ctypes.c_uint32 * max(n, 1))(*[a for _, a in pairs])
        cap = 48 * n if cap is None else cap
        out = (ctypes.c_uint8 * max(cap, 1))()
        olen, idx = ctypes.c_size_t(), ctypes.c_size_t()
        rc = self.lib.kb16_encode(ptrs, lens, addrs, n, group, out, cap, ctypes.byref(olen), ctypes.byref(idx))
        return rc, idx.value, bytes(out)[:olen.value]

    def merge(self, run0: bytes, run1: bytes, group: int = 16, out_cap: int | None = None,
              inv_cap: int | None = None) -> Merge:
        # Worst case: every key needs pad + virtual + real entries.
        out_cap = 3 * (len(run0) + len(run1)) + 16 if out_cap is None else out_cap
        inv_cap = (min(len(run0), len(run1)) // 16 + 1) if inv_cap is None else inv_cap
        out = (ctypes.c_uint8 * max(out_cap, 1))()
        inv = (ctypes.c_uint32 * max(inv_cap, 1))()
        res = MergeResult()
        self.lib.kb16_merge(run0, len(run0), run1, len(run1), group, out, out_cap, inv, inv_cap, ctypes.byref(res))
        return Merge(res.status, res.err_input, res.err_index, bytes(out)[:res.out_bytes],
                     list(inv)[:res.inv_count], res.out_entries, res.out_keys)

    def merge_n(self, runs: list, group: int = 16, out_cap: int | None = None,
                inv_cap: int | None = None) -> Merge:
        """kb16_merge_n of runs (newest first)."""
        total = sum(len(r) for r in runs)
        out_cap = 3 * total + 16 if out_cap is None else out_cap
        inv_cap = total // 16 + 1 if inv_cap is None else inv_cap
        n = len(runs)
        ptrs = (ctypes.c_char_p * max(n, 1))(*[bytes(r) for r in runs])
        lens = (ctypes.c_size_t * max(n, 1))(*[len(r) for r in runs])
        out = (ctypes.c_uint8 * max(out_cap, 1))()
        inv = (ctypes.c_uint32 * max(inv_cap, 1))()
        res = MergeResult()
        self.lib.kb16_merge_n(ptrs, lens, n, group, out, out_cap, inv, inv_cap, ctypes.byref(res))
        return Merge(res.status, res.err_input, res.err_index, bytes(out)[:res.out_bytes],
                     list(inv)[:res.inv_count], res.out_entries, res.out_keys)

    def gen_runs(self, kind="short", seed=1, n0=256, n1=256, overlap_pct=25, group=16,
                 addr0_base=0x10000000, addr1_base=0x20000000):
        """-> (code, run0 bytes, run1 bytes) from the firmware's own workload generator."""
        p = GenParams(KINDS[kind], seed, n0, n1, overlap_pct, group, addr0_base, addr1_base)
        slots = self.lib.kb16_gen_scratch_slots(ctypes.byref(p))
        scratch = (ctypes.c_uint8 * (KEY_SLOT_BYTES * max(slots, 1)))()
        cap0, cap1 = 48 * n0 + 16, 48 * n1 + 16
        b0, b1 = (ctypes.c_uint8 * cap0)(), (ctypes.c_uint8 * cap1)()
        l0, l1 = ctypes.c_size_t(), ctypes.c_size_t()
        rc = self.lib.kb16_gen_runs(ctypes.byref(p), scratch, slots, b0, cap0, ctypes.byref(l0), b1, cap1,
                                    ctypes.byref(l1))
        return rc, bytes(b0)[:l0.value], bytes(b1)[:l1.value]




# ---- host-loaded job (SIM_ARG 2 / console `job`; layout in docs/firmware.md) ------------------

DDR_BASE = regmap.memmap().base("DDR")  # generated from hw/soc/map/SocMap.scala
# The job ABI (scenario numbers, magic numbers, flags, layouts): fw/include/job_abi.json (lsmc.build.facts).
SCEN = facts.scenarios("lsmc")  # SIM_ARG of lsmc.elf's scenarios, by name
STORAGE_SCEN = facts.scenarios("storage")
JOB_MAGIC = facts.constant("JOB_MAGIC")
JOB_VERSION = facts.constant("JOB_VERSION")
JOB_RESULT_MAGIC = facts.constant("JOB_RESULT_MAGIC")
JOB_DESC_BYTES = facts.constant("JOB_DESC_BYTES")
_JOB_F = facts.flags("JOB_F")
JOB_FLAG_POLL, JOB_FLAG_NO_SW, JOB_FLAG_EXPECT_ERR = _JOB_F["POLL"], _JOB_F["NO_SW"], _JOB_F["EXPECT_ERR"]
JOB_DESC_FIELDS = facts.layout("JOB_DESC")
JOB_RESULT_WORD = len(JOB_DESC_FIELDS)  # the result block follows the descriptor's words
JOB_RESULT_FIELDS = facts.layout("JOB_RES")
JOB_STATUS = facts.status("JOB")


def _align(n: int, a: int = 32) -> int:
    return (n + a - 1) // a * a


def job_image(run0: bytes, run1: bytes, group: int = 16, merged: bytes = b"", invalid: bytes = b"",
              flags: int = 0, expect_error: tuple | None = None, out_buf: int | None = None,
              inv_buf: int | None = None, out_capacity: int = 0, inv_capacity: int = 0) -> tuple[bytes, dict]:
    """DDR image (to load at DDR_BASE) of a job: descriptor, runs, expected output, buffers.
    Returns (image, layout) where layout maps "run0", "run1", "merged", "invalid", "out", "inv" to
    (DDR address, length)."""
    if expect_error is not None:
        flags |= JOB_FLAG_EXPECT_ERR
    out_buf = _align(len(merged) + 32) if out_buf is None else out_buf
    inv_buf = _align(len(invalid) + 32) if inv_buf is None else inv_buf
    parts = [("run0", run0, len(run0)), ("run1", run1, len(run1)), ("merged", merged, len(merged)),
             ("invalid", invalid, len(invalid)), ("out", b"", out_buf), ("inv", b"", inv_buf)]
    off, layout, blobs = JOB_DESC_BYTES, {}, []
    for name, data, size in parts:
        layout[name] = (off, size)
        blobs.append((off, data))
        off = _align(off + max(size, 1))
    code, inp, idx = expect_error or (0, 0, 0)
    w = dict(magic=JOB_MAGIC, version=JOB_VERSION, group=group, flags=flags, exp_err=code, exp_err_input=inp,
             exp_err_index=idx, out_cap=out_capacity, inv_cap=inv_capacity)
    for name, word in (("run0", "run0"), ("run1", "run1"), ("merged", "exp_out"), ("invalid", "exp_inv")):
        w[f"{word}_off"], w[f"{word}_len"] = layout[name]
    w["exp_inv_len"] = len(invalid)
    for name in ("out", "inv"):
        w[f"{name}_off"], w[f"{name}_buf"] = layout[name]
    words = [w[f] for f in JOB_DESC_FIELDS if f]
    img = bytearray(off)
    img[:4 * len(words)] = struct.pack(f"<{len(words)}I", *words)
    for o, data in blobs:
        img[o:o + len(data)] = data
    return bytes(img), {k: (DDR_BASE + o, n) for k, (o, n) in layout.items()}


# ---- host-loaded Table III (SIM_ARG 7 / console `bench host`; layout in docs/firmware.md) ---------

SCEN_BENCH_HOST = SCEN["BENCH_HOST"]
TABLE_MAGIC = facts.constant("TABLE_MAGIC")
TABLE_HEAD, TABLE_ROW = facts.layout("TABLE_HEAD"), facts.layout("TABLE_ROW")
TABLE_ROW0, TABLE_ROW_WORDS, TABLE_MAX_ROWS = len(TABLE_HEAD), len(TABLE_ROW), facts.constant("TABLE_MAX_ROWS")
_TABLE_F = facts.flags("TABLE_F")
TABLE_FLAG_PAPER, TABLE_FLAG_NO_SW, TABLE_FLAG_IRQ = _TABLE_F["PAPER"], _TABLE_F["NO_SW"], _TABLE_F["IRQ"]


@dataclass
class TableRow:
    """One Table III job: the two encoded runs and the reference merge of them."""
    run0: bytes
    run1: bytes
    merged: bytes
    invalid: bytes
    out_keys: int


def table_rows(sizes, kind: str = "short", overlap: float = 0.25, seed: int = 1, group: int = 16) -> list[TableRow]:
    """The jobs of `kb16 gen --kind K --keys N --overlap F --seed S --group G` for each N of `sizes`, made
    on the host by the reference model, with their reference merge (what `lsmc report` times too)."""
    from lsmc.model import kb16, workloads

    rows = []
    for n in sizes:
        k0, k1 = workloads.make_runs(kind, n, overlap, seed)
        merged, invalid = kb16.merge_keys(k0, k1)
        rows.append(TableRow(kb16.encode(k0, group), kb16.encode(k1, group), kb16.encode(merged, group),
                             kb16.pack_addresses(invalid), len(merged)))
    return rows


def table3_image(rows: list[TableRow], group: int = 16, paper: bool = False, no_sw: bool = False,
                 irq: bool = False) -> bytes:
    """DDR image (to load at DDR_BASE) of the Table III jobs the firmware runs one after the other:
    the descriptor (magic, version 1, G, flags, row count; per row the offset and length of run 0,
    run 1, the expected merged run and invalid addresses, and the expected key count), then the data."""
    if not 1 <= len(rows) <= TABLE_MAX_ROWS:
        raise FirmwareError(f"Table III image: {len(rows)} rows, the firmware takes 1..{TABLE_MAX_ROWS}")
    flags = (TABLE_FLAG_PAPER if paper else 0) | (TABLE_FLAG_NO_SW if no_sw else 0) | (TABLE_FLAG_IRQ if irq else 0)
    head = dict(magic=TABLE_MAGIC, version=facts.constant("TABLE_VERSION"), group=group, flags=flags, rows=len(rows))
    words = [head.get(f, 0) for f in TABLE_HEAD]
    off, blobs = JOB_DESC_BYTES, []
    for r in rows:
        row = {"out_keys": r.out_keys}
        for name, data in (("run0", r.run0), ("run1", r.run1), ("out", r.merged), ("inv", r.invalid)):
            row[f"{name}_off"], row[f"{name}_len"] = off, len(data)
            blobs.append((off, data))
            off = _align(off + max(len(data), 1))
        words += [row.get(f, 0) for f in TABLE_ROW]
    img = bytearray(off)
    img[:4 * len(words)] = struct.pack(f"<{len(words)}I", *words)
    for o, data in blobs:
        img[o:o + len(data)] = data
    return bytes(img)


def parse_job_result(raw: bytes) -> dict:
    """The result block the firmware writes at word 32 of the descriptor."""
    vals = struct.unpack(f"<{len(JOB_RESULT_FIELDS)}I", raw[:4 * len(JOB_RESULT_FIELDS)])
    res = dict(zip(JOB_RESULT_FIELDS, vals))
    if res["magic"] != JOB_RESULT_MAGIC:
        raise FirmwareError("no job result block (the firmware did not run the job)")
    res["rc"] = struct.unpack("<i", struct.pack("<I", res["rc"]))[0]
    res["status_text"] = JOB_STATUS.get(res["status"], "unknown")
    return res


if __name__ == "__main__":  # `python3 -m lsmc.build.firmware includes`: fw/Makefile's default GEN_INC
    import sys

    if sys.argv[1:] != ["includes"]:
        print("usage: python3 -m lsmc.build.firmware includes", file=sys.stderr)
        sys.exit(2)
    print(" ".join(str(g) for g in GEN_INCLUDES))
