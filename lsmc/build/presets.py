"""Named builds (presets) of the SoC and of the IPs alone, as hw/soc/rtl/Presets.scala defines them.

Every SoC the project builds is a preset of `LsmcSocConfig` (`soc.Generate --preset NAME`), and every
standalone IP build one of `CompactionConfig` / `DmaConfig`. Python finds a build here by name or by its
parameters, and never rebuilds folder names or limits itself. The list is lsmc/data/presets.json, rendered
from the Scala by `soc.Presets` and checked in, so the package (argument choices, folder names, the docs'
table) reads it without starting the JVM; tests/test_configurations.py renders it again and fails when the
copy has drifted, and `python3 -m lsmc.build.presets render` rewrites it. Each generated SoC also carries
its own manifest.json (and the harness's lsmc_soc_config.h) beside its Verilog: `manifest(folder)` reads it.

    python3 -m lsmc.build.presets list            # the presets, one line each
    python3 -m lsmc.build.presets folder NAME     # build/gen folder of a preset (host/Makefile's default)
    python3 -m lsmc.build.presets render          # rewrite lsmc/data/presets.json from the Scala
"""
from __future__ import annotations

import functools
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lsmc import build as _build
from lsmc.paths import GEN, ROOT

PRESETS_JSON = ROOT / "lsmc" / "data" / "presets.json"
MANIFEST = "manifest.json"          # beside every generated Verilog
HARNESS_HEADER = "lsmc_soc_config.h"  # beside a SoC's Verilog: the SoC harness's ports and channels


class PresetError(_build.BuildError):
    pass


@dataclass(frozen=True)
class SocPreset:
    name: str
    folder: str        # under build/gen
    variant: str       # the simulator's folder under build/sim
    target: str        # "sim" (the SoC harness) or "board" (LiteX)
    what: str
    config: dict       # LsmcSocConfig, field by field (nested: compaction, dma, nand)
    derived: dict      # counts, limits and register bases that follow from it

    @property
    def gen_dir(self) -> Path:
        return GEN / self.folder

    @property
    def dma_port_slice(self) -> bool:
        return bool(self.config["dma"]["portSlice"])

    @property
    def arbiter_slice(self) -> bool:
        return bool(self.config["dma"]["arbiterSlice"])


@dataclass(frozen=True)
class IpPreset:
    name: str
    folder: str
    config: dict

    @property
    def gen_dir(self) -> Path:
        return GEN / self.folder


@functools.cache
def _data() -> dict:
    try:
        data = json.loads(PRESETS_JSON.read_text())
        if not all(isinstance(data.get(k), dict) for k in ("soc", "compaction", "dma")):
            raise ValueError("no 'soc', 'compaction' and 'dma' objects")
        return data
    except (OSError, ValueError) as e:
        raise PresetError(f"{PRESETS_JSON}: {e}") from None


def soc_presets() -> dict[str, SocPreset]:
    """Every SoC preset by name, in the Scala list's order."""
    return {n: SocPreset(n, m["folder"], m["variant"], m["target"], m["what"], m["config"], m["derived"])
            for n, m in _data()["soc"].items()}


def _pick(kind: str, name: str, table: dict):
    if name not in table:
        raise PresetError(f"unknown {kind} preset {name!r} (one of: {', '.join(table)})")
    return table[name]


def soc(name: str) -> SocPreset:
    return _pick("SoC", name, soc_presets())


def te_merge_bytes() -> int:
    """The merge stage's beat (bytes) of the SoC's table-engine units: one value in every preset that has units
    (hw/soc/rtl/Presets.scala's tablesMerge), which `lsmc tables compact`'s rtl back end builds, the model back end
    estimates and LevelDB's host library (host/Makefile TE_M) builds; PresetError when the presets disagree."""
    values = {p.derived["te_merge_bytes"] for p in soc_presets().values() if p.derived["te_units"]}
    if len(values) != 1:
        raise PresetError(f"the table-engine presets' te_merge_bytes differ or are missing: {sorted(values)}")
    return values.pop()


def ip_presets(block: str) -> dict[str, dict]:
    """The standalone presets of `block` ('compaction' or 'dma'): name -> {folder, config}."""
    return _data()[block]


def ip(block: str, name: str) -> IpPreset:
    """A standalone build of `block` ('compaction' or 'dma') by preset name."""
    table = {n: IpPreset(n, m["folder"], m["config"]) for n, m in _data()[block].items()}
    return _pick(block, name, table)


def find_ip(block: str, **config) -> IpPreset:
    """The standalone `block` preset whose configuration has these values (e.g. dataWidth=32, ways=4)."""
    for n, m in _data()[block].items():
        if all(m["config"].get(k) == v for k, v in config.items()):
            return IpPreset(n, m["folder"], m["config"])
    raise PresetError(f"no {block} preset with " + ", ".join(f"{k} {v}" for k, v in config.items()) +
                      " (hw/ip/*/rtl: CompactionConfig.presets / DmaConfig.presets)")


def find_soc(target: str, ip_width: int, units: int, ways: int, dma_port_slice: bool = False,
             ram_kib: int | None = None, nand_pad_input_cycles: int | None = None,
             arbiter_slice: bool | None = None) -> SocPreset:
    """The SoC preset of `target` with these parameters (None: any); PresetError naming them if none is."""
    for p in soc_presets().values():
        d, nand = p.derived, p.config["nand"]
        if (p.target, d["ip_width"], d["units"], d["ways"], p.dma_port_slice) == \
                (target, ip_width, units, ways, dma_port_slice) and \
                ram_kib in (None, d["ram_kib"]) and nand_pad_input_cycles in (None, nand["padInputCycles"]) and \
                arbiter_slice in (None, p.arbiter_slice):
            return p
    what = f"{ip_width}-bit streams, {units} unit(s) of {ways} ways" + \
        (", DMA port slices" if dma_port_slice else "") + \
        (f", {ram_kib} KiB RAM" if ram_kib is not None else "") + \
        (f", {nand_pad_input_cycles} NAND pad input cycles" if nand_pad_input_cycles is not None else "") + \
        ({True: ", arbiter slice", False: ", no arbiter slice", None: ""}[arbiter_slice])
    raise PresetError(f"no {target} SoC preset with {what} (the presets: hw/soc/rtl/Presets.scala)")


def manifest(folder: Path) -> dict:
    """The manifest.json the generator wrote beside a build's Verilog in `folder`."""
    path = Path(folder) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise PresetError(f"{path}: {e} (regenerate the build)") from None


def markdown(which: str) -> str:
    """The presets as a Markdown table (docs/configurations.md, between generated markers): `soc` or `ip`."""
    if which == "soc":
        rows = ["| preset | for | units x ways | IP width | table-engine units x ways (merge bytes) | "
                "DMA ports x bytes | write burst | NAND channels | RAM | build/gen/ | what |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in soc_presets().values():
            d, dma = p.derived, p.config["dma"]
            extra = "".join(f", {t}" for t, on in (("grouped", dma["writeGroup"]), ("slices", dma["portSlice"]),
                                                           ("arbiter slice", dma["arbiterSlice"])) if on)
            pads = p.config["nand"]["padInputCycles"]
            te = f"{d['te_units']} x {d['te_ways']} ({d['te_merge_bytes']})" if d["te_units"] else "-"
            rows.append(f"| `{p.name}` | {p.target} | {d['units']} x {d['ways']} | {d['ip_width']} | {te} | "
                        f"{d['dma_ports']} x {d['dma_port_bytes']} | {dma['writeBurst']}{extra} | {d['nand_channels']}"
                        f"{f' (pads +{pads})' if pads else ''} | {d['ram_kib']} KiB | `{p.folder}` | {p.what} |")
        return "\n".join(rows)
    if which == "ip":
        rows = ["| preset | block | build/gen/ | parameters |", "|---|---|---|---|"]
        for block in ("compaction", "dma"):
            for n, m in ip_presets(block).items():
                params = ", ".join(f"{k} {json.dumps(v)}" for k, v in m["config"].items())
                rows.append(f"| `{n}` | {block} | `{m['folder']}` | {params} |")
        return "\n".join(rows)
    raise PresetError(f"unknown presets table {which!r} (soc or ip)")


def render() -> str:
    """presets.json as the Scala renders it now (`soc.Presets`, through Mill: minutes on a cold build)."""
    with tempfile.TemporaryDirectory() as tmp:
        _build.mill("soc.runMain", "soc.Presets", "--out", tmp)
        return (Path(tmp) / "presets.json").read_text()


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args == ["list"]:
            for p in soc_presets().values():
                print(f"{p.name:24} {p.target:5} build/gen/{p.folder:24} {p.what}")
            for block in ("compaction", "dma"):
                for n, m in _data()[block].items():
                    print(f"{n:24} {block:5} build/gen/{m['folder']}")
            return 0
        if len(args) == 2 and args[0] == "folder":
            name = args[1]
            for block in ("compaction", "dma"):
                if name in _data()[block]:
                    print(ip(block, name).gen_dir)
                    return 0
            print(soc(name).gen_dir)
            return 0
        if args == ["render"]:
            PRESETS_JSON.write_text(render())
            print(f"wrote {PRESETS_JSON}")
            return 0
    except _build.BuildError as e:
        print(f"presets: error: {e}", file=sys.stderr)
        return 1
    print("usage: python3 -m lsmc.build.presets list | folder NAME | render", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
