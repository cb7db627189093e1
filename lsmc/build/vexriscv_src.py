#!/usr/bin/env python3
"""Copy VexRiscv's Scala source out of the PyPI wheel `pythondata-cpu-vexriscv` into DEST and patch it
for SpinalHDL 1.14.2 / Scala 2.13 (the wheel carries source written for SpinalHDL 1.7 / Scala 2.11).

Usage: vexriscv_src.py DEST      (Mill's `vexriscv.generatedSources` task calls it)

Only the CPU core, its plugins and IPs are copied: the demo SoCs (Murax, Briey, Linux, SMP clusters, ...)
and the Swing test GUI are not needed by this project and several import packages that are gone from
SpinalHDL 1.14 (spinal.lib.eda.icestorm, ...); YamlPlugin needs snakeyaml. DecoderSimplePlugin's
`DecodingBench` object (a synthesis bench of demo.GenFull) is cut out for the same reason. Every edit is a
literal search/replace that must match exactly the expected number of times, so a different wheel version
fails loudly instead of silently producing a broken core. Running the script twice gives the same tree (it
starts from a clean copy).
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

WHEEL = "pythondata_cpu_vexriscv"
SCALA_SUBDIR = Path("verilog/ext/VexRiscv/src/main/scala")

# Files (relative to the scala/ root) taken from the wheel. Directories are copied whole, minus EXCLUDE.
INCLUDE_DIRS = ["vexriscv"]
EXCLUDE = [
    "vexriscv/demo",            # demo SoCs: not needed, some need spinal.lib.eda.icestorm
    "vexriscv/test",            # Swing GUI
    "vexriscv/TestsWorkspace.scala",  # playground referring to demo SMP clusters
    "vexriscv/plugin/YamlPlugin.scala",  # needs snakeyaml (not a SpinalHDL dependency); LiteX-only
]
KEEP_FROM_EXCLUDED: list[str] = []

# (file, old, new, expected count). Scala 2.13 no longer allows calling an empty-paren method without
# parentheses when the result is then applied/assigned in some forms; SpinalHDL 1.14 declares
# `getDrivingReg()` and `Bundle.clearAll(): this.type`.
EDITS = [
    ("vexriscv/Stage.scala", ".getDrivingReg.init(", ".getDrivingReg().init(", 1),
    ("vexriscv/plugin/Fetcher.scala", "decode.input(INSTRUCTION).getDrivingReg\n",
     "decode.input(INSTRUCTION).getDrivingReg()\n", 1),
    ("vexriscv/plugin/DBusCachedPlugin.scala", "memory.input(MEMORY_VIRTUAL_ADDRESS).getDrivingReg)",
     "memory.input(MEMORY_VIRTUAL_ADDRESS).getDrivingReg())", 1),
    ("vexriscv/plugin/DBusCachedPlugin.scala", "input(IS_DBUS_SHARING).getDrivingReg ",
     "input(IS_DBUS_SHARING).getDrivingReg() ", 2),
    ("vexriscv/ip/fpu/FpuCore.scala", "input.value.getDrivingReg(0, 32 bits)",
     "input.value.getDrivingReg()(0, 32 bits)", 1),
    ("vexriscv/ip/fpu/FpuCore.scala", "mulBuffer.payload.getDrivingReg :=",
     "mulBuffer.payload.getDrivingReg() :=", 1),
    ("vexriscv/plugin/DecoderSimplePlugin.scala", "import vexriscv.demo.GenFull\n", "", 1),
    ("vexriscv/plugin/DecoderSimplePlugin.scala",
     "object DecodingBench extends App{\n  SpinalVerilog{\n    val top = GenFull.cpu()\n"
     "    top.service(classOf[DecoderSimplePlugin]).bench(top)\n    top\n  }\n}\n", "", 1),
    ("vexriscv/ip/DataCache.scala",
     "  def clearAll(): Unit ={\n    List(SW,SR,SO,SI,PW,PR,PO,PI).foreach(_ := False)\n  }",
     "  override def clearAll(): this.type ={\n    List(SW,SR,SO,SI,PW,PR,PO,PI).foreach(_ := False)\n"
     "    this\n  }", 1),
]


def wheel_scala_root() -> Path:
    spec = importlib.util.find_spec(WHEEL)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"vexriscv_src: Python package {WHEEL} is not installed "
                         "(pip install pythondata-cpu-vexriscv==1.0.1.post407; scripts/setup does it)")
    root = Path(list(spec.submodule_search_locations)[0]) / SCALA_SUBDIR
    if not root.is_dir():
        raise SystemExit(f"vexriscv_src: {root} missing: unexpected {WHEEL} layout")
    return root


def copy_tree(src_root: Path, dest: Path) -> list[Path]:
    excluded = [src_root / e for e in EXCLUDE]
    kept = {src_root / k for k in KEEP_FROM_EXCLUDED}
    copied = []
    for d in INCLUDE_DIRS:
        for f in sorted((src_root / d).rglob("*.scala")):
            if any(f == e or e in f.parents for e in excluded) and f not in kept:
                continue
            out = dest / f.relative_to(src_root)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out)
            copied.append(out)
    return copied


def apply_edits(dest: Path) -> None:
    for rel, old, new, count in EDITS:
        path = dest / rel
        text = path.read_text()
        found = text.count(old)
        if found != count:
            raise SystemExit(f"vexriscv_src: {rel}: expected {count} occurrence(s) of {old!r}, found {found}")
        path.write_text(text.replace(old, new))
    # Any remaining bare `getDrivingReg` (not followed by `(`) means the wheel changed: fail loudly.
    for f in dest.rglob("*.scala"):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"\.getDrivingReg(?!\s*\()", line) and not line.lstrip().startswith("//"):
                raise SystemExit(f"vexriscv_src: unpatched getDrivingReg at {f.relative_to(dest)}:{n}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    dest = Path(argv[1])
    src_root = wheel_scala_root()
    # Start from a clean tree so the edits are applied exactly once (idempotent).
    for d in INCLUDE_DIRS:
        shutil.rmtree(dest / d, ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    files = copy_tree(src_root, dest)
    apply_edits(dest)
    print(f"vexriscv_src: {len(files)} Scala files from {src_root} -> {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
