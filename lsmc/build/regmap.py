"""The generated register maps and the SoC memory map, as Python reads them.

The RTL is the one source: `common.RegBlock` (hw/common/rtl/RegDocs.scala) writes
`build/gen/<dir>/<block>_regs.json` for every regif block, and `soc.MemoryMap` writes
`build/gen/soc_map/lsmc_soc.json` from `SocMap` (hw/soc/map/SocMap.scala). This module runs the
generator when the JSON is missing or its sources changed (cached by `lsmc.build.generate`) and
returns plain dictionaries. Nothing here restates an address."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lsmc import build as _build
from lsmc.build import presets

# block -> (Mill module, generator main, output folder, extra generator arguments): the standalone presets
# of the two-way IP and its DMA at 128 bits (hw/ip/*/rtl: *Config.presets)
_IP = presets.find_ip("compaction", dataWidth=128, ways=2)
_DMA = presets.find_ip("dma", dataWidth=128, readers=2)
BLOCKS = {
    "compaction": ("compaction", "compaction.Generate", _IP.folder, ["--preset", _IP.name]),
    "dma": ("dma", "dma.Generate", _DMA.folder, ["--preset", _DMA.name]),
    "nand": ("nand", "nand.Generate", "nand", []),
}
SOC_MAP = ("socmap", "soc.MemoryMap", "soc_map", [])


class RegMapError(RuntimeError):
    pass


def _generated(spec, filename: str) -> Path:
    module, main, folder, args = spec
    outdir = _build.GEN / folder
    try:
        _build.generate(module, main, outdir, [*args, "--out", str(outdir)])
    except _build.BuildError as e:
        raise RegMapError(f"{filename} could not be generated:\n{e}") from None
    path = outdir / filename
    if not path.is_file():
        raise RegMapError(f"{main} did not write {path}")
    return path


def block_dir(block: str) -> Path:
    """Folder holding the generated files of register block `block` (generated if needed)."""
    return json_path(block).parent


def json_path(block: str) -> Path:
    if block not in BLOCKS:
        raise RegMapError(f"unknown register block {block!r} (one of: {', '.join(BLOCKS)})")
    return _generated(BLOCKS[block], f"{block}_regs.json")


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int
    access: str
    reset: int
    doc: str

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb


@dataclass(frozen=True)
class Register:
    name: str
    offset: int
    doc: str
    fields: tuple

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"register {self.name} has no field {name!r}")

    @property
    def reset(self) -> int:
        return sum(f.reset << f.lsb for f in self.fields)


def _registers(items) -> dict:
    return {r["name"]: Register(r["name"], r["offset"], r["doc"],
                                tuple(Field(**f) for f in r["fields"])) for r in items}


@dataclass(frozen=True)
class Block:
    name: str
    prefix: str
    registers: dict      # name -> Register, in address order
    arrays: dict         # name -> {"count", "base", "stride", "registers": {name -> Register}}
    enums: dict = None   # name -> Enum: named values of a field (common.RegEnum), e.g. nand's OP and E

    @property
    def offsets(self) -> dict:
        return {n: r.offset for n, r in self.registers.items()}


@dataclass(frozen=True)
class Enum:
    name: str
    field: str           # "<REGISTER>.<FIELD>" the values go to or come from
    doc: str
    values: dict         # name -> value, in value order
    docs: dict           # name -> {"note", "doc", "result"}


def _enums(items) -> dict:
    return {e["name"]: Enum(e["name"], e["field"], e["doc"], {v["name"]: v["value"] for v in e["values"]},
                            {v["name"]: {k: v[k] for k in ("note", "doc", "result")} for v in e["values"]})
            for e in items}


@cache
def load(block: str, path: str | None = None) -> Block:
    """Register block `block` ("compaction", "dma", "nand") from its generated JSON."""
    p = Path(path) if path else json_path(block)
    try:
        d = json.loads(p.read_text())
        arrays = {a["name"]: {"count": a["count"], "base": a["base"], "stride": a["stride"],
                              "registers": _registers(a["registers"])} for a in d["arrays"]}
        return Block(d["block"], d["prefix"], _registers(d["registers"]), arrays, _enums(d.get("enums", [])))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RegMapError(f"{p}: not a register map written by common.RegBlock ({e})") from None


class LazyMap(Mapping):
    """A read-only mapping computed by `fn` on first use (so importing a module that exposes one
    starts no generator)."""

    def __init__(self, fn, what: str = ""):
        self._fn, self._what, self._value = fn, what, None

    def _d(self) -> dict:
        if self._value is None:
            self._value = self._fn()
        return self._value

    def __getitem__(self, key):
        return self._d()[key]

    def __iter__(self):
        return iter(self._d())

    def __len__(self):
        return len(self._d())

    def __repr__(self):
        return f"LazyMap({self._what})"


def LazyOffsets(block: str) -> LazyMap:  # noqa: N802 (reads like the class it returns)
    """Register name -> byte offset of `block`, from the generated JSON on first use."""
    return LazyMap(lambda: load(block).offsets, f"{block} register offsets")


# ---- SoC memory map ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MemMap:
    clock_hz: int
    regions: dict        # name -> (base, size): DDR, RAM, UART, TIMER, IRQC, DMA, SIMCTL, CIP, NAND
    firmware: dict       # name -> (base, size): FW_IMAGE, FW_STACK, DDR_HOST, DDR_SCRATCH
    irqs: dict           # name -> line
    irq_lines: int
    registers: dict      # peripheral -> {register -> offset}
    sim_id_magic: int

    def base(self, name: str) -> int:
        return {**self.regions, **self.firmware}[name][0]

    def size(self, name: str) -> int:
        return {**self.regions, **self.firmware}[name][1]


def memmap_json() -> Path:
    return _generated(SOC_MAP, "lsmc_soc.json")


@cache
def memmap(path: str | None = None) -> MemMap:
    """The SoC memory map from the generated lsmc_soc.json."""
    p = Path(path) if path else memmap_json()
    try:
        d = json.loads(p.read_text())
        return MemMap(d["clock_hz"], {r["name"]: (r["base"], r["size"]) for r in d["regions"]},
                      {r["name"]: (r["base"], r["size"]) for r in d["firmware"]}, dict(d["irqs"]),
                      d["irq_lines"], d["registers"], d["sim_id_magic"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RegMapError(f"{p}: not a memory map written by soc.MemoryMap ({e})") from None
