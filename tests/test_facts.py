"""One source per fact: the copies generated from it agree, and no hand-kept copy is back.

- memory map: SocMap (hw/soc/map/SocMap.scala) -> lsmc_soc.h / .ld / .json
- registers: the regif blocks -> <block>_regs.h / .json (common.RegBlock)
- ONFI timing table: hw/ip/nand/data/onfi_timing.json -> build/gen/facts/onfi_timing.h, lsmc.build.onfi
- NAND opcodes and completion errors: NandOp / NandErr (hw/ip/nand/rtl/NandTypes.scala) -> nand_regs.h / .json
- KB16 error codes: hw/ip/compaction/data/kb16_errors.json -> the IP's Scala, lsmc.model.kb16,
  build/gen/facts/kb16_errors.h, compaction_regs.h / .json (CIP_ERR_*)
- DDR presets: sim/common/ddr_presets.json -> build/gen/facts/ddr_presets.h, lsmc.build.facts
- the paper's Table III, LevelDB figure and clock: lsmc/data/paper.json -> lsmc.report.paper
- the table writer's compressor lanes: hw/ip/table_engine/model/limits.h kZipLanes -> the engine's generators
  (lsmc.build), TableEngineConfig's default (checked)
Generated headers live in the build tree only (lsmc.build.facts, the generators' build/gen/<name>/).
"""
import re

import pytest

from lsmc.build import facts, onfi, regmap
from lsmc.paths import ROOT
from lsmc.report import paper

DEFINE = re.compile(r"^#define\s+(\w+)\s+\(?(0x[0-9A-Fa-f]+|\d+)u?\)?(?:\s|$)", re.M)


def defines(path) -> dict:
    return {k: int(v, 0) for k, v in DEFINE.findall(path.read_text())}


# ---- memory map --------------------------------------------------------------------------------

# The default map and the ECPIX-5's 128 KiB on-chip RAM variant (soc.MemoryMap --ram-kib 128).
@pytest.fixture(scope="module", params=["default", 128])
def soc_map(request):
    if request.param == "default":
        return regmap.memmap(), regmap.memmap_json().parent
    from lsmc.build import firmware
    folder = firmware.memory_map_dir(request.param)
    m = regmap.memmap(str(folder / "lsmc_soc.json"))
    assert m.size("RAM") == request.param * 1024
    return m, folder


def test_memmap_header_and_linker_script_match_json(soc_map):
    m, folder = soc_map
    h = defines(folder / "lsmc_soc.h")
    for name, (base, size) in {**m.regions, **m.firmware}.items():
        assert (h[f"{name}_BASE"], h[f"{name}_SIZE"]) == (base, size), name
    for name, line in m.irqs.items():
        assert h[f"IRQ_{name}"] == line, name
    assert h["IRQ_LINES"] == m.irq_lines and h["CPU_HZ"] == m.clock_hz and h["SIMCTL_ID_MAGIC"] == m.sim_id_magic
    for periph, regs in m.registers.items():
        for reg, off in regs.items():
            assert h[f"{periph}_{reg}"] == off, (periph, reg)
    ld = (folder / "lsmc_soc.ld").read_text()
    ram = re.search(r"ram \(rwx\) : ORIGIN = (0x[0-9A-F]+), LENGTH = (0x[0-9A-F]+)", ld)
    assert ram and (int(ram.group(1), 16), int(ram.group(2), 16)) == m.regions["RAM"]
    assert int(re.search(r"FW_STACK_SIZE = (0x[0-9A-F]+);", ld).group(1), 16) == m.size("FW_STACK")


def test_memmap_regions_are_consistent(soc_map):
    m, _ = soc_map
    periph = sorted(v for k, v in m.regions.items() if k not in ("DDR", "RAM"))
    for (b0, s0), (b1, _) in zip(periph, periph[1:]):
        assert b0 + s0 <= b1, "peripheral windows overlap"
    ddr, ram = m.regions["DDR"], m.regions["RAM"]
    assert ddr[0] + ddr[1] <= ram[0] <= ram[0] + ram[1] <= periph[0][0]
    inside = {"FW_IMAGE": ram, "FW_STACK": ram, "DDR_HOST": ddr, "DDR_SCRATCH": ddr}
    for name, (b, s) in m.firmware.items():
        outer = inside[name]
        assert outer[0] <= b and b + s <= outer[0] + outer[1], name
    assert m.base("FW_IMAGE") + m.size("FW_IMAGE") == m.base("FW_STACK")
    assert m.base("FW_STACK") + m.size("FW_STACK") == ram[0] + ram[1]
    assert m.base("DDR_HOST") + m.size("DDR_HOST") == m.base("DDR_SCRATCH")


def _linked_symbols(elf) -> dict:
    syms = {}
    for line in (elf.parent / "lsmc.map").read_text().splitlines():
        mm = re.match(r"\s+0x([0-9a-f]+)\s+(__stack|__heap_end|__bss_end)\s+=", line)
        if mm:
            syms[mm.group(2)] = int(mm.group(1), 16)
    return syms


def test_firmware_links_where_the_map_says():
    from lsmc.build import firmware
    m = regmap.memmap()
    syms = _linked_symbols(firmware.build_firmware())
    assert {k: syms[k] for k in ("__stack", "__heap_end")} == \
        {"__stack": m.base("FW_STACK") + m.size("FW_STACK"), "__heap_end": m.base("FW_STACK")}


def test_board_firmware_links_for_its_ram():
    """The ECPIX-5's firmware (build_firmware(ram_kib=128)): linked from the 128 KiB map, its stack at that
    RAM's end, its image below the stack."""
    from lsmc.build import firmware
    folder = firmware.memory_map_dir(128)
    m = regmap.memmap(str(folder / "lsmc_soc.json"))
    elf = firmware.build_firmware(ram_kib=128)
    assert elf.parent.name == "fw-ram128"
    syms = _linked_symbols(elf)
    assert syms["__stack"] == m.base("RAM") + 128 * 1024 == m.base("FW_STACK") + m.size("FW_STACK")
    assert syms["__heap_end"] == m.base("FW_STACK") and syms["__bss_end"] <= syms["__heap_end"]


# ---- registers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("block", sorted(regmap.BLOCKS))
def test_register_header_matches_json(block):
    b = regmap.load(block)
    h = defines(regmap.block_dir(block) / f"{block}_regs.h")
    p = b.prefix
    in_array = re.compile(rf"^({'|'.join(b.arrays) or '$^'})\d+_")
    for name, r in b.registers.items():
        assert h[f"{p}_{name}"] == r.offset, name
        for f in r.fields:
            if f.width < 32 and not in_array.match(name):  # array fields: named once, below
                assert (h[f"{p}_{name}_{f.name}_SHIFT"], h[f"{p}_{name}_{f.name}_MASK"]) == (f.lsb, f.mask), f.name
    for an, a in b.arrays.items():
        assert (h[f"{p}_{an}_COUNT"], h[f"{p}_{an}_STRIDE"]) == (a["count"], a["stride"])
        for name, r in a["registers"].items():
            assert h[f"{p}_{an}_{name}"] == r.offset
            for n in range(a["count"]):
                assert b.registers[f"{an}{n}_{name}"].offset == a["base"] + n * a["stride"] + r.offset


def test_register_names_are_c_style():
    for block in regmap.BLOCKS:
        for r in regmap.load(block).registers.values():
            assert re.fullmatch(r"[A-Z][A-Z0-9_]*", r.name), (block, r.name)
            for f in r.fields:
                assert re.fullmatch(r"[A-Z][A-Z0-9_]*", f.name), (block, r.name, f.name)


def test_firmware_needs_no_alias_macros():
    text = (ROOT / "fw" / "include" / "regs.h").read_text()
    assert not re.search(r"^#define\s+\w+\s+(CIP|DMA|NAND|COMPACTION)_\w+\s*$", text, re.M), \
        "fw/include/regs.h maps names onto generated ones again"
    assert not re.search(r"^#define\s+\w+_BASE\b", (ROOT / "fw" / "include" / "soc.h").read_text(), re.M)


# ---- ONFI timing table --------------------------------------------------------------------------

def test_onfi_header_is_rendered_from_the_data_file():
    assert (facts.include_dir() / "onfi_timing.h").read_text() == onfi.header()
    modes = onfi.modes("async")
    text = (facts.include_dir() / "onfi_timing.h").read_text()
    rows = re.findall(r"^\s+\{([0-9, ]+)\}, /\* mode (\d+) \*/", text[:text.index("ONFI_NVDDR")], re.M)
    assert [list(map(int, r.split(","))) for r, _ in rows] == [list(m.values()) for m in modes]


def test_onfi_table_shape_and_python_view():
    from lsmc.sim import nandsim
    itf = onfi.data()["interfaces"]["async"]
    assert len(itf["modes"]) == 6 and set(itf["max_fields"]) <= set(itf["fields"])
    assert nandsim.ONFI_MODES == onfi.modes("async")
    # faster modes never ask for longer cycles (tRC, tWC shrink from mode 0 to 5)
    for p in ("tRC", "tWC"):
        v = [m[p] for m in onfi.modes()]
        assert v == sorted(v, reverse=True), p


# ---- the paper's numbers and the clock ----------------------------------------------------------

def test_paper_table3_is_self_consistent():
    rows = paper.table3()
    assert [r.keys for r in rows] == [512, 1024, 2048, 4096, 8192]
    for r in rows:
        assert r.bytes == 16 * r.keys
        assert r.counter / paper.clock_mhz() / r.keys == pytest.approx(r.us_per_entry, rel=1e-4), r.keys
        # the LevelDB figure is one constant: speed-up x µs/entry gives it back in every row
        assert r.speedup * r.us_per_entry == pytest.approx(paper.leveldb_us_per_entry(), rel=5e-3), r.keys


def test_paper_clock_is_the_socs_nominal_clock():
    assert paper.clock_hz() == regmap.memmap().clock_hz


# ---- NAND opcodes and completion errors ----------------------------------------------------------

def _c_list(text: str, name: str) -> dict:
    """NAME -> value of an X-macro list `#define NAME(X) X(A, 0) X(B, 1) ...` in a C header."""
    m = re.search(rf"^#define {name}\(X\)\s+(.*)$", text.replace("\\\n", " "), re.M)  # continued lines joined
    assert m, f"{name} missing"
    return {n: int(v) for n, v in re.findall(r"X\((\w+), (\d+)\)", m.group(1))}


@pytest.mark.parametrize("enum,want", [("OP", 15), ("E", 7)])
def test_nand_enums_are_rendered_from_the_rtl(enum, want):
    """NandOp / NandErr reach nand_regs.h (one define per value and the X-macro list), nand_regs.json and
    the field docs; nandsim takes its numbers from the JSON."""
    from lsmc.sim import nandsim
    e = regmap.load("nand").enums[enum]
    assert len(e.values) == want and sorted(e.values.values()) == list(range(want))
    h = (regmap.block_dir("nand") / "nand_regs.h").read_text()
    d = defines(regmap.block_dir("nand") / "nand_regs.h")
    assert {n: d[f"NAND_{enum}_{n}"] for n in e.values} == e.values == _c_list(h, f"NAND_{enum}_LIST")
    assert d[f"NAND_{enum}_COUNT"] == want
    reg, field = e.field.split(".")
    assert regmap.load("nand").registers[reg].field(field).doc.startswith(
        ", ".join(f"{v} {n}" for n, v in list(e.values.items())[:2]))
    py = ({n: getattr(nandsim, f"OP_{n}") for n in e.values} if enum == "OP" else
          {n: v for v, n in nandsim.ERR_NAMES.items()})
    assert py == e.values


# ---- KB16 error codes -----------------------------------------------------------------------------

def test_kb16_errors_reach_every_language():
    """One table (kb16_errors.json): the model's constants, kb16_errors.h, and what the IP's Scala read
    from it (compaction_regs.json / .h, CIP_ERR_*) all give every name the same code."""
    import json

    from lsmc.model import kb16
    src = {c["name"]: c["code"] for c in json.loads(facts.KB16_ERRORS.read_text())["codes"]}
    assert src["NONE"] == 0 and src["BAD_GROUP"] == len(src) - 1 and len(src) == 14
    assert {n: getattr(kb16, n) for n in src} == src and {v: n for n, v in src.items()} == kb16.ERROR_NAMES
    assert _c_list((facts.include_dir() / "kb16_errors.h").read_text(), "KB16_ERROR_LIST") == src
    rtl = regmap.load("compaction").enums["ERR"]
    assert rtl.values == src and rtl.field == "STATUS.ERR_CODE"
    d = defines(regmap.block_dir("compaction") / "compaction_regs.h")
    assert {n: d[f"CIP_ERR_{n}"] for n in src} == src


def test_kb16_library_takes_its_codes_from_the_table():
    """The firmware's KB16 library (compiled for the host) names every code as the table does."""
    from lsmc.build import firmware
    from lsmc.model import kb16
    lib = firmware.Kb16Lib()
    assert [lib.err_name(c) for c in kb16.ERROR_NAMES] == list(kb16.ERROR_NAMES.values())


# ---- DDR presets ----------------------------------------------------------------------------------

def test_ddr_presets_header_is_rendered_from_the_data_file():
    import json
    rows = json.loads(facts.DDR_PRESETS.read_text())["presets"]
    text = (facts.include_dir() / "ddr_presets.h").read_text()
    body = text[text.index("kDdrPresets[]"):]
    got = [[v.strip().strip('"') for v in m.split(",")] for m in re.findall(r"\{([^{}]*)\}", body)]
    assert got == [[str(v) for v in r.values()] for r in rows]
    from lsmc.report import scaling
    assert list(scaling.ddr_presets()) == [r["name"] for r in rows]


# ---- the table engine's job descriptor ------------------------------------------------------------

def test_te_job_header_is_rendered_from_the_data_file():
    h = defines(facts.include_dir() / "te_job.h")
    for name in facts.te_job()["layouts"]:
        for field, (first, _) in facts.te_layout(name).items():
            assert h[f"{name}_{field.upper()}" if field else f"{name}_NWORDS"] == first, (name, field)
    for name in facts.te_job()["constants"]:
        assert h[name] == facts.te_constant(name)
    text = (facts.include_dir() / "te_job.h").read_text()
    for name, bit in facts.te_flags().items():
        assert re.search(rf"^#define TE_F_{name}\s+\(1u << {bit.bit_length() - 1}\)", text, re.M), name


def test_te_job_lines_read_by_the_scala_side():
    """hw/ip/table_engine/rtl/TeJob.scala reads te_job.json one line at a time (no JSON library at elaboration):
    its line grammar, written again here, must see what a JSON parser sees, so an edit that breaks the one-word-a-
    line form fails here and not in a wrong RTL field."""
    start = re.compile(r'^\s*"(TE_[A-Z_]+)": \{"words": \[\s*$')
    word = re.compile(r'^\s*\["([a-z_0-9]+)(?:\[(\d+)\])?",.*$')
    size = re.compile(r'^\s*"size": (\d+)\}.*$')
    got, cur = {}, None
    for line in facts.TE_JOB.read_text().splitlines():
        if m := start.match(line):
            cur = m[1]
            got[cur] = {}
            at = 0
        elif cur and (m := word.match(line)):
            got[cur][m[1]] = (at, int(m[2] or 1))
            at += int(m[2] or 1)
        elif cur and (m := size.match(line)):
            got[cur][""] = (int(m[1]), 0)
            cur = None
        elif cur and line.strip().startswith("]}"):
            got[cur][""] = (at, 0)
            cur = None
    assert got == {n: facts.te_layout(n) for n in facts.te_job()["layouts"]}
    consts = re.findall(r'^\s*"(TE_[A-Z_]+)": \{"(?:ascii|value)"', facts.TE_JOB.read_text(), re.M)
    assert set(consts) == set(facts.te_job()["constants"])
    flags = re.findall(r'^\s*"([A-Z_]+)": \[(\d+), "', facts.TE_JOB.read_text(), re.M)
    assert {n: 1 << int(b) for n, b in flags} == facts.te_flags()


# ---- generated headers stay in the build tree ------------------------------------------------------

def test_no_generated_header_in_a_source_folder():
    """A header that says it is generated ("GENERATED by ...", "do not edit") belongs to build/ (rendered
    there by its generator); hw/ip/nand/model/onfi_timing.h was one."""
    import subprocess
    tracked = subprocess.run(["git", "ls-files", "*.h", "*.hpp", "*.svh"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    head = lambda f: "\n".join((ROOT / f).read_text(errors="replace").splitlines()[:3])  # noqa: E731
    hits = [f for f in tracked if (ROOT / f).exists() and re.search(r"GENERATED by|[Dd]o not edit", head(f))]
    assert not hits, f"generated headers checked in (render them into build/gen instead): {hits}"


# ---- no hand-kept copies -------------------------------------------------------------------------

HOST = ["host/**/*.cpp", "host/**/*.h", "leveldb/*.cc", "leveldb/*.h"]
CODE = ["lsmc/**/*.py", "fw/**/*.[chS]", "sim/**/*.[ch]", "sim/**/*.cpp", "hw/ip/*/dv/*.[ch]", "hw/ip/*/dv/*.cpp",
        "hw/ip/*/model/*.[ch]", "hw/ip/*/model/*.cpp", "boards/**/*.py",
        "tests/fw_host/*.py", *HOST]
SCALA = ["hw/**/*.scala", "nand/**/*.scala"]
# Facts that only their source may spell out, and where to look for copies. (The harnesses' help texts
# may name an address; their logic takes the map from lsmc_soc.h.)
COPIES = {
    "a Table III counter": (re.compile(r"\b(9,?334|14,?814|26,?248|45,?065|88,?247)\b"), CODE),
    "the LevelDB figure": (re.compile(r"\b1\.192\b"), CODE),
    "an ONFI timing row": (re.compile(r"\b200, 20, 50, 25, 100\b|\b70, 5, 10, 10, 25, 5, 30\b"), CODE),
    "a peripheral base address": (re.compile(r"0x[Ff]00[0-9A-Fa-f]_?[0-9A-Fa-f]000\b"),
                                  ["lsmc/**/*.py", "fw/**/*.[chS]", "boards/**/*.py", "tests/fw_host/*.py"]),
    # the LevelDB driver's Verilated-IP back end takes the IP's offsets from compaction_regs.h
    "a register offset spelt as a number": (re.compile(r"\bk[A-Z]\w* = 0x[0-9A-Fa-f]+\b"), HOST),
    "the DDR or RAM base address": (re.compile(r"0x[48]000_?0000\b"),
                                    ["lsmc/**/*.py", "boards/**/*.py", "tests/fw_host/*.py"]),
    # NandOp / NandErr: nand_regs.h and nand_regs.json carry them (a C enum, a Python range or the field
    # doc's list written out again is a copy)
    "a NAND opcode or completion error number": (
        re.compile(r"\bNAND_(OP|E)_[A-Z_]+\s*=\s*\d|\b(OP|ERR)_[A-Z_]+\)\s*=\s*range\(|"
                   r"\b0 RESET, 1 READ_ID\b|\b0 OK, 1 TIMEOUT\b|[\[{]\s*\"OK\",\s*\"TIMEOUT\""), [*CODE, *SCALA]),
    # kb16_errors.json: the model reads it, C gets kb16_errors.h, the IP's Scala reads it at elaboration
    "a KB16 error code": (re.compile(r"\b(KB16_ERR_)?(RESERVED_BITS|LEN_OVER_8|SHARED_OVER_PREV|GROUP_START_SHARED|"
                                     r"VIRTUAL_AT_END|BAD_PAD|EMPTY_KEY|NOT_INCREASING|FILL_NONZERO|BAD_GROUP)"
                                     r"\s*=\s*\d|\"RESERVED_BITS\",\s*\"LEN_OVER_8\""), [*CODE, *SCALA]),
    # sim/common/ddr_presets.json: the harness gets ddr_presets.h from it, Python reads the JSON
    "a DDR preset row or list": (re.compile(r"\"(kcu105|arty|boardsim)\",\s*\"(EDY4016A|MT41K128M16)\"|"
                                            r"choices=\[\"kcu105\"|index\(\"kDdrPresets"), CODE),
    # fw/include/job_abi.json: the firmware gets lsmc_job.h, Python reads the file (lsmc.build.facts)
    "a job ABI magic number": (re.compile(r"0x(4A4D|524D|544D|534D|574D)534C\b", re.I), CODE),
    # hw/ip/table_engine/data/te_job.json: the front end's Scala reads it, C gets te_job.h, Python the file
    "a table-engine descriptor magic": (re.compile(r"0x4554534C\b", re.I), [*CODE, *SCALA]),
    "a SIM_ARG scenario number": (re.compile(r"\bSCEN_\w+\s*=\s*\d|\barg=\d|\"--arg\", \"\d"),
                                  [*CODE, "tests/fw_host/*.py"]),
    "a descriptor or result word layout": (
        re.compile(r"\b\w+_MAGIC, \w+_VERSION, \w+_GROUP\b|\b\w+_MAGIC, \w+_STATUS, \w+_(RC|UNITS)\b|"
                   r"\"magic\", \"(version|status)\"|\w*MAGIC, (1|\w*VERSION), group\b"), CODE),
    # the harnesses take register offsets from the generated <block>_regs.h
    "a register offset in a harness": (
        re.compile(r"\b(bus|apb)\((true|false), 0x[0-9A-Fa-f]+|\.addr == 0x[0-9A-Fa-f]+"),
        ["sim/**/*.cpp", "sim/**/*.h", *HOST]),
}
ALLOWED: set = set()


def test_no_hand_kept_copies():
    hits = []
    for what, (rx, patterns) in COPIES.items():
        for path in sorted({p for pattern in patterns for p in ROOT.glob(pattern)}):
            rel = str(path.relative_to(ROOT))
            if rel in ALLOWED or "/selftest/" in rel:  # the SoC self-test moves under fw/apps
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if path.suffix == ".py":
                    line = line.split("#", 1)[0]  # a comment may say where a thing is
                if rx.search(line):
                    hits.append(f"{rel}:{n}: {what}: {line.strip()[:80]}")
    assert not hits, "restated facts (import them from their source):\n" + "\n".join(hits)


# ---- the table writer's compressor lanes ---------------------------------------------------------

def test_engine_default_lanes_are_the_models():
    """TableEngineConfig's default zipLanes (the builds that do not pass --zip-lanes: the unit, the SoC) is the
    model's kZipLanes (limits.h), which the estimate divides by and lsmc gives the engine's generators."""
    from lsmc.build import table_model
    scala = (ROOT / "hw/ip/table_engine/rtl/TableEngine.scala").read_text()
    m = re.search(r"case class TableEngineConfig\((?:[^)]|\n)*?zipLanes: Int = (\d+)", scala)
    assert m, "TableEngineConfig has no zipLanes default"
    assert int(m.group(1)) == table_model.limits()["zip_lanes"]


def test_merge_input_queue_is_the_estimates():
    """MergeConfig's default inputFifo (the wider merge stage's queue a run, the SoC's units' and the rtl back end's)
    is the estimate's kMergeInputFifoBeats (cycle_model.h): how far a reader decodes ahead of the merger."""
    scala = (ROOT / "hw/ip/table_engine/rtl/Merger.scala").read_text()
    m = re.search(r"case class MergeConfig\((?:[^)]|\n)*?inputFifo: Int = (\d+)", scala)
    assert m, "MergeConfig has no inputFifo default"
    model = (ROOT / "hw/ip/table_engine/model/cycle_model.h").read_text()
    e = re.search(r"constexpr uint64_t kMergeInputFifoBeats = (\d+);", model)
    assert e and int(e.group(1)) == int(m.group(1)), (m.group(1), e and e.group(1))


def test_engine_default_block_buffer_is_the_models():
    """TableEngineConfig's default zipBytes (the builds that do not pass --zip-bytes: the unit, the SoC) is the
    model's kZipBlockBytes (limits.h): past it a Snappy block the model refuses unless LevelDB keeps it raw."""
    from lsmc.build import table_model
    scala = (ROOT / "hw/ip/table_engine/rtl/TableEngine.scala").read_text()
    m = re.search(r"case class TableEngineConfig\((?:[^)]|\n)*?zipBytes: Int = 1 << (\d+)", scala)
    assert m, "TableEngineConfig has no zipBytes default"
    assert 1 << int(m.group(1)) == table_model.limits()["zip_block_bytes"]


# ---- the generators' one argument parser ---------------------------------------------------------

def test_generator_arguments_are_checked(tmp_path):
    from lsmc import build
    usage_then_error = r"usage: soc.MemoryMap \[--out DIR\](.|\n)*soc.MemoryMap: error: unknown argument '--bogus'"
    with pytest.raises(build.BuildError, match=usage_then_error):
        build.mill("socmap.runMain", "soc.MemoryMap", "--bogus")
    with pytest.raises(build.BuildError, match="--out needs a value"):
        build.mill("socmap.runMain", "soc.MemoryMap", "--out")
    build.mill("socmap.runMain", "soc.MemoryMap", "--out", str(tmp_path))
    assert (tmp_path / "lsmc_soc.json").read_text() == regmap.memmap_json().read_text()


def test_cascade_index_buffer_is_the_engines():
    """The cascades' temporary tables are sized so their index block fits the writer's on-chip buffer (the spill
    would carry the rest, but a temporary table then costs DDR round trips): the harness (table_engine_sim.cpp's
    kWriterIndexBytes) and the SoC back end (lsmc.sim.tables.WRITER_INDEX_BYTES) restate TableEngineConfig's default
    indexBytes, which the engine's and the SoC's builds use."""
    from lsmc.sim import tables
    scala = (ROOT / "hw/ip/table_engine/rtl/TableEngine.scala").read_text()
    m = re.search(r"case class TableEngineConfig\((?:[^)]|\n)*?indexBytes: Int = 1 << (\d+)", scala)
    assert m, "TableEngineConfig has no indexBytes default"
    sim = (ROOT / "hw/ip/table_engine/dv/table_engine_sim.cpp").read_text()
    h = re.search(r"constexpr uint64_t kWriterIndexBytes = 1 << (\d+);", sim)
    assert h, "table_engine_sim.cpp has no kWriterIndexBytes"
    assert 1 << int(h.group(1)) == 1 << int(m.group(1)) == tables.WRITER_INDEX_BYTES


def test_drop_queue_is_the_estimates():
    """MergeDrop's queue in front of the drop filter (rtl/Merger.scala: `toDrop.queue(c.keyWords + N)`) is the
    estimate's kDropQueueExtraBeats (cycle_model.h) past the key limit: how far the merge side runs ahead of the
    writer, which decides how much of a big entry's decoding and building overlap."""
    scala = (ROOT / "hw/ip/table_engine/rtl/Merger.scala").read_text()
    m = re.findall(r"toDrop\.queue\(c\.keyWords \+ (\d+)\)", scala)
    assert len(m) == 1, m
    model = (ROOT / "hw/ip/table_engine/model/cycle_model.h").read_text()
    e = re.search(r"constexpr uint64_t kDropQueueExtraBeats = (\d+);", model)
    assert e and int(e.group(1)) == int(m[0]), (m, e and e.group(1))
