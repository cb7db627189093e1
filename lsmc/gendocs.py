"""Generated content inside docs/: tables between markers, rendered from the one source of each fact.

    <!-- BEGIN GENERATED: regs compaction -->     (OpenTitan's CMDGEN markers are the model)
    ...table...
    <!-- END GENERATED -->

Kinds: `regs <block>` (the Markdown common.RegBlock writes for register block compaction, dma or
nand), `memmap soc` (the SoC memory map from SocMap), `irqs soc` (interrupt lines),
`table3 paper` (the paper's Table III from lsmc/data/paper.json), `onfi async` (the ONFI timing
modes from hw/ip/nand/data/onfi_timing.json), `fpga resources` (lsmc/data/fpga_resources.csv beside Table II),
`fpga blocks` (lsmc/data/fpga_blocks.csv, the ECPIX-5 SoC per block), `enum <block>.<ENUM>` (named
values of a register field, e.g. `enum nand.OP`, the NAND controller's opcodes from NandOp), `kb16 errors`
(the KB16 error codes from hw/ip/compaction/data/kb16_errors.json), `abi scenarios.<image>` /
`abi layout.<NAME>` (the firmware job ABI from fw/include/job_abi.json), `calibration table_engine` (the table
engine model's cycle estimate against its RTL, from hw/ip/table_engine/data/calibration.csv).
`lsmc docs` rewrites them; `lsmc docs --check` (and tests/test_generated_docs.py) fails when one is stale."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from lsmc import cliutil
from lsmc.build import facts, presets, regmap
from lsmc.paths import ROOT

BEGIN = "<!-- BEGIN GENERATED: {kind} {arg} -->"
END = "<!-- END GENERATED -->"
# Markers stand on lines of their own (a page may mention them in text).
MARKER = re.compile(r"^<!-- BEGIN GENERATED: (\S+) (\S+) -->\n(.*?)^<!-- END GENERATED -->", re.S | re.M)
DOC_FILES = ("README.md", "docs/*.md", "hw/ip/*/doc/*.md")


class DocsError(RuntimeError):
    pass


def _regs(block: str) -> str:
    md = (regmap.block_dir(block) / f"{block}_regs.md").read_text()
    # The file starts with a title line; the docs embed what follows it.
    return md.split("\n", 1)[1].strip("\n")


def _hex(v: int) -> str:
    return f"0x{v >> 16:04X}_{v & 0xFFFF:04X}"


def _size(v: int) -> str:
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= n and v % n == 0:
            return f"{v // n} {unit}"
    return f"{v} B"


def _memmap(_: str) -> str:
    m = regmap.memmap()
    rows = ["| base | size | C name | what |", "|---|---|---|---|"]
    docs = _region_docs()
    for name, (base, size) in sorted({**m.regions, **m.firmware}.items(), key=lambda kv: (kv[1][0], -kv[1][1])):
        rows.append(f"| {_hex(base)} | {_size(size)} | `{name}_BASE` | {docs[name]} |")
    rows.append("")
    rows.append(f"Clock (`CPU_HZ`): {m.clock_hz // 1_000_000} MHz nominal. Generated from `hw/soc/map/SocMap.scala`.")
    return "\n".join(rows)


def _region_docs() -> dict:
    import json
    d = json.loads(regmap.memmap_json().read_text())
    return {r["name"]: r["doc"] for r in [*d["regions"], *d["firmware"]]}


def _irqs(_: str) -> str:
    m = regmap.memmap()
    rows = ["| line | C name | source |", "|---|---|---|"]
    for name, line in sorted(m.irqs.items(), key=lambda kv: kv[1]):
        rows.append(f"| {line} | `IRQ_{name}` | {name} |")
    free = [str(i) for i in range(m.irq_lines) if i not in m.irqs.values()]
    if free:
        rows.append(f"| {', '.join(free)} | | free |")
    return "\n".join(rows)


def _table3(_: str) -> str:
    from lsmc.report import paper
    return paper.table3_markdown()


def _onfi(interface: str) -> str:
    from lsmc.build import onfi
    itf = onfi.data()["interfaces"][interface]
    mx = set(itf.get("max_fields", []))
    n = len(itf["modes"])
    rows = [f"| parameter ({itf.get('unit', 'ns')}) | " + " | ".join(f"mode {i}" for i in range(n)) + " |",
            "|---" * (n + 1) + "|"]
    for i, f in enumerate(itf["fields"]):
        rows.append(f"| {f}{' (max)' if f in mx else ''} | " + " | ".join(str(m[i]) for m in itf["modes"]) + " |")
    rows += ["", f"{itf['doc'][0].upper()}{itf['doc'][1:]}: min unless marked max. Generated from "
             "`hw/ip/nand/data/onfi_timing.json`, the one table the driver, the flash model and nandsim use."]
    return "\n".join(rows)


def _fpga(what: str) -> str:
    from lsmc.fpga import blocks, resources
    if what == "resources":
        return resources.resources_markdown(resources.read_resources())
    if what == "blocks":
        return blocks.blocks_markdown(blocks.read_blocks(), resources.resource_row("ecpix5"))
    raise DocsError(f"unknown fpga table {what!r} (resources or blocks)")


def _row(*cells) -> str:
    return "|" + "".join(f" {c} |" if c != "" else " |" for c in cells)


def _enum(what: str) -> str:
    block, _, name = what.partition(".")
    enums = regmap.load(block).enums
    if name not in enums:
        raise DocsError(f"register block {block!r} has no enum {name!r} (one of: {', '.join(enums) or 'none'})")
    e = enums[name]
    with_result = any(d["result"] for d in e.docs.values())
    head = "| op | name | micro-program (ONFI sequence) | result |" if with_result else "| code | name | meaning |"
    rows = [head, "|---" * (head.count(" | ") + 1) + "|"]
    for n, v in e.values.items():
        d = e.docs[n]
        rows.append(_row(v, n, d["doc"], *([d["result"]] if with_result else [])))
    return "\n".join(rows)


def _kb16(what: str) -> str:
    from lsmc.model import kb16
    if what != "errors":
        raise DocsError(f"unknown kb16 table {what!r} (errors)")
    rows = ["| code | name | meaning |", "|---|---|---|"]
    rows += [_row(c["code"], c["name"], c["meaning"]) for c in kb16.ERRORS]
    rows += ["", "Generated from `hw/ip/compaction/data/kb16_errors.json`, the one source (the IP's Scala, the KB16 "
             "model and the firmware's `kb16_errors.h` read it)."]
    return "\n".join(rows)


def _abi(what: str) -> str:
    """`scenarios.<image>`: the SIM_ARG table of a firmware image; `layout.<NAME>`: a descriptor's words."""
    kind, _, name = what.partition(".")
    try:
        if kind == "scenarios":
            scens = facts.scenario_docs(name)
            with_exit = any("exit" in v for v in scens.values())
            rows = ["| SIM_ARG | name | scenario |" + (" exit code |" if with_exit else ""),
                    "|---|---|---|" + ("---|" if with_exit else "")]
            rows += [_row(v["arg"], f"`{name.upper()}_SCEN_{n}`", v["doc"], *([v.get("exit", "")] if with_exit else []))
                     for n, v in scens.items()]
        elif kind == "layout":
            rows = ["| word | field | what |", "|---|---|---|"]
            for i, n, words, doc in facts.layout_docs(name):
                rows.append(_row(str(i) if words == 1 else f"{i} … {i + words - 1}", f"`{name}_{n.upper()}`", doc))
        else:
            raise KeyError(kind)
    except KeyError as e:
        raise DocsError(f"abi {what}: no such table ({e}; scenarios.<image> or layout.<NAME> of "
                        f"{facts.JOB_ABI.relative_to(ROOT)})") from None
    return "\n".join(rows + ["", f"Generated from `{facts.JOB_ABI.relative_to(ROOT)}` (the job ABI; C: `lsmc_job.h`)."])


def _calibration(what: str) -> str:
    from lsmc.build import table_engine_calibrate as calib
    if what != "table_engine":
        raise DocsError(f"unknown calibration table {what!r} (table_engine)")
    try:
        return calib.markdown(calib.read_rows())
    except calib.CalibrationError as e:
        raise DocsError(str(e)) from None


RENDERERS = {
    "abi": _abi,
    "calibration": _calibration,
    "enum": _enum,
    "kb16": _kb16,
    "regs": lambda arg: _regs(arg),
    "fpga": _fpga,
    "memmap": _memmap,
    "irqs": _irqs,
    "table3": _table3,
    "onfi": _onfi,
    "presets": lambda arg: presets.markdown(arg),
}


def render(kind: str, arg: str) -> str:
    if kind not in RENDERERS:
        raise DocsError(f"unknown generated-content kind {kind!r} (one of: {', '.join(RENDERERS)})")
    return RENDERERS[kind](arg).strip("\n") + "\n"


def doc_files(root: Path = ROOT) -> list[Path]:
    return sorted({p for pattern in DOC_FILES for p in root.glob(pattern)})


def blocks(path: Path) -> list[tuple[str, str, str]]:
    """(kind, arg, current text) of every generated block in `path`."""
    text = path.read_text()
    found = [(m.group(1), m.group(2), m.group(3)) for m in MARKER.finditer(text)]
    if len(re.findall(r"^<!-- BEGIN GENERATED:", text, re.M)) != len(found):
        raise DocsError(f"{path}: a '<!-- BEGIN GENERATED: kind arg -->' marker has no matching '{END}'")
    return found


def update(paths=None, check: bool = False) -> list[str]:
    """Re-render every generated block; returns 'file: kind arg' of those that were stale (and, unless
    `check`, rewrites them). Generated headers are not here: they go to the build tree (lsmc.build.facts)."""
    stale = []
    for path in paths or doc_files():
        path = Path(path)
        text = path.read_text()
        blocks(path)  # marker sanity
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        pieces, last = [], 0
        for m in MARKER.finditer(text):
            new = render(m.group(1), m.group(2))
            if new != m.group(3):
                stale.append(f"{name}: {m.group(1)} {m.group(2)}")
            pieces += [text[last:m.start()], f"{BEGIN.format(kind=m.group(1), arg=m.group(2))}\n{new}{END}"]
            last = m.end()
        new_text = "".join(pieces) + text[last:]
        if not check and new_text != text:
            path.write_text(new_text)
    return stale


@cliutil.tool_main("lsmc docs")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="lsmc docs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only report stale blocks (exit 1 if any)")
    ap.add_argument("files", nargs="*", type=Path,
                    help="Markdown files (default: README.md, docs/*.md, hw/ip/*/doc/*.md)")
    a = ap.parse_args(argv)
    for f in a.files:
        if not f.is_file():
            raise cliutil.CliError(f"{f}: no such file")
    try:
        stale = update(a.files or None, check=a.check)
    except (DocsError, regmap.RegMapError, facts.FactsError) as e:
        raise cliutil.CliError(str(e).splitlines()[0]) from None
    for s in stale:
        print(f"{'stale' if a.check else 'updated'}: {s}")
    return 1 if (a.check and stale) else 0

if __name__ == "__main__":
    sys.exit(main())
