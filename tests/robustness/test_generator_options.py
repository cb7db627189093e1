"""soc.Generate's channel and port options with bad values: `--nand-channels` and
`--dma-read-ports` refused before anything is elaborated or written, exit status 2, the reason as the
last stderr line (after the usage line, as argparse does), no exception trace. The same for the harnesses'
size options that mirror a generated build: the NAND harness's channels and pad cycles, the table writer's spill
region and index restart RAM, the table-engine unit's spill region, and host/Makefile's merge stage.

The generator runs from its compiled classpath (one `mill show soc.runClasspath`, then a plain JVM per
case): Gen.parse refuses before SpinalHDL starts, so a case costs a JVM start, not a generation."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from lsmc import build

CASES = [  # (option, value, the last stderr line after "soc.Generate: error: ")
    ("--nand-channels", "0", "--nand-channels must be one of 1, 2, 3, 4, not 0"),
    ("--nand-channels", "5", "--nand-channels must be one of 1, 2, 3, 4, not 5"),
    ("--nand-channels", "-1", "--nand-channels must be one of 1, 2, 3, 4, not -1"),
    ("--nand-channels", "two", "--nand-channels expects a number, got 'two'"),
    ("--nand-channels", "\u0664", "--nand-channels expects a number, got '\u0664'"),  # Arabic-Indic 4: not ASCII
    ("--nand-channels", "", "--nand-channels expects a number, got ''"),
    ("--dma-read-ports", "0", "--dma-read-ports must be one of 1, 2, 4, not 0"),
    ("--dma-read-ports", "5", "--dma-read-ports must be one of 1, 2, 4, not 5"),
    ("--dma-read-ports", "-2", "--dma-read-ports must be one of 1, 2, 4, not -2"),
    ("--dma-read-ports", "1.5", "--dma-read-ports expects a number, got '1.5'"),
    ("--dma-read-ports", "99999999999", "--dma-read-ports expects a number, got '99999999999'"),
    ("--nand-pad-input-cycles", "4", "--nand-pad-input-cycles must be one of 0, 1, 2, 3, not 4"),
    ("--nand-pad-input-cycles", "-1", "--nand-pad-input-cycles must be one of 0, 1, 2, 3, not -1"),
    ("--nand-pad-input-cycles", "one", "--nand-pad-input-cycles expects a number, got 'one'"),
    ("--ram-kib", "64", "--ram-kib must be one of 128, 256, not 64"),
    ("--ram-kib", "4294967424", "--ram-kib expects a number, got '4294967424'"),  # 128 past 32 bits
]


@pytest.fixture(scope="module")
def classpath():
    if not shutil.which("java"):
        pytest.skip("no java")
    text = build.mill("show", "soc.runClasspath").stdout
    refs = json.loads(text[text.index("["):text.rindex("]") + 1])
    return ":".join(r.split(":", 3)[-1] if r.startswith("qref:") or r.startswith("ref:") else r for r in refs)


@pytest.mark.parametrize("opt,value,reason", CASES, ids=[f"{c[0][2:]}={c[1]!r}" for c in CASES])
def test_soc_generate_refuses_bad_channel_and_port_counts(classpath, tmp_path, opt, value, reason):
    out = tmp_path / "gen"
    r = subprocess.run(["java", "-cp", classpath, "soc.Generate", "--out", str(out), opt, value],
                       capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert lines[-1] == f"soc.Generate: error: {reason}", r.stderr
    assert lines[0].startswith("usage: soc.Generate ") and len(lines) == 2, r.stderr
    assert not out.exists()  # refused before the output folder was made


HARNESS_CASES = [  # the standalone NAND harness's --channels (hw/ip/nand/dv/nand_harness.cpp), one line each
    ("0", "--channels: 0 is below the minimum 1"),
    ("9", "--channels: '9' is larger than the maximum 8"),
    ("-1", "--channels: bad number '-1'"),
    ("four", "--channels: bad number 'four'"),
    ("", "--channels: empty value, expected a number"),
]
PAD_CASES = [  # the standalone NAND harness's --pad-input-cycles (0..3; the controller's SAMPLE.PAD_CYCLES field)
    "4", "-1", "x", "",
]


@pytest.mark.parametrize("value,reason", HARNESS_CASES, ids=[repr(c[0]) for c in HARNESS_CASES])
def test_nand_harness_refuses_bad_channel_counts(value, reason):
    from lsmc.sim import nandsim
    r = subprocess.run([str(nandsim.build_sim()), "--channels", value], input="", capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"VNandController: error: {reason}"), r.stderr


@pytest.mark.parametrize("value", PAD_CASES, ids=repr)
def test_nand_harness_refuses_bad_pad_input_cycles(value):
    from lsmc.sim import nandsim
    r = subprocess.run([str(nandsim.build_sim()), "--pad-input-cycles", value], input="", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("VNandController: error: --pad-input-cycles"), r.stderr


MERGE_CASES = [  # host/Makefile's TE_M (the engine's merge stage inside LevelDB's driver): refused before any build
    ("7", "merge stage width 7: 0, the beat's 16 or twice that"),
    ("64", "merge stage width 64: 0, the beat's 16 or twice that"),
    ("abc", "invalid literal for int() with base 10: 'abc'"),
]


@pytest.mark.parametrize("value,reason", MERGE_CASES, ids=[repr(c[0]) for c in MERGE_CASES])
def test_host_makefile_refuses_bad_merge_stage(value, reason):
    from lsmc.paths import ROOT
    r = subprocess.run(["make", "-s", "-C", str(ROOT / "host"), f"TE_M={value}", "--eval", "print-var: ; @echo ok",
                        "print-var"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert f"model 16 4 {value}: {reason}" in r.stderr and "failed.  Stop." in r.stderr, r.stderr


WRITER_CASES = [  # the table writer's harness (hw/ip/table_engine/dv/table_writer_harness.cpp): the spill region
    # told to the writer and the index restart RAM it was generated with, one line each
    ("--spill-bytes", "-1", "--spill-bytes: bad number '-1'"),
    ("--spill-bytes", "4294967296", "--spill-bytes: '4294967296' is larger than the maximum 4294967295"),
    ("--spill-bytes", "64k", "--spill-bytes: bad number '64k'"),
    ("--index-entries", "abc", "--index-entries: bad number 'abc'"),
    ("--index-entries", "-3", "--index-entries: bad number '-3'"),
    ("--index-entries", "", "--index-entries: empty value, expected a number"),
]


@pytest.mark.parametrize("opt,value,reason", WRITER_CASES, ids=[f"{c[0][2:]}={c[1]!r}" for c in WRITER_CASES])
def test_table_writer_harness_refuses_bad_spill_and_index_sizes(opt, value, reason):
    from lsmc.build import table_engine_writer_top
    r = subprocess.run([str(table_engine_writer_top.build_harness()), opt, value], input="", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"table_writer_harness: error: {reason}"), r.stderr


@pytest.mark.parametrize("value", ["-1", "17", "4294967296", "1k"], ids=repr)
def test_table_engine_unit_harness_refuses_bad_spill_region(value, tmp_path):
    """VTableEngineUnit's --spill-bytes (the index spill region its descriptor gives): a multiple of 16 below 2^32,
    else one line naming the option and the value, with the usage, exit 2, before any job is read."""
    from lsmc.build import table_engine_unit
    r = subprocess.run([str(table_engine_unit.build_harness(4)), str(tmp_path / "none.json"), str(tmp_path / "out"),
                        "--spill-bytes", value], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.startswith(f"VTableEngineUnit: --spill-bytes {value} is not a number it takes\n"), r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,reason", [
    (["--parts", "1", "--image", "x.bin"], "--parts 1 is not in 2..64"),
    (["--parts", "65", "--image", "x.bin"], "--parts 65 is not in 2..64"),
    (["--parts", "2x", "--image", "x.bin"], "--parts 2x is not in 2..64"),
    (["--parts", "2"], "--parts lays out the SoC's image: it needs --image or --collect"),
], ids=["one", "over", "word", "no-image"])
def test_table_engine_unit_harness_refuses_bad_parts(args, reason, tmp_path):
    """VTableEngineUnit's --parts (the host's plan laid out for tables.elf SIM_ARG PARTS_HOST): 2..64 parts and only
    with the SoC image's --image or --collect, else one line naming it, with the usage, exit 2, nothing written."""
    from lsmc.build import table_engine_unit
    r = subprocess.run([str(table_engine_unit.build_harness(4)), str(tmp_path / "none.json"), str(tmp_path / "out"),
                        *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.startswith(f"VTableEngineUnit: {reason}\n"), r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.bin").exists()
